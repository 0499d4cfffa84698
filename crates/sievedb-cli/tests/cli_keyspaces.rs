//! End-to-end tests of the `sievedb` binary's keyspaces: `--keyspace` on
//! get, put, delete, scan and stats, the `keyspaces`, `create-keyspace` and
//! `drop-keyspace` commands, and what they do (not) to the directory.

mod common;

use common::*;

/// `sievedb keyspaces --db DIR` as a list of names.
fn keyspace_names(db: &str) -> Vec<String> {
    ok(&sievedb(&["keyspaces", "--db", db]))
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn keyspaces_keep_their_keys_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    ok(&sievedb(&["put", "--db", &db, "k", "in-default"]));
    assert_eq!(ok(&sievedb(&["create-keyspace", "--db", &db, "users"])), "");
    assert_eq!(
        ok(&sievedb(&["create-keyspace", "--db", &db, "orders"])),
        ""
    );
    assert_eq!(keyspace_names(&db), ["default", "orders", "users"]);
    let json = ok(&sievedb(&["keyspaces", "--db", &db, "--json"]));
    assert_eq!(json, "[\"default\",\"orders\",\"users\"]\n");

    for (ks, k, v) in [
        ("users", "k", "in-users"),
        ("users", "u", "1"),
        ("orders", "k", "in-orders"),
        ("orders", "o", "2"),
    ] {
        assert_eq!(
            ok(&sievedb(&["put", "--db", &db, "--keyspace", ks, k, v])),
            ""
        );
    }
    let get = |ks: Option<&str>, k: &str| {
        let mut args = vec!["get", "--db", &db, k];
        if let Some(ks) = ks {
            args.extend(["--keyspace", ks]);
        }
        sievedb(&args)
    };
    assert_eq!(ok(&get(None, "k")), "in-default\n");
    assert_eq!(ok(&get(Some("default"), "k")), "in-default\n");
    assert_eq!(ok(&get(Some("users"), "k")), "in-users\n");
    assert_eq!(ok(&get(Some("orders"), "k")), "in-orders\n");
    // A key of one keyspace is missing from the others.
    assert_eq!(get(Some("orders"), "u").status.code(), Some(1));
    assert_eq!(get(None, "o").status.code(), Some(1));

    let scan = |ks: &str| ok(&sievedb(&["scan", "--db", &db, "--keyspace", ks]));
    assert_eq!(ok(&sievedb(&["scan", "--db", &db])), "k in-default\n");
    assert_eq!(scan("default"), "k in-default\n");
    assert_eq!(scan("users"), "k in-users\nu 1\n");
    assert_eq!(scan("orders"), "k in-orders\no 2\n");
    assert_eq!(
        ok(&sievedb(&[
            "scan",
            "--db",
            &db,
            "--keyspace",
            "users",
            "--from",
            "l",
            "--limit",
            "5"
        ])),
        "u 1\n"
    );

    // A delete in one keyspace leaves the same key in the others.
    ok(&sievedb(&[
        "delete",
        "--db",
        &db,
        "--keyspace",
        "users",
        "k",
    ]));
    assert_eq!(get(Some("users"), "k").status.code(), Some(1));
    assert_eq!(ok(&get(Some("orders"), "k")), "in-orders\n");
    assert_eq!(ok(&get(None, "k")), "in-default\n");
    ok(&sievedb(&["delete", "--db", &db, "k"]));
    assert_eq!(scan("users"), "u 1\n");
    assert_eq!(scan("orders"), "k in-orders\no 2\n");
    assert_eq!(ok(&sievedb(&["scan", "--db", &db])), "");
}

#[test]
fn a_missing_keyspace_is_an_error_and_is_not_created() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    ok(&sievedb(&["put", "--db", &db, "k", "v"]));
    ok(&sievedb(&["create-keyspace", "--db", &db, "users"]));
    let before = dir_state(&dir);
    for args in [
        vec!["get", "--db", &db, "--keyspace", "nope", "k"],
        vec!["scan", "--db", &db, "--keyspace", "nope"],
        vec!["stats", "--db", &db, "--keyspace", "nope"],
        vec!["stats", "--db", &db, "--keyspace", "nope", "--json"],
    ] {
        let o = sievedb(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stdout(&o), "", "{args:?}");
        let err = stderr(&o);
        assert!(
            err.starts_with("error: ") && err.contains("no keyspace named \"nope\""),
            "{args:?}: {err}"
        );
        // The message lists the keyspaces there are, and names the database.
        assert!(err.contains("default, users") && err.contains(&db), "{err}");
        assert_eq!(dir_state(&dir), before, "{args:?} changed the directory");
    }
    // Writes do not create a keyspace either (as ldb's --column_family).
    for args in [
        vec!["put", "--db", &db, "--keyspace", "nope", "k", "v"],
        vec!["delete", "--db", &db, "--keyspace", "nope", "k"],
        vec!["drop-keyspace", "--db", &db, "nope"],
    ] {
        let o = sievedb(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&o).contains("no keyspace named \"nope\""),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains("create-keyspace"), "{}", stderr(&o));
    }
    assert_eq!(keyspace_names(&db), ["default", "users"]);
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "k"])), "v\n");

    // put --keyspace does not create a database either.
    let fresh = tmp.path().join("fresh");
    let o = sievedb(&[
        "put",
        "--db",
        &db_arg(&fresh),
        "--keyspace",
        "users",
        "k",
        "v",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    assert!(!fresh.exists());
    // ... but put --keyspace default does, as put does.
    ok(&sievedb(&[
        "put",
        "--db",
        &db_arg(&fresh),
        "--keyspace",
        "default",
        "k",
        "v",
    ]));
    assert_eq!(ok(&sievedb(&["get", "--db", &db_arg(&fresh), "k"])), "v\n");
}

#[test]
fn create_and_drop_keyspace() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    // create-keyspace creates a missing database, as put does.
    ok(&sievedb(&["create-keyspace", "--db", &db, "users"]));
    assert_eq!(keyspace_names(&db), ["default", "users"]);
    let o = sievedb(&["create-keyspace", "--db", &db, "users"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    let o = sievedb(&["create-keyspace", "--db", &db, ""]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("1 to 255 bytes"), "{}", stderr(&o));

    ok(&sievedb(&[
        "put",
        "--db",
        &db,
        "--keyspace",
        "users",
        "u",
        "1",
    ]));
    ok(&sievedb(&["put", "--db", &db, "u", "in-default"]));
    assert_eq!(ok(&sievedb(&["drop-keyspace", "--db", &db, "users"])), "");
    assert_eq!(keyspace_names(&db), ["default"]);
    let o = sievedb(&["get", "--db", &db, "--keyspace", "users", "u"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no keyspace named"), "{}", stderr(&o));
    assert_eq!(ok(&sievedb(&["get", "--db", &db, "u"])), "in-default\n");
    // A keyspace created again under the name starts empty.
    ok(&sievedb(&["create-keyspace", "--db", &db, "users"]));
    assert_eq!(
        ok(&sievedb(&["scan", "--db", &db, "--keyspace", "users"])),
        ""
    );

    let o = sievedb(&["drop-keyspace", "--db", &db, "default"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("default keyspace cannot be dropped"),
        "{}",
        stderr(&o)
    );
    assert_eq!(keyspace_names(&db), ["default", "users"]);
    // drop-keyspace needs an existing database.
    let missing = tmp.path().join("missing");
    let o = sievedb(&["drop-keyspace", "--db", &db_arg(&missing), "users"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!missing.exists());
    assert_eq!(
        sievedb(&["drop-keyspace", "--db", &db]).status.code(),
        Some(2)
    );
}

#[test]
fn stats_per_keyspace_and_the_keyspace_table() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    // Two keys flushed into an SST of `users`; one key in the WAL of `default`.
    let answers = shell(
        &dir,
        &[],
        "create-keyspace users\nuse users\nput a 1\nput b 2\nflush\nuse default\nput c 3\n",
    );
    assert_eq!(answers, ["OK"; 7]);

    let level_sum = |v: &serde_json::Value, field: &str| -> u64 {
        v["levels"]
            .as_array()
            .expect("levels")
            .iter()
            .map(|l| l[field].as_u64().unwrap())
            .sum()
    };
    let json = |args: &[&str]| -> serde_json::Value {
        let out = ok(&sievedb(args));
        assert_eq!(out.lines().count(), 1, "{out}");
        serde_json::from_str(&out).expect("one JSON line")
    };
    let users = json(&["stats", "--db", &db, "--keyspace", "users", "--json"]);
    assert_eq!(users["keyspace"], "users");
    assert!(level_sum(&users, "files") >= 1, "{users}");
    assert_eq!(level_sum(&users, "entries"), 2, "{users}");
    let default = json(&["stats", "--db", &db, "--keyspace", "default", "--json"]);
    assert_eq!(default["keyspace"], "default");
    assert_eq!(level_sum(&default, "files"), 0, "{default}");
    assert!(default["memtable_bytes"].as_u64().unwrap() > 0, "{default}");
    assert_eq!(users["memtable_bytes"].as_u64(), Some(0), "{users}");

    // Without --keyspace: the totals, and a row per keyspace.
    let all = json(&["stats", "--db", &db, "--json"]);
    assert!(all.get("keyspace").is_none(), "{all}");
    assert_eq!(level_sum(&all, "files"), level_sum(&users, "files"));
    let rows = all["keyspaces"].as_array().expect("keyspaces array");
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["default", "users"]);
    assert_eq!(rows[0]["files"].as_u64(), Some(0));
    assert_eq!(rows[1]["files"].as_u64(), Some(level_sum(&users, "files")));
    assert_eq!(rows[1]["entries"].as_u64(), Some(2));
    assert_eq!(rows[1]["bytes"].as_u64(), Some(level_sum(&users, "bytes")));
    assert!(rows[0]["memtable_bytes"].as_u64().unwrap() > 0);

    let table = ok(&sievedb(&["stats", "--db", &db]));
    let lines = lines_of(&table);
    let header = lines
        .iter()
        .position(|l| l.first().map(String::as_str) == Some("keyspace"))
        .unwrap_or_else(|| panic!("no keyspace table in {table}"));
    assert_eq!(
        lines[header],
        ["keyspace", "files", "bytes", "entries", "memtable_bytes"]
    );
    assert_eq!(lines[header + 1][..4], ["default", "0", "0", "0"]);
    let users_files = level_sum(&users, "files").to_string();
    assert_eq!(lines[header + 2][..2], ["users".to_string(), users_files]);
    assert_eq!(lines[header + 2][3], "2");
    assert!(table.contains("per process"), "{table}");

    let text = ok(&sievedb(&["stats", "--db", &db, "--keyspace", "users"]));
    assert_eq!(text.lines().next(), Some("keyspace users"), "{text}");
    assert!(
        lines_of(&text)
            .iter()
            .any(|l| l == &["level", "files", "runs", "bytes", "entries"]),
        "{text}"
    );
    // Its levels hold its SST; no table of the other keyspaces.
    let l0 = lines_of(&text)
        .into_iter()
        .find(|l| l.first().map(String::as_str) == Some("L0"))
        .unwrap_or_else(|| panic!("no L0 row in {text}"));
    assert_eq!(l0[1], level_sum(&users, "files").to_string(), "{text}");
    assert!(!text.contains("default"), "{text}");
}

/// The whitespace-separated words of each line of `text`.
fn lines_of(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn keyspace_commands_read_only_and_beside_a_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    let answers = shell(
        &dir,
        &[],
        "create-keyspace users\nuse users\nput a 1\nflush\nput b 2\n",
    );
    assert_eq!(answers, ["OK"; 5]);
    let before = dir_state(&dir);
    assert_eq!(
        ok(&sievedb(&["get", "--db", &db, "--keyspace", "users", "b"])),
        "2\n"
    );
    assert_eq!(
        ok(&sievedb(&["scan", "--db", &db, "--keyspace", "users"])),
        "a 1\nb 2\n"
    );
    ok(&sievedb(&["stats", "--db", &db, "--keyspace", "users"]));
    ok(&sievedb(&["stats", "--db", &db, "--json"]));
    assert_eq!(keyspace_names(&db), ["default", "users"]);
    assert_eq!(
        dir_state(&dir),
        before,
        "a reading command changed the directory"
    );

    // Beside a process that has the database open and makes a keyspace.
    let writer = sievedb::Db::open(&dir, sievedb::Options::default()).expect("open");
    let logs = writer.keyspace("logs").expect("create logs");
    logs.put(b"l", b"x").expect("put");
    assert_eq!(keyspace_names(&db), ["default", "logs", "users"]);
    assert_eq!(
        ok(&sievedb(&["get", "--db", &db, "--keyspace", "logs", "l"])),
        "x\n"
    );
    // Writing needs the lock the writer holds.
    let o = sievedb(&["put", "--db", &db, "--keyspace", "logs", "l", "y"]);
    assert_eq!(o.status.code(), Some(1));
    drop(logs);
    writer.close().expect("close");
    assert_eq!(
        ok(&sievedb(&["get", "--db", &db, "--keyspace", "logs", "l"])),
        "x\n"
    );
}

#[test]
fn a_ttl_keyspace_shows_its_stats_but_is_not_read_without_its_ttl() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = db_arg(&dir);
    {
        let d = sievedb::Db::open(&dir, sievedb::Options::default()).expect("open");
        let opts = sievedb::KeyspaceOptions::default().ttl(std::time::Duration::from_secs(3600));
        let sessions = d.keyspace_with("sessions", opts).expect("create");
        sessions.put(b"t", b"alice").expect("put");
        d.flush().expect("flush");
        drop(sessions);
        d.close().expect("close");
    }
    let v: serde_json::Value =
        serde_json::from_str(&ok(&sievedb(&["stats", "--db", &db, "--json"]))).unwrap();
    let rows = v["keyspaces"].as_array().expect("keyspaces");
    assert_eq!(rows[1]["name"], "sessions", "{v}");
    assert_eq!(rows[1]["entries"].as_u64(), Some(1), "{v}");
    let v: serde_json::Value = serde_json::from_str(&ok(&sievedb(&[
        "stats",
        "--db",
        &db,
        "--keyspace",
        "sessions",
        "--json",
    ])))
    .unwrap();
    assert_eq!(v["keyspace"], "sessions");
    // Reading its values needs its TTL, which the command line cannot give.
    let o = sievedb(&["get", "--db", &db, "--keyspace", "sessions", "t"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("TTL"), "{}", stderr(&o));
}
