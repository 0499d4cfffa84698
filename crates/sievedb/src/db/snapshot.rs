//! Snapshots: point-in-time views that hold back compaction.

use super::handles::{HandleKind, Held};
use super::*;

/// A point-in-time view: reads see exactly the writes acknowledged before it
/// was taken. Compaction keeps the versions it needs until it is dropped.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
/// db.put("a", "1")?;
/// let snap = db.snapshot();
/// db.put("b", "2")?;
/// db.delete("a")?;
/// db.flush()?; // the versions it reads survive flushes and compactions
/// assert_eq!(snap.get("a")?.as_deref(), Some(&b"1"[..])); // deleted after it
/// assert_eq!(snap.get("b")?, None); // written after it
/// assert_eq!(snap.iter()?.count(), 1);
/// assert!(snap.sequence() < db.stats().last_sequence);
/// # Ok(()) }
/// ```
pub struct Snapshot {
    inner: Held,
    seq: SeqNo,
}

impl Snapshot {
    /// A snapshot of `inner` at its last sequence number, counted as a
    /// handle of `kind` (a transaction's own snapshot is a part of it).
    pub(crate) fn new(inner: Arc<DbInner>, kind: HandleKind) -> Self {
        let mut snaps = inner.snapshots.lock();
        let seq = inner.last_seq.load(Ordering::Acquire);
        *snaps.entry(seq).or_insert(0) += 1;
        drop(snaps);
        Snapshot {
            inner: Held::new(inner, kind),
            seq,
        }
    }

    /// The sequence number the snapshot reads at.
    pub fn sequence(&self) -> SeqNo {
        self.seq
    }

    /// The value of `key` as of the snapshot.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let key = user_key(key.as_ref())?;
        let view = self.inner.view_at_snapshot(&self.inner.tree);
        self.inner.get_in(&view, key, self.seq, ReadCtx::new(0))
    }

    /// An iterator over every key as of the snapshot.
    pub fn iter(&self) -> Result<DbIterator> {
        self.range::<&[u8], _>(..)
    }

    /// An iterator over `range` as of the snapshot.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<DbIterator> {
        self.iter_bounds(bounds(&range)?)
    }

    /// An iterator over the keys starting with `prefix` as of the snapshot
    /// (see [`Db::prefix`]).
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> Result<DbIterator> {
        self.iter_bounds(prefix_bounds(prefix.as_ref())?)
    }

    fn iter_bounds(&self, bounds: Bounds) -> Result<DbIterator> {
        let view = self.inner.view_at_snapshot(&self.inner.tree);
        self.inner
            .iter_in(&view, self.seq, bounds, vec![self.pin()], ReadCtx::new(0))
    }

    /// Keeps this snapshot's sequence number registered (and its database
    /// open) while the returned pin, an iterator's, lives.
    pub(crate) fn pin(&self) -> Pin {
        let inner = Arc::clone(&self.inner);
        Box::new(SnapshotPin(Snapshot::new_at(inner, self.seq)))
    }

    /// Whether the snapshot was taken from the database `inner`.
    pub(super) fn belongs_to(&self, inner: &Arc<DbInner>) -> bool {
        Arc::ptr_eq(&self.inner, inner)
    }

    /// A registration of `seq`, counted as an iterator (its pin).
    fn new_at(inner: Arc<DbInner>, seq: SeqNo) -> Self {
        *inner.snapshots.lock().entry(seq).or_insert(0) += 1;
        Snapshot {
            inner: Held::new(inner, HandleKind::Iterator),
            seq,
        }
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("dir", &self.inner.dir)
            .field("sequence", &self.seq)
            .finish()
    }
}

/// Keeps a snapshot registered while an iterator made from it lives.
struct SnapshotPin(#[allow(dead_code)] Snapshot);

impl Drop for Snapshot {
    fn drop(&mut self) {
        let mut snaps = self.inner.snapshots.lock();
        if let Some(n) = snaps.get_mut(&self.seq) {
            *n -= 1;
            if *n == 0 {
                snaps.remove(&self.seq);
            }
        }
    }
}
