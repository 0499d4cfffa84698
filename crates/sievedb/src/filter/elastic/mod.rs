//! Dividing filter memory among files: which prefix of each file's filter
//! units is resident, under a byte budget.
//!
//! * [`monkey`]: Monkey's closed form (memory across runs by their size);
//! * [`inherit`](mod@inherit): hotness handed from compaction inputs to outputs;
//! * [`hotness`]: the `HOTNESS` side file that keeps counts across restarts.

mod greedy;
pub mod hotness;
pub mod inherit;
pub mod monkey;

pub use hotness::HotnessSnapshot;
pub use inherit::{inherit, InheritInput, InheritOutput};
