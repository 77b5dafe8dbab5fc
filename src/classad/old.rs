//! Old ClassAd syntax: `Name = expr` lines, as hooks print and read them.
//!
//! A line's name is everything before its first `=`, trimmed (HTCondor does
//! not check that it is an identifier, but refuses one starting with a
//! quote); the rest is parsed as an old-syntax expression. [`OldReader`]
//! splits a hook's output into ads at separator lines (lines starting with
//! `-`: `-----` between a job ad and a slot ad, `------` for the job
//! router, `-` lines with a tag and `update:` for startd cron) and reports
//! each separator with its text and every bad line with its line number.

use super::ad::ClassAd;
use super::ast::Expr;
use super::error::{ParseError, Position};
use super::lexer::Syntax;
use super::limits::Limits;
use super::name::Name;
use super::parser::{parse_ad_with, parse_expr_prefix, parse_expr_prefixes};

/// Parses one `Name = expr` line (line number `line` for errors). The value
/// is the expression at the start of the text after `=`; anything after it
/// is ignored, as HTCondor does.
pub fn parse_line(text: &[u8], line: u32, limits: &Limits) -> Result<(Name, Expr), ParseError> {
    parse_line_with(text, line, limits, false)
}

/// [`parse_line`], optionally refusing names that start with a quote (as
/// the startd does for the ads its fetch hooks print).
pub fn parse_line_with(
    text: &[u8],
    line: u32,
    limits: &Limits,
    reject_quoted_names: bool,
) -> Result<(Name, Expr), ParseError> {
    let (name, eq) = split_line(text, line, reject_quoted_names)?;
    let value = parse_expr_prefix(&text[eq + 1..], Syntax::Old, limits);
    Ok((name, value.map_err(|e| place_value_error(e, eq, line))?))
}

/// The name of a `Name = value` line and the position of its `=`.
fn split_line(
    text: &[u8],
    line: u32,
    reject_quoted_names: bool,
) -> Result<(Name, usize), ParseError> {
    let err = |col: usize, msg: &str| {
        ParseError::new(
            Position {
                line,
                column: u32::try_from(col + 1).unwrap_or(u32::MAX),
            },
            msg.to_string(),
        )
    };
    let start = text
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(text.len());
    let Some(eq) = text.iter().position(|&c| c == b'=') else {
        return Err(err(start, "expected 'Name = expression'"));
    };
    let name = text[start..eq.max(start)].trim_ascii_end();
    if name.is_empty() {
        return Err(err(start, "missing attribute name before '='"));
    }
    if reject_quoted_names && name[0] == b'\'' {
        return Err(err(start, "attribute name may not start with a quote"));
    }
    let Ok(name) = std::str::from_utf8(name) else {
        return Err(err(start, "attribute name is not valid UTF-8"));
    };
    Ok((Name::new(name), eq))
}

/// An error in the value after the `=` at `eq`, placed on its line.
fn place_value_error(mut e: ParseError, eq: usize, line: u32) -> ParseError {
    if e.position.line == 1 {
        e.position.column = e
            .position
            .column
            .saturating_add(u32::try_from(eq + 1).unwrap_or(0));
    }
    e.at_line(line)
}

/// A separator line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Separator {
    /// Line number (from 1).
    pub line: u32,
    /// How many `-` it starts with.
    pub dashes: usize,
    /// The text after the dashes, trimmed.
    pub text: String,
}

impl Separator {
    /// Startd-cron reading of the text, as HTCondor's startd reads it: the
    /// first word is the ad's tag unless it holds a `:`; then each word
    /// `update` or `update:<bool>` asks for (or, with a false value, against)
    /// an update at once. A value that is not a boolean asks for one.
    /// Words are split at blanks and commas; other words are ignored.
    pub fn cron_args(&self) -> (Option<String>, Option<bool>) {
        let mut words = self
            .text
            .split(|c: char| c.is_ascii_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
            .peekable();
        let tag = words.next_if(|w| !w.contains(':')).map(str::to_string);
        let mut update = None;
        for word in words {
            let value = match word.split_once(':') {
                Some(("update", v)) => v,
                None if word == "update" => "true",
                _ => continue,
            };
            update = Some(cron_bool(value).unwrap_or(true));
        }
        (tag, update)
    }
}

/// A boolean as the cron separator's `update:` reads it: `true`/`false`
/// in any case, or a number (non-zero is true); `None` for anything else.
fn cron_bool(text: &str) -> Option<bool> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("true") {
        Some(true)
    } else if t.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        t.parse::<f64>().ok().map(|n| n != 0.0)
    }
}

/// An ad read from old-syntax lines.
#[derive(Clone, Debug)]
pub struct OldAd {
    /// The attributes that parsed.
    pub ad: ClassAd,
    /// Lines that did not parse.
    pub errors: Vec<ParseError>,
    /// The attributes of the lines before the first that did not parse
    /// (what HTCondor's reader keeps of the ad); `None` when every line
    /// parsed.
    pub before_error: Option<ClassAd>,
    /// Line of the first attribute line.
    pub first_line: u32,
}

/// What the reader yields, in input order.
#[derive(Clone, Debug)]
pub enum OldItem {
    /// An ad (at least one non-blank line).
    Ad(OldAd),
    /// A separator line.
    Separator(Separator),
}

/// Reads old-syntax text into ads and separators.
#[derive(Clone, Debug)]
pub struct OldReader {
    /// Skip lines starting with `#` (the starter does; the startd's fetch
    /// parser does not, so there a comment makes the reply malformed).
    pub skip_comments: bool,
    /// A blank line ends an ad (`condor_status -long` output).
    pub blank_line_ends_ad: bool,
    /// Lines starting with `-` are separators.
    pub separators: bool,
    /// Refuse attribute names starting with a quote (the startd does for
    /// fetched job ads; other readers take the quote as part of the name).
    pub reject_quoted_names: bool,
    /// Parse limits.
    pub limits: Limits,
}

impl Default for OldReader {
    fn default() -> OldReader {
        OldReader {
            skip_comments: false,
            blank_line_ends_ad: false,
            separators: true,
            reject_quoted_names: false,
            limits: Limits::default(),
        }
    }
}

/// A line's name, the position of its `=` and its value text, or what was
/// wrong with it.
type SplitLine<'t> = Result<(Name, usize, &'t [u8]), ParseError>;

/// The lines of an ad being read, parsed together when it ends.
struct Pending<'t> {
    first_line: u32,
    /// The lines, with their numbers.
    lines: Vec<(u32, SplitLine<'t>)>,
    /// Bytes so far, and whether that went over the size limit (further
    /// lines are then dropped, unread).
    size: usize,
    oversized: bool,
}

impl Pending<'_> {
    /// Parses the values, one parser for all lines, and builds the ad.
    fn finish(self, limits: &Limits) -> OldAd {
        let values: Vec<&[u8]> = self
            .lines
            .iter()
            .filter_map(|(_, l)| l.as_ref().ok().map(|(_, _, v)| *v))
            .collect();
        let mut parsed = parse_expr_prefixes(&values, Syntax::Old, limits).into_iter();
        let mut ad = ClassAd::new();
        let mut before_error = None;
        let mut errors = Vec::new();
        for (lineno, line) in self.lines {
            let error = match line {
                Ok((name, eq, _)) => match parsed.next() {
                    Some(Ok(e)) => {
                        ad.insert(name, e);
                        continue;
                    }
                    Some(Err(e)) => place_value_error(e, eq, lineno),
                    None => continue,
                },
                Err(e) => e,
            };
            if errors.is_empty() {
                before_error = Some(ad.clone());
            }
            errors.push(error);
        }
        OldAd {
            ad,
            errors,
            before_error,
            first_line: self.first_line,
        }
    }
}

impl OldReader {
    /// Reads `text`.
    pub fn read(&self, text: &[u8]) -> Vec<OldItem> {
        let mut items = Vec::new();
        let mut cur: Option<Pending<'_>> = None;
        let limits = &self.limits;
        for (i, raw) in text.split(|&c| c == b'\n').enumerate() {
            let lineno = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let line = raw.trim_ascii();
            if line.is_empty() {
                if self.blank_line_ends_ad
                    && let Some(ad) = cur.take()
                {
                    items.push(OldItem::Ad(ad.finish(limits)));
                }
                continue;
            }
            if self.separators && line[0] == b'-' {
                if let Some(ad) = cur.take() {
                    items.push(OldItem::Ad(ad.finish(limits)));
                }
                let dashes = line.iter().take_while(|&&c| c == b'-').count();
                items.push(OldItem::Separator(Separator {
                    line: lineno,
                    dashes,
                    text: String::from_utf8_lossy(line[dashes..].trim_ascii()).into_owned(),
                }));
                continue;
            }
            if self.skip_comments && line[0] == b'#' {
                continue;
            }
            let ad = cur.get_or_insert_with(|| Pending {
                first_line: lineno,
                lines: Vec::new(),
                size: 0,
                oversized: false,
            });
            ad.size += raw.len() + 1;
            if ad.size > limits.max_text_bytes {
                if !ad.oversized {
                    ad.oversized = true;
                    let e = ParseError::new(
                        Position {
                            line: lineno,
                            column: 1,
                        },
                        format!(
                            "ad starting at line {} is more than the limit of {} bytes",
                            ad.first_line, limits.max_text_bytes
                        ),
                    );
                    ad.lines.push((lineno, Err(e)));
                }
                continue;
            }
            let split = split_line(line, lineno, self.reject_quoted_names)
                .map(|(name, eq)| (name, eq, &line[eq + 1..]));
            ad.lines.push((lineno, split));
        }
        if let Some(ad) = cur.take() {
            items.push(OldItem::Ad(ad.finish(limits)));
        }
        items
    }
}

/// Parses an ad written in either syntax: new if its first non-blank
/// character is `[`, else old-syntax lines read as HTCondor's reader does
/// (see [`read_ads_auto`]; blank lines do not split the ad). A line that
/// does not parse is logged as a warning.
pub fn parse_ad_auto(text: &[u8], limits: &Limits) -> Result<ClassAd, ParseError> {
    let (ad, warnings) = read_ad_auto(text, limits)?;
    log_skipped(&warnings);
    Ok(ad)
}

/// [`parse_ad_auto`], handing back the lines skipped instead of logging
/// them.
pub fn read_ad_auto(
    text: &[u8],
    limits: &Limits,
) -> Result<(ClassAd, Vec<ParseError>), ParseError> {
    if text.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'[') {
        return parse_ad_with(text, limits).map(|ad| (ad, Vec::new()));
    }
    if text.len() > limits.max_text_bytes {
        return Err(ParseError::new(
            Position { line: 1, column: 1 },
            format!(
                "ad is {} bytes, more than the limit of {} bytes",
                text.len(),
                limits.max_text_bytes
            ),
        ));
    }
    let (ads, warnings) = read_old(text, limits)?;
    let mut ad = ClassAd::new();
    for a in &ads {
        ad.update(a);
    }
    Ok((ad, warnings))
}

/// Reads a stream of ads in either syntax: new-syntax ads one after another,
/// or old-syntax ads separated by blank lines (as `condor_status -long`).
/// Old-syntax lines are read as HTCondor's reader does; see
/// [`read_ads_auto`]. Skipped lines are logged as warnings.
pub fn parse_ads_auto(text: &[u8], limits: &Limits) -> Result<Vec<ClassAd>, ParseError> {
    let (ads, warnings) = read_ads_auto(text, limits)?;
    log_skipped(&warnings);
    Ok(ads)
}

/// [`parse_ads_auto`], handing back what was skipped. As HTCondor's
/// old-syntax reader: `#` comment lines are skipped; an ad ends at its
/// first line that does not parse, keeping the lines before it, and the
/// rest of that ad (to the next blank line) is skipped, each such ad
/// giving one warning (the bad line and why). An ad whose very first line
/// does not parse is an error, unless it is the last ad and others came
/// before it (then it is left out, with a warning).
pub fn read_ads_auto(
    text: &[u8],
    limits: &Limits,
) -> Result<(Vec<ClassAd>, Vec<ParseError>), ParseError> {
    if text.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'[') {
        return super::parser::parse_ads_new(text, limits).map(|ads| (ads, Vec::new()));
    }
    read_old(text, limits)
}

fn read_old(text: &[u8], limits: &Limits) -> Result<(Vec<ClassAd>, Vec<ParseError>), ParseError> {
    let reader = OldReader {
        blank_line_ends_ad: true,
        separators: false,
        skip_comments: true,
        reject_quoted_names: false,
        limits: limits.clone(),
    };
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let ads: Vec<OldAd> = reader
        .read(text)
        .into_iter()
        .filter_map(|i| match i {
            OldItem::Ad(a) => Some(a),
            OldItem::Separator(_) => None,
        })
        .collect();
    let last = ads.len().saturating_sub(1);
    for (i, a) in ads.into_iter().enumerate() {
        match a.errors.into_iter().next() {
            None => out.push(a.ad),
            Some(e) => {
                let kept = a.before_error.unwrap_or_default();
                // Nothing of it read: HTCondor's reader cannot go on past it.
                if kept.is_empty() && i < last {
                    return Err(e);
                }
                warnings.push(e);
                if !kept.is_empty() {
                    out.push(kept);
                }
            }
        }
    }
    match warnings.first() {
        Some(e) if out.is_empty() => Err(e.clone()),
        _ => Ok((out, warnings)),
    }
}

fn log_skipped(warnings: &[ParseError]) {
    for w in warnings {
        tracing::warn!(message = "Old-syntax ad line refused; the ad ends before it.",
            line = w.position.line, column = w.position.column, cause = %w.message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_separators() {
        let text = b"A = 1\nB = \"x\"\n-----\nC = 2\n- mytag update:true\nD = 3\n";
        let items = OldReader::default().read(text);
        assert_eq!(items.len(), 5);
        assert!(matches!(&items[1], OldItem::Separator(s) if s.dashes == 5 && s.text.is_empty()));
        match &items[3] {
            OldItem::Separator(s) => {
                assert_eq!(s.cron_args(), (Some("mytag".to_string()), Some(true)));
            }
            other => panic!("expected a separator, got {other:?}"),
        }
    }

    #[test]
    fn bad_lines_are_reported_with_their_line() {
        let items = OldReader::default().read(b"A = 1\n# comment\nB = (\n");
        let OldItem::Ad(ad) = &items[0] else {
            panic!("expected an ad");
        };
        assert_eq!(ad.ad.len(), 1);
        assert_eq!(ad.errors.len(), 2);
        assert_eq!(ad.errors[0].position.line, 2);
        assert_eq!(ad.errors[1].position.line, 3);
    }

    #[test]
    fn one_bad_value_spoils_only_its_line() {
        // Values are parsed together; a bad one falls back to line by line
        // and is placed at its column.
        let text = b"A = 1 garbage\nB = -5\nC = (1 +\nD = \"x\" \"y\"\nE = A - 1\n";
        let items = OldReader::default().read(text);
        let OldItem::Ad(ad) = &items[0] else {
            panic!("expected an ad");
        };
        assert_eq!(ad.ad.len(), 4);
        assert_eq!(ad.errors.len(), 1);
        assert_eq!(ad.errors[0].position.line, 3);
        assert_eq!(ad.errors[0].position.column, 9);
        let env = super::super::FixedEnv::default();
        assert!(matches!(
            ad.ad.eval_attr("B", &env),
            super::super::Value::Int(-5)
        ));
        assert!(matches!(
            ad.ad.eval_attr("E", &env),
            super::super::Value::Int(0)
        ));
        // Old syntax does not join adjacent strings: the rest is ignored.
        assert!(
            matches!(ad.ad.eval_attr("D", &env), super::super::Value::Str(s) if s.as_bytes() == b"x")
        );
    }

    #[test]
    fn names_are_not_checked() {
        let r = parse_line(b"  My Attr = 5", 1, &Limits::default());
        assert!(matches!(r, Ok((n, _)) if n.as_str() == "My Attr"));
        assert!(parse_line_with(b"'q' = 5", 1, &Limits::default(), true).is_err());
        let r = parse_line(b"'q' = 5", 1, &Limits::default());
        assert!(matches!(r, Ok((n, _)) if n.as_str() == "'q'"));
        let r = parse_line(b"A = 1 2", 1, &Limits::default());
        assert!(matches!(r, Ok((_, Expr::Lit(super::super::Value::Int(1))))));
    }

    #[test]
    fn cron_separator_args_read_as_the_startd_reads_them() {
        let args = |text: &str| {
            Separator {
                line: 1,
                dashes: 1,
                text: text.into(),
            }
            .cron_args()
        };
        let tag = |t: &str| Some(t.to_string());
        assert_eq!(args(""), (None, None));
        assert_eq!(args("s1"), (tag("s1"), None));
        assert_eq!(args("s1 update:true"), (tag("s1"), Some(true)));
        assert_eq!(args("s1, update:False"), (tag("s1"), Some(false)));
        assert_eq!(args("update:false"), (None, Some(false)));
        // The first word holds a ':': not a tag, and later words are not.
        assert_eq!(args("update:true s2"), (None, Some(true)));
        assert_eq!(args("s1 update"), (tag("s1"), Some(true)));
        assert_eq!(args("s1 update:0"), (tag("s1"), Some(false)));
        assert_eq!(args("s1 update:maybe"), (tag("s1"), Some(true)));
        // Only `update` exactly.
        assert_eq!(args("s1 Update:false updates:false"), (tag("s1"), None));
    }
}
