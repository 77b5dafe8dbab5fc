//! `if`, `elif`, `else` and `endif` lines: telling the kinds of
//! condition apart as HTCondor's reader does (`defined`, `version`, a
//! boolean, a number) and evaluating them.

use super::{ConfigError, IfFrame, MAX_IF_DEPTH, Reader, Src};

/// Why an `if` or `elif` line's condition cannot be evaluated.
#[derive(Debug, thiserror::Error)]
pub(super) enum CondError {
    #[error("{0}")]
    Expand(#[from] crate::config::ExpandError),
    #[error("complex conditionals are not supported")]
    Complex,
    #[error("expression is not a conditional")]
    NotConditional,
    #[error("the version literal is invalid")]
    BadVersion,
    #[error("defined use meta argument with internal spaces will never match")]
    UseWithSpaces,
    #[error("defined argument must be param name, boolean, or number")]
    BadDefined,
}

/// The `if` expression kinds HTCondor's reader tells apart.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cift {
    Empty,
    Number,
    Bool,
    Identifier,
    Version,
    IfDef,
    Complex,
}

fn lit(s: &str, word: &str, alone: bool) -> bool {
    let s = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let b = s.as_bytes();
    if b.len() < word.len() {
        return false;
    }
    if !b.iter().zip(word.bytes()).all(|(&c, w)| c | 0x20 == w) {
        return false;
    }
    let rest = &s[word.len()..];
    if alone {
        rest.trim_start_matches(|c: char| c.is_ascii_whitespace())
            .is_empty()
    } else {
        !rest.starts_with(|c: char| c.is_ascii_alphanumeric())
    }
}

fn characterize(expr: &str, keywords: bool) -> Cift {
    const SPACE: u32 = 0x01;
    const DIGIT: u32 = 0x02;
    const ALPHA: u32 = 0x04;
    const IDENT: u32 = 0x08;
    const CMP: u32 = 0x10;
    const SUM: u32 = 0x20;
    const LOGIC: u32 = 0x40;
    const GROUP: u32 = 0x80;
    const MONEY: u32 = 0x100;
    const COLON: u32 = 0x200;
    const OTHER: u32 = 0x400;
    const FLOAT: u32 = 0x1000;
    const MACRO: u32 = 0x2000;
    let t = expr.trim_start_matches(|c: char| c.is_ascii_whitespace());
    if t.is_empty() {
        return Cift::Empty;
    }
    let begin = t;
    let b = t.as_bytes();
    let mut i = usize::from(b[0] == b'-');
    let mut set = 0u32;
    while i < b.len() {
        let ch = b[i];
        let next = b.get(i + 1).copied();
        i += 1;
        match ch {
            b'0'..=b'9' => set |= DIGIT,
            b'.' => {
                if set == DIGIT || next.is_none_or(|n| n.is_ascii_digit()) {
                    set |= FLOAT;
                } else {
                    set |= IDENT;
                }
            }
            b'e' | b'E' => {
                if set & !FLOAT == DIGIT {
                    set |= FLOAT;
                } else {
                    set |= ALPHA;
                }
            }
            b'-' | b'+' => {
                if set != DIGIT | FLOAT {
                    set |= SUM;
                }
            }
            b'a'..=b'z' | b'A'..=b'Z' => set |= ALPHA,
            b'_' | b'/' => set |= IDENT,
            b'<'..=b'>' => set |= CMP,
            b'!' if next == Some(b'=') => set |= CMP,
            b'$' => {
                set |= MONEY;
                if next == Some(b'(') {
                    set |= MACRO;
                }
            }
            c if c.is_ascii_whitespace() => {
                if next.is_some_and(|n| !n.is_ascii_whitespace()) {
                    set |= SPACE;
                }
            }
            b'&' | b'|' => set |= LOGIC,
            b'{' | b'}' | b'(' | b')' | b'[' | b']' => set |= GROUP,
            b':' => set |= COLON,
            _ => set |= OTHER,
        }
    }
    match set {
        0 => return Cift::Empty,
        x if x == DIGIT || x == DIGIT | FLOAT => return Cift::Number,
        x if x == ALPHA => {
            if lit(expr, "false", true) || lit(expr, "true", true) {
                return Cift::Bool;
            }
            if keywords && lit(begin, "version", true) {
                return Cift::Version;
            }
            if keywords && lit(begin, "defined", true) {
                return Cift::IfDef;
            }
            return Cift::Identifier;
        }
        x if [
            ALPHA | DIGIT,
            ALPHA | DIGIT | FLOAT,
            ALPHA | IDENT,
            ALPHA | IDENT | DIGIT,
            ALPHA | IDENT | DIGIT | FLOAT,
        ]
        .contains(&x) =>
        {
            return Cift::Identifier;
        }
        x if x == ALPHA | SPACE | CMP | DIGIT || x == ALPHA | SPACE | CMP | DIGIT | FLOAT => {
            if keywords && lit(begin, "version", false) {
                return Cift::Version;
            }
            return Cift::Complex;
        }
        x if [
            ALPHA | SPACE,
            ALPHA | SPACE | COLON,
            ALPHA | SPACE | IDENT,
            ALPHA | SPACE | IDENT | COLON,
            ALPHA | SPACE | DIGIT,
            ALPHA | SPACE | DIGIT | IDENT,
            ALPHA | SPACE | DIGIT | FLOAT,
            ALPHA | SPACE | DIGIT | IDENT | FLOAT,
        ]
        .contains(&x) =>
        {
            if keywords && lit(begin, "defined", false) {
                return Cift::IfDef;
            }
            return Cift::Complex;
        }
        _ => {}
    }
    Cift::Complex
}

pub(super) fn crufty_bool(s: &str) -> Option<bool> {
    if lit(s, "yes", true) || lit(s, "t", true) {
        Some(true)
    } else if lit(s, "no", true) || lit(s, "f", true) {
        Some(false)
    } else {
        None
    }
}

/// `sscanf("%d.%d.%d")`: the fields read (at least one).
fn scan_version(s: &str) -> Vec<i64> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some((v, r)) = crate::config::strtoll_prefix(rest) {
        out.push(v);
        if out.len() == 3 {
            break;
        }
        match r.strip_prefix('.') {
            Some(r) => rest = r,
            None => break,
        }
    }
    out
}

impl Reader<'_> {
    /// Handles `if`, `elif`, `else`, `endif`; returns whether the line was one.
    pub(super) fn if_line(&mut self, line: &str, src: &mut Src) -> Result<bool, ConfigError> {
        let word = |w: &str| {
            line.len() >= w.len()
                && line.as_bytes()[..w.len()].eq_ignore_ascii_case(w.as_bytes())
                && line
                    .as_bytes()
                    .get(w.len())
                    .is_none_or(|c| c.is_ascii_whitespace())
        };
        if word("if") {
            let expr = line[2..].trim_start();
            let enabled = src.enabled();
            let value = if enabled {
                self.test_if(expr).map_err(|why| {
                    src.err(format!("{expr} is not a valid if condition because {why}"))
                })?
            } else {
                false
            };
            if src.ifs.len() >= MAX_IF_DEPTH {
                return Err(src.err("if nesting too deep"));
            }
            src.ifs.push(IfFrame {
                enabled: value,
                taken: value,
                in_else: false,
            });
            return Ok(true);
        }
        if word("else") {
            let Some(f) = src.ifs.last_mut() else {
                return Err(src.err("else without matching if"));
            };
            if f.in_else {
                return Err(src.err("else is not allowed after else"));
            }
            f.in_else = true;
            f.enabled = !f.taken;
            return Ok(true);
        }
        if word("elif") {
            let expr = line[4..].trim_start();
            let n = src.ifs.len();
            let Some(f) = src.ifs.last() else {
                return Err(src.err("elif without matching if"));
            };
            if f.in_else {
                return Err(src.err("elif is not allowed after else"));
            }
            let outer = src.ifs[..n - 1].iter().all(|f| f.enabled);
            let value = if !f.taken && outer {
                self.test_if(expr).map_err(|why| {
                    src.err(format!(
                        "{expr} is not a valid elif condition because {why}"
                    ))
                })?
            } else {
                false
            };
            let f = src.ifs.last_mut().expect("checked above");
            if f.taken {
                f.enabled = false;
            } else {
                f.enabled = value;
                f.taken = value;
            }
            return Ok(true);
        }
        if word("endif") {
            if src.ifs.pop().is_none() {
                return Err(src.err("endif without matching if"));
            }
            return Ok(true);
        }
        Ok(false)
    }

    /// An `if` condition: `defined NAME`, `defined use CAT:Name`,
    /// `version >= 8.1`, a boolean or a number, optionally negated by `!`,
    /// after macro expansion.
    pub(super) fn test_if(&self, expr: &str) -> Result<bool, CondError> {
        let mut text = expr.to_string();
        let expanded = expr.contains('$');
        if expanded {
            text = self.expand_full(expr)?;
            text.truncate(text.trim_end().len());
        }
        let mut t = text.trim_start();
        let mut inverted = false;
        if let Some(rest) = t.strip_prefix('!') {
            inverted = true;
            t = rest.trim_start();
        }
        let value = if expanded && t.is_empty() {
            false
        } else {
            self.eval_if(t)?
        };
        Ok(value != inverted)
    }

    fn eval_if(&self, expr: &str) -> Result<bool, CondError> {
        let kind = characterize(expr, true);
        match kind {
            Cift::Number => {
                let v = expr.trim().parse::<f64>().unwrap_or_else(|_| {
                    crate::config::strtoll_prefix(expr).map_or(0.0, |(v, _)| v as f64)
                });
                return Ok(v != 0.0);
            }
            Cift::Bool => return Ok(lit(expr, "true", true)),
            Cift::Identifier => {
                if let Some(b) = crufty_bool(expr) {
                    return Ok(b);
                }
            }
            Cift::Version => return self.version_test(expr),
            Cift::IfDef => return self.defined_test(expr),
            _ => {}
        }
        if kind == Cift::Complex {
            Err(CondError::Complex)
        } else {
            Err(CondError::NotConditional)
        }
    }

    fn version_test(&self, expr: &str) -> Result<bool, CondError> {
        let t = expr.trim_start();
        let mut p = t[7..].trim_start();
        let negated = p.starts_with('!');
        if negated {
            p = &p[1..];
        }
        let mut op = 0i64;
        if let Some(c) = p.bytes().next().filter(|c| (b'<'..=b'>').contains(c)) {
            op = i64::from(c) - i64::from(b'=');
            p = &p[1..];
        }
        let or_equal = p.starts_with('=');
        if or_equal {
            p = &p[1..];
        }
        let p = p.trim_start();
        let p = p.strip_prefix(['v', 'V']).unwrap_or(p);
        let fields = scan_version(p);
        if fields.len() < 2 || fields[0] < 6 {
            return Err(CondError::BadVersion);
        }
        let ours = self.table.version().number();
        let given = (
            fields[0],
            fields[1],
            fields.get(2).copied().unwrap_or(ours.2),
        );
        let diff = match ours.cmp(&given) {
            std::cmp::Ordering::Less => -1,
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Greater => 1,
        };
        let result = diff == op || (or_equal && diff == 0);
        Ok(result != negated)
    }

    fn defined_test(&self, expr: &str) -> Result<bool, CondError> {
        let t = expr.trim_start();
        let rest = t[7..].trim_start();
        if rest.is_empty() {
            return Ok(false);
        }
        match characterize(rest, false) {
            Cift::Identifier => {
                let v = crate::config::lookup(&self.table, &self.scope, rest).map(|l| l.raw);
                match v {
                    Some(v) => Ok(!v.is_empty()),
                    None => Ok(crufty_bool(rest).is_some()),
                }
            }
            Cift::Number | Cift::Bool => Ok(true),
            _ => {
                let lower = rest.get(..4).map(str::to_ascii_lowercase);
                if lower.as_deref() == Some("use ") {
                    let what = rest[4..].trim_start();
                    if what.contains([' ', '\t', '\r']) {
                        return Err(CondError::UseWithSpaces);
                    }
                    let table = self.table.defaults();
                    let (cat, name) = match what.split_once(':') {
                        Some((c, n)) => (c, Some(n)),
                        None => (what, None),
                    };
                    if !table.has_category(cat) {
                        return Ok(false);
                    }
                    return Ok(match name {
                        None | Some("") => true,
                        Some(n) => table.template(cat, n).is_some(),
                    });
                }
                Err(CondError::BadDefined)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characterizes_conditions() {
        assert_eq!(characterize("defined FOO", true), Cift::IfDef);
        assert_eq!(characterize("version >= 8.1.2", true), Cift::Version);
        assert_eq!(characterize("1.5", true), Cift::Number);
        assert_eq!(characterize("TRUE", true), Cift::Bool);
        assert_eq!(characterize("a && b", true), Cift::Complex);
    }
}
