//! Helpers of the process-level tests: a cluster of real `sievedb-server`
//! processes ([`process_cluster`]), a recorder of client operations
//! ([`history`]) and a linearizability checker for them
//! ([`linearizability`]).

#[allow(dead_code, reason = "not every test binary uses every helper")]
pub mod history;
#[allow(dead_code, reason = "not every test binary uses every helper")]
pub mod linearizability;
#[allow(dead_code, reason = "not every test binary uses every helper")]
pub mod process_cluster;
#[allow(dead_code, reason = "not every test binary uses every helper")]
pub mod rng;
