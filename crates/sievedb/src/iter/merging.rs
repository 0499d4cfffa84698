//! The merge of several sorted internal iterators into one sorted stream, in
//! both directions (LevelDB's merger).

use std::cmp::Ordering;

use super::InternalIterator;
use crate::error::Result;
use crate::key;

/// Which way the children are positioned.
///
/// Invariant: moving forward, every valid child is on its first entry `>=`
/// the current key (the current child on the current key itself); moving
/// backward, every valid child is on its last entry `<=` the current key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    Forward,
    Reverse,
}

/// Merges sorted children into one sorted stream. Children earlier in the list
/// win ties (they hold newer data), although ties cannot happen between
/// distinct sources since sequence numbers are unique.
pub struct MergingIterator {
    children: Vec<Box<dyn InternalIterator>>,
    current: Option<usize>,
    direction: Direction,
    /// The current key, copied when the direction turns (reused buffer).
    turn_key: Vec<u8>,
}

impl MergingIterator {
    /// Merges `children`.
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> Self {
        MergingIterator {
            children,
            current: None,
            direction: Direction::Forward,
            turn_key: Vec::new(),
        }
    }

    fn find_smallest(&mut self) {
        self.current = self.find(Ordering::Less);
    }

    fn find_largest(&mut self) {
        self.current = self.find(Ordering::Greater);
    }

    /// The valid child whose key is furthest in direction `wanted` (`Less`:
    /// the smallest); the earliest child on ties.
    fn find(&self, wanted: Ordering) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, c) in self.children.iter().enumerate() {
            if !c.valid() {
                continue;
            }
            best = match best {
                Some(b) if key::compare(c.key(), self.children[b].key()) != wanted => Some(b),
                _ => Some(i),
            };
        }
        best
    }

    /// Turns to the forward direction: every child but the current one moves
    /// to its first entry `>` the current key.
    fn turn_forward(&mut self, cur: usize) -> Result<()> {
        self.turn_key.clear();
        self.turn_key.extend_from_slice(self.children[cur].key());
        for (i, c) in self.children.iter_mut().enumerate() {
            if i == cur {
                continue;
            }
            c.seek(&self.turn_key)?;
            if c.valid() && key::compare(c.key(), &self.turn_key) == Ordering::Equal {
                c.next()?;
            }
        }
        self.direction = Direction::Forward;
        Ok(())
    }

    /// Turns to the reverse direction: every child but the current one moves
    /// to its last entry `<` the current key.
    fn turn_reverse(&mut self, cur: usize) -> Result<()> {
        self.turn_key.clear();
        self.turn_key.extend_from_slice(self.children[cur].key());
        for (i, c) in self.children.iter_mut().enumerate() {
            if i == cur {
                continue;
            }
            c.seek(&self.turn_key)?;
            if c.valid() {
                c.prev()?;
            } else {
                c.seek_to_last()?;
            }
        }
        self.direction = Direction::Reverse;
        Ok(())
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
        self.direction = Direction::Forward;
        self.find_smallest();
        Ok(())
    }
    fn seek_to_last(&mut self) -> Result<()> {
        for c in &mut self.children {
            c.seek_to_last()?;
        }
        self.direction = Direction::Reverse;
        self.find_largest();
        Ok(())
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        for c in &mut self.children {
            c.seek(target)?;
        }
        self.direction = Direction::Forward;
        self.find_smallest();
        Ok(())
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        for c in &mut self.children {
            c.seek_for_prev(target)?;
        }
        self.direction = Direction::Reverse;
        self.find_largest();
        Ok(())
    }
    fn next(&mut self) -> Result<()> {
        let Some(i) = self.current else {
            return Ok(());
        };
        if self.direction != Direction::Forward {
            self.turn_forward(i)?;
        }
        self.children[i].next()?;
        self.find_smallest();
        Ok(())
    }
    fn prev(&mut self) -> Result<()> {
        let Some(i) = self.current else {
            return Ok(());
        };
        if self.direction != Direction::Reverse {
            self.turn_reverse(i)?;
        }
        self.children[i].prev()?;
        self.find_largest();
        Ok(())
    }
    fn key(&self) -> &[u8] {
        self.children[self.current.expect("valid iterator")].key()
    }
    fn value(&self) -> &[u8] {
        self.children[self.current.expect("valid iterator")].value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iter::testing::{check_bidirectional, random_entries, VecIter};

    #[test]
    fn merges_in_both_directions() {
        for seed in 0..20u64 {
            let all = random_entries(seed, 300);
            let mut parts: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); 4];
            for (i, e) in all.iter().enumerate() {
                let p = (i * 7 + seed as usize) % (1 + seed as usize % 4);
                parts[p].push(e.clone());
            }
            let children = parts
                .into_iter()
                .map(|p| Box::new(VecIter::new(p)) as Box<dyn InternalIterator>)
                .collect();
            let mut m = MergingIterator::new(children);
            check_bidirectional(&mut m, &all, seed);
        }
    }
}
