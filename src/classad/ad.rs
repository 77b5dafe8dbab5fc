//! The ClassAd: a set of named expressions.
//!
//! Cheap to clone (the body is reference counted, copied on write). Names
//! compare without regard to case, and inserting an existing name replaces
//! its expression. Lookup probes a small open-addressing table keyed by the
//! name's symbol (see [`super::name`]): an integer multiply and compare, no
//! string hashing. Uninterned names (only after the symbol table is full)
//! are found by comparing text.

use std::cmp::Ordering;
use std::sync::Arc;

use super::ast::Expr;
use super::name::Name;
use super::value::Value;

/// A ClassAd.
#[derive(Clone, Default)]
pub struct ClassAd(Arc<Inner>);

#[derive(Clone, Default)]
struct Inner {
    entries: Vec<(Name, Expr)>,
    index: SymIndex,
}

/// Entry positions by symbol: linear probing over a power-of-two table of
/// `symbol << 32 | position` words; `0` is an empty slot (symbol 0, the
/// uninterned names, is never stored).
#[derive(Clone, Default)]
struct SymIndex {
    slots: Box<[u64]>,
    /// Stored symbols.
    len: usize,
    /// `64 - log2(slots.len())`.
    shift: u32,
    /// Whether any entry has an uninterned name.
    uninterned: bool,
}

impl SymIndex {
    #[inline(always)]
    fn home(&self, sym: u32) -> usize {
        // Fibonacci hashing: the high bits of the product pick the slot.
        let h = u64::from(sym).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift;
        usize::try_from(h).unwrap_or(0)
    }

    #[inline(always)]
    fn find(&self, sym: u32) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(sym);
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if slot >> 32 == u64::from(sym) {
                return Some((slot & 0xffff_ffff) as usize);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds a symbol known to be absent.
    fn insert(&mut self, sym: u32, pos: usize) {
        // At most a quarter full: most probes hit or miss at the first slot.
        if (self.len + 1) * 4 > self.slots.len() {
            self.grow();
        }
        self.place(sym, pos);
        self.len += 1;
    }

    fn place(&mut self, sym: u32, pos: usize) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(sym);
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = u64::from(sym) << 32 | (pos as u64 & 0xffff_ffff);
    }

    fn grow(&mut self) {
        let cap = (self.slots.len() * 2).max(32);
        let old = std::mem::replace(&mut self.slots, vec![0; cap].into_boxed_slice());
        self.shift = 64 - cap.trailing_zeros();
        for slot in old.iter().filter(|&&s| s != 0) {
            self.place(
                u32::try_from(slot >> 32).unwrap_or(0),
                (slot & 0xffff_ffff) as usize,
            );
        }
    }

    fn rebuild(entries: &[(Name, Expr)]) -> SymIndex {
        let mut index = SymIndex::default();
        for (pos, (name, _)) in entries.iter().enumerate() {
            index.add(name, pos);
        }
        index
    }

    fn add(&mut self, name: &Name, pos: usize) {
        match name.symbol() {
            0 => self.uninterned = true,
            sym => self.insert(sym, pos),
        }
    }
}

impl Inner {
    #[inline(always)]
    fn position(&self, name: &Name) -> Option<usize> {
        match name.symbol() {
            0 if self.index.uninterned => self.entries.iter().position(|(n, _)| n.matches(name)),
            0 => None,
            sym => self.index.find(sym),
        }
    }
}

impl ClassAd {
    /// An empty ad.
    pub fn new() -> ClassAd {
        ClassAd::default()
    }

    /// Number of attributes.
    pub fn len(&self) -> usize {
        self.0.entries.len()
    }

    /// Whether the ad has no attributes.
    pub fn is_empty(&self) -> bool {
        self.0.entries.is_empty()
    }

    /// The expression bound to `name`.
    #[inline]
    pub fn get(&self, name: &Name) -> Option<&Expr> {
        self.get_entry(name).map(|(_, e)| e)
    }

    /// The expression bound to the attribute spelled `name` (any case).
    pub fn lookup(&self, name: &str) -> Option<&Expr> {
        self.get(&Name::new(name))
    }

    /// Position of `name` among the entries (see [`ClassAd::entry`]).
    #[inline]
    pub fn index_of(&self, name: &Name) -> Option<usize> {
        self.0.position(name)
    }

    /// The entry at a position returned by [`ClassAd::index_of`].
    #[inline]
    pub fn entry(&self, i: usize) -> Option<(&Name, &Expr)> {
        self.0.entries.get(i).map(|(n, e)| (n, e))
    }

    /// The spelling and expression bound to `name`.
    #[inline]
    pub fn get_entry(&self, name: &Name) -> Option<(&Name, &Expr)> {
        self.0.position(name).and_then(|i| self.entry(i))
    }

    /// Whether the ad binds `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.lookup(name).is_some()
    }

    /// Binds `name` to `expr`, replacing the expression of any previous
    /// binding (which keeps its spelling).
    pub fn insert(&mut self, name: impl Into<Name>, expr: Expr) {
        let name = name.into();
        let inner = Arc::make_mut(&mut self.0);
        if let Some(i) = inner.position(&name) {
            // The first spelling stays, as in HTCondor.
            inner.entries[i].1 = expr;
            return;
        }
        let pos = inner.entries.len();
        inner.index.add(&name, pos);
        inner.entries.push((name, expr));
    }

    /// Binds `name` to a literal value.
    pub fn insert_value(&mut self, name: impl Into<Name>, value: impl Into<Value>) {
        self.insert(name, Expr::from_value(value.into()));
    }

    /// Removes `name`, returning its expression.
    pub fn remove(&mut self, name: &str) -> Option<Expr> {
        let name = Name::new(name);
        let pos = self.0.position(&name)?;
        let inner = Arc::make_mut(&mut self.0);
        let (_, expr) = inner.entries.remove(pos);
        inner.index = SymIndex::rebuild(&inner.entries);
        Some(expr)
    }

    /// Copies every attribute of `other` into this ad.
    pub fn update(&mut self, other: &ClassAd) {
        for (n, e) in other.iter() {
            self.insert(n.clone(), e.clone());
        }
    }

    /// Attributes in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, &Expr)> {
        self.0.entries.iter().map(|(n, e)| (n, e))
    }

    /// Attributes in HTCondor's ClassAd-library order: shorter names first,
    /// then case-insensitive byte order. This is the order HTCondor uses when
    /// it prints an ad in new syntax or JSON.
    pub fn iter_library_order(&self) -> Vec<(&Name, &Expr)> {
        let mut v: Vec<(&Name, &Expr)> = self.iter().collect();
        v.sort_by(|a, b| library_order(a.0.as_str(), b.0.as_str()));
        v
    }

    /// Attributes in plain byte order of their names (upper case before
    /// lower case). This is the order HTCondor uses for ads written to hooks.
    pub fn iter_byte_order(&self) -> Vec<(&Name, &Expr)> {
        let mut v: Vec<(&Name, &Expr)> = self.iter().collect();
        v.sort_by(|a, b| a.0.as_str().as_bytes().cmp(b.0.as_str().as_bytes()));
        v
    }

    /// Attribute names in insertion order.
    pub fn names(&self) -> impl Iterator<Item = &Name> {
        self.0.entries.iter().map(|(n, _)| n)
    }

    /// Whether two handles share one body (cheap identity test).
    pub fn ptr_eq(a: &ClassAd, b: &ClassAd) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

/// HTCondor's attribute ordering: by length, then case-insensitively.
pub(crate) fn library_order(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| {
        let la = a.bytes().map(|c| c.to_ascii_lowercase());
        let lb = b.bytes().map(|c| c.to_ascii_lowercase());
        la.cmp(lb)
    })
}

impl std::fmt::Debug for ClassAd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&super::unparse::ad_to_string(self))
    }
}

impl std::fmt::Display for ClassAd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&super::unparse::ad_to_string(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_replaces_case_insensitively() {
        let mut ad = ClassAd::new();
        ad.insert_value("Memory", 1i64);
        ad.insert_value("memory", 2i64);
        assert_eq!(ad.len(), 1);
        assert_eq!(ad.names().next().map(Name::as_str), Some("Memory"));
        assert!(matches!(
            ad.lookup("MEMORY"),
            Some(Expr::Lit(Value::Int(2)))
        ));
    }

    #[test]
    fn a_reference_back_to_an_attribute_being_evaluated_is_undefined() {
        use crate::classad::{FixedEnv, parse_ad, parse_expr};
        let env = FixedEnv::new(0);
        let ad =
            parse_ad("[a = isUndefined(a); b = c + 1; c = b; d = 1; e = d + a]").expect("parses");
        // Asked for directly (HTCondor's EvaluateAttr): one level more
        // than through a reference, as in HTCondor.
        assert!(matches!(ad.eval_attr("a", &env), Value::Bool(false)));
        let through = parse_expr("a").expect("parses");
        assert!(matches!(ad.eval(&through, &env), Value::Bool(true)));
        assert!(matches!(ad.eval_attr("b", &env), Value::Undefined));
        assert!(matches!(ad.eval_attr("e", &env), Value::Int(2)));
    }

    #[test]
    fn remove_keeps_the_index_consistent() {
        let mut ad = ClassAd::new();
        for (i, n) in ["a", "b", "c", "d"].iter().enumerate() {
            ad.insert_value(*n, i64::try_from(i).unwrap_or(0));
        }
        assert!(ad.remove("B").is_some());
        assert!(ad.lookup("b").is_none());
        assert!(matches!(ad.lookup("d"), Some(Expr::Lit(Value::Int(3)))));
        assert_eq!(ad.len(), 3);
    }

    #[test]
    fn uninterned_names_are_found_by_text() {
        let mut ad = ClassAd::new();
        ad.insert_value("Memory", 1i64);
        ad.insert_value(Name::uninterned("Rare"), 2i64);
        ad.insert_value(Name::uninterned("RARE"), 3i64);
        assert_eq!(ad.len(), 2);
        assert!(matches!(
            ad.get(&Name::uninterned("rare")),
            Some(Expr::Lit(Value::Int(3)))
        ));
        assert!(matches!(
            ad.lookup("MEMORY"),
            Some(Expr::Lit(Value::Int(1)))
        ));
    }

    #[test]
    fn the_index_survives_growth() {
        let mut ad = ClassAd::new();
        for i in 0..1000i64 {
            ad.insert_value(format!("attr{i}").as_str(), i);
        }
        for i in (0..1000i64).step_by(7) {
            assert!(
                matches!(ad.lookup(&format!("ATTR{i}")), Some(Expr::Lit(Value::Int(v))) if *v == i)
            );
        }
        assert!(ad.lookup("attr1000").is_none());
    }

    #[test]
    fn library_order_is_length_then_caseless() {
        let mut names = vec!["b", "A", "_u", "AA", "ab", "zz", "a_x", "Zeta", "true"];
        names.sort_by(|a, b| library_order(a, b));
        assert_eq!(
            names,
            vec!["A", "b", "_u", "AA", "ab", "zz", "a_x", "true", "Zeta"]
        );
    }
}
