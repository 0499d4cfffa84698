//! The guide's Rust snippets, compiled and run by `cargo test -p
//! sievedb-guide-tests` (rustdoc runs every ```` ```rust ```` block of every
//! chapter as a doctest, with `sievedb` and `tempfile` available).
//!
//! mdBook's own `mdbook test` is not used: it compiles snippets with
//! `rustdoc --test -L DIR`, which fails as soon as the dependency directory
//! holds two builds of one crate (every workspace build with other features
//! leaves them); doctests of a crate that depends on `sievedb` link exactly
//! the build cargo made for it. A chapter added to the guide is added to
//! [`CHAPTERS`] below, and a test fails until it is.

macro_rules! chapters {
    ($($name:ident => $path:literal),* $(,)?) => {
        $(
            #[cfg(doctest)]
            #[doc = include_str!(concat!("../../src/", $path))]
            pub struct $name;
        )*
        /// Every chapter of the guide, as a path under `docs/guide/src`.
        pub const CHAPTERS: &[&str] = &[$($path),*];
    };
}

chapters!(
    Summary => "SUMMARY.md",
    Introduction => "introduction.md",
    GettingStarted => "getting-started.md",
    ApiTour => "api/README.md",
    ReadsAndWrites => "api/reads-and-writes.md",
    Iterators => "api/iterators.md",
    Snapshots => "api/snapshots.md",
    Keyspaces => "api/keyspaces.md",
    Merge => "api/merge.md",
    Transactions => "api/transactions.md",
    CompactionFiltersAndTtl => "api/compaction-filters-and-ttl.md",
    CheckpointsReadOnlyRepair => "api/checkpoints-read-only-repair.md",
    Filters => "filters.md",
    FilterBudget => "filter-budget.md",
    Cli => "cli.md",
    Python => "python.md",
    Replication => "replication.md",
    BulkLoad => "bulk-load.md",
    Tuning => "tuning.md",
    Robustness => "robustness.md",
    RobustnessTable => "robustness-table.md",
    Benchmarking => "benchmarking.md",
    Papers => "papers.md",
    Benchmarks => "benchmarks.md",
    History => "history.md",
    Architecture => "architecture.md",
    Format => "format.md",
    Contributing => "contributing.md",
);

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    fn markdown_under(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path: PathBuf = entry.unwrap().path();
            if path.is_dir() {
                markdown_under(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                let rel = path.strip_prefix(root).unwrap();
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }

    #[test]
    fn every_chapter_is_a_doctest() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../src");
        let mut found = Vec::new();
        markdown_under(&src, &src, &mut found);
        found.sort();
        let mut listed: Vec<String> = super::CHAPTERS.iter().map(|s| s.to_string()).collect();
        listed.sort();
        assert_eq!(
            found, listed,
            "docs/guide/src and CHAPTERS in docs/guide/tests/src/lib.rs differ"
        );
    }

    #[test]
    fn every_chapter_is_in_the_summary() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../src");
        let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
        for chapter in super::CHAPTERS.iter().filter(|c| **c != "SUMMARY.md") {
            assert!(
                summary.contains(&format!("({chapter})")),
                "{chapter} is not in SUMMARY.md"
            );
        }
    }
}
