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
    match (stamped, opts.ttl.is_some()) {
        (true, false) => Err(Error::InvalidArgument(format!(
            "database {} was created with a TTL (every value carries a write-time stamp): \
             open it with Options::ttl set",
            dir.display()
        ))),
        (false, true) => Err(Error::InvalidArgument(format!(
            "database {} was created without a TTL (its values carry no write-time stamp): \
             open it without Options::ttl, or load its data into a new database opened with one",
            dir.display()
        ))),
        _ => Ok(()),
    }
}

impl DbInner {
    /// The expiry rule of a read starting now (`None`: no TTL).
    pub(super) fn expiry(&self) -> Option<Expiry> {
        self.opts.ttl.map(|d| Expiry {
            now: self.opts.clock.now_secs(),
            ttl: ttl::secs(d),
        })
    }

    /// The value a point lookup found, as the user sees it: without its
    /// stamp, or `None` if it expired (an expired newest version is a
    /// deletion: it hides the older ones, which the lookup never reads).
    pub(super) fn unstamp(&self, value: Vec<u8>) -> Result<Option<Vec<u8>>> {
        let Some(e) = self.expiry() else {
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

    /// `batch` as it is logged: with every put's value stamped with the
    /// clock's time under a TTL, else unchanged.
    pub(super) fn stamp_writes(&self, batch: WriteBatch) -> Result<WriteBatch> {
        match self.opts.ttl {
            Some(_) => ttl::stamp_batch(batch, self.opts.clock.now_secs()),
            None => Ok(batch),
        }
    }

    /// The filter hook of a compaction starting now (`None`: no compaction
    /// filter and no TTL): it spares what the newest live snapshot sees.
    pub(super) fn compaction_filter(&self) -> Option<ActiveFilter> {
        let largest_snapshot = self.snapshots.lock().keys().next_back().copied();
        ActiveFilter::new(&self.opts, largest_snapshot, Some(self.counters.clone()))
    }
}
