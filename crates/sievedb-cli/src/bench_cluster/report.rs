//! What `bench-cluster` measures per point, and how it is written: a table
//! on stderr, `--csv` rows and a `--json` document.

use std::error::Error;
use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};

/// One measured point: a target, a workload and a number of clients.
#[derive(Debug, Clone, Default)]
pub struct Point {
    /// `sievedb` or `etcd`.
    pub target: String,
    /// `put`, `get` or `failover`.
    pub workload: String,
    /// Concurrent clients (closed loop: each waits for its answer).
    pub clients: usize,
    /// Where the clients sent their requests (`leader` or `spread`).
    pub route: String,
    /// The endpoints used, comma-separated.
    pub endpoints: String,
    /// Measured wall time, seconds.
    pub seconds: f64,
    /// Acknowledged operations.
    pub ops: u64,
    /// Failed operations (transport errors, non-2xx answers).
    pub errors: u64,
    /// Gets that found no value.
    pub misses: u64,
    /// Latency of the acknowledged operations, µs.
    pub latency: Latency,
    /// Bytes the `--io-pids` processes wrote to storage during the point.
    pub write_bytes: Option<u64>,
    /// Milliseconds from killing the leader to the first acknowledged write
    /// sent after it (`failover` rows only).
    pub failover_ms: Option<f64>,
    /// The first error seen, if any.
    pub first_error: Option<String>,
}

/// Latency percentiles, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Latency {
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Maximum.
    pub max: u64,
}

impl Latency {
    /// The percentiles of `us` (sorted in place); all zero when empty.
    pub fn of(us: &mut [u64]) -> Latency {
        if us.is_empty() {
            return Latency::default();
        }
        us.sort_unstable();
        let at = |q: f64| {
            // The smallest sample with at least a fraction q at or below it.
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss,
                reason = "q in (0, 1] times a sample count: a small positive integer"
            )]
            let rank = (q * us.len() as f64).ceil() as usize;
            us[rank.clamp(1, us.len()) - 1]
        };
        Latency {
            p50: at(0.50),
            p99: at(0.99),
            max: us[us.len() - 1],
        }
    }
}

impl Point {
    /// Acknowledged operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        if self.seconds > 0.0 {
            #[expect(clippy::cast_precision_loss, reason = "an operation count")]
            let ops = self.ops as f64;
            ops / self.seconds
        } else {
            0.0
        }
    }

    /// Bytes written to storage per acknowledged put (`put` rows with
    /// `--io-pids`).
    pub fn write_bytes_per_put(&self) -> Option<f64> {
        match (self.workload.as_str(), self.write_bytes) {
            #[expect(clippy::cast_precision_loss, reason = "byte and operation counts")]
            ("put", Some(b)) if self.ops > 0 => Some(b as f64 / self.ops as f64),
            _ => None,
        }
    }

    /// The point as a JSON object.
    pub fn to_json(&self) -> Value {
        json!({
            "target": self.target,
            "workload": self.workload,
            "clients": self.clients,
            "route": self.route,
            "endpoints": self.endpoints,
            "seconds": self.seconds,
            "ops": self.ops,
            "ops_per_sec": self.ops_per_sec(),
            "p50_us": self.latency.p50,
            "p99_us": self.latency.p99,
            "max_us": self.latency.max,
            "errors": self.errors,
            "misses": self.misses,
            "write_bytes": self.write_bytes,
            "write_bytes_per_put": self.write_bytes_per_put(),
            "failover_ms": self.failover_ms,
            "first_error": self.first_error,
        })
    }
}

/// The CSV columns, in order.
pub const CSV_HEADER: &str = "target,workload,clients,route,endpoints,seconds,ops,ops_per_sec,\
p50_us,p99_us,max_us,errors,misses,write_bytes,write_bytes_per_put,failover_ms,first_error";

/// A CSV field: quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// The point as a CSV row (no line break).
pub fn csv_row(p: &Point) -> String {
    [
        csv_field(&p.target),
        csv_field(&p.workload),
        p.clients.to_string(),
        csv_field(&p.route),
        csv_field(&p.endpoints),
        format!("{:.3}", p.seconds),
        p.ops.to_string(),
        format!("{:.1}", p.ops_per_sec()),
        p.latency.p50.to_string(),
        p.latency.p99.to_string(),
        p.latency.max.to_string(),
        p.errors.to_string(),
        p.misses.to_string(),
        opt(p.write_bytes),
        opt(p.write_bytes_per_put().map(|b| format!("{b:.1}"))),
        opt(p.failover_ms.map(|m| format!("{m:.1}"))),
        csv_field(p.first_error.as_deref().unwrap_or("")),
    ]
    .join(",")
}

/// The header of the stderr table.
pub fn table_header() -> String {
    format!(
        "{:<8} {:<8} {:>7} {:>10} {:>9} {:>9} {:>9} {:>7} {:>9} {:>11}",
        "target",
        "workload",
        "clients",
        "ops/s",
        "p50 µs",
        "p99 µs",
        "max µs",
        "errors",
        "B/put",
        "failover ms"
    )
}

/// One line of the stderr table.
pub fn table_row(p: &Point) -> String {
    format!(
        "{:<8} {:<8} {:>7} {:>10.1} {:>9} {:>9} {:>9} {:>7} {:>9} {:>11}",
        p.target,
        p.workload,
        p.clients,
        p.ops_per_sec(),
        p.latency.p50,
        p.latency.p99,
        p.latency.max,
        p.errors,
        opt(p.write_bytes_per_put().map(|b| format!("{b:.0}"))),
        opt(p.failover_ms.map(|m| format!("{m:.0}"))),
    )
}

/// Writes `points` to `path` as CSV; with `append`, after the rows already
/// there (the header is written only into a new or empty file).
pub fn write_csv(path: &Path, points: &[Point], append: bool) -> Result<(), Box<dyn Error>> {
    let existing = append && std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(existing)
        .truncate(!existing)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = String::new();
    if !existing {
        text.push_str(CSV_HEADER);
        text.push('\n');
    }
    for p in points {
        text.push_str(&csv_row(p));
        text.push('\n');
    }
    f.write_all(text.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

/// Writes `{"runs": [{"config": .., "rows": [..]}]}` to `path`; with
/// `append`, adds this run to the runs already there.
pub fn write_json(
    path: &Path,
    config: Value,
    points: &[Point],
    append: bool,
) -> Result<(), Box<dyn Error>> {
    let mut runs = Vec::new();
    if append {
        if let Ok(text) = std::fs::read(path) {
            let old: Value = serde_json::from_slice(&text)
                .map_err(|e| format!("{}: not a bench-cluster JSON file: {e}", path.display()))?;
            if let Some(r) = old["runs"].as_array() {
                runs.clone_from(r);
            }
        }
    }
    let rows: Vec<Value> = points.iter().map(Point::to_json).collect();
    runs.push(json!({ "config": config, "rows": rows }));
    let text = serde_json::to_string_pretty(&json!({ "runs": runs }))?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

/// The `write_bytes` of `/proc/PID/io` (bytes the process caused to be
/// sent to storage).
pub fn proc_write_bytes(pid: u32) -> Result<u64, String> {
    let path = format!("/proc/{pid}/io");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    text.lines()
        .find_map(|l| l.strip_prefix("write_bytes:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("{path}: no write_bytes line"))
}

/// The `write_bytes` of every pid, summed.
pub fn sum_write_bytes(pids: &[u32]) -> Result<u64, String> {
    pids.iter().map(|&p| proc_write_bytes(p)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        assert_eq!(Latency::of(&mut []), Latency::default());
        let mut v: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(
            Latency::of(&mut v),
            Latency {
                p50: 50,
                p99: 99,
                max: 100
            }
        );
        assert_eq!(Latency::of(&mut [7]).p99, 7);
    }

    #[test]
    fn csv_rows_match_the_header() {
        let p = Point {
            target: "sievedb".into(),
            workload: "put".into(),
            clients: 4,
            endpoints: "a:1,b:2".into(),
            seconds: 2.0,
            ops: 10,
            write_bytes: Some(1000),
            first_error: Some("x \"y\"".into()),
            ..Point::default()
        };
        let row = csv_row(&p);
        assert!(
            row.starts_with("sievedb,put,4,,\"a:1,b:2\",2.000,10,5.0,"),
            "{row}"
        );
        assert!(row.contains(",1000,100.0,,\"x \"\"y\"\"\""), "{row}");
        assert_eq!(p.write_bytes_per_put(), Some(100.0));
        assert_eq!(CSV_HEADER.split(',').count(), 17);
    }

    #[test]
    fn reads_own_write_bytes() {
        assert!(proc_write_bytes(std::process::id()).is_ok());
    }
}
