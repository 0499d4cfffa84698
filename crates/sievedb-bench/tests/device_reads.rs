//! The device-read fields of the results (`/proc/self/io`, `/proc/diskstats`)
//! and the page-cache flags (`--drop-caches`, `--page-cache-limit`), on tiny
//! runs. Nothing here needs root or writable cgroups: a bounded run without
//! them must still succeed and say why it was not bounded.

use serde_json::Value;
use sievedb_bench::engines::EngineKind;
use sievedb_bench::report::csv::Table;
use sievedb_bench::{BenchArgs, EngineChoice};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
mod common;

use common::json_lines;
use sievedb_bench::bench::device_io::DEVICE_KEYS as DEVICE_FIELDS;

/// Bounded runs move the whole test process into a cgroup: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

const NUM: u64 = 2000;
const READS: u64 = 1000;

/// A database path in a fresh directory on the file system of the build's
/// target directory (a real block device on most machines, unlike a tmpfs
/// /tmp), unique to this call so that two test runs sharing a target
/// directory never delete each other's files; both go with the `TempDir`.
fn db_dir(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix(&format!("device-reads-{name}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a directory in CARGO_TARGET_TMPDIR");
    let db = dir.path().join("db");
    (dir, db)
}

fn tiny(engine: EngineChoice, db: &Path) -> BenchArgs {
    BenchArgs {
        engine,
        db: Some(db.to_path_buf()),
        num: NUM,
        reads: READS,
        benchmarks: "fillrandom,waitforcompaction,readrandom".into(),
        write_buffer_size: 64 << 10,
        target_file_size: 32 << 10,
        json: true,
        ..BenchArgs::default()
    }
}

fn result<'a>(lines: &'a [Value], bench: &str) -> &'a Value {
    lines
        .iter()
        .find(|v| v["type"] == "result" && v["benchmark"] == bench)
        .unwrap_or_else(|| panic!("no {bench} result in {lines:?}"))
}

/// Every device field is there; the counters are numbers when their source
/// was found (else `device_note` says why) and consistent with each other.
fn check_device_fields(r: &Value) {
    for f in DEVICE_FIELDS {
        assert!(r.get(f).is_some(), "{f} missing: {r}");
    }
    if r["device_read_bytes"].is_null() {
        assert!(r["device_note"].is_string(), "{r}");
    } else {
        let bytes = r["device_read_bytes"].as_u64().unwrap();
        let per_op = r["device_read_bytes_per_op"].as_f64().unwrap();
        let ops = r["ops"].as_u64().unwrap();
        assert!((per_op * ops as f64 - bytes as f64).abs() < 1.0, "{r}");
        assert!(r["device_read_syscalls"].as_u64().is_some(), "{r}");
    }
    if r["device"].is_null() {
        assert!(r["device_read_requests"].is_null(), "{r}");
        assert!(
            r["device_note"].as_str().unwrap().contains("diskstats"),
            "{r}"
        );
    } else {
        assert!(r["device_read_requests"].as_u64().is_some(), "{r}");
        let sectors = r["device_sector_read_bytes"].as_u64().unwrap();
        assert_eq!(sectors % 512, 0, "{r}");
    }
}

#[test]
fn every_result_carries_device_reads() {
    let (_dir, db) = db_dir("plain");
    let lines = json_lines(&tiny(EngineChoice::Sievedb, &db));
    for bench in ["fillrandom", "waitforcompaction", "readrandom"] {
        check_device_fields(result(&lines, bench));
    }
    let rr = result(&lines, "readrandom");
    assert!(
        rr["page_cache"].is_null(),
        "no page-cache flag, no report: {rr}"
    );
    // sievedb's own count is there too: a load of several units is one read.
    let counted = rr["engine_device_reads"].as_u64().unwrap();
    let s = &rr["stats"];
    assert!(s["filter_unit_reads"].as_u64() <= s["filter_unit_loads"].as_u64());
    let sum = [
        "block_cache_misses",
        "filter_unit_reads",
        "table_open_reads",
    ]
    .iter()
    .map(|k| s[k].as_u64().unwrap())
    .sum::<u64>();
    assert_eq!(counted, sum);
}

/// `--drop-caches` on a buffered engine: the pages are dropped, and on a
/// block device the reads that follow fetch bytes from it.
fn dropped_reads_hit_the_device(engine: EngineChoice, name: &str) {
    let (_dir, db) = db_dir(name);
    let args = BenchArgs {
        drop_caches: true,
        mmap_reads: false,
        csv: Some(db.with_extension("csv")),
        ..tiny(engine, &db)
    };
    let lines = json_lines(&args);
    let rr = result(&lines, "readrandom");
    check_device_fields(rr);
    let pc = &rr["page_cache"];
    assert_eq!(pc["mode"], "drop", "{pc}");
    assert!(pc["cgroup"].is_null() && pc["note"].is_null(), "{pc}");
    let dropped = &pc["dropped"];
    assert!(dropped["files"].as_u64().unwrap() > 0, "{pc}");
    let file_bytes = dropped["file_bytes"].as_u64().unwrap();
    let after = dropped["resident_after_bytes"].as_u64().unwrap();
    assert!(
        after <= dropped["resident_before_bytes"].as_u64().unwrap(),
        "{pc}"
    );
    // Fills are not read benchmarks: no drop there.
    assert!(result(&lines, "fillrandom")["page_cache"].is_null());
    // On a block device (not tmpfs, whose pages are the files and stay),
    // most of the database left the cache, so the lookups read from it.
    let on_device = !rr["device"].is_null() && after < file_bytes / 2;
    if on_device && !rr["device_read_bytes"].is_null() {
        assert!(rr["device_read_bytes"].as_u64().unwrap() > 0, "{rr}");
    }
    let table = Table::read_csv(&db.with_extension("csv")).unwrap();
    assert_eq!(table.rows.len(), 3);
    for col in DEVICE_FIELDS
        .iter()
        .chain(&["engine", "page_cache_mode", "cgroup_version"])
    {
        assert!(table.col(col).is_some(), "no CSV column {col}");
    }
    let mode = table.col("page_cache_mode").unwrap();
    assert_eq!(table.rows[2][mode], "drop");
    assert_eq!(table.rows[0][mode], "");
}

#[test]
fn drop_caches_on_sievedb_buffered_reads() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    dropped_reads_hit_the_device(EngineChoice::Sievedb, "drop-sievedb");
}

#[test]
fn drop_caches_on_leveldb_when_built_in() {
    if !EngineKind::Leveldb.available() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    dropped_reads_hit_the_device(EngineChoice::Leveldb, "drop-leveldb");
}

#[test]
fn page_cache_limit_bounds_or_says_why_not() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let home = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let (_dir, db) = db_dir("bounded");
    let limit: u64 = 256 << 20;
    let args = BenchArgs {
        page_cache_limit: Some(limit),
        benchmarks: "fillrandom,readrandom,readmissing".into(),
        ..tiny(EngineChoice::Sievedb, &db)
    };
    let lines = json_lines(&args);
    for bench in ["readrandom", "readmissing"] {
        let r = result(&lines, bench);
        check_device_fields(r);
        let pc = &r["page_cache"];
        assert_eq!(
            (pc["mode"].as_str(), pc["limit_bytes"].as_u64()),
            (Some("bounded"), Some(limit))
        );
        match pc["cgroup"].as_object() {
            Some(g) => {
                // Root with a memory controller: a group of our own, gone afterwards.
                assert!(g["limit_bytes"].as_u64().unwrap() >= limit, "{pc}");
                assert!(
                    ["v1", "v2"].contains(&g["version"].as_str().unwrap()),
                    "{pc}"
                );
                assert!(g["note"].is_null(), "{pc}");
                assert!(!Path::new(g["path"].as_str().unwrap()).exists(), "{pc}");
            }
            None => {
                let note = pc["note"]
                    .as_str()
                    .unwrap_or_else(|| panic!("no note: {pc}"));
                assert!(
                    note.contains("not bounded") && note.contains("cgroup"),
                    "{note}"
                );
            }
        }
    }
    assert_eq!(
        std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default(),
        home,
        "the process is back in its own cgroup"
    );
}
