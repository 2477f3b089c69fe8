//! `refault compare BASE.json CHANGE.json [MORE.json...] [--seeds N] [--per-instance]
//! [--out FILE]`

use anyhow::{Context, Result};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Result files; the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub results: Vec<PathBuf>,
    /// Run each result's scenario (as the file records it, resolved) under N seeds: the
    /// file's own seed and the N - 1 after it. The table then gives mmtests' statistics per
    /// side (Amean, Hmean, Stddev, CoeffVar, Min, Max) and marks with `*` a change whose
    /// Welch t-test against the baseline has p < 0.05.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub seeds: u64,
    /// One row set per task instance (`reader/0`, `reader/1`) instead of one per task.
    #[arg(long)]
    pub per_instance: bool,
    /// Colour changes (green better, red worse): auto (when standard output is a terminal
    /// and NO_COLOR is unset), always or never.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub colour: String,
    /// Also write the table as JSON.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn main(a: Args) -> Result<()> {
    super::check_out(a.out.as_deref())?;
    let mut sides = Vec::new();
    for p in &a.results {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a refault result JSON", p.display()))?;
        if v.get("vmstat").is_none() {
            anyhow::bail!("{}: not a refault result (no `vmstat` key)", p.display());
        }
        let name = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| p.display().to_string());
        sides.push((name, vec![v]));
    }
    if a.seeds > 1 {
        rerun_with_seeds(&mut sides, &a.results, a.seeds)?;
    }
    let opts = refault_report::CompareOptions {
        per_instance: a.per_instance,
    };
    let table = refault_report::compare_runs(&sides, &opts);
    let colour = match a.colour.as_str() {
        "always" => true,
        "never" => false,
        _ => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    if colour {
        out!("{}", table.render_text_colour())?;
    } else {
        out!("{}", table.render_text())?;
    }
    if let Some(out) = a.out {
        super::write_out(&out, serde_json::to_string_pretty(&table)?.as_bytes())?;
    }
    Ok(())
}

/// Adds to each side the runs of its recorded scenario under the `n - 1` seeds after its
/// own (the file is the first run: the same scenario and seed give the same result).
fn rerun_with_seeds(
    sides: &mut [(String, Vec<serde_json::Value>)],
    files: &[PathBuf],
    n: u64,
) -> Result<()> {
    let docs: Vec<serde_json::Value> = sides.iter().map(|(_, runs)| runs[0].clone()).collect();
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let more = seed_runs(&docs, &names, n, "compare")?;
    for ((_, runs), extra) in sides.iter_mut().zip(more) {
        runs.extend(extra);
    }
    Ok(())
}

/// For each result document (named `names[i]` in errors), its recorded scenario run under
/// the `n - 1` seeds after its own, all on the host's cores with one progress line
/// (`LABEL: K runs`).
pub fn seed_runs(
    docs: &[serde_json::Value],
    names: &[String],
    n: u64,
    label: &str,
) -> Result<Vec<Vec<serde_json::Value>>> {
    let mut scns = Vec::new();
    for (doc, name) in docs.iter().zip(names) {
        let scn: refault_scenario::Scenario = serde_json::from_value(doc["scenario"].clone())
            .with_context(|| {
                format!(
                    "{name}: --seeds needs the resolved scenario the result records, and this \
                     one does not read as one (written by another refault version?)"
                )
            })?;
        for k in 1..n {
            let mut s = scn.clone();
            s.seed = scn.seed.wrapping_add(k);
            scns.push(s);
        }
    }
    let label = format!("{label}: {} runs", scns.len());
    let mut results = super::progress::run_all(&label, &scns).into_iter();
    let mut out = Vec::new();
    for _ in docs {
        let mut runs = Vec::new();
        for _ in 1..n {
            let r = results.next().expect("one result per run")?;
            runs.push(serde_json::to_value(&r)?);
        }
        out.push(runs);
    }
    Ok(out)
}
