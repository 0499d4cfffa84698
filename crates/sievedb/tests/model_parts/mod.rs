//! The model test's parts (`tests/model.rs`): generators of keys, values,
//! bounds and operands, and the checks of each read path against the model.

pub mod checks;
pub mod gen;
