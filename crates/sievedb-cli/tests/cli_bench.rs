//! End-to-end tests of `sievedb bench`: the benchmark list and each
//! benchmark, progress lines, flush timing, refused reads of an empty
//! database, and the hash aliases of the papers' tables.

use std::process::Output;

mod common;

use common::*;

/// A small benchmark run: `--num 500 --reads 300` plus `extra`.
fn bench(extra: &[&str]) -> Output {
    let mut args = vec!["bench", "--num", "500", "--reads", "300"];
    args.extend_from_slice(extra);
    sievedb(&args)
}

#[test]
fn bench_help_lists_every_benchmark_and_each_one_runs() {
    let help = ok(&sievedb(&["bench", "--help"]));
    let list: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Benchmarks"))
        .skip(1)
        .map_while(|l| l.strip_prefix("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(list.len() >= 12, "{help}");
    for name in [
        "fillseq",
        "readrandom",
        "flush",
        "waitforcompaction",
        "ycsbb",
    ] {
        assert!(list.contains(&name), "{name} not listed in:\n{help}");
    }
    // Every listed name is accepted and runs (after a fill, for the reads).
    for name in &list {
        let benches = format!("fillseq,{name}");
        let mut flags = vec!["--benchmarks", &benches, "--json", "--duration", "1"];
        if *name == "seekmissing" {
            // Absent prefixes exist only when keys are grouped by prefix;
            // without the flag it is refused (checked below).
            flags.extend(["--keys-per-prefix", "10"]);
        }
        let o = bench(&flags);
        let out = ok(&o);
        assert!(
            out.lines()
                .any(|l| l.contains(&format!("\"benchmark\":\"{name}\""))),
            "{name}: {out}"
        );
    }
    let o = bench(&["--benchmarks", "fillseq,seekmissing"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("needs --keys-per-prefix"),
        "{}",
        stderr(&o)
    );
    let o = bench(&["--benchmarks", "fillseq,bogus"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("unknown benchmark"), "{}", stderr(&o));
}

#[test]
fn bench_progress_lines_only_with_stats_interval() {
    // readwhilewriting for 3 s, a line every second, on stderr only.
    let o = bench(&[
        "--benchmarks",
        "fillseq,readwhilewriting",
        "--duration",
        "3",
        "--stats-interval",
        "1",
        "--json",
    ]);
    let out = ok(&o);
    let err = stderr(&o);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("sievedb readwhilewriting: "))
        .collect();
    assert!(lines.len() >= 2, "{err}");
    for l in &lines {
        assert!(
            l.contains(" ops after ")
                && l.contains("ops/s in the last")
                && l.ends_with("ops/s overall"),
            "{l}"
        );
    }
    // stdout stays pure JSON.
    for l in out.lines() {
        assert!(l.starts_with('{'), "{l}");
    }
    // Without --stats-interval (stderr is not a terminal here): no progress at all.
    let o = bench(&["--benchmarks", "fillseq,readrandom", "--json"]);
    ok(&o);
    assert_eq!(stderr(&o), "");
}

#[test]
fn bench_flush_reports_elapsed_time_only() {
    let o = bench(&["--benchmarks", "fillseq,flush,waitforcompaction"]);
    let out = ok(&o);
    for name in ["flush", "waitforcompaction"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} line in {out}"));
        assert!(line.contains("seconds elapsed"), "{line}");
        assert!(
            !line.contains("ops/sec") && !line.contains("MB/s") && !line.contains("micros/op"),
            "{line}"
        );
    }
    let fill = out.lines().find(|l| l.starts_with("fillseq ")).unwrap();
    assert!(fill.contains("ops/sec"), "{fill}");
    let o = bench(&["--benchmarks", "fillseq,waitforcompaction", "--json"]);
    let out = ok(&o);
    let wait: serde_json::Value = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .find(|v: &serde_json::Value| v["benchmark"] == "waitforcompaction")
        .expect("a waitforcompaction record");
    assert!(
        wait["pending_compaction_bytes_at_start"].as_u64().is_some(),
        "{wait}"
    );

    let o = bench(&["--benchmarks", "fillseq,flush", "--json", "--repeats", "2"]);
    let out = ok(&o);
    let flush: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["benchmark"] == "flush")
        .collect();
    assert_eq!(flush.len(), 3, "{out}"); // two results and the median
    for v in flush {
        for k in ["ops_per_sec", "micros_per_op", "mb_per_sec"] {
            assert!(v[k].is_null(), "{k}: {v}");
        }
        assert!(v["seconds"].as_f64().is_some(), "{v}");
    }
    // The median table of the text output: dashes instead of rates.
    let out = ok(&bench(&["--benchmarks", "fillseq,flush", "--repeats", "2"]));
    let median = out
        .lines()
        .rev()
        .find(|l| l.starts_with("flush "))
        .expect("median row");
    assert!(
        median.contains("seconds elapsed") && median.contains(" - "),
        "{median}"
    );
}

#[test]
fn bench_reads_of_an_empty_database_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for name in [
        "readrandom",
        "readseq",
        "readmissing",
        "ycsba",
        "readwhilewriting",
    ] {
        let o = bench(&["--benchmarks", name]);
        assert_eq!(o.status.code(), Some(1), "{name}");
        let err = stderr(&o);
        assert!(err.contains("is empty"), "{name}: {err}");
        assert!(err.contains("fillrandom first"), "{name}: {err}");
        assert!(!stdout(&o).contains("found"), "{name}");
    }
    // --use-existing-db on an empty directory: refused as well.
    let db = db_arg(tmp.path());
    std::fs::create_dir(tmp.path().join("sievedb")).unwrap();
    let o = bench(&[
        "--benchmarks",
        "readrandom",
        "--use-existing-db",
        "--db",
        &db,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--use-existing-db"), "{}", stderr(&o));
    // After a fill in the same run, or in the existing database, reads run.
    ok(&bench(&[
        "--benchmarks",
        "fillrandom,readrandom",
        "--db",
        &db,
    ]));
    let out = ok(&bench(&[
        "--benchmarks",
        "readrandom",
        "--use-existing-db",
        "--db",
        &db,
    ]));
    assert!(out.contains("(300 of 300 found)"), "{out}");
    // Steps that need no data still run on an empty database.
    ok(&bench(&["--benchmarks", "flush,filterbench"]));
}

#[test]
fn hash_aliases_of_the_papers_tables() {
    let help = ok(&sievedb(&["bench", "--help"]));
    for alias in [
        "mm64 = murmur64a",
        "xx = xxh64",
        "crc = crc32c",
        "city = city64",
    ] {
        assert!(help.contains(alias), "{alias} not in bench --help");
    }
    let tmp = tempfile::tempdir().unwrap();
    for (alias, name) in [
        ("mm64", "murmur64a"),
        ("xx", "xxh64"),
        ("crc", "crc32c"),
        ("city", "city64"),
    ] {
        let out = ok(&bench(&[
            "--benchmarks",
            "filterbench",
            "--hash",
            alias,
            "--json",
            "--db",
            &db_arg(tmp.path()),
        ]));
        assert!(out.contains(&format!("{name} hash")), "{alias}: {out}");
        let o = sievedb(&[
            "bulkload",
            &db_arg(&tmp.path().join(alias)),
            "--num",
            "200",
            "--levels",
            "1",
            "--hash",
            alias,
        ]);
        ok(&o);
    }
    let o = sievedb(&["bench", "--hash", "blake3"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("aliases: mm64 = murmur64a"), "{err}");
}
