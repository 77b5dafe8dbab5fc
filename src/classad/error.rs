//! Errors of the ClassAd module.
//!
//! Parsing reports where (line and column, both from 1) and what was wrong
//! or expected. Evaluation never fails: bad operations produce the `error`
//! value, as in HTCondor.

use std::fmt;

/// A position in parsed text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// Line, from 1.
    pub line: u32,
    /// Column in bytes, from 1.
    pub column: u32,
}

impl Position {
    /// The position of byte `offset` of `src`.
    pub fn from_offset(src: &[u8], offset: usize) -> Position {
        let offset = offset.min(src.len());
        let before = &src[..offset];
        let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        Position {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(offset - line_start + 1).unwrap_or(u32::MAX),
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// A parse error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{position}: {message}")]
pub struct ParseError {
    /// Where the error was found.
    pub position: Position,
    /// What was wrong.
    pub message: String,
}

impl ParseError {
    /// A parse error at `position`.
    pub fn new(position: Position, message: impl Into<String>) -> ParseError {
        ParseError {
            position,
            message: message.into(),
        }
    }

    /// Shifts the position by a number of lines (for errors in a line of a
    /// larger text).
    pub fn at_line(mut self, line: u32) -> ParseError {
        self.position.line = self.position.line.saturating_add(line.saturating_sub(1));
        self
    }
}
