#!/usr/bin/env bash
# Builds Roost and installs its programs into PREFIX/bin (default
# /usr/local): roost, roost-startd (the daemon's program, which
# `roost startd` runs), roost-log, roost-config-val (cron scripts' condor_config_val)
# and roost-starter (their manual pages into PREFIX/share/man/man1, and
# completions for bash, zsh and fish under PREFIX/share), the starter linked
# statically against musl when the Rust target and musl's C compiler are
# there (rustup target add x86_64-unknown-linux-musl; apt install musl-tools;
# ROOST_STATIC_STARTER=1 adds the target here and insists).
#
# Why static: every job starts one starter process, and a dynamically linked
# one spends most of its start-up in the dynamic loader and glibc's CPU
# detection (each CPUID instruction traps to the hypervisor on a virtual
# machine): about 0.9 ms of CPU against 0.3 ms static (docs/performance.md).
# The daemon stays dynamic: it looks up job owners for the starter through
# the system's user directory (NSS: LDAP, SSSD, ...), which a static C
# library cannot reach.
#
# usage: tools/install.sh [PREFIX]        (ROOST_STATIC_STARTER=0: dynamic starter;
#                                          ROOST_PROFILE=ci: the test build's profile,
#                                          no whole-program optimisation, as CI's smoke test)
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=${1:-/usr/local}
MUSL=x86_64-unknown-linux-musl
static=${ROOST_STATIC_STARTER:-auto}
profile=${ROOST_PROFILE:-release}

cargo build --profile "$profile" --locked --bin roost --bin roost-startd --bin roost-log --bin roost-starter --bin roost-config-val
starter=target/$profile/roost-starter
# The C code among the dependencies (PCRE2, a stack-growth helper) is
# compiled against musl's headers: musl-gcc (Debian: musl-tools).
musl_cc=${CC_x86_64_unknown_linux_musl:-$(command -v musl-gcc || true)}
have_target() { rustup target list --installed 2>/dev/null | grep -qx "$MUSL"; }
if [ "$static" != 0 ] && [ "$(uname -m)" = x86_64 ]; then
    if [ "$static" = 1 ]; then
        have_target || rustup target add "$MUSL"
        [ -n "$musl_cc" ] || { echo "install: a static starter needs musl-gcc (Debian: apt install musl-tools)" >&2; exit 1; }
    fi
    if have_target && [ -n "$musl_cc" ]; then
        CC_x86_64_unknown_linux_musl=$musl_cc cargo build --profile "$profile" --locked --target "$MUSL" --bin roost-starter
        starter=target/$MUSL/$profile/roost-starter
    else
        echo "install: no $MUSL target or no musl-gcc; the starter stays dynamic" >&2
    fi
fi
install -d "$PREFIX/bin"
install -m 755 target/$profile/roost target/$profile/roost-startd target/$profile/roost-log target/$profile/roost-config-val "$PREFIX/bin/"
install -m 755 "$starter" "$PREFIX/bin/roost-starter"
# roost uses roost-startd, and the daemon the starter, beside it only if
# they come from the same sources; check here rather than at the first start.
b=$(target/$profile/roost-starter --build-id)
for p in roost-startd roost-starter; do
    a=$("$PREFIX/bin/$p" --build-id)
    if [ "$a" != "$b" ]; then
        echo "install: $PREFIX/bin/$p says build $a, roost is $b" >&2
        exit 1
    fi
done
# Manual pages and shell completions, made by the installed programs from
# their own command-line definitions.
man1=$PREFIX/share/man/man1
bash_dir=$PREFIX/share/bash-completion/completions
zsh_dir=$PREFIX/share/zsh/site-functions
fish_dir=$PREFIX/share/fish/vendor_completions.d
install -d "$man1" "$bash_dir" "$zsh_dir" "$fish_dir"
for p in roost roost-log; do
    "$PREFIX/bin/$p" man "$man1" >/dev/null
    "$PREFIX/bin/$p" completions bash >"$bash_dir/$p"
    "$PREFIX/bin/$p" completions zsh >"$zsh_dir/_$p"
    "$PREFIX/bin/$p" completions fish >"$fish_dir/$p.fish"
done
case $(ldd "$PREFIX/bin/roost-starter" 2>&1) in
*"statically linked"* | *"not a dynamic"*) kind=static ;;
*) kind=dynamic ;;
esac
echo "installed roost, roost-startd, roost-log, roost-config-val and roost-starter ($kind) in $PREFIX/bin, their manual pages in $man1 and completions for bash, zsh and fish under $PREFIX/share"
