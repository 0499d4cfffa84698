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

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};
use serde_json::{json, Value};
use sievedb::clock::{ns_per_tick, spin_wait_ns, ticks};
use sievedb::filter::KeyDigest;
use sievedb::io::{FileSystem, RandomAccessFile, StdFs};
use sievedb::HashFn;

use crate::bulk::Progress;
use crate::engines::{BoxError, EngineResult};

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

/// Latency of 4 KiB random reads in one access mode.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceLatency {
    /// Mode name: `memory`, `buffered`, `direct`, `tmpfs`, or `emulated-<delay>`.
    pub mode: String,
    /// What the mode stands for in the papers (`SSD(D)`, `NVM (RAM disk)`, …).
    pub stands_for: String,
    /// The busy wait added per read (emulated modes), in nanoseconds.
    pub delay_ns: u64,
    /// The test file read (`None` for `memory`).
    pub path: Option<PathBuf>,
    /// Whether the mode could be measured; when not, the numbers are zero and
    /// `note` says why.
    pub supported: bool,
    /// Why the mode is unsupported, or a remark on how it was measured.
    pub note: Option<String>,
    /// Reads timed.
    pub reads: u64,
    /// Mean latency in nanoseconds.
    pub mean_ns: f64,
    /// Median latency in nanoseconds.
    pub p50_ns: f64,
    /// 99th percentile latency in nanoseconds.
    pub p99_ns: f64,
}

impl DeviceLatency {
    fn unsupported(mode: &str, stands_for: &str, path: Option<PathBuf>, why: String) -> Self {
        DeviceLatency {
            mode: mode.into(),
            stands_for: stands_for.into(),
            delay_ns: 0,
            path,
            supported: false,
            note: Some(why),
            reads: 0,
            mean_ns: 0.0,
            p50_ns: 0.0,
            p99_ns: 0.0,
        }
    }
}

/// Cost of one key digest with one hash function at one key size.
#[derive(Clone, Debug, PartialEq)]
pub struct HashCost {
    /// The hash function.
    pub hash: HashFn,
    /// Key size in bytes.
    pub key_size: usize,
    /// Median over the runs of nanoseconds per digest.
    pub ns_per_hash: f64,
    /// Fastest run, nanoseconds per digest.
    pub min_ns: f64,
    /// Slowest run, nanoseconds per digest.
    pub max_ns: f64,
    /// Digests computed per run.
    pub hashes_per_run: u64,
}

/// Everything [`measure`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct DevicesReport {
    /// One entry per access mode, `memory` first.
    pub reads: Vec<DeviceLatency>,
    /// One entry per hash function and key size, in configuration order.
    pub hashes: Vec<HashCost>,
    /// Test file size in bytes (whole pages).
    pub file_size: u64,
    /// Bytes per read.
    pub block_size: usize,
    /// Cost of reading the clock around one read (subtracted from nothing;
    /// shown so that the `memory` figure can be judged).
    pub timer_overhead_ns: f64,
    /// `N * model` of this machine's CPU.
    pub cpu: String,
}

impl DevicesReport {
    /// The read latency of `mode`, if it was measured.
    pub fn read(&self, mode: &str) -> Option<&DeviceLatency> {
        self.reads.iter().find(|r| r.mode == mode && r.supported)
    }

    /// The cost of hashing a `key_size`-byte key with `hash`, if measured.
    pub fn hash(&self, hash: HashFn, key_size: usize) -> Option<&HashCost> {
        self.hashes
            .iter()
            .find(|h| h.hash == hash && h.key_size == key_size)
    }

    /// Median latency of the `memory` mode, the unit of the `x_memory`
    /// columns (medians, which a busy machine disturbs less than means).
    fn memory_ns(&self) -> Option<f64> {
        self.read("memory").map(|m| m.p50_ns).filter(|&ns| ns > 0.0)
    }

    /// The report as one JSON object: `{"type": "devices", "cpu", "file_size",
    /// "block_size", "timer_overhead_ns", "reads": [...], "hashes": [...]}`;
    /// unmeasured numbers are `null`; `x_memory` (Table 1's "normalized"
    /// column) is a read's p50, or a digest's ns, over the `memory` mode's p50.
    pub fn to_json(&self) -> Value {
        let mem = self.memory_ns();
        let ratio = |ns: f64| mem.map(|m| ns / m);
        let reads: Vec<Value> = self
            .reads
            .iter()
            .map(|r| {
                let num = |v: f64| if r.supported { json!(v) } else { Value::Null };
                json!({
                    "mode": r.mode,
                    "stands_for": r.stands_for,
                    "delay_ns": r.delay_ns,
                    "path": r.path.as_ref().map(|p| p.display().to_string()),
                    "supported": r.supported,
                    "note": r.note,
                    "reads": r.reads,
                    "mean_ns": num(r.mean_ns),
                    "p50_ns": num(r.p50_ns),
                    "p99_ns": num(r.p99_ns),
                    "x_memory": if r.supported { json!(ratio(r.p50_ns)) } else { Value::Null },
                })
            })
            .collect();
        let hashes: Vec<Value> = self
            .hashes
            .iter()
            .map(|h| {
                json!({
                    "hash": h.hash.name(),
                    "key_size": h.key_size,
                    "ns_per_hash": h.ns_per_hash,
                    "min_ns": h.min_ns,
                    "max_ns": h.max_ns,
                    "hashes_per_run": h.hashes_per_run,
                    "x_memory": ratio(h.ns_per_hash),
                })
            })
            .collect();
        json!({
            "type": "devices",
            "cpu": self.cpu,
            "file_size": self.file_size,
            "block_size": self.block_size,
            "timer_overhead_ns": self.timer_overhead_ns,
            "reads": reads,
            "hashes": hashes,
        })
    }

    /// The report as text tables: read latency per mode, then ns per hash
    /// (rows: hash functions, columns: key sizes).
    pub fn text(&self) -> String {
        use std::fmt::Write as _;
        let mem = self.memory_ns();
        let mut s = String::new();
        let _ = writeln!(s, "CPU:        {}", self.cpu);
        let _ = writeln!(
            s,
            "Reads:      {} B at random aligned offsets of a {:.1} MiB file, through sievedb's \
             file layer (clock overhead {:.0} ns per read)",
            self.block_size,
            self.file_size as f64 / 1048576.0,
            self.timer_overhead_ns
        );
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{:<16} {:<22} {:>11} {:>11} {:>11} {:>8} {:>10}  path / note",
            "mode", "stands for", "mean ns", "p50 ns", "p99 ns", "reads", "x mem p50"
        );
        for r in &self.reads {
            let place = r
                .path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            if !r.supported {
                let _ = writeln!(
                    s,
                    "{:<16} {:<22} {:>11} {:>11} {:>11} {:>8} {:>10}  {}",
                    r.mode,
                    r.stands_for,
                    "unsupported",
                    "-",
                    "-",
                    0,
                    "-",
                    r.note.as_deref().unwrap_or(&place)
                );
                continue;
            }
            let x = mem.map_or("-".to_string(), |m| format!("{:.1}", r.p50_ns / m));
            let mut tail = place;
            if let Some(n) = &r.note {
                if !tail.is_empty() {
                    tail.push_str("; ");
                }
                tail.push_str(n);
            }
            let _ = writeln!(
                s,
                "{:<16} {:<22} {:>11.0} {:>11.0} {:>11.0} {:>8} {:>10}  {}",
                r.mode, r.stands_for, r.mean_ns, r.p50_ns, r.p99_ns, r.reads, x, tail
            );
        }
        if self.hashes.is_empty() {
            return s;
        }
        let mut sizes: Vec<usize> = Vec::new();
        let mut fns: Vec<HashFn> = Vec::new();
        for h in &self.hashes {
            if !sizes.contains(&h.key_size) {
                sizes.push(h.key_size);
            }
            if !fns.contains(&h.hash) {
                fns.push(h.hash);
            }
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "Hash cost: ns per key digest (KeyDigest::compute, what a filter probe pays), \
             median of runs"
        );
        let _ = write!(s, "{:<10}", "key bytes");
        for k in &sizes {
            let _ = write!(s, " {k:>8}");
        }
        let last = *sizes.last().expect("non-empty");
        let _ = writeln!(s, "   x mem p50 ({last} B)");
        for f in fns {
            let _ = write!(s, "{:<10}", f.name());
            for &k in &sizes {
                match self.hash(f, k) {
                    Some(h) => {
                        let _ = write!(s, " {:>8.1}", h.ns_per_hash);
                    }
                    None => {
                        let _ = write!(s, " {:>8}", "-");
                    }
                }
            }
            let x = match (self.hash(f, last), mem) {
                (Some(h), Some(m)) => format!("{:.2}", h.ns_per_hash / m),
                _ => "-".into(),
            };
            let _ = writeln!(s, "   {x:>8}");
        }
        s
    }

    /// The report as CSV: a header, then one row per access mode
    /// (`kind=read`) and one per hash function and key size (`kind=hash`,
    /// `mean_ns` = the median ns per digest).
    pub fn csv(&self) -> String {
        let mut s = String::from("kind,name,key_size,delay_ns,reads,mean_ns,p50_ns,p99_ns,note\n");
        for r in &self.reads {
            let note = r.note.as_deref().unwrap_or("").replace([',', '\n'], ";");
            if r.supported {
                s.push_str(&format!(
                    "read,{},,{},{},{:.1},{:.1},{:.1},{}\n",
                    r.mode, r.delay_ns, r.reads, r.mean_ns, r.p50_ns, r.p99_ns, note
                ));
            } else {
                s.push_str(&format!(
                    "read,{},,{},0,,,,unsupported: {}\n",
                    r.mode, r.delay_ns, note
                ));
            }
        }
        for h in &self.hashes {
            s.push_str(&format!(
                "hash,{},{},,{},{:.2},,,\n",
                h.hash.name(),
                h.key_size,
                h.hashes_per_run,
                h.ns_per_hash
            ));
        }
        s
    }
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

/// Parses a byte size: a number with an optional `K`, `M`, `G` suffix (powers
/// of 1024, `KiB`/`MiB`/`GiB` and `B` accepted).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let lower = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (num, shift) = match lower.chars().last() {
        Some('k') => (&lower[..lower.len() - 1], 10),
        Some('m') => (&lower[..lower.len() - 1], 20),
        Some('g') => (&lower[..lower.len() - 1], 30),
        _ => (lower, 0),
    };
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("not a size: {s:?} (e.g. 4096, 64K, 256M, 1G)"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("size too large: {s:?}"))
}

/// Flags of `sievedb devices`.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct DevicesArgs {
    /// Existing directory for the test file of the buffered, O_DIRECT and
    /// emulated modes (a temporary directory inside it, removed afterwards;
    /// default: the system's temporary directory, e.g. /tmp)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// tmpfs directory of the emulated-NVM mode (default /dev/shm when present)
    #[arg(long, value_name = "DIR")]
    pub tmpfs_dir: Option<PathBuf>,
    /// Skip the tmpfs mode
    #[arg(long, conflicts_with = "tmpfs_dir")]
    pub no_tmpfs: bool,
    /// Size of the test files (and of the memory buffer): bytes, or K/M/G
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_size)]
    pub file_size: u64,
    /// Timed 4 KiB reads per access mode
    #[arg(long, value_name = "N", default_value_t = DEFAULT_READS)]
    pub reads: u64,
    /// Time limit of one access mode in seconds (slow devices stop early)
    #[arg(long, value_name = "S", default_value_t = DEFAULT_SECONDS_PER_MODE)]
    pub seconds_per_mode: f64,
    /// Comma-separated emulated latencies in ns (the --io-delay-ns values to show)
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_values_t = DEFAULT_DELAYS_NS)]
    pub delays_ns: Vec<u64>,
    /// Comma-separated key sizes in bytes for the hash cost
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_values_t = DEFAULT_KEY_SIZES)]
    pub key_sizes: Vec<usize>,
    /// A few-second run: 8 MiB file, 2000 reads and 0.3 s per mode, short hash
    /// runs (overrides --file-size, --reads and --seconds-per-mode)
    #[arg(long)]
    pub quick: bool,
    /// Print one JSON object instead of text
    #[arg(long)]
    pub json: bool,
    /// Also write the figures as CSV to FILE
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

impl Default for DevicesArgs {
    fn default() -> Self {
        DevicesArgs {
            dir: None,
            tmpfs_dir: None,
            no_tmpfs: false,
            file_size: DEFAULT_FILE_SIZE,
            reads: DEFAULT_READS,
            seconds_per_mode: DEFAULT_SECONDS_PER_MODE,
            delays_ns: DEFAULT_DELAYS_NS.to_vec(),
            key_sizes: DEFAULT_KEY_SIZES.to_vec(),
            quick: false,
            json: false,
            csv: None,
        }
    }
}

impl DevicesArgs {
    /// The measurement these flags ask for.
    pub fn config(&self) -> DevicesConfig {
        let base = if self.quick {
            DevicesConfig::quick()
        } else {
            DevicesConfig {
                file_size: self.file_size,
                reads: self.reads,
                seconds_per_mode: self.seconds_per_mode,
                ..DevicesConfig::default()
            }
        };
        DevicesConfig {
            dir: self.dir.clone(),
            tmpfs_dir: if self.no_tmpfs {
                None
            } else {
                self.tmpfs_dir.clone().or(base.tmpfs_dir.clone())
            },
            delays_ns: self.delays_ns.clone(),
            key_sizes: self.key_sizes.clone(),
            ..base
        }
    }
}

/// Runs `sievedb devices`: measures, prints text (or JSON) to `out`, and
/// writes the CSV file when asked.
pub fn run(args: &DevicesArgs, out: &mut dyn Write) -> EngineResult<()> {
    let report = measure(&args.config())?;
    if let Some(path) = &args.csv {
        std::fs::write(path, report.csv())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if args.json {
        writeln!(out, "{}", report.to_json())?;
    } else {
        out.write_all(report.text().as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

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

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("64K").unwrap(), 64 << 10);
        assert_eq!(parse_size("256MiB").unwrap(), 256 << 20);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert_eq!(parse_size("8MB").unwrap(), 8 << 20);
        assert!(parse_size("lots").is_err());
        assert!(parse_size("99999999999G").is_err());
    }

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        args: DevicesArgs,
    }

    #[test]
    fn flags_parse_and_defaults_match() {
        assert_eq!(
            Cli::try_parse_from(["devices"]).unwrap().args,
            DevicesArgs::default()
        );
        let a = Cli::try_parse_from([
            "devices",
            "--dir",
            "/tmp/x",
            "--file-size",
            "64M",
            "--reads",
            "500",
            "--delays-ns",
            "70,1000",
            "--key-sizes",
            "16,1024",
            "--no-tmpfs",
            "--json",
            "--csv",
            "out.csv",
        ])
        .unwrap()
        .args;
        let c = a.config();
        assert_eq!(c.dir.as_deref(), Some(Path::new("/tmp/x")));
        assert_eq!((c.file_size, c.reads), (64 << 20, 500));
        assert_eq!(c.delays_ns, [70, 1000]);
        assert_eq!(c.key_sizes, [16, 1024]);
        assert_eq!(c.tmpfs_dir, None);
        assert!(a.json && a.csv.is_some());
        let q = Cli::try_parse_from(["devices", "--quick"]).unwrap().args;
        assert_eq!(q.config().file_size, DevicesConfig::quick().file_size);
        assert!(Cli::try_parse_from(["devices", "--no-tmpfs", "--tmpfs-dir", "/x"]).is_err());
        assert!(Cli::try_parse_from(["devices", "--file-size", "big"]).is_err());
    }
}
