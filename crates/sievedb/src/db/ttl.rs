//! The database's side of TTL and compaction filters: the TTL marker check
//! at open, write-time stamps on writes, expiry on reads, and the filter
//! hook each compaction gets (the rules are in `crate::ttl` and
//! `crate::compaction_filter`).

use super::*;
use crate::compaction::ActiveFilter;
use crate::ttl::{self, Expiry};

/// How often an idle compaction thread looks for files periodic compaction
/// has made due (files age without any write to wake it).
pub(super) const PERIODIC_CHECK: Duration = Duration::from_secs(10);

/// Refuses to open a database whose values are stamped (`stamped`, from its
/// MANIFEST) without a TTL, or one whose values are not with a TTL: either
/// way a read would mistake user data for a stamp or the other way round.
pub(super) fn check_marker(dir: &Path, stamped: bool, opts: &Options) -> Result<()> {
    check_keyspace_marker(
        &format!("database {}", dir.display()),
        "Options",
        stamped,
        opts,
    )
}

/// [`check_marker`] for `what` (a database or a keyspace), whose TTL is set
/// in `setting` (`Options` or `KeyspaceOptions`).
pub(super) fn check_keyspace_marker(
    what: &str,
    setting: &str,
    stamped: bool,
    opts: &Options,
) -> Result<()> {
    match (stamped, opts.ttl.is_some()) {
        (true, false) => Err(Error::InvalidArgument(format!(
            "{what} was created with a TTL (every value carries a write-time stamp): \
             open it with {setting}::ttl set",
        ))),
        (false, true) => Err(Error::InvalidArgument(format!(
            "{what} was created without a TTL (its values carry no write-time stamp): \
             open it without {setting}::ttl, or load its data into a new one opened with one",
        ))),
        _ => Ok(()),
    }
}

/// The expiry rule under `opts` of a read starting now (`None`: no TTL).
pub(super) fn expiry(opts: &Options) -> Option<Expiry> {
    opts.ttl.map(|d| Expiry {
        now: opts.clock.now_secs(),
        ttl: ttl::secs(d),
    })
}

impl DbInner {
    /// The value a point lookup found, as the user sees it: without its
    /// stamp, or `None` if it expired (an expired newest version is a
    /// deletion: it hides the older ones, which the lookup never reads).
    pub(super) fn unstamp(&self, opts: &Options, value: Vec<u8>) -> Result<Option<Vec<u8>>> {
        let Some(e) = expiry(opts) else {
            return Ok(Some(value));
        };
        let live = e.live(&value).map_err(|_| self.short_value())?.is_some();
        Ok(live.then(|| {
            let mut v = value;
            v.truncate(v.len() - ttl::STAMP_LEN);
            v
        }))
    }

    /// A value without room for its stamp, named by the database directory.
    fn short_value(&self) -> Error {
        Error::corruption(
            &self.dir,
            format!(
                "a value is shorter than its {}-byte TTL write-time stamp",
                ttl::STAMP_LEN
            ),
        )
    }

    /// `batch` as it is logged: the value of every put to a keyspace with a
    /// TTL stamped with the clock's time, else unchanged.
    pub(super) fn stamp_writes(&self, batch: WriteBatch) -> Result<WriteBatch> {
        let default_ttl = self.opts.ttl.is_some();
        if batch.keyspaces().is_empty() {
            return match default_ttl {
                true => ttl::stamp_batch(batch, self.opts.clock.now_secs(), |_| true),
                false => Ok(batch),
            };
        }
        let stamped: std::collections::HashMap<u32, bool> = {
            let trees = self.trees.read();
            batch
                .keyspaces()
                .iter()
                .map(|id| (*id, trees.get(id).is_some_and(|t| t.opts().ttl.is_some())))
                .collect()
        };
        if !default_ttl && !stamped.values().any(|&s| s) {
            return Ok(batch);
        }
        let now = self.opts.clock.now_secs();
        ttl::stamp_batch(batch, now, |ks| match ks {
            0 => default_ttl,
            ks => stamped.get(&ks).copied().unwrap_or(false),
        })
    }

    /// The filter hook of a compaction of a keyspace under `opts` starting
    /// now (`None`: no compaction filter and no TTL): it spares what the
    /// newest live snapshot sees.
    pub(super) fn compaction_filter(&self, opts: &Options) -> Option<ActiveFilter> {
        let largest_snapshot = self.snapshots.lock().keys().next_back().copied();
        ActiveFilter::new(opts, largest_snapshot, Some(self.counters.clone()))
    }
}
