//! HTCondor's configuration language: reading `condor_config` files into a
//! macro table, and expanding and typing the knobs the daemon uses.
//!
//! Two phases, as `ARCHITECTURE.md` describes:
//!
//! 1. [`load`] reads the root file, its includes, templates, local files and
//!    directories and `_CONDOR_` environment overrides into a [`MacroTable`]
//!    (ordered, with the file and line of every definition). Files, commands
//!    and directory listings come through the [`Files`] trait; the process
//!    environment, detected machine facts and the time come in [`LoadInput`].
//!    This module itself does no I/O and reads no clock.
//! 2. [`Config`] answers lookups: the raw text, the expanded text
//!    ([`Config::get`], what `condor_config_val` prints), and typed values
//!    ([`Config::int`], [`Config::bool`], [`Config::expr`]).
//!
//! HTCondor's behaviour is the specification; `tests/fixtures/config` holds
//! its own reader's answers for hundreds of configurations.

pub mod daemon_knobs;
pub mod device_env;
mod expand;
mod log_limit;
mod printf;
mod reader;
mod scan;
mod source;
pub mod table;

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;

use crate::classad::{self, Expr, FixedEnv, Value};

pub use log_limit::{LogLimit, parse_log_limit};
pub use reader::{
    LoadInput, Root, StatementError, edit_persistent, load, persistent_file, statement_name,
};
pub use source::{Files, SourceError};

/// Loads configuration given as text (a simulation scenario's, a test's):
/// the text is the root file `name`; includes of other files fail.
pub fn load_text(
    name: &str,
    text: &str,
    scope: Scope,
    specials: Vec<(String, String)>,
) -> Result<Config, ConfigError> {
    struct One<'a>(&'a str, &'a str);
    impl Files for One<'_> {
        fn read(&self, path: &str) -> Result<Vec<u8>, SourceError> {
            if path == self.0 {
                Ok(self.1.as_bytes().to_vec())
            } else {
                Err(SourceError::Unavailable(
                    "only the given configuration text can be read",
                ))
            }
        }
        fn run(&self, _: &str) -> Result<Vec<u8>, SourceError> {
            Err(SourceError::Unavailable("commands cannot be run here"))
        }
        fn list_dir(&self, _: &str) -> Result<Vec<String>, SourceError> {
            Err(SourceError::Unavailable(
                "directories cannot be listed here",
            ))
        }
    }
    let input = LoadInput {
        root: Root::File(name.to_string()),
        scope,
        attributes: vec![],
        specials,
        env: vec![],
        now: 0,
    };
    load(&input, &One(name, text))
}
pub use table::{ParamType, Table, Version};

/// Where a definition came from: an index into [`MacroTable::sources`] and
/// a line, and the template when it came from a `use` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// Index into the table's source names.
    pub source: usize,
    /// Line in that source (the last physical line of a continued line); 0
    /// for the special sources.
    pub line: u32,
    /// `CATEGORY:Name` of the template that defined it, if any.
    pub template: Option<String>,
}

/// The special sources, in HTCondor's order.
pub const SOURCE_DETECTED: usize = 0;
/// Built-in defaults.
pub const SOURCE_DEFAULT: usize = 1;
/// `_CONDOR_<NAME>` environment variables.
pub const SOURCE_ENVIRONMENT: usize = 2;
/// Values set by the program itself.
pub const SOURCE_OVER: usize = 3;

/// One definition.
#[derive(Clone, Debug)]
pub struct Macro {
    /// The name as first written.
    pub name: String,
    /// The value with self-references expanded, other references not.
    pub value: String,
    /// Where the last definition came from.
    pub origin: Origin,
}

/// The macro table: every knob defined by configuration, in definition
/// order, with case-insensitive lookup.
#[derive(Clone, Debug)]
pub struct MacroTable {
    items: Vec<Macro>,
    index: HashMap<String, usize>,
    sources: Vec<String>,
    /// The HTCondor release whose defaults and templates lookups use.
    version: Version,
}

impl Default for MacroTable {
    fn default() -> MacroTable {
        MacroTable {
            items: Vec::new(),
            index: HashMap::new(),
            sources: ["<Detected>", "<Default>", "<Environment>", "<Over>"]
                .iter()
                .map(|s| (*s).to_string())
                .collect(),
            version: Version::default(),
        }
    }
}

impl MacroTable {
    /// The HTCondor release whose defaults and templates apply.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Switches the release whose defaults and templates apply.
    pub fn set_version(&mut self, version: Version) {
        self.version = version;
    }

    /// The built-in defaults and templates of this table's release.
    pub fn defaults(&self) -> &'static Table {
        Table::of(self.version)
    }

    /// The definition of exactly `name` (case-insensitive), no defaults.
    pub fn get(&self, name: &str) -> Option<&Macro> {
        with_folded(&[name], |key| self.get_folded(key))
    }

    /// [`MacroTable::get`] of a name already in lower case.
    fn get_folded(&self, key: &str) -> Option<&Macro> {
        self.index.get(key).map(|&i| &self.items[i])
    }

    /// Defines or redefines `name`.
    pub fn insert(&mut self, name: &str, value: String, origin: Origin) {
        let key = name.to_ascii_lowercase();
        if let Some(&i) = self.index.get(&key) {
            let item = &mut self.items[i];
            item.value = value;
            item.origin = origin;
            return;
        }
        self.index.insert(key, self.items.len());
        self.items.push(Macro {
            name: name.to_string(),
            value,
            origin,
        });
    }

    /// Registers a source name (a file, a command, `AUTO_USE_…`), returning
    /// its index.
    pub fn add_source(&mut self, name: &str) -> usize {
        self.sources.push(name.to_string());
        self.sources.len() - 1
    }

    /// The source names; the first four are the special sources.
    pub fn sources(&self) -> &[String] {
        &self.sources
    }

    /// Every definition, in the order first defined.
    pub fn iter(&self) -> impl Iterator<Item = &Macro> {
        self.items.iter()
    }

    /// Number of definitions.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing is defined.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// Which daemon is asking: `SUBSYS.NAME` and `LOCALNAME.NAME` override
/// `NAME` for it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    /// The subsystem (`STARTD`, `TOOL`, …).
    pub subsys: Option<String>,
    /// The local name of this daemon instance, if it has one.
    pub localname: Option<String>,
}

/// A failure to load configuration: always names the file and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or command) being read.
    pub file: String,
    /// The line in it (0 when the whole file is concerned).
    pub line: u32,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}, line {}: {}", self.file, self.line, self.message)
        } else {
            write!(f, "{}: {}", self.file, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// A failure to expand one knob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    /// A knob refers to itself through other knobs.
    #[error("circular reference: {0}")]
    Circular(String),
    /// References nested deeper than [`MAX_EXPANSION_DEPTH`].
    #[error("macro references nested more than {MAX_EXPANSION_DEPTH} deep, at $({0})")]
    TooDeep(String),
    /// A `$FUNC()` got arguments it cannot use.
    #[error("{0}")]
    Function(String),
    /// The value grew past [`MAX_EXPANDED_BYTES`].
    #[error("expanded value is longer than {MAX_EXPANDED_BYTES} bytes")]
    TooLong,
}

/// How deep `$(A)` → `$(B)` → … may go.
pub const MAX_EXPANSION_DEPTH: usize = 100;
/// The longest expanded value.
pub const MAX_EXPANDED_BYTES: usize = 16 << 20;

/// A warning met while loading (`warning :` lines, obsolete syntax).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The file.
    pub file: String,
    /// The line.
    pub line: u32,
    /// The text.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, line {}: {}", self.file, self.line, self.message)
    }
}

/// A loaded configuration.
#[derive(Clone, Debug)]
pub struct Config {
    table: MacroTable,
    scope: Scope,
    env: HashMap<String, String>,
    now: i64,
    seed: Cell<u64>,
    warnings: Vec<Warning>,
    files: Vec<String>,
}

/// The answer to a raw lookup.
#[derive(Clone, Copy, Debug)]
pub struct Lookup<'a> {
    /// The unexpanded text.
    pub raw: &'a str,
    /// The name that matched (`STARTD.FOO` for a lookup of `FOO`).
    pub name: &'a str,
    /// Where it was defined; `None` for a built-in default.
    pub origin: Option<&'a Origin>,
}

impl Config {
    pub(crate) fn new(
        table: MacroTable,
        scope: Scope,
        env: HashMap<String, String>,
        now: i64,
        warnings: Vec<Warning>,
        files: Vec<String>,
    ) -> Config {
        Config {
            table,
            scope,
            env,
            now,
            seed: Cell::new(now.cast_unsigned() ^ 0x9e37_79b9_7f4a_7c15 | 1),
            warnings,
            files,
        }
    }

    /// The macro table.
    pub fn table(&self) -> &MacroTable {
        &self.table
    }

    /// The lookup scope.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Warnings met while loading.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Every file read, in order.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// The same configuration seen from another subsystem.
    pub fn with_scope(&self, scope: Scope) -> Config {
        let mut c = self.clone();
        c.scope = scope;
        c
    }

    /// Looks `name` up as HTCondor does: `LOCALNAME.name`, then
    /// `SUBSYS.name`, then `name`, each in the configuration before the
    /// built-in defaults.
    pub fn lookup(&self, name: &str) -> Option<Lookup<'_>> {
        lookup(&self.table, &self.scope, name)
    }

    /// Where `name` is defined, as an admin looks for it: `FILE, line N`
    /// (with `, use CATEGORY:Name` when a template set it), the special
    /// source (`<Environment>`, ...), or `<Default>` for a built-in
    /// default; `None` when undefined. The name found may be a scoped one
    /// (`STARTD.START` for `START`), as [`Config::lookup`] finds it.
    pub fn location(&self, name: &str) -> Option<String> {
        let l = self.lookup(name)?;
        let Some(o) = l.origin else {
            return Some("<Default>".to_string());
        };
        let mut at = self.source_name(o.source).to_string();
        if o.line > 0 {
            at.push_str(&format!(", line {}", o.line));
        }
        if let Some(t) = &o.template {
            at.push_str(&format!(", use {t}"));
        }
        Some(at)
    }

    /// The unexpanded value of `name`, or `None` when undefined.
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.lookup(name).map(|l| l.raw)
    }

    /// The expanded text of `name`, as `condor_config_val` prints it;
    /// `None` when undefined.
    pub fn get(&self, name: &str) -> Result<Option<String>, ExpandError> {
        match self.lookup(name) {
            None => Ok(None),
            Some(l) => self.expand_named(l.raw, name).map(Some),
        }
    }

    /// The expanded value of the first of `names` that is defined and not
    /// empty (HTCondor's fallback chains, e.g. `SLOT1_JOB_HOOK_KEYWORD`
    /// then `STARTD_JOB_HOOK_KEYWORD`).
    pub fn get_first(&self, names: &[&str]) -> Result<Option<String>, ExpandError> {
        Ok(self.get_first_named(names)?.map(|(_, v)| v))
    }

    /// As [`Config::get_first`], with the name the value was taken from
    /// (for an error that names the knob the admin actually set).
    pub fn get_first_named<'n>(
        &self,
        names: &[&'n str],
    ) -> Result<Option<(&'n str, String)>, ExpandError> {
        for name in names {
            match self.get(name)? {
                Some(v) if !v.trim().is_empty() => return Ok(Some((name, v))),
                _ => {}
            }
        }
        Ok(None)
    }

    /// A per-slot knob as the startd looks it up: `<SLOT>_<NAME>` (the
    /// slot's id string, `slot1` or `slot1_2`, so `SLOT1_START`), then
    /// `<NAME>`.
    pub fn get_for_slot(&self, slot: &str, name: &str) -> Result<Option<String>, ExpandError> {
        self.get_first(&[&format!("{slot}_{name}"), name])
    }

    /// Expands macro references in `text`.
    pub fn expand(&self, text: &str) -> Result<String, ExpandError> {
        self.expander().expand_top(text, None)
    }

    /// Expands `text` against `table` alone (no environment, no
    /// subsystem): the macro language of transforms, such as the job
    /// router's routes, whose variables and `MY.` attributes the caller
    /// puts in the table.
    pub fn expand_in(table: &MacroTable, text: &str, now: i64) -> Result<String, ExpandError> {
        let env = HashMap::new();
        let scope = Scope::default();
        let seed = Cell::new(u64::try_from(now).unwrap_or(0) ^ 0x5eed_7a6b);
        expand::Expander {
            table,
            scope: &scope,
            env: &env,
            now,
            seed: &seed,
        }
        .expand_top(text, None)
    }

    fn expand_named(&self, text: &str, name: &str) -> Result<String, ExpandError> {
        self.expander().expand_top(text, Some(name))
    }

    fn expander(&self) -> expand::Expander<'_> {
        expand::Expander {
            table: &self.table,
            scope: &self.scope,
            env: &self.env,
            now: self.now,
            seed: &self.seed,
        }
    }

    /// `name` as an integer: a number, or a ClassAd expression that
    /// evaluates to one (reals are truncated, as HTCondor does).
    /// `Ok(None)` when undefined or empty.
    pub fn int(&self, name: &str) -> Result<Option<i64>, TypeError> {
        let Some(text) = self.text(name)? else {
            return Ok(None);
        };
        parse_int(&text, self.now)
            .map(Some)
            .ok_or_else(|| self.type_error(name, &text, "an integer"))
    }

    /// `name` as a daemon log's limit (`MAX_<SUBSYS>_LOG`: a size or an
    /// age, see [`LogLimit`]). `Ok(None)` when undefined or empty.
    pub fn log_limit(&self, name: &str) -> Result<Option<LogLimit>, TypeError> {
        let Some(text) = self.text(name)? else {
            return Ok(None);
        };
        parse_log_limit(&text).map(Some).ok_or_else(|| {
            self.type_error(
                name,
                &text,
                "a log size or age (a number and a unit: Kb, Mb, Gb, Sec, Min, Hr, Day, ...)",
            )
        })
    }

    /// `name` as a real number. `Ok(None)` when undefined or empty.
    pub fn real(&self, name: &str) -> Result<Option<f64>, TypeError> {
        let Some(text) = self.text(name)? else {
            return Ok(None);
        };
        parse_real(&text, self.now)
            .map(Some)
            .ok_or_else(|| self.type_error(name, &text, "a real number"))
    }

    /// `name` as a boolean: `true`/`false` (any case), `T`/`F`, `yes`/`no`,
    /// or an expression that evaluates to a boolean or number. `Ok(None)`
    /// when undefined or empty.
    pub fn bool(&self, name: &str) -> Result<Option<bool>, TypeError> {
        let Some(text) = self.text(name)? else {
            return Ok(None);
        };
        parse_bool(&text, self.now)
            .map(Some)
            .ok_or_else(|| self.type_error(name, &text, "a boolean"))
    }

    /// `name` parsed as a ClassAd expression (a policy knob such as START).
    /// `Ok(None)` when undefined or empty.
    pub fn expr(&self, name: &str) -> Result<Option<Expr>, TypeError> {
        let Some(text) = self.text(name)? else {
            return Ok(None);
        };
        self.parse_knob_expr(name, &text).map(Some)
    }

    /// `text`, the value of knob `name`, parsed as a ClassAd expression;
    /// the error names the value and where the knob is defined.
    pub fn parse_knob_expr(&self, name: &str, text: &str) -> Result<Expr, TypeError> {
        classad::parse_expr(text).map_err(|e| TypeError {
            name: name.to_string(),
            message: format!(
                "is not a ClassAd expression: {e} (value: {}){}",
                text.trim(),
                self.at(name)
            ),
        })
    }

    /// A [`TypeError`]: `name`'s value `text` is not `what`; names where
    /// `name` is defined.
    pub fn type_error(&self, name: &str, text: &str, what: &str) -> TypeError {
        TypeError {
            name: name.to_string(),
            message: format!("is not {what}: {}{}", text.trim(), self.at(name)),
        }
    }

    /// ` (at FILE, line N)` for a knob defined in a file, else nothing.
    fn at(&self, name: &str) -> String {
        self.location(name)
            .filter(|l| l != "<Default>")
            .map(|l| format!(" (at {l})"))
            .unwrap_or_default()
    }

    /// The expanded value of `name`, trimmed; `Ok(None)` when unset or
    /// empty; a value that does not expand is an error naming the knob and
    /// where it is set.
    pub fn text(&self, name: &str) -> Result<Option<String>, TypeError> {
        Ok(self
            .expanded(name)?
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty()))
    }

    /// The expanded value of `name` as set, empty included (`Ok(None)`
    /// only when unset); a value that does not expand is an error naming
    /// the knob and where it is set.
    pub fn expanded(&self, name: &str) -> Result<Option<String>, TypeError> {
        self.get(name).map_err(|e| TypeError {
            name: name.to_string(),
            message: format!("does not expand: {e}{}", self.at(name)),
        })
    }

    /// Every name the configuration defines, sorted case-insensitively,
    /// with its raw value and origin.
    pub fn dump(&self) -> Vec<&Macro> {
        let mut all: Vec<&Macro> = self.table.iter().collect();
        all.sort_by(|a, b| {
            a.name
                .to_ascii_lowercase()
                .cmp(&b.name.to_ascii_lowercase())
        });
        all
    }

    /// The name of a source index.
    pub fn source_name(&self, source: usize) -> &str {
        self.table
            .sources()
            .get(source)
            .map_or("<unknown>", String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str, subsys: &str) -> Config {
        let scope = Scope {
            subsys: Some(subsys.into()),
            localname: None,
        };
        load_text("/etc/condor/condor_config", text, scope, vec![]).expect("loads")
    }

    #[test]
    fn typed_values_follow_htcondor() {
        let c = config(
            "A = 5 * $(MINUTE)\nB = 2.5\nC = yes\nD = 1 > 2\nE = foo\nF =\nG = (Cpus > 1) && (Memory > 100)\n",
            "STARTD",
        );
        assert_eq!(c.int("A"), Ok(Some(300)));
        assert_eq!(c.int("B"), Ok(Some(2)));
        assert_eq!(c.real("B"), Ok(Some(2.5)));
        assert_eq!(c.bool("C"), Ok(Some(true)));
        assert_eq!(c.bool("D"), Ok(Some(false)));
        assert_eq!(c.int("F"), Ok(None));
        assert_eq!(c.int("NOPE"), Ok(None));
        let err = c.int("E").expect_err("not an integer");
        assert!(
            err.to_string().contains("E is not an integer: foo"),
            "{err}"
        );
        assert!(c.expr("G").expect("parses").is_some());
        assert_eq!(c.int("UPDATE_INTERVAL"), Ok(Some(300)));
        assert_eq!(c.int("POLLING_INTERVAL"), Ok(Some(5)));
    }

    #[test]
    fn names_fold_whatever_their_length() {
        let long = format!("K{}", "x".repeat(200));
        let c = config(
            &format!("Startd.Mixed_Case = one\n{long} = two\nSTARTD.{long} = three\n"),
            "STARTD",
        );
        assert_eq!(c.raw("mixed_case"), Some("one"));
        assert_eq!(c.raw("MIXED_CASE"), Some("one"));
        assert_eq!(
            c.table.get(&long.to_uppercase()).map(|m| m.value.as_str()),
            Some("two")
        );
        assert_eq!(c.raw(&long.to_lowercase()), Some("three"));
        assert_eq!(with_folded(&["Ab", "Cd", "É"], str::to_string), "ab.cd.É");
        assert_eq!(with_folded(&[&long], str::len), long.len());
    }

    #[test]
    fn per_slot_knobs_fall_back() {
        let c = config(
            "SLOT2_JOB_HOOK_KEYWORD = TWO\nSTARTD_JOB_HOOK_KEYWORD = ALL\nSLOT1_START = False\nSTART = True\n",
            "STARTD",
        );
        let kw = |slot: &str| {
            c.get_first(&[
                &format!("{slot}_JOB_HOOK_KEYWORD"),
                "STARTD_JOB_HOOK_KEYWORD",
            ])
            .expect("expands")
        };
        assert_eq!(kw("slot2").as_deref(), Some("TWO"));
        assert_eq!(kw("slot1").as_deref(), Some("ALL"));
        assert_eq!(kw("slot2_1").as_deref(), Some("ALL"));
        assert_eq!(
            c.get_for_slot("slot1", "START").expect("ok").as_deref(),
            Some("False")
        );
        assert_eq!(
            c.get_for_slot("slot3", "START").expect("ok").as_deref(),
            Some("True")
        );
    }

    #[test]
    fn a_knob_is_located_by_file_and_line_template_or_default() {
        let c = config(
            "# site\nA = 5\nuse POLICY:ALWAYS_RUN_JOBS\nB = x\n",
            "STARTD",
        );
        assert_eq!(
            c.location("a").as_deref(),
            Some("/etc/condor/condor_config, line 2")
        );
        let start = c.location("START").expect("the template sets START");
        assert!(
            start.starts_with("/etc/condor/condor_config, line 3, use POLICY:"),
            "{start}"
        );
        assert_eq!(c.location("UPDATE_INTERVAL").as_deref(), Some("<Default>"));
        assert_eq!(c.location("NOT_A_KNOB_ANYWHERE"), None);
        assert_eq!(
            c.int("B").expect_err("x is no integer").to_string(),
            "B is not an integer: x (at /etc/condor/condor_config, line 4)"
        );
        assert_eq!(
            c.get_first_named(&["SLOT1_B", "B"]).expect("expands"),
            Some(("B", "x".to_string()))
        );
    }

    #[test]
    fn subsystem_scope_and_origins() {
        let c = config("X = plain\nSTARTD.X = startd\n", "STARTD");
        assert_eq!(c.get("X").expect("ok").as_deref(), Some("startd"));
        let tool = c.with_scope(Scope {
            subsys: Some("TOOL".into()),
            localname: None,
        });
        assert_eq!(tool.get("X").expect("ok").as_deref(), Some("plain"));
        let l = c.lookup("X").expect("defined");
        assert_eq!(l.name, "STARTD.X");
        let o = l.origin.expect("from a file");
        assert_eq!(
            (c.source_name(o.source), o.line),
            ("/etc/condor/condor_config", 2)
        );
    }
}

/// A knob whose value does not have the type asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name} {message}")]
pub struct TypeError {
    /// The knob.
    pub name: String,
    /// What is wrong.
    pub message: String,
}

/// Calls `f` with `parts` joined by `.` and in lower case (ASCII, as
/// HTCondor folds knob names). Built on the stack when it fits, as every
/// real knob name does: looking a knob up allocates nothing.
fn with_folded<R>(parts: &[&str], f: impl FnOnce(&str) -> R) -> R {
    let len = parts
        .iter()
        .map(|p| p.len() + 1)
        .sum::<usize>()
        .saturating_sub(1);
    let mut buf = [0u8; 160];
    if let Some(out) = buf.get_mut(..len) {
        let mut bytes = parts
            .iter()
            .enumerate()
            .flat_map(|(i, p)| (i > 0).then_some(b'.').into_iter().chain(p.bytes()));
        for (o, b) in out.iter_mut().zip(&mut bytes) {
            *o = b.to_ascii_lowercase();
        }
        // Folding ASCII letters keeps UTF-8 valid.
        if let Ok(key) = std::str::from_utf8(out) {
            return f(key);
        }
    }
    f(&parts.join(".").to_ascii_lowercase())
}

pub(crate) fn lookup<'a>(table: &'a MacroTable, scope: &Scope, name: &str) -> Option<Lookup<'a>> {
    let defaults = table.defaults();
    for prefix in [scope.localname.as_deref(), scope.subsys.as_deref()]
        .into_iter()
        .flatten()
    {
        let found = with_folded(&[prefix, name], |full| {
            if let Some(m) = table.get_folded(full) {
                return Some(Lookup {
                    raw: &m.value,
                    name: &m.name,
                    origin: Some(&m.origin),
                });
            }
            defaults.get(full).map(|d| Lookup {
                raw: &d.value,
                name: d.name,
                origin: None,
            })
        });
        if found.is_some() {
            return found;
        }
    }
    if let Some(m) = table.get(name) {
        return Some(Lookup {
            raw: &m.value,
            name: &m.name,
            origin: Some(&m.origin),
        });
    }
    match defaults.get(name) {
        Some(d) if !d.value.is_empty() => Some(Lookup {
            raw: &d.value,
            name: d.name,
            origin: None,
        }),
        _ => None,
    }
}

/// Evaluates `text` as a ClassAd expression in an empty ad.
fn eval_text(text: &str, now: i64) -> Option<Value> {
    let expr = classad::parse_expr(text).ok()?;
    let env = FixedEnv::new(now);
    Some(classad::eval_expr_in(&expr, None, None, &env))
}

/// An integer as HTCondor's `string_is_long_param` reads one: a decimal
/// literal (surrounding space allowed), else an expression that evaluates
/// to an integer, real (truncated) or boolean.
pub(crate) fn parse_int(text: &str, now: i64) -> Option<i64> {
    let t = text.trim_end();
    if let Some(v) = strtoll_whole(t) {
        return Some(v);
    }
    match eval_text(text, now)? {
        Value::Int(i) => Some(i),
        // Truncation toward zero is HTCondor's rule for a real knob read
        // as an integer.
        #[allow(clippy::cast_possible_truncation)]
        Value::Real(r) if r.is_finite() => Some(r as i64),
        Value::Bool(b) => Some(i64::from(b)),
        _ => None,
    }
}

/// A real as HTCondor's `string_is_double_param` reads one.
pub(crate) fn parse_real(text: &str, now: i64) -> Option<f64> {
    let t = text.trim();
    if !t.is_empty()
        && t.trim_start_matches(['+', '-'])
            .starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && let Ok(v) = t.parse::<f64>()
    {
        return Some(v);
    }
    match eval_text(text, now)? {
        Value::Int(i) => Some(i as f64),
        Value::Real(r) => Some(r),
        Value::Bool(b) => Some(if b { 1.0 } else { 0.0 }),
        _ => None,
    }
}

/// A boolean as HTCondor's `string_is_boolean_param` reads one.
pub(crate) fn parse_bool(text: &str, now: i64) -> Option<bool> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    match lower.as_str() {
        "true" | "t" | "yes" => return Some(true),
        "false" | "f" | "no" => return Some(false),
        _ => {}
    }
    match eval_text(text, now)? {
        Value::Bool(b) => Some(b),
        Value::Int(i) => Some(i != 0),
        Value::Real(r) => Some(r != 0.0),
        _ => None,
    }
}

/// C's `strtoll(s, &end, 10)` that must consume everything but trailing
/// space; `None` otherwise. Leading space and a sign are allowed.
pub(crate) fn strtoll_whole(s: &str) -> Option<i64> {
    let (v, rest) = strtoll_prefix(s)?;
    rest.trim_start().is_empty().then_some(v)
}

/// C's `strtoll(s, &end, 10)`: the value and the rest, or `None` when no
/// digits were read. Saturates like C.
pub(crate) fn strtoll_prefix(s: &str) -> Option<(i64, &str)> {
    let t = s.trim_start();
    let b = t.as_bytes();
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let start = i;
    let mut v: i128 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        v = (v * 10 + i128::from(b[i] - b'0')).min(i128::from(i64::MAX) + 1);
        i += 1;
    }
    if i == start {
        return None;
    }
    let v = if neg { -v } else { v };
    let v = v.clamp(i128::from(i64::MIN), i128::from(i64::MAX));
    Some((i64::try_from(v).unwrap_or(0), &t[i..]))
}
