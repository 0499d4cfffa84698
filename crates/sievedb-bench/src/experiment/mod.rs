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
//! every summary) with the SVG plots and the CSVs copied to `docs/reproduction/`.
//!
//! Scales: `small` (the default) finishes each experiment in minutes on a
//! 2-core machine, with fewer entries, levels or repeats than the papers (each
//! summary says which); `paper` uses the papers' sizes (filter micro-benchmarks:
//! 10K keys and 100K queries; trees: 22 GB of 1 KB entries in 5 levels).

pub mod plot;

mod bpk;
mod devices;
mod p000_hash_sharing;
mod p001_elasticbf;

use crate::bench::KeyDistribution;
use crate::bulk::{BulkConfig, Progress};
use crate::keys::KeyGen;
use crate::report::{median, Record};
use crate::{BenchArgs, DEFAULT_ZIPF_S};
use serde_json::{json, Value};
use sievedb::io::with_path;
use sievedb::{HashFn, HashSharing};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Errors of the experiments.
pub type ExpError = Box<dyn std::error::Error + Send + Sync>;
/// Result of the experiments.
pub type ExpResult<T> = Result<T, ExpError>;

/// How big an experiment is.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Seconds per experiment (the smoke tests).
    #[value(hide = true)]
    Tiny,
    /// Minutes per experiment on a 2-core machine (each summary states what shrank).
    Small,
    /// The papers' sizes.
    Paper,
}

impl Scale {
    /// The name of the scale.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Tiny => "tiny",
            Scale::Small => "small",
            Scale::Paper => "paper",
        }
    }
}

/// Flags of `sievedb experiment`.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct ExperimentArgs {
    /// Experiment to run, `all` (every experiment, then docs/reproduction.md) or
    /// `list` (print the experiments)
    #[arg(value_name = "NAME")]
    pub name: String,
    /// small: minutes per experiment on a 2-core machine; paper: the papers' sizes
    #[arg(long, value_enum, default_value_t = Scale::Small)]
    pub scale: Scale,
    /// Output directory (default ./experiments-out/<name>; with `all`, DIR/<name> per experiment)
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
    #[arg(long, value_name = "DIR", default_value = "docs")]
    pub docs: PathBuf,
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
        }
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
            run: devices::table1,
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
            run: bpk::bpk_sweep,
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
        name => {
            let exp = find(name).ok_or_else(|| {
                let names: Vec<&str> = registry().iter().map(|e| e.name).collect();
                format!(
                    "unknown experiment {name:?}; known: {}, all, list",
                    names.join(", ")
                )
            })?;
            let out = args
                .out
                .clone()
                .unwrap_or_else(|| default_out_root().join(exp.name));
            let done = run_one(&exp, args, &out)?;
            eprintln!(
                "{}: {:.1} s; wrote {}",
                exp.name,
                done.seconds,
                out.join(format!("{}.md", exp.name)).display()
            );
            Ok(())
        }
    }
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
    std::fs::write(&md, summary.render("", 1, args.scale)).map_err(|e| with_path(e, &md))?;
    Ok(Finished {
        summary,
        out: out.to_path_buf(),
        seconds,
    })
}

/// Runs every experiment and writes `<docs>/reproduction.md`.
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
        args.docs.join("reproduction.md").display()
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
    let plots_dir = args.docs.join("reproduction");
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
        md.push_str(&f.summary.render("reproduction/", 2, args.scale));
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
    let doc = args.docs.join("reproduction.md");
    std::fs::write(&doc, md).map_err(|e| with_path(e, &doc))?;
    Ok(())
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
    hash_ns: HashMap<(HashFn, usize), f64>,
    /// Scratch directories in /dev/shm to delete at the end.
    shm: Vec<PathBuf>,
}

impl Ctx {
    /// `tiny`, `small` or `paper` by scale.
    pub fn pick<T>(&self, tiny: T, small: T, paper: T) -> T {
        match self.scale {
            Scale::Tiny => tiny,
            Scale::Small => small,
            Scale::Paper => paper,
        }
    }

    /// Repeats per point: `--repeats`, else 1 at tiny scale, `small` or `paper`.
    pub fn repeats(&self, small: usize, paper: usize) -> usize {
        self.args
            .repeats
            .unwrap_or_else(|| self.pick(1, small, paper))
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

    fn cleanup(&mut self) {
        for d in self.shm.drain(..) {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Mean ns of hashing `n` distinct `key_size`-byte keys, best of 5 rounds.
pub fn time_hash(hash: HashFn, key_size: usize, n: usize) -> f64 {
    let keys = KeyGen::new(key_size.max(8), 10_000_000).unwrap_or(KeyGen::new(21, 1).unwrap());
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

/// A CSV table of measured points.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Column names.
    pub header: Vec<String>,
    /// Rows (as many cells as columns).
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these columns.
    pub fn new(cols: &[&str]) -> Self {
        Table {
            header: cols.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.header.len(), "{:?}", self.header);
        self.rows.push(row);
    }

    /// Index of column `name`.
    pub fn col(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// Writes the table as CSV.
    pub fn write_csv(&self, path: &Path) -> std::io::Result<()> {
        let mut s = String::new();
        let line = |cells: &[String]| -> String {
            cells
                .iter()
                .map(|c| {
                    if c.contains([',', '"', '\n']) {
                        format!("\"{}\"", c.replace('"', "\"\""))
                    } else {
                        c.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        s.push_str(&line(&self.header));
        s.push('\n');
        for r in &self.rows {
            s.push_str(&line(r));
            s.push('\n');
        }
        std::fs::write(path, s).map_err(|e| with_path(e, path))
    }

    /// Reads a CSV written by [`Table::write_csv`].
    pub fn read_csv(path: &Path) -> std::io::Result<Table> {
        let text = std::fs::read_to_string(path)?;
        let mut lines = text.lines().map(split_csv_line);
        let header = lines.next().unwrap_or_default();
        Ok(Table {
            header,
            rows: lines.collect(),
        })
    }

    /// One JSON object per row (numbers where a cell parses as one).
    pub fn json_lines(&self, experiment: &str, table: &str) -> Vec<Value> {
        self.rows
            .iter()
            .map(|r| {
                let mut m = serde_json::Map::new();
                m.insert("experiment".into(), json!(experiment));
                m.insert("table".into(), json!(table));
                for (h, c) in self.header.iter().zip(r) {
                    let v = match c.parse::<f64>() {
                        Ok(x) if x.is_finite() => json!(x),
                        _ => json!(c),
                    };
                    m.insert(h.clone(), v);
                }
                Value::Object(m)
            })
            .collect()
    }
}

fn split_csv_line(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// A part of a summary.
#[derive(Clone, Debug)]
pub enum Block {
    /// A paragraph of Markdown.
    Para(String),
    /// A Markdown table.
    Table {
        /// Column names.
        header: Vec<String>,
        /// Rows.
        rows: Vec<Vec<String>>,
    },
    /// A bullet list.
    Bullets(Vec<String>),
    /// A plot (`<stem>.svg`).
    Plot {
        /// File stem.
        stem: String,
        /// Alt text.
        alt: String,
    },
}

/// The Markdown summary of one experiment.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Experiment name.
    pub name: String,
    /// Title.
    pub title: String,
    /// Content, in order.
    pub blocks: Vec<Block>,
    /// Stems of the plots drawn.
    pub plots: Vec<String>,
    /// Runtime (filled in by the runner).
    pub seconds: f64,
}

impl Summary {
    /// An empty summary of experiment `name`.
    pub fn new(name: &str, title: &str) -> Self {
        Summary {
            name: name.to_string(),
            title: title.to_string(),
            blocks: Vec::new(),
            plots: Vec::new(),
            seconds: 0.0,
        }
    }

    /// Adds a paragraph.
    pub fn para(&mut self, s: impl Into<String>) {
        self.blocks.push(Block::Para(s.into()));
    }

    /// Adds a table.
    pub fn table(&mut self, header: &[&str], rows: Vec<Vec<String>>) {
        self.blocks.push(Block::Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows,
        });
    }

    /// Adds a bullet list under a bold label.
    pub fn bullets(&mut self, label: &str, items: Vec<String>) {
        self.para(format!("**{label}**"));
        let items = items.into_iter().filter(|i| !i.trim().is_empty()).collect();
        self.blocks.push(Block::Bullets(items));
    }

    /// The heading text.
    pub fn heading(&self) -> String {
        format!("{}: {}", self.name, self.title)
    }

    /// Markdown with headings at `level` and plot links prefixed by `prefix`.
    pub fn render(&self, prefix: &str, level: usize, scale: Scale) -> String {
        let h = "#".repeat(level);
        let mut s = format!("{h} {}\n\n", self.heading());
        let _ = writeln!(
            s,
            "*`sievedb experiment {} --scale {}`, {:.0} s. CSV: [`{}.csv`]({prefix}{}.csv).*\n",
            self.name,
            scale.name(),
            self.seconds,
            self.name,
            self.name
        );
        for b in &self.blocks {
            match b {
                Block::Para(p) => {
                    s.push_str(p);
                    s.push_str("\n\n");
                }
                Block::Bullets(items) => {
                    for i in items {
                        let _ = writeln!(s, "- {i}");
                    }
                    s.push('\n');
                }
                Block::Table { header, rows } => {
                    let _ = writeln!(s, "| {} |", header.join(" | "));
                    let _ = writeln!(
                        s,
                        "|{}|",
                        header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
                    );
                    for r in rows {
                        let _ = writeln!(s, "| {} |", r.join(" | "));
                    }
                    s.push('\n');
                }
                Block::Plot { stem, alt } => {
                    let _ = writeln!(s, "![{alt}]({prefix}{stem}.svg)\n");
                }
            }
        }
        s
    }
}

/// `x` with `p` decimals (`-` for NaN).
pub fn f(x: f64, p: usize) -> String {
    if x.is_finite() {
        format!("{x:.p$}")
    } else {
        "-".into()
    }
}

/// `x` as a percentage with `p` decimals.
pub fn pct(x: f64, p: usize) -> String {
    if x.is_finite() {
        format!("{:.p$}%", x * 100.0)
    } else {
        "-".into()
    }
}

/// `x` as a signed percentage gain with no decimals.
pub fn gain_str(x: f64) -> String {
    if x.is_finite() {
        format!("{:+.0}%", x * 100.0)
    } else {
        "-".into()
    }
}

// ---------------------------------------------------------------------------
// Trees: bulk load, read in both sharing modes, summarise.

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
    let report = crate::bulk::load_generated(&path, &cfg, bar.callback());
    bar.finish();
    let report = report?;
    Ok(LoadedTree {
        spec: spec.clone(),
        dir: dir.to_path_buf(),
        level1_size: report.level1_size(),
        bytes: report.total_bytes(),
        files: report.total_files(),
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
            ..BenchArgs::default()
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
        setup(&mut a);
        a
    };
    for rep in 0..repeats {
        let mut order: Vec<usize> = (0..modes.len()).collect();
        if rep % 2 == 1 {
            order.reverse();
        }
        for i in order {
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
        let mut order: Vec<usize> = (0..modes.len()).collect();
        if rep % 2 == 1 {
            order.reverse();
        }
        for i in order {
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

/// The gain of `levels` sharing over `filter` sharing at one point:
/// latency(filter) ÷ latency(levels) per repeat, as a [`PairedRatio`]
/// (its [`PairedRatio::gain`] is the gain; see [`GAIN_DEFINITION`]).
pub fn gain(filter: &ReadStats, levels: &ReadStats) -> PairedRatio {
    PairedRatio::of(&filter.runs, &levels.runs)
}

/// The one definition of "gain" every experiment that compares two designs
/// uses, printed at the top of each such summary.
pub const GAIN_DEFINITION: &str = "**Gain, as measured here.** Each repeat runs the two \
    designs back to back; the repeat's ratio is (cost of the baseline) ÷ (cost of the \
    proposal), the cost being time per lookup or device reads — for throughput, ops/s of the \
    proposal ÷ ops/s of the baseline. The gain shown is the **median of these paired ratios** \
    (− 1 when written as a percentage), which is robust to load drifting between repeats; it \
    can therefore differ slightly from the ratio of two printed medians. The bracket gives the \
    min–max of the paired ratios over the repeats (the run-to-run spread); a gain whose spread \
    crosses 1× (no change) or is wider than its distance from 1× is marked **⚠ within \
    noise**.";

/// The ratio of two designs measured in the same repeats (see
/// [`GAIN_DEFINITION`]): the median, min and max over repeats of
/// `num[i] ÷ den[i]`. Invariant: `min ≤ median ≤ max` when `n ≥ 1`; all NaN
/// when `n = 0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairedRatio {
    /// Repeats with a finite ratio.
    pub n: usize,
    /// Median of the per-repeat ratios.
    pub median: f64,
    /// Smallest per-repeat ratio.
    pub min: f64,
    /// Largest per-repeat ratio.
    pub max: f64,
}

impl PairedRatio {
    /// Pairs `num[i]` with `den[i]` (extra runs of the longer side are
    /// ignored; pairs whose ratio is not finite and positive are skipped).
    pub fn of(num: &[f64], den: &[f64]) -> PairedRatio {
        let mut v: Vec<f64> = num
            .iter()
            .zip(den)
            .map(|(a, b)| a / b)
            .filter(|r| r.is_finite() && *r > 0.0)
            .collect();
        if v.is_empty() {
            return PairedRatio {
                n: 0,
                median: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
            };
        }
        let m = median(&mut v);
        let (min, max) = v
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(*x), hi.max(*x))
            });
        PairedRatio {
            n: v.len(),
            median: m,
            min,
            max,
        }
    }

    /// The gain: median ratio − 1 (NaN without a pair).
    pub fn gain(&self) -> f64 {
        self.median - 1.0
    }

    /// Whether the run-to-run spread is larger than the effect: with at
    /// least two repeats, the min–max range contains 1× or is wider than
    /// |median − 1|. One repeat measures no spread and is never flagged
    /// (its display says so instead).
    pub fn within_noise(&self) -> bool {
        self.n >= 2
            && ((self.min <= 1.0 && self.max >= 1.0)
                || self.max - self.min > (self.median - 1.0).abs())
    }

    fn flag(&self) -> &'static str {
        if self.within_noise() {
            " ⚠ within noise"
        } else {
            ""
        }
    }

    /// As a ratio: `1.23× (1.20–1.25)`, `1.23× (1 run, no spread)`, with the
    /// noise flag.
    pub fn show_ratio(&self) -> String {
        match self.n {
            0 => "-".into(),
            1 => format!("{:.2}× (1 run, no spread)", self.median),
            _ => format!(
                "{:.2}× ({:.2}–{:.2}){}",
                self.median,
                self.min,
                self.max,
                self.flag()
            ),
        }
    }

    /// As a gain: `+23% (+20…+25%)`, `+23% (1 run, no spread)`, with the
    /// noise flag.
    pub fn show_gain(&self) -> String {
        match self.n {
            0 => "-".into(),
            1 => format!("{} (1 run, no spread)", gain_str(self.gain())),
            _ => format!(
                "{} ({}…{}){}",
                gain_str(self.gain()),
                gain_str(self.min - 1.0),
                gain_str(self.max - 1.0),
                self.flag()
            ),
        }
    }
}

/// The paper's cost model, Eq. 4 (per-filter hashing, `shared = false`) and
/// Eq. 5 (one hash per lookup, `shared = true`), in the unit of its inputs:
/// `(L − α/(T−1))·(T_H + T_P) + α·T_D + (L − α/(T−1))·f_p·T_D` and
/// `T_H + (L − α/(T−1))·T_P + α·T_D + (L − α/(T−1))·f_p·T_D`. T_P, which the
/// paper's Eq. 3 carries and its Eq. 4/5 drop as negligible, is kept.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// Hash cost of one digest.
    pub t_h: f64,
    /// Probe cost of one filter (memory accesses, given the digest).
    pub t_p: f64,
    /// Cost of one data access.
    pub t_d: f64,
    /// False-positive rate.
    pub f_p: f64,
    /// Levels.
    pub l: f64,
    /// Size ratio.
    pub t: f64,
    /// Fraction of non-empty lookups.
    pub alpha: f64,
}

impl Model {
    /// Levels probed on average: `L − α/(T−1)`.
    pub fn levels_probed(&self) -> f64 {
        self.l - self.alpha / (self.t - 1.0).max(1e-9)
    }

    /// Eq. 4: one digest per filter probed.
    pub fn cost_per_filter(&self) -> f64 {
        let lp = self.levels_probed();
        lp * (self.t_h + self.t_p) + self.alpha * self.t_d + lp * self.f_p * self.t_d
    }

    /// Eq. 5: one digest per lookup.
    pub fn cost_shared(&self) -> f64 {
        let lp = self.levels_probed();
        self.t_h + lp * self.t_p + self.alpha * self.t_d + lp * self.f_p * self.t_d
    }

    /// Eq. 4 ÷ Eq. 5 − 1.
    pub fn gain(&self) -> f64 {
        self.cost_per_filter() / self.cost_shared() - 1.0
    }
}

/// Per-probe ns of the filter phase and per-read ns of the data phase from a
/// breakdown, or NaN.
pub fn probe_and_data_ns(s: &ReadStats) -> (f64, f64) {
    match s.breakdown {
        Some(b) => (
            if s.probes > 0.0 {
                b[1] / s.probes
            } else {
                f64::NAN
            },
            if s.data_reads > 0.0 {
                b[3] / s.data_reads
            } else {
                f64::NAN
            },
        ),
        None => (f64::NAN, f64::NAN),
    }
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
    fn csv_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Table::new(&["a", "b"]);
        t.push(vec!["1".into(), "x,\"y\"".into()]);
        let p = dir.path().join("t.csv");
        t.write_csv(&p).unwrap();
        assert_eq!(Table::read_csv(&p).unwrap(), t);
        let j = t.json_lines("e", "t");
        assert_eq!(j[0]["a"], 1.0);
        assert_eq!(j[0]["b"], "x,\"y\"");
    }

    #[test]
    fn cost_model_matches_the_papers_equations() {
        let m = Model {
            t_h: 235.0,
            t_p: 0.0,
            t_d: 10_000.0,
            f_p: 0.0082,
            l: 5.0,
            t: 10.0,
            alpha: 0.0,
        };
        // Eq. 4 at α = 0: L·T_H + L·f_p·T_D.
        assert!((m.cost_per_filter() - (5.0 * 235.0 + 5.0 * 0.0082 * 10_000.0)).abs() < 1e-9);
        // Eq. 5: T_H + L·f_p·T_D.
        assert!((m.cost_shared() - (235.0 + 5.0 * 0.0082 * 10_000.0)).abs() < 1e-9);
        assert!(m.gain() > 0.0);
        let m1 = Model { alpha: 1.0, ..m };
        assert!((m1.levels_probed() - (5.0 - 1.0 / 9.0)).abs() < 1e-12);
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
        let md = s.render("reproduction/", 2, Scale::Small);
        assert!(md.starts_with("## x: title"));
        assert!(md.contains("| a | b |\n|---|---|\n| 1 | 2 |"));
        assert!(md.contains("](reproduction/x.svg)"));
        assert_eq!(anchor("fig5a: Figure 5a: a, b"), "fig5a-figure-5a-a-b");
    }
}
