//! `sievedb-server`: a replicated key-value service. Every node keeps its Raft
//! log, its Raft metadata and its state machine in one sievedb database
//! ([`store`]); openraft replicates; nodes and clients talk HTTP on one
//! address per node ([`network`], [`cluster`]); [`app`] puts a node together.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
// openraft's storage traits return its `StorageError` by value, and a
// handler's early answer is axum's `Response`: the helpers that produce them
// return them as they are (boxing would only add an allocation to the error
// path and a conversion at every trait boundary).
#![allow(clippy::result_large_err)]

pub mod app;
pub mod cluster;
pub mod network;
pub mod reads;
pub mod store;
pub mod types;
pub mod writes;
