//! What a bulk load wrote: per level and in total ([`BulkLoadReport`]).

use crate::key::SeqNo;
use crate::options::Options;

use super::LevelShape;

/// What one level of a bulk load holds.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BulkLevel {
    /// The level (1-based; level 0 is always empty).
    pub level: usize,
    /// SST files written.
    pub files: usize,
    /// Entries.
    pub entries: u64,
    /// Bytes of its SST files.
    pub bytes: u64,
    /// Smallest user key.
    pub smallest: Vec<u8>,
    /// Largest user key.
    pub largest: Vec<u8>,
}

/// The outcome of a bulk load.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BulkLoadReport {
    /// The shape that was loaded.
    pub shape: LevelShape,
    /// Entries loaded.
    pub entries: u64,
    /// Bytes of the user keys and values.
    pub user_bytes: u64,
    /// `last_sequence` recorded in the MANIFEST (= `entries`).
    pub last_sequence: SeqNo,
    /// Levels `1..=shape.levels`, in order.
    pub levels: Vec<BulkLevel>,
    /// Wall-clock seconds from the start of the load to `CURRENT` being durable.
    pub seconds: f64,
}

impl BulkLoadReport {
    /// Bytes of all SST files written.
    pub fn total_bytes(&self) -> u64 {
        self.levels.iter().map(|l| l.bytes).sum()
    }

    /// Number of SST files written.
    pub fn total_files(&self) -> usize {
        self.levels.iter().map(|l| l.files).sum()
    }

    /// The smallest `level1_size` under which no loaded level exceeds its
    /// capacity `level1_size · T^(i-1)` (with `size_ratio = T`): opened with
    /// it, the database starts with every level full but none over, so
    /// background compaction leaves the shape alone until new writes arrive.
    pub fn level1_size(&self) -> u64 {
        let t = self.shape.size_ratio as u64;
        let mut scale = 1u64;
        let mut need = 1u64;
        for l in &self.levels {
            need = need.max(l.bytes / scale + 1);
            scale = scale.saturating_mul(t);
        }
        need
    }

    /// `base` with `size_ratio`, `level1_size` and (if needed) `max_levels`
    /// set so that the loaded shape is what the compaction policy expects
    /// (see [`level1_size`](Self::level1_size)).
    pub fn open_options(&self, base: Options) -> Options {
        Options {
            size_ratio: self.shape.size_ratio,
            level1_size: self.level1_size(),
            max_levels: base.max_levels.max(self.shape.levels + 1),
            ..base
        }
    }

    /// Megabytes (10^6 bytes) of user data loaded per second.
    pub fn mb_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.user_bytes as f64 / 1e6 / self.seconds
        } else {
            0.0
        }
    }
}
