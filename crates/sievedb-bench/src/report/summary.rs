//! The Markdown summary of an experiment ([`Summary`], made of [`Block`]s),
//! the [`Scale`] it is stamped with, and the number formats the summaries use.

use std::fmt::Write as _;

/// How big an experiment is.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Seconds per experiment (the smoke tests).
    #[value(hide = true)]
    Tiny,
    /// Minutes per experiment on a 2-core machine (each summary states what shrank).
    Small,
    /// The papers' tree shapes (levels, file counts, entries) with values
    /// shrunk so that this machine's disk holds them and each experiment
    /// finishes within the hour (paper 001: 100M entries of 24 + 100 B in
    /// 256 KiB files, ~50,000 files in 6 levels; paper 000: its 22 GB tree).
    Large,
    /// The papers' sizes.
    Paper,
}

impl Scale {
    /// The name of the scale.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Tiny => "tiny",
            Scale::Small => "small",
            Scale::Large => "large",
            Scale::Paper => "paper",
        }
    }
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

    /// Markdown with headings at `level` and plot links prefixed by `prefix`;
    /// its first line gives the command, with `flags` after the name.
    pub fn render(&self, prefix: &str, level: usize, flags: &str) -> String {
        let h = "#".repeat(level);
        let mut s = format!("{h} {}\n\n", self.heading());
        let _ = writeln!(
            s,
            "*`sievedb experiment {} {flags}`, {:.0} s. CSV: [`{}.csv`]({prefix}{}.csv).*\n",
            self.name, self.seconds, self.name, self.name
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
