//! Attribute names: case-insensitive identity resolved once, at creation.
//!
//! ClassAd attribute names compare without regard to ASCII case. Every name
//! is interned when it is created (by the parser, or by code building ads):
//! its lower-cased form gets a small integer *symbol*, and its spelling is
//! kept for printing. Comparing two names, and finding a name in a
//! [`crate::classad::ClassAd`], then compares integers: the evaluation hot
//! path never hashes or compares a string.
//!
//! The symbol table only grows, so it is bounded: after
//! [`MAX_SYMBOLS`](super::limits::MAX_SYMBOLS) distinct names (or
//! [`MAX_INTERNED_BYTES`](super::limits::MAX_INTERNED_BYTES) of spellings) new
//! names are created *uninterned*. They behave identically, only their
//! lookups fall back to comparing text. A hostile stream of invented
//! attribute names therefore costs speed, never unbounded memory.
//!
//! A small direct-mapped cache per thread in front of the shared table makes
//! interning an already-seen spelling a hash, one load and one comparison,
//! with no lock and no allocation.

use std::cell::RefCell;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use hashbrown::HashTable;

use super::limits::{MAX_INTERNED_BYTES, MAX_SYMBOLS, NAME_CACHE_BITS};

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

/// The special names, interned first so that symbol `i + 1` is `SPECIALS[i]`.
const SPECIALS: &[(&str, Special)] = &[
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

/// The symbol of names that could not be interned.
const UNINTERNED: u32 = 0;

/// An attribute name.
#[derive(Clone)]
pub struct Name {
    text: Text,
    sym: u32,
}

#[derive(Clone)]
enum Text {
    /// An interned spelling (lives as long as the process).
    Interned(&'static str),
    /// A spelling the table had no room for.
    Owned(Arc<str>),
}

impl Name {
    /// Creates a name with the given spelling.
    pub fn new(text: &str) -> Name {
        intern(text)
    }

    /// The name as written.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.text {
            Text::Interned(s) => s,
            Text::Owned(s) => s,
        }
    }

    /// The case-insensitive identity: equal for names that are equal
    /// ignoring case, `0` for an uninterned name (see the module
    /// documentation), which is then compared by text.
    #[inline]
    pub fn symbol(&self) -> u32 {
        self.sym
    }

    #[inline]
    pub(crate) fn special(&self) -> Special {
        match self.sym.checked_sub(1) {
            Some(i) => SPECIALS.get(i as usize).map_or(Special::None, |s| s.1),
            None => Special::None,
        }
    }

    /// Case-insensitive equality.
    #[inline]
    pub fn matches(&self, other: &Name) -> bool {
        if self.sym != UNINTERNED || other.sym != UNINTERNED {
            self.sym == other.sym
        } else {
            self.as_str().eq_ignore_ascii_case(other.as_str())
        }
    }

    /// A name that bypasses the symbol table, as names created once it is
    /// full are.
    #[cfg(test)]
    pub(crate) fn uninterned(text: &str) -> Name {
        Name {
            text: Text::Owned(Arc::from(text)),
            sym: UNINTERNED,
        }
    }

    /// Case-insensitive equality against a string.
    pub fn is(&self, other: &str) -> bool {
        self.as_str().eq_ignore_ascii_case(other)
    }

    /// Whether the name must be written quoted (`'...'`) in ClassAd syntax.
    pub fn needs_quoting(&self) -> bool {
        needs_quoting(self.as_str())
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
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for Name {
    fn from(s: &str) -> Name {
        Name::new(s)
    }
}

/// The shared table: folded names to symbols, spellings to interned text.
struct Table {
    /// Symbols, hashed by their folded text.
    folded: HashTable<u32>,
    /// Folded text of symbol `i + 1`.
    folded_text: Vec<&'static str>,
    /// Interned spellings and their symbols, hashed by exact text.
    spellings: HashTable<(&'static str, u32)>,
    /// Bytes of text leaked into the table so far.
    bytes: usize,
    max_symbols: usize,
    max_bytes: usize,
}

impl Table {
    fn new(max_symbols: usize, max_bytes: usize) -> Table {
        let mut t = Table {
            folded: HashTable::new(),
            folded_text: Vec::new(),
            spellings: HashTable::new(),
            bytes: 0,
            max_symbols,
            max_bytes,
        };
        for (text, _) in SPECIALS {
            t.symbol_of(text);
        }
        t
    }

    /// The symbol of a folded name, allocating one if there is room.
    fn symbol_of(&mut self, folded: &str) -> u32 {
        let h = hash_bytes(folded.as_bytes());
        let texts = &self.folded_text;
        if let Some(&sym) = self.folded.find(h, |&s| texts[(s - 1) as usize] == folded) {
            return sym;
        }
        if self.folded_text.len() >= self.max_symbols || self.bytes + folded.len() > self.max_bytes
        {
            return UNINTERNED;
        }
        let text: &'static str = Box::leak(folded.into());
        self.bytes += text.len();
        self.folded_text.push(text);
        let sym = u32::try_from(self.folded_text.len()).unwrap_or(UNINTERNED);
        let texts = &self.folded_text;
        self.folded
            .insert_unique(h, sym, |&s| hash_bytes(texts[(s - 1) as usize].as_bytes()));
        sym
    }

    fn intern(&mut self, text: &str, h: u64) -> Name {
        if let Some(&(s, sym)) = self.spellings.find(h, |&(s, _)| s == text) {
            return Name {
                text: Text::Interned(s),
                sym,
            };
        }
        let sym = if text.bytes().any(|b| b.is_ascii_uppercase()) {
            self.symbol_of(&text.to_ascii_lowercase())
        } else {
            self.symbol_of(text)
        };
        if sym == UNINTERNED || self.bytes + text.len() > self.max_bytes {
            return Name {
                text: Text::Owned(Arc::from(text)),
                sym,
            };
        }
        // An all-lower-case spelling shares the folded text.
        let s: &'static str = match self.folded_text.get((sym - 1) as usize) {
            Some(f) if *f == text => f,
            _ => {
                self.bytes += text.len();
                Box::leak(text.into())
            }
        };
        self.spellings
            .insert_unique(h, (s, sym), |&(s, _)| hash_bytes(s.as_bytes()));
        Name {
            text: Text::Interned(s),
            sym,
        }
    }
}

fn table() -> &'static Mutex<Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(Table::new(MAX_SYMBOLS, MAX_INTERNED_BYTES)))
}

/// A spelling's fingerprint: its length and two words that, with the
/// length, determine every byte of a spelling of up to 16 bytes (longer
/// ones are compared in full as well), and its hash.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    words: [u64; 2],
    len: usize,
}

impl Key {
    #[inline]
    fn of(b: &[u8]) -> Key {
        let n = b.len();
        let w8 = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]));
        let w4 = |at: usize| {
            u64::from(u32::from_le_bytes(
                b[at..at + 4].try_into().unwrap_or([0; 4]),
            ))
        };
        // Overlapping reads: together they cover every byte of a spelling
        // of up to 16 bytes.
        let words = if n >= 8 {
            [w8(0), w8(n - 8)]
        } else if n >= 4 {
            [w4(0) | w4(n - 4) << 32, 0]
        } else if n > 0 {
            [
                u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16,
                0,
            ]
        } else {
            [0, 0]
        };
        Key { words, len: n }
    }

    /// Multiply-fold, then a finalizer so that the high bits (which pick
    /// hash-table groups and cache slots) are well mixed.
    #[inline]
    fn hash(&self, b: &[u8]) -> u64 {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        let mix = |h: u64, w: u64| (h ^ w).wrapping_mul(K).rotate_left(29);
        let mut h = mix((self.len as u64).wrapping_mul(K), self.words[0]);
        h = mix(h, self.words[1]);
        if self.len > 16 {
            for c in b[8..self.len - 8].chunks(8) {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                h = mix(h, u64::from_le_bytes(w));
            }
        }
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^ (h >> 33)
    }
}

fn hash_bytes(b: &[u8]) -> u64 {
    Key::of(b).hash(b)
}

/// One slot of a thread's name cache.
#[derive(Clone, Copy)]
struct Slot {
    key: Key,
    text: &'static str,
    sym: u32,
}

const EMPTY_SLOT: Slot = Slot {
    key: Key {
        words: [0, 0],
        len: usize::MAX,
    },
    text: "",
    sym: UNINTERNED,
};

thread_local! {
    /// Spellings this thread has interned, direct-mapped by hash: a hit is
    /// one load and a comparison of the fingerprint; a collision evicts.
    static CACHE: RefCell<Vec<Slot>> = const { RefCell::new(Vec::new()) };
}

/// log2 of the slots of name caches made from now on ([`set_cache_bits`]).
static CACHE_BITS: AtomicU32 = AtomicU32::new(NAME_CACHE_BITS);

/// Sets the size of each thread's name cache made from now on: 2^`bits`
/// slots of 48 bytes (clamped to 2–65,536 slots; the default is
/// [`NAME_CACHE_BITS`]). A short-lived process that parses a few ads once,
/// as a starter does, meets each name once and gains nothing from a big
/// cache; making one costs it a dozen page faults.
pub fn set_cache_bits(bits: u32) {
    CACHE_BITS.store(bits.clamp(1, 16), Ordering::Relaxed);
}

/// The slot of hash `h` in a cache of `len` slots (a power of two, ≥ 2).
fn slot_of(h: u64, len: usize) -> usize {
    usize::try_from(h >> (64 - len.trailing_zeros())).unwrap_or(0)
}

fn intern(text: &str) -> Name {
    intern_ident(text.as_bytes())
}

/// The name spelled by `bytes` (valid UTF-8 when it comes from a `&str`;
/// the lexer passes identifier bytes, which are ASCII). A name seen before
/// on this thread costs a fingerprint and one cache probe: no lock, no
/// allocation, no string comparison for names of up to 16 bytes.
pub(crate) fn intern_ident(bytes: &[u8]) -> Name {
    let key = Key::of(bytes);
    let h = key.hash(bytes);
    let hit = CACHE.with(|c| {
        let c = c.borrow();
        let slot = c.get(slot_of(h, c.len()))?;
        (slot.key == key && (key.len <= 16 || slot.text.as_bytes() == bytes)).then_some(Name {
            text: Text::Interned(slot.text),
            sym: slot.sym,
        })
    });
    if let Some(name) = hit {
        return name;
    }
    let text = String::from_utf8_lossy(bytes);
    intern_slow(&text, key, h)
}

fn intern_slow(text: &str, key: Key, h: u64) -> Name {
    let name = table()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .intern(text, h);
    if let Text::Interned(s) = name.text {
        CACHE.with(|c| {
            let mut c = c.borrow_mut();
            if c.is_empty() {
                *c = vec![EMPTY_SLOT; 1 << CACHE_BITS.load(Ordering::Relaxed)];
            }
            let i = slot_of(h, c.len());
            if let Some(slot) = c.get_mut(i) {
                *slot = Slot {
                    key,
                    text: s,
                    sym: name.sym,
                };
            }
        });
    }
    name
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
        assert_eq!(Name::new("Abc").symbol(), Name::new("aBC").symbol());
        assert_eq!(Name::new("aBC").as_str(), "aBC");
    }

    #[test]
    fn a_small_name_cache_evicts_but_names_stay_right() {
        // This thread's cache is made again at the next intern. Caches other
        // tests' threads make meanwhile only get another size, never other
        // names.
        let fresh_cache = || CACHE.with(|c| c.borrow_mut().clear());
        set_cache_bits(1);
        fresh_cache();
        let spell = |i: usize| format!("CacheProbeAttribute{i}");
        let first: Vec<Name> = (0..200).map(|i| intern(&spell(i))).collect();
        let again: Vec<Name> = (0..200).map(|i| intern(&spell(i).to_uppercase())).collect();
        let small = CACHE.with(|c| c.borrow().len());
        set_cache_bits(NAME_CACHE_BITS);
        fresh_cache();
        intern("CacheProbeAttribute0");
        let default = CACHE.with(|c| c.borrow().len());
        assert_eq!(small, 2);
        assert_eq!(default, 1 << NAME_CACHE_BITS);
        for (i, (a, b)) in first.iter().zip(&again).enumerate() {
            assert_eq!(a.symbol(), b.symbol());
            assert_eq!(a.as_str(), spell(i));
            assert_eq!(b.as_str(), spell(i).to_uppercase());
        }
    }

    #[test]
    fn a_full_table_hands_out_uninterned_names_that_still_compare() {
        let mut t = Table::new(SPECIALS.len() + 1, 1 << 20);
        let mut n = |s: &str| t.intern(s, hash_bytes(s.as_bytes()));
        let alpha = n("Alpha");
        let alpha2 = n("ALPHA");
        let beta = n("Beta");
        let beta2 = n("bETA");
        let target = n("Target");
        assert_ne!(alpha.symbol(), UNINTERNED);
        assert_eq!(alpha.symbol(), alpha2.symbol());
        assert_eq!(beta.symbol(), UNINTERNED);
        assert!(beta.matches(&beta2));
        assert!(!beta.matches(&alpha));
        assert!(!alpha.matches(&beta));
        assert_eq!(beta2.as_str(), "bETA");
        assert_eq!(target.special(), Special::Target);
    }

    #[test]
    fn fingerprints_tell_short_spellings_apart() {
        // Every spelling over a small alphabet up to 5 bytes, plus longer
        // ones differing in one byte anywhere: equal fingerprints only for
        // equal spellings.
        let mut all: Vec<Vec<u8>> = vec![Vec::new()];
        let mut frontier: Vec<Vec<u8>> = vec![Vec::new()];
        for _ in 0..5 {
            let mut next = Vec::new();
            for s in &frontier {
                for c in [b'a', b'B', b'_', b'0'] {
                    let mut t = s.clone();
                    t.push(c);
                    next.push(t);
                }
            }
            all.extend(next.iter().cloned());
            frontier = next;
        }
        for len in 6..=16 {
            let base = vec![b'x'; len];
            all.push(base.clone());
            for i in 0..len {
                let mut t = base.clone();
                t[i] = b'y';
                all.push(t);
            }
        }
        let mut seen = std::collections::HashMap::new();
        for s in &all {
            let k = Key::of(s);
            if let Some(prev) = seen.insert((k.words, k.len), s.clone()) {
                assert_eq!(&prev, s, "fingerprint collision");
            }
        }
        // Long names are told apart by their full text.
        let a = Name::new("AVeryLongAttributeNameNumberOne");
        let b = Name::new("AVeryLongAttributeNameNumberTwo");
        assert!(!a.matches(&b));
        assert!(a.matches(&Name::new("averylongattributenamenumberone")));
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
