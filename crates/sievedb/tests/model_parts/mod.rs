//! The model test's parts (`tests/model.rs`): its configurations,
//! generators of keys, values, bounds and operands, the checks of each read
//! path against the model, the named keyspaces with their operations, the
//! transactions, and the run's totals.

pub mod checks;
pub mod config;
mod filters;
pub mod gen;
pub mod keyspaces;
pub mod ks_ops;
pub mod totals;
pub mod txns;
