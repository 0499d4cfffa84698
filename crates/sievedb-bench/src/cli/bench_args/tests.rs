use super::*;
use crate::run_with_output;
use clap::Parser;
use sievedb::{FilterLayout, HashFn, HashSharing, IndexScheme};
use std::path::Path;

#[derive(Parser, Debug)]
struct Cli {
    #[command(flatten)]
    args: BenchArgs,
}

#[test]
fn clap_defaults_match_default_impl() {
    let parsed = Cli::try_parse_from(["bench"]).unwrap().args;
    assert_eq!(parsed, BenchArgs::default());
    let d = BenchArgs::default();
    assert_eq!(d.num, 200_000);
    assert_eq!(d.reads, 100_000);
    assert_eq!(d.key_size, 16);
    assert_eq!(d.value_size, 100);
    assert_eq!(d.filters.bits_per_key, 10.0);
    assert_eq!(d.write_buffer_size, 4 << 20);
    assert_eq!(d.seed, 301);
    assert_eq!(d.repeats, 1);
    assert_eq!(d.engine, EngineChoice::Sievedb);
    assert!(!d.use_direct_reads);
    assert_eq!(d.mmap_reads, sievedb::Options::default().use_mmap_reads);
    assert_eq!(d.io_delay_ns, 0);
    assert_eq!(
        Benchmark::parse_list(&d.benchmarks).unwrap(),
        Benchmark::ALL[..6]
            .iter()
            .copied()
            .filter(|b| *b != Benchmark::ReadMixed)
            .collect::<Vec<_>>()
    );
    assert_eq!(d.filter_options(), sievedb::FilterOptions::default());
}

#[test]
fn parses_db_bench_flags() {
    let a = Cli::try_parse_from([
        "bench",
        "--db",
        "/tmp/x",
        "--benchmarks",
        "fillrandom,readrandom",
        "--num",
        "10",
        "--reads",
        "5",
        "--key-size",
        "24",
        "--value-size",
        "8",
        "--bits-per-key",
        "5.5",
        "--size-ratio",
        "4",
        "--write-buffer-size",
        "65536",
        "--target-file-size",
        "65536",
        "--block-cache-size",
        "0",
        "--compaction-style",
        "tiering",
        "--use-existing-db",
        "--threads",
        "2",
        "--seed",
        "7",
        "--json",
        "--engine",
        "all",
        "--repeats",
        "3",
        "--use-direct-reads",
        "--io-delay-ns",
        "10000",
    ])
    .unwrap()
    .args;
    assert!(a.use_direct_reads);
    assert_eq!(a.io_delay_ns, 10_000);
    for (flag, on) in [("false", false), ("true", true)] {
        let m = Cli::try_parse_from(["bench", "--mmap-reads", flag])
            .unwrap()
            .args;
        assert_eq!((m.mmap_reads, m.engine_config().use_mmap_reads), (on, on));
    }
    assert!(Cli::try_parse_from(["bench", "--mmap-reads", "maybe"]).is_err());
    assert_eq!(
        (a.compression, a.compression_ratio),
        (Compression::None, 1.0)
    );
    let c = Cli::try_parse_from([
        "bench",
        "--compression",
        "zstd:5",
        "--compression-ratio",
        "0.5",
    ])
    .unwrap()
    .args;
    assert_eq!(
        (c.compression, c.compression_ratio),
        (Compression::Zstd(5), 0.5)
    );
    assert_eq!(c.engine_config().compression, Compression::Zstd(5));
    assert!(c.validate().is_ok());
    assert!(Cli::try_parse_from(["bench", "--compression", "snappy"]).is_err());
    let bad = BenchArgs {
        compression_ratio: 0.0,
        ..BenchArgs::default()
    };
    assert!(bad.validate().is_err());
    let d = BenchArgs::default();
    assert_eq!((d.duration, d.sample_interval_ms), (0, 100));
    let a2 = Cli::try_parse_from([
        "bench",
        "--benchmarks",
        "readwhilewriting,ycsba,ycsbb",
        "--duration",
        "60",
        "--sample-interval-ms",
        "0",
    ])
    .unwrap()
    .args;
    assert_eq!((a2.duration, a2.sample_interval_ms), (60, 0));
    assert_eq!(Benchmark::parse_list(&a2.benchmarks).unwrap().len(), 3);
    let cfg = a.engine_config();
    assert!(cfg.use_direct_reads);
    assert_eq!(cfg.io_delay_ns, 10_000);
    assert_eq!(a.db.as_deref(), Some(Path::new("/tmp/x")));
    assert_eq!(a.compaction_style, CompactionStyleArg::Tiering);
    assert_eq!(a.engine, EngineChoice::All);
    assert!(a.use_existing_db && a.json);
    assert_eq!((a.threads, a.seed, a.repeats), (2, 7, 3));
    assert!(Cli::try_parse_from(["bench", "--engine", "nope"]).is_err());
    for (name, choice) in [
        ("rocksdb", EngineChoice::Rocksdb),
        ("fjall", EngineChoice::Fjall),
    ] {
        let a = Cli::try_parse_from(["bench", "--engine", name])
            .unwrap()
            .args;
        assert_eq!(a.engine, choice);
    }
}

#[test]
fn parses_page_cache_flags() {
    let d = BenchArgs::default();
    assert_eq!(
        (d.page_cache_mode(), d.csv.is_none()),
        (PageCacheMode::Keep, true)
    );
    let a = Cli::try_parse_from(["bench", "--drop-caches", "--csv", "r.csv"])
        .unwrap()
        .args;
    assert_eq!(a.page_cache_mode(), PageCacheMode::Drop);
    assert_eq!(a.csv.as_deref(), Some(Path::new("r.csv")));
    let b = Cli::try_parse_from(["bench", "--page-cache-limit", "67108864"])
        .unwrap()
        .args;
    assert_eq!(b.page_cache_mode(), PageCacheMode::Bounded(64 << 20));
    assert!(b.validate().is_ok());
    let small = Cli::try_parse_from(["bench", "--page-cache-limit", "4096"])
        .unwrap()
        .args;
    assert!(small.validate().unwrap_err().contains("--page-cache-limit"));
    assert!(Cli::try_parse_from(["bench", "--page-cache-limit", "lots"]).is_err());
}

#[test]
fn parses_keyspaces() {
    let a = Cli::try_parse_from(["bench", "--keyspaces", "4"])
        .unwrap()
        .args;
    assert_eq!((a.keyspaces, a.engine_config().keyspaces), (4, 4));
    assert_eq!(BenchArgs::default().engine_config().keyspaces, 1);
    let zero = Cli::try_parse_from(["bench", "--keyspaces", "0"])
        .unwrap()
        .args;
    assert!(zero.validate().unwrap_err().contains("--keyspaces"));
}

#[test]
fn rejects_bad_arguments() {
    let bad = |f: fn(&mut BenchArgs)| {
        let mut a = BenchArgs::default();
        f(&mut a);
        run_with_output(&a, &mut Vec::new())
            .unwrap_err()
            .to_string()
    };
    assert!(bad(|a| a.threads = 0).contains("--threads"));
    assert!(bad(|a| a.use_existing_db = true).contains("--db"));
    assert!(bad(|a| a.benchmarks = "nope".into()).contains("unknown benchmark"));
    assert!(bad(|a| a.key_size = 3).contains("--key-size"));
    assert!(bad(|a| a.alpha = 1.5).contains("--alpha"));
    assert!(bad(|a| a.filters.filter_units = 0).contains("units"));
    assert!(Cli::try_parse_from(["bench", "--hash", "blake3"]).is_err());
    let a = Cli::try_parse_from([
        "bench",
        "--hash",
        "xxh3",
        "--index-scheme",
        "enhanced-double",
        "--filter",
        "units",
        "--filter-units",
        "4",
        "--hash-sharing",
        "filter",
        "--memtable-filter",
        "--breakdown",
        "--alpha",
        "0.25",
    ])
    .unwrap()
    .args;
    let f = a.filter_options();
    assert_eq!(
        (
            f.hash,
            f.scheme,
            f.layout,
            f.units,
            f.sharing,
            f.memtable_filter
        ),
        (
            HashFn::Xxh3,
            IndexScheme::EnhancedDouble,
            FilterLayout::Units,
            4,
            HashSharing::Filter,
            true
        )
    );
    assert_eq!(a.engine_config().lookup_breakdown_every, 8);
    assert_eq!(a.alpha, 0.25);
}

#[test]
fn engines_not_built_in_are_clear_errors() {
    for (choice, kind, package) in [
        (EngineChoice::Leveldb, EngineKind::Leveldb, "libleveldb-dev"),
        (EngineChoice::Rocksdb, EngineKind::Rocksdb, "librocksdb-dev"),
        (EngineChoice::Fjall, EngineKind::Fjall, "no system package"),
    ] {
        let a = BenchArgs {
            engine: choice,
            ..BenchArgs::default()
        };
        if kind.available() {
            assert_eq!(a.engines().unwrap(), vec![kind]);
            continue;
        }
        let msg = run_with_output(&a, &mut Vec::new())
            .unwrap_err()
            .to_string();
        let feature = format!("--features {}", kind.name());
        assert!(msg.contains(&feature) && msg.contains(package), "{msg}");
    }
}

#[test]
fn all_is_every_built_engine_sievedb_first() {
    let a = BenchArgs {
        engine: EngineChoice::All,
        ..BenchArgs::default()
    };
    let kinds = a.engines().unwrap();
    assert_eq!(kinds[0], EngineKind::Sievedb);
    let expected: Vec<EngineKind> = EngineKind::ALL
        .into_iter()
        .filter(|k| match k {
            EngineKind::Sievedb => true,
            EngineKind::Leveldb => cfg!(feature = "leveldb"),
            EngineKind::Rocksdb => cfg!(feature = "rocksdb"),
            EngineKind::Fjall => cfg!(feature = "fjall"),
        })
        .collect();
    assert_eq!(kinds, expected);
}

/// `--background-threads` reaches the engine settings; 0 (no thread to
/// flush with) and absurd counts are refused at parse time.
#[test]
fn background_threads_flag() {
    let a = Cli::try_parse_from(["bench", "--background-threads", "3"])
        .unwrap()
        .args;
    assert_eq!(a.engine_config().background_threads, 3);
    assert_eq!(
        BenchArgs::default().engine_config().background_threads,
        sievedb::Options::default().background_threads
    );
    for bad in ["0", "65", "-1", "two"] {
        assert!(Cli::try_parse_from(["bench", "--background-threads", bad]).is_err());
    }
}
