//! The files that registered with fewer units than they start with, in the
//! order a top-up serves them: hottest first, then by id.
//!
//! Under a budget a load leaves many files short (Monkey's counts, at least
//! one unit each, add up to more than the budget), and every compaction
//! frees memory for a few of them. Kept in serving order, a top-up reads
//! the files it serves from the front instead of sorting every short file
//! (a pass over them was 10% of the samples of a 35,000-file load under a
//! budget).
//!
//! Invariant: `order` holds `(key(hot), id)` for every `id` of `keys`, with
//! `keys[id] = key(hot)` and `hot` the file's count when it was last
//! [`set_hot`](ShortFiles::set_hot) or inserted; the allocator re-keys a
//! file whenever its count changes.

use std::collections::{BTreeMap, BTreeSet};

/// A count as a key that sorts hottest first: counts are finite and
/// `>= 0`, whose bit patterns order like their values, so the complement
/// orders them descending.
fn key(hot: f64) -> u64 {
    debug_assert!(hot.is_finite() && hot >= 0.0, "counts are finite and >= 0");
    !hot.max(0.0).to_bits()
}

/// A place in the serving order: `(key(hot), id)`.
pub(super) type Place = (u64, u64);

/// The short files (see the module documentation).
#[derive(Debug, Default)]
pub(super) struct ShortFiles {
    /// File id → its key in `order`.
    keys: BTreeMap<u64, u64>,
    /// `(key(hot), id)`: hottest first, then lowest id.
    order: BTreeSet<Place>,
}

impl ShortFiles {
    /// Adds file `id` with count `hot` (or re-keys it if present).
    pub fn insert(&mut self, id: u64, hot: f64) {
        let k = key(hot);
        if let Some(old) = self.keys.insert(id, k) {
            self.order.remove(&(old, id));
        }
        self.order.insert((k, id));
    }

    /// Removes file `id`; false if it was not short.
    pub fn remove(&mut self, id: u64) -> bool {
        match self.keys.remove(&id) {
            Some(k) => self.order.remove(&(k, id)),
            None => false,
        }
    }

    /// File `id`'s count is now `hot`: re-keys it if it is short.
    pub fn set_hot(&mut self, id: u64, hot: f64) {
        if self.keys.contains_key(&id) {
            self.insert(id, hot);
        }
    }

    /// Re-keys every file by `hot(id)` (every count changed, as when
    /// counts halve).
    pub fn rekey(&mut self, hot: impl Fn(u64) -> f64) {
        let ids: Vec<u64> = self.keys.keys().copied().collect();
        self.keys.clear();
        self.order.clear();
        for id in ids {
            self.insert(id, hot(id));
        }
    }

    /// The first file after `after` in serving order (from the front when
    /// `None`).
    pub fn next_after(&self, after: Option<Place>) -> Option<Place> {
        match after {
            None => self.order.first().copied(),
            Some(p) => self
                .order
                .range((std::ops::Bound::Excluded(p), std::ops::Bound::Unbounded))
                .next()
                .copied(),
        }
    }

    #[cfg(test)]
    /// Short files.
    pub fn len(&self) -> usize {
        self.keys.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(s: &ShortFiles) -> Vec<u64> {
        let mut out = Vec::new();
        let mut at = None;
        while let Some(p) = s.next_after(at) {
            out.push(p.1);
            at = Some(p);
        }
        out
    }

    #[test]
    fn served_hottest_first_then_by_id() {
        let mut s = ShortFiles::default();
        s.insert(5, 0.0);
        s.insert(3, 2.5);
        s.insert(9, 0.0);
        s.insert(1, 0.0);
        s.insert(7, 1e-300);
        assert_eq!(ids(&s), [3, 7, 1, 5, 9]);
        s.set_hot(9, 3.0);
        s.set_hot(42, 9.0); // not short: ignored
        assert_eq!(ids(&s), [9, 3, 7, 1, 5]);
        assert!(s.remove(3));
        assert!(!s.remove(3));
        s.rekey(|id| id as f64);
        assert_eq!(ids(&s), [9, 7, 5, 1]);
        assert_eq!(s.len(), 4);
    }
}
