//! `refault mmtests-export --dir DIR RESULT.json...` and `refault run --mmtests-log DIR`: a
//! result written as the logs mmtests' `compare-kernels.sh` / `compare-mmtests.pl` read (see
//! refault_report::mmtests for the layout and what each file holds).

use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The mmtests log directory (created if missing): DIR/NAME/iter-0/tests-sysstate per
    /// result and DIR/BENCH.json for `compare-mmtests.pl --from-json`.
    #[arg(long)]
    pub dir: PathBuf,
    /// Result files (`refault run --out`); each run is named by its file's stem
    /// (classic.json -> classic) unless --name gives the names, in the same order.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Run names, one per result, in order (default: the files' stems).
    #[arg(long, value_delimiter = ',')]
    pub name: Vec<String>,
}

pub fn main(a: Args) -> Result<()> {
    if !a.name.is_empty() && a.name.len() != a.results.len() {
        bail!(
            "--name gives {} names for {} results: one name per result, in order",
            a.name.len(),
            a.results.len()
        );
    }
    for n in &a.name {
        check_name(n)?;
    }
    let mut runs = Vec::new();
    for (i, p) in a.results.iter().enumerate() {
        let text = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
        let v: Value = serde_json::from_slice(&text)
            .with_context(|| format!("{}: not a result JSON file", p.display()))?;
        if !v["vmstat"].is_object() || !v["scenario"].is_object() {
            bail!(
                "{}: not a refault result (no `vmstat` or `scenario`)",
                p.display()
            );
        }
        let name = match a.name.get(i) {
            Some(n) => n.clone(),
            None => p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .with_context(|| format!("{}: no file name to name the run by", p.display()))?,
        };
        check_name(&name).with_context(|| format!("{} (rename it or give --name)", p.display()))?;
        runs.push((name, v));
    }
    for (name, v) in &runs {
        let (bench, files) = write(&a.dir, name, v)?;
        eprintln!("{name}: {bench} -> {}", files.join(", "));
    }
    eprintln!("{}", how_to_compare(&a.dir, &runs));
    Ok(())
}

/// The compare-mmtests.pl command lines for these runs (printed after an export).
fn how_to_compare(dir: &Path, runs: &[(String, Value)]) -> String {
    let names: Vec<&str> = runs.iter().map(|r| r.0.as_str()).collect();
    let bench = refault_report::mmtests::benchmark(&runs[0].1).name;
    let mut s = format!(
        "with mmtests: bin/compare-mmtests.pl -d {} -b {bench} -n {} --print-monitor mmtests-vmstat",
        dir.display(),
        names.join(",")
    );
    if bench != "refault" {
        s.push_str(&format!(
            "\n              bin/compare-mmtests.pl -d {} -b {bench} --from-json {}",
            dir.display(),
            dir.join(format!("{bench}.json")).display()
        ));
    }
    s
}

/// A run name mmtests can use: it names a directory, and compare-mmtests.pl takes names
/// as a comma-separated list.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'));
    if !ok {
        bail!(
            "run name {name:?}: mmtests names a directory by it and lists names with commas; \
             use letters, digits, '-', '_', '.', '+'"
        );
    }
    Ok(())
}

/// Write run `name`'s logs into `dir`: its tests-sysstate, and its module in BENCH.json
/// (added, or replacing an earlier module of the same name). Returns the benchmark's name
/// and the files written.
pub fn write(dir: &Path, name: &str, result: &Value) -> Result<(String, Vec<String>)> {
    check_name(name)?;
    let bench = refault_report::mmtests::benchmark(result);
    let iter = dir.join(name).join("iter-0");
    std::fs::create_dir_all(&iter).with_context(|| format!("creating {}", iter.display()))?;
    let sysstate = iter.join("tests-sysstate");
    super::write_out(
        &sysstate,
        refault_report::mmtests::tests_sysstate(&bench.name, result).as_bytes(),
    )?;
    let mut files = vec![sysstate.display().to_string()];
    if !bench.ops.is_empty() {
        let json = dir.join(format!("{}.json", bench.name));
        let existing = match std::fs::read_to_string(&json) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {}", json.display())),
        };
        let merged = refault_report::mmtests::merge_modules(
            existing.as_deref(),
            refault_report::mmtests::module(&bench, name),
        )
        .map_err(|e| anyhow::anyhow!("{}: {e}", json.display()))?;
        super::write_out(&json, serde_json::to_string_pretty(&merged)?.as_bytes())?;
        files.push(json.display().to_string());
    }
    Ok((bench.name, files))
}
