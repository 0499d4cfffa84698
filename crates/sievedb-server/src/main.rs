//! `sievedb-server --id N --listen 127.0.0.1:PORT --db DIR`: one node of a
//! replicated sievedb (see the README's "Replication" section).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use sievedb_server::app::{Node, NodeOptions};

/// One node of a replicated sievedb: its Raft log, Raft metadata and state
/// machine in one sievedb database, replicated by openraft; clients and the
/// other nodes talk to it over HTTP on one address.
#[derive(Parser, Debug)]
#[command(name = "sievedb-server", version)]
struct Args {
    /// This node's id (a positive integer, the same at every restart)
    #[arg(long)]
    id: u64,
    /// Address to listen on for clients and the other nodes
    #[arg(long, value_name = "HOST:PORT")]
    listen: SocketAddr,
    /// The node's data directory (created if missing)
    #[arg(long, value_name = "DIR")]
    db: PathBuf,
    /// Requests not finished within this are answered 503
    #[arg(long, default_value_t = 5000, value_name = "MS")]
    request_timeout_ms: u64,
    /// The same for adding a learner and changing the membership
    #[arg(long, default_value_t = 120_000, value_name = "MS")]
    admin_timeout_ms: u64,
    /// Raft heartbeat interval
    #[arg(long, default_value_t = 100, value_name = "MS")]
    heartbeat_ms: u64,
    /// Raft election timeout, lower bound
    #[arg(long, default_value_t = 500, value_name = "MS")]
    election_timeout_min_ms: u64,
    /// Raft election timeout, upper bound
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    election_timeout_max_ms: u64,
    /// Build a snapshot (and purge the log behind it) every N applied entries
    #[arg(long, default_value_t = 50_000, value_name = "N")]
    snapshot_logs: u64,
    /// Entries kept in the log behind a snapshot
    #[arg(long, default_value_t = 1_000, value_name = "N")]
    keep_logs: u64,
    /// Answer 421 with the leader's address instead of forwarding to it
    #[arg(long)]
    no_forward: bool,
    /// Async worker threads. One by default: a node mostly waits on its disk
    /// and its peers, and one worker never hands a task to another (a
    /// wake-up of a second thread costs more than the work it takes over);
    /// raise it on a many-core machine for read-heavy loads
    #[arg(long, default_value_t = 1, value_name = "N")]
    threads: usize,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,sievedb_server=info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let a = Args::parse();
    if a.id == 0 {
        eprintln!("sievedb-server: --id must be a positive integer");
        return ExitCode::from(2);
    }
    if a.election_timeout_min_ms <= a.heartbeat_ms
        || a.election_timeout_max_ms <= a.election_timeout_min_ms
    {
        eprintln!("sievedb-server: need heartbeat < election timeout min < election timeout max");
        return ExitCode::from(2);
    }
    let mut opts = NodeOptions::new(a.id, a.listen, a.db);
    opts.request_timeout = Duration::from_millis(a.request_timeout_ms);
    opts.admin_timeout = Duration::from_millis(a.admin_timeout_ms);
    opts.heartbeat = Duration::from_millis(a.heartbeat_ms);
    opts.election_timeout = (
        Duration::from_millis(a.election_timeout_min_ms),
        Duration::from_millis(a.election_timeout_max_ms),
    );
    opts.snapshot_logs = a.snapshot_logs;
    opts.keep_logs = a.keep_logs;
    opts.forward = !a.no_forward;
    if a.threads == 0 {
        eprintln!("sievedb-server: --threads must be at least 1");
        return ExitCode::from(2);
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(a.threads)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("sievedb-server: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    rt.block_on(async move {
        let node = match Node::start(opts).await {
            Ok(n) => n,
            Err(e) => {
                eprintln!("sievedb-server: {e}");
                return ExitCode::FAILURE;
            }
        };
        wait_for_signal().await;
        tracing::info!("stopping");
        match node.shutdown().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("sievedb-server: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// SIGTERM or SIGINT.
async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
