//! A submit description's lines as `condor_submit` reads them: `\`
//! continuations joined, comment and blank lines dropped, a queue
//! statement's `( … )` item list kept with it across lines; and what each
//! `queue` statement asks for (a count, loop variables, the item rows of
//! `in`, `from` or `matching`). Pure: item files and globs are read through
//! the caller's [`SubmitFiles`].

use super::submit::{SubmitError, SubmitFiles, err};

/// What one `queue` statement asks for.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Queue {
    pub(super) count: i64,
    pub(super) vars: Vec<String>,
    /// One row per item (the values of `vars`); `None`: no item list.
    pub(super) rows: Option<Vec<Vec<String>>>,
}

/// The text after a `queue` keyword, if the line is a queue statement.
pub(super) fn queue_rest(text: &str) -> Option<&str> {
    let t = text.trim_start();
    let head = t.get(..5)?;
    if !head.eq_ignore_ascii_case("queue") {
        return None;
    }
    let rest = &t[5..];
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then_some(rest.trim())
}

/// Lines joined at `\` continuations, with comment and blank lines left
/// out, and a queue statement's `(` item list kept with it to its `)`.
pub(super) fn logical_lines(text: &str) -> Result<Vec<(usize, String)>, SubmitError> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    let mut open_list: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if let Some((start, mut acc)) = open_list.take() {
            acc.push('\n');
            acc.push_str(raw);
            if raw.contains(')') {
                out.push((start, acc));
            } else {
                open_list = Some((start, acc));
            }
            continue;
        }
        let (start, mut line) = match pending.take() {
            Some((start, acc)) => (start, acc + raw.trim_start()),
            None => {
                let t = raw.trim_start();
                if t.is_empty() || t.starts_with('#') {
                    continue;
                }
                (n, raw.to_string())
            }
        };
        if line.trim_end().ends_with('\\') {
            let t = line.trim_end();
            line = t[..t.len() - 1].to_string();
            pending = Some((start, line));
            continue;
        }
        if queue_rest(&line).is_some() && line.contains('(') && !line.contains(')') {
            open_list = Some((start, line));
            continue;
        }
        out.push((start, line));
    }
    if let Some((start, _)) = open_list {
        return Err(err(
            start,
            "the queue statement's item list has no closing ')'",
        ));
    }
    if let Some((start, line)) = pending {
        out.push((start, line));
    }
    Ok(out)
}

/// Finds `word` as a whole word in `text` (any case): its byte offset.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(word) {
        let at = from + i;
        let before = at == 0 || lower[..at].ends_with(|c: char| c.is_whitespace() || c == ',');
        let after = lower[at + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| c.is_whitespace() || c == '(');
        if before && after {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

pub(super) fn parse_queue(
    rest: &str,
    line: usize,
    files: &dyn SubmitFiles,
) -> Result<Queue, SubmitError> {
    let keyword = ["in", "from", "matching"]
        .iter()
        .filter_map(|k| find_word(rest, k).map(|at| (at, *k)))
        .min();
    let (head, tail) = match keyword {
        Some((at, k)) => (&rest[..at], Some((k, rest[at + k.len()..].trim()))),
        None => (rest, None),
    };
    let mut words = head
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .peekable();
    let mut count = 1;
    if let Some(first) = words.peek() {
        if let Ok(n) = first.parse::<i64>() {
            count = n;
            words.next();
        } else if tail.is_none() {
            return Err(err(
                line,
                format!("Invalid Queue count expression \"{head}\""),
            ));
        }
    }
    let vars: Vec<String> = words.map(str::to_string).collect();
    if count < 0 {
        return Err(err(line, format!("Invalid Queue count {count}")));
    }
    let Some((keyword, source)) = tail else {
        if !vars.is_empty() {
            return Err(err(line, "Invalid Queue count expression"));
        }
        return Ok(Queue {
            count,
            vars,
            rows: None,
        });
    };
    let vars = if vars.is_empty() {
        vec!["Item".to_string()]
    } else {
        vars
    };
    let rows = match keyword {
        "in" => {
            let list = inline(source, line)?;
            (list.split(|c: char| c == ',' || c.is_whitespace()))
                .filter(|w| !w.is_empty())
                .map(|w| vec![w.to_string()])
                .collect()
        }
        "from" => {
            let text = if source.starts_with('(') {
                inline(source, line)?.to_string()
            } else {
                files
                    .read(source)
                    .ok_or_else(|| err(line, format!("cannot read the item file {source}")))?
            };
            (text.lines())
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(|l| split_row(l, vars.len()))
                .collect()
        }
        _ => matching(source, files),
    };
    Ok(Queue {
        count,
        vars,
        rows: Some(rows),
    })
}

/// The text inside `( … )`.
fn inline(source: &str, line: usize) -> Result<&str, SubmitError> {
    let inner = source
        .strip_prefix('(')
        .and_then(|s| s.rfind(')').map(|i| &s[..i]))
        .ok_or_else(|| {
            err(
                line,
                format!("expected an item list in ( ), not \"{source}\""),
            )
        })?;
    Ok(inner)
}

/// A `from` row: split at commas (and white space) into `n` values, the
/// last taking the rest.
fn split_row(l: &str, n: usize) -> Vec<String> {
    if n <= 1 {
        return vec![l.to_string()];
    }
    let mut out = Vec::with_capacity(n);
    let mut rest = l;
    for _ in 0..n - 1 {
        let cut = rest.find([',', ' ', '\t']).unwrap_or(rest.len());
        out.push(rest[..cut].trim().to_string());
        rest = rest[cut..].trim_start_matches([',', ' ', '\t']);
    }
    out.push(rest.trim().to_string());
    out
}

/// `matching [files|dirs] GLOB…`: each match one row.
fn matching(source: &str, files: &dyn SubmitFiles) -> Vec<Vec<String>> {
    let mut words: Vec<&str> = source.split_whitespace().collect();
    let mut dirs = false;
    if let Some(first) = words.first() {
        if first.eq_ignore_ascii_case("files") {
            words.remove(0);
        } else if first.eq_ignore_ascii_case("dirs") {
            dirs = true;
            words.remove(0);
        }
    }
    let mut rows = Vec::new();
    for w in words {
        for m in files.glob(w, dirs) {
            rows.push(vec![m]);
        }
    }
    rows
}
