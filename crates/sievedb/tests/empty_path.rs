//! An empty path is refused with `InvalidArgument` before anything touches
//! the disk: `Path::new("").join("LOCK")` is `LOCK`, a file of the current
//! directory. The one test of this binary runs in a fresh current directory
//! (its own process: no other test shares the working directory it sets).

use sievedb::bulk::{BulkLoad, LevelShape};
use sievedb::{Db, Error, Options};

/// Asserts that `r` is the refusal of an empty path.
fn assert_refused<T>(r: sievedb::Result<T>, what: &str) {
    match r {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("path is empty"), "{what}: {m}"),
        Err(e) => panic!("{what}: expected InvalidArgument, got {e:?}"),
        Ok(_) => panic!("{what}: an empty path was accepted"),
    }
}

#[test]
fn empty_paths_are_refused_and_create_nothing() {
    let cwd = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::env::set_current_dir(cwd.path()).unwrap();

    assert_refused(Db::open("", Options::default()), "open");
    let create = Options::builder().create_if_missing(true).build();
    assert_refused(Db::open("", create.clone()), "open, create_if_missing");
    assert_refused(Db::open_read_only("", Options::default()), "open_read_only");
    assert_refused(Db::repair("", Options::default()), "repair");
    let shape = LevelShape::new(3, 10).unwrap();
    assert_refused(
        BulkLoad::new("", Options::default(), shape).start(),
        "bulk load start",
    );
    assert_refused(
        BulkLoad::new("", Options::default(), shape).load([("a", "1")]),
        "bulk load",
    );
    let db = Db::open(elsewhere.path(), create).unwrap();
    db.put("k", "v").unwrap();
    assert_refused(db.checkpoint(""), "checkpoint");
    let listed: Vec<_> = std::fs::read_dir(cwd.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        listed.is_empty(),
        "created in the current directory: {listed:?}"
    );

    // "." is the current directory, and works.
    drop(db);
    let here = Db::open(".", Options::default()).unwrap();
    here.put("k", "v").unwrap();
    drop(here);
    assert!(cwd.path().join("LOCK").exists());
    std::env::set_current_dir(elsewhere.path()).unwrap();
}
