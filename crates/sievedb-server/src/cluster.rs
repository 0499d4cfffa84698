//! Cluster administration over HTTP: `POST /cluster/init`,
//! `POST /cluster/learner`, `POST /cluster/membership`,
//! `GET /cluster/status`. Changes go to the leader (forwarded as client
//! writes are) and wait up to the admin timeout.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use openraft::error::{ClientWriteError, InitializeError, RaftError};
use openraft::BasicNode;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::json;

use crate::app::App;
use crate::network::client::{on_leader, Attempt, Incoming};
use crate::network::error;
use crate::types::NodeId;

/// The administration routes of a node.
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/cluster/init", post(init))
        .route("/cluster/learner", post(add_learner))
        .route("/cluster/membership", post(change_membership))
        .route("/cluster/status", get(status))
}

fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, Response> {
    serde_json::from_slice(body)
        .map_err(|e| error(StatusCode::BAD_REQUEST, format!("bad body: {e}")))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InitBody {
    members: BTreeMap<String, String>,
}

async fn init(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let b: InitBody = match parse(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let mut nodes = BTreeMap::new();
    for (id, addr) in b.members {
        let Ok(id) = id.parse::<NodeId>() else {
            return error(
                StatusCode::BAD_REQUEST,
                format!("member id {id:?} is not an integer"),
            );
        };
        nodes.insert(id, BasicNode { addr });
    }
    if nodes.is_empty() {
        return error(StatusCode::BAD_REQUEST, "members is empty");
    }
    let init = tokio::time::timeout(app.opts.admin_timeout, app.raft.initialize(nodes)).await;
    match init {
        Err(_) => error(StatusCode::SERVICE_UNAVAILABLE, "initialization timed out"),
        Ok(Ok(())) => Json(json!({})).into_response(),
        Ok(Err(RaftError::APIError(e @ InitializeError::NotAllowed(_)))) => {
            error(StatusCode::CONFLICT, format!("already initialized: {e}"))
        }
        Ok(Err(RaftError::APIError(e))) => error(StatusCode::BAD_REQUEST, e),
        Ok(Err(e)) => error(StatusCode::SERVICE_UNAVAILABLE, e),
    }
}

/// The answer to a membership change's error.
fn change_error(e: RaftError<NodeId, ClientWriteError<NodeId, BasicNode>>) -> Attempt<()> {
    match e {
        RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => Attempt::NotLeader(f),
        RaftError::APIError(ClientWriteError::ChangeMembershipError(e)) => {
            Attempt::Failed(error(StatusCode::CONFLICT, e))
        }
        RaftError::Fatal(f) => Attempt::Failed(error(StatusCode::SERVICE_UNAVAILABLE, f)),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LearnerBody {
    id: NodeId,
    addr: String,
}

async fn add_learner(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let b: LearnerBody = match parse(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let req = Incoming::new(method, uri, &headers, body, app.opts.admin_timeout);
    let done = on_leader(&app, &req, || {
        let node = BasicNode {
            addr: b.addr.clone(),
        };
        let raft = app.raft.clone();
        async move {
            match raft.add_learner(b.id, node, true).await {
                Ok(_) => Attempt::Done(()),
                Err(e) => change_error(e),
            }
        }
    })
    .await;
    match done {
        Ok(()) => Json(json!({})).into_response(),
        Err(r) => r,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MembershipBody {
    members: BTreeSet<NodeId>,
}

async fn change_membership(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let b: MembershipBody = match parse(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    if b.members.is_empty() {
        return error(StatusCode::BAD_REQUEST, "members is empty");
    }
    let req = Incoming::new(method, uri, &headers, body, app.opts.admin_timeout);
    let done = on_leader(&app, &req, || {
        let members = b.members.clone();
        let raft = app.raft.clone();
        async move {
            match raft.change_membership(members, false).await {
                Ok(_) => Attempt::Done(()),
                Err(e) => change_error(e),
            }
        }
    })
    .await;
    match done {
        Ok(()) => Json(json!({})).into_response(),
        Err(r) => r,
    }
}

async fn status(State(app): State<Arc<App>>) -> Response {
    let m = app.raft.metrics().borrow().clone();
    let membership = m.membership_config.membership();
    let voters: BTreeSet<NodeId> = membership.voter_ids().collect();
    let mut members = BTreeMap::new();
    let mut learners = BTreeMap::new();
    for (id, node) in membership.nodes() {
        let to = if voters.contains(id) {
            &mut members
        } else {
            &mut learners
        };
        to.insert(id.to_string(), node.addr.clone());
    }
    Json(json!({
        "id": m.id,
        "leader_id": m.current_leader,
        "term": m.current_term,
        // Whom this node's vote is for, and whether that node is known to
        // have won it (a vote for a candidate still campaigning is not).
        "voted_for": m.vote.leader_id().voted_for(),
        "vote_committed": m.vote.is_committed(),
        "state": format!("{:?}", m.state),
        "members": members,
        "learners": learners,
        "last_applied": m.last_applied.map_or(0, |l| l.index),
        "last_log_index": m.last_log_index.unwrap_or(0),
        "snapshot_index": m.snapshot.map(|l| l.index),
        "purged_index": m.purged.map(|l| l.index),
        // A storage failure (a full disk, an I/O error) stops a node's Raft.
        "error": m.running_state.as_ref().err().map(ToString::to_string),
    }))
    .into_response()
}
