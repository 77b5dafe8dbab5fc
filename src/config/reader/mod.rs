//! Phase one: reading configuration sources into the macro table, in
//! HTCondor's order and with its line rules, conditionals, includes and
//! templates.

use std::cell::Cell;
use std::collections::HashMap;

use super::expand::{self, Expander};
use super::source::{Files, SourceError};
use super::{
    Config, ConfigError, MacroTable, Origin, SOURCE_DETECTED, SOURCE_ENVIRONMENT, Scope, Version,
    Warning,
};

/// How deep `include` and `use` may nest.
const MAX_NESTING: usize = 20;
/// How deep `if` may nest.
const MAX_IF_DEPTH: usize = 63;

mod conditions;
mod persistent;
mod version;

use version::Assignment;

pub use persistent::{StatementError, edit_persistent, persistent_file, statement_name};

/// Why a source could not be fetched: what was tried, and the cause.
#[derive(Debug, thiserror::Error)]
enum FetchError {
    #[error("cannot run command: {0}")]
    Run(#[source] SourceError),
    #[error("cannot read file: {0}")]
    Read(#[source] SourceError),
}

/// The root configuration source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Root {
    /// A file (or a `command |`).
    File(String),
    /// `CONDOR_CONFIG=ONLY_ENV`: no files at all, only the environment.
    OnlyEnv,
}

/// Everything phase one needs besides the files.
#[derive(Clone, Debug)]
pub struct LoadInput {
    /// The root source.
    pub root: Root,
    /// The subsystem and local name lookups are done for.
    pub scope: Scope,
    /// Machine facts HTCondor defines before reading and lets
    /// configuration override (`ARCH`, `OPSYS`, `OPSYSANDVER`, …).
    pub attributes: Vec<(String, String)>,
    /// Facts HTCondor defines again after every file, so configuration
    /// cannot change them (`HOSTNAME`, `FULL_HOSTNAME`, `TILDE`,
    /// `USERNAME`, `PID`, `DETECTED_CPUS`, …).
    pub specials: Vec<(String, String)>,
    /// The process environment: `$ENV()` reads it and `_CONDOR_<NAME>`
    /// variables override knobs.
    pub env: Vec<(String, String)>,
    /// The current time (for `$EVAL(time())` and the random seed).
    pub now: i64,
}

/// Reads every configuration source in HTCondor's order and returns the
/// loaded configuration, or the first error (file, line, cause).
pub fn load(input: &LoadInput, files: &dyn Files) -> Result<Config, ConfigError> {
    let mut r = Reader {
        table: MacroTable::default(),
        scope: input.scope.clone(),
        env: input.env.iter().cloned().collect(),
        now: input.now,
        seed: Cell::new(0x5eed),
        files,
        warnings: Vec::new(),
        read: Vec::new(),
    };
    let detected_origin = || Origin {
        source: SOURCE_DETECTED,
        line: 0,
        template: None,
    };
    for (name, value) in &input.attributes {
        r.define(name, value.clone(), detected_origin());
    }
    r.version_from_env(&input.env)?;
    let detected = |r: &mut Reader<'_>| {
        for (name, value) in &input.specials {
            r.define(
                name,
                value.clone(),
                Origin {
                    source: SOURCE_DETECTED,
                    line: 0,
                    template: None,
                },
            );
        }
        if let Some(sub) = &input.scope.subsys {
            r.define(
                "SUBSYSTEM",
                sub.clone(),
                Origin {
                    source: SOURCE_DETECTED,
                    line: 0,
                    template: None,
                },
            );
            let local = input.scope.localname.clone().unwrap_or_else(|| sub.clone());
            r.define(
                "LOCALNAME",
                local,
                Origin {
                    source: SOURCE_DETECTED,
                    line: 0,
                    template: None,
                },
            );
        }
    };
    detected(&mut r);

    if let Root::File(path) = &input.root {
        if !path.is_empty() && path != "/dev/null" {
            let root_dir = dirname(path);
            r.define(
                "CONFIG_ROOT",
                root_dir,
                Origin {
                    source: SOURCE_DETECTED,
                    line: 0,
                    template: None,
                },
            );
            r.include_source(path, 0, true)?;
        }
        detected(&mut r);

        let dirs = r.param("LOCAL_CONFIG_DIR")?;
        if let Some(d) = &dirs {
            r.process_directories(d)?;
        }
        r.process_locals()?;
        let new_dirs = r.param("LOCAL_CONFIG_DIR")?;
        if let Some(nd) = &new_dirs
            && dirs.as_deref() != Some(nd.as_str())
        {
            r.process_directories(nd)?;
        }
    }

    // _CONDOR_<NAME> environment overrides, in environment order.
    for (var, value) in &input.env {
        let Some(prefix) = var.get(..8) else { continue };
        if !prefix.eq_ignore_ascii_case("_condor_") {
            continue;
        }
        let name = var[8..].trim_end();
        if name.is_empty() {
            continue;
        }
        let value = value.trim_start().to_string();
        let origin = Origin {
            source: SOURCE_ENVIRONMENT,
            line: 0,
            template: None,
        };
        let value = r.expand_self(&value, name).map_err(|e| ConfigError {
            file: format!("environment variable {var}"),
            line: 0,
            message: e.to_string(),
        })?;
        r.define(name, value, origin);
    }
    r.version_from_env(&input.env)?;
    r.persistent()?;
    detected(&mut r);
    r.auto_use()?;

    Ok(Config::new(
        r.table, r.scope, r.env, r.now, r.warnings, r.read,
    ))
}

fn dirname(path: &str) -> String {
    match path.rfind('/') {
        Some(0) => "/".to_string(),
        Some(i) => path[..i].to_string(),
        None => ".".to_string(),
    }
}

struct Reader<'a> {
    table: MacroTable,
    scope: Scope,
    env: HashMap<String, String>,
    now: i64,
    seed: Cell<u64>,
    files: &'a dyn Files,
    warnings: Vec<Warning>,
    read: Vec<String>,
}

/// One `if` level.
struct IfFrame {
    enabled: bool,
    taken: bool,
    in_else: bool,
}

/// The state of the source being read.
struct Src {
    name: String,
    id: usize,
    line: u32,
    template: Option<String>,
    depth: usize,
    ifs: Vec<IfFrame>,
    here: Option<(String, String, Vec<String>)>,
}

impl Src {
    fn enabled(&self) -> bool {
        self.ifs.iter().all(|f| f.enabled)
    }

    fn err(&self, message: impl Into<String>) -> ConfigError {
        ConfigError {
            file: self.name.clone(),
            line: self.line,
            message: message.into(),
        }
    }

    fn origin(&self) -> Origin {
        Origin {
            source: self.id,
            line: self.line,
            template: self.template.clone(),
        }
    }
}

/// Physical lines joined into logical lines as HTCondor's `getline` does:
/// whitespace trimmed at both ends of every physical line, a trailing
/// backslash continues, a comment line inside a continuation is dropped
/// except for its last character, and a comment line never continues.
struct Lines<'t> {
    rest: &'t str,
    line: u32,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Lines<'t> {
        Lines {
            rest: text,
            line: 0,
        }
    }

    /// The next physical line and whether a newline ended it.
    fn physical(&mut self) -> Option<(&'t str, bool)> {
        if self.rest.is_empty() {
            return None;
        }
        let (l, rest, ended) = match self.rest.find('\n') {
            Some(i) => (&self.rest[..i], &self.rest[i + 1..], true),
            None => (self.rest, "", false),
        };
        self.rest = rest;
        self.line += 1;
        Some((l, ended))
    }

    fn next_logical(&mut self) -> Option<String> {
        let mut buf = String::new();
        let mut first = true;
        loop {
            let Some((raw, ended)) = self.physical() else {
                return if first { None } else { Some(buf) };
            };
            if !ended {
                // A last line without a newline is taken as it is, as
                // HTCondor's reader does: no trimming, no continuation.
                buf.push_str(raw);
                return Some(buf);
            }
            let mut l = raw.trim_matches(|c: char| c.is_ascii_whitespace());
            let in_comment = l.starts_with('#');
            if in_comment && !first {
                // Treated as blank, but HTCondor keeps its last character.
                let last = l.char_indices().next_back().map_or(0, |(i, _)| i);
                l = &l[last..];
            }
            buf.push_str(l);
            if buf.ends_with('\\') {
                buf.pop();
                if first && in_comment {
                    return Some(buf);
                }
                first = false;
                continue;
            }
            return Some(buf);
        }
    }
}

impl Reader<'_> {
    fn expander(&self) -> Expander<'_> {
        Expander {
            table: &self.table,
            scope: &self.scope,
            env: &self.env,
            now: self.now,
            seed: &self.seed,
        }
    }

    /// Defines `name`. A value equal to the knob's built-in default (for
    /// `PREFIX.NAME` too) keeps the default's text, as HTCondor's reader
    /// does: `true` and `false` compare without regard to case, so
    /// `CONTINUE = TRUE` reads back as `True`.
    fn define(&mut self, name: &str, value: String, origin: Origin) {
        let table = self.table.defaults();
        let default = table
            .get(name)
            .or_else(|| table.get(name.split_once('.')?.1));
        let value = match default {
            Some(d) if same_as_default(&value, &d.value) => d.value.to_string(),
            _ => value,
        };
        self.table.insert(name, value, origin);
    }

    /// Fully expanded value of a knob during loading.
    fn param(&self, name: &str) -> Result<Option<String>, ConfigError> {
        let Some(l) = super::lookup(&self.table, &self.scope, name) else {
            return Ok(None);
        };
        let raw = l.raw.to_string();
        self.expander()
            .expand_top(&raw, Some(name))
            .map(Some)
            .map_err(|e| ConfigError {
                file: "<configuration>".into(),
                line: 0,
                message: format!("{name}: {e}"),
            })
    }

    fn expand_full(&self, text: &str) -> Result<String, super::ExpandError> {
        self.expander().expand_top(text, None)
    }

    fn expand_self(&self, value: &str, name: &str) -> Result<String, super::ExpandError> {
        let mut selfless = None;
        for prefix in [
            self.scope.localname.as_deref(),
            self.scope.subsys.as_deref(),
        ]
        .into_iter()
        .flatten()
        {
            if name.len() > prefix.len() + 1
                && name.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
                && name.as_bytes()[prefix.len()] == b'.'
            {
                selfless = Some(&name[prefix.len() + 1..]);
                break;
            }
        }
        expand::expand_self(value, name, selfless, &self.expander())
    }

    /// Reads one file (or `command |`) as a configuration source. A source
    /// that cannot be read is an error when `required`, else skipped.
    fn include_source(
        &mut self,
        path: &str,
        depth: usize,
        required: bool,
    ) -> Result<(), ConfigError> {
        match self.fetch(path) {
            Ok(text) => self.parse_text(path, &text, depth),
            Err(e) if required => Err(ConfigError {
                file: path.to_string(),
                line: 0,
                message: e.to_string(),
            }),
            Err(_) => Ok(()),
        }
    }

    /// The text of a file, or of a command's output when `path` ends in `|`.
    fn fetch(&self, path: &str) -> Result<String, FetchError> {
        let trimmed = path.trim_end();
        let bytes = match trimmed.strip_suffix('|') {
            Some(cmd) => self.files.run(cmd.trim_end()).map_err(FetchError::Run)?,
            None => self.files.read(trimmed).map_err(FetchError::Read)?,
        };
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn parse_text(&mut self, path: &str, text: &str, depth: usize) -> Result<(), ConfigError> {
        self.read.push(path.to_string());
        let id = self.table.add_source(path);
        let mut src = Src {
            name: path.to_string(),
            id,
            line: 0,
            template: None,
            depth,
            ifs: Vec::new(),
            here: None,
        };
        let mut lines = Lines::new(text);
        while let Some(line) = lines.next_logical() {
            src.line = lines.line;
            self.statement(&line, &mut src, false)?;
        }
        if let Some((_, tag, _)) = &src.here {
            return Err(src.err(format!(
                "end of file while looking for the line '@{tag}' that ends a multi-line value"
            )));
        }
        if !src.ifs.is_empty() {
            return Err(src.err("endif(s) not found before end-of-file"));
        }
        Ok(())
    }

    fn process_directories(&mut self, dirs: &str) -> Result<(), ConfigError> {
        let required = self.required_local()?;
        let exclude = self.param("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP")?;
        let exclude = match exclude.as_deref().filter(|s| !s.is_empty()) {
            Some(re) => Some(pcre2::bytes::Regex::new(re).map_err(|e| ConfigError {
                file: "<configuration>".into(),
                line: 0,
                message: format!(
                    "LOCAL_CONFIG_DIR_EXCLUDE_REGEXP is not a valid regular expression: {e}"
                ),
            })?),
            None => None,
        };
        for dir in split_list(dirs) {
            let Ok(mut entries) = self.files.list_dir(&dir) else {
                continue;
            };
            entries.sort();
            for path in entries {
                let base = path.rsplit('/').next().unwrap_or(&path);
                if exclude
                    .as_ref()
                    .is_some_and(|re| re.is_match(base.as_bytes()).unwrap_or(false))
                {
                    continue;
                }
                self.include_source(&path, 1, required)?;
            }
        }
        Ok(())
    }

    fn required_local(&self) -> Result<bool, ConfigError> {
        let v = self.param("REQUIRE_LOCAL_CONFIG_FILE")?.unwrap_or_default();
        Ok(conditions::crufty_bool(&v)
            .or_else(|| super::parse_bool(&v, self.now))
            .unwrap_or(true))
    }

    fn process_locals(&mut self) -> Result<(), ConfigError> {
        let required = self.required_local()?;
        let Some(mut value) = self.param("LOCAL_CONFIG_FILE")? else {
            return Ok(());
        };
        let list = |v: &str| -> Vec<String> {
            if v.contains('|') {
                vec![v.to_string()]
            } else {
                split_list(v)
            }
        };
        let mut todo = list(&value);
        let mut done: Vec<String> = Vec::new();
        let mut i = 0;
        while i < todo.len() {
            let source = todo[i].clone();
            self.include_source(&source, 1, required)?;
            done.push(source);
            let new_value = self.param("LOCAL_CONFIG_FILE")?.unwrap_or_default();
            if new_value != value {
                todo = list(&new_value);
                todo.retain(|s| !done.contains(s));
                value = new_value;
                i = 0;
                continue;
            }
            i += 1;
        }
        Ok(())
    }

    /// `AUTO_USE_<CATEGORY>_<TEMPLATE> = <condition>`.
    fn auto_use(&mut self) -> Result<(), ConfigError> {
        let names: Vec<String> = self
            .table
            .iter()
            .map(|m| m.name.clone())
            .filter(|n| {
                n.len() > 9
                    && n.get(..9)
                        .is_some_and(|p| p.eq_ignore_ascii_case("AUTO_USE_"))
            })
            .collect();
        for name in names {
            let rest = &name[9..];
            let Some(us) = rest.find('_') else { continue };
            let (category, template) = (&rest[..us], &rest[us + 1..]);
            if category.is_empty()
                || !category.bytes().all(|c| c.is_ascii_alphabetic())
                || template.is_empty()
            {
                continue;
            }
            let Some(trigger) = self.param(&name)? else {
                continue;
            };
            if trigger.is_empty() {
                continue;
            }
            let mut src = Src {
                name: name.clone(),
                id: 0,
                line: 0,
                template: None,
                depth: 1,
                ifs: Vec::new(),
                here: None,
            };
            match self.test_if(&trigger) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(reason) => {
                    self.warnings.push(Warning {
                        file: name.clone(),
                        line: 0,
                        message: format!("{trigger} is not a valid condition because {reason}"),
                    });
                    continue;
                }
            }
            src.id = self.table.add_source(&name);
            self.use_templates(category, template, &mut src)?;
        }
        Ok(())
    }

    /// One logical line.
    fn statement(&mut self, line: &str, src: &mut Src, template: bool) -> Result<(), ConfigError> {
        if line.starts_with('#') || line.trim().is_empty() {
            return Ok(());
        }
        if let Some((name, tag, body)) = &mut src.here {
            if line.strip_prefix('@') == Some(tag.as_str()) {
                let name = name.clone();
                let data = body.join("\n");
                src.here = None;
                let value = self
                    .expand_self(&data, &name)
                    .map_err(|e| src.err(e.to_string()))?;
                self.select_version(&name, &value)
                    .map_err(|e| src.err(e.to_string()))?;
                let origin = src.origin();
                self.define(&name, value, origin);
            } else {
                body.push(line.to_string());
            }
            return Ok(());
        }
        let mut line = line;
        if !template && line.starts_with(':') {
            let b = line.as_bytes();
            if !src.ifs.is_empty()
                || (b.get(1) == Some(&b'i')
                    && b.get(2) == Some(&b'f')
                    && b.get(3).is_none_or(|c| c.is_ascii_whitespace()))
            {
                line = &line[1..];
            }
        }
        if self.if_line(line, src)? {
            return Ok(());
        }
        if !src.enabled() {
            return Ok(());
        }

        // The name: up to whitespace, '=' or ':'.
        let b = line.as_bytes();
        let name_end = b
            .iter()
            .position(|&c| c.is_ascii_whitespace() || c == b'=' || c == b':')
            .unwrap_or(b.len());
        if name_end == b.len() {
            if line.starts_with('[') {
                return Ok(());
            }
            return Err(src.err(format!("expected 'NAME = value', found: {line}")));
        }
        let mut op = b[name_end];
        let mut op_at = name_end;
        let mut p = name_end + 1;
        if op != b'=' && op != b':' {
            // Words between the name and the operator ("use ROLE : x",
            // "include ifexist : f", "NAME @=tag").
            while p < b.len() && b[p].is_ascii_whitespace() {
                p += 1;
            }
            while p < b.len() && b[p] != b'=' && b[p] != b':' && b[p] != b'@' {
                p += 1;
            }
            op_at = p;
            op = b.get(p).copied().unwrap_or(0);
            if op != 0 {
                p += 1;
                if op == b'@' {
                    if b.get(p) == Some(&b'=') {
                        p += 1;
                    } else {
                        op = 0;
                    }
                }
            }
        }
        if op == 0 {
            return Err(src.err(format!(
                "expected '=', ':' or '@=' after the name, found: {line}"
            )));
        }
        while p < b.len() && b[p].is_ascii_whitespace() {
            p += 1;
        }
        let rhs = &line[p..];
        let name_raw = &line[..name_end];
        let keyword = name_raw.strip_prefix('@').unwrap_or(name_raw);
        let between = line[name_end..op_at].trim();

        if op == b':' && keyword.eq_ignore_ascii_case("use") {
            let category = if template {
                between.to_string()
            } else {
                self.expand_full(between)
                    .map_err(|e| src.err(e.to_string()))?
            };
            if category.is_empty() {
                return Err(src.err(format!(
                    "use needs a category before ':' (use CATEGORY : Template), found: {line}"
                )));
            }
            return self.use_templates(&category, rhs, src);
        }
        if op == b':'
            && (keyword.eq_ignore_ascii_case("error") || keyword.eq_ignore_ascii_case("warning"))
        {
            let msg = self.expand_full(rhs).map_err(|e| src.err(e.to_string()))?;
            if keyword.eq_ignore_ascii_case("error") {
                return Err(src.err(format!("error: {msg}")));
            }
            self.warnings.push(Warning {
                file: src.name.clone(),
                line: src.line,
                message: msg,
            });
            if !template {
                return Ok(());
            }
            // In a template's body HTCondor's reader goes on to read the
            // line as an assignment too: the knob WARNING holds its text.
        } else if op == b':' && !template && keyword.eq_ignore_ascii_case("include") {
            return self.include_line(between, rhs, src);
        } else if op == b':' && !keyword.eq_ignore_ascii_case("RunBenchmarks") {
            self.warnings.push(Warning {
                file: src.name.clone(),
                line: src.line,
                message: format!(
                    "obsolete use of ':' for parameter assignment at {name_raw} : {rhs}"
                ),
            });
        }
        let head = &line[..op_at];
        let a = Assignment {
            name_raw,
            between,
            head,
            op,
            rhs,
            line,
        };
        self.assign(&a, src, template)
    }

    fn include_line(
        &mut self,
        options: &str,
        target: &str,
        src: &mut Src,
    ) -> Result<(), ConfigError> {
        let mut words = options.split_ascii_whitespace().peekable();
        let mut if_exists = false;
        let mut command = false;
        if let Some(w) = words.peek()
            && (*w == "ifexist" || *w == "ifexists")
        {
            if_exists = true;
            words.next();
        }
        if let Some(w) = words.next() {
            if w == "output" || w == "command" {
                command = true;
                if words.next().is_some() {
                    return Err(src.err(format!(
                        "'include {options}' (include … into a cache file) is not supported by Roost"
                    )));
                }
            } else {
                return Err(src.err(format!("unexpected keyword(s) '{options}' after include")));
            }
        }
        if src.depth + 1 >= MAX_NESTING {
            return Err(src.err("includes nested too deep"));
        }
        let target = self
            .expand_full(target)
            .map_err(|e| src.err(e.to_string()))?;
        let mut target = target.trim().to_string();
        if command && !target.ends_with('|') {
            target.push_str(" |");
        }
        match self.fetch(&target) {
            Ok(text) => self.parse_text(&target, &text, src.depth + 1),
            Err(_) if if_exists => Ok(()),
            Err(e) => Err(src.err(format!("cannot include {target}: {e}"))),
        }
    }

    /// `use CATEGORY : Name(args), Name2 …`.
    fn use_templates(
        &mut self,
        category: &str,
        rhs: &str,
        src: &mut Src,
    ) -> Result<(), ConfigError> {
        let table = self.table.defaults();
        if !table.has_category(category) {
            return Err(src.err(format!(
                "use {category}: unknown template category '{category}'"
            )));
        }
        if src.depth + 1 >= MAX_NESTING {
            return Err(src.err(format!("use {category}: {rhs} nesting too deep")));
        }
        for (knob, args) in split_uses(rhs) {
            let Some(body) = table.template(category, &knob) else {
                return Err(src.err(format!(
                    "use {category}: does not recognise {knob} (known: {})",
                    table.template_names(category).join(", ")
                )));
            };
            let body = if args.is_some() || has_meta_args(body) {
                expand::expand_meta_args(body, args.as_deref().unwrap_or(""))
            } else {
                body.to_string()
            };
            let mut inner = Src {
                name: src.name.clone(),
                id: src.id,
                line: src.line,
                template: Some(format!("{}:{}", category.to_ascii_uppercase(), knob)),
                depth: src.depth + 1,
                ifs: Vec::new(),
                here: None,
            };
            for l in body.split('\n') {
                let l = l.trim();
                if l.is_empty() {
                    continue;
                }
                self.statement(l, &mut inner, true)?;
            }
            if let Some((_, tag, _)) = &inner.here {
                return Err(src.err(format!("use {category}:{knob}: unterminated '@{tag}'")));
            }
        }
        Ok(())
    }
}

fn has_meta_args(value: &str) -> bool {
    value
        .match_indices("$(")
        .any(|(i, _)| value.as_bytes().get(i + 2).is_some_and(u8::is_ascii_digit))
}

/// Splits `Name(args), Name2 Name3(x, y)` into names and argument texts.
fn split_uses(rhs: &str) -> Vec<(String, Option<String>)> {
    let b = rhs.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b',') {
            i += 1;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b',' && b[i] != b'(' {
            i += 1;
        }
        if i == start {
            break;
        }
        let name = rhs[start..i].to_string();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut args = None;
        if b.get(i) == Some(&b'(') {
            if let Some(close) = find_close(b, i, 25) {
                args = Some(rhs[i + 1..close].to_string());
                i = close;
            }
            i += 1;
        }
        out.push((name, args));
    }
    out
}

/// The matching close of the bracket at `open`, recursing into `(` and `[`.
fn find_close(b: &[u8], open: usize, depth: usize) -> Option<usize> {
    let close = match b[open] {
        b'(' => b')',
        b'[' => b']',
        b'{' => b'}',
        b'<' => b'>',
        c => c,
    };
    let mut i = open + 1;
    while i < b.len() {
        if b[i] == close {
            return Some(i);
        }
        if (b[i] == b'(' || b[i] == b'[') && depth > 0 {
            i = find_close(b, i, depth - 1)?;
        }
        i += 1;
    }
    None
}

/// A list separated by commas and/or whitespace.
fn split_list(s: &str) -> Vec<String> {
    s.split(|c: char| c == ',' || c.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether a value read is its knob's default text: the same text, or the
/// same boolean literal in another case.
fn same_as_default(value: &str, default: &str) -> bool {
    let boolean = |t: &str| t.eq_ignore_ascii_case("true") || t.eq_ignore_ascii_case("false");
    value == default || (boolean(default) && value.eq_ignore_ascii_case(default))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logical(text: &str) -> Vec<String> {
        let mut l = Lines::new(text);
        std::iter::from_fn(|| l.next_logical()).collect()
    }

    #[test]
    fn continuation_rules() {
        assert_eq!(logical("A = x \\\n# c \\\n  y\n"), ["A = x y"]);
        assert_eq!(logical("B = x \\\n# comment\n"), ["B = x t"]);
        assert_eq!(logical("D = a \\\n\nE = 2\n"), ["D = a ", "E = 2"]);
        assert_eq!(logical("# c \\\nF = 3\n"), ["# c ", "F = 3"]);
    }

    #[test]
    fn splits_use_lines() {
        assert_eq!(
            split_uses("Limit_Job_Runtimes(60), Desktop Preempt_If(x(1), y)"),
            vec![
                ("Limit_Job_Runtimes".to_string(), Some("60".to_string())),
                ("Desktop".to_string(), None),
                ("Preempt_If".to_string(), Some("x(1), y".to_string())),
            ]
        );
    }
}
