//! The HTCondor release the reader behaves as ([`Version`]): chosen by
//! `ROOST_HTCONDOR_VERSION` (in the environment before any file is read and
//! again after the files, or in a file for the lines after it), and HTCondor
//! 25's append operators (`NAME += value`, `NAME +,= value`, …), which
//! HTCondor 23 reads as a plain assignment with noise before the `=`.

use super::expand::is_id_char;
use super::{ConfigError, Reader, Src, Version, Warning};
use crate::config::ExpandError;

/// Why a version choice or an append operator is refused.
#[derive(Debug, thiserror::Error)]
pub(super) enum VersionError {
    #[error("{knob} = {text}: the HTCondor version must be 23 or 25", knob = Version::KNOB)]
    Unknown { text: String },
    #[error("{0}")]
    Expand(#[from] ExpandError),
    #[error("'+' must be followed by '=' or a separator and '=' (+=, +,=, +&&=)")]
    PlusWithoutEquals,
    #[error("'+{0}=' is not an append operator (the separator is one or two of , ; | * &)")]
    Separator(String),
}

/// One `NAME <words> <op> value` line, split by `Reader::statement`.
pub(super) struct Assignment<'l> {
    /// The name as written (before expansion).
    pub name_raw: &'l str,
    /// The words between the name and the operator, trimmed.
    pub between: &'l str,
    /// The line up to the operator.
    pub head: &'l str,
    /// `=`, `:` or `@` (for `@=`).
    pub op: u8,
    /// The value as written.
    pub rhs: &'l str,
    /// The whole line, for messages.
    pub line: &'l str,
}

impl Reader<'_> {
    /// Defines the knob of an assignment line (or starts its `@=` value).
    pub(super) fn assign(
        &mut self,
        a: &Assignment<'_>,
        src: &mut Src,
        template: bool,
    ) -> Result<(), ConfigError> {
        let append = self
            .append_separator(a.between, a.head, a.op)
            .map_err(|e| src.err(format!("{e}: {}", a.line)))?;
        if !a.between.is_empty() && a.op != b'@' && append.is_none() {
            // HTCondor 23 ignores words between the name and the operator.
            self.warnings.push(Warning {
                file: src.name.clone(),
                line: src.line,
                message: format!(
                    "ignored '{}' between the name and the operator: {}",
                    a.between, a.line
                ),
            });
        }
        let name = if template {
            a.name_raw.to_string()
        } else {
            self.expand_full(a.name_raw)
                .map_err(|e| src.err(e.to_string()))?
        };
        if name.is_empty() || !name.bytes().all(is_id_char) {
            return Err(src.err(format!(
                "illegal knob name <{name}>: names are letters, digits and _ . /"
            )));
        }
        if a.op == b'@' {
            src.here = Some((name, a.rhs.to_string(), Vec::new()));
            return Ok(());
        }
        let mut value = self
            .expand_self(a.rhs, &name)
            .map_err(|e| src.err(e.to_string()))?;
        if let Some(sep) = append {
            value = self.appended(&name, sep, value);
        }
        self.select_version(&name, &value)
            .map_err(|e| src.err(e.to_string()))?;
        let origin = src.origin();
        self.define(&name, value, origin);
        Ok(())
    }

    /// `_CONDOR_ROOST_HTCONDOR_VERSION` in the process environment selects
    /// the release before the first file is read, and again after them.
    pub(super) fn version_from_env(&mut self, env: &[(String, String)]) -> Result<(), ConfigError> {
        for (var, value) in env {
            if var.len() == 8 + Version::KNOB.len()
                && var[..8].eq_ignore_ascii_case("_condor_")
                && var[8..].eq_ignore_ascii_case(Version::KNOB)
            {
                self.select_version(Version::KNOB, value)
                    .map_err(|e| ConfigError {
                        file: format!("environment variable {var}"),
                        line: 0,
                        message: e.to_string(),
                    })?;
            }
        }
        Ok(())
    }

    /// HTCondor 25's `NAME += value` and `NAME +<sep>= value`: the
    /// separator to join with, `None` for a plain assignment. `between` is
    /// the text between the name and the operator, `head` the line up to
    /// the operator. The separator is one or two of the same character of
    /// `, ; | * &`, written against the `=`; two are joined with spaces
    /// around them (`+&&=` gives `a && b`), one without (`+,=` gives
    /// `a,b`), none with a space. HTCondor 23 ignores the words instead.
    pub(super) fn append_separator(
        &self,
        between: &str,
        head: &str,
        op: u8,
    ) -> Result<Option<&'static str>, VersionError> {
        let Some(sep) = between.strip_prefix('+') else {
            return Ok(None);
        };
        if !self.table.version().is_25() {
            return Ok(None);
        }
        if op != b'=' || !head.ends_with(between) {
            return Err(VersionError::PlusWithoutEquals);
        }
        Ok(Some(match sep {
            "" => " ",
            "," => ",",
            ";" => ";",
            "|" => "|",
            "*" => "*",
            "&" => "&",
            ",," => " ,, ",
            ";;" => " ;; ",
            "||" => " || ",
            "**" => " ** ",
            "&&" => " && ",
            _ => return Err(VersionError::Separator(sep.to_string())),
        }))
    }

    /// `name`'s current text (its definition, else its built-in default)
    /// with `sep` and `value` after it; just `value` when it has none.
    pub(super) fn appended(&self, name: &str, sep: &str, value: String) -> String {
        let old = match self.table.get(name) {
            Some(m) => m.value.as_str(),
            None => self.table.defaults().get(name).map_or("", |d| &*d.value),
        };
        if old.is_empty() {
            value
        } else {
            format!("{old}{sep}{value}")
        }
    }

    /// A definition of [`Version::KNOB`] switches the release whose
    /// language the rest of the configuration is read in.
    pub(super) fn select_version(&mut self, name: &str, value: &str) -> Result<(), VersionError> {
        if !name.eq_ignore_ascii_case(Version::KNOB) {
            return Ok(());
        }
        let text = self.expand_full(value)?;
        let version = Version::parse(&text).ok_or(VersionError::Unknown { text })?;
        self.table.set_version(version);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, ConfigError, Scope, Version, load_text};

    fn load(text: &str) -> Result<Config, ConfigError> {
        let scope = Scope {
            subsys: Some("STARTD".into()),
            localname: None,
        };
        load_text("/etc/condor/condor_config", text, scope, vec![])
    }

    fn get(c: &Config, name: &str) -> String {
        c.get(name).expect("expands").unwrap_or_default()
    }

    #[test]
    fn htcondor_25_is_the_default_and_appends() {
        let c = load("A = a\nA += b\nA +,= c\nA +&&= d\nB +;= only\nDAEMON_LIST += STARTD\n")
            .expect("loads");
        assert_eq!(c.table.version(), Version::V25);
        assert_eq!(get(&c, "A"), "a b,c && d");
        assert_eq!(get(&c, "B"), "only");
        assert_eq!(get(&c, "DAEMON_LIST"), "MASTER STARTD");
        assert_eq!(get(&c, "CONDOR_VERSION"), "25.14.1");
    }

    #[test]
    fn a_file_selects_htcondor_23_for_the_lines_after() {
        let c = load("A = a\nA += b\nROOST_HTCONDOR_VERSION = 23\nB = a\nB += b\n").expect("loads");
        assert_eq!(c.table.version(), Version::V23);
        // HTCondor 23 reads the '+' as noise: a plain assignment.
        assert_eq!(get(&c, "A"), "a b");
        assert_eq!(get(&c, "B"), "b");
        assert_eq!(get(&c, "CONDOR_VERSION"), "23.10.29");
        assert!(c.warnings.iter().any(|w| w.line == 5), "{:?}", c.warnings);
        // 25's templates are not 23's.
        let err = load("ROOST_HTCONDOR_VERSION = 23\nuse FEATURE : Librarian\n")
            .expect_err("no such template in 23");
        assert_eq!(err.line, 2);
        let c = load("use FEATURE : Librarian\n").expect("a template of 25");
        assert!(get(&c, "DAEMON_LIST").contains("LIBRARIAN"));
    }

    #[test]
    fn a_bad_version_or_append_operator_names_its_line() {
        let err = load("A = 1\nROOST_HTCONDOR_VERSION = 24\n").expect_err("24 is not offered");
        assert_eq!(err.line, 2);
        assert!(err.message.contains("must be 23 or 25"), "{err}");
        let err = load("A = a\nA +!= b\n").expect_err("not a separator");
        assert_eq!(err.line, 2);
        assert!(err.message.contains("'+!='"), "{err}");
        let err = load("A = a\nA + = b\n").expect_err("space before '='");
        assert!(err.message.contains("'+' must be followed"), "{err}");
    }

    #[test]
    fn version_numbers_come_from_the_tables() {
        assert_eq!(Version::V23.number(), (23, 10, 29));
        assert_eq!(Version::V25.number(), (25, 14, 1));
        assert_eq!(Version::parse(" 23 "), Some(Version::V23));
        assert_eq!(Version::parse("25.14"), Some(Version::V25));
        for bad in ["", "24", "23.", "2x", "v25", "25.1a"] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
    }
}
