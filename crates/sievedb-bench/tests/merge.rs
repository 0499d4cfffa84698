//! `mergerandom` end to end: counters merged on the engines with a merge
//! operator, a note for the others, and the fills' keys left as they were.

use serde_json::Value;
use sievedb_bench::engines::EngineKind;
mod common;

use common::{json_lines, run};
use sievedb_bench::{BenchArgs, EngineChoice};

const NUM: u64 = 2000;
const READS: u64 = 1000;

/// A tiny run of every engine in this build, with buffers small enough that
/// the merges reach table files and compactions.
fn tiny(benchmarks: &str, json: bool) -> BenchArgs {
    BenchArgs {
        engine: EngineChoice::All,
        num: NUM,
        reads: READS,
        write_buffer_size: 16 << 10,
        target_file_size: 8 << 10,
        benchmarks: benchmarks.into(),
        json,
        ..BenchArgs::default()
    }
}

fn find<'a>(lines: &'a [Value], kind: &str, engine: &str, bench: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|v| v["type"] == kind && v["engine"] == engine && v["benchmark"] == bench)
        .collect()
}

fn merges(kind: EngineKind) -> bool {
    matches!(kind, EngineKind::Sievedb | EngineKind::Rocksdb)
}

#[test]
fn mergerandom_counts_on_merging_engines_and_is_skipped_elsewhere() {
    let lines = json_lines(&tiny(
        "fillrandom,mergerandom,waitforcompaction,mergerandom,readrandom,readmissing,readseq",
        true,
    ));
    let mut distinct_counters = None;
    for kind in EngineKind::built() {
        let e = kind.name();
        let results = find(&lines, "result", e, "mergerandom");
        let skipped = find(&lines, "skipped", e, "mergerandom");
        if merges(kind) {
            assert_eq!((results.len(), skipped.len()), (2, 0), "{e}");
            for r in results {
                assert_eq!(r["ops"], NUM, "{r}");
                assert_eq!(r["threads"], 1);
                assert!(r["ops_per_sec"].as_f64().unwrap() > 0.0);
                assert!(r["micros_per_op"].as_f64().unwrap() > 0.0);
                // Every counter is checked at this size: all the merges are there.
                assert_eq!(r["counters_checked"], NUM);
                assert_eq!(r["merges_checked"], NUM);
                assert_eq!(r["settings"]["merge_operator"], "u64add");
            }
            // readseq meets the counters too, the same number on every engine.
            let seq = find(&lines, "result", e, "readseq")[0]["found"]
                .as_u64()
                .unwrap();
            assert!(seq > NUM + NUM / 2 && seq < 2 * NUM, "{e}: {seq}");
            assert_eq!(*distinct_counters.get_or_insert(seq), seq, "{e}");
        } else {
            assert_eq!((results.len(), skipped.len()), (0, 2), "{e}");
            assert_eq!(skipped[0]["reason"], format!("{e} has no merge operator"));
            assert_eq!(find(&lines, "result", e, "readseq")[0]["found"], NUM);
        }
        // The fills' keys are untouched: every lookup finds its value or misses as before.
        assert_eq!(find(&lines, "result", e, "readrandom")[0]["found"], READS);
        assert_eq!(find(&lines, "result", e, "readmissing")[0]["found"], 0);
    }
    // The medians (of a run of several engines) name only the engines that
    // ran it, once each (the benchmark is named twice: one row over both runs).
    let medians: Vec<&str> = lines
        .iter()
        .filter(|v| v["type"] == "median" && v["benchmark"] == "mergerandom")
        .map(|v| v["engine"].as_str().unwrap())
        .collect();
    let merging: Vec<&str> = EngineKind::built()
        .into_iter()
        .filter(|k| merges(*k))
        .map(EngineKind::name)
        .collect();
    if EngineKind::built().len() > 1 {
        assert_eq!(medians, merging);
    }
}

#[test]
fn text_report_notes_the_skip_and_the_check() {
    let text = run(&tiny("mergerandom", false));
    let several = EngineKind::built().len() > 1;
    for kind in EngineKind::built() {
        let line = text
            .lines()
            .find(|l| (!several || l.starts_with(kind.name())) && l.contains("mergerandom  :"))
            .unwrap_or_else(|| panic!("no {} mergerandom line in:\n{text}", kind.name()));
        if merges(kind) {
            assert!(line.contains("micros/op"), "{line}");
            assert!(line.contains("all 2000 counters checked"), "{line}");
        } else {
            assert!(
                line.ends_with(&format!("skipped ({} has no merge operator)", kind.name())),
                "{line}"
            );
        }
    }
}

/// A run on the counters an earlier run left (`--use-existing-db`) checks
/// its merges on top of them.
#[test]
fn a_run_counts_on_from_the_counters_left_by_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let args = BenchArgs {
        db: Some(dir.path().to_path_buf()),
        ..tiny("mergerandom", true)
    };
    json_lines(&args);
    let lines = json_lines(&BenchArgs {
        use_existing_db: true,
        ..args
    });
    for kind in EngineKind::built().into_iter().filter(|k| merges(*k)) {
        let r = find(&lines, "result", kind.name(), "mergerandom");
        assert_eq!(r[0]["merges_checked"], NUM, "{}", kind.name());
    }
}

/// A fill after `mergerandom` starts on an emptied database, as after any write.
#[test]
fn a_fill_after_mergerandom_empties_the_database() {
    let lines = json_lines(&tiny("mergerandom,fillrandom,readseq", true));
    for kind in EngineKind::built() {
        let seq = find(&lines, "result", kind.name(), "readseq");
        assert_eq!(seq[0]["found"], NUM, "{}", kind.name());
    }
}
