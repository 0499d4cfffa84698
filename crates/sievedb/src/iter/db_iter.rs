//! The user-facing iterator: the newest visible version of each user key, in
//! both directions, as of one sequence number and within bounds.
//!
//! Two layers live here. [`UserCursor`] turns a merged stream of internal
//! keys into user entries (LevelDB's `DBIter`). [`DbIterator`] holds up to two
//! of them, made lazily: the *front* one, which the cursor methods and
//! [`Iterator::next`] move, and the *back* one, which
//! [`DoubleEndedIterator::next_back`] moves.

use std::ops::Bound;
use std::sync::Arc;

use super::{InternalIterator, MergingIterator, Pin};
use crate::error::Result;
use crate::key::{self, Kind, ParsedKey, SeqNo, MAX_SEQ};
use crate::merge::{MergeOperator, Operands};
use crate::range_del::Fragments;
use crate::ttl::Expiry;

/// Builds a fresh merged cursor over the data an iterator reads (the same
/// pinned memtables and version every time).
pub(crate) type CursorFactory = Box<dyn Fn() -> MergingIterator + Send + Sync>;

/// What one internal entry means to a read at the iterator's sequence number.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Visibility {
    /// Written after the read's sequence number: as if absent.
    Hidden,
    /// A deletion: hides this and every older version of the key.
    Deleted,
    /// A value: the key's value if no newer visible entry exists.
    Live,
    /// A merge operand: combined with the older entries of the key.
    Operand,
}

/// Which way a [`UserCursor`]'s merged cursor is positioned. Either way,
/// when the cursor is valid, `saved_key` holds the current user key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    /// The merged cursor is on the entry that is the current user entry
    /// (whose value is read in place), or, after a merge, past the entries
    /// the merge read (the value is then in `saved_value`).
    Forward,
    /// The merged cursor is before every entry of the current user key (on
    /// the last entry of a smaller key, or invalid); the current value is
    /// copied into `saved_value`.
    Reverse,
}

/// A cursor over user entries: the newest version of each key with sequence
/// `<=` the read's, tombstoned keys skipped, keys outside the bounds never
/// shown.
struct UserCursor {
    inner: MergingIterator,
    seq: SeqNo,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    direction: Direction,
    valid: bool,
    /// The current user key when valid; while moving forward, the user key
    /// whose older entries are skipped. A reused buffer (no allocation per
    /// step once grown).
    saved_key: Vec<u8>,
    /// Reverse, or forward after a merge: the current value (reused buffer).
    saved_value: Vec<u8>,
    /// Forward only: the current value is a merge result in `saved_value`,
    /// and the merged cursor stands after the entries that made it.
    merged: bool,
    /// Combines merge operands (`None`: reading one is an error).
    merge: Option<Arc<dyn MergeOperator>>,
    /// The operands of the key being resolved (reused).
    operands: Operands,
    /// Internal seek targets (reused buffer).
    target: Vec<u8>,
    /// Every range tombstone visible to the read, fragmented once when the
    /// iterator was made (`None`: there is none).
    range_dels: Option<Arc<Fragments>>,
    /// TTL: values carry write-time stamps; an expired one is a deletion.
    expiry: Option<Expiry>,
}

impl UserCursor {
    fn new(
        inner: MergingIterator,
        seq: SeqNo,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        range_dels: Option<Arc<Fragments>>,
        merge: Option<Arc<dyn MergeOperator>>,
        expiry: Option<Expiry>,
    ) -> Self {
        UserCursor {
            inner,
            seq,
            lower,
            upper,
            direction: Direction::Forward,
            valid: false,
            saved_key: Vec::new(),
            saved_value: Vec::new(),
            merged: false,
            merge,
            operands: Operands::default(),
            target: Vec::new(),
            range_dels,
            expiry,
        }
    }

    /// The one decision of what an entry means to this read; both directions
    /// use it. An entry that a range tombstone newer than it (and visible to
    /// the read) covers counts as a deletion, and so does an expired value
    /// under a TTL (the merged cursor is on the entry: its value is read).
    fn visibility(&self, p: &ParsedKey<'_>) -> Result<Visibility> {
        Ok(if p.seq > self.seq {
            Visibility::Hidden
        } else if self
            .range_dels
            .as_ref()
            .is_some_and(|rd| rd.covers(p.user_key, p.seq))
        {
            Visibility::Deleted
        } else if p.kind == Kind::Merge as u8 {
            Visibility::Operand
        } else if p.kind != Kind::Put as u8 {
            Visibility::Deleted
        } else if let Some(e) = &self.expiry {
            match e.live(self.inner.value())? {
                Some(_) => Visibility::Live,
                None => Visibility::Deleted,
            }
        } else {
            Visibility::Live
        })
    }

    /// A value as the user sees it: without its stamp under a TTL.
    fn user_value<'a>(&self, stored: &'a [u8]) -> &'a [u8] {
        match self.expiry {
            Some(_) => Expiry::strip(stored),
            None => stored,
        }
    }

    fn below_lower(&self, user_key: &[u8]) -> bool {
        match &self.lower {
            Bound::Unbounded => false,
            Bound::Included(l) => user_key < l.as_slice(),
            Bound::Excluded(l) => user_key <= l.as_slice(),
        }
    }

    fn beyond_upper(&self, user_key: &[u8]) -> bool {
        match &self.upper {
            Bound::Unbounded => false,
            Bound::Included(u) => user_key > u.as_slice(),
            Bound::Excluded(u) => user_key >= u.as_slice(),
        }
    }

    fn valid(&self) -> bool {
        self.valid
    }

    fn key(&self) -> &[u8] {
        debug_assert!(self.valid);
        &self.saved_key
    }

    fn value(&self) -> &[u8] {
        debug_assert!(self.valid);
        match self.direction {
            Direction::Forward if !self.merged => self.user_value(self.inner.value()),
            _ => &self.saved_value,
        }
    }

    /// The internal key sorting before every entry of `user_key`
    /// (`last == false`) or after all of them (`last == true`), in `target`.
    fn set_target(&mut self, user_key: &[u8], last: bool) {
        self.target.clear();
        let (seq, kind) = if last { (0, 0) } else { (MAX_SEQ, u8::MAX) };
        key::append_internal_key(&mut self.target, user_key, seq, kind);
    }

    fn seek_to_first(&mut self) -> Result<()> {
        match self.lower.clone() {
            Bound::Unbounded => {
                self.inner.seek_to_first()?;
                self.direction = Direction::Forward;
                self.find_next(false)
            }
            Bound::Included(l) | Bound::Excluded(l) => self.seek(&l),
        }
    }

    fn seek_to_last(&mut self) -> Result<()> {
        match self.upper.clone() {
            Bound::Unbounded => {
                self.inner.seek_to_last()?;
                self.direction = Direction::Reverse;
                self.find_prev()
            }
            Bound::Included(u) | Bound::Excluded(u) => self.seek_for_prev(&u),
        }
    }

    /// Moves to the first visible key `>= user_key` within the bounds.
    fn seek(&mut self, user_key: &[u8]) -> Result<()> {
        let (start, skip) = match &self.lower {
            Bound::Included(l) if l.as_slice() > user_key => (l.clone(), false),
            Bound::Excluded(l) if l.as_slice() >= user_key => (l.clone(), true),
            _ => (user_key.to_vec(), false),
        };
        self.set_target(&start, false);
        self.inner.seek(&self.target)?;
        self.direction = Direction::Forward;
        if skip {
            self.saved_key = start;
        }
        self.find_next(skip)
    }

    /// Moves to the last visible key `<= user_key` within the bounds.
    fn seek_for_prev(&mut self, user_key: &[u8]) -> Result<()> {
        let (end, inclusive) = match &self.upper {
            Bound::Included(u) if u.as_slice() < user_key => (u.clone(), true),
            Bound::Excluded(u) if u.as_slice() <= user_key => (u.clone(), false),
            _ => (user_key.to_vec(), true),
        };
        self.set_target(&end, inclusive);
        self.inner.seek_for_prev(&self.target)?;
        self.direction = Direction::Reverse;
        self.find_prev()
    }

    fn next(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        if self.direction == Direction::Reverse {
            // The merged cursor is before every entry of `saved_key`: move it
            // onto them, then skip them.
            self.direction = Direction::Forward;
            if self.inner.valid() {
                self.inner.next()?;
            } else {
                self.set_target(&self.saved_key.clone(), false);
                self.inner.seek(&self.target)?;
            }
        } else if !self.merged {
            // `saved_key` holds the current key: its older entries are skipped.
            self.inner.next()?;
        }
        self.find_next(true)
    }

    fn prev(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        if self.direction == Direction::Forward && self.merged {
            // The merged cursor may have run off the end while merging: seek
            // to the last entry before the current key's.
            self.set_target(&self.saved_key.clone(), false);
            self.inner.seek_for_prev(&self.target)?;
            self.direction = Direction::Reverse;
        } else if self.direction == Direction::Forward {
            // Step the merged cursor back past every entry of the current
            // key (`saved_key`).
            loop {
                self.inner.prev()?;
                if !self.inner.valid()
                    || key::user_key(self.inner.key()) < self.saved_key.as_slice()
                {
                    break;
                }
            }
            self.direction = Direction::Reverse;
        }
        self.find_prev()
    }

    /// Forward from the merged cursor to the first visible user entry,
    /// skipping entries of keys `<= saved_key` when `skipping`.
    fn find_next(&mut self, mut skipping: bool) -> Result<()> {
        self.merged = false;
        while self.inner.valid() {
            let ik = self.inner.key();
            let p = key::parse(ik).ok_or_else(|| key::malformed(ik))?;
            if self.beyond_upper(p.user_key) {
                break;
            }
            let skip = skipping && p.user_key <= self.saved_key.as_slice();
            if !skip {
                match self.visibility(&p)? {
                    Visibility::Hidden => {}
                    Visibility::Deleted => {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        skipping = true;
                    }
                    Visibility::Live => {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        self.valid = true;
                        return Ok(());
                    }
                    Visibility::Operand => {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        return self.merge_forward();
                    }
                }
            }
            self.inner.next()?;
        }
        self.valid = false;
        Ok(())
    }

    /// Forward from the newest visible entry of `saved_key`, a merge
    /// operand under the merged cursor: gathers the operands below it down
    /// to a value, a deletion or the key's last entry, and merges them into
    /// `saved_value`. The merged cursor is left on the entry that ended the
    /// gathering (`merged` tells [`next`](Self::next) not to step first).
    fn merge_forward(&mut self) -> Result<()> {
        self.operands.clear();
        self.operands.push_older(self.inner.value());
        let mut base = false;
        self.inner.next()?;
        while self.inner.valid() {
            let ik = self.inner.key();
            let p = key::parse(ik).ok_or_else(|| key::malformed(ik))?;
            if p.user_key != self.saved_key.as_slice() {
                break;
            }
            match self.visibility(&p)? {
                Visibility::Hidden => {}
                Visibility::Operand => self.operands.push_older(self.inner.value()),
                Visibility::Live => {
                    self.saved_value.clear();
                    self.saved_value.extend_from_slice(self.inner.value());
                    base = true;
                    break;
                }
                Visibility::Deleted => break,
            }
            self.inner.next()?;
        }
        let existing = base.then_some(self.saved_value.as_slice());
        let merged = self
            .operands
            .full_merge(self.merge.as_ref(), &self.saved_key, existing)?;
        self.saved_value = merged;
        self.merged = true;
        self.valid = true;
        Ok(())
    }

    /// Backward from the merged cursor: gathers the newest visible entry of
    /// the largest key at or before it (with the operands above its base
    /// value, merged), leaving the merged cursor before every entry of that
    /// key. Entries of one key come oldest first going backward.
    fn find_prev(&mut self) -> Result<()> {
        let mut found = Visibility::Deleted;
        self.merged = false;
        self.operands.clear();
        while self.inner.valid() {
            let ik = self.inner.key();
            let p = key::parse(ik).ok_or_else(|| key::malformed(ik))?;
            if self.below_lower(p.user_key) {
                break;
            }
            let v = self.visibility(&p)?;
            if v != Visibility::Hidden {
                let answered = found == Visibility::Live || !self.operands.is_empty();
                if answered && p.user_key < self.saved_key.as_slice() {
                    // An older key: the entries gathered so far are the answer.
                    break;
                }
                self.saved_key.clear();
                self.saved_key.extend_from_slice(p.user_key);
                if v == Visibility::Operand {
                    // Newer than the base value and operands gathered so far.
                    self.operands.push_newer(self.inner.value());
                } else {
                    found = v;
                    self.operands.clear();
                    self.saved_value.clear();
                    if v == Visibility::Live {
                        let value = self.user_value(self.inner.value());
                        self.saved_value.extend_from_slice(value);
                    }
                }
            }
            self.inner.prev()?;
        }
        if !self.operands.is_empty() {
            let existing = (found == Visibility::Live).then_some(self.saved_value.as_slice());
            let merged =
                self.operands
                    .full_merge(self.merge.as_ref(), &self.saved_key, existing)?;
            self.saved_value = merged;
            found = Visibility::Live;
        }
        self.valid = found == Visibility::Live;
        Ok(())
    }
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

    fn make_end(&self) -> End {
        End {
            cursor: UserCursor::new(
                (self.factory)(),
                self.seq,
                self.lower.clone(),
                self.upper.clone(),
                self.range_dels.clone(),
                self.merge.clone(),
                self.expiry,
            ),
            state: EndState::Unpositioned,
        }
    }

    /// The front end, made on first use.
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
        self.reposition(|c| c.seek_to_first())
    }

    /// Positions the cursor on the last key of the range.
    pub fn seek_to_last(&mut self) -> Result<()> {
        self.reposition(|c| c.seek_to_last())
    }

    /// Positions the cursor on the first key `>= key` (within the range).
    pub fn seek(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        self.reposition(|c| c.seek(key))
    }

    /// Positions the cursor on the last key `<= key` (within the range).
    pub fn seek_for_prev(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        self.reposition(|c| c.seek_for_prev(key))
    }

    /// Whether the cursor is on an entry (false before the first seek or step).
    pub fn valid(&self) -> bool {
        self.front
            .as_ref()
            .is_some_and(|f| f.state != EndState::Unpositioned && f.cursor.valid())
    }

    /// The key under the cursor, borrowed. Panics unless [`valid`](Self::valid).
    pub fn key(&self) -> &[u8] {
        assert!(self.valid(), "DbIterator::key on an invalid cursor");
        self.front.as_ref().expect("valid").cursor.key()
    }

    /// The value under the cursor, borrowed. Panics unless [`valid`](Self::valid).
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
        let end = self.front();
        let stepped = if forward {
            end.step_forward()
        } else {
            end.step_backward()
        };
        let ok = match stepped {
            Ok(ok) => ok,
            Err(e) => {
                self.done = true;
                return Err(e);
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
        let stepped = self.back.as_mut().expect("made").step_backward();
        let ok = match stepped {
            Ok(ok) => ok,
            Err(e) => {
                self.done = true;
                return Err(e);
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
                let c = &self.back.as_ref().expect("stepped").cursor;
                Some(Ok(owned((c.key(), c.value()))))
            }
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

impl std::iter::FusedIterator for DbIterator {}

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
