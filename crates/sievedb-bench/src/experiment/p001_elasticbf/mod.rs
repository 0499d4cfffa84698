//! Paper 001 (ElasticBF): filter units kept resident by access hotness under a
//! filter memory budget (Table 1, Figures 5, 6 and 7, the persistence of
//! hotness across a restart, and a hot set that moves).
//!
//! Every read experiment bulk-loads one tree whose files carry 6 filter units
//! of 2 bits/key (12 bits/key on disk) and reads it with `readmixed` (half the
//! lookups for absent keys) under a filter memory budget of 4 bits/key on
//! average, one run per filter policy, back to back, the order alternating
//! across repeats. The "device reads" of a run are the data blocks read from
//! the files (`block_cache_misses`), plus the reads that loaded filter units
//! (`filter_unit_reads`: one per load, however many adjacent units it
//! brings; `filter_unit_loads` counts the units), plus what table opens read
//! (`table_open_reads`).
//!
//! Files: one per experiment (table1, fig5, fig6, fig7, warmup, shift).

mod baselines;
mod fig5;
mod fig6;
mod fig7;
mod shift;
mod table1;
mod warmup;

pub(super) use fig5::fig5;
pub(super) use fig6::fig6;
pub(super) use fig7::fig7;
pub(super) use shift::shift;
pub(super) use table1::table1;
pub(super) use warmup::warmup;

use super::{
    alternating_order, f, Ctx, ExpResult, LoadedTree, PairedRatio, Summary, Table, TreeSpec,
    GAIN_DEFINITION,
};
use crate::bench::{
    Benchmark, KeyChooser, KeyDistribution, DEFAULT_HOT_DATA_FRACTION, DEFAULT_HOT_OP_FRACTION,
};
use crate::engines::Engine;
use crate::report::{median, Record};
use crate::workload::keys::KeyGen;
use crate::{BenchArgs, FilterArgs};
use rand::rngs::SmallRng;
use rand::Rng;
use sievedb::{FilterLayout, FilterPolicy};
use std::sync::{Arc, Mutex};

/// Filter units per file.
const UNITS: u32 = 6;
/// Bits per key of all units together, on disk (6 × 2).
const DISK_BPK: f64 = 12.0;
/// The average filter memory budget of the read experiments, bits per key.
const BUDGET_BPK: f64 = 4.0;
/// Block cache of every run (the paper's Figure 6).
const BLOCK_CACHE: u64 = 8 << 20;
/// Fraction of lookups for existing keys.
const ALPHA: f64 = 0.5;
/// Value size: 16-byte keys + 1000-byte values ≈ the paper's 1 KB pairs.
const VALUE_SIZE: usize = 1000;
/// Value bytes at `--scale large`: the paper's 100M entries and ~50,000
/// files in 7 levels (L0 and 6 with data), with values of 100 B instead of
/// 1 KB so that the tree (≈ 12.4 GB) fits this machine's disk; 256 KiB files
/// instead of 2 MiB keep the paper's number of files.
const LARGE_VALUE_SIZE: usize = 100;

/// Which design is the baseline of the gains here (the definition itself is
/// the shared [`GAIN_DEFINITION`], printed beside it).
const GAIN_BASELINE: &str = "Here the baseline is the `uniform` policy (every file keeps the \
    same resident bits per key, as LevelDB does, under the same budget) and the proposal the \
    policy of the column; a device-read gain is reads of `uniform` ÷ reads of the policy (as \
    the paper's \"LevelDB issues 2.42–3.05× more I/Os\", paper 001 §4).";

/// A column of the read experiments: a policy under the budget, or every
/// unit resident.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Column {
    Policy(FilterPolicy),
    Unlimited,
}

impl Column {
    fn name(self) -> String {
        match self {
            Column::Policy(p) => p.name().to_string(),
            Column::Unlimited => format!("unlimited ({DISK_BPK} bits/key)"),
        }
    }
}

/// A key popularity of Table 1.
#[derive(Clone, Copy, Debug)]
struct Dist {
    dist: KeyDistribution,
    s: f64,
}

impl Dist {
    fn label(&self) -> String {
        match self.dist {
            KeyDistribution::Uniform => "uniform".into(),
            KeyDistribution::Zipfian => format!("zipf {:.2}", self.s),
            KeyDistribution::Latest => format!("latest {:.2}", self.s),
            KeyDistribution::Hotspot => format!(
                "hotspot {:.0}/{:.0}",
                DEFAULT_HOT_OP_FRACTION * 100.0,
                DEFAULT_HOT_DATA_FRACTION * 100.0
            ),
        }
    }
}

const DISTS: [Dist; 4] = [
    Dist {
        dist: KeyDistribution::Uniform,
        s: 0.99,
    },
    Dist {
        dist: KeyDistribution::Zipfian,
        s: 0.99,
    },
    Dist {
        dist: KeyDistribution::Zipfian,
        s: 1.10,
    },
    Dist {
        dist: KeyDistribution::Zipfian,
        s: 1.20,
    },
];

/// What one read run measured (the counters are deltas over the measured
/// benchmark, except the filter memory and E[Extra_IO], levels at its end).
#[derive(Clone, Debug, Default)]
struct Run {
    ops_per_sec: f64,
    gets: u64,
    found: u64,
    /// Data blocks read by lookups, from the cache or a file.
    block_reads: u64,
    cache_misses: u64,
    /// Filter units loaded.
    unit_loads: u64,
    /// The reads that loaded them (a load of several units is one read).
    unit_reads: u64,
    /// Reads of table opens (table-cache misses: footer, index, properties,
    /// filter index).
    table_open_reads: u64,
    unit_evictions: u64,
    false_positives: u64,
    extra_io: f64,
    filter_bytes: u64,
}

impl Run {
    fn device_reads(&self) -> u64 {
        self.cache_misses + self.unit_reads + self.table_open_reads
    }

    /// Data blocks read with no filter saying "maybe": lookups in files with
    /// no resident unit (data block reads − found keys − false positives).
    fn unfiltered(&self) -> u64 {
        self.block_reads
            .saturating_sub(self.found)
            .saturating_sub(self.false_positives)
    }

    fn per_get(&self, x: u64) -> f64 {
        x as f64 / self.gets.max(1) as f64
    }
}

/// Median over the repeats of `runs` of `g`.
fn med(runs: &[Run], g: impl Fn(&Run) -> f64) -> f64 {
    let mut v: Vec<f64> = runs.iter().map(g).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    median(&mut v)
}

/// Per repeat `g(a_i) ÷ g(b_i)`, as the experiments' shared [`PairedRatio`].
fn ratio_of(a: &[Run], b: &[Run], g: impl Fn(&Run) -> f64) -> PairedRatio {
    let num: Vec<f64> = a.iter().map(&g).collect();
    let den: Vec<f64> = b.iter().map(&g).collect();
    PairedRatio::of(&num, &den)
}

/// The shape of the tree the read experiments load.
fn tree_spec(ctx: &Ctx) -> TreeSpec {
    TreeSpec {
        num: ctx.pick(20_000, 256_000, 100_000_000),
        key_size: crate::DEFAULT_KEY_SIZE,
        value_size: ctx.pick_tree(VALUE_SIZE, VALUE_SIZE, LARGE_VALUE_SIZE, VALUE_SIZE),
        levels: ctx.pick_tree(3, 3, 6, 5),
        size_ratio: 10,
        bits_per_key: DISK_BPK,
        target_file_size: ctx.pick_tree(64 << 10, 256 << 10, 256 << 10, 2 << 20),
    }
}

/// ElasticBF's lifeTime: the paper's 20K at paper scale, else the engine's
/// default (the order of the number of files).
fn lifetime(ctx: &Ctx) -> Option<u64> {
    ctx.pick(None, None, Some(20_000))
}

/// The filter flags of a read run: 6 units of 2 bits/key, and the column's
/// budget and policy.
fn unit_filters(ctx: &Ctx, col: Column, budget_bpk: f64) -> FilterArgs {
    let (budget, policy) = match col {
        Column::Policy(p) => (Some(budget_bpk), p),
        Column::Unlimited => (None, FilterPolicy::Uniform),
    };
    FilterArgs {
        bits_per_key: DISK_BPK,
        filter: FilterLayout::Units,
        filter_units: UNITS,
        filter_memory_bits_per_key: budget,
        filter_policy: policy,
        filter_lifetime: lifetime(ctx),
        ..FilterArgs::default()
    }
}

/// A loaded tree and whether O_DIRECT works on it.
struct Tree {
    tree: LoadedTree,
    direct: bool,
    /// Why direct I/O is off, when it is.
    direct_note: Option<String>,
}

impl Tree {
    fn db_path(&self) -> std::path::PathBuf {
        self.tree.dir.join("sievedb")
    }

    /// Deletes the `HOTNESS` side file (the database is closed between runs),
    /// so that every run starts cold, without what an earlier run learnt.
    fn forget_hotness(&self) -> ExpResult<()> {
        match std::fs::remove_file(self.db_path().join("HOTNESS")) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Bench flags reading this tree with `col` at `budget_bpk`.
    fn args(&self, ctx: &Ctx, reads: u64, dist: Dist, col: Column, budget_bpk: f64) -> BenchArgs {
        let mut a = self.tree.bench_args(ctx);
        a.benchmarks = "readmixed".into();
        a.alpha = ALPHA;
        a.reads = reads;
        a.distribution = dist.dist;
        a.zipf_s = dist.s;
        a.block_cache_size = BLOCK_CACHE;
        a.use_direct_reads = self.direct;
        a.filters = unit_filters(ctx, col, budget_bpk);
        a
    }

    /// One cold run (no hotness file); `warm` first runs `readrandom` of as
    /// many lookups in the same open database (block cache and hotness warm),
    /// then measures `readmixed`.
    fn read(
        &self,
        ctx: &Ctx,
        reads: u64,
        dist: Dist,
        col: Column,
        budget_bpk: f64,
        warm: bool,
    ) -> ExpResult<Run> {
        self.forget_hotness()?;
        let mut a = self.args(ctx, reads, dist, col, budget_bpk);
        if warm {
            a.benchmarks = "readrandom,readmixed".into();
        }
        let recs = crate::run_records(&a)?;
        let r = recs
            .into_iter()
            .find(|r| r.benchmark == Benchmark::ReadMixed)
            .ok_or("the benchmark returned no readmixed record")?;
        Ok(run_of(&r))
    }
}

fn run_of(r: &Record) -> Run {
    let st = r.stats.clone().unwrap_or_default();
    Run {
        ops_per_sec: r.rates().ops_per_sec,
        gets: st.gets,
        found: r.m.found.unwrap_or(0),
        block_reads: st.data_block_reads,
        cache_misses: st.block_cache_misses,
        unit_loads: st.filter_unit_loads,
        unit_reads: st.filter_unit_reads,
        table_open_reads: st.table_open_reads,
        unit_evictions: st.filter_unit_evictions,
        false_positives: st.filter_false_positives,
        extra_io: st.estimated_extra_io,
        filter_bytes: st.filter_memory_bytes,
    }
}

/// Bulk-loads the read experiments' tree and checks O_DIRECT on it.
fn load(ctx: &mut Ctx) -> ExpResult<Tree> {
    let spec = tree_spec(ctx);
    let dir = ctx.db_dir("elastic", false)?.ok_or("no work directory")?;
    ctx.note(format!(
        "bulk load: {} entries of {} + {} B, {} levels, T = {}, {} KiB files, {UNITS} units × {} bits/key",
        spec.num,
        spec.key_size,
        spec.value_size,
        spec.levels,
        spec.size_ratio,
        spec.target_file_size >> 10,
        DISK_BPK / f64::from(UNITS)
    ));
    let filters = FilterArgs {
        bits_per_key: DISK_BPK,
        filter: FilterLayout::Units,
        filter_units: UNITS,
        ..FilterArgs::default()
    };
    let tree = super::load_tree_with(ctx, &spec, &dir, filters)?;
    let mut t = Tree {
        tree,
        direct: true,
        direct_note: None,
    };
    // A short probe: does the file system accept O_DIRECT?
    let probe = t.args(ctx, 10, DISTS[0], Column::Unlimited, BUDGET_BPK);
    if let Err(e) = crate::run_records(&probe) {
        t.direct = false;
        t.direct_note = Some(format!(
            "O_DIRECT was refused ({e}), so the files are read through the page cache; device \
             reads are still counted as blocks read from files, but their cost is a memory copy"
        ));
        ctx.note("O_DIRECT refused: reading through the page cache");
    }
    Ok(t)
}

/// The tree, in a sentence.
fn tree_sentence(t: &Tree) -> String {
    let s = &t.tree.spec;
    format!(
        "One bulk-loaded tree: {} entries of {} + {} B ({:.0} MB in {} files of {} KiB, {} levels \
         at T = {}, loaded in {:.0} s), each file with {UNITS} filter units of {} bits/key ({DISK_BPK} bits/key on \
         disk); block cache {} MiB; files read {}; ElasticBF's lifeTime: {}. **Device reads** = \
         data blocks read from the files (`block_cache_misses`) + filter units read from the \
         files (`filter_unit_reads`, one read per load of a file's adjacent units; the units are \
         `filter_unit_loads`) + what table opens read (`table_open_reads`: footer, index, \
         properties and filter index of a table the table cache does not hold; a filter is read \
         at its file's first lookup, so a run from a fresh open pays them).",
        s.num,
        s.key_size,
        s.value_size,
        t.tree.bytes as f64 / 1e6,
        t.tree.files,
        s.target_file_size >> 10,
        s.levels,
        s.size_ratio,
        t.tree.load_seconds,
        DISK_BPK / f64::from(UNITS),
        BLOCK_CACHE >> 20,
        if t.direct {
            "with O_DIRECT (`--use-direct-reads`)"
        } else {
            "through the page cache (O_DIRECT refused)"
        },
        if s.num >= 100_000_000 {
            "20K lookups (the paper's)"
        } else {
            "the engine's default (of the order of the number of files)"
        },
    )
}

/// The setting sentence shared by the bench-driven read experiments.
fn setting(t: &Tree, reads: u64, repeats: usize) -> String {
    format!(
        "{} Each run opens the tree, reads it with `readmixed` ({reads} lookups, {:.0}% for \
         absent keys) and closes it; the filter memory budget is {BUDGET_BPK} bits/key on average \
         (`FilterMemory::BitsPerKey`) unless stated. The `HOTNESS` file is deleted before every \
         run, so each starts cold (as the paper's \"empty cache in which no filter is \
         buffered\"); units loaded while opening (every file's initial units) are not counted. \
         {repeats} repeat(s), the runs of one repeat back to back with the order alternating \
         across repeats; medians.",
        tree_sentence(t),
        (1.0 - ALPHA) * 100.0,
    )
}

// ---------------------------------------------------------------------------
// Table 1 and Figure 5: one measurement.

/// The Table 1 / Figure 5 measurement.
struct Grid {
    cols: Vec<Column>,
    /// `runs[dist][col][repeat]`.
    runs: Vec<Vec<Vec<Run>>>,
    reads: u64,
    setting: String,
    /// Megabytes of the tree.
    tree_mb: f64,
    direct_note: Option<String>,
    /// The baseline engines built in, read like the policies.
    baselines: Vec<baselines::Baseline>,
    /// Baseline engines not built in, as a sentence.
    missing_baselines: String,
}

/// The last grid measured in this process (`all` runs Table 1 then Figure 5),
/// keyed by scale and repeats.
static GRID: Mutex<Option<(String, Arc<Grid>)>> = Mutex::new(None);

fn grid(ctx: &mut Ctx) -> ExpResult<(Arc<Grid>, bool)> {
    let repeats = ctx.repeats(3, 3);
    let key = format!("{}-{repeats}", ctx.scale.name());
    if let Some((k, g)) = GRID.lock().map_err(|_| "poisoned")?.as_ref() {
        if *k == key {
            ctx.note("reusing the Table 1 measurement of this process");
            return Ok((g.clone(), true));
        }
    }
    let reads = ctx.pick(5_000, 60_000, 1_000_000);
    let dists: Vec<Dist> = ctx.pick(vec![DISTS[0], DISTS[1]], DISTS.to_vec(), DISTS.to_vec());
    let mut cols: Vec<Column> = FilterPolicy::ALL
        .iter()
        .map(|p| Column::Policy(*p))
        .collect();
    cols.push(Column::Unlimited);
    let t = load(ctx)?;
    let mut runs = vec![vec![Vec::new(); cols.len()]; dists.len()];
    for (di, d) in dists.iter().enumerate() {
        for rep in 0..repeats {
            for ci in alternating_order(cols.len(), rep) {
                let r = t.read(ctx, reads, *d, cols[ci], BUDGET_BPK, false)?;
                runs[di][ci].push(r);
            }
        }
        let u = &runs[di][0];
        let e = &runs[di][cols
            .iter()
            .position(|c| *c == Column::Policy(FilterPolicy::Elastic))
            .unwrap_or(0)];
        ctx.note(format!(
            "{}: device reads/Get uniform {:.3}, elastic {:.3}; ops/s {:.0} vs {:.0}",
            d.label(),
            med(u, |r| r.per_get(r.device_reads())),
            med(e, |r| r.per_get(r.device_reads())),
            med(u, |r| r.ops_per_sec),
            med(e, |r| r.ops_per_sec)
        ));
    }
    let (baselines, missing_baselines) = baselines::run(ctx, &t, &dists, reads, repeats)?;
    let g = Arc::new(Grid {
        cols,
        runs,
        reads,
        setting: setting(&t, reads, repeats),
        tree_mb: t.tree.bytes as f64 / 1e6,
        direct_note: t.direct_note.clone(),
        baselines,
        missing_baselines,
    });
    ctx.drop_dir(&t.tree.dir);
    *GRID.lock().map_err(|_| "poisoned")? = Some((key, g.clone()));
    Ok((g, false))
}

const T1_COLS: [&str; 17] = [
    "distribution",
    "column",
    "repeat",
    "gets",
    "device_reads",
    "data_block_reads",
    "unfiltered_block_reads",
    "block_cache_misses",
    "filter_unit_loads",
    "filter_unit_reads",
    "filter_unit_evictions",
    "filter_false_positives",
    "estimated_extra_io",
    "found",
    "filter_memory_bytes",
    "ops_per_sec",
    "device_reads_per_get",
];

fn grid_csv(g: &Grid, dists: &[Dist]) -> Table {
    let mut t = Table::new(&T1_COLS);
    for (di, d) in dists.iter().enumerate().take(g.runs.len()) {
        for (ci, c) in g.cols.iter().enumerate() {
            for (rep, r) in g.runs[di][ci].iter().enumerate() {
                t.push(vec![
                    d.label(),
                    c.name(),
                    (rep + 1).to_string(),
                    r.gets.to_string(),
                    r.device_reads().to_string(),
                    r.block_reads.to_string(),
                    r.unfiltered().to_string(),
                    r.cache_misses.to_string(),
                    r.unit_loads.to_string(),
                    r.unit_reads.to_string(),
                    r.unit_evictions.to_string(),
                    r.false_positives.to_string(),
                    f(r.extra_io, 1),
                    r.found.to_string(),
                    r.filter_bytes.to_string(),
                    f(r.ops_per_sec, 1),
                    f(r.per_get(r.device_reads()), 5),
                ]);
            }
        }
        for b in &g.baselines {
            t.push(vec![
                d.label(),
                format!("{} ({BUDGET_BPK} bits/key)", b.name),
                "median".into(),
                g.reads.to_string(),
                b.device_reads[di].map_or(String::new(), |x| f(x * g.reads as f64, 0)),
                // The engine's own counters: none for a baseline.
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                f(b.ops[di], 1),
                b.device_reads[di].map_or(String::new(), |x| f(x, 5)),
            ]);
        }
    }
    t
}

#[expect(
    clippy::expect_used,
    reason = "every policy the grid is asked about is one of its columns"
)]
fn col_index(g: &Grid, p: FilterPolicy) -> usize {
    g.cols
        .iter()
        .position(|c| *c == Column::Policy(p))
        .expect("every policy is a column")
}

/// The runs shared by Table 1 and Figure 5 (measured once per process),
/// their CSV written as `name`, and a summary opened with the setting and
/// the gain's definition (`other` names the experiment that shares them).
fn grid_summary(
    ctx: &mut Ctx,
    name: &str,
    title: &str,
    other: &str,
) -> ExpResult<(Arc<Grid>, Summary)> {
    let (g, reused) = grid(ctx)?;
    ctx.write_csv(name, &grid_csv(&g, &DISTS[..g.runs.len()]))?;
    let mut s = Summary::new(name, title);
    s.para(g.setting.clone());
    s.para(GAIN_DEFINITION);
    s.para(GAIN_BASELINE);
    if reused {
        s.para(format!(
            "(The runs are the ones of `{other}` in this process.)"
        ));
    }
    Ok((g, s))
}

/// The smallest and the largest of `xs`.
fn min_max(xs: impl Iterator<Item = f64>) -> (f64, f64) {
    xs.filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        })
}

/// One note per (distribution, policy) whose ratio to uniform is noisy.
fn noisy_notes(g: &Grid, dists: &[Dist], what: &str, m: impl Fn(&Run) -> f64) -> Vec<String> {
    let ui = col_index(g, FilterPolicy::Uniform);
    let mut flagged = Vec::new();
    for (di, d) in dists.iter().enumerate() {
        for (ci, c) in g.cols.iter().enumerate() {
            if ci == ui {
                continue;
            }
            let r = if what == "throughput" {
                ratio_of(&g.runs[di][ci], &g.runs[di][ui], &m)
            } else {
                ratio_of(&g.runs[di][ui], &g.runs[di][ci], &m)
            };
            if r.within_noise() {
                flagged.push(format!("{} / {} ({})", d.label(), c.name(), r.show_ratio()));
            }
        }
    }
    if g.runs
        .first()
        .and_then(|d| d.first())
        .is_none_or(|r| r.len() < 2)
    {
        vec!["One repeat: no run-to-run spread was measured.".into()]
    } else if flagged.is_empty() {
        vec![format!(
            "No {what} ratio to `uniform` is within run-to-run noise."
        )]
    } else {
        vec![format!(
            "⚠ {what} ratios to `uniform` within noise (their run-to-run spread crosses 1× or \
             exceeds their distance from 1×): {}.",
            flagged.join("; ")
        )]
    }
}

// ---------------------------------------------------------------------------
// Lookups driven directly (elastic-warmup and elastic-shift).

/// Device reads (block-cache misses + unit-load reads + table-open reads),
/// the reads that loaded filter units, and the units they loaded, so far.
fn device_reads_of(e: &dyn Engine) -> (u64, u64, u64) {
    let s = e.stats().unwrap_or_default();
    (
        s.block_cache_misses + s.filter_unit_reads + s.table_open_reads,
        s.filter_unit_reads,
        s.filter_unit_loads,
    )
}

/// `n` lookups of `chooser`'s keys, a share `alpha` of them for keys that
/// exist (the others absent), drawn with `rng`.
fn lookups(
    e: &dyn Engine,
    keys: &KeyGen,
    chooser: &mut KeyChooser,
    rng: &mut SmallRng,
    n: u64,
    alpha: f64,
) -> ExpResult<()> {
    let mut key = vec![0u8; keys.key_size()];
    keys.fill(&mut key, 0, false);
    for _ in 0..n {
        let i = chooser.next(rng);
        let missing = !rng.gen_bool(alpha);
        keys.refill(&mut key, i, missing);
        std::hint::black_box(e.get_len(&key)?);
    }
    Ok(())
}
