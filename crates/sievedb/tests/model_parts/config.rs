//! A configuration of the model test and the options it opens the
//! database with.

use sievedb::{CompactionStyle, Compression, HashFn, HashSharing, Options};

use crate::common::small_options_with;
use crate::model_parts::gen::MERGE_SEP;

/// One configuration: the tree's shape, its filters and the seeds it runs.
pub struct Config {
    pub name: &'static str,
    pub style: CompactionStyle,
    pub bits_per_key: f64,
    pub compression: Compression,
    /// Non-default filter hash function and digest sharing, if any.
    pub filter_hash: Option<(HashFn, HashSharing)>,
    /// Further changes to the options (filter layout, scheme, memtable
    /// filter, filter memory budget).
    pub tune: Option<fn(&mut Options)>,
    pub seeds: &'static [u64],
    /// A TTL keyspace among the named ones; the database then has no merge
    /// operator (a keyspace cannot unset it, and a TTL refuses one), so the
    /// default keyspace gets no merges.
    pub ttl_keyspace: bool,
}

/// The options of `cfg`: small tables and buffers, its filters, and a merge
/// operator unless a keyspace has a TTL.
pub fn options(cfg: &Config) -> Options {
    let mut o = small_options_with(cfg.style, cfg.bits_per_key, cfg.compression);
    if let Some((hash, sharing)) = cfg.filter_hash {
        o.filter.hash = hash;
        o.filter.sharing = sharing;
    }
    if let Some(tune) = cfg.tune {
        tune(&mut o);
    }
    if !cfg.ttl_keyspace {
        o.merge_operator = Some(std::sync::Arc::new(sievedb::merge::Append::new(MERGE_SEP)));
    }
    o
}
