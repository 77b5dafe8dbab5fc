//! The real machine for configuration loading: files, directories and
//! commands from the file system, the process environment, and the facts
//! HTCondor defines as macros (host name, user, CPUs). Lives outside the
//! pure `config` module.

use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::config::{Files, LoadInput, Root, Scope, SourceError};

/// Largest configuration source read (a file or a command's output).
const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// [`Files`] on the local file system; commands run through `/bin/sh -c`.
pub struct FsFiles;

impl Files for FsFiles {
    fn read(&self, path: &str) -> Result<Vec<u8>, SourceError> {
        let meta = std::fs::metadata(path)?;
        if meta.is_dir() {
            return Err(SourceError::IsDirectory);
        }
        if meta.len() > MAX_SOURCE_BYTES {
            return Err(SourceError::TooLarge {
                limit: MAX_SOURCE_BYTES,
            });
        }
        Ok(std::fs::read(path)?)
    }

    fn run(&self, command: &str) -> Result<Vec<u8>, SourceError> {
        let out = Command::new("/bin/sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()?;
        if !out.status.success() {
            use std::os::unix::process::ExitStatusExt;
            return Err(SourceError::Failed {
                code: out.status.code(),
                signal: out.status.signal(),
            });
        }
        Ok(out.stdout)
    }

    fn list_dir(&self, path: &str) -> Result<Vec<String>, SourceError> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            let is_dir = std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
            if !is_dir {
                out.push(entry.path().to_string_lossy().into_owned());
            }
        }
        Ok(out)
    }
}

/// Where the root configuration is: `explicit` (`--config`), else
/// `CONDOR_CONFIG`, else the first readable of `/etc/condor/condor_config`,
/// `/usr/local/etc/condor_config` and `~condor/condor_config`.
pub fn find_root(explicit: Option<&str>) -> Result<Root, NoConfig> {
    if let Some(p) = explicit {
        return Ok(Root::File(p.to_string()));
    }
    if let Ok(env) = std::env::var("CONDOR_CONFIG") {
        if env.eq_ignore_ascii_case("ONLY_ENV") {
            return Ok(Root::OnlyEnv);
        }
        return Ok(Root::File(env));
    }
    let mut candidates = vec![
        "/etc/condor/condor_config".to_string(),
        "/usr/local/etc/condor_config".to_string(),
    ];
    if let Some(home) = condor_home() {
        candidates.push(format!("{home}/condor_config"));
    }
    candidates
        .into_iter()
        .find(|c| std::fs::File::open(c).is_ok())
        .map(Root::File)
        .ok_or(NoConfig)
}

/// No configuration was named and none of the usual places has one.
#[derive(Debug, thiserror::Error)]
#[error(
    "no configuration found: set CONDOR_CONFIG, pass --config FILE, or create \
     /etc/condor/condor_config"
)]
pub struct NoConfig;

fn condor_home() -> Option<String> {
    nix::unistd::User::from_name("condor")
        .ok()
        .flatten()
        .map(|u| u.dir.to_string_lossy().into_owned())
}

/// The load input for this process: its environment, the machine's facts
/// and the current time.
pub fn load_input(root: Root, scope: Scope) -> LoadInput {
    let host = nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "localhost".into());
    let short = host.split('.').next().unwrap_or(&host).to_string();
    let uid = nix::unistd::getuid();
    let gid = nix::unistd::getgid();
    let user = nix::unistd::User::from_uid(uid)
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_default();
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let mut specials = vec![
        ("HOSTNAME".to_string(), short),
        ("FULL_HOSTNAME".to_string(), host),
        ("USERNAME".to_string(), user),
        ("REAL_UID".to_string(), uid.to_string()),
        ("REAL_GID".to_string(), gid.to_string()),
        ("PID".to_string(), std::process::id().to_string()),
        (
            "PPID".to_string(),
            nix::unistd::getppid().as_raw().to_string(),
        ),
        ("DETECTED_CPUS".to_string(), cpus.to_string()),
    ];
    if let Some(home) = condor_home() {
        specials.push(("TILDE".to_string(), home));
    }
    let arch = match std::env::consts::ARCH {
        "x86_64" => "X86_64",
        "aarch64" => "aarch64",
        "powerpc64" => "ppc64le",
        other => other,
    };
    // HTCondor defines DETECTED_CORES once, before the files, so a file may
    // set it (and templates built on it follow); only DETECTED_CPUS is
    // defined again after them.
    let attributes = vec![
        ("ARCH".to_string(), arch.to_string()),
        ("OPSYS".to_string(), "LINUX".to_string()),
        ("DETECTED_CORES".to_string(), cpus.to_string()),
    ];
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    LoadInput {
        root,
        scope,
        attributes,
        specials,
        env: std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect(),
        now,
    }
}

/// The configuration as `roost startd` reads it: subsystem STARTD, with
/// the detected memory defined; `root` as `--config` gives it.
pub fn load_startd_config(root: Option<&str>) -> anyhow::Result<crate::config::Config> {
    load_daemon_config(root, "STARTD")
}

/// The configuration as subsystem `subsys` (`STARTD`, `SCHEDD`) reads it.
pub fn load_daemon_config(
    root: Option<&str>,
    subsys: &str,
) -> anyhow::Result<crate::config::Config> {
    let root = find_root(root).map_err(|e| anyhow::anyhow!(e))?;
    let scope = Scope {
        subsys: Some(subsys.into()),
        localname: None,
    };
    let mut input = load_input(root, scope);
    let mem = crate::actors::common::machine::memory_mb();
    input
        .specials
        .push(("DETECTED_MEMORY".to_string(), mem.to_string()));
    crate::config::load(&input, &FsFiles).map_err(|e| anyhow::anyhow!("configuration error: {e}"))
}

/// The daemon's name as HTCondor builds it from `STARTD_NAME`: as given
/// when it has an `@`, else `<STARTD_NAME>@<host>`; unset: the host.
pub fn daemon_name(startd_name: Option<String>, host: &str) -> String {
    match startd_name.map(|n| n.trim().to_string()) {
        Some(n) if n.contains('@') => n,
        Some(n) if !n.is_empty() => format!("{n}@{host}"),
        _ => host.to_string(),
    }
}
