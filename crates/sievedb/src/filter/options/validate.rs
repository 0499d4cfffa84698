//! The checks of [`FilterOptions`]: ranges, and settings that exclude each
//! other.

use super::{FilterLayout, FilterOptions, MAX_PROBES, MAX_UNITS};
use crate::error::{Error, Result};

impl FilterOptions {
    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=10_000.0).contains(&self.bits_per_key) || self.bits_per_key.is_nan() {
            return Err(Error::InvalidArgument(
                "bits_per_key must be between 0 and 10000".into(),
            ));
        }
        if let Some(k) = self.num_probes {
            if !(1..=MAX_PROBES).contains(&k) {
                return Err(Error::InvalidArgument(format!(
                    "num_probes must be between 1 and {MAX_PROBES}"
                )));
            }
        }
        if !(1..=MAX_UNITS).contains(&self.units) {
            return Err(Error::InvalidArgument(format!(
                "units must be between 1 and {MAX_UNITS}"
            )));
        }
        if let Some(b) = self.partition_bytes {
            if !crate::filter::partitioned::PARTITION_BYTES_RANGE.contains(&b) {
                return Err(Error::InvalidArgument(format!(
                    "partition_bytes must be between 64 and {} (got {b})",
                    64 << 20
                )));
            }
            if self.layout.is_units() {
                return Err(Error::InvalidArgument(format!(
                    "partitioned filters need a one-unit layout (bloom, blocked, ribbon), not {}",
                    self.layout
                )));
            }
        }
        if !(self.false_positive_cost.is_finite() && self.false_positive_cost >= 0.0) {
            return Err(Error::InvalidArgument(format!(
                "false_positive_cost must be finite and at least 0 (got {})",
                self.false_positive_cost
            )));
        }
        if self.choose_family && self.ribbon_from_level.is_some() {
            return Err(Error::InvalidArgument(
                "choose_family and ribbon_from_level both choose a file's family: set one".into(),
            ));
        }
        if self.layout == FilterLayout::Units {
            if let Some(k) = self.num_probes {
                if k * self.units > MAX_PROBES {
                    return Err(Error::InvalidArgument(format!(
                        "num_probes × units must be at most {MAX_PROBES} (got {k} × {})",
                        self.units
                    )));
                }
            }
        }
        Ok(())
    }
}
