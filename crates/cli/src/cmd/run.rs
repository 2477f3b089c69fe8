//! `refault run SCENARIO.toml [--set KEY=VALUE]... [--seed N] [--out FILE] [--check]`

use anyhow::{Context, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The scenario file (TOML).
    pub scenario: PathBuf,
    /// Override a setting: a sysctl (vm.swappiness=100) or a dotted scenario key
    /// (machine.memory=4G, policy.balance=legacy, cgroup.NAME.memory.max=1G).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Seed of every generator (default: the scenario's, else 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write the result JSON here (atomically; `-` = standard output) instead of printing a
    /// summary (see --summary).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// With --out FILE: print the summary on standard output as well (with `--out -`, on
    /// standard error, so the JSON stays alone on standard output).
    #[arg(long, requires = "out")]
    pub summary: bool,
    /// Check the model's invariants (every page in one place, list sizes, memcg usage,
    /// mapping back-pointers) every N events and at the end (default N: 1000).
    #[arg(long, num_args = 0..=1, default_missing_value = "1000", value_name = "N")]
    pub check: Option<u64>,
    /// Multi-gen LRU: also print each memcg's generations and tiers at the end, like
    /// /sys/kernel/debug/lru_gen_full (to stderr when --out is given). Also in the result
    /// JSON as `lru_gen`.
    #[arg(long)]
    pub lru_gen_stats: bool,
    /// Also write the result as mmtests logs into DIR (DIR/NAME/iter-0/tests-sysstate and
    /// DIR/BENCH.json), for `compare-mmtests.pl` next to real kernels' runs.
    #[arg(long, value_name = "DIR")]
    pub mmtests_log: Option<PathBuf>,
    /// The run's name in the mmtests logs (default: the scenario's name).
    #[arg(long, value_name = "NAME", requires = "mmtests_log")]
    pub mmtests_name: Option<String>,
}

pub fn main(a: Args) -> Result<()> {
    let overrides = a
        .set
        .iter()
        .map(|s| refault_scenario::parse_override(s))
        .collect::<Result<Vec<_>, _>>()?;
    let scn = refault_scenario::load(&a.scenario, &overrides, a.seed)?;
    super::check_out(a.out.as_deref())?;
    if a.lru_gen_stats && scn.policy.lru != refault_scenario::LruKind::Mglru {
        anyhow::bail!(
            "--lru-gen-stats: {} does not run the multi-gen LRU (policy.lru = \"classic\"); set policy.lru=mglru",
            scn.name
        );
    }
    if let Some(d) = &a.mmtests_log {
        if d.exists() && !d.is_dir() {
            anyhow::bail!("--mmtests-log {}: not a directory", d.display());
        }
        super::mmtests::check_name(a.mmtests_name.as_deref().unwrap_or(&scn.name))
            .context("--mmtests-name")?;
    }
    let r = super::simulate(&scn, a.check.unwrap_or(0), &scn.name)?;
    let v = serde_json::to_value(&r)?;
    if let Some(d) = &a.mmtests_log {
        let name = a.mmtests_name.as_deref().unwrap_or(&scn.name);
        let (bench, files) = super::mmtests::write(d, name, &v)?;
        eprintln!("mmtests logs ({bench}): {}", files.join(", "));
    }
    match &a.out {
        Some(p) => {
            super::write_out(p, refault_sim::to_json(&r).as_bytes())?;
            eprintln!(
                "{}: {} events, {:.1} s simulated in {:.2} s; result written to {}",
                scn.name,
                r.events,
                r.sim_seconds,
                r.wall_seconds,
                if p.as_os_str() == "-" {
                    "standard output".into()
                } else {
                    p.display().to_string()
                }
            );
        }
        None => out!("{}", refault_report::summary(&v))?,
    }
    if a.summary {
        let text = refault_report::summary(&v);
        if a.out.as_ref().is_some_and(|p| p.as_os_str() == "-") {
            eprint!("{text}");
        } else {
            out!("{text}")?;
        }
    }
    // Checked above: a multi-gen LRU result always carries `lru_gen`.
    if let (true, Some(t)) = (a.lru_gen_stats, refault_report::lru_gen_text(&v)) {
        if a.out.is_some() {
            eprint!("{t}");
        } else {
            out!("\nlru_gen\n{t}")?;
        }
    }
    Ok(())
}
