//! The policies that divide filter memory among files, by name.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// How filter memory is divided among files under a budget.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, FilterMemory, FilterPolicy, Options};
///
/// let policy: FilterPolicy = "monkey".parse()?;
/// assert!(!policy.uses_counts()); // planned from the tree's shape alone
/// assert!(FilterPolicy::Elastic.uses_counts()); // units follow the lookups
/// let opts = Options::builder()
///     .filter_memory(FilterMemory::BitsPerKey(5.0)) // a policy needs a budget
///     .filter_policy(policy)
///     .build();
/// let db = Db::open(dir.path(), opts)?;
/// assert_eq!(db.options().filter_policy, FilterPolicy::Monkey);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum FilterPolicy {
    /// Every file the same number of units.
    #[default]
    Uniform,
    /// Monkey: a run's false-positive rate proportional to its entries.
    Monkey,
    /// ElasticBF's multi-queue started from Monkey: a tree opens with
    /// Monkey's plan of all its files (at least one unit each) and a new
    /// file starts at Monkey's count for its run, with Monkey's prior as its
    /// count; then units move at run time from expired files to accessed
    /// ones. Named `elastic-monkey` in builds up to 43fe80f (still
    /// accepted).
    Elastic,
    /// ElasticBF as published: every new file starts at `initial_units`
    /// (the prototype's 2) with no prior count, then the multi-queue. Named
    /// `elastic` in builds up to 43fe80f.
    ElasticUniform,
    /// A file's units are chosen once when it is written, from its hotness.
    SkewAtWrite,
}

/// What `elastic` was called in builds up to 43fe80f. It then took the name
/// `elastic` (it read less than ElasticBF's own start in every workload
/// measured), and ElasticBF's own start became `elastic-uniform`; scripts
/// that use the old name still get the same policy.
const OLD_ELASTIC_MONKEY: &str = "elastic-monkey";

impl FilterPolicy {
    /// Every policy, in declaration order.
    pub const ALL: &'static [FilterPolicy] = &[
        FilterPolicy::Uniform,
        FilterPolicy::Monkey,
        FilterPolicy::Elastic,
        FilterPolicy::ElasticUniform,
        FilterPolicy::SkewAtWrite,
    ];

    /// The name used by `Display` and `FromStr`.
    pub fn name(self) -> &'static str {
        match self {
            FilterPolicy::Uniform => "uniform",
            FilterPolicy::Monkey => "monkey",
            FilterPolicy::Elastic => "elastic",
            FilterPolicy::ElasticUniform => "elastic-uniform",
            FilterPolicy::SkewAtWrite => "skew-at-write",
        }
    }

    /// Whether units move at run time through the multi-queue.
    pub(super) fn is_elastic(self) -> bool {
        matches!(self, FilterPolicy::ElasticUniform | FilterPolicy::Elastic)
    }

    /// Whether the policy plans by access counts (and so keeps them across
    /// restarts in the `HOTNESS` file): uniform and monkey never read them.
    pub fn uses_counts(self) -> bool {
        !self.is_planned()
    }

    /// Whether the whole plan is recomputed when the tree's shape changes.
    pub(super) fn is_planned(self) -> bool {
        matches!(self, FilterPolicy::Uniform | FilterPolicy::Monkey)
    }
}

impl fmt::Display for FilterPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FilterPolicy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        if let Some(&p) = Self::ALL.iter().find(|p| s.eq_ignore_ascii_case(p.name())) {
            return Ok(p);
        }
        if s.eq_ignore_ascii_case(OLD_ELASTIC_MONKEY) {
            return Ok(FilterPolicy::Elastic);
        }
        let names: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
        Err(Error::InvalidArgument(format!(
            "unknown filter policy '{s}' (expected one of: {})",
            names.join(", ")
        )))
    }
}
