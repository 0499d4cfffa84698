//! `bench-cluster --failover-probe`: writes at a low steady rate, SIGKILLs
//! the leader, and measures the time from the kill to the first write *sent
//! after it* that the cluster acknowledges (through another node).

use std::error::Error;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use super::report::{Latency, Point};
use super::target::{Conn, Target};
use super::{key_of, Rng};

/// How the probe runs.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The system.
    pub target: Target,
    /// Every endpoint; after the kill, all but the leader's.
    pub endpoints: Vec<String>,
    /// The leader's endpoint (killed).
    pub leader: String,
    /// The leader's process.
    pub pid: u32,
    /// Writes per second, all writers together.
    pub rate: f64,
    /// Concurrent writers.
    pub writers: usize,
    /// Steady writing before the kill.
    pub warmup: Duration,
    /// Give up when no write is acknowledged this long after the kill.
    pub give_up: Duration,
    /// A writer abandons a request after this long (and sends another).
    pub request_timeout: Duration,
    /// Value size in bytes.
    pub value_size: usize,
    /// The key space.
    pub keys: u64,
    /// Seed of the writers' keys and values.
    pub seed: u64,
}

/// What the writers share.
#[derive(Default)]
struct Shared {
    killed_at: Mutex<Option<Instant>>,
    first_ack: Mutex<Option<Instant>>,
    stop: AtomicBool,
    acks: AtomicU64,
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One writer: round-robin over the endpoints (all but the leader's once
/// it is killed), one write every `interval`.
fn writer(p: &Probe, shared: &Shared, index: usize, interval: Duration) -> Vec<u64> {
    let conns: Vec<Conn> = p
        .endpoints
        .iter()
        .map(|e| Conn::new(p.target, e, p.request_timeout))
        .collect();
    let mut rng = Rng::new(p.seed ^ 0xfa11_0000 ^ index as u64);
    let mut value = vec![0u8; p.value_size];
    rng.fill(&mut value);
    let mut lat = Vec::new();
    // Writers start spread over one interval.
    #[expect(clippy::cast_possible_truncation, reason = "a small thread index")]
    let mut next = Instant::now() + interval * index as u32 / p.writers.max(1) as u32;
    let mut turn = index;
    while !shared.stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if next > now {
            thread::sleep(next - now);
        }
        let now = Instant::now();
        next = next.max(now.checked_sub(interval).unwrap_or(now)) + interval;
        let killed = *lock(&shared.killed_at);
        let live: Vec<&Conn> = conns
            .iter()
            .filter(|c| killed.is_none() || c.addr() != p.leader)
            .collect();
        turn += 1;
        let conn = live[turn % live.len()];
        let key = key_of(rng.below(p.keys));
        rng.fill(&mut value[..p.value_size.min(8)]);
        let sent = Instant::now();
        match conn.put(&key, &value) {
            Ok(()) => {
                let done = Instant::now();
                lat.push(u64::try_from((done - sent).as_micros()).unwrap_or(u64::MAX));
                shared.acks.fetch_add(1, Ordering::Relaxed);
                if killed.is_some_and(|k| sent >= k) {
                    let mut first = lock(&shared.first_ack);
                    *first = Some(first.map_or(done, |f| f.min(done)));
                    shared.stop.store(true, Ordering::Relaxed);
                }
            }
            Err(e) => {
                shared.errors.fetch_add(1, Ordering::Relaxed);
                lock(&shared.first_error).get_or_insert(e.0);
            }
        }
    }
    lat
}

/// SIGKILLs `pid` (with `kill -9`, no signal library needed).
fn kill(pid: u32) -> Result<(), Box<dyn Error>> {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .map_err(|e| format!("running kill -9 {pid}: {e}"))?;
    if !status.success() {
        return Err(format!("kill -9 {pid} failed ({status})").into());
    }
    Ok(())
}

/// Runs the probe: the `failover` row.
pub fn run(p: &Probe) -> Result<Point, Box<dyn Error>> {
    if !p.endpoints.iter().any(|e| *e != p.leader) {
        return Err(format!(
            "--failover-probe needs an endpoint other than the leader's ({})",
            p.leader
        )
        .into());
    }
    let writers = p.writers.max(1);
    #[expect(clippy::cast_precision_loss, reason = "a small thread count")]
    let interval = Duration::from_secs_f64(writers as f64 / p.rate.max(0.1));
    let shared = Shared::default();
    let start = Instant::now();
    let (lat, killed_at) = thread::scope(|s| -> Result<_, Box<dyn Error>> {
        let handles: Vec<_> = (0..writers)
            .map(|i| {
                let shared = &shared;
                s.spawn(move || writer(p, shared, i, interval))
            })
            .collect();
        thread::sleep(p.warmup);
        let before = shared.acks.load(Ordering::Relaxed);
        let outcome = if before == 0 {
            Err(format!(
                "no write was acknowledged in the {:.1} s before the kill: {}",
                p.warmup.as_secs_f64(),
                lock(&shared.first_error).as_deref().unwrap_or("no answer")
            )
            .into())
        } else {
            eprintln!(
                "failover: {before} writes acknowledged; kill -9 {} (the leader, {})",
                p.pid, p.leader
            );
            kill(p.pid).map(|()| {
                let at = Instant::now();
                *lock(&shared.killed_at) = Some(at);
                while !shared.stop.load(Ordering::Relaxed) && at.elapsed() < p.give_up {
                    thread::sleep(Duration::from_millis(5));
                }
                at
            })
        };
        shared.stop.store(true, Ordering::Relaxed);
        let mut lat = Vec::new();
        for h in handles {
            lat.extend(h.join().map_err(|_| "a failover writer panicked")?);
        }
        Ok((lat, outcome?))
    })?;
    let mut lat = lat;
    let first = *lock(&shared.first_ack);
    let failover_ms = first.map(|f| (f - killed_at).as_secs_f64() * 1000.0);
    match failover_ms {
        Some(ms) => eprintln!("failover: first write acknowledged {ms:.1} ms after the kill"),
        None => eprintln!(
            "failover: no write acknowledged within {:.0} s of the kill",
            p.give_up.as_secs_f64()
        ),
    }
    let first_error = lock(&shared.first_error).clone();
    Ok(Point {
        target: p.target.name().to_string(),
        workload: "failover".to_string(),
        clients: writers,
        route: "spread".to_string(),
        endpoints: p.endpoints.join(","),
        seconds: start.elapsed().as_secs_f64(),
        ops: shared.acks.load(Ordering::Relaxed),
        errors: shared.errors.load(Ordering::Relaxed),
        misses: 0,
        latency: Latency::of(&mut lat),
        write_bytes: None,
        failover_ms,
        first_error,
    })
}
