//! `elastic-warmup`: hotness persistence across a restart, warm vs cold.

use super::{
    device_reads_of, load, lookups, min_max, tree_sentence, Column, ALPHA, BUDGET_BPK, DISTS,
};
use crate::bench::KeyChooser;
use crate::engines::EngineKind;
use crate::experiment::plot::Chart;
use crate::experiment::{f, Ctx, ExpResult, Summary, Table};
use crate::report::median;
use crate::workload::keys::KeyGen;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use sievedb::FilterPolicy;

/// One reopen: unit loads while opening, and device reads per window.
struct Reopen {
    open_loads: u64,
    windows: Vec<u64>,
    window_loads: Vec<u64>,
}

/// How far from the final level a window may be and count as steady.
const STEADY_TOLERANCE: f64 = 0.1;

/// The index of the first window from which every window is within
/// [`STEADY_TOLERANCE`] of the mean of the last quarter (at least 2) of the
/// windows.
fn steady_window(w: &[u64]) -> usize {
    let tail = (w.len() / 4).max(2).min(w.len());
    let fin = w[w.len() - tail..].iter().sum::<u64>() as f64 / tail as f64;
    let ok = |x: u64| (x as f64 - fin).abs() <= STEADY_TOLERANCE * fin;
    let mut first = w.len();
    for i in (0..w.len()).rev() {
        if ok(w[i]) {
            first = i;
        } else {
            break;
        }
    }
    first
}

/// Device reads of the windows beyond the rate of the last quarter of them.
fn excess_reads(w: &[u64]) -> f64 {
    let tail = (w.len() / 4).max(2).min(w.len());
    let fin = w[w.len() - tail..].iter().sum::<u64>() as f64 / tail as f64;
    w.iter().map(|x| *x as f64 - fin).sum()
}

/// `N lookups`, or that the windows never settled.
fn steady_str(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.0} lookups")
    } else {
        "never within the measured windows".into()
    }
}

/// Hotness persistence: device reads per window after a restart with and
/// without the `HOTNESS` file.
pub fn warmup(ctx: &mut Ctx) -> ExpResult<Summary> {
    let learn = ctx.pick(5_000u64, 100_000, 1_000_000);
    let window = ctx.pick(500u64, 2_000, 10_000);
    let nwin = ctx.pick(8usize, 40, 100);
    let repeats = ctx.repeats(3, 3);
    let dist = DISTS[1];
    let t = load(ctx)?;
    let spec = t.tree.spec.clone();
    let path = t.db_path();
    let hot = path.join("HOTNESS");
    let saved = t.tree.dir.join("HOTNESS.saved");
    let cfg = t
        .args(
            ctx,
            0,
            dist,
            Column::Policy(FilterPolicy::Elastic),
            BUDGET_BPK,
        )
        .engine_config();
    let keys = KeyGen::new(spec.key_size, spec.num)?;
    let mut chooser = KeyChooser::new(dist.dist, spec.num, dist.s)?;
    // Learn, close (writes HOTNESS), keep a copy.
    t.forget_hotness()?;
    {
        let e = EngineKind::Sievedb.open(&path, &cfg)?;
        let mut rng = SmallRng::seed_from_u64(crate::DEFAULT_SEED);
        lookups(e.as_ref(), &keys, &mut chooser, &mut rng, learn, ALPHA)?;
    }
    if !hot.exists() {
        return Err("closing the database wrote no HOTNESS file".into());
    }
    std::fs::copy(&hot, &saved)?;
    let hot_bytes = std::fs::metadata(&saved)?.len();
    // reopens[0] = warm, [1] = cold; per repeat.
    let mut reopens: [Vec<Reopen>; 2] = [Vec::new(), Vec::new()];
    for rep in 0..repeats {
        let order: [usize; 2] = if rep % 2 == 0 { [0, 1] } else { [1, 0] };
        for which in order {
            if which == 0 {
                std::fs::copy(&saved, &hot)?;
            } else {
                t.forget_hotness()?;
            }
            let e = EngineKind::Sievedb.open(&path, &cfg)?;
            let (_, _, open_loads) = device_reads_of(e.as_ref());
            // The same measured stream for warm and cold, distinct from the learning one.
            let mut rng = SmallRng::seed_from_u64(crate::DEFAULT_SEED + 1 + rep as u64);
            let mut windows = Vec::new();
            let mut window_loads = Vec::new();
            let mut prev = device_reads_of(e.as_ref());
            for _ in 0..nwin {
                lookups(e.as_ref(), &keys, &mut chooser, &mut rng, window, ALPHA)?;
                let now = device_reads_of(e.as_ref());
                windows.push(now.0 - prev.0);
                window_loads.push(now.2 - prev.2);
                prev = now;
            }
            drop(e);
            reopens[which].push(Reopen {
                open_loads,
                windows,
                window_loads,
            });
        }
    }
    let setting_text = tree_sentence(&t);
    let direct_note = t.direct_note.clone();
    ctx.drop_dir(&t.tree.dir);
    let names = ["warm (HOTNESS kept)", "cold (HOTNESS deleted)"];
    let mut csv = Table::new(&[
        "start",
        "repeat",
        "window",
        "lookups_done",
        "device_reads",
        "filter_unit_loads",
        "device_reads_per_lookup",
        "open_unit_loads",
        "steady_after_lookups",
    ]);
    let mut steady: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for (which, rs) in reopens.iter().enumerate() {
        for (rep, r) in rs.iter().enumerate() {
            let swi = steady_window(&r.windows);
            // Never steady within the windows: NaN (shown as "-").
            let sw = swi as u64 * window;
            steady[which].push(if swi < r.windows.len() {
                sw as f64
            } else {
                f64::NAN
            });
            for (wi, (d, l)) in r.windows.iter().zip(&r.window_loads).enumerate() {
                csv.push(vec![
                    if which == 0 { "warm" } else { "cold" }.into(),
                    (rep + 1).to_string(),
                    (wi + 1).to_string(),
                    ((wi as u64 + 1) * window).to_string(),
                    d.to_string(),
                    l.to_string(),
                    f(*d as f64 / window as f64, 4),
                    r.open_loads.to_string(),
                    sw.to_string(),
                ]);
            }
        }
    }
    ctx.write_csv("elastic-warmup", &csv)?;
    let mut s = Summary::new(
        "elastic-warmup",
        "ElasticBF hotness persistence: lookups to steady state after a restart, warm vs cold",
    );
    s.para(format!(
        "{setting_text} Here the database is driven directly (no bench runs): {learn} lookups \
         (zipf {:.2}, half absent) under `elastic` with the {BUDGET_BPK} bits/key budget, then a \
         close, which writes the `HOTNESS` side file ({hot_bytes} bytes: the allocator's clock \
         and every file's access count). Then, per repeat, two reopens in alternating order: \
         **warm** with that file restored, **cold** with it deleted (the database closed); each \
         does {nwin} windows of {window} lookups of the same new stream, counting device reads \
         per window. **Steady state** is reached at the first window from which every window's \
         device reads stay within {:.0}% of the mean of the last quarter of the windows; \"lookups \
         to steady state\" = windows before it × {window}. Not a figure of the paper (ElasticBF \
         keeps no hotness across restarts); sievedb's own addition.",
        dist.s,
        STEADY_TOLERANCE * 100.0
    ));
    let mut rows = Vec::new();
    let mut curves = Vec::new();
    for (which, rs) in reopens.iter().enumerate() {
        let first: Vec<f64> = rs
            .iter()
            .map(|r| r.windows[0] as f64 / window as f64)
            .collect();
        let tail = (nwin / 4).max(2).min(nwin);
        let last: Vec<f64> = rs
            .iter()
            .map(|r| {
                r.windows[nwin - tail..].iter().sum::<u64>() as f64 / (tail as u64 * window) as f64
            })
            .collect();
        let total: Vec<f64> = rs
            .iter()
            .map(|r| r.windows.iter().sum::<u64>() as f64)
            .collect();
        let opens: Vec<f64> = rs.iter().map(|r| r.open_loads as f64).collect();
        let loads: Vec<f64> = rs
            .iter()
            .map(|r| r.window_loads.iter().sum::<u64>() as f64)
            .collect();
        let excess: Vec<f64> = rs.iter().map(|r| excess_reads(&r.windows)).collect();
        let (smin, smax) = min_max(steady[which].iter().copied());
        rows.push(vec![
            names[which].into(),
            format!(
                "**{}** ({}–{})",
                f(median(&mut steady[which].clone()), 0),
                f(smin, 0),
                f(smax, 0)
            ),
            f(median(&mut first.clone()), 3),
            f(median(&mut last.clone()), 3),
            f(median(&mut total.clone()), 0),
            f(median(&mut excess.clone()), 0),
            f(median(&mut loads.clone()), 0),
            f(median(&mut opens.clone()), 0),
        ]);
        curves.push((
            names[which].to_string(),
            (0..nwin)
                .map(|wi| {
                    let mut v: Vec<f64> = rs
                        .iter()
                        .map(|r| r.windows[wi] as f64 / window as f64)
                        .collect();
                    median(&mut v)
                })
                .collect::<Vec<f64>>(),
        ));
    }
    s.table(
        &[
            "reopen",
            "lookups to steady state, median (min–max)",
            "device reads/lookup, first window",
            "device reads/lookup, last quarter",
            "device reads, all windows",
            "excess device reads (over the last-quarter rate)",
            "unit loads, all windows",
            "unit loads while opening",
        ],
        rows,
    );
    let (sw, sc) = (
        median(&mut steady[0].clone()),
        median(&mut steady[1].clone()),
    );
    let tot = |w: usize| {
        median(
            &mut reopens[w]
                .iter()
                .map(|r| r.windows.iter().sum::<u64>() as f64)
                .collect::<Vec<_>>(),
        )
    };
    let (tw, tc) = (tot(0), tot(1));
    let exc = |w: usize| {
        median(
            &mut reopens[w]
                .iter()
                .map(|r| excess_reads(&r.windows))
                .collect::<Vec<_>>(),
        )
    };
    let (ew, ec) = (exc(0), exc(1));
    let (cmin, cmax) = min_max(steady[1].iter().copied());
    let (wmin, wmax) = min_max(steady[0].iter().copied());
    let mut notes =
        vec![
        format!(
            "Lookups to steady state (median of {repeats}): warm {}, cold {}; over all \
             {} measured lookups the warm reopen does {tw:.0} device reads, the cold one {tc:.0} \
             ({:.2}×).",
            steady_str(sw),
            steady_str(sc),
            window * nwin as u64,
            tc / tw
        ),
        format!(
            "Both reopens start with an empty block cache, so part of the early excess is \
             block-cache warm-up common to both. The excess device reads over the settled rate \
             are {ew:.0} warm and {ec:.0} cold: keeping `HOTNESS` {} {:.0} device reads, {:.0}% \
             of the cold excess.",
            if ec >= ew { "saves" } else { "adds" },
            (ec - ew).abs(),
            if ec > 0.0 { (ec - ew).abs() / ec * 100.0 } else { f64::NAN }
        ),
        "Unit loads while opening are not in the windows (column \"unit loads while opening\")."
            .into(),
    ];
    if (wmax - wmin).max(cmax - cmin) > (sc - sw).abs() {
        notes.push(format!(
            "⚠ The spread of lookups to steady state over repeats (warm {wmin:.0}–{wmax:.0}, \
             cold {cmin:.0}–{cmax:.0}) exceeds the warm–cold difference."
        ));
    }
    if let Some(n) = direct_note {
        notes.push(n);
    }
    s.bullets("Deviations", notes);
    ctx.plot(
        &mut s,
        "elastic-warmup",
        "device reads per lookup after a restart, warm vs cold",
        &Chart::Lines {
            title: format!(
                "Device reads per lookup after a restart (elastic, {})",
                dist.label()
            ),
            x_label: "lookups since reopen".into(),
            y_label: "device reads per lookup (window)".into(),
            x: (1..=nwin).map(|w| (w as u64 * window) as f64).collect(),
            series: curves,
            log_x: false,
            log_y: false,
        },
    );
    Ok(s)
}
