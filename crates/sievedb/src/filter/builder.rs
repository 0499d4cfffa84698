//! Building a filter: [`FilterBuilder`] collects the hashes of one SST's keys
//! and sizes, fills and serialises its filter section.

use super::blocked::{self, Line};
use super::digest::RowSource;
use super::hash::{self, seed_at, PRIMARY_SEED, SECONDARY_SEED};
use super::{
    bloom, ribbon, ribbon_units, units, Bits, Filter, FilterLayout, FilterOptions, IndexScheme,
    Params, ALL_UNITS, FILTER_FORMAT_VERSION,
};

/// Accumulates the keys of one SST and serialises its filter section.
///
/// `add` hashes each key once with every seeded hash the configured scheme
/// needs (one 64-bit value for the default rotation scheme); `finish` sizes the
/// filter for the keys added and sets their bits.
pub struct FilterBuilder {
    params: Params,
    bits_per_key: f64,
    rows: Vec<u64>,
    n: usize,
    /// The options' partition size: [`FilterBuilder::shape_for`] then gives
    /// a partitioned filter's shape (a partitioned filter is built by
    /// [`super::partitioned::PartitionedBuilder`]).
    partition_bytes: Option<u64>,
}

impl FilterBuilder {
    /// A builder for `opts` (which the caller has validated; out-of-range
    /// values are clamped here).
    pub fn new(opts: &FilterOptions) -> Self {
        let units = opts.effective_units();
        FilterBuilder {
            params: Params {
                layout: opts.layout,
                scheme: opts.effective_scheme(),
                unit_hashing: opts.effective_unit_hashing(),
                hash: opts.hash,
                secondary: opts.secondary_hash,
                k: opts.probes_per_unit(),
                units,
                unit_bits: 0,
                wpu: 0,
                lines: 0,
                line_fields: blocked::V3_FIELDS_PER_VALUE,
                seed: 0,
                slots: 0,
                frac: 0,
                upper: 0,
                homogeneous: false,
            },
            bits_per_key: if opts.bits_per_key.is_finite() {
                opts.bits_per_key.max(0.0)
            } else {
                0.0
            },
            rows: Vec::new(),
            n: 0,
            partition_bytes: opts.partition_bytes,
        }
    }

    /// Adds a user key (callers add each distinct key once).
    pub fn add(&mut self, user_key: &[u8]) {
        let p = &self.params;
        for i in 0..p.primaries() {
            self.rows.push(hash::hash(
                p.hash,
                user_key,
                seed_at(PRIMARY_SEED, i as u32),
            ));
        }
        for i in 0..p.secondaries() {
            self.rows.push(hash::hash(
                p.secondary,
                user_key,
                seed_at(SECONDARY_SEED, i as u32),
            ));
        }
        self.n += 1;
    }

    /// Number of keys added.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether no key was added.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The parameters of the filter this builder makes for `n` keys.
    fn params_for(&self, n: usize) -> Params {
        let mut p = self.params;
        match p.layout {
            FilterLayout::Blocked => {
                p.lines = blocked::lines_for(n, self.bits_per_key);
                p.unit_bits = p.lines * blocked::LINE_BITS;
            }
            FilterLayout::Ribbon => {
                use ribbon::wide;
                p.slots = wide::slots_for(n, wide::epsilon_for(n));
                let (r, q) = wide::result_bits_for(self.bits_per_key, n, p.slots);
                p.k = r;
                p.frac = q;
                p.upper = wide::upper_blocks(p.slots / wide::BLOCK, q);
                p.unit_bits = 64 * wide::words_for(p.slots / wide::BLOCK, r, q);
                p.homogeneous = true;
            }
            FilterLayout::Ribbon64 => {
                p.k = ribbon::result_bits_for(self.bits_per_key, n);
                p.slots = ribbon::slots_for(n, ribbon::epsilon_for(n));
                p.unit_bits = p.slots * u64::from(p.k);
            }
            FilterLayout::RibbonUnits => {
                p.k = ribbon_units::result_bits(self.bits_per_key, p.units, n);
                p.slots = ribbon_units::slots(n);
                p.unit_bits = ribbon_units::unit_bits(p.slots, p.k);
            }
            _ => {
                let per_unit = self.bits_per_key / f64::from(p.units);
                p.unit_bits = bloom::unit_bits_for(n, per_unit);
            }
        }
        p
    }

    /// The filter these options would build for `n` keys, with no unit
    /// resident and no bits: its shape only (units, unit size, rates), for
    /// planning memory before a file's own filter index is read.
    pub fn shape_for(&self, n: u64) -> Filter {
        let mut p = self.params_for(usize::try_from(n).unwrap_or(usize::MAX));
        p.wpu = (p.unit_bits / 64) as usize;
        if let Some(b) = self.partition_bytes {
            use super::partitioned::{Part, PartitionIndex, PARTITION_UNITS};
            let total = p.unit_bits.div_ceil(8).max(1);
            let count = total.div_ceil(b.max(1));
            let parts = (0..count)
                .map(|_| Part {
                    last: Box::new([]),
                    keys: n / count,
                    offset: 0,
                    size: total.div_ceil(count),
                })
                .collect();
            let index = std::sync::Arc::new(PartitionIndex::new(parts));
            return Filter::partitioned(p, PARTITION_UNITS, n, index);
        }
        Filter {
            version: FILTER_FORMAT_VERSION,
            resident: 0,
            p,
            num_keys: n,
            bits: Bits::empty(p.layout),
        }
    }

    /// Builds the in-memory filter for the keys added so far.
    pub fn build(&self) -> Filter {
        let mut p = self.params_for(self.n);
        if p.layout.is_ribbon_family() {
            let built = if p.layout == FilterLayout::RibbonUnits {
                self.build_ribbon_units(p)
            } else {
                self.build_ribbon(p)
            };
            if let Some(f) = built {
                return f;
            }
            // No seed banded (practically impossible): a Bloom filter (Bloom
            // units) of the same bits per key answers for the file instead.
            let (layout, per_unit) = if p.layout == FilterLayout::RibbonUnits {
                (FilterLayout::Units, self.bits_per_key / f64::from(p.units))
            } else {
                (FilterLayout::Bloom, self.bits_per_key)
            };
            p = FilterBuilder {
                params: Params {
                    layout,
                    k: super::options::optimal_probes(per_unit),
                    ..self.params
                },
                bits_per_key: self.bits_per_key,
                rows: Vec::new(),
                n: 0,
                partition_bytes: None,
            }
            .params_for(self.n);
        }
        let stride = p.primaries() + p.secondaries();
        let bits = match p.layout {
            FilterLayout::Blocked => {
                let mut lines = vec![Line::default(); p.lines as usize];
                let mut op = blocked::Set { lines: &mut lines };
                for row in self.rows.chunks_exact(stride) {
                    let mut src = RowSource {
                        row,
                        primaries: p.primaries(),
                    };
                    blocked::run(&p, &mut src, &mut op);
                }
                Bits::Lines(lines.into())
            }
            _ => {
                p.wpu = (p.unit_bits / 64) as usize;
                let mut words = vec![0u64; p.wpu * p.units as usize];
                let mut op = bloom::Set {
                    words: &mut words,
                    wpu: p.wpu,
                };
                for row in self.rows.chunks_exact(stride) {
                    let mut src = RowSource {
                        row,
                        primaries: p.primaries(),
                    };
                    units::run(&p, &mut src, &mut op, ALL_UNITS);
                }
                Bits::Words(words.into())
            }
        };
        if p.scheme != IndexScheme::Double {
            p.secondary = p.hash;
        }
        p.wpu = (p.unit_bits / 64) as usize;
        Filter {
            version: FILTER_FORMAT_VERSION,
            resident: p.units,
            p,
            num_keys: self.n as u64,
            bits,
        }
    }

    /// The Ribbon filter of the stored digests (one per key), `None` if no
    /// seed banded (the 64-bit layout only: the homogeneous wide one always
    /// bands).
    fn build_ribbon(&self, p: Params) -> Option<Filter> {
        let mut p = p;
        let solved = if p.layout == FilterLayout::Ribbon {
            use ribbon::wide;
            let (solved, r, q) =
                wide::build::solve_homogeneous_within(&self.rows, self.bits_per_key, p.slots);
            p.k = r;
            p.frac = q;
            p.upper = wide::upper_blocks(solved.slots / wide::BLOCK, q);
            (solved.seed, solved.slots, solved.words)
        } else {
            let solved = ribbon::build::solve(&self.rows, p.k, p.slots)?;
            (solved.seed, solved.slots, solved.words)
        };
        let (seed, slots, words) = solved;
        p.scheme = IndexScheme::Rotation;
        p.secondary = p.hash;
        p.seed = seed;
        p.slots = slots;
        p.unit_bits = words.len() as u64 * 64;
        p.wpu = (p.unit_bits / 64) as usize;
        Some(Filter {
            version: FILTER_FORMAT_VERSION,
            resident: 1,
            p,
            num_keys: self.n as u64,
            bits: Bits::Solution(words),
        })
    }

    /// The Ribbon units of the stored digests (one per key), `None` if some
    /// unit banded under no seed.
    fn build_ribbon_units(&self, p: Params) -> Option<Filter> {
        let (slots, words) = ribbon_units::build(&self.rows, p.units, p.k, p.slots)?;
        let mut p = p;
        p.scheme = IndexScheme::Rotation;
        p.secondary = p.hash;
        p.slots = slots;
        p.unit_bits = ribbon_units::unit_bits(slots, p.k);
        p.wpu = (p.unit_bits / 64) as usize;
        Some(Filter {
            version: FILTER_FORMAT_VERSION,
            resident: p.units,
            p,
            num_keys: self.n as u64,
            bits: Bits::Words(words.into()),
        })
    }

    /// Serialises the filter section (format version [`FILTER_FORMAT_VERSION`]).
    pub fn finish(&self) -> Vec<u8> {
        self.build().encode()
    }
}
