//! `filterbench`: the papers' single-filter micro-benchmark.
//!
//! One filter is built over `--num` keys of `--key-size` bytes with the run's
//! filter settings; then `--reads` keys that were never added are queried, each
//! through a fresh [`KeyProbe`], so every query pays its hashing as a lookup
//! does. Keys are generated in untimed batches, so only hashing and probing
//! are timed.

use crate::progress::Progress;
use crate::workload::keys::KeyGen;
use serde_json::{json, Value};
use sievedb::filter::{FilterBuilder, KeyProbe};
use sievedb::FilterOptions;
use std::time::Instant;

/// Queries generated (untimed) and then run (timed) at a time.
const BATCH: u64 = 1 << 16;

/// What one filterbench run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct FilterBenchResult {
    /// Keys in the filter.
    pub keys: u64,
    /// Empty queries run.
    pub queries: u64,
    /// Queries the filter answered "maybe".
    pub false_positives: u64,
    /// Seconds spent in the queries (hashing and probing).
    pub query_seconds: f64,
    /// Seconds to build the filter (hashing the keys, setting bits, encoding).
    pub build_seconds: f64,
    /// False-positive rate expected for this filter's layout, bits and probes.
    pub theoretical_fpr: f64,
    /// Bytes of the filter's bit array(s).
    pub memory_bytes: usize,
    /// Probes per filter (per unit for the units layout).
    pub probes: u32,
    /// Key hashes the queries computed, per query.
    pub digests_per_query: f64,
}

impl FilterBenchResult {
    /// `false_positives / queries`.
    pub fn measured_fpr(&self) -> f64 {
        if self.queries == 0 {
            0.0
        } else {
            self.false_positives as f64 / self.queries as f64
        }
    }

    /// Mean nanoseconds per query.
    pub fn ns_per_query(&self) -> f64 {
        if self.queries == 0 {
            0.0
        } else {
            self.query_seconds * 1e9 / self.queries as f64
        }
    }

    /// Relative standard error of the measured FPR (binomial, `1/sqrt(fp)`).
    pub fn relative_standard_error(&self) -> f64 {
        if self.false_positives == 0 {
            f64::INFINITY
        } else {
            1.0 / (self.false_positives as f64).sqrt()
        }
    }

    /// The JSON fields of the result.
    pub fn to_json(&self) -> Value {
        json!({
            "measured_fpr": self.measured_fpr(),
            "theoretical_fpr": self.theoretical_fpr,
            "fpr_relative_standard_error": self.relative_standard_error(),
            "ns_per_query": self.ns_per_query(),
            "false_positives": self.false_positives,
            "filter_keys": self.keys,
            "filter_memory_bytes": self.memory_bytes,
            "filter_probes_k": self.probes,
            "digests_per_query": self.digests_per_query,
            "build_seconds": self.build_seconds,
        })
    }

    /// The text appended to the benchmark line.
    pub fn text(&self) -> String {
        format!(
            "fpr {:.4}% (theory {:.4}%, ±{:.1}%), {:.1} ns/query, k={}, {} bytes",
            self.measured_fpr() * 100.0,
            self.theoretical_fpr * 100.0,
            self.relative_standard_error() * 100.0,
            self.ns_per_query(),
            self.probes,
            self.memory_bytes
        )
    }
}

/// Builds the filter and runs the queries.
pub fn run(
    opts: &FilterOptions,
    keys: &KeyGen,
    num: u64,
    queries: u64,
    pb: &Progress,
) -> Result<FilterBenchResult, String> {
    if !opts.enabled() {
        return Err("filterbench needs --bits-per-key above 0".into());
    }
    // Query keys are the never-written keys 0..queries: check they fit.
    KeyGen::new(keys.key_size(), queries.max(num))?;
    let ks = keys.key_size();
    let mut buf = vec![0u8; ks * BATCH as usize];

    let start = Instant::now();
    let mut builder = FilterBuilder::new(opts);
    for i in 0..num {
        let k = &mut buf[..ks];
        keys.fill(k, i, false);
        builder.add(k);
    }
    let filter = builder.build();
    let build_seconds = start.elapsed().as_secs_f64();

    let mut false_positives = 0u64;
    let mut digests = 0u64;
    let mut query_seconds = 0.0;
    let mut next = 0u64;
    while next < queries {
        let n = BATCH.min(queries - next);
        for j in 0..n {
            let at = j as usize * ks;
            keys.fill(&mut buf[at..at + ks], next + j, true);
        }
        let t = Instant::now();
        for key in buf[..n as usize * ks].chunks_exact(ks) {
            let mut probe = KeyProbe::new(key, opts.sharing);
            false_positives += u64::from(filter.may_contain(&mut probe));
            digests += u64::from(probe.digests_computed);
        }
        query_seconds += t.elapsed().as_secs_f64();
        next += n;
        pb.inc(n);
    }
    Ok(FilterBenchResult {
        keys: num,
        queries,
        false_positives,
        query_seconds,
        build_seconds,
        theoretical_fpr: filter.theoretical_fpr(),
        memory_bytes: filter.memory_bytes(),
        probes: filter.probes_per_unit(),
        digests_per_query: digests as f64 / queries.max(1) as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_close_to_theory() {
        let keys = KeyGen::new(16, 1_000_000).unwrap();
        let opts = FilterOptions::default();
        let r = run(&opts, &keys, 20_000, 400_000, &Progress::hidden()).unwrap();
        assert_eq!((r.keys, r.queries, r.probes), (20_000, 400_000, 7));
        assert_eq!(r.digests_per_query, 1.0);
        let (m, t) = (r.measured_fpr(), r.theoretical_fpr);
        assert!((m - t).abs() < t * 0.25, "measured {m} vs theory {t}");
        assert!(r.ns_per_query() > 0.0);
        let off = FilterOptions {
            bits_per_key: 0.0,
            ..FilterOptions::default()
        };
        assert!(run(&off, &keys, 10, 10, &Progress::hidden()).is_err());
    }

    #[test]
    fn ribbon_measures_two_to_minus_r() {
        let keys = KeyGen::new(16, 1_000_000).unwrap();
        let opts = FilterOptions {
            layout: sievedb::FilterLayout::Ribbon64,
            bits_per_key: 7.5,
            ..FilterOptions::default()
        };
        let r = run(&opts, &keys, 20_000, 400_000, &Progress::hidden()).unwrap();
        // r = ⌊7.5 / 1.0703⌋ = 7 at 20K keys.
        assert_eq!((r.probes, r.digests_per_query), (7, 1.0));
        assert!((r.theoretical_fpr - 0.5f64.powi(7)).abs() < 1e-12);
        let (m, t) = (r.measured_fpr(), r.theoretical_fpr);
        assert!((m - t).abs() < t * 0.25, "measured {m} vs theory {t}");
    }

    #[test]
    fn wide_ribbon_spends_fractional_bits() {
        let keys = KeyGen::new(16, 1_000_000).unwrap();
        let opts = FilterOptions {
            layout: sievedb::FilterLayout::Ribbon,
            bits_per_key: 7.5,
            ..FilterOptions::default()
        };
        let r = run(&opts, &keys, 20_000, 400_000, &Progress::hidden()).unwrap();
        // 7.5 bits over 1.018 · n slots: r = 7 plus a fraction of a bit.
        assert_eq!((r.probes, r.digests_per_query), (7, 1.0));
        let t = r.theoretical_fpr;
        assert!(t < 0.5f64.powi(7) && t > 0.5f64.powi(8), "{t}");
        let used = r.memory_bytes as f64 * 8.0 / 20_000.0;
        assert!(used <= 7.5 + 0.1 && used > 7.3, "{used}");
        let m = r.measured_fpr();
        assert!((m - t).abs() < t * 0.25, "measured {m} vs theory {t}");
    }
}
