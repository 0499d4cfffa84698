//! A memory cgroup the bench process runs in during one benchmark, so that
//! the page cache its reads bring in stays bounded (`--page-cache-limit`).
//!
//! [`MemoryCgroup::enter`] creates a child of the process's own memory
//! cgroup (cgroup v2 when the memory controller is enabled for that group's
//! children, else v1), moves the whole process (every thread) into it, and sets its limit
//! to what the group is charged right after the move plus the given bytes.
//! The memory the process held before stays charged to its old group unless
//! the kernel moves charges with a task (cgroup v1's
//! `memory.move_charge_at_immigrate`, which the child asks for and kernels
//! since 6.x refuse; v2 never moves them), so in every case the given bytes
//! are the room for new memory: the page cache the benchmark's reads fault
//! or read in and the heap it grows (block caches fill while it reads).
//! When the group reaches its limit the kernel reclaims its page cache;
//! anonymous memory beyond it would end in the OOM killer, so the bytes must
//! cover the heap's growth. [`MemoryCgroup::leave`] moves the process back,
//! reclaims what the child is charged (its page cache, mapped pages too)
//! and removes it. One process can be in one such group at a time
//! (the threads of a process share their cgroup): entering waits for the
//! group of another thread of the process to be left.

use serde::Serialize;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Held while the process is in a child group (one at a time).
static ACTIVE: Mutex<()> = Mutex::new(());
/// Numbers the child groups of this process.
static SEQ: AtomicU64 = AtomicU64::new(0);

/// The cgroup paths of `/proc/self/cgroup`: the v2 path (`0::/path`) and
/// the path in the v1 hierarchy that has the memory controller.
pub fn parse_proc_cgroup(text: &str) -> (Option<String>, Option<String>) {
    let (mut v2, mut v1) = (None, None);
    for line in text.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(id), Some(ctrls), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if id == "0" && ctrls.is_empty() {
            v2 = Some(path.to_string());
        } else if ctrls.split(',').any(|c| c == "memory") {
            v1 = Some(path.to_string());
        }
    }
    (v2, v1)
}

/// A cgroup file system mount from `/proc/self/mountinfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupMount {
    /// The directory of the hierarchy mounted (`/` unless in a namespace).
    pub root: String,
    /// Where it is mounted.
    pub mount_point: PathBuf,
}

impl CgroupMount {
    /// The directory of cgroup `path` (as `/proc/self/cgroup` names it)
    /// under this mount, if the mount shows it.
    pub fn dir_of(&self, path: &str) -> Option<PathBuf> {
        let rest = if self.root == "/" {
            path
        } else {
            path.strip_prefix(self.root.as_str())?
        };
        let rest = rest.trim_start_matches('/');
        Some(match rest {
            "" => self.mount_point.clone(),
            _ => self.mount_point.join(rest),
        })
    }
}

/// The cgroup2 mount and the v1 mount with the memory controller, from
/// the text of `/proc/self/mountinfo`.
pub fn parse_cgroup_mounts(mountinfo: &str) -> (Option<CgroupMount>, Option<CgroupMount>) {
    let (mut v2, mut v1) = (None, None);
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split_whitespace().collect();
        let r: Vec<&str> = right.split_whitespace().collect();
        if l.len() < 5 || r.len() < 3 {
            continue;
        }
        let mount = CgroupMount {
            root: l[3].to_string(),
            mount_point: PathBuf::from(l[4]),
        };
        match r[0] {
            "cgroup2" if v2.is_none() => v2 = Some(mount),
            "cgroup" if v1.is_none() && r[2].split(',').any(|o| o == "memory") => v1 = Some(mount),
            _ => {}
        }
    }
    (v2, v1)
}

/// Which cgroup interface a group uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CgroupVersion {
    /// cgroup v1's memory controller (`memory.limit_in_bytes`).
    #[serde(rename = "v1")]
    V1,
    /// cgroup v2 (`memory.max`).
    #[serde(rename = "v2")]
    V2,
}

impl CgroupVersion {
    fn limit_file(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "memory.limit_in_bytes",
            CgroupVersion::V2 => "memory.max",
        }
    }
    fn usage_file(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "memory.usage_in_bytes",
            CgroupVersion::V2 => "memory.current",
        }
    }
    fn peak_file(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "memory.max_usage_in_bytes",
            CgroupVersion::V2 => "memory.peak",
        }
    }
}

/// What a group saw ([`MemoryCgroup::leave`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CgroupReport {
    /// `v1` or `v2`.
    pub version: CgroupVersion,
    /// The group's directory.
    pub path: String,
    /// Its limit: `usage_at_entry_bytes` plus the bytes asked for.
    pub limit_bytes: u64,
    /// Bytes charged to the group right after the process moved in.
    pub usage_at_entry_bytes: u64,
    /// The process's resident set (`VmRSS`) when it moved in.
    pub process_rss_bytes: Option<u64>,
    /// Whether the kernel moved the process's charges with it (v1 only).
    pub charges_moved: bool,
    /// The group's peak charge (v1 `max_usage_in_bytes`, v2 `memory.peak`).
    pub peak_bytes: Option<u64>,
    /// Times a charge hit the limit (v1 `failcnt`, v2 `max` of `memory.events`).
    pub limit_hits: Option<u64>,
    /// Page cache charged to the group at the end (`cache` / `file` of `memory.stat`).
    pub page_cache_bytes: Option<u64>,
    /// Whether the group's pages were reclaimed before it was removed
    /// (v1 `memory.force_empty`, v2 `memory.reclaim`).
    pub reclaimed: bool,
    /// Problems moving back or removing the group.
    pub note: Option<String>,
}

/// The process inside a child memory cgroup (see the module docs).
pub struct MemoryCgroup {
    version: CgroupVersion,
    dir: PathBuf,
    home: PathBuf,
    limit: u64,
    usage_at_entry: u64,
    rss: Option<u64>,
    charges_moved: bool,
    left: bool,
    _active: MutexGuard<'static, ()>,
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// `name value` lines (`memory.stat`, `memory.events`): the value of `key`.
pub fn keyed_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// `VmRSS` of `/proc/self/status`, in bytes.
pub fn process_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("writing {value:?} to {}: {e}", path.display()))
}

impl MemoryCgroup {
    /// Moves this process into a new child memory cgroup limited to its
    /// charge after the move plus `extra` bytes: v2 if usable, else v1.
    /// The error says why neither was (not root, no memory controller,
    /// read-only cgroup file system).
    pub fn enter(extra: u64) -> Result<MemoryCgroup, String> {
        let active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner());
        let proc_cgroup = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("/proc/self/cgroup: {e}"))?;
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        let (v2_path, v1_path) = parse_proc_cgroup(&proc_cgroup);
        let (v2_mount, v1_mount) = parse_cgroup_mounts(&mountinfo);
        let home = |m: Option<CgroupMount>, p: Option<String>, v: &str| {
            let (m, p) = m.zip(p).ok_or_else(|| {
                format!("cgroup {v}: no memory hierarchy mounted for this process")
            })?;
            m.dir_of(&p).ok_or_else(|| {
                format!(
                    "cgroup {v}: {p} is outside the mount at {}",
                    m.mount_point.display()
                )
            })
        };
        let v2 = home(v2_mount, v2_path, "v2").and_then(|h| prepare_v2(&h).map(|()| h));
        // Why v2 was not used, in front of any v1 failure.
        let (version, home, skipped) = match v2 {
            Ok(h) => (CgroupVersion::V2, h, String::new()),
            Err(e2) => match home(v1_mount, v1_path, "v1") {
                Ok(h) => (CgroupVersion::V1, h, format!("{e2}; ")),
                Err(e1) => return Err(format!("{e2}; {e1}")),
            },
        };
        let name = format!(
            "sievedb-bench-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let dir = home.join(name);
        std::fs::create_dir(&dir).map_err(|e| {
            format!(
                "{skipped}cgroup {}: creating {}: {e}",
                version_name(version),
                dir.display()
            )
        })?;
        let mut group = MemoryCgroup {
            version,
            dir,
            home,
            limit: 0,
            usage_at_entry: 0,
            rss: process_rss_bytes(),
            charges_moved: false,
            left: true, // nothing to move back yet
            _active: active,
        };
        if let Err(e) = group.move_in(extra) {
            let note = group.leave_inner().note;
            return Err(match note {
                Some(n) => format!("{skipped}{e}; {n}"),
                None => format!("{skipped}{e}"),
            });
        }
        Ok(group)
    }

    fn move_in(&mut self, extra: u64) -> Result<(), String> {
        let limit_file = self.dir.join(self.version.limit_file());
        if !limit_file.exists() {
            return Err(format!(
                "{} has no {}",
                self.dir.display(),
                self.version.limit_file()
            ));
        }
        if self.version == CgroupVersion::V1 {
            // Refused (EINVAL) by kernels that dropped charge moving.
            self.charges_moved =
                std::fs::write(self.dir.join("memory.move_charge_at_immigrate"), "3").is_ok();
        }
        let pid = std::process::id().to_string();
        write(&self.dir.join("cgroup.procs"), &pid)?;
        self.left = false;
        self.usage_at_entry = read_u64(&self.dir.join(self.version.usage_file())).unwrap_or(0);
        self.limit = self.usage_at_entry.saturating_add(extra);
        write(&limit_file, &self.limit.to_string())
    }

    /// The group's limit in bytes.
    pub fn limit_bytes(&self) -> u64 {
        self.limit
    }

    /// Moves the process back to its group, reclaims this one's pages,
    /// removes it, and reports what it saw. The reclaim evicts the page
    /// cache the benchmark brought in, also the pages mapped into the
    /// process (which `POSIX_FADV_DONTNEED` cannot drop): otherwise the
    /// kernel would hand them to the parent group and the next benchmark
    /// would start with them resident, outside its own limit.
    pub fn leave(mut self) -> CgroupReport {
        self.leave_inner()
    }

    /// Reclaims what is charged to the (emptied) group; best effort.
    fn reclaim(&self) -> bool {
        match self.version {
            CgroupVersion::V1 => std::fs::write(self.dir.join("memory.force_empty"), "0").is_ok(),
            CgroupVersion::V2 => {
                let usage = read_u64(&self.dir.join("memory.current")).unwrap_or(0);
                usage == 0
                    || std::fs::write(self.dir.join("memory.reclaim"), usage.to_string()).is_ok()
            }
        }
    }

    fn leave_inner(&mut self) -> CgroupReport {
        let mut notes = Vec::new();
        let peak = read_u64(&self.dir.join(self.version.peak_file()));
        let hits = match self.version {
            CgroupVersion::V1 => read_u64(&self.dir.join("memory.failcnt")),
            CgroupVersion::V2 => std::fs::read_to_string(self.dir.join("memory.events"))
                .ok()
                .and_then(|t| keyed_value(&t, "max")),
        };
        let cache_key = match self.version {
            CgroupVersion::V1 => "cache",
            CgroupVersion::V2 => "file",
        };
        let cache = std::fs::read_to_string(self.dir.join("memory.stat"))
            .ok()
            .and_then(|t| keyed_value(&t, cache_key));
        if !self.left {
            let pid = std::process::id().to_string();
            match write(&self.home.join("cgroup.procs"), &pid) {
                Ok(()) => self.left = true,
                Err(e) => notes.push(format!("could not move back: {e}")),
            }
        }
        let mut reclaimed = false;
        if self.left {
            reclaimed = self.reclaim();
            if let Err(e) = remove_group(&self.dir) {
                notes.push(e);
            }
        }
        let report = CgroupReport {
            version: self.version,
            path: self.dir.display().to_string(),
            limit_bytes: self.limit,
            usage_at_entry_bytes: self.usage_at_entry,
            process_rss_bytes: self.rss,
            charges_moved: self.charges_moved,
            peak_bytes: peak,
            limit_hits: hits,
            page_cache_bytes: cache,
            reclaimed,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        };
        self.left = true;
        self.dir = PathBuf::new();
        report
    }
}

impl Drop for MemoryCgroup {
    /// Leaves the group if [`MemoryCgroup::leave`] was not called (an error
    /// ended the benchmark), warning on stderr about what failed.
    fn drop(&mut self) {
        if self.dir.as_os_str().is_empty() {
            return;
        }
        if let Some(note) = self.leave_inner().note {
            eprintln!("warning: memory cgroup: {note}");
        }
    }
}

fn version_name(v: CgroupVersion) -> &'static str {
    match v {
        CgroupVersion::V1 => "v1",
        CgroupVersion::V2 => "v2",
    }
}

/// Removes an emptied group; the kernel may report it busy for a moment
/// after its last task left.
fn remove_group(dir: &Path) -> Result<(), String> {
    let mut last = None;
    for _ in 0..50 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => last = Some(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Err(format!(
        "could not remove {}: {}",
        dir.display(),
        last.map_or_else(String::new, |e| e.to_string())
    ))
}

/// Whether a child of v2 group `home` can have a memory limit: `memory` is
/// enabled for `home`'s children (`cgroup.subtree_control`). The bench does
/// not enable it itself: that changes the delegation of a group it does not
/// own, and v2 refuses it anyway in a non-root group that holds processes.
fn prepare_v2(home: &Path) -> Result<(), String> {
    let subtree = home.join("cgroup.subtree_control");
    let enabled = std::fs::read_to_string(&subtree)
        .map_err(|e| format!("cgroup v2: {}: {e}", subtree.display()))?;
    if enabled.split_whitespace().any(|c| c == "memory") {
        return Ok(());
    }
    let ctrls = std::fs::read_to_string(home.join("cgroup.controllers")).unwrap_or_default();
    Err(format!(
        "cgroup v2: the memory controller is not enabled for the children of {} \
         (its controllers: {}; enabled for children: {})",
        home.display(),
        shown(&ctrls),
        shown(&enabled)
    ))
}

fn shown(list: &str) -> &str {
    if list.trim().is_empty() {
        "none"
    } else {
        list.trim()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_self_cgroup() {
        let mixed = "9:name=systemd:/\n4:memory:/process_api/abc\n3:cpuset:/\n0::/\n";
        assert_eq!(
            parse_proc_cgroup(mixed),
            (Some("/".into()), Some("/process_api/abc".into()))
        );
        let v2_only = "0::/user.slice/user-0.slice/session-1.scope\n";
        assert_eq!(
            parse_proc_cgroup(v2_only),
            (
                Some("/user.slice/user-0.slice/session-1.scope".into()),
                None
            )
        );
        let joined = "5:cpu,memory:/a\n";
        assert_eq!(parse_proc_cgroup(joined), (None, Some("/a".into())));
        assert_eq!(parse_proc_cgroup("garbage\n"), (None, None));
    }

    #[test]
    fn parses_cgroup_mounts() {
        let mi = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
                  32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
                  35 31 0:32 /docker/x /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
                  41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let (v2, v1) = parse_cgroup_mounts(mi);
        let v2 = v2.unwrap();
        let v1 = v1.unwrap();
        assert_eq!(v2.mount_point, Path::new("/sys/fs/cgroup/unified"));
        assert_eq!(
            v2.dir_of("/a/b").unwrap(),
            Path::new("/sys/fs/cgroup/unified/a/b")
        );
        let root = v2.dir_of("/").unwrap();
        assert_eq!(root.as_os_str(), "/sys/fs/cgroup/unified");
        assert_eq!(v1.root, "/docker/x");
        assert_eq!(
            v1.dir_of("/docker/x/y").unwrap(),
            Path::new("/sys/fs/cgroup/memory/y")
        );
        assert!(v1.dir_of("/elsewhere").is_none());
        assert_eq!(parse_cgroup_mounts(""), (None, None));
    }

    #[test]
    fn reads_keyed_values() {
        let stat = "cache 4096\nrss 8192\nfile 12288\n";
        assert_eq!(keyed_value(stat, "cache"), Some(4096));
        assert_eq!(keyed_value(stat, "file"), Some(12288));
        assert_eq!(keyed_value("low 0\nhigh 0\nmax 7\noom 0\n", "max"), Some(7));
        assert_eq!(keyed_value(stat, "swap"), None);
        assert!(process_rss_bytes().is_some_and(|b| b > 0));
    }

    #[test]
    fn enters_and_leaves_or_says_why_not() {
        let home = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        match MemoryCgroup::enter(256 << 20) {
            Ok(g) => {
                let limit = g.limit_bytes();
                assert!(limit >= 256 << 20);
                let r = g.leave();
                assert_eq!(r.note, None, "{r:?}");
                assert!(!Path::new(&r.path).exists());
                assert_eq!(r.limit_bytes, limit);
            }
            Err(e) => assert!(e.contains("cgroup"), "{e}"),
        }
        // Back where it was, whatever happened.
        assert_eq!(
            std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default(),
            home
        );
    }
}
