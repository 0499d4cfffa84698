//! End-to-end tests of the `sievedb` binary: one-shot commands and the shell.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn sievedb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sievedb"))
        .args(args)
        .output()
        .expect("run sievedb")
}

fn db_arg(dir: &Path) -> String {
    dir.to_str().expect("utf-8 temp path").to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "status {:?}, stderr: {}",
        o.status,
        stderr(o)
    );
    stdout(o)
}

/// Runs a shell session with `input` on stdin and returns its stdout lines.
fn shell(dir: &Path, extra: &[&str], input: &str) -> Vec<String> {
    let db = db_arg(dir);
    let mut args = vec!["shell", "--db", db.as_str()];
    args.extend_from_slice(extra);
    let mut child = Command::new(env!("CARGO_BIN_EXE_sievedb"))
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn shell");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("write commands");
    drop(stdin);
    let out = child.wait_with_output().expect("wait shell");
    assert!(out.status.success(), "shell failed: {}", stderr(&out));
    stdout(&out).lines().map(str::to_string).collect()
}

#[test]
fn put_get_delete_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);

    assert_eq!(ok(&sievedb(&["put", "--db", &db, "alpha", "one"])), "");
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "alpha"])), "one\n");

    // Binary keys and values, spaces, `%` and the empty string, escaped both ways.
    ok(&sievedb(&["put", "--db", &db, "bin%00%ff", "a b%25%22"]));
    assert_eq!(
        ok(&sievedb(&["get", "--db", &db, "bin%00%FF"])),
        "a%20b%25%22\n"
    );
    ok(&sievedb(&["put", "--db", &db, "\"\"", "\"\""]));
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "\"\""])), "\"\"\n");

    // Overwrite, then delete.
    ok(&sievedb(&["put", "--db", &db, "alpha", "two"]));
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "alpha"])), "two\n");
    assert_eq!(ok(&sievedb(&["delete", "--db", &db, "alpha"])), "");
    let missing = sievedb(&["get", "--db", &db, "alpha"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(stdout(&missing), "");
    assert!(
        stderr(&missing).contains("not found"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn get_of_missing_key_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let db = db_arg(&tmp.path().join("db"));
    ok(&sievedb(&["put", "--db", &db, "k", "v"]));
    let o = sievedb(&["get", "--db", &db, "nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert_eq!(stderr(&o).trim(), "not found");
}

#[test]
fn reading_commands_do_not_create_a_database() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("absent");
    let db = db_arg(&dir);
    for args in [
        vec!["get", "--db", &db, "k"],
        vec!["scan", "--db", &db],
        vec!["stats", "--db", &db],
        vec!["delete", "--db", &db, "k"],
    ] {
        let o = sievedb(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&o).starts_with("error: "),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains("does not exist"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(!dir.exists(), "{args:?} created the directory");
    }
    // An existing directory that holds no database is not turned into one.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = sievedb(&["stats", "--db", &db_arg(&empty)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(std::fs::read_dir(&empty).unwrap().next().is_none());
}

#[test]
fn usage_errors_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let db = db_arg(&tmp.path().join("db"));
    for args in [
        vec!["get", "--db", &db],
        vec!["put", "--db", &db, "k"],
        vec!["get", "k"],
        vec!["frobnicate"],
        vec!["get", "--db", &db, "%G1"],
        vec!["put", "--db", &db, "k", "%4"],
        vec!["scan", "--db", &db, "--limit", "many"],
    ] {
        let o = sievedb(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("error"), "{args:?}");
    }
}

#[test]
fn scan_bounds_and_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let db = db_arg(&tmp.path().join("db"));
    for (k, v) in [
        ("a", "1"),
        ("b", "2"),
        ("c", "3"),
        ("d", "4"),
        ("e%00", "x y"),
    ] {
        ok(&sievedb(&["put", "--db", &db, k, v]));
    }
    ok(&sievedb(&["delete", "--db", &db, "d"]));
    assert_eq!(
        ok(&sievedb(&["scan", "--db", &db])),
        "a 1\nb 2\nc 3\ne%00 x%20y\n"
    );
    assert_eq!(
        ok(&sievedb(&["scan", "--db", &db, "--from", "b", "--to", "d"])),
        "b 2\nc 3\n"
    );
    assert_eq!(
        ok(&sievedb(&["scan", "--db", &db, "--from", "b%00"])),
        "c 3\ne%00 x%20y\n"
    );
    assert_eq!(ok(&sievedb(&["scan", "--db", &db, "--to", "b"])), "a 1\n");
    assert_eq!(
        ok(&sievedb(&["scan", "--db", &db, "--limit", "2"])),
        "a 1\nb 2\n"
    );
    assert_eq!(
        ok(&sievedb(&["scan", "--db", &db, "--from", "c", "--to", "a"])),
        ""
    );
    assert_eq!(ok(&sievedb(&["scan", "--db", &db, "--limit", "0"])), "");
}

#[test]
fn stats_table_and_json() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    // Write through a shell so that a flush puts data into an SST file.
    let answers = shell(&dir, &[], "put a 1\nput b 2\ndel a\nflush\n");
    assert_eq!(answers, ["OK", "OK", "OK", "OK"]);

    let json = ok(&sievedb(&["stats", "--db", &db, "--json"]));
    assert_eq!(json.lines().count(), 1, "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("stats --json is JSON");
    let levels = v["levels"].as_array().expect("levels array");
    assert!(!levels.is_empty());
    for l in levels {
        for f in ["level", "files", "runs", "bytes", "entries"] {
            assert!(l[f].is_u64(), "level field {f} in {l}");
        }
    }
    let files: u64 = levels
        .iter()
        .map(|l| l["files"].as_u64().unwrap_or(0))
        .sum();
    assert!(files >= 1, "flush wrote no SST file: {json}");
    assert!(v["last_sequence"].as_u64().unwrap_or(0) >= 3, "{json}");

    let table = ok(&sievedb(&["stats", "--db", &db]));
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(header, ["level", "files", "runs", "bytes", "entries"]);
    assert!(table.lines().any(|l| l.starts_with("L0")), "{table}");
    assert!(
        table.lines().any(|l| l.starts_with("last_sequence")),
        "{table}"
    );
}

#[test]
fn repair_rebuilds_a_database_without_current() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    let answers = shell(&dir, &[], "put a 1\nput b 2\ndel a\nflush\nput c 3\n");
    assert_eq!(answers, ["OK", "OK", "OK", "OK", "OK"]);
    std::fs::remove_file(dir.join("CURRENT")).unwrap();
    assert!(!sievedb(&["get", "--db", &db, "b"]).status.success());

    let table = ok(&sievedb(&["repair", "--db", &db]));
    for row in ["tables read", "entries kept", "WAL entries", "MANIFEST"] {
        assert!(
            table.lines().any(|l| l.starts_with(row)),
            "{row} in {table}"
        );
    }
    assert!(
        table
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["tables", "read", "1"]),
        "{table}"
    );
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "b"])), "2\n");
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "c"])), "3\n");
    assert_eq!(sievedb(&["get", "--db", &db, "a"]).status.code(), Some(1));

    // A healthy database repairs too; --json prints one JSON line.
    let json = ok(&sievedb(&["repair", "--db", &db, "--json"]));
    assert_eq!(json.lines().count(), 1, "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("repair --json is JSON");
    assert_eq!(v["tables_damaged"].as_u64(), Some(0), "{json}");
    assert_eq!(v["manifests_replaced"].as_u64(), Some(1), "{json}");
    assert!(v["entries_kept"].as_u64().unwrap_or(0) >= 2, "{json}");
    assert_eq!(ok(&sievedb(&["scan", "--db", &db])), "b 2\nc 3\n");

    let missing = db_arg(&tmp.path().join("missing"));
    let o = sievedb(&["repair", "--db", &missing]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    assert!(!tmp.path().join("missing").exists());
}

#[test]
fn shell_session_covers_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let input = "\
put a 1
put  b\t\t2
get a
get zz

   \t
put %00key%FF val%20ue
get %00key%FF
get %00key%fF
put \"\" \"\"
get \"\"
put e \"\"
get e
del a
get a
del never-there
batch put x 10 put y 20 del b put z %25
get x
get y
get b
get z
scan - -
scan b z
scan %00 b
scan z a
flush
compact
get x
scan y -
stats
frobnicate a b
put onlykey
get
get a b
put %G1 v
put k %4
get a\"b
batch
batch put x
batch put x 1 get x
scan a
flush now
put OK (nil)
get OK
scan OK OL
put ERR END
scan ERR ERS
GET x
";
    let out = shell(&dir, &[], input);
    let mut it = out.iter().map(String::as_str);
    let mut expect = |want: &str| {
        let got = it.next();
        assert_eq!(got, Some(want), "full output: {out:#?}");
    };
    expect("OK"); // put a 1
    expect("OK"); // put b 2
    expect("1"); // get a
    expect("(nil)"); // get zz
    expect("OK"); // put binary
    expect("val%20ue"); // get with other hex case
    expect("val%20ue");
    expect("OK"); // put "" ""
    expect("\"\"");
    expect("OK"); // put e ""
    expect("\"\"");
    expect("OK"); // del a
    expect("(nil)");
    expect("OK"); // del never-there
    expect("OK"); // batch
    expect("10");
    expect("20");
    expect("(nil)");
    expect("%25");
    // scan - -
    expect("\"\" \"\"");
    expect("%00key%FF val%20ue");
    expect("e \"\"");
    expect("x 10");
    expect("y 20");
    expect("z %25");
    expect("END");
    // scan b z
    expect("e \"\"");
    expect("x 10");
    expect("y 20");
    expect("END");
    // scan %00 b
    expect("%00key%FF val%20ue");
    expect("END");
    // scan z a (empty range)
    expect("END");
    expect("OK"); // flush
    expect("OK"); // compact
    expect("10"); // get x after compaction
    expect("y 20");
    expect("z %25");
    expect("END");
    let stats = it.next().expect("stats line");
    let v: serde_json::Value = serde_json::from_str(stats).expect("stats JSON");
    assert!(v["levels"].is_array());
    for _ in 0..12 {
        let line = it.next().expect("an ERR line");
        assert!(
            line.starts_with("ERR "),
            "expected ERR, got {line:?}; full output {out:#?}"
        );
    }
    let mut expect = |want: &str| {
        let got = it.next();
        assert_eq!(got, Some(want), "full output: {out:#?}");
    };
    // Values that spell an answer word are escaped so answers stay unambiguous.
    expect("OK"); // put OK (nil)
    expect("%28nil)"); // get OK
    expect("%4FK %28nil)"); // scan OK OL
    expect("END");
    expect("OK"); // put ERR END
    expect("%45RR %45ND"); // scan ERR ERS
    expect("END");
    expect("10"); // command names are case-insensitive
    assert_eq!(it.next(), None, "full output: {out:#?}");

    // Everything survived the shell's exit.
    let db = db_arg(&dir);
    assert_eq!(
        ok(&sievedb(&["get", "--db", &db, "%00key%FF"])),
        "val%20ue\n"
    );
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "z"])), "%25\n");
}

#[test]
fn shell_with_sync_and_reopen() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let out = shell(
        &dir,
        &["--sync"],
        "put k v1\nbatch put k v2 put l w\nget k\n",
    );
    assert_eq!(out, ["OK", "OK", "v2"]);
    let out = shell(&dir, &[], "get k\nget l\nscan - -\n");
    assert_eq!(out, ["v2", "w", "k v2", "l w", "END"]);
}

#[test]
fn shell_reports_engine_errors_and_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    // Keys are limited to 64 KiB: the engine refuses, the shell answers ERR and continues.
    let big = "k".repeat(70 * 1024);
    let out = shell(
        &dir,
        &[],
        &format!("put {big} v\nbatch put a 1 put {big} v\nget a\nput a 2\nget a\n"),
    );
    assert_eq!(out.len(), 5, "{out:?}");
    assert!(out[0].starts_with("ERR "), "{}", out[0]);
    assert!(out[1].starts_with("ERR "), "{}", out[1]);
    assert_eq!(
        out[2], "(nil)",
        "a rejected batch must not be partially applied"
    );
    assert_eq!(&out[3..], ["OK", "2"]);
}

#[test]
fn shell_on_a_locked_database_fails_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = sievedb::Db::open(&dir, sievedb::Options::default()).expect("open");
    let o = sievedb(&["put", "--db", &db_arg(&dir), "k", "v"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
    drop(db);
    ok(&sievedb(&["put", "--db", &db_arg(&dir), "k", "v"]));
}

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
    let found: Vec<(String, u64)> = bench
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == "result")
        .map(|r| {
            (
                r["benchmark"].as_str().unwrap().to_string(),
                r["found"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
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

/// Every file under `dir` (recursively) with its contents.
fn dir_state(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn get_scan_stats_leave_the_directory_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    // Some data flushed into an SST, some only in the WAL.
    let answers = shell(&dir, &[], "put a 1\nput b 2\nflush\nput c 3\ndel a\n");
    assert_eq!(answers, ["OK", "OK", "OK", "OK", "OK"]);
    let before = dir_state(&dir);
    assert!(
        before
            .iter()
            .any(|(p, d)| p.extension().is_some_and(|e| e == "log") && !d.is_empty()),
        "the fixture must leave writes in a WAL: {:?}",
        before.keys().collect::<Vec<_>>()
    );

    assert_eq!(ok(&sievedb(&["get", "--db", &db, "c"])), "3\n");
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "b"])), "2\n");
    assert_eq!(sievedb(&["get", "--db", &db, "a"]).status.code(), Some(1));
    assert_eq!(ok(&sievedb(&["scan", "--db", &db])), "b 2\nc 3\n");
    let json = ok(&sievedb(&["stats", "--db", &db, "--json"]));
    let v: serde_json::Value = serde_json::from_str(&json).expect("stats --json is JSON");
    assert_eq!(v["last_sequence"].as_u64(), Some(4), "{json}");
    ok(&sievedb(&["stats", "--db", &db]));
    assert_eq!(
        dir_state(&dir),
        before,
        "a reading command changed the directory"
    );

    // They also work while another process has the database open for writing.
    let writer = sievedb::Db::open(&dir, sievedb::Options::default()).expect("open");
    writer.put(b"d", b"4").expect("put");
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "d"])), "4\n");
    assert_eq!(ok(&sievedb(&["scan", "--db", &db])), "b 2\nc 3\nd 4\n");
    ok(&sievedb(&["stats", "--db", &db]));
}

/// Runs `sievedb` with `input` on stdin.
fn sievedb_with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sievedb"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sievedb");
    let mut stdin = child.stdin.take().expect("stdin");
    // A command that fails before reading stdin closes it: a broken pipe here
    // is that, not a test failure (the exit status tells).
    if let Err(e) = stdin.write_all(input) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    drop(stdin);
    child.wait_with_output().expect("wait sievedb")
}

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
        let o = bench(&["--benchmarks", &benches, "--json", "--duration", "1"]);
        let out = ok(&o);
        assert!(
            out.lines()
                .any(|l| l.contains(&format!("\"benchmark\":\"{name}\""))),
            "{name}: {out}"
        );
    }
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
fn put_reads_the_value_from_a_file_or_stdin() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    let file = tmp.path().join("value.bin");
    let raw: Vec<u8> = (0..=255u8).chain(b"%22 \n".iter().copied()).collect();
    std::fs::write(&file, &raw).unwrap();
    ok(&sievedb(&[
        "put",
        "--db",
        &db,
        "f",
        "--value-file",
        &db_arg(&file),
    ]));
    let o = sievedb_with_stdin(
        &["put", "--db", &db, "s", "--value-file", "-"],
        b"from stdin\n",
    );
    ok(&o);

    let read = sievedb::Db::open_read_only(&dir, sievedb::Options::default()).unwrap();
    assert_eq!(read.get(b"f").unwrap().as_deref(), Some(&raw[..]));
    assert_eq!(
        read.get(b"s").unwrap().as_deref(),
        Some(&b"from stdin\n"[..])
    );
    read.close().unwrap();

    // Both a value and a file: a usage error, nothing written.
    let o = sievedb(&["put", "--db", &db, "b", "v", "--value-file", &db_arg(&file)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    // A missing file is named, and nothing is created.
    let missing = tmp.path().join("nope.bin");
    let fresh = tmp.path().join("fresh");
    let o = sievedb(&[
        "put",
        "--db",
        &db_arg(&fresh),
        "k",
        "--value-file",
        &db_arg(&missing),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(&db_arg(&missing)), "{}", stderr(&o));
    assert!(!fresh.exists());
}

#[test]
fn shell_help_and_quit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let out = shell(&dir, &[], "help\n");
    assert_eq!(out.last().map(String::as_str), Some("END"));
    for syntax in [
        "put KEY VALUE",
        "get KEY",
        "del KEY",
        "scan FROM TO",
        "stats",
        "quit",
    ] {
        assert!(
            out.iter().any(|l| l.starts_with(syntax)),
            "{syntax}: {out:?}"
        );
    }
    // quit and exit end the session: later commands are not run.
    for word in ["quit", "exit", "QUIT"] {
        let out = shell(&dir, &[], &format!("put a 1\n{word}\nput b 2\n"));
        assert_eq!(out, ["OK", "BYE"], "{word}");
    }
    assert_eq!(shell(&dir, &[], "get b\nget a\n"), ["(nil)", "1"]);
    let out = shell(&dir, &[], "frobnicate\n");
    assert!(
        out[0].starts_with("ERR ") && out[0].contains("help"),
        "{out:?}"
    );
}

#[test]
fn stats_says_counters_are_per_process() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    ok(&sievedb(&["put", "--db", &db, "a", "1"]));
    let text = ok(&sievedb(&["stats", "--db", &db]));
    assert!(text.contains("per process"), "{text}");
    assert!(text.contains("started at zero"), "{text}");
    // The puts of the earlier process are not counted here.
    assert!(
        text.lines().any(|l| l.split_whitespace().eq(["puts", "0"])),
        "{text}"
    );
    let help = ok(&sievedb(&["stats", "--help"]));
    assert!(help.contains("per process"), "{help}");
    // The JSON form stays one JSON line.
    let json = ok(&sievedb(&["stats", "--db", &db, "--json"]));
    assert_eq!(json.lines().count(), 1);
}

#[test]
fn errors_name_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing-db");
    let o = sievedb(&["get", "--db", &db_arg(&missing), "k"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(&db_arg(&missing)), "{}", stderr(&o));

    // A database directory that is a file.
    let file = tmp.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    for args in [
        vec!["put", "--db", file.to_str().unwrap(), "k", "v"],
        vec!["scan", "--db", file.to_str().unwrap()],
    ] {
        let o = sievedb(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(stderr(&o).contains(&db_arg(&file)), "{}", stderr(&o));
    }

    // A bulkload input that does not exist, and one with a bad line.
    let db = db_arg(&tmp.path().join("bulk"));
    let input = tmp.path().join("in.tsv");
    let o = sievedb(&["bulkload", &db, "--input", &db_arg(&input), "--levels", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(&db_arg(&input)), "{}", stderr(&o));
    std::fs::write(&input, "a\t1\nno tab here\n").unwrap();
    let o = sievedb(&["bulkload", &db, "--input", &db_arg(&input), "--levels", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(&format!("{}:2:", db_arg(&input))),
        "{}",
        stderr(&o)
    );

    // devices --csv into a directory that does not exist.
    let csv = tmp.path().join("no-such-dir").join("t1.csv");
    let o = sievedb(&[
        "devices",
        "--quick",
        "--dir",
        &db_arg(tmp.path()),
        "--csv",
        &db_arg(&csv),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(&db_arg(&csv)), "{}", stderr(&o));
}

#[test]
fn commands_that_create_refuse_a_foreign_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let foreign = tmp.path().join("photos");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("holiday.jpg"), b"jpeg").unwrap();
    let f = db_arg(&foreign);
    for args in [
        vec!["put", "--db", f.as_str(), "k", "v"],
        vec!["shell", "--db", f.as_str()],
        vec!["bulkload", f.as_str(), "--num", "100", "--levels", "1"],
    ] {
        let o = sievedb_with_stdin(&args, b"put a 1\n");
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = stderr(&o);
        assert!(
            err.contains("not a sievedb database") && err.contains(&f),
            "{err}"
        );
        assert!(err.contains("holiday.jpg"), "{err}");
    }
    let mut names: Vec<_> = std::fs::read_dir(&foreign)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["holiday.jpg"], "the directory was touched");

    // An empty directory and a missing one are fine.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    ok(&sievedb(&["put", "--db", &db_arg(&empty), "k", "v"]));
    ok(&sievedb(&[
        "put",
        "--db",
        &db_arg(&tmp.path().join("new")),
        "k",
        "v",
    ]));
    // And so is an existing database (a second put).
    ok(&sievedb(&["put", "--db", &db_arg(&empty), "k2", "v"]));
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

#[test]
fn checkpoint_copies_a_database_and_refuses_a_non_empty_target() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    ok(&sievedb(&["put", "--db", &db, "k", "v1"]));
    let out = tmp.path().join("cp");
    let cp = db_arg(&out);
    let said = ok(&sievedb(&["checkpoint", "--db", &db, "--out", &cp]));
    assert!(said.contains("checkpoint"), "{said}");
    ok(&sievedb(&["put", "--db", &db, "k", "v2"]));
    assert_eq!(ok(&sievedb(&["get", "--db", &cp, "k"])), "v1\n");
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "k"])), "v2\n");

    let o = sievedb(&["checkpoint", "--db", &db, "--out", &cp]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not empty"), "{}", stderr(&o));
    assert!(stderr(&o).contains(&cp), "{}", stderr(&o));
}
