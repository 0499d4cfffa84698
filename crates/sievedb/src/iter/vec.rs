//! A cursor over entries held in memory (repair's salvaged entries, and the
//! iterators' unit tests).

use super::InternalIterator;
use crate::error::Result;
use crate::key;

/// A cursor over entries held in memory, sorted by [`key::compare`].
pub(crate) struct VecIter {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    /// `entries.len()` when invalid.
    pos: usize,
}

impl VecIter {
    /// A cursor over `entries`, which must be sorted by [`key::compare`].
    pub(crate) fn new(entries: Vec<(Vec<u8>, Vec<u8>)>) -> Self {
        VecIter {
            pos: entries.len(),
            entries,
        }
    }
}

impl InternalIterator for VecIter {
    fn valid(&self) -> bool {
        self.pos < self.entries.len()
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.pos = 0;
        Ok(())
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.pos = self.entries.len().saturating_sub(1);
        Ok(())
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.pos = self
            .entries
            .partition_point(|(k, _)| key::compare(k, target).is_lt());
        Ok(())
    }
    fn next(&mut self) -> Result<()> {
        self.pos += 1;
        Ok(())
    }
    fn prev(&mut self) -> Result<()> {
        self.pos = self.pos.checked_sub(1).unwrap_or(self.entries.len());
        Ok(())
    }
    fn key(&self) -> &[u8] {
        &self.entries[self.pos].0
    }
    fn value(&self) -> &[u8] {
        &self.entries[self.pos].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iter::testing::{check_bidirectional, random_entries};

    #[test]
    fn vec_iter_in_both_directions() {
        for (seed, n) in [(1u64, 0usize), (2, 1), (3, 50)] {
            let entries = random_entries(seed, n);
            check_bidirectional(&mut VecIter::new(entries.clone()), &entries, seed);
        }
    }
}
