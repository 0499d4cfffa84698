//! The user-facing iterator: the newest visible version of each user key, in
//! both directions, as of one sequence number and within bounds.
//!
//! [`DbIterator`] holds up to two [`UserCursor`]s (in `user_cursor.rs`, which
//! turn a merged stream of internal keys into user entries), made lazily:
//! the *front* one, which the cursor methods and [`Iterator::next`] move, and
//! the *back* one, which [`DoubleEndedIterator::next_back`] moves.

use std::ops::Bound;
use std::sync::Arc;

use super::user_cursor::UserCursor;
use super::{MergingIterator, Pin};
use crate::error::Result;
use crate::filter::prefix::{prefix_of, PrefixExtractor};
use crate::key::SeqNo;
use crate::merge::MergeOperator;
use crate::range_del::Fragments;
use crate::ttl::Expiry;

/// Builds a fresh merged cursor over the data an iterator reads (the same
/// pinned memtables and version every time); with a prefix, the cursor
/// leaves out the memtables and files whose prefix filter rules it out
/// (the caller bounds the cursor within the keys of that prefix).
pub(crate) type CursorFactory = Box<dyn Fn(Option<&[u8]>) -> MergingIterator + Send + Sync>;

/// What an iterator knows of the prefixes of its keys.
struct PrefixMode {
    extractor: Arc<dyn PrefixExtractor>,
    /// Seeks keep to their target's prefix
    /// ([`crate::ReadOptions::prefix_same_as_start`]).
    same_as_start: bool,
    /// The prefix every key of the iterator's own bounds has, if one does.
    of_bounds: Option<Vec<u8>>,
}

/// The range an iterator's cursors are made for: the iterator's bounds, or
/// after a `prefix_same_as_start` seek those of the target's prefix.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Scope {
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    /// The prefix whose filters the cursors consult (`None`: none).
    filter: Option<Vec<u8>>,
    /// Yield only keys of this prefix (a prefix whose keys are not all the
    /// keys starting with it, see
    /// [`PrefixExtractor::same_result_when_appended`]).
    only: Option<Vec<u8>>,
}

/// Where one end of a [`DbIterator`] stands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum EndState {
    /// Not positioned yet: the first step starts at the bound.
    Unpositioned,
    /// Positioned by a seek: the entry under the cursor is yielded next.
    Fresh,
    /// On the entry yielded last: the next step moves first.
    Yielded,
}

/// One end of a [`DbIterator`]: a cursor and where it stands.
struct End {
    cursor: UserCursor,
    state: EndState,
}

impl End {
    /// Moves to the next entry to yield going forward; whether there is one.
    #[inline]
    fn step_forward(&mut self) -> Result<bool> {
        let r = match self.state {
            EndState::Unpositioned => self.cursor.seek_to_first(),
            EndState::Fresh => Ok(()),
            EndState::Yielded => self.cursor.next(),
        };
        self.settle(r)
    }

    /// After a move: on an error the cursor is invalid.
    #[inline]
    fn settle(&mut self, moved: Result<()>) -> Result<bool> {
        self.state = EndState::Yielded;
        if let Err(e) = moved {
            self.cursor.valid = false;
            return Err(e);
        }
        Ok(self.cursor.valid())
    }

    /// Moves to the next entry to yield going backward; whether there is one.
    fn step_backward(&mut self) -> Result<bool> {
        let r = match self.state {
            EndState::Unpositioned => self.cursor.seek_to_last(),
            EndState::Fresh => Ok(()),
            EndState::Yielded => self.cursor.prev(),
        };
        self.settle(r)
    }
}

/// An iterator over the user keys and values of a database, as of one
/// sequence number and within a range: the newest version of each key,
/// deleted keys skipped.
///
/// It is used three ways:
///
/// - as an [`Iterator`] of `Result<(key, value)>` in ascending key order
///   (each item copied into new `Vec`s); an error ends the iteration;
/// - as a [`DoubleEndedIterator`]: `.rev()` walks down from the end of the
///   range, and `next` / `next_back` can be mixed: the two ends never yield
///   the same key and the iteration ends where they meet. The back end is a
///   second cursor, made on the first `next_back` (or the only one, if
///   `next` was never called before);
/// - as a cursor, like the `rocksdb` crate's: [`seek_to_first`],
///   [`seek_to_last`], [`seek`] and [`seek_for_prev`] position it;
///   [`valid`], [`key`] and [`value`] borrow the entry under it without
///   copying; and the lending steps [`next_ref`] and [`prev_ref`] yield
///   borrowed entries. After a seek, the entry under the cursor is yielded
///   first (by `next`, `next_ref` or `prev_ref`); after that each step moves
///   one entry before yielding, in either direction. A seek also resets the
///   back end to the end of the range: the items left to `next` and
///   `next_back` alike are those from the cursor to the end of the range.
///   Once a step finds nothing (or an error), every step yields nothing
///   until the next seek.
///
/// Going forward, borrowed keys and values point into the block or memtable
/// they are stored in; going backward, into buffers the iterator reuses (one
/// copy, no allocation per step once they have grown).
///
/// [`seek_to_first`]: DbIterator::seek_to_first
/// [`seek_to_last`]: DbIterator::seek_to_last
/// [`seek`]: DbIterator::seek
/// [`seek_for_prev`]: DbIterator::seek_for_prev
/// [`valid`]: DbIterator::valid
/// [`key`]: DbIterator::key
/// [`value`]: DbIterator::value
/// [`next_ref`]: DbIterator::next_ref
/// [`prev_ref`]: DbIterator::prev_ref
///
/// ```
/// # fn main() -> sievedb::Result<()> {
/// let dir = tempfile::tempdir().unwrap();
/// let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
/// for k in ["a", "b", "c", "d"] {
///     db.put(k, k.to_uppercase())?;
/// }
/// db.delete("c")?;
///
/// // Descending, and within a range.
/// let keys: Vec<Vec<u8>> = db.iter()?.rev().map(|kv| kv.map(|(k, _)| k)).collect::<Result<_, _>>()?;
/// assert_eq!(keys, [b"d", b"b", b"a"]);
/// let keys: Vec<Vec<u8>> = db.range("a".."d")?.rev().map(|kv| kv.map(|(k, _)| k)).collect::<Result<_, _>>()?;
/// assert_eq!(keys, [b"b", b"a"]);
///
/// // Cursor: the last key <= "c" (deleted) is "b".
/// let mut it = db.iter()?;
/// it.seek_for_prev("c")?;
/// assert!(it.valid());
/// assert_eq!((it.key(), it.value()), (&b"b"[..], &b"B"[..]));
///
/// // Borrowing steps: no copy of keys or values.
/// let mut seen = Vec::new();
/// it.seek_to_first()?;
/// while let Some((k, v)) = it.next_ref()? {
///     seen.push(k.len() + v.len());
/// }
/// assert_eq!(seen, [2, 2, 2]);
/// # Ok(())
/// # }
/// ```
pub struct DbIterator {
    factory: CursorFactory,
    seq: SeqNo,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    /// Where the cursors are made (the bounds, unless a prefix seek narrowed them).
    scope: Scope,
    /// The prefix extractor, when one is set.
    prefix: Option<PrefixMode>,
    front: Option<End>,
    back: Option<End>,
    /// The two ends met, or one of them ran out: `Iterator` steps yield
    /// nothing until a seek.
    done: bool,
    /// The range tombstones every cursor of this iterator honours.
    range_dels: Option<Arc<Fragments>>,
    /// Combines merge operands for every cursor of this iterator.
    merge: Option<Arc<dyn MergeOperator>>,
    /// TTL: the expiry every cursor of this iterator applies.
    expiry: Option<Expiry>,
    _pins: Vec<Pin>,
}

impl DbIterator {
    pub(crate) fn new(
        factory: CursorFactory,
        seq: SeqNo,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        pins: Vec<Pin>,
    ) -> Self {
        DbIterator {
            factory,
            seq,
            scope: Scope {
                lower: lower.clone(),
                upper: upper.clone(),
                filter: None,
                only: None,
            },
            prefix: None,
            lower,
            upper,
            front: None,
            back: None,
            done: false,
            range_dels: None,
            merge: None,
            expiry: None,
            _pins: pins,
        }
    }

    /// Hides the entries the tombstones of `rd` cover (set before the first
    /// step; every cursor made later honours them).
    pub(crate) fn set_range_dels(&mut self, rd: Arc<Fragments>) {
        self.range_dels = Some(rd);
    }

    /// Combines merge operands with `op` (set before the first step).
    pub(crate) fn set_merge_operator(&mut self, op: Option<Arc<dyn MergeOperator>>) {
        self.merge = op;
    }

    /// Applies the TTL rule `e`: values are stamped, expired ones deleted
    /// (set before the first step, as [`set_range_dels`](Self::set_range_dels)).
    pub(crate) fn set_expiry(&mut self, e: Expiry) {
        self.expiry = Some(e);
    }

    /// Uses the prefix filters under `extractor` (set before the first
    /// step): for every cursor when every key of the bounds has one prefix
    /// (`Db::prefix`, bounds within one prefix), and for each seek's target
    /// prefix when `same_as_start`.
    pub(crate) fn set_prefix_extractor(
        &mut self,
        extractor: Arc<dyn PrefixExtractor>,
        same_as_start: bool,
    ) {
        let of_bounds = bounds_prefix(extractor.as_ref(), &self.lower, &self.upper);
        self.scope.filter.clone_from(&of_bounds);
        self.prefix = Some(PrefixMode {
            extractor,
            same_as_start,
            of_bounds,
        });
    }

    /// The scope of a seek to `target` (`None`: not a prefix seek, the
    /// iterator's bounds).
    fn scope_for(&self, target: Option<&[u8]>) -> Scope {
        let base = Scope {
            lower: self.lower.clone(),
            upper: self.upper.clone(),
            filter: self.prefix.as_ref().and_then(|m| m.of_bounds.clone()),
            only: None,
        };
        let (Some(m), Some(t)) = (&self.prefix, target) else {
            return base;
        };
        if !m.same_as_start {
            return base;
        }
        let Some(p) = prefix_of(m.extractor.as_ref(), t) else {
            return base;
        };
        let whole = m.extractor.same_result_when_appended(p);
        Scope {
            lower: max_lower(&self.lower, p),
            upper: match prefix_successor(p) {
                Some(s) => min_upper(&self.upper, s),
                None => self.upper.clone(),
            },
            filter: Some(p.to_vec()),
            only: (!whole).then(|| p.to_vec()),
        }
    }

    /// Makes `scope` the iterator's, dropping cursors made for another.
    fn enter(&mut self, scope: Scope) {
        if scope != self.scope {
            self.scope = scope;
            self.front = None;
            self.back = None;
        }
    }

    /// Whether `key` may be yielded in the current scope.
    fn in_scope(&self, key: &[u8]) -> bool {
        match (&self.scope.only, &self.prefix) {
            (Some(p), Some(m)) => prefix_of(m.extractor.as_ref(), key) == Some(p.as_slice()),
            _ => true,
        }
    }

    /// Whether the entry under `end` (a valid one) may be yielded.
    fn end_in_scope(&self, end: Option<&End>) -> bool {
        end.is_none_or(|e| self.in_scope(e.cursor.key()))
    }

    /// Moves the front cursor past keys out of the scope (forward or back).
    fn skip_out_of_scope(&mut self, forward: bool) -> Result<()> {
        if self.scope.only.is_none() {
            return Ok(());
        }
        loop {
            let Some(f) = &self.front else { return Ok(()) };
            if !f.cursor.valid() || self.in_scope(f.cursor.key()) {
                return Ok(());
            }
            #[expect(clippy::expect_used, reason = "checked just above")]
            let c = &mut self.front.as_mut().expect("front").cursor;
            let r = if forward { c.next() } else { c.prev() };
            if let Err(e) = r {
                c.valid = false;
                return Err(e);
            }
        }
    }

    fn make_end(&self) -> End {
        End {
            cursor: UserCursor::new(
                (self.factory)(self.scope.filter.as_deref()),
                self.seq,
                self.scope.lower.clone(),
                self.scope.upper.clone(),
                self.range_dels.clone(),
                self.merge.clone(),
                self.expiry,
            ),
            state: EndState::Unpositioned,
        }
    }

    /// The front end, made on first use.
    #[expect(clippy::expect_used, reason = "set just above when there was none")]
    fn front(&mut self) -> &mut End {
        if self.front.is_none() {
            self.front = Some(self.make_end());
        }
        self.front.as_mut().expect("just made")
    }

    /// Runs a seek on the front end: it then stands `Fresh` on the result,
    /// and the back end is reset (its cursor kept for reuse).
    fn reposition(&mut self, seek: impl FnOnce(&mut UserCursor) -> Result<()>) -> Result<()> {
        self.done = false;
        if let Some(b) = &mut self.back {
            b.state = EndState::Unpositioned;
        }
        let front = self.front();
        front.state = EndState::Fresh;
        let r = seek(&mut front.cursor);
        if r.is_err() {
            front.cursor.valid = false;
        }
        r
    }

    /// Positions the cursor on the first key of the range.
    pub fn seek_to_first(&mut self) -> Result<()> {
        self.enter(self.scope_for(None));
        self.reposition(|c| c.seek_to_first())
    }

    /// Positions the cursor on the last key of the range.
    pub fn seek_to_last(&mut self) -> Result<()> {
        self.enter(self.scope_for(None));
        self.reposition(|c| c.seek_to_last())
    }

    /// Positions the cursor on the first key `>= key` (within the range;
    /// with [`prefix_same_as_start`](crate::ReadOptions::prefix_same_as_start),
    /// within `key`'s prefix).
    pub fn seek(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        self.enter(self.scope_for(Some(key)));
        self.reposition(|c| c.seek(key))?;
        self.skip_out_of_scope(true)
    }

    /// Positions the cursor on the last key `<= key` (within the range;
    /// with [`prefix_same_as_start`](crate::ReadOptions::prefix_same_as_start),
    /// within `key`'s prefix).
    pub fn seek_for_prev(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        self.enter(self.scope_for(Some(key)));
        self.reposition(|c| c.seek_for_prev(key))?;
        self.skip_out_of_scope(false)
    }

    /// Whether the cursor is on an entry (false before the first seek or step).
    pub fn valid(&self) -> bool {
        self.front
            .as_ref()
            .is_some_and(|f| f.state != EndState::Unpositioned && f.cursor.valid())
    }

    /// The key under the cursor, borrowed. Panics unless [`valid`](Self::valid).
    #[expect(
        clippy::expect_used,
        reason = "asserted valid above, and a valid cursor has a front end"
    )]
    pub fn key(&self) -> &[u8] {
        assert!(self.valid(), "DbIterator::key on an invalid cursor");
        self.front.as_ref().expect("valid").cursor.key()
    }

    /// The value under the cursor, borrowed. Panics unless [`valid`](Self::valid).
    #[expect(
        clippy::expect_used,
        reason = "asserted valid above, and a valid cursor has a front end"
    )]
    pub fn value(&self) -> &[u8] {
        assert!(self.valid(), "DbIterator::value on an invalid cursor");
        self.front.as_ref().expect("valid").cursor.value()
    }

    /// The lending counterpart of [`Iterator::next`]: yields the next entry
    /// going up, borrowed (valid until the iterator moves again), or `None`
    /// at the end of the range or where the back end stands.
    pub fn next_ref(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        if !self.step_front(true)? {
            return Ok(None);
        }
        #[expect(
            clippy::expect_used,
            reason = "`step_front` returned true, which it does only with a front end"
        )]
        let c = &self.front.as_ref().expect("stepped").cursor;
        Ok(Some((c.key(), c.value())))
    }

    /// Like [`next_ref`](Self::next_ref), going down: yields the entry under
    /// a freshly positioned cursor (on the last key if it was never
    /// positioned), then the entries before it.
    pub fn prev_ref(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        if !self.step_front(false)? {
            return Ok(None);
        }
        #[expect(
            clippy::expect_used,
            reason = "`step_front` returned true, which it does only with a front end"
        )]
        let c = &self.front.as_ref().expect("stepped").cursor;
        Ok(Some((c.key(), c.value())))
    }

    /// Steps the front end; whether it yields an entry. An error or running
    /// out ends the iteration (until a seek).
    #[inline]
    fn step_front(&mut self, forward: bool) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        let ok = loop {
            let end = self.front();
            let stepped = if forward {
                end.step_forward()
            } else {
                end.step_backward()
            };
            match stepped {
                Ok(true) if !self.end_in_scope(self.front.as_ref()) => continue,
                Ok(ok) => break ok,
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        };
        if !ok || (forward && self.met_back()) {
            self.done = true;
            return Ok(false);
        }
        Ok(true)
    }

    /// Whether the front end's entry was already yielded by the back end.
    #[inline]
    fn met_back(&self) -> bool {
        match (&self.front, &self.back) {
            (Some(f), Some(b)) if b.state == EndState::Yielded && b.cursor.valid() => {
                f.cursor.key() >= b.cursor.key()
            }
            _ => false,
        }
    }

    /// Whether the back end's entry was already yielded (or is to be
    /// yielded next) by the front end.
    fn met_front(&self) -> bool {
        let (Some(f), Some(b)) = (&self.front, &self.back) else {
            return false;
        };
        match f.state {
            EndState::Unpositioned => false,
            _ if !f.cursor.valid() => true,
            EndState::Yielded => b.cursor.key() <= f.cursor.key(),
            EndState::Fresh => b.cursor.key() < f.cursor.key(),
        }
    }

    fn step_back(&mut self) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        if self.back.is_none() {
            // Before any forward step, the front cursor is free: use it.
            let unused = self
                .front
                .as_ref()
                .is_some_and(|f| f.state == EndState::Unpositioned);
            self.back = if unused {
                self.front.take()
            } else {
                Some(self.make_end())
            };
        }
        let ok = loop {
            #[expect(clippy::expect_used, reason = "made just above when there was none")]
            let stepped = self.back.as_mut().expect("made").step_backward();
            match stepped {
                Ok(true) if !self.end_in_scope(self.back.as_ref()) => continue,
                Ok(ok) => break ok,
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        };
        if !ok || self.met_front() {
            self.done = true;
            return Ok(false);
        }
        Ok(true)
    }
}

#[inline]
fn owned((k, v): (&[u8], &[u8])) -> (Vec<u8>, Vec<u8>) {
    (k.to_vec(), v.to_vec())
}

impl Iterator for DbIterator {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_ref().map(|kv| kv.map(owned)).transpose()
    }
}

impl DoubleEndedIterator for DbIterator {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self.step_back() {
            Ok(true) => {
                #[expect(
                    clippy::expect_used,
                    reason = "`step_back` returned true, which it does only with a back end"
                )]
                let c = &self.back.as_ref().expect("stepped").cursor;
                Some(Ok(owned((c.key(), c.value()))))
            }
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

impl std::iter::FusedIterator for DbIterator {}

/// The prefix every key within `lower..upper` has under `x`, if one does:
/// the lower bound's prefix `p`, when every key starting with `p` has it
/// and the upper bound is at most the end of the keys starting with `p`.
fn bounds_prefix(
    x: &dyn PrefixExtractor,
    lower: &Bound<Vec<u8>>,
    upper: &Bound<Vec<u8>>,
) -> Option<Vec<u8>> {
    let (Bound::Included(k) | Bound::Excluded(k)) = lower else {
        return None;
    };
    let p = prefix_of(x, k)?;
    if !x.same_result_when_appended(p) {
        return None;
    }
    let within = match (prefix_successor(p), upper) {
        (None, _) => true,
        (Some(s), Bound::Excluded(u)) => *u <= s,
        (Some(s), Bound::Included(u)) => *u < s,
        (Some(_), Bound::Unbounded) => false,
    };
    within.then(|| p.to_vec())
}

/// The larger of lower bound `b` and `Included(p)`.
fn max_lower(b: &Bound<Vec<u8>>, p: &[u8]) -> Bound<Vec<u8>> {
    match b {
        Bound::Included(k) | Bound::Excluded(k) if k.as_slice() >= p => b.clone(),
        _ => Bound::Included(p.to_vec()),
    }
}

/// The smaller of upper bound `b` and `Excluded(s)`.
fn min_upper(b: &Bound<Vec<u8>>, s: Vec<u8>) -> Bound<Vec<u8>> {
    match b {
        Bound::Included(k) | Bound::Excluded(k) if *k < s => b.clone(),
        _ => Bound::Excluded(s),
    }
}

/// The smallest key greater than every key starting with `prefix`, if any:
/// trailing 0xFF bytes are dropped and the last byte left is incremented.
/// `None` (no upper bound) for an empty or all-0xFF prefix.
pub(crate) fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let keep = prefix.iter().rposition(|&b| b != 0xFF)?;
    let mut s = prefix[..=keep].to_vec();
    s[keep] += 1;
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_successor_strips_trailing_ff() {
        assert_eq!(prefix_successor(b"abc"), Some(b"abd".to_vec()));
        assert_eq!(prefix_successor(b"a\xFF"), Some(b"b".to_vec()));
        assert_eq!(prefix_successor(b"a\xFE\xFF\xFF"), Some(b"a\xFF".to_vec()));
        assert_eq!(prefix_successor(b"\x00"), Some(b"\x01".to_vec()));
        assert_eq!(prefix_successor(b"\xFF\xFF"), None);
        assert_eq!(prefix_successor(b"\xFF"), None);
        assert_eq!(prefix_successor(b""), None);
    }
}
