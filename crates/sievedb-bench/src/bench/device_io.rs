//! Device reads of any engine, measured from outside it (issue 21, part 2).
//!
//! sievedb counts its own device reads (block-cache misses, filter unit
//! loads and table-open reads, device reads under O_DIRECT); the baselines
//! count nothing. This module measures every engine the same way, from two
//! kernel counters snapshotted before and after each benchmark
//! ([`DeviceProbe::snapshot`], [`DeviceProbe::reads_since`]):
//!
//! - `/proc/self/io` ([`ProcIo`]): `read_bytes` is what this process (all of
//!   its threads, also the engines' background threads) caused to be fetched
//!   from storage: the bytes of the read requests it submitted to a block
//!   device, readahead and mmap read-around included, O_DIRECT reads
//!   included, page-cache hits and reads of in-memory file systems (tmpfs)
//!   excluded. `syscr` counts read system calls (`read`, `pread`, `readv`,
//!   ...), whether or not they reached the device, and not page faults of
//!   memory maps; the snapshots' own reads of `/proc` add two or three.
//! - `/proc/diskstats` ([`DiskCounters`]) of the block device that holds the
//!   database directory ([`BlockDevice::of_path`]): read requests completed
//!   (adjacent requests the block layer merged count once, as one request
//!   the device served), requests merged, and 512-byte sectors read. These
//!   count every process's requests on that device: another program reading
//!   the same device during a benchmark inflates them (put the database on
//!   a device of its own, e.g. a loop device, to measure one engine alone).
//!   Also the milliseconds spent reading (the sum of every read request's
//!   time in flight): over a single reader's requests, their mean latency.
//!   On a virtual machine this tells a request the host served from its own
//!   cache (tens of µs) from one that reached the disk (docs/history.md,
//!   "Measuring on a shared VM").

use serde::Serialize;
use serde_json::{json, Value};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Bytes of a diskstats sector (always 512, whatever the device's sector size).
pub const SECTOR_BYTES: u64 = 512;

/// The read counters of `/proc/self/io`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcIo {
    /// Bytes read through any read system call (page-cache hits included).
    pub rchar: u64,
    /// Read system calls.
    pub syscr: u64,
    /// Bytes this process caused to be read from block devices.
    pub read_bytes: u64,
}

impl ProcIo {
    /// Parses the text of `/proc/<pid>/io` (`name: value` lines).
    pub fn parse(text: &str) -> Result<ProcIo, String> {
        let mut out = ProcIo::default();
        let mut seen = [false; 3];
        for line in text.lines() {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let slot = match name.trim() {
                "rchar" => 0,
                "syscr" => 1,
                "read_bytes" => 2,
                _ => continue,
            };
            let v: u64 = value
                .trim()
                .parse()
                .map_err(|e| format!("/proc/self/io: {name}: {e}"))?;
            match slot {
                0 => out.rchar = v,
                1 => out.syscr = v,
                _ => out.read_bytes = v,
            }
            seen[slot] = true;
        }
        if !seen.iter().all(|s| *s) {
            return Err("/proc/self/io lacks rchar, syscr or read_bytes".into());
        }
        Ok(out)
    }

    /// This process's counters now.
    pub fn read_self() -> Result<ProcIo, String> {
        let text = std::fs::read_to_string("/proc/self/io")
            .map_err(|e| format!("/proc/self/io: {e} (no task I/O accounting here)"))?;
        ProcIo::parse(&text)
    }
}

/// The read counters of one line of `/proc/diskstats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskCounters {
    /// Read requests completed (a merged request counts once).
    pub reads_completed: u64,
    /// Read requests merged into an adjacent one before reaching the device.
    pub reads_merged: u64,
    /// 512-byte sectors read.
    pub sectors_read: u64,
    /// Milliseconds spent reading: each read request's time in flight, summed
    /// (overlapping requests each count their own).
    pub read_ms: u64,
}

/// One parsed `/proc/diskstats` line: `major minor name` then the counters.
pub fn parse_diskstats_line(line: &str) -> Option<(u32, u32, &str, DiskCounters)> {
    let mut f = line.split_whitespace();
    let major = f.next()?.parse().ok()?;
    let minor = f.next()?.parse().ok()?;
    let name = f.next()?;
    let mut num = || f.next().and_then(|x| x.parse::<u64>().ok());
    let reads_completed = num()?;
    let reads_merged = num()?;
    let sectors_read = num()?;
    let read_ms = num()?;
    let counters = DiskCounters {
        reads_completed,
        reads_merged,
        sectors_read,
        read_ms,
    };
    Some((major, minor, name, counters))
}

/// The name and counters of device `major:minor` in the text of `/proc/diskstats`.
pub fn find_diskstats(text: &str, major: u32, minor: u32) -> Option<(String, DiskCounters)> {
    text.lines()
        .filter_map(parse_diskstats_line)
        .find(|&(ma, mi, _, _)| ma == major && mi == minor)
        .map(|(_, _, name, c)| (name.to_string(), c))
}

/// The major number of a Linux `dev_t` (glibc's encoding: 12 bits of major
/// in bits 8..20, the rest from bit 32).
pub fn dev_major(dev: u64) -> u32 {
    (((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)) as u32
}

/// The minor number of a Linux `dev_t` (8 bits, then the rest from bit 20).
pub fn dev_minor(dev: u64) -> u32 {
    ((dev & 0xff) | ((dev >> 12) & !0xff)) as u32
}

/// The `major:minor` and the mount source of every line of
/// `/proc/self/mountinfo` whose `major:minor` field is `major:minor`
/// (`36 35 98:0 /root /mnt opts - fstype SOURCE superopts`), with its file
/// system type.
pub fn mount_source(mountinfo: &str, major: u32, minor: u32) -> Option<(String, String)> {
    let want = format!("{major}:{minor}");
    mountinfo.lines().find_map(|line| {
        let mut f = line.split_whitespace();
        if f.nth(2)? != want {
            return None;
        }
        let (_, after) = line.split_once(" - ")?;
        let mut g = after.split_whitespace();
        let fstype = g.next()?.to_string();
        let source = g.next()?.to_string();
        Some((fstype, source))
    })
}

/// The block device a database directory lives on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockDevice {
    /// Its name in `/proc/diskstats` (`vda`, `sda1`, `nvme0n1p2`, `loop0`, `dm-0`).
    pub name: String,
    /// Major device number.
    pub major: u32,
    /// Minor device number.
    pub minor: u32,
    /// `queue/read_ahead_kb` of the device (of the whole disk for a partition).
    pub read_ahead_kb: Option<u64>,
}

impl BlockDevice {
    /// The device holding `path` (or its nearest existing ancestor): the
    /// directory's `st_dev` looked up in `/proc/diskstats`; failing that
    /// (btrfs and other file systems with anonymous device numbers), the
    /// `/dev/...` source of its mount in `/proc/self/mountinfo`. An error
    /// says why there is none (tmpfs, overlay, no `/proc/diskstats`).
    pub fn of_path(path: &Path) -> Result<BlockDevice, String> {
        let existing = nearest_existing(path)?;
        let dev = std::fs::metadata(&existing)
            .map_err(|e| format!("{}: {e}", existing.display()))?
            .dev();
        let (major, minor) = (dev_major(dev), dev_minor(dev));
        let stats = std::fs::read_to_string("/proc/diskstats")
            .map_err(|e| format!("/proc/diskstats: {e}"))?;
        if let Some((name, _)) = find_diskstats(&stats, major, minor) {
            return Ok(BlockDevice::new(name, major, minor));
        }
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mount = mount_source(&mountinfo, major, minor);
        if let Some((_, source)) = mount.as_ref().filter(|(_, s)| s.starts_with("/dev/")) {
            if let Ok(m) = std::fs::metadata(source) {
                let (ma, mi) = (dev_major(m.rdev()), dev_minor(m.rdev()));
                if let Some((name, _)) = find_diskstats(&stats, ma, mi) {
                    return Ok(BlockDevice::new(name, ma, mi));
                }
            }
        }
        let on = match mount {
            Some((fstype, source)) => format!(" ({fstype} from {source})"),
            None => String::new(),
        };
        Err(format!(
            "{} is on device {major}:{minor}{on}, which is no block device of \
             /proc/diskstats (an in-memory or virtual file system?): no \
             per-device read counts",
            existing.display()
        ))
    }

    fn new(name: String, major: u32, minor: u32) -> BlockDevice {
        let read_ahead_kb = read_ahead_kb(major, minor);
        BlockDevice {
            name,
            major,
            minor,
            read_ahead_kb,
        }
    }

    /// `name major:minor`.
    pub fn label(&self) -> String {
        format!("{} {}:{}", self.name, self.major, self.minor)
    }

    /// The device's counters now.
    pub fn counters(&self) -> Result<DiskCounters, String> {
        let text = std::fs::read_to_string("/proc/diskstats")
            .map_err(|e| format!("/proc/diskstats: {e}"))?;
        find_diskstats(&text, self.major, self.minor)
            .map(|(_, c)| c)
            .ok_or_else(|| format!("{} left /proc/diskstats", self.label()))
    }
}

/// `path`, or the nearest of its ancestors that exists.
fn nearest_existing(path: &Path) -> Result<PathBuf, String> {
    let mut p = path.to_path_buf();
    loop {
        if p.exists() {
            return Ok(p);
        }
        if !p.pop() || p.as_os_str().is_empty() {
            return Ok(PathBuf::from("."));
        }
    }
}

/// `queue/read_ahead_kb` of block device `major:minor` from sysfs; a
/// partition has no queue of its own and uses its disk's.
fn read_ahead_kb(major: u32, minor: u32) -> Option<u64> {
    let file = read_ahead_file(major, minor)?;
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// The sysfs file of [`read_ahead_kb`].
fn read_ahead_file(major: u32, minor: u32) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    let own = dir.join("queue/read_ahead_kb");
    Some(if own.exists() {
        own
    } else {
        dir.parent()?.join("queue/read_ahead_kb")
    })
}

/// A device's `read_ahead_kb` set for a while (`--read-ahead-kb`): the value
/// before comes back when the guard drops. An engine that reads through
/// `mmap` (LevelDB) reads that much around every page fault, so its device
/// reads depend on it (BENCHMARKS.md, "Device reads: how they are counted").
/// Writing it needs root.
#[derive(Debug)]
pub struct ReadAhead {
    file: PathBuf,
    before: u64,
}

impl ReadAhead {
    /// Sets `dev`'s readahead to `kb` KiB.
    pub fn set(dev: &BlockDevice, kb: u64) -> Result<ReadAhead, String> {
        let file = read_ahead_file(dev.major, dev.minor)
            .ok_or_else(|| format!("{}: no queue/read_ahead_kb in sysfs", dev.label()))?;
        let before = read_ahead_kb(dev.major, dev.minor)
            .ok_or_else(|| format!("{}: unreadable", file.display()))?;
        std::fs::write(&file, kb.to_string())
            .map_err(|e| format!("--read-ahead-kb: {}: {e}", file.display()))?;
        Ok(ReadAhead { file, before })
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(&self.file, self.before.to_string()) {
            eprintln!(
                "warning: could not restore {} to {}: {e}",
                self.file.display(),
                self.before
            );
        }
    }
}

/// The counters of one moment ([`DeviceProbe::snapshot`]).
#[derive(Clone, Debug)]
pub struct IoSnapshot {
    proc_io: Result<ProcIo, String>,
    disk: Result<DiskCounters, String>,
}

/// Measures the device reads of benchmarks on the database at one path.
#[derive(Clone, Debug)]
pub struct DeviceProbe {
    device: Result<BlockDevice, String>,
}

impl DeviceProbe {
    /// A probe of the device holding `db` (see [`BlockDevice::of_path`]).
    pub fn new(db: &Path) -> DeviceProbe {
        DeviceProbe {
            device: BlockDevice::of_path(db),
        }
    }

    /// The device found, or why there is none.
    pub fn device(&self) -> Result<&BlockDevice, &str> {
        self.device.as_ref().map_err(String::as_str)
    }

    /// Both counters now.
    pub fn snapshot(&self) -> IoSnapshot {
        IoSnapshot {
            proc_io: ProcIo::read_self(),
            disk: match &self.device {
                Ok(d) => d.counters(),
                Err(e) => Err(e.clone()),
            },
        }
    }

    /// What was read between `before` and now.
    pub fn reads_since(&self, before: &IoSnapshot) -> DeviceReads {
        let after = self.snapshot();
        let mut notes = Vec::new();
        let io = match (&before.proc_io, &after.proc_io) {
            (Ok(b), Ok(a)) => Some((
                a.read_bytes.saturating_sub(b.read_bytes),
                a.syscr.saturating_sub(b.syscr),
            )),
            (Err(e), _) | (_, Err(e)) => {
                notes.push(e.clone());
                None
            }
        };
        let disk = match (&before.disk, &after.disk) {
            (Ok(b), Ok(a)) => Some(DiskCounters {
                reads_completed: a.reads_completed.wrapping_sub(b.reads_completed),
                reads_merged: a.reads_merged.wrapping_sub(b.reads_merged),
                sectors_read: a.sectors_read.wrapping_sub(b.sectors_read),
                read_ms: a.read_ms.wrapping_sub(b.read_ms),
            }),
            (Err(e), _) | (_, Err(e)) => {
                notes.push(e.clone());
                None
            }
        };
        let device = self.device.as_ref().ok();
        DeviceReads {
            read_bytes: io.map(|x| x.0),
            read_syscalls: io.map(|x| x.1),
            device: device.map(BlockDevice::label),
            // As it is at the end (`--read-ahead-kb` may have set it).
            read_ahead_kb: device.and_then(|d| read_ahead_kb(d.major, d.minor)),
            requests: disk.map(|d| d.reads_completed),
            merges: disk.map(|d| d.reads_merged),
            sector_bytes: disk.map(|d| d.sectors_read * SECTOR_BYTES),
            read_ms: disk.map(|d| d.read_ms),
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        }
    }
}

/// The device reads over one benchmark (deltas of [`ProcIo`] and of the
/// device's [`DiskCounters`]; `None` where a counter was unavailable, with
/// the reason in `note`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeviceReads {
    /// Δ `read_bytes` of `/proc/self/io`: bytes this process caused to be read
    /// from block devices (readahead, read-around and O_DIRECT included).
    pub read_bytes: Option<u64>,
    /// Δ `syscr`: read system calls, page-cache hits included.
    pub read_syscalls: Option<u64>,
    /// The device of the database directory (`name major:minor`).
    pub device: Option<String>,
    /// The device's `read_ahead_kb` during the run.
    pub read_ahead_kb: Option<u64>,
    /// Δ read requests completed on the device (merged ones once), every process's.
    pub requests: Option<u64>,
    /// Δ read requests merged into others on the device.
    pub merges: Option<u64>,
    /// Δ sectors read on the device × 512, every process's.
    pub sector_bytes: Option<u64>,
    /// Δ milliseconds the device's read requests were in flight, every process's.
    pub read_ms: Option<u64>,
    /// Why a counter is missing.
    pub note: Option<String>,
}

/// The keys [`DeviceReads::fields`] adds to a result (JSON and CSV).
pub const DEVICE_KEYS: [&str; 13] = [
    "device_read_bytes",
    "device_read_syscalls",
    "device_read_requests",
    "device_read_merges",
    "device_sector_read_bytes",
    "device_read_ms",
    "device_read_micros_per_request",
    "device_read_bytes_per_op",
    "device_read_pages_per_op",
    "device_read_requests_per_op",
    "device",
    "device_read_ahead_kb",
    "device_note",
];

/// The system's page size in bytes (4096 when unknown).
#[expect(clippy::cast_sign_loss, reason = "checked positive before the cast")]
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

impl DeviceReads {
    /// The [`DEVICE_KEYS`] fields of a result of `ops` operations: the deltas,
    /// the mean time in flight of a read request (`null` without requests),
    /// and per operation `read_bytes`, `read_bytes` in pages and requests
    /// (`null` without operations or without the counter).
    pub fn fields(&self, ops: u64) -> Vec<(&'static str, Value)> {
        let per_op = |x: Option<u64>, unit: u64| {
            x.filter(|_| ops > 0)
                .map(|x| x as f64 / unit as f64 / ops as f64)
        };
        let v = vec![
            ("device_read_bytes", json!(self.read_bytes)),
            ("device_read_syscalls", json!(self.read_syscalls)),
            ("device_read_requests", json!(self.requests)),
            ("device_read_merges", json!(self.merges)),
            ("device_sector_read_bytes", json!(self.sector_bytes)),
            ("device_read_ms", json!(self.read_ms)),
            (
                "device_read_micros_per_request",
                json!(self.micros_per_request()),
            ),
            (
                "device_read_bytes_per_op",
                json!(per_op(self.read_bytes, 1)),
            ),
            (
                "device_read_pages_per_op",
                json!(per_op(self.read_bytes, page_size())),
            ),
            (
                "device_read_requests_per_op",
                json!(per_op(self.requests, 1)),
            ),
            ("device", json!(self.device)),
            ("device_read_ahead_kb", json!(self.read_ahead_kb)),
            ("device_note", json!(self.note)),
        ];
        debug_assert!(v.iter().map(|p| p.0).eq(DEVICE_KEYS));
        v
    }

    /// The mean time in flight of one read request in µs: `read_ms` over
    /// `requests` (`None` without both or without requests).
    pub fn micros_per_request(&self) -> Option<f64> {
        match (self.read_ms, self.requests) {
            (Some(ms), Some(r)) if r > 0 => Some(ms as f64 * 1000.0 / r as f64),
            _ => None,
        }
    }

    /// `; device: R req/op, P pages/op` for the text line (what is known).
    pub fn text(&self, ops: u64) -> String {
        if ops == 0 {
            return String::new();
        }
        let mut parts = Vec::new();
        if let Some(r) = self.requests {
            parts.push(format!("{:.3} req/op", r as f64 / ops as f64));
        }
        if let Some(us) = self.micros_per_request() {
            parts.push(format!("{us:.0} µs/req"));
        }
        if let Some(b) = self.read_bytes {
            let pages = b as f64 / page_size() as f64 / ops as f64;
            parts.push(format!("{pages:.3} pages/op read"));
        }
        if parts.is_empty() {
            return String::new();
        }
        format!("; device: {}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IO: &str = "rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 40960\n\
                      write_bytes: 0\ncancelled_write_bytes: 0\n";

    const DISKSTATS: &str = "\
   7       0 loop0 5 0 40 1 0 0 0 0 0 4 1 0 0 0 0 0 0
 254       0 vda 12248691 71140 209581731 32061280 42891978 796263 826902872 6274501 1 4127152 40165975 9349301 1000 775752672 1067291 12613370 762901
   8       0 sda 100 2 1000 50 0 0 0 0 0 0 0
   8       1 sda1 90 1 900 45 0 0 0 0 0 0 0
 259       3 nvme0n1p2 7 0 56 0 0 0 0 0 0 0 0
";

    #[test]
    fn parses_proc_self_io() {
        let io = ProcIo::parse(IO).unwrap();
        assert_eq!(
            io,
            ProcIo {
                rchar: 6976,
                syscr: 10,
                read_bytes: 40960
            }
        );
        assert!(ProcIo::parse("rchar: 1\nsyscr: 2\n").is_err());
        assert!(ProcIo::parse("rchar: 1\nsyscr: x\nread_bytes: 3\n").is_err());
        // The live file parses (Linux keeps it unless task I/O accounting is off).
        if let Ok(text) = std::fs::read_to_string("/proc/self/io") {
            ProcIo::parse(&text).unwrap();
        }
    }

    #[test]
    fn parses_diskstats_lines_and_finds_devices() {
        let (ma, mi, name, c) = parse_diskstats_line(DISKSTATS.lines().nth(1).unwrap()).unwrap();
        assert_eq!((ma, mi, name), (254, 0, "vda"));
        assert_eq!(
            c,
            DiskCounters {
                reads_completed: 12248691,
                reads_merged: 71140,
                sectors_read: 209581731,
                read_ms: 32061280,
            }
        );
        assert_eq!(find_diskstats(DISKSTATS, 8, 1).unwrap().0, "sda1");
        assert_eq!(
            find_diskstats(DISKSTATS, 8, 0).unwrap().1.reads_completed,
            100
        );
        assert_eq!(find_diskstats(DISKSTATS, 259, 3).unwrap().0, "nvme0n1p2");
        assert_eq!(find_diskstats(DISKSTATS, 7, 0).unwrap().1.sectors_read, 40);
        assert!(find_diskstats(DISKSTATS, 0, 42).is_none());
        assert!(parse_diskstats_line("8 0 sda 1 2").is_none());
        assert!(parse_diskstats_line("").is_none());
    }

    #[test]
    fn splits_dev_t() {
        // makedev(254, 0), makedev(8, 17), makedev(259, 3) and a large minor.
        assert_eq!((dev_major(0xfe00), dev_minor(0xfe00)), (254, 0));
        assert_eq!((dev_major(0x811), dev_minor(0x811)), (8, 17));
        assert_eq!((dev_major(0x10303), dev_minor(0x10303)), (259, 3));
        // Numbers past 12 / 8 bits, against the C library's encoding.
        for (ma, mi) in [
            (0x12345u32, 0xabc78u32),
            (4095, 255),
            (4096, 256),
            (7, 1 << 19),
        ] {
            let dev = libc::makedev(ma, mi);
            assert_eq!((dev_major(dev), dev_minor(dev)), (ma, mi));
        }
    }

    #[test]
    fn finds_mount_sources() {
        let mi = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                  40 22 0:35 / /data rw - btrfs /dev/sdb2 rw,space_cache\n\
                  41 22 0:36 / /tmp rw - tmpfs tmpfs rw\n";
        assert_eq!(
            mount_source(mi, 0, 35),
            Some(("btrfs".into(), "/dev/sdb2".into()))
        );
        assert_eq!(mount_source(mi, 0, 36).unwrap().0, "tmpfs");
        assert!(mount_source(mi, 9, 9).is_none());
    }

    #[test]
    fn finds_the_device_of_a_directory_or_says_why_not() {
        let dir = tempfile::tempdir().unwrap();
        match BlockDevice::of_path(&dir.path().join("not/yet")) {
            Ok(d) => {
                assert!(!d.name.is_empty());
                d.counters().unwrap();
            }
            Err(e) => assert!(e.contains("/proc/diskstats"), "{e}"),
        }
        let probe = DeviceProbe::new(dir.path());
        let before = probe.snapshot();
        std::fs::write(dir.path().join("f"), vec![1u8; 8192]).unwrap();
        let r = probe.reads_since(&before);
        assert_eq!(r.device.is_some(), probe.device().is_ok());
        assert_eq!(r.requests.is_some(), probe.device().is_ok());
        let fields = r.fields(4);
        assert_eq!(fields.len(), DEVICE_KEYS.len());
        assert!(DeviceReads::default()
            .fields(0)
            .iter()
            .all(|(_, v)| v.is_null()));
    }

    #[test]
    fn per_op_figures() {
        let r = DeviceReads {
            read_bytes: Some(8 * page_size()),
            requests: Some(6),
            read_ms: Some(3),
            ..DeviceReads::default()
        };
        let f: serde_json::Map<String, Value> = r
            .fields(4)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        assert_eq!(f["device_read_pages_per_op"], 2.0);
        assert_eq!(f["device_read_requests_per_op"], 1.5);
        assert_eq!(f["device_read_micros_per_request"], 500.0);
        assert!(r.text(4).contains("1.500 req/op") && r.text(4).contains("2.000 pages/op"));
        assert!(r.text(4).contains("500 µs/req"), "{}", r.text(4));
        let none = DeviceReads {
            requests: Some(0),
            read_ms: Some(0),
            ..DeviceReads::default()
        };
        assert_eq!(none.micros_per_request(), None);
        assert_eq!(r.text(0), "");
    }

    #[test]
    fn read_ahead_of_no_device_is_an_error_not_a_panic() {
        let none = BlockDevice {
            name: "none".into(),
            major: 0,
            minor: 0,
            read_ahead_kb: None,
        };
        let e = ReadAhead::set(&none, 16).unwrap_err();
        assert!(e.contains("none 0:0"), "{e}");
    }
}
