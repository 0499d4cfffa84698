//! `sievedb experiment <name>`: the papers' tables and figures, reproduced.
//!
//! Each experiment measures its points with the benchmark machinery of this
//! crate (filterbench, bulk-loaded trees read through [`crate::run_records`]),
//! then writes into its output directory (default `./experiments-out/<name>`):
//! - `<name>.csv`: every measured point;
//! - `<name>.svg` / `<name>.png` (and further `<name>-<part>` plots): the figure
//!   (see [`plot`]);
//! - `<name>.md`: a summary with our numbers beside the paper's (typed in from
//!   the paper, table or figure cited) and a sentence on each deviation.
//!
//! `all` runs every experiment and writes `docs/reproduction.md` (an index and
//! every summary) with the SVG plots and the CSVs copied to `docs/reproduction/`;
//! at `--scale large`, `docs/reproduction-large.md` and `docs/reproduction-large/`
//! (see [`docs_stem`]), so the small runs stay beside them.
//!
//! Scales: `small` (the default) finishes each experiment in minutes on a
//! 2-core machine, with fewer entries, levels or repeats than the papers (each
//! summary says which); `large` builds the papers' tree shapes with values
//! shrunk to fit this machine (paper 001: ~50,000 files in 7 levels; paper 000:
//! its 22 GB tree), within an hour per experiment; `paper` uses the papers' sizes (filter micro-benchmarks:
//! 10K keys and 100K queries; trees: 22 GB of 1 KB entries in 5 levels).

mod ctx;
mod filters;
mod p000_hash_sharing;
mod p001_elasticbf;
mod p004_bpk;
mod stats;

pub use crate::report::csv::Table;
pub use crate::report::plot;
pub use crate::report::summary::{f, gain_str, pct, Block, Scale, Summary};
pub use ctx::{
    load_tree, load_tree_with, measure_modes, time_hash, Ctx, LoadedTree, ReadStats, TreeSpec,
    PHASES,
};
pub use stats::{alternating_order, gain, probe_and_data_ns, Model, PairedRatio, GAIN_DEFINITION};

use crate::bench::KeyDistribution;
use crate::DEFAULT_ZIPF_S;
use sievedb::io::with_path;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Errors of the experiments.
pub type ExpError = Box<dyn std::error::Error + Send + Sync>;
/// Result of the experiments.
pub type ExpResult<T> = Result<T, ExpError>;

/// Flags of `sievedb experiment`.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct ExperimentArgs {
    /// Experiment to run, several separated by commas (one process: those that
    /// share runs make them once), `all` (every experiment, then
    /// docs/reproduction.md) or `list` (print the experiments)
    #[arg(value_name = "NAME")]
    pub name: String,
    /// small: minutes per experiment on a 2-core machine; large: the papers' tree shapes on this machine's disk (≤ 1 hour each); paper: the papers' sizes
    #[arg(long, value_enum, default_value_t = Scale::Small)]
    pub scale: Scale,
    /// Output directory (default ./experiments-out/NAME; with `all` or several names, DIR/NAME per experiment)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Repeats per measured point (default: per experiment and scale)
    #[arg(long, value_name = "N")]
    pub repeats: Option<usize>,
    /// Also print every measured point as one JSON object per line on stdout
    #[arg(long)]
    pub json: bool,
    /// Directory for the databases the tree experiments build (default: a
    /// temporary directory under the system's, deleted afterwards)
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    /// Popularity of the keys that lookups of the tree experiments read: uniform
    /// (the papers') or zipfian
    #[arg(long, value_enum, default_value_t = KeyDistribution::Uniform)]
    pub distribution: KeyDistribution,
    /// Exponent of --distribution zipfian
    #[arg(long, value_name = "S", default_value_t = DEFAULT_ZIPF_S)]
    pub zipf_s: f64,
    /// With `all`: where reproduction.md and reproduction/*.svg are written
    /// (reproduction-large.md and reproduction-large/ at `--scale large`)
    #[arg(long, value_name = "DIR", default_value = "docs")]
    pub docs: PathBuf,
    /// Background threads of every engine the experiments run, as `sievedb
    /// bench --background-threads` (sievedb: one flush thread and N - 1
    /// compaction threads; RocksDB's max_background_jobs; fjall's workers;
    /// LevelDB has one and ignores it)
    #[arg(long, value_name = "N", default_value_t = crate::engines::DEFAULT_BACKGROUND_THREADS,
          value_parser = crate::cli::bench_args::background_threads_parser())]
    pub background_threads: usize,
}

impl ExperimentArgs {
    /// Arguments for experiment `name` with every default.
    pub fn new(name: &str) -> Self {
        ExperimentArgs {
            name: name.to_string(),
            scale: Scale::Small,
            out: None,
            repeats: None,
            json: false,
            work_dir: None,
            distribution: KeyDistribution::Uniform,
            zipf_s: DEFAULT_ZIPF_S,
            docs: PathBuf::from("docs"),
            background_threads: crate::engines::DEFAULT_BACKGROUND_THREADS,
        }
    }

    /// The flags that change what an experiment measures, as a command line
    /// gives them (`--scale`, then those not at their default), for the
    /// summaries' first line.
    pub fn result_flags(&self) -> String {
        let mut s = format!("--scale {}", self.scale.name());
        if let Some(r) = self.repeats {
            let _ = write!(s, " --repeats {r}");
        }
        if self.distribution != KeyDistribution::Uniform {
            if let Some(v) = clap::ValueEnum::to_possible_value(&self.distribution) {
                let _ = write!(s, " --distribution {}", v.get_name());
            }
            let _ = write!(s, " --zipf-s {}", self.zipf_s);
        }
        if self.background_threads != crate::engines::DEFAULT_BACKGROUND_THREADS {
            let _ = write!(s, " --background-threads {}", self.background_threads);
        }
        s
    }
}

/// One registered experiment.
pub struct Experiment {
    /// CLI name.
    pub name: &'static str,
    /// Other names it answers to.
    pub aliases: &'static [&'static str],
    /// What it reproduces.
    pub title: &'static str,
    run: fn(&mut Ctx) -> ExpResult<Summary>,
}

/// Every experiment, in the order `all` runs them.
pub fn registry() -> Vec<Experiment> {
    vec![
        Experiment {
            name: "table1",
            aliases: &[],
            title: "Table 1: device access latency and hash cost of a 1 KB key",
            run: p000_hash_sharing::table1,
        },
        Experiment {
            name: "table2",
            aliases: &[],
            title: "Table 2: FPR per hash function, one digest + rotation vs all k",
            run: p000_hash_sharing::table2,
        },
        Experiment {
            name: "fig2",
            aliases: &[],
            title: "Figure 2: single-filter query latency vs key size",
            run: p000_hash_sharing::fig2,
        },
        Experiment {
            name: "table3",
            aliases: &["fig3"],
            title: "Table 3 + Figure 3: filter units, rotation vs double hashing",
            run: p000_hash_sharing::table3,
        },
        Experiment {
            name: "fig1",
            aliases: &[],
            title: "Figure 1: share of lookup time spent hashing vs data size and device",
            run: p000_hash_sharing::fig1,
        },
        Experiment {
            name: "fig5a",
            aliases: &[],
            title: "Figure 5a: empty lookups vs key size, filter vs levels sharing",
            run: p000_hash_sharing::fig5a,
        },
        Experiment {
            name: "fig5b",
            aliases: &[],
            title: "Figure 5b: empty lookups vs tree height (T = 2)",
            run: p000_hash_sharing::fig5b,
        },
        Experiment {
            name: "fig6",
            aliases: &[],
            title: "Figure 6: gain of hash sharing per storage device",
            run: p000_hash_sharing::fig6,
        },
        Experiment {
            name: "fig7",
            aliases: &[],
            title: "Figure 7: gain of hash sharing vs bits per key and device",
            run: p000_hash_sharing::fig7,
        },
        Experiment {
            name: "fig8",
            aliases: &["fig9"],
            title: "Figures 8 and 9: lookups vs fraction of non-empty queries α (SSD, RAM disk)",
            run: p000_hash_sharing::fig8,
        },
        Experiment {
            name: "costmodel",
            aliases: &[],
            title: "Cost model (Eq. 4 and 5) with measured T_H, T_P, T_D, f_p",
            run: p000_hash_sharing::costmodel,
        },
        Experiment {
            name: "bpk-sweep",
            aliases: &["bpk"],
            title: "Bits-per-key study (paper 004): fillrandom/readrandom vs bits per key",
            run: p004_bpk::bpk_sweep,
        },
        Experiment {
            name: "elastic-table1",
            aliases: &[],
            title: "ElasticBF Table 1: device reads per filter policy (4 bits/key budget)",
            run: p001_elasticbf::table1,
        },
        Experiment {
            name: "elastic-fig5",
            aliases: &[],
            title: "ElasticBF Figure 5: read throughput per filter policy",
            run: p001_elasticbf::fig5,
        },
        Experiment {
            name: "elastic-fig6",
            aliases: &[],
            title: "ElasticBF Figure 6: throughput and device reads vs bits/key budget",
            run: p001_elasticbf::fig6,
        },
        Experiment {
            name: "elastic-fig7",
            aliases: &[],
            title: "ElasticBF Figure 7: load throughput, one Bloom filter vs filter units",
            run: p001_elasticbf::fig7,
        },
        Experiment {
            name: "elastic-warmup",
            aliases: &[],
            title: "Hotness persistence: lookups to steady state after a restart, warm vs cold",
            run: p001_elasticbf::warmup,
        },
        Experiment {
            name: "elastic-shift",
            aliases: &[],
            title: "ElasticBF under a moving hot set: device reads per window, every policy and the oracle",
            run: p001_elasticbf::shift,
        },
        Experiment {
            name: "filters",
            aliases: &[],
            title: "Filter families: FPR vs bits/key beside theory, build and query cost (Bloom, blocked, Ribbon)",
            run: filters::filters,
        },
    ]
}

/// The experiment called `name` (or one of its aliases).
pub fn find(name: &str) -> Option<Experiment> {
    registry()
        .into_iter()
        .find(|e| e.name == name || e.aliases.contains(&name))
}

/// Runs `sievedb experiment` as `args` asks.
pub fn run(args: &ExperimentArgs) -> ExpResult<()> {
    if args.repeats == Some(0) {
        return Err("--repeats must be at least 1".into());
    }
    if !(args.zipf_s.is_finite() && args.zipf_s > 0.0) {
        return Err("--zipf-s must be above 0".into());
    }
    match args.name.as_str() {
        "list" => {
            let mut out = std::io::stdout().lock();
            for e in registry() {
                let alias = if e.aliases.is_empty() {
                    String::new()
                } else {
                    format!(" (also {})", e.aliases.join(", "))
                };
                writeln!(out, "{:<10} {}{alias}", e.name, e.title)?;
            }
            Ok(())
        }
        "all" => run_all(args).map(drop),
        names => {
            let exps = named(names)?;
            let several = exps.len() > 1;
            for exp in &exps {
                let out = match (&args.out, several) {
                    (Some(dir), false) => dir.clone(),
                    (Some(dir), true) => dir.join(exp.name),
                    (None, _) => default_out_root().join(exp.name),
                };
                let done = run_one(exp, args, &out)?;
                eprintln!(
                    "{}: {:.1} s; wrote {}",
                    exp.name,
                    done.seconds,
                    out.join(format!("{}.md", exp.name)).display()
                );
            }
            Ok(())
        }
    }
}

/// The experiments of `names`, a comma-separated list, in its order; every
/// name is checked before any runs. One process runs them all, so those that
/// share measurements (`elastic-table1` and `elastic-fig5`) run them once.
fn named(names: &str) -> ExpResult<Vec<Experiment>> {
    let mut exps: Vec<Experiment> = Vec::new();
    for name in names.split(',').map(str::trim) {
        let exp = find(name).ok_or_else(|| {
            let known: Vec<&str> = registry().iter().map(|e| e.name).collect();
            format!(
                "unknown experiment {name:?}; known: {}, all, list",
                known.join(", ")
            )
        })?;
        if exps.iter().any(|e| e.name == exp.name) {
            return Err(format!("experiment {:?} is named twice", exp.name).into());
        }
        exps.push(exp);
    }
    Ok(exps)
}

/// `./experiments-out`.
fn default_out_root() -> PathBuf {
    PathBuf::from("experiments-out")
}

/// What one finished experiment left behind.
#[derive(Clone, Debug)]
pub struct Finished {
    /// Its summary.
    pub summary: Summary,
    /// Its output directory.
    pub out: PathBuf,
    /// Wall-clock seconds it took.
    pub seconds: f64,
}

/// Runs one experiment into `out`.
pub fn run_one(exp: &Experiment, args: &ExperimentArgs, out: &Path) -> ExpResult<Finished> {
    std::fs::create_dir_all(out).map_err(|e| with_path(e, out))?;
    let work_root = match &args.work_dir {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| with_path(e, d))?;
            tempfile::Builder::new()
                .prefix(&format!("sievedb-exp-{}-", exp.name))
                .tempdir_in(d)?
        }
        None => tempfile::Builder::new()
            .prefix(&format!("sievedb-exp-{}-", exp.name))
            .tempdir()?,
    };
    let mut ctx = Ctx {
        args: args.clone(),
        name: exp.name,
        scale: args.scale,
        out: out.to_path_buf(),
        work: work_root.path().to_path_buf(),
        progress: std::io::stderr().is_terminal(),
        hash_ns: HashMap::new(),
        shm: Vec::new(),
    };
    eprintln!(
        "== {} ({}) at {} scale",
        exp.name,
        exp.title,
        args.scale.name()
    );
    let start = Instant::now();
    let result = (exp.run)(&mut ctx);
    ctx.cleanup();
    let mut summary = result?;
    let seconds = start.elapsed().as_secs_f64();
    summary.seconds = seconds;
    let md = out.join(format!("{}.md", exp.name));
    std::fs::write(&md, summary.render("", 1, &args.result_flags()))
        .map_err(|e| with_path(e, &md))?;
    Ok(Finished {
        summary,
        out: out.to_path_buf(),
        seconds,
    })
}

/// The paragraph of the small runs' document that points to the large ones.
const LARGE_LINK: &str = "The same experiments on the papers' tree shapes (`--scale large`, \
     run one at a time): [reproduction-large.md](reproduction-large.md).\n\n";

/// Runs every experiment and writes `<docs>/reproduction.md` (at `--scale
/// large`, `<docs>/reproduction-large.md`).
pub fn run_all(args: &ExperimentArgs) -> ExpResult<Vec<Finished>> {
    let root = args.out.clone().unwrap_or_else(default_out_root);
    let start = Instant::now();
    let mut done = Vec::new();
    let mut failed = Vec::new();
    for exp in registry() {
        let out = root.join(exp.name);
        match run_one(&exp, args, &out) {
            Ok(f) => {
                eprintln!("{}: {:.1} s", exp.name, f.seconds);
                done.push(f);
            }
            Err(e) => {
                eprintln!("{}: FAILED: {e}", exp.name);
                failed.push((exp.name, e.to_string()));
            }
        }
    }
    let total = start.elapsed().as_secs_f64();
    write_docs(args, &done, &failed, total)?;
    eprintln!(
        "all: {:.1} min; wrote {}",
        total / 60.0,
        args.docs
            .join(format!("{}.md", docs_stem(args.scale)))
            .display()
    );
    if !failed.is_empty() {
        return Err(format!("{} experiment(s) failed", failed.len()).into());
    }
    Ok(done)
}

fn write_docs(
    args: &ExperimentArgs,
    done: &[Finished],
    failed: &[(&str, String)],
    total_seconds: f64,
) -> ExpResult<()> {
    let stem = docs_stem(args.scale);
    let plots_dir = args.docs.join(stem);
    std::fs::create_dir_all(&plots_dir).map_err(|e| with_path(e, &plots_dir))?;
    let mut md = String::new();
    md.push_str("# Reproducing the papers' tables and figures\n\n");
    let _ = writeln!(
        md,
        "Generated by `sievedb experiment all --scale {}` ({:.1} minutes on {}). \
         Each section is also written, with its CSV and PNG/SVG plots, to \
         `experiments-out/<name>/`. The papers are *Reducing Bloom Filter CPU Overhead \
         in LSM-Trees on Modern Storage Devices* (Zhu et al., paper 000 in \
         `../shared/papers`; versions 002/003 differ in a few numbers, 000 is used), \
         *ElasticBF: Fine-grained and Elastic Bloom Filter Towards Efficient Read for \
         LSM-tree-based KV Stores* (Zhang et al., paper 001) and the LevelDB bits-per-key \
         study (paper 004). In the tree experiments the gain is \
         that of `levels` hash sharing (one digest per lookup, the paper's proposal) over \
         `filter` sharing (one digest per filter probed, the paper's state of the art); in the \
         ElasticBF experiments, that of a filter policy over `uniform`.\n\n{GAIN_DEFINITION}\n",
        args.scale.name(),
        total_seconds / 60.0,
        crate::cpu_description()
    );
    if args.scale != Scale::Large {
        md.push_str(LARGE_LINK);
    }
    md.push_str("| experiment | what | runtime |\n|---|---|---:|\n");
    for f in done {
        let _ = writeln!(
            md,
            "| [{}](#{}) | {} | {:.0} s |",
            f.summary.name,
            anchor(&f.summary.heading()),
            f.summary.title,
            f.seconds
        );
    }
    for (name, e) in failed {
        let _ = writeln!(md, "| {name} | **failed**: {e} | |");
    }
    md.push('\n');
    for f in done {
        md.push_str(
            &f.summary
                .render(&format!("{stem}/"), 2, &args.result_flags()),
        );
        md.push('\n');
        let csv = f.out.join(format!("{}.csv", f.summary.name));
        if csv.exists() {
            std::fs::copy(&csv, plots_dir.join(format!("{}.csv", f.summary.name)))?;
        }
        for stem in &f.summary.plots {
            let svg = f.out.join(format!("{stem}.svg"));
            if svg.exists() {
                std::fs::copy(&svg, plots_dir.join(format!("{stem}.svg")))?;
            }
        }
    }
    let doc = args.docs.join(format!("{stem}.md"));
    std::fs::write(&doc, md).map_err(|e| with_path(e, &doc))?;
    Ok(())
}

/// The name of the reproduction document (`.md`) and of its directory of
/// plots and CSVs at `scale`: `reproduction`, or `reproduction-large` for
/// `--scale large`.
pub fn docs_stem(scale: Scale) -> &'static str {
    match scale {
        Scale::Large => "reproduction-large",
        _ => "reproduction",
    }
}

/// GitHub's heading anchor of `s`.
fn anchor(s: &str) -> String {
    s.chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c.to_ascii_lowercase())
            } else if c == ' ' {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_lists_every_experiment_once() {
        let names: Vec<&str> = registry().iter().map(|e| e.name).collect();
        for n in [
            "table1",
            "table2",
            "fig2",
            "table3",
            "fig1",
            "fig5a",
            "fig5b",
            "fig6",
            "fig7",
            "fig8",
            "costmodel",
            "bpk-sweep",
            "elastic-table1",
            "elastic-fig5",
            "elastic-fig6",
            "elastic-fig7",
            "elastic-warmup",
            "elastic-shift",
        ] {
            assert_eq!(names.iter().filter(|x| **x == n).count(), 1, "{n}");
        }
        assert_eq!(find("fig3").unwrap().name, "table3");
        assert_eq!(find("fig9").unwrap().name, "fig8");
        assert!(find("nope").is_none());
        let e = run(&ExperimentArgs::new("nope")).unwrap_err().to_string();
        assert!(
            e.contains("unknown experiment") && e.contains("fig5a"),
            "{e}"
        );
    }

    #[test]
    fn several_names_are_checked_before_any_runs() {
        let names =
            |list: &str| -> Vec<&str> { named(list).unwrap().iter().map(|e| e.name).collect() };
        assert_eq!(
            names("elastic-table1, elastic-fig5"),
            ["elastic-table1", "elastic-fig5"]
        );
        assert_eq!(names("fig9"), ["fig8"]);
        let err = |list: &str| match named(list) {
            Ok(_) => panic!("{list:?} was accepted"),
            Err(e) => e.to_string(),
        };
        let e = err("fig5a,nope");
        assert!(e.contains("unknown experiment \"nope\""), "{e}");
        let e = err("fig8,fig9");
        assert!(e.contains("\"fig8\" is named twice"), "{e}");
        let e = err("fig5a,");
        assert!(e.contains("unknown experiment \"\""), "{e}");
        // The unknown name stops the list before its first experiment runs.
        let dir = tempfile::tempdir().unwrap();
        let mut args = ExperimentArgs::new("table1,nope");
        args.out = Some(dir.path().join("out"));
        assert!(run(&args).is_err());
        assert!(!dir.path().join("out").exists());
    }

    #[test]
    fn result_flags_name_what_is_not_at_its_default() {
        let mut a = ExperimentArgs::new("elastic-fig7");
        assert_eq!(a.result_flags(), "--scale small");
        a.scale = Scale::Large;
        a.repeats = Some(1);
        a.distribution = KeyDistribution::Zipfian;
        a.zipf_s = 1.1;
        a.background_threads = 3;
        assert_eq!(
            a.result_flags(),
            "--scale large --repeats 1 --distribution zipfian --zipf-s 1.1 --background-threads 3"
        );
    }

    #[test]
    fn summary_renders_tables_and_plot_links() {
        let mut s = Summary::new("x", "title");
        s.para("hello");
        s.table(&["a", "b"], vec![vec!["1".into(), "2".into()]]);
        s.blocks.push(Block::Plot {
            stem: "x".into(),
            alt: "alt".into(),
        });
        let md = s.render("reproduction/", 2, "--scale small");
        assert!(md.starts_with("## x: title"));
        assert!(
            md.contains("*`sievedb experiment x --scale small`, "),
            "{md}"
        );
        assert!(md.contains("| a | b |\n|---|---|\n| 1 | 2 |"));
        assert!(md.contains("](reproduction/x.svg)"));
        assert_eq!(anchor("fig5a: Figure 5a: a, b"), "fig5a-figure-5a-a-b");
    }
}
