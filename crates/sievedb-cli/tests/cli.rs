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
