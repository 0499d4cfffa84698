//! `sievedb-server`: a replicated key-value service. Every node keeps its Raft
//! log, its Raft metadata and its state machine in one sievedb database;
//! openraft replicates; an HTTP API in etcd's manner serves clients.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod types;
