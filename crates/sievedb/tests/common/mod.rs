//! Helpers shared by the integration tests of sievedb.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use sievedb::{
    CompactionStyle, Compression, Db, FilterLayout, FilterMemory, FilterPolicy, Options,
};

/// The model the engine is compared against.
pub type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Reads a numeric scale knob from the environment.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default)
}

/// Seeds for the randomized tests: `SIEVEDB_SEED` (one seed) overrides `defaults`.
pub fn seeds(defaults: &[u64]) -> Vec<u64> {
    match std::env::var("SIEVEDB_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
    {
        Some(s) => vec![s],
        None => defaults.to_vec(),
    }
}

/// Small options so that memtables flush, SSTs pile up and compactions run
/// after a few hundred kilobytes of writes.
pub fn small_options(style: CompactionStyle) -> Options {
    Options::builder()
        .write_buffer_size(16 << 10)
        .target_file_size(8 << 10)
        .level1_size(32 << 10)
        .block_size(512)
        .level0_compaction_trigger(2)
        .size_ratio(4)
        .compaction_style(style)
        .build()
}

/// Same as [`small_options`] with explicit filter bits and compression.
pub fn small_options_with(
    style: CompactionStyle,
    bits_per_key: f64,
    compression: Compression,
) -> Options {
    let mut o = small_options(style);
    o.filter.bits_per_key = bits_per_key;
    o.compression_per_level = vec![compression];
    o
}

/// Files of `dir` whose name satisfies `pred`, sorted by name.
pub fn files_where(dir: &Path, pred: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .expect("list db dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&pred))
        .collect();
    out.sort();
    out
}

/// The SSTs of a database directory, opened (read with `pread`, checksums
/// on, no block cache); a file deleted since the listing (obsolete) is
/// skipped, any other that does not open fails the test. Callers wait for
/// compactions first, so that every file listed is finished.
pub fn open_tables(dir: &Path) -> Vec<sievedb::sst::reader::TableReader> {
    let counters = std::sync::Arc::new(sievedb::stats::Counters::new(8));
    let mut out = Vec::new();
    for path in sst_files(dir) {
        let number: u64 = path.file_stem().unwrap().to_str().unwrap().parse().unwrap();
        match sievedb::sst::reader::TableReader::open(
            &sievedb::io::StdFs,
            &path,
            number,
            false,
            true,
            None,
            counters.clone(),
        ) {
            Ok(t) => out.push(t),
            Err(e) => assert!(!path.exists(), "{path:?} does not open: {e}"),
        }
    }
    out
}

/// `(level written for, layout)` of the filter of every SST file in `dir`.
pub fn file_layouts(dir: &Path) -> Vec<(usize, sievedb::FilterLayout)> {
    open_tables(dir)
        .iter()
        .map(|t| {
            let layout = t.filter_index().expect("a filter").empty().layout();
            (t.properties().level as usize, layout)
        })
        .collect()
}

/// Writes keys `0..n` (even ones only, so odd keys are missing) with values
/// of round `round` into `db` and `model`, and flushes.
pub fn fill_even(db: &Db, model: &mut Model, n: u64, round: u64) {
    for i in (0..n).step_by(2) {
        let k = format!("key{i:08}").into_bytes();
        let v = format!("value-{i}-{round}-{}", "x".repeat(40)).into_bytes();
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.flush().unwrap();
}

/// The `*.sst` files of a database directory.
pub fn sst_files(dir: &Path) -> Vec<PathBuf> {
    files_where(dir, |n| n.ends_with(".sst"))
}

/// The `*.log` files (WALs) of a database directory.
pub fn wal_files(dir: &Path) -> Vec<PathBuf> {
    files_where(dir, |n| n.ends_with(".log"))
}

/// The `MANIFEST-*` files of a database directory.
pub fn manifest_files(dir: &Path) -> Vec<PathBuf> {
    files_where(dir, |n| n.starts_with("MANIFEST-"))
}

/// The file name of `p` as a string.
pub fn file_name(p: &Path) -> String {
    p.file_name()
        .expect("file name")
        .to_string_lossy()
        .into_owned()
}

/// XORs the byte at `offset` of `path` with `mask`; returns the old byte.
pub fn flip_byte(path: &Path, offset: usize, mask: u8) -> u8 {
    let mut data = fs::read(path).expect("read file to corrupt");
    let old = data[offset];
    data[offset] ^= mask;
    fs::write(path, &data).expect("write corrupted file");
    old
}

/// Writes `byte` at `offset` of `path`.
pub fn set_byte(path: &Path, offset: usize, byte: u8) {
    let mut data = fs::read(path).expect("read file");
    data[offset] = byte;
    fs::write(path, &data).expect("write file");
}

/// Truncates `path` to `len` bytes.
pub fn truncate(path: &Path, len: u64) {
    let f = fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open file to truncate");
    f.set_len(len).expect("truncate");
}

/// Copies every regular file of `from` into `to` (created if missing).
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create copy dir");
    for e in fs::read_dir(from).expect("list dir") {
        let e = e.expect("dir entry");
        if e.file_type().expect("file type").is_file() {
            fs::copy(e.path(), to.join(e.file_name())).expect("copy file");
        }
    }
}

/// Collects a whole iterator, panicking with `ctx` on an error.
pub fn collect_all(it: sievedb::Result<sievedb::DbIterator>, ctx: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    let it = it.unwrap_or_else(|e| panic!("{ctx}: creating iterator failed: {e}"));
    it.map(|r| r.unwrap_or_else(|e| panic!("{ctx}: iteration failed: {e}")))
        .collect()
}

/// Asserts the whole content of `db` equals `model`.
pub fn assert_db_equals(db: &Db, model: &Model, ctx: &str) {
    let got = collect_all(db.iter(), ctx);
    assert_same_items(&got, model.iter(), ctx);
    for (k, v) in model {
        let g = db
            .get(k)
            .unwrap_or_else(|e| panic!("{ctx}: get {} failed: {e}", show(k)));
        assert_eq!(g.as_deref(), Some(v.as_slice()), "{ctx}: get {}", show(k));
    }
}

/// Compares an engine result list with the expected model items, with a
/// readable message naming the first difference.
pub fn assert_same_items<'a>(
    got: &[(Vec<u8>, Vec<u8>)],
    expected: impl Iterator<Item = (&'a Vec<u8>, &'a Vec<u8>)>,
    ctx: &str,
) {
    let expected: Vec<(&Vec<u8>, &Vec<u8>)> = expected.collect();
    for (i, (g, e)) in got.iter().zip(expected.iter()).enumerate() {
        assert!(
            &g.0 == e.0 && &g.1 == e.1,
            "{ctx}: item {i} differs: got ({}, {}), expected ({}, {})",
            show(&g.0),
            show(&g.1),
            show(e.0),
            show(e.1)
        );
    }
    assert_eq!(
        got.len(),
        expected.len(),
        "{ctx}: engine returned {} items, model has {} (first extra: {:?})",
        got.len(),
        expected.len(),
        if got.len() > expected.len() {
            show(&got[expected.len()].0)
        } else {
            show(expected[got.len()].0)
        }
    );
}

/// A short printable form of a key or value.
pub fn show(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    if b.len() > 40 {
        let head: String = s.chars().take(40).collect();
        format!("{head:?}…({} bytes)", b.len())
    } else {
        format!("{s:?}")
    }
}

/// Every file under `dir` (recursively) with its contents.
pub fn dir_state(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

/// A wall clock the test moves by hand (for TTL and periodic compaction).
#[derive(Debug)]
pub struct ManualClock(std::sync::atomic::AtomicU64);

impl ManualClock {
    /// A clock reading `secs` seconds since the epoch.
    pub fn new(secs: u64) -> std::sync::Arc<ManualClock> {
        std::sync::Arc::new(ManualClock(std::sync::atomic::AtomicU64::new(secs)))
    }

    /// Moves the clock forward by `secs`.
    pub fn advance(&self, secs: u64) {
        self.0.fetch_add(secs, std::sync::atomic::Ordering::SeqCst);
    }

    /// Sets the clock to `secs` (backwards too).
    pub fn set(&self, secs: u64) {
        self.0.store(secs, std::sync::atomic::Ordering::SeqCst);
    }

    /// The time it reads.
    pub fn now(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl sievedb::Clock for ManualClock {
    fn now_secs(&self) -> u64 {
        self.now()
    }
}

/// Sets its flag when dropped while its thread panics: a thread (or a
/// scope's closure) holding one stops the threads that loop on the flag
/// when one of its checks fails, so that a scoped test fails instead of
/// waiting for them forever.
pub struct StopOnPanic<'a>(pub &'a std::sync::atomic::AtomicBool);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

/// Six filter units of 2 bits/key per file (12 bits/key on disk) under a
/// 3 bits/key filter memory budget divided by `policy`: units are loaded,
/// dropped and moved between files as the tree changes and is read.
pub fn units_under_a_budget(o: &mut Options, policy: FilterPolicy) {
    o.filter.bits_per_key = 12.0;
    o.filter.layout = FilterLayout::Units;
    o.filter.units = 6;
    o.filter_memory = FilterMemory::BitsPerKey(3.0);
    o.filter_policy = policy;
}
