//! `refault compare BASE.json CHANGE.json [MORE.json...] [--out FILE]`

use anyhow::{Context, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Result files; the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub results: Vec<PathBuf>,
    /// Also write the table as JSON.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn main(a: Args) -> Result<()> {
    super::check_out(a.out.as_deref())?;
    let mut rs = Vec::new();
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
        rs.push((name, v));
    }
    let table = refault_report::compare(&rs);
    out!("{}", table.render_text())?;
    if let Some(out) = a.out {
        super::write_out(&out, serde_json::to_string_pretty(&table)?.as_bytes())?;
    }
    Ok(())
}
