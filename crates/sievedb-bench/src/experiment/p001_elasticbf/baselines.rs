//! The paper's own comparison: LevelDB and RocksDB at 4 bits/key beside the
//! policies, when built in. LevelDB is filled by its own writes
//! (`fillrandom`, as the paper's was); RocksDB is bulk-loaded into the shape
//! of sievedb's tree (`crate::workload::bulk::rocksdb`: the same entries in the same
//! levels, its own table files ingested), since its `fillrandom` of the large
//! tree alone took longer than the hour the experiment has. Both are read
//! like the sievedb runs. Their device reads are counted
//! from outside the engine ([`crate::bench::device_io`]): read requests on
//! the database's block device (`/proc/diskstats`) per Get. LevelDB reads
//! through `mmap` and the page cache, whose pages of the database are
//! dropped before each run (`--drop-caches`); at the papers' scales its reads
//! also run in a memory cgroup of [`LEVELDB_MEMORY`] (`--page-cache-limit`),
//! so that a long run cannot end with most of the tree cached. The device's
//! readahead is 16 KiB for its reads where it can be set (`--read-ahead-kb`).
//! RocksDB reads with O_DIRECT where sievedb does.

use super::{med, Dist, Grid, Tree, ALPHA, BLOCK_CACHE, BUDGET_BPK};
use crate::bench::Benchmark;
use crate::engines::EngineKind;
use crate::experiment::{f, Ctx, ExpResult, Summary};
use crate::report::{median, Record};
use crate::{BenchArgs, FilterArgs};
use sievedb::FilterPolicy;

/// The device readahead LevelDB's reads run with (where it can be set):
/// one 4 KiB block and its trailer span up to 3 pages, which a 16 KiB
/// window reads in one request; larger windows fill the page cache with
/// pages nobody reads (BENCHMARKS.md, "Device reads: how they are counted").
const MMAP_READ_AHEAD_KB: u64 = 16;

/// The memory LevelDB's reads may grow by (heap and page cache together) at
/// `--scale large` and `paper`: the paper ran LevelDB with direct I/O and an
/// 8 MB block cache; LevelDB 1.23 reads through `mmap`, so its page cache
/// stands in for the block cache, with room for the index and filter blocks
/// of its open tables too. Unbounded, a million uniform Gets on the
/// 100M-entry tree ended with 6.8 GB of its 11.7 GB cached (a run by hand of
/// build 2220a85, superseded: docs/history.md, "Measuring on a shared VM").
const LEVELDB_MEMORY: u64 = 16 << 20;

/// The smallest table size LevelDB 1.23 accepts (it raises a smaller
/// `max_file_size` to it). RocksDB's bulk load uses it too where the tree's
/// tables are smaller, so that both baselines hold the same number of tables.
#[cfg(feature = "rocksdb")]
const LEVELDB_MIN_FILE_SIZE: u64 = 1 << 20;

/// A baseline engine read at every popularity.
pub(super) struct Baseline {
    /// The engine's name.
    pub name: String,
    /// Median ops/s per distribution.
    pub ops: Vec<f64>,
    /// Median device read requests per Get per distribution (`None`: not
    /// counted, e.g. no block device found for the directory).
    pub device_reads: Vec<Option<f64>>,
    /// The device's `read_ahead_kb` during the reads: each page fault of
    /// LevelDB's mapped tables reads that much around it.
    pub read_ahead_kb: Option<u64>,
    /// The memory cgroup's room during the reads, if they ran in one.
    pub memory_bound: Option<u64>,
    /// How its tree was built, in a sentence.
    pub filled: String,
    /// LevelDB only: the compactions its `LOG` shows during the reads of
    /// each distribution (`None`: no log read).
    pub compactions: Vec<Option<LogCompactions>>,
}

/// What LevelDB's info `LOG` says its compactions did since the database
/// was opened (LevelDB starts a new `LOG` at every open).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct LogCompactions {
    /// Compactions run ("Compacted ... => N bytes").
    pub compactions: u64,
    /// Files moved down a level without being rewritten ("Moved #N ...").
    pub moves: u64,
    /// Bytes the compactions wrote.
    pub bytes_written: u64,
}

impl LogCompactions {
    /// Counts the compactions in the text of a LevelDB 1.x `LOG`.
    fn parse(log: &str) -> LogCompactions {
        let mut c = LogCompactions::default();
        for line in log.lines() {
            if let Some((_, rest)) = line.split_once(" Compacted ") {
                c.compactions += 1;
                c.bytes_written += rest
                    .split_once("=> ")
                    .and_then(|(_, b)| b.split_whitespace().next())
                    .and_then(|b| b.parse::<u64>().ok())
                    .unwrap_or(0);
            } else if line.contains(" Moved #") {
                c.moves += 1;
            }
        }
        c
    }

    /// The `LOG` of the LevelDB database at `db`, if it can be read.
    fn read(db: &std::path::Path) -> Option<LogCompactions> {
        std::fs::read_to_string(db.join("LOG"))
            .ok()
            .map(|t| LogCompactions::parse(&t))
    }
}

/// Device read requests per Get of one read benchmark, if counted.
fn requests_per_get(r: &Record) -> Option<f64> {
    let requests = r.device.as_ref()?.requests?;
    (r.m.ops > 0).then(|| requests as f64 / r.m.ops as f64)
}

/// Fills and reads every baseline engine built in; returns them and a note
/// (what is missing, how LevelDB was read).
pub(super) fn run(
    ctx: &mut Ctx,
    t: &Tree,
    dists: &[Dist],
    reads: u64,
    repeats: usize,
) -> ExpResult<(Vec<Baseline>, String)> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for kind in [EngineKind::Leveldb, EngineKind::Rocksdb] {
        if !kind.available() {
            missing.push(kind.name());
            continue;
        }
        let dir = ctx
            .db_dir(&format!("baseline-{}", kind.name()), false)?
            .ok_or("no work directory")?;
        let s = &t.tree.spec;
        let mut a = BenchArgs {
            db: Some(dir.clone()),
            engine: match kind {
                EngineKind::Leveldb => crate::EngineChoice::Leveldb,
                _ => crate::EngineChoice::Rocksdb,
            },
            benchmarks: "fillrandom,waitforcompaction".into(),
            num: s.num,
            key_size: s.key_size,
            value_size: s.value_size,
            target_file_size: s.target_file_size,
            block_cache_size: BLOCK_CACHE,
            use_direct_reads: t.direct,
            filters: FilterArgs {
                bits_per_key: BUDGET_BPK,
                ..FilterArgs::default()
            },
            ..ctx.bench_defaults()
        };
        let filled = fill(ctx, t, kind, &mut a)?;
        a.use_existing_db = true;
        a.benchmarks = "readmixed".into();
        a.alpha = ALPHA;
        a.reads = reads;
        a.repeats = repeats;
        if kind == EngineKind::Leveldb || !t.direct {
            a.drop_caches = true;
            // Bounded only at the papers' scales: the cgroup holds the whole
            // process (the engine's heap too, and in the tests every test
            // thread), and was OOM-killed at 8 MiB of room.
            a.page_cache_limit =
                ctx.pick_tree(None, None, Some(LEVELDB_MEMORY), Some(LEVELDB_MEMORY));
            // Not in the smoke tests: a killed run would leave it set.
            a.read_ahead_kb = ctx.pick(None, Some(MMAP_READ_AHEAD_KB), Some(MMAP_READ_AHEAD_KB));
        }
        let mut b = Baseline {
            name: kind.name().to_string(),
            ops: Vec::new(),
            device_reads: Vec::new(),
            read_ahead_kb: None,
            memory_bound: None,
            filled,
            compactions: Vec::new(),
        };
        for d in dists {
            a.distribution = d.dist;
            a.zipf_s = d.s;
            let recs: Vec<Record> = crate::run_records(&a)?
                .into_iter()
                .filter(|r| r.benchmark == Benchmark::ReadMixed)
                .collect();
            let mut ops: Vec<f64> = recs.iter().map(|r| r.rates().ops_per_sec).collect();
            let mut dev: Vec<f64> = recs.iter().filter_map(requests_per_get).collect();
            b.ops.push(if ops.is_empty() {
                f64::NAN
            } else {
                median(&mut ops)
            });
            b.device_reads
                .push((!dev.is_empty()).then(|| median(&mut dev)));
            if kind == EngineKind::Leveldb {
                b.compactions
                    .push(LogCompactions::read(&dir.join(kind.name())));
            }
            for r in &recs {
                b.read_ahead_kb = b
                    .read_ahead_kb
                    .or(r.device.as_ref().and_then(|d| d.read_ahead_kb));
                // Said only of reads that ran in the cgroup (without usable
                // cgroups the run warns and drops the pages alone).
                if r.page_cache.as_ref().is_some_and(|p| p.cgroup.is_some()) {
                    b.memory_bound = a.page_cache_limit;
                }
            }
        }
        ctx.drop_dir(&dir);
        out.push(b);
    }
    let mut notes: Vec<String> = out.iter().map(|b| b.filled.clone()).collect();
    if let Some(l) = out.iter().find(|b| b.name == EngineKind::Leveldb.name()) {
        notes.push(format!(
            "LevelDB ({BUDGET_BPK} bits/key, filled with `fillrandom`) reads its tables through \
             `mmap`: its device reads are the read requests on the database's device \
             (`/proc/diskstats`, every process's) per Get, its pages dropped before each run (a \
             cold start) and {}, with the device's readahead at {} (each page fault reads that \
             much around it; BENCHMARKS.md, \"Device reads: how they are counted\", measures how it \
             inflates LevelDB's requests).",
            l.memory_bound.map_or(
                "its page cache not bounded during it, so Gets that come back to a page read \
                 earlier find it cached"
                    .to_string(),
                |b| format!(
                    "its reads run in a memory cgroup letting its heap and page cache grow by \
                     {} MiB (a page read earlier stays cached only while it fits)",
                    b >> 20
                )
            ),
            l.read_ahead_kb
                .map_or("an unknown size".to_string(), |kb| format!("{kb} KiB"))
        ));
    }
    if let Some(l) = out.iter().find(|b| b.name == EngineKind::Leveldb.name()) {
        if l.compactions.iter().all(Option::is_some) && !l.compactions.is_empty() {
            let each = |x: fn(&LogCompactions) -> String| {
                l.compactions
                    .iter()
                    .flatten()
                    .map(x)
                    .collect::<Vec<_>>()
                    .join(" / ")
            };
            notes.push(format!(
                "LevelDB's `LOG` of each read run ({} in that order{}): {} compactions writing \
                 {} MB, and {} files moved down a level. Its `waitforcompaction` had left no \
                 level over its size, so these are compactions its lookups set off (LevelDB \
                 compacts a file that lookups probe too often without finding their key); \
                 their reads reach the device and count with the Gets'.",
                dists
                    .iter()
                    .map(Dist::label)
                    .collect::<Vec<_>>()
                    .join(" / "),
                if repeats > 1 {
                    ", the last repeat's: LevelDB starts a new `LOG` at each open"
                } else {
                    ""
                },
                each(|c| c.compactions.to_string()),
                each(|c| format!("{:.0}", c.bytes_written as f64 / 1e6)),
                each(|c| c.moves.to_string()),
            ));
        }
    }
    if !out.is_empty() {
        notes.push(
            "The engines read one after the other, so their ops/s compare only where the device \
             served them alike; a virtual disk whose host caches it, or whose latency moves with \
             the host's load, need not (BENCHMARKS.md, \"ElasticBF against LevelDB and RocksDB at \
             43,844 files\", also reads them side by side). Device-read counts do not \
             depend on it."
                .to_string(),
        );
    }
    if !missing.is_empty() {
        notes.push(format!(
            "Baseline engine(s) {} are not built into this binary (cargo features `leveldb`, \
             `rocksdb` of sievedb-bench / sievedb-cli), so their rows are missing; the \
             `uniform` policy plays LevelDB's part.",
            missing.join(", ")
        ));
    }
    Ok((out, notes.join(" ")))
}

/// Builds `kind`'s tree of the data of `t` at `a.db` (RocksDB: bulk-loaded
/// in `t`'s shape; the others: `a`'s `fillrandom`), adjusting `a` to read it;
/// returns how, in a sentence with its time.
fn fill(ctx: &mut Ctx, t: &Tree, kind: EngineKind, a: &mut BenchArgs) -> ExpResult<String> {
    let s = &t.tree.spec;
    #[cfg(feature = "rocksdb")]
    if kind == EngineKind::Rocksdb {
        let dir = a.db.clone().ok_or("no work directory")?;
        let bulk = crate::workload::bulk::BulkConfig {
            num: s.num,
            key_size: s.key_size,
            value_size: s.value_size,
            seed: crate::DEFAULT_SEED,
            levels: s.levels,
            size_ratio: s.size_ratio,
            target_file_size: s.target_file_size.max(LEVELDB_MIN_FILE_SIZE),
            filters: a.filters.clone(),
        };
        a.target_file_size = bulk.target_file_size;
        ctx.note(format!("rocksdb: bulk load of {} entries", s.num));
        let bar = crate::workload::bulk::Progress::new(ctx.progress, Some(s.num), "rocksdb");
        let r = crate::workload::bulk::rocksdb::load_generated(
            &dir.join(kind.name()),
            &bulk,
            &a.engine_config(),
            bar.callback(),
        );
        bar.finish();
        let r = r?;
        a.level1_size = r.level1_size;
        return Ok(format!(
            "RocksDB's tree was bulk-loaded in {:.1} s into the shape of sievedb's (the same \
             entries dealt to the same levels, written by RocksDB's `SstFileWriter` and \
             ingested deepest level first): {:.0} MB in {} tables of {} KiB{} at levels \
             {}–{}, with no L0 and {}.",
            r.seconds,
            r.bytes() as f64 / 1e6,
            r.files(),
            bulk.target_file_size >> 10,
            if bulk.target_file_size > s.target_file_size {
                " (LevelDB's smallest table size, which LevelDB's tree gets too)"
            } else {
                ""
            },
            r.levels.first().map_or(0, |l| l.level),
            r.levels.last().map_or(0, |l| l.level),
            if r.compaction_pending {
                "a compaction pending (read while it runs)"
            } else {
                "no compaction pending"
            },
        ));
    }
    ctx.note(format!("{}: fillrandom of {} entries", kind.name(), s.num));
    let recs = crate::run_records(a)?;
    let secs: f64 = recs.iter().map(|r| r.m.seconds).sum();
    Ok(format!(
        "{}'s tree was filled by its own writes (`fillrandom` of {} entries, then \
         `waitforcompaction`) in {secs:.1} s.",
        match kind {
            EngineKind::Leveldb => "LevelDB",
            _ => kind.name(),
        },
        s.num
    ))
}

/// The baseline engines' ops/s and device reads per Get per popularity
/// (when any is built in), under a first column headed `head`.
///
/// Each cell also gives the baseline's device reads ÷ `elastic`'s and
/// `elastic`'s ops/s ÷ the baseline's (the paper's Table 1 and Figure 5
/// compare ElasticBF with LevelDB so); ops/s of runs that did not share the
/// device compare only as far as the device served them alike.
pub(super) fn table(s: &mut Summary, g: &Grid, dists: &[Dist], head: &str) {
    if g.baselines.is_empty() {
        return;
    }
    let ei = super::col_index(g, FilterPolicy::Elastic);
    let rows = g
        .baselines
        .iter()
        .map(|b| {
            let mut r = vec![format!("{} ({BUDGET_BPK} bits/key)", b.name)];
            for (di, (ops, dev)) in b.ops.iter().zip(&b.device_reads).enumerate() {
                let e = &g.runs[di][ei];
                let e_dev = med(e, |r| r.per_get(r.device_reads()));
                let e_ops = med(e, |r| r.ops_per_sec);
                let reads = dev.map_or("reads not counted".to_string(), |x| {
                    format!("{} reads/Get (÷ elastic: **{:.2}×**)", f(x, 3), x / e_dev)
                });
                r.push(format!(
                    "{} ops/s (elastic ÷ it: {:.2}×), {reads}",
                    f(*ops, 0),
                    e_ops / ops
                ));
            }
            r
        })
        .collect();
    let mut h = vec![head.to_string()];
    h.extend(dists.iter().map(Dist::label));
    let hr: Vec<&str> = h.iter().map(String::as_str).collect();
    s.table(&hr, rows);
}

#[cfg(test)]
mod tests {
    use super::LogCompactions;

    #[test]
    fn leveldb_log_compactions_are_counted() {
        let log = "\
2026/11/27-17:38:46.435196 140 Recovering log #189287
2026/11/27-17:38:50.075236 140 Compacting 1@1 + 18@2 files
2026/11/27-17:38:50.085899 140 Generated table #196031@1: 9072 keys, 1067723 bytes
2026/11/27-17:38:50.171713 140 Compacted 1@1 + 18@2 files => 20480 bytes
2026/11/27-17:38:50.171713 140 compacted to: files[ 0 12 163 1310 10035 19 0 ]
2026/11/27-17:38:51.000000 140 Moved #196040 to level-3 1067723 bytes OK: files[ 0 0 0 1 0 0 0 ]
2026/11/27-17:38:52.277121 140 Compacted 1@3 + 4@4 files => 5000 bytes
";
        assert_eq!(
            LogCompactions::parse(log),
            LogCompactions {
                compactions: 2,
                moves: 1,
                bytes_written: 25_480,
            }
        );
        assert_eq!(LogCompactions::parse(""), LogCompactions::default());
    }
}
