//! Time to live: the wall clock ([`Clock`]), the write-time stamp a
//! database opened with [`Options::ttl`](crate::Options::ttl) appends to every
//! value, and the expiry test reads and compactions apply.
//!
//! A stamped value is `value ++ write_time`, `write_time` being a `u64`
//! little-endian count of seconds since the UNIX epoch, read from the
//! database's clock when the write entered [`Db::write`](crate::Db::write)
//! (RocksDB's `DBWithTTL` appends a 4-byte time; 8 bytes do not run out in
//! 2106). An entry is expired once `write_time + ttl <= now`: reads treat it
//! as a deletion of its key (it hides every older version), and compactions
//! turn it into a point tombstone (see [`crate::compaction_filter`]).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::batch::{self, EntryKind, WriteBatch};
use crate::error::{Error, Result};

/// Bytes of the write-time stamp at the end of every value of a TTL database.
pub const STAMP_LEN: usize = 8;

/// A wall clock in whole seconds since the UNIX epoch, for TTL expiry and
/// periodic compaction ([`Options::clock`](crate::Options::clock)).
///
/// The engine asks it for the time at every write and read of a TTL
/// database, and when it picks compactions; it must be cheap and thread
/// safe. [`SystemClock`] is the default; a test can install a clock it moves
/// by hand.
///
/// ```
/// use std::sync::{atomic::{AtomicU64, Ordering}, Arc};
/// use std::time::Duration;
/// use sievedb::{Clock, Db, Options};
///
/// struct ManualClock(AtomicU64);
/// impl Clock for ManualClock {
///     fn now_secs(&self) -> u64 { self.0.load(Ordering::Relaxed) }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let clock = Arc::new(ManualClock(AtomicU64::new(1_000)));
/// let opts = Options::builder().ttl(Duration::from_secs(60)).clock(clock.clone()).build();
/// let db = Db::open(dir.path(), opts)?;
/// db.put("session", "alice")?;
/// clock.0.store(1_059, Ordering::Relaxed);
/// assert!(db.get("session")?.is_some());
/// clock.0.store(1_060, Ordering::Relaxed); // 60 s after the write
/// assert_eq!(db.get("session")?, None);
/// # Ok(()) }
/// ```
pub trait Clock: Send + Sync {
    /// Seconds since 1970-01-01 00:00:00 UTC.
    fn now_secs(&self) -> u64;
}

/// The operating system's wall clock ([`SystemTime::now`]); a time before
/// the epoch reads as 0.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use std::time::{SystemTime, UNIX_EPOCH};
/// use sievedb::{Clock, Options, SystemClock};
///
/// let now = SystemClock.now_secs();
/// assert!(now.abs_diff(SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs()) <= 1);
/// let opts = Options::builder().clock(Arc::new(SystemClock)).build(); // as the default
/// assert!(opts.clock.now_secs() >= now);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_secs(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }
}

impl std::fmt::Debug for dyn Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Clock({}s)", self.now_secs())
    }
}

/// The default clock of [`Options`](crate::Options): [`SystemClock`].
pub(crate) fn system_clock() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}

/// Whole seconds of a TTL or period (rounded down; at least 1 once validated).
pub(crate) fn secs(d: Duration) -> u64 {
    d.as_secs()
}

/// `value ++ write_time` (little-endian seconds).
pub fn stamp(value: &[u8], write_time: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(value.len() + STAMP_LEN);
    v.extend_from_slice(value);
    v.extend_from_slice(&write_time.to_le_bytes());
    v
}

/// Splits a stamped value into the user's value and its write time; `None`
/// when it is shorter than a stamp.
pub fn split(stamped: &[u8]) -> Option<(&[u8], u64)> {
    let cut = stamped.len().checked_sub(STAMP_LEN)?;
    let (value, time) = stamped.split_at(cut);
    #[expect(
        clippy::expect_used,
        reason = "`split_at(len - STAMP_LEN)` leaves STAMP_LEN bytes"
    )]
    let time = u64::from_le_bytes(time.try_into().expect("STAMP_LEN bytes"));
    Some((value, time))
}

/// Whether an entry written at `write_time` has expired at `now` under `ttl`
/// seconds (`write_time + ttl <= now`, saturating).
pub fn is_expired(write_time: u64, ttl: u64, now: u64) -> bool {
    write_time.saturating_add(ttl) <= now
}

/// The expiry rule of one read: its time and the database's TTL.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Expiry {
    /// The read's time (seconds since the epoch), taken once per read or
    /// iterator.
    pub now: u64,
    /// The TTL in seconds.
    pub ttl: u64,
}

impl Expiry {
    /// The user's value of a stamped value, or `None` if it expired. A value
    /// too short to hold a stamp is [`Error::Corruption`] (of the database
    /// directory's data: the reader does not know the file).
    pub fn live<'a>(&self, stamped: &'a [u8]) -> Result<Option<&'a [u8]>> {
        let (value, time) = split(stamped).ok_or_else(short_value)?;
        Ok((!is_expired(time, self.ttl, self.now)).then_some(value))
    }

    /// `stamped` without its stamp (which [`live`](Self::live) checked).
    pub fn strip(stamped: &[u8]) -> &[u8] {
        &stamped[..stamped.len().saturating_sub(STAMP_LEN)]
    }
}

/// The error for a value of a TTL database without room for its stamp.
pub(crate) fn short_value() -> Error {
    Error::corruption(
        "",
        format!("a value of a TTL database is shorter than its {STAMP_LEN}-byte write-time stamp"),
    )
}

/// `batch` with the value of every put to a keyspace `stamped` selects
/// stamped with `write_time`; everything else unchanged. An invalid batch
/// is refused as it would be unstamped, and so is a merge into a stamped
/// keyspace (operands carry no stamp).
pub(crate) fn stamp_batch(
    mut batch: WriteBatch,
    write_time: u64,
    stamped: impl Fn(u32) -> bool,
) -> Result<WriteBatch> {
    batch.validate()?;
    let owner = batch.owner();
    let stamp_bytes = write_time.to_le_bytes();
    let mut out = WriteBatch::with_capacity(batch.size_in_bytes() + batch.len() * STAMP_LEN);
    let mut value = Vec::new();
    let mut merges = false;
    batch::for_each_entry(batch.encode(0), |e| {
        let ks = e.keyspace;
        match e.kind {
            EntryKind::Put if stamped(ks) => {
                value.clear();
                value.extend_from_slice(e.value);
                value.extend_from_slice(&stamp_bytes);
                out.push_in(owner, ks, 1, e.key, Some(&value));
            }
            EntryKind::Put => out.push_in(owner, ks, 1, e.key, Some(e.value)),
            EntryKind::Delete => out.push_in(owner, ks, 0, e.key, None),
            EntryKind::DeleteRange => out.delete_range_in(owner, ks, e.key..e.value),
            EntryKind::DeleteRangeToEnd => out.delete_range_in(owner, ks, e.key..),
            EntryKind::Merge if stamped(ks) => merges = true,
            EntryKind::Merge => out.push_in(owner, ks, 4, e.key, Some(e.value)),
        }
    })
    .map_err(|d| Error::InvalidArgument(format!("write batch does not decode: {d}")))?;
    if merges {
        return Err(Error::InvalidArgument(
            "merge is not supported in a keyspace with a TTL".into(),
        ));
    }
    out.validate()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_round_trip_and_expire_at_the_boundary() {
        let s = stamp(b"abc", 1_000);
        assert_eq!(s.len(), 3 + STAMP_LEN);
        assert_eq!(&s[3..], &1_000u64.to_le_bytes());
        assert_eq!(split(&s), Some((&b"abc"[..], 1_000)));
        assert_eq!(split(&stamp(b"", 7)), Some((&b""[..], 7)));
        assert_eq!(split(b"short"), None);
        assert!(!is_expired(1_000, 10, 1_009));
        assert!(is_expired(1_000, 10, 1_010));
        assert!(!is_expired(u64::MAX - 1, 10, u64::MAX - 1), "saturates");
        let e = Expiry {
            now: 1_009,
            ttl: 10,
        };
        assert_eq!(e.live(&s).unwrap(), Some(&b"abc"[..]));
        let e = Expiry {
            now: 1_010,
            ttl: 10,
        };
        assert_eq!(e.live(&s).unwrap(), None);
        assert!(matches!(e.live(b"1234567"), Err(Error::Corruption { .. })));
        assert_eq!(Expiry::strip(&s), b"abc");
    }

    #[test]
    fn a_stamped_batch_stamps_puts_only() {
        let mut b = WriteBatch::new();
        b.put(b"k", b"v");
        b.delete(b"d");
        b.delete_range(b"a".as_slice()..b"b".as_slice());
        b.delete_range(b"x".as_slice()..);
        let mut s = stamp_batch(b, 42, |_| true).unwrap();
        let entries = batch::decode(s.encode(5)).unwrap().1;
        let kinds: Vec<_> = entries.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                EntryKind::Put,
                EntryKind::Delete,
                EntryKind::DeleteRange,
                EntryKind::DeleteRangeToEnd
            ]
        );
        assert_eq!(entries[0].value, stamp(b"v", 42).as_slice());
        assert_eq!((entries[2].key, entries[2].value), (&b"a"[..], &b"b"[..]));
        assert_eq!(entries[3].key, b"x");
    }

    #[test]
    fn the_system_clock_is_past_2020() {
        assert!(SystemClock.now_secs() > 1_577_836_800);
    }
}
