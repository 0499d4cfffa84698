//! The hot lookup path: [`Version::get`] finds one candidate file per run,
//! prefetches the first [`PREFETCHED_RUNS`] of them, then probes them newest
//! first.

use std::sync::Arc;

use crate::error::Result;
use crate::filter::digest::Phase;
use crate::filter::resident::FilterGuard;
#[cfg(any(test, feature = "internals"))]
use crate::filter::resident::ResidentFilter;
use crate::filter::KeyProbe;
use crate::key::LazySeek;
use crate::memtable::Lookup;
use crate::prefetch::prefetch_read;
use crate::sst::reader::ReadCtx;

use super::{FileMeta, Version};

impl Version {
    /// Looks `probe.key()` up as of `seq`: level 0 newest first, then one
    /// candidate file per run of each deeper level.
    ///
    /// The first [`PREFETCHED_RUNS`] candidate files are found first (fence
    /// searches only), prefetching each file's metadata as it
    /// is found and then each registered filter's state, so that these cache
    /// misses of all levels overlap instead of being paid level after level.
    /// Then the files are probed one by one, newest first, exactly as without
    /// prefetching (a prefetch reads nothing the lookup can see).
    pub fn get(
        &self,
        probe: &mut KeyProbe<'_>,
        seek: &mut LazySeek<'_>,
        policy: ReadCtx,
    ) -> Result<Lookup> {
        let user_key = probe.key();
        let mut found: [Option<Candidate<'_>>; PREFETCHED_RUNS] = [None; PREFETCHED_RUNS];
        let mut n = 0;
        // The first run not searched yet, when the slots ran out: (level, index).
        let mut rest = None;
        let start = probe.phase_start();
        'search: for (level, runs) in self.levels.iter().enumerate() {
            for (i, run) in runs.iter().enumerate() {
                if n == PREFETCHED_RUNS {
                    rest = Some((level, i));
                    break 'search;
                }
                if let Some(file) = run.file_for(user_key) {
                    prefetch_read::<FileMeta>(file);
                    found[n] = Some(Candidate {
                        level,
                        run: run.id,
                        file,
                    });
                    n += 1;
                }
            }
        }
        let found = &found[..n];
        for c in found.iter().flatten() {
            if let Some(Some(rf)) = c.file.filter.get() {
                rf.prefetch();
            }
        }
        probe.phase_end(start, Phase::Index);
        let mut guard = FilterGuard::default();
        for c in found.iter().flatten() {
            if let Some(done) = probe_file(c, probe, seek, policy, &mut guard)? {
                return Ok(done);
            }
        }
        // Runs beyond the slots (a tiered tree with many runs), unprefetched.
        let Some((first_level, first_run)) = rest else {
            return Ok(Lookup::Absent);
        };
        for (level, runs) in self.levels.iter().enumerate().skip(first_level) {
            let skip = if level == first_level { first_run } else { 0 };
            for run in runs.iter().skip(skip) {
                let start = probe.phase_start();
                let file = run.file_for(user_key);
                probe.phase_end(start, Phase::Index);
                if let Some(file) = file {
                    let c = Candidate {
                        level,
                        run: run.id,
                        file,
                    };
                    if let Some(done) = probe_file(&c, probe, seek, policy, &mut guard)? {
                        return Ok(done);
                    }
                }
            }
        }
        Ok(Lookup::Absent)
    }

    /// Whether `probe.key()` may be in a file of this version, by the filters
    /// alone: `false` when, in every run, no file's key range covers the key
    /// or the covering file's resident filter units exclude it. Nothing is
    /// read or opened: a covering file whose filter was not read yet (no
    /// lookup has reached it since it was opened), that has no filter, or
    /// whose units are all dropped by the filter budget says "maybe". Range
    /// tombstones in files are not looked at. The probe's one digest serves
    /// every filter, as in [`Version::get`].
    pub fn may_contain(&self, probe: &mut KeyProbe<'_>) -> bool {
        let user_key = probe.key();
        let mut guard = FilterGuard::default();
        for (level, runs) in self.levels.iter().enumerate() {
            for run in runs {
                let Some(file) = run.file_for(user_key) else {
                    continue;
                };
                let Some(Some(rf)) = file.filter.get() else {
                    return true;
                };
                if !rf.excludes(probe, level, &mut guard).0 {
                    return true;
                }
            }
        }
        false
    }

    #[cfg(any(test, feature = "internals"))]
    /// Appends to `out` the filters with resident units that a lookup of
    /// `user_key` would probe if every one said "maybe" (each run's candidate
    /// file, newest first; files without a filter are left out), opening
    /// tables whose filter is not registered yet. For reference measurements
    /// of the filter work alone (`sievedb bench --benchmarks filterprobe`).
    pub fn candidate_filters(
        &self,
        user_key: &[u8],
        out: &mut Vec<Arc<ResidentFilter>>,
    ) -> Result<()> {
        let mut probe = KeyProbe::new(user_key, crate::filter::HashSharing::Levels);
        for (level, runs) in self.levels.iter().enumerate() {
            for run in runs {
                let Some(f) = run.file_for(user_key) else {
                    continue;
                };
                if let Some(rf) = f.resident_filter(level, run.id, &mut probe)? {
                    if rf.resident() > 0 {
                        out.push(rf.clone());
                    }
                }
            }
        }
        Ok(())
    }
}

/// Candidate files a lookup finds (and prefetches) before probing any: one
/// per level under leveling; the runs left when they are found (a tiered
/// tree) are searched and probed one by one after these.
pub const PREFETCHED_RUNS: usize = 8;

/// The file of one run that may hold a lookup's key.
#[derive(Clone, Copy)]
struct Candidate<'a> {
    level: usize,
    run: u64,
    file: &'a Arc<FileMeta>,
}

/// Probes candidate `c`: its range tombstones, its filter, then its table.
/// `Some` ends the lookup with that answer; `None` goes on to older files.
/// Inlined: as a call it returned its result through memory and cost ~50
/// instructions per level (cachegrind).
#[inline(always)]
fn probe_file(
    c: &Candidate<'_>,
    probe: &mut KeyProbe<'_>,
    seek: &mut LazySeek<'_>,
    policy: ReadCtx,
    guard: &mut FilterGuard,
) -> Result<Option<Lookup>> {
    let (f, level, user_key) = (c.file, c.level, probe.key());
    let ctx = ReadCtx { level, ..policy };
    // The newest range tombstone of this file covering the key and visible
    // to the read. Entries in older files are older still (file bounds cover
    // their tombstones, so no older file can hold a newer entry of a covered
    // key): once one is known, the key is deleted whatever an older file's
    // filter says.
    let covered = if f.range_dels > 0 {
        f.table(probe)?.max_covering(user_key, seek.seq())
    } else {
        0
    };
    let mut filtered = false;
    if let Some(rf) = f.resident_filter(level, c.run, probe)? {
        if let Some(log) = probe.access_log.as_mut() {
            log.push(f.number);
        }
        let (excluded, probed) = rf.excludes(probe, level, guard);
        if excluded {
            return Ok((covered > 0).then_some(Lookup::Deleted));
        }
        filtered = probed;
    }
    let found = f
        .table(probe)?
        .get(probe, seek.get(user_key), ctx, filtered, covered)?;
    if found != Lookup::Absent {
        return Ok(Some(found));
    }
    Ok((covered > 0).then_some(Lookup::Deleted))
}
