//! refault-workload: the event language, seeded generators and benchmark emulations.

pub mod event;
pub use event::{Event, EventSource, Hint, ObjId, Op};
