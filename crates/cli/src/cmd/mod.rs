/// `print!` that reports a write error (a closed pipe) instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}
/// `println!` that reports a write error (a closed pipe) instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

pub mod bench;
pub mod compare;
pub mod mmtests;
pub mod progress;
pub mod python;
pub mod reproduce;
pub mod run;
pub mod slab_boost;
pub mod trace;
pub mod twin;

use anyhow::{Context, Result};
use std::path::Path;

/// Write `bytes` to `path` atomically (never a half-written result); `-` is standard
/// output, and devices, FIFOs and symlinks are written through (see refault_report's
/// `write_atomic`).
pub fn write_out(path: &Path, bytes: &[u8]) -> Result<()> {
    refault_report::write_atomic(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// Check an `--out` path before any work: a missing or unwritable directory is found now,
/// not after the simulation.
pub fn check_out(path: Option<&Path>) -> Result<()> {
    match path {
        Some(p) => {
            refault_report::check_writable(p).with_context(|| format!("--out {}", p.display()))
        }
        None => Ok(()),
    }
}

/// Run a resolved scenario with optional progress and checks.
pub fn simulate(
    scn: &refault_scenario::Scenario,
    check_every: u64,
    label: &str,
) -> Result<refault_sim::SimResult> {
    let progress = progress::Progress::new(label, 1);
    let mut f = |x: f64| progress.set(0, x);
    let opts = refault_sim::RunOptions {
        check_every,
        progress: Some(&mut f),
        trace: None,
    };
    refault_sim::run(scn, opts).with_context(|| format!("simulating {}", scn.name))
}
