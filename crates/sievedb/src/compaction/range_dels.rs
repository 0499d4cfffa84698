//! Range tombstones of a merge's inputs ([`RangeDels`]): reading a
//! compaction's, which of them hide entries from every reader, which are
//! kept in the outputs, and where a kept one lets an output be cut.

use crate::error::Result;
use crate::key::SeqNo;
use crate::range_del::{self, Fragments, RangeTombstone};
use crate::sst::TableWriter;
use crate::version::Version;

use super::Compaction;

/// The range tombstones a merge reads, and whether one of them may be dropped
/// when every reader sees it (nothing older below it can be covered).
pub struct RangeDels<'a> {
    /// The tombstones of the inputs (any order).
    pub tombstones: Vec<RangeTombstone>,
    /// Whether no file outside the merge may hold a key the tombstone covers.
    pub is_bottom: &'a dyn Fn(&RangeTombstone) -> bool,
}

/// The kept tombstones of a merge (sorted by start) and the ones assigned so far.
pub(super) struct OpenTombstones {
    pub(super) kept: Vec<RangeTombstone>,
    pub(super) next: usize,
}

impl OpenTombstones {
    /// Whether an output may be cut before user key `k`: every unassigned
    /// tombstone starting before `k` ends at or before it.
    pub(super) fn may_cut(&self, k: &[u8]) -> bool {
        self.kept[self.next..]
            .iter()
            .take_while(|t| t.start.as_slice() < k)
            .all(|t| t.end.as_deref().is_some_and(|e| e <= k))
    }

    /// Hands `w` the unassigned tombstones starting before `k` (all, if `None`).
    pub(super) fn assign(&mut self, w: &mut TableWriter, k: Option<&[u8]>) {
        while let Some(t) = self.kept.get(self.next) {
            if k.is_some_and(|k| t.start.as_slice() >= k) {
                break;
            }
            w.add_range_del(t.clone());
            self.next += 1;
        }
    }
}

/// Splits `rd` into the fragments hiding point entries from every reader
/// and the tombstones to keep.
pub(super) fn plan_range_dels(
    rd: RangeDels<'_>,
    smallest_snapshot: SeqNo,
) -> (Fragments, OpenTombstones) {
    let hide = Fragments::new(&rd.tombstones, smallest_snapshot);
    let mut kept: Vec<_> = rd
        .tombstones
        .into_iter()
        .filter(|t| !(t.seq <= smallest_snapshot && (rd.is_bottom)(t)))
        .collect();
    range_del::sort(&mut kept);
    (hide, OpenTombstones { kept, next: 0 })
}

/// The range tombstones of the inputs of `c` (read from their tables; only
/// files that have some are opened).
pub fn input_range_dels(c: &Compaction) -> Result<Vec<RangeTombstone>> {
    let mut out = Vec::new();
    for f in c.inputs.iter().flat_map(|(_, fs)| fs) {
        if f.range_dels > 0 {
            out.extend_from_slice(f.tables().get(f.number)?.range_dels());
        }
    }
    Ok(out)
}

/// Whether no file outside `c` at its output level or deeper meets the range
/// of a tombstone (so nothing it could still hide lies below it).
pub fn range_bottom_check<'a>(
    c: &'a Compaction,
    v: &'a Version,
) -> impl Fn(&RangeTombstone) -> bool + 'a {
    move |t: &RangeTombstone| {
        v.levels[c.output_level..]
            .iter()
            .flatten()
            .flat_map(|r| &r.files)
            .filter(|f| t.meets(f.smallest_user(), f.largest_user()))
            .all(|f| c.is_input(f.number))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::range_del::test_tombstone as t;

    #[test]
    fn outputs_are_cut_only_where_no_kept_tombstone_is_open() {
        let rd = RangeDels {
            tombstones: vec![t("m", None, 9), t("b", Some("d"), 5), t("f", Some("h"), 2)],
            // The old tombstone over [f, h) is bottommost: dropped once seen by all.
            is_bottom: &|t: &RangeTombstone| t.start == b"f",
        };
        let (hide, open) = plan_range_dels(rd, 4);
        assert_eq!(
            open.kept.len(),
            2,
            "the bottommost visible tombstone is dropped"
        );
        assert!(
            hide.covers(b"g", 1),
            "a dropped tombstone still hides its entries"
        );
        assert!(
            !hide.covers(b"c", 1),
            "seq 5 is newer than the oldest snapshot"
        );
        assert!(open.may_cut(b"a"));
        assert!(
            open.may_cut(b"b"),
            "a tombstone starting at the cut goes after it"
        );
        assert!(!open.may_cut(b"c"), "[b, d) is open at c");
        assert!(open.may_cut(b"d"), "[b, d) ends exactly at the cut");
        assert!(open.may_cut(b"m"));
        assert!(!open.may_cut(b"n"), "[m, +inf) never closes");
    }
}
