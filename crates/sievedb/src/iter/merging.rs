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
///
/// The valid children are kept in a binary heap of child indices (`heap`),
/// ordered by `MergingIterator::before`: a min-heap of keys moving forward,
/// a max-heap moving backward, the earlier child first on equal keys in both.
/// A step moves the top child and sifts it down: `O(log n)` key comparisons
/// instead of a scan of every child.
pub struct MergingIterator {
    children: Vec<Box<dyn InternalIterator>>,
    /// Indices of the valid children, a heap by `before`; the top (`heap[0]`)
    /// is the current child.
    heap: Vec<usize>,
    direction: Direction,
    /// The current key, copied when the direction turns (reused buffer).
    turn_key: Vec<u8>,
}

impl MergingIterator {
    /// Merges `children`.
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> Self {
        MergingIterator {
            heap: Vec::with_capacity(children.len()),
            children,
            direction: Direction::Forward,
            turn_key: Vec::new(),
        }
    }

    /// Whether child `a` comes before child `b` in the current direction
    /// (both valid): the smaller key forward, the larger backward, and the
    /// earlier child on equal keys.
    fn before(&self, a: usize, b: usize) -> bool {
        let wanted = match self.direction {
            Direction::Forward => Ordering::Less,
            Direction::Reverse => Ordering::Greater,
        };
        match key::compare(self.children[a].key(), self.children[b].key()) {
            Ordering::Equal => a < b,
            o => o == wanted,
        }
    }

    /// Rebuilds the heap from every valid child (after all of them moved).
    fn rebuild(&mut self, direction: Direction) {
        self.direction = direction;
        self.heap.clear();
        self.heap
            .extend((0..self.children.len()).filter(|&i| self.children[i].valid()));
        for pos in (0..self.heap.len() / 2).rev() {
            self.sift_down(pos);
        }
    }

    /// Restores the heap order below `pos`, whose child may have moved.
    fn sift_down(&mut self, mut pos: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * pos + 1, 2 * pos + 2);
            let mut first = pos;
            if l < n && self.before(self.heap[l], self.heap[first]) {
                first = l;
            }
            if r < n && self.before(self.heap[r], self.heap[first]) {
                first = r;
            }
            if first == pos {
                return;
            }
            self.heap.swap(pos, first);
            pos = first;
        }
    }

    /// After the top child moved: drops it if it ran out, then re-sorts the top.
    fn fix_top(&mut self) {
        if !self.children[self.heap[0]].valid() {
            self.heap.swap_remove(0);
        }
        if !self.heap.is_empty() {
            self.sift_down(0);
        }
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
        Ok(())
    }

    /// Positions every child with `each`, then rebuilds the heap for `direction`.
    fn reposition(
        &mut self,
        direction: Direction,
        mut each: impl FnMut(&mut dyn InternalIterator) -> Result<()>,
    ) -> Result<()> {
        // Until every child is placed the heap does not describe them.
        self.heap.clear();
        for c in &mut self.children {
            each(c.as_mut())?;
        }
        self.rebuild(direction);
        Ok(())
    }

    #[expect(
        clippy::expect_used,
        reason = "called only while the iterator is valid, when its heap is not empty"
    )]
    fn current(&self) -> usize {
        *self.heap.first().expect("valid iterator")
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        !self.heap.is_empty()
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.reposition(Direction::Forward, |c| c.seek_to_first())
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.reposition(Direction::Reverse, |c| c.seek_to_last())
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.reposition(Direction::Forward, |c| c.seek(target))
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.reposition(Direction::Reverse, |c| c.seek_for_prev(target))
    }
    fn next(&mut self) -> Result<()> {
        let Some(&i) = self.heap.first() else {
            return Ok(());
        };
        if self.direction != Direction::Forward {
            self.heap.clear();
            self.turn_forward(i)?;
            self.children[i].next()?;
            self.rebuild(Direction::Forward);
            return Ok(());
        }
        if let Err(e) = self.children[i].next() {
            // The child's position is unknown: the heap no longer holds.
            self.heap.clear();
            return Err(e);
        }
        self.fix_top();
        Ok(())
    }
    fn prev(&mut self) -> Result<()> {
        let Some(&i) = self.heap.first() else {
            return Ok(());
        };
        if self.direction != Direction::Reverse {
            self.heap.clear();
            self.turn_reverse(i)?;
            self.children[i].prev()?;
            self.rebuild(Direction::Reverse);
            return Ok(());
        }
        if let Err(e) = self.children[i].prev() {
            self.heap.clear();
            return Err(e);
        }
        self.fix_top();
        Ok(())
    }
    fn key(&self) -> &[u8] {
        self.children[self.current()].key()
    }
    fn value(&self) -> &[u8] {
        self.children[self.current()].value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iter::testing::{check_bidirectional, random_entries, VecIter};

    #[test]
    fn merges_in_both_directions() {
        for seed in 0..40u64 {
            let all = random_entries(seed, 300);
            // 1 to 13 children (a heap several levels deep), some empty.
            let n = 1 + seed as usize % 13;
            let mut parts: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); n + 1];
            for (i, e) in all.iter().enumerate() {
                let p = (i * 7 + seed as usize) % n;
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

    #[test]
    fn the_earlier_child_wins_equal_keys_in_both_directions() {
        let k =
            |u: &str, seq: u64| crate::key::internal_key(u.as_bytes(), seq, crate::key::Kind::Put);
        let child = |v: &str| {
            let e = vec![
                (k("a", 1), b"x".to_vec()),
                (k("b", 5), v.as_bytes().to_vec()),
            ];
            Box::new(VecIter::new(e)) as Box<dyn InternalIterator>
        };
        let mut m = MergingIterator::new(vec![child("0"), child("1"), child("2")]);
        let mut seen = Vec::new();
        m.seek(&k("b", 5)).unwrap();
        while m.valid() {
            seen.push(m.value().to_vec());
            m.next().unwrap();
        }
        assert_eq!(seen, [b"0", b"1", b"2"]);
        seen.clear();
        m.seek_to_last().unwrap();
        for _ in 0..3 {
            seen.push(m.value().to_vec());
            m.prev().unwrap();
        }
        assert_eq!(seen, [b"0", b"1", b"2"]);
        // Turning around on an equal key keeps the order of the children.
        m.seek(&k("b", 5)).unwrap();
        m.next().unwrap();
        assert_eq!(m.value(), b"1");
        m.prev().unwrap();
        assert_eq!(m.value(), b"x", "prev from child 1 passes every b");
    }
}
