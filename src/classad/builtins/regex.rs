//! Regular expressions (PCRE2, as HTCondor uses): `regexp`, `regexpMember`,
//! `regexps`, `replace` and `replaceall`.
//!
//! Options: `i` ignore case, `m` multi-line anchors, `s` dot matches newline,
//! `x` extended syntax; for substitution `f` returns the whole target with
//! the replacement applied and `g` replaces every match. Other characters
//! are ignored. In the replacement, `\0` to `\9` insert groups.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use pcre2::bytes::{Regex, RegexBuilder};

use super::super::eval::{Evaluator, R};
use super::super::limits::MAX_EVAL_STRING_BYTES;
use super::super::value::Value;
use super::{Args, Builtin};

/// Compiled patterns by (pattern, option bits); `None` for invalid ones.
type Cache = HashMap<(Vec<u8>, u8), Option<Rc<Regex>>>;

/// Start and end of the whole match and of each group.
type Spans = Vec<Option<(usize, usize)>>;

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(HashMap::new());
}

/// Which option letters a function understands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Letters {
    /// Lower case only (`regexp`, `regexps`, `replace`, ...).
    Lower,
    /// Either case (`stringList_regexpMember`).
    AnyCase,
}

fn option_bits(options: &str, letters: Letters) -> u8 {
    let mut bits = 0;
    for c in options.chars() {
        let c = if letters == Letters::AnyCase {
            c.to_ascii_lowercase()
        } else {
            c
        };
        match c {
            'i' => bits |= 1,
            'm' => bits |= 2,
            's' => bits |= 4,
            'x' => bits |= 8,
            _ => {}
        }
    }
    bits
}

/// Compiles `pattern` with the given option letters (cached per thread).
pub(crate) fn compile(pattern: &[u8], options: &str, letters: Letters) -> Option<Rc<Regex>> {
    let bits = option_bits(options, letters);
    let key = (pattern.to_vec(), bits);
    CACHE.with(|c| {
        if let Some(r) = c.borrow().get(&key) {
            return r.clone();
        }
        let text = String::from_utf8_lossy(pattern);
        let built = RegexBuilder::new()
            .caseless(bits & 1 != 0)
            .multi_line(bits & 2 != 0)
            .dotall(bits & 4 != 0)
            .extended(bits & 8 != 0)
            .build(&text)
            .ok()
            .map(Rc::new);
        let mut cache = c.borrow_mut();
        if cache.len() > 256 {
            cache.clear();
        }
        cache.insert(key, built.clone());
        built
    })
}

/// Evaluates the arguments, returning `Err(value)` for an immediate result:
/// `error` if any is `error`, then `undefined` if any is `undefined`.
fn strict_args(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Result<Vec<Value>, Value>> {
    let vals = a.eval_all(ev)?;
    if vals.iter().any(Value::is_error) {
        return Ok(Err(Value::Error));
    }
    if vals.iter().any(Value::is_undefined) {
        return Ok(Err(Value::Undefined));
    }
    Ok(Ok(vals))
}

fn text(v: &Value) -> Option<&[u8]> {
    match v {
        Value::Str(s) => Some(s.as_bytes()),
        _ => None,
    }
}

pub(super) fn regexp(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 2 && a.len() != 3 {
        return Ok(Value::Error);
    }
    let vals = match strict_args(ev, a)? {
        Ok(v) => v,
        Err(v) => return Ok(v),
    };
    let options = match vals.get(2) {
        None => String::new(),
        Some(Value::Str(o)) => o.to_string_lossy(),
        Some(_) => return Ok(Value::Error),
    };
    let (Some(p), Some(t)) = (text(&vals[0]), text(&vals[1])) else {
        return Ok(Value::Error);
    };
    let Some(re) = compile(p, &options, Letters::Lower) else {
        return Ok(Value::Error);
    };
    Ok(re.is_match(t).map_or(Value::Error, Value::Bool))
}

pub(super) fn regexp_member(ev: &mut Evaluator<'_>, a: &Args<'_>) -> R<Value> {
    if a.len() != 2 && a.len() != 3 {
        return Ok(Value::Error);
    }
    let vals = match strict_args(ev, a)? {
        Ok(v) => v,
        Err(v) => return Ok(v),
    };
    let options = match vals.get(2) {
        None => String::new(),
        Some(Value::Str(o)) => o.to_string_lossy(),
        Some(_) => return Ok(Value::Error),
    };
    let (Some(p), Value::List(list)) = (text(&vals[0]), &vals[1]) else {
        return Ok(Value::Error);
    };
    // An invalid pattern matches nothing here (HTCondor ignores the error).
    let re = compile(p, &options, Letters::Lower);
    let mut maybe_undefined = false;
    for i in 0..list.len() {
        let item = match ev.eval_item(list, i) {
            Ok(v) => v,
            Err(_) => return Ok(Value::Error),
        };
        match item {
            Value::Str(s) => {
                if re
                    .as_ref()
                    .is_some_and(|re| re.is_match(s.as_bytes()).unwrap_or(false))
                {
                    return Ok(Value::Bool(true));
                }
            }
            Value::Undefined => maybe_undefined = true,
            _ => return Ok(Value::Error),
        }
    }
    Ok(if maybe_undefined {
        Value::Undefined
    } else {
        Value::Bool(false)
    })
}

/// Expands `\N` references in `replacement`; `None` if a group number is not
/// below `ngroups`.
fn expand(replacement: &[u8], groups: &[Option<&[u8]>], out: &mut Vec<u8>) -> Option<()> {
    let mut i = 0;
    while i < replacement.len() {
        let c = replacement[i];
        if c == b'\\' {
            if let Some(d) = replacement.get(i + 1).filter(|d| d.is_ascii_digit()) {
                let g = usize::from(d - b'0');
                if g >= groups.len() {
                    return None;
                }
                out.extend_from_slice(groups[g].unwrap_or(&[]));
                i += 2;
                continue;
            }
            out.push(b'\\');
        } else {
            out.push(c);
        }
        i += 1;
    }
    Some(())
}

pub(super) fn substitute(ev: &mut Evaluator<'_>, f: Builtin, a: &Args<'_>) -> R<Value> {
    if a.len() != 3 && a.len() != 4 {
        return Ok(Value::Error);
    }
    let vals = match strict_args(ev, a)? {
        Ok(v) => v,
        Err(v) => return Ok(v),
    };
    let mut options = match vals.get(3) {
        None => String::new(),
        Some(Value::Str(o)) => o.to_string_lossy(),
        Some(_) => return Ok(Value::Error),
    };
    match f {
        Builtin::Replace => options.push('f'),
        Builtin::ReplaceAll => options.push_str("fg"),
        _ => {}
    }
    let (Some(p), Some(t), Some(r)) = (text(&vals[0]), text(&vals[1]), text(&vals[2])) else {
        return Ok(Value::Error);
    };
    let Some(re) = compile(p, &options, Letters::Lower) else {
        return Ok(Value::Error);
    };
    let full = options.contains('f');
    let all = options.contains('g');
    // After an empty match HTCondor looks again at the same place for a
    // non-empty match starting there (PCRE2's NOTEMPTY_ATSTART and
    // ANCHORED), and keeps looking that way after each such match; when
    // none starts there it moves one byte on (kept in the result, even
    // when only the matches are) and searches normally again. Moving past
    // the end is an error (`replaceAll("$", …)`, `"b*"`, `""`).
    // Made at the first empty match only. A pattern that cannot be
    // wrapped so (one with leading `(*…)` options, an open `\Q`) finds
    // nothing non-empty there: it moves on rather than finding the same
    // empty match again for ever.
    let mut retry: Option<Option<Rc<Regex>>> = None;
    let anchored = || {
        let mut text = b"(*NOTEMPTY_ATSTART)\\G(?:".to_vec();
        text.extend_from_slice(p);
        text.push(b')');
        compile(&text, &options, Letters::Lower)
    };
    let mut out: Vec<u8> = Vec::new();
    // What is copied from (`pos`) and where the next match is looked for
    // (`from`), and whether that look is the anchored, non-empty one.
    let (mut pos, mut from, mut retrying) = (0usize, 0usize, false);
    loop {
        let found = if retrying {
            match retry.get_or_insert_with(anchored) {
                Some(a) => a.captures_read_at_owned(t, from),
                None => Ok(None),
            }
        } else {
            re.captures_read_at_owned(t, from)
        };
        let caps = match found {
            Ok(c) => c,
            Err(_) => return Ok(Value::Error),
        };
        let Some((start, end, caps)) = caps.and_then(|c| c[0].map(|(s, e)| (s, e, c))) else {
            if !retrying {
                break;
            }
            // Nothing non-empty starts here: one byte on.
            let Some(&b) = t.get(from) else {
                return Ok(Value::Error);
            };
            out.push(b);
            from += 1;
            pos = from;
            retrying = false;
            continue;
        };
        // Groups up to the last one that took part in the match.
        let used = caps.iter().rposition(Option::is_some).map_or(1, |i| i + 1);
        let groups: Vec<Option<&[u8]>> = caps[..used]
            .iter()
            .map(|g| g.map(|(s, e)| &t[s..e]))
            .collect();
        if full {
            out.extend_from_slice(&t[pos..start]);
        }
        if expand(r, &groups, &mut out).is_none() {
            return Ok(Value::Error);
        }
        if out.len() > MAX_EVAL_STRING_BYTES {
            return Ok(Value::Error);
        }
        pos = end;
        from = end;
        retrying = retrying || start == end;
        if !all {
            break;
        }
    }
    if full {
        out.extend_from_slice(&t[pos..]);
    }
    Ok(Value::string(out))
}

/// Positions of the whole match and each group, owned, so the target can be
/// sliced freely afterwards.
trait CapturesOwned {
    fn captures_read_at_owned(
        &self,
        subject: &[u8],
        start: usize,
    ) -> Result<Option<Spans>, pcre2::Error>;
}

impl CapturesOwned for Regex {
    fn captures_read_at_owned(
        &self,
        subject: &[u8],
        start: usize,
    ) -> Result<Option<Spans>, pcre2::Error> {
        let mut locs = self.capture_locations();
        match self.captures_read_at(&mut locs, subject, start)? {
            None => Ok(None),
            Some(_) => Ok(Some((0..locs.len()).map(|i| locs.get(i)).collect())),
        }
    }
}

/// Matches `pattern` against `target` (for `stringList_regexpMember`).
pub(crate) fn is_match(re: &Regex, target: &[u8]) -> bool {
    re.is_match(target).unwrap_or(false)
}
