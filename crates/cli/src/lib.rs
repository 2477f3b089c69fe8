//! `refault`: the command line. Thin: each subcommand assembles the crates below it.
//!
//! The whole program is [`main_with_args`], a library function, so that it is linked twice:
//! into the `refault` binary (`src/main.rs`) and into the Python extension, whose `refault`
//! console script runs it in-process (`refault._refault.cli_main`): one install of the
//! Python package gives the one `refault` command with every subcommand.

mod cmd;

use clap::{Parser, Subcommand};
use std::ffi::OsString;

#[derive(Parser)]
#[command(
    name = "refault",
    version,
    about = "A deterministic simulator of Linux memory reclaim"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario and print a summary, or write the result JSON with --out.
    Run(cmd::run::Args),
    /// Reproduce a source document's benchmark side by side (lru-balance = seed S0, mglru = S1,
    /// swap-readahead = S2, kcompactd = S4).
    Reproduce(cmd::reproduce::Args),
    /// Compare result files mmtests-style: baseline, each change, percent change.
    Compare(cmd::compare::Args),
    /// Write results as mmtests logs (tests-sysstate, BENCH.json) for compare-mmtests.pl.
    MmtestsExport(cmd::mmtests::Args),
    /// Measure the simulator's own speed on a fixed set of workloads.
    Bench(cmd::bench::Args),
    /// Run a scenario over a grid of overrides, on local cores or Ray (Python package).
    Sweep(cmd::python::Args),
    /// Plot a result (memory, refaults, scanning, swap) or a sweep (Python package).
    Plot(cmd::python::Args),
    /// Write an HTML report comparing results: table and plots (Python package).
    Report(cmd::python::Args),
    /// Run a scenario for real in a memory cgroup and compare the kernel's counters with the
    /// simulation's (root; memory cgroups v1 or v2).
    Twin(cmd::twin::TwinArgs),
    /// Recorded traces: convert between formats, summarise, record a scenario's events
    /// (docs/traces.md).
    Trace(cmd::trace::TraceArgs),
    /// Record a program's memory accesses under valgrind's lackey tool as a refault trace:
    /// `refault record -o app.rft -- ./app ARGS`.
    Record(cmd::trace::RecordArgs),
    /// Run the bundled fidelity suite (fidelity/*.toml) through the twin: one table.
    Fidelity(cmd::twin::FidelityArgs),
    /// The VM twin's executor inside the guest.
    #[command(hide = true)]
    TwinGuest(cmd::twin::GuestArgs),
}

/// Runs the command line on `args` (the program name first, as `std::env::args_os` gives
/// them) and returns the exit status: 0, 2 for an error (printed as one line, `refault:
/// error: ...`) or a usage error (printed by clap, as `--help` and `--version` are).
pub fn main_with_args<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let r = match cli.cmd {
        Command::Run(a) => cmd::run::main(a),
        Command::Reproduce(a) => cmd::reproduce::main(a),
        Command::Compare(a) => cmd::compare::main(a),
        Command::MmtestsExport(a) => cmd::mmtests::main(a),
        Command::Bench(a) => cmd::bench::main(a),
        Command::Sweep(a) => cmd::python::main("sweep", a),
        Command::Plot(a) => cmd::python::main("plot", a),
        Command::Report(a) => cmd::python::main("report", a),
        Command::Twin(a) => cmd::twin::twin(a),
        Command::Fidelity(a) => cmd::twin::fidelity(a),
        Command::Trace(a) => cmd::trace::main(a),
        Command::Record(a) => cmd::trace::record(a),
        Command::TwinGuest(a) => cmd::twin::guest(a),
    };
    match r {
        Ok(()) => 0,
        Err(e) => {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return 0;
                }
            }
            eprintln!("refault: error: {e:#}");
            2
        }
    }
}
