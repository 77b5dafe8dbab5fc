//! Starting hooks and jobs without copying the parent process.
//!
//! `std::process::Command` falls back from `posix_spawn` to `fork` as soon
//! as a uid is set, and `fork` of a daemon with a few thousand mapped pages
//! copies its page tables and then takes a copy-on-write fault on every page
//! either side writes until the child has called `exec`. Roost runs every
//! hook as another user (the condor user, the job's owner), so that was most
//! of the daemon's CPU per job. Here the child is made with
//! `clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD)`, as `posix_spawn` does: it
//! shares the parent's memory, runs a few raw system calls on a stack of its
//! own (signal dispositions back to default, process group, groups, gid,
//! uid, working directory, stdio) and calls `execve`, while the calling
//! thread waits. Everything the child needs is prepared before the clone, so
//! the child never allocates, takes a lock or touches the C library's
//! per-thread state beyond `errno`.
//!
//! The parent gets a pidfd, which makes waiting for the exit an ordinary
//! readiness event for tokio and signals race-free until the reap
//! ([`process`]: the same for a process that is not our child). The one
//! module allowed `unsafe` code (denied elsewhere); each block says why.

#![allow(unsafe_code)]

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;

use nix::libc;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;
mod environment;
mod fs_user;
pub mod process;

pub use environment::Environment;
use environment::env_entry;
pub use fs_user::FsUser;

/// What one of the child's standard streams is connected to.
#[derive(Debug)]
pub enum Stdio {
    /// `/dev/null`.
    Null,
    /// A pipe whose other end the parent gets.
    Piped,
    /// This file (or any descriptor).
    Fd(OwnedFd),
}

/// A process to start: the program, its arguments and environment (the
/// whole of it), where and as whom it runs, and its stdio.
#[derive(Debug)]
pub struct Command {
    program: CString,
    argv: Vec<CString>,
    /// The shared part of the environment ([`Command::environment`]).
    shared_env: Environment,
    /// Pairs added one by one ([`Command::env`]), after the shared ones.
    envp: Vec<CString>,
    cwd: Option<CString>,
    user: Option<(u32, u32)>,
    process_group: bool,
    core_limit: Option<u64>,
    stdio: [Stdio; 3],
    cgroup: Option<OwnedFd>,
    bad: Option<String>,
}

fn cstring(s: &OsStr, bad: &mut Option<String>) -> CString {
    let mut v = Vec::with_capacity(s.len() + 1);
    v.extend_from_slice(s.as_bytes());
    owned_cstring(v, bad)
}

/// [`cstring`] of bytes already owned, with room for the NUL (then it
/// allocates nothing).
fn owned_cstring(v: Vec<u8>, bad: &mut Option<String>) -> CString {
    CString::new(v).unwrap_or_else(|e| {
        let v = e.into_vec();
        bad.get_or_insert_with(|| format!("{:?} contains a NUL byte", OsStr::from_bytes(&v)));
        CString::default()
    })
}

impl Command {
    /// `program` with no arguments, an empty environment, stdio on
    /// `/dev/null`, in the parent's directory, as the parent's user.
    pub fn new(program: impl AsRef<OsStr>) -> Command {
        let mut bad = None;
        let program = cstring(program.as_ref(), &mut bad);
        Command {
            argv: vec![program.clone()],
            program,
            shared_env: Environment::default(),
            envp: Vec::new(),
            cwd: None,
            user: None,
            process_group: false,
            core_limit: None,
            stdio: [Stdio::Null, Stdio::Null, Stdio::Null],
            cgroup: None,
            bad,
        }
    }

    /// Appends arguments after argv\[0\].
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        for a in args {
            let c = cstring(a.as_ref(), &mut self.bad);
            self.argv.push(c);
        }
        self
    }

    /// Adds `name=value` to the environment.
    pub fn env(&mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Command {
        let c = env_entry(name.as_ref(), value.as_ref(), &mut self.bad);
        self.envp.push(c);
        self
    }

    /// Starts the environment with `env`, shared rather than copied; pairs
    /// added with [`Command::env`] come after it (give a name once only:
    /// programs differ in which of two they read).
    pub fn environment(&mut self, env: &Environment) -> &mut Command {
        if let (None, Some(b)) = (&self.bad, &env.bad) {
            self.bad = Some(b.to_string());
        }
        self.shared_env = env.clone();
        self
    }

    /// Adds every pair to the environment.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (k, v) in vars {
            self.env(k, v);
        }
        self
    }

    /// The working directory.
    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Command {
        self.cwd = Some(cstring(dir.as_ref().as_os_str(), &mut self.bad));
        self
    }

    /// Runs as `uid`/`gid` with no supplementary groups (needs root).
    pub fn user(&mut self, uid: u32, gid: u32) -> &mut Command {
        self.user = Some((uid, gid));
        self
    }

    /// Puts the child in a new process group of its own.
    pub fn process_group(&mut self) -> &mut Command {
        self.process_group = true;
        self
    }

    /// Limits the size of the child's core files to `bytes` (soft and
    /// hard; a hard limit above the parent's needs root, else the soft
    /// limit goes as high as the hard one allows).
    pub fn core_limit(&mut self, bytes: u64) -> &mut Command {
        self.core_limit = Some(bytes);
        self
    }

    /// Starts the child inside the cgroup v2 directory `dir` (an open
    /// descriptor of it) with `CLONE_INTO_CGROUP`.
    pub fn cgroup(&mut self, dir: OwnedFd) -> &mut Command {
        self.cgroup = Some(dir);
        self
    }

    /// Stdin.
    pub fn stdin(&mut self, s: Stdio) -> &mut Command {
        self.stdio[0] = s;
        self
    }

    /// Stdout.
    pub fn stdout(&mut self, s: Stdio) -> &mut Command {
        self.stdio[1] = s;
        self
    }

    /// Stderr.
    pub fn stderr(&mut self, s: Stdio) -> &mut Command {
        self.stdio[2] = s;
        self
    }

    /// Starts the process. Must be called within a tokio runtime (the
    /// pidfd and pipes are registered with its reactor). An `execve`,
    /// `chdir` or credential change that fails in the child is this
    /// call's error, as with `std::process::Command::spawn`.
    pub fn spawn(&mut self) -> io::Result<Child> {
        if let Some(b) = &self.bad {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, b.clone()));
        }
        let mut keep: [Option<OwnedFd>; 3] = [None, None, None];
        // The child's ends made for this spawn (a file given stays with
        // the command, so a failed spawn can be tried again).
        let mut give: Vec<OwnedFd> = Vec::with_capacity(3);
        let mut fds: [RawFd; 3] = [-1; 3];
        // One /dev/null serves every stream that wants it.
        let mut null: Option<RawFd> = None;
        for (i, s) in self.stdio.iter().enumerate() {
            match s {
                Stdio::Null => match null {
                    Some(fd) => fds[i] = fd,
                    None => {
                        let fd = dev_null()?;
                        null = Some(fd.as_raw_fd());
                        give.push(fd);
                    }
                },
                Stdio::Fd(fd) => fds[i] = fd.as_raw_fd(),
                Stdio::Piped => {
                    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
                    if i == 0 {
                        give.push(r);
                        keep[0] = Some(w);
                    } else {
                        give.push(w);
                        keep[i] = Some(r);
                    }
                }
            }
            if fds[i] < 0 {
                fds[i] = give.last().map_or(-1, AsRawFd::as_raw_fd);
            }
        }
        let argv: Vec<*const libc::c_char> = self
            .argv
            .iter()
            .map(|a| a.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        let envp: Vec<*const libc::c_char> = self
            .shared_env
            .entries
            .iter()
            .chain(&self.envp)
            .map(|a| a.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        let (report_r, report_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let args = ChildArgs {
            program: self.program.as_ptr(),
            argv: argv.as_ptr(),
            envp: envp.as_ptr(),
            cwd: self.cwd.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
            user: self.user,
            process_group: self.process_group,
            core_limit: self.core_limit,
            fds,
            report: report_w.as_raw_fd(),
        };
        let (pid, pid_fd) =
            match clone_and_exec(&args, self.cgroup.as_ref().map(AsRawFd::as_raw_fd)) {
                Ok(r) => r,
                Err(e) => {
                    if e.kind() == io::ErrorKind::Unsupported {
                        // Tried again, it starts where its parent is.
                        self.cgroup = None;
                    }
                    return Err(e);
                }
            };
        drop(give);
        drop(report_w);
        // The report pipe closes at the child's execve (close-on-exec)
        // or carries the step and errno that failed before its exit.
        let mut failure = [0u8; 8];
        let mut got = 0;
        while got < failure.len() {
            match nix::unistd::read(&report_r, &mut failure[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(nix::errno::Errno::EINTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        if got == failure.len() {
            // The child has exited; reap it before reporting.
            let mut status = 0;
            // SAFETY: waitpid on our own child with a valid status pointer.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            let step = i32::from_ne_bytes([failure[0], failure[1], failure[2], failure[3]]);
            let errno = i32::from_ne_bytes([failure[4], failure[5], failure[6], failure[7]]);
            let e = io::Error::from_raw_os_error(errno);
            let what = match step {
                STEP_CHDIR => "cannot change to the working directory",
                STEP_USER => "cannot switch user",
                STEP_PGROUP => "cannot make a process group",
                STEP_STDIO => "cannot set up stdio",
                _ => return Err(e),
            };
            return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
        }
        let [k0, k1, k2] = keep;
        Ok(Child {
            pid,
            // SAFETY: an OwnedFd stays open and the same while registered.
            pid_fd: unsafe { AsyncFd::register_with_interest(pid_fd, Interest::READABLE) }
                .map_err(io::Error::from)?,
            status: None,
            stdin: k0.map(pipe::Sender::from_owned_fd).transpose()?,
            stdout: k1.map(pipe::Receiver::from_owned_fd).transpose()?,
            stderr: k2.map(pipe::Receiver::from_owned_fd).transpose()?,
        })
    }
}

fn dev_null() -> io::Result<OwnedFd> {
    Ok(std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?
        .into())
}

const STEP_EXEC: i32 = 1;
const STEP_CHDIR: i32 = 2;
const STEP_USER: i32 = 3;
const STEP_PGROUP: i32 = 4;
const STEP_STDIO: i32 = 5;

/// What the child reads (in the parent's memory, shared or copied) and
/// where it writes the step and errno that failed.
struct ChildArgs {
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
    user: Option<(u32, u32)>,
    process_group: bool,
    core_limit: Option<u64>,
    fds: [RawFd; 3],
    report: RawFd,
}

/// The child's stack: enough for the few calls it makes.
const CHILD_STACK: usize = 64 * 1024;

/// The kernel's `struct sigaction` (not the C library's, whose layout
/// differs), for the raw `rt_sigaction` in the child.
#[repr(C)]
struct KernelSigaction {
    handler: usize,
    flags: u64,
    restorer: usize,
    mask: u64,
}

/// The kernel's signal set size in bytes, for the raw signal calls.
const KERNEL_SIGSET: usize = 8;

/// `struct clone_args` of `clone3` (version 2, with `cgroup`).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// Makes the child (which runs [`child`]) and returns its pid and pidfd.
/// Without a cgroup: `clone(CLONE_VM | CLONE_VFORK)`, the child on a stack
/// of its own in our memory. Into a cgroup: `clone3(CLONE_INTO_CGROUP)`,
/// born in the cgroup, so nothing has to be migrated (a migration waits for
/// an RCU grace period, ~10 ms); on x86-64 also with `CLONE_VM |
/// CLONE_VFORK` and a stack of its own ([`clone3_vfork`]), elsewhere as a
/// copy of this process (as `fork`, whose copied page tables and
/// copy-on-write faults cost a small starter about a tenth of its CPU).
fn clone_and_exec(args: &ChildArgs, cgroup: Option<RawFd>) -> io::Result<(i32, OwnedFd)> {
    let mut pid_fd: libc::c_int = -1;
    // No signal handler of the parent may run in the child: block
    // everything around the clone; the child resets dispositions before
    // unblocking.
    // SAFETY: sigset_t is plain data; zeroed is a valid empty set.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to local sets.
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    }
    let result = match cgroup {
        None => clone_vfork(args, &mut pid_fd),
        Some(cg) => clone3_into(args, cg, &mut pid_fd),
    };
    let e = io::Error::last_os_error();
    // SAFETY: restores this thread's mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    let pid = result?;
    if pid < 0 {
        if cgroup.is_some()
            && matches!(
                e.raw_os_error(),
                Some(libc::ENOSYS | libc::EINVAL | libc::E2BIG | libc::EOPNOTSUPP)
            )
        {
            // An older kernel: the caller may move into the cgroup itself.
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("cannot start a process into a cgroup: {e}"),
            ));
        }
        return Err(e);
    }
    if pid_fd < 0 {
        return Err(io::Error::other("clone returned no pidfd"));
    }
    // SAFETY: CLONE_PIDFD stored a new descriptor (close-on-exec) that
    // we now own.
    let fd = unsafe { OwnedFd::from_raw_fd(pid_fd) };
    Ok((pid, fd))
}

/// Memory for the child's stack: 16-byte aligned and left uninitialised,
/// so that only the few pages the child touches are ever faulted in (a
/// zeroed one cost every spawn a 64 KiB `memset`, and a fresh process
/// sixteen page faults).
fn child_stack() -> Vec<std::mem::MaybeUninit<u128>> {
    Vec::with_capacity(CHILD_STACK / 16)
}

/// `clone3(CLONE_INTO_CGROUP)` with the child running [`child`]; the pid
/// (or -1 with errno set, as the C library's calls). On x86-64 the child
/// shares our memory on a stack of its own ([`clone3_vfork`]); elsewhere it
/// is a copy of this process, as after `fork`.
fn clone3_into(args: &ChildArgs, cgroup: RawFd, pid_fd: &mut libc::c_int) -> io::Result<i32> {
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut ca = CloneArgs {
        flags: libc::CLONE_PIDFD as u64 | CLONE_INTO_CGROUP,
        pidfd: std::ptr::from_mut(pid_fd) as u64,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: u64::from(cgroup.cast_unsigned()),
        ..CloneArgs::default()
    };
    #[cfg(target_arch = "x86_64")]
    let r = {
        let mut stack = child_stack();
        ca.flags |= (libc::CLONE_VM | libc::CLONE_VFORK) as u64;
        ca.stack = stack.as_mut_ptr() as u64;
        ca.stack_size = (stack.capacity() * 16) as u64;
        // SAFETY: see clone3_vfork; `stack` outlives the child's use of it
        // (CLONE_VFORK suspends this thread until the child has exec'd or
        // exited) and its top is 16-byte aligned (a u128 allocation of a
        // size that is a multiple of 16).
        let r = unsafe { clone3_vfork(&ca, args) };
        drop(stack);
        if r < 0 {
            // The raw system call returns -errno; the caller reads errno.
            nix::errno::Errno::set_raw(i32::try_from(-r).unwrap_or(libc::EINVAL));
            -1
        } else {
            r
        }
    };
    #[cfg(not(target_arch = "x86_64"))]
    let r = {
        // SAFETY: clone3 without CLONE_VM or a new stack returns twice
        // like fork; the child (0) runs `child`, which never returns.
        let r = unsafe {
            libc::syscall(
                libc::SYS_clone3,
                &ca as *const CloneArgs,
                std::mem::size_of::<CloneArgs>(),
            )
        };
        if r == 0 {
            child(std::ptr::from_ref(args).cast_mut().cast());
        }
        r
    };
    i32::try_from(r).map_err(|_| io::Error::other("clone3 returned no pid"))
}

/// `clone3` with `CLONE_VM` and a stack of its own, the child calling
/// [`child`] on that stack (as the C library's `clone` wrapper does for
/// `clone`, which has no `CLONE_INTO_CGROUP`). Returns the pid or -errno.
///
/// # Safety
/// `ca` must ask for `CLONE_VM | CLONE_VFORK` with a valid stack whose top
/// is 16-byte aligned and which stays allocated until this returns, and
/// `args` must stay valid as long.
#[cfg(target_arch = "x86_64")]
unsafe fn clone3_vfork(ca: &CloneArgs, args: &ChildArgs) -> i64 {
    let ret: i64;
    // SAFETY: the parent gets the pid (or -errno) in rax and continues
    // with every register but rcx and r11 (the `syscall` instruction's)
    // intact. The child starts at the same instruction with rax = 0 on its
    // own stack (the kernel sets rsp to the stack's top) and the parent's
    // other registers: it clears the frame pointer, calls `child(args)`
    // from r12/r13 with the stack aligned as the C ABI wants, and `child`
    // ends in execve or _exit; should it ever return, the child exits.
    // Nothing in the child touches the parent's stack.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor ebp, ebp",
            "mov rdi, r12",
            "call r13",
            "mov edi, eax",
            "mov eax, 60",
            "syscall",
            "ud2",
            "2:",
            inlateout("rax") libc::SYS_clone3 => ret,
            in("rdi") std::ptr::from_ref(ca),
            in("rsi") std::mem::size_of::<CloneArgs>(),
            in("r12") std::ptr::from_ref(args),
            in("r13") child as extern "C" fn(*mut libc::c_void) -> libc::c_int,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

fn clone_vfork(args: &ChildArgs, pid_fd: &mut libc::c_int) -> io::Result<i32> {
    let mut stack = child_stack();
    // SAFETY: the stack grows down; its top (a u128 allocation of a size
    // that is a multiple of 16, so 16-byte aligned) is the allocation's
    // end, which outlives the child's use of it (CLONE_VFORK suspends this
    // thread until the child has exec'd or exited).
    let top = unsafe { stack.as_mut_ptr().add(stack.capacity()) };
    // SAFETY: `child` only reads `args` (alive for the call) and never
    // returns into Rust frames of the parent; CLONE_VFORK keeps this
    // thread (and `args`, `stack`, `pid_fd`) in place until the child has
    // left the shared memory.
    let pid = unsafe {
        libc::clone(
            child,
            top.cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD | libc::SIGCHLD,
            std::ptr::from_ref(args).cast_mut().cast(),
            std::ptr::from_mut(pid_fd),
        )
    };
    drop(stack);
    Ok(pid)
}

/// Runs in the child (on its own stack in the parent's memory, or in a
/// copy of the parent): raw system calls only, then `execve`.
extern "C" fn child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `ChildArgs`, alive while it waits.
    let a = unsafe { &*(arg as *const ChildArgs) };
    let fail = |step: i32| -> ! {
        let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
        let mut msg = [0u8; 8];
        msg[..4].copy_from_slice(&step.to_ne_bytes());
        msg[4..].copy_from_slice(&errno.to_ne_bytes());
        // SAFETY: a write of a local buffer to the report pipe, then the
        // child leaves at once.
        unsafe {
            libc::syscall(libc::SYS_write, a.report, msg.as_ptr(), msg.len());
            libc::_exit(127)
        }
    };
    // SAFETY: raw system calls on values prepared by the parent.
    unsafe {
        // Default dispositions (an ignored SIGPIPE would survive exec;
        // handlers must not run here), then nothing blocked.
        let dfl = KernelSigaction {
            handler: libc::SIG_DFL,
            flags: 0,
            restorer: 0,
            mask: 0,
        };
        for sig in 1..65 {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    sig,
                    &dfl as *const KernelSigaction,
                    std::ptr::null_mut::<KernelSigaction>(),
                    KERNEL_SIGSET,
                );
            }
        }
        if a.process_group && libc::syscall(libc::SYS_setpgid, 0, 0) != 0 {
            fail(STEP_PGROUP);
        }
        if let Some(bytes) = a.core_limit {
            // Before the user changes: raising the hard limit needs root.
            // Failing that, as much as the hard limit allows.
            let mut old = [0u64; 2];
            libc::syscall(
                libc::SYS_prlimit64,
                0,
                libc::RLIMIT_CORE,
                std::ptr::null::<u64>(),
                old.as_mut_ptr(),
            );
            let want = [bytes, bytes.max(old[1])];
            if libc::syscall(
                libc::SYS_prlimit64,
                0,
                libc::RLIMIT_CORE,
                want.as_ptr(),
                std::ptr::null_mut::<u64>(),
            ) != 0
            {
                let capped = [bytes.min(old[1]), old[1]];
                libc::syscall(
                    libc::SYS_prlimit64,
                    0,
                    libc::RLIMIT_CORE,
                    capped.as_ptr(),
                    std::ptr::null_mut::<u64>(),
                );
            }
        }
        if let Some((uid, gid)) = a.user {
            // Raw calls: the C library's wrappers would try to change the
            // credentials of every thread of the parent.
            if libc::syscall(libc::SYS_setgroups, 0usize, std::ptr::null::<libc::gid_t>()) != 0
                || libc::syscall(libc::SYS_setgid, gid) != 0
                || libc::syscall(libc::SYS_setuid, uid) != 0
            {
                fail(STEP_USER);
            }
        }
        if !a.cwd.is_null() && libc::syscall(libc::SYS_chdir, a.cwd) != 0 {
            fail(STEP_CHDIR);
        }
        for (target, &fd) in (0..).zip(a.fds.iter()) {
            let ok = if fd == target {
                // Same number: keep it open across exec.
                libc::syscall(libc::SYS_fcntl, fd, libc::F_SETFD, 0) == 0
            } else {
                libc::syscall(libc::SYS_dup3, fd, target, 0) >= 0
            };
            if !ok {
                fail(STEP_STDIO);
            }
        }
        let empty: u64 = 0;
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &empty as *const u64,
            std::ptr::null_mut::<u64>(),
            KERNEL_SIGSET,
        );
        libc::syscall(libc::SYS_execve, a.program, a.argv, a.envp);
    }
    fail(STEP_EXEC)
}

/// A started process: its pid, its pipes, and its exit once reaped.
#[derive(Debug)]
pub struct Child {
    pid: i32,
    pid_fd: AsyncFd<OwnedFd>,
    status: Option<ExitStatus>,
    /// Its stdin, when piped.
    pub stdin: Option<pipe::Sender>,
    /// Its stdout, when piped.
    pub stdout: Option<pipe::Receiver>,
    /// Its stderr, when piped.
    pub stderr: Option<pipe::Receiver>,
}

impl Child {
    /// Its process id.
    pub fn id(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// Waits for the exit and reaps the process (once; later calls
    /// return the same status).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(s) = self.try_wait()? {
                return Ok(s);
            }
            let mut ready = self.pid_fd.readable().await?;
            ready.clear_ready();
        }
    }

    /// The exit status if the process has ended (reaping it), else None.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.reap(libc::WNOHANG)
    }

    /// Reaps the process with `waitid` and `flags` added to `WEXITED`
    /// (`WNOHANG`: only if it has ended).
    fn reap(&mut self, flags: libc::c_int) -> io::Result<Option<ExitStatus>> {
        if let Some(s) = self.status {
            return Ok(Some(s));
        }
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own pidfd with a valid siginfo pointer.
        let r = unsafe {
            libc::waitid(
                libc::P_PIDFD,
                self.pid_fd.as_fd().as_raw_fd().cast_unsigned(),
                &mut info,
                libc::WEXITED | flags,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: waitid filled `info` (si_pid 0 means still running).
        let (pid, code, status) = unsafe { (info.si_pid(), info.si_code, info.si_status()) };
        if pid == 0 {
            return Ok(None);
        }
        let raw = if code == libc::CLD_EXITED {
            (status & 0xff) << 8
        } else {
            // Killed or dumped: the signal in the low bits (core flag 0x80).
            (status & 0x7f) | if code == libc::CLD_DUMPED { 0x80 } else { 0 }
        };
        let s = ExitStatus::from_raw(raw);
        self.status = Some(s);
        Ok(Some(s))
    }

    /// Kills the process and waits for it to be gone (blocking; a SIGKILLed
    /// process goes at once). For processes with nothing to clean up, such
    /// as a spare starter that has no job.
    pub fn kill_and_reap(mut self) {
        let _ = self.signal(libc::SIGKILL);
        let _ = self.reap(0);
    }

    /// Sends `sig` to the process (not its group); nothing once reaped.
    pub fn signal(&self, sig: i32) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        process::pidfd_signal(self.pid_fd.as_fd(), sig)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // A child dropped before its exit was collected is reaped by a
        // thread of its own, never left as a zombie.
        if self.status.is_none() && !matches!(self.try_wait(), Ok(Some(_))) {
            let pid = self.pid;
            let _ = std::thread::Builder::new()
                .name("reap".into())
                .spawn(move || {
                    let mut status = 0;
                    // SAFETY: waitpid on our own child.
                    unsafe { libc::waitpid(pid, &mut status, 0) };
                });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    async fn read_all(r: Option<pipe::Receiver>) -> String {
        let mut out = String::new();
        r.unwrap().read_to_string(&mut out).await.unwrap();
        out
    }

    #[test]
    fn runs_with_args_env_cwd_and_pipes() {
        rt().block_on(async {
            let mut c = Command::new("/bin/sh");
            c.args([
                "-c",
                "read x; echo \"$x $1 $FOO $(pwd)\"; echo err >&2; exit 3",
                "sh",
                "arg",
            ])
            .env("FOO", "bar")
            .current_dir("/tmp")
            .stdin(Stdio::Piped)
            .stdout(Stdio::Piped)
            .stderr(Stdio::Piped);
            let mut ch = c.spawn().unwrap();
            let mut input = ch.stdin.take().unwrap();
            input.write_all(b"hello\n").await.unwrap();
            drop(input);
            let out = read_all(ch.stdout.take()).await;
            let err = read_all(ch.stderr.take()).await;
            let s = ch.wait().await.unwrap();
            assert_eq!(out, "hello arg bar /tmp\n");
            assert_eq!(err, "err\n");
            assert_eq!(s.code(), Some(3));
        });
    }

    #[test]
    fn streams_left_alone_are_dev_null() {
        rt().block_on(async {
            // stdin and stderr on /dev/null (one descriptor serves both),
            // stdout a pipe.
            let mut c = Command::new("/bin/sh");
            c.args([
                "-c",
                "read x; echo \"read $?\"; echo lost >&2; readlink /proc/self/fd/0 /proc/self/fd/2",
            ])
            .stdout(Stdio::Piped);
            let mut ch = c.spawn().unwrap();
            let out = read_all(ch.stdout.take()).await;
            assert!(ch.wait().await.unwrap().success());
            assert_eq!(out, "read 1\n/dev/null\n/dev/null\n");
        });
    }

    #[test]
    fn a_missing_program_is_an_error_of_the_spawn() {
        rt().block_on(async {
            let e = Command::new("/nonexistent/prog").spawn().unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
            let e = Command::new("/bin/true")
                .current_dir("/nonexistent")
                .spawn()
                .unwrap_err();
            assert!(e.to_string().contains("working directory"), "{e}");
        });
    }

    #[test]
    fn a_nul_byte_in_an_argument_or_the_environment_is_an_error_of_the_spawn() {
        rt().block_on(async {
            // Added pair by pair, or in a shared environment.
            let shared = Environment::new([("GOOD", "yes"), ("BAD", "a\0b")]);
            let mut by_pair = Command::new("/bin/true");
            by_pair.env("GOOD", "yes").env("BAD", "a\0b");
            let mut by_shared = Command::new("/bin/true");
            by_shared.environment(&shared);
            for mut c in [by_pair, by_shared] {
                let e = c.spawn().unwrap_err();
                assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
                assert!(
                    e.to_string().contains("\"BAD=a\\0b\" contains a NUL byte"),
                    "{e}"
                );
            }
            let e = Command::new("/bin/true")
                .args(["ok", "x\0y"])
                .spawn()
                .unwrap_err();
            assert!(
                e.to_string().contains("\"x\\0y\" contains a NUL byte"),
                "{e}"
            );
        });
    }

    #[test]
    fn a_shared_environment_comes_first_and_is_sent_as_pairs() {
        let env = Environment::new([("A", "1"), ("B", "x=y"), ("C", "")]);
        let pairs: Vec<_> = env.vars().collect();
        assert_eq!(
            pairs,
            [("A", "1"), ("B", "x=y"), ("C", "")].map(|(k, v)| (OsStr::new(k), OsStr::new(v)))
        );
        // On the wire as the list of pairs it replaced, and back.
        let json = serde_json::to_string(&env).unwrap();
        assert_eq!(json, r#"[["A","1"],["B","x=y"],["C",""]]"#);
        assert_eq!(serde_json::from_str::<Environment>(&json).unwrap(), env);
        rt().block_on(async {
            let mut c = Command::new("/usr/bin/env");
            c.environment(&env).env("D", "4").stdout(Stdio::Piped);
            let mut ch = c.spawn().unwrap();
            let out = read_all(ch.stdout.take()).await;
            assert!(ch.wait().await.unwrap().success());
            assert_eq!(out, "A=1\nB=x=y\nC=\nD=4\n");
        });
    }

    #[test]
    fn signals_and_exit_statuses() {
        rt().block_on(async {
            let mut ch = Command::new("/bin/sleep").args(["30"]).spawn().unwrap();
            assert!(ch.try_wait().unwrap().is_none());
            ch.signal(libc::SIGTERM).unwrap();
            let s = ch.wait().await.unwrap();
            assert_eq!(s.signal(), Some(libc::SIGTERM));
            assert_eq!(ch.wait().await.unwrap().signal(), Some(libc::SIGTERM));
        });
    }

    #[test]
    fn the_child_gets_default_signals_and_its_own_group() {
        rt().block_on(async {
            // SIGPIPE is ignored in a Rust program; the child must not
            // inherit that, nor the mask blocked around the clone.
            let mut c = Command::new("/bin/sh");
            c.args([
                "-c",
                "grep -E '^(SigIgn|SigBlk)' /proc/self/status; cut -d' ' -f5 /proc/$$/stat; echo $$",
            ])
                .process_group()
                .stdout(Stdio::Piped);
            let mut ch = c.spawn().unwrap();
            let out = read_all(ch.stdout.take()).await;
            ch.wait().await.unwrap();
            assert!(out.contains("SigIgn:\t0000000000000000"), "{out}");
            assert!(out.contains("SigBlk:\t0000000000000000"), "{out}");
            let nums: Vec<&str> = out.lines().skip(2).map(str::trim).collect();
            assert_eq!(nums.len(), 2, "{out}");
            assert_eq!(nums[0], nums[1], "own process group: {out}");
        });
    }

    #[test]
    fn runs_as_another_user_without_groups() {
        if !nix::unistd::Uid::effective().is_root() {
            // Only root may switch; a non-root spawn asking for it fails.
            rt().block_on(async {
                let e = Command::new("/bin/true").user(0, 0).spawn().unwrap_err();
                assert!(e.to_string().contains("cannot switch user"), "{e}");
            });
            return;
        }
        rt().block_on(async {
            let mut c = Command::new("/bin/sh");
            c.args(["-c", "id -u; id -g; id -G"])
                .user(65534, 65534)
                .stdout(Stdio::Piped);
            let mut ch = c.spawn().unwrap();
            let out = read_all(ch.stdout.take()).await;
            assert!(ch.wait().await.unwrap().success());
            assert_eq!(out, "65534\n65534\n65534\n");
            // The parent kept its own credentials.
            assert!(nix::unistd::Uid::effective().is_root());
        });
    }

    /// A new cgroup below this process's own, removed when dropped; None
    /// where there is no writable cgroup v2 hierarchy.
    struct TestCgroup {
        dir: std::path::PathBuf,
        path: String,
    }

    impl TestCgroup {
        fn new(tag: &str) -> Option<TestCgroup> {
            use crate::starter::cgroup::{cgroup2_mount, own_cgroup};
            let mount = std::fs::read_to_string("/proc/self/mountinfo")
                .ok()
                .and_then(|m| cgroup2_mount(&m))?;
            let own = std::fs::read_to_string("/proc/self/cgroup")
                .ok()
                .and_then(|c| own_cgroup(&c))?;
            let name = format!("roost-spawn-{tag}.{}", std::process::id());
            let dir = mount.join(own.trim_start_matches('/')).join(&name);
            std::fs::create_dir(&dir).ok()?;
            let path = format!("{}/{name}", own.trim_end_matches('/'));
            Some(TestCgroup { dir, path })
        }

        fn fd(&self) -> OwnedFd {
            std::fs::File::open(&self.dir).unwrap().into()
        }
    }

    impl Drop for TestCgroup {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }

    #[test]
    fn a_child_is_born_in_the_cgroup_it_is_given() {
        let Some(cg) = TestCgroup::new("born") else {
            eprintln!("no writable cgroup v2 here: nothing to check");
            return;
        };
        let out = rt().block_on(async {
            let mut c = Command::new("/bin/sh");
            c.args(["-c", "cat /proc/self/cgroup; echo \"$FOO\"; pwd"])
                .env("FOO", "bar")
                .current_dir("/tmp")
                .cgroup(cg.fd())
                .stdout(Stdio::Piped);
            let mut ch = c.spawn().unwrap();
            let out = read_all(ch.stdout.take()).await;
            assert!(ch.wait().await.unwrap().success());
            out
        });
        assert!(
            out.lines()
                .any(|l| l.strip_prefix("0::") == Some(cg.path.as_str())),
            "{out} should name {}",
            cg.path
        );
        assert!(out.ends_with("bar\n/tmp\n"), "{out}");
    }

    #[test]
    fn a_failed_start_into_a_cgroup_is_an_error_of_the_spawn() {
        let Some(cg) = TestCgroup::new("fail") else {
            return;
        };
        rt().block_on(async {
            let mut c = Command::new("/nonexistent/prog");
            let e = c.cgroup(cg.fd()).spawn().unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
            let mut c = Command::new("/bin/true");
            let e = c
                .current_dir("/nonexistent")
                .cgroup(cg.fd())
                .spawn()
                .unwrap_err();
            assert!(e.to_string().contains("working directory"), "{e}");
        });
    }

    /// The parent's memory is shared with the child until its exec, not
    /// copied: afterwards the parent writes its pages without a
    /// copy-on-write fault each (a `fork`-like clone write-protects them
    /// all).
    #[test]
    fn starting_into_a_cgroup_does_not_copy_the_parent() {
        use nix::sys::resource::{UsageWho, getrusage};
        let Some(cg) = TestCgroup::new("share") else {
            return;
        };
        const PAGES: usize = 512;
        let mut buf = vec![1u8; PAGES * 4096];
        let faults = || {
            getrusage(UsageWho::RUSAGE_THREAD)
                .unwrap()
                .minor_page_faults()
        };
        rt().block_on(async {
            let mut c = Command::new("/bin/true");
            let mut ch = c.cgroup(cg.fd()).spawn().unwrap();
            assert!(ch.wait().await.unwrap().success());
        });
        let before = faults();
        for page in buf.chunks_mut(4096) {
            page[0] = 2;
        }
        let after = faults();
        std::hint::black_box(&buf);
        assert!(
            after - before < (PAGES / 4) as i64,
            "{} faults writing {PAGES} pages after the spawn",
            after - before
        );
    }
}
