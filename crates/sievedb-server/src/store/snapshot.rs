//! Snapshots: checkpoints of the database, and their crash-safe install.
//!
//! **Build.** `Db::checkpoint` into `snapshots/tmp-<n>` (hard links of the
//! SSTs after a flush: nothing is copied into memory), whose own `sm_meta`
//! gives the snapshot's last log id and membership, so the metadata always
//! matches the data. The directory is renamed to `snapshots/<id>` and its
//! metadata written to `snapshots/<id>.meta` (JSON, written to a temporary
//! file, synced and renamed); then all but the two newest snapshots are
//! removed (the previous one may still be streaming to a follower).
//!
//! **Install** (a snapshot received from the leader, a checkpoint directory
//! `src`), each step crash-safe:
//! 1. `sm_meta/installing` = (`src`, metadata), synced. From here until step
//!    3, a restart redoes the install from `src` before serving anything
//!    ([`recover`]), so a half-replaced state machine is never served.
//! 2. `sm` is emptied (one range deletion) and refilled from `src`'s `sm`
//!    in batches of about 4 MiB, unsynced.
//! 3. One synced batch: `last_applied` and `membership` of the snapshot, and
//!    `installing` deleted. Redoing steps 2–3 is idempotent.
//! 4. `src` becomes the current snapshot (renamed into `snapshots/` when it
//!    is this node's, else a checkpoint of the installed state is taken).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use openraft::{ErrorSubject, ErrorVerb, Snapshot, SnapshotMeta};
use serde::{Deserialize, Serialize};
use sievedb::{Db, Options, WriteBatch, WriteOptions};

use super::meta::{self, INSTALLING, LAST_APPLIED, MEMBERSHIP};
use super::{io_err, io_msg, Store, SM, SM_META};
use crate::types::{NodeId, SnapshotDir, StorageError, TypeConfig};

/// A snapshot's metadata.
pub type Meta = SnapshotMeta<NodeId, openraft::BasicNode>;

/// The bytes of `sm` copied per batch while installing.
const INSTALL_BATCH_BYTES: usize = 4 << 20;

/// What `sm_meta/installing` records.
#[derive(Serialize, Deserialize)]
struct Installing {
    src: PathBuf,
    meta_json: String,
}

fn snap_err(e: &(impl std::error::Error + 'static)) -> StorageError {
    io_err(ErrorSubject::Snapshot(None), ErrorVerb::Write, e)
}

fn snap_msg(msg: impl std::fmt::Display) -> StorageError {
    io_msg(ErrorSubject::Snapshot(None), ErrorVerb::Write, msg)
}

/// A name no other snapshot of this process or of an earlier one has.
fn unique() -> u64 {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    now.wrapping_mul(1_000_000)
        .wrapping_add(SEQ.fetch_add(1, Ordering::Relaxed) % 1_000_000)
}

/// fsyncs a directory (its entries).
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// Builds a snapshot of `store` now.
pub fn build(store: &Store) -> Result<Snapshot<TypeConfig>, StorageError> {
    let snaps = store.snapshots_dir();
    fs::create_dir_all(&snaps).map_err(|e| snap_err(&e))?;
    let n = unique();
    let tmp = snaps.join(format!("tmp-{n}"));
    store.db.checkpoint(&tmp).map_err(|e| snap_err(&e))?;
    let (last_log_id, last_membership) = {
        let ck = Db::open_read_only(&tmp, Options::default()).map_err(|e| snap_err(&e))?;
        let m = ck.keyspace(SM_META).map_err(|e| snap_err(&e))?;
        let applied: Option<openraft::LogId<NodeId>> =
            meta::get(&m, LAST_APPLIED, ErrorSubject::Snapshot(None))?;
        let membership = meta::get(&m, MEMBERSHIP, ErrorSubject::Snapshot(None))?;
        (applied, membership.unwrap_or_default())
    };
    let id = match &last_log_id {
        Some(l) => format!("{}-{}-{n}", l.leader_id.term, l.index),
        None => format!("0-0-{n}"),
    };
    let meta = Meta {
        last_log_id,
        last_membership,
        snapshot_id: id.clone(),
    };
    let dir = snaps.join(&id);
    fs::rename(&tmp, &dir).map_err(|e| snap_err(&e))?;
    save_current(store, &meta)?;
    Ok(Snapshot {
        meta,
        snapshot: Box::new(SnapshotDir { path: dir }),
    })
}

/// Writes `snapshots/<id>.meta`, making `snapshots/<id>` current, and
/// removes the older snapshots but one.
fn save_current(store: &Store, meta: &Meta) -> Result<(), StorageError> {
    let snaps = store.snapshots_dir();
    let json = serde_json::to_vec(meta).map_err(|e| snap_err(&e))?;
    let tmp = snaps.join(format!("{}.meta.tmp", meta.snapshot_id));
    let path = snaps.join(format!("{}.meta", meta.snapshot_id));
    (|| -> std::io::Result<()> {
        fs::write(&tmp, &json)?;
        fs::File::open(&tmp)?.sync_all()?;
        fs::rename(&tmp, &path)?;
        sync_dir(&snaps)
    })()
    .map_err(|e| snap_err(&e))?;
    let mut all = list(store)?;
    all.retain(|(_, m)| m.snapshot_id != meta.snapshot_id);
    // Newest first: keep one besides the current one.
    for (stem, _) in all.into_iter().skip(1) {
        let _ = fs::remove_file(snaps.join(format!("{stem}.meta")));
        let _ = fs::remove_dir_all(snaps.join(&stem));
    }
    Ok(())
}

/// The snapshots in `snapshots/`, newest (highest last log index, then
/// latest made) first. (A build in progress, `tmp-<n>`, has no `.meta`.)
fn list(store: &Store) -> Result<Vec<(String, Meta)>, StorageError> {
    let snaps = store.snapshots_dir();
    let Ok(rd) = fs::read_dir(&snaps) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| snap_err(&e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".meta") {
            let bytes = fs::read(entry.path()).map_err(|e| snap_err(&e))?;
            let meta: Meta = serde_json::from_slice(&bytes).map_err(|e| snap_err(&e))?;
            out.push((stem.to_string(), meta));
        }
    }
    out.sort_by_key(|(stem, m)| {
        let made = stem.rsplit('-').next().and_then(|n| n.parse::<u64>().ok());
        std::cmp::Reverse((m.last_log_id.map(|l| l.index), made))
    });
    Ok(out)
}

/// The current snapshot, if any.
pub fn current(store: &Store) -> Result<Option<Snapshot<TypeConfig>>, StorageError> {
    let snaps = store.snapshots_dir();
    Ok(list(store)?.into_iter().find_map(|(stem, meta)| {
        let path = snaps.join(&stem);
        path.is_dir().then(|| Snapshot {
            meta,
            snapshot: Box::new(SnapshotDir { path }),
        })
    }))
}

/// Replaces the state machine with the snapshot in `src` (steps 1–4 above).
pub fn install(store: &Store, meta: &Meta, src: &Path) -> Result<(), StorageError> {
    let meta_json = serde_json::to_string(meta).map_err(|e| snap_err(&e))?;
    let marker = Installing {
        src: src.to_path_buf(),
        meta_json,
    };
    meta::put(
        &store.sm_meta,
        INSTALLING,
        &marker,
        true,
        ErrorSubject::Snapshot(None),
    )?;
    replace(store, meta, src)?;
    adopt(store, meta, src)
}

/// Steps 2 and 3.
fn replace(store: &Store, meta: &Meta, src: &Path) -> Result<(), StorageError> {
    // One pass over the checkpoint's tables, read (not mapped): mapped, every
    // page read would count in this process's RSS until the install ends.
    let from = Db::open_read_only(
        src,
        Options {
            use_mmap_reads: false,
            ..Options::default()
        },
    )
    .map_err(|e| snap_err(&e))?;
    let from_sm = from.keyspace(SM).map_err(|e| snap_err(&e))?;
    let mut batch = WriteBatch::new();
    batch.delete_range_cf::<&[u8], _>(&store.sm, ..);
    for kv in from_sm.iter().map_err(|e| snap_err(&e))? {
        let (k, v) = kv.map_err(|e| snap_err(&e))?;
        batch.put_cf(&store.sm, k, v);
        if batch.size_in_bytes() >= INSTALL_BATCH_BYTES {
            store
                .db
                .write(std::mem::take(&mut batch))
                .map_err(|e| snap_err(&e))?;
        }
    }
    let s = ErrorSubject::Snapshot(None);
    // `last_applied` holds a `LogId` (absent: nothing applied).
    match &meta.last_log_id {
        Some(l) => meta::put_in(&mut batch, &store.sm_meta, LAST_APPLIED, l, s.clone())?,
        None => batch.delete_cf(&store.sm_meta, LAST_APPLIED),
    }
    meta::put_in(
        &mut batch,
        &store.sm_meta,
        MEMBERSHIP,
        &meta.last_membership,
        s,
    )?;
    batch.delete_cf(&store.sm_meta, INSTALLING);
    store
        .db
        .write_with(batch, &WriteOptions { sync: true })
        .map_err(|e| snap_err(&e))
}

/// Step 4.
fn adopt(store: &Store, meta: &Meta, src: &Path) -> Result<(), StorageError> {
    let snaps = store.snapshots_dir();
    fs::create_dir_all(&snaps).map_err(|e| snap_err(&e))?;
    let dir = snaps.join(&meta.snapshot_id);
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| snap_err(&e))?;
    }
    if src.starts_with(store.incoming_dir()) {
        fs::rename(src, &dir).map_err(|e| snap_err(&e))?;
    } else {
        store.db.checkpoint(&dir).map_err(|e| snap_err(&e))?;
    }
    save_current(store, meta)
}

/// At open: finishes a snapshot install a crash interrupted, and removes
/// snapshots half built or half received.
pub fn recover(store: &Store) -> Result<(), StorageError> {
    let marker: Option<Installing> =
        meta::get(&store.sm_meta, INSTALLING, ErrorSubject::Snapshot(None))?;
    if let Some(m) = &marker {
        if !m.src.is_dir() {
            return Err(snap_msg(format!(
                "a snapshot install was interrupted and its source {} is gone: \
                 the state machine is incomplete; remove this node's directory and add it again",
                m.src.display()
            )));
        }
        let meta: Meta = serde_json::from_str(&m.meta_json).map_err(|e| snap_err(&e))?;
        tracing::warn!(snapshot = %meta.snapshot_id, "finishing an interrupted snapshot install");
        replace(store, &meta, &m.src)?;
        adopt(store, &meta, &m.src)?;
    }
    // Builds a crash interrupted (`tmp-<n>`, the engine's
    // `tmp-<n>.checkpoint-tmp`, `<id>.meta.tmp`).
    if let Ok(rd) = fs::read_dir(store.snapshots_dir()) {
        for entry in rd.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("tmp-") || name.ends_with(".meta.tmp") {
                let _ = fs::remove_file(entry.path());
                let _ = fs::remove_dir_all(entry.path());
            }
        }
    }
    if let Ok(rd) = fs::read_dir(store.incoming_dir()) {
        for entry in rd.flatten() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
    Ok(())
}

/// Whether an unfinished install reads from `src`.
pub fn is_installing(store: &Store, src: &Path) -> bool {
    meta::get::<Installing>(&store.sm_meta, INSTALLING, ErrorSubject::Snapshot(None))
        .ok()
        .flatten()
        .is_some_and(|m| m.src == src)
}

/// A directory under `incoming/` to receive a snapshot into.
pub fn incoming(store: &Store) -> std::io::Result<PathBuf> {
    let dir = store.incoming_dir();
    fs::create_dir_all(&dir)?;
    let path = dir.join(format!("snap-{}", unique()));
    fs::create_dir(&path)?;
    Ok(path)
}
