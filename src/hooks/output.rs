//! What a fetch hook's output means (pure). HTCondor's rules: stdout is
//! read line by line, each trimmed non-empty line must be `Name = expr`,
//! and one bad line rejects the whole reply. Roost adds: output cut at the
//! size limit is rejected too (the last line would be partial), and
//! output that is only whitespace means "no work" rather than an empty job.

use crate::classad::old::parse_line_with;
use crate::classad::{ClassAd, Limits};

/// The meaning of FETCH_WORK's stdout.
#[derive(Clone, Debug)]
pub enum Fetched {
    /// Nothing to do.
    NoWork,
    /// A job ad.
    Job(ClassAd),
    /// Unusable output: why, naming the line.
    Malformed(String),
}

/// The outcome [`classify_fetch`] gives a run that printed no work.
pub const NO_WORK: &str = "no work";

/// What FETCH_WORK's run meant, for the log, and the job it handed out
/// (canonical new syntax), if any.
pub fn classify_fetch(out: &super::HookOutput) -> (String, Option<String>) {
    if out.timed_out {
        return ("killed at its timeout; no work taken".into(), None);
    }
    match fetched(&out.stdout, out.truncated, out.stdout.len()) {
        Fetched::NoWork => (NO_WORK.into(), None),
        Fetched::Job(ad) => (
            format!("job ad with {} attributes", ad.len()),
            Some(crate::classad::unparse::ad_to_string(&ad)),
        ),
        Fetched::Malformed(m) => (format!("malformed output: {m}"), None),
    }
}

/// Reads FETCH_WORK's stdout (`truncated`: it went past the limit).
pub fn fetched(stdout: &[u8], truncated: bool, limit: usize) -> Fetched {
    if truncated {
        return Fetched::Malformed(format!(
            "output is longer than the {limit}-byte limit (PIPE_BUFFER_MAX); \
             the job ad would be cut, so it was not used"
        ));
    }
    if stdout.iter().all(u8::is_ascii_whitespace) {
        return Fetched::NoWork;
    }
    let limits = Limits::default();
    let mut ad = ClassAd::new();
    for (i, line) in stdout.split(|&b| b == b'\n').enumerate() {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
        match parse_line_with(line, n, &limits, true) {
            Ok((name, expr)) => ad.insert(name, expr),
            Err(e) => {
                let shown: String = String::from_utf8_lossy(line).chars().take(80).collect();
                return Fetched::Malformed(format!(
                    "line {n} is not 'Name = expression' ({e}): {shown:?}"
                ));
            }
        }
    }
    Fetched::Job(ad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bad_line_rejects_the_reply() {
        assert!(matches!(fetched(b"", false, 10), Fetched::NoWork));
        assert!(matches!(fetched(b" \n\n", false, 10), Fetched::NoWork));
        match fetched(b"Cmd = \"/bin/true\"\r\nOwner = \"x\"\n", false, 100) {
            Fetched::Job(ad) => assert_eq!(ad.len(), 2),
            other => panic!("{other:?}"),
        }
        match fetched(b"Cmd = \"/bin/true\"\nthis is garbage\n", false, 100) {
            Fetched::Malformed(m) => assert!(m.starts_with("line 2 "), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(fetched(b"A = 1", true, 5), Fetched::Malformed(_)));
        assert!(matches!(
            fetched(b"# comment\n", false, 50),
            Fetched::Malformed(_)
        ));
    }
}
