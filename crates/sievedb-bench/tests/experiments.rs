//! Smoke tests of `sievedb experiment`: every experiment at the hidden `tiny`
//! scale writes its CSV (with the expected columns and rows), its plots and
//! its Markdown summary.

use sievedb_bench::experiment::{self, plot, ExperimentArgs, Scale, Table};
use std::path::Path;

fn run(name: &str, csv_cols: &[&str], min_rows: usize, plots: &[&str]) -> Table {
    let dir = tempfile::tempdir().unwrap();
    let mut args = ExperimentArgs::new(name);
    args.scale = Scale::Tiny;
    args.work_dir = Some(dir.path().join("work"));
    let out = dir.path().join("out").join(name);
    let exp = experiment::find(name).unwrap();
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
    csv
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
    cols.push("key_size");
    run("fig5a", &cols, 4, &["fig5a"]);
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

const ELASTIC_READ_COLS: [&str; 10] = [
    "distribution",
    "column",
    "repeat",
    "device_reads",
    "block_cache_misses",
    "filter_unit_loads",
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
    let csv = run(
        "elastic-table1",
        &ELASTIC_READ_COLS,
        2 * 6,
        &["elastic-table1"],
    );
    assert_every_policy(&csv);
}

#[test]
fn elastic_fig5() {
    let csv = run("elastic-fig5", &ELASTIC_READ_COLS, 2 * 6, &["elastic-fig5"]);
    assert_every_policy(&csv);
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
            "estimated_extra_io",
            "device_reads_per_get",
        ],
        2 * 3,
        &["elastic-fig6", "elastic-fig6-reads"],
    );
}

#[test]
fn elastic_fig7() {
    run(
        "elastic-fig7",
        &[
            "config",
            "fill_seconds",
            "compaction_wait_seconds",
            "load_mb_per_sec",
            "ratio_to_single_filter",
        ],
        4,
        &["elastic-fig7"],
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
