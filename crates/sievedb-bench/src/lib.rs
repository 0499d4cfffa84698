//! # sievedb-bench
//!
//! db_bench-style benchmarks of the sievedb storage engine, with LevelDB (the
//! system library, feature `leveldb`) as a baseline measured in the same run.
//!
//! The `sievedb` CLI exposes this crate as `sievedb bench`; [`BenchArgs`] are its
//! flags and [`run`] prints the report to stdout.
//!
//! Benchmarks (`--benchmarks`, run in the order given):
//! - `fillseq`: `--num` writes in ascending key order;
//! - `fillrandom`: `--num` writes in a seeded random order (each key once);
//! - `readrandom`: `--reads` lookups of uniformly chosen existing keys;
//! - `readmissing`: `--reads` lookups of keys that were never written but sort
//!   between written keys (so they must be rejected by the filters);
//! - `readmixed`: `--reads` lookups, a fraction `--alpha` of existing keys and
//!   the rest of missing ones (the papers' α);
//! - `readseq`: one full forward scan (ops = entries read);
//! - `readwhilewriting`: `--threads` readers do `--reads` lookups of existing
//!   keys (or read for `--duration` seconds) while one writer thread
//!   overwrites uniformly random keys of `0..--num` with one-key batches; the
//!   writer stops when the readers are done. ops, found and the rates are the
//!   readers'; `writer_ops` and `writer_ops_per_sec` are the writer's. Every
//!   `--sample-interval-ms` a sampler snapshots sievedb's statistics and
//!   reports the peak `filter_memory_max_bytes` and
//!   `filter_memory_max_over_budget_bytes` (resident filter bytes minus the
//!   budget; `null` without a budget);
//! - `ycsba`, `ycsbb`: YCSB core workloads A (50% lookups, 50% updates) and B
//!   (95% / 5%), `--reads` operations split over `--threads` threads (each
//!   its own seeded stream), on existing keys drawn from `--distribution`
//!   (YCSB's own is zipfian); an update rewrites the key with its value. `reads`, `updates` and `read_found` count the kinds;
//! - `flush`, `waitforcompaction`: flush the memtable / flush and wait until no
//!   compaction is due (RocksDB db_bench's names), to read a settled tree;
//!   reported by their elapsed time only (no ops/sec, micros/op or MB/s, in
//!   text and JSON alike). `waitforcompaction` also reports the compaction
//!   owed when it started (`pending_compaction_bytes_at_start`, sievedb and
//!   RocksDB) and, with `--stats-interval`, prints per interval the bytes
//!   still owed, the MB/s written (sievedb) and the files per level;
//! - `filterbench`: the papers' single-filter micro-benchmark, no database:
//!   one filter over `--num` keys, `--reads` empty queries with hashing
//!   (measured and theoretical FPR, ns per query);
//! - `filterprobe` (sievedb only): `readmissing`'s keys, in batches, each
//!   batch timed three ways, interleaved: the lookups, a reference doing only
//!   the one digest and the probes of the filters those lookups would probe
//!   (each run's candidate file, through the engine's own filter objects),
//!   and the key generation (subtracted from both). Reports ns per key of
//!   each and the ratio lookup ÷ reference ([`bench::filterprobe`]);
//! - `mergerandom` (db_bench's; engines with a merge operator: sievedb and
//!   RocksDB, skipped with a note for LevelDB and fjall): `--num` merges on
//!   one thread, each of an 8-byte little-endian 1 through a u64-add
//!   operator into a uniformly random counter of `0..--num`. The counters
//!   have keys of their own (`m` and the index, [`workload::keys::KeyGen::fill_counter`]),
//!   so the reads of the fills' keys find what they found before (`readseq`
//!   counts the counters too). After the timed part every counter (up to
//!   65,536 of them, else an even sample) is read back and must have grown
//!   by the merges it got, or the run fails. MB/s counts key + 8 bytes.
//! - `txnrandom`, `txnrandomhot` (engines with transactions: sievedb,
//!   RocksDB, fjall; skipped with a note for LevelDB): `--threads` threads
//!   run read-modify-write transactions of `--txn-keys` distinct keys (read
//!   for update, then written, then committed), drawn from all of `--num`
//!   (low contention) or from a hot set of `--txn-hot-keys` keys (high),
//!   for `--reads` commits or `--duration` seconds, with `--txn-mode`
//!   optimistic or pessimistic concurrency control; an abort is retried
//!   with the same keys. Reports commits/s (ops/sec), aborts/s by kind and
//!   the p50/p99 latency of a committed transaction, retries included, and
//!   checks afterwards that no increment was lost ([`bench::txn`]);
//! - `txnreadrandom`: `readrandom`'s lookups through read-only
//!   transactions of `--txn-keys` lookups each.
//!
//! The benchmarks that read entries (the lookups, `readseq`, the YCSB mixes,
//! `readwhilewriting`) are refused on a database that holds none of the keys
//! 0, N/2 and N−1 of `--num N`, instead of measuring nothing ("0 of N found").
//! `sievedb bench --help` lists every benchmark ([`bench::Benchmark::help_list`]).
//! Progress goes to stderr ([`progress`]): a bar on a terminal, or a line
//! every `--stats-interval` seconds.
//!
//! Each `fill*` benchmark starts on a freshly emptied database (like db_bench);
//! with `--use-existing-db` the fills are skipped and the reads run against the
//! existing database. Reads run against whatever the last fill produced
//! (`readwhilewriting` and the YCSB workloads write into it, also with
//! `--use-existing-db`). Writes
//! are one-key batches without sync (db_bench's defaults); reads are split
//! across `--threads` threads.
//!
//! `--keyspaces N` (default 1: everything in the engine's default keyspace)
//! spreads the keys over N keyspaces `ks0..ks{N-1}`, each opened with the
//! same settings: key (and `mergerandom` counter) i is written to and read
//! from keyspace `ks{i mod N}`, a missing key looked up where the written
//! key of its index is. sievedb opens its keyspaces with `Db::keyspace`
//! (the database's options), RocksDB uses column families (created at
//! open), fjall its keyspaces; LevelDB has none and is skipped with a note, as is
//! `filterprobe` (it probes the default keyspace). `readseq` scans every
//! keyspace in turn, `flush` and `waitforcompaction` cover them all, and
//! files per level are summed over them. JSON lines carry `keyspaces`.
//!
//! Every result carries the device reads of its benchmark, measured outside
//! the engine so that every engine is counted alike
//! ([`bench::device_io`]): `device_read_bytes` (Δ `read_bytes` of
//! `/proc/self/io`: bytes the process caused to be read from block devices,
//! readahead and O_DIRECT included), `device_read_requests` (Δ read requests
//! completed in `/proc/diskstats` for the database's device, every process's,
//! merged requests once) and their per-op figures; sievedb's results add
//! its own count, `engine_device_reads`. `--drop-caches` and
//! `--page-cache-limit BYTES` start each read benchmark with the database's
//! pages dropped and, for the latter, bound the page cache it fills with a
//! memory cgroup ([`bench::page_cache`], [`bench::cgroup`]); `--csv FILE`
//! writes the results as CSV too.
//!
//! `sievedb devices` ([`devices`]) measures the papers' Table 1 on this
//! machine: 4 KiB read latency per access mode (page cache, O_DIRECT, tmpfs,
//! the emulated latencies of `--io-delay-ns`) and the cost of each hash function.

#![warn(missing_docs)]
// Library code never unwraps: it returns an error; an `expect` states the
// invariant that rules the error out, in an `#[expect(clippy::expect_used,
// reason = "..")]` (tests unwrap freely).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod bench;
pub mod cli;
pub mod engines;
pub mod experiment;
pub mod micro;
pub mod report;
pub mod workload;

pub(crate) use bench::runner::cpu_description;
pub use bench::runner::{run, run_records, run_with_output};
pub use cli::bench_args::{
    with_benchmark_list, BenchArgs, CompactionStyleArg, EngineChoice, BLOCK_SIZE,
    DEFAULT_BENCHMARKS, DEFAULT_BITS_PER_KEY, DEFAULT_BLOCK_CACHE_SIZE, DEFAULT_BREAKDOWN_EVERY,
    DEFAULT_KEY_SIZE, DEFAULT_LEVEL1_SIZE, DEFAULT_MAX_LEVELS, DEFAULT_NUM, DEFAULT_READS,
    DEFAULT_SAMPLE_INTERVAL_MS, DEFAULT_SEED, DEFAULT_SIZE_RATIO, DEFAULT_TARGET_FILE_SIZE,
    DEFAULT_VALUE_SIZE, DEFAULT_WRITE_BUFFER_SIZE, DEFAULT_ZIPF_S, MAX_OPEN_FILES,
};
pub use cli::filter_args::{self, FilterArgs};
pub use micro::devices;
pub use report::progress;
