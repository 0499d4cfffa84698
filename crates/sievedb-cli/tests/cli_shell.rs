//! End-to-end tests of `sievedb shell`: every command in one session, sync
//! and reopen, errors, a locked database, help and quit.

mod common;

use common::*;

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
fn shell_keyspaces_use_create_and_drop() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let input = "\
put k in-default
keyspaces
use users
create-keyspace users
create-keyspace users
keyspaces
use users
put k in-users
batch put u 1 put v 2 del v
get k
scan - -
compact
get u
drop-keyspace users
drop-keyspace default
use DEFAULT%2B
use default
get k
get u
scan - -
create-keyspace tmp%20ks
keyspaces
drop-keyspace tmp%20ks
use tmp%20ks
use
use a b
create-keyspace a%FF
";
    let out = shell(&dir, &[], input);
    let mut it = out.iter().map(String::as_str);
    // `ERR x`: an ERR line whose message contains x; anything else: that line.
    let mut expect = |want: &str| {
        let got = it.next().unwrap_or_default();
        match want.strip_prefix("ERR ") {
            Some(has) => assert!(
                got.starts_with("ERR ") && got.contains(has),
                "expected ERR with {has:?}, got {got:?}; full output: {out:#?}"
            ),
            None => assert_eq!(got, want, "full output: {out:#?}"),
        }
    };
    expect("OK");
    expect("default");
    expect("END");
    expect("ERR no keyspace named users"); // use before create-keyspace
    expect("OK"); // create-keyspace users
    expect("ERR already exists");
    expect("default");
    expect("users");
    expect("END");
    expect("OK"); // use users
    expect("OK"); // put
    expect("OK"); // batch
    expect("in-users");
    expect("k in-users");
    expect("u 1");
    expect("END");
    expect("OK"); // compact
    expect("1");
    expect("ERR in use"); // drop-keyspace of the keyspace in use
    expect("ERR default keyspace cannot be dropped");
    expect("ERR no keyspace named DEFAULT+");
    expect("OK"); // use default
    expect("in-default");
    expect("(nil)");
    expect("k in-default");
    expect("END");
    expect("OK"); // create-keyspace "tmp ks"
    expect("default");
    expect("tmp%20ks");
    expect("users");
    expect("END");
    expect("OK"); // drop-keyspace "tmp ks"
    expect("ERR no keyspace named tmp%20ks");
    expect("ERR use takes 1 argument");
    expect("ERR use takes 1 argument");
    expect("ERR not UTF-8");
    assert_eq!(it.next(), None, "full output: {out:#?}");

    // What the session wrote stays in its keyspaces.
    let db = db_arg(&dir);
    assert_eq!(
        ok(&sievedb(&["scan", "--db", &db, "--keyspace", "users"])),
        "k in-users\nu 1\n"
    );
    assert_eq!(ok(&sievedb(&["scan", "--db", &db])), "k in-default\n");
    assert_eq!(
        ok(&sievedb(&["keyspaces", "--db", &db])),
        "default\nusers\n"
    );
    // A new session starts in the default keyspace.
    assert_eq!(
        shell(&dir, &[], "get u\nuse users\nget u\n"),
        ["(nil)", "OK", "1"]
    );
}

#[test]
fn shell_transactions_commit_roll_back_and_span_keyspaces() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let input = "\
put a 1
create-keyspace ks
commit
rollback
get-for-update a
savepoint
begin
get a
put a 2
put b 3
get a
scan - -
use ks
put c 4
begin
batch put x 1
drop-keyspace ks
commit
use default
get a
get b
scan - -
begin pessimistic serializable
get-for-update a
del a
savepoint
put z 9
rollback-to-savepoint
get z
scan - -
rollback
get a
get z
begin optimistic snapshot
put q 1
quit
";
    let out = shell(&dir, &["--sync"], input);
    let want = [
        "OK", // put a 1
        "OK", // create-keyspace
    ];
    assert_eq!(&out[..2], want, "{out:#?}");
    for (i, cmd) in ["commit", "rollback", "get-for-update", "savepoint"]
        .iter()
        .enumerate()
    {
        assert!(
            out[2 + i].starts_with("ERR ") && out[2 + i].contains("begin"),
            "{cmd} outside a transaction: {}",
            out[2 + i]
        );
    }
    let rest: Vec<&str> = out[6..].iter().map(String::as_str).collect();
    let (begin_block, rest) = rest.split_at(11);
    assert_eq!(
        begin_block,
        [
            "OK", // begin
            "1",  // get a: the snapshot
            "OK", // put a 2
            "OK", // put b 3
            "2",  // get a: its own write
            "a 2",
            "b 3",
            "END", // scan merges its writes
            "OK",  // use ks
            "OK",  // put c 4 (into ks)
            "ERR begin inside a transaction: `commit` or `rollback` it first",
        ],
        "{out:#?}"
    );
    assert!(rest[0].starts_with("ERR batch inside"), "{rest:?}");
    assert!(rest[1].starts_with("ERR drop-keyspace inside"), "{rest:?}");
    assert_eq!(
        &rest[2..],
        [
            "OK", // commit
            "OK", // use default
            "2", "3", // committed
            "a 2", "b 3", "END", "OK",    // begin pessimistic serializable
            "2",     // get-for-update a
            "OK",    // del a
            "OK",    // savepoint
            "OK",    // put z 9
            "OK",    // rollback-to-savepoint
            "(nil)", // get z: undone
            "b 3", "END", // scan: a deleted in the transaction
            "OK",  // rollback
            "2", "(nil)", // nothing of it landed
            "OK",    // begin
            "OK",    // put q 1
            "BYE",
        ],
        "{out:#?}"
    );
    // The committed transaction reached both keyspaces; the one open at quit
    // left nothing.
    let out = shell(&dir, &[], "get q\nuse ks\nget c\n");
    assert_eq!(out, ["(nil)", "OK", "4"]);
}

#[test]
fn shell_rejects_bad_begin() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let out = shell(
        &dir,
        &[],
        "begin fast\nbegin optimistic pessimistic\nbegin\nput k v\nrollback\nget k\n",
    );
    assert!(out[0].starts_with("ERR begin: unknown mode"), "{out:?}");
    assert!(out[1].starts_with("ERR begin: "), "{out:?}");
    assert_eq!(&out[2..], ["OK", "OK", "OK", "(nil)"]);
}
