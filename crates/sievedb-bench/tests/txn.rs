//! The transactional benchmarks end to end: `txnrandom`, `txnrandomhot` and
//! `txnreadrandom` on 2 threads after a small fill, in both `--txn-mode`s, on
//! every engine of the build (LevelDB skipped with a note), with their
//! commits, aborts and latencies in the JSON and CSV records.

use serde_json::Value;
use sievedb_bench::cli::txn_args::{TxnArgs, TxnMode};
use sievedb_bench::engines::EngineKind;
use sievedb_bench::report::csv::Table;
use sievedb_bench::{BenchArgs, EngineChoice};

mod common;

use common::{json_lines, results};

const NUM: u64 = 1000;
const COMMITS: u64 = 400;

fn tiny(engine: EngineChoice, mode: TxnMode, benchmarks: &str) -> BenchArgs {
    BenchArgs {
        engine,
        num: NUM,
        reads: COMMITS,
        threads: 2,
        write_buffer_size: 64 << 10,
        benchmarks: benchmarks.into(),
        json: true,
        txn: TxnArgs {
            txn_mode: mode,
            txn_hot_keys: 10,
            ..TxnArgs::default()
        },
        ..BenchArgs::default()
    }
}

/// The fields every txnrandom record carries, and what they must add up to.
fn check_txn_record(r: &Value, mode: TxnMode, contention: &str) {
    assert_eq!(r["commits"], COMMITS, "{r}");
    assert_eq!(r["ops"], COMMITS, "{r}");
    assert_eq!(r["threads"], 2);
    assert_eq!(r["txn_mode"], mode.name());
    assert_eq!(r["contention"], contention);
    assert_eq!(r["txn_keys"], 4);
    let aborts = r["aborts"].as_u64().unwrap();
    let by_kind: u64 = ["conflict", "lock_timeout", "deadlock", "too_old"]
        .iter()
        .map(|k| r[format!("aborts_{k}")].as_u64().unwrap())
        .sum();
    assert_eq!(aborts, by_kind, "{r}");
    assert_eq!(r["attempts"].as_u64().unwrap(), COMMITS + aborts);
    assert_eq!(r["abandoned"], 0, "no deadline: nothing abandoned");
    for k in [
        "commits_per_sec",
        "ops_per_sec",
        "p50_us",
        "p99_us",
        "mean_us",
    ] {
        assert!(r[k].as_f64().unwrap() > 0.0, "{k}: {r}");
    }
    assert!(r["aborts_per_sec"].as_f64().unwrap() >= 0.0);
    let (p50, p99, max) = (
        r["p50_us"].as_f64().unwrap(),
        r["p99_us"].as_f64().unwrap(),
        r["max_us"].as_f64().unwrap(),
    );
    assert!(p50 <= p99 && p99 <= max, "{r}");
    // Every increment was found again in the counters it was made to.
    assert!(r["counters_checked"].as_u64().unwrap() > 0);
    assert!(r["increments_checked"].as_u64().unwrap() > 0);
    // A commit writes 4 keys of 16 + 100 bytes.
    let mb = r["mb_per_sec"].as_f64().unwrap();
    let ops = r["ops_per_sec"].as_f64().unwrap();
    assert!(
        (mb - ops * 4.0 * 116.0 / 1e6).abs() < 1e-6 * mb.max(1.0),
        "{r}"
    );
}

#[test]
fn txnrandom_commits_on_sievedb_in_both_modes() {
    for mode in [TxnMode::Optimistic, TxnMode::Pessimistic] {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("txn.csv");
        let args = BenchArgs {
            csv: Some(csv.clone()),
            ..tiny(
                EngineChoice::Sievedb,
                mode,
                "fillrandom,txnrandom,txnrandomhot,txnreadrandom,readrandom",
            )
        };
        let lines = json_lines(&args);
        let low = results(&lines, "sievedb", "txnrandom");
        let high = results(&lines, "sievedb", "txnrandomhot");
        assert_eq!((low.len(), high.len()), (1, 1), "{lines:?}");
        check_txn_record(low[0], mode, "low");
        check_txn_record(high[0], mode, "high");
        assert_eq!(high[0]["hot_keys"], 10);
        assert!(low[0]["hot_keys"].is_null());
        assert_eq!(low[0]["settings"]["txn_mode"], mode.name());
        let ro = results(&lines, "sievedb", "txnreadrandom");
        assert_eq!(ro[0]["ops"], COMMITS);
        assert_eq!(ro[0]["found"], COMMITS, "every lookup is of a filled key");
        assert_eq!(ro[0]["lookups_per_txn"], 4);
        // The transactions left the values their size: readrandom finds all.
        assert_eq!(
            results(&lines, "sievedb", "readrandom")[0]["found"],
            COMMITS
        );

        let t = Table::read_csv(&csv).unwrap();
        let col = |name: &str| t.col(name).unwrap_or_else(|| panic!("no column {name}"));
        let rows: Vec<&Vec<String>> = t.rows.iter().collect();
        assert_eq!(rows.len(), 5);
        let txn_row = rows
            .iter()
            .find(|r| r[col("benchmark")] == "txnrandom")
            .unwrap();
        assert_eq!(txn_row[col("commits")], COMMITS.to_string());
        assert_eq!(txn_row[col("txn_mode")], mode.name());
        assert_eq!(txn_row[col("contention")], "low");
        for c in [
            "aborts",
            "commits_per_sec",
            "aborts_per_sec",
            "p50_us",
            "p99_us",
        ] {
            assert!(!txn_row[col(c)].is_empty(), "{c}");
        }
        let fill = rows
            .iter()
            .find(|r| r[col("benchmark")] == "fillrandom")
            .unwrap();
        assert!(fill[col("commits")].is_empty() && fill[col("p99_us")].is_empty());
    }
}

/// Every engine of the build runs them, side by side; LevelDB has no
/// transactions and is skipped with a note.
#[test]
fn txnrandom_on_every_built_engine() {
    for mode in [TxnMode::Optimistic, TxnMode::Pessimistic] {
        let lines = json_lines(&tiny(
            EngineChoice::All,
            mode,
            "fillrandom,txnrandom,txnrandomhot,txnreadrandom,waitforcompaction",
        ));
        for kind in EngineKind::built() {
            let e = kind.name();
            if kind == EngineKind::Leveldb {
                let skipped: Vec<&Value> = lines
                    .iter()
                    .filter(|v| v["type"] == "skipped" && v["engine"] == e)
                    .collect();
                assert_eq!(skipped.len(), 3, "{lines:?}");
                assert!(skipped[0]["reason"]
                    .as_str()
                    .unwrap()
                    .contains("no transactions"));
                continue;
            }
            check_txn_record(results(&lines, e, "txnrandom")[0], mode, "low");
            check_txn_record(results(&lines, e, "txnrandomhot")[0], mode, "high");
            assert_eq!(results(&lines, e, "txnreadrandom")[0]["found"], COMMITS);
            assert!(results(&lines, e, "txnrandom")[0]["settings"]["transactions"].is_string());
            // RocksDB's TransactionDB has no flush in the crate: skipped.
            let waited = results(&lines, e, "waitforcompaction").len();
            let no_flush = kind == EngineKind::Rocksdb && mode == TxnMode::Pessimistic;
            assert_eq!(waited, usize::from(!no_flush), "{e} {mode:?}");
        }
    }
}

/// `--duration` runs transactions for that long instead of `--reads` commits.
#[test]
fn txnrandom_for_a_duration() {
    let args = BenchArgs {
        duration: 1,
        reads: 1,
        ..tiny(
            EngineChoice::Sievedb,
            TxnMode::Optimistic,
            "fillseq,txnrandomhot",
        )
    };
    let lines = json_lines(&args);
    let r = results(&lines, "sievedb", "txnrandomhot")[0];
    assert!(r["commits"].as_u64().unwrap() > 1, "{r}");
    assert!(r["seconds"].as_f64().unwrap() >= 1.0);
    assert_eq!(r["duration_secs"], 1.0);
}

#[test]
fn txn_flags_are_checked() {
    let err = |f: fn(&mut BenchArgs)| {
        let mut a = tiny(
            EngineChoice::Sievedb,
            TxnMode::Optimistic,
            "fillseq,txnrandom",
        );
        a.json = false;
        f(&mut a);
        sievedb_bench::run_with_output(&a, &mut Vec::new())
            .unwrap_err()
            .to_string()
    };
    assert!(err(|a| a.txn.txn_keys = 0).contains("--txn-keys"));
    assert!(err(|a| a.txn.txn_hot_keys = 2).contains("--txn-hot-keys"));
    assert!(err(|a| a.value_size = 4).contains("--value-size"));
    assert!(err(|a| a.keyspaces = 2).contains("--keyspaces"));
    // Without a txn* benchmark the flags are not looked at.
    let mut a = tiny(EngineChoice::Sievedb, TxnMode::Optimistic, "fillseq");
    a.txn.txn_keys = 0;
    assert!(sievedb_bench::run_with_output(&a, &mut Vec::new()).is_ok());
}
