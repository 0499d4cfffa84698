//! The compaction-filter hook of a merge ([`ActiveFilter`]): the TTL filter
//! (expired entries become tombstones) and the user's
//! [`CompactionFilter`], TTL first, applied to the entries the rules of
//! [`crate::compaction_filter`] select.

use std::sync::Arc;

use crate::compaction_filter::{CompactionFilter, Decision};
use crate::error::{Error, Result};
use crate::key::{Kind, ParsedKey, SeqNo};
use crate::options::Options;
use crate::stats::{bump, Counters};
use crate::ttl;

/// The filters of one compaction, with what they need to know.
pub struct ActiveFilter {
    user: Option<Arc<dyn CompactionFilter>>,
    /// `(ttl seconds, now)`: entries written at or before `now - ttl` expire.
    ttl: Option<(u64, u64)>,
    /// The newest live snapshot when the compaction started: entries at or
    /// below it are never filtered. `None`: no snapshot.
    largest_snapshot: Option<SeqNo>,
    /// Where removals and changes are counted.
    counters: Option<Arc<Counters>>,
}

/// What the hook made of one entry.
#[derive(Debug, PartialEq, Eq)]
pub enum Filtered {
    /// Write the entry as it is.
    Keep,
    /// Write the entry's key with this value.
    Value(Vec<u8>),
    /// Write a point tombstone at the entry's sequence number instead.
    Tombstone,
}

impl ActiveFilter {
    /// The filters `opts` call for (`None`: no filter and no TTL), reading
    /// the clock once: one compaction expires entries as of its start.
    /// `counters`: where removals and changes are counted.
    pub fn new(
        opts: &Options,
        largest_snapshot: Option<SeqNo>,
        counters: Option<Arc<Counters>>,
    ) -> Option<ActiveFilter> {
        let ttl = opts.ttl.map(|d| (ttl::secs(d), opts.clock.now_secs()));
        if ttl.is_none() && opts.compaction_filter.is_none() {
            return None;
        }
        Some(ActiveFilter {
            user: opts.compaction_filter.clone(),
            ttl,
            largest_snapshot,
            counters,
        })
    }

    /// Whether the hook applies to `p`, the newest entry of its key in the
    /// input (the caller checks that): a put no snapshot sees.
    pub fn applies(&self, p: &ParsedKey<'_>) -> bool {
        p.kind == Kind::Put as u8 && self.largest_snapshot.is_none_or(|s| p.seq > s)
    }

    /// Runs the TTL check then the user's filter on `p` = `value`, written
    /// into `level`. A value of a TTL database without its stamp is
    /// [`Error::Corruption`]; a panic of the user's filter is
    /// [`Error::Poisoned`] (the compaction fails, nothing is written).
    pub fn apply(&self, level: usize, p: &ParsedKey<'_>, value: &[u8]) -> Result<Filtered> {
        let (user_value, stamp) = match self.ttl {
            Some((ttl_secs, now)) => {
                let (v, time) = ttl::split(value).ok_or_else(ttl::short_value)?;
                if ttl::is_expired(time, ttl_secs, now) {
                    self.count(true);
                    return Ok(Filtered::Tombstone);
                }
                (v, Some(time))
            }
            None => (value, None),
        };
        let Some(user) = &self.user else {
            return Ok(Filtered::Keep);
        };
        let decision = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            user.filter(level, p.user_key, user_value)
        }))
        .map_err(|_| {
            Error::Poisoned(
                "the compaction filter panicked; the compaction was abandoned and writes are \
                 refused until the database is reopened"
                    .into(),
            )
        })?;
        Ok(match decision {
            Decision::Keep => Filtered::Keep,
            Decision::Remove => {
                self.count(true);
                Filtered::Tombstone
            }
            Decision::ChangeValue(v) => {
                self.count(false);
                Filtered::Value(match stamp {
                    Some(time) => ttl::stamp(&v, time),
                    None => v,
                })
            }
        })
    }

    fn count(&self, removed: bool) {
        if let Some(c) = &self.counters {
            bump(
                if removed {
                    &c.compaction_filter_removed
                } else {
                    &c.compaction_filter_changed
                },
                1,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ttl::Clock;

    struct Fixed(u64);
    impl Clock for Fixed {
        fn now_secs(&self) -> u64 {
            self.0
        }
    }

    struct ByKey;
    impl CompactionFilter for ByKey {
        fn filter(&self, level: usize, key: &[u8], value: &[u8]) -> Decision {
            match key {
                b"rm" => Decision::Remove,
                b"ch" => Decision::ChangeValue([value, &[level as u8]].concat()),
                b"panic" => panic!("user filter panicked"),
                _ => Decision::Keep,
            }
        }
    }

    fn parsed(k: &[u8], seq: SeqNo, kind: Kind) -> ParsedKey<'_> {
        ParsedKey {
            user_key: k,
            seq,
            kind: kind as u8,
        }
    }

    #[test]
    fn user_decisions_map_to_outputs() {
        let opts = Options::builder()
            .compaction_filter(Arc::new(ByKey))
            .build();
        let counters = Arc::new(Counters::new(2));
        let f = ActiveFilter::new(&opts, None, Some(counters.clone())).expect("a filter");
        let put = |k| parsed(k, 5, Kind::Put);
        assert_eq!(f.apply(3, &put(b"keep"), b"v").unwrap(), Filtered::Keep);
        assert_eq!(f.apply(3, &put(b"rm"), b"v").unwrap(), Filtered::Tombstone);
        assert_eq!(
            f.apply(3, &put(b"ch"), b"v").unwrap(),
            Filtered::Value(b"v\x03".to_vec())
        );
        assert!(matches!(
            f.apply(3, &put(b"panic"), b"v"),
            Err(Error::Poisoned(_))
        ));
        let mut s = crate::Stats::default();
        counters.fill(&mut s);
        assert_eq!(
            (s.compaction_filter_removed, s.compaction_filter_changed),
            (1, 1)
        );
        assert!(f.applies(&put(b"k")));
        assert!(!f.applies(&parsed(b"k", 5, Kind::Delete)));
        assert!(ActiveFilter::new(&Options::default(), None, None).is_none());
    }

    #[test]
    fn snapshots_shield_what_they_see() {
        let opts = Options::builder()
            .compaction_filter(Arc::new(ByKey))
            .build();
        let f = ActiveFilter::new(&opts, Some(10), None).expect("a filter");
        assert!(!f.applies(&parsed(b"k", 10, Kind::Put)));
        assert!(f.applies(&parsed(b"k", 11, Kind::Put)));
    }

    #[test]
    fn ttl_runs_first_and_changes_keep_the_write_time() {
        let opts = Options::builder()
            .ttl(std::time::Duration::from_secs(10))
            .clock(Arc::new(Fixed(1_000)))
            .compaction_filter(Arc::new(ByKey))
            .build();
        let f = ActiveFilter::new(&opts, None, None).expect("a filter");
        let put = |k| parsed(k, 5, Kind::Put);
        // Expired: removed before the user's filter (which would panic) runs.
        let old = ttl::stamp(b"v", 990);
        assert_eq!(
            f.apply(1, &put(b"panic"), &old).unwrap(),
            Filtered::Tombstone
        );
        let fresh = ttl::stamp(b"v", 991);
        assert_eq!(f.apply(1, &put(b"keep"), &fresh).unwrap(), Filtered::Keep);
        assert_eq!(
            f.apply(1, &put(b"ch"), &fresh).unwrap(),
            Filtered::Value(ttl::stamp(b"v\x01", 991))
        );
        assert!(matches!(
            f.apply(1, &put(b"keep"), b"short"),
            Err(Error::Corruption { .. })
        ));
    }
}
