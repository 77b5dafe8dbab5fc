//! Attribute names: case-insensitive identity with the hash computed once.
//!
//! ClassAd attribute names compare without regard to ASCII case. A [`Name`]
//! keeps the spelling it was written with (printing preserves it) together
//! with a hash of its lower-cased bytes, computed when the name is created.
//! Lookups in a [`crate::classad::ClassAd`] therefore never hash a string on
//! the evaluation hot path: they probe with the stored hash and compare bytes
//! only on a hash hit.

use std::fmt;
use std::sync::Arc;

/// Names with a meaning of their own during attribute resolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Special {
    None,
    My,
    SelfName,
    Target,
    Other,
    Ad,
    Parent,
    Root,
    TopLevel,
    CurrentTime,
    Left,
    Right,
    LCtx,
    RCtx,
    SymmetricMatch,
    LeftMatchesRight,
    RightMatchesLeft,
    LeftRankValue,
    RightRankValue,
}

/// An attribute name.
#[derive(Clone)]
pub struct Name {
    text: Arc<str>,
    hash: u64,
    special: Special,
}

impl Name {
    /// Creates a name with the given spelling.
    pub fn new(text: &str) -> Name {
        let hash = fold_hash(text.as_bytes());
        Name {
            special: classify(text),
            text: Arc::from(text),
            hash,
        }
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The case-insensitive hash.
    pub fn fold_hash(&self) -> u64 {
        self.hash
    }

    pub(crate) fn special(&self) -> Special {
        self.special
    }

    /// Case-insensitive equality.
    pub fn matches(&self, other: &Name) -> bool {
        self.hash == other.hash && self.text.eq_ignore_ascii_case(&other.text)
    }

    /// Case-insensitive equality against a string.
    pub fn is(&self, other: &str) -> bool {
        self.text.eq_ignore_ascii_case(other)
    }

    /// Whether the name must be written quoted (`'...'`) in ClassAd syntax.
    pub fn needs_quoting(&self) -> bool {
        needs_quoting(&self.text)
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        self.matches(other)
    }
}

impl Eq for Name {}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.text, f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl From<&str> for Name {
    fn from(s: &str) -> Name {
        Name::new(s)
    }
}

/// Hash of the ASCII-lower-cased bytes (FNV-1a, then a 64-bit finalizer so the
/// high bits used by the hash table are well mixed).
pub(crate) fn fold_hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b.to_ascii_lowercase());
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

fn classify(text: &str) -> Special {
    const TABLE: &[(&str, Special)] = &[
        ("my", Special::My),
        ("self", Special::SelfName),
        ("target", Special::Target),
        ("other", Special::Other),
        ("ad", Special::Ad),
        ("parent", Special::Parent),
        ("root", Special::Root),
        ("toplevel", Special::TopLevel),
        ("currenttime", Special::CurrentTime),
        ("left", Special::Left),
        ("right", Special::Right),
        ("lctx", Special::LCtx),
        ("rctx", Special::RCtx),
        ("symmetricmatch", Special::SymmetricMatch),
        ("leftmatchesright", Special::LeftMatchesRight),
        ("rightmatchesleft", Special::RightMatchesLeft),
        ("leftrankvalue", Special::LeftRankValue),
        ("rightrankvalue", Special::RightRankValue),
    ];
    if text.len() > 16 {
        return Special::None;
    }
    TABLE
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(text))
        .map_or(Special::None, |(_, s)| *s)
}

/// Words the lexer reserves; an attribute with one of these names is quoted.
const RESERVED: &[&str] = &[
    "true",
    "false",
    "undefined",
    "error",
    "is",
    "isnt",
    "parent",
];

pub(crate) fn needs_quoting(text: &str) -> bool {
    let b = text.as_bytes();
    let Some(&first) = b.first() else {
        return true;
    };
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return true;
    }
    if !b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_') {
        return true;
    }
    RESERVED.iter().any(|r| r.eq_ignore_ascii_case(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_without_case() {
        assert_eq!(Name::new("RequestMemory"), Name::new("requestmemory"));
        assert_ne!(Name::new("RequestMemory"), Name::new("RequestMemor"));
        assert_eq!(Name::new("Abc").fold_hash(), Name::new("aBC").fold_hash());
    }

    #[test]
    fn reserved_words_and_odd_names_need_quotes() {
        assert!(needs_quoting("true"));
        assert!(needs_quoting("foo bar"));
        assert!(needs_quoting("1x"));
        assert!(needs_quoting("PARENT"));
        assert!(!needs_quoting("if"));
        assert!(!needs_quoting("_x1"));
    }

    #[test]
    fn specials_are_recognised_case_insensitively() {
        assert_eq!(Name::new("TARGET").special(), Special::Target);
        assert_eq!(Name::new("My").special(), Special::My);
        assert_eq!(Name::new("Memory").special(), Special::None);
    }
}
