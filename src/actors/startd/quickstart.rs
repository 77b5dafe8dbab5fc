//! The quickstart setup, embedded in the binary: a configuration, spool
//! hooks and example jobs (`examples/quickstart/`), written into a
//! directory with `@DIR@` replaced by its absolute path.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

const CONFIG: &str = include_str!("../../../examples/quickstart/condor_config");
const HOOKS: &[(&str, &str)] = &[
    (
        "fetch_work",
        include_str!("../../../examples/quickstart/hooks/fetch_work"),
    ),
    (
        "reply_fetch",
        include_str!("../../../examples/quickstart/hooks/reply_fetch"),
    ),
    (
        "job_exit",
        include_str!("../../../examples/quickstart/hooks/job_exit"),
    ),
];
const JOBS: &[(&str, &str)] = &[
    (
        "hello.job",
        include_str!("../../../examples/quickstart/jobs/hello.job"),
    ),
    (
        "environment.job",
        include_str!("../../../examples/quickstart/jobs/environment.job"),
    ),
    (
        "sleep.job",
        include_str!("../../../examples/quickstart/jobs/sleep.job"),
    ),
];

fn write(path: &Path, text: &str, mode: u32) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot set the mode of {}", path.display()))
}

fn mkdir(path: &Path, mode: u32) -> Result<()> {
    std::fs::create_dir_all(path).with_context(|| format!("cannot create {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot set the mode of {}", path.display()))
}

/// Writes the setup into `dir` unless its configuration is already there
/// (an existing setup is reused as it is); returns the configuration file.
pub fn prepare(dir: &Path) -> Result<PathBuf> {
    mkdir(dir, 0o755)?;
    let dir = std::fs::canonicalize(dir).with_context(|| format!("{}", dir.display()))?;
    let config = dir.join("condor_config");
    if config.exists() {
        return Ok(config);
    }
    let text = dir.to_string_lossy();
    let fill = |s: &str| s.replace("@DIR@", &text);
    for d in ["hooks", "spool/jobs"] {
        mkdir(&dir.join(d), 0o755)?;
    }
    // JOB_EXIT runs as the job's Owner and moves the job's ad from
    // claimed/ to done/; jobs write their output into output/.
    for d in ["spool/claimed", "spool/done"] {
        mkdir(&dir.join(d), 0o777)?;
    }
    mkdir(&dir.join("output"), 0o1777)?;
    for (name, body) in HOOKS {
        write(&dir.join("hooks").join(name), &fill(body), 0o755)?;
    }
    for (name, body) in JOBS {
        write(&dir.join("spool/jobs").join(name), &fill(body), 0o644)?;
    }
    write(&config, &fill(CONFIG), 0o644)?;
    Ok(config)
}
