//! The shape of a bulk-loaded tree ([`LevelShape`]) and the smooth weighted
//! round robin that deals stream positions to its levels.

use crate::error::{Error, Result};

/// Largest total weight `1 + T + … + T^(L-1)` a shape may have.
const MAX_TOTAL_WEIGHT: u64 = 1 << 60;

/// The shape of a bulk-loaded tree: `levels` full levels (1..=levels) with
/// size ratio `size_ratio` between adjacent levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LevelShape {
    /// Number of levels below L0 that receive data (at least 1).
    pub levels: usize,
    /// Size ratio T between adjacent levels (at least 2).
    pub size_ratio: usize,
}

impl LevelShape {
    /// A shape of `levels` levels at size ratio `size_ratio`, checked.
    pub fn new(levels: usize, size_ratio: usize) -> Result<Self> {
        let s = LevelShape { levels, size_ratio };
        s.validate()?;
        Ok(s)
    }

    /// Checks the parameters: `levels >= 1`, `size_ratio >= 2`, and a total
    /// weight `1 + T + … + T^(L-1)` below 2^60.
    pub fn validate(&self) -> Result<()> {
        if self.levels == 0 {
            return Err(Error::InvalidArgument(
                "bulk load shape needs at least 1 level".into(),
            ));
        }
        if self.size_ratio < 2 {
            return Err(Error::InvalidArgument(format!(
                "bulk load size ratio must be at least 2, not {}",
                self.size_ratio
            )));
        }
        self.weights().map(|_| ())
    }

    /// Weight `T^(i-1)` of each level `i` in `1..=levels`, or an error when
    /// their sum exceeds the supported range.
    fn weights(&self) -> Result<Vec<u64>> {
        let too_big = || {
            Error::InvalidArgument(format!(
                "bulk load shape of {} levels at size ratio {} is too large \
                 (1 + T + ... + T^(L-1) must stay below 2^60)",
                self.levels, self.size_ratio
            ))
        };
        let mut w = Vec::with_capacity(self.levels);
        let mut cur = 1u64;
        let mut total = 0u64;
        for i in 0..self.levels {
            if i > 0 {
                cur = cur
                    .checked_mul(self.size_ratio as u64)
                    .ok_or_else(too_big)?;
            }
            total = total.checked_add(cur).ok_or_else(too_big)?;
            if total > MAX_TOTAL_WEIGHT {
                return Err(too_big());
            }
            w.push(cur);
        }
        Ok(w)
    }

    /// `1 + T + … + T^(L-1)`: the period of the level assignment. Level 1
    /// receives one entry out of every `total_weight()`.
    pub fn total_weight(&self) -> Result<u64> {
        Ok(self.weights()?.iter().sum())
    }

    /// The fraction of the entries each level `1..=levels` receives.
    pub fn shares(&self) -> Result<Vec<f64>> {
        let w = self.weights()?;
        let total: u64 = w.iter().sum();
        Ok(w.iter().map(|&x| x as f64 / total as f64).collect())
    }
}

/// Deals stream positions to levels: a smooth weighted round robin in which
/// every level earns its weight per entry, and the level with the most credit
/// takes the entry and pays the total weight. Over every `total` consecutive
/// entries level `i` gets exactly `weight[i]`, evenly spread. Ties go to the
/// deeper (heavier) level.
///
/// [`BulkWriter`](super::BulkWriter) deals its entries with it; a loader of
/// another engine can deal the same stream the same way, to build that
/// engine's tree in the same shape.
#[derive(Clone, Debug)]
pub struct LevelPicker {
    weights: Vec<i64>,
    credit: Vec<i64>,
    total: i64,
}

impl LevelPicker {
    /// A picker for `shape` ([`Error::InvalidArgument`] if the shape is not valid).
    pub fn new(shape: &LevelShape) -> Result<Self> {
        // A shape's fields are public: one of no level would leave `next`
        // nothing to pick.
        shape.validate()?;
        #[expect(
            clippy::cast_possible_wrap,
            reason = "`weights` keeps their sum below 2^60, so each fits in an i64"
        )]
        let weights: Vec<i64> = shape.weights()?.iter().map(|&w| w as i64).collect();
        Ok(LevelPicker {
            credit: vec![0; weights.len()],
            total: weights.iter().sum(),
            weights,
        })
    }

    /// The index (0 = level 1) of the level that takes the next entry.
    #[allow(clippy::should_implement_trait)] // never ends: not an Iterator
    pub fn next(&mut self) -> usize {
        let mut best = 0;
        let mut best_credit = i64::MIN;
        for i in (0..self.weights.len()).rev() {
            self.credit[i] += self.weights[i];
            if self.credit[i] > best_credit {
                best_credit = self.credit[i];
                best = i;
            }
        }
        self.credit[best] -= self.total;
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bulk::{BulkLevel, BulkLoadReport};
    use crate::options::Options;

    fn assign(shape: LevelShape, n: u64) -> Vec<usize> {
        let mut p = LevelPicker::new(&shape).unwrap();
        (0..n).map(|_| p.next()).collect()
    }

    #[test]
    fn shape_validation() {
        assert!(LevelShape::new(0, 10).is_err());
        assert!(LevelShape::new(3, 1).is_err());
        assert!(LevelShape::new(14, 2).is_ok());
        assert!(LevelShape::new(18, 10).is_ok());
        assert!(LevelShape::new(40, 10).is_err());
        assert_eq!(LevelShape::new(3, 10).unwrap().total_weight().unwrap(), 111);
        let s = LevelShape::new(2, 4).unwrap().shares().unwrap();
        assert!((s[0] - 0.2).abs() < 1e-12 && (s[1] - 0.8).abs() < 1e-12);
    }

    #[test]
    fn round_robin_is_exact_per_period_and_interleaved() {
        let shape = LevelShape::new(4, 3).unwrap();
        let w = shape.total_weight().unwrap(); // 40
        let a = assign(shape, 3 * w);
        for period in a.chunks(w as usize) {
            let counts: Vec<usize> = (0..4)
                .map(|l| period.iter().filter(|&&x| x == l).count())
                .collect();
            assert_eq!(counts, vec![1, 3, 9, 27]);
        }
        // The deepest level never waits long: its gaps are at most 2.
        let deep: Vec<usize> = (0..a.len()).filter(|&i| a[i] == 3).collect();
        assert!(deep.windows(2).all(|p| p[1] - p[0] <= 2));
    }

    #[test]
    fn picker_refuses_a_shape_built_by_hand_without_levels() {
        let shape = LevelShape {
            levels: 0,
            size_ratio: 10,
        };
        assert!(LevelPicker::new(&shape).is_err());
    }

    #[test]
    fn level1_size_keeps_every_level_under_capacity() {
        let r = BulkLoadReport {
            shape: LevelShape::new(3, 10).unwrap(),
            entries: 0,
            user_bytes: 0,
            last_sequence: 0,
            levels: [1000u64, 10_500, 99_000]
                .iter()
                .enumerate()
                .map(|(i, &b)| BulkLevel {
                    level: i + 1,
                    bytes: b,
                    ..BulkLevel::default()
                })
                .collect(),
            seconds: 0.0,
        };
        let l1 = r.level1_size();
        assert_eq!(l1, 1051);
        let o = r.open_options(Options::default());
        for lv in &r.levels {
            assert!(lv.bytes < o.level_capacity(lv.level));
        }
        assert_eq!(o.size_ratio, 10);
    }
}
