//! What building the filters alone costs, measured apart from the loads:
//! the part of a load's CPU that filter construction can explain.
//!
//! A table's writer hashes each key it writes into the file's filter builder
//! and builds the filter when the file is finished; that is all a load does
//! differently for one Bloom filter and for filter units. Timing exactly that
//! work here, on filters the size of the load's files, gives nanoseconds per
//! key that, times the entries the load wrote to tables, estimate what filter
//! construction adds to the load's CPU.

use crate::experiment::alternating_order;
use crate::report::median;
use crate::workload::keys::KeyGen;
use sievedb::filter::FilterBuilder;
use sievedb::FilterOptions;
use std::time::Instant;

/// Rounds per configuration (the configurations alternate within a round);
/// the median is reported.
pub const ROUNDS: usize = 5;

/// Keys each configuration builds filters for in one round, at most (a
/// load of fewer entries times that many).
pub const KEYS_PER_ROUND: u64 = 2_000_000;

/// Nanoseconds per key to build filters for `opts` over files of `per_file`
/// keys of `key_size` bytes: every key added to its file's builder, every
/// filter built and encoded (as a table writer does), `total` keys in all.
/// The keys are generated untimed, a file at a time.
pub fn ns_per_key(opts: &FilterOptions, key_size: usize, per_file: u64, total: u64) -> f64 {
    let per_file = per_file.clamp(1, total.max(1));
    let Ok(keys) = KeyGen::new(key_size, total) else {
        return f64::NAN;
    };
    let mut buf = vec![0u8; key_size * per_file as usize];
    let mut seconds = 0.0;
    let mut sink = 0usize;
    let mut done = 0u64;
    while done < total {
        let n = per_file.min(total - done);
        for (j, k) in buf.chunks_exact_mut(key_size).take(n as usize).enumerate() {
            keys.fill(k, done + j as u64, false);
        }
        let t = Instant::now();
        let mut builder = FilterBuilder::new(opts);
        for k in buf.chunks_exact(key_size).take(n as usize) {
            builder.add(k);
        }
        sink += builder.finish().len();
        seconds += t.elapsed().as_secs_f64();
        done += n;
    }
    std::hint::black_box(sink);
    seconds * 1e9 / total as f64
}

/// [`ns_per_key`] for every configuration in `opts`, [`ROUNDS`] rounds of
/// `keys` keys with the configurations alternating, median per
/// configuration.
pub fn measure(opts: &[FilterOptions], key_size: usize, per_file: u64, keys: u64) -> Vec<f64> {
    let mut runs: Vec<Vec<f64>> = vec![Vec::new(); opts.len()];
    for round in 0..ROUNDS {
        for i in alternating_order(opts.len(), round) {
            runs[i].push(ns_per_key(&opts[i], key_size, per_file, keys));
        }
    }
    runs.iter_mut().map(|r| median(r)).collect()
}

/// Medians of one configuration's loads, for [`note`].
pub struct LoadMedians {
    /// The configuration's name.
    pub name: String,
    /// Construction nanoseconds per key ([`measure`]).
    pub build_ns: f64,
    /// Entries written to tables.
    pub table_entries: f64,
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
}

/// The summary's sentence on construction: each configuration's cost per
/// key, what it adds over the first (the baseline) at the entries its loads
/// wrote, and the user and system CPU the loads actually differed by.
pub fn note(keys: u64, per_file: u64, entry_bytes: u64, m: &[LoadMedians]) -> String {
    let Some((base, rest)) = m.split_first() else {
        return String::new();
    };
    let rates = m
        .iter()
        .map(|c| format!("{} {:.1} ns per key", c.name, c.build_ns))
        .collect::<Vec<_>>()
        .join(", ");
    let extra = rest
        .iter()
        .map(|c| {
            let s = c.table_entries * (c.build_ns - base.build_ns) / 1e9;
            format!(
                "{} {s:+.2} s ({:+.1}%), where the loads' medians differed by {:+.2} s of user \
                 and {:+.2} s of system CPU",
                c.name,
                100.0 * s / base.user_s,
                c.user_s - base.user_s,
                c.sys_s - base.sys_s
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    format!(
        "Filter construction alone, timed after the loads ({ROUNDS} rounds of {keys} keys, \
         each key added to the builder of a file of {per_file} keys and every filter built \
         and encoded, as a table writer does; medians): {rates}. The baseline's loads wrote \
         about {:.0} entries to tables (median; bytes written less the bytes put, ÷ \
         {entry_bytes} B). At those rates construction should cost, beyond the baseline's \
         ({:.2} s of user CPU per load): {extra}.",
        base.table_entries, base.user_s,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use sievedb::FilterLayout;

    #[test]
    fn times_every_key_of_every_file() {
        let bloom = FilterOptions {
            bits_per_key: 4.0,
            ..FilterOptions::default()
        };
        let units = FilterOptions {
            bits_per_key: 12.0,
            layout: FilterLayout::Units,
            units: 6,
            ..FilterOptions::default()
        };
        // A last file shorter than the others is built too.
        let ns = ns_per_key(&bloom, 16, 1000, 2500);
        assert!(ns.is_finite() && ns > 0.0, "{ns}");
        let both = measure(&[bloom, units], 16, 2000, 4000);
        assert_eq!(both.len(), 2);
        assert!(both.iter().all(|x| x.is_finite() && *x > 0.0), "{both:?}");
    }

    #[test]
    fn note_computes_the_extra_construction_from_the_rates() {
        let m = |name: &str, ns: f64, user: f64, sys: f64| LoadMedians {
            name: name.into(),
            build_ns: ns,
            table_entries: 1e9,
            user_s: user,
            sys_s: sys,
        };
        let text = note(
            4000,
            2000,
            116,
            &[m("bloom", 10.0, 500.0, 50.0), m("units", 16.0, 520.0, 49.0)],
        );
        // 1e9 entries × 6 ns = 6 s, 1.2% of 500 s; measured +20 s user, -1 s system.
        assert!(text.contains("5 rounds of 4000 keys"), "{text}");
        assert!(
            text.contains("bloom 10.0 ns per key, units 16.0 ns per key"),
            "{text}"
        );
        assert!(text.contains("about 1000000000 entries"), "{text}");
        assert!(
            text.contains(
                "(500.00 s of user CPU per load): units +6.00 s (+1.2%), where the loads' \
                 medians differed by +20.00 s of user and -1.00 s of system CPU."
            ),
            "{text}"
        );
        assert!(note(4000, 2000, 116, &[]).is_empty());
    }

    #[test]
    fn keys_too_short_for_the_count_give_nan() {
        // One-byte keys cannot number a million distinct keys.
        let o = FilterOptions::default();
        assert!(ns_per_key(&o, 1, 10, 1_000_000).is_nan());
    }
}
