use refault_sim::SimResult;
use std::path::PathBuf;

/// The repository root (tests run from crates/cli).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_refault"))
}

/// The binary for tests whose subject is the model's results over long runs (the `reproduce`
/// tables), not the debug assertions: the release build named by `REFAULT_RELEASE_BIN` when
/// it is set (scripts/test.sh builds it from the same tree before `cargo test` and sets it;
/// the reproductions run 3–5x faster there), else this test build's binary.
pub fn results_bin() -> PathBuf {
    match std::env::var_os("REFAULT_RELEASE_BIN") {
        Some(p) if !p.is_empty() => {
            let p = PathBuf::from(p);
            assert!(
                p.is_file(),
                "REFAULT_RELEASE_BIN={} is not a file",
                p.display()
            );
            p
        }
        _ => bin(),
    }
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
