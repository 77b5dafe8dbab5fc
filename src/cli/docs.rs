//! Shell completions and manual pages, made from the command lines' own
//! definitions (`clap_complete`, `clap_mangen`), so they never drift from
//! what the programs accept: `roost completions SHELL`, `roost man DIR`,
//! and the same two subcommands of `roost-log`. `tools/install.sh` installs
//! both.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use clap_complete::Shell;

/// `completions SHELL`.
#[derive(Args, Debug)]
pub struct CompletionsCmd {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    shell: Shell,
}

/// `man DIR`.
#[derive(Args, Debug)]
pub struct ManCmd {
    /// The directory to write the pages into (created if missing): one
    /// page for the program and one for each subcommand, section 1.
    dir: PathBuf,
}

/// Prints `cmd`'s completion script for the shell asked.
pub fn completions(args: &CompletionsCmd, mut cmd: clap::Command) -> Result<ExitCode> {
    use std::io::Write as _;
    let name = cmd.get_name().to_string();
    // Made whole first: the generator panics on a failed write (a closed
    // pipe), which this program must not.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, name, &mut script);
    let mut out = std::io::stdout().lock();
    if out.write_all(&script).and_then(|()| out.flush()).is_err() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `cmd`'s manual pages into the directory asked, and names them.
pub fn man(args: &ManCmd, cmd: clap::Command) -> Result<ExitCode> {
    for page in man_pages(cmd, &args.dir)? {
        println!("{}", page.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The pages of `cmd` and its visible subcommands (`roost.1`,
/// `roost-status.1`, `roost-classad-eval.1`, …), written into `dir`;
/// their paths.
pub fn man_pages(cmd: clap::Command, dir: &Path) -> Result<Vec<PathBuf>> {
    fn write(cmd: clap::Command, dir: &Path, pages: &mut Vec<PathBuf>) -> Result<()> {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            write(sub.clone(), dir, pages)?;
        }
        let page = clap_mangen::Man::new(cmd);
        let path = page
            .generate_to(dir)
            .with_context(|| format!("writing {}", dir.join(page.get_filename()).display()))?;
        pages.push(path);
        Ok(())
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // Built, each subcommand knows its full name (`roost-status`).
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut pages = Vec::new();
    write(cmd, dir, &mut pages)?;
    pages.sort();
    Ok(pages)
}
