//! What `sievedb devices` measured ([`DevicesReport`]: one [`DeviceLatency`]
//! per access mode, one [`HashCost`] per hash function and key size) and its
//! text, JSON and CSV forms.

use std::path::PathBuf;

use serde_json::{json, Value};
use sievedb::HashFn;

/// Latency of 4 KiB random reads in one access mode.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceLatency {
    /// Mode name: `memory`, `buffered`, `direct`, `tmpfs`, or `emulated-<delay>`.
    pub mode: String,
    /// What the mode stands for in the papers (`SSD(D)`, `NVM (RAM disk)`, …).
    pub stands_for: String,
    /// The busy wait added per read (emulated modes), in nanoseconds.
    pub delay_ns: u64,
    /// The test file read (`None` for `memory`).
    pub path: Option<PathBuf>,
    /// Whether the mode could be measured; when not, the numbers are zero and
    /// `note` says why.
    pub supported: bool,
    /// Why the mode is unsupported, or a remark on how it was measured.
    pub note: Option<String>,
    /// Reads timed.
    pub reads: u64,
    /// Mean latency in nanoseconds.
    pub mean_ns: f64,
    /// Median latency in nanoseconds.
    pub p50_ns: f64,
    /// 99th percentile latency in nanoseconds.
    pub p99_ns: f64,
}

impl DeviceLatency {
    pub(crate) fn unsupported(
        mode: &str,
        stands_for: &str,
        path: Option<PathBuf>,
        why: String,
    ) -> Self {
        DeviceLatency {
            mode: mode.into(),
            stands_for: stands_for.into(),
            delay_ns: 0,
            path,
            supported: false,
            note: Some(why),
            reads: 0,
            mean_ns: 0.0,
            p50_ns: 0.0,
            p99_ns: 0.0,
        }
    }
}

/// Cost of one key digest with one hash function at one key size.
#[derive(Clone, Debug, PartialEq)]
pub struct HashCost {
    /// The hash function.
    pub hash: HashFn,
    /// Key size in bytes.
    pub key_size: usize,
    /// Median over the runs of nanoseconds per digest.
    pub ns_per_hash: f64,
    /// Fastest run, nanoseconds per digest.
    pub min_ns: f64,
    /// Slowest run, nanoseconds per digest.
    pub max_ns: f64,
    /// Digests computed per run.
    pub hashes_per_run: u64,
}

/// Everything `measure` found.
#[derive(Clone, Debug, PartialEq)]
pub struct DevicesReport {
    /// One entry per access mode, `memory` first.
    pub reads: Vec<DeviceLatency>,
    /// One entry per hash function and key size, in configuration order.
    pub hashes: Vec<HashCost>,
    /// Test file size in bytes (whole pages).
    pub file_size: u64,
    /// Bytes per read.
    pub block_size: usize,
    /// Cost of reading the clock around one read (subtracted from nothing;
    /// shown so that the `memory` figure can be judged).
    pub timer_overhead_ns: f64,
    /// `N * model` of this machine's CPU.
    pub cpu: String,
}

impl DevicesReport {
    /// The read latency of `mode`, if it was measured.
    pub fn read(&self, mode: &str) -> Option<&DeviceLatency> {
        self.reads.iter().find(|r| r.mode == mode && r.supported)
    }

    /// The cost of hashing a `key_size`-byte key with `hash`, if measured.
    pub fn hash(&self, hash: HashFn, key_size: usize) -> Option<&HashCost> {
        self.hashes
            .iter()
            .find(|h| h.hash == hash && h.key_size == key_size)
    }

    /// Median latency of the `memory` mode, the unit of the `x_memory`
    /// columns (medians, which a busy machine disturbs less than means).
    fn memory_ns(&self) -> Option<f64> {
        self.read("memory").map(|m| m.p50_ns).filter(|&ns| ns > 0.0)
    }

    /// The report as one JSON object: `{"type": "devices", "cpu", "file_size",
    /// "block_size", "timer_overhead_ns", "reads": [...], "hashes": [...]}`;
    /// unmeasured numbers are `null`; `x_memory` (Table 1's "normalized"
    /// column) is a read's p50, or a digest's ns, over the `memory` mode's p50.
    pub fn to_json(&self) -> Value {
        let mem = self.memory_ns();
        let ratio = |ns: f64| mem.map(|m| ns / m);
        let reads: Vec<Value> = self
            .reads
            .iter()
            .map(|r| {
                let num = |v: f64| if r.supported { json!(v) } else { Value::Null };
                json!({
                    "mode": r.mode,
                    "stands_for": r.stands_for,
                    "delay_ns": r.delay_ns,
                    "path": r.path.as_ref().map(|p| p.display().to_string()),
                    "supported": r.supported,
                    "note": r.note,
                    "reads": r.reads,
                    "mean_ns": num(r.mean_ns),
                    "p50_ns": num(r.p50_ns),
                    "p99_ns": num(r.p99_ns),
                    "x_memory": if r.supported { json!(ratio(r.p50_ns)) } else { Value::Null },
                })
            })
            .collect();
        let hashes: Vec<Value> = self
            .hashes
            .iter()
            .map(|h| {
                json!({
                    "hash": h.hash.name(),
                    "key_size": h.key_size,
                    "ns_per_hash": h.ns_per_hash,
                    "min_ns": h.min_ns,
                    "max_ns": h.max_ns,
                    "hashes_per_run": h.hashes_per_run,
                    "x_memory": ratio(h.ns_per_hash),
                })
            })
            .collect();
        json!({
            "type": "devices",
            "cpu": self.cpu,
            "file_size": self.file_size,
            "block_size": self.block_size,
            "timer_overhead_ns": self.timer_overhead_ns,
            "reads": reads,
            "hashes": hashes,
        })
    }

    /// The report as text tables: read latency per mode, then ns per hash
    /// (rows: hash functions, columns: key sizes).
    pub fn text(&self) -> String {
        use std::fmt::Write as _;
        let mem = self.memory_ns();
        let mut s = String::new();
        let _ = writeln!(s, "CPU:        {}", self.cpu);
        let _ = writeln!(
            s,
            "Reads:      {} B at random aligned offsets of a {:.1} MiB file, through sievedb's \
             file layer (clock overhead {:.0} ns per read)",
            self.block_size,
            self.file_size as f64 / 1048576.0,
            self.timer_overhead_ns
        );
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{:<16} {:<22} {:>11} {:>11} {:>11} {:>8} {:>10}  path / note",
            "mode", "stands for", "mean ns", "p50 ns", "p99 ns", "reads", "x mem p50"
        );
        for r in &self.reads {
            let place = r
                .path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            if !r.supported {
                let _ = writeln!(
                    s,
                    "{:<16} {:<22} {:>11} {:>11} {:>11} {:>8} {:>10}  {}",
                    r.mode,
                    r.stands_for,
                    "unsupported",
                    "-",
                    "-",
                    0,
                    "-",
                    r.note.as_deref().unwrap_or(&place)
                );
                continue;
            }
            let x = mem.map_or("-".to_string(), |m| format!("{:.1}", r.p50_ns / m));
            let mut tail = place;
            if let Some(n) = &r.note {
                if !tail.is_empty() {
                    tail.push_str("; ");
                }
                tail.push_str(n);
            }
            let _ = writeln!(
                s,
                "{:<16} {:<22} {:>11.0} {:>11.0} {:>11.0} {:>8} {:>10}  {}",
                r.mode, r.stands_for, r.mean_ns, r.p50_ns, r.p99_ns, r.reads, x, tail
            );
        }
        if self.hashes.is_empty() {
            return s;
        }
        let mut sizes: Vec<usize> = Vec::new();
        let mut fns: Vec<HashFn> = Vec::new();
        for h in &self.hashes {
            if !sizes.contains(&h.key_size) {
                sizes.push(h.key_size);
            }
            if !fns.contains(&h.hash) {
                fns.push(h.hash);
            }
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "Hash cost: ns per key digest (KeyDigest::compute, what a filter probe pays), \
             median of runs"
        );
        let _ = write!(s, "{:<10}", "key bytes");
        for k in &sizes {
            let _ = write!(s, " {k:>8}");
        }
        #[expect(clippy::expect_used, reason = "the report has at least one key size")]
        let last = *sizes.last().expect("non-empty");
        let _ = writeln!(s, "   x mem p50 ({last} B)");
        for f in fns {
            let _ = write!(s, "{:<10}", f.name());
            for &k in &sizes {
                match self.hash(f, k) {
                    Some(h) => {
                        let _ = write!(s, " {:>8.1}", h.ns_per_hash);
                    }
                    None => {
                        let _ = write!(s, " {:>8}", "-");
                    }
                }
            }
            let x = match (self.hash(f, last), mem) {
                (Some(h), Some(m)) => format!("{:.2}", h.ns_per_hash / m),
                _ => "-".into(),
            };
            let _ = writeln!(s, "   {x:>8}");
        }
        s
    }

    /// The report as CSV: a header, then one row per access mode
    /// (`kind=read`) and one per hash function and key size (`kind=hash`,
    /// `mean_ns` = the median ns per digest).
    pub fn csv(&self) -> String {
        let mut s = String::from("kind,name,key_size,delay_ns,reads,mean_ns,p50_ns,p99_ns,note\n");
        for r in &self.reads {
            let note = r.note.as_deref().unwrap_or("").replace([',', '\n'], ";");
            if r.supported {
                s.push_str(&format!(
                    "read,{},,{},{},{:.1},{:.1},{:.1},{}\n",
                    r.mode, r.delay_ns, r.reads, r.mean_ns, r.p50_ns, r.p99_ns, note
                ));
            } else {
                s.push_str(&format!(
                    "read,{},,{},0,,,,unsupported: {}\n",
                    r.mode, r.delay_ns, note
                ));
            }
        }
        for h in &self.hashes {
            s.push_str(&format!(
                "hash,{},{},,{},{:.2},,,\n",
                h.hash.name(),
                h.key_size,
                h.hashes_per_run,
                h.ns_per_hash
            ));
        }
        s
    }
}
