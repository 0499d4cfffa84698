//! Raft's RPCs over HTTP: `POST /raft/append`, `POST /raft/vote` (bodies and
//! answers in postcard), and `POST /raft/snapshot` (see
//! [`super::snapshot`]). [`Network`] sends them; [`routes`] serves them.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use openraft::error::{
    Fatal, NetworkError, RPCError, RaftError, RemoteError, ReplicationClosed, StreamingError,
    Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse,
};
use openraft::{BasicNode, OptionalSend, Snapshot, Vote};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{error, OCTET_STREAM};
use crate::app::App;
use crate::store::{decode, encode};
use crate::types::{NodeId, TypeConfig};

/// Sends Raft RPCs to the other nodes (one keep-alive pool for all).
#[derive(Clone)]
pub struct Network {
    http: reqwest::Client,
}

impl Network {
    /// A network over `http`.
    pub fn new(http: reqwest::Client) -> Network {
        Network { http }
    }
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Peer;

    async fn new_client(&mut self, target: NodeId, node: &BasicNode) -> Peer {
        Peer {
            target,
            addr: node.addr.clone(),
            http: self.http.clone(),
        }
    }
}

/// The connection to one node.
pub struct Peer {
    target: NodeId,
    addr: String,
    http: reqwest::Client,
}

/// An RPC error of a failed HTTP exchange: unreachable when nothing was
/// sent, a network error otherwise.
fn http_error<E: std::error::Error>(e: &reqwest::Error) -> RPCError<NodeId, BasicNode, E> {
    if e.is_connect() {
        RPCError::Unreachable(Unreachable::new(e))
    } else {
        RPCError::Network(NetworkError::new(e))
    }
}

impl Peer {
    /// POSTs `req` to `path` and decodes the node's `Result`.
    async fn call<Req, Resp>(
        &self,
        path: &str,
        req: &Req,
        option: &RPCOption,
    ) -> Result<Resp, RPCError<NodeId, BasicNode, RaftError<NodeId>>>
    where
        Req: Serialize,
        Resp: DeserializeOwned,
    {
        let body = encode(req).map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        let resp = self
            .http
            .post(format!("http://{}{path}", self.addr))
            .header(header::CONTENT_TYPE, OCTET_STREAM)
            .timeout(option.hard_ttl())
            .body(body)
            .send()
            .await
            .map_err(|e| http_error(&e))?;
        if !resp.status().is_success() {
            let msg = format!("{} answered {}", self.addr, resp.status());
            return Err(RPCError::Network(NetworkError::new(
                &std::io::Error::other(msg),
            )));
        }
        let bytes = resp.bytes().await.map_err(|e| http_error(&e))?;
        let answer: Result<Resp, RaftError<NodeId>> =
            decode(&bytes).map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        answer.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }
}

impl RaftNetwork<TypeConfig> for Peer {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        self.call("/raft/append", &rpc, &option).await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        self.call("/raft/vote", &rpc, &option).await
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
