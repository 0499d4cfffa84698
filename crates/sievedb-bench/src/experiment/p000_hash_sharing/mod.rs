//! Paper 000 (*Reducing Bloom Filter CPU Overhead in LSM-Trees*): the
//! single-filter micro-benchmarks, the LSM-tree experiments and the cost model.
//!
//! The LSM-tree experiments of paper 000 (Figures 1 and 5–9): bulk-loaded
//! trees read with `filter` hash sharing (one digest per filter probed, the
//! paper's state of the art) and `levels` sharing (one digest per lookup).
//! This module holds what they share: the two modes, a measured point with its
//! CSV rows, summary row and breakdown chart, the model gap, and tree loading.
//!
//! Files: one per experiment (table1: Table 1; filters: Tables 2 and 3,
//! Figures 2 and 3; fig1; fig5: Figures 5a and 5b; fig6_8: Figures 6, 7, 8
//! and 9; costmodel), and the devices the tree experiments read through.

mod costmodel;
pub(super) mod devices;
mod fig1;
mod fig5;
mod fig6_8;
mod filters;
mod table1;

pub(super) use costmodel::costmodel;
pub(super) use fig1::fig1;
pub(super) use fig5::{fig5a, fig5b};
pub(super) use fig6_8::{fig6, fig7, fig8};
pub(super) use filters::{fig2, table2, table3};
pub(super) use table1::table1;

use super::plot::Chart;
use super::{
    f, gain, gain_str, load_tree, measure_modes, probe_and_data_ns, Ctx, ExpResult, LoadedTree,
    Model, PairedRatio, ReadStats, TreeSpec, PHASES,
};
use crate::BenchArgs;
use devices::Device;
use sievedb::{HashFn, HashSharing};

const MODES: [HashSharing; 2] = [HashSharing::Filter, HashSharing::Levels];

/// Both modes at one point, the measured gain and the model's inputs.
struct Point {
    filter: ReadStats,
    levels: ReadStats,
    /// latency(filter) ÷ latency(levels), paired per repeat.
    gain: PairedRatio,
    model: Model,
}

/// Columns every tree CSV ends with (one row per point and mode).
const POINT_COLS: [&str; 26] = [
    "device",
    "mode",
    "micros_per_op",
    "runs_micros",
    "digests_per_lookup",
    "probes_per_lookup",
    "fpr",
    "data_block_reads_per_lookup",
    "block_cache_misses_per_lookup",
    "found_fraction",
    "hash_ns",
    "filter_ns",
    "index_ns",
    "data_ns",
    "other_ns",
    "hash_share",
    "gain",
    "gain_min",
    "gain_max",
    "t_h_ns",
    "t_p_ns",
    "t_d_ns",
    "f_p",
    "model_ns",
    "model_gain",
    "levels",
];

fn cols(prefix: &[&str]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = prefix
        .iter()
        .map(|s| -> &'static str { Box::leak(s.to_string().into_boxed_str()) })
        .collect();
    v.extend(POINT_COLS);
    v
}

fn point_rows(prefix: &[String], device: &Device, p: &Point) -> Vec<Vec<String>> {
    [(&p.filter, "filter", false), (&p.levels, "levels", true)]
        .into_iter()
        .map(|(s, mode, shared)| {
            let b = s.breakdown.unwrap_or([f64::NAN; 5]);
            let model = if shared {
                p.model.cost_shared()
            } else {
                p.model.cost_per_filter()
            };
            let mut r = prefix.to_vec();
            r.extend([
                device.name(),
                mode.to_string(),
                format!("{:.4}", s.micros),
                s.runs
                    .iter()
                    .map(|x| format!("{x:.4}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                f(s.digests, 3),
                f(s.probes, 3),
                f(s.fpr, 6),
                f(s.data_reads, 5),
                f(s.cache_misses, 5),
                f(s.found, 4),
                f(b[0], 1),
                f(b[1], 1),
                f(b[2], 1),
                f(b[3], 1),
                f(b[4], 1),
                f(s.hash_share(), 4),
                f(p.gain.gain(), 6),
                f(p.gain.min - 1.0, 6),
                f(p.gain.max - 1.0, 6),
                f(p.model.t_h, 1),
                f(p.model.t_p, 2),
                f(p.model.t_d, 1),
                f(p.model.f_p, 6),
                f(model, 1),
                f(p.model.gain(), 4),
                f(p.model.l, 0),
            ]);
            r
        })
        .collect()
}

/// Reads `tree` through `device` in both modes; `alpha` = None for
/// `readmissing`, Some(α) for `readmixed`.
fn measure(
    ctx: &mut Ctx,
    tree: &LoadedTree,
    device: &Device,
    reads: u64,
    repeats: usize,
    alpha: Option<f64>,
) -> ExpResult<Point> {
    let a = alpha.unwrap_or(0.0);
    let dev = *device;
    let setup = move |args: &mut BenchArgs| {
        dev.apply(args);
        if let Some(al) = alpha {
            args.benchmarks = "readmixed".into();
            args.alpha = al;
        }
    };
    let reads = device.reads(reads, a);
    let mut st = measure_modes(ctx, tree, &MODES, reads, repeats, &setup)?;
    #[expect(
        clippy::expect_used,
        reason = "measure_modes returns one result per mode, and MODES has two"
    )]
    let levels = st.pop().expect("two modes");
    #[expect(
        clippy::expect_used,
        reason = "measure_modes returns one result per mode, and MODES has two"
    )]
    let filter = st.pop().expect("two modes");
    let t_h = ctx.hash_ns(HashFn::Murmur64A, tree.spec.key_size);
    let (t_p, mut t_d) = probe_and_data_ns(&levels);
    if !t_d.is_finite() {
        t_d = probe_and_data_ns(&filter).1;
    }
    if !t_d.is_finite() {
        t_d = device.delay_ns() as f64;
    }
    let f_p = if levels.fpr.is_finite() {
        levels.fpr
    } else {
        0.0
    };
    let model = Model {
        t_h,
        t_p: if t_p.is_finite() { t_p } else { 0.0 },
        t_d,
        f_p,
        l: tree.spec.levels as f64,
        t: tree.spec.size_ratio as f64,
        alpha: a,
    };
    let g = gain(&filter, &levels);
    ctx.note(format!(
        "{}: filter {:.3} µs, levels {:.3} µs, gain {}, model {}",
        device.name(),
        filter.micros,
        levels.micros,
        g.show_gain(),
        gain_str(model.gain())
    ));
    Ok(Point {
        filter,
        levels,
        gain: g,
        model,
    })
}

/// Stacked breakdown bars (filter, levels) per group with the measured gain line.
fn breakdown_chart(title: String, x_label: &str, groups: Vec<String>, points: &[&Point]) -> Chart {
    Chart::Stacked {
        title,
        x_label: x_label.into(),
        y_label: "ns per lookup (breakdown run)".into(),
        groups,
        bars: vec!["F".into(), "L".into()],
        parts: PHASES.iter().map(|s| s.to_string()).collect(),
        values: points
            .iter()
            .map(|p| {
                [&p.filter, &p.levels]
                    .iter()
                    .map(|s| s.breakdown.unwrap_or([f64::NAN; 5]).to_vec())
                    .collect()
            })
            .collect(),
        line: Some((
            "gain of levels over filter (whisker: min–max over repeats)".into(),
            points.iter().map(|p| p.gain.gain() * 100.0).collect(),
            "gain (%)".into(),
        )),
        line_spread: points
            .iter()
            .map(|p| ((p.gain.min - 1.0) * 100.0, (p.gain.max - 1.0) * 100.0))
            .collect(),
    }
}

/// The summary row of a point: label, µs per mode, gain, model gain, hash ns per mode.
fn point_summary(label: String, p: &Point, paper: &str) -> Vec<String> {
    let h = |s: &ReadStats| s.breakdown.map_or("-".into(), |b| f(b[0], 0));
    vec![
        label,
        f(p.filter.micros, 3),
        f(p.levels.micros, 3),
        format!("**{}**", p.gain.show_gain()),
        gain_str(p.model.gain()),
        paper.to_string(),
        format!("{} / {}", h(&p.filter), h(&p.levels)),
        f(p.levels.data_reads, 3),
    ]
}

const SUMMARY_HEADER: [&str; 8] = [
    "point",
    "filter µs",
    "levels µs",
    "gain (ours, min…max)",
    "model gain (Eq. 4 ÷ Eq. 5)",
    "paper",
    "hash ns F / L",
    "block reads/lookup",
];

/// What the model omits, as a sentence with the measured "index + other".
fn model_gap(points: &[&Point]) -> String {
    let mut over = 0;
    let mut rest = Vec::new();
    for p in points {
        if p.model.gain() > p.gain.gain() {
            over += 1;
        }
        if let Some(b) = p.levels.breakdown {
            rest.push(b[2] + b[4]);
        }
    }
    let mean_rest = if rest.is_empty() {
        f64::NAN
    } else {
        rest.iter().sum::<f64>() / rest.len() as f64
    };
    format!(
        "Model vs measurement: the model (Eq. 4/5 with measured T_H = MM64 digest of the key, \
         T_P = filter ns per probe, T_D = data ns per block read, f_p = measured FPR) \
         over-predicts the gain at {over} of {} points. It leaves out the per-level fence-pointer \
         search, the memtable and version lookups and the benchmark loop (\"index\" + \"other\", \
         {mean_rest:.0} ns per lookup here), which both modes pay and which dilute the gain.",
        points.len()
    )
}

fn tree_spec(
    ctx: &Ctx,
    num: u64,
    key_size: usize,
    value_size: usize,
    levels: usize,
    t: usize,
) -> TreeSpec {
    TreeSpec {
        num,
        key_size,
        value_size,
        levels,
        size_ratio: t,
        bits_per_key: 10.0,
        target_file_size: ctx.pick(64 << 10, 2 << 20, 2 << 20),
    }
}

/// Loads `spec` into the work directory (on its disk).
fn load_disk(ctx: &mut Ctx, spec: &TreeSpec, label: &str) -> ExpResult<LoadedTree> {
    let dir = ctx.db_dir(label, false)?.ok_or("no work directory")?;
    load_into(ctx, spec, label, &dir, "")
}

/// Loads `spec` into `/dev/shm` (the emulated RAM disk), or says why it was
/// not loaded there: no `/dev/shm`, or a tree that does not fit
/// ([`tmpfs_misfit`]).
fn load_shm(ctx: &mut Ctx, spec: &TreeSpec, label: &str) -> ExpResult<Result<LoadedTree, String>> {
    if let Some(why) = tmpfs_misfit(spec) {
        ctx.note(format!("{label} not loaded into tmpfs: {why}"));
        return Ok(Err(why));
    }
    let Some(dir) = ctx.db_dir(label, true)? else {
        return Ok(Err("this machine has no /dev/shm".into()));
    };
    load_into(ctx, spec, label, &dir, " (tmpfs)").map(Ok)
}

/// The sentence for the trees [`load_shm`] did not load (empty when none).
fn tmpfs_not_measured(skipped: &[String]) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    format!("tmpfs not measured for: {}.", skipped.join("; "))
}

fn load_into(
    ctx: &mut Ctx,
    spec: &TreeSpec,
    label: &str,
    dir: &std::path::Path,
    place: &str,
) -> ExpResult<LoadedTree> {
    ctx.note(format!(
        "bulk load {label}: {} entries of {} + {} B, {} levels, T = {}, {} bits/key{place}",
        spec.num, spec.key_size, spec.value_size, spec.levels, spec.size_ratio, spec.bits_per_key,
    ));
    load_tree(ctx, spec, dir)
}

/// Why the tree of `spec` cannot be loaded into `/dev/shm` here, if it
/// cannot: its keys and values must fit in the file system's free space and
/// in half the memory the kernel reports available (tmpfs pages are memory;
/// a 22 GB tree on a 24 GB machine would leave nothing to run in).
fn tmpfs_misfit(spec: &TreeSpec) -> Option<String> {
    let bytes = spec.num * (spec.key_size + spec.value_size) as u64;
    let free = shm_free_bytes().unwrap_or(0);
    let memory = mem_available_bytes().unwrap_or(0) / 2;
    (bytes > free.min(memory)).then(|| {
        format!(
            "its {} of keys and values exceed /dev/shm's free {} or half the available \
             memory ({})",
            mb(bytes),
            mb(free),
            mb(memory)
        )
    })
}

/// Free bytes of `/dev/shm` (`statvfs`), `None` if it cannot be asked.
fn shm_free_bytes() -> Option<u64> {
    let path = std::ffi::CString::new("/dev/shm").ok()?;
    // SAFETY: `statvfs` writes only into `st`, a plain C struct it owns for
    // the call, and reads the NUL-terminated path, alive for the call.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(path.as_ptr(), &mut st) };
    (rc == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// `MemAvailable` of `/proc/meminfo` in bytes.
fn mem_available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// What a loaded tree is and what building it cost, for a summary:
/// `label` names it (e.g. "the tree", "the 512 B keys' tree").
fn built(label: &str, t: &LoadedTree) -> String {
    format!(
        "{label}: {} in {} files, bulk-loaded in {:.1} s, read with up to {} tables open",
        mb(t.bytes),
        t.files,
        t.load_seconds,
        t.tables_open
    )
}

fn mb(bytes: u64) -> String {
    if bytes >= 10 << 30 {
        format!("{:.0} GB", bytes as f64 / 1e9)
    } else if bytes >= 1 << 20 {
        format!("{:.0} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.0} KB", bytes as f64 / 1e3)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A point whose `filter` breakdown spends `hash` ns of `total` on
    /// `digests` digests, and whose gain comes from `filter_runs ÷ levels_runs`.
    pub(super) fn point(
        hash: f64,
        total: f64,
        digests: f64,
        filter_runs: &[f64],
        levels_runs: &[f64],
    ) -> Point {
        let filter = ReadStats {
            micros: filter_runs[0],
            runs: filter_runs.to_vec(),
            digests,
            breakdown: Some([hash, 0.0, 0.0, 0.0, total - hash]),
            ..ReadStats::default()
        };
        let levels = ReadStats {
            micros: levels_runs[0],
            runs: levels_runs.to_vec(),
            digests: 1.0,
            ..ReadStats::default()
        };
        Point {
            gain: gain(&filter, &levels),
            filter,
            levels,
            model: Model {
                t_h: 1.0,
                t_p: 0.0,
                t_d: 1.0,
                f_p: 0.0,
                l: 5.0,
                t: 10.0,
                alpha: 0.0,
            },
        }
    }

    #[test]
    fn model_gap_counts_over_predictions() {
        // Measured +25%; the model with t_h = 1, L = 5, no data cost predicts
        // 5 ÷ 1 − 1 = +400%: an over-prediction.
        let p = point(100.0, 400.0, 5.0, &[1.25, 1.2], &[1.0, 1.0]);
        let s = model_gap(&[&p, &p]);
        assert!(s.contains("over-predicts the gain at 2 of 2 points"), "{s}");
    }

    /// A tree larger than the machine's memory never goes to tmpfs (the
    /// paper's 22 GB tree on a small machine); a tiny one does where
    /// `/dev/shm` has room.
    #[test]
    fn tmpfs_takes_only_trees_that_fit() {
        let spec = |num| TreeSpec {
            num,
            key_size: 512,
            value_size: 512,
            levels: 5,
            size_ratio: 10,
            bits_per_key: 10.0,
            target_file_size: 2 << 20,
        };
        let memory = mem_available_bytes().expect("/proc/meminfo");
        let why = tmpfs_misfit(&spec(memory / 1024 + 1)).expect("a tree as large as memory");
        assert!(why.contains("half the available memory"), "{why}");
        if shm_free_bytes().is_some_and(|free| free > 1 << 20) {
            assert_eq!(tmpfs_misfit(&spec(100)), None);
        }
    }
}
