//! The one integration-test binary (link time matters on a 2-core CI machine).
//!
//! Where tests go:
//! - `behaviour/<mechanism>.rs`: small scenarios whose outcome the kernel's design dictates,
//!   named as a sentence; qualitative assertions with margins.
//! - `golden.rs`: exact counters for fixed seeds (`REFAULT_BLESS=1` rewrites them).
//! - `determinism.rs`: same scenario + seed + binary = identical JSON.
//! - `errors.rs`: bad input gives one line naming the place, exit code 2, no output file.
//! - `cli.rs`: the commands' output contracts (result JSON keys, compare, reproduce).
//! - `robust.rs`: outputs that never clobber, no hangs, sizes, checks that only observe.
//! - `mmtests.rs`: the mmtests log export, parsed as mmtests parses it.
//! - `twin.rs`: the live-kernel twin command (root only; skipped with a reason otherwise).

mod behaviour;
mod cli;
mod determinism;
mod errors;
mod golden;
mod mmtests;
mod progress;
mod robust;
mod traces;
mod twin;
mod util;
