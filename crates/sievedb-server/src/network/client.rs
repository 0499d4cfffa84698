//! The client API, in etcd's manner (see the crate's README section
//! "Replication" and `docs/server.md`): `PUT|GET|DELETE /kv/{key}`,
//! `GET /kv?prefix=&limit=`, `POST /txn`, `GET /health`.
//!
//! Keys in paths and queries are percent-encoded bytes; values are raw
//! bodies; JSON carries keys and values in base64. Writes go through Raft
//! (`Raft::client_write`: 200 once committed by a majority and applied);
//! reads are linearizable (`Raft::ensure_linearizable`, a read index) unless
//! `consistency=stale`. On a follower, both are forwarded to the leader (or
//! answered 421 with where it is); whatever has not finished within the
//! request timeout is answered 503.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use openraft::error::{CheckIsLeaderError, ClientWriteError, ForwardToLeader, RaftError};
use openraft::BasicNode;
use serde::Deserialize;
use serde_json::json;
use tokio::time::Instant;

use super::{error, OCTET_STREAM};
use crate::app::App;
use crate::types::{Compare, NodeId, Op, Request, Txn};

/// The header a forwarded request carries, so it is forwarded once at most.
pub const FORWARDED: &str = "x-sievedb-forwarded";

/// The client routes of a node.
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/kv", get(scan))
        .route("/kv/{*key}", get(get_key).put(put_key).delete(delete_key))
        .route("/kv/", get(get_key).put(put_key).delete(delete_key))
        .route("/txn", post(txn))
        .route("/health", get(|| async { Json(json!({ "ok": true })) }))
}

/// A request as it came, to forward it to the leader unchanged.
pub struct Incoming {
    /// Its method.
    pub method: Method,
    /// Its path and query.
    pub uri: Uri,
    /// Its body.
    pub body: Bytes,
    /// Whether a node forwarded it here already.
    pub forwarded: bool,
    /// When it is answered 503.
    pub deadline: Instant,
}

impl Incoming {
    /// `method uri` with `body`, due `timeout` from now.
    pub fn new(
        method: Method,
        uri: Uri,
        headers: &HeaderMap,
        body: Bytes,
        timeout: Duration,
    ) -> Self {
        Incoming {
            method,
            uri,
            body,
            forwarded: headers.contains_key(FORWARDED),
            deadline: Instant::now() + timeout,
        }
    }
}

/// What one attempt at an operation on the leader came to.
pub enum Attempt<T> {
    /// Done.
    Done(T),
    /// This node is not the leader; the leader, if known.
    NotLeader(ForwardToLeader<NodeId, BasicNode>),
    /// Failed: the answer.
    Failed(Response),
    /// Failed in a way that may pass (a quorum that answered late): try
    /// again until the deadline, then the answer.
    Retry(Response),
}

/// 503: the request did not finish in time.
pub fn timed_out(app: &App) -> Response {
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "no answer within {} ms: no quorum, or the cluster is electing a leader",
            app.opts.request_timeout.as_millis()
        ),
    )
}

/// 421 with where the leader is.
pub fn not_leader(leader_id: Option<NodeId>, leader_addr: Option<&str>) -> Response {
    (
        StatusCode::MISDIRECTED_REQUEST,
        Json(json!({ "leader_id": leader_id, "leader_addr": leader_addr })),
    )
        .into_response()
}

/// Runs `op` until it is done on the leader: when this node is not the
/// leader, forwards the request there (or answers 421); while no leader is
/// known, waits for one. `Err` is the answer to send.
pub async fn on_leader<T, F, Fut>(app: &App, req: &Incoming, mut op: F) -> Result<T, Response>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Attempt<T>>,
{
    loop {
        let attempt = match tokio::time::timeout_at(req.deadline, op()).await {
            Ok(a) => a,
            Err(_) => return Err(timed_out(app)),
        };
        match attempt {
            Attempt::Done(t) => return Ok(t),
            Attempt::Failed(r) => return Err(r),
            Attempt::Retry(r) => {
                if Instant::now() + Duration::from_millis(20) >= req.deadline {
                    return Err(r);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Attempt::NotLeader(f) => match (f.leader_id, f.leader_node) {
                (Some(id), Some(node)) => {
                    if let Some(answer) = forward(app, req, id, &node.addr).await {
                        return Err(answer);
                    }
                    // The leader did not answer: it may have died; look again.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                _ => {
                    let left = req.deadline.saturating_duration_since(Instant::now());
                    let known = app
                        .raft
                        .wait(Some(left))
                        .metrics(|m| m.current_leader.is_some(), "a leader")
                        .await;
                    if known.is_err() {
                        return Err(timed_out(app));
                    }
                }
            },
        }
    }
}

/// Sends `req` to the leader `id` at `addr`: its answer, or `None` if it did
/// not answer (try again). Answers 421 when forwarding is off or the request
/// was forwarded here already.
async fn forward(app: &App, req: &Incoming, id: NodeId, addr: &str) -> Option<Response> {
    if !app.opts.forward || req.forwarded {
        return Some(not_leader(Some(id), Some(addr)));
    }
    let left = req.deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Some(timed_out(app));
    }
    let path = req.uri.path_and_query().map_or("/", |p| p.as_str());
    let sent = app
        .http
        .request(req.method.clone(), format!("http://{addr}{path}"))
        .header(FORWARDED, app.opts.id.to_string())
        .timeout(left)
        .body(req.body.clone())
        .send()
        .await;
    let resp = match sent {
        Ok(r) => r,
        Err(e) if e.is_timeout() => return Some(timed_out(app)),
        // Nothing reached the leader: safe to look for it again.
        Err(e) if e.is_connect() => {
            tracing::debug!(leader = id, addr, "forwarding failed: {e}");
            return None;
        }
        // The leader may have applied it: sending it again could apply a
        // write twice, so its outcome is unknown to the client.
        Err(e) => {
            return Some(error(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the leader {id} at {addr} failed mid-request (outcome unknown): {e}"),
            ))
        }
    };
    let status = resp.status();
    let kind = resp.headers().get(header::CONTENT_TYPE).cloned();
    let Ok(body) = resp.bytes().await else {
        return Some(error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the leader {id} at {addr} failed mid-answer (outcome unknown)"),
        ));
    };
    let mut answer = (status, body).into_response();
    if let Some(k) = kind {
        answer.headers_mut().insert(header::CONTENT_TYPE, k);
    }
    Some(answer)
}

/// Commits `request` through Raft: whether its compares held.
pub async fn write(app: &App, req: &Incoming, request: Request) -> Result<bool, Response> {
    on_leader(app, req, || {
        let r = request.clone();
        async move {
            match app.writes.write(r).await {
                Ok(succeeded) => Attempt::Done(succeeded),
                Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f))) => {
                    Attempt::NotLeader(f)
                }
                Err(e) => Attempt::Failed(error(StatusCode::SERVICE_UNAVAILABLE, e)),
            }
        }
    })
    .await
}

/// Waits until this node's state machine may serve a linearizable read (a
/// read index confirmed by a quorum, and applied: [`crate::reads`]), or
/// forwards the request.
async fn linearizable(app: &App, req: &Incoming) -> Result<(), Response> {
    on_leader(app, req, || async move {
        match app.reads.linearize().await {
            Ok(()) => Attempt::Done(()),
            Err(RaftError::APIError(CheckIsLeaderError::ForwardToLeader(f))) => {
                Attempt::NotLeader(f)
            }
            // The followers' answers to the read-index round came late (a
            // loaded machine) or a follower is down: a later round may have
            // its quorum; a read is safe to retry.
            Err(e @ RaftError::APIError(CheckIsLeaderError::QuorumNotEnough(_))) => {
                Attempt::Retry(error(StatusCode::SERVICE_UNAVAILABLE, e))
            }
            Err(e) => Attempt::Failed(error(StatusCode::SERVICE_UNAVAILABLE, e)),
        }
    })
    .await
}

/// The query's parameters, percent-decoded to bytes (`+` is a plus).
fn query_params(uri: &Uri) -> Vec<(String, Vec<u8>)> {
    uri.query()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let k = percent_encoding::percent_decode_str(k)
                .decode_utf8_lossy()
                .into_owned();
            (k, percent_encoding::percent_decode_str(v).collect())
        })
        .collect()
}

/// Whether the query asks for `consistency=stale`; 400 for another value.
fn stale(params: &[(String, Vec<u8>)]) -> Result<bool, Response> {
    match params.iter().find(|(k, _)| k == "consistency") {
        None => Ok(false),
        Some((_, v)) if v == b"stale" => Ok(true),
        Some((_, v)) if v == b"linearizable" => Ok(false),
        Some((_, v)) => Err(error(
            StatusCode::BAD_REQUEST,
            format!(
                "consistency={}: expected `linearizable` (the default) or `stale`",
                String::from_utf8_lossy(v)
            ),
        )),
    }
}

/// Waits until this node may answer a read: at once for
/// `consistency=stale`, else after a read-index round ([`linearizable`]).
async fn read_ready(
    app: &App,
    params: &[(String, Vec<u8>)],
    method: Method,
    uri: Uri,
    headers: &HeaderMap,
) -> Result<(), Response> {
    if stale(params)? {
        return Ok(());
    }
    let req = Incoming::new(method, uri, headers, Bytes::new(), app.opts.request_timeout);
    linearizable(app, &req).await
}

/// The key of a `/kv/{key}` path, percent-decoded.
fn path_key(uri: &Uri) -> Result<Vec<u8>, Response> {
    let raw = uri.path().strip_prefix("/kv/").unwrap_or("");
    let key: Vec<u8> = percent_encoding::percent_decode_str(raw).collect();
    if key.is_empty() {
        return Err(error(StatusCode::BAD_REQUEST, "empty key: use /kv/{key}"));
    }
    Ok(key)
}

fn internal(e: impl std::fmt::Display) -> Response {
    error(StatusCode::INTERNAL_SERVER_ERROR, e)
}

async fn get_key(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let key = match path_key(&uri) {
        Ok(k) => k,
        Err(r) => return r,
    };
    if let Err(r) = read_ready(&app, &query_params(&uri), method, uri, &headers).await {
        return r;
    }
    match app.store.sm.get(&key) {
        Ok(Some(v)) => ([(header::CONTENT_TYPE, OCTET_STREAM)], v).into_response(),
        Ok(None) => error(StatusCode::NOT_FOUND, "key not found"),
        Err(e) => internal(e),
    }
}

async fn put_key(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let key = match path_key(&uri) {
        Ok(k) => k,
        Err(r) => return r,
    };
    let value = body.to_vec();
    let req = Incoming::new(method, uri, &headers, body, app.opts.request_timeout);
    match write(&app, &req, Request::Put { key, value }).await {
        Ok(_) => Json(json!({})).into_response(),
        Err(r) => r,
    }
}

async fn delete_key(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let key = match path_key(&uri) {
        Ok(k) => k,
        Err(r) => return r,
    };
    let req = Incoming::new(
        method,
        uri,
        &headers,
        Bytes::new(),
        app.opts.request_timeout,
    );
    match write(&app, &req, Request::Delete { key }).await {
        Ok(_) => Json(json!({})).into_response(),
        Err(r) => r,
    }
}

async fn scan(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let params = query_params(&uri);
    let prefix = params
        .iter()
        .find(|(k, _)| k == "prefix")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let limit = match params.iter().find(|(k, _)| k == "limit") {
        None => usize::MAX,
        Some((_, v)) => match std::str::from_utf8(v)
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
        {
            Some(0) | None => {
                return error(StatusCode::BAD_REQUEST, "limit must be a positive integer")
            }
            Some(n) => n,
        },
    };
    if let Err(r) = read_ready(&app, &params, method, uri, &headers).await {
        return r;
    }
    let iter = match app.store.sm.prefix(&prefix) {
        Ok(i) => i,
        Err(e) => return internal(e),
    };
    let mut kvs = Vec::new();
    for kv in iter.take(limit) {
        match kv {
            Ok((k, v)) => kvs.push(json!({ "key": B64.encode(k), "value": B64.encode(v) })),
            Err(e) => return internal(e),
        }
    }
    Json(json!({ "kvs": kvs })).into_response()
}

/// `POST /txn`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TxnBody {
    #[serde(default)]
    compare: Vec<CompareBody>,
    #[serde(default)]
    success: Vec<OpBody>,
    #[serde(default)]
    failure: Vec<OpBody>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompareBody {
    key: String,
    value: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum OpBody {
    Put { key: String, value: String },
    Delete { key: String },
}

fn b64(what: &str, s: &str) -> Result<Vec<u8>, String> {
    B64.decode(s)
        .map_err(|e| format!("{what} is not base64: {e}"))
}

fn parse_txn(body: &[u8]) -> Result<Txn, String> {
    let t: TxnBody = serde_json::from_slice(body).map_err(|e| format!("bad txn body: {e}"))?;
    let op = |o: OpBody| -> Result<Op, String> {
        Ok(match o {
            OpBody::Put { key, value } => Op::Put {
                key: b64("a key", &key)?,
                value: b64("a value", &value)?,
            },
            OpBody::Delete { key } => Op::Delete {
                key: b64("a key", &key)?,
            },
        })
    };
    Ok(Txn {
        compare: t
            .compare
            .into_iter()
            .map(|c| {
                Ok(Compare {
                    key: b64("a key", &c.key)?,
                    value: c.value.map(|v| b64("a value", &v)).transpose()?,
                })
            })
            .collect::<Result<_, String>>()?,
        success: t.success.into_iter().map(op).collect::<Result<_, _>>()?,
        failure: t.failure.into_iter().map(op).collect::<Result<_, _>>()?,
    })
}

async fn txn(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let t = match parse_txn(&body) {
        Ok(t) => t,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let req = Incoming::new(method, uri, &headers, body, app.opts.request_timeout);
    match write(&app, &req, Request::Txn(t)).await {
        Ok(succeeded) => Json(json!({ "succeeded": succeeded })).into_response(),
        Err(r) => r,
    }
}
