//! `refault`: the command line. Thin: each subcommand assembles the crates below it.
//!
//! The whole program is [`main_with_args`], a library function, so that it is linked twice:
//! into the `refault` binary (`src/main.rs`) and into the Python extension, whose `refault`
//! console script runs it in-process through [`dispatch`] (`refault._refault.cli_main`): one
//! install of the Python package gives the one `refault` command with every subcommand.
//! Every subcommand's arguments are parsed here, those the Python package carries out
//! (`sweep`, `plot`, `report`) included, so the whole command has one help and one
//! usage-error style (see `cmd/python.rs`).

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
    /// swap-readahead = S2, slab-boost = S3, kcompactd = S4).
    Reproduce(cmd::reproduce::Args),
    /// Compare result files mmtests-style: baseline, each change, percent change.
    Compare(cmd::compare::Args),
    /// Write results as mmtests logs (tests-sysstate, BENCH.json) for compare-mmtests.pl.
    MmtestsExport(cmd::mmtests::Args),
    /// Measure the simulator's own speed on a fixed set of workloads.
    Bench(cmd::bench::Args),
    /// Run a scenario over a grid of overrides, on local cores or Ray (Python package).
    Sweep(cmd::python::SweepArgs),
    /// Plot a result (memory, refaults, scanning, swap) or a sweep (Python package).
    Plot(cmd::python::PlotArgs),
    /// Write an HTML report comparing results: table and plots (Python package).
    Report(cmd::python::ReportArgs),
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

/// What [`dispatch`] did with a command line.
pub enum Dispatch {
    /// It ran (or printed help or a usage error): the exit status.
    Exit(u8),
    /// A subcommand of the Python package, parsed: `command` (`sweep`, `plot`, `report`)
    /// and its arguments as a JSON object, for the caller to carry out.
    Python {
        command: &'static str,
        args: serde_json::Value,
    },
}

/// Runs the command line on `args` (the program name first, as `std::env::args_os` gives
/// them) and returns the exit status: 0, 2 for an error (printed as one line, `refault:
/// error: ...`) or a usage error (printed by clap, as `--help` and `--version` are).
/// `sweep`, `plot` and `report` are parsed, then carried out by `python3 -m refault` with
/// the same arguments, which replaces this process.
pub fn main_with_args<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    match dispatch(args.clone()) {
        Dispatch::Exit(code) => code,
        Dispatch::Python { .. } => report(cmd::python::exec(args.get(1..).unwrap_or(&[]))),
    }
}

/// Parses `args` (the program name first) and runs the subcommand, except one of the
/// Python package's, whose parsed arguments are returned; help, `--version` and usage
/// errors are printed by clap (exit status 0, or 2 for an error).
pub fn dispatch<I, T>(args: I) -> Dispatch
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return Dispatch::Exit(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let python = |p: cmd::python::Parsed| Dispatch::Python {
        command: p.command,
        args: p.args,
    };
    let r = match cli.cmd {
        Command::Run(a) => cmd::run::main(a),
        Command::Reproduce(a) => cmd::reproduce::main(a),
        Command::Compare(a) => cmd::compare::main(a),
        Command::MmtestsExport(a) => cmd::mmtests::main(a),
        Command::Bench(a) => cmd::bench::main(a),
        Command::Sweep(a) => return python(a.parsed()),
        Command::Plot(a) => return python(a.parsed()),
        Command::Report(a) => return python(a.parsed()),
        Command::Twin(a) => cmd::twin::twin(a),
        Command::Fidelity(a) => cmd::twin::fidelity(a),
        Command::Trace(a) => cmd::trace::main(a),
        Command::Record(a) => cmd::trace::record(a),
        Command::TwinGuest(a) => cmd::twin::guest(a),
    };
    Dispatch::Exit(report(r))
}

/// The exit status of a subcommand's outcome, its error printed as one line.
fn report(r: anyhow::Result<()>) -> u8 {
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

/// The runs of each result document's recorded (resolved) scenario under the `n - 1` seeds
/// after its own, simulated on the host's cores with one progress line labelled `label`:
/// what `refault compare --seeds N` adds to each side, for `refault report --seeds N`.
/// `names` name the documents in errors.
pub fn seed_runs(
    docs: &[serde_json::Value],
    names: &[String],
    n: u64,
    label: &str,
) -> anyhow::Result<Vec<Vec<serde_json::Value>>> {
    cmd::compare::seed_runs(docs, names, n, label)
}
