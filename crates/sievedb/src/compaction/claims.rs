//! What the running compactions of one keyspace hold of its levels, so that
//! two compactions never take the same file and the outputs of one never
//! land among the inputs of another.
//!
//! A compaction of a leveled level >= 1 into the next one (one run in, at
//! most one run below) holds the user-key range of its inputs in both
//! levels: its outputs replace exactly the files it took, and land only in
//! that range. Several of them run side by side on one level pair, or on
//! two pairs sharing a level (`l - 1` into `l` beside `l` into `l + 1`),
//! when their ranges are disjoint: after a large load the debt sits in two
//! or three neighbouring levels, and a claim of whole levels let one thread
//! at a time work there while the others waited (`pick` in mod.rs says when
//! a second compaction of a level is chosen). Every other compaction (all
//! of L0, a level of several runs, tiering, a last level rewritten in
//! place) holds both its levels whole.
//!
//! Why disjoint ranges are enough: the levels involved hold one sorted run
//! each, so the files of level `l + 1` a range overlaps are consecutive and
//! lie inside the range once they are added to it; two disjoint ranges take
//! disjoint files, write disjoint outputs, and each one's tombstone check
//! (no file below holds the key) sees no file the other can move into its
//! range: a key moves down only with the file of the one level-run that
//! holds it, which is claimed.

use super::Compaction;

/// A running compaction's hold on its levels (see the module doc).
#[derive(Clone, Debug)]
enum Span {
    /// Both levels, every key.
    Whole,
    /// The user keys `[lo, hi]` of both levels.
    Keys(Vec<u8>, Vec<u8>),
}

#[derive(Clone, Debug)]
struct Held {
    id: u64,
    level: usize,
    output_level: usize,
    span: Span,
    /// Bytes of the inputs taken from `level` (not counted again when the
    /// level's score is computed: they are on their way out).
    leaving: u64,
}

impl Held {
    fn touches(&self, level: usize) -> bool {
        self.level == level || self.output_level == level
    }
}

/// The claim a running compaction holds, to give back with
/// [`Claims::release`].
#[derive(Debug)]
#[must_use = "a claim not released keeps its levels busy"]
pub struct ClaimId(u64);

/// The holds of a keyspace's running compactions.
#[derive(Clone, Debug, Default)]
pub struct Claims {
    held: Vec<Held>,
    next_id: u64,
}

impl Claims {
    /// No running compaction holds any key of `level`.
    pub fn level_free(&self, level: usize) -> bool {
        !self.held.iter().any(|h| h.touches(level))
    }

    /// Bytes running compactions are taking out of `level`.
    pub fn leaving(&self, level: usize) -> u64 {
        self.held
            .iter()
            .filter(|h| h.level == level)
            .map(|h| h.leaving)
            .sum()
    }

    /// Whether a running compaction holds all of `level`.
    pub fn holds_whole(&self, level: usize) -> bool {
        self.held
            .iter()
            .any(|h| h.touches(level) && matches!(h.span, Span::Whole))
    }

    /// Whether a compaction holding the user keys `[lo, hi]` of `level` and
    /// `level + 1` may start beside the running ones.
    pub fn keys_free(&self, level: usize, lo: &[u8], hi: &[u8]) -> bool {
        self.held.iter().all(|h| {
            let shared = h.touches(level) || h.touches(level + 1);
            !shared
                || match &h.span {
                    Span::Keys(a, b) => b.as_slice() < lo || hi < a.as_slice(),
                    Span::Whole => false,
                }
        })
    }

    /// Whether `c` may start beside the running compactions.
    pub fn admits(&self, c: &Compaction) -> bool {
        match span_of(c) {
            Span::Keys(lo, hi) => self.keys_free(c.level, &lo, &hi),
            Span::Whole => self.level_free(c.level) && self.level_free(c.output_level),
        }
    }

    /// Records that `c` runs (the caller checked [`Claims::admits`]).
    pub fn take(&mut self, c: &Compaction) -> ClaimId {
        debug_assert!(self.admits(c), "a compaction taken over a running one");
        self.next_id += 1;
        let leaving = c
            .inputs
            .iter()
            .filter(|(l, _)| *l == c.level)
            .flat_map(|(_, files)| files.iter().map(|f| f.size))
            .sum();
        self.held.push(Held {
            id: self.next_id,
            level: c.level,
            output_level: c.output_level,
            span: span_of(c),
            leaving,
        });
        ClaimId(self.next_id)
    }

    /// Gives back what the compaction of `id` held.
    pub fn release(&mut self, id: ClaimId) {
        self.held.retain(|h| h.id != id.0);
    }
}

/// What `c` must hold: a key range when it compacts one run of a level >= 1
/// into at most one run of the next level (see the module doc), else both
/// levels whole.
fn span_of(c: &Compaction) -> Span {
    let runs_at = |level| c.inputs.iter().filter(|(l, _)| *l == level).count();
    let ranged = c.level >= 1
        && c.output_level == c.level + 1
        && c.output_run.is_some()
        && runs_at(c.level) == 1
        && runs_at(c.output_level) <= 1;
    if !ranged {
        return Span::Whole;
    }
    let mut files = c.inputs.iter().flat_map(|(_, files)| files);
    let Some(first) = files.next() else {
        return Span::Whole;
    };
    let (lo, hi) = files.fold(
        (first.smallest_user(), first.largest_user()),
        |(a, b), f| (a.min(f.smallest_user()), b.max(f.largest_user())),
    );
    Span::Keys(lo.to_vec(), hi.to_vec())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::key::{self, Kind};
    use crate::version::FileMeta;

    /// A file of user keys `[a, b]` (one letter each).
    fn file(number: u64, a: u8, b: u8) -> Arc<FileMeta> {
        let tables = crate::compaction::test_tables();
        let ik = |u: u8| key::internal_key(&[u], 1, Kind::Put);
        let mut f = FileMeta::for_test(number, ik(a), ik(b), tables);
        Arc::get_mut(&mut f).expect("fresh").size = 100;
        f
    }

    /// A leveled compaction of `level` taking `files` (each `(a, b)`) from
    /// it, into the level's only run below.
    fn ranged(level: usize, files: &[(u8, u8)]) -> Compaction {
        let files = files
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| file(i as u64 + 1, a, b))
            .collect();
        Compaction {
            level,
            output_level: level + 1,
            inputs: vec![(level, files)],
            trivial_move: false,
            output_run: Some(7),
        }
    }

    #[test]
    fn disjoint_ranges_of_one_level_run_side_by_side() {
        let mut claims = Claims::default();
        let a = claims.take(&ranged(3, &[(b'a', b'c')]));
        assert!(claims.admits(&ranged(3, &[(b'd', b'f')])));
        assert!(!claims.admits(&ranged(3, &[(b'c', b'e')])), "shares c");
        // Level 2 into 3 meets the claim in level 3; level 4 into 5 does not.
        assert!(!claims.admits(&ranged(2, &[(b'b', b'b')])));
        assert!(claims.admits(&ranged(2, &[(b'x', b'z')])));
        assert!(claims.admits(&ranged(5, &[(b'a', b'z')])));
        assert_eq!(claims.leaving(3), 100);
        assert_eq!(claims.leaving(4), 0);
        assert!(!claims.level_free(4) && claims.level_free(5));
        claims.release(a);
        assert!(claims.level_free(3) && claims.level_free(4));
    }

    #[test]
    fn other_compactions_hold_both_levels_whole() {
        let mut claims = Claims::default();
        // All of L0: whole, so nothing else may touch L0 or L1.
        let mut l0 = ranged(0, &[(b'a', b'b')]);
        l0.output_level = 1;
        let id = claims.take(&l0);
        assert!(!claims.admits(&ranged(1, &[(b'x', b'z')])));
        assert!(claims.admits(&ranged(2, &[(b'a', b'z')])));
        claims.release(id);
        // Tiering (a new run below) and two runs in: whole.
        let mut tiered = ranged(2, &[(b'a', b'b')]);
        tiered.output_run = None;
        let id = claims.take(&tiered);
        assert!(!claims.admits(&ranged(2, &[(b'x', b'z')])));
        claims.release(id);
        let mut runs = ranged(2, &[(b'a', b'b')]);
        runs.inputs.push((2, vec![file(9, b'c', b'd')]));
        let id = claims.take(&runs);
        assert!(!claims.admits(&ranged(1, &[(b'x', b'z')])));
        claims.release(id);
        // A ranged claim blocks a whole one on a shared level.
        let _id = claims.take(&ranged(3, &[(b'a', b'b')]));
        let mut last = ranged(4, &[(b'x', b'z')]);
        last.output_level = 4;
        assert!(!claims.admits(&last));
    }
}
