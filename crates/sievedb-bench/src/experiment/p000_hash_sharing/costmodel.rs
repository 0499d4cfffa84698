//! The paper's cost model (000, §3–4.3, Eq. 4 and Eq. 5) evaluated with
//! measured parameters, and set beside the tree experiments' measurements.

use crate::experiment::plot::Chart;
use crate::experiment::{f, gain_str, Ctx, ExpResult, Model, PairedRatio, Summary, Table};
use crate::workload::keys::KeyGen;
use sievedb::filter::{FilterBuilder, KeyDigest};
use sievedb::{FilterOptions, HashFn};
use std::time::Instant;

/// Mean ns of one negative probe with a precomputed digest, over a filter of `n` keys.
fn probe_ns(n: u64, queries: u64) -> ExpResult<(f64, f64)> {
    let opts = FilterOptions::default();
    let keys = KeyGen::new(16, n.max(queries))?;
    let mut b = FilterBuilder::new(&opts);
    for i in 0..n {
        b.add(&keys.key(i, false));
    }
    let filter = b.build();
    let digests: Vec<KeyDigest> = (0..queries)
        .map(|i| KeyDigest::compute(opts.hash, &keys.key(i, true)))
        .collect();
    let mut best = f64::INFINITY;
    let mut fp = 0u64;
    for _ in 0..5 {
        fp = 0;
        let t = Instant::now();
        for d in &digests {
            fp += u64::from(filter.may_contain_digest(d).unwrap_or(true));
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e9 / queries as f64);
    }
    Ok((best, fp as f64 / queries as f64))
}

/// Paper 000, Table 1 device latencies (ns per 4 KB access).
const DEVICES: [(&str, f64); 5] = [
    ("SSD 113µs", 113_000.0),
    ("PCIe 10µs", 10_000.0),
    ("PCIe SPDK 7µs", 7_000.0),
    ("NVM 70ns", 70.0),
    ("memory 14ns", 14.0),
];

/// `a–b ns` over the finite values of `xs` (`-` without one).
fn ns_range(xs: &[f64]) -> String {
    let (lo, hi) = xs
        .iter()
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    if lo.is_finite() {
        format!("{lo:.0}–{hi:.0} ns")
    } else {
        "-".into()
    }
}

/// The cost model experiment.
pub fn costmodel(ctx: &mut Ctx) -> ExpResult<Summary> {
    let key_sizes: Vec<usize> = ctx.pick(
        vec![8, 512],
        vec![8, 16, 32, 64, 128, 256, 512, 1024],
        vec![8, 16, 32, 64, 128, 256, 512, 1024],
    );
    let (big, queries) = ctx.pick(
        (20_000, 20_000),
        (2_000_000, 500_000),
        (2_000_000, 1_000_000),
    );
    ctx.note("probe cost with a given digest");
    let (tp_small, _) = probe_ns(10_000, queries)?;
    let (tp_big, fp_big) = probe_ns(big, queries)?;
    // A 5-level tree probes small upper-level filters and a big last one.
    let t_p = (4.0 * tp_small + tp_big) / 5.0;
    let f_p = fp_big;
    let mut t_h = Vec::new();
    for &ks in &key_sizes {
        t_h.push(ctx.hash_ns(HashFn::Murmur64A, ks));
    }
    let mut s = Summary::new(
        "costmodel",
        "Cost model (Eq. 4 and 5) with measured T_H, T_P, T_D, f_p",
    );
    let mut t = Table::new(&[
        "part",
        "device",
        "key_size",
        "levels",
        "size_ratio",
        "alpha",
        "t_h_ns",
        "t_p_ns",
        "t_d_ns",
        "f_p",
        "eq4_ns",
        "eq5_ns",
        "model_gain",
    ]);
    let push = |t: &mut Table, part: &str, dev: &str, ks: usize, m: &Model| {
        t.push(vec![
            part.into(),
            dev.into(),
            ks.to_string(),
            f(m.l, 0),
            f(m.t, 0),
            f(m.alpha, 2),
            f(m.t_h, 1),
            f(m.t_p, 2),
            f(m.t_d, 0),
            f(m.f_p, 6),
            f(m.cost_per_filter(), 1),
            f(m.cost_shared(), 1),
            f(m.gain(), 4),
        ]);
    };
    // (a) gain vs key size per device, L = 5, T = 10, α = 0.
    let mut series: Vec<(String, Vec<f64>)> = Vec::new();
    let mut rows = Vec::new();
    // The model's gain at 512 B keys on the SSD (the first device).
    let mut ssd_gain = String::from("-");
    for (dev, t_d) in DEVICES {
        let mut g = Vec::new();
        for (j, &ks) in key_sizes.iter().enumerate() {
            let m = Model {
                t_h: t_h[j],
                t_p,
                t_d,
                f_p,
                l: 5.0,
                t: 10.0,
                alpha: 0.0,
            };
            push(&mut t, "keysize", dev, ks, &m);
            g.push(m.gain() * 100.0);
        }
        let j512 = key_sizes
            .iter()
            .position(|k| *k == 512)
            .unwrap_or(key_sizes.len() - 1);
        let paper = match dev {
            "SSD 113µs" => "15% (Fig. 6)",
            "PCIe 10µs" => "20% (Fig. 7, abstract)",
            "NVM 70ns" => "65% (Fig. 7, abstract), >80% (Fig. 6)",
            _ => "",
        };
        if t_d == DEVICES[0].1 {
            ssd_gain = gain_str(g[j512] / 100.0);
        }
        rows.push(vec![
            dev.to_string(),
            gain_str(g[j512] / 100.0),
            paper.to_string(),
        ]);
        series.push((dev.to_string(), g));
    }
    // (b) gain vs levels at T = 2, 512 B keys, page cache-like T_D (memory).
    let th512 = ctx.hash_ns(HashFn::Murmur64A, 512);
    let mut lrows = Vec::new();
    for l in [5, 8, 10, 12, 14] {
        let m = Model {
            t_h: th512,
            t_p,
            t_d: 14.0,
            f_p,
            l: l as f64,
            t: 2.0,
            alpha: 0.0,
        };
        push(&mut t, "levels", "memory 14ns", 512, &m);
        let m2 = Model { t_d: 10_000.0, ..m };
        push(&mut t, "levels", "PCIe 10µs", 512, &m2);
        lrows.push(vec![l.to_string(), gain_str(m.gain()), gain_str(m2.gain())]);
    }
    // (c) gain vs α on SSD and NVM.
    let mut arows = Vec::new();
    for a in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let m_ssd = Model {
            t_h: th512,
            t_p,
            t_d: 113_000.0,
            f_p,
            l: 5.0,
            t: 10.0,
            alpha: a,
        };
        let m_nvm = Model { t_d: 70.0, ..m_ssd };
        push(&mut t, "alpha", "SSD 113µs", 512, &m_ssd);
        push(&mut t, "alpha", "NVM 70ns", 512, &m_nvm);
        let paper = if a == 0.0 {
            "RAM disk 75%"
        } else if a == 1.0 {
            "RAM disk >15%"
        } else {
            ""
        };
        arows.push(vec![
            format!("{a}"),
            gain_str(m_ssd.gain()),
            gain_str(m_nvm.gain()),
            paper.into(),
        ]);
    }
    ctx.write_csv("costmodel", &t)?;

    s.para(format!(
        "Eq. 4 (one digest per filter probed): (L − α/(T−1))·(T_H + T_P) + α·T_D + \
         (L − α/(T−1))·f_p·T_D; Eq. 5 (one digest per lookup): T_H + (L − α/(T−1))·T_P + α·T_D + \
         (L − α/(T−1))·f_p·T_D. Paper: 000, §3 and §4.3 (Eq. 4 and 5 drop T_P as negligible; we \
         keep it). Measured here: T_H = MurmurHash64A of the key (e.g. {:.0} ns at 512 B), T_P = \
         {t_p:.1} ns per negative probe given the digest (mean of 4 probes of a 10K-key filter at \
         {tp_small:.1} ns and one of a {big}-key filter at {tp_big:.1} ns, as in a 5-level tree), \
         f_p = {:.3}% (10 bits/key, k = 7); T_D is each device's 4 KB access from the paper's \
         Table 1. Predicted gain = Eq. 4 ÷ Eq. 5 − 1.",
        th512,
        f_p * 100.0
    ));
    s.para("**Predicted gain at 512 B keys, L = 5, T = 10, α = 0**".to_string());
    s.table(&["device (T_D)", "model gain", "paper (measured)"], rows);
    s.para("**Predicted gain vs levels, T = 2, 512 B keys, α = 0 (Figure 5b)**".to_string());
    s.table(&["levels", "memory 14 ns", "PCIe 10 µs"], lrows);
    s.para("**Predicted gain vs α, 512 B keys, L = 5 (Figures 8/9)**".to_string());
    s.table(&["α", "SSD 113 µs", "NVM 70 ns", "paper"], arows);

    // Measured vs model, from the tree experiments run before into sibling directories.
    let mut mrows = Vec::new();
    // "index" + "other" ns per lookup of every measured `levels` row.
    let mut rest = Vec::new();
    // Rows where the model predicts more gain than was measured.
    let mut over = 0;
    if let Some(root) = ctx.out.parent() {
        for (exp, point_cols) in [
            ("fig5a", &["key_size"][..]),
            ("fig5b", &["levels_loaded"][..]),
            ("fig6", &[][..]),
            ("fig7", &["bits_per_key"][..]),
            ("fig8", &["figure", "alpha"][..]),
        ] {
            let Ok(tab) = Table::read_csv(&root.join(exp).join(format!("{exp}.csv"))) else {
                continue;
            };
            let (Some(mode), Some(g), Some(mg), Some(dev)) = (
                tab.col("mode"),
                tab.col("gain"),
                tab.col("model_gain"),
                tab.col("device"),
            ) else {
                continue;
            };
            for r in tab
                .rows
                .iter()
                .filter(|r| r.get(mode).map(String::as_str) == Some("levels"))
            {
                let point: Vec<String> = point_cols
                    .iter()
                    .filter_map(|c| tab.col(c).map(|i| format!("{c} = {}", r[i])))
                    .chain(std::iter::once(r[dev].clone()))
                    .collect();
                let parse = |i: usize| r[i].parse::<f64>().unwrap_or(f64::NAN);
                let col = |name: &str| tab.col(name).map_or(f64::NAN, parse);
                rest.push(col("index_ns") + col("other_ns"));
                if parse(mg) > parse(g) {
                    over += 1;
                }
                let measured = PairedRatio {
                    n: tab
                        .col("runs_micros")
                        .map_or(0, |i| r[i].split_whitespace().count()),
                    median: parse(g) + 1.0,
                    min: col("gain_min") + 1.0,
                    max: col("gain_max") + 1.0,
                };
                mrows.push(vec![
                    exp.to_string(),
                    point.join(", "),
                    measured.show_gain(),
                    gain_str(parse(mg)),
                    format!("{:+.0} pp", (parse(mg) - parse(g)) * 100.0),
                ]);
            }
        }
    }
    let measured_rows = mrows.len();
    if mrows.is_empty() {
        s.para(
            "No tree measurements found beside this directory (run `fig5a`, `fig5b`, `fig6`, \
             `fig7`, `fig8` into the same output root first, as `all` does) — the comparison \
             with measurements is skipped.",
        );
    } else {
        s.para(
            "**Model vs measurement** (each tree experiment evaluates the model with the T_P, \
             T_D and f_p measured in its own breakdown runs):",
        );
        s.table(
            &[
                "experiment",
                "point",
                "measured gain",
                "model gain",
                "model − measured",
            ],
            mrows,
        );
    }
    s.bullets(
        "Deviations and the gap",
        vec![
            format!(
                "The model has no term for what every lookup pays besides filters and data: the \
                 memtable and version lookups and a fence-pointer search per level probed (the \
                 breakdown's \"index\" and \"other\": {} per `levels` lookup in the tree \
                 experiments' rows above). Both equations omit it, so wherever T_D·f_p is small \
                 (page cache, tmpfs, NVM) it dilutes the measured gain and the model \
                 over-predicts; it does at {} of {} rows above.",
                ns_range(&rest),
                over,
                measured_rows
            ),
            format!(
                "On slow devices (SSD) both costs are dominated by α·T_D and L·f_p·T_D: the \
                 model predicts {} at 512 B keys on the SSD (113 µs, paper's Table 1) against \
                 the paper's measured 15% (Figure 6); the paper's SSD also pays file-system and \
                 queueing costs per lookup that are not data reads.",
                ssd_gain
            ),
            "The printed Eq. 4 uses (L − α/(T−1))·f_p·T_D for the false positives where the \
             appendix derivation (Eq. 8) gives (L − Σβ − α)·f_p·T_D; we follow the printed \
             equations (the difference is α·f_p·T_D)."
                .into(),
        ],
    );
    ctx.plot(
        &mut s,
        "costmodel",
        "predicted gain vs key size",
        &Chart::Lines {
            title: "Cost model: predicted gain of one hash per lookup, L = 5, T = 10, α = 0".into(),
            x_label: "key size (bytes)".into(),
            y_label: "Eq. 4 ÷ Eq. 5 − 1 (%)".into(),
            x: key_sizes.iter().map(|k| *k as f64).collect(),
            series,
            log_x: true,
            log_y: false,
        },
    );
    Ok(s)
}
