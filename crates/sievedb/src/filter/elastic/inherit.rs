//! Hotness inheritance: when compaction replaces input files by output
//! files, the inputs' access counts are handed to the outputs that now hold
//! their keys, so a hot key range stays hot across a compaction.

/// A compaction input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InheritInput<'a> {
    /// Its (decayed) access count.
    pub hotness: f64,
    /// Keys in it (informational: the split is by the outputs' entries).
    pub entries: u64,
    /// Smallest user key.
    pub smallest: &'a [u8],
    /// Largest user key.
    pub largest: &'a [u8],
}

/// A compaction output.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InheritOutput<'a> {
    /// Keys in it.
    pub entries: u64,
    /// Smallest user key.
    pub smallest: &'a [u8],
    /// Largest user key.
    pub largest: &'a [u8],
}

/// Whether the inclusive user-key ranges `[a0, a1]` and `[b0, b1]` meet
/// (bytewise order, the engine's).
fn overlaps(a0: &[u8], a1: &[u8], b0: &[u8], b1: &[u8]) -> bool {
    a0 <= b1 && b0 <= a1
}

/// The hotness each output inherits, in output order: every input's count
/// is split over the outputs whose user-key range overlaps the input's,
/// proportionally to those outputs' entries (equally if they all have none).
/// An input overlapping no output is dropped; negative or non-finite counts
/// count as 0. So when the outputs cover the inputs, the total is conserved.
pub fn inherit(inputs: &[InheritInput<'_>], outputs: &[InheritOutput<'_>]) -> Vec<f64> {
    let mut out = vec![0.0; outputs.len()];
    for input in inputs {
        let h = if input.hotness.is_finite() && input.hotness > 0.0 {
            input.hotness
        } else {
            continue;
        };
        let hits: Vec<usize> = outputs
            .iter()
            .enumerate()
            .filter(|(_, o)| overlaps(input.smallest, input.largest, o.smallest, o.largest))
            .map(|(i, _)| i)
            .collect();
        if hits.is_empty() {
            continue;
        }
        let total: u64 = hits.iter().map(|&i| outputs[i].entries).sum();
        for &i in &hits {
            let share = if total == 0 {
                1.0 / hits.len() as f64
            } else {
                outputs[i].entries as f64 / total as f64
            };
            out[i] += h * share;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input<'a>(hotness: f64, s: &'a [u8], l: &'a [u8]) -> InheritInput<'a> {
        InheritInput {
            hotness,
            entries: 10,
            smallest: s,
            largest: l,
        }
    }
    fn output<'a>(entries: u64, s: &'a [u8], l: &'a [u8]) -> InheritOutput<'a> {
        InheritOutput {
            entries,
            smallest: s,
            largest: l,
        }
    }

    #[test]
    fn inherit_conserves_when_outputs_cover() {
        let inputs = [input(100.0, b"a", b"m"), input(30.0, b"k", b"z")];
        let outputs = [
            output(10, b"a", b"f"),
            output(30, b"g", b"p"),
            output(20, b"q", b"z"),
        ];
        let got = inherit(&inputs, &outputs);
        let sum: f64 = got.iter().sum();
        assert!((sum - 130.0).abs() < 1e-9, "{got:?}");
        // Input 1 over outputs 0 and 1 (10:30); input 2 over 1 and 2 (30:20).
        assert!((got[0] - 25.0).abs() < 1e-9);
        assert!((got[1] - (75.0 + 18.0)).abs() < 1e-9);
        assert!((got[2] - 12.0).abs() < 1e-9);
    }

    #[test]
    fn inherit_is_proportional_to_entries() {
        let inputs = [input(60.0, b"a", b"z")];
        let outputs = [
            output(1, b"a", b"c"),
            output(2, b"d", b"f"),
            output(3, b"g", b"z"),
        ];
        let got = inherit(&inputs, &outputs);
        assert_eq!(got, vec![10.0, 20.0, 30.0]);
    }

    #[test]
    fn inherit_drops_disjoint_and_bad_inputs() {
        let inputs = [
            input(5.0, b"x", b"y"),
            input(f64::NAN, b"a", b"b"),
            input(-1.0, b"a", b"b"),
            input(4.0, b"b", b"b"),
        ];
        let outputs = [output(0, b"a", b"b"), output(0, b"b", b"c")];
        // Touching ranges overlap (bounds are inclusive); no entries: equal split.
        assert_eq!(inherit(&inputs, &outputs), vec![2.0, 2.0]);
        assert!(inherit(&inputs, &[]).is_empty());
    }
}
