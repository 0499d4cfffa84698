//! [`UserCursor`]: turns a merged stream of internal keys into user entries
//! (LevelDB's `DBIter`): the newest visible version of each user key, in
//! both directions, as of one sequence number and within bounds, with merge
//! operands resolved. A [`DbIterator`](super::DbIterator) holds up to two.

use std::ops::Bound;
use std::sync::Arc;

use super::{InternalIterator, MergingIterator};
use crate::error::Result;
use crate::key::{self, Kind, ParsedKey, SeqNo, MAX_SEQ};
use crate::merge::{MergeOperator, Operands};
use crate::range_del::Fragments;
use crate::ttl::Expiry;

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
pub(super) struct UserCursor {
    inner: MergingIterator,
    seq: SeqNo,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    direction: Direction,
    pub(super) valid: bool,
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
    pub(super) fn new(
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

    pub(super) fn valid(&self) -> bool {
        self.valid
    }

    pub(super) fn key(&self) -> &[u8] {
        debug_assert!(self.valid);
        &self.saved_key
    }

    pub(super) fn value(&self) -> &[u8] {
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

    pub(super) fn seek_to_first(&mut self) -> Result<()> {
        match self.lower.clone() {
            Bound::Unbounded => {
                self.inner.seek_to_first()?;
                self.direction = Direction::Forward;
                self.find_next(false)
            }
            Bound::Included(l) | Bound::Excluded(l) => self.seek(&l),
        }
    }

    pub(super) fn seek_to_last(&mut self) -> Result<()> {
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
    pub(super) fn seek(&mut self, user_key: &[u8]) -> Result<()> {
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
    pub(super) fn seek_for_prev(&mut self, user_key: &[u8]) -> Result<()> {
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

    pub(super) fn next(&mut self) -> Result<()> {
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

    pub(super) fn prev(&mut self) -> Result<()> {
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
