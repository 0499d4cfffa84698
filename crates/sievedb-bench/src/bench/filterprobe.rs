//! `filterprobe`: what an empty lookup costs against its filter work alone,
//! on the open sievedb database, in one run.
//!
//! The keys are `readmissing`'s (the same seed and key choice as its first
//! reader thread). They are taken in batches of [`BATCH`]; for each batch,
//! untimed, the filters a lookup of each key would probe are collected
//! ([`sievedb::Db::candidate_filters`]: each run's candidate file, newest
//! first). Then three timed passes regenerate the same keys, in an order that
//! rotates from batch to batch:
//! - *lookup*: `Engine::get_len`, as `readmissing` does;
//! - *reference*: one [`KeyProbe`] per key (the database's hash sharing, so
//!   one digest under `levels`) probing each collected filter in turn through
//!   the engine's own filter objects, and nothing else (no fence search, view
//!   load, table access or counters);
//! - *keys*: generating the keys alone, subtracted from both others.
//!
//! The result line gives ns per key of the lookup and of the reference, and
//! their ratio (the bar: an empty lookup within 1.5× of one digest
//! plus its filter probes with their cache misses).

use crate::engines::{Engine, EngineResult};
use crate::progress::Progress;
use crate::workload::distribution::KeyChooser;
use crate::workload::keys::KeyGen;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde_json::{json, Value};
use sievedb::filter::resident::ResidentFilter;
use sievedb::filter::KeyProbe;
use sievedb::Db;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

/// Keys per batch: small enough that the collected filter handles stay in
/// cache, large enough that the clock reads do not matter.
pub const BATCH: u64 = 1024;

/// What one `filterprobe` run measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FilterProbeResult {
    /// Keys looked up (and probed).
    pub keys: u64,
    /// Seconds of the lookups, key generation included.
    pub lookup_seconds: f64,
    /// Seconds of the reference probes, key generation included.
    pub reference_seconds: f64,
    /// Seconds of generating the keys alone.
    pub keygen_seconds: f64,
    /// Lookups that found a value (0 unless the keys exist).
    pub found: u64,
    /// Filters the reference probed, over all keys.
    pub filters_probed: u64,
    /// Reference probes that answered "maybe".
    pub maybes: u64,
    /// Digests the reference computed, over all keys.
    pub digests: u64,
}

impl FilterProbeResult {
    /// `seconds` net of key generation, in ns per key.
    fn net_ns(&self, seconds: f64) -> f64 {
        if self.keys == 0 {
            return 0.0;
        }
        (seconds - self.keygen_seconds).max(0.0) * 1e9 / self.keys as f64
    }

    /// Nanoseconds per lookup, key generation subtracted.
    pub fn lookup_ns(&self) -> f64 {
        self.net_ns(self.lookup_seconds)
    }

    /// Nanoseconds per reference probe set, key generation subtracted.
    pub fn reference_ns(&self) -> f64 {
        self.net_ns(self.reference_seconds)
    }

    /// Lookup time ÷ reference time (0 when the reference took no time).
    pub fn ratio(&self) -> f64 {
        let r = self.reference_ns();
        if r > 0.0 {
            self.lookup_ns() / r
        } else {
            0.0
        }
    }

    /// Mean filters probed per key by the reference.
    pub fn filters_per_key(&self) -> f64 {
        self.filters_probed as f64 / self.keys.max(1) as f64
    }

    /// The JSON fields of the result.
    pub fn to_json(&self) -> Value {
        json!({
            "lookup_ns": self.lookup_ns(),
            "reference_ns": self.reference_ns(),
            "lookup_over_reference": self.ratio(),
            "keygen_ns": self.keygen_seconds * 1e9 / self.keys.max(1) as f64,
            "reference_filters_per_key": self.filters_per_key(),
            "reference_maybe_fraction": self.maybes as f64 / self.filters_probed.max(1) as f64,
            "reference_digests_per_key": self.digests as f64 / self.keys.max(1) as f64,
        })
    }

    /// The text appended to the result line.
    pub fn text(&self) -> String {
        format!(
            "lookup {:.1} ns, reference {:.1} ns (digest + {:.2} filter probes), \
             lookup ÷ reference {:.2}×",
            self.lookup_ns(),
            self.reference_ns(),
            self.filters_per_key(),
            self.ratio()
        )
    }
}

/// The timed passes of one batch.
#[derive(Clone, Copy)]
enum Pass {
    Lookup,
    Reference,
    Keys,
}

/// Runs `reads` keys of `keys` (missing keys of indices `0..num` drawn by
/// `chooser` from `seed`) through the three passes on `engine`, whose
/// database is `db`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    engine: &dyn Engine,
    db: &Db,
    keys: &KeyGen,
    chooser: &mut KeyChooser,
    reads: u64,
    seed: u64,
    pb: &Progress,
) -> EngineResult<FilterProbeResult> {
    let sharing = db.options().filter.sharing;
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut key = vec![0u8; keys.key_size()];
    keys.fill(&mut key, 0, true);
    let mut filters: Vec<Arc<ResidentFilter>> = Vec::new();
    let mut ends: Vec<usize> = Vec::new();
    let mut r = FilterProbeResult::default();
    let mut done = 0u64;
    let mut round = 0usize;
    while done < reads {
        let n = BATCH.min(reads - done);
        let batch_rng = rng.clone();
        let batch_chooser = chooser.clone();
        filters.clear();
        ends.clear();
        for _ in 0..n {
            keys.refill(&mut key, chooser.next(&mut rng), true);
            db.candidate_filters(&key, &mut filters)?;
            ends.push(filters.len());
        }
        let order = [Pass::Lookup, Pass::Reference, Pass::Keys];
        for k in 0..3 {
            let pass = order[(round + k) % 3];
            let mut rng = batch_rng.clone();
            let mut chooser = batch_chooser.clone();
            let start = Instant::now();
            match pass {
                Pass::Lookup => {
                    for _ in 0..n {
                        keys.refill(&mut key, chooser.next(&mut rng), true);
                        r.found += u64::from(engine.get_len(&key)?.is_some());
                    }
                    r.lookup_seconds += start.elapsed().as_secs_f64();
                }
                Pass::Reference => {
                    let mut begin = 0;
                    for &end in &ends {
                        keys.refill(&mut key, chooser.next(&mut rng), true);
                        let mut probe = KeyProbe::new(&key, sharing);
                        for f in &filters[begin..end] {
                            r.maybes += u64::from(f.may_contain(&mut probe));
                        }
                        r.digests += u64::from(black_box(probe.digests_computed));
                        begin = end;
                    }
                    r.reference_seconds += start.elapsed().as_secs_f64();
                }
                Pass::Keys => {
                    for _ in 0..n {
                        keys.refill(&mut key, chooser.next(&mut rng), true);
                        black_box(&key);
                    }
                    r.keygen_seconds += start.elapsed().as_secs_f64();
                }
            }
        }
        r.filters_probed += filters.len() as u64;
        r.keys += n;
        done += n;
        round += 1;
        pb.inc(n);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::sievedb::SieveDb;
    use crate::workload::distribution::KeyDistribution;

    /// On a flushed database, the reference probes each lookup's candidate
    /// filter with one digest, and the lookups of missing keys find nothing.
    #[test]
    fn probes_the_candidate_filters_of_missing_keys() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = crate::BenchArgs::default().engine_config();
        let engine = SieveDb::open(dir.path(), &cfg).unwrap();
        let (num, reads) = (3000u64, 2500u64);
        let keys = KeyGen::new(16, num).unwrap();
        let mut key = vec![0u8; 16];
        for i in 0..num {
            keys.fill(&mut key, i, false);
            engine.put(&key, b"value").unwrap();
        }
        engine.flush().unwrap();
        let db = engine.sievedb().unwrap();
        let mut chooser = KeyChooser::new(KeyDistribution::Uniform, num, 0.99).unwrap();
        let pb = Progress::hidden();
        let r = run(&engine, db, &keys, &mut chooser, reads, 7, &pb).unwrap();
        assert_eq!(r.keys, reads);
        assert_eq!(r.found, 0);
        // One file holds every key: at most one filter per missing key (none
        // for a key beyond the file's range), one digest for each probed.
        assert!(r.filters_probed <= reads && r.filters_probed >= reads * 9 / 10);
        assert_eq!(r.digests, r.filters_probed);
        // 10 bits per key: a few percent of false positives at most.
        assert!(r.maybes < reads / 10, "{} maybes", r.maybes);
        // Times are measured, not asserted (net of key generation they may
        // round to 0 on a loaded machine): the fields are there and finite.
        assert!(r.lookup_seconds > 0.0 && r.reference_seconds > 0.0);
        let ratio = r.to_json()["lookup_over_reference"].as_f64().unwrap();
        assert!(ratio.is_finite() && ratio >= 0.0, "{ratio}");
    }
}
