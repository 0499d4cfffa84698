//! Iterators: the internal iterator trait, the merge of several sorted sources,
//! and the user-facing [`DbIterator`].

use crate::error::Result;
use crate::key::{self, Kind, SeqNo};
use crate::range_del::Fragments;
use std::ops::Bound;
use std::sync::Arc;

/// A cursor over internal keys in [`key::compare`] order.
pub trait InternalIterator: Send {
    /// Whether the cursor is on an entry.
    fn valid(&self) -> bool;
    /// Moves to the first entry.
    fn seek_to_first(&mut self) -> Result<()>;
    /// Moves to the first entry `>= target` (an internal key).
    fn seek(&mut self, target: &[u8]) -> Result<()>;
    /// Moves to the next entry.
    fn next(&mut self) -> Result<()>;
    /// The current internal key (only when valid).
    fn key(&self) -> &[u8];
    /// The current value (only when valid).
    fn value(&self) -> &[u8];
}

/// Merges sorted children into one sorted stream. Children earlier in the list
/// win ties (they hold newer data), although ties cannot happen between
/// distinct sources since sequence numbers are unique.
pub struct MergingIterator {
    children: Vec<Box<dyn InternalIterator>>,
    current: Option<usize>,
}

impl MergingIterator {
    /// Merges `children`.
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> Self {
        MergingIterator {
            children,
            current: None,
        }
    }

    fn find_smallest(&mut self) {
        let mut best: Option<usize> = None;
        for (i, c) in self.children.iter().enumerate() {
            if !c.valid() {
                continue;
            }
            best = match best {
                Some(b) if key::compare(self.children[b].key(), c.key()).is_le() => Some(b),
                _ => Some(i),
            };
        }
        self.current = best;
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        self.current.is_some()
    }
    fn seek_to_first(&mut self) -> Result<()> {
        for c in &mut self.children {
            c.seek_to_first()?;
        }
        self.find_smallest();
        Ok(())
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        for c in &mut self.children {
            c.seek(target)?;
        }
        self.find_smallest();
        Ok(())
    }
    fn next(&mut self) -> Result<()> {
        if let Some(i) = self.current {
            self.children[i].next()?;
            self.find_smallest();
        }
        Ok(())
    }
    fn key(&self) -> &[u8] {
        self.children[self.current.expect("valid iterator")].key()
    }
    fn value(&self) -> &[u8] {
        self.children[self.current.expect("valid iterator")].value()
    }
}

/// Anything whose lifetime an iterator must extend (a pinned version, a snapshot).
pub(crate) type Pin = Box<dyn Send + Sync>;

/// A forward iterator over the user keys and values of a database, as of one
/// sequence number. Yields `Result<(key, value)>`; an error ends the iteration.
pub struct DbIterator {
    inner: MergingIterator,
    seq: SeqNo,
    upper: Bound<Vec<u8>>,
    started: bool,
    lower: Bound<Vec<u8>>,
    last_key: Vec<u8>,
    has_last: bool,
    done: bool,
    /// Every range tombstone visible to the iterator, fragmented once at
    /// creation (`None`: there is none).
    range_dels: Option<Arc<Fragments>>,
    _pins: Vec<Pin>,
}

impl DbIterator {
    pub(crate) fn new(
        inner: MergingIterator,
        seq: SeqNo,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        pins: Vec<Pin>,
    ) -> Self {
        DbIterator {
            inner,
            seq,
            upper,
            lower,
            started: false,
            last_key: Vec::new(),
            has_last: false,
            done: false,
            range_dels: None,
            _pins: pins,
        }
    }

    /// Hides the entries the tombstones of `rd` cover.
    pub(crate) fn set_range_dels(&mut self, rd: Arc<Fragments>) {
        self.range_dels = Some(rd);
    }

    /// Positions the iterator at the first key `>= key` (within its range).
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        let mut target = Vec::with_capacity(key.len() + 8);
        let start: &[u8] = match &self.lower {
            Bound::Included(l) | Bound::Excluded(l) if l.as_slice() > key => l,
            _ => key,
        };
        key::append_internal_key(&mut target, start, self.seq, key::KIND_FOR_SEEK);
        self.inner.seek(&target)?;
        self.started = true;
        self.has_last = false;
        self.done = false;
        if let Bound::Excluded(l) = &self.lower {
            if start == l.as_slice() {
                self.last_key = l.clone();
                self.has_last = true;
            }
        }
        Ok(())
    }

    fn start(&mut self) -> Result<()> {
        match self.lower.clone() {
            Bound::Unbounded => {
                self.inner.seek_to_first()?;
                self.started = true;
                Ok(())
            }
            Bound::Included(l) | Bound::Excluded(l) => self.seek(&l),
        }
    }

    fn advance(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if !self.started {
            self.start()?;
        }
        while self.inner.valid() {
            let ik = self.inner.key();
            let p = key::parse(ik).ok_or_else(|| key::malformed(ik))?;
            if p.seq > self.seq || (self.has_last && p.user_key == self.last_key.as_slice()) {
                self.inner.next()?;
                continue;
            }
            let beyond = match &self.upper {
                Bound::Unbounded => false,
                Bound::Included(u) => p.user_key > u.as_slice(),
                Bound::Excluded(u) => p.user_key >= u.as_slice(),
            };
            if beyond {
                return Ok(None);
            }
            self.last_key.clear();
            self.last_key.extend_from_slice(p.user_key);
            self.has_last = true;
            let hidden = self
                .range_dels
                .as_ref()
                .is_some_and(|rd| rd.covers(p.user_key, p.seq));
            if p.kind == Kind::Put as u8 && !hidden {
                let item = (self.last_key.clone(), self.inner.value().to_vec());
                self.inner.next()?;
                return Ok(Some(item));
            }
            self.inner.next()?;
        }
        Ok(None)
    }
}

impl Iterator for DbIterator {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.advance() {
            Ok(Some(kv)) => Some(Ok(kv)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
