//! Formatting results: db_bench-style lines, JSON lines, and medians across repeats.

use crate::bench::device_io::{DeviceReads, DEVICE_KEYS};
use crate::bench::page_cache::PageCacheReport;
use crate::bench::{Benchmark, Measurement};
use crate::report::csv::Table;
use serde_json::{json, Value};

/// Keys of sievedb's filter statistics copied to the top level of every
/// sievedb result line (from `stats`, the delta over the benchmark; the
/// filter memory, its budget and `estimated_extra_io` are levels at the end
/// of the benchmark, not deltas).
pub const FILTER_KEYS: [&str; 10] = [
    "filter_unit_loads",
    "filter_unit_reads",
    "table_open_reads",
    "filter_unit_evictions",
    "filter_memory_bytes",
    "filter_memory_budget_bytes",
    "data_block_reads",
    "digests_computed",
    "estimated_extra_io",
    "filter_false_positives",
];

/// One measured benchmark of one engine in one repeat.
#[derive(Clone, Debug)]
pub struct Record {
    /// Engine name.
    pub engine: &'static str,
    /// The benchmark.
    pub benchmark: Benchmark,
    /// Repeat number, from 1.
    pub repeat: usize,
    /// What was measured.
    pub m: Measurement,
    /// Key + value bytes per operation (for MB/s).
    pub bytes_per_op: u64,
    /// The engine's settings.
    pub settings: Value,
    /// The workload ([`crate::bench::Workload::describe`]; `Null` when unknown).
    pub workload: Value,
    /// sievedb's statistics delta over the benchmark, `None` for other engines.
    pub stats: Option<sievedb::Stats>,
    /// Table files per level after the benchmark, as the engine reports them.
    pub files_per_level: Option<Vec<u64>>,
    /// Keyspaces the keys were spread over (`--keyspaces`; 1 = the default keyspace).
    pub keyspaces: usize,
    /// Device reads over the benchmark, measured outside the engine
    /// (`/proc/self/io` and `/proc/diskstats`; see [`crate::bench::device_io`]).
    pub device: Option<DeviceReads>,
    /// The page cache of the benchmark (`--drop-caches`, `--page-cache-limit`).
    pub page_cache: Option<PageCacheReport>,
}

/// Throughput figures derived from a measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rates {
    /// Operations per second (all threads together).
    pub ops_per_sec: f64,
    /// Microseconds per operation and thread, as db_bench (wall time × threads / ops).
    pub micros_per_op: f64,
    /// (key + value bytes) × ops / seconds / 1e6.
    pub mb_per_sec: f64,
}

impl Rates {
    /// Rates of `ops` operations of `bytes_per_op` bytes in `seconds` on `threads` threads.
    pub fn new(ops: u64, seconds: f64, threads: usize, bytes_per_op: u64) -> Self {
        if ops == 0 || seconds <= 0.0 {
            return Rates {
                ops_per_sec: 0.0,
                micros_per_op: 0.0,
                mb_per_sec: 0.0,
            };
        }
        let ops_f = ops as f64;
        Rates {
            ops_per_sec: ops_f / seconds,
            micros_per_op: seconds * 1e6 * threads.max(1) as f64 / ops_f,
            mb_per_sec: (bytes_per_op as f64) * ops_f / seconds / 1e6,
        }
    }
}

/// `name : s seconds elapsed`: the line of a step measured by its elapsed
/// time only (see [`Benchmark::is_elapsed_only`]).
pub fn elapsed_line(name: &str, seconds: f64) -> String {
    format!("{name:<12} : {seconds:>11.6} seconds elapsed")
}

/// `name : x micros/op; y ops/sec; z MB/s`, db_bench style.
pub fn rate_line(name: &str, r: &Rates) -> String {
    format!(
        "{:<12} : {:>11.3} micros/op; {:>7.0} ops/sec; {:>7.1} MB/s",
        name, r.micros_per_op, r.ops_per_sec, r.mb_per_sec
    )
}

impl Record {
    /// The derived rates.
    pub fn rates(&self) -> Rates {
        Rates::new(
            self.m.ops,
            self.m.seconds,
            self.m.threads,
            self.bytes_per_op,
        )
    }

    /// The db_bench-style text line; `prefix` adds engine and repeat in front.
    pub fn text_line(&self, prefix: bool) -> String {
        let mut s = String::new();
        if prefix {
            s.push_str(&format!("{:<8} #{:<2} ", self.engine, self.repeat));
        }
        if self.benchmark.is_elapsed_only() {
            s.push_str(&elapsed_line(self.benchmark.name(), self.m.seconds));
        } else {
            s.push_str(&rate_line(self.benchmark.name(), &self.rates()));
        }
        if self.benchmark.does_lookups() {
            if let Some(f) = self.m.found.filter(|_| self.benchmark.is_point_read()) {
                s.push_str(&format!(" ({f} of {} found)", self.m.ops));
            }
            if let Some(st) = &self.stats {
                if st.gets > 0 {
                    s.push_str(&format!(
                        "; {:.2} digests/lookup",
                        st.digests_computed as f64 / st.gets as f64
                    ));
                }
            }
            if let Some([h, f, i, d, o]) = self.breakdown_ns() {
                s.push_str(&format!(
                    "; ns: hash {h:.0} filter {f:.0} index {i:.0} data {d:.0} other {o:.0}"
                ));
            }
            if let Some(files) = &self.files_per_level {
                let f: Vec<String> = files.iter().map(u64::to_string).collect();
                s.push_str(&format!("; files/level {}", f.join("/")));
            }
        }
        if self.benchmark.needs_data() {
            if let Some(d) = &self.device {
                s.push_str(&d.text(self.m.ops));
            }
            if let Some(n) = self.engine_device_reads() {
                s.push_str(&format!(
                    " ({:.3} counted by the engine)",
                    n as f64 / self.m.ops.max(1) as f64
                ));
            }
        }
        if let Some(note) = &self.m.note {
            s.push_str("; ");
            s.push_str(note);
        }
        s
    }

    /// Mean per-lookup `[hash, filter, index, data, other]` nanoseconds of the
    /// sampled lookups, when the engine timed any.
    pub fn breakdown_ns(&self) -> Option<[f64; 5]> {
        self.stats.as_ref()?.breakdown.per_lookup()
    }

    /// The filter counters of sievedb's statistics that a result line carries
    /// at its top level (see [`FILTER_KEYS`]); `None` for engines without
    /// statistics.
    pub fn filter_fields(&self) -> Option<serde_json::Map<String, Value>> {
        let s = self.stats.as_ref()?;
        let pairs: [(&str, Value); 10] = [
            ("filter_unit_loads", json!(s.filter_unit_loads)),
            ("filter_unit_reads", json!(s.filter_unit_reads)),
            ("table_open_reads", json!(s.table_open_reads)),
            ("filter_unit_evictions", json!(s.filter_unit_evictions)),
            ("filter_memory_bytes", json!(s.filter_memory_bytes)),
            (
                "filter_memory_budget_bytes",
                json!(s.filter_memory_budget_bytes),
            ),
            ("data_block_reads", json!(s.data_block_reads)),
            ("digests_computed", json!(s.digests_computed)),
            ("estimated_extra_io", json!(s.estimated_extra_io)),
            ("filter_false_positives", json!(s.filter_false_positives)),
        ];
        debug_assert!(pairs.iter().map(|p| p.0).eq(FILTER_KEYS));
        Some(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    /// The device reads sievedb counts itself: block-cache misses + the reads
    /// that loaded filter units (one per load, however many adjacent units it
    /// brings) + table-open reads (reads from the device under
    /// `--use-direct-reads`; with buffered reads some hit the page cache).
    /// `None` for engines without statistics.
    pub fn engine_device_reads(&self) -> Option<u64> {
        let s = self.stats.as_ref()?;
        Some(s.block_cache_misses + s.filter_unit_reads + s.table_open_reads)
    }

    /// The fields of the device-read measurement ([`DEVICE_KEYS`], then
    /// `engine_device_reads` and its per-op figure); `null`s when none was taken.
    pub fn device_fields(&self) -> Vec<(&'static str, Value)> {
        let mut v = match &self.device {
            Some(d) => d.fields(self.m.ops),
            None => DEVICE_KEYS.iter().map(|&k| (k, Value::Null)).collect(),
        };
        let counted = self.engine_device_reads();
        let per_op = counted
            .filter(|_| self.m.ops > 0)
            .map(|n| n as f64 / self.m.ops as f64);
        v.push(("engine_device_reads", json!(counted)));
        v.push(("engine_device_reads_per_op", json!(per_op)));
        v
    }

    /// The page-cache fields of a CSV row (see [`PageCacheReport`]).
    fn page_cache_fields(&self) -> Vec<(&'static str, Value)> {
        let p = self.page_cache.as_ref();
        let g = p.and_then(|p| p.cgroup.as_ref());
        let v = vec![
            ("page_cache_mode", json!(p.map(|p| p.mode))),
            (
                "page_cache_limit_bytes",
                json!(p.and_then(|p| p.limit_bytes)),
            ),
            (
                "db_resident_after_drop_bytes",
                json!(p.map(|p| p.dropped.resident_after_bytes)),
            ),
            (
                "db_resident_after_run_bytes",
                json!(p.and_then(|p| p.resident_after_run_bytes)),
            ),
            ("cgroup_version", json!(g.map(|g| g.version))),
            ("cgroup_limit_bytes", json!(g.map(|g| g.limit_bytes))),
            ("cgroup_peak_bytes", json!(g.and_then(|g| g.peak_bytes))),
            ("cgroup_limit_hits", json!(g.and_then(|g| g.limit_hits))),
            ("page_cache_note", json!(p.and_then(|p| p.note.clone()))),
        ];
        debug_assert!(v.iter().map(|p| p.0).eq(PAGE_CACHE_KEYS));
        v
    }

    /// The JSON object of this record; a step measured by its elapsed time
    /// only has `null` rates (`ops_per_sec`, `micros_per_op`, `mb_per_sec`).
    pub fn to_json(&self) -> Value {
        let r = self.rates();
        let rate = |x: f64| (!self.benchmark.is_elapsed_only()).then_some(x);
        let stats = match &self.stats {
            Some(s) => serde_json::to_value(s).unwrap_or(Value::Null),
            None => Value::Null,
        };
        let breakdown = match self.breakdown_ns() {
            Some([h, f, i, d, o]) => json!({"hash": h, "filter": f, "index": i, "data": d,
                "other": o, "samples": self.stats.as_ref().map_or(0, |s| s.breakdown.samples)}),
            None => Value::Null,
        };
        let mut v = json!({
            "type": "result",
            "engine": self.engine,
            "benchmark": self.benchmark.name(),
            "repeat": self.repeat,
            "keyspaces": self.keyspaces,
            "ops": self.m.ops,
            "seconds": self.m.seconds,
            "ops_per_sec": rate(r.ops_per_sec),
            "micros_per_op": rate(r.micros_per_op),
            "found": self.m.found,
            "mb_per_sec": rate(r.mb_per_sec),
            "threads": self.m.threads,
            "settings": self.settings,
            "workload": self.workload,
            "stats": stats,
            "breakdown_ns": breakdown,
            "files_per_level": self.files_per_level,
            "page_cache": self.page_cache,
        });
        if let Value::Object(obj) = &mut v {
            obj.extend(
                self.device_fields()
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v)),
            );
            if let Some(fields) = self.filter_fields() {
                obj.extend(fields);
            }
            if let Some(Value::Object(extra)) = &self.m.extra {
                obj.extend(extra.clone());
            }
        }
        v
    }
}

/// The page-cache columns of [`records_table`].
pub const PAGE_CACHE_KEYS: [&str; 9] = [
    "page_cache_mode",
    "page_cache_limit_bytes",
    "db_resident_after_drop_bytes",
    "db_resident_after_run_bytes",
    "cgroup_version",
    "cgroup_limit_bytes",
    "cgroup_peak_bytes",
    "cgroup_limit_hits",
    "page_cache_note",
];

/// The transactional benchmarks' columns of [`records_table`] (after the
/// page-cache ones; empty for the other benchmarks): their fields of
/// [`Measurement::extra`] (see [`crate::bench::txn`]).
pub const TXN_KEYS: [&str; 11] = [
    "txn_mode",
    "contention",
    "txn_keys",
    "hot_keys",
    "commits",
    "aborts",
    "commits_per_sec",
    "aborts_per_sec",
    "p50_us",
    "p99_us",
    "max_us",
];

/// Columns of [`records_table`] before the device and page-cache fields.
const CSV_BASE: [&str; 11] = [
    "engine",
    "benchmark",
    "repeat",
    "keyspaces",
    "threads",
    "ops",
    "found",
    "seconds",
    "ops_per_sec",
    "micros_per_op",
    "mb_per_sec",
];

/// The records as a CSV table (`--csv`): one row each, with the rates, the
/// device reads ([`Record::device_fields`]) and the page cache; empty cells
/// for what was not measured.
pub fn records_table(records: &[Record]) -> Table {
    let cell = |v: &Value| match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut cols: Vec<&str> = CSV_BASE.to_vec();
    cols.extend(DEVICE_KEYS);
    cols.extend(["engine_device_reads", "engine_device_reads_per_op"]);
    cols.extend(PAGE_CACHE_KEYS);
    cols.extend(TXN_KEYS);
    let mut t = Table::new(&cols);
    for r in records {
        let j = r.to_json();
        let mut row: Vec<String> = CSV_BASE.iter().map(|k| cell(&j[*k])).collect();
        let fields = r.device_fields().into_iter().chain(r.page_cache_fields());
        row.extend(fields.map(|(_, v)| cell(&v)));
        let txn = r.m.extra.as_ref().filter(|_| r.benchmark.needs_txn());
        row.extend(
            TXN_KEYS
                .iter()
                .map(|k| txn.map_or(String::new(), |e| cell(&e[*k]))),
        );
        t.push(row);
    }
    t
}

/// The median of one engine's repeats of one benchmark.
#[derive(Clone, Debug, PartialEq)]
pub struct MedianRow {
    /// Engine name.
    pub engine: &'static str,
    /// The benchmark.
    pub benchmark: Benchmark,
    /// Number of repeats the median is taken over.
    pub repeats: usize,
    /// Median rates (each figure's own median).
    pub rates: Rates,
    /// Median elapsed seconds.
    pub seconds: f64,
    /// This engine's median micros/op divided by sievedb's (above 1: sievedb is faster).
    pub ratio_to_sievedb: Option<f64>,
    /// Keyspaces of the runs (`--keyspaces`).
    pub keyspaces: usize,
}

impl MedianRow {
    /// The JSON object of this row (`null` rates for a step measured by its
    /// elapsed time only).
    pub fn to_json(&self) -> Value {
        let rate = |x: f64| (!self.benchmark.is_elapsed_only()).then_some(x);
        json!({
            "type": "median",
            "engine": self.engine,
            "benchmark": self.benchmark.name(),
            "repeats": self.repeats,
            "keyspaces": self.keyspaces,
            "seconds": self.seconds,
            "ops_per_sec": rate(self.rates.ops_per_sec),
            "micros_per_op": rate(self.rates.micros_per_op),
            "mb_per_sec": rate(self.rates.mb_per_sec),
            "ratio_to_sievedb": self.ratio_to_sievedb,
        })
    }

    /// One row of the text table; a step measured by its elapsed time only
    /// shows `-` for the rates and its median seconds after them.
    pub fn text_line(&self) -> String {
        if self.benchmark.is_elapsed_only() {
            return format!(
                "{:<12} {:<8} {:>11} {:>10} {:>8} {:>10} ({:.6} seconds elapsed)",
                self.benchmark.name(),
                self.engine,
                "-",
                "-",
                "-",
                "-",
                self.seconds
            );
        }
        let ratio = match self.ratio_to_sievedb {
            Some(r) => format!("{r:>10.2}"),
            None => format!("{:>10}", "-"),
        };
        format!(
            "{:<12} {:<8} {:>11.3} {:>10.0} {:>8.1} {ratio}",
            self.benchmark.name(),
            self.engine,
            self.rates.micros_per_op,
            self.rates.ops_per_sec,
            self.rates.mb_per_sec
        )
    }
}

/// Header of the text median table.
pub fn median_header(repeats: usize) -> String {
    format!(
        "Medians over {repeats} repeat(s); ratio = engine's median micros/op / sievedb's \
         (above 1: sievedb is faster, below 1: sievedb is slower)\n\
         {:<12} {:<8} {:>11} {:>10} {:>8} {:>10}",
        "benchmark", "engine", "micros/op", "ops/sec", "MB/s", "ratio"
    )
}

/// Median of `xs` (mean of the middle two for an even count); 0 for none.
pub fn median(xs: &mut [f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Median rows per benchmark (in `benches` order, each benchmark once) and
/// engine (in `engines` order). A benchmark named more than once in
/// `benches` gets one row, over the runs of every occurrence.
pub fn medians(
    records: &[Record],
    engines: &[&'static str],
    benches: &[Benchmark],
) -> Vec<MedianRow> {
    let mut rows = Vec::new();
    for (i, &b) in benches.iter().enumerate() {
        if benches[..i].contains(&b) {
            continue;
        }
        let mut sievedb_micros = None;
        let mut bench_rows = Vec::new();
        for &e in engines {
            let runs: Vec<&Record> = records
                .iter()
                .filter(|r| r.engine == e && r.benchmark == b)
                .collect();
            let rs: Vec<Rates> = runs.iter().map(|r| r.rates()).collect();
            let seconds = median(&mut runs.iter().map(|r| r.m.seconds).collect::<Vec<_>>());
            if rs.is_empty() {
                continue;
            }
            let pick = |f: fn(&Rates) -> f64| median(&mut rs.iter().map(f).collect::<Vec<_>>());
            let rates = Rates {
                ops_per_sec: pick(|r| r.ops_per_sec),
                micros_per_op: pick(|r| r.micros_per_op),
                mb_per_sec: pick(|r| r.mb_per_sec),
            };
            if e == "sievedb" {
                sievedb_micros = Some(rates.micros_per_op);
            }
            bench_rows.push(MedianRow {
                engine: e,
                benchmark: b,
                repeats: rs.len(),
                rates,
                seconds,
                ratio_to_sievedb: None,
                keyspaces: runs[0].keyspaces,
            });
        }
        if let Some(base) = sievedb_micros.filter(|m| *m > 0.0 && !b.is_elapsed_only()) {
            for row in &mut bench_rows {
                row.ratio_to_sievedb = Some(row.rates.micros_per_op / base);
            }
        }
        rows.extend(bench_rows);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_line_format() {
        let r = Rates::new(200_000, 1.0, 1, 116);
        assert_eq!(r.ops_per_sec, 200_000.0);
        assert_eq!(r.micros_per_op, 5.0);
        assert!((r.mb_per_sec - 23.2).abs() < 1e-9);
        assert_eq!(
            rate_line("fillrandom", &r),
            "fillrandom   :       5.000 micros/op;  200000 ops/sec;    23.2 MB/s"
        );
        // micros/op is per thread, as db_bench.
        assert_eq!(Rates::new(100, 1.0, 2, 10).micros_per_op, 20_000.0);
        assert_eq!(Rates::new(0, 1.0, 1, 10).ops_per_sec, 0.0);
    }

    #[test]
    fn a_benchmark_named_twice_has_one_median_row() {
        let rec = |benchmark, repeat, seconds| Record {
            engine: "sievedb",
            benchmark,
            repeat,
            m: Measurement {
                ops: 1000,
                seconds,
                found: None,
                threads: 1,
                extra: None,
                note: None,
            },
            bytes_per_op: 10,
            settings: Value::Null,
            workload: Value::Null,
            stats: None,
            files_per_level: None,
            keyspaces: 1,
            device: None,
            page_cache: None,
        };
        let records = [
            rec(Benchmark::ReadRandom, 1, 1.0),
            rec(Benchmark::FillRandom, 1, 2.0),
            rec(Benchmark::ReadRandom, 1, 3.0),
        ];
        let benches = [
            Benchmark::ReadRandom,
            Benchmark::FillRandom,
            Benchmark::ReadRandom,
        ];
        let rows = medians(&records, &["sievedb"], &benches);
        let names: Vec<_> = rows.iter().map(|r| r.benchmark).collect();
        assert_eq!(names, [Benchmark::ReadRandom, Benchmark::FillRandom]);
        assert_eq!((rows[0].repeats, rows[0].seconds), (2, 2.0));
    }

    #[test]
    fn device_fields_in_json_and_csv() {
        let mut stats = sievedb::Stats::default();
        // Four units loaded by two reads: the reads are what reach the device.
        (
            stats.block_cache_misses,
            stats.filter_unit_loads,
            stats.filter_unit_reads,
            stats.table_open_reads,
        ) = (5, 4, 2, 1);
        let rec = Record {
            engine: "sievedb",
            benchmark: Benchmark::ReadRandom,
            repeat: 1,
            m: Measurement {
                ops: 4,
                seconds: 1.0,
                found: Some(4),
                threads: 1,
                extra: None,
                note: None,
            },
            bytes_per_op: 10,
            settings: Value::Null,
            workload: Value::Null,
            stats: Some(stats),
            files_per_level: None,
            keyspaces: 1,
            device: Some(DeviceReads {
                read_bytes: Some(32768),
                requests: Some(6),
                device: Some("vda 254:0".into()),
                ..DeviceReads::default()
            }),
            page_cache: None,
        };
        let j = rec.to_json();
        assert_eq!(j["device_read_bytes"], 32768);
        assert_eq!(j["device_read_requests_per_op"], 1.5);
        assert_eq!(
            (
                j["engine_device_reads"].as_u64(),
                j["engine_device_reads_per_op"].as_f64()
            ),
            (Some(8), Some(2.0))
        );
        assert!(j["page_cache"].is_null() && j["device_note"].is_null());
        assert!(rec.text_line(false).contains("1.500 req/op"));
        let bare = Record {
            device: None,
            stats: None,
            ..rec.clone()
        };
        assert!(bare.to_json()["device_read_bytes"].is_null());
        let t = records_table(&[rec, bare]);
        let n = CSV_BASE.len() + DEVICE_KEYS.len() + 2 + PAGE_CACHE_KEYS.len() + TXN_KEYS.len();
        assert_eq!(t.header.len(), n);
        assert!(t.rows.iter().all(|r| r.len() == n));
        let col = |name| t.col(name).unwrap();
        assert_eq!(t.rows[0][col("device")], "vda 254:0");
        assert_eq!(t.rows[0][col("engine_device_reads")], "8");
        assert_eq!(t.rows[1][col("device_read_bytes")], "");
        assert_eq!(t.rows[0][col("benchmark")], "readrandom");
        assert_eq!(records_table(&[]).header.len(), n);
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }
}
