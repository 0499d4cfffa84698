//! HTTP on one address per node: Raft's RPCs between nodes ([`raft`]:
//! AppendEntries and Vote as frames on upgraded connections in [`stream`],
//! snapshots streamed file by file in [`snapshot`]) and the client API
//! ([`client`]).

pub mod client;
pub mod raft;
pub mod snapshot;
pub mod stream;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// The `Content-Type` of raw values and of the Raft RPCs' postcard bodies.
pub const OCTET_STREAM: &str = "application/octet-stream";

/// A JSON error answer `{"error": msg}` with `status`.
pub fn error(status: StatusCode, msg: impl std::fmt::Display) -> Response {
    (
        status,
        axum::Json(serde_json::json!({ "error": msg.to_string() })),
    )
        .into_response()
}
