//! LevelDB as a baseline engine, through a minimal FFI over its C API
//! (`leveldb/c.h`, linked from the system library by `build.rs`).

use super::{Engine, EngineConfig, EngineResult};
use serde_json::json;
use std::ffi::{c_char, c_int, CStr, CString};
use std::ops::RangeInclusive;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr;
use std::time::{Duration, Instant};

/// The ranges LevelDB 1.23 clamps options into without a word when it opens
/// a database (`SanitizeOptions`): the size of table files it writes, its
/// memtable, its data blocks, and its table cache (64 + the 10 descriptors it
/// keeps for other files). A 256 KiB `--target-file-size` gives 1 MiB files.
const MAX_FILE_SIZE: RangeInclusive<usize> = 1 << 20..=1 << 30;
const WRITE_BUFFER_SIZE: RangeInclusive<usize> = 64 << 10..=1 << 30;
const BLOCK_SIZE: RangeInclusive<usize> = 1 << 10..=4 << 20;
const MAX_OPEN_FILES: RangeInclusive<usize> = 74..=50_000;

/// A key after every key the benchmarks write (theirs are printable):
/// LevelDB's `CompactRange` over just this key finds no table to compact and
/// only writes the memtable out (over the whole key space it would instead
/// merge every level into the last one).
const PAST_EVERY_KEY: [u8; 16] = [0xff; 16];
/// Level-0 files at which LevelDB compacts level 0 (`kL0_CompactionTrigger`).
const L0_TRIGGER: u64 = 4;
/// Bytes level 1 may hold before LevelDB compacts it; ×10 per level below.
const LEVEL1_BYTES: f64 = 10.0 * 1048576.0;
/// How long the table files must stay unchanged (names and sizes) before
/// [`Engine::wait_for_compactions`] takes LevelDB's background thread as
/// idle: a running compaction writes its output continuously.
const SETTLED_FOR: Duration = Duration::from_secs(1);
/// How often that wait looks.
const POLL: Duration = Duration::from_millis(100);
/// How long that wait waits before giving up.
const WAIT_TIMEOUT: Duration = Duration::from_secs(3600);

/// `v` as LevelDB will use it (clamped into `range`); on stderr when that
/// differs from what was asked for, with the flag's name.
fn as_leveldb_uses(flag: &str, v: usize, range: &RangeInclusive<usize>) -> usize {
    let used = v.clamp(*range.start(), *range.end());
    if used != v {
        eprintln!(
            "warning: leveldb clamps {flag} into {}..={}: {v} becomes {used}",
            range.start(),
            range.end()
        );
    }
    used
}

/// Declarations of the parts of `leveldb/c.h` this module uses.
#[allow(non_camel_case_types)]
mod ffi {
    use std::ffi::{c_char, c_int, c_void};
    use std::marker::{PhantomData, PhantomPinned};

    macro_rules! opaque {
        ($($name:ident),*) => {$(
            /// An opaque LevelDB C API handle.
            #[repr(C)]
            pub struct $name {
                _data: [u8; 0],
                _marker: PhantomData<(*mut u8, PhantomPinned)>,
            }
        )*};
    }
    opaque!(
        leveldb_t,
        leveldb_options_t,
        leveldb_readoptions_t,
        leveldb_writeoptions_t,
        leveldb_cache_t,
        leveldb_filterpolicy_t,
        leveldb_writebatch_t,
        leveldb_iterator_t
    );

    extern "C" {
        pub fn leveldb_open(
            options: *const leveldb_options_t,
            name: *const c_char,
            errptr: *mut *mut c_char,
        ) -> *mut leveldb_t;
        pub fn leveldb_close(db: *mut leveldb_t);
        pub fn leveldb_put(
            db: *mut leveldb_t,
            options: *const leveldb_writeoptions_t,
            key: *const c_char,
            keylen: usize,
            val: *const c_char,
            vallen: usize,
            errptr: *mut *mut c_char,
        );
        pub fn leveldb_write(
            db: *mut leveldb_t,
            options: *const leveldb_writeoptions_t,
            batch: *mut leveldb_writebatch_t,
            errptr: *mut *mut c_char,
        );
        pub fn leveldb_get(
            db: *mut leveldb_t,
            options: *const leveldb_readoptions_t,
            key: *const c_char,
            keylen: usize,
            vallen: *mut usize,
            errptr: *mut *mut c_char,
        ) -> *mut c_char;
        pub fn leveldb_create_iterator(
            db: *mut leveldb_t,
            options: *const leveldb_readoptions_t,
        ) -> *mut leveldb_iterator_t;
        pub fn leveldb_compact_range(
            db: *mut leveldb_t,
            start_key: *const c_char,
            start_key_len: usize,
            limit_key: *const c_char,
            limit_key_len: usize,
        );

        pub fn leveldb_iter_destroy(it: *mut leveldb_iterator_t);
        pub fn leveldb_iter_valid(it: *const leveldb_iterator_t) -> u8;
        pub fn leveldb_iter_seek_to_first(it: *mut leveldb_iterator_t);
        pub fn leveldb_iter_next(it: *mut leveldb_iterator_t);
        pub fn leveldb_iter_key(it: *const leveldb_iterator_t, klen: *mut usize) -> *const c_char;
        pub fn leveldb_iter_value(it: *const leveldb_iterator_t, vlen: *mut usize)
            -> *const c_char;
        pub fn leveldb_iter_get_error(it: *const leveldb_iterator_t, errptr: *mut *mut c_char);

        pub fn leveldb_writebatch_create() -> *mut leveldb_writebatch_t;
        pub fn leveldb_writebatch_destroy(b: *mut leveldb_writebatch_t);
        pub fn leveldb_writebatch_put(
            b: *mut leveldb_writebatch_t,
            key: *const c_char,
            klen: usize,
            val: *const c_char,
            vlen: usize,
        );

        pub fn leveldb_options_create() -> *mut leveldb_options_t;
        pub fn leveldb_options_destroy(o: *mut leveldb_options_t);
        pub fn leveldb_options_set_filter_policy(
            o: *mut leveldb_options_t,
            p: *mut leveldb_filterpolicy_t,
        );
        pub fn leveldb_options_set_create_if_missing(o: *mut leveldb_options_t, v: u8);
        pub fn leveldb_options_set_paranoid_checks(o: *mut leveldb_options_t, v: u8);
        pub fn leveldb_options_set_write_buffer_size(o: *mut leveldb_options_t, v: usize);
        pub fn leveldb_options_set_max_open_files(o: *mut leveldb_options_t, v: c_int);
        pub fn leveldb_options_set_cache(o: *mut leveldb_options_t, c: *mut leveldb_cache_t);
        pub fn leveldb_options_set_block_size(o: *mut leveldb_options_t, v: usize);
        pub fn leveldb_options_set_block_restart_interval(o: *mut leveldb_options_t, v: c_int);
        pub fn leveldb_options_set_max_file_size(o: *mut leveldb_options_t, v: usize);
        pub fn leveldb_options_set_compression(o: *mut leveldb_options_t, v: c_int);

        pub fn leveldb_filterpolicy_create_bloom(
            bits_per_key: c_int,
        ) -> *mut leveldb_filterpolicy_t;
        pub fn leveldb_filterpolicy_destroy(p: *mut leveldb_filterpolicy_t);

        pub fn leveldb_readoptions_create() -> *mut leveldb_readoptions_t;
        pub fn leveldb_readoptions_destroy(o: *mut leveldb_readoptions_t);
        pub fn leveldb_readoptions_set_verify_checksums(o: *mut leveldb_readoptions_t, v: u8);
        pub fn leveldb_readoptions_set_fill_cache(o: *mut leveldb_readoptions_t, v: u8);

        pub fn leveldb_writeoptions_create() -> *mut leveldb_writeoptions_t;
        pub fn leveldb_writeoptions_destroy(o: *mut leveldb_writeoptions_t);
        pub fn leveldb_writeoptions_set_sync(o: *mut leveldb_writeoptions_t, v: u8);

        pub fn leveldb_cache_create_lru(capacity: usize) -> *mut leveldb_cache_t;
        pub fn leveldb_cache_destroy(c: *mut leveldb_cache_t);

        pub fn leveldb_free(p: *mut c_void);
        pub fn leveldb_property_value(db: *mut leveldb_t, propname: *const c_char) -> *mut c_char;
        pub fn leveldb_major_version() -> c_int;
        pub fn leveldb_minor_version() -> c_int;
    }
}

/// Turns a LevelDB error string (malloc'd, or null for success) into a result, freeing it.
fn check(err: *mut c_char) -> EngineResult<()> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null errptr is a NUL-terminated string malloc'd by LevelDB,
    // which we own and free exactly once.
    let msg = unsafe {
        let m = CStr::from_ptr(err).to_string_lossy().into_owned();
        ffi::leveldb_free(err.cast());
        m
    };
    Err(format!("leveldb: {msg}").into())
}

/// The LevelDB version of the linked library, e.g. `1.23`.
pub fn version() -> String {
    // SAFETY: plain getters without arguments.
    unsafe {
        format!(
            "{}.{}",
            ffi::leveldb_major_version(),
            ffi::leveldb_minor_version()
        )
    }
}

/// A LevelDB database opened for benchmarking, with the same settings as sievedb.
pub struct LevelDb {
    db: *mut ffi::leveldb_t,
    options: *mut ffi::leveldb_options_t,
    cache: *mut ffi::leveldb_cache_t,
    filter: *mut ffi::leveldb_filterpolicy_t,
    read: *mut ffi::leveldb_readoptions_t,
    write: *mut ffi::leveldb_writeoptions_t,
    settings: serde_json::Value,
    /// The database directory (its table files tell a running compaction).
    dir: PathBuf,
}

// SAFETY: a LevelDB `DB` is safe for concurrent use by several threads without
// external synchronisation (documented in leveldb/db.h and doc/index.md). The
// options, cache and filter-policy objects are created before the database is
// opened and never modified afterwards; concurrent calls only read them (the
// cache is internally synchronised). Everything is destroyed in `Drop`, when no
// other reference exists.
unsafe impl Send for LevelDb {}
// SAFETY: see the `Send` implementation above.
unsafe impl Sync for LevelDb {}

impl LevelDb {
    /// The text of LevelDB property `name`.
    fn property(&self, name: &str) -> EngineResult<String> {
        let c = CString::new(name).map_err(|_| "property name with a NUL byte")?;
        // SAFETY: the database is open and `c` is NUL-terminated; a non-null
        // result is a malloc'd NUL-terminated string, copied and freed once.
        unsafe {
            let p = ffi::leveldb_property_value(self.db, c.as_ptr());
            if p.is_null() {
                return Err(format!("leveldb: no property {name}").into());
            }
            let text = CStr::from_ptr(p).to_string_lossy().into_owned();
            ffi::leveldb_free(p.cast());
            Ok(text)
        }
    }

    /// Opens (or creates) the database at `path` with the run's settings.
    pub fn open(path: &Path, cfg: &EngineConfig) -> EngineResult<Self> {
        if cfg.keyspaces > 1 {
            // The runner skips LevelDB before opening it; a direct open fails.
            return Err(format!(
                "leveldb has no keyspaces or column families for --keyspaces {}",
                cfg.keyspaces
            )
            .into());
        }
        super::warn_if_not_leveling("leveldb", cfg);
        let mut ignored = super::ignored_device_flags("leveldb", cfg, false);
        if cfg.background_threads != super::DEFAULT_BACKGROUND_THREADS {
            eprintln!(
                "warning: the leveldb baseline has one background thread; \
                 --background-threads is ignored"
            );
            ignored.push("--background-threads");
        }
        let name = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| format!("database path {} contains a NUL byte", path.display()))?;
        let bits = cfg.bits_per_key.round();
        if bits != cfg.bits_per_key {
            eprintln!(
                "warning: leveldb takes whole bits per key; using {bits} instead of {}",
                cfg.bits_per_key
            );
        }
        if cfg.size_ratio != 10 || cfg.compaction_style != ::sievedb::CompactionStyle::Leveling {
            eprintln!(
                "warning: leveldb always uses leveling with size ratio 10; \
                 --size-ratio and --compaction-style apply to sievedb only"
            );
        }
        let bits = bits.clamp(0.0, c_int::MAX as f64) as c_int;
        let max_open = as_leveldb_uses("--max-open-files", cfg.max_open_files, &MAX_OPEN_FILES);
        let max_open = c_int::try_from(max_open).unwrap_or(c_int::MAX);
        let cache_bytes = usize::try_from(cfg.block_cache_size).unwrap_or(usize::MAX);
        let file_size = usize::try_from(cfg.target_file_size).unwrap_or(usize::MAX);
        let file_size = as_leveldb_uses("--target-file-size", file_size, &MAX_FILE_SIZE);
        let write_buffer = as_leveldb_uses(
            "--write-buffer-size",
            cfg.write_buffer_size,
            &WRITE_BUFFER_SIZE,
        );
        let block_size = as_leveldb_uses("--block-size", cfg.block_size, &BLOCK_SIZE);

        // SAFETY: each object is created by LevelDB's constructor functions and
        // configured before use; `ldb` owns them from here on and its `Drop`
        // destroys them (after closing the database, which uses them).
        unsafe {
            let mut ldb = LevelDb {
                db: ptr::null_mut(),
                options: ffi::leveldb_options_create(),
                cache: ffi::leveldb_cache_create_lru(cache_bytes),
                filter: if bits > 0 {
                    ffi::leveldb_filterpolicy_create_bloom(bits)
                } else {
                    ptr::null_mut()
                },
                read: ffi::leveldb_readoptions_create(),
                write: ffi::leveldb_writeoptions_create(),
                settings: serde_json::Value::Null,
                dir: path.to_path_buf(),
            };
            let o = ldb.options;
            ffi::leveldb_options_set_create_if_missing(o, 1);
            ffi::leveldb_options_set_paranoid_checks(o, 0);
            ffi::leveldb_options_set_write_buffer_size(o, write_buffer);
            ffi::leveldb_options_set_max_open_files(o, max_open);
            ffi::leveldb_options_set_cache(o, ldb.cache);
            ffi::leveldb_options_set_block_size(o, block_size);
            ffi::leveldb_options_set_block_restart_interval(o, 16);
            ffi::leveldb_options_set_max_file_size(o, file_size);
            ffi::leveldb_options_set_compression(o, 0);
            if !ldb.filter.is_null() {
                ffi::leveldb_options_set_filter_policy(o, ldb.filter);
            }
            ffi::leveldb_readoptions_set_verify_checksums(ldb.read, 1);
            ffi::leveldb_readoptions_set_fill_cache(ldb.read, 1);
            ffi::leveldb_writeoptions_set_sync(ldb.write, u8::from(cfg.sync));

            let mut err = ptr::null_mut();
            let db = ffi::leveldb_open(o, name.as_ptr(), &mut err);
            check(err)?;
            if db.is_null() {
                return Err(format!("leveldb: could not open {}", path.display()).into());
            }
            ldb.db = db;
            ldb.settings = json!({
                "engine": "leveldb",
                "version": version(),
                "bits_per_key": bits,
                "filter": if bits > 0 { "bloom (LevelDB built-in policy)" } else { "none" },
                "block_cache_bytes": cfg.block_cache_size,
                "block_size": block_size,
                "compression": "none",
                "verify_checksums": true,
                "file_access": "page cache; table files read through mmap (LevelDB's POSIX Env default)",
                "use_direct_reads": false,
                "io_delay_ns": 0,
                "ignored_flags": ignored,
                "write_buffer_size": write_buffer,
                "sync": cfg.sync,
                "target_file_size": file_size,
                "size_ratio": 10,
                "level1_size": 10 * 1048576,
                "compaction_style": "leveling",
                "level0_triggers": [4, 8, 12],
                "max_open_files": max_open,
                "background_threads": 1,
                "paranoid_checks": false,
            });
            Ok(ldb)
        }
    }
}

/// The table files of a LevelDB directory with their sizes, sorted (a
/// file LevelDB deletes while they are listed is left out).
fn table_files(dir: &Path) -> EngineResult<Vec<(String, u64)>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if !(name.ends_with(".ldb") || name.ends_with(".sst")) {
            continue;
        }
        match e.metadata() {
            Ok(m) => v.push((name, m.len())),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(err.into()),
        }
    }
    v.sort();
    Ok(v)
}

/// Whether the `leveldb.stats` text shows a compaction LevelDB must run:
/// [`L0_TRIGGER`] files in level 0, or a level over its size by more than
/// the stats' rounding to whole megabytes (a level within it is left to
/// the table-file check).
fn compaction_due(stats: &str) -> bool {
    stats.lines().any(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(level), Some(files), Some(mb)) = (
            f.first().and_then(|x| x.parse::<i32>().ok()),
            f.get(1).and_then(|x| x.parse::<u64>().ok()),
            f.get(2).and_then(|x| x.parse::<f64>().ok()),
        ) else {
            return false;
        };
        match level {
            0 => files >= L0_TRIGGER,
            l if l >= 1 => mb * 1048576.0 > LEVEL1_BYTES * 10f64.powi(l - 1) + 0.5 * 1048576.0,
            _ => false,
        }
    })
}

impl Drop for LevelDb {
    fn drop(&mut self) {
        // SAFETY: every pointer is owned by `self`, non-null unless noted, and
        // destroyed exactly once; the database is closed before the objects it uses.
        unsafe {
            if !self.db.is_null() {
                ffi::leveldb_close(self.db);
            }
            ffi::leveldb_options_destroy(self.options);
            ffi::leveldb_readoptions_destroy(self.read);
            ffi::leveldb_writeoptions_destroy(self.write);
            ffi::leveldb_cache_destroy(self.cache);
            if !self.filter.is_null() {
                ffi::leveldb_filterpolicy_destroy(self.filter);
            }
        }
    }
}

impl LevelDb {
    /// Looks `key` up and hands the value (LevelDB's own buffer) to `f`.
    fn get_with<T>(&self, key: &[u8], f: impl FnOnce(&[u8]) -> T) -> EngineResult<Option<T>> {
        let mut len = 0usize;
        let mut err = ptr::null_mut();
        // SAFETY: `self.db` is open; a non-null result is a malloc'd buffer of
        // `len` bytes that we read once and free.
        unsafe {
            let p = ffi::leveldb_get(
                self.db,
                self.read,
                key.as_ptr().cast(),
                key.len(),
                &mut len,
                &mut err,
            );
            check(err)?;
            if p.is_null() {
                return Ok(None);
            }
            let out = f(std::slice::from_raw_parts(p.cast::<u8>(), len));
            ffi::leveldb_free(p.cast());
            Ok(Some(out))
        }
    }
}

impl Engine for LevelDb {
    fn name(&self) -> &'static str {
        "leveldb"
    }

    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        let mut err = ptr::null_mut();
        // SAFETY: `self.db` is open; the slices outlive the call.
        unsafe {
            ffi::leveldb_put(
                self.db,
                self.write,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
                &mut err,
            );
        }
        check(err)
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        self.get_with(key, <[u8]>::to_vec)
    }

    fn get_len(&self, key: &[u8]) -> EngineResult<Option<usize>> {
        self.get_with(key, <[u8]>::len)
    }

    fn write_batch(&self, entries: &[(&[u8], &[u8])]) -> EngineResult<()> {
        let mut err = ptr::null_mut();
        // SAFETY: the batch is created, filled, written and destroyed here; the
        // slices outlive the calls (LevelDB copies them into the batch).
        unsafe {
            let b = ffi::leveldb_writebatch_create();
            for (k, v) in entries {
                ffi::leveldb_writebatch_put(
                    b,
                    k.as_ptr().cast(),
                    k.len(),
                    v.as_ptr().cast(),
                    v.len(),
                );
            }
            ffi::leveldb_write(self.db, self.write, b, &mut err);
            ffi::leveldb_writebatch_destroy(b);
        }
        check(err)
    }

    fn scan_all(&self) -> EngineResult<u64> {
        let mut n = 0u64;
        let mut err = ptr::null_mut();
        // SAFETY: the iterator is created, used and destroyed here while the
        // database is open; key/value pointers are only read while valid.
        unsafe {
            let it = ffi::leveldb_create_iterator(self.db, self.read);
            ffi::leveldb_iter_seek_to_first(it);
            while ffi::leveldb_iter_valid(it) != 0 {
                let (mut klen, mut vlen) = (0usize, 0usize);
                let k = ffi::leveldb_iter_key(it, &mut klen);
                let v = ffi::leveldb_iter_value(it, &mut vlen);
                std::hint::black_box((k, klen, v, vlen));
                n += 1;
                ffi::leveldb_iter_next(it);
            }
            ffi::leveldb_iter_get_error(it, &mut err);
            ffi::leveldb_iter_destroy(it);
        }
        check(err)?;
        Ok(n)
    }

    fn flush(&self) -> EngineResult<()> {
        let k = PAST_EVERY_KEY.as_ptr().cast::<c_char>();
        // SAFETY: both bounds point to PAST_EVERY_KEY's bytes, which outlive
        // the call; the database is open.
        unsafe {
            ffi::leveldb_compact_range(self.db, k, PAST_EVERY_KEY.len(), k, PAST_EVERY_KEY.len())
        };
        Ok(())
    }

    /// Flushes, then waits until LevelDB's background compaction is done
    /// (LevelDB has no call for it): no level over its size by the
    /// `leveldb.stats` property, and the table files unchanged for
    /// [`SETTLED_FOR`]. The tree keeps the shape its writes gave it.
    fn wait_for_compactions(&self) -> EngineResult<()> {
        self.flush()?;
        let start = Instant::now();
        let mut last = (table_files(&self.dir)?, Instant::now());
        loop {
            std::thread::sleep(POLL);
            let now = table_files(&self.dir)?;
            if now != last.0 {
                last = (now, Instant::now());
            } else if last.1.elapsed() >= SETTLED_FOR
                && !compaction_due(&self.property("leveldb.stats")?)
            {
                return Ok(());
            }
            if start.elapsed() > WAIT_TIMEOUT {
                return Err(format!(
                    "leveldb: compactions still running after {} s",
                    WAIT_TIMEOUT.as_secs()
                )
                .into());
            }
        }
    }

    fn files_per_level(&self) -> Option<Vec<u64>> {
        // LevelDB's fixed number of levels (config::kNumLevels).
        (0..7)
            .map(|l| {
                self.property(&format!("leveldb.num-files-at-level{l}"))
                    .ok()?
                    .trim()
                    .parse()
                    .ok()
            })
            .collect()
    }

    fn settings(&self) -> serde_json::Value {
        self.settings.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_reported_as_leveldb_clamps_them() {
        assert_eq!(
            as_leveldb_uses("--target-file-size", 256 << 10, &MAX_FILE_SIZE),
            1 << 20
        );
        assert_eq!(
            as_leveldb_uses("--target-file-size", 2 << 20, &MAX_FILE_SIZE),
            2 << 20
        );
        assert_eq!(as_leveldb_uses("--max-open-files", 10, &MAX_OPEN_FILES), 74);
        assert_eq!(
            as_leveldb_uses("--block-size", 8 << 20, &BLOCK_SIZE),
            4 << 20
        );
    }

    #[test]
    fn flush_writes_the_memtable_out_and_merges_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let db = LevelDb::open(dir.path(), &crate::BenchArgs::default().engine_config()).unwrap();
        for round in 0..2u32 {
            for i in 0..100u32 {
                db.put(&i.to_be_bytes(), &round.to_be_bytes()).unwrap();
            }
            db.flush().unwrap();
        }
        // Two overlapping tables, one per flush (a whole-range compaction
        // would have merged them into one).
        assert_eq!(table_files(dir.path()).unwrap().len(), 2);
        assert_eq!(
            db.get(&7u32.to_be_bytes()).unwrap(),
            Some(1u32.to_be_bytes().to_vec())
        );
    }

    #[test]
    fn the_wait_returns_a_settled_tree() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = EngineConfig {
            write_buffer_size: 64 << 10,
            ..crate::BenchArgs::default().engine_config()
        };
        let db = LevelDb::open(dir.path(), &cfg).unwrap();
        let value = [7u8; 100];
        for i in 0..40_000u32 {
            db.put(&i.wrapping_mul(2_654_435_761).to_be_bytes(), &value)
                .unwrap();
        }
        db.wait_for_compactions().unwrap();
        let levels = db.files_per_level().unwrap();
        assert!(levels[0] < L0_TRIGGER, "{levels:?}");
        assert!(levels[1..].iter().sum::<u64>() > 0, "{levels:?}");
        let files = table_files(dir.path()).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(table_files(dir.path()).unwrap(), files);
        assert!(!compaction_due(&db.property("leveldb.stats").unwrap()));
    }

    #[test]
    fn stats_tell_a_due_compaction() {
        let header = "                               Compactions\n\
                      Level  Files Size(MB) Time(sec) Read(MB) Write(MB)\n\
                      --------------------------------------------------\n";
        let due = |rows: &str| compaction_due(&format!("{header}{rows}"));
        assert!(!due("  0        3        2         0        0         2\n"));
        assert!(due("  0        4        2         0        0         2\n"));
        assert!(!due("  1        5       10         0        0         2\n"));
        assert!(due("  1        6       11         0        0         2\n"));
        assert!(!due("  3     1000     1000         0        0         2\n"));
        assert!(due("  3     1100     1001         0        0         2\n"));
    }

    #[test]
    fn a_small_target_file_size_gives_files_of_a_mebibyte() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = EngineConfig {
            target_file_size: 64 << 10,
            ..crate::BenchArgs::default().engine_config()
        };
        let db = LevelDb::open(dir.path(), &cfg).unwrap();
        assert_eq!(db.settings()["target_file_size"], json!(1 << 20));
    }

    /// LevelDB has one background thread: `--background-threads` is listed
    /// as ignored, and the settings say what ran.
    #[test]
    fn background_threads_are_listed_as_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = EngineConfig {
            background_threads: 3,
            ..crate::BenchArgs::default().engine_config()
        };
        let db = LevelDb::open(dir.path(), &cfg).unwrap();
        let settings = db.settings();
        assert_eq!(settings["background_threads"], json!(1));
        assert!(settings["ignored_flags"]
            .as_array()
            .unwrap()
            .contains(&json!("--background-threads")));
    }
}
