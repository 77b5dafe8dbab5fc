//! HTCondor's built-in parameter tables: the default of every knob and the
//! text of every `use CATEGORY : Template` meta-knob, one table per HTCondor
//! release the configuration reader can behave as ([`Version`]).
//!
//! The data is `param_table_<MAJOR>.txt`, read out of HTCondor's own library
//! by `tools/gen_param_table.py` and compiled into the binary; a table is
//! parsed once, on first use.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::OnceLock;

/// How HTCondor types a knob's value (`param_info.in`'s `type=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// Free text (the default type).
    String,
    /// A 32-bit integer, or an expression that evaluates to one.
    Int,
    /// A 64-bit integer.
    Long,
    /// A boolean, or an expression that evaluates to one.
    Bool,
    /// A real number.
    Double,
    /// A file system path.
    Path,
}

/// The HTCondor release whose configuration language Roost reads: its
/// defaults and templates, its `if version` number and its syntax
/// (`NAME += value` and `$BASENAME(name, suffix)` are HTCondor 25's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Version {
    /// HTCondor 23 (23.10), for sites migrating from it.
    V23,
    /// HTCondor 25 (25.14), the current release: the default.
    #[default]
    V25,
}

impl Version {
    /// The knob (and `_CONDOR_` environment variable) that selects it.
    pub const KNOB: &'static str = "ROOST_HTCONDOR_VERSION";

    /// Reads a value of [`Version::KNOB`]: `23` or `25`, optionally with a
    /// minor version (`23.10`).
    pub fn parse(text: &str) -> Option<Version> {
        let t = text.trim();
        let major = t.split('.').next().unwrap_or("");
        let rest_ok = t[major.len()..]
            .split('.')
            .skip(1)
            .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()));
        match (major, rest_ok) {
            ("23", true) => Some(Version::V23),
            ("25", true) => Some(Version::V25),
            _ => None,
        }
    }

    /// The release number, from the table's `CONDOR_VERSION` default.
    pub fn number(self) -> (i64, i64, i64) {
        let text = Table::of(self)
            .get("CONDOR_VERSION")
            .map_or("", |d| &*d.value);
        let mut parts = text.split('.').map(|p| p.parse::<i64>().unwrap_or(0));
        (
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
        )
    }

    /// Whether HTCondor 25's configuration syntax applies.
    pub fn is_25(self) -> bool {
        self == Version::V25
    }
}

/// One built-in default.
#[derive(Debug)]
pub struct Default {
    /// The name as HTCondor spells it (`StateTimer`, `MASTER.PID_SNAPSHOT_INTERVAL`).
    pub name: &'static str,
    /// How the value is typed.
    pub kind: ParamType,
    /// The unexpanded value; may be empty (no default).
    pub value: Cow<'static, str>,
}

/// One `use CATEGORY : Name` template.
struct Template {
    category: &'static str,
    name: &'static str,
    body: Cow<'static, str>,
}

/// The parsed table. Names and values borrow the text compiled into the
/// binary (only escaped values are copied), and lookups search sorted
/// arrays without building a lower-case key: the table costs the daemon
/// tens of kilobytes rather than hundreds, and a lookup no allocation.
pub struct Table {
    /// Sorted by name, case-insensitively.
    defaults: Vec<Default>,
    /// Sorted by category, then name, case-insensitively.
    templates: Vec<Template>,
}

const DATA_23: &str = include_str!("param_table_23.txt");
const DATA_25: &str = include_str!("param_table_25.txt");

/// `a` against `b`, ignoring ASCII case.
fn cmp_folded(a: &str, b: &str) -> Ordering {
    a.bytes()
        .map(|c| c.to_ascii_lowercase())
        .cmp(b.bytes().map(|c| c.to_ascii_lowercase()))
}

impl Table {
    /// The table of `version`, compiled into Roost.
    pub fn of(version: Version) -> &'static Table {
        static V23: OnceLock<Table> = OnceLock::new();
        static V25: OnceLock<Table> = OnceLock::new();
        match version {
            Version::V23 => V23.get_or_init(|| Table::parse(DATA_23)),
            Version::V25 => V25.get_or_init(|| Table::parse(DATA_25)),
        }
    }

    /// The table of the default version (HTCondor 25).
    pub fn builtin() -> &'static Table {
        Table::of(Version::default())
    }

    fn parse(data: &'static str) -> Table {
        let mut defaults = Vec::new();
        let mut templates = Vec::new();
        for line in data.lines() {
            let mut fields = line.splitn(4, '\t');
            match (fields.next(), fields.next(), fields.next(), fields.next()) {
                (Some("D"), Some(name), Some(kind), Some(value)) => {
                    let kind = match kind {
                        "int" => ParamType::Int,
                        "long" => ParamType::Long,
                        "bool" => ParamType::Bool,
                        "double" => ParamType::Double,
                        "path" => ParamType::Path,
                        _ => ParamType::String,
                    };
                    defaults.push(Default {
                        name,
                        kind,
                        value: unescape(value),
                    });
                }
                (Some("M"), Some(category), Some(name), Some(body)) => templates.push(Template {
                    category,
                    name,
                    body: unescape(body),
                }),
                _ => {}
            }
        }
        // Stable sorts: of two entries with one name, the later wins.
        defaults.sort_by(|a, b| cmp_folded(a.name, b.name));
        templates.sort_by(|a, b| {
            cmp_folded(a.category, b.category).then_with(|| cmp_folded(a.name, b.name))
        });
        defaults.shrink_to_fit();
        templates.shrink_to_fit();
        Table {
            defaults,
            templates,
        }
    }

    /// The default of `name` (case-insensitive), if the table has one.
    pub fn get(&self, name: &str) -> Option<&Default> {
        let end = self
            .defaults
            .partition_point(|d| cmp_folded(d.name, name) != Ordering::Greater);
        let d = self.defaults.get(end.checked_sub(1)?)?;
        (cmp_folded(d.name, name) == Ordering::Equal).then_some(d)
    }

    /// Every default, sorted by name.
    pub fn defaults(&self) -> &[Default] {
        &self.defaults
    }

    /// The templates of `category` (case-insensitive).
    fn category(&self, category: &str) -> &[Template] {
        let start = self
            .templates
            .partition_point(|t| cmp_folded(t.category, category) == Ordering::Less);
        let end = self
            .templates
            .partition_point(|t| cmp_folded(t.category, category) != Ordering::Greater);
        &self.templates[start..end]
    }

    /// Whether `category` (e.g. `POLICY`) names a template category.
    pub fn has_category(&self, category: &str) -> bool {
        !self.category(category).is_empty()
    }

    /// The body of template `name` in `category`, both case-insensitive.
    pub fn template(&self, category: &str, name: &str) -> Option<&str> {
        let in_category = self.category(category);
        let end = in_category.partition_point(|t| cmp_folded(t.name, name) != Ordering::Greater);
        let t = in_category.get(end.checked_sub(1)?)?;
        (cmp_folded(t.name, name) == Ordering::Equal).then_some(&*t.body)
    }

    /// The template names of `category`, sorted.
    pub fn template_names(&self, category: &str) -> Vec<String> {
        let mut names: Vec<String> = self
            .category(category)
            .iter()
            .map(|t| t.name.to_ascii_lowercase())
            .collect();
        names.sort_unstable();
        names
    }
}

/// The value with `\n`, `\t` and `\<c>` escapes undone; borrowed when
/// there are none.
fn unescape(s: &'static str) -> Cow<'static, str> {
    if !s.contains('\\') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_the_execute_point_defaults_and_templates() {
        let t = Table::builtin();
        assert_eq!(
            t.get("statetimer").unwrap().value,
            "(time() - EnteredCurrentState)"
        );
        assert_eq!(t.get("UPDATE_INTERVAL").unwrap().kind, ParamType::Int);
        assert!(
            t.template("policy", "Desktop")
                .unwrap()
                .contains("KILL=False")
        );
        assert!(t.template("FEATURE", "PartitionableSlot").is_some());
        assert!(t.has_category("Role"));
        assert!(t.template("POLICY", "NoSuchThing").is_none());
    }

    #[test]
    fn every_template_of_23_loads_under_25() {
        let (t23, t25) = (Table::of(Version::V23), Table::of(Version::V25));
        for category in [
            "FEATURE",
            "POLICY",
            "ROLE",
            "SECURITY",
            "EXPERIMENTAL",
            "UPGRADE",
        ] {
            for name in t23.template_names(category) {
                assert!(t25.template(category, &name).is_some(), "{category}:{name}");
            }
        }
        assert!(t25.template("SECURITY", "Recommended_v24_0").is_some());
        assert!(t23.template("FEATURE", "Librarian").is_none());
        assert_eq!(
            t25.get("CONDOR_VERSION").map(|d| &*d.value),
            Some("25.14.1")
        );
    }

    #[test]
    fn lookups_search_every_entry_ignoring_case() {
        let t = Table::builtin();
        for d in t.defaults() {
            let found = t.get(&d.name.to_ascii_uppercase()).map(|f| f.name);
            assert_eq!(found, Some(d.name));
            assert_eq!(t.get(&d.name.to_ascii_lowercase()).map(|f| f.name), found);
        }
        for missing in ["", "A", "ZZZZ", "STATETIMERX", "STATETIME"] {
            assert!(t.get(missing).is_none(), "{missing}");
        }
        let names = t.template_names("Policy");
        assert!(names.contains(&"desktop".to_string()), "{names:?}");
        for n in &names {
            assert!(
                t.template("POLICY", &n.to_ascii_uppercase()).is_some(),
                "{n}"
            );
        }
        assert!(!t.has_category("NoSuchCategory"));
        assert!(t.template_names("NoSuchCategory").is_empty());
        assert!(t.template("NoSuchCategory", "Desktop").is_none());
    }
}
