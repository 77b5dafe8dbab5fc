//! The ClassAd: a set of named expressions.
//!
//! Cheap to clone (the body is reference counted, copied on write). Lookup
//! is a hash-table probe with the name's precomputed hash; names compare
//! without regard to case, and inserting an existing name replaces its
//! expression.

use std::cmp::Ordering;
use std::sync::Arc;

use hashbrown::HashTable;

use super::ast::Expr;
use super::name::Name;
use super::value::Value;

/// A ClassAd.
#[derive(Clone, Default)]
pub struct ClassAd(Arc<Inner>);

#[derive(Clone, Default)]
struct Inner {
    entries: Vec<(Name, Expr)>,
    index: HashTable<u32>,
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
        let inner = &*self.0;
        inner
            .index
            .find(name.fold_hash(), |&i| {
                inner.entries[i as usize].0.matches(name)
            })
            .map(|&i| &inner.entries[i as usize].1)
    }

    /// The expression bound to the attribute spelled `name` (any case).
    pub fn lookup(&self, name: &str) -> Option<&Expr> {
        self.get(&Name::new(name))
    }

    /// Position of `name` among the entries (see [`ClassAd::entry`]).
    #[inline]
    pub fn index_of(&self, name: &Name) -> Option<usize> {
        let inner = &*self.0;
        inner
            .index
            .find(name.fold_hash(), |&i| {
                inner.entries[i as usize].0.matches(name)
            })
            .map(|&i| i as usize)
    }

    /// The entry at a position returned by [`ClassAd::index_of`].
    #[inline]
    pub fn entry(&self, i: usize) -> Option<(&Name, &Expr)> {
        self.0.entries.get(i).map(|(n, e)| (n, e))
    }

    /// The spelling and expression bound to `name`.
    pub fn get_entry(&self, name: &Name) -> Option<(&Name, &Expr)> {
        let inner = &*self.0;
        inner
            .index
            .find(name.fold_hash(), |&i| {
                inner.entries[i as usize].0.matches(name)
            })
            .map(|&i| {
                let (n, e) = &inner.entries[i as usize];
                (n, e)
            })
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
        let hash = name.fold_hash();
        let entries = &inner.entries;
        if let Some(&i) = inner
            .index
            .find(hash, |&i| entries[i as usize].0.matches(&name))
        {
            // The first spelling stays, as in HTCondor.
            inner.entries[i as usize].1 = expr;
            return;
        }
        let pos = u32::try_from(inner.entries.len()).unwrap_or(u32::MAX);
        inner.entries.push((name, expr));
        let entries = &inner.entries;
        inner
            .index
            .insert_unique(hash, pos, |&i| entries[i as usize].0.fold_hash());
    }

    /// Binds `name` to a literal value.
    pub fn insert_value(&mut self, name: impl Into<Name>, value: impl Into<Value>) {
        self.insert(name, Expr::from_value(value.into()));
    }

    /// Removes `name`, returning its expression.
    pub fn remove(&mut self, name: &str) -> Option<Expr> {
        let name = Name::new(name);
        self.get(&name)?;
        let inner = Arc::make_mut(&mut self.0);
        let pos = inner.entries.iter().position(|(n, _)| n.matches(&name))?;
        let (_, expr) = inner.entries.remove(pos);
        inner.index.clear();
        for (i, (n, _)) in inner.entries.iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            let entries = &inner.entries;
            inner
                .index
                .insert_unique(n.fold_hash(), i, |&j| entries[j as usize].0.fold_hash());
        }
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
    fn library_order_is_length_then_caseless() {
        let mut names = vec!["b", "A", "_u", "AA", "ab", "zz", "a_x", "Zeta", "true"];
        names.sort_by(|a, b| library_order(a, b));
        assert_eq!(
            names,
            vec!["A", "b", "_u", "AA", "ab", "zz", "a_x", "true", "Zeta"]
        );
    }
}
