//! What replaying the write-ahead logs at open reports:
//! [`RecoveryReport`] and, when something was not applied, [`WalDrop`].

use std::path::PathBuf;

use super::DamageKind;

/// What replaying the write-ahead logs did when the database was opened
/// (see [`Db::recovery_report`](crate::Db::recovery_report)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
}

/// The part of the write-ahead logs that recovery did not apply.
#[derive(Clone, Debug, PartialEq, Eq)]
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
