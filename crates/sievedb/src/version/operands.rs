//! The rest of a point lookup that met a merge operand: the key's older
//! entries, gathered newest first from each run's candidate file, with the
//! lookup's own filters and digest (a file the filter excludes is not read).

use crate::error::Result;
use crate::filter::resident::FilterGuard;
use crate::filter::KeyProbe;
use crate::iter::InternalIterator;
use crate::key::{self, Kind, SeqNo};
use crate::merge::Operands;
use crate::sst::reader::ReadCtx;

use super::Version;

/// What gathering found below the operands so far.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Below {
    /// The gathering ended: on a put (its value), or on a delete or a range
    /// tombstone (`None`).
    Base(Option<Vec<u8>>),
    /// The key has no older entry here.
    Nothing,
}

/// Gathers from `it`, positioned by a seek at the key's first entry visible
/// to the read, the entries of `user_key` newest first: operands into `ops`
/// until a put, a delete or an entry with sequence `<= covered` (a range
/// tombstone of this source or a newer one hides it).
pub(crate) fn gather(
    it: &mut dyn InternalIterator,
    user_key: &[u8],
    covered: SeqNo,
    ops: &mut Operands,
) -> Result<Below> {
    while it.valid() {
        let ik = it.key();
        let p = key::parse(ik).ok_or_else(|| key::malformed(ik))?;
        if p.user_key != user_key {
            break;
        }
        if p.seq <= covered {
            return Ok(Below::Base(None));
        }
        match Kind::from_u8(p.kind) {
            Some(Kind::Merge) => ops.push_older(it.value()),
            Some(Kind::Put) => return Ok(Below::Base(Some(it.value().to_vec()))),
            _ => return Ok(Below::Base(None)),
        }
        it.next()?;
    }
    Ok(if covered > 0 {
        Below::Base(None)
    } else {
        Below::Nothing
    })
}

impl Version {
    /// Gathers the entries of `probe.key()` visible at `seek`'s sequence
    /// from every run, newest first, as [`gather`] does for one source: the
    /// candidate file of each run, skipped when its filter excludes the key
    /// (the probe's digest is reused, never recomputed).
    pub(crate) fn gather_operands(
        &self,
        probe: &mut KeyProbe<'_>,
        seek: &[u8],
        seq: SeqNo,
        policy: ReadCtx,
        ops: &mut Operands,
    ) -> Result<Below> {
        let mut guard = FilterGuard::default();
        for (level, runs) in self.levels.iter().enumerate() {
            for run in runs {
                let Some(f) = run.file_for(probe.key()) else {
                    continue;
                };
                let covered = if f.range_dels > 0 {
                    f.table(probe)?.max_covering(probe.key(), seq)
                } else {
                    0
                };
                if let Some(rf) = f.resident_filter(level, run.id, probe)? {
                    if rf.excludes(probe, level, &mut guard).0 {
                        if covered > 0 {
                            return Ok(Below::Base(None));
                        }
                        continue;
                    }
                }
                let mut it = f.table(probe)?.iter(ReadCtx { level, ..policy });
                it.seek(seek)?;
                match gather(&mut it, probe.key(), covered, ops)? {
                    Below::Nothing => {}
                    ended => return Ok(ended),
                }
            }
        }
        Ok(Below::Nothing)
    }
}
