//! Periodic compaction (RocksDB's `periodic_compaction_seconds`): a file
//! older than [`Options::periodic_compaction`] is compacted even though no
//! level is due, so that expired values and filtered entries leave the disk
//! without writes to their keys. The lowest priority of all: [`pick`] runs
//! only when no level scores as due.
//!
//! The oldest due file of the shallowest free level goes, with what its
//! style needs: under leveling a file of a level above the last merges with
//! what it overlaps in the next level (never a trivial move, which would not
//! rewrite it), all of L0 when it is in L0; under tiering its whole level
//! merges into the next. A file of the last level is rewritten in place: its
//! outputs join its own run, which they replace the file in (they hold only
//! its keys).

use crate::options::{CompactionStyle, Options};
use crate::version::Version;

use super::leveling::{leveled, leveled_whole};
use super::tiering::whole_level;
use super::Compaction;

/// The periodic compaction due in `v` at the clock's time, if any, among
/// levels `free` allows.
pub(super) fn pick(
    v: &Version,
    opts: &Options,
    free: &dyn Fn(usize) -> bool,
) -> Option<Compaction> {
    let age = opts.periodic_compaction_secs()?;
    let now = opts.clock.now_secs();
    let last = opts.max_levels - 1;
    for level in 0..=last.min(v.levels.len().saturating_sub(1)) {
        if !free(level) {
            continue;
        }
        let oldest = v.levels[level]
            .iter()
            .flat_map(|r| r.files.iter().map(move |f| (r.id, f)))
            .filter(|(_, f)| f.creation_time.saturating_add(age) <= now)
            .min_by_key(|(_, f)| f.creation_time);
        let Some((run, file)) = oldest else { continue };
        return Some(match opts.compaction_style {
            _ if level == last => Compaction {
                level,
                output_level: level,
                inputs: vec![(level, vec![file.clone()])],
                trivial_move: false,
                output_run: Some(run),
            },
            CompactionStyle::Tiering => whole_level(v, level, last),
            CompactionStyle::Leveling if level == 0 => {
                let inputs = v.levels[0].iter().map(|r| (0, r.files.to_vec())).collect();
                leveled(v, 0, 1, inputs, false)
            }
            CompactionStyle::Leveling if v.levels[level].len() > 1 => leveled_whole(v, level, last),
            CompactionStyle::Leveling => leveled(
                v,
                level,
                level + 1,
                vec![(level, vec![file.clone()])],
                false,
            ),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::key::{self, Kind};
    use crate::ttl::Clock;
    use crate::version::{FileMeta, Run};

    struct Fixed(u64);
    impl Clock for Fixed {
        fn now_secs(&self) -> u64 {
            self.0
        }
    }

    /// Levels of one run each, of files `(first key, created)`.
    fn version(levels: &[&[(u8, u64)]]) -> Version {
        let tables = crate::compaction::test_tables();
        let mut number = 0;
        let levels = levels.iter().map(|files| {
            let mut metas = Vec::new();
            for &(k, created) in *files {
                number += 1;
                let ik = key::internal_key(&[k], 1, Kind::Put);
                let mut f = FileMeta::for_test(number, ik.clone(), ik, tables.clone());
                Arc::get_mut(&mut f).expect("fresh").creation_time = created;
                metas.push(f);
            }
            if metas.is_empty() {
                Vec::new()
            } else {
                vec![Arc::new(Run::from_files(7, metas))]
            }
        });
        Version {
            levels: levels.collect(),
        }
    }

    fn opts(now: u64) -> Options {
        Options {
            max_levels: 3,
            periodic_compaction: Some(Duration::from_secs(100)),
            clock: Arc::new(Fixed(now)),
            ..Options::default()
        }
    }

    #[test]
    fn old_files_compact_down_or_in_place_at_the_last_level() {
        let v = version(&[&[], &[(b'a', 50), (b'c', 10)], &[(b'a', 5)]]);
        let all_free = |_: usize| true;
        assert!(
            pick(&v, &opts(104), &all_free).is_none(),
            "nothing is 100 s old"
        );
        // At 110 the L1 file created at 10 is due (and the L2 one): L1 first.
        let c = pick(&v, &opts(110), &all_free).expect("due");
        assert_eq!((c.level, c.output_level), (1, 2));
        assert_eq!(c.inputs[0].1[0].number, 2);
        assert!(!c.trivial_move);
        // With L1 busy, the last level's file is rewritten in its own run.
        let c = pick(&v, &opts(110), &|l| l != 1).expect("due");
        assert_eq!((c.level, c.output_level, c.output_run), (2, 2, Some(7)));
        assert_eq!(c.inputs.len(), 1);
        // Off: nothing, however old.
        let off = Options {
            periodic_compaction: Some(Duration::ZERO),
            ..opts(1_000)
        };
        assert!(pick(&v, &off, &all_free).is_none());
    }
}
