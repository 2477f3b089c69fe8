use refault_sim::SimResult;
use std::path::PathBuf;

/// The repository root (tests run from crates/cli).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_refault"))
}

/// Simulate a scenario given as TOML text with overrides.
pub fn sim(toml: &str, overrides: &[(&str, &str)]) -> SimResult {
    let ov: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let scn = refault_scenario::parse(toml, "test.toml", &ov, None).expect("scenario parses");
    refault_sim::run(&scn, Default::default()).expect("simulation runs")
}

pub fn vm(r: &SimResult, k: &str) -> u64 {
    *r.vmstat.get(k).unwrap_or_else(|| panic!("no counter {k}"))
}

/// A unique scratch directory under the target dir.
pub fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
