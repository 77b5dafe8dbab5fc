//! HTCondor's argument and environment strings.
//!
//! V2 ("raw") syntax: white space separates items; single quotes group text,
//! with `''` inside quotes standing for one quote. V1 arguments are split at
//! white space with no quoting. V1 environments are `NAME=value` entries
//! separated by `;`, or by the first character if it is one of HTCondor's
//! delimiter characters. Used by the ClassAd functions `argsToList`,
//! `listToArgs`, `envV1ToV2` and `mergeEnvironment`, and by the starter to
//! build a job's command line and environment.

/// Why a string could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    /// A quoted section was not closed.
    #[error("unbalanced single quote in {0}")]
    UnbalancedQuote(String),
    /// An environment entry had no `=`.
    #[error("environment entry {0:?} has no '='")]
    MissingEquals(String),
    /// A V1 argument list cannot hold an argument with white space.
    #[error("argument {0:?} contains white space, which V1 syntax cannot express")]
    SpaceInV1(String),
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// Splits V2 raw syntax into items.
pub fn split_v2(s: &str) -> Result<Vec<String>, ArgError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_item = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            in_item = true;
            loop {
                match chars.next() {
                    None => return Err(ArgError::UnbalancedQuote(s.to_string())),
                    Some('\'') => {
                        if chars.peek() == Some(&'\'') {
                            chars.next();
                            cur.push('\'');
                        } else {
                            break;
                        }
                    }
                    Some(x) => cur.push(x),
                }
            }
        } else if is_space(c) {
            if in_item {
                out.push(std::mem::take(&mut cur));
                in_item = false;
            }
        } else {
            in_item = true;
            cur.push(c);
        }
    }
    if in_item {
        out.push(cur);
    }
    Ok(out)
}

/// Quotes one item for V2 raw syntax as HTCondor does: each white-space
/// character is quoted on its own (`b' 'c`), a quote becomes four quotes,
/// and an empty item is two quotes.
pub fn quote_v2(item: &str) -> String {
    if item.is_empty() {
        return "''".to_string();
    }
    let mut out = String::with_capacity(item.len());
    for c in item.chars() {
        if c == '\'' {
            out.push_str("''''");
        } else if is_space(c) {
            out.push('\'');
            out.push(c);
            out.push('\'');
        } else {
            out.push(c);
        }
    }
    out
}

/// Joins items in V2 raw syntax.
pub fn join_v2(items: &[String]) -> String {
    items
        .iter()
        .map(|a| quote_v2(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits V1 arguments (white space, no quoting).
pub fn split_v1(s: &str) -> Vec<String> {
    s.split(is_space)
        .filter(|x| !x.is_empty())
        .map(str::to_string)
        .collect()
}

/// Joins arguments in V1 syntax.
pub fn join_v1(items: &[String]) -> Result<String, ArgError> {
    if let Some(bad) = items.iter().find(|a| a.chars().any(is_space)) {
        return Err(ArgError::SpaceInV1(bad.clone()));
    }
    Ok(items.join(" "))
}

/// An environment: ordered `NAME=value` entries, later ones replacing
/// earlier ones with the same name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvList {
    entries: Vec<(String, String)>,
}

const V1_DELIMS: &str = "!#$%&*+,-/:;<>?@^`|~\u{1f}";

impl EnvList {
    /// An empty environment.
    pub fn new() -> EnvList {
        EnvList::default()
    }

    /// Sets `name` to `value`.
    pub fn set(&mut self, name: &str, value: &str) {
        match self.entries.iter_mut().find(|(n, _)| n == name) {
            Some(e) => e.1 = value.to_string(),
            None => self.entries.push((name.to_string(), value.to_string())),
        }
    }

    /// The entries in order.
    pub fn entries(&self) -> &[(String, String)] {
        &self.entries
    }

    fn merge_entry(&mut self, entry: &str) -> Result<(), ArgError> {
        match entry.split_once('=') {
            Some((n, v)) if !n.is_empty() => {
                self.set(n, v);
                Ok(())
            }
            _ => Err(ArgError::MissingEquals(entry.to_string())),
        }
    }

    /// Merges a V1 environment string (auto-detecting its delimiter).
    pub fn merge_v1(&mut self, s: &str) -> Result<(), ArgError> {
        let (delim, body) = match s.chars().next() {
            Some(c) if V1_DELIMS.contains(c) => (c, &s[c.len_utf8()..]),
            _ => (';', s),
        };
        for entry in body.split(delim) {
            if entry.is_empty() {
                continue;
            }
            self.merge_entry(entry)?;
        }
        Ok(())
    }

    /// Merges a V2 raw environment string.
    pub fn merge_v2(&mut self, s: &str) -> Result<(), ArgError> {
        for entry in split_v2(s)? {
            self.merge_entry(&entry)?;
        }
        Ok(())
    }

    /// The environment in V2 raw syntax, sorted by name as HTCondor writes
    /// it.
    pub fn to_v2(&self) -> String {
        let mut entries: Vec<&(String, String)> = self.entries.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let items: Vec<String> = entries.iter().map(|(n, v)| format!("{n}={v}")).collect();
        join_v2(&items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_quoting_round_trips() {
        let items = vec![
            "a".to_string(),
            "b c".to_string(),
            "it's".to_string(),
            String::new(),
        ];
        let s = join_v2(&items);
        assert_eq!(s, "a b' 'c it''''s ''");
        assert_eq!(split_v2(&s).ok(), Some(items));
        assert!(split_v2("'open").is_err());
        assert_eq!(split_v2("a'b c'd").ok(), Some(vec!["ab cd".to_string()]));
    }

    #[test]
    fn v1_env_uses_a_leading_delimiter() {
        let mut e = EnvList::new();
        assert!(e.merge_v1("|A=1|B=x;y").is_ok());
        assert_eq!(e.to_v2(), "A=1 B=x;y");
        let mut e = EnvList::new();
        assert!(e.merge_v1("A=1;B=2").is_ok());
        assert_eq!(e.entries().len(), 2);
        assert!(EnvList::new().merge_v1("NOEQUALS").is_err());
    }
}
