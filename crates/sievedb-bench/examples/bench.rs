//! Runs the benchmark without the CLI crate:
//! `cargo run --release -p sievedb-bench --features leveldb --example bench -- --engine all`.

use clap::Parser;
use std::process::ExitCode;

/// The benchmark's flags, as `sievedb bench` takes them.
#[derive(Parser, Debug)]
#[command(
    name = "bench",
    about = "db_bench-style benchmarks of sievedb (and LevelDB)"
)]
struct Cli {
    #[command(flatten)]
    args: sievedb_bench::BenchArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match sievedb_bench::run(&cli.args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
