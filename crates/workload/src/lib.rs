//! refault-workload: the event language, seeded generators and benchmark emulations.
//!
//! | module | what |
//! |---|---|
//! | [`event`] | `Op`, `Event`, `Hint`: what a task asks of the kernel; trait [`EventSource`] |
//! | [`source`] | [`task_sources`]: one [`TaskSource`] per task instance of a `Scenario`, seeds |
//! | [`gen`] | [`PhaseSource`]: `Workload::Phases` (sequential, random, Zipf, hot/cold) |
//! | [`emul`] | pgbench, memcached and file-copy emulations |
//! | [`trace`] | [`TraceSource`]: replay of a recorded trace (refault-trace) |
//! | [`rng`] | xoshiro256** seeded through SplitMix64, stable forever |
//! | [`zipf`] | rejection-inversion Zipf sampling, the `Scatter` permutation |
//!
//! Every generator is deterministic: the same scenario and seed give the same stream on
//! every machine. `next_op` never allocates or hashes through std's maps; the state of a
//! generator is O(phases) or, for pgbench, O(shared buffer pages).

pub mod emul;
pub mod error;
pub mod event;
pub mod gen;
pub mod rng;
mod seq;
pub mod source;
#[cfg(test)]
mod testutil;
pub mod trace;
pub mod zipf;

pub use emul::copy::CopySource;
pub use emul::memcached::MemcachedSource;
pub use emul::pgbench::PgbenchSource;
pub use error::{SourceError, SourceErrorKind};
pub use event::{Event, EventSource, Hint, ObjId, Op};
pub use gen::PhaseSource;
pub use source::{
    instance_seed, object_scatter_key, task_sources, try_task_sources, Source, TaskSource,
};
pub use trace::TraceSource;
