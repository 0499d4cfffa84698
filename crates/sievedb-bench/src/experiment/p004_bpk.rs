//! Paper 004: LevelDB's bits per key, fillrandom and readrandom.

use super::plot::Chart;
use super::{f, Ctx, ExpResult, Summary, Table};
use crate::bench::Benchmark;
use crate::report::median;
use crate::BenchArgs;

/// Bits per key of the study.
const BPKS: [f64; 8] = [0.0, 1.0, 5.0, 10.0, 30.0, 50.0, 100.0, 1000.0];

/// Paper 004: fillrandom micros/op (mean of ten runs).
const PAPER_FILL_US: [f64; 8] = [
    3.7837, 3.8289, 3.8274, 3.7458, 4.1526, 4.352, 4.3591, 5.7891,
];
/// Paper 004: fillrandom throughput, MB/s.
const PAPER_FILL_MBS: [f64; 8] = [29.26, 28.91, 28.92, 29.56, 26.72, 25.49, 25.46, 19.11];
/// Paper 004: readrandom micros/op, the ten runs per bits/key.
const PAPER_READ_RUNS: [[f64; 10]; 8] = [
    [
        3.292, 3.317, 3.218, 3.186, 3.362, 3.275, 3.270, 3.421, 3.260, 3.299,
    ],
    [
        3.318, 3.293, 3.213, 3.408, 3.224, 3.272, 2.721, 3.241, 3.233, 3.294,
    ],
    [
        2.368, 2.419, 2.776, 2.963, 2.809, 2.843, 2.855, 2.925, 2.411, 2.974,
    ],
    [
        2.402, 2.356, 2.816, 2.794, 2.937, 2.766, 2.805, 2.330, 2.837, 2.816,
    ],
    [
        3.049, 2.509, 2.516, 2.533, 3.031, 2.594, 2.536, 2.539, 2.592, 2.954,
    ],
    [
        2.654, 2.800, 2.586, 3.182, 3.080, 2.791, 2.781, 3.190, 2.590, 2.585,
    ],
    [
        2.797, 3.215, 3.240, 3.116, 3.219, 2.833, 2.947, 3.236, 2.753, 3.234,
    ],
    [
        4.028, 4.134, 3.397, 3.423, 4.192, 3.375, 3.415, 4.196, 3.838, 4.061,
    ],
];

/// The shape of a sweep as a sentence: where the median read is fastest and
/// how reads and fills change from the first to the last bits/key.
fn shape(bpks: &[f64], read: &[f64], fill: &[f64]) -> String {
    let best = read
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| i);
    let (Some(best), Some(last)) = (best, bpks.len().checked_sub(1)) else {
        return "no reads measured".into();
    };
    format!(
        "reads are fastest at {} bits/key ({} µs; {} µs at {} and {} µs at {} bits/key), \
         fills take {} µs at {} and {} µs at {} bits/key",
        bpks[best],
        f(read[best], 3),
        f(read[0], 3),
        bpks[0],
        f(read[last], 3),
        bpks[last],
        f(fill[0], 3),
        bpks[0],
        f(fill[last], 3),
        bpks[last]
    )
}

/// min, median, max of `xs` (sorted in place by [`median`]).
fn min_med_max(xs: &[f64]) -> (f64, f64, f64) {
    let mut v = xs.to_vec();
    let m = median(&mut v);
    (v[0], m, v[v.len() - 1])
}

/// The bits-per-key sweep.
pub fn bpk_sweep(ctx: &mut Ctx) -> ExpResult<Summary> {
    let num = ctx.pick(5_000, 300_000, 1_000_000);
    let runs = ctx.repeats(5, 10);
    let bpks: Vec<f64> = ctx.pick(vec![0.0, 10.0, 1000.0], BPKS.to_vec(), BPKS.to_vec());
    let mut s = Summary::new(
        "bpk-sweep",
        "Bits-per-key study (paper 004): fillrandom/readrandom vs bits per key",
    );
    let mut t = Table::new(&[
        "bits_per_key",
        "probes_k",
        "run",
        "benchmark",
        "micros_per_op",
        "mb_per_sec",
        "found",
        "data_block_reads_per_op",
        "filter_false_positives",
    ]);
    let mut rows = Vec::new();
    let mut fill_med = Vec::new();
    let mut read_med = Vec::new();
    // The paper's fill means and read medians at the same bits/key.
    let (mut paper_fill_med, mut paper_read_med) = (Vec::new(), Vec::new());
    for &b in &bpks {
        let k = if b > 0.0 {
            sievedb::filter::options::leveldb_probes(b)
        } else {
            0
        };
        ctx.note(format!(
            "{b} bits/key (k = {k}): {runs} × fillrandom + readrandom"
        ));
        let args = BenchArgs {
            benchmarks: "fillrandom,readrandom".into(),
            num,
            reads: num,
            filters: crate::FilterArgs {
                bits_per_key: b,
                leveldb_probes: true,
                ..crate::FilterArgs::default()
            },
            repeats: runs,
            ..ctx.bench_defaults()
        };
        let recs = crate::run_records(&args)?;
        let mut fill = Vec::new();
        let mut fill_mb = Vec::new();
        let mut read = Vec::new();
        for r in &recs {
            let rates = r.rates();
            let st = r.stats.as_ref();
            t.push(vec![
                format!("{b}"),
                k.to_string(),
                r.repeat.to_string(),
                r.benchmark.name().into(),
                format!("{:.4}", rates.micros_per_op),
                format!("{:.2}", rates.mb_per_sec),
                r.m.found.map_or(String::new(), |x| x.to_string()),
                st.map_or(String::new(), |s| {
                    f(s.data_block_reads as f64 / r.m.ops.max(1) as f64, 4)
                }),
                st.map_or(String::new(), |s| s.filter_false_positives.to_string()),
            ]);
            match r.benchmark {
                Benchmark::FillRandom => {
                    fill.push(rates.micros_per_op);
                    fill_mb.push(rates.mb_per_sec);
                }
                Benchmark::ReadRandom => read.push(rates.micros_per_op),
                _ => {}
            }
        }
        let i = BPKS.iter().position(|x| *x == b).unwrap_or(0);
        let (f0, f1, f2) = min_med_max(&fill);
        let (r0, r1, r2) = min_med_max(&read);
        let (p0, p1, p2) = min_med_max(&PAPER_READ_RUNS[i]);
        rows.push(vec![
            format!("{b}"),
            k.to_string(),
            format!("{} / **{}** / {}", f(f0, 3), f(f1, 3), f(f2, 3)),
            f(median(&mut fill_mb), 1),
            format!("{} / {}", f(PAPER_FILL_US[i], 3), f(PAPER_FILL_MBS[i], 1)),
            format!("{} / **{}** / {}", f(r0, 3), f(r1, 3), f(r2, 3)),
            format!("{} / **{}** / {}", f(p0, 3), f(p1, 3), f(p2, 3)),
        ]);
        fill_med.push(f1);
        read_med.push(r1);
        paper_fill_med.push(PAPER_FILL_US[i]);
        paper_read_med.push(p1);
    }
    ctx.write_csv("bpk-sweep", &t)?;
    s.para(format!(
        "sievedb with LevelDB's probe count k = ⌊0.69·b⌋ clamped to [1, 30] (`--leveldb-probes`): \
         `fillrandom` of {num} {}-byte keys with {}-byte values into an empty database, then \
         `readrandom` of {num} existing keys right after (db_bench's defaults and order), {runs} \
         runs per bits/key; min / **median** / max micros per op. Paper: 004 (LevelDB 1.23, \
         1M entries, ten runs; its fill figures are means, its readrandom runs are listed, so \
         their min/median/max are computed here).",
        BenchArgs::default().key_size,
        BenchArgs::default().value_size
    ));
    s.table(
        &[
            "bits/key",
            "k",
            "fillrandom µs (ours)",
            "fill MB/s (ours)",
            "fill µs / MB/s (paper)",
            "readrandom µs (ours)",
            "readrandom µs (paper)",
        ],
        rows,
    );
    s.bullets(
        "Deviations",
        vec![
            format!(
                "{num} entries and {runs} runs instead of 1M and ten (small scale); `--scale \
                 paper` uses the paper's."
            ),
            format!(
                "The paper's absolute numbers are LevelDB's on other hardware; compare the \
                 shape. The paper's (004, fill means, read medians): {}. Ours (medians): {}.",
                shape(&bpks, &paper_read_med, &paper_fill_med),
                shape(&bpks, &read_med, &fill_med)
            ),
            "`readrandom` looks up existing keys only, so filters help only on the levels above \
             the one holding the key; `found` and data block reads per lookup are in the CSV."
                .into(),
        ],
    );
    let groups: Vec<String> = bpks.iter().map(|b| format!("{b}")).collect();
    let paper_read: Vec<f64> = bpks
        .iter()
        .map(|b| {
            let i = BPKS.iter().position(|x| x == b).unwrap_or(0);
            min_med_max(&PAPER_READ_RUNS[i]).1
        })
        .collect();
    let paper_fill: Vec<f64> = bpks
        .iter()
        .map(|b| PAPER_FILL_US[BPKS.iter().position(|x| x == b).unwrap_or(0)])
        .collect();
    ctx.plot(
        &mut s,
        "bpk-sweep",
        "micros/op vs bits per key",
        &Chart::Bars {
            title: "Bits per key: micros/op (median), sievedb vs LevelDB (paper 004)".into(),
            x_label: "bits per key".into(),
            y_label: "micros/op".into(),
            groups,
            series: vec![
                ("fillrandom (sievedb)".into(), fill_med),
                ("fillrandom (paper)".into(), paper_fill),
                ("readrandom (sievedb)".into(), read_med),
                ("readrandom (paper)".into(), paper_read),
            ],
            log_y: false,
        },
    );
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_follows_the_medians() {
        let s = shape(&[0.0, 10.0, 1000.0], &[3.0, 2.0, 4.0], &[1.0, 1.5, 5.0]);
        assert!(
            s.contains("reads are fastest at 10 bits/key (2.000 µs"),
            "{s}"
        );
        assert!(
            s.contains("3.000 µs at 0 and 4.000 µs at 1000 bits/key"),
            "{s}"
        );
        assert!(
            s.contains("fills take 1.000 µs at 0 and 5.000 µs at 1000"),
            "{s}"
        );
        let t = shape(&[0.0, 10.0], &[1.0, 2.0], &[1.0, 1.0]);
        assert!(t.contains("fastest at 0 bits/key"), "{t}");
        assert_eq!(shape(&[], &[], &[]), "no reads measured");
    }
}
