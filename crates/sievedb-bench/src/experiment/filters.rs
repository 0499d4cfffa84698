//! `sievedb experiment filters`: the filter families side by side — FPR
//! against bits per key (fractional steps) beside each family's theory, and
//! the build and query cost per key, for the standard Bloom, the cache-blocked
//! Bloom, the Ribbon filter (128-bit rows, fractional bits) and the Ribbon
//! filter of 64-bit rows (`ribbon64`), each built and probed from the one digest
//! a lookup computes (through [`crate::bench::filterbench`]).

use super::plot::Chart;
use super::{f, pct, Ctx, ExpResult, Summary, Table};
use crate::bench::filterbench::{self, FilterBenchResult};
use crate::progress::Progress;
use crate::workload::keys::KeyGen;
use sievedb::{FilterLayout, FilterOptions};

/// The families compared.
const LAYOUTS: [FilterLayout; 4] = [
    FilterLayout::Bloom,
    FilterLayout::Blocked,
    FilterLayout::Ribbon,
    FilterLayout::Ribbon64,
];

/// Key size of every run.
const KEY_SIZE: usize = 16;

/// False positives a point aims for: its queries grow (up to a cap) until the
/// measured rate has about this many, so its relative error is ~1/√this.
const WANT_FALSE_POSITIVES: u64 = 400;

/// The bits per key of a sweep: 2 to 16 in steps of `1 / per_bit`.
fn sweep(per_bit: u32) -> Vec<f64> {
    (0..=14 * per_bit)
        .map(|i| 2.0 + f64::from(i) / f64::from(per_bit))
        .collect()
}

/// One point: built over `keys` keys, queried with at least `queries` absent
/// keys and more (up to `max_queries`) until about
/// [`WANT_FALSE_POSITIVES`] false positives are seen; then run `repeats`
/// times in all, keeping the fastest build and query times (the machine is
/// shared: the minimum is the least disturbed).
fn point(
    layout: FilterLayout,
    bits: f64,
    keys: u64,
    (queries, max_queries): (u64, u64),
    repeats: usize,
) -> ExpResult<FilterBenchResult> {
    let opts = FilterOptions {
        bits_per_key: bits,
        layout,
        ..FilterOptions::default()
    };
    let mut q = queries;
    loop {
        let gen = KeyGen::new(KEY_SIZE, keys.max(q))?;
        let mut r = filterbench::run(&opts, &gen, keys, q, &Progress::hidden())?;
        if r.false_positives >= WANT_FALSE_POSITIVES || q >= max_queries {
            for _ in 1..repeats {
                let again = filterbench::run(&opts, &gen, keys, q, &Progress::hidden())?;
                r.build_seconds = r.build_seconds.min(again.build_seconds);
                r.query_seconds = r.query_seconds.min(again.query_seconds);
            }
            return Ok(r);
        }
        // Aim at the wanted count from the rate seen (at least double).
        let rate = r.measured_fpr().max(r.theoretical_fpr).max(1e-9);
        #[expect(
            clippy::cast_sign_loss,
            clippy::cast_possible_truncation,
            reason = "a positive count, capped at max_queries right below (`as` saturates)"
        )]
        let want = (WANT_FALSE_POSITIVES as f64 * 1.2 / rate).ceil() as u64;
        q = want.max(2 * q).min(max_queries);
    }
}

/// The bits per key at which `fpr(bits)` (measured, falling as `bits` grow)
/// first reaches `target`, by log-linear interpolation between the sweep's
/// points; NaN when the sweep never reaches it.
pub fn bits_for_fpr(bits: &[f64], fpr: &[f64], target: f64) -> f64 {
    for i in 0..bits.len() {
        if fpr[i] <= target && fpr[i] > 0.0 {
            if i == 0 {
                return bits[0];
            }
            let (l0, l1) = (fpr[i - 1].ln(), fpr[i].ln());
            if !(l0 - l1).is_normal() {
                return bits[i];
            }
            let t = (l0 - target.ln()) / (l0 - l1);
            return bits[i - 1] + t * (bits[i] - bits[i - 1]);
        }
    }
    f64::NAN
}

/// Per family, its measured points.
struct Family {
    layout: FilterLayout,
    runs: Vec<FilterBenchResult>,
}

impl Family {
    /// Bits of filter memory per key, as built (a Ribbon filter rounds its
    /// result bits down: its memory is not the bits/key asked for).
    fn memory_bits(&self) -> Vec<f64> {
        self.runs
            .iter()
            .map(|r| r.memory_bytes as f64 * 8.0 / r.keys.max(1) as f64)
            .collect()
    }
    fn fpr(&self) -> Vec<f64> {
        self.runs
            .iter()
            .map(FilterBenchResult::measured_fpr)
            .collect()
    }
    fn theory(&self) -> Vec<f64> {
        self.runs.iter().map(|r| r.theoretical_fpr).collect()
    }
    fn ns_query(&self) -> Vec<f64> {
        self.runs
            .iter()
            .map(FilterBenchResult::ns_per_query)
            .collect()
    }
    fn ns_build(&self) -> Vec<f64> {
        self.runs
            .iter()
            .map(|r| r.build_seconds * 1e9 / r.keys.max(1) as f64)
            .collect()
    }
    /// The largest |measured ÷ theory − 1| over the points with at least
    /// `min_fp` false positives (NaN if none has).
    fn worst_deviation(&self, min_fp: u64) -> f64 {
        self.runs
            .iter()
            .filter(|r| r.false_positives >= min_fp && r.theoretical_fpr > 0.0)
            .map(|r| (r.measured_fpr() / r.theoretical_fpr - 1.0).abs())
            .fold(f64::NAN, f64::max)
    }
}

/// The sweep of every family.
pub fn filters(ctx: &mut Ctx) -> ExpResult<Summary> {
    let keys = ctx.pick(10_000, 1_000_000, 1_000_000);
    let queries = ctx.pick(
        (50_000, 50_000),
        (1_000_000, 20_000_000),
        (2_000_000, 50_000_000),
    );
    let bits = ctx.pick(vec![4.0, 10.0], sweep(2), sweep(4));
    let repeats = ctx.repeats(3, 5);
    let mut s = Summary::new(
        "filters",
        "Filter families: FPR vs bits/key beside theory, build and query cost (Bloom, blocked, Ribbon)",
    );
    let mut t = Table::new(&[
        "layout",
        "bits_per_key",
        "keys",
        "queries",
        "false_positives",
        "measured_fpr",
        "theoretical_fpr",
        "measured_over_theory",
        "filter_memory_bytes",
        "memory_bits_per_key",
        "build_ns_per_key",
        "ns_per_query",
        "digests_per_query",
    ]);
    let mut families = Vec::new();
    for layout in LAYOUTS {
        let mut runs = Vec::new();
        for &b in &bits {
            ctx.note(format!("{layout} at {b} bits/key"));
            let r = point(layout, b, keys, queries, repeats)?;
            t.push(vec![
                layout.to_string(),
                format!("{b}"),
                r.keys.to_string(),
                r.queries.to_string(),
                r.false_positives.to_string(),
                format!("{:.8}", r.measured_fpr()),
                format!("{:.8}", r.theoretical_fpr),
                format!("{:.4}", r.measured_fpr() / r.theoretical_fpr),
                r.memory_bytes.to_string(),
                format!("{:.3}", r.memory_bytes as f64 * 8.0 / r.keys.max(1) as f64),
                format!("{:.2}", r.build_seconds * 1e9 / r.keys.max(1) as f64),
                format!("{:.2}", r.ns_per_query()),
                format!("{:.2}", r.digests_per_query),
            ]);
            runs.push(r);
        }
        families.push(Family { layout, runs });
    }
    ctx.write_csv("filters", &t)?;

    s.para(format!(
        "One filter of each family over {keys} keys of {KEY_SIZE} bytes at every bits/key from \
         {} to {}, each built from the keys' 64-bit digests and queried with absent keys, each \
         query hashing its key once (`filterbench`); a point's queries grow from {} up to {} \
         until it has seen {WANT_FALSE_POSITIVES} false positives; times are the fastest of \
         {repeats} runs. Bits of memory per key are those built (interpolated between points \
         where a finding needs a rate between two). Theory: \
         `sievedb::filter::theory` for the layout, its probe count and (Ribbon) its result \
         bits and slot overhead.",
        bits[0],
        bits[bits.len() - 1],
        queries.0,
        queries.1
    ));
    let bloom10 = families[0]
        .runs
        .iter()
        .zip(&bits)
        .find(|(_, b)| **b == 10.0)
        .map(|(r, _)| r.measured_fpr());
    let pick = [4.0, 8.0, 10.0];
    let mut rows = Vec::new();
    for fam in &families {
        for (r, b) in fam.runs.iter().zip(&bits) {
            if !pick.contains(b) {
                continue;
            }
            rows.push(vec![
                fam.layout.to_string(),
                format!("{b}"),
                pct(r.measured_fpr(), 3),
                pct(r.theoretical_fpr, 3),
                f(r.memory_bytes as f64 * 8.0 / r.keys.max(1) as f64, 2),
                f(r.build_seconds * 1e9 / r.keys.max(1) as f64, 1),
                f(r.ns_per_query(), 1),
                f(r.digests_per_query, 2),
            ]);
        }
    }
    s.table(
        &[
            "layout",
            "bits/key",
            "FPR",
            "theory",
            "memory bits/key",
            "build ns/key",
            "ns/query",
            "digests/query",
        ],
        rows,
    );
    let mut findings = Vec::new();
    if let Some(target) = bloom10 {
        for fam in &families {
            let b = bits_for_fpr(&fam.memory_bits(), &fam.fpr(), target);
            findings.push(format!(
                "{}: {} bits of memory per key for the FPR of the standard Bloom filter at 10 \
                 bits/key ({})",
                fam.layout,
                f(b, 2),
                pct(target, 3)
            ));
        }
    }
    for fam in &families {
        findings.push(format!(
            "{}: measured FPR within {} of theory at every point with at least 100 false \
             positives",
            fam.layout,
            pct(fam.worst_deviation(100), 1)
        ));
    }
    let blocked = &families[1];
    for fam in families
        .iter()
        .filter(|f| f.layout != FilterLayout::Blocked)
    {
        for &b in &[8.0, 10.0] {
            let Some(i) = bits.iter().position(|x| *x == b) else {
                continue;
            };
            findings.push(format!(
                "{} at {b} bits/key against the blocked Bloom filter: build {}×, query {}×",
                fam.layout,
                f(fam.ns_build()[i] / blocked.ns_build()[i], 2),
                f(fam.ns_query()[i] / blocked.ns_query()[i], 2)
            ));
        }
    }
    s.bullets("Findings", findings);
    s.bullets(
        "Deviations",
        vec![
            "Not a paper's figure: the families' theory is the reference (Bloom: Bloom 1970; \
             blocked: Putze, Sanders & Singler 2009; Ribbon: Dillinger & Walzer 2021)."
                .into(),
            "Times are one run each on a shared machine: compare ratios within this run.".into(),
        ],
    );
    let mut fpr_series = Vec::new();
    for fam in &families {
        fpr_series.push((format!("{} (measured)", fam.layout), fam.fpr()));
        fpr_series.push((format!("{} (theory)", fam.layout), fam.theory()));
    }
    ctx.plot(
        &mut s,
        "filters",
        "FPR vs bits per key, measured and theory",
        &Chart::Lines {
            title: "False-positive rate vs bits per key".into(),
            x_label: "bits per key".into(),
            y_label: "false-positive rate".into(),
            x: bits.clone(),
            series: fpr_series,
            log_x: false,
            log_y: true,
        },
    );
    ctx.plot(
        &mut s,
        "filters-query",
        "ns per query vs bits per key",
        &Chart::Lines {
            title: "Query time (hash + probe) vs bits per key".into(),
            x_label: "bits per key".into(),
            y_label: "ns per query".into(),
            x: bits.clone(),
            series: families
                .iter()
                .map(|fam| (fam.layout.to_string(), fam.ns_query()))
                .collect(),
            log_x: false,
            log_y: false,
        },
    );
    ctx.plot(
        &mut s,
        "filters-build",
        "build ns per key vs bits per key",
        &Chart::Lines {
            title: "Build time per key vs bits per key".into(),
            x_label: "bits per key".into(),
            y_label: "build ns per key".into(),
            x: bits.clone(),
            series: families
                .iter()
                .map(|fam| (fam.layout.to_string(), fam.ns_build()))
                .collect(),
            log_x: false,
            log_y: false,
        },
    );
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_has_fractional_steps_from_2_to_16() {
        let s = sweep(2);
        assert_eq!(s.len(), 29);
        assert_eq!((s[0], s[1], s[28]), (2.0, 2.5, 16.0));
    }

    #[test]
    fn bits_for_an_fpr_interpolate_in_log_space() {
        let bits = [2.0, 4.0, 6.0];
        let fpr = [0.1, 0.01, 0.001];
        assert!((bits_for_fpr(&bits, &fpr, 0.01) - 4.0).abs() < 1e-9);
        // Halfway in log space between 0.1 and 0.01.
        let mid = (0.1f64 * 0.01).sqrt();
        assert!((bits_for_fpr(&bits, &fpr, mid) - 3.0).abs() < 1e-9);
        assert_eq!(bits_for_fpr(&bits, &fpr, 0.5), 2.0);
        assert!(bits_for_fpr(&bits, &fpr, 1e-6).is_nan());
    }
}
