//! The single-filter micro-benchmarks of paper 000 §4.1–4.2: Table 2, Figure 2,
//! Table 3 and Figure 3, on [`crate::bench::filterbench`].

use crate::bench::filterbench::{self, FilterBenchResult};
use crate::experiment::plot::Chart;
use crate::experiment::{f, pct, Ctx, ExpResult, Summary, Table};
use crate::progress::Progress;
use crate::workload::keys::KeyGen;
use sievedb::{FilterLayout, FilterOptions, HashFn, IndexScheme};

/// Key sizes of Figures 2 and 3.
const KEY_SIZES: [usize; 7] = [8, 16, 32, 64, 128, 256, 512];

/// Paper 000, Table 2 (512 B keys, 10 bits/key, k = 7, 10K keys, 100K empty queries).
fn paper_table2(h: Option<HashFn>) -> Option<f64> {
    Some(match h {
        Some(HashFn::Murmur3) => 0.850,
        Some(HashFn::Murmur64A) => 0.853,
        Some(HashFn::Xxh64) => 0.794,
        Some(HashFn::Md5) => 0.921,
        Some(HashFn::Sha256) => 0.868,
        Some(HashFn::Crc32c) => 0.819,
        Some(HashFn::City64) => 0.850,
        None => 0.899, // "All k"
        _ => return None,
    })
}

/// A row name shortened to a tick label: the text before any parenthesised
/// note, or the first item of a parenthesised name ("(XXH3, not in the
/// paper)" → "XXH3", "All k (7 seeded MM64 digests)" → "All k").
fn short_name(name: &str) -> String {
    let head = name.split(" (").next().unwrap_or(name);
    let head = head.trim_start_matches('(');
    head.split([',', ')'])
        .next()
        .unwrap_or(head)
        .trim()
        .to_string()
}

/// The paper's name of a hash function.
fn paper_name(h: HashFn) -> &'static str {
    match h {
        HashFn::Murmur64A => "MM64",
        HashFn::Murmur3 => "MM (MurmurHash)",
        HashFn::Xxh64 => "XX",
        HashFn::Xxh3 => "(XXH3, not in the paper)",
        HashFn::Crc32c => "CRC",
        HashFn::City64 => "CITY",
        HashFn::Md5 => "MD5",
        HashFn::Sha256 => "SHA-256",
        _ => "(other)",
    }
}

/// Every hash function of the engine, in the paper's table order.
const HASHES: [HashFn; 8] = [
    HashFn::Murmur3,
    HashFn::Murmur64A,
    HashFn::Xxh64,
    HashFn::Md5,
    HashFn::Sha256,
    HashFn::Crc32c,
    HashFn::City64,
    HashFn::Xxh3,
];

fn bloom(hash: HashFn, scheme: IndexScheme) -> FilterOptions {
    FilterOptions {
        bits_per_key: 10.0,
        hash,
        scheme,
        num_probes: Some(7),
        ..FilterOptions::default()
    }
}

fn units(hash: HashFn, scheme: IndexScheme, secondary: HashFn) -> FilterOptions {
    FilterOptions {
        bits_per_key: 10.0,
        hash,
        secondary_hash: secondary,
        scheme,
        layout: FilterLayout::Units,
        units: 7,
        num_probes: Some(1),
        ..FilterOptions::default()
    }
}

/// One filterbench run; with `repeats > 1` the query time is the fastest run
/// (the machine is shared: the minimum is the least disturbed).
fn bench(
    opts: &FilterOptions,
    key_size: usize,
    keys: u64,
    queries: u64,
    repeats: usize,
) -> ExpResult<FilterBenchResult> {
    let gen = KeyGen::new(key_size, keys.max(queries))?;
    let mut best: Option<FilterBenchResult> = None;
    let mut secs = Vec::new();
    for _ in 0..repeats.max(1) {
        let r = filterbench::run(opts, &gen, keys, queries, &Progress::hidden())?;
        secs.push(r.query_seconds);
        best.get_or_insert(r);
    }
    #[expect(
        clippy::expect_used,
        reason = "the loop above runs at least one round, and the first sets `best`"
    )]
    let mut r = best.expect("one run");
    r.query_seconds = secs.iter().copied().fold(f64::INFINITY, f64::min);
    Ok(r)
}

const FB_COLS: [&str; 12] = [
    "part",
    "filter",
    "hash",
    "scheme",
    "secondary",
    "key_size",
    "keys",
    "queries",
    "false_positives",
    "measured_fpr",
    "theoretical_fpr",
    "ns_per_query",
];

fn fb_row(
    part: &str,
    filter: &str,
    opts: &FilterOptions,
    key_size: usize,
    r: &FilterBenchResult,
) -> Vec<String> {
    vec![
        part.into(),
        filter.into(),
        opts.hash.to_string(),
        opts.scheme.to_string(),
        if opts.scheme == IndexScheme::Double {
            opts.secondary_hash.to_string()
        } else {
            String::new()
        },
        key_size.to_string(),
        r.keys.to_string(),
        r.queries.to_string(),
        r.false_positives.to_string(),
        format!("{:.6}", r.measured_fpr()),
        format!("{:.6}", r.theoretical_fpr),
        format!("{:.2}", r.ns_per_query()),
    ]
}

/// ns per query of every named filter configuration at every key size (one
/// series per configuration, one point per key size), each run added to `t`
/// as experiment `tag`'s row. `(keys, queries, repeats)` size each run.
fn latency_by_key_size<N: AsRef<str>>(
    ctx: &mut Ctx,
    tag: &str,
    configs: &[(N, FilterOptions)],
    key_sizes: &[usize],
    (keys, queries, repeats): (u64, u64, usize),
    t: &mut Table,
) -> ExpResult<Vec<(String, Vec<f64>)>> {
    let mut series: Vec<(String, Vec<f64>)> = configs
        .iter()
        .map(|(n, _)| (n.as_ref().to_string(), Vec::new()))
        .collect();
    for &ks in key_sizes {
        for (i, (name, opts)) in configs.iter().enumerate() {
            let name = name.as_ref();
            ctx.note(format!("{tag} {name}, {ks} B keys"));
            let r = bench(opts, ks, keys, queries, repeats)?;
            t.push(fb_row(tag, name, opts, ks, &r));
            series[i].1.push(r.ns_per_query());
        }
    }
    Ok(series)
}

/// Table 2: FPR per hash function at 512 B keys.
pub fn table2(ctx: &mut Ctx) -> ExpResult<Summary> {
    let keys = ctx.pick(2_000, 10_000, 10_000);
    let queries = ctx.pick(50_000, 2_000_000, 100_000);
    let mut s = Summary::new(
        "table2",
        "Table 2: FPR per hash function, one digest + rotation vs all k",
    );
    let mut t = Table::new(&FB_COLS);
    let mut rows = Vec::new();
    let mut configs: Vec<(String, Option<HashFn>, FilterOptions)> = HASHES
        .iter()
        .map(|h| {
            (
                paper_name(*h).to_string(),
                Some(*h),
                bloom(*h, IndexScheme::Rotation),
            )
        })
        .collect();
    configs.push((
        "All k (7 seeded MM64 digests)".into(),
        None,
        bloom(HashFn::Murmur64A, IndexScheme::Independent),
    ));
    let (mut names, mut ours, mut paper) = (Vec::new(), Vec::new(), Vec::new());
    // (measured − theory) ÷ σ per row, and the theoretical rate.
    let (mut z, mut theory) = (Vec::new(), f64::NAN);
    for (name, h, opts) in &configs {
        ctx.note(format!("filterbench {name}"));
        let r = bench(opts, 512, keys, queries, 1)?;
        t.push(fb_row("table2", name, opts, 512, &r));
        let p = paper_table2(*h);
        rows.push(vec![
            name.clone(),
            pct(r.measured_fpr(), 3),
            format!(
                "±{}",
                pct(r.measured_fpr() * r.relative_standard_error(), 3)
            ),
            p.map_or("-".into(), |p| format!("{p:.3}%")),
            pct(r.theoretical_fpr, 3),
            f(r.ns_per_query(), 0),
        ]);
        z.push(
            (r.measured_fpr() - r.theoretical_fpr)
                / (r.measured_fpr() * r.relative_standard_error()),
        );
        theory = r.theoretical_fpr;
        names.push(short_name(name));
        ours.push(r.measured_fpr() * 100.0);
        paper.push(p.unwrap_or(f64::NAN));
    }
    ctx.write_csv("table2", &t)?;
    s.para(format!(
        "One Bloom filter over {keys} keys of 512 bytes, 10 bits/key, k = 7, then {queries} \
         empty queries, each hashed from scratch. Rows with a single hash function derive the \
         7 positions from one 64-bit digest by rotation (δ = rotl64(h, 17), g_i = h + i·δ); \
         \"All k\" computes 7 independent (seeded) digests. Paper: 000, Table 2 (10K keys, \
         100K queries)."
    ));
    s.table(
        &[
            "hash",
            "FPR (ours)",
            "±1σ",
            "FPR (paper, Table 2)",
            "theory",
            "ns/query",
        ],
        rows,
    );
    let spread = ours.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - ours.iter().copied().fold(f64::INFINITY, f64::min);
    s.bullets(
        "Deviations",
        vec![
            format!(
                "Queries: {queries} instead of the paper's 100K, so that ±1σ is about {:.1}% of \
                 the rate instead of {:.1}% at the paper's 100K (whose 0.794–0.921% spread, \
                 paper's Table 2, is within that noise).",
                100.0 / (queries as f64 * theory).sqrt(),
                100.0 / (100_000.0 * theory).sqrt()
            ),
            format!(
                "Our rates spread over {:.3} percentage points; the furthest is {:.1} σ from the \
                 theoretical {} of (1 − e^(−k/b))^k ({} of {} rows within 2 σ). The paper \
                 concludes that rotation does not hurt the FPR.",
                spread,
                z.iter().map(|x| x.abs()).fold(0.0, f64::max),
                pct(theory, 3),
                z.iter().filter(|x| x.abs() <= 2.0).count(),
                z.len()
            ),
            "\"All k\": the paper does not say which seven functions; we use seven seeded \
             MurmurHash64A digests. MurmurHash is our MurmurHash3 x64_128 truncated to 64 \
             bits; CRC is two CRC32C lanes mixed to 64 bits; XXH3 has no paper counterpart."
                .into(),
        ],
    );
    ctx.plot(
        &mut s,
        "table2",
        "FPR per hash function",
        &Chart::Bars {
            title: "Table 2: FPR at 512 B keys, 10 bits/key, k = 7".into(),
            x_label: "hash function".into(),
            y_label: "false-positive rate (%)".into(),
            groups: names,
            series: vec![("sievedb".into(), ours), ("paper".into(), paper)],
            log_y: false,
        },
    );
    Ok(s)
}

/// Figure 2: query latency vs key size: all k, MD5 + rotation, MM64 + rotation.
pub fn fig2(ctx: &mut Ctx) -> ExpResult<Summary> {
    let keys = ctx.pick(2_000, 10_000, 10_000);
    let queries = ctx.pick(20_000, 500_000, 100_000);
    let repeats = ctx.repeats(3, 5);
    let key_sizes: Vec<usize> = ctx.pick(vec![8, 64, 512], KEY_SIZES.to_vec(), KEY_SIZES.to_vec());
    let configs = [
        (
            "All k (7 × MM64)",
            bloom(HashFn::Murmur64A, IndexScheme::Independent),
        ),
        ("MD5 + rotation", bloom(HashFn::Md5, IndexScheme::Rotation)),
        (
            "MM64 + rotation",
            bloom(HashFn::Murmur64A, IndexScheme::Rotation),
        ),
    ];
    let mut s = Summary::new("fig2", "Figure 2: single-filter query latency vs key size");
    let mut t = Table::new(&FB_COLS);
    let series = latency_by_key_size(
        ctx,
        "fig2",
        &configs,
        &key_sizes,
        (keys, queries, repeats),
        &mut t,
    )?;
    ctx.write_csv("fig2", &t)?;
    let header: Vec<String> = std::iter::once("key size".to_string())
        .chain(series.iter().map(|(n, _)| format!("{n} ns")))
        .chain(["all k ÷ MM64".to_string(), "MD5 ÷ MM64".to_string()])
        .collect();
    let rows: Vec<Vec<String>> = key_sizes
        .iter()
        .enumerate()
        .map(|(j, ks)| {
            let mut r = vec![format!("{ks} B")];
            r.extend(series.iter().map(|(_, v)| f(v[j], 1)));
            r.push(format!("{:.1}×", series[0].1[j] / series[2].1[j]));
            r.push(format!("{:.1}×", series[1].1[j] / series[2].1[j]));
            r
        })
        .collect();
    s.para(format!(
        "One Bloom filter (10 bits/key, k = 7) over {keys} keys per key size, {queries} empty \
         queries, best of {repeats} runs; ns per query includes hashing and probing. Paper: \
         000, Figure 2 (10K keys, 100K queries, key sizes 8–512 B)."
    ));
    let hdr: Vec<&str> = header.iter().map(String::as_str).collect();
    s.table(&hdr, rows);
    let last = key_sizes.len() - 1;
    s.para(format!(
        "Paper (Figure 2, text of §4.1; the figure's bar heights are not given as numbers): \
         latency grows with key size and is dominated by hashing for all-k; MD5 with rotation \
         cuts it significantly and MM64 with rotation \"dramatically\". Ours at {} B: all-k \
         {:.0} ns, MD5 {:.0} ns, MM64 {:.0} ns — {}.",
        key_sizes[last],
        series[0].1[last],
        series[1].1[last],
        series[2].1[last],
        if series[0].1[last] > series[1].1[last] && series[1].1[last] > series[2].1[last] {
            "the paper's ordering (all-k slowest, MM64 fastest)"
        } else {
            "not the paper's ordering (all-k slowest, MM64 fastest)"
        }
    ));
    let allk_below_md5: Vec<String> = key_sizes
        .iter()
        .enumerate()
        .filter(|(j, _)| series[0].1[*j] < series[1].1[*j])
        .map(|(_, k)| format!("{k} B"))
        .collect();
    s.bullets(
        "Deviations",
        vec![
            format!(
                "The paper's all-k bars use seven hash functions (the ones of Table 2, which \
                 include MD5 and SHA-256) and are the highest everywhere; ours use seven seeded \
                 MM64 digests, the cheapest independent variant, and are below MD5 + rotation \
                 at {} of {} key sizes{}.",
                allk_below_md5.len(),
                key_sizes.len(),
                if allk_below_md5.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", allk_below_md5.join(", "))
                }
            ),
            format!(
                "{queries} queries instead of 100K, best of {repeats} runs, for stable \
                 timings on a shared 2-core VM."
            ),
        ],
    );
    ctx.plot(
        &mut s,
        "fig2",
        "query latency vs key size",
        &Chart::Lines {
            title: "Figure 2: one filter, ns per empty query".into(),
            x_label: "key size (bytes)".into(),
            y_label: "ns per query".into(),
            x: key_sizes.iter().map(|k| *k as f64).collect(),
            series,
            log_x: true,
            log_y: true,
        },
    );
    Ok(s)
}

/// Table 3 + Figure 3: filter units (7 × 1 probe), rotation vs double hashing.
pub fn table3(ctx: &mut Ctx) -> ExpResult<Summary> {
    let keys = ctx.pick(2_000, 10_000, 10_000);
    let fpr_queries = ctx.pick(50_000, 2_000_000, 100_000);
    let lat_queries = ctx.pick(20_000, 500_000, 100_000);
    let repeats = ctx.repeats(3, 5);
    let key_sizes: Vec<usize> = ctx.pick(vec![8, 512], KEY_SIZES.to_vec(), KEY_SIZES.to_vec());
    let mm = HashFn::Murmur64A;
    let rotation: Vec<(HashFn, f64)> = vec![
        (HashFn::Murmur64A, 0.829),
        (HashFn::Xxh64, 0.897),
        (HashFn::Crc32c, 0.841),
        (HashFn::City64, 0.834),
    ];
    let double: Vec<(HashFn, f64)> = vec![
        (HashFn::Xxh64, 0.761),
        (HashFn::Crc32c, 0.808),
        (HashFn::City64, 0.842),
    ];
    let mut s = Summary::new(
        "table3",
        "Table 3 + Figure 3: filter units, rotation vs double hashing",
    );
    let mut t = Table::new(&FB_COLS);
    let mut rows = Vec::new();
    // The theoretical FPR of the units (the same for every row).
    let mut theory = f64::NAN;
    for (h, paper) in &rotation {
        let opts = units(*h, IndexScheme::Rotation, HashFn::Xxh3);
        ctx.note(format!("units rotation {h}"));
        let r = bench(&opts, 512, keys, fpr_queries, 1)?;
        theory = r.theoretical_fpr;
        t.push(fb_row(
            "table3",
            &format!("{} + rotation", paper_name(*h)),
            &opts,
            512,
            &r,
        ));
        rows.push(vec![
            format!("{} + rotation", paper_name(*h)),
            pct(r.measured_fpr(), 3),
            format!("{paper:.3}%"),
            pct(r.theoretical_fpr, 3),
            f(r.ns_per_query(), 0),
        ]);
    }
    for (h2, paper) in &double {
        let opts = units(mm, IndexScheme::Double, *h2);
        ctx.note(format!("units double mm64 + {h2}"));
        let r = bench(&opts, 512, keys, fpr_queries, 1)?;
        let name = format!("{} + MM64 (double)", paper_name(*h2));
        t.push(fb_row("table3", &name, &opts, 512, &r));
        rows.push(vec![
            name,
            pct(r.measured_fpr(), 3),
            format!("{paper:.3}%"),
            pct(r.theoretical_fpr, 3),
            f(r.ns_per_query(), 0),
        ]);
    }
    // Figure 3: latency vs key size.
    let lat_configs: Vec<(String, FilterOptions)> = std::iter::once((
        "MM64 + rotation".to_string(),
        units(mm, IndexScheme::Rotation, HashFn::Xxh3),
    ))
    .chain(double.iter().map(|(h2, _)| {
        (
            format!("{} + MM64 (double)", paper_name(*h2)),
            units(mm, IndexScheme::Double, *h2),
        )
    }))
    .collect();
    let series = latency_by_key_size(
        ctx,
        "fig3",
        &lat_configs,
        &key_sizes,
        (keys, lat_queries, repeats),
        &mut t,
    )?;
    ctx.write_csv("table3", &t)?;
    s.para(format!(
        "An ElasticBF-style filter of 7 units, 1 probe per unit, 10 bits/key in total, over \
         {keys} keys. Rotation: one digest, unit i probes g_i = h + i·δ. Double hashing: \
         g_i = h1 + i·h2 with MM64 as h1 and XX, CRC or CITY as h2 (two digests per query). \
         FPR at 512 B keys over {fpr_queries} empty queries; latency over {lat_queries} \
         queries, best of {repeats} runs. Paper: 000, Table 3 and Figure 3."
    ));
    s.table(
        &[
            "filter units",
            "FPR (ours)",
            "FPR (paper, Table 3)",
            "theory",
            "ns/query",
        ],
        rows,
    );
    let header: Vec<String> = std::iter::once("key size".to_string())
        .chain(series.iter().map(|(n, _)| format!("{n} ns")))
        .chain(std::iter::once("slowest double ÷ rotation".to_string()))
        .collect();
    let lrows: Vec<Vec<String>> = key_sizes
        .iter()
        .enumerate()
        .map(|(j, ks)| {
            let mut r = vec![format!("{ks} B")];
            r.extend(series.iter().map(|(_, v)| f(v[j], 1)));
            let worst = series[1..].iter().map(|(_, v)| v[j]).fold(0.0, f64::max);
            r.push(format!("{:.1}×", worst / series[0].1[j]));
            r
        })
        .collect();
    let hdr: Vec<&str> = header.iter().map(String::as_str).collect();
    s.table(&hdr, lrows);
    let last = key_sizes.len() - 1;
    let worst_last =
        series[1..].iter().map(|(_, v)| v[last]).fold(0.0, f64::max) / series[0].1[last];
    s.para(format!(
        "Paper: \"the FPR is similar (with double hashing being marginally better), while Fig. 3 \
         shows that bit-rotation leads to significantly lower query latency, up to 3× as the \
         key size increases\". Ours: double hashing costs up to {worst_last:.1}× rotation at \
         {} B keys.",
        key_sizes[last]
    ));
    s.bullets(
        "Deviations",
        vec![
            format!(
                "{fpr_queries} FPR queries instead of 100K (±1σ ≈ {:.1}% of the rate instead of \
                 {:.1}% at 100K); the paper's 0.761–0.897% spread (paper's Table 3) is within \
                 that noise, and so is its \"double hashing marginally better\".",
                100.0 / (fpr_queries as f64 * theory).sqrt(),
                100.0 / (100_000.0 * theory).sqrt()
            ),
            format!(
                "Figure 3's bar heights are not given as numbers in the paper; only the \"up to \
                 3×\" statement is compared. The ratio depends on the cost of the secondary \
                 function relative to MM64: at 1 KB keys an XX digest costs {:.1}× an MM64 one \
                 here, against 3.7× in the paper's Table 1 (874 ns vs 235 ns).",
                ctx.hash_ns(HashFn::Xxh64, 1024) / ctx.hash_ns(HashFn::Murmur64A, 1024)
            ),
        ],
    );
    ctx.plot(
        &mut s,
        "table3",
        "filter units: latency vs key size",
        &Chart::Lines {
            title: "Figure 3: 7 filter units, ns per empty query".into(),
            x_label: "key size (bytes)".into(),
            y_label: "ns per query".into(),
            x: key_sizes.iter().map(|k| *k as f64).collect(),
            series,
            log_x: true,
            log_y: true,
        },
    );
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_keep_the_words_that_matter() {
        assert_eq!(short_name("(XXH3, not in the paper)"), "XXH3");
        assert_eq!(short_name("All k (7 seeded MM64 digests)"), "All k");
        assert_eq!(short_name("MM (MurmurHash)"), "MM");
        assert_eq!(short_name("SHA-256"), "SHA-256");
    }
}
