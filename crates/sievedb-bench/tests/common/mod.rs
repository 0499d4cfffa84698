//! What the bench crate's integration tests share: running `bench` in
//! process and reading its output.

use serde_json::Value;
use sievedb_bench::{run_with_output, BenchArgs};

/// The text `bench` prints for `args`.
pub fn run(args: &BenchArgs) -> String {
    let mut out = Vec::new();
    run_with_output(args, &mut out).expect("benchmark run failed");
    String::from_utf8(out).expect("utf-8 output")
}

/// The JSON lines `bench` prints for `args` (`json: true`).
pub fn json_lines(args: &BenchArgs) -> Vec<Value> {
    run(args)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON {l:?}: {e}")))
        .collect()
}

/// The result records of `bench` on `engine` among a run's JSON lines.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn results<'a>(lines: &'a [Value], engine: &str, bench: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|v| v["type"] == "result" && v["engine"] == engine && v["benchmark"] == bench)
        .collect()
}
