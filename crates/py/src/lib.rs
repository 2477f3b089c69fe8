//! `refault._refault`: the Python extension module.
//!
//! Conversions and error mapping only. Resolving a scenario and simulating it are the Rust
//! crates' business (`refault-scenario`, `refault-sim`); this module hands them strings and
//! hands back the result JSON, which the Python package (`python/refault`) turns into
//! DataFrames, sweeps, plots and reports. Nothing here knows what a page or a counter is.
//!
//! - The GIL is released while a scenario is resolved and simulated (`Python::detach`), so
//!   runs started from several Python threads proceed in parallel.
//! - Every error from the core becomes a Python exception through one mapping,
//!   [`Error`] → `PyErr`: `ScenarioError`, `SimulationError`, `InvariantError` (all under
//!   `RefaultError`), or `FileNotFoundError`/`IsADirectoryError`/`PermissionError`/`OSError`
//!   for a scenario file that cannot be read (a file that is not UTF-8 is a `ScenarioError`).
//!   The Python package reads scenario files itself and hands this module text; `is_path`
//!   stays for direct callers. A panic inside the core is caught and raised as
//!   `SimulationError`; it never unwinds into the interpreter.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{
    PyException, PyFileNotFoundError, PyIsADirectoryError, PyOSError, PyPermissionError,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

pyo3::create_exception!(
    refault,
    RefaultError,
    PyException,
    "Base class of every error refault raises."
);
pyo3::create_exception!(
    refault,
    ScenarioError,
    RefaultError,
    "A scenario (or an override) could not be read or resolved.\n\n\
     Attributes: `path` (the file, `<string>`, `<dict>` or `--set`), `line` and `column` \
     (1-based, or None when the problem has no position), `kind` (`syntax`, `unknown-key`, \
     `invalid-value`, `impossible`, `unknown-reference`, `bad-override`, `io`) and `message` \
     (without the position). `str(e)` is the one-line `path:line:col: message`."
);
pyo3::create_exception!(
    refault,
    SimulationError,
    RefaultError,
    "The simulation could not run the scenario to its end: it asks for a model refault does \
     not have, or the core failed (a bug; the message says so)."
);
pyo3::create_exception!(
    refault,
    InvariantError,
    SimulationError,
    "A model invariant check failed during a run with invariant checks on.\n\n\
     Attributes: `event` (events consumed when the check failed), `time_s` (simulated \
     seconds) and `message`."
);

/// Every way a call into the core can fail; converted to a Python exception in one place.
enum Error {
    Scenario(refault_scenario::ScenarioError),
    Sim(refault_sim::SimError),
    /// The core panicked; the payload's message.
    Panic(String),
    /// A resolved scenario that does not serialise (a bug).
    Json(serde_json::Error),
}

impl From<refault_scenario::ScenarioError> for Error {
    fn from(e: refault_scenario::ScenarioError) -> Self {
        Error::Scenario(e)
    }
}

impl From<refault_sim::SimError> for Error {
    fn from(e: refault_sim::SimError) -> Self {
        Error::Sim(e)
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Json(e)
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Scenario(e) => scenario_error(e),
            Error::Sim(refault_sim::SimError::Invariant {
                event,
                time_ns,
                msg,
            }) => {
                let text = refault_sim::SimError::Invariant {
                    event,
                    time_ns,
                    msg: msg.clone(),
                }
                .to_string();
                let err = InvariantError::new_err(text);
                Python::attach(|py| {
                    let v = err.value(py);
                    let _ = v.setattr("event", event);
                    let _ = v.setattr("time_s", time_ns as f64 / 1e9);
                    let _ = v.setattr("message", msg);
                });
                err
            }
            Error::Sim(
                e @ (refault_sim::SimError::Unsupported(_)
                | refault_sim::SimError::Workload(_)
                | refault_sim::SimError::NoProgress { .. }),
            ) => SimulationError::new_err(e.to_string()),
            Error::Panic(msg) => SimulationError::new_err(format!(
                "the simulator failed internally (a bug in refault, please report it): {msg}"
            )),
            Error::Json(e) => {
                SimulationError::new_err(format!("cannot serialise the resolved scenario: {e}"))
            }
        }
    }
}

/// `ScenarioError` with its attributes, or the OS error class for an unreadable file.
fn scenario_error(e: refault_scenario::ScenarioError) -> PyErr {
    use refault_scenario::ErrorKind;
    use std::io::ErrorKind as Io;
    if e.kind() == ErrorKind::Io {
        // (errno, strerror, filename), as open() raises them.
        let args = |errno: i32| (errno, e.message().to_string(), e.origin().to_string());
        match e.io_error_kind() {
            Some(Io::NotFound) => return PyFileNotFoundError::new_err(args(2)),
            Some(Io::PermissionDenied) => return PyPermissionError::new_err(args(13)),
            Some(Io::IsADirectory) => return PyIsADirectoryError::new_err(args(21)),
            // Not UTF-8: a ScenarioError, below.
            Some(Io::InvalidData) | None => {}
            Some(_) => return PyOSError::new_err(args(5)),
        }
    }
    let err = ScenarioError::new_err(e.to_string());
    Python::attach(|py| {
        let v = err.value(py);
        let _ = v.setattr("path", e.origin());
        let _ = v.setattr("line", e.line());
        let _ = v.setattr("column", e.column());
        let _ = v.setattr("kind", e.kind().as_str());
        let _ = v.setattr("message", e.message());
    });
    err
}

/// The message of a panic payload.
fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// Runs `f` with the GIL released, turning a panic into [`Error::Panic`].
fn without_gil<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, Error> + Send,
) -> Result<T, Error> {
    py.detach(|| {
        catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(Error::Panic(panic_message(p))))
    })
}

/// Resolves the scenario: a file when `is_path`, else TOML text named `origin` in messages
/// (and, without a `name` key, naming the scenario by its stem).
fn resolve_scenario(
    scenario: &str,
    is_path: bool,
    origin: Option<&str>,
    overrides: &[(String, String)],
    seed: Option<u64>,
) -> Result<refault_scenario::Scenario, Error> {
    Ok(if is_path {
        refault_scenario::load(std::path::Path::new(scenario), overrides, seed)?
    } else {
        refault_scenario::parse(scenario, origin.unwrap_or("<string>"), overrides, seed)?
    })
}

/// Resolves and simulates a scenario; returns the result JSON (what `refault run --out`
/// writes).
///
/// `scenario` is a path when `is_path`, else TOML text (`origin` names it in messages).
/// `overrides` are `--set` pairs, `seed` replaces the scenario's seed, `check_every` runs the
/// model's invariant checks every N events (0: the scenario's `model.check_interval`).
/// `progress`, when given, is called with the fraction done (0..=1) whenever it advances by a
/// percent. The GIL is released for the whole call except those callbacks.
#[pyfunction]
#[pyo3(signature = (scenario, is_path, overrides, seed=None, check_every=0, origin=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    scenario: &str,
    is_path: bool,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
    check_every: u64,
    origin: Option<&str>,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    let json = without_gil(py, || {
        let scn = resolve_scenario(scenario, is_path, origin, &overrides, seed)?;
        let mut last = -1i64;
        let mut report = |f: f64| {
            let pct = (f * 100.0).floor() as i64;
            if pct == last {
                return;
            }
            last = pct;
            if let Some(cb) = &progress {
                // A failing callback must not stop the run; its error is printed.
                Python::attach(|py| {
                    if let Err(e) = cb.call1(py, (f,)) {
                        e.print(py);
                    }
                });
            }
        };
        let opts = refault_sim::RunOptions {
            check_every,
            progress: if progress.is_some() {
                Some(&mut report)
            } else {
                None
            },
            trace: None,
        };
        let result = refault_sim::run(&scn, opts)?;
        Ok(refault_sim::to_json(&result))
    })?;
    Ok(json)
}

/// Resolves a scenario (every default filled in) and returns it as JSON: the same document
/// the result JSON carries under `scenario`. Arguments as for [`run`].
#[pyfunction]
#[pyo3(signature = (scenario, is_path, overrides, seed=None, origin=None))]
fn resolve(
    py: Python<'_>,
    scenario: &str,
    is_path: bool,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
    origin: Option<&str>,
) -> PyResult<String> {
    let json = without_gil(py, || {
        let scn = resolve_scenario(scenario, is_path, origin, &overrides, seed)?;
        Ok(serde_json::to_string(&scn)?)
    })?;
    Ok(json)
}

/// The `refault compare` table of `sides` (JSON: `[[label, [result, ...]], ...]`, the
/// first side the baseline, one or more results per side) as its JSON document
/// (`refault compare --out`'s): the one implementation of the table, which the HTML report
/// shows.
#[pyfunction]
#[pyo3(signature = (sides, per_instance=false))]
fn compare(py: Python<'_>, sides: &str, per_instance: bool) -> PyResult<String> {
    let json = without_gil(py, || {
        let sides: Vec<(String, Vec<serde_json::Value>)> = serde_json::from_str(sides)?;
        let opts = refault_report::CompareOptions { per_instance };
        Ok(serde_json::to_string(&refault_report::compare_runs(
            &sides, &opts,
        ))?)
    })?;
    Ok(json)
}

/// Runs the `refault` command line in this process (`argv`: the program name, then the
/// arguments). Returns its exit status, or, for a subcommand the Python package carries out
/// (`sweep`, `plot`, `report`), `(command, arguments as JSON)` after parsing them (help and
/// usage errors are printed here, as for every subcommand). The GIL is released while it
/// runs.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> PyResult<Py<PyAny>> {
    match py.detach(|| refault::dispatch(argv)) {
        refault::Dispatch::Exit(code) => Ok(code.into_pyobject(py)?.into_any().unbind()),
        refault::Dispatch::Python { command, args } => Ok((command, args.to_string())
            .into_pyobject(py)?
            .into_any()
            .unbind()),
    }
}

/// For each result document (JSON: a list of them), its recorded scenario run under the
/// `n - 1` seeds after its own, with one progress line on a terminal: what `refault compare
/// --seeds N` adds to each side (JSON: a list per document). `names` name the documents in
/// errors. The GIL is released while it runs.
#[pyfunction]
fn seed_runs(py: Python<'_>, docs: &str, names: Vec<String>, n: u64) -> PyResult<String> {
    let runs = without_gil(py, || {
        let docs: Vec<serde_json::Value> = serde_json::from_str(docs)?;
        Ok(refault::seed_runs(&docs, &names, n, "report")
            .and_then(|runs| Ok(serde_json::to_string(&runs)?)))
    })?;
    runs.map_err(|e| SimulationError::new_err(format!("{e:#}")))
}

#[pymodule]
fn _refault(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(seed_runs, m)?)?;
    m.add("RefaultError", py.get_type::<RefaultError>())?;
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add("InvariantError", py.get_type::<InvariantError>())?;
    let info = PyDict::new(py);
    info.set_item("version", env!("CARGO_PKG_VERSION"))?;
    info.set_item("debug_assertions", cfg!(debug_assertions))?;
    m.add("build_info", info)?;
    Ok(())
}
