//! Smoke tests of `sievedb experiment`: every experiment at the hidden `tiny`
//! scale writes its CSV (with the expected columns and rows), its plots and
//! its Markdown summary.

use sievedb_bench::experiment::{self, plot, ExperimentArgs, Scale, Table};
use std::path::Path;

fn run(name: &str, csv_cols: &[&str], min_rows: usize, plots: &[&str]) -> Table {
    run_md(name, None, csv_cols, min_rows, plots).0
}

/// [`run`] with `--repeats`, returning the CSV and the Markdown summary.
fn run_md(
    name: &str,
    repeats: Option<usize>,
    csv_cols: &[&str],
    min_rows: usize,
    plots: &[&str],
) -> (Table, String) {
    let mut args = ExperimentArgs::new(name);
    args.repeats = repeats;
    run_args(args, csv_cols, min_rows, plots)
}

/// [`run_md`] with every flag given (`--scale tiny`, `--work-dir` and
/// `--out` set here).
fn run_args(
    mut args: ExperimentArgs,
    csv_cols: &[&str],
    min_rows: usize,
    plots: &[&str],
) -> (Table, String) {
    let dir = tempfile::tempdir().unwrap();
    let name = args.name.clone();
    args.scale = Scale::Tiny;
    args.work_dir = Some(dir.path().join("work"));
    let out = dir.path().join("out").join(&name);
    let exp = experiment::find(&name).unwrap();
    let done = experiment::run_one(&exp, &args, &out).unwrap();
    let stem = exp.name;
    let csv = Table::read_csv(&out.join(format!("{stem}.csv"))).unwrap();
    for c in csv_cols {
        assert!(
            csv.col(c).is_some(),
            "{stem}.csv lacks column {c}: {:?}",
            csv.header
        );
    }
    assert!(
        csv.rows.len() >= min_rows,
        "{stem}.csv has {} rows",
        csv.rows.len()
    );
    assert!(csv.rows.iter().all(|r| r.len() == csv.header.len()));
    let md = std::fs::read_to_string(out.join(format!("{stem}.md"))).unwrap();
    assert!(md.starts_with(&format!("# {stem}: ")), "{md}");
    assert!(md.contains("| ") && md.contains("Deviation"), "{md}");
    if plot::font_available() {
        for p in plots {
            for ext in ["svg", "png"] {
                let f = out.join(format!("{p}.{ext}"));
                assert!(f.exists(), "{} missing", f.display());
            }
            assert!(md.contains(&format!("({p}.svg)")), "{md}");
        }
        assert_eq!(done.summary.plots.len(), plots.len());
    }
    // The scratch databases are gone.
    let work = dir.path().join("work");
    let left: Vec<_> = std::fs::read_dir(&work).map_or(Vec::new(), |d| d.flatten().collect());
    assert!(
        left.is_empty(),
        "left behind in {}: {left:?}",
        work.display()
    );
    (csv, md)
}

const TREE_COLS: [&str; 8] = [
    "device",
    "mode",
    "micros_per_op",
    "gain",
    "model_gain",
    "data_block_reads_per_lookup",
    "hash_ns",
    "fpr",
];

#[test]
fn table1() {
    run(
        "table1",
        &["kind", "name", "ns", "paper_ns"],
        8,
        &["table1"],
    );
}

#[test]
fn table2() {
    run(
        "table2",
        &[
            "hash",
            "scheme",
            "measured_fpr",
            "theoretical_fpr",
            "ns_per_query",
        ],
        9,
        &["table2"],
    );
}

#[test]
fn fig2() {
    run("fig2", &["key_size", "ns_per_query"], 9, &["fig2"]);
}

#[test]
fn table3() {
    run(
        "table3",
        &["part", "secondary", "measured_fpr"],
        7 + 8,
        &["table3"],
    );
}

#[test]
fn fig1() {
    run(
        "fig1",
        &["levels_loaded", "hash_share", "bytes"],
        3,
        &["fig1"],
    );
}

#[test]
fn fig5a() {
    let mut cols = TREE_COLS.to_vec();
    cols.extend(["key_size", "gain_min", "gain_max"]);
    let (csv, md) = run_md("fig5a", Some(2), &cols, 4, &["fig5a"]);
    assert!(md.contains(experiment::GAIN_DEFINITION), "{md}");
    // Every number the summary states about a point is the run's own: the
    // gain in the table and the hash cost in the prose follow the CSV.
    let col = |n: &str| csv.col(n).unwrap();
    let num = |r: &Vec<String>, n: &str| r[col(n)].parse::<f64>().unwrap();
    for r in csv.rows.iter().filter(|r| r[col("device")] == "page cache") {
        let ks = &r[col("key_size")];
        if r[col("mode")] == "levels" {
            let cell = table_cell(&md, &format!("| {ks} B, page cache |"), 3);
            let shown = leading_number(cell.trim_start_matches("**"));
            let gain = num(r, "gain") * 100.0;
            assert!((shown - gain).abs() <= 0.51, "{cell} vs {gain}");
            let ratio = experiment::PairedRatio {
                n: 2,
                median: num(r, "gain") + 1.0,
                min: num(r, "gain_min") + 1.0,
                max: num(r, "gain_max") + 1.0,
            };
            assert!(ratio.min <= ratio.median && ratio.median <= ratio.max);
            assert_eq!(
                cell.contains("within noise"),
                ratio.within_noise(),
                "{cell}"
            );
        } else {
            let at = format!("At {ks} B keys a `filter`-sharing lookup computes ");
            let Some(i) = md.find(&at) else {
                continue; // only the smallest and largest key sizes get one
            };
            let rest = &md[i..];
            let j = rest.find(" ns of hashing").unwrap();
            let k = rest[..j].rfind('(').unwrap();
            let shown: f64 = rest[k + 1..j].parse().unwrap();
            let hash = num(r, "hash_ns");
            assert!((shown - hash).abs() <= 0.51, "{shown} vs {hash}");
        }
    }
    assert!(!md.contains("~10 ns") && !md.contains("0.45 µs"), "{md}");
}

/// Cell `i` of the Markdown table row starting with `start`.
fn table_cell(md: &str, start: &str, i: usize) -> String {
    let line = md
        .lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no row {start} in {md}"));
    line.split(" | ").nth(i).unwrap().to_string()
}

/// The number a string starts with (sign and decimals allowed).
fn leading_number(s: &str) -> f64 {
    let end = s
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_digit() || *c == '.' || (*i == 0 && "+-".contains(*c))))
        .map_or(s.len(), |(i, _)| i);
    s[..end].parse().unwrap()
}

#[test]
fn fig5b() {
    let mut cols = TREE_COLS.to_vec();
    cols.push("levels_loaded");
    run("fig5b", &cols, 4, &["fig5b"]);
}

#[test]
fn fig6() {
    run("fig6", &TREE_COLS, 2, &["fig6"]);
}

#[test]
fn fig7() {
    let mut cols = TREE_COLS.to_vec();
    cols.push("bits_per_key");
    run("fig7", &cols, 4, &["fig7"]);
}

#[test]
fn fig8_and_fig9() {
    let mut cols = TREE_COLS.to_vec();
    cols.extend(["alpha", "figure", "found_fraction"]);
    let plots: &[&str] = if Path::new("/dev/shm").is_dir() {
        &["fig8", "fig9"]
    } else {
        &["fig8"]
    };
    run("fig8", &cols, 4, plots);
}

#[test]
fn costmodel() {
    run(
        "costmodel",
        &[
            "t_h_ns",
            "t_p_ns",
            "t_d_ns",
            "f_p",
            "eq4_ns",
            "eq5_ns",
            "model_gain",
        ],
        10,
        &["costmodel"],
    );
}

#[test]
fn filter_families() {
    let (csv, md) = run_md(
        "filters",
        None,
        &[
            "layout",
            "bits_per_key",
            "measured_fpr",
            "theoretical_fpr",
            "filter_memory_bytes",
            "build_ns_per_key",
            "ns_per_query",
            "digests_per_query",
        ],
        6,
        &["filters", "filters-query", "filters-build"],
    );
    let layout = csv.col("layout").unwrap();
    for l in ["bloom", "blocked", "ribbon", "ribbon64"] {
        assert!(csv.rows.iter().any(|r| r[layout] == l), "no {l} rows");
    }
    // One digest per query, whatever the family.
    let d = csv.col("digests_per_query").unwrap();
    assert!(csv.rows.iter().all(|r| r[d] == "1.00"), "{:?}", csv.rows);
    assert!(
        md.contains("for the FPR of the standard Bloom filter at 10"),
        "{md}"
    );
}

#[test]
fn bpk_sweep() {
    run(
        "bpk-sweep",
        &[
            "bits_per_key",
            "probes_k",
            "benchmark",
            "micros_per_op",
            "mb_per_sec",
        ],
        6,
        &["bpk-sweep"],
    );
}

#[test]
fn all_writes_the_reproduction_document() {
    // `all` at tiny scale with a registry-wide index; only checks the document
    // and the copied plots (each experiment has its own test above).
    let dir = tempfile::tempdir().unwrap();
    let mut args = ExperimentArgs::new("all");
    args.scale = Scale::Tiny;
    args.out = Some(dir.path().join("out"));
    args.docs = dir.path().join("docs");
    args.work_dir = Some(dir.path().join("work"));
    let done = experiment::run_all(&args).unwrap();
    assert_eq!(done.len(), experiment::registry().len());
    let md = std::fs::read_to_string(dir.path().join("docs/reproduction.md")).unwrap();
    for e in experiment::registry() {
        assert!(
            md.contains(&format!("## {}: ", e.name)),
            "{} missing",
            e.name
        );
    }
    if plot::font_available() {
        assert!(md.contains("](reproduction/fig5a.svg)"));
        assert!(dir.path().join("docs/reproduction/fig5a.svg").exists());
    }
}

const ELASTIC_READ_COLS: [&str; 11] = [
    "distribution",
    "column",
    "repeat",
    "device_reads",
    "block_cache_misses",
    "filter_unit_loads",
    "filter_unit_reads",
    "filter_false_positives",
    "estimated_extra_io",
    "ops_per_sec",
    "device_reads_per_get",
];

/// Every policy and the unlimited reference are columns of the CSV.
fn assert_every_policy(csv: &Table) {
    let c = csv.col("column").unwrap();
    for p in sievedb::FilterPolicy::ALL {
        assert!(
            csv.rows.iter().any(|r| r[c] == p.name()),
            "no {} rows",
            p.name()
        );
    }
    assert!(csv.rows.iter().any(|r| r[c].starts_with("unlimited")));
}

#[test]
fn elastic_table1() {
    // Two distributions at tiny scale, five policies + unlimited, one repeat.
    let (csv, md) = run_md(
        "elastic-table1",
        None,
        &ELASTIC_READ_COLS,
        2 * 6,
        &["elastic-table1"],
    );
    assert_every_policy(&csv);
    // RocksDB, when built in, is bulk-loaded in the tree's shape and read
    // at every popularity.
    if cfg!(feature = "rocksdb") {
        assert!(md.contains("RocksDB's tree was bulk-loaded in"), "{md}");
        assert!(md.contains("reads/Get (÷ elastic: **"), "{md}");
        let c = csv.col("column").unwrap();
        let rows = csv.rows.iter().filter(|r| r[c].starts_with("rocksdb"));
        assert_eq!(rows.count(), 2, "{md}");
    }
}

#[test]
fn elastic_fig5() {
    let csv = run("elastic-fig5", &ELASTIC_READ_COLS, 2 * 6, &["elastic-fig5"]);
    assert_every_policy(&csv);
}

/// Two names in one command: each writes into `--out`/<name>, and Figure 5
/// says its runs are Table 1's.
#[test]
fn elastic_table1_and_fig5_in_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = ExperimentArgs::new("elastic-table1,elastic-fig5");
    args.scale = Scale::Tiny;
    args.work_dir = Some(dir.path().join("work"));
    args.out = Some(dir.path().join("out"));
    experiment::run(&args).unwrap();
    for name in ["elastic-table1", "elastic-fig5"] {
        let out = dir.path().join("out").join(name);
        assert!(out.join(format!("{name}.csv")).is_file(), "{name}");
        assert!(out.join(format!("{name}.svg")).is_file(), "{name}");
    }
    let md = std::fs::read_to_string(dir.path().join("out/elastic-fig5/elastic-fig5.md")).unwrap();
    assert!(
        md.contains("(The runs are the ones of `elastic-table1` in this process.)"),
        "{md}"
    );
}

#[test]
fn elastic_fig6() {
    run(
        "elastic-fig6",
        &[
            "budget_bits_per_key",
            "policy",
            "ops_per_sec",
            "device_reads",
            "filter_unit_loads",
            "filter_unit_reads",
            "estimated_extra_io",
            "device_reads_per_get",
        ],
        2 * 3,
        &["elastic-fig6", "elastic-fig6-reads"],
    );
}

#[test]
fn elastic_fig7() {
    let (csv, md) = run_args(
        ExperimentArgs::new("elastic-fig7"),
        &[
            "config",
            "fill_seconds",
            "compaction_wait_seconds",
            "load_mb_per_sec",
            "ratio_to_single_filter",
            "cpu_seconds",
            "user_cpu_seconds",
            "system_cpu_seconds",
        ],
        4,
        &["elastic-fig7"],
    );
    // The load's CPU splits into user and system time, which add up.
    let col = |n: &str| csv.col(n).unwrap();
    for r in &csv.rows {
        let x = |n: &str| r[col(n)].parse::<f64>().unwrap();
        assert!(x("user_cpu_seconds") > 0.0, "{r:?}");
        let sum = x("user_cpu_seconds") + x("system_cpu_seconds");
        assert!((sum - x("cpu_seconds")).abs() < 0.02, "{r:?}");
    }
    // Filter construction is timed apart, per configuration.
    assert!(md.contains("Filter construction alone"), "{md}");
    assert!(md.contains("ns per key"), "{md}");
}

#[test]
fn elastic_fig7_with_three_background_threads() {
    let mut args = ExperimentArgs::new("elastic-fig7");
    args.background_threads = 3;
    let (csv, md) = run_args(args, &["background_threads"], 4, &["elastic-fig7"]);
    let col = csv.col("background_threads").unwrap();
    assert!(csv.rows.iter().all(|r| r[col] == "3"), "{:?}", csv.rows);
    assert!(
        md.contains("3 background threads: one flush thread and 2 compaction threads"),
        "{md}"
    );
    assert!(
        md.contains("`sievedb experiment elastic-fig7 --scale tiny --background-threads 3`"),
        "{md}"
    );
}

#[test]
fn elastic_warmup() {
    let csv = run(
        "elastic-warmup",
        &[
            "start",
            "window",
            "lookups_done",
            "device_reads",
            "filter_unit_loads",
            "open_unit_loads",
            "steady_after_lookups",
        ],
        2 * 8,
        &["elastic-warmup"],
    );
    let c = csv.col("start").unwrap();
    assert!(csv.rows.iter().any(|r| r[c] == "warm"));
    assert!(csv.rows.iter().any(|r| r[c] == "cold"));
}

#[test]
fn elastic_shift() {
    let csv = run(
        "elastic-shift",
        &[
            "workload",
            "policy",
            "window",
            "lookups_done",
            "device_reads",
            "filter_unit_loads",
        ],
        4 * 6 * 8,
        &[
            "elastic-shift-zipf",
            "elastic-shift-latest",
            "elastic-shift-hotspot",
            "elastic-shift-hotspot-95-5",
        ],
    );
    let p = csv.col("policy").unwrap();
    for name in [
        "uniform",
        "monkey",
        "elastic",
        "elastic-uniform",
        "skew-at-write",
        "oracle",
    ] {
        assert!(csv.rows.iter().any(|r| r[p] == name), "{name}");
    }
    let w = csv.col("workload").unwrap();
    for label in ["hotspot 80/20", "hotspot 95/5 (all absent)"] {
        assert_eq!(
            csv.rows.iter().filter(|r| r[w] == label).count(),
            6 * 8,
            "{label}"
        );
    }
}

#[test]
fn paired_ratio_is_the_median_of_per_repeat_ratios() {
    use experiment::PairedRatio;
    // Ratios 2.0, 1.5, 3.0: median 2.0, spread 1.5–3.0.
    let r = PairedRatio::of(&[4.0, 3.0, 9.0], &[2.0, 2.0, 3.0]);
    assert_eq!(r.n, 3);
    assert_eq!((r.median, r.min, r.max), (2.0, 1.5, 3.0));
    assert!((r.gain() - 1.0).abs() < 1e-12);
    // Spread 1.5 is wider than the effect 1.0: within noise.
    assert!(r.within_noise());
    assert!(
        r.show_gain().contains("+100% (+50%…+200%) ⚠ within noise"),
        "{}",
        r.show_gain()
    );
    assert!(
        r.show_ratio().starts_with("2.00× (1.50–3.00) ⚠"),
        "{}",
        r.show_ratio()
    );
    // A tight spread well away from 1×: a real effect, not flagged.
    let r = PairedRatio::of(&[1.30, 1.31, 1.29, 1.30], &[1.0; 4]);
    assert!(!r.within_noise());
    assert_eq!(r.show_gain(), "+30% (+29%…+31%)");
    // Tight, but crossing 1×: flagged.
    let r = PairedRatio::of(&[0.99, 1.01, 1.0], &[1.0; 3]);
    assert!(r.within_noise());
    // Losses are flagged the same way (distance from 1× below it).
    let r = PairedRatio::of(&[1.0, 1.0, 1.0], &[1.25, 1.24, 1.26]);
    assert!(r.gain() < -0.19 && !r.within_noise(), "{r:?}");
    // One repeat measures no spread: never flagged, and said so.
    let r = PairedRatio::of(&[2.0], &[1.0]);
    assert!(!r.within_noise());
    assert_eq!(r.show_gain(), "+100% (1 run, no spread)");
    // No pair (or only unusable ones): NaN and "-".
    let r = PairedRatio::of(&[1.0, f64::NAN], &[0.0, 1.0]);
    assert_eq!(r.n, 0);
    assert!(r.gain().is_nan() && r.show_gain() == "-");
    // Extra runs of one side are ignored.
    assert_eq!(PairedRatio::of(&[2.0, 2.0, 9.0], &[1.0, 1.0]).n, 2);
}
