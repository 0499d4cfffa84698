//! Keyword arguments to [`sievedb::Options`]: every option of
//! `Options::builder()` by its Rust name, and the filter options
//! ([`sievedb::FilterOptions`]) by theirs, flattened (`bits_per_key=10.0`).
//! An unknown name or a value of the wrong type or out of range raises
//! `ValueError` naming the option.

use std::str::FromStr;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use sievedb::{Compression, FilterMemory, KeyspaceOptions, Options};

use crate::errors::bad_option;

/// The names [`from_kwargs`] accepts, for error messages and `sievedb.OPTIONS`.
pub const NAMES: &[&str] = &[
    "create_if_missing",
    "error_if_exists",
    "write_buffer_size",
    "max_immutable_memtables",
    "level0_compaction_trigger",
    "level0_slowdown_trigger",
    "level0_stop_trigger",
    "delayed_write_rate",
    "size_ratio",
    "level1_size",
    "target_file_size",
    "max_levels",
    "block_size",
    "block_restart_interval",
    "index_partition_bytes",
    "block_cache_capacity",
    "max_open_files",
    "table_meta_cache_capacity",
    "compaction_style",
    "background_threads",
    "use_direct_reads",
    "use_mmap_reads",
    "io_delay_ns",
    "compression",
    "compression_per_level",
    "verify_checksums",
    "lookup_breakdown_every",
    "max_bg_error_resume_count",
    "bg_error_resume_retry_interval",
    "wal_recovery",
    "skip_checking_sst_file_sizes_on_db_open",
    "filter_memory",
    "filter_memory_bits_per_key",
    "filter_policy",
    "filter_lifetime",
    "filter_access_sample",
    "initial_units",
    "merge_operator",
    "merge_separator",
    "ttl",
    "periodic_compaction",
    // FilterOptions
    "bits_per_key",
    "hash",
    "secondary_hash",
    "scheme",
    "layout",
    "num_probes",
    "leveldb_probes",
    "units",
    "unit_hashing",
    "sharing",
    "memtable_filter",
    "partition_bytes",
];

fn int<T: TryFrom<i128>>(name: &str, v: &Bound<'_, PyAny>) -> PyResult<T> {
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(bad_option(name, "expected an integer, got a bool"));
    }
    let n: i128 = v
        .extract()
        .map_err(|_| bad_option(name, format!("expected an integer, got {}", type_name(v))))?;
    T::try_from(n).map_err(|_| bad_option(name, format!("{n} is out of range")))
}

fn float(name: &str, v: &Bound<'_, PyAny>) -> PyResult<f64> {
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(bad_option(name, "expected a number, got a bool"));
    }
    let x: f64 = v
        .extract()
        .map_err(|_| bad_option(name, format!("expected a number, got {}", type_name(v))))?;
    if !x.is_finite() {
        return Err(bad_option(name, format!("{x} is not finite")));
    }
    Ok(x)
}

fn flag(name: &str, v: &Bound<'_, PyAny>) -> PyResult<bool> {
    if !v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(bad_option(
            name,
            format!("expected a bool, got {}", type_name(v)),
        ));
    }
    v.extract()
}

fn named<T: FromStr<Err = sievedb::Error>>(name: &str, v: &Bound<'_, PyAny>) -> PyResult<T> {
    let s: String = v
        .extract()
        .map_err(|_| bad_option(name, format!("expected a str, got {}", type_name(v))))?;
    T::from_str(&s).map_err(|e| {
        let msg = crate::errors::pythonic(&e.to_string());
        bad_option(name, msg.trim_start_matches("invalid argument: "))
    })
}

/// `wal_recovery=`: one of the names of the engine's `WalRecovery` modes.
fn wal_recovery(name: &str, v: &Bound<'_, PyAny>) -> PyResult<sievedb::WalRecovery> {
    named(name, v).map_err(|_| {
        bad_option(
            name,
            format!(
                "expected wal_recovery=\"point-in-time\" (the default), \
                 \"tolerate-corrupted-tail\" or \"absolute-consistency\", not {}",
                v.repr().map_or_else(|_| "?".to_string(), |r| r.to_string())
            ),
        )
    })
}

fn opt_int<T: TryFrom<i128>>(name: &str, v: &Bound<'_, PyAny>) -> PyResult<Option<T>> {
    if v.is_none() {
        Ok(None)
    } else {
        int(name, v).map(Some)
    }
}

/// Seconds (int or float, not negative) as a duration; `None` for None.
fn opt_secs(name: &str, v: &Bound<'_, PyAny>) -> PyResult<Option<Duration>> {
    if v.is_none() {
        return Ok(None);
    }
    let s = float(name, v)?;
    if !(s >= 0.0 && s.is_finite()) {
        return Err(bad_option(name, "expected a finite number of seconds >= 0"));
    }
    Ok(Some(Duration::from_secs_f64(s)))
}

/// A list of compression names.
fn compressions(name: &str, v: &Bound<'_, PyAny>) -> PyResult<Vec<Compression>> {
    let list = v
        .downcast::<PyList>()
        .map_err(|_| bad_option(name, "expected a list of str"))?;
    list.iter().map(|c| named(name, &c)).collect()
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// Sets option `name` of `o` from `v`.
fn set(o: &mut Options, name: &str, v: &Bound<'_, PyAny>) -> PyResult<()> {
    let f = &mut o.filter;
    match name {
        "create_if_missing" => o.create_if_missing = flag(name, v)?,
        "error_if_exists" => o.error_if_exists = flag(name, v)?,
        "write_buffer_size" => o.write_buffer_size = int(name, v)?,
        "max_immutable_memtables" => o.max_immutable_memtables = int(name, v)?,
        "level0_compaction_trigger" => o.level0_compaction_trigger = int(name, v)?,
        "level0_slowdown_trigger" => o.level0_slowdown_trigger = int(name, v)?,
        "level0_stop_trigger" => o.level0_stop_trigger = int(name, v)?,
        "delayed_write_rate" => o.delayed_write_rate = int(name, v)?,
        "size_ratio" => o.size_ratio = int(name, v)?,
        "level1_size" => o.level1_size = int(name, v)?,
        "target_file_size" => o.target_file_size = int(name, v)?,
        "max_levels" => o.max_levels = int(name, v)?,
        "block_size" => o.block_size = int(name, v)?,
        "block_restart_interval" => o.block_restart_interval = int(name, v)?,
        "index_partition_bytes" => o.index_partition_bytes = opt_int(name, v)?,
        "block_cache_capacity" => o.block_cache_capacity = int(name, v)?,
        "max_open_files" => o.max_open_files = int(name, v)?,
        "table_meta_cache_capacity" => o.table_meta_cache_capacity = int(name, v)?,
        "compaction_style" => o.compaction_style = named(name, v)?,
        "background_threads" => o.background_threads = int(name, v)?,
        "use_direct_reads" => o.use_direct_reads = flag(name, v)?,
        "use_mmap_reads" => o.use_mmap_reads = flag(name, v)?,
        "io_delay_ns" => o.io_delay_ns = int(name, v)?,
        "compression" => o.compression_per_level = vec![named(name, v)?],
        "compression_per_level" => o.compression_per_level = compressions(name, v)?,
        "verify_checksums" => o.verify_checksums = flag(name, v)?,
        "lookup_breakdown_every" => o.lookup_breakdown_every = int(name, v)?,
        "max_bg_error_resume_count" => o.max_bg_error_resume_count = int(name, v)?,
        "bg_error_resume_retry_interval" => {
            let s = float(name, v)?;
            if s < 0.0 {
                return Err(bad_option(name, "seconds cannot be negative"));
            }
            o.bg_error_resume_retry_interval = Duration::from_secs_f64(s);
        }
        "wal_recovery" => o.wal_recovery = wal_recovery(name, v)?,
        "skip_checking_sst_file_sizes_on_db_open" => {
            o.skip_checking_sst_file_sizes_on_db_open = flag(name, v)?
        }
        "filter_memory" => {
            o.filter_memory = if v.is_none()
                || v.downcast::<PyString>()
                    .is_ok_and(|s| s.to_cow().is_ok_and(|s| s == "unlimited"))
            {
                FilterMemory::Unlimited
            } else {
                FilterMemory::Bytes(int(name, v)?)
            }
        }
        "filter_memory_bits_per_key" => {
            o.filter_memory = FilterMemory::BitsPerKey(float(name, v)?);
        }
        "filter_policy" => o.filter_policy = named(name, v)?,
        "filter_lifetime" => o.filter_lifetime = opt_int(name, v)?,
        "filter_access_sample" => o.filter_access_sample = opt_int(name, v)?,
        "initial_units" => o.initial_units = opt_int(name, v)?,
        "ttl" => o.ttl = opt_secs(name, v)?,
        "periodic_compaction" => o.periodic_compaction = opt_secs(name, v)?,
        // Resolved after every option is read (the separator may come later).
        "merge_operator" | "merge_separator" => {}
        "bits_per_key" => f.bits_per_key = float(name, v)?,
        "hash" => f.hash = named(name, v)?,
        "secondary_hash" => f.secondary_hash = named(name, v)?,
        "scheme" => f.scheme = named(name, v)?,
        "layout" => f.layout = named(name, v)?,
        "num_probes" => f.num_probes = opt_int(name, v)?,
        "leveldb_probes" => f.leveldb_probes = flag(name, v)?,
        "units" => f.units = int(name, v)?,
        "unit_hashing" => f.unit_hashing = named(name, v)?,
        "sharing" => f.sharing = named(name, v)?,
        "memtable_filter" => f.memtable_filter = flag(name, v)?,
        "partition_bytes" => f.partition_bytes = opt_int(name, v)?,
        _ => {
            return Err(bad_option(
                name,
                format!("unknown option (known: {})", NAMES.join(", ")),
            ))
        }
    }
    Ok(())
}

/// The names [`keyspace_from_kwargs`] accepts (`sievedb.KEYSPACE_OPTIONS`):
/// the options one keyspace may set apart from the database's.
pub const KEYSPACE_NAMES: &[&str] = &[
    "compaction_style",
    "size_ratio",
    "level1_size",
    "target_file_size",
    "level0_compaction_trigger",
    "write_buffer_size",
    "block_size",
    "compression",
    "compression_per_level",
    "bits_per_key",
    "merge_operator",
    "merge_separator",
    "ttl",
    "periodic_compaction",
];

/// Keyspace options from keyword arguments, `None` for none (the keyspace
/// then gets the database's options). An unknown name or a value of the
/// wrong type raises `ValueError` naming the option; the engine checks the
/// options together with the database's when the keyspace is opened.
pub fn keyspace_from_kwargs(
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Option<KeyspaceOptions>> {
    let Some(kw) = kwargs.filter(|kw| !kw.is_empty()) else {
        return Ok(None);
    };
    let mut o = KeyspaceOptions::default();
    for (k, v) in kw.iter() {
        let name: String = k.extract()?;
        let name = name.as_str();
        o = match name {
            "compaction_style" => o.compaction_style(named(name, &v)?),
            "size_ratio" => o.size_ratio(int(name, &v)?),
            "level1_size" => o.level1_size(int(name, &v)?),
            "target_file_size" => o.target_file_size(int(name, &v)?),
            "level0_compaction_trigger" => o.level0_compaction_trigger(int(name, &v)?),
            "write_buffer_size" => o.write_buffer_size(int(name, &v)?),
            "block_size" => o.block_size(int(name, &v)?),
            "compression" => o.compression(named(name, &v)?),
            "compression_per_level" => o.compression_per_level(compressions(name, &v)?),
            "bits_per_key" => o.bits_per_key(float(name, &v)?),
            "ttl" => match opt_secs(name, &v)? {
                Some(d) => o.ttl(d),
                None => o,
            },
            "periodic_compaction" => match opt_secs(name, &v)? {
                Some(d) => o.periodic_compaction(d),
                None => o,
            },
            // Resolved below (the separator may come later).
            "merge_operator" | "merge_separator" => o,
            _ => {
                let why = if NAMES.contains(&name) {
                    "the database's, not one keyspace's"
                } else {
                    "unknown option"
                };
                return Err(bad_option(
                    name,
                    format!("{why} (a keyspace takes: {})", KEYSPACE_NAMES.join(", ")),
                ));
            }
        };
    }
    if let Some(m) = merge_operator(kw)? {
        o = o.merge_operator(m);
    }
    Ok(Some(o))
}

/// The built-in merge operator `merge_operator=` names: `"u64add"`
/// (little-endian u64 counters) or `"append"` (joined with
/// `merge_separator`, default `b","`); `None` for none.
fn merge_operator(
    kw: &Bound<'_, PyDict>,
) -> PyResult<Option<std::sync::Arc<dyn sievedb::MergeOperator>>> {
    let sep = match kw.get_item("merge_separator")? {
        Some(s) => Some(crate::keys::bytes_of(&s, "merge_separator")?.into_owned()),
        None => None,
    };
    let Some(v) = kw.get_item("merge_operator")?.filter(|v| !v.is_none()) else {
        if sep.is_some() {
            return Err(bad_option(
                "merge_separator",
                "needs merge_operator=\"append\"",
            ));
        }
        return Ok(None);
    };
    let name: String = v
        .extract()
        .map_err(|_| bad_option("merge_operator", "expected \"u64add\" or \"append\""))?;
    Ok(Some(match name.as_str() {
        "u64add" if sep.is_none() => std::sync::Arc::new(sievedb::merge::U64Add),
        "u64add" => return Err(bad_option("merge_separator", "only \"append\" takes one")),
        "append" => std::sync::Arc::new(sievedb::merge::Append::new(sep.unwrap_or(b",".to_vec()))),
        other => {
            return Err(bad_option(
                "merge_operator",
                format!("unknown operator {other:?} (known: \"u64add\", \"append\")"),
            ))
        }
    }))
}

/// Options from keyword arguments over `Options::default()`, validated: a
/// value the engine refuses raises `ValueError` with the engine's message,
/// which names it.
pub fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Options> {
    let mut o = Options::default();
    if let Some(kw) = kwargs {
        for (k, v) in kw.iter() {
            let name: String = k.extract()?;
            set(&mut o, &name, &v)?;
        }
        o.merge_operator = merge_operator(kw)?;
    }
    o.validate().map_err(|e| {
        let msg = crate::errors::pythonic(&e.to_string());
        pyo3::exceptions::PyValueError::new_err(
            msg.trim_start_matches("invalid argument: ").to_string(),
        )
    })?;
    Ok(o)
}
