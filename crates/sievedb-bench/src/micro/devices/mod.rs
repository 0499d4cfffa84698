//! `sievedb devices`: the papers' Table 1 (storage access vs hashing) measured
//! on this machine.
//!
//! Two measurements:
//!
//! * **4 KiB random read latency** per access mode. Every read is what the
//!   engine does for a data block on a block-cache miss: the engine's own file
//!   layer ([`sievedb::io::StdFs`]) allocates a 4 KiB buffer and fills it from a
//!   random 4 KiB-aligned offset of a test file. Modes:
//!   - `memory`: a 4 KiB copy out of an in-memory buffer of the file's size
//!     (no system call; the floor every other mode adds to);
//!   - `buffered`: `pread` of a file in `--dir`, warmed into the page cache;
//!   - `direct`: the same file opened with O_DIRECT (the papers' "SSD(D)"),
//!     `unsupported` when its file system refuses O_DIRECT;
//!   - `tmpfs`: `pread` of a file in `/dev/shm` (RAM disk, the papers'
//!     emulated NVM; a database there is `sievedb bench --db /dev/shm/...`);
//!   - `emulated-…`: the buffered read plus the busy wait that sievedb's
//!     `--io-delay-ns` adds to every block read (70 ns NVM, 10 µs PCIe SSD,
//!     113 µs SATA SSD by default).
//! * **Hash cost**: nanoseconds per key digest for every [`HashFn`] and key
//!   size, computed with [`KeyDigest::compute`], which is what a filter probe
//!   pays for its digest (median of several timed runs).
//!
//! [`measure`] returns a [`DevicesReport`]; [`run`] is the CLI's entry point.
//!
//! The result types are in `report.rs` (re-exported here); the flags
//! ([`DevicesArgs`]) and [`run`] live in [`crate::cli::devices_args`] and are
//! re-exported here too.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};
use sievedb::clock::{ns_per_tick, spin_wait_ns, ticks};
use sievedb::filter::KeyDigest;
use sievedb::io::{FileSystem, RandomAccessFile, StdFs};
use sievedb::HashFn;

use crate::engines::BoxError;
use crate::workload::bulk::Progress;

mod report;

pub use crate::cli::devices_args::{parse_size, run, DevicesArgs};
pub use report::{DeviceLatency, DevicesReport, HashCost};

/// Bytes of one read (the engines' data block size, the papers' 4 KB page).
pub const PAGE: usize = 4096;
/// Default `--file-size` (256 MiB).
pub const DEFAULT_FILE_SIZE: u64 = 256 << 20;
/// Default `--reads` per access mode.
pub const DEFAULT_READS: u64 = 20_000;
/// Default time limit of one access mode, in seconds.
pub const DEFAULT_SECONDS_PER_MODE: f64 = 3.0;
/// Default emulated device latencies: NVM, PCIe SSD, SATA SSD (Table 1).
pub const DEFAULT_DELAYS_NS: [u64; 3] = [70, 10_000, 113_000];
/// Default key sizes of the hash measurement, in bytes.
pub const DEFAULT_KEY_SIZES: [usize; 8] = [8, 16, 32, 64, 128, 256, 512, 1024];
/// Default tmpfs directory (the emulated-NVM mode).
pub const DEFAULT_TMPFS_DIR: &str = "/dev/shm";

/// What [`measure`] measures and how long it may take.
#[derive(Clone, Debug, PartialEq)]
pub struct DevicesConfig {
    /// Existing directory for the test file of the `buffered`, `direct` and
    /// `emulated` modes (a temporary directory is created inside it and
    /// removed afterwards); `None`: the system's temporary directory.
    pub dir: Option<PathBuf>,
    /// tmpfs directory of the `tmpfs` mode (a temporary directory is created
    /// inside it); `None` skips the mode. Default `/dev/shm` when it exists.
    pub tmpfs_dir: Option<PathBuf>,
    /// Size of each test file (and of the `memory` buffer) in bytes, rounded
    /// down to whole 4 KiB pages; at least two pages.
    pub file_size: u64,
    /// Timed reads per access mode (fewer when the mode hits its time limit).
    pub reads: u64,
    /// Time limit of one access mode in seconds (a slow device stops early and
    /// reports the reads it did).
    pub seconds_per_mode: f64,
    /// Emulated latencies, one `emulated` mode each.
    pub delays_ns: Vec<u64>,
    /// Hash functions to time.
    pub hash_fns: Vec<HashFn>,
    /// Key sizes to hash, in bytes.
    pub key_sizes: Vec<usize>,
    /// Timed runs per hash function and key size (the median is reported).
    pub hash_runs: usize,
    /// Target duration of one hash run in nanoseconds.
    pub hash_run_ns: u64,
    /// Seed of the read offsets and key bytes.
    pub seed: u64,
    /// Show a progress bar on stderr (only when it is a terminal).
    pub progress: bool,
}

impl Default for DevicesConfig {
    /// The full run: a 256 MiB file, 20 000 reads per mode, every hash
    /// function at eight key sizes (about 5–15 s on a fast machine, bounded
    /// by `seconds_per_mode` on slow devices).
    fn default() -> Self {
        DevicesConfig {
            dir: None,
            tmpfs_dir: default_tmpfs_dir(),
            file_size: DEFAULT_FILE_SIZE,
            reads: DEFAULT_READS,
            seconds_per_mode: DEFAULT_SECONDS_PER_MODE,
            delays_ns: DEFAULT_DELAYS_NS.to_vec(),
            hash_fns: HashFn::ALL.to_vec(),
            key_sizes: DEFAULT_KEY_SIZES.to_vec(),
            hash_runs: 11,
            hash_run_ns: 2_000_000,
            seed: 301,
            progress: true,
        }
    }
}

impl DevicesConfig {
    /// A small preset for harnesses and smoke tests (a few seconds): an 8 MiB
    /// file, 2 000 reads and at most 0.3 s per mode, three short hash runs.
    pub fn quick() -> Self {
        DevicesConfig {
            file_size: 8 << 20,
            reads: 2_000,
            seconds_per_mode: 0.3,
            hash_runs: 3,
            hash_run_ns: 500_000,
            ..DevicesConfig::default()
        }
    }

    fn pages(&self) -> u64 {
        self.file_size / PAGE as u64
    }

    fn validate(&self) -> Result<(), String> {
        if self.pages() < 2 {
            return Err(format!("--file-size must be at least {} bytes", 2 * PAGE));
        }
        if self.reads == 0 {
            return Err("--reads must be at least 1".into());
        }
        if self.seconds_per_mode.is_nan() || self.seconds_per_mode <= 0.0 {
            return Err("the time limit per mode must be positive".into());
        }
        if self.hash_runs == 0 {
            return Err("hash_runs must be at least 1".into());
        }
        Ok(())
    }
}

/// `/dev/shm` when it is a directory.
fn default_tmpfs_dir() -> Option<PathBuf> {
    let p = Path::new(DEFAULT_TMPFS_DIR);
    p.is_dir().then(|| p.to_path_buf())
}

/// A temporary directory holding one test file.
struct TestFile {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl TestFile {
    /// Writes `size` bytes of pseudo-random data into a fresh temporary
    /// directory inside `parent`, fsynced (so O_DIRECT reads see it on the
    /// device, not in dirty page-cache pages).
    fn create(parent: &Path, size: u64, rng: &mut SmallRng) -> std::io::Result<TestFile> {
        let dir = tempfile::Builder::new()
            .prefix("sievedb-devices-")
            .tempdir_in(parent)?;
        let path = dir.path().join("pages.dat");
        let mut f = std::fs::File::create(&path)?;
        let mut chunk = vec![0u8; 1 << 20];
        let mut left = size;
        while left > 0 {
            rng.fill_bytes(&mut chunk);
            let n = left.min(chunk.len() as u64) as usize;
            f.write_all(&chunk[..n])?;
            left -= n as u64;
        }
        f.sync_all()?;
        Ok(TestFile { _dir: dir, path })
    }
}

/// Times `op` on each offset until all are done or `limit_s` has passed;
/// returns per-read ticks.
fn time_reads(
    offsets: &[u64],
    limit_s: f64,
    mut op: impl FnMut(u64) -> std::io::Result<()>,
) -> std::io::Result<Vec<u64>> {
    // Warm-up: the first reads pay for page faults and lazily built state.
    for &off in offsets.iter().take(16) {
        op(off)?;
    }
    #[expect(
        clippy::cast_sign_loss,
        reason = "seconds over a positive tick rate are not negative"
    )]
    let limit_ticks = (limit_s * 1e9 / ns_per_tick()) as u64;
    let start = ticks();
    let mut out = Vec::with_capacity(offsets.len());
    for &off in offsets {
        let t0 = ticks();
        op(off)?;
        let t1 = ticks();
        out.push(t1.wrapping_sub(t0));
        if t1.wrapping_sub(start) > limit_ticks {
            break;
        }
    }
    Ok(out)
}

/// Mean, p50 and p99 in nanoseconds of per-read ticks.
fn summarize(mut samples: Vec<u64>) -> (u64, f64, f64, f64) {
    let rate = ns_per_tick();
    samples.sort_unstable();
    let n = samples.len();
    if n == 0 {
        return (0, 0.0, 0.0, 0.0);
    }
    let mean = samples.iter().map(|&t| t as f64).sum::<f64>() / n as f64 * rate;
    #[expect(
        clippy::cast_sign_loss,
        reason = "a sample count times a fraction in [0, 1] is not negative"
    )]
    let pct = |p: f64| samples[((n as f64 * p).ceil() as usize).clamp(1, n) - 1] as f64 * rate;
    (n as u64, mean, pct(0.50), pct(0.99))
}

fn measured(
    mode: &str,
    stands_for: &str,
    delay_ns: u64,
    path: Option<PathBuf>,
    samples: Vec<u64>,
    note: Option<String>,
) -> DeviceLatency {
    let (reads, mean_ns, p50_ns, p99_ns) = summarize(samples);
    DeviceLatency {
        mode: mode.into(),
        stands_for: stands_for.into(),
        delay_ns,
        path,
        supported: true,
        note,
        reads,
        mean_ns,
        p50_ns,
        p99_ns,
    }
}

/// Reads a whole file once through `f` (4 KiB at a time) so that its pages
/// are in the page cache.
fn warm(f: &dyn RandomAccessFile, pages: u64) -> std::io::Result<()> {
    for p in 0..pages {
        std::hint::black_box(f.read_at(p * PAGE as u64, PAGE)?);
    }
    Ok(())
}

/// Median ticks of reading the clock twice back to back.
fn timer_overhead_ns() -> f64 {
    let mut v: Vec<u64> = (0..1001)
        .map(|_| {
            let t0 = ticks();
            let t1 = ticks();
            t1.wrapping_sub(t0)
        })
        .collect();
    v.sort_unstable();
    v[v.len() / 2] as f64 * ns_per_tick()
}

/// Whether an O_DIRECT open or read failed because the file system refuses
/// direct I/O (EINVAL, or the engine's `Unsupported` read error).
fn refuses_direct(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::InvalidInput | std::io::ErrorKind::Unsupported
    )
}

fn emulated_name(ns: u64) -> (String, String) {
    let label = if ns >= 1_000_000 && ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns >= 1_000 && ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    };
    let stands_for = match ns {
        70 => "NVM (70 ns)".to_string(),
        10_000 => "PCIe SSD (10 us)".to_string(),
        113_000 => "SSD (113 us)".to_string(),
        _ => format!("device of {label}"),
    };
    (format!("emulated-{label}"), stands_for)
}

/// Measures read latency per access mode and hash cost per function and key
/// size (see the module documentation). Errors only for failures outside a
/// mode's own device: a mode whose file system refuses it (O_DIRECT, a full
/// or missing tmpfs) is reported `supported: false` with a note instead.
pub fn measure(cfg: &DevicesConfig) -> Result<DevicesReport, BoxError> {
    cfg.validate()?;
    let pages = cfg.pages();
    let file_size = pages * PAGE as u64;
    let mut rng = SmallRng::seed_from_u64(cfg.seed);
    let offsets: Vec<u64> = (0..cfg.reads)
        .map(|_| rng.gen_range(0..pages) * PAGE as u64)
        .collect();
    let steps = 4 + cfg.delays_ns.len() as u64 + (cfg.hash_fns.len() * cfg.key_sizes.len()) as u64;
    let progress = Progress::new(
        cfg.progress && std::io::stderr().is_terminal(),
        Some(steps),
        "devices",
    );
    let mut step = progress.callback();
    let mut done = 0u64;
    let mut tick = || {
        done += 1;
        step(done);
    };
    let limit = cfg.seconds_per_mode;
    let mut reads = Vec::new();

    // memory: a 4 KiB copy out of a buffer as large as the file.
    {
        let mut buf = vec![0u8; file_size as usize];
        rng.fill_bytes(&mut buf);
        let samples = time_reads(&offsets, limit, |off| {
            let o = off as usize;
            std::hint::black_box(std::hint::black_box(&buf)[o..o + PAGE].to_vec());
            Ok(())
        })?;
        reads.push(measured(
            "memory",
            "Memory",
            0,
            None,
            samples,
            Some("4 KiB copy into a new buffer".into()),
        ));
        tick();
    }

    // buffered, direct and emulated: one file in --dir.
    let parent = cfg.dir.clone().unwrap_or_else(std::env::temp_dir);
    let file = TestFile::create(&parent, file_size, &mut rng)
        .map_err(|e| format!("cannot write the test file in {}: {e}", parent.display()))?;
    let fs = StdFs;
    let buffered = fs.open_random(&file.path, false)?;
    warm(buffered.as_ref(), pages)?;
    let samples = time_reads(&offsets, limit, |off| {
        std::hint::black_box(buffered.read_at(off, PAGE)?);
        Ok(())
    })?;
    reads.push(measured(
        "buffered",
        "SSD, page cache",
        0,
        Some(file.path.clone()),
        samples,
        Some("file warmed into the page cache".into()),
    ));
    tick();

    let direct = match fs.open_random(&file.path, true) {
        Ok(f) => {
            let r = time_reads(&offsets, limit, |off| {
                std::hint::black_box(f.read_at(off, PAGE)?);
                Ok(())
            });
            match r {
                Ok(samples) => measured(
                    "direct",
                    "SSD(D), direct I/O",
                    0,
                    Some(file.path.clone()),
                    samples,
                    None,
                ),
                Err(e) if refuses_direct(&e) => DeviceLatency::unsupported(
                    "direct",
                    "SSD(D), direct I/O",
                    Some(file.path.clone()),
                    format!("O_DIRECT read refused: {e}"),
                ),
                Err(e) => return Err(e.into()),
            }
        }
        Err(e) if refuses_direct(&e) => DeviceLatency::unsupported(
            "direct",
            "SSD(D), direct I/O",
            Some(file.path.clone()),
            format!(
                "the file system of {} refuses O_DIRECT ({e})",
                parent.display()
            ),
        ),
        Err(e) => return Err(e.into()),
    };
    reads.push(direct);
    tick();

    // tmpfs: the same reads on a RAM disk.
    let tmpfs = match &cfg.tmpfs_dir {
        None => DeviceLatency::unsupported(
            "tmpfs",
            "NVM (RAM disk)",
            None,
            "no tmpfs directory (/dev/shm missing or not asked for)".into(),
        ),
        Some(dir) => {
            let mut attempt = || -> std::io::Result<(PathBuf, Vec<u64>)> {
                let t = TestFile::create(dir, file_size, &mut rng)?;
                let f = fs.open_random(&t.path, false)?;
                warm(f.as_ref(), pages)?;
                let samples = time_reads(&offsets, limit, |off| {
                    std::hint::black_box(f.read_at(off, PAGE)?);
                    Ok(())
                })?;
                Ok((t.path.clone(), samples))
            };
            match attempt() {
                Ok((path, samples)) => {
                    measured("tmpfs", "NVM (RAM disk)", 0, Some(path), samples, None)
                }
                Err(e) => DeviceLatency::unsupported(
                    "tmpfs",
                    "NVM (RAM disk)",
                    Some(dir.clone()),
                    format!("cannot use {}: {e}", dir.display()),
                ),
            }
        }
    };
    reads.push(tmpfs);
    tick();

    // emulated: the buffered read plus the engine's --io-delay-ns busy wait.
    for &delay in &cfg.delays_ns {
        let (mode, stands_for) = emulated_name(delay);
        let samples = time_reads(&offsets, limit, |off| {
            spin_wait_ns(delay);
            std::hint::black_box(buffered.read_at(off, PAGE)?);
            Ok(())
        })?;
        reads.push(measured(
            &mode,
            &stands_for,
            delay,
            Some(file.path.clone()),
            samples,
            Some(format!(
                "buffered read + {delay} ns busy wait (--io-delay-ns)"
            )),
        ));
        tick();
    }
    drop(buffered);
    drop(file);

    let hashes = measure_hashes(cfg, &mut rng, &mut tick);
    progress.finish();
    Ok(DevicesReport {
        reads,
        hashes,
        file_size,
        block_size: PAGE,
        timer_overhead_ns: timer_overhead_ns(),
        cpu: crate::cpu_description(),
    })
}

/// Distinct keys hashed round-robin in a run (defeats nothing the hash
/// functions could cache, but keeps the input from being a constant).
const KEYS_PER_SIZE: usize = 16;

/// Nanoseconds per digest per hash function and key size.
fn measure_hashes(
    cfg: &DevicesConfig,
    rng: &mut SmallRng,
    tick: &mut dyn FnMut(),
) -> Vec<HashCost> {
    let mut out = Vec::new();
    for &f in &cfg.hash_fns {
        for &size in &cfg.key_sizes {
            let keys: Vec<Vec<u8>> = (0..KEYS_PER_SIZE)
                .map(|_| {
                    let mut k = vec![0u8; size];
                    rng.fill_bytes(&mut k);
                    k
                })
                .collect();
            let run = |n: u64| -> f64 {
                let t0 = Instant::now();
                for i in 0..n {
                    let key = &keys[i as usize % KEYS_PER_SIZE];
                    std::hint::black_box(KeyDigest::compute(
                        std::hint::black_box(f),
                        std::hint::black_box(key),
                    ));
                }
                t0.elapsed().as_nanos() as f64
            };
            // Calibrate the run length on a short run (which also warms up).
            let probe = 64u64;
            let per = (run(probe) / probe as f64).max(0.1);
            #[expect(
                clippy::cast_sign_loss,
                reason = "nanoseconds over a positive time per hash are not negative"
            )]
            let n = ((cfg.hash_run_ns as f64 / per) as u64).clamp(probe, 50_000_000);
            let mut per_hash: Vec<f64> = (0..cfg.hash_runs).map(|_| run(n) / n as f64).collect();
            per_hash.sort_by(f64::total_cmp);
            let m = per_hash.len();
            let median = if !m.is_multiple_of(2) {
                per_hash[m / 2]
            } else {
                (per_hash[m / 2 - 1] + per_hash[m / 2]) / 2.0
            };
            out.push(HashCost {
                hash: f,
                key_size: size,
                ns_per_hash: median,
                min_ns: per_hash[0],
                max_ns: per_hash[m - 1],
                hashes_per_run: n,
            });
            tick();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> DevicesConfig {
        DevicesConfig {
            file_size: 256 << 10,
            reads: 200,
            seconds_per_mode: 0.2,
            delays_ns: vec![70, 20_000],
            hash_fns: vec![HashFn::Murmur64A, HashFn::Sha256],
            key_sizes: vec![8, 1024],
            hash_runs: 3,
            hash_run_ns: 100_000,
            progress: false,
            ..DevicesConfig::default()
        }
    }

    #[test]
    fn tiny_report_has_every_mode_and_hash() {
        let r = measure(&tiny()).unwrap();
        let modes: Vec<&str> = r.reads.iter().map(|m| m.mode.as_str()).collect();
        assert_eq!(
            modes,
            [
                "memory",
                "buffered",
                "direct",
                "tmpfs",
                "emulated-70ns",
                "emulated-20us"
            ]
        );
        for m in &r.reads {
            if m.supported {
                assert!(m.reads > 0 && m.reads <= 200, "{m:?}");
                assert!(m.mean_ns > 0.0 && m.p50_ns <= m.p99_ns, "{m:?}");
            } else {
                assert!(m.note.is_some() && m.reads == 0, "{m:?}");
            }
        }
        for mode in ["memory", "buffered"] {
            assert!(r.read(mode).is_some(), "{mode}");
        }
        // The busy wait is a lower bound of every emulated read.
        let e = r.read("emulated-20us").unwrap();
        assert!(
            e.p50_ns >= 20_000.0 * 0.99 && e.mean_ns >= 20_000.0 * 0.99,
            "{e:?}"
        );
        assert_eq!(e.delay_ns, 20_000);
        assert_eq!(r.hashes.len(), 4);
        for h in &r.hashes {
            assert!(h.ns_per_hash > 0.0 && h.min_ns <= h.ns_per_hash, "{h:?}");
            assert!(h.ns_per_hash <= h.max_ns, "{h:?}");
        }
        assert!(r.hash(HashFn::Sha256, 1024).is_some());

        let j = r.to_json();
        assert_eq!(j["type"], "devices");
        assert_eq!(j["reads"].as_array().unwrap().len(), 6);
        assert_eq!(j["hashes"][0]["hash"], "murmur64a");
        assert_eq!(j["reads"][0]["x_memory"], 1.0);
        let t = r.text();
        for needle in ["memory", "emulated-20us", "sha256", "1024", "x mem p50"] {
            assert!(t.contains(needle), "{needle} in\n{t}");
        }
        let csv = r.csv();
        assert_eq!(csv.lines().count(), 1 + 6 + 4);
        assert!(csv.starts_with("kind,name,"));
    }

    #[test]
    fn refused_modes_are_reported_not_fatal() {
        let cfg = DevicesConfig {
            tmpfs_dir: Some(PathBuf::from("/proc/definitely/not/here")),
            delays_ns: vec![],
            hash_fns: vec![],
            ..tiny()
        };
        let r = measure(&cfg).unwrap();
        let t = r.reads.iter().find(|m| m.mode == "tmpfs").unwrap();
        assert!(!t.supported && t.note.as_ref().unwrap().contains("cannot use"));
        assert!(r.to_json()["reads"][3]["mean_ns"].is_null());
        assert!(r.text().contains("unsupported"));
        assert!(r.hashes.is_empty());
    }

    #[test]
    fn bad_configs_are_rejected() {
        let e = measure(&DevicesConfig {
            file_size: 100,
            ..tiny()
        })
        .unwrap_err();
        assert!(e.to_string().contains("--file-size"), "{e}");
        assert!(measure(&DevicesConfig { reads: 0, ..tiny() }).is_err());
        let missing = tempfile::tempdir().unwrap().path().join("no/such/dir");
        let e = measure(&DevicesConfig {
            dir: Some(missing.clone()),
            ..tiny()
        })
        .unwrap_err();
        assert!(e.to_string().contains("cannot write the test file"), "{e}");
        assert!(!missing.exists(), "--dir is not created");
    }
}
