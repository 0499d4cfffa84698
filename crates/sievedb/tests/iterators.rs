//! `DbIterator` in both directions: `.rev()`, `next`/`next_back` meeting,
//! the cursor methods and borrowed steps, and prefixes.

use sievedb::{Db, DbIterator, Options};

fn keys(it: impl Iterator<Item = sievedb::Result<(Vec<u8>, Vec<u8>)>>) -> Vec<String> {
    it.map(|r| String::from_utf8(r.expect("item").0).expect("utf8"))
        .collect()
}

/// Keys a..=j over three layers: an SST, a newer SST that deletes some and
/// rewrites others, and the memtable with the newest versions.
fn layered(dir: &std::path::Path) -> Db {
    let db = Db::open(dir, Options::default()).expect("open");
    for k in "abcdefghij".chars() {
        db.put(k.to_string(), format!("{k}1")).unwrap();
    }
    db.flush().unwrap();
    for k in ["b", "e", "i"] {
        db.delete(k).unwrap();
    }
    db.put("c", "c2").unwrap();
    db.flush().unwrap();
    db.put("e", "e3").unwrap();
    db.delete("j").unwrap();
    db
}

/// Iterators move between threads, as before they could go backward.
#[test]
fn iterators_are_send() {
    fn send<T: Send>() {}
    send::<DbIterator>();
}

#[test]
fn reverse_sees_the_newest_versions_across_layers() {
    let tmp = tempfile::tempdir().unwrap();
    let db = layered(tmp.path());
    let fwd = keys(db.iter().unwrap());
    assert_eq!(fwd, ["a", "c", "d", "e", "f", "g", "h"]);
    let mut rev = keys(db.iter().unwrap().rev());
    rev.reverse();
    assert_eq!(rev, fwd);
    let vals: Vec<_> = db.iter().unwrap().rev().map(|r| r.unwrap().1).collect();
    assert_eq!(vals[3], b"e3"); // h g f e
    assert_eq!(
        keys(db.range("b".."h").unwrap().rev()),
        ["g", "f", "e", "d", "c"]
    );
    assert_eq!(
        keys(db.range("b"..="h").unwrap().rev()),
        ["h", "g", "f", "e", "d", "c"]
    );
    // A snapshot taken before later writes keeps its view in reverse.
    let snap = db.snapshot();
    db.put("z", "new").unwrap();
    db.delete("a").unwrap();
    assert_eq!(
        keys(snap.iter().unwrap().rev()).first().map(String::as_str),
        Some("h")
    );
    assert_eq!(
        keys(snap.iter().unwrap().rev()).last().map(String::as_str),
        Some("a")
    );
}

#[test]
fn both_ends_meet_without_repeating() {
    let tmp = tempfile::tempdir().unwrap();
    let db = layered(tmp.path());
    for pattern in 0u32..64 {
        let mut it = db.iter().unwrap();
        let (mut front, mut back) = (Vec::new(), Vec::new());
        for step in 0.. {
            let from_front = pattern >> (step % 6) & 1 == 1;
            let item = if from_front {
                it.next()
            } else {
                it.next_back()
            };
            match item {
                Some(r) => {
                    let k = String::from_utf8(r.unwrap().0).unwrap();
                    if from_front {
                        front.push(k)
                    } else {
                        back.push(k)
                    }
                }
                None => break,
            }
        }
        back.reverse();
        front.extend(back);
        assert_eq!(
            front,
            ["a", "c", "d", "e", "f", "g", "h"],
            "pattern {pattern:06b}"
        );
        assert!(it.next().is_none() && it.next_back().is_none());
    }
}

#[test]
fn cursor_methods_and_borrowed_steps() {
    let tmp = tempfile::tempdir().unwrap();
    let db = layered(tmp.path());
    let mut it: DbIterator = db.iter().unwrap();
    assert!(!it.valid());
    it.seek_for_prev("b").unwrap(); // deleted: lands on "a"
    assert_eq!(it.key(), b"a");
    it.seek_for_prev("zz").unwrap();
    assert_eq!((it.key(), it.value()), (&b"h"[..], &b"h1"[..]));
    it.seek("e").unwrap();
    assert_eq!(it.value(), b"e3");
    // After a seek the entry under the cursor comes first, in both directions.
    assert_eq!(it.prev_ref().unwrap(), Some((&b"e"[..], &b"e3"[..])));
    assert_eq!(it.prev_ref().unwrap().map(|(k, _)| k), Some(&b"d"[..]));
    assert_eq!(it.next_ref().unwrap().map(|(k, _)| k), Some(&b"e"[..]));
    assert_eq!(it.next_ref().unwrap().map(|(k, _)| k), Some(&b"f"[..]));
    assert_eq!(it.prev_ref().unwrap().map(|(k, _)| k), Some(&b"e"[..]));
    // The Iterator impl continues from the cursor.
    assert_eq!(keys(&mut it), ["f", "g", "h"]);
    it.seek_to_last().unwrap();
    assert_eq!(it.key(), b"h");
    assert_eq!(keys(&mut it), ["h"]);
    it.seek_to_first().unwrap();
    assert_eq!(it.prev_ref().unwrap().map(|(k, _)| k), Some(&b"a"[..]));
    assert_eq!(it.prev_ref().unwrap(), None);
    assert_eq!(
        it.next_ref().unwrap(),
        None,
        "ran out: nothing until a seek"
    );
    it.seek("g").unwrap();
    assert_eq!(keys(it), ["g", "h"]);
    // Bounds hold for every positioning.
    let mut it = db.range("c".."g").unwrap();
    it.seek_for_prev("z").unwrap();
    assert_eq!(it.key(), b"f");
    it.seek("a").unwrap();
    assert_eq!(it.key(), b"c");
    it.seek_for_prev("b").unwrap();
    assert!(!it.valid());
    // After a seek, the items left are those from the cursor to the end of
    // the range, from either end.
    it.seek("d").unwrap();
    assert_eq!(keys(it.by_ref().rev()), ["f", "e", "d"]);
    it.seek_to_last().unwrap();
    assert_eq!(keys(it.rev()), ["f"]);
}

#[test]
fn prefixes_with_ff_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path(), Options::default()).unwrap();
    let all: [&[u8]; 8] = [
        b"a",
        b"a\xff",
        b"a\xff\xff",
        b"a\xff\x00",
        b"b",
        b"\xff",
        b"\xff\xff",
        b"\xff\x00",
    ];
    for k in all {
        db.put(k, b"v").unwrap();
    }
    db.flush().unwrap();
    db.delete(b"a\xff\x00").unwrap();
    let prefix = |p: &[u8]| -> Vec<Vec<u8>> {
        let fwd: Vec<_> = db.prefix(p).unwrap().map(|r| r.unwrap().0).collect();
        let mut rev: Vec<_> = db.prefix(p).unwrap().rev().map(|r| r.unwrap().0).collect();
        rev.reverse();
        assert_eq!(fwd, rev, "prefix {p:?}");
        fwd
    };
    assert_eq!(prefix(b"a\xff"), [&b"a\xff"[..], b"a\xff\xff"]);
    assert_eq!(prefix(b"a"), [&b"a"[..], b"a\xff", b"a\xff\xff"]);
    assert_eq!(prefix(b"\xff"), [&b"\xff"[..], b"\xff\x00", b"\xff\xff"]);
    assert_eq!(prefix(b"\xff\xff"), [&b"\xff\xff"[..]]);
    assert_eq!(prefix(b"").len(), 7);
    assert!(prefix(b"c").is_empty());
    let snap = db.snapshot();
    db.delete(b"\xff").unwrap();
    assert_eq!(snap.prefix(b"\xff").unwrap().count(), 3);
    assert_eq!(db.prefix(b"\xff").unwrap().count(), 2);
}
