//! The model test's filter configurations: blocked and Ribbon filters, Ribbon
//! units in a hybrid tree, filter units in memtables and under a memory
//! budget (one per policy), and prefix extractors.

use sievedb::{
    CompactionStyle, Compression, FilterLayout, FilterPolicy, HashFn, HashSharing, IndexScheme,
    Options, UnitHashing,
};

use super::config::Config;
use crate::run_config;

#[test]
fn model_leveling_blocked_double_memtable_filter() {
    run_config(&Config {
        name: "leveling-blocked-double-memtable-filter",
        style: CompactionStyle::Leveling,
        bits_per_key: 10.0,
        compression: Compression::None,
        filter_hash: None,
        tune: Some(|o| {
            let f = &mut o.filter;
            f.layout = FilterLayout::Blocked;
            f.scheme = IndexScheme::Double;
            f.memtable_filter = true;
        }),
        ttl_keyspace: false,
        seeds: &[71],
    });
}

#[test]
fn model_leveling_ribbon() {
    run_config(&Config {
        name: "leveling-ribbon",
        style: CompactionStyle::Leveling,
        bits_per_key: 7.5,
        compression: Compression::None,
        filter_hash: Some((HashFn::Xxh3, HashSharing::Levels)),
        tune: Some(|o| o.filter.layout = FilterLayout::Ribbon),
        ttl_keyspace: false,
        seeds: &[91],
    });
}

#[test]
fn model_leveling_hybrid_ribbon_units_under_a_budget() {
    run_config(&Config {
        name: "leveling-hybrid-ribbon-units-budget",
        style: CompactionStyle::Leveling,
        bits_per_key: 9.0,
        compression: Compression::None,
        filter_hash: None,
        tune: Some(|o| {
            // Bloom units above level 1, Ribbon units from level 1 down,
            // under a budget of half the bits.
            o.filter.layout = FilterLayout::Units;
            o.filter.units = 3;
            o.filter.ribbon_from_level = Some(1);
            o.filter_memory = sievedb::FilterMemory::BitsPerKey(4.5);
            o.filter_policy = sievedb::FilterPolicy::Elastic;
        }),
        ttl_keyspace: false,
        seeds: &[97],
    });
}

#[test]
fn model_leveling_family_chosen_by_the_budget() {
    run_config(&Config {
        name: "leveling-chosen-family-budget",
        style: CompactionStyle::Leveling,
        bits_per_key: 9.0,
        compression: Compression::None,
        filter_hash: None,
        tune: Some(|o| {
            // Each flush and compaction output gets the family the budget
            // prices cheaper (Bloom or Ribbon units), under a budget of a
            // third of the bits, the files' unit counts differing by family.
            o.filter.layout = FilterLayout::Units;
            o.filter.units = 3;
            o.filter.choose_family = true;
            o.filter_memory = sievedb::FilterMemory::BitsPerKey(3.0);
            o.filter_policy = sievedb::FilterPolicy::Monkey;
        }),
        ttl_keyspace: false,
        seeds: &[103],
    });
}

#[test]
fn model_tiering_units_memtable_filter() {
    run_config(&Config {
        name: "tiering-units-separate-memtable-filter",
        style: CompactionStyle::Tiering,
        bits_per_key: 8.0,
        compression: Compression::None,
        filter_hash: Some((HashFn::City64, HashSharing::Levels)),
        tune: Some(|o| {
            let f = &mut o.filter;
            f.layout = FilterLayout::Units;
            f.units = 4;
            f.unit_hashing = UnitHashing::Separate;
            f.scheme = IndexScheme::EnhancedDouble;
            f.memtable_filter = true;
        }),
        ttl_keyspace: false,
        seeds: &[81],
    });
}

/// Prefix filters under a fixed-length extractor (with a memtable filter)
/// and a capped one (tiering, Ribbon key filters): `prefix()` and
/// `prefix_same_as_start` seeks skip files by their prefix filters, and
/// every answer is the model's.
#[test]
fn model_prefix_extractors() {
    run_config(&Config {
        name: "leveling-fixed-prefix",
        style: CompactionStyle::Leveling,
        bits_per_key: 10.0,
        compression: Compression::None,
        filter_hash: None,
        tune: Some(|o| {
            o.prefix_extractor = Some(std::sync::Arc::new(sievedb::FixedPrefix::new(4)));
            o.filter.memtable_filter = true;
        }),
        ttl_keyspace: false,
        seeds: &[121],
    });
    run_config(&Config {
        name: "tiering-capped-prefix-ribbon",
        style: CompactionStyle::Tiering,
        bits_per_key: 7.0,
        compression: Compression::Lz4,
        filter_hash: Some((HashFn::Xxh3, HashSharing::Levels)),
        tune: Some(|o| {
            o.prefix_extractor = Some(std::sync::Arc::new(sievedb::CappedPrefix::new(3)));
            o.filter.layout = FilterLayout::Ribbon;
        }),
        ttl_keyspace: false,
        seeds: &[122],
    });
}

/// Filter units under a 3 bits/key budget, once per policy: units are
/// loaded, dropped and moved as files are flushed, compacted, read and
/// reopened, and no read answers otherwise than the model.
#[test]
fn model_units_under_a_budget() {
    use crate::common::units_under_a_budget as budget;
    type Tune = fn(&mut Options);
    const POLICIES: [(&str, &[u64], Tune); 5] = [
        ("budget-uniform", &[101], |o| {
            budget(o, FilterPolicy::Uniform)
        }),
        ("budget-monkey", &[102], |o| budget(o, FilterPolicy::Monkey)),
        ("budget-elastic", &[103], |o| {
            budget(o, FilterPolicy::Elastic)
        }),
        ("budget-elastic-uniform", &[104], |o| {
            budget(o, FilterPolicy::ElasticUniform)
        }),
        ("budget-skew-at-write", &[105], |o| {
            budget(o, FilterPolicy::SkewAtWrite)
        }),
    ];
    for (name, policy_seeds, tune) in POLICIES {
        run_config(&Config {
            name,
            style: CompactionStyle::Leveling,
            bits_per_key: 12.0,
            compression: Compression::None,
            filter_hash: None,
            tune: Some(tune),
            ttl_keyspace: false,
            seeds: policy_seeds,
        });
    }
}

#[test]
fn model_leveling_partitioned_filters_under_a_budget() {
    run_config(&Config {
        name: "leveling-partitioned-blocked-budget",
        style: CompactionStyle::Leveling,
        bits_per_key: 10.0,
        compression: Compression::None,
        filter_hash: None,
        tune: Some(|o| {
            // Blocked Bloom partitions of 256 bytes above level 1, Ribbon
            // partitions from level 1 down, under a budget of half the bits;
            // the index in partitions of 256 bytes too.
            o.filter.layout = FilterLayout::Blocked;
            o.filter.partition_bytes = Some(256);
            o.index_partition_bytes = Some(256);
            o.filter.ribbon_from_level = Some(1);
            o.filter_memory = sievedb::FilterMemory::BitsPerKey(5.0);
            o.filter_policy = sievedb::FilterPolicy::Elastic;
        }),
        ttl_keyspace: false,
        seeds: &[101],
    });
}
