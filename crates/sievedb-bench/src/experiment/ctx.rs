//! The running experiment's context ([`Ctx`]: scale, output and scratch
//! directories, cached hash costs), and the trees the experiments build:
//! their spec ([`TreeSpec`]), bulk load ([`load_tree`]) and the lookups
//! measured on them ([`measure_modes`], [`ReadStats`]).

use super::{alternating_order, ExpResult, ExperimentArgs, Scale};
use crate::report::csv::Table;
use crate::report::plot;
use crate::report::summary::{Block, Summary};
use crate::report::{median, Record};
use crate::workload::bulk::{BulkConfig, Progress};
use crate::workload::keys::KeyGen;
use crate::BenchArgs;
use sievedb::io::with_path;
use sievedb::{HashFn, HashSharing};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The running experiment's context.
pub struct Ctx {
    /// The command-line flags.
    pub args: ExperimentArgs,
    /// Experiment name (file stem of its outputs).
    pub name: &'static str,
    /// Its scale.
    pub scale: Scale,
    /// Output directory.
    pub out: PathBuf,
    /// Scratch directory for databases (deleted afterwards).
    pub work: PathBuf,
    /// Whether to draw progress bars on stderr.
    pub progress: bool,
    pub(crate) hash_ns: HashMap<(HashFn, usize), f64>,
    /// Scratch directories in /dev/shm to delete at the end.
    pub(crate) shm: Vec<PathBuf>,
}

impl Ctx {
    /// `tiny`, `small` or `paper` by scale (`large` takes `paper`: the
    /// papers' counts of lookups and repeats; its trees come from
    /// [`Ctx::pick_tree`]).
    pub fn pick<T>(&self, tiny: T, small: T, paper: T) -> T {
        match self.scale {
            Scale::Tiny => tiny,
            Scale::Small => small,
            Scale::Large | Scale::Paper => paper,
        }
    }

    /// A tree dimension by scale: as [`Ctx::pick`], with `large` for
    /// `--scale large` (the papers' shapes, values shrunk to fit the disk).
    pub fn pick_tree<T>(&self, tiny: T, small: T, large: T, paper: T) -> T {
        match self.scale {
            Scale::Large => large,
            _ => self.pick(tiny, small, paper),
        }
    }

    /// Repeats per point: `--repeats`, else 1 at tiny scale, `small` or `paper`.
    pub fn repeats(&self, small: usize, paper: usize) -> usize {
        self.args
            .repeats
            .unwrap_or_else(|| self.pick(1, small, paper))
    }

    /// The bench flags every run of the experiment starts from: the defaults,
    /// with the experiment's `--background-threads`.
    pub fn bench_defaults(&self) -> BenchArgs {
        BenchArgs {
            background_threads: self.args.background_threads,
            ..BenchArgs::default()
        }
    }

    /// A progress message on stderr.
    pub fn note(&self, msg: impl AsRef<str>) {
        eprintln!("  [{}] {}", self.name, msg.as_ref());
    }

    /// Writes `table` as `<stem>.csv` (and JSON lines on stdout with `--json`).
    pub fn write_csv(&self, stem: &str, table: &Table) -> ExpResult<()> {
        table.write_csv(&self.out.join(format!("{stem}.csv")))?;
        if self.args.json {
            let mut out = std::io::stdout().lock();
            for line in table.json_lines(self.name, stem) {
                writeln!(out, "{line}")?;
            }
        }
        Ok(())
    }

    /// Draws `chart` as `<stem>.svg` and `<stem>.png`, records it in `summary`
    /// (a missing font is reported in the summary instead).
    pub fn plot(&self, summary: &mut Summary, stem: &str, alt: &str, chart: &plot::Chart) {
        match plot::render(chart, &self.out.join(stem)) {
            Ok(_) => {
                summary.plots.push(stem.to_string());
                summary.blocks.push(Block::Plot {
                    stem: stem.to_string(),
                    alt: alt.to_string(),
                });
            }
            Err(e) => {
                self.note(format!("plot {stem} not drawn: {e}"));
                summary
                    .blocks
                    .push(Block::Para(format!("(Plot `{stem}` not drawn: {e}.)")));
            }
        }
    }

    /// Mean nanoseconds of one `hash` digest of a `key_size`-byte key
    /// (distinct keys, best of 5 rounds; cached per experiment).
    pub fn hash_ns(&mut self, hash: HashFn, key_size: usize) -> f64 {
        if let Some(v) = self.hash_ns.get(&(hash, key_size)) {
            return *v;
        }
        let v = time_hash(hash, key_size, self.pick(2_000, 50_000, 200_000));
        self.hash_ns.insert((hash, key_size), v);
        v
    }

    /// A fresh directory for a database: under the work directory, or in
    /// `/dev/shm` (tmpfs) when `tmpfs` and it exists (`None` if it does not).
    pub fn db_dir(&mut self, label: &str, tmpfs: bool) -> ExpResult<Option<PathBuf>> {
        if tmpfs {
            let shm = Path::new("/dev/shm");
            if !shm.is_dir() {
                return Ok(None);
            }
            let d = tempfile::Builder::new()
                .prefix(&format!("sievedb-exp-{label}-"))
                .tempdir_in(shm)?
                .keep();
            self.shm.push(d.clone());
            return Ok(Some(d));
        }
        let d = self.work.join(label);
        if d.exists() {
            std::fs::remove_dir_all(&d)?;
        }
        std::fs::create_dir_all(&d).map_err(|e| with_path(e, &d))?;
        Ok(Some(d))
    }

    /// Deletes a database directory made by [`Ctx::db_dir`] early (to free space).
    pub fn drop_dir(&mut self, dir: &Path) {
        let _ = std::fs::remove_dir_all(dir);
        self.shm.retain(|d| d != dir);
    }

    pub(crate) fn cleanup(&mut self) {
        for d in self.shm.drain(..) {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Mean ns of hashing `n` distinct `key_size`-byte keys, best of 5 rounds.
pub fn time_hash(hash: HashFn, key_size: usize, n: usize) -> f64 {
    #[expect(
        clippy::expect_used,
        reason = "KeyGen::new(21, 1) always succeeds: 21 bytes hold the decimal of one key"
    )]
    let keys = KeyGen::new(key_size.max(8), 10_000_000)
        .or_else(|_| KeyGen::new(21, 1))
        .expect("21-byte keys hold one key");
    let ks = keys.key_size();
    let batch = n.clamp(1, 4096);
    let mut buf = vec![0u8; ks * batch];
    let mut best = f64::INFINITY;
    let mut sink = 0u64;
    for _round in 0..5 {
        let mut total = 0.0;
        let mut done = 0usize;
        while done < n {
            let m = batch.min(n - done);
            for j in 0..m {
                keys.fill(&mut buf[j * ks..(j + 1) * ks], (done + j) as u64, true);
            }
            let t = Instant::now();
            for k in buf[..m * ks].chunks_exact(ks) {
                sink =
                    sink.wrapping_add(sievedb::filter::hash::hash(hash, &k[..key_size.min(ks)], 0));
            }
            total += t.elapsed().as_secs_f64();
            done += m;
        }
        best = best.min(total * 1e9 / n as f64);
    }
    std::hint::black_box(sink);
    best
}

/// The shape and contents of a bulk-loaded tree.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeSpec {
    /// Entries.
    pub num: u64,
    /// Key size in bytes.
    pub key_size: usize,
    /// Value size in bytes.
    pub value_size: usize,
    /// Levels receiving data.
    pub levels: usize,
    /// Size ratio T.
    pub size_ratio: usize,
    /// Bloom filter bits per key.
    pub bits_per_key: f64,
    /// Table file size in bytes.
    pub target_file_size: u64,
}

impl TreeSpec {
    /// Bytes of keys and values.
    pub fn raw_bytes(&self) -> u64 {
        self.num * (self.key_size + self.value_size) as u64
    }
}

/// A bulk-loaded tree ready to be read (`dir/sievedb`).
#[derive(Clone, Debug)]
pub struct LoadedTree {
    /// What was loaded.
    pub spec: TreeSpec,
    /// The `--db` directory (the database is `dir/sievedb`).
    pub dir: PathBuf,
    /// `--level1-size` to open it with.
    pub level1_size: u64,
    /// Bytes on disk.
    pub bytes: u64,
    /// Table files.
    pub files: usize,
    /// Wall seconds the bulk load took.
    pub load_seconds: f64,
    /// Tables paper 000's lookups keep open on it (`tables_kept_open`).
    pub tables_open: usize,
}

/// Bulk-loads `spec` into `dir/sievedb` (Bloom filters of the spec's bits per key).
pub fn load_tree(ctx: &Ctx, spec: &TreeSpec, dir: &Path) -> ExpResult<LoadedTree> {
    let filters = crate::FilterArgs {
        bits_per_key: spec.bits_per_key,
        ..crate::FilterArgs::default()
    };
    load_tree_with(ctx, spec, dir, filters)
}

/// Bulk-loads `spec` into `dir/sievedb` with the filters `filters` ask for.
pub fn load_tree_with(
    ctx: &Ctx,
    spec: &TreeSpec,
    dir: &Path,
    filters: crate::FilterArgs,
) -> ExpResult<LoadedTree> {
    let cfg = BulkConfig {
        num: spec.num,
        key_size: spec.key_size,
        value_size: spec.value_size,
        seed: crate::DEFAULT_SEED,
        levels: spec.levels,
        size_ratio: spec.size_ratio,
        target_file_size: spec.target_file_size,
        filters,
    };
    let path = dir.join("sievedb");
    if path.exists() {
        std::fs::remove_dir_all(&path)?;
    }
    let bar = Progress::new(ctx.progress, Some(spec.num), "bulkload");
    let start = Instant::now();
    let report = crate::workload::bulk::load_generated(&path, &cfg, bar.callback());
    let load_seconds = start.elapsed().as_secs_f64();
    bar.finish();
    let report = report?;
    Ok(LoadedTree {
        spec: spec.clone(),
        dir: dir.to_path_buf(),
        level1_size: report.level1_size(),
        bytes: report.total_bytes(),
        files: report.total_files(),
        load_seconds,
        tables_open: tables_kept_open(report.total_files()),
    })
}

impl LoadedTree {
    /// Bench flags that read this tree as it is.
    pub fn bench_args(&self, ctx: &Ctx) -> BenchArgs {
        let s = &self.spec;
        BenchArgs {
            db: Some(self.dir.clone()),
            use_existing_db: true,
            benchmarks: "readmissing".into(),
            num: s.num,
            key_size: s.key_size,
            value_size: s.value_size,
            filters: crate::FilterArgs {
                bits_per_key: s.bits_per_key,
                ..crate::FilterArgs::default()
            },
            size_ratio: s.size_ratio,
            level1_size: self.level1_size,
            max_levels: (s.levels + 1).max(crate::DEFAULT_MAX_LEVELS),
            target_file_size: s.target_file_size,
            distribution: ctx.args.distribution,
            zipf_s: ctx.args.zipf_s,
            ..ctx.bench_defaults()
        }
    }
}

/// What the lookups of one setting measured (medians over repeats).
#[derive(Clone, Debug, Default)]
pub struct ReadStats {
    /// Median µs per lookup of the untimed-phase runs.
    pub micros: f64,
    /// Every run's µs per lookup.
    pub runs: Vec<f64>,
    /// Digests computed per lookup.
    pub digests: f64,
    /// Filters probed per lookup.
    pub probes: f64,
    /// Measured false-positive rate (false positives ÷ probes of absent keys).
    pub fpr: f64,
    /// Data blocks read per lookup (I/O count).
    pub data_reads: f64,
    /// Block-cache misses per lookup.
    pub cache_misses: f64,
    /// Fraction of lookups that found a value.
    pub found: f64,
    /// Per-lookup ns `[hash, filter, index, data, other]` from a `--breakdown` run.
    pub breakdown: Option<[f64; 5]>,
}

impl ReadStats {
    /// Total ns per lookup of the breakdown run.
    pub fn breakdown_total(&self) -> f64 {
        self.breakdown.map_or(f64::NAN, |b| b.iter().sum())
    }

    /// Breakdown hash ns ÷ breakdown total.
    pub fn hash_share(&self) -> f64 {
        self.breakdown
            .map_or(f64::NAN, |b| b[0] / b.iter().sum::<f64>())
    }
}

/// Names of the breakdown phases.
pub const PHASES: [&str; 5] = ["hash", "filter", "index", "data", "other"];

/// The point-lookup record of a run.
fn lookup_record(records: Vec<Record>) -> ExpResult<Record> {
    records
        .into_iter()
        .find(|r| r.benchmark.is_point_read())
        .ok_or_else(|| "the benchmark returned no lookup record".into())
}

fn counters(r: &Record, s: &mut ReadStats) {
    let Some(st) = &r.stats else { return };
    let n = st.gets.max(1) as f64;
    s.digests = st.digests_computed as f64 / n;
    s.probes = st.filter_probes as f64 / n;
    let found = r.m.found.unwrap_or(0);
    let absent_probes = st.filter_probes.saturating_sub(found);
    s.fpr = if absent_probes > 0 {
        st.filter_false_positives as f64 / absent_probes as f64
    } else {
        f64::NAN
    };
    s.data_reads = st.data_block_reads as f64 / n;
    s.cache_misses = st.block_cache_misses as f64 / n;
    s.found = found as f64 / r.m.ops.max(1) as f64;
}

/// Table files the lookups of paper 000's experiments keep open on a tree of
/// `files`: every one (plus a margin), as the paper's RocksDB does
/// (`max_open_files = −1`, db_bench's default: "LSM-trees maintain two
/// in-memory auxiliary data structures for each SST file: fence pointers and
/// Bloom filters", §2), so that no lookup reopens a table; at least the
/// bench default, and below the process's limit on open descriptors (raised
/// to its hard limit first), which a 22 GB tree of ~11,000 files may exceed.
pub fn tables_kept_open(files: usize) -> usize {
    let want = (files + 64).max(crate::MAX_OPEN_FILES);
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` and `setrlimit` read or write only the `rlimit`
    // they are given, which lives on this stack frame for the whole call.
    let limit = unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return crate::MAX_OPEN_FILES;
        }
        if lim.rlim_cur < lim.rlim_max && (lim.rlim_cur as usize) < want + 256 {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
        usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX)
    };
    want.min(limit.saturating_sub(256))
        .max(crate::MAX_OPEN_FILES.min(limit / 2))
}

/// Reads `tree` once per sharing mode in `modes`, `repeats` times alternating
/// the order, plus ⌈repeats/2⌉ `--breakdown` runs per mode (phase medians); `setup` adjusts the bench
/// flags (benchmark, alpha, device…). Returns one [`ReadStats`] per mode.
pub fn measure_modes(
    ctx: &Ctx,
    tree: &LoadedTree,
    modes: &[HashSharing],
    reads: u64,
    repeats: usize,
    setup: &dyn Fn(&mut BenchArgs),
) -> ExpResult<Vec<ReadStats>> {
    let mut stats = vec![ReadStats::default(); modes.len()];
    let base = {
        let mut a = tree.bench_args(ctx);
        a.reads = reads;
        a.max_open_files = tree.tables_open;
        setup(&mut a);
        a
    };
    for rep in 0..repeats {
        for i in alternating_order(modes.len(), rep) {
            let mut a = base.clone();
            a.filters.hash_sharing = modes[i];
            let r = lookup_record(crate::run_records(&a)?)?;
            stats[i].runs.push(r.rates().micros_per_op);
            counters(&r, &mut stats[i]);
        }
    }
    // Breakdown runs (about half as many as timed runs, alternating too):
    // each phase is the median over them.
    let mut phases: Vec<Vec<[f64; 5]>> = vec![Vec::new(); modes.len()];
    for rep in 0..repeats.div_ceil(2).max(1) {
        for i in alternating_order(modes.len(), rep) {
            let mut a = base.clone();
            a.filters.hash_sharing = modes[i];
            a.breakdown = true;
            let r = lookup_record(crate::run_records(&a)?)?;
            if let Some(b) = r.breakdown_ns() {
                phases[i].push(b);
            }
        }
    }
    for (i, st) in stats.iter_mut().enumerate() {
        if !phases[i].is_empty() {
            let mut b = [0.0; 5];
            for (p, v) in b.iter_mut().enumerate() {
                *v = median(&mut phases[i].iter().map(|x| x[p]).collect::<Vec<_>>());
            }
            st.breakdown = Some(b);
        }
        let mut runs = st.runs.clone();
        st.micros = median(&mut runs);
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table of a tree stays open when the descriptor limit allows
    /// it, and the count never comes within 256 of that limit.
    #[test]
    fn every_table_stays_open_within_the_descriptor_limit() {
        let n = tables_kept_open(5_000);
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `getrlimit` writes only the `rlimit` it is given.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        let limit = usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX);
        assert!(
            n >= 5_064 || n == limit.saturating_sub(256),
            "{n} of limit {limit}"
        );
        assert!(
            n + 256 <= limit || n <= crate::MAX_OPEN_FILES,
            "{n} of limit {limit}"
        );
        assert!(tables_kept_open(10) >= crate::MAX_OPEN_FILES.min(limit / 2));
    }
}
