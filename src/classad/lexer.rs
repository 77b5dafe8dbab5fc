//! The ClassAd lexer: bytes to tokens.
//!
//! Hand-written, one pass, never panics. It follows HTCondor's lexer on the
//! odd corners: integers with a leading zero (octal or hex) are rejected,
//! a `-` directly before a number after an operator is part of the number,
//! adjacent string literals are joined *before* escapes are converted, and
//! `\0` in a string is an error. In old syntax (the `Name = expr` lines of
//! hooks) strings have no escapes except a backslash before a quote that is
//! followed by more text.

use std::cell::Cell;

use super::error::{ParseError, Position};
use super::limits::Limits;
use super::name::{Name, intern_ident};

/// A token. Payloads (numbers, strings and identifiers) live in [`Lexed`]
/// tables, so tokens are small and `Copy`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Tok {
    Int(u32),
    Real(u32),
    Str(u32),
    Ident(u32),
    /// An identifier followed by `(`: a function name.
    Func(u32),
    /// The end of one of several inputs lexed together (never produced by
    /// lexing text).
    EndOfLine,
    True,
    False,
    Undefined,
    Error,
    LParen,
    RParen,
    LBrack,
    RBrack,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Dot,
    Question,
    Colon,
    Assign,
    OrOr,
    AndAnd,
    Bar,
    Caret,
    Amp,
    EqEq,
    NotEq,
    MetaEq,
    MetaNe,
    Lt,
    Le,
    Gt,
    Ge,
    Shl,
    Shr,
    Ushr,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Bang,
    Tilde,
}

impl Tok {
    /// How the token is written, for error messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Tok::Int(_) => "an integer",
            Tok::Real(_) => "a real",
            Tok::Str(_) => "a string",
            Tok::Ident(_) => "an attribute name",
            Tok::Func(_) => "a function name",
            Tok::EndOfLine => "end of line",
            Tok::True => "'true'",
            Tok::False => "'false'",
            Tok::Undefined => "'undefined'",
            Tok::Error => "'error'",
            Tok::LParen => "'('",
            Tok::RParen => "')'",
            Tok::LBrack => "'['",
            Tok::RBrack => "']'",
            Tok::LBrace => "'{'",
            Tok::RBrace => "'}'",
            Tok::Comma => "','",
            Tok::Semi => "';'",
            Tok::Dot => "'.'",
            Tok::Question => "'?'",
            Tok::Colon => "':'",
            Tok::Assign => "'='",
            Tok::OrOr => "'||'",
            Tok::AndAnd => "'&&'",
            Tok::Bar => "'|'",
            Tok::Caret => "'^'",
            Tok::Amp => "'&'",
            Tok::EqEq => "'=='",
            Tok::NotEq => "'!='",
            Tok::MetaEq => "'=?='",
            Tok::MetaNe => "'=!='",
            Tok::Lt => "'<'",
            Tok::Le => "'<='",
            Tok::Gt => "'>'",
            Tok::Ge => "'>='",
            Tok::Shl => "'<<'",
            Tok::Shr => "'>>'",
            Tok::Ushr => "'>>>'",
            Tok::Plus => "'+'",
            Tok::Minus => "'-'",
            Tok::Star => "'*'",
            Tok::Slash => "'/'",
            Tok::Percent => "'%'",
            Tok::Bang => "'!'",
            Tok::Tilde => "'~'",
        }
    }

    /// Whether a `-` after this token is the binary operator.
    fn ends_operand(&self) -> bool {
        matches!(
            self,
            Tok::Int(_)
                | Tok::Real(_)
                | Tok::True
                | Tok::False
                | Tok::Str(_)
                | Tok::Undefined
                | Tok::Error
                | Tok::Ident(_)
                | Tok::Func(_)
                | Tok::Dot
                | Tok::RBrack
                | Tok::RParen
                | Tok::RBrace
        )
    }
}

/// Which string syntax to lex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// New ClassAd syntax: C-like escapes in strings.
    New,
    /// Old ClassAd syntax (hook `Name = expr` lines): raw strings.
    Old,
}

/// The tokens of one input and their payloads.
pub(crate) struct Lexed {
    pub(crate) toks: Vec<Tok>,
    /// Byte offset of each token in the input, when asked for (see
    /// [`Lexed::offset_of`]).
    pub(crate) offsets: Vec<u32>,
    syntax: Syntax,
    pub(crate) strings: Vec<Vec<u8>>,
    pub(crate) idents: Vec<Name>,
    pub(crate) ints: Vec<i64>,
    pub(crate) reals: Vec<f64>,
    /// Byte length of the input (the position of end of input).
    pub(crate) end: u32,
}

impl Lexed {
    fn with_capacity(n: usize) -> Lexed {
        Lexed {
            toks: Vec::with_capacity(n),
            offsets: Vec::with_capacity(n),
            strings: Vec::new(),
            idents: Vec::new(),
            ints: Vec::new(),
            reals: Vec::new(),
            syntax: Syntax::New,
            end: 0,
        }
    }

    /// Byte offset in `src` (the lexed input) of token `i`, or of the end
    /// of input past the last token. Offsets are only recorded when asked
    /// for ([`lex_with_offsets`]); otherwise, as for error messages, the
    /// input is lexed again to find them.
    pub(crate) fn offset_of(&self, src: &[u8], limits: &Limits, i: usize) -> usize {
        if self.offsets.len() == self.toks.len() {
            return self
                .offsets
                .get(i)
                .map_or(self.end as usize, |&o| o as usize);
        }
        token_offset(src, self.syntax, limits, i)
    }
}

/// Byte offset in `src` of its token `i` in `syntax`, or of the end of
/// input past the last token, found by lexing `src` again (for error
/// messages, which are rare enough not to record every offset).
pub(crate) fn token_offset(src: &[u8], syntax: Syntax, limits: &Limits, i: usize) -> usize {
    let mut lx = Lexer::new(src, syntax, limits, true);
    let _ = lx.run();
    let at = lx.out.offsets.get(i).map_or(src.len(), |&o| o as usize);
    recycle(lx.out);
    at
}

thread_local! {
    /// The buffers of the last lexed input, kept for the next one.
    static SPARE: Cell<Option<Box<Lexed>>> = const { Cell::new(None) };
}

/// Returns a `Lexed` whose buffers the next [`lex`] on this thread may
/// reuse (saving its allocations). Large ones are freed instead. (A
/// `Lexed` travels boxed: moving its six buffers by value in and out of
/// the thread's slot was a sixth of a short parse.)
pub(crate) fn recycle(mut lexed: Box<Lexed>) {
    if lexed.toks.capacity() <= 4096 && lexed.strings.capacity() <= 256 {
        lexed.toks.clear();
        lexed.offsets.clear();
        lexed.strings.clear();
        lexed.idents.clear();
        lexed.ints.clear();
        lexed.reals.clear();
        SPARE.with(|s| s.set(Some(lexed)));
    }
}

/// Tokenizes as much of `src` as can be: the tokens before the first
/// lexical error (old-syntax values ignore whatever follows a complete
/// expression, even text that is not a token).
pub(crate) fn lex_prefix(src: &[u8], syntax: Syntax, limits: &Limits) -> Box<Lexed> {
    let mut lx = Lexer::new(src, syntax, limits, false);
    let _ = lx.run();
    lx.out
}

/// Appends the tokens of as much of `src` as can be ([`lex_prefix`]) to
/// `out`, sharing its tables: many short inputs lexed into one `Lexed` are
/// then parsed by one parser (see `parser::parse_expr_prefixes`). Returns
/// the range of `out.toks` that holds them.
pub(crate) fn lex_prefix_into(
    out: Box<Lexed>,
    src: &[u8],
    syntax: Syntax,
    limits: &Limits,
) -> (Box<Lexed>, std::ops::Range<usize>) {
    let first = out.toks.len();
    let mut lx = Lexer {
        src,
        pos: 0,
        syntax,
        limits,
        offsets: false,
        first_tok: first,
        out,
    };
    let _ = lx.run();
    let end = lx.out.toks.len();
    (lx.out, first..end)
}

/// An empty `Lexed` for [`lex_prefix_into`], reusing this thread's spare
/// buffers.
pub(crate) fn lexed_for(syntax: Syntax) -> Box<Lexed> {
    spare(syntax, 0, 64)
}

/// This thread's spare buffers (or new ones of `capacity` tokens), set for
/// an input of `end` bytes.
fn spare(syntax: Syntax, end: u32, capacity: usize) -> Box<Lexed> {
    let mut lexed = SPARE
        .with(Cell::take)
        .unwrap_or_else(|| Box::new(Lexed::with_capacity(capacity)));
    lexed.end = end;
    lexed.syntax = syntax;
    lexed
}

/// Tokenizes `src`.
pub(crate) fn lex(src: &[u8], syntax: Syntax, limits: &Limits) -> Result<Box<Lexed>, ParseError> {
    let mut lx = Lexer::new(src, syntax, limits, false);
    lx.run()?;
    Ok(lx.out)
}

/// Tokenizes `src`, recording the offset of every token.
pub(crate) fn lex_with_offsets(
    src: &[u8],
    syntax: Syntax,
    limits: &Limits,
) -> Result<Box<Lexed>, ParseError> {
    let mut lx = Lexer::new(src, syntax, limits, true);
    lx.run()?;
    Ok(lx.out)
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    syntax: Syntax,
    limits: &'a Limits,
    offsets: bool,
    /// Index in `out.toks` of this input's first token.
    first_tok: usize,
    out: Box<Lexed>,
}

/// Byte classes, looked up in [`CLASS`].
const SPACE: u8 = 1;
const WORD: u8 = 2;
const DIGIT: u8 = 4;

#[allow(clippy::cast_possible_truncation)] // i < 256
const fn classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            SPACE
        } else if c.is_ascii_digit() {
            WORD | DIGIT
        } else if c.is_ascii_alphabetic() || c == b'_' {
            WORD
        } else {
            0
        };
        i += 1;
    }
    t
}

static CLASS: [u8; 256] = classes();

#[inline(always)]
fn is_space(c: u8) -> bool {
    CLASS[usize::from(c)] & SPACE != 0
}

impl<'a> Lexer<'a> {
    fn new(src: &'a [u8], syntax: Syntax, limits: &'a Limits, offsets: bool) -> Lexer<'a> {
        Lexer {
            src,
            pos: 0,
            syntax,
            limits,
            offsets,
            first_tok: 0,
            out: spare(syntax, to_u32(src.len()), src.len() / 4 + 4),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<u8> {
        self.src.get(self.pos + n).copied()
    }

    fn err(&self, at: usize, message: impl Into<String>) -> ParseError {
        ParseError::new(Position::from_offset(self.src, at), message)
    }

    fn push(&mut self, tok: Tok, at: usize) {
        self.out.toks.push(tok);
        if self.offsets {
            self.out.offsets.push(to_u32(at));
        }
    }

    fn push_real(&mut self, v: f64, at: usize) {
        let idx = to_u32(self.out.reals.len());
        self.out.reals.push(v);
        self.push(Tok::Real(idx), at);
    }

    fn run(&mut self) -> Result<(), ParseError> {
        let src = self.src;
        loop {
            let mut start = self.pos;
            while start < src.len() && is_space(src[start]) {
                start += 1;
            }
            self.pos = start;
            let Some(&c) = src.get(start) else {
                return Ok(());
            };
            match c {
                0 => return Ok(()),
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.word(start),
                b'0'..=b'9' => self.number(start)?,
                b'/' if matches!(src.get(start + 1), Some(b'/' | b'*')) => self.comment(start)?,
                b'-' if self.minus_starts_number() => self.number(start)?,
                b'.' if self.peek_at(1).is_some_and(|d| d.is_ascii_digit()) => {
                    self.number(start)?;
                }
                b'"' => {
                    let bytes = self.string(b'"', start)?;
                    let idx = to_u32(self.out.strings.len());
                    self.out.strings.push(bytes);
                    self.push(Tok::Str(idx), start);
                }
                b'\'' => {
                    let bytes = self.string(b'\'', start)?;
                    let text = String::from_utf8(bytes)
                        .map_err(|_| self.err(start, "quoted attribute name is not valid UTF-8"))?;
                    let idx = to_u32(self.out.idents.len());
                    self.out.idents.push(Name::new(&text));
                    self.push(Tok::Ident(idx), start);
                }
                _ => self.punct(start)?,
            }
        }
    }

    /// Whether the `-` at the current position is the sign of a number: it
    /// is when a number follows and the previous token does not end an
    /// operand (so `a-1` is a subtraction and `a*-1` a negative literal).
    fn minus_starts_number(&self) -> bool {
        let prev = self
            .out
            .toks
            .len()
            .checked_sub(1)
            .filter(|&i| i >= self.first_tok);
        !prev.is_some_and(|i| self.out.toks[i].ends_operand()) && self.number_follows_minus()
    }

    /// Skips the comment at `start`.
    #[cold]
    fn comment(&mut self, start: usize) -> Result<(), ParseError> {
        if self.peek_at(1) == Some(b'/') {
            // HTCondor rejects a line comment that is not ended by a
            // newline.
            loop {
                match self.peek() {
                    None | Some(0) => {
                        return Err(self.err(start, "comment not ended by a newline"));
                    }
                    Some(b'\n') => return Ok(()),
                    Some(_) => self.pos += 1,
                }
            }
        }
        self.pos += 2;
        loop {
            match self.peek() {
                None | Some(0) => return Err(self.err(start, "unterminated comment")),
                Some(b'*') if self.peek_at(1) == Some(b'/') => {
                    self.pos += 2;
                    return Ok(());
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    fn number_follows_minus(&self) -> bool {
        match self.peek_at(1) {
            Some(d) if d.is_ascii_digit() => true,
            Some(b'.') => self.peek_at(2).is_some_and(|d| d.is_ascii_digit()),
            _ => false,
        }
    }

    fn digits(&mut self) -> usize {
        let src = self.src;
        let start = self.pos;
        let mut pos = start;
        while pos < src.len() && CLASS[usize::from(src[pos])] & DIGIT != 0 {
            pos += 1;
        }
        self.pos = pos;
        pos - start
    }

    /// Lexes a number starting at `start` (which may be a `-`).
    fn number(&mut self, start: usize) -> Result<(), ParseError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        let int_digits = self.digits();
        let mut real = false;
        let mut frac = (0, 0);
        if self.peek() == Some(b'.') {
            self.pos += 1;
            let frac_start = self.pos;
            if self.digits() == 0 {
                return Err(self.err(start, "expected digits after the decimal point"));
            }
            frac = (frac_start, self.pos);
            real = true;
        }
        if real && !matches!(self.peek(), Some(b'e' | b'E')) {
            let int_part = &self.src[int_start..int_start + int_digits];
            let frac_part = &self.src[frac.0..frac.1];
            if let Some(v) = exact_decimal(int_part, frac_part) {
                let v = if int_start > start { -v } else { v };
                self.push_real(v, start);
                return Ok(());
            }
        }
        if (int_digits > 0 || real) && matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.err(start, "expected digits in the exponent"));
            }
            real = true;
        }
        if real {
            let text = std::str::from_utf8(&self.src[start..self.pos]).unwrap_or("0");
            let v: f64 = text.parse().unwrap_or(0.0);
            self.push_real(v, start);
            return Ok(());
        }
        if self.src[int_start] == b'0' && int_digits > 1 {
            return Err(self.err(start, "integer literals may not start with 0"));
        }
        if int_digits == 1
            && self.src[int_start] == b'0'
            && matches!(self.peek(), Some(b'x' | b'X'))
        {
            return Err(self.err(start, "hexadecimal integer literals are not supported"));
        }
        let digits = &self.src[int_start..self.pos];
        let negative = int_start > start;
        let idx = to_u32(self.out.ints.len());
        self.out.ints.push(parse_int(digits, negative));
        self.push(Tok::Int(idx), start);
        Ok(())
    }

    fn word(&mut self, start: usize) {
        let src = self.src;
        let mut end = start + 1;
        while end < src.len() && CLASS[usize::from(src[end])] & WORD != 0 {
            end += 1;
        }
        self.pos = end;
        let len = end - start;
        let text = &src[start..end];
        let keyword = |k: &[u8]| text.eq_ignore_ascii_case(k);
        let tok = match len {
            2 if keyword(b"is") => Tok::MetaEq,
            4 if keyword(b"true") => Tok::True,
            4 if keyword(b"isnt") => Tok::MetaNe,
            5 if keyword(b"false") => Tok::False,
            5 if keyword(b"error") => Tok::Error,
            9 if keyword(b"undefined") => Tok::Undefined,
            _ => {
                let idx = to_u32(self.out.idents.len());
                self.out.idents.push(intern_ident(text));
                if self.call_follows(end) {
                    Tok::Func(idx)
                } else {
                    Tok::Ident(idx)
                }
            }
        };
        self.push(tok, start);
    }

    /// Whether the next token after `pos` is `(`, which makes the word
    /// before it a function name.
    fn call_follows(&self, mut pos: usize) -> bool {
        let src = self.src;
        loop {
            match src.get(pos) {
                Some(b'(') => return true,
                Some(&c) if is_space(c) => pos += 1,
                Some(b'/') => match src.get(pos + 1) {
                    Some(b'/') => match src[pos..].iter().position(|&c| c == b'\n') {
                        Some(n) => pos += n + 1,
                        None => return false,
                    },
                    Some(b'*') => match src[pos + 2..].windows(2).position(|w| w == b"*/") {
                        Some(n) => pos += n + 4,
                        None => return false,
                    },
                    _ => return false,
                },
                _ => return false,
            }
        }
    }

    /// Lexes a quoted string or quoted name and returns its content.
    fn string(&mut self, delim: u8, start: usize) -> Result<Vec<u8>, ParseError> {
        match self.syntax {
            Syntax::New => self.string_new(delim, start),
            Syntax::Old => self.string_old(delim, start),
        }
    }

    fn string_new(&mut self, delim: u8, start: usize) -> Result<Vec<u8>, ParseError> {
        let mut raw: Vec<u8> = Vec::new();
        self.pos += 1;
        loop {
            let seg = self.pos;
            let mut odd_backslash = false;
            loop {
                match self.peek() {
                    None | Some(0) => return Err(self.err(start, "unterminated string")),
                    Some(c) if c == delim && !odd_backslash => break,
                    Some(c) => {
                        odd_backslash = c == b'\\' && !odd_backslash;
                        self.pos += 1;
                    }
                }
            }
            raw.extend_from_slice(&self.src[seg..self.pos]);
            if raw.len() > self.limits.max_string_bytes {
                return Err(self.err(
                    start,
                    format!(
                        "string literal longer than {} bytes",
                        self.limits.max_string_bytes
                    ),
                ));
            }
            self.pos += 1; // the closing quote
            // Adjacent literals separated only by white space are joined.
            let mut look = self.pos;
            while self.src.get(look).is_some_and(|&c| is_space(c)) {
                look += 1;
            }
            if self.src.get(look) == Some(&delim) {
                self.pos = look + 1;
                continue;
            }
            break;
        }
        convert_escapes(raw).ok_or_else(|| self.err(start, "string contains a \\0 escape"))
    }

    fn string_old(&mut self, delim: u8, start: usize) -> Result<Vec<u8>, ParseError> {
        let mut out: Vec<u8> = Vec::new();
        self.pos += 1;
        loop {
            match self.peek() {
                None | Some(0) => return Err(self.err(start, "unterminated string")),
                Some(c) if c == delim => {
                    if out.last() == Some(&b'\\') {
                        match self.peek_at(1) {
                            Some(n) if n != 0 && n != b'\n' => {
                                // A quote after a backslash, with more text
                                // following, is a literal quote.
                                out.pop();
                                out.push(delim);
                                self.pos += 1;
                                continue;
                            }
                            _ => {}
                        }
                    }
                    self.pos += 1;
                    break;
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
            if out.len() > self.limits.max_string_bytes {
                return Err(self.err(
                    start,
                    format!(
                        "string literal longer than {} bytes",
                        self.limits.max_string_bytes
                    ),
                ));
            }
        }
        Ok(out)
    }

    fn punct(&mut self, start: usize) -> Result<(), ParseError> {
        let c = self.src[self.pos];
        let n1 = self.peek_at(1);
        let n2 = self.peek_at(2);
        let (tok, len) = match c {
            // HTCondor's lexer swallows a second dot: "a..b" is "a.b", and
            // "..5" is the number 0.
            b'.' if n1 == Some(b'.') => {
                self.pos += 2;
                if self.peek().is_some_and(|d| d.is_ascii_digit()) {
                    self.digits();
                    self.push_real(0.0, start);
                } else {
                    self.push(Tok::Dot, start);
                }
                return Ok(());
            }
            b'.' => (Tok::Dot, 1),
            b'*' => (Tok::Star, 1),
            b'/' => (Tok::Slash, 1),
            b'%' => (Tok::Percent, 1),
            b'+' => (Tok::Plus, 1),
            b'-' => (Tok::Minus, 1),
            b'~' => (Tok::Tilde, 1),
            b'^' => (Tok::Caret, 1),
            b'?' => (Tok::Question, 1),
            b':' => (Tok::Colon, 1),
            b';' => (Tok::Semi, 1),
            b',' => (Tok::Comma, 1),
            b'[' => (Tok::LBrack, 1),
            b']' => (Tok::RBrack, 1),
            b'(' => (Tok::LParen, 1),
            b')' => (Tok::RParen, 1),
            b'{' => (Tok::LBrace, 1),
            b'}' => (Tok::RBrace, 1),
            b'&' if n1 == Some(b'&') => (Tok::AndAnd, 2),
            b'&' => (Tok::Amp, 1),
            b'|' if n1 == Some(b'|') => (Tok::OrOr, 2),
            b'|' => (Tok::Bar, 1),
            b'<' if n1 == Some(b'=') => (Tok::Le, 2),
            b'<' if n1 == Some(b'<') => (Tok::Shl, 2),
            b'<' => (Tok::Lt, 1),
            b'>' if n1 == Some(b'=') => (Tok::Ge, 2),
            b'>' if n1 == Some(b'>') && n2 == Some(b'>') => (Tok::Ushr, 3),
            b'>' if n1 == Some(b'>') => (Tok::Shr, 2),
            b'>' => (Tok::Gt, 1),
            b'=' if n1 == Some(b'=') => (Tok::EqEq, 2),
            b'=' if n1 == Some(b'?') && n2 == Some(b'=') => (Tok::MetaEq, 3),
            b'=' if n1 == Some(b'?') => return Err(self.err(start, "expected '=?='")),
            b'=' if n1 == Some(b'!') && n2 == Some(b'=') => (Tok::MetaNe, 3),
            b'=' => (Tok::Assign, 1),
            b'!' if n1 == Some(b'=') => (Tok::NotEq, 2),
            b'!' => (Tok::Bang, 1),
            other => {
                let shown = if other.is_ascii_graphic() {
                    format!("'{}'", char::from(other))
                } else {
                    format!("byte 0x{other:02x}")
                };
                return Err(self.err(start, format!("unexpected character {shown}")));
            }
        };
        self.pos += len;
        self.push(tok, start);
        Ok(())
    }
}

/// `int.frac` as a double when that is exact arithmetic: at most 15
/// significant digits (below 2^53) over a power of ten up to 10^22, both
/// exactly representable, so one correctly rounded division gives the same
/// double as a full decimal conversion. `None` otherwise.
#[allow(clippy::cast_precision_loss)]
fn exact_decimal(int: &[u8], frac: &[u8]) -> Option<f64> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    if int.len() + frac.len() > 15 {
        return None;
    }
    let mut m: u64 = 0;
    for &d in int.iter().chain(frac) {
        m = m * 10 + u64::from(d - b'0');
    }
    Some(m as f64 / POW10.get(frac.len())?)
}

/// The value of a decimal integer literal; one that does not fit is 0, as
/// in HTCondor.
fn parse_int(digits: &[u8], negative: bool) -> i64 {
    let mut v: u64 = 0;
    for &d in digits {
        match v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
        {
            Some(n) => v = n,
            None => return 0,
        }
    }
    if negative {
        match v {
            0x8000_0000_0000_0000 => i64::MIN,
            v => i64::try_from(v).map_or(0, i64::wrapping_neg),
        }
    } else {
        i64::try_from(v).unwrap_or(0)
    }
}

/// Converts C-like escapes. Returns `None` if the result would contain NUL.
pub(crate) fn convert_escapes(raw: Vec<u8>) -> Option<Vec<u8>> {
    if !raw.contains(&b'\\') {
        return Some(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    let is_octal = |c: u8| (b'0'..=b'7').contains(&c);
    while i < raw.len() {
        let c = raw[i];
        if c != b'\\' || i + 1 >= raw.len() {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        let e = raw[i];
        let byte = match e {
            b'a' => 0x07,
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 0x0b,
            d if is_octal(d) => {
                let mut n = u32::from(d - b'0');
                if let Some(&d2) = raw.get(i + 1).filter(|c| is_octal(**c)) {
                    i += 1;
                    n = n * 8 + u32::from(d2 - b'0');
                    if n < 0x20
                        && let Some(&d3) = raw.get(i + 1).filter(|c| is_octal(**c))
                    {
                        i += 1;
                        n = n * 8 + u32::from(d3 - b'0');
                    }
                }
                let b = u8::try_from(n & 0xff).unwrap_or(0);
                if b == 0 {
                    return None;
                }
                b
            }
            other => other,
        };
        out.push(byte);
        i += 1;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token with its number, for comparing.
    #[derive(Debug, PartialEq)]
    enum T {
        Int(i64),
        Real(f64),
        Tok(Tok),
    }

    fn toks(s: &str) -> Vec<T> {
        let Ok(l) = lex(s.as_bytes(), Syntax::New, &Limits::default()) else {
            return Vec::new();
        };
        l.toks
            .iter()
            .map(|t| match *t {
                Tok::Int(i) => T::Int(l.ints[i as usize]),
                Tok::Real(i) => T::Real(l.reals[i as usize]),
                t => T::Tok(t),
            })
            .collect()
    }

    #[test]
    fn minus_joins_a_number_only_after_an_operator() {
        assert_eq!(toks("-5"), vec![T::Int(-5)]);
        assert_eq!(toks("3-5"), vec![T::Int(3), T::Tok(Tok::Minus), T::Int(5)]);
        assert_eq!(toks("3 -5"), vec![T::Int(3), T::Tok(Tok::Minus), T::Int(5)]);
        assert_eq!(toks("- 5"), vec![T::Tok(Tok::Minus), T::Int(5)]);
        assert_eq!(
            toks("(-.5)"),
            vec![T::Tok(Tok::LParen), T::Real(-0.5), T::Tok(Tok::RParen)]
        );
    }

    #[test]
    fn a_name_before_a_parenthesis_is_a_function_name() {
        let kinds = |s: &str| -> Vec<&'static str> {
            lex(s.as_bytes(), Syntax::New, &Limits::default())
                .map(|l| l.toks.iter().map(|t| t.describe()).collect())
                .unwrap_or_default()
        };
        assert_eq!(kinds("f(1)")[0], "a function name");
        assert_eq!(kinds("f /* c */ \n (1)")[0], "a function name");
        assert_eq!(kinds("f // c\n(1)")[0], "a function name");
        assert_eq!(kinds("f + (1)")[0], "an attribute name");
        assert_eq!(kinds("'f'(1)")[0], "an attribute name");
        let open = lex_prefix(b"f /* open (", Syntax::New, &Limits::default());
        assert_eq!(
            open.toks.first().map(|t| t.describe()),
            Some("an attribute name")
        );
    }

    #[test]
    fn leading_zeros_and_bad_reals_are_errors() {
        for bad in ["017", "00", "0x10", "5.", "5.e3", "1e", "1e+"] {
            assert!(
                lex(bad.as_bytes(), Syntax::New, &Limits::default()).is_err(),
                "{bad}"
            );
        }
        assert_eq!(toks("09.5"), vec![T::Real(9.5)]);
        assert_eq!(toks("9223372036854775808"), vec![T::Int(0)]);
    }

    #[test]
    fn escapes_join_before_conversion() {
        let l = lex(br#""a\1" "23""#, Syntax::New, &Limits::default()).ok();
        let s = l.map(|l| l.strings[0].clone()).unwrap_or_default();
        assert_eq!(s, b"aS".to_vec());
        assert!(lex(br#""nul\0x""#, Syntax::New, &Limits::default()).is_err());
    }

    #[test]
    fn old_strings_keep_backslashes() {
        let l = lex(br#""C:\dir\""#, Syntax::Old, &Limits::default()).ok();
        assert_eq!(l.map(|l| l.strings[0].clone()), Some(br"C:\dir\".to_vec()));
        // A backslash-quote followed by more text is literal, so trailing
        // space after such a string leaves it unterminated, as in HTCondor.
        assert!(lex(br#""C:\dir\" "#, Syntax::Old, &Limits::default()).is_err());
        let l = lex(br#""say \"hi\" now""#, Syntax::Old, &Limits::default()).ok();
        assert_eq!(
            l.map(|l| l.strings[0].clone()),
            Some(br#"say "hi" now"#.to_vec())
        );
    }
}
