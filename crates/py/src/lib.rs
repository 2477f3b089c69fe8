//! `refault._refault`: the Python extension. Conversions and error mapping only — the model,
//! the scenario resolution and the simulation are the Rust crates'; the Python package
//! (`python/refault`) builds DataFrames and plots from the result JSON.

use pyo3::exceptions::{PyException, PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use refault_scenario::{ErrorKind, ScenarioError as RsScenarioError};

pyo3::create_exception!(
    _refault,
    RefaultError,
    PyException,
    "Base class of refault's errors."
);
pyo3::create_exception!(
    _refault,
    ScenarioError,
    RefaultError,
    "A scenario could not be read: attributes `path`, `line`, `column`, `kind`, `message`."
);
pyo3::create_exception!(
    _refault,
    SimulationError,
    RefaultError,
    "The simulation stopped: a model invariant was violated or the scenario asks for a model that does not exist yet."
);

/// One `From`-style mapping of scenario errors to Python exceptions.
fn scenario_err(py: Python<'_>, e: RsScenarioError) -> PyErr {
    if e.kind() == ErrorKind::Io && e.io_error_kind() == Some(std::io::ErrorKind::NotFound) {
        return PyFileNotFoundError::new_err(e.to_string());
    }
    let err = ScenarioError::new_err(e.to_string());
    let v = err.value(py);
    let kind = format!("{:?}", e.kind());
    let _ = v.setattr("path", e.origin().to_string());
    let _ = v.setattr("line", e.line());
    let _ = v.setattr("column", e.column());
    let _ = v.setattr("kind", kind);
    let _ = v.setattr("message", e.message().to_string());
    err
}

fn load(
    py: Python<'_>,
    scenario: &str,
    is_path: bool,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
) -> PyResult<refault_scenario::Scenario> {
    let r = if is_path {
        refault_scenario::load(std::path::Path::new(scenario), &overrides, seed)
    } else {
        refault_scenario::parse(scenario, "<string>", &overrides, seed)
    };
    r.map_err(|e| scenario_err(py, e))
}

/// Run a scenario (a path or TOML text) and return the result JSON. The GIL is released while
/// the simulation runs, so several runs proceed in parallel from Python threads.
#[pyfunction]
#[pyo3(signature = (scenario, is_path, overrides, seed=None, check_every=0))]
fn run(
    py: Python<'_>,
    scenario: &str,
    is_path: bool,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
    check_every: u64,
) -> PyResult<String> {
    let scn = load(py, scenario, is_path, overrides, seed)?;
    let result = py.detach(move || {
        let opts = refault_sim::RunOptions {
            check_every,
            ..Default::default()
        };
        refault_sim::run(&scn, opts).map(|r| refault_sim::to_json(&r))
    });
    result.map_err(|e| SimulationError::new_err(e.to_string()))
}

/// Resolve a scenario (every default filled in) and return it as JSON.
#[pyfunction]
#[pyo3(signature = (scenario, is_path, overrides, seed=None))]
fn resolve(
    py: Python<'_>,
    scenario: &str,
    is_path: bool,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
) -> PyResult<String> {
    let scn = load(py, scenario, is_path, overrides, seed)?;
    serde_json::to_string(&scn).map_err(|e| PyValueError::new_err(e.to_string()))
}

#[pymodule]
fn _refault(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add("RefaultError", py.get_type::<RefaultError>())?;
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    let info = PyDict::new(py);
    info.set_item("version", env!("CARGO_PKG_VERSION"))?;
    m.add("build_info", info)?;
    Ok(())
}
