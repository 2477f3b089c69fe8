//! refault-sim: the simulated machine. It owns the clock, the CPUs, the block devices and the
//! kernel threads, feeds each task's event stream to the model (`refault-mm`), and collects
//! counters, time series and per-task throughput and latency.

pub mod block;
pub mod config;
pub mod hist;
pub mod machine;
mod ready;
pub mod result;
pub mod sched;
pub mod wbt;

pub use machine::{run, RunOptions, SimError};
pub use result::SimResult;

/// Serialise a result as the result JSON. `wall_seconds` is the only field that differs
/// between two runs of the same scenario, seed and binary.
pub fn to_json(r: &SimResult) -> String {
    serde_json::to_string_pretty(r).expect("result serialises")
}
