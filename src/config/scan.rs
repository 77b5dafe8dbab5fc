//! Finding macro references in a text, as HTCondor's `next_config_macro`
//! does: `$(NAME)`, `$(NAME:default)`, `$ENV(…)`, the `$` functions and
//! template arguments `$(1)`; and the final `$(DOLLAR)` → `$` step.

/// Which `$` form a reference is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Func {
    Normal,
    Env,
    RandomChoice,
    RandomInteger,
    Choice,
    Substr,
    Int,
    Real,
    Str,
    Eval,
    Basename,
    Dirname,
    Filename,
}

/// A reference found in a text: byte offsets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MacroRef {
    pub func: Func,
    /// The `$`.
    pub dollar: usize,
    /// After the `$…(` prefix: the first byte of the body.
    pub body: usize,
    /// The first byte of the default, after the `:`, if any.
    pub default: Option<usize>,
    /// The closing `)`.
    pub close: usize,
}

impl MacroRef {
    /// The name part of the body (before a `:` default).
    pub fn name<'t>(&self, text: &'t str) -> &'t str {
        let end = self.default.map_or(self.close, |d| d - 1);
        &text[self.body..end]
    }

    /// The whole body.
    pub fn body<'t>(&self, text: &'t str) -> &'t str {
        &text[self.body..self.close]
    }

    /// The default text, if any.
    pub fn default<'t>(&self, text: &'t str) -> Option<&'t str> {
        self.default.map(|d| &text[d..self.close])
    }

    /// One past the closing `)`.
    pub fn end(&self) -> usize {
        self.close + 1
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Body {
    Anything,
    IdColon,
    MetaArg,
}

/// Characters of a knob name (`condor_isidchar`).
pub(crate) fn is_id_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/')
}

fn classify(prefix: &[u8], meta: bool) -> Option<(Func, Body)> {
    if prefix.len() == 1 {
        return Some((
            Func::Normal,
            if meta { Body::MetaArg } else { Body::IdColon },
        ));
    }
    if meta || prefix[1] == b'$' {
        return None;
    }
    if prefix[1] == b'F'
        && prefix[2..]
            .iter()
            .all(|c| b"pnxdqabfwu".contains(&c.to_ascii_lowercase()))
    {
        return Some((Func::Filename, Body::Anything));
    }
    let func = match &prefix[1..] {
        b"ENV" => return Some((Func::Env, Body::IdColon)),
        b"RANDOM_CHOICE" => Func::RandomChoice,
        b"RANDOM_INTEGER" => Func::RandomInteger,
        b"CHOICE" => Func::Choice,
        b"SUBSTR" => Func::Substr,
        b"INT" => Func::Int,
        b"REAL" => Func::Real,
        b"STRING" => Func::Str,
        b"EVAL" => Func::Eval,
        b"BASENAME" => Func::Basename,
        b"DIRNAME" => Func::Dirname,
        _ => return None,
    };
    Some((func, Body::Anything))
}

/// Finds the next reference at or after `from`, as HTCondor's
/// `next_config_macro` does. `skip` rejects a found reference (by function
/// and body); scanning then goes on after it. With `meta`, only template
/// arguments `$(1)`, `$(2?)`, `$(0#)`, `$(1+:default)` are found.
pub(crate) fn next_macro(
    text: &str,
    from: usize,
    meta: bool,
    skip: &dyn Fn(Func, &str) -> bool,
) -> Option<MacroRef> {
    next_macro_noting(text, from, meta, skip, &mut |_, _| {})
}

/// [`next_macro`], telling `missed` of each `$` passed over that is not a
/// reference: its offset and the offset of the byte that decided so (the
/// text's length when it was not closed). A change at or before that byte
/// may make it one.
pub(super) fn next_macro_noting(
    text: &str,
    from: usize,
    meta: bool,
    skip: &dyn Fn(Func, &str) -> bool,
    missed: &mut dyn FnMut(usize, usize),
) -> Option<MacroRef> {
    let b = text.as_bytes();
    let len = b.len();
    let mut t = from;
    'scan: loop {
        let dollar = t + b.get(t..)?.iter().position(|&c| c == b'$')?;
        let mut p = dollar + 1;
        if b.get(p) == Some(&b'$') {
            p += 1;
        }
        while p < len && (b[p].is_ascii_alphanumeric() || b[p] == b'_') {
            p += 1;
        }
        if b.get(p) != Some(&b'(') {
            missed(dollar, p);
            t = p.max(dollar + 1);
            continue;
        }
        let Some((func, body_kind)) = classify(&b[dollar..p], meta) else {
            missed(dollar, p);
            t = p;
            continue;
        };
        let body = p + 1;
        let mut v = body;
        let mut default = None;
        match body_kind {
            Body::Anything => {
                while v < len && b[v] != b')' {
                    v += 1;
                }
            }
            Body::IdColon | Body::MetaArg => {
                while v < len && b[v] != b')' {
                    let c = b[v];
                    v += 1;
                    if c == b':' && default.is_none() {
                        default = Some(v);
                        continue;
                    }
                    if default.is_some() {
                        if c == b'(' {
                            if let Some(q) = b[v..].iter().position(|&x| x == b')') {
                                v += q + 1;
                                continue;
                            }
                        } else if body_kind == Body::MetaArg || b"$ ,\\:".contains(&c) {
                            continue;
                        }
                    }
                    let ok = if body_kind == Body::MetaArg {
                        c.is_ascii_digit() || matches!(c, b'?' | b'#' | b'+')
                    } else {
                        is_id_char(c)
                    };
                    if !ok {
                        missed(dollar, v - 1);
                        t = body;
                        continue 'scan;
                    }
                }
            }
        }
        if v >= len {
            missed(dollar, len);
            t = body;
            continue;
        }
        if skip(func, &text[body..v]) {
            t = v;
            continue;
        }
        return Some(MacroRef {
            func,
            dollar,
            body,
            default,
            close: v,
        });
    }
}

pub(super) fn is_dollar(func: Func, body: &str) -> bool {
    func == Func::Normal && body.eq_ignore_ascii_case("DOLLAR")
}

/// Replaces every `$(DOLLAR)` with `$`, last of all.
pub(crate) fn replace_dollars(mut s: String) -> String {
    let mut from = 0;
    while let Some(m) = next_macro(&s, from, false, &|f, b| !is_dollar(f, b)) {
        s.replace_range(m.dollar..m.end(), "$");
        from = m.dollar;
    }
    s
}
