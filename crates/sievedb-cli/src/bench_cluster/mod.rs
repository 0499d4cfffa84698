//! `sievedb bench-cluster`: a closed-loop load generator for a replicated
//! key-value service over HTTP, `sievedb-server` or etcd 3.4 (its JSON
//! gateway), with the same client, keys, values and durability for both.
//!
//! Each client is a thread with its own persistent connection (a `ureq`
//! agent, connected before the clock starts) that sends a request, waits
//! for its answer and sends the next one, for `--seconds`. Points run one
//! after the other: every `--clients` count for puts, then (after
//! `--preload`, if asked) for linearizable gets; then, with
//! `--failover-probe`, the time a leader's SIGKILL costs ([`failover`]).

mod failover;
mod report;
mod target;

use std::error::Error;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::commands::CmdResult;
use report::{Latency, Point};
pub use target::Target;
use target::{find_leader, Conn};

/// What the clients do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// Writes of random keys.
    Put,
    /// Linearizable reads of random keys.
    Get,
    /// The put points, then the get points.
    Both,
}

/// Where the clients send their requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Route {
    /// Every client to the leader (found through the endpoints): no
    /// forwarding hop, the same for both targets.
    Leader,
    /// Client i to endpoint i mod N (followers forward to the leader).
    Spread,
}

/// `sievedb bench-cluster`'s flags.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchClusterArgs {
    /// The system the endpoints serve
    #[arg(long, value_enum, default_value = "sievedb")]
    pub target: Target,
    /// Client addresses of the nodes, HOST:PORT, comma-separated
    #[arg(
        long,
        value_name = "ADDRS",
        value_delimiter = ',',
        default_value = "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003"
    )]
    pub endpoints: Vec<String>,
    /// Send every request to the leader (found once, before the points) or
    /// spread the clients over the endpoints
    #[arg(long, value_enum, default_value = "leader")]
    pub route: Route,
    /// Numbers of concurrent clients, one point each, in turn
    #[arg(long, value_name = "N,N,..", value_delimiter = ',', default_value = "1,16,64",
          value_parser = clap::value_parser!(u16).range(1..))]
    pub clients: Vec<u16>,
    /// Seconds per point
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    pub seconds: f64,
    /// Bytes per value
    #[arg(long, value_name = "BYTES", default_value_t = 100)]
    pub value_size: usize,
    /// Size of the key space: keys k0000000000 .. k(K-1), picked uniformly
    #[arg(long, value_name = "K", default_value_t = 100_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub keys: u64,
    /// Puts, gets, or both (puts first)
    #[arg(long, value_enum, default_value = "both")]
    pub workload: Workload,
    /// Before the get points, write every key of the key space once
    #[arg(long)]
    pub preload: bool,
    /// Processes whose /proc/PID/io write_bytes are summed before and after
    /// each point (the bytes written to storage per put)
    #[arg(long, value_name = "PID,PID,..", value_delimiter = ',')]
    pub io_pids: Vec<u32>,
    /// After the points, write at --probe-rate, SIGKILL the leader and report
    /// the ms from the kill to the first acknowledged write sent after it
    #[arg(long)]
    pub failover_probe: bool,
    /// The leader's process, for --failover-probe
    #[arg(long, value_name = "PID")]
    pub kill_pid: Option<u32>,
    /// The nodes' processes, for --failover-probe to find the leader's:
    /// either PIDs in the order of --endpoints, or ID=PID pairs (the node id
    /// of /cluster/status; for etcd the member id in decimal)
    #[arg(
        long,
        value_name = "PIDS",
        value_delimiter = ',',
        conflicts_with = "kill_pid"
    )]
    pub pids: Vec<String>,
    /// Writes per second during the failover probe (all writers together)
    #[arg(long, value_name = "N", default_value_t = 200.0)]
    pub probe_rate: f64,
    /// Concurrent writers of the failover probe
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub probe_writers: usize,
    /// Seconds of steady writes before the kill
    #[arg(long, value_name = "S", default_value_t = 2.0)]
    pub probe_warmup: f64,
    /// A probe write is abandoned (and another one sent) after this long
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub probe_timeout_ms: u64,
    /// Give up on the probe this long after the kill
    #[arg(long, value_name = "S", default_value_t = 30.0)]
    pub probe_give_up: f64,
    /// A benchmark request is abandoned (counted as an error) after this long
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub timeout_ms: u64,
    /// Write the points as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the points as CSV to FILE (one row per target, workload and clients)
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Add to the --json and --csv files instead of replacing them
    #[arg(long)]
    pub append: bool,
    /// Seed of the keys and values
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// A small, fast generator (splitmix64): keys and values need no more.
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// Fills `buf` with random bytes.
    pub(crate) fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let r = self.next().to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
    }
}

/// Key number `i` of the key space.
pub(crate) fn key_of(i: u64) -> Vec<u8> {
    format!("k{i:010}").into_bytes()
}

/// One client of a point: its latencies (µs), errors, misses and first error.
#[derive(Default)]
struct ClientResult {
    lat: Vec<u64>,
    errors: u64,
    misses: u64,
    first_error: Option<String>,
}

/// Runs one point: `clients` closed-loop clients doing `op` for `seconds`.
fn run_point(
    args: &BenchClusterArgs,
    endpoints: &[String],
    op: Workload,
    clients: usize,
) -> Result<Point, Box<dyn Error>> {
    let timeout = Duration::from_millis(args.timeout_ms.max(1));
    let seconds = Duration::from_secs_f64(args.seconds.max(0.001));
    let barrier = Barrier::new(clients + 1);
    let before = io_bytes(&args.io_pids);
    let (results, elapsed) = thread::scope(|s| -> Result<_, Box<dyn Error>> {
        let handles: Vec<_> = (0..clients)
            .map(|i| {
                let barrier = &barrier;
                let ep = &endpoints[i % endpoints.len()];
                s.spawn(move || -> ClientResult {
                    let conn = Conn::new(args.target, ep, timeout);
                    let warm = conn.warm_up();
                    let mut rng = Rng::new(args.seed.wrapping_mul(1_000_003) ^ i as u64);
                    let mut value = vec![0u8; args.value_size];
                    rng.fill(&mut value);
                    let mut r = ClientResult::default();
                    barrier.wait();
                    if let Err(e) = warm {
                        r.errors = 1;
                        r.first_error = Some(e.0);
                        return r;
                    }
                    let deadline = Instant::now() + seconds;
                    while Instant::now() < deadline {
                        let key = key_of(rng.below(args.keys));
                        let t0 = Instant::now();
                        let res = match op {
                            Workload::Get => conn.get(&key).map(|found| {
                                r.misses += u64::from(!found);
                            }),
                            _ => {
                                rng.fill(&mut value[..args.value_size.min(8)]);
                                conn.put(&key, &value)
                            }
                        };
                        match res {
                            Ok(()) => r
                                .lat
                                .push(u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX)),
                            Err(e) => {
                                r.errors += 1;
                                r.first_error.get_or_insert(e.0);
                                // Not a hot loop against a dead node.
                                thread::sleep(Duration::from_millis(10));
                            }
                        }
                    }
                    r
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let mut results = Vec::new();
        for h in handles {
            results.push(h.join().map_err(|_| "a client thread panicked")?);
        }
        Ok((results, start.elapsed()))
    })?;
    let after = io_bytes(&args.io_pids);
    let mut lat = Vec::new();
    let mut p = Point {
        target: args.target.name().to_string(),
        workload: if op == Workload::Get { "get" } else { "put" }.to_string(),
        clients,
        route: format!("{:?}", args.route).to_lowercase(),
        endpoints: dedup(endpoints).join(","),
        seconds: elapsed.as_secs_f64(),
        write_bytes: before.zip(after).map(|(b, a)| a.saturating_sub(b)),
        ..Point::default()
    };
    for r in results {
        p.ops += r.lat.len() as u64;
        lat.extend(r.lat);
        p.errors += r.errors;
        p.misses += r.misses;
        if p.first_error.is_none() {
            p.first_error = r.first_error;
        }
    }
    p.latency = Latency::of(&mut lat);
    Ok(p)
}

/// The endpoints without repeats, in order.
fn dedup(endpoints: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in endpoints {
        if !out.contains(e) {
            out.push(e.clone());
        }
    }
    out
}

/// The summed `write_bytes` of `pids`, `None` without pids or when one
/// cannot be read (said on stderr).
fn io_bytes(pids: &[u32]) -> Option<u64> {
    if pids.is_empty() {
        return None;
    }
    match report::sum_write_bytes(pids) {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("warning: {e}: no bytes per put for this point");
            None
        }
    }
}

/// Writes every key of the key space once, with 32 clients.
fn preload(args: &BenchClusterArgs, endpoints: &[String]) -> Result<(), Box<dyn Error>> {
    let timeout = Duration::from_millis(args.timeout_ms.max(1));
    let next = AtomicU64::new(0);
    let failed: Mutex<Option<String>> = Mutex::new(None);
    let start = Instant::now();
    eprintln!("preload: writing {} keys", args.keys);
    thread::scope(|s| {
        for i in 0..32 {
            let (next, failed) = (&next, &failed);
            let ep = &endpoints[i % endpoints.len()];
            s.spawn(move || {
                let conn = Conn::new(args.target, ep, timeout);
                let mut rng = Rng::new(args.seed ^ 0x9e10_ad00 ^ i as u64);
                let mut value = vec![0u8; args.value_size];
                rng.fill(&mut value);
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= args.keys {
                        break;
                    }
                    // A put of the same value again is harmless: a few
                    // tries ride out an election or a slow round.
                    let mut tries = 0;
                    while let Err(e) = conn.put(&key_of(k), &value) {
                        tries += 1;
                        if tries == 5 {
                            *failed.lock().unwrap_or_else(PoisonError::into_inner) = Some(e.0);
                            next.store(args.keys, Ordering::Relaxed);
                            return;
                        }
                        thread::sleep(Duration::from_millis(100));
                    }
                }
            });
        }
    });
    if let Some(e) = failed.into_inner().unwrap_or_else(PoisonError::into_inner) {
        return Err(format!("preload failed: {e}").into());
    }
    eprintln!("preload: done in {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}

/// `HOST:PORT` of an endpoint given with or without `http://`.
fn normalize(ep: &str) -> String {
    ep.trim()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string()
}

/// The leader's pid from `--kill-pid` or `--pids`.
fn leader_pid(
    args: &BenchClusterArgs,
    endpoints: &[String],
    leader_id: &str,
    leader: &str,
) -> Result<u32, Box<dyn Error>> {
    if let Some(p) = args.kill_pid {
        return Ok(p);
    }
    let bad = |s: &str| format!("--pids: `{s}` is neither PID nor ID=PID");
    let mut aligned = Vec::new();
    for item in &args.pids {
        match item.split_once('=') {
            Some((id, pid)) => {
                if id.trim() == leader_id {
                    return Ok(pid.trim().parse().map_err(|_| bad(item))?);
                }
            }
            None => aligned.push(item.trim().parse::<u32>().map_err(|_| bad(item))?),
        }
    }
    if aligned.is_empty() {
        return Err(format!(
            "--failover-probe: give --kill-pid, or --pids naming the leader's (node {leader_id} at {leader})"
        )
        .into());
    }
    if aligned.len() != endpoints.len() {
        return Err("--pids: give one PID per --endpoints entry, in the same order".into());
    }
    let i = endpoints
        .iter()
        .position(|e| e == leader)
        .ok_or_else(|| format!("the leader {leader} is none of the --endpoints"))?;
    Ok(aligned[i])
}

/// Runs `sievedb bench-cluster`.
pub fn run(args: &BenchClusterArgs) -> CmdResult {
    let endpoints: Vec<String> = args.endpoints.iter().map(|e| normalize(e)).collect();
    if endpoints.is_empty() || endpoints.iter().any(String::is_empty) {
        return Err("--endpoints: give at least one HOST:PORT".into());
    }
    if args.seconds.is_nan() || args.seconds <= 0.0 {
        return Err("--seconds must be positive".into());
    }
    if let Err(e) = report::sum_write_bytes(&args.io_pids) {
        return Err(format!("--io-pids: {e}").into());
    }
    let timeout = Duration::from_millis(args.timeout_ms.max(1));
    let (leader_id, leader) = find_leader(args.target, &endpoints, timeout)?;
    let leader = normalize(&leader);
    let used = match args.route {
        Route::Leader => vec![leader.clone()],
        Route::Spread => endpoints.clone(),
    };
    eprintln!(
        "bench-cluster: {} at {}; leader {leader_id} at {leader}; clients send to {} ({:?})",
        args.target.name(),
        endpoints.join(","),
        used.join(","),
        args.route
    );
    let workloads: &[Workload] = match args.workload {
        Workload::Both => &[Workload::Put, Workload::Get],
        Workload::Put => &[Workload::Put],
        Workload::Get => &[Workload::Get],
    };
    let mut points = Vec::new();
    eprintln!("{}", report::table_header());
    for &w in workloads {
        if w == Workload::Get && args.preload {
            preload(args, &used)?;
        }
        for &c in &args.clients {
            let p = run_point(args, &used, w, usize::from(c))?;
            eprintln!("{}", report::table_row(&p));
            if let Some(e) = &p.first_error {
                eprintln!("  first error: {e}");
            }
            points.push(p);
        }
    }
    let mut probe_failed = None;
    if args.failover_probe {
        let pid = leader_pid(args, &endpoints, &leader_id, &leader)?;
        let probe = failover::Probe {
            target: args.target,
            endpoints: endpoints.clone(),
            leader: leader.clone(),
            pid,
            rate: args.probe_rate,
            writers: args.probe_writers,
            warmup: Duration::from_secs_f64(args.probe_warmup.max(0.0)),
            give_up: Duration::from_secs_f64(args.probe_give_up.max(0.1)),
            request_timeout: Duration::from_millis(args.probe_timeout_ms.max(1)),
            value_size: args.value_size,
            keys: args.keys,
            seed: args.seed,
        };
        match failover::run(&probe) {
            Ok(p) => {
                eprintln!("{}", report::table_row(&p));
                points.push(p);
            }
            // The points measured so far are still written.
            Err(e) => probe_failed = Some(e),
        }
    }
    let config = json!({
        "target": args.target.name(),
        "endpoints": endpoints,
        "route": format!("{:?}", args.route).to_lowercase(),
        "leader": leader,
        "seconds": args.seconds,
        "value_size": args.value_size,
        "keys": args.keys,
        "preload": args.preload,
        "io_pids": args.io_pids,
    });
    if let Some(path) = &args.json {
        report::write_json(path, config, &points, args.append)?;
    }
    if let Some(path) = &args.csv {
        report::write_csv(path, &points, args.append)?;
    }
    // The rows on stdout too, for a quick look or a pipe.
    println!("{}", report::CSV_HEADER);
    for p in &points {
        println!("{}", report::csv_row(p));
    }
    match probe_failed {
        Some(e) => Err(format!("failover probe: {e}").into()),
        None => Ok(ExitCode::SUCCESS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: BenchClusterArgs,
    }

    fn parse(args: &[&str]) -> Result<BenchClusterArgs, clap::Error> {
        let mut v = vec!["bench-cluster"];
        v.extend_from_slice(args);
        T::try_parse_from(v).map(|t| t.a)
    }

    #[test]
    fn defaults_and_lists() {
        let a = parse(&[]).unwrap();
        assert_eq!(a.target, Target::Sievedb);
        assert_eq!(a.clients, [1, 16, 64]);
        assert_eq!(a.endpoints.len(), 3);
        assert_eq!((a.route, a.workload), (Route::Leader, Workload::Both));
        assert_eq!((a.value_size, a.keys), (100, 100_000));
        let a = parse(&[
            "--target",
            "etcd",
            "--clients",
            "2,8",
            "--io-pids",
            "10,11",
            "--pids",
            "1=10,2=11",
        ])
        .unwrap();
        assert_eq!(a.target, Target::Etcd);
        assert_eq!(a.clients, [2, 8]);
        assert_eq!(a.io_pids, [10, 11]);
        assert_eq!(a.pids, ["1=10", "2=11"]);
        assert!(parse(&["--clients", "0"]).is_err());
        assert!(parse(&["--keys", "0"]).is_err());
        assert!(parse(&["--kill-pid", "1", "--pids", "2"]).is_err());
        assert!(parse(&["--workload", "scan"]).is_err());
    }

    #[test]
    fn leader_pid_from_pairs_or_order() {
        let eps: Vec<String> = ["a:1", "b:2", "c:3"].map(String::from).to_vec();
        let with = |pids: &[&str]| BenchClusterArgs {
            pids: pids.iter().map(|s| s.to_string()).collect(),
            ..parse(&[]).unwrap()
        };
        assert_eq!(
            leader_pid(&with(&["1=7", "2=8"]), &eps, "2", "b:2").unwrap(),
            8
        );
        assert_eq!(
            leader_pid(&with(&["7", "8", "9"]), &eps, "3", "c:3").unwrap(),
            9
        );
        assert!(leader_pid(&with(&["7", "8"]), &eps, "3", "c:3").is_err());
        assert!(leader_pid(&with(&["x=y"]), &eps, "x", "a:1").is_err());
        assert!(leader_pid(&with(&[]), &eps, "1", "a:1").is_err());
        let mut a = with(&[]);
        a.kill_pid = Some(5);
        assert_eq!(leader_pid(&a, &eps, "1", "a:1").unwrap(), 5);
    }

    #[test]
    fn keys_and_random_bytes() {
        assert_eq!(key_of(42), b"k0000000042");
        let mut r = Rng::new(1);
        let mut buf = [0u8; 13];
        r.fill(&mut buf);
        assert!(buf.iter().any(|&b| b != 0));
        assert!((0..1000).all(|_| r.below(7) < 7));
        assert_eq!(normalize(" http://h:1/ "), "h:1");
    }
}
