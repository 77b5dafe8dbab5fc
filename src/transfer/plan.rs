//! What a job's ad says of its files, as HTCondor's file transfer reads it:
//! whether the node must transfer them at all (`ShouldTransferFiles`, and
//! for `IF_NEEDED` whether the machine shares the job's
//! `FileSystemDomain`), what goes into the sandbox before the job runs
//! (the executable unless `TransferExecutable` is false, stdin, and each
//! `TransferInput` item: a file by its base name, a directory whole, a
//! directory named with a trailing `/` by what it holds, a URL by the last
//! part of its path), and where each file that comes back goes
//! (`TransferOutputRemaps`, else the job's `Iwd`; stdout and stderr to the
//! paths the job named). Pure: the server and the starter do the I/O.

use serde::{Deserialize, Serialize};

use crate::classad::{ClassAd, Expr, Value};

/// A transfer that cannot be made, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A name that would leave the sandbox or the directory it goes to.
    #[error("{0:?} is not a name inside the job's directory")]
    Unsafe(String),
    /// The job's ad lacks what a transfer needs.
    #[error("the job has no {0}")]
    Missing(&'static str),
}

/// What a manifest entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory (made before what it holds).
    Dir,
}

/// One input as the node receives it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its name in the sandbox (relative, `/`-separated).
    pub name: String,
    /// File or directory.
    pub kind: Kind,
    /// Its bytes (0 for a directory).
    pub size: u64,
    /// Its permission bits.
    pub mode: u32,
}

/// One thing the job's ad names to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// Where it is: an absolute path on the submit machine, or a URL.
    pub from: String,
    /// Its name in the sandbox (for a directory sent by its contents,
    /// empty: what it holds goes at the top).
    pub name: String,
    /// Whether `from` is a URL (the node fetches it itself).
    pub url: bool,
}

/// What goes to the node before the job runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputPlan {
    /// Each source, in the order the ad names them (executable, stdin,
    /// then `TransferInput`).
    pub sources: Vec<Source>,
}

/// Where what comes back goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputPlan {
    /// The job's `Iwd` on the submit machine.
    pub iwd: String,
    /// `TransferOutput`, when the job lists its outputs (`None`: every
    /// file the job made or changed at the sandbox's top).
    pub listed: Option<Vec<String>>,
    /// `TransferOutputRemaps`: a file's name, and where it goes instead.
    pub remaps: Vec<(String, String)>,
    /// Stdout and stderr: the name in the sandbox and the path the job
    /// named (relative to `iwd`).
    pub stdio: Vec<(String, String)>,
}

/// The string attribute `name` of `ad`, as written (no evaluation).
pub fn string(ad: &ClassAd, name: &str) -> Option<String> {
    match ad.lookup(name) {
        Some(Expr::Lit(Value::Str(s))) => Some(s.to_string_lossy()),
        _ => None,
    }
}

fn is_false(ad: &ClassAd, name: &str) -> bool {
    matches!(ad.lookup(name), Some(Expr::Lit(Value::Bool(false))))
}

/// Whether a job with ad `job` has its files transferred on a machine
/// with ad `machine`: `ShouldTransferFiles` is `YES`, or `IF_NEEDED` and
/// the two do not share a `FileSystemDomain`.
pub fn wants_transfer(job: &ClassAd, machine: &ClassAd) -> bool {
    match string(job, "ShouldTransferFiles").as_deref() {
        Some(s) if s.eq_ignore_ascii_case("YES") => true,
        Some(s) if s.eq_ignore_ascii_case("IF_NEEDED") => {
            let mine = string(job, "FileSystemDomain");
            mine.is_none() || mine != string(machine, "FileSystemDomain")
        }
        _ => false,
    }
}

/// Whether a job's files may travel to some machine (`ShouldTransferFiles`
/// other than `NO`): its queue then tells the node where they are served.
pub fn may_travel(job: &ClassAd) -> bool {
    string(job, "ShouldTransferFiles").is_some_and(|s| !s.eq_ignore_ascii_case("NO"))
}

/// The last part of a path or URL (a trailing `/` ignored).
pub fn base_name(path: &str) -> &str {
    let p = path.trim_end_matches('/');
    let p = p.split(['?', '#']).next().unwrap_or(p);
    p.rsplit('/').next().unwrap_or(p)
}

/// Whether `name` stays inside the directory it is relative to: not
/// empty, not absolute, no `.` or `..` part, no empty part.
pub fn safe(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('/')
        && name
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != "..")
}

/// `path` under `iwd`, unless it is absolute.
pub fn absolute(iwd: &str, path: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{path}", iwd.trim_end_matches('/'))
    }
}

/// The items of a transfer list as condor_submit reads one (split at
/// commas only, each trimmed, empty ones dropped).
pub fn items(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .map(str::to_string)
        .collect()
}

/// The items of list attribute `attr`, if the ad has it.
fn list(ad: &ClassAd, attr: &str) -> Option<Vec<String>> {
    string(ad, attr).map(|s| items(&s))
}

/// The scheme of `item` when it is a URL (`scheme://…`).
pub fn scheme(item: &str) -> Option<&str> {
    let (s, _) = item.split_once("://")?;
    (!s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)))
    .then_some(s)
}

/// The pairs of a remap list (`a = b; c = d`; `\;` and `\=` are kept in
/// names), in order.
pub fn parse_remaps(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for part in split_unescaped(text, ';') {
        let mut halves = split_unescaped(&part, '=').into_iter();
        let (Some(from), Some(to)) = (halves.next(), halves.next()) else {
            continue;
        };
        let (from, to) = (from.trim(), to.trim());
        if !from.is_empty() && !to.is_empty() {
            out.push((from.to_string(), to.to_string()));
        }
    }
    out
}

/// `text` split at each `sep` not preceded by a backslash; the backslash
/// before an escaped separator is dropped.
fn split_unescaped(text: &str, sep: char) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&sep) {
            if let Some(s) = out.last_mut() {
                s.push(sep);
            }
            chars.next();
        } else if c == sep {
            out.push(String::new());
        } else {
            if let Some(s) = out.last_mut() {
                s.push(c);
            }
        }
    }
    out
}

impl InputPlan {
    /// The inputs of job `job`.
    pub fn of(job: &ClassAd) -> Result<InputPlan, PlanError> {
        let iwd = string(job, "Iwd").ok_or(PlanError::Missing("Iwd"))?;
        let mut sources = Vec::new();
        let mut push = |item: &str| -> Result<(), PlanError> {
            let url = scheme(item).is_some();
            let contents = !url && item.ends_with('/') && !item.trim_end_matches('/').is_empty();
            let name = if contents {
                String::new()
            } else {
                let n = base_name(item).to_string();
                if !safe(&n) {
                    return Err(PlanError::Unsafe(item.to_string()));
                }
                n
            };
            let from = if url {
                item.to_string()
            } else {
                absolute(&iwd, item.trim_end_matches('/'))
            };
            sources.push(Source { from, name, url });
            Ok(())
        };
        if !is_false(job, "TransferExecutable") {
            let cmd = string(job, "Cmd").ok_or(PlanError::Missing("Cmd"))?;
            push(&cmd)?;
        }
        if let Some(input) = string(job, "In").filter(|i| i != "/dev/null")
            && !is_false(job, "TransferIn")
        {
            push(&input)?;
        }
        for item in list(job, "TransferInput").unwrap_or_default() {
            push(&item)?;
        }
        Ok(InputPlan { sources })
    }
}

impl OutputPlan {
    /// Where job `job`'s outputs go.
    pub fn of(job: &ClassAd) -> Result<OutputPlan, PlanError> {
        let iwd = string(job, "Iwd").ok_or(PlanError::Missing("Iwd"))?;
        let remaps = string(job, "TransferOutputRemaps")
            .map(|r| parse_remaps(&r))
            .unwrap_or_default();
        let mut stdio = Vec::new();
        for (attr, flag) in [("Out", "TransferOut"), ("Err", "TransferErr")] {
            if let Some(p) = string(job, attr).filter(|p| p != "/dev/null")
                && !is_false(job, flag)
            {
                stdio.push((base_name(&p).to_string(), p));
            }
        }
        Ok(OutputPlan {
            iwd,
            listed: list(job, "TransferOutput"),
            remaps,
            stdio,
        })
    }

    /// Where the output named `name` in the sandbox goes on the submit
    /// machine: its remap, else stdout's or stderr's path, else `Iwd`.
    pub fn destination(&self, name: &str) -> Result<String, PlanError> {
        if !safe(name) {
            return Err(PlanError::Unsafe(name.to_string()));
        }
        if let Some((_, to)) = self.remaps.iter().find(|(from, _)| from == name) {
            return Ok(absolute(&self.iwd, to));
        }
        if let Some((_, to)) = self.stdio.iter().find(|(n, _)| n == name) {
            return Ok(absolute(&self.iwd, to));
        }
        Ok(absolute(&self.iwd, name))
    }

    /// Whether the sandbox file `name` (at its top) goes back: stdout and
    /// stderr always; the listed outputs when the job lists them, else
    /// every file the job made or changed (`changed`).
    pub fn sends(&self, name: &str, changed: bool) -> bool {
        if self.stdio.iter().any(|(n, _)| n == name) {
            return true;
        }
        match &self.listed {
            Some(l) => l.iter().any(|i| i.trim_end_matches('/') == name),
            None => changed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;

    #[test]
    fn remaps_split_at_unescaped_separators() {
        assert_eq!(
            parse_remaps(r"a = /x/y; b\;c = d ;bad; e=f\=g"),
            vec![
                ("a".to_string(), "/x/y".to_string()),
                ("b;c".to_string(), "d".to_string()),
                ("e".to_string(), "f=g".to_string()),
            ]
        );
    }

    #[test]
    fn urls_have_schemes_and_paths_do_not() {
        assert_eq!(scheme("https://h/p"), Some("https"));
        assert_eq!(scheme("File:///a"), Some("File"));
        assert_eq!(scheme("dir/a"), None);
        assert_eq!(scheme("a b://c"), None);
    }

    fn job(extra: &str) -> ClassAd {
        parse_ad(&format!(
            "[Iwd = \"/home/a/run\"; Cmd = \"/home/a/bin/prog\"; In = \"/dev/null\"; \
              TransferIn = false; Out = \"o.txt\"; Err = \"/dev/null\"; TransferErr = false; \
              ShouldTransferFiles = \"YES\"; FileSystemDomain = \"a.org\"; {extra}]"
        ))
        .expect("ad")
    }

    #[test]
    fn inputs_are_the_executable_stdin_and_the_list() {
        let plan = InputPlan::of(&job(
            "TransferInput = \"in.txt, data, data2/, https://h/p/f.tar?x=1, /abs/x\"",
        ))
        .expect("plan");
        let got: Vec<(&str, &str, bool)> = (plan.sources.iter())
            .map(|s| (s.from.as_str(), s.name.as_str(), s.url))
            .collect();
        assert_eq!(
            got,
            [
                ("/home/a/bin/prog", "prog", false),
                ("/home/a/run/in.txt", "in.txt", false),
                ("/home/a/run/data", "data", false),
                ("/home/a/run/data2", "", false),
                ("https://h/p/f.tar?x=1", "f.tar", true),
                ("/abs/x", "x", false),
            ]
        );
        let no_exe = InputPlan::of(&job(
            "TransferExecutable = false; In = \"i\"; TransferIn = true",
        ))
        .expect("plan");
        assert_eq!(no_exe.sources[0].from, "/home/a/run/i");
        assert!(InputPlan::of(&job("TransferInput = \"..\"")).is_err());
    }

    #[test]
    fn outputs_go_to_their_remap_their_stdio_path_or_iwd() {
        let plan = OutputPlan::of(&job(
            "TransferOutput = \"r.dat, o2\"; TransferOutputRemaps = \"r.dat = /tmp/r; o2=sub/o2\"",
        ))
        .expect("plan");
        assert_eq!(plan.destination("r.dat").as_deref(), Ok("/tmp/r"));
        assert_eq!(plan.destination("o2").as_deref(), Ok("/home/a/run/sub/o2"));
        assert_eq!(
            plan.destination("o.txt").as_deref(),
            Ok("/home/a/run/o.txt")
        );
        assert!(plan.destination("../x").is_err());
        assert!(plan.sends("o.txt", false) && plan.sends("r.dat", false));
        assert!(!plan.sends("other", true));
        let all = OutputPlan::of(&job("")).expect("plan");
        assert!(all.sends("new", true) && !all.sends("old", false));
    }

    #[test]
    fn if_needed_transfers_only_to_another_file_system_domain() {
        let mut j = job("");
        j.insert_value("ShouldTransferFiles", "IF_NEEDED");
        let same = parse_ad("[FileSystemDomain = \"a.org\"]").expect("ad");
        let other = parse_ad("[FileSystemDomain = \"b.org\"]").expect("ad");
        assert!(!wants_transfer(&j, &same) && wants_transfer(&j, &other));
        assert!(wants_transfer(&job(""), &same));
        j.insert_value("ShouldTransferFiles", "NO");
        assert!(!wants_transfer(&j, &other));
    }
}
