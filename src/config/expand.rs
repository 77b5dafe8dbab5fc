//! Macro expansion: `$(NAME)`, `$(NAME:default)`, `$ENV()`, `$INT()`,
//! `$F…()` and the other `$` functions, with HTCondor's scanning rules.
//!
//! HTCondor substitutes a reference and scans the whole text again, which
//! hangs on circular references. Roost substitutes and scans again the
//! same way, but remembers which name each substituted text came from, so
//! a cycle is an error that names it (see [`Expander::expand`]).

use std::cell::Cell;
use std::collections::HashMap;

use super::printf::{self, Arg};
pub(crate) use super::scan::{Func, MacroRef, is_id_char, next_macro, replace_dollars};
use super::scan::{is_dollar, next_macro_noting};
use super::{ExpandError, MAX_EXPANDED_BYTES, MAX_EXPANSION_DEPTH, MacroTable, Scope};
use crate::classad::{self, FixedEnv, Value};

/// Expands references against a macro table.
pub(crate) struct Expander<'a> {
    pub table: &'a MacroTable,
    pub scope: &'a Scope,
    pub env: &'a HashMap<String, String>,
    pub now: i64,
    pub seed: &'a Cell<u64>,
}

impl Expander<'_> {
    /// Fully expands `text` (the value of `name`, when given) and then
    /// turns `$(DOLLAR)` into `$`.
    pub fn expand_top(&self, text: &str, name: Option<&str>) -> Result<String, ExpandError> {
        let mut stack: Vec<String> = name.map(|n| n.to_ascii_lowercase()).into_iter().collect();
        let out = self.expand(text, &mut stack)?;
        Ok(replace_dollars(out))
    }

    /// Expands every reference in `text` except `$(DOLLAR)` and `$$(…)`.
    ///
    /// As HTCondor does, a reference is replaced by its unexpanded value
    /// and scanning goes on as if from the start, so the value's own
    /// references (and a reference completed by the text around it, as in
    /// `$(V_$(X))`) are expanded next. Scanning really goes on at the
    /// reference, or at the first `$` before it that the replaced text
    /// could have made a reference: nothing else before it changed. Each
    /// replaced value is remembered as a region tagged with the name it
    /// came from; a reference to a name whose region encloses it is a
    /// cycle.
    pub fn expand(&self, text: &str, stack: &mut Vec<String>) -> Result<String, ExpandError> {
        let base = stack.len();
        let mut s = text.to_string();
        // (start, end) of the regions of stack[base..], innermost last.
        let mut regions: Vec<(usize, usize)> = Vec::new();
        // Each `$` passed over, and the byte that made it no reference.
        let mut missed: Vec<(usize, usize)> = Vec::new();
        let mut pos = 0;
        let mut steps = 0usize;
        let result = loop {
            missed.retain(|&(d, _)| d < pos);
            let found = next_macro_noting(&s, pos, false, &is_dollar, &mut |d, at| {
                missed.push((d, at));
            });
            let Some(m) = found else {
                break Ok(());
            };
            let q = m.dollar;
            // The regions behind the reference, and those after its `$`
            // (it is made of them), are done with.
            while regions.last().is_some_and(|&(b, e)| e <= q || b > q) {
                regions.pop();
                stack.pop();
            }
            steps += 1;
            if steps > MAX_STEPS {
                break Err(ExpandError::TooLong);
            }
            let (piece, from_name) = match self.evaluate(&s, &m, stack) {
                Ok(r) => r,
                Err(e) => break Err(e),
            };
            if let Some(name) = &from_name
                && let Err(e) = check_chain(stack, name)
            {
                break Err(e);
            }
            let old_len = m.end() - q;
            let new_len = piece.len();
            s.replace_range(q..m.end(), &piece);
            for (_, e) in &mut regions {
                *e = if *e >= q + old_len {
                    *e + new_len - old_len
                } else {
                    q + new_len
                };
            }
            if let Some(name) = from_name {
                regions.push((q, q + new_len));
                stack.push(name);
            }
            if s.len() > MAX_EXPANDED_BYTES {
                break Err(ExpandError::TooLong);
            }
            pos = missed
                .iter()
                .filter(|&&(_, at)| at >= q)
                .map(|&(d, _)| d)
                .min()
                .unwrap_or(q);
        };
        stack.truncate(base);
        result.map(|()| s)
    }

    /// Fully expands the value `raw` of knob `name` (a nested expansion,
    /// for a function argument).
    fn expand_value_of(
        &self,
        name: &str,
        raw: &str,
        stack: &mut Vec<String>,
    ) -> Result<String, ExpandError> {
        let key = name.to_ascii_lowercase();
        check_chain(stack, &key)?;
        if !raw.contains('$') {
            return Ok(raw.to_string());
        }
        stack.push(key);
        let r = self.expand(raw, stack);
        stack.pop();
        r
    }

    /// The replacement text of one reference (scanned again by the
    /// caller), and the knob it is the value of, if any.
    fn evaluate(
        &self,
        text: &str,
        m: &MacroRef,
        stack: &mut Vec<String>,
    ) -> Result<(String, Option<String>), ExpandError> {
        let piece = match m.func {
            Func::Normal => {
                let name = m.name(text);
                let raw = super::lookup(self.table, self.scope, name).map(|l| l.raw);
                return Ok(match raw {
                    Some(v) if !v.is_empty() => (v.to_string(), Some(name.to_ascii_lowercase())),
                    _ => (m.default(text).unwrap_or("").to_string(), None),
                });
            }
            Func::Env => {
                let name = m.name(text);
                match (self.env.get(name), m.default(text)) {
                    (Some(v), _) => v.clone(),
                    (None, Some(d)) => d.to_string(),
                    (None, None) => "UNDEFINED".to_string(),
                }
            }
            Func::RandomChoice => self.random_choice(m.body(text), stack)?,
            Func::RandomInteger => self.random_integer(m.body(text))?,
            Func::Choice => self.choice(m.body(text), stack)?,
            Func::Substr => self.substr(m.body(text), stack)?,
            Func::Int | Func::Real => self.number(m.func, m.body(text), stack)?,
            Func::Str => self.string(m.body(text), stack)?,
            Func::Eval => self.eval(m.body(text), stack)?,
            Func::Basename | Func::Dirname | Func::Filename => {
                let flags = &text[m.dollar + 1..m.body - 1];
                self.filename(m.func, flags, m.body(text), stack)?
            }
        };
        Ok((piece, None))
    }

    /// The `index`th comma-separated argument, trimmed, looked up as a
    /// knob name (its value if defined, else the argument itself) and
    /// expanded. `None` when there is no such argument.
    fn arg(
        &self,
        args: &str,
        index: usize,
        stack: &mut Vec<String>,
    ) -> Result<Option<String>, ExpandError> {
        let Some(item) = nth_item(args, index, true) else {
            return Ok(None);
        };
        match super::lookup(self.table, self.scope, item).map(|l| l.raw) {
            Some(raw) => self.expand_value_of(item, raw, stack).map(Some),
            None => self.expand(item, stack).map(Some),
        }
    }

    /// Whether a function that cannot do its work gives a fallback text
    /// instead of failing the knob: HTCondor 25 does, HTCondor 23 stops.
    fn lenient(&self) -> bool {
        self.table.version().is_25()
    }

    /// A function's failure as the release takes it: nothing (HTCondor 25)
    /// or the error (HTCondor 23).
    fn or_empty(&self, r: Result<String, ExpandError>) -> Result<String, ExpandError> {
        match r {
            Err(ExpandError::Function(_)) if self.lenient() => Ok(String::new()),
            other => other,
        }
    }

    fn random(&self) -> u64 {
        // xorshift64*: deterministic per configuration, good enough to
        // spread choices across a pool.
        let mut x = self.seed.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.seed.set(x);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33
    }

    fn random_choice(&self, body: &str, stack: &mut Vec<String>) -> Result<String, ExpandError> {
        let items = if body.contains(',') {
            body.to_string()
        } else {
            if body.is_empty() {
                return self.or_empty(Err(fail("$RANDOM_CHOICE() error: no list")));
            }
            self.arg(body, 0, stack)?.unwrap_or_default()
        };
        let n = count_items(&items);
        let pick = usize::try_from(self.random() % n as u64).unwrap_or(0);
        Ok(nth_item(&items, pick, true).unwrap_or("").to_string())
    }

    /// `$RANDOM_INTEGER(min, max[, step])`. HTCondor 25 reads a bad number
    /// as 0, a step under 1 as 1, and gives `max` when `min > max`.
    fn random_integer(&self, body: &str) -> Result<String, ExpandError> {
        let lenient = self.lenient();
        let field = |i: usize, what: &str, missing: Option<i64>| {
            match nth_item(body, i, true) {
                None if missing.is_some() => missing,
                item => item.and_then(|s| super::strtoll_prefix(s).map(|(v, _)| v)),
            }
            .or(lenient.then_some(0))
            .ok_or_else(|| fail(format!("$RANDOM_INTEGER() error: invalid {what}")))
        };
        let min = field(0, "min", None)?;
        let max = field(1, "max", None)?;
        let mut step = field(2, "step", Some(1))?;
        if step < 1 {
            if !lenient {
                return Err(fail("$RANDOM_INTEGER() error: invalid step"));
            }
            step = 1;
        }
        if min > max {
            if lenient {
                return Ok(max.to_string());
            }
            return Err(fail("$RANDOM_INTEGER() error: min > max"));
        }
        let range = i128::from(step) + i128::from(max) - i128::from(min);
        let count = (range / i128::from(step)).max(1);
        let pick = i128::from(self.random()) % count;
        let v = i128::from(min) + pick * i128::from(step);
        Ok(v.to_string())
    }

    /// `$CHOICE(index, list)`. HTCondor 25 gives nothing instead of an
    /// error, and reads an index that is not a number (or is negative) as 0.
    fn choice(&self, body: &str, stack: &mut Vec<String>) -> Result<String, ExpandError> {
        self.or_empty(self.choice_strict(body, stack))
    }

    fn choice_strict(&self, body: &str, stack: &mut Vec<String>) -> Result<String, ExpandError> {
        let Some(rest) = nth_rest(body, 1) else {
            return Err(fail("$CHOICE() error: no list"));
        };
        let rest = rest.trim_start();
        let ival = self.arg(body, 0, stack)?.unwrap_or_default();
        let index = super::parse_int(&ival, self.now)
            .filter(|&i| (0..i64::from(i32::MAX)).contains(&i))
            .or(self.lenient().then_some(0))
            .ok_or_else(|| fail(format!("$CHOICE() error: '{ival}' is invalid index")))?;
        let list = if count_items(rest) == 1 {
            let name = nth_item(rest, 0, true).unwrap_or("");
            if name.is_empty() {
                return Err(fail("$CHOICE() error: no list"));
            }
            let Some(raw) = super::lookup(self.table, self.scope, name).map(|l| l.raw) else {
                return Err(fail(format!("$CHOICE() error: no list named {name}")));
            };
            self.expand_value_of(name, raw, stack)?
        } else {
            rest.to_string()
        };
        let i = usize::try_from(index).unwrap_or(usize::MAX);
        let item = nth_item(&list, i, true)
            .ok_or_else(|| fail(format!("$CHOICE() error: index {index} is out of range")))?;
        Ok(item.to_string())
    }

    /// `$SUBSTR(name, start[, length])`: a negative start counts from the
    /// end, a negative length leaves that many characters off the end; an
    /// undefined name gives nothing. A start is required. HTCondor 25 gives
    /// nothing instead of an error.
    fn substr(&self, body: &str, stack: &mut Vec<String>) -> Result<String, ExpandError> {
        self.or_empty(self.substr_strict(body, stack))
    }

    fn substr_strict(&self, body: &str, stack: &mut Vec<String>) -> Result<String, ExpandError> {
        if nth_item(body, 1, true).is_none() {
            return Err(fail("$SUBSTR() error: no start index"));
        }
        let name = nth_item(body, 0, true).unwrap_or("");
        let Some(raw) = super::lookup(self.table, self.scope, name).map(|l| l.raw) else {
            return Ok(String::new());
        };
        let value = self.expand_value_of(name, raw, stack)?;
        if value.is_empty() {
            return Ok(String::new());
        }
        let to_int = |s: &str, what: &str| {
            super::parse_int(s, self.now)
                .filter(|&i| (i64::from(i32::MIN)..i64::from(i32::MAX)).contains(&i))
                .ok_or_else(|| fail(format!("$SUBSTR() error: {s} is invalid {what}")))
        };
        let start = match self.arg(body, 1, stack)? {
            Some(s) => to_int(&s, "start")?,
            None => 0,
        };
        let len = match self.arg(body, 2, stack)? {
            Some(l) => Some(to_int(&l, "length")?),
            None => None,
        };
        let bytes = value.as_bytes();
        let total = i64::try_from(bytes.len()).unwrap_or(i64::MAX);
        let start = if start < 0 { total + start } else { start }.clamp(0, total);
        let remain = total - start;
        let len = match len {
            Some(l) if l < 0 => (remain + l).clamp(0, remain),
            Some(l) => l.clamp(0, remain),
            None => remain,
        };
        let s = usize::try_from(start).unwrap_or(0);
        let e = s + usize::try_from(len).unwrap_or(0);
        Ok(String::from_utf8_lossy(&bytes[s..e]).into_owned())
    }

    fn number(
        &self,
        func: Func,
        body: &str,
        stack: &mut Vec<String>,
    ) -> Result<String, ExpandError> {
        let fname = if func == Func::Int {
            "$INT()"
        } else {
            "$REAL()"
        };
        let fmt = nth_rest(body, 1);
        if let Some(f) = fmt {
            let ok = match printf::conversion(f) {
                Some(printf::Kind::Int) => func == Func::Int,
                Some(printf::Kind::Float) => func == Func::Real,
                _ => false,
            };
            if !ok {
                if self.lenient() {
                    return Ok(f.to_string());
                }
                return Err(fail(format!(
                    "{fname} error: '{f}' is not a valid format specifier"
                )));
            }
        }
        let value = self.arg(body, 0, stack)?.unwrap_or_default();
        if func == Func::Int {
            let Some(v) = super::parse_int(&value, self.now) else {
                return self.or_empty(Err(fail(format!(
                    "$INT() error: {value} does not evaluate to an integer"
                ))));
            };
            Ok(match fmt {
                Some(f) => printf::format(f, Arg::Int(v)),
                None => v.to_string(),
            })
        } else {
            let Some(v) = super::parse_real(&value, self.now) else {
                return self.or_empty(Err(fail(format!(
                    "$REAL() error: {value} does not evaluate to a real"
                ))));
            };
            Ok(match fmt {
                Some(f) => {
                    let mut s = printf::format(f, Arg::Float(v));
                    if !s.contains('.') {
                        s.push_str(".0");
                    }
                    s
                }
                None => printf::format("%.16G", Arg::Float(v)),
            })
        }
    }

    fn string(&self, body: &str, stack: &mut Vec<String>) -> Result<String, ExpandError> {
        let fmt = nth_rest(body, 1);
        if let Some(f) = fmt
            && printf::conversion(f) != Some(printf::Kind::Str)
        {
            if self.lenient() {
                return Ok(f.to_string());
            }
            return Err(fail(format!(
                "$STRING() error: '{f}' is not a valid format specifier"
            )));
        }
        let value = self.arg(body, 0, stack)?.unwrap_or_default();
        let value = match self.eval_classad(&value) {
            Some(Value::Str(s)) => s.to_string_lossy(),
            _ => value,
        };
        Ok(match fmt {
            Some(f) => printf::format(f, Arg::Str(&value)),
            None => value,
        })
    }

    fn eval(&self, body: &str, stack: &mut Vec<String>) -> Result<String, ExpandError> {
        let text = match super::lookup(self.table, self.scope, body).map(|l| l.raw) {
            Some(raw) => self.expand_value_of(body, raw, stack)?,
            None => self.expand(body, stack)?,
        };
        Ok(match self.eval_classad(&text) {
            Some(Value::Str(s)) => s.to_string_lossy(),
            Some(v) => classad::unparse::value_to_string(&v),
            None => String::new(),
        })
    }

    fn eval_classad(&self, text: &str) -> Option<Value> {
        let expr = classad::parse_expr(text).ok()?;
        let env = FixedEnv::new(self.now);
        Some(classad::eval_expr_in(&expr, None, None, &env))
    }

    fn filename(
        &self,
        func: Func,
        flags: &str,
        body: &str,
        stack: &mut Vec<String>,
    ) -> Result<String, ExpandError> {
        // HTCondor 25's `$BASENAME(name, suffix)` drops the suffix; the
        // name (up to the last comma) is taken as written, the suffix
        // without leading space.
        let (name, suffix) = match body.rsplit_once(',') {
            Some((name, suffix)) if func == Func::Basename && self.table.version().is_25() => {
                (name, suffix.trim_start())
            }
            _ => (body, ""),
        };
        let value = match super::lookup(self.table, self.scope, name).map(|l| l.raw) {
            Some(raw) => self.expand_value_of(name, raw, stack)?,
            None => name.to_string(),
        };
        let base = path_parts(func, flags, &value);
        Ok(match base.strip_suffix(suffix) {
            Some(stem) if !suffix.is_empty() => stem.to_string(),
            _ => base,
        })
    }
}

/// How many references one expansion may replace.
const MAX_STEPS: usize = 1_000_000;

/// An error if `name` is already being expanded (a cycle) or the chain is
/// too deep.
fn check_chain(stack: &[String], name: &str) -> Result<(), ExpandError> {
    let key = name.to_ascii_lowercase();
    if let Some(at) = stack.iter().position(|s| *s == key) {
        let mut chain: Vec<&str> = stack[at..].iter().map(String::as_str).collect();
        chain.push(&key);
        return Err(ExpandError::Circular(chain.join(" -> ")));
    }
    if stack.len() >= MAX_EXPANSION_DEPTH {
        return Err(ExpandError::TooDeep(name.to_string()));
    }
    Ok(())
}

fn fail(msg: impl Into<String>) -> ExpandError {
    ExpandError::Function(msg.into())
}

/// Number of comma-separated items (separators + 1).
fn count_items(list: &str) -> usize {
    list.bytes().filter(|&c| c == b',').count() + 1
}

/// The `index`th comma-separated item, trimmed if asked.
pub(crate) fn nth_item(list: &str, index: usize, trimmed: bool) -> Option<&str> {
    let item = list.split(',').nth(index)?;
    Some(if trimmed {
        item.trim_matches(|c: char| c.is_ascii_whitespace())
    } else {
        item
    })
}

/// Everything from the `index`th item to the end, untrimmed.
fn nth_rest(list: &str, index: usize) -> Option<&str> {
    let mut at = 0;
    for _ in 0..index {
        at += list[at..].find(',')? + 1;
    }
    Some(&list[at..])
}

/// `$Fpnxdqabfwu(…)`, `$BASENAME()`, `$DIRNAME()`: parts of a path.
fn path_parts(func: Func, flags: &str, value: &str) -> String {
    let mut parts = 0u8;
    let mut num_dirs = 0usize;
    let (mut quoted, mut bare, mut arg_quote) = (false, false, false);
    let mut to_path_char = None;
    match func {
        Func::Basename => parts = 1 | 2,
        Func::Dirname => parts = 4,
        _ => {
            for c in flags.bytes().skip(1) {
                match c.to_ascii_lowercase() {
                    b'x' => parts |= 1,
                    b'n' => parts |= 2,
                    b'p' => parts |= 4,
                    b'd' => {
                        parts |= 8;
                        num_dirs += 1;
                    }
                    b'a' => arg_quote = true,
                    b'b' => bare = true,
                    b'w' => to_path_char = Some('\\'),
                    b'u' => to_path_char = Some('/'),
                    b'q' => quoted = true,
                    _ => {}
                }
            }
        }
    }
    let quote = quoted.then_some(if arg_quote { '\'' } else { '"' });
    // Strip one pair of surrounding quotes, then the quote characters
    // HTCondor's strcpy_quoted drops.
    let mut s = value;
    if s.len() > 1
        && (s.starts_with('"') && s.ends_with('"') || s.starts_with('\'') && s.ends_with('\''))
    {
        s = &s[1..s.len() - 1];
    }
    let first_quote = s.chars().next().filter(|&c| c == '"' || Some(c) == quote);
    if let Some(q) = first_quote {
        s = &s[1..];
        if s.ends_with(q) {
            s = &s[..s.len() - 1];
        }
    }
    let mut buf: String = s.to_string();
    if let Some(pc) = to_path_char {
        let other = if pc == '/' { '\\' } else { '/' };
        buf = buf.replace(other, &pc.to_string());
    }
    let ixend = buf.len();
    let ixn = buf.rfind('/').map_or(0, |i| i + 1);
    let name = &buf[ixn..];
    let skip = name.chars().next().map_or(0, char::len_utf8);
    let ixx = name[skip..].rfind('.').map_or(ixend, |i| ixn + skip + i);
    if ixn == 0 && parts & 3 != 0 {
        parts &= !(4 | 8);
    }
    let (start, end) = match parts & 0xF {
        1 => (if bare && ixx < ixend { ixx + 1 } else { ixx }, ixend),
        3 => (ixn, ixend),
        2 => (ixn, ixx),
        0 | 7 | 5 => (0, ixend),
        4 => (0, if bare && ixn > 0 { ixn - 1 } else { ixn }),
        6 => (0, ixx),
        _ => {
            if ixn > 0 {
                let start = basename_plus_dirs(&buf, num_dirs);
                let end = match parts & 3 {
                    2 => ixx,
                    0 => {
                        if bare {
                            ixn - 1
                        } else {
                            ixn
                        }
                    }
                    _ => ixend,
                };
                (start, end.max(start))
            } else {
                (0, 0)
            }
        }
    };
    let piece = &buf[start..end.max(start)];
    match quote {
        Some(q) => {
            let inner = piece.strip_prefix(q).unwrap_or(piece);
            let inner = inner.strip_suffix(q).unwrap_or(inner);
            format!("{q}{inner}{q}")
        }
        None => piece.to_string(),
    }
}

/// The offset after the separator `num_dirs` directories up from the end.
fn basename_plus_dirs(path: &str, num_dirs: usize) -> usize {
    let seps: Vec<usize> = path
        .bytes()
        .enumerate()
        .filter(|&(_, c)| c == b'/' || c == b'\\')
        .map(|(i, _)| i + 1)
        .collect();
    if seps.len() > num_dirs {
        seps[seps.len() - num_dirs - 1]
    } else {
        0
    }
}

/// Expands template arguments `$(0)`, `$(1)`, `$(1?)`, `$(0#)`, `$(2+)`,
/// `$(1:default)` in a template body.
pub(crate) fn expand_meta_args(body: &str, args: &str) -> String {
    let tokens: Vec<&str> = args.split(',').collect();
    let mut s = body.to_string();
    let mut from = 0;
    while let Some(m) = next_macro(&s, from, true, &|_, b| {
        !b.starts_with(|c: char| c.is_ascii_digit())
    }) {
        let spec = m.name(&s).to_string();
        let digits: String = spec.chars().take_while(char::is_ascii_digit).collect();
        let suffix = &spec[digits.len()..];
        let index: usize = digits.parse().unwrap_or(0);
        let empty_check = suffix.starts_with('?');
        let num_args = suffix.starts_with('#') || suffix.starts_with('+');
        let default = m.default(&s).map(str::to_string);
        let n_tokens = if args.trim().is_empty() {
            0
        } else {
            tokens.len()
        };
        let mut buf = if index == 0 {
            if num_args {
                n_tokens.to_string()
            } else {
                args.to_string()
            }
        } else if num_args {
            let rest = if index <= n_tokens {
                tokens[index - 1..].join(",")
            } else {
                String::new()
            };
            if rest.trim().is_empty() {
                default.unwrap_or_default()
            } else {
                rest
            }
        } else if index <= n_tokens {
            tokens[index - 1].to_string()
        } else {
            default.unwrap_or_default()
        };
        buf = buf.trim().to_string();
        if empty_check {
            buf = if buf.is_empty() { "0" } else { "1" }.to_string();
        }
        s.replace_range(m.dollar..m.end(), &buf);
        from = m.dollar;
    }
    s
}

/// Expands only references to `name` (and `$F…(name)`), as HTCondor does
/// when a line redefines a knob in terms of itself.
pub(crate) fn expand_self(
    value: &str,
    name: &str,
    selfless: Option<&str>,
    exp: &Expander<'_>,
) -> Result<String, ExpandError> {
    let is_self = |body: &str, me: &str| {
        let n = me.len();
        body.len() >= n
            && body.as_bytes()[..n].eq_ignore_ascii_case(me.as_bytes())
            && (body.len() == n || body.as_bytes()[n] == b':')
    };
    let skip = |f: Func, body: &str| {
        if f != Func::Normal && f != Func::Filename {
            return true;
        }
        !(is_self(body, name) || selfless.is_some_and(|s| is_self(body, s)))
    };
    let mut s = value.to_string();
    let mut rounds = 0;
    while let Some(m) = next_macro(&s, 0, false, &skip) {
        rounds += 1;
        if rounds > 1000 || s.len() > MAX_EXPANDED_BYTES {
            return Err(ExpandError::Circular(format!("{name} -> {name}")));
        }
        let piece = match m.func {
            Func::Normal => {
                let n = m.name(&s);
                match super::lookup(exp.table, exp.scope, n).map(|l| l.raw) {
                    Some(v) if !v.is_empty() => v.to_string(),
                    _ => m.default(&s).unwrap_or("").to_string(),
                }
            }
            _ => {
                let flags = s[m.dollar + 1..m.body - 1].to_string();
                let body = m.body(&s);
                match super::lookup(exp.table, exp.scope, body).map(|l| l.raw) {
                    Some(v) => {
                        let v = v.to_string();
                        let v = if v.contains('$') {
                            exp.expand(&v, &mut Vec::new())?
                        } else {
                            v
                        };
                        path_parts(Func::Filename, &flags, &v)
                    }
                    None => String::new(),
                }
            }
        };
        s.replace_range(m.dollar..m.end(), &piece);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(text: &str) -> Option<(Func, String)> {
        next_macro(text, 0, false, &is_dollar).map(|m| (m.func, m.body(text).to_string()))
    }

    #[test]
    fn scans_like_htcondor() {
        assert_eq!(find("a $(B) c"), Some((Func::Normal, "B".into())));
        assert_eq!(
            find("$(A:x y, $ \\ :z)"),
            Some((Func::Normal, "A:x y, $ \\ :z".into()))
        );
        // '-' is not allowed in a default: not a reference.
        assert_eq!(find("$(A:a-b)"), None);
        assert_eq!(find("$$(A) $(DOLLAR)"), None);
        assert_eq!(find("$ENV(HOME:/x)"), Some((Func::Env, "HOME:/x".into())));
        assert_eq!(find("$Fpn(X)"), Some((Func::Filename, "X".into())));
        assert_eq!(find("$INT(A,%d)"), Some((Func::Int, "A,%d".into())));
        assert_eq!(find("$NOPE(A) $(B"), None);
        assert_eq!(find("$(A:$(B))"), Some((Func::Normal, "A:$(B)".into())));
    }

    #[test]
    fn path_parts_follow_htcondor() {
        let f = |flags: &str, v: &str| path_parts(Func::Filename, flags, v);
        assert_eq!(f("Fp", "/a/b/c.txt"), "/a/b/");
        assert_eq!(f("Fn", "/a/b/c.txt"), "c");
        assert_eq!(f("Fx", "/a/b/c.txt"), ".txt");
        assert_eq!(f("Fnx", "/a/b/c.txt"), "c.txt");
        assert_eq!(f("Fd", "/a/b/c.txt"), "b/");
        assert_eq!(f("Fdb", "/a/b/c.txt"), "b");
        assert_eq!(f("Fq", "/a/b"), "\"/a/b\"");
        assert_eq!(path_parts(Func::Dirname, "DIRNAME", "/a/b"), "/a/");
        assert_eq!(path_parts(Func::Basename, "BASENAME", "/a/b.c"), "b.c");
    }

    #[test]
    fn meta_args() {
        assert_eq!(expand_meta_args("X=$(1:24*3600)", ""), "X=24*3600");
        assert_eq!(
            expand_meta_args("X=$(1) $(2?) $(0#) $(3)", "a, , c"),
            "X=a 0 3 c"
        );
        assert_eq!(expand_meta_args("X=$(2+)", "a,b,c"), "X=b,c");
    }
}
