//! Cold and bounded page cache for the read benchmarks (`--drop-caches`,
//! `--page-cache-limit`), for the engines that read through the page cache
//! (LevelDB, RocksDB without O_DIRECT, sievedb without `--use-direct-reads`).
//!
//! Before a benchmark that reads, [`prepare`] drops the cached pages of
//! every file under the database directory with
//! `posix_fadvise(POSIX_FADV_DONTNEED)`, then, for `--page-cache-limit`,
//! moves the process into a fresh memory cgroup ([`super::cgroup`]) with
//! that much room, so the page cache the reads bring in stays bounded while
//! they run. [`PageCacheRun::finish`] leaves the group, reclaiming the pages
//! charged to it (so the next benchmark starts cold again, mapped pages
//! included), and reports.
//!
//! What `DONTNEED` cannot drop: dirty pages and pages under writeback
//! (it starts writeback without waiting; the bench does not fsync first,
//! which read-only table files do not need, as the engines synced them when
//! they wrote them; a file still being written, such as a log, may keep
//! pages) and pages mapped into a process (LevelDB and sievedb keep their
//! table files mapped, so the pages an earlier read faulted in through a
//! map stay, unless a bounded run's reclaim evicted them). The report measures what stayed: the database's resident
//! bytes before and after the drop, and after the benchmark, from
//! `mincore` ([`resident_bytes`]).

use super::cgroup::{CgroupReport, MemoryCgroup};
use serde::Serialize;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// What `--drop-caches` and `--page-cache-limit` ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageCacheMode {
    /// Leave the page cache alone (the default).
    Keep,
    /// Drop the database's pages before each read benchmark.
    Drop,
    /// Drop them, and bound new memory to this many bytes during the benchmark.
    Bounded(u64),
}

/// Regular files under `dir`, recursively (symbolic links are not followed).
pub fn files_under(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let t = entry.file_type()?;
            if t.is_dir() {
                todo.push(entry.path());
            } else if t.is_file() {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Bytes of `file` in the page cache (`mincore` over a read-only shared map
/// of it, which faults nothing in).
pub fn resident_bytes(file: &Path) -> std::io::Result<u64> {
    let f = std::fs::File::open(file)?;
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok(0);
    }
    let page = super::device_io::page_size();
    let pages = len.div_ceil(page) as usize;
    let mut vec = vec![0u8; pages];
    // SAFETY: a fresh read-only shared map of `len` bytes of an open file; it
    // is only passed to mincore (never read through) and unmapped below.
    unsafe {
        let addr = libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        if addr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let rc = libc::mincore(addr, len as usize, vec.as_mut_ptr());
        let err = std::io::Error::last_os_error();
        libc::munmap(addr, len as usize);
        if rc != 0 {
            return Err(err);
        }
    }
    let resident = vec.iter().filter(|&&b| b & 1 == 1).count() as u64;
    Ok((resident * page).min(len))
}

/// Bytes of the files under `dir` in the page cache (files that vanish
/// meanwhile count 0).
pub fn dir_resident_bytes(dir: &Path) -> std::io::Result<u64> {
    Ok(files_under(dir)?
        .iter()
        .map(|f| resident_bytes(f).unwrap_or(0))
        .sum())
}

/// What [`drop_pages`] did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DropReport {
    /// Files advised.
    pub files: u64,
    /// Their total size.
    pub file_bytes: u64,
    /// Their bytes in the page cache before.
    pub resident_before_bytes: u64,
    /// Their bytes in the page cache after (dirty, under writeback or mapped).
    pub resident_after_bytes: u64,
}

/// Drops the page-cache pages of every file under `dir`
/// (`POSIX_FADV_DONTNEED` on each; see the module docs for what stays).
pub fn drop_pages(dir: &Path) -> Result<DropReport, String> {
    let files = files_under(dir).map_err(|e| format!("--drop-caches: {}: {e}", dir.display()))?;
    let mut r = DropReport::default();
    for path in &files {
        let f = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue, // deleted meanwhile
            Err(e) => return Err(format!("--drop-caches: {}: {e}", path.display())),
        };
        r.files += 1;
        r.file_bytes += f.metadata().map_or(0, |m| m.len());
        r.resident_before_bytes += resident_bytes(path).unwrap_or(0);
        // SAFETY: fadvise on an open descriptor; offset 0 and length 0 = the whole file.
        let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        if rc != 0 {
            let e = std::io::Error::from_raw_os_error(rc);
            return Err(format!(
                "--drop-caches: posix_fadvise {}: {e}",
                path.display()
            ));
        }
        r.resident_after_bytes += resident_bytes(path).unwrap_or(0);
    }
    Ok(r)
}

/// The page cache of one read benchmark, from [`prepare`] to [`PageCacheRun::finish`].
pub struct PageCacheRun {
    mode: PageCacheMode,
    dir: PathBuf,
    dropped: DropReport,
    cgroup: Option<MemoryCgroup>,
    note: Option<String>,
}

/// The `page_cache` object of a result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PageCacheReport {
    /// `drop` or `bounded`.
    pub mode: &'static str,
    /// `--page-cache-limit` (bytes of room for new memory), if given.
    pub limit_bytes: Option<u64>,
    /// What the drop did.
    pub dropped: DropReport,
    /// The database's bytes in the page cache after the benchmark.
    pub resident_after_run_bytes: Option<u64>,
    /// The memory cgroup of the benchmark, when one bounded it.
    pub cgroup: Option<CgroupReport>,
    /// Why the page cache was not bounded, when asked to be.
    pub note: Option<String>,
}

/// Drops the pages of the database at `dir` and, for
/// [`PageCacheMode::Bounded`], enters a memory cgroup; `None` for
/// [`PageCacheMode::Keep`]. Without a usable cgroup the benchmark runs with
/// the drop alone: a warning goes to stderr and the report's `note` says why.
pub fn prepare(dir: &Path, mode: PageCacheMode) -> Result<Option<PageCacheRun>, String> {
    if mode == PageCacheMode::Keep {
        return Ok(None);
    }
    let dropped = drop_pages(dir)?;
    let (cgroup, note) = match mode {
        PageCacheMode::Bounded(bytes) => match MemoryCgroup::enter(bytes) {
            Ok(g) => (Some(g), None),
            Err(e) => {
                let note = format!("page cache not bounded (caches dropped only): {e}");
                eprintln!("warning: --page-cache-limit: {note}");
                (None, Some(note))
            }
        },
        _ => (None, None),
    };
    Ok(Some(PageCacheRun {
        mode,
        dir: dir.to_path_buf(),
        dropped,
        cgroup,
        note,
    }))
}

impl PageCacheRun {
    /// Measures what of the database is cached, then leaves the cgroup (if
    /// any, reclaiming its pages) and reports.
    pub fn finish(self) -> PageCacheReport {
        let resident_after_run_bytes = dir_resident_bytes(&self.dir).ok();
        let cgroup = self.cgroup.map(MemoryCgroup::leave);
        if let Some(n) = cgroup.as_ref().and_then(|c| c.note.as_ref()) {
            eprintln!("warning: memory cgroup: {n}");
        }
        PageCacheReport {
            mode: match self.mode {
                PageCacheMode::Bounded(_) => "bounded",
                _ => "drop",
            },
            limit_bytes: match self.mode {
                PageCacheMode::Bounded(b) => Some(b),
                _ => None,
            },
            dropped: self.dropped,
            resident_after_run_bytes,
            cgroup,
            note: self.note,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn drops_the_pages_of_every_file_and_measures_residency() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let mut f = std::fs::File::create(dir.path().join("sub/a")).unwrap();
        f.write_all(&vec![7u8; 64 << 10]).unwrap();
        f.sync_all().unwrap();
        std::fs::write(dir.path().join("b"), b"").unwrap();
        let files = files_under(dir.path()).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(resident_bytes(&dir.path().join("b")).unwrap(), 0);
        let before = dir_resident_bytes(dir.path()).unwrap();
        assert!(before <= 64 << 10);
        let r = drop_pages(dir.path()).unwrap();
        assert_eq!((r.files, r.file_bytes), (2, 64 << 10));
        assert_eq!(r.resident_before_bytes, before);
        // A synced, unmapped file on a block device leaves the cache; tmpfs
        // keeps its pages (they are the file).
        assert!(r.resident_after_bytes <= r.resident_before_bytes);
        assert!(drop_pages(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn keep_does_nothing_and_drop_reports() {
        let dir = tempfile::tempdir().unwrap();
        assert!(prepare(dir.path(), PageCacheMode::Keep).unwrap().is_none());
        let run = prepare(dir.path(), PageCacheMode::Drop).unwrap().unwrap();
        let r = run.finish();
        assert_eq!(
            (r.mode, r.limit_bytes, r.cgroup.is_none()),
            ("drop", None, true)
        );
        assert_eq!(r.resident_after_run_bytes, Some(0));
    }
}
