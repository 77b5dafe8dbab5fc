//! HTCondor's built-in parameter table: the default of every knob and the
//! text of every `use CATEGORY : Template` meta-knob.
//!
//! The data is `param_table.txt`, generated from HTCondor's `param_info.in`
//! by `tools/gen_param_table.py` and compiled into the binary; it is parsed
//! once, on first use.

use std::collections::HashMap;
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

/// One built-in default.
#[derive(Debug)]
pub struct Default {
    /// The name as HTCondor spells it (`StateTimer`, `MASTER.PID_SNAPSHOT_INTERVAL`).
    pub name: String,
    /// How the value is typed.
    pub kind: ParamType,
    /// The unexpanded value; may be empty (no default).
    pub value: String,
}

/// The parsed table.
pub struct Table {
    defaults: Vec<Default>,
    by_name: HashMap<String, usize>,
    templates: HashMap<String, HashMap<String, String>>,
}

const DATA: &str = include_str!("param_table.txt");

impl Table {
    /// The table compiled into Roost.
    pub fn builtin() -> &'static Table {
        static TABLE: OnceLock<Table> = OnceLock::new();
        TABLE.get_or_init(|| Table::parse(DATA))
    }

    fn parse(data: &str) -> Table {
        let mut defaults = Vec::new();
        let mut by_name = HashMap::new();
        let mut templates: HashMap<String, HashMap<String, String>> = HashMap::new();
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
                    by_name.insert(name.to_ascii_lowercase(), defaults.len());
                    defaults.push(Default {
                        name: name.to_string(),
                        kind,
                        value: unescape(value),
                    });
                }
                (Some("M"), Some(category), Some(name), Some(body)) => {
                    templates
                        .entry(category.to_ascii_lowercase())
                        .or_default()
                        .insert(name.to_ascii_lowercase(), unescape(body));
                }
                _ => {}
            }
        }
        Table {
            defaults,
            by_name,
            templates,
        }
    }

    /// The default of `name` (case-insensitive), if the table has one.
    pub fn get(&self, name: &str) -> Option<&Default> {
        let key = name.to_ascii_lowercase();
        self.by_name.get(&key).map(|&i| &self.defaults[i])
    }

    /// Every default, sorted by name.
    pub fn defaults(&self) -> &[Default] {
        &self.defaults
    }

    /// Whether `category` (e.g. `POLICY`) names a template category.
    pub fn has_category(&self, category: &str) -> bool {
        self.templates.contains_key(&category.to_ascii_lowercase())
    }

    /// The body of template `name` in `category`, both case-insensitive.
    pub fn template(&self, category: &str, name: &str) -> Option<&str> {
        self.templates
            .get(&category.to_ascii_lowercase())?
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The template names of `category`, sorted.
    pub fn template_names(&self, category: &str) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .templates
            .get(&category.to_ascii_lowercase())
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        names.sort_unstable();
        names
    }
}

fn unescape(s: &str) -> String {
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
    out
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
}
