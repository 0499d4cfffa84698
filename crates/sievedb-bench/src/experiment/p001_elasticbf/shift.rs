//! `elastic-shift`: filter memory under a moving hot set, the case ElasticBF
//! exists for. Every policy under the same budget, and the offline oracle,
//! read the same stream of lookups whose popular keys move every so many
//! lookups (`--hot-shift-every`); device reads are counted per window of
//! lookups, so the curves show how each policy follows the moves.
//!
//! The **oracle** is the offline optimum for the run's true access counts:
//! a first pass over the same stream with every unit resident and counts
//! that never decay records each file's accesses (every lookup:
//! `filter_access_sample` 1, where the policies sample one in 4); closing
//! writes them to the `HOTNESS` file, and
//! the measured pass opens under the budget with `skew-at-write`, which plans
//! the greedy optimum of `Σ f_i·fp_i(n_i)` (false positives saved per byte)
//! over the restored counts at open and never moves a unit on a lookup.

use super::{
    device_reads_of, load, lookups, min_max, tree_sentence, Column, Dist, Tree, ALPHA, BUDGET_BPK,
    DISK_BPK,
};
use crate::bench::{
    KeyChooser, KeyDistribution, DEFAULT_HOT_DATA_FRACTION, DEFAULT_HOT_OP_FRACTION,
};
use crate::engines::EngineKind;
use crate::experiment::plot::Chart;
use crate::experiment::{f, Ctx, ExpResult, Summary, Table};
use crate::report::median;
use crate::workload::keys::KeyGen;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use sievedb::FilterPolicy;
use std::time::Instant;

/// A popularity whose hot set moves, and the share of its lookups for keys
/// that exist.
#[derive(Clone, Copy)]
struct Workload {
    dist: Dist,
    /// `hotspot` only: the share of the lookups that go to the hot range, and
    /// the share of the keys in it.
    hot: (f64, f64),
    alpha: f64,
    /// Names the plot: `elastic-shift-{stem}.svg`.
    stem: &'static str,
}

impl Workload {
    fn label(&self) -> String {
        match self.dist.dist {
            KeyDistribution::Hotspot => format!(
                "hotspot {:.0}/{:.0}{}",
                self.hot.0 * 100.0,
                self.hot.1 * 100.0,
                if self.alpha == 0.0 {
                    " (all absent)"
                } else {
                    ""
                }
            ),
            _ => self.dist.label(),
        }
    }
}

/// The popularities whose hot set moves: zipfian keys scattered over every
/// file, zipfian over recency (packed), a hot range of 20% of the keys
/// taking 80% of the lookups (packed, but more than the block cache holds),
/// all half absent as in the paper; and a hot range of 5% of the keys taking
/// 95% of the lookups, all for absent keys: the case where a file's filter
/// is all that stands between a lookup and a device read, and where the hot
/// files are few enough for the budget to cover them.
const WORKLOADS: [Workload; 4] = [
    Workload {
        dist: Dist {
            dist: KeyDistribution::Zipfian,
            s: 0.99,
        },
        hot: (DEFAULT_HOT_OP_FRACTION, DEFAULT_HOT_DATA_FRACTION),
        alpha: ALPHA,
        stem: "zipf",
    },
    Workload {
        dist: Dist {
            dist: KeyDistribution::Latest,
            s: 0.99,
        },
        hot: (DEFAULT_HOT_OP_FRACTION, DEFAULT_HOT_DATA_FRACTION),
        alpha: ALPHA,
        stem: "latest",
    },
    Workload {
        dist: Dist {
            dist: KeyDistribution::Hotspot,
            s: 0.99,
        },
        hot: (DEFAULT_HOT_OP_FRACTION, DEFAULT_HOT_DATA_FRACTION),
        alpha: ALPHA,
        stem: "hotspot",
    },
    Workload {
        dist: Dist {
            dist: KeyDistribution::Hotspot,
            s: 0.99,
        },
        hot: (0.95, 0.05),
        alpha: 0.0,
        stem: "hotspot-95-5",
    },
];

/// The oracle's column name.
const ORACLE: &str = "oracle";

/// Policies whose units never move on a lookup (the best of them is what
/// `elastic` must beat when the hot set moves).
const STATIC: [FilterPolicy; 3] = [
    FilterPolicy::Uniform,
    FilterPolicy::Monkey,
    FilterPolicy::SkewAtWrite,
];

/// One measured pass: device reads and unit loads per window, the reads
/// that loaded units, and seconds.
struct Pass {
    name: String,
    reads: Vec<u64>,
    loads: Vec<u64>,
    unit_reads: u64,
    seconds: f64,
}

/// Lookups per window, windows, lookups per position of the hot set.
struct Stream {
    window: u64,
    windows: usize,
    phase: u64,
}

impl Stream {
    fn lookups(&self) -> u64 {
        self.window * self.windows as u64
    }
}

/// Runs the stream of `w` (the same keys for every pass) on the tree
/// opened with `col` at `budget_bpk`, counting device reads per window;
/// `counting`: the oracle's counting pass (every lookup counted, counts
/// that never expire).
#[allow(clippy::too_many_arguments)]
fn pass(
    ctx: &Ctx,
    t: &Tree,
    keys: &KeyGen,
    w: Workload,
    stream: &Stream,
    col: Column,
    budget_bpk: f64,
    counting: bool,
    name: String,
) -> ExpResult<Pass> {
    let mut a = t.args(ctx, 0, w.dist, col, budget_bpk);
    if counting {
        a.filters.filter_lifetime = Some(1 << 40);
        a.filters.filter_access_sample = Some(1);
    }
    let e = EngineKind::Sievedb.open(&t.db_path(), &a.engine_config())?;
    let mut chooser = KeyChooser::new(w.dist.dist, t.tree.spec.num, w.dist.s)?;
    if w.dist.dist == KeyDistribution::Hotspot {
        chooser = chooser.with_hotspot(w.hot.1, w.hot.0)?;
    }
    let mut chooser = chooser.with_hot_shift(Some(stream.phase))?;
    let mut rng = SmallRng::seed_from_u64(crate::DEFAULT_SEED + 7);
    let mut p = Pass {
        name,
        reads: Vec::with_capacity(stream.windows),
        loads: Vec::with_capacity(stream.windows),
        unit_reads: 0,
        seconds: 0.0,
    };
    let mut prev = device_reads_of(e.as_ref());
    for _ in 0..stream.windows {
        let start = Instant::now();
        lookups(
            e.as_ref(),
            keys,
            &mut chooser,
            &mut rng,
            stream.window,
            w.alpha,
        )?;
        p.seconds += start.elapsed().as_secs_f64();
        let now = device_reads_of(e.as_ref());
        p.reads.push(now.0 - prev.0);
        p.unit_reads += now.1 - prev.1;
        p.loads.push(now.2 - prev.2);
        prev = now;
    }
    Ok(p)
}

/// Every policy and the oracle on one moving workload, and the oracle's
/// counting pass (every unit resident, no budget).
fn passes(
    ctx: &Ctx,
    t: &Tree,
    keys: &KeyGen,
    w: Workload,
    s: &Stream,
) -> ExpResult<(Vec<Pass>, Pass)> {
    let mut out = Vec::new();
    for &p in FilterPolicy::ALL {
        t.forget_hotness()?;
        ctx.note(format!("elastic-shift {}: {p}", w.label()));
        out.push(pass(
            ctx,
            t,
            keys,
            w,
            s,
            Column::Policy(p),
            BUDGET_BPK,
            false,
            p.name().into(),
        )?);
    }
    // The oracle: learn the true counts with every unit resident and no
    // decay, then plan once for them under the budget.
    t.forget_hotness()?;
    ctx.note(format!("elastic-shift {}: oracle", w.label()));
    let learn = Column::Policy(FilterPolicy::SkewAtWrite);
    let counted = pass(ctx, t, keys, w, s, learn, DISK_BPK, true, "learn".into())?;
    if !t.db_path().join("HOTNESS").exists() {
        return Err("the oracle's counting pass wrote no HOTNESS file".into());
    }
    out.push(pass(
        ctx,
        t,
        keys,
        w,
        s,
        learn,
        BUDGET_BPK,
        false,
        ORACLE.into(),
    )?);
    t.forget_hotness()?;
    Ok((out, counted))
}

fn total(p: &Pass) -> u64 {
    p.reads.iter().sum()
}

/// Device reads of a pass other than the reads that loaded filter units:
/// data blocks and table opens.
fn data_reads(p: &Pass) -> u64 {
    total(p) - p.unit_reads
}

/// `elastic-shift`: device reads per window of every policy and the oracle
/// while the hot set moves.
pub fn shift(ctx: &mut Ctx) -> ExpResult<Summary> {
    let stream = Stream {
        window: ctx.pick(250, 2_000, 10_000),
        windows: ctx.pick(8, 40, 100),
        phase: ctx.pick(500, 10_000, 100_000),
    };
    let t = load(ctx)?;
    let spec = t.tree.spec.clone();
    let keys = KeyGen::new(spec.key_size, spec.num)?;
    let mut results = Vec::new();
    for dist in WORKLOADS {
        let (ps, counted) = passes(ctx, &t, &keys, dist, &stream)?;
        results.push((dist, ps, counted));
    }
    let setting = tree_sentence(&t);
    let direct_note = t.direct_note.clone();
    ctx.drop_dir(&t.tree.dir);

    let mut csv = Table::new(&[
        "workload",
        "policy",
        "window",
        "lookups_done",
        "device_reads",
        "filter_unit_loads",
        "device_reads_per_lookup",
    ]);
    for (dist, ps, _) in &results {
        for p in ps {
            for (w, (r, l)) in p.reads.iter().zip(&p.loads).enumerate() {
                csv.push(vec![
                    dist.label(),
                    p.name.clone(),
                    (w + 1).to_string(),
                    ((w as u64 + 1) * stream.window).to_string(),
                    r.to_string(),
                    l.to_string(),
                    f(*r as f64 / stream.window as f64, 4),
                ]);
            }
        }
    }
    ctx.write_csv("elastic-shift", &csv)?;

    let mut s = Summary::new(
        "elastic-shift",
        "ElasticBF under a moving hot set: device reads per window, every policy and the oracle",
    );
    s.para(format!(
        "{setting} Each pass opens the tree cold (no `HOTNESS` file) under a {BUDGET_BPK} \
         bits/key budget and does {} windows of {} lookups (half for absent keys, all of them in the workload marked all absent) of one stream \
         whose hot keys move every {} lookups (`--hot-shift-every`: every key index drawn is \
         shifted by ⌊0.382·num⌋ more at each move, so the hot keys land in other files). \
         **oracle**: the offline optimum for the true access counts of the whole stream (a first \
         pass with every unit resident records each file's accesses, every lookup counted; the \
         measured pass opens with \
         them and `skew-at-write`, which plans the greedy optimum of Σ f·fp over false positives \
         saved per byte and never moves a unit on a lookup). The best static policy is the best \
         of uniform, monkey and skew-at-write.",
        stream.windows, stream.window, stream.phase
    ));
    let mut notes = Vec::new();
    for (dist, ps, counted) in &results {
        let oracle = ps.iter().find(|p| p.name == ORACLE).map_or(0, total);
        let rows = ps
            .iter()
            .map(|p| {
                vec![
                    p.name.clone(),
                    f(total(p) as f64 / stream.lookups() as f64, 3),
                    f(total(p) as f64 / oracle.max(1) as f64, 2),
                    p.loads.iter().sum::<u64>().to_string(),
                    f(stream.lookups() as f64 / p.seconds, 0),
                ]
            })
            .collect();
        s.para(format!("**{}, hot set moving**:", dist.label()));
        s.table(
            &[
                "policy",
                "device reads per lookup",
                "÷ oracle",
                "filter unit loads",
                "lookups/s",
            ],
            rows,
        );
        let by = |n: &str| ps.iter().find(|p| p.name == n);
        let best = STATIC
            .iter()
            .filter_map(|p| by(p.name()))
            .min_by_key(|p| total(p));
        if let (Some(e), Some(b)) = (by(FilterPolicy::Elastic.name()), best) {
            let per_window: Vec<f64> = e
                .reads
                .iter()
                .zip(&b.reads)
                .map(|(x, y)| *y as f64 / (*x).max(1) as f64)
                .collect();
            let (lo, hi) = min_max(per_window.iter().copied());
            notes.push(format!(
                "{}: the best static policy ({}) does {:.2}× the device reads of `elastic` \
                 ({} vs {}; per window {:.2}–{:.2}×, median {:.2}×); `elastic` does {:.2}× the \
                 oracle's and runs at {:.2}× the lookups/s of {}.",
                dist.label(),
                b.name,
                total(b) as f64 / total(e).max(1) as f64,
                total(b),
                total(e),
                lo,
                hi,
                median(&mut per_window.clone()),
                total(e) as f64 / oracle.max(1) as f64,
                b.seconds / e.seconds,
                b.name,
            ));
            let floor = data_reads(counted);
            notes.push(format!(
                "{}: with every unit resident and no budget (the oracle's counting pass), the \
                 stream reads {:.3} data blocks and table-open reads per lookup, no filter unit \
                 loads counted: a policy under the budget that saved every false positive of \
                 {} would do at best {:.2}× fewer device reads than it.",
                dist.label(),
                floor as f64 / stream.lookups() as f64,
                b.name,
                total(b) as f64 / floor.max(1) as f64,
            ));
        }
    }
    s.bullets("Results", notes);
    let mut devs = vec![
        "Not a figure of the paper: ElasticBF motivates its multi-queue with hot sets that \
         change, but measures stationary popularities only."
            .to_string(),
        "The oracle is the best *static* allocation for the whole stream's counts; a policy \
         that moves units with the hot set can read less than it."
            .to_string(),
    ];
    if let Some(n) = direct_note {
        devs.push(n);
    }
    s.bullets("Deviations", devs);
    for (dist, ps, _) in &results {
        let stem = format!("elastic-shift-{}", dist.stem);
        ctx.plot(
            &mut s,
            &stem,
            &format!("device reads per lookup per window, {}", dist.label()),
            &Chart::Lines {
                title: format!(
                    "Device reads per lookup, {} moving every {} lookups",
                    dist.label(),
                    stream.phase
                ),
                x_label: "lookups".into(),
                y_label: "device reads per lookup (window)".into(),
                x: (1..=stream.windows)
                    .map(|w| (w as u64 * stream.window) as f64)
                    .collect(),
                series: ps
                    .iter()
                    .map(|p| {
                        (
                            p.name.clone(),
                            p.reads
                                .iter()
                                .map(|r| *r as f64 / stream.window as f64)
                                .collect(),
                        )
                    })
                    .collect(),
                log_x: false,
                log_y: false,
            },
        );
    }
    Ok(s)
}
