//! End-to-end tests of `sievedb bulkload`: trees the benchmark reads, unit
//! filters, escaped input files, and no lock file left after a failure.

use std::path::Path;

mod common;

use common::*;

#[test]
fn bulkload_builds_a_database_the_benchmark_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sievedb");
    let db = db_arg(&dir);
    let shape = [
        "--num",
        "6500",
        "--key-size",
        "12",
        "--value-size",
        "40",
        "--levels",
        "3",
        "--size-ratio",
        "3",
        "--target-file-size",
        "16384",
        "--bits-per-key",
        "10",
    ];
    let mut args = vec!["bulkload", db.as_str()];
    args.extend_from_slice(&shape);
    args.push("--json");
    let out = ok(&sievedb(&args));
    assert_eq!(out.lines().count(), 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("bulkload --json is JSON");
    assert_eq!(v["type"], "bulkload");
    assert_eq!(v["entries"], 6500);
    let levels = v["per_level"].as_array().expect("per_level");
    let entries: Vec<u64> = levels
        .iter()
        .map(|l| l["entries"].as_u64().unwrap())
        .collect();
    assert_eq!(entries, [500, 1500, 4500]);
    assert!(levels.iter().all(|l| l["files"].as_u64().unwrap() >= 1));
    let level1_size = v["level1_size"].as_u64().unwrap().to_string();

    // The shape shows in `stats`; generated key 42 holds a 40-byte value.
    let stats = ok(&sievedb(&["stats", "--db", &db, "--json"]));
    let s: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(s["levels"][0]["files"], 0);
    assert_eq!(s["levels"][3]["entries"], 4500);
    let value = ok(&sievedb(&["get", "--db", &db, "000000000420"]));
    assert!(value.trim_end().len() >= 40, "{value}");

    // The benchmark reads it: every existing key is found, no missing key is.
    let parent = db_arg(tmp.path());
    let bench = ok(&sievedb(&[
        "bench",
        "--use-existing-db",
        "--db",
        &parent,
        "--benchmarks",
        "readrandom,readmissing",
        "--num",
        "6500",
        "--reads",
        "3000",
        "--key-size",
        "12",
        "--value-size",
        "40",
        "--size-ratio",
        "3",
        "--level1-size",
        &level1_size,
        "--json",
    ]));
    assert_eq!(
        found(&bench),
        [
            ("readrandom".to_string(), 3000),
            ("readmissing".to_string(), 0)
        ],
        "{bench}"
    );

    // A second load into the same directory is refused; the text summary of a
    // fresh one names every level.
    let again = sievedb(&args);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("already holds a database"),
        "{}",
        stderr(&again)
    );
    let other = db_arg(&tmp.path().join("other"));
    let mut args = vec!["bulkload", other.as_str()];
    args.extend_from_slice(&shape);
    let text = ok(&sievedb(&args));
    for needle in ["L1", "L2", "L3", "MB/s", "--level1-size"] {
        assert!(text.contains(needle), "{needle} missing in {text}");
    }
}

/// `(layout, units)` of the filter of every table file of the database in `dir`.
fn table_filters(dir: &Path) -> Vec<(sievedb::FilterLayout, u32, f64)> {
    use sievedb::sst::reader::TableReader;
    let counters = std::sync::Arc::new(sievedb::stats::Counters::new(8));
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("sst") {
            continue;
        }
        let number: u64 = path.file_stem().unwrap().to_str().unwrap().parse().unwrap();
        let t = TableReader::open(
            &sievedb::io::StdFs,
            &path,
            number,
            false,
            true,
            None,
            counters.clone(),
        )
        .unwrap();
        let f = t.filter_index().expect("a filter").empty();
        out.push((f.layout(), f.units(), t.properties().bits_per_key));
    }
    out
}

#[test]
fn bulkload_builds_unit_filters() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sievedb");
    let db = db_arg(&dir);
    let out = ok(&sievedb(&[
        "bulkload",
        &db,
        "--filter",
        "units",
        "--filter-units",
        "6",
        "--bits-per-key",
        "12",
        "--num",
        "4000",
        "--levels",
        "2",
        "--size-ratio",
        "3",
        "--target-file-size",
        "16384",
        "--json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["entries"], 4000);
    let filters = table_filters(&dir);
    assert!(filters.len() >= 2, "{filters:?}");
    for f in &filters {
        assert_eq!(*f, (sievedb::FilterLayout::Units, 6, 12.0));
    }

    // The database reads back, and its stats see the tables.
    let stats = ok(&sievedb(&["stats", "--db", &db, "--json"]));
    let s: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(s["levels"][2]["entries"], 3000);
    assert!(s.get("filter_memory_bytes").is_some(), "{s}");
    let value = ok(&sievedb(&["get", "--db", &db, "0000000000001000"]));
    assert!(value.trim_end().len() >= 100, "{value}");

    // The default stays one Bloom filter per file; bad filter flags are refused.
    let bloom = tmp.path().join("bloom");
    ok(&sievedb(&[
        "bulkload",
        &db_arg(&bloom),
        "--num",
        "1000",
        "--levels",
        "1",
    ]));
    assert!(table_filters(&bloom)
        .iter()
        .all(|f| *f == (sievedb::FilterLayout::Bloom, 1, 10.0)));
    let bad = sievedb(&[
        "bulkload",
        &db_arg(&tmp.path().join("bad")),
        "--filter",
        "units",
        "--filter-units",
        "0",
    ]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("units"), "{}", stderr(&bad));
    assert!(!tmp.path().join("bad").join("CURRENT").exists());
    let bad = sievedb(&[
        "bulkload",
        &db_arg(&tmp.path().join("bad")),
        "--filter-memory-bits-per-key",
        "-3",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("--filter-memory-bits-per-key"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn bulkload_from_an_escaped_input_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    let input = tmp.path().join("input.tsv");
    let path = db_arg(&input);
    let load = |contents: &str| {
        std::fs::write(&input, contents).unwrap();
        sievedb(&[
            "bulkload",
            &db,
            "--input",
            &path,
            "--levels",
            "2",
            "--size-ratio",
            "2",
        ])
    };

    // Out of order: refused with the line, nothing left that opens.
    let o = load("b\t1\na\t2\nc\t3\n");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("input.tsv:2:"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not strictly increasing"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("CURRENT").exists());
    let o = load("a\t1\nno tab here\n");
    assert!(
        stderr(&o).contains("input.tsv:2: expected KEY<TAB>VALUE"),
        "{}",
        stderr(&o)
    );
    let o = load("a%G0\t1\n");
    assert!(
        stderr(&o).contains("input.tsv:1: key: bad escape"),
        "{}",
        stderr(&o)
    );

    // Escaped binary keys and values, the empty value, CRLF line ends.
    let mut text = String::from("\"\"\tempty-key\r\n");
    for i in 0..300 {
        text.push_str(&format!("k%00{i:04}\tv%09{i}\n"));
    }
    text.push_str("z\t\"\"\n");
    let out = ok(&load(&text));
    assert!(out.contains("302 entries"), "{out}");
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "k%000042"])), "v%0942\n");
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "\"\""])), "empty-key\n");
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "z"])), "\"\"\n");
    let missing = sievedb(&["get", "--db", &db, "k%000042x"]);
    assert_eq!(missing.status.code(), Some(1));
    let scan = ok(&sievedb(&["scan", "--db", &db]));
    assert_eq!(scan.lines().count(), 302);

    // --input excludes the generator's flags.
    let o = sievedb(&["bulkload", &db, "--input", &path, "--num", "5"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_failed_bulkload_leaves_no_lock_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let input = tmp.path().join("in.tsv");
    // Enough sorted lines for tables to be written, then one out of order.
    let mut text = String::new();
    for i in 0..5000 {
        text.push_str(&format!("key{i:06}\t{}\n", "v".repeat(100)));
    }
    text.push_str("key000000\tlate\n");
    std::fs::write(&input, text).unwrap();
    let o = sievedb(&[
        "bulkload",
        &db_arg(&dir),
        "--input",
        &db_arg(&input),
        "--levels",
        "2",
        "--size-ratio",
        "2",
        "--target-file-size",
        "65536",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("in.tsv:5001:"), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");

    // Generated entries that cannot fill the levels: refused after the lock.
    let o = sievedb(&["bulkload", &db_arg(&dir), "--num", "3", "--levels", "3"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!dir.join("LOCK").exists(), "{}", stderr(&o));
}

#[test]
fn bulkload_engine_rocksdb_builds_what_bench_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rocksdb");
    let db = db_arg(&dir);
    let out = sievedb(&[
        "bulkload",
        db.as_str(),
        "--engine",
        "rocksdb",
        "--num",
        "3000",
        "--key-size",
        "12",
        "--value-size",
        "40",
        "--levels",
        "2",
        "--size-ratio",
        "4",
        "--target-file-size",
        "16384",
        "--bits-per-key",
        "10",
        "--json",
    ]);
    if !cfg!(feature = "rocksdb") {
        assert_eq!(out.status.code(), Some(1));
        assert!(
            stderr(&out).contains("built without RocksDB"),
            "{}",
            stderr(&out)
        );
        assert!(!dir.exists());
        return;
    }
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(
        (v["engine"].as_str(), v["entries"].as_u64()),
        (Some("rocksdb"), Some(3000))
    );
    let levels: Vec<u64> = v["per_level"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["level"].as_u64().unwrap())
        .collect();
    assert_eq!(levels, [5, 6]);
    let level1_size = v["level1_size"].as_u64().unwrap().to_string();
    let parent = db_arg(tmp.path());
    let bench = ok(&sievedb(&[
        "bench",
        "--engine",
        "rocksdb",
        "--use-existing-db",
        "--db",
        &parent,
        "--benchmarks",
        "readrandom,readmissing",
        "--num",
        "3000",
        "--reads",
        "2000",
        "--key-size",
        "12",
        "--value-size",
        "40",
        "--size-ratio",
        "4",
        "--level1-size",
        &level1_size,
        "--json",
    ]));
    assert_eq!(
        found(&bench),
        [
            ("readrandom".to_string(), 2000),
            ("readmissing".to_string(), 0)
        ],
        "{bench}"
    );
}

/// `(benchmark, keys found)` of each result line of `sievedb bench --json`.
fn found(bench: &str) -> Vec<(String, u64)> {
    bench
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == "result")
        .map(|r| {
            (
                r["benchmark"].as_str().unwrap().to_string(),
                r["found"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn bulkload_engine_rocksdb_takes_no_input_file() {
    let tmp = tempfile::tempdir().unwrap();
    let db = db_arg(&tmp.path().join("rocksdb"));
    let out = sievedb(&["bulkload", &db, "--engine", "rocksdb", "--input", "x.tsv"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
}
