//! Raft's RPCs between nodes: AppendEntries and Vote as frames on one
//! persistent upgraded connection per peer (`GET /raft/stream`, see
//! [`super::stream`]), snapshots as `POST /raft/snapshot` (see
//! [`super::snapshot`]). [`Network`] sends them; [`routes`] serves them.
//!
//! The older `POST /raft/append` and `POST /raft/vote` (postcard bodies and
//! answers) are still served, for senders of earlier versions during a
//! rolling upgrade; this version no longer sends them.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use openraft::error::{
    Fatal, NetworkError, RPCError, RaftError, RemoteError, ReplicationClosed, StreamingError,
    Unreachable,
};
use openraft::network::{Backoff, RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse,
};
use openraft::{BasicNode, OptionalSend, Snapshot, Vote};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::time::{timeout, timeout_at, Instant};

use super::stream::{self, encode_frame, Conn, Rpc};
use super::{error, OCTET_STREAM};
use crate::app::App;
use crate::store::{decode, encode};
use crate::types::{NodeId, TypeConfig};

/// How long connecting (and the upgrade handshake) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Idle connections kept per node for the next [`Peer`].
const MAX_IDLE: usize = 8;

/// Sends Raft RPCs to the other nodes.
#[derive(Clone)]
pub struct Network {
    http: reqwest::Client,
    idle: Arc<Idle>,
    retry: Duration,
}

impl Network {
    /// A network that streams snapshots over `http` and tries a node it
    /// could not reach again after `retry` (the heartbeat interval).
    pub fn new(http: reqwest::Client, retry: Duration) -> Network {
        Network {
            http,
            idle: Arc::default(),
            retry,
        }
    }
}

/// Upgraded connections that no [`Peer`] holds, by address. A replication
/// stream's peer keeps its connection as long as it lives, but openraft
/// makes a new peer for every election's votes and every read-index round:
/// those take a connection from here and give it back when dropped.
#[derive(Default)]
struct Idle(parking_lot::Mutex<HashMap<String, Vec<Conn>>>);

impl Idle {
    fn take(&self, addr: &str) -> Option<Conn> {
        self.0.lock().get_mut(addr).and_then(Vec::pop)
    }

    fn put(&self, addr: &str, conn: Conn) {
        let mut idle = self.0.lock();
        let conns = idle.entry(addr.to_owned()).or_default();
        if conns.len() < MAX_IDLE {
            conns.push(conn);
        }
    }
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Peer;

    async fn new_client(&mut self, target: NodeId, node: &BasicNode) -> Peer {
        Peer {
            target,
            addr: node.addr.clone(),
            http: self.http.clone(),
            idle: self.idle.clone(),
            conn: None,
            retry: self.retry,
        }
    }
}

/// The connection to one node: opened on the first RPC, kept between RPCs,
/// dropped on any error or timeout (and opened again by the next RPC).
pub struct Peer {
    target: NodeId,
    addr: String,
    http: reqwest::Client,
    idle: Arc<Idle>,
    conn: Option<Conn>,
    /// The pause after an RPC found the node unreachable ([`backoff`]).
    ///
    /// [`backoff`]: RaftNetwork::backoff
    retry: Duration,
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.idle.put(&self.addr, conn);
        }
    }
}

type RpcError = RPCError<NodeId, BasicNode, RaftError<NodeId>>;

fn network_error(e: &io::Error) -> RpcError {
    RPCError::Network(NetworkError::new(e))
}

fn timed_out(addr: &str, what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, format!("{what} {addr} timed out"))
}

impl Peer {
    /// Sends `rpc` and decodes the node's `Result`.
    ///
    /// The connection is out of `self.conn` while the exchange runs, so
    /// that a call openraft abandons (drops) mid-way takes its
    /// half-finished connection with it.
    async fn call<Resp: DeserializeOwned>(
        &mut self,
        rpc: &Rpc,
        option: &RPCOption,
    ) -> Result<Resp, RpcError> {
        let frame = encode_frame(rpc).map_err(|e| network_error(&e))?;
        let deadline = Instant::now() + option.hard_ttl();
        let kept = self.conn.take().or_else(|| self.idle.take(&self.addr));
        let (conn, bytes) = match kept {
            Some(mut conn) => match timeout_at(deadline, conn.exchange(&frame)).await {
                Ok(Ok(bytes)) => (conn, bytes),
                // A kept connection that failed was most likely closed by
                // the node (it restarted, or shut down idle connections):
                // once more on a new connection. Raft's RPCs may arrive
                // twice.
                Ok(Err(e)) => {
                    tracing::debug!(target = self.target, error = %e, "raft connection lost");
                    self.fresh_exchange(&frame, deadline).await?
                }
                Err(_) => return Err(network_error(&timed_out(&self.addr, "an RPC to"))),
            },
            None => self.fresh_exchange(&frame, deadline).await?,
        };
        let answer: Result<Resp, RaftError<NodeId>> =
            decode(&bytes).map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        self.conn = Some(conn);
        answer.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }

    /// Connects (unreachable if that fails: nothing was sent), then sends
    /// `frame` and reads the answer (a network error if that fails).
    async fn fresh_exchange(
        &self,
        frame: &[u8],
        deadline: Instant,
    ) -> Result<(Conn, Vec<u8>), RpcError> {
        let connect = timeout(CONNECT_TIMEOUT, Conn::connect(&self.addr));
        let mut conn = match timeout_at(deadline, connect).await {
            Ok(Ok(Ok(conn))) => conn,
            Ok(Ok(Err(e))) => return Err(RPCError::Unreachable(Unreachable::new(&e))),
            Ok(Err(_)) | Err(_) => {
                let e = timed_out(&self.addr, "connecting to");
                return Err(RPCError::Unreachable(Unreachable::new(&e)));
            }
        };
        match timeout_at(deadline, conn.exchange(frame)).await {
            Ok(Ok(bytes)) => Ok((conn, bytes)),
            Ok(Err(e)) => Err(network_error(&e)),
            Err(_) => Err(network_error(&timed_out(&self.addr, "an RPC to"))),
        }
    }
}

impl RaftNetwork<TypeConfig> for Peer {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        self.call(&Rpc::Append(rpc), &option).await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        self.call(&Rpc::Vote(rpc), &option).await
    }

    /// After an unreachable node, the leader's replication to it pauses
    /// for one heartbeat interval, not openraft's default 500 ms: a node
    /// that restarts hears from the leader within a heartbeat. With 500 ms
    /// (as long as the shortest election timeout, or longer) a restarted
    /// node could time out first and campaign; with the log it missed it
    /// cannot win, but its higher term deposes the leader, and the cluster
    /// stops serving while it elects one.
    fn backoff(&self) -> Backoff {
        Backoff::new(std::iter::repeat(self.retry))
    }

    async fn full_snapshot(
        &mut self,
        vote: Vote<NodeId>,
        snapshot: Snapshot<TypeConfig>,
        cancel: impl std::future::Future<Output = ReplicationClosed> + OptionalSend + 'static,
        _option: RPCOption,
    ) -> Result<SnapshotResponse<NodeId>, StreamingError<TypeConfig, Fatal<NodeId>>> {
        let send = super::snapshot::send(&self.http, &self.addr, self.target, vote, snapshot);
        tokio::select! {
            r = send => r,
            closed = cancel => Err(StreamingError::Closed(closed)),
        }
    }
}

/// The Raft RPC routes of a node.
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(stream::PATH, get(stream::upgrade))
        .route("/raft/append", post(append))
        .route("/raft/vote", post(vote))
        .route("/raft/snapshot", post(super::snapshot::receive))
}

/// An RPC's answer: the node's `Result`, in postcard.
fn answer<T: Serialize>(r: &T) -> Response {
    match encode(r) {
        Ok(bytes) => ([(header::CONTENT_TYPE, OCTET_STREAM)], bytes).into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

async fn append(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let req: AppendEntriesRequest<TypeConfig> = match decode(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("bad append request: {e}")),
    };
    answer(&app.raft.append_entries(req).await)
}

async fn vote(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let req: VoteRequest<NodeId> = match decode(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("bad vote request: {e}")),
    };
    answer(&app.raft.vote(req).await)
}
