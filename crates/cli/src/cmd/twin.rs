//! `refault twin SCENARIO.toml [--runs 3] [--swap zram|file|none] [--out FILE]` and
//! `refault fidelity [--quick | --runs N] [--out FILE]`: the live-kernel twin (crates/twin).

use anyhow::{anyhow, Context, Result};
use refault_scenario::Scenario;
use refault_twin::{Event, RunPlan, SwapKind, TwinReport, KEY_COUNTERS};
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct TwinArgs {
    /// The scenario file (TOML).
    #[arg(required_unless_present = "cleanup")]
    pub scenario: Option<PathBuf>,
    /// Only remove what killed twin runs left behind (cgroups, swap areas, zram devices,
    /// work directories, workers), say what, and exit. Every twin run does this first.
    #[arg(long, conflicts_with = "scenario")]
    pub cleanup: bool,
    /// Override a setting, as for `refault run`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Real runs to average.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Go on past --runs, up to this many, while a key counter's kernel mean has a standard
    /// error above --sem of itself (and above 2 pages).
    #[arg(long)]
    pub max_runs: Option<usize>,
    /// The relative standard error --max-runs aims for.
    #[arg(long, default_value_t = 0.15)]
    pub sem: f64,
    /// Stop adding runs past --runs once the real runs have taken this many seconds.
    #[arg(long)]
    pub max_seconds: Option<f64>,
    /// Swap for the real runs (default: zram if the scenario swaps to a zram device, a swap
    /// file if it swaps to another device, none if it has no swap).
    #[arg(long)]
    pub swap: Option<SwapKind>,
    /// Write the comparison as JSON.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Where the scenario's files and the swap file are created.
    #[arg(long, default_value = "/var/tmp")]
    pub workdir: PathBuf,
    /// Run the scenario on a kernel booted in a VM (QEMU) whose memory is the scenario's
    /// machine: the whole machine is compared, global reclaim included.
    #[arg(long)]
    pub vm: bool,
    /// The VM's kernel: debian-6.1, debian-6.12, debian-7.2 (fetched once into --vm-cache by
    /// scripts/vm-setup.sh) or the path of a bzImage.
    #[arg(long, default_value = "debian-6.1", requires = "vm")]
    pub kernel: String,
    /// Where kernels are kept (default $REFAULT_VM_CACHE, else ~/.cache/refault-vm).
    #[arg(long, requires = "vm")]
    pub vm_cache: Option<PathBuf>,
    /// auto (KVM when /dev/kvm is usable and a short probe boot with it works, remembered in
    /// --vm-cache; TCG otherwise), tcg (emulation, works everywhere) or kvm.
    #[arg(long, default_value = "auto", requires = "vm")]
    pub accel: refault_twin::vm::Accel,
    /// Wall-clock limit of one boot of the VM, seconds.
    #[arg(long, default_value_t = 600.0, requires = "vm")]
    pub boot_timeout: f64,
    /// Simulate with the scenario's model.cost instead of the guest's CPU costs as its probe
    /// measured them before each run (runs recorded without the probe always do).
    #[arg(long, requires = "vm")]
    pub scenario_costs: bool,
}

/// `refault twin-guest`: the VM twin's executor inside the guest (not for direct use).
#[derive(clap::Args)]
pub struct GuestArgs {
    /// The resolved scenario as JSON.
    pub scenario: PathBuf,
    #[arg(long)]
    pub workdir: PathBuf,
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long)]
    pub swap: SwapKind,
}

pub fn guest(a: GuestArgs) -> Result<()> {
    let text = std::fs::read_to_string(&a.scenario)
        .with_context(|| format!("reading {}", a.scenario.display()))?;
    let scn: Scenario = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a resolved scenario", a.scenario.display()))?;
    refault_twin::vm::guest_main(&scn, a.swap, &a.workdir, &a.out).map_err(|e| anyhow!("{e}"))
}

#[derive(clap::Args)]
pub struct FidelityArgs {
    /// One real run per scenario instead of three.
    #[arg(long)]
    pub quick: bool,
    /// Real runs per scenario (overrides --quick; default 3). The flush-phase-sensitive
    /// counters (f03-f05 anon, f08 activations) vary across runs by more than the mean:
    /// more runs narrow that.
    #[arg(long)]
    pub runs: Option<usize>,
    /// Go on past --runs, up to this many per scenario, while a key counter's kernel mean
    /// has a standard error above --sem of itself (and above 2 pages).
    #[arg(long)]
    pub max_runs: Option<usize>,
    /// The relative standard error --max-runs aims for.
    #[arg(long, default_value_t = 0.15)]
    pub sem: f64,
    /// Stop adding runs past --runs once the real runs have taken this many seconds.
    #[arg(long)]
    pub max_seconds: Option<f64>,
    /// Write the table (per scenario and counter: real_mean, real_min, real_max, simulated,
    /// relative_error) and the median relative error as JSON.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The suite's directory (default fidelity/, or fidelity-vm/ with --vm).
    #[arg(long)]
    pub suite: Option<PathBuf>,
    #[arg(long, default_value = "/var/tmp")]
    pub workdir: PathBuf,
    /// Run the suite on a kernel booted in a VM (`refault twin --vm`), one boot per run.
    #[arg(long)]
    pub vm: bool,
    /// The VM's kernel (as for `refault twin --vm`).
    #[arg(long, default_value = "debian-6.1", requires = "vm")]
    pub kernel: String,
    #[arg(long, requires = "vm")]
    pub vm_cache: Option<PathBuf>,
    /// auto, tcg or kvm (as for `refault twin --vm`).
    #[arg(long, default_value = "auto", requires = "vm")]
    pub accel: refault_twin::vm::Accel,
    /// Run only the scenarios whose name contains this.
    #[arg(long)]
    pub only: Option<String>,
    /// Boot nothing: simulate each scenario again with this build's model and compare it
    /// with the guest runs a previous `fidelity --vm --out FILE` saved in FILE (the same
    /// kernel runs, the same guest machine), to measure a model change.
    #[arg(long, requires = "vm")]
    pub replay: Option<PathBuf>,
    /// Simulate with the scenario's model.cost instead of the guest's CPU costs as its probe
    /// measured them before each run (runs recorded without the probe always do).
    #[arg(long, requires = "vm")]
    pub scenario_costs: bool,
}

/// The entry a `fidelity --vm --out` file saved for `scenario`, if any.
fn saved_entry<'d>(doc: &'d serde_json::Value, scenario: &str) -> Option<&'d serde_json::Value> {
    doc["scenarios"]
        .as_array()
        .and_then(|v| v.iter().find(|e| e["scenario"] == scenario))
}

/// The guest runs a `fidelity --vm --out` file saved for `scenario`, and the accelerator.
fn saved_guest_runs(
    doc: &serde_json::Value,
    file: &Path,
    scenario: &str,
) -> Result<(
    Vec<refault_twin::vm::GuestRun>,
    refault_twin::vm::Accel,
    String,
)> {
    let entry = saved_entry(doc, scenario)
        .ok_or_else(|| anyhow!("{}: no saved runs of {scenario}", file.display()))?;
    let vm = &entry["vm"];
    if vm.is_null() {
        return Err(anyhow!(
            "{}: {scenario} has no guest runs (written by a build before --replay, or not --vm)",
            file.display()
        ));
    }
    let runs = serde_json::from_value(vm["guest_runs"].clone())
        .with_context(|| format!("{}: {scenario}: vm.guest_runs", file.display()))?;
    let accel = serde_json::from_value(vm["accel"].clone())
        .with_context(|| format!("{}: {scenario}: vm.accel", file.display()))?;
    let reason = vm["accel_reason"].as_str().unwrap_or_default().to_string();
    Ok((runs, accel, reason))
}

/// The swap the scenario implies: zram for a zram (synchronous) device, a file otherwise.
pub fn default_swap(scn: &Scenario) -> SwapKind {
    match scn.swap.first() {
        None => SwapKind::None,
        Some(a) if scn.devices[a.device].preset == "zram" => SwapKind::Zram,
        Some(_) => SwapKind::File,
    }
}

/// The progress line of `twin` and `fidelity` (on a terminal; see `progress.rs`), fed by the
/// twin's [`Event`]s. A scenario's work is its simulations (over the memcg flusher's
/// phases), counted as one real run's share, and its planned real runs; the fidelity suite's
/// is the mean over its scenarios. `twin` gives the ETA from the real runs done (their mean
/// time times the runs left; none before the first), `fidelity` extrapolates from the
/// suite's work done so far. The twin's notes (each run's time, the plan growing) are
/// printed above the line.
struct TwinBar<'a> {
    progress: &'a super::progress::Progress,
    /// `twin NAME` or `fidelity 2/9 NAME`.
    label: String,
    /// This scenario's index in the suite, and the suite's size (0 of 1 for `twin`).
    index: usize,
    count: usize,
    /// The fraction of the simulations done.
    sim: f64,
    planned: usize,
    done: usize,
    run_seconds: f64,
    /// Whether the ETA comes from the real runs (`twin`) rather than extrapolated.
    eta_from_runs: bool,
    /// Whether the real runs come before the simulations (the VM twin's do).
    runs_first: bool,
    /// The label last drawn: a new one is drawn at once.
    shown: String,
}

impl TwinBar<'_> {
    fn observe(&mut self, e: Event) {
        match e {
            Event::Note(line) => return self.progress.println(line),
            Event::Simulating { fraction } => self.sim = fraction,
            Event::Planned { runs } => self.planned = runs,
            Event::RunDone { run, seconds } => {
                self.done = run;
                self.run_seconds += seconds;
                self.planned = self.planned.max(run);
            }
        }
        let doing =
            if self.done < self.planned && (self.runs_first || self.sim >= 1.0 || self.done > 0) {
                format!("real run {}/{}", self.done + 1, self.planned)
            } else if self.sim < 1.0 {
                "simulating".to_string()
            } else {
                "comparing".to_string()
            };
        let within = (self.sim + self.done as f64) / (1.0 + self.planned as f64);
        let fraction = (self.index as f64 + within) / self.count as f64;
        let eta = self.eta_from_runs.then(|| {
            (self.done > 0).then(|| {
                let per_run = self.run_seconds / self.done as f64;
                per_run * self.planned.saturating_sub(self.done) as f64
            })
        });
        // A new step is drawn at once: a real run may take minutes without another event.
        let label = format!("{}: {doing}", self.label);
        let step = label != self.shown || !matches!(e, Event::Simulating { .. });
        self.progress.update(&label, fraction, eta, step);
        self.shown = label;
    }

    /// Draws the line as it stands (a new scenario, before its first event).
    fn start(&mut self) {
        self.observe(Event::Planned { runs: self.planned });
    }
}

fn run_twin(
    scn: &Scenario,
    plan: RunPlan,
    swap: SwapKind,
    workdir: &Path,
    bar: &mut TwinBar,
) -> Result<TwinReport> {
    refault_twin::twin_observed(scn, plan, swap, workdir, &mut |e| bar.observe(e))
        .map_err(|e| anyhow!("twin of {}: {e}", scn.name))
}

fn plan(
    runs: usize,
    max_runs: Option<usize>,
    sem: f64,
    max_seconds: Option<f64>,
) -> Result<RunPlan> {
    let min = runs.max(1);
    let max = max_runs.unwrap_or(min);
    if max < min {
        return Err(anyhow!("--max-runs {max} is below --runs {min}"));
    }
    if !(sem > 0.0 && sem.is_finite()) {
        return Err(anyhow!(
            "--sem {sem}: must be a positive fraction such as 0.15"
        ));
    }
    if max_seconds.is_some_and(|m| !(m > 0.0 && m.is_finite())) {
        return Err(anyhow!(
            "--max-seconds must be a positive number of seconds"
        ));
    }
    Ok(RunPlan {
        min,
        max,
        rel_sem: sem,
        max_seconds,
    })
}

pub fn twin(a: TwinArgs) -> Result<()> {
    if a.cleanup {
        let said = refault_twin::remove_leftovers(Some(&a.workdir));
        if said.is_empty() {
            eprintln!("twin: nothing left behind by dead twin runs");
        }
        return Ok(());
    }
    super::check_out(a.out.as_deref())?;
    let scenario = a.scenario.expect("clap requires it without --cleanup");
    let overrides = a
        .set
        .iter()
        .map(|s| refault_scenario::parse_override(s))
        .collect::<Result<Vec<_>, _>>()?;
    let scn = refault_scenario::load(&scenario, &overrides, None)?;
    let swap = a.swap.unwrap_or_else(|| default_swap(&scn));
    let plan = plan(a.runs, a.max_runs, a.sem, a.max_seconds)?;
    let progress = super::progress::Progress::new(&format!("twin {}", scn.name), 1);
    let mut bar = TwinBar {
        progress: &progress,
        label: format!("twin {}", scn.name),
        index: 0,
        count: 1,
        sim: 0.0,
        planned: plan.min,
        done: 0,
        run_seconds: 0.0,
        eta_from_runs: true,
        runs_first: a.vm,
        shown: String::new(),
    };
    if !a.vm {
        // (The VM twin's setup prints what it finds first; its first event draws the line.)
        bar.start();
    }
    let r = if a.vm {
        if !(a.boot_timeout > 0.0 && a.boot_timeout.is_finite()) {
            return Err(anyhow!(
                "--boot-timeout must be a positive number of seconds"
            ));
        }
        let opts = refault_twin::vm::VmOptions {
            kernel: a.kernel.clone(),
            cache: a
                .vm_cache
                .clone()
                .unwrap_or_else(refault_twin::vm::default_cache),
            accel: a.accel,
            boot_timeout: a.boot_timeout,
            measured_costs: !a.scenario_costs,
        };
        refault_twin::vm::twin_vm_observed(&scn, plan, swap, &opts, &a.workdir, &mut |e| {
            bar.observe(e)
        })
        .map_err(|e| anyhow!("twin --vm of {}: {e}", scn.name))?
    } else {
        run_twin(&scn, plan, swap, &a.workdir, &mut bar)?
    };
    progress.finish();
    out!("{}", refault_twin::render(&r))?;
    if let Some(p) = a.out {
        super::write_out(&p, serde_json::to_string_pretty(&r)?.as_bytes())?;
    }
    Ok(())
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

pub fn fidelity(a: FidelityArgs) -> Result<()> {
    super::check_out(a.out.as_deref())?;
    let suite = a
        .suite
        .clone()
        .unwrap_or_else(|| PathBuf::from(if a.vm { "fidelity-vm" } else { "fidelity" }));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&suite)
        .with_context(|| format!("reading {}", suite.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .filter(|p| {
            a.only.as_ref().is_none_or(|o| {
                p.file_stem()
                    .is_some_and(|s| s.to_string_lossy().contains(o.as_str()))
            })
        })
        .collect();
    let vm = a.vm.then(|| refault_twin::vm::VmOptions {
        kernel: a.kernel.clone(),
        cache: a
            .vm_cache
            .clone()
            .unwrap_or_else(refault_twin::vm::default_cache),
        accel: a.accel,
        boot_timeout: 600.0,
        measured_costs: !a.scenario_costs,
    });
    files.sort();
    let replay = match &a.replay {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            let doc: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a fidelity --out file", p.display()))?;
            Some((p.clone(), doc))
        }
        None => None,
    };
    let runs = a.runs.unwrap_or(if a.quick { 1 } else { 3 }).max(1);
    let plan = plan(runs, a.max_runs, a.sem, a.max_seconds)?;
    let mut scenarios = Vec::new();
    let mut errors = Vec::new();
    let mut off = Vec::new();
    outln!(
        "{:<26} {:<26} {:>12} {:>17} {:>10} {:>8}",
        "scenario",
        "counter",
        "real ±se",
        "real min-max",
        "simulated",
        "error"
    )?;
    let progress = super::progress::Progress::new("fidelity", 1);
    // A replay covers the scenarios the file saved (a `--only` run saves some of the
    // suite): the others are listed as skipped, and a file with none of them is an error.
    let mut not_saved = Vec::new();
    for (index, f) in files.iter().enumerate() {
        let scn = refault_scenario::load(f, &[], None)?;
        if let Some((_, doc)) = &replay {
            if saved_entry(doc, &scn.name).is_none() && a.only.is_none() {
                not_saved.push(scn.name.clone());
                continue;
            }
        }
        let swap = default_swap(&scn);
        let mut bar = TwinBar {
            progress: &progress,
            label: format!("fidelity {}/{} {}", index + 1, files.len(), scn.name),
            index,
            count: files.len(),
            sim: 0.0,
            planned: if replay.is_some() { 0 } else { plan.min },
            done: 0,
            run_seconds: 0.0,
            eta_from_runs: false,
            runs_first: vm.is_some(),
            shown: String::new(),
        };
        progress.println(&format!(
            "fidelity: {} ({}, swap {swap:?})",
            scn.name,
            match &replay {
                Some((p, _)) => format!("replaying the guest runs saved in {}", p.display()),
                None if plan.max > plan.min => format!("{} to {} run(s)", plan.min, plan.max),
                None => format!("{} run(s)", plan.min),
            }
        ));
        if vm.is_none() || replay.is_some() {
            bar.start();
        }
        let r = match (&vm, &replay) {
            (Some(_), Some((p, doc))) => {
                let (runs, accel, reason) = saved_guest_runs(doc, p, &scn.name)?;
                refault_twin::vm::compare_vm_observed(
                    &scn,
                    &runs,
                    swap,
                    accel,
                    reason,
                    !a.scenario_costs,
                    &mut |e| bar.observe(e),
                )
                .map_err(|e| anyhow!("replay of {}: {e}", scn.name))?
            }
            (Some(o), None) => {
                refault_twin::vm::twin_vm_observed(&scn, plan, swap, o, &a.workdir, &mut |e| {
                    bar.observe(e)
                })
                .map_err(|e| anyhow!("twin --vm of {}: {e}", scn.name))?
            }
            (None, _) => run_twin(&scn, plan, swap, &a.workdir, &mut bar)?,
        };
        // The table's rows go to standard output: the progress line makes way for them.
        progress.finish();
        let mut rows = Vec::new();
        let keys: &[&str] = if vm.is_some() {
            &refault_twin::VM_KEY_COUNTERS
        } else {
            &KEY_COUNTERS
        };
        for &k in keys {
            let Some(x) = r.rows.iter().find(|x| x.counter == k) else {
                continue;
            };
            outln!(
                "{:<26} {:<26} {:>12} {:>17} {:>10} {:>7.1}%",
                scn.name,
                k,
                refault_twin::mean_pm(x.real_mean, x.real_sem),
                format!("{}-{}", x.real_min, x.real_max),
                x.simulated,
                x.relative_error * 100.0
            )?;
            errors.push(x.relative_error);
            if x.off_by_2x {
                off.push(format!(
                    "{} {k}: kernel {} (runs {}-{}), simulated {}",
                    scn.name,
                    refault_twin::mean_pm(x.real_mean, x.real_sem),
                    x.real_min,
                    x.real_max,
                    x.simulated
                ));
            }
            rows.push(
                json!({"counter": k, "real_mean": x.real_mean, "real_min": x.real_min,
                "real_max": x.real_max, "real_sem": x.real_sem, "simulated": x.simulated,
                "simulated_min": x.simulated_min, "simulated_max": x.simulated_max,
                "relative_error": x.relative_error, "off_by_2x": x.off_by_2x}),
            );
        }
        scenarios.push(json!({"scenario": scn.name, "swap": swap, "runs": r.runs,
            "kernel": r.kernel, "counters": rows,
            "real_task_seconds": r.real_task_seconds,
            "simulated_task_seconds": r.simulated_task_seconds,
            "damon_pageout_bytes_per_run": r.damon_pageout_bytes_per_run,
            "vm": r.vm}));
    }
    progress.finish();
    if let Some((p, _)) = &replay {
        if scenarios.is_empty() {
            return Err(anyhow!(
                "{}: no saved runs of {}",
                p.display(),
                not_saved.join(", ")
            ));
        }
        if !not_saved.is_empty() {
            progress.println(&format!(
                "fidelity: {} has no saved runs of {}: not replayed",
                p.display(),
                not_saved.join(", ")
            ));
        }
    }
    let med = median(errors);
    outln!(
        "median relative error over the key counters: {:.1}%",
        med * 100.0
    )?;
    outln!(
        "key counters off by more than 2x (beyond 2 standard errors of the kernel mean): {}",
        off.len()
    )?;
    for o in &off {
        outln!("  {o}")?;
    }
    if let Some(p) = a.out {
        let doc = json!({"median_relative_error": med, "off_by_2x": off, "scenarios": scenarios});
        super::write_out(&p, serde_json::to_string_pretty(&doc)?.as_bytes())?;
    }
    Ok(())
}
