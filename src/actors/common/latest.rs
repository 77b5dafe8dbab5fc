//! State one actor owns and others read, without a back-channel: a
//! [`Publisher`] (one, not clonable, held by the actor that owns the value)
//! and any number of [`Latest`] readers, which see the last value
//! published — a one-slot channel that keeps only its newest message, as
//! a watch channel does, on the actors' single thread. A [`Board`] is the
//! same for values kept per key (one per slot): each key has at most one
//! [`Pen`], held by the actor the entry is about, and the entry goes when
//! its pen is dropped.
//!
//! What no reader can do is write: a value moves only from its owner.
//! The actors of one daemon run on one thread, so the value is kept
//! behind a reference count without locks; a reader holds a borrow only
//! within one handler (never across an `await`), so publishing never meets
//! a borrow.

use std::cell::{Ref, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// A value and the one actor that may change it.
pub struct Publisher<T> {
    value: Rc<RefCell<T>>,
}

/// A reader of the value a [`Publisher`] last published.
pub struct Latest<T> {
    value: Rc<RefCell<T>>,
}

impl<T> Clone for Latest<T> {
    fn clone(&self) -> Self {
        Latest {
            value: Rc::clone(&self.value),
        }
    }
}

/// A publisher of `first` and its first reader.
pub fn latest<T>(first: T) -> (Publisher<T>, Latest<T>) {
    let value = Rc::new(RefCell::new(first));
    (
        Publisher {
            value: Rc::clone(&value),
        },
        Latest { value },
    )
}

impl<T> Publisher<T> {
    /// Replaces the value: every reader sees `value` from now on.
    pub fn publish(&self, value: T) {
        *self.value.borrow_mut() = value;
    }

    /// Changes the value in place (what `f` returns is returned).
    pub fn update<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut self.value.borrow_mut())
    }

    /// Another reader.
    pub fn reader(&self) -> Latest<T> {
        Latest {
            value: Rc::clone(&self.value),
        }
    }
}

impl<T> Latest<T> {
    /// The value last published, borrowed for the caller's handler.
    pub fn read(&self) -> Ref<'_, T> {
        self.value.borrow()
    }
}

impl<T: Clone> Latest<T> {
    /// A copy of the value last published.
    pub fn get(&self) -> T {
        self.value.borrow().clone()
    }
}

/// Entries by key, each written only through its own [`Pen`].
pub struct Board<V> {
    entries: Rc<RefCell<BTreeMap<String, V>>>,
    pens: Rc<RefCell<BTreeSet<String>>>,
}

impl<V> Default for Board<V> {
    fn default() -> Self {
        Board {
            entries: Rc::default(),
            pens: Rc::default(),
        }
    }
}

impl<V> Clone for Board<V> {
    fn clone(&self) -> Self {
        Board {
            entries: Rc::clone(&self.entries),
            pens: Rc::clone(&self.pens),
        }
    }
}

impl<V> Board<V> {
    /// The pen for `key`'s entry, for the actor that entry is about;
    /// `None` while another pen for it lives.
    pub fn pen(&self, key: &str) -> Option<Pen<V>> {
        if !self.pens.borrow_mut().insert(key.to_string()) {
            return None;
        }
        Some(Pen {
            key: key.to_string(),
            entries: Rc::clone(&self.entries),
            pens: Rc::clone(&self.pens),
        })
    }

    /// Every entry written and not yet gone, by key.
    pub fn read(&self) -> Ref<'_, BTreeMap<String, V>> {
        self.entries.borrow()
    }
}

/// Writes one key's entry of a [`Board`]; dropping it removes the entry.
pub struct Pen<V> {
    key: String,
    entries: Rc<RefCell<BTreeMap<String, V>>>,
    pens: Rc<RefCell<BTreeSet<String>>>,
}

impl<V> Pen<V> {
    /// Sets the entry.
    pub fn write(&self, value: V) {
        self.entries.borrow_mut().insert(self.key.clone(), value);
    }
}

impl<V> Drop for Pen<V> {
    fn drop(&mut self) {
        self.entries.borrow_mut().remove(&self.key);
        self.pens.borrow_mut().remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_see_what_the_publisher_published_last() {
        let (p, r) = latest(1);
        let r2 = p.reader();
        p.publish(2);
        assert_eq!((r.get(), r2.get()), (2, 2));
        p.update(|v| *v += 1);
        assert_eq!(*r.read(), 3);
    }

    #[test]
    fn a_board_key_has_one_pen_and_its_entry_goes_with_it() {
        let board: Board<u32> = Board::default();
        let pen = board.pen("slot1").unwrap();
        assert!(board.pen("slot1").is_none());
        pen.write(7);
        assert_eq!(board.read().get("slot1"), Some(&7));
        drop(pen);
        assert!(board.read().is_empty());
        let again = board.pen("slot1").unwrap();
        again.write(8);
        assert_eq!(board.clone().read().get("slot1"), Some(&8));
    }
}
