//! One node: its storage, its Raft, and the HTTP server on its one address.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::serve::ListenerExt;
use axum::Router;
use openraft::{Config, SnapshotPolicy};
use tokio::net::TcpListener;

use crate::network::raft::Network;
use crate::reads::ReadBatcher;
use crate::store::{snapshot, LogStore, StateMachine, Store};
use crate::types::{NodeId, Raft};
use crate::writes::WriteBatcher;

/// How a node runs (`sievedb-server`'s flags).
#[derive(Clone, Debug)]
pub struct NodeOptions {
    /// This node's id (stable across restarts; checked against its data).
    pub id: NodeId,
    /// The address it listens on, for clients and for the other nodes.
    pub listen: SocketAddr,
    /// Its data directory.
    pub dir: PathBuf,
    /// A client request that has not finished by then is answered 503.
    pub request_timeout: Duration,
    /// The same for `/cluster/learner` and `/cluster/membership`, which
    /// wait for a learner to catch up.
    pub admin_timeout: Duration,
    /// Raft's heartbeat interval.
    pub heartbeat: Duration,
    /// Raft's election timeout range.
    pub election_timeout: (Duration, Duration),
    /// A snapshot is built every this many applied entries.
    pub snapshot_logs: u64,
    /// Entries kept in the log behind a snapshot (for slightly slow followers).
    pub keep_logs: u64,
    /// Forward writes and linearizable reads to the leader (else 421).
    pub forward: bool,
}

impl NodeOptions {
    /// The defaults for node `id` on `listen` with data in `dir`.
    pub fn new(id: NodeId, listen: SocketAddr, dir: PathBuf) -> NodeOptions {
        NodeOptions {
            id,
            listen,
            dir,
            request_timeout: Duration::from_secs(5),
            admin_timeout: Duration::from_secs(120),
            heartbeat: Duration::from_millis(100),
            election_timeout: (Duration::from_millis(500), Duration::from_millis(1000)),
            snapshot_logs: 50_000,
            keep_logs: 1_000,
            forward: true,
        }
    }
}

/// What every request handler shares.
pub struct App {
    /// The node's options.
    pub opts: NodeOptions,
    /// Its Raft.
    pub raft: Raft,
    /// Its storage.
    pub store: Arc<Store>,
    /// Keep-alive HTTP client (forwarding to the leader).
    pub http: reqwest::Client,
    /// Batches the read-index rounds of linearizable reads.
    pub reads: Arc<ReadBatcher>,
    /// Batches concurrent client writes into one Raft entry.
    pub writes: Arc<WriteBatcher>,
    /// Becomes `true` when the node shuts down (ends the connections that
    /// outlive HTTP, the upgraded Raft streams).
    pub stopped: tokio::sync::watch::Receiver<bool>,
}

/// A running node.
pub struct Node {
    /// The shared state.
    pub app: Arc<App>,
    /// The address it listens on.
    pub addr: SocketAddr,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    stop: tokio::sync::watch::Sender<bool>,
}

/// An error starting a node.
#[derive(Debug)]
pub struct StartError(pub String);

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

fn start_err(what: &str, e: impl std::fmt::Display) -> StartError {
    StartError(format!("{what}: {e}"))
}

/// The key of `raft_meta` that records the node id of the data directory.
const NODE_ID: &[u8] = b"node_id";

/// Refuses a data directory that belongs to another node id.
fn check_node_id(store: &Store, id: NodeId) -> Result<(), StartError> {
    let e = |x: sievedb::Error| start_err("reading the node id", x);
    match store.meta.get(NODE_ID).map_err(e)? {
        Some(b) if b.as_slice() != id.to_be_bytes() => {
            let was = b.as_slice().try_into().map(u64::from_be_bytes).unwrap_or(0);
            Err(StartError(format!(
                "{} holds the data of node {was}, not of node {id}",
                store.dir.display()
            )))
        }
        Some(_) => Ok(()),
        None => store
            .meta
            .put_with(
                NODE_ID,
                id.to_be_bytes(),
                &sievedb::WriteOptions { sync: true },
            )
            .map_err(|x| start_err("recording the node id", x)),
    }
}

impl Node {
    /// Opens the node's storage, starts its Raft and serves HTTP.
    pub async fn start(opts: NodeOptions) -> Result<Node, StartError> {
        let store = Store::open(&opts.dir)
            .map_err(|e| start_err(&format!("opening {}", opts.dir.display()), e))?;
        check_node_id(&store, opts.id)?;
        snapshot::recover(&store).map_err(|e| start_err("recovering snapshots", e))?;
        let config = Config {
            cluster_name: "sievedb".into(),
            heartbeat_interval: millis(opts.heartbeat),
            election_timeout_min: millis(opts.election_timeout.0),
            election_timeout_max: millis(opts.election_timeout.1),
            snapshot_policy: SnapshotPolicy::LogsSinceLast(opts.snapshot_logs),
            max_in_snapshot_log_to_keep: opts.keep_logs,
            install_snapshot_timeout: 10_000,
            max_payload_entries: crate::writes::MAX_PAYLOAD_ENTRIES,
            ..Config::default()
        }
        .validate()
        .map_err(|e| start_err("Raft configuration", e))?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(2))
            .pool_max_idle_per_host(64)
            .tcp_nodelay(true)
            .build()
            .map_err(|e| start_err("HTTP client", e))?;
        let log = LogStore::new(store.clone()).map_err(|e| start_err("log syncer", e))?;
        let sm = StateMachine::new(store.clone());
        let raft = Raft::new(
            opts.id,
            Arc::new(config),
            Network::new(http.clone(), opts.heartbeat),
            log,
            sm,
        )
        .await
        .map_err(|e| start_err("starting Raft", e))?;
        let listener = TcpListener::bind(opts.listen)
            .await
            .map_err(|e| start_err(&format!("listening on {}", opts.listen), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| start_err("local address", e))?;
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let app = Arc::new(App {
            stopped: stopped.clone(),
            opts,
            reads: ReadBatcher::new(raft.clone()),
            writes: WriteBatcher::new(raft.clone()),
            raft,
            store,
            http,
        });
        let router = routes().with_state(app.clone());
        let server = tokio::spawn(async move {
            // Small responses go out at once (no Nagle delay behind an
            // unacknowledged segment of the same connection).
            let listener = listener.tap_io(|tcp| {
                if let Err(e) = tcp.set_nodelay(true) {
                    tracing::warn!(error = %e, "TCP_NODELAY not set");
                }
            });
            axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    let _ = stopped.wait_for(|s| *s).await;
                })
                .await
        });
        tracing::info!(id = app.opts.id, %addr, "serving");
        Ok(Node {
            app,
            addr,
            server,
            stop,
        })
    }

    /// Stops serving, shuts Raft down and closes the database (returns once
    /// it is closed, so that the directory can be opened again at once).
    pub async fn shutdown(self) -> Result<(), StartError> {
        let _ = self.stop.send(true);
        let stopped = self.app.raft.shutdown().await;
        // Requests still in flight fail fast once Raft is down.
        let mut server = self.server;
        if tokio::time::timeout(Duration::from_secs(5), &mut server)
            .await
            .is_err()
        {
            server.abort();
        }
        let store = self.app.store.watch();
        drop(self.app);
        // The log syncer thread and the last connections let go of it, and
        // whichever is last closes the database.
        let since = std::time::Instant::now();
        while store.strong_count() > 0 {
            if since.elapsed() > Duration::from_secs(10) {
                return Err(StartError(
                    "the database is still in use 10 s after shutdown".into(),
                ));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        stopped.map_err(|e| start_err("stopping Raft", e))
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Every route of a node.
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .merge(crate::network::raft::routes())
        .merge(crate::network::client::routes())
        .merge(crate::cluster::routes())
        .layer(DefaultBodyLimit::max(256 << 20))
}
