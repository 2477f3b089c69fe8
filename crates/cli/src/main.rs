//! `refault`: the command line. Thin: each subcommand assembles the crates below it.

mod cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

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
    /// Reproduce a source document's benchmark side by side (lru-balance = seed S0, mglru = S1).
    Reproduce(cmd::reproduce::Args),
    /// Compare result files mmtests-style: baseline, each change, percent change.
    Compare(cmd::compare::Args),
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
    /// Run the bundled fidelity suite (fidelity/*.toml) through the twin: one table.
    Fidelity(cmd::twin::FidelityArgs),
    /// The VM twin's executor inside the guest.
    #[command(hide = true)]
    TwinGuest(cmd::twin::GuestArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Command::Run(a) => cmd::run::main(a),
        Command::Reproduce(a) => cmd::reproduce::main(a),
        Command::Compare(a) => cmd::compare::main(a),
        Command::Bench(a) => cmd::bench::main(a),
        Command::Sweep(a) => cmd::python::main("sweep", a),
        Command::Plot(a) => cmd::python::main("plot", a),
        Command::Report(a) => cmd::python::main("report", a),
        Command::Twin(a) => cmd::twin::twin(a),
        Command::Fidelity(a) => cmd::twin::fidelity(a),
        Command::TwinGuest(a) => cmd::twin::guest(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
            }
            eprintln!("refault: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
