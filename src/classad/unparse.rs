//! Printing ads, expressions and values exactly as HTCondor does.
//!
//! * New syntax, compact (`[ a = 1; b = { 1,2 } ]`): what HTCondor's
//!   unparser writes; reals as `%1.15E`, strings with C escapes and octal for
//!   non-printable bytes, attributes in HTCondor's library order.
//! * New syntax, pretty: the indented form of `unparse()` and of a ClassAd
//!   printed by HTCondor's Python bindings.
//! * Old syntax (`Name = expr` lines): reals as `%.16G`, strings with only the
//!   quote escaped, `=?=` and `=!=` for `is` and `isnt`; this is how HTCondor
//!   writes ads to hooks, in byte order of attribute names.
//! * JSON, as HTCondor's JSON writer: literals as JSON values, anything else
//!   as the string `"\/Expr(...)\/"`.

use std::fmt::Write as _;

use super::ad::ClassAd;
use super::ast::{BinOp, Expr, UnOp};
use super::cfmt::{fmt_e, fmt_g_into};
use super::name::needs_quoting;
use super::timefmt::{abstime_to_string, reltime_to_string};
use super::value::{AbsTime, Value};

/// Which syntax to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// New ClassAd syntax.
    New,
    /// Old ClassAd syntax.
    Old,
}

struct Printer {
    syntax: Syntax,
    /// `Some(level)` for the pretty form.
    pretty: Option<usize>,
    out: String,
}

fn binop_str(op: BinOp, syntax: Syntax) -> &'static str {
    match op {
        BinOp::Or => " || ",
        BinOp::And => " && ",
        BinOp::BitOr => " | ",
        BinOp::BitXor => " ^ ",
        BinOp::BitAnd => " & ",
        BinOp::Eq => " == ",
        BinOp::Ne => " != ",
        BinOp::Is if syntax == Syntax::Old => " =?= ",
        BinOp::Isnt if syntax == Syntax::Old => " =!= ",
        BinOp::Is => " is ",
        BinOp::Isnt => " isnt ",
        BinOp::Lt => " < ",
        BinOp::Le => " <= ",
        BinOp::Gt => " > ",
        BinOp::Ge => " >= ",
        BinOp::Shl => " << ",
        BinOp::Shr => " >> ",
        BinOp::Ushr => " >>> ",
        BinOp::Add => " + ",
        BinOp::Sub => " - ",
        BinOp::Mul => " * ",
        BinOp::Div => " / ",
        BinOp::Mod => " % ",
    }
}

fn unop_str(op: UnOp) -> &'static str {
    match op {
        UnOp::Neg => " -",
        UnOp::Plus => " +",
        UnOp::Not => " !",
        UnOp::BitNot => " ~",
    }
}

/// Whether [`escape_into`] writes byte `c` as anything but itself.
fn needs_escape(c: u8, delim: u8, syntax: Syntax) -> bool {
    c == delim || (syntax == Syntax::New && (c == b'\\' || !(0x20..=0x7e).contains(&c)))
}

/// `bytes` as the body of a quoted string or name, when it needs no
/// escaping and is valid UTF-8 (the common case, written without a copy).
fn plain(bytes: &[u8], delim: u8, syntax: Syntax) -> Option<&str> {
    if bytes.iter().any(|&c| needs_escape(c, delim, syntax)) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// Writes the body of a quoted string or name. New syntax escapes like C
/// and writes non-printable bytes in octal; old syntax escapes only the
/// delimiter.
fn escape_into(out: &mut Vec<u8>, bytes: &[u8], delim: u8, syntax: Syntax) {
    for &c in bytes {
        if !needs_escape(c, delim, syntax) {
            out.push(c);
            continue;
        }
        if c == delim {
            out.push(b'\\');
            out.push(c);
            continue;
        }
        // New syntax: a C escape, else octal.
        let esc: &[u8] = match c {
            0x07 => b"\\a",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x0b => b"\\v",
            b'\\' => b"\\\\",
            _ => {
                out.extend_from_slice(format!("\\{c:03o}").as_bytes());
                continue;
            }
        };
        out.extend_from_slice(esc);
    }
}

fn push_bytes(s: &mut String, b: &[u8]) {
    s.push_str(&String::from_utf8_lossy(b));
}

/// A real as HTCondor prints it, appended to `out`; old syntax's finite
/// reals (every ad printed for a hook) allocate nothing.
fn write_real(out: &mut String, r: f64, syntax: Syntax) {
    if r == 0.0 {
        out.push_str(if r.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    if r.is_nan() {
        out.push_str("real(\"NaN\")");
        return;
    }
    if r.is_infinite() {
        out.push_str(if r > 0.0 {
            "real(\"INF\")"
        } else {
            "real(\"-INF\")"
        });
        return;
    }
    match syntax {
        // HTCondor's 16 significant digits, unless they do not read back
        // as the same double: then 17, which always do (HTCondor would
        // print a slightly different number).
        Syntax::New => {
            let s = fmt_e(r, 15, true);
            if s.parse::<f64>().is_ok_and(|back| back == r) {
                out.push_str(&s);
            } else {
                out.push_str(&fmt_e(r, 16, true));
            }
        }
        // `%.16G`, with `.0` when that reads as an integer.
        Syntax::Old => {
            let start = out.len();
            fmt_g_into(out, r, 16, true);
            if !out[start..].contains(['.', 'E', 'e']) {
                out.push_str(".0");
            }
        }
    }
}

impl Printer {
    fn new(syntax: Syntax, pretty: bool) -> Printer {
        Printer {
            syntax,
            pretty: pretty.then_some(0),
            out: String::new(),
        }
    }

    fn name(&mut self, name: &str) {
        let quoted = needs_quoting(name);
        if quoted {
            self.out.push('\'');
        }
        self.body(name.as_bytes(), b'\'');
        if quoted {
            self.out.push('\'');
        }
    }

    fn string(&mut self, bytes: &[u8]) {
        self.out.push('"');
        self.body(bytes, b'"');
        self.out.push('"');
    }

    /// The escaped body of a name or string delimited by `delim`.
    fn body(&mut self, bytes: &[u8], delim: u8) {
        if let Some(text) = plain(bytes, delim, self.syntax) {
            self.out.push_str(text);
            return;
        }
        let mut body = Vec::with_capacity(bytes.len() + 8);
        escape_into(&mut body, bytes, delim, self.syntax);
        push_bytes(&mut self.out, &body);
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::Undefined => self.out.push_str("undefined"),
            Value::Error => self.out.push_str("error"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                // Formatted straight into the output (writing to a String
                // cannot fail).
                let _ = write!(self.out, "{i}");
            }
            Value::Real(r) => write_real(&mut self.out, *r, self.syntax),
            Value::Str(s) => self.string(s.as_bytes()),
            Value::AbsTime(t) => self.abstime(*t),
            Value::RelTime(t) => {
                #[allow(clippy::cast_precision_loss)]
                let secs = super::convert::reltime_secs(*t) as f64;
                self.reltime(secs);
            }
            Value::List(l) => self.list(l.items()),
            Value::Ad(a) => match a.classad() {
                Some(ad) => self.ad(ad),
                None => self.ad(&ClassAd::new()),
            },
        }
    }

    fn abstime(&mut self, t: AbsTime) {
        self.out.push_str("absTime(\"");
        self.out.push_str(&abstime_to_string(t));
        self.out.push_str("\")");
    }

    fn reltime(&mut self, secs: f64) {
        self.out.push_str("relTime(\"");
        self.out.push_str(&reltime_to_string(secs));
        self.out.push_str("\")");
    }

    fn newline(&mut self, level: usize) {
        self.out.push('\n');
        self.out.extend(std::iter::repeat_n(' ', level));
    }

    fn list(&mut self, items: &[Expr]) {
        if let Some(level) = self.pretty {
            let inner = level + 3;
            self.newline(inner);
            self.out.push('{');
            self.pretty = Some(inner + 3);
            for (i, e) in items.iter().enumerate() {
                self.newline(inner + 3);
                self.expr(e);
                if i + 1 < items.len() {
                    self.out.push(',');
                }
            }
            self.newline(inner);
            self.out.push('}');
            self.pretty = Some(level);
            return;
        }
        self.out.push_str("{ ");
        for (i, e) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.expr(e);
        }
        self.out.push_str(" }");
    }

    fn ad(&mut self, ad: &ClassAd) {
        let attrs = ad.iter_library_order();
        if let Some(level) = self.pretty {
            let inner = level + 4;
            self.newline(inner);
            self.out.push('[');
            self.pretty = Some(inner + 4);
            for (i, (n, e)) in attrs.iter().enumerate() {
                self.newline(inner + 4);
                self.name(n.as_str());
                self.out.push_str(" = ");
                self.expr(e);
                if i + 1 < attrs.len() {
                    self.out.push_str("; ");
                }
            }
            self.newline(inner);
            self.out.push(']');
            self.pretty = Some(level);
            return;
        }
        self.out.push_str("[ ");
        for (i, (n, e)) in attrs.iter().enumerate() {
            if i > 0 {
                self.out.push_str("; ");
            }
            self.name(n.as_str());
            self.out.push_str(" = ");
            self.expr(e);
        }
        self.out.push_str(" ]");
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Lit(v) => self.value(v),
            Expr::RelTimeLit(r) => self.reltime(*r),
            Expr::AbsTimeLit(t) => self.abstime(*t),
            Expr::Attr(n) => self.name(n.as_str()),
            Expr::AbsAttr(n) => {
                self.out.push('.');
                self.name(n.as_str());
            }
            Expr::Select(base, n) => {
                self.expr(base);
                // `1.x` would read back as a malformed real: HTCondor prints
                // it so, Roost separates the dot.
                if matches!(**base, Expr::Lit(Value::Int(_))) {
                    self.out.push(' ');
                }
                self.out.push('.');
                // Quoted when it must be, unlike HTCondor, which prints
                // `a.'b c'` as the unreadable `a.b c`.
                self.name(n.as_str());
            }
            Expr::Unary(op, x) => {
                self.out.push_str(unop_str(*op));
                self.expr(x);
            }
            Expr::Binary(b) => {
                for _ in 0..b.parens {
                    self.out.push('(');
                }
                self.expr(&b.lhs);
                self.out.push_str(binop_str(b.op, self.syntax));
                self.expr(&b.rhs);
                for _ in 0..b.parens {
                    self.out.push(')');
                }
            }
            Expr::Cond(c, a, b) => {
                self.expr(c);
                self.out.push_str(" ? ");
                self.expr(a);
                self.out.push_str(" : ");
                self.expr(b);
            }
            Expr::Elvis(a, b) => {
                self.expr(a);
                self.out.push_str(" ?: ");
                self.expr(b);
            }
            Expr::Paren(x) => {
                self.out.push('(');
                self.expr(x);
                self.out.push(')');
            }
            Expr::Index(l, i) => {
                self.expr(l);
                self.out.push('[');
                self.expr(i);
                self.out.push(']');
            }
            Expr::Call(c) => {
                self.out.push_str(&c.name);
                self.out.push('(');
                for (i, a) in c.args.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.expr(a);
                }
                self.out.push(')');
            }
            Expr::List(items) => self.list(items),
            Expr::Ad(ad) => self.ad(ad),
        }
    }
}

/// An expression in compact new syntax.
pub fn expr_to_string(e: &Expr) -> String {
    let mut p = Printer::new(Syntax::New, false);
    p.expr(e);
    p.out
}

/// An expression in the given syntax.
pub fn expr_to_string_in(e: &Expr, syntax: Syntax) -> String {
    let mut p = Printer::new(syntax, false);
    p.expr(e);
    p.out
}

/// An expression in HTCondor's pretty (indented) new syntax.
pub fn pretty_expr(e: &Expr) -> String {
    let mut p = Printer::new(Syntax::New, true);
    p.expr(e);
    p.out
}

/// A value as a ClassAd literal in compact new syntax.
pub fn value_to_string(v: &Value) -> String {
    let mut p = Printer::new(Syntax::New, false);
    p.value(v);
    p.out
}

/// An ad in compact new syntax.
pub fn ad_to_string(ad: &ClassAd) -> String {
    let mut p = Printer::new(Syntax::New, false);
    p.ad(ad);
    p.out
}

/// An ad in pretty new syntax (leading newline included, as HTCondor).
pub fn ad_to_pretty(ad: &ClassAd) -> String {
    let mut p = Printer::new(Syntax::New, true);
    p.ad(ad);
    p.out
}

/// Order of the lines of an old-syntax ad.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OldOrder {
    /// Byte order of names: how HTCondor writes ads to hooks and files.
    Bytes,
    /// HTCondor's library order (length, then case-insensitive).
    Library,
}

/// An ad in old syntax: one `Name = expr` line per attribute. Names that
/// are not identifiers are quoted as HTCondor's unparser quotes them. In
/// library order an empty ad is a lone newline, as HTCondor prints it; in
/// byte order (hook input) it is empty.
pub fn ad_to_old(ad: &ClassAd, order: OldOrder) -> String {
    let attrs = match order {
        OldOrder::Bytes => ad.iter_byte_order(),
        OldOrder::Library => ad.iter_library_order(),
    };
    let mut p = Printer::new(Syntax::Old, false);
    if attrs.is_empty() && order == OldOrder::Library {
        p.out.push('\n');
    }
    for (n, e) in attrs {
        p.name(n.as_str());
        p.out.push_str(" = ");
        p.expr(e);
        p.out.push('\n');
    }
    p.out
}

fn json_string(out: &mut String, bytes: &[u8]) {
    let mut b: Vec<u8> = Vec::with_capacity(bytes.len() + 2);
    b.push(b'"');
    for &c in bytes {
        match c {
            b'"' => b.extend_from_slice(b"\\\""),
            b'\\' => b.extend_from_slice(b"\\\\"),
            0x08 => b.extend_from_slice(b"\\b"),
            0x0c => b.extend_from_slice(b"\\f"),
            b'\n' => b.extend_from_slice(b"\\n"),
            b'\r' => b.extend_from_slice(b"\\r"),
            b'\t' => b.extend_from_slice(b"\\t"),
            c if c < 0x20 => b.extend_from_slice(format!("\\u{c:04x}").as_bytes()),
            c => b.push(c),
        }
    }
    b.push(b'"');
    push_bytes(out, &b);
}

fn json_expr(out: &mut String, e: &Expr, level: usize) {
    let indent = |out: &mut String, n: usize| out.extend(std::iter::repeat_n(' ', n));
    match e {
        Expr::Lit(Value::Undefined) => out.push_str("null"),
        Expr::Lit(Value::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
        Expr::Lit(Value::Int(i)) => {
            let _ = write!(out, "{i}");
        }
        Expr::Lit(Value::Real(r)) if r.is_finite() => {
            write_real(out, *r, Syntax::Old);
        }
        Expr::Lit(Value::Str(s)) => json_string(out, s.as_bytes()),
        Expr::RelTimeLit(r) if r.is_finite() => write_real(out, *r, Syntax::Old),
        Expr::List(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                indent(out, level + 2);
                json_expr(out, item, level + 2);
                if i + 1 < items.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(out, level);
            out.push(']');
        }
        Expr::Ad(ad) => json_ad_body(out, ad, level),
        other => {
            // The unparsed text is escaped as a JSON string, inside the
            // \/Expr( )\/ markers.
            let mut inner = String::new();
            json_string(&mut inner, expr_to_string(other).as_bytes());
            out.push_str("\"\\/Expr(");
            out.push_str(&inner[1..inner.len() - 1]);
            out.push_str(")\\/\"");
        }
    }
}

fn json_ad_body(out: &mut String, ad: &ClassAd, level: usize) {
    json_ad_body_in(out, ad, level, OldOrder::Library);
}

fn json_ad_body_in(out: &mut String, ad: &ClassAd, level: usize, order: OldOrder) {
    out.push_str("{\n");
    let attrs = match order {
        OldOrder::Bytes => ad.iter_byte_order(),
        OldOrder::Library => ad.iter_library_order(),
    };
    for (i, (n, e)) in attrs.iter().enumerate() {
        out.extend(std::iter::repeat_n(' ', level + 2));
        json_string(out, n.as_str().as_bytes());
        out.push_str(": ");
        json_expr(out, e, level + 2);
        if i + 1 < attrs.len() {
            out.push(',');
        }
        out.push('\n');
    }
    out.extend(std::iter::repeat_n(' ', level));
    out.push('}');
}

/// An ad as HTCondor's JSON writer prints it.
pub fn ad_to_json(ad: &ClassAd) -> String {
    let mut out = String::new();
    json_ad_body(&mut out, ad, 0);
    out
}

/// Ads as HTCondor's query tools print them with `-json` (`condor_status`,
/// `condor_q`): one JSON array, each ad's attributes in the byte order of
/// their names (the order of `-long`), the ads separated by a line holding
/// a comma. No ads: an empty array.
pub fn ads_to_json_list(ads: &[ClassAd]) -> String {
    let mut out = String::from("[\n");
    for (i, ad) in ads.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        json_ad_body_in(&mut out, ad, 0, OldOrder::Bytes);
        out.push('\n');
    }
    out.push_str("]\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parser::{parse_ad, parse_expr};

    fn round(s: &str) -> String {
        parse_expr(s)
            .map(|e| expr_to_string(&e))
            .unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn prints_like_htcondor() {
        assert_eq!(
            round("a.b[2] =?= (c ? d : e) ?: f"),
            "a.b[2] is (c ? d : e) ?: f"
        );
        assert_eq!(round("- 5"), " -5");
        assert_eq!(round("-5"), "-5");
        assert_eq!(
            round("{1, 2.5, \"a\\\\b\"}"),
            "{ 1,2.500000000000000E+00,\"a\\\\b\" }"
        );
        assert_eq!(round("{}"), "{  }");
        assert_eq!(round("[]"), "[  ]");
        assert_eq!(round("'a b' + 'true'"), "'a b' + 'true'");
        assert_eq!(round("f(1;2)"), "f(1,2)");
        assert_eq!(round("\"\\303\\251\""), "\"\\303\\251\"");
    }

    #[test]
    fn old_syntax_lines() {
        let ad = parse_ad("[b = 1.0 / 3; A = \"q\\\"\"; c = x =?= y]").unwrap_or_default();
        assert_eq!(
            ad_to_old(&ad, OldOrder::Bytes),
            "A = \"q\\\"\"\nb = 1.0 / 3\nc = x =?= y\n"
        );
    }

    #[test]
    fn json_lists_as_the_query_tools_print_them() {
        let a = parse_ad("[b = 1; A = \"x\"; c = {}]").unwrap_or_default();
        let b = parse_ad("[Name = \"slot2\"]").unwrap_or_default();
        assert_eq!(
            ads_to_json_list(&[a, b]),
            "[\n{\n  \"A\": \"x\",\n  \"b\": 1,\n  \"c\": [\n  ]\n}\n,\n{\n  \"Name\": \"slot2\"\n}\n]\n"
        );
        assert_eq!(ads_to_json_list(&[]), "[\n]\n");
        let parsed: serde_json::Value =
            serde_json::from_str(&ads_to_json_list(&[
                parse_ad("[x = a + 1; u = undefined]").unwrap_or_default()
            ]))
            .unwrap_or_default();
        assert_eq!(parsed[0]["x"], "/Expr(a + 1)/");
        assert!(parsed[0]["u"].is_null());
    }

    #[test]
    fn json_form() {
        let ad = parse_ad("[i = 5; r = 2.5; s = \"a\\tb\"; u = undefined; x = a + 1; l = {}]")
            .unwrap_or_default();
        assert_eq!(
            ad_to_json(&ad),
            "{\n  \"i\": 5,\n  \"l\": [\n  ],\n  \"r\": 2.5,\n  \"s\": \"a\\tb\",\n  \"u\": null,\n  \"x\": \"\\/Expr(a + 1)\\/\"\n}"
        );
    }
}
