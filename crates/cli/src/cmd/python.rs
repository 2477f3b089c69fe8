//! `refault sweep|plot|report ...`: the subcommands the Python package carries out.
//!
//! Sweeps (local threads or Ray), plots (matplotlib) and HTML reports live in the Python layer
//! (`python/refault`), which drives the same core through the extension module. Their
//! arguments are parsed here, by the same clap command line as every other subcommand, so
//! `refault --help` lists them, `refault sweep --help` reads like `refault run --help`, and a
//! usage error is clap's (`error: ...`, the usage line, exit status 2) wherever the command
//! was started. The parsed arguments go to Python as a JSON object ([`Parsed::args`]):
//!
//! - from the Python package's `refault` console script (or `python -m refault`), the
//!   extension's `cli_main` returns them to the Python caller, which runs the subcommand;
//! - from the `refault` binary, [`exec`] replaces this process with `python3 -m refault
//!   <same arguments>`, which parses them again (the same parser, in the extension) and
//!   runs the subcommand: Ctrl-C and the exit status reach the Python program directly.
//!
//! The interpreter is `$REFAULT_PYTHON` if set, else `python3`. When it cannot be started, or
//! the `refault` package is not importable by it, the error says how to install it.

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

/// A Python subcommand's parsed arguments.
pub struct Parsed {
    /// `sweep`, `plot` or `report`.
    pub command: &'static str,
    /// The arguments by their long names (`-` as `_`), paths as strings.
    pub args: Value,
}

/// Where a sweep's runs go.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Engine {
    Local,
    Ray,
}

#[derive(clap::Args)]
pub struct SweepArgs {
    /// The scenario file (TOML), run at every combination of the --grid values.
    pub scenario: PathBuf,
    /// An override key and its values (repeatable): vm.swappiness=0,60,200.
    #[arg(long, required = true, value_name = "KEY=V1,V2,...", value_parser = grid_spec)]
    pub grid: Vec<String>,
    /// Where the runs go: threads on this machine's cores, or Ray tasks (the `ray` extra of
    /// the Python package).
    #[arg(long, value_enum, default_value = "local")]
    pub engine: Engine,
    /// Ray cluster address (ray://HOST:10001, auto); default: a local Ray instance.
    #[arg(long)]
    pub address: Option<String>,
    /// Directory for each point's result JSON and sweep.csv (a rerun skips the points
    /// already there).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seed of every point (default: the scenario's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Parallel runs (default: every core).
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// Check the model's invariants every N events.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub check: u64,
    /// Comma-separated columns to print (default: the overrides, task ops/s and the main
    /// reclaim counters).
    #[arg(long, value_name = "COLUMNS")]
    pub columns: Option<String>,
    /// Show a progress bar (default: when standard error is a terminal).
    #[arg(long, overrides_with = "no_progress")]
    pub progress: bool,
    /// Show no progress bar.
    #[arg(long)]
    pub no_progress: bool,
}

/// Which figure of a result `refault plot` draws.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum PlotKind {
    Overview,
    Memory,
    Rates,
    Swap,
    Dirty,
    Slab,
    Tasks,
    Balance,
    Cgroups,
    Reclaimers,
    Generations,
}

#[derive(clap::Args)]
pub struct PlotArgs {
    /// A result JSON, a sweep's directory or its sweep.csv.
    pub input: PathBuf,
    /// More result JSON files: all of them overlaid on the same axes (A/B).
    pub more: Vec<PathBuf>,
    /// The image file (.png, .svg, .pdf).
    #[arg(short, long, value_name = "FILE")]
    pub out: PathBuf,
    /// For a result: which figure (the overview, memory composition, refault, scan and swap
    /// rates, ...).
    #[arg(long, value_enum, default_value = "overview")]
    pub kind: PlotKind,
    /// For a sweep: the parameter across.
    #[arg(long, value_name = "COLUMN")]
    pub x: Option<String>,
    /// For a sweep: the parameter down (a heatmap).
    #[arg(long, value_name = "COLUMN")]
    pub y: Option<String>,
    /// For a sweep: one line per value of this parameter.
    #[arg(long, value_name = "COLUMN")]
    pub hue: Option<String>,
    /// For a sweep: the column drawn.
    #[arg(long, value_name = "COLUMN", default_value = "workingset_refault_file")]
    pub value: String,
}

#[derive(clap::Args)]
pub struct ReportArgs {
    /// Result files; the first is the baseline.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE")]
    pub out: PathBuf,
    /// The label of each result, in order (repeatable; default: the file names).
    #[arg(long, value_name = "LABEL")]
    pub name: Vec<String>,
    /// The page's title.
    #[arg(long)]
    pub title: Option<String>,
    /// The tables only, no plots.
    #[arg(long)]
    pub no_plots: bool,
    /// Run each result's scenario (as the file records it, resolved) under N seeds, as
    /// `refault compare --seeds N` does: the table gives each side's mean and standard
    /// deviation, and marks with `*` a change whose Welch t-test against the baseline has
    /// p < 0.05.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub seeds: u64,
    /// One row set per task instance (`reader/0`, `reader/1`) instead of one per task.
    #[arg(long)]
    pub per_instance: bool,
}

/// `--grid KEY=V1,V2,...`: checked for its shape here (a usage error); the values are read
/// by the Python layer as `--set` reads a value.
fn grid_spec(s: &str) -> Result<String, String> {
    let (key, values) = s
        .split_once('=')
        .ok_or_else(|| "expected KEY=V1,V2,... (e.g. vm.swappiness=0,60,200)".to_string())?;
    if key.trim().is_empty() || values.split(',').all(|v| v.trim().is_empty()) {
        return Err("expected KEY=V1,V2,... (e.g. vm.swappiness=0,60,200)".into());
    }
    Ok(s.to_string())
}

fn path(p: &std::path::Path) -> Value {
    Value::String(p.to_string_lossy().into_owned())
}

fn paths(v: &[PathBuf]) -> Value {
    Value::Array(v.iter().map(|p| path(p)).collect())
}

fn value_name(v: impl clap::ValueEnum) -> Value {
    let pv = v.to_possible_value().expect("no skipped values");
    Value::String(pv.get_name().to_string())
}

impl SweepArgs {
    pub fn parsed(self) -> Parsed {
        let progress = match (self.progress, self.no_progress) {
            (true, _) => json!(true),
            (_, true) => json!(false),
            _ => Value::Null,
        };
        Parsed {
            command: "sweep",
            args: json!({
                "scenario": path(&self.scenario),
                "grid": self.grid,
                "engine": value_name(self.engine),
                "address": self.address,
                "out": self.out.as_deref().map(path),
                "seed": self.seed,
                "jobs": self.jobs,
                "check": self.check,
                "columns": self.columns,
                "progress": progress,
            }),
        }
    }
}

impl PlotArgs {
    pub fn parsed(self) -> Parsed {
        Parsed {
            command: "plot",
            args: json!({
                "input": path(&self.input),
                "more": paths(&self.more),
                "out": path(&self.out),
                "kind": value_name(self.kind),
                "x": self.x,
                "y": self.y,
                "hue": self.hue,
                "value": self.value,
            }),
        }
    }
}

impl ReportArgs {
    pub fn parsed(self) -> Parsed {
        Parsed {
            command: "report",
            args: json!({
                "results": paths(&self.results),
                "out": path(&self.out),
                "name": (!self.name.is_empty()).then_some(self.name),
                "title": self.title,
                "no_plots": self.no_plots,
                "seeds": self.seeds,
                "per_instance": self.per_instance,
            }),
        }
    }
}

const INSTALL_HINT: &str = "install the Python package from the repository root with \
     `pip install .` (or `./scripts/python-setup.sh`, which also installs what the tests need), \
     or set REFAULT_PYTHON to an interpreter that has it";

/// The Python interpreter to use.
fn python() -> OsString {
    std::env::var_os("REFAULT_PYTHON")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| OsString::from("python3"))
}

/// Fails with an installation hint unless `python` can import `refault`.
fn check_importable(python: &OsString) -> Result<()> {
    // find_spec does not import the package (and so not pandas): a few milliseconds.
    let probe = "import importlib.util, sys; \
                 sys.exit(0 if importlib.util.find_spec('refault') else 3)";
    let status = Command::new(python)
        .args(["-c", probe])
        .status()
        .with_context(|| {
            format!(
                "cannot start {} (the Python layer needs Python >= 3.11); {INSTALL_HINT}",
                python.to_string_lossy()
            )
        })?;
    match status.code() {
        Some(0) => Ok(()),
        Some(3) => bail!(
            "the Python package `refault` is not installed for {}; {INSTALL_HINT}",
            python.to_string_lossy()
        ),
        _ => bail!(
            "{} failed to look for the `refault` package ({status}); {INSTALL_HINT}",
            python.to_string_lossy()
        ),
    }
}

/// Runs `python3 -m refault <args>` (`args`: the command line after the program name, as
/// given); does not return on success.
pub fn exec(args: &[OsString]) -> Result<()> {
    let python = python();
    check_importable(&python)?;
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "refault"]).args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Only returns on failure.
        let err = cmd.exec();
        Err(err).with_context(|| format!("cannot start {}", python.to_string_lossy()))
    }
    #[cfg(not(unix))]
    {
        let status = cmd
            .status()
            .with_context(|| format!("cannot start {}", python.to_string_lossy()))?;
        std::process::exit(status.code().unwrap_or(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_spec_wants_a_key_and_values() {
        assert!(grid_spec("vm.swappiness=0,60").is_ok());
        for bad in ["vm.swappiness", "=1,2", "vm.swappiness=", "vm.swappiness=,"] {
            assert!(grid_spec(bad).is_err(), "{bad}");
        }
    }
}
