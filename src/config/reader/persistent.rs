//! HTCondor's persistent runtime configuration: the file a daemon keeps
//! of what its admins set at run time (`condor_config_val -set`; in Roost
//! what the pool's admins set through etcd, `pool::inbox`), read after
//! every configuration file and the environment, so it wins.

use super::super::source::SourceError;
use super::super::{ConfigError, Scope};
use super::Reader;

/// The persistent runtime configuration of the daemon `scope` names, in
/// `dir` (`PERSISTENT_CONFIG_DIR`): `.config.<LOCALNAME or SUBSYS>`, as
/// HTCondor names its top-level persistent file.
pub fn persistent_file(dir: &str, scope: &Scope) -> String {
    let who = (scope.localname.as_deref())
        .or(scope.subsys.as_deref())
        .unwrap_or("TOOL");
    format!("{}/.config.{who}", dir.trim_end().trim_end_matches('/'))
}

/// A statement that cannot go into the persistent configuration.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{statement:?}: {why}")]
pub struct StatementError {
    /// The statement as given.
    pub statement: String,
    /// What is wrong with it.
    pub why: &'static str,
}

/// Keywords that begin statements other than a knob's definition.
const KEYWORDS: [&str; 9] = [
    "use", "include", "if", "elif", "else", "endif", "error", "warning", "@end",
];

/// The knob a one-line statement (`NAME = value` or `NAME : value`)
/// defines, checked as the persistent file can hold it.
pub fn statement_name(statement: &str) -> Result<&str, StatementError> {
    let bad = |why| StatementError {
        statement: statement.to_string(),
        why,
    };
    if statement.contains(['\n', '\r']) {
        return Err(bad("a statement is one line"));
    }
    let s = statement.trim_start();
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.')))
        .unwrap_or(s.len());
    let (name, rest) = s.split_at(end);
    if name.is_empty() {
        return Err(bad("does not begin with a knob's name"));
    }
    if KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(name)) {
        return Err(bad("only knob definitions can be set at run time"));
    }
    let rest = rest.trim_start();
    if rest.starts_with("@=") {
        return Err(bad("a multi-line definition cannot be set at run time"));
    }
    if !(rest.starts_with('=') || rest.starts_with(':')) {
        return Err(bad("is not `NAME = value` or `NAME : value`"));
    }
    Ok(name)
}

/// The persistent file's text after setting `set` (statements; one that
/// defines a knob already there replaces it in place) and dropping the
/// knobs `unset`. Lines of `current` that are not statements (comments)
/// go; the order of the rest is kept, since a later statement may build
/// on an earlier one.
pub fn edit_persistent(
    current: &str,
    set: &[String],
    unset: &[String],
) -> Result<String, StatementError> {
    let mut lines: Vec<(String, String)> = Vec::new();
    for line in current.lines() {
        if let Ok(name) = statement_name(line) {
            lines.push((name.to_ascii_uppercase(), line.to_string()));
        }
    }
    for statement in set {
        let name = statement_name(statement)?.to_ascii_uppercase();
        let statement = statement.trim().to_string();
        match lines.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = statement,
            None => lines.push((name, statement)),
        }
    }
    lines.retain(|(n, _)| !unset.iter().any(|u| u.trim().eq_ignore_ascii_case(n)));
    let mut text = String::from(
        "# The persistent runtime configuration, written by the daemon (roost: the pool's\n\
         # requests). It is read after every other file; the daemon rewrites it.\n",
    );
    for (_, line) in lines {
        text.push_str(&line);
        text.push('\n');
    }
    Ok(text)
}

impl Reader<'_> {
    /// HTCondor's persistent runtime configuration, read after every file
    /// and the environment (so it wins): with `ENABLE_PERSISTENT_CONFIG`
    /// true, the file [`persistent_file`] names in `PERSISTENT_CONFIG_DIR`,
    /// when there is one. Roost's node writes it for the pool's admins
    /// (`pool::inbox`); its statements are ordinary configuration lines, so
    /// `START : ($(START)) && …` extends the START read before.
    pub(super) fn persistent(&mut self) -> Result<(), ConfigError> {
        let enabled = self
            .param("ENABLE_PERSISTENT_CONFIG")?
            .and_then(|v| super::super::parse_bool(&v, self.now))
            .unwrap_or(false);
        let dir = match self.param("PERSISTENT_CONFIG_DIR")? {
            Some(d) if enabled && !d.trim().is_empty() => d,
            _ => return Ok(()),
        };
        let path = persistent_file(&dir, &self.scope);
        match self.files.read(&path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                self.parse_text(&path, &text, 0)
            }
            Err(SourceError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(ConfigError {
                file: path,
                line: 0,
                message: format!("cannot read the persistent runtime configuration: {e}"),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::super::super::source::Files;
    use super::super::{LoadInput, Root, load};
    use super::*;

    struct Mem(HashMap<&'static str, &'static str>);

    impl Files for Mem {
        fn read(&self, path: &str) -> Result<Vec<u8>, SourceError> {
            match self.0.get(path) {
                Some(t) if *t == "<unreadable>" => Err(SourceError::Io(std::io::Error::from(
                    std::io::ErrorKind::PermissionDenied,
                ))),
                Some(t) => Ok(t.as_bytes().to_vec()),
                None => Err(SourceError::Io(std::io::Error::from(
                    std::io::ErrorKind::NotFound,
                ))),
            }
        }
        fn run(&self, _: &str) -> Result<Vec<u8>, SourceError> {
            Err(SourceError::Unavailable("no commands"))
        }
        fn list_dir(&self, _: &str) -> Result<Vec<String>, SourceError> {
            Ok(Vec::new())
        }
    }

    fn start_of(
        files: &[(&'static str, &'static str)],
        env: &[(&str, &str)],
    ) -> Result<String, ConfigError> {
        let input = LoadInput {
            root: Root::File("/etc/condor/condor_config".into()),
            scope: Scope {
                subsys: Some("STARTD".into()),
                localname: None,
            },
            attributes: vec![],
            specials: vec![],
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            now: 0,
        };
        let config = load(&input, &Mem(files.iter().copied().collect()))?;
        Ok(config.text("START").expect("expands").unwrap_or_default())
    }

    const ROOT: &str = "ENABLE_PERSISTENT_CONFIG = true\nPERSISTENT_CONFIG_DIR = /var/lib/condor/persist/\nSTART = A\n";

    #[test]
    fn the_persistent_file_is_read_last_and_extends_what_came_before() {
        let files = [
            ("/etc/condor/condor_config", ROOT),
            (
                "/var/lib/condor/persist/.config.STARTD",
                "START : ($(START)) && (B)\n",
            ),
        ];
        assert_eq!(start_of(&files, &[]).expect("loads"), "(A) && (B)");
        // After the environment's overrides too.
        assert_eq!(
            start_of(&files, &[("_CONDOR_START", "E")]).expect("loads"),
            "(E) && (B)"
        );
        // Not enabled: not read.
        let off = [
            (
                "/etc/condor/condor_config",
                "PERSISTENT_CONFIG_DIR = /var/lib/condor/persist\nSTART = A\n",
            ),
            files[1],
        ];
        assert_eq!(start_of(&off, &[]).expect("loads"), "A");
    }

    #[test]
    fn edits_replace_in_place_drop_and_refuse_what_is_not_a_definition() {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let text = edit_persistent(
            "# old\nEndDownTime = 1\nSTART : ($(START)) && ($(Shutdown) == False)\n",
            &set(&["enddowntime = 2", "Shutdown = (CurrentTime < EndDownTime)"]),
            &[],
        )
        .expect("edits");
        let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            body,
            [
                "enddowntime = 2",
                "START : ($(START)) && ($(Shutdown) == False)",
                "Shutdown = (CurrentTime < EndDownTime)"
            ]
        );
        let text = edit_persistent(&text, &[], &set(&["START", " shutdown"])).expect("edits");
        assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 1);
        for bad in [
            "use ROLE : Execute",
            "include : /etc/passwd",
            "= 3",
            "A 3",
            "A @=x",
            "A = 1\nB = 2",
        ] {
            assert!(edit_persistent("", &set(&[bad]), &[]).is_err(), "{bad}");
        }
        assert_eq!(statement_name("  STARTD.X = 1"), Ok("STARTD.X"));
    }

    #[test]
    fn a_missing_file_is_nothing_and_an_unreadable_one_is_named() {
        assert_eq!(
            start_of(&[("/etc/condor/condor_config", ROOT)], &[]).expect("loads"),
            "A"
        );
        let err = start_of(
            &[
                ("/etc/condor/condor_config", ROOT),
                ("/var/lib/condor/persist/.config.STARTD", "<unreadable>"),
            ],
            &[],
        )
        .expect_err("unreadable");
        assert_eq!(err.file, "/var/lib/condor/persist/.config.STARTD");
        assert!(
            err.message.contains("persistent runtime configuration"),
            "{err}"
        );
        let scope = Scope {
            subsys: Some("STARTD".into()),
            localname: Some("STARTD_B".into()),
        };
        assert_eq!(persistent_file("/d/", &scope), "/d/.config.STARTD_B");
    }
}
