//! The policies that divide filter memory among files, by name.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// How filter memory is divided among files under a budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum FilterPolicy {
    /// Every file the same number of units.
    #[default]
    Uniform,
    /// Monkey: a run's false-positive rate proportional to its entries.
    Monkey,
    /// ElasticBF: units move at run time from expired files to accessed ones.
    Elastic,
    /// ElasticBF whose new files start at Monkey's count, with a Monkey prior.
    ElasticMonkey,
    /// A file's units are chosen once when it is written, from its hotness.
    SkewAtWrite,
}

impl FilterPolicy {
    /// Every policy, in declaration order.
    pub const ALL: &'static [FilterPolicy] = &[
        FilterPolicy::Uniform,
        FilterPolicy::Monkey,
        FilterPolicy::Elastic,
        FilterPolicy::ElasticMonkey,
        FilterPolicy::SkewAtWrite,
    ];

    /// The name used by `Display` and `FromStr`.
    pub fn name(self) -> &'static str {
        match self {
            FilterPolicy::Uniform => "uniform",
            FilterPolicy::Monkey => "monkey",
            FilterPolicy::Elastic => "elastic",
            FilterPolicy::ElasticMonkey => "elastic-monkey",
            FilterPolicy::SkewAtWrite => "skew-at-write",
        }
    }

    /// Whether units move at run time through the multi-queue.
    pub(super) fn is_elastic(self) -> bool {
        matches!(self, FilterPolicy::Elastic | FilterPolicy::ElasticMonkey)
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
        let names: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
        Err(Error::InvalidArgument(format!(
            "unknown filter policy '{s}' (expected one of: {})",
            names.join(", ")
        )))
    }
}
