//! A node whose disk fills up (its data directory on a small tmpfs, nearly
//! filled by another file) stops, and costs the cluster no acknowledged
//! write: the other two go on committing, and once space is freed and the
//! node restarted it catches up with every write. Needs to mount a tmpfs
//! (root or CAP_SYS_ADMIN); skipped with a message otherwise, except under
//! `CI=true`, where it must run.

mod in_process;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use in_process::Cluster;

/// A tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size_mib: u64) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).expect("mount point");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size_mib}m"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(at.to_path_buf()))
    }

    /// Free bytes.
    fn available(&self) -> u64 {
        let path = std::ffi::CString::new(self.0.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: `path` is a NUL-terminated string that outlives the call,
        // and `st` is a properly sized, writable statvfs.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::statvfs(path.as_ptr(), &mut st) };
        assert_eq!(r, 0, "statvfs");
        st.f_bavail * st.f_frsize
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_on_one_node_costs_no_acknowledged_write() {
    let root = tempfile::tempdir().expect("tempdir");
    let Some(small) = Tmpfs::mount(&root.path().join("small"), 64) else {
        assert!(
            std::env::var("CI").is_err(),
            "CI=true: this test must be able to mount a tmpfs"
        );
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let n3 = small.0.join("n3");
    let mut c = Cluster::new(3, |o| {
        if o.id == 3 {
            o.dir.clone_from(&n3);
        }
    });
    c.init(&[1, 2, 3]);
    let leader = c.leader();
    assert_eq!(c.put(leader, "before", "x"), 200);
    c.wait_for(3, "before", "x");
    // Leave node 3 about 4 MiB.
    let filler = small.0.join("filler");
    let room = small.available().saturating_sub(4 << 20);
    std::fs::write(&filler, vec![0u8; usize::try_from(room).expect("size")]).expect("filler");
    let value = "v".repeat(64 << 10);
    let writer = if leader == 3 { 1 } else { leader };
    let mut acked = Vec::new();
    for i in 0..200 {
        let key = format!("k{i:04}");
        // A majority (the two others) is up: every write is acknowledged,
        // whether node 3 was the leader or not.
        let since = Instant::now();
        while c.put(writer, &key, &value) != 200 {
            assert!(
                since.elapsed() < Duration::from_secs(20),
                "{key} never acknowledged"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        acked.push(key);
    }
    // Node 3 cannot hold 12.5 MiB more: its Raft stopped on the error.
    let since = Instant::now();
    loop {
        let s = c.status(3);
        if let Some(e) = s["error"].as_str() {
            eprintln!("node 3 stopped: {e}");
            break;
        }
        assert!(
            since.elapsed() < Duration::from_secs(20),
            "node 3 did not stop on its full disk: {s}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_ne!(c.get(3, "k0199", true).0, 200, "node 3 stored everything");
    assert_eq!(c.put(3, "on-the-full-node", "x"), 503);
    let leader = c.leader();
    assert_ne!(leader, 3);
    for key in &acked {
        let (status, got) = c.get(leader, key, false);
        assert_eq!(status, 200, "{key}");
        assert_eq!(got.len(), value.len(), "{key}");
    }
    // Space back: node 3 restarts and catches up with every write.
    let _ = c.rt.block_on(c.nodes[2].take().expect("node 3").shutdown());
    std::fs::remove_file(&filler).expect("remove filler");
    c.restart(3);
    c.wait_for(3, "k0199", &value);
    for key in &acked {
        assert_eq!(c.get(3, key, true).0, 200, "{key} on node 3");
    }
    drop(c);
    drop(small);
}
