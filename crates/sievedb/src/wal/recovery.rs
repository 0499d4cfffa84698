//! What replaying the write-ahead logs at open reports:
//! [`RecoveryReport`] and, when something was not applied, [`WalDrop`].

use std::path::PathBuf;

use super::DamageKind;

/// What replaying the write-ahead logs did when the database was opened
/// (see [`Db::recovery_report`](crate::Db::recovery_report)).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, Options};
///
/// let db = Db::open(dir.path(), Options::default())?;
/// db.put("k", "v")?;
/// db.close()?; // not flushed: the put is only in the WAL
/// let db = Db::open(dir.path(), Options::default())?;
/// let report = db.recovery_report();
/// assert_eq!(report.records_applied, 1); // the put, replayed
/// assert!(report.dropped.is_none() && !report.dropped_data()); // a clean open lost nothing
/// assert_eq!(db.get("k")?.as_deref(), Some(&b"v"[..]));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct RecoveryReport {
    /// The recovery mode used.
    pub mode: crate::options::WalRecovery,
    /// Numbers of the WALs that were needed at open, oldest first.
    pub wals: Vec<u64>,
    /// Records (write batches) applied.
    pub records_applied: u64,
    /// Bytes of WAL read as good records.
    pub bytes_applied: u64,
    /// Sequence number of the last write the database holds after recovery.
    pub last_sequence: u64,
    /// What was not applied, if anything.
    pub dropped: Option<WalDrop>,
    /// Records (write batches) not applied: the damaged one where replay
    /// stopped (unless its first bytes are zeros: a preallocated tail, or a
    /// hole a power loss left), and the intact ones found after it and in
    /// the newer WALs it skipped. 0 when nothing but zeros was dropped.
    pub records_dropped: u64,
    /// Writes (batch entries) the intact records among them held (a damaged
    /// record's count cannot be trusted).
    pub entries_dropped: u64,
    /// Bytes not applied that are not zeros (a preallocated WAL's reserved
    /// zeros are not counted): 0 when nothing but zeros was dropped.
    pub bytes_dropped: u64,
    /// Bytes of a torn last MANIFEST edit dropped (a power loss while a
    /// flush, compaction or keyspace change was being logged; nothing it
    /// recorded had been acknowledged).
    pub manifest_bytes_dropped: u64,
}

impl RecoveryReport {
    /// Whether replay dropped anything besides zeros: an intact record, or
    /// bytes of a record a crash cut short (what a warning should be about).
    pub fn dropped_data(&self) -> bool {
        self.bytes_dropped > 0 || self.records_dropped > 0 || self.manifest_bytes_dropped > 0
    }
}

/// The part of the write-ahead logs that recovery did not apply.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # use std::io::Write;
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, Options};
///
/// let db = Db::open(dir.path(), Options::default())?;
/// db.put("k", "v")?;
/// db.close()?;
/// // A crash tears the next write: 100 bytes of garbage follow the last record.
/// # let wal = std::fs::read_dir(dir.path())?
/// #     .map(|e| e.map(|e| e.path()))
/// #     .collect::<Result<Vec<_>, _>>()?
/// #     .into_iter()
/// #     .filter(|p| p.extension().is_some_and(|x| x == "log"))
/// #     .max()
/// #     .unwrap();
/// # std::fs::OpenOptions::new().append(true).open(wal)?.write_all(&[0xab; 100])?;
/// let db = Db::open(dir.path(), Options::default())?;
/// let dropped = db.recovery_report().dropped.as_ref().expect("the torn write");
/// assert!(dropped.torn_tail); // only a torn tail: no acknowledged write is lost
/// assert_eq!(dropped.bytes, 100);
/// assert_eq!(db.get("k")?.as_deref(), Some(&b"v"[..]));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct WalDrop {
    /// Number of the WAL where replay stopped.
    pub wal_number: u64,
    /// Its path (in the database directory, as found at open).
    pub path: PathBuf,
    /// Offset of the first byte not applied (the start of the damaged record).
    pub offset: u64,
    /// Bytes of that WAL from `offset` to its end.
    pub bytes: u64,
    /// The damage found.
    pub kind: DamageKind,
    /// What was wrong, as in an error message.
    pub detail: String,
    /// Whether this is only a torn tail of the newest WAL (the normal result
    /// of a crash during a write); otherwise acknowledged writes may be lost.
    pub torn_tail: bool,
    /// Newer WALs holding bytes that were not replayed at all
    /// ([`WalRecovery::PointInTime`](crate::options::WalRecovery::PointInTime)).
    pub skipped_wals: Vec<u64>,
    /// Bytes of the skipped WALs.
    pub skipped_bytes: u64,
    /// Where the damaged WAL was copied and the skipped WALs moved (the
    /// `lost/` subdirectory), when a read-write open kept them.
    pub kept_in: Option<PathBuf>,
}
