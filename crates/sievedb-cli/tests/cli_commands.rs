//! End-to-end tests of the `sievedb` binary's one-shot commands: put, get,
//! delete, scan, compact, stats, repair, checkpoint; usage errors and exit codes,
//! error messages, and what they do (not) to the database directory.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

mod common;

use common::*;

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
fn compact_merges_the_files_down_and_keeps_every_key() {
    let tmp = tempfile::tempdir().unwrap();
    let db = db_arg(&tmp.path().join("db"));
    // Every put is its own process, whose close flushes: one file each.
    for (k, v) in [("a", "1"), ("b", "2"), ("c", "3"), ("a", "4")] {
        ok(&sievedb(&["put", "--db", &db, k, v]));
    }
    ok(&sievedb(&["delete", "--db", &db, "b"]));
    let out = ok(&sievedb(&["compact", "--db", &db]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    // The flushed files (in L0, or some already compacted by a flush's
    // process) before; after, one file in one level.
    assert!(lines[0].starts_with("before: L"), "{out}");
    // One file at the deepest level, the overwritten and deleted versions gone.
    let after = lines[1]
        .strip_prefix("after:  ")
        .unwrap_or_else(|| panic!("{out}"));
    let (files, memtables) = after.split_once("; ").unwrap();
    assert!(!files.contains(','), "one level holds the data: {out}");
    assert!(files.contains(" 1 files "), "{out}");
    assert_ne!(lines[0].strip_prefix("before: "), Some(after), "{out}");
    assert_eq!(memtables, "memtables 0 bytes");
    assert_eq!(ok(&sievedb(&["scan", "--db", &db])), "a 4\nc 3\n");

    // Again, whole, in part and over no key: the data stays where it is.
    for args in [
        &[][..],
        &["--from", "b", "--to", "z"],
        &["--from", "z", "--to", "a"],
    ] {
        let mut cmd = vec!["compact", "--db", &db];
        cmd.extend_from_slice(args);
        let again = ok(&sievedb(&cmd));
        assert_eq!(
            again,
            format!("before: {after}\nafter:  {after}\n"),
            "{args:?}"
        );
    }

    // A missing keyspace or database is an error naming it.
    let bad = sievedb(&["compact", "--db", &db, "--keyspace", "nope"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("no keyspace named \"nope\""),
        "{}",
        stderr(&bad)
    );
    let none = tmp.path().join("none");
    let missing = sievedb(&["compact", "--db", &db_arg(&none)]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(!none.exists(), "compact created a database");
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
fn a_missing_table_fails_the_open_and_repair_lists_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    let answers = shell(&dir, &[], "put a 1\nflush\nput b 2\nput c 3\nflush\n");
    assert_eq!(answers, ["OK", "OK", "OK", "OK", "OK"]);
    let mut ssts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    ssts.sort();
    assert_eq!(ssts.len(), 2, "{ssts:?}");
    std::fs::remove_file(&ssts[1]).unwrap();
    let name = ssts[1].file_name().unwrap().to_string_lossy().into_owned();
    // A copy for the --json run below.
    let copy = tmp.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, copy.join(p.file_name().unwrap())).unwrap();
        }
    }
    // The open fails, naming the file and the command that repairs it.
    let o = sievedb(&["get", "--db", &db, "a"]);
    assert_eq!(o.status.code(), Some(1));
    for needle in [name.as_str(), "is missing", "sievedb repair"] {
        assert!(stderr(&o).contains(needle), "{needle}: {}", stderr(&o));
    }
    let table = ok(&sievedb(&["repair", "--db", &db]));
    let row = table
        .lines()
        .find(|l| l.starts_with("missing table"))
        .unwrap_or_else(|| panic!("no missing table in {table}"));
    for needle in [
        name.as_str(),
        "keyspace default",
        "level 0",
        "2 entries, 0 salvaged, 2 lost",
        "keys b .. c",
    ] {
        assert!(row.contains(needle), "{needle}: {row}");
    }
    assert!(
        table
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["entries", "lost", "2"]),
        "{table}"
    );
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "a"])), "1\n");
    // --json carries the same list.
    let json = ok(&sievedb(&["repair", "--db", &db_arg(&copy), "--json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let missing = &v["tables_missing"][0];
    assert_eq!(missing["number"].as_u64(), name[..6].parse().ok(), "{json}");
    assert_eq!(missing["entries"].as_u64(), Some(2), "{json}");
    assert_eq!(missing["keyspace"].as_str(), Some("default"), "{json}");
    assert_eq!(v["entries_lost"].as_u64(), Some(2), "{json}");
    assert_eq!(
        v["damaged_tables"].as_array().map(Vec::len),
        Some(0),
        "{json}"
    );
}

#[test]
fn repair_prints_what_a_damaged_table_held_and_gave_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    let answers = shell(&dir, &[], "put a 1\nput b 2\nput c 3\nflush\n");
    assert_eq!(answers, ["OK", "OK", "OK", "OK"]);
    let sst = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "sst"))
        .unwrap();
    // A byte of the footer cut off: the blocks are all there.
    let data = std::fs::read(&sst).unwrap();
    std::fs::write(&sst, &data[..data.len() - 1]).unwrap();
    let o = sievedb(&["get", "--db", &db, "a"]);
    assert!(
        stderr(&o).contains("bytes but the MANIFEST records"),
        "{}",
        stderr(&o)
    );
    let table = ok(&sievedb(&["repair", "--db", &db]));
    let row = table
        .lines()
        .find(|l| l.starts_with("damaged table"))
        .unwrap_or_else(|| panic!("no damaged table in {table}"));
    let name = sst.file_name().unwrap().to_string_lossy().into_owned();
    for needle in [
        name.as_str(),
        "keyspace default, level 0",
        "3 entries, 3 salvaged, 0 lost",
        "keys a .. c",
        "found by a scan of the file",
    ] {
        assert!(row.contains(needle), "{needle}: {row}");
    }
    assert_eq!(ok(&sievedb(&["scan", "--db", &db])), "a 1\nb 2\nc 3\n");
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
