//! `fillseq` and `fillrandom`: every key written once, one key per batch
//! (into its keyspace, with `--keyspaces`).

use super::{Measurement, Workload, PROGRESS_STEP};
use crate::engines::{Engine, EngineResult};
use crate::progress::Progress;
use std::time::Instant;

/// Writes every key once, in `order` (ascending when `None`), one key per batch.
pub(super) fn fill(
    engine: &dyn Engine,
    w: &Workload,
    order: Option<&[u64]>,
    label: String,
) -> EngineResult<Measurement> {
    let pb = Progress::start(w.progress, w.num, label);
    let mut key = vec![0u8; w.keys.key_size()];
    let start = Instant::now();
    for j in 0..w.num {
        let i = match order {
            Some(o) => o[j as usize],
            None => j,
        };
        w.keys.fill(&mut key, i, false);
        super::write_one(engine, w.keyspace_of(i), &key, w.values.value(i))?;
        if j % PROGRESS_STEP == PROGRESS_STEP - 1 {
            pb.inc(PROGRESS_STEP);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    pb.finish();
    Ok(Measurement {
        ops: w.num,
        seconds,
        found: None,
        threads: 1,
        extra: None,
        note: None,
    })
}
