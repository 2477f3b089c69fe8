use super::*;
use refault_workload::Op;

fn scenario(text: &str) -> Scenario {
    refault_scenario::parse(text, "twin-test.toml", &[], None).unwrap()
}

const SMALL: &str = r#"
[machine]
memory = "512M"
[[device]]
name = "disk"
preset = "nvme"
[[device]]
name = "zram0"
preset = "zram"
[fs]
device = "disk"
[[swap.area]]
device = "zram0"
size = "64M"
[[cgroup]]
name = "box"
"memory.max" = "48M"
[[object]]
name = "anon"
kind = "anon"
size = "32M"
[[object]]
name = "data"
kind = "file"
size = "32M"
[[task]]
name = "anon"
cgroup = "box"
[[task.phase]]
access = "touch-write"
object = "anon"
pattern = "sequential"
[[task.phase]]
access = "touch"
object = "anon"
pattern = "random"
ops = 4000
[[task]]
name = "reader"
cgroup = "box"
[[task.phase]]
access = "read"
object = "data"
pattern = "sequential"
pages_per_op = 8
"#;

/// The executor consumes exactly the simulator's event stream: per task instance, the ops it
/// would execute equal, in order, the ops the simulation consumed.
#[test]
fn executor_sequence_equals_simulator_sequence() {
    let scn = scenario(SMALL);
    let recorded = exec::record_ops(&scn);
    let mut simulated: Vec<Vec<Op>> = vec![Vec::new(); recorded.len()];
    let mut trace = |t: u32, op: Op| simulated[t as usize].push(op);
    let opts = refault_sim::RunOptions {
        trace: Some(&mut trace),
        ..Default::default()
    };
    refault_sim::run(&scn, opts).unwrap();
    assert_eq!(recorded.len(), 2);
    for (i, (r, s)) in recorded.iter().zip(&simulated).enumerate() {
        assert_eq!(r.len(), s.len(), "task {i}: event counts differ");
        if let Some(k) = r.iter().zip(s).position(|(a, b)| a != b) {
            panic!(
                "task {i}: event {k} differs: executor {:?}, simulator {:?}",
                r[k], s[k]
            );
        }
    }
}

fn leftovers(pid: u32) -> Vec<String> {
    let mut out = Vec::new();
    for root in ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"] {
        if let Ok(rd) = std::fs::read_dir(root) {
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with(&format!("refault-twin-{pid}")) {
                    out.push(format!("{root}/{n}"));
                }
            }
        }
    }
    for s in host::active_swaps() {
        if s.contains("refault-twin") {
            out.push(s);
        }
    }
    out
}

/// Live-kernel tests run one at a time (they share the host's memory and swap).
static LIVE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn can_run() -> bool {
    match host::preflight() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipping the live-kernel test: {e}");
            false
        }
    }
}

/// A real run on this host, then nothing left behind: cgroups, swap, files.
#[test]
fn twin_runs_and_cleans_up() {
    if !can_run() {
        return;
    }
    let _g = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let base = std::env::temp_dir().join("refault-twin-test-ok");
    let swaps = host::active_swaps();
    let r = twin(&scenario(SMALL), RunPlan::fixed(2), SwapKind::Zram, &base).unwrap();
    assert!(r.real[0]["pgfault"] > 8000, "the workload did not run");
    // Two runs, each in fresh cgroups: the second's memory.stat counts only its own run
    // (the 32 MiB region's first touches charge the same pages again).
    assert_eq!(r.runs, 2);
    let charged = |m: &std::collections::BTreeMap<String, u64>| {
        m.iter()
            .filter(|(k, _)| k.ends_with(".pgpgin"))
            .map(|(_, v)| *v)
            .sum::<u64>()
    };
    let (c0, c1) = (charged(&r.memcg_stat[0]), charged(&r.memcg_stat[1]));
    assert!(c0 > 8000 && c1 > 8000, "{c0} {c1}");
    assert!(
        c1 < c0 * 3 / 2,
        "the second run's cgroup counted the first run: {c0} {c1}"
    );
    // Every task's time was measured, in the real runs and in the simulation.
    assert_eq!(r.real_task_seconds.len(), 2);
    assert!(r.real_task_seconds[1].iter().all(|(_, t)| *t > 0.0));
    assert!(r.simulated_task_seconds.iter().all(|(_, t)| *t > 0.0));
    assert!(r.rows.iter().any(|x| x.counter == "pswpout"));
    assert_eq!(leftovers(std::process::id()), Vec::<String>::new());
    assert_eq!(host::active_swaps(), swaps);
    assert!(std::fs::read_dir(&base)
        .map(|d| d.count() == 0)
        .unwrap_or(true));
}

/// A workload that dies (here: OOM-killed in a cgroup too small, without swap) makes the run
/// fail, and the cleanup still removes everything.
#[test]
fn cleanup_after_the_workload_is_killed() {
    if !can_run() {
        return;
    }
    let _g = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let tiny = SMALL.replace("\"48M\"", "\"8M\"");
    let base = std::env::temp_dir().join("refault-twin-test-kill");
    let swaps = host::active_swaps();
    let e = twin(&scenario(&tiny), RunPlan::fixed(1), SwapKind::None, &base).unwrap_err();
    assert!(e.contains("failed"), "{e}");
    assert_eq!(leftovers(std::process::id()), Vec::<String>::new());
    assert_eq!(host::active_swaps(), swaps);
}

#[test]
fn relative_error_is_against_the_kernel() {
    assert_eq!(relative_error(0.0, 0.0), 0.0);
    assert_eq!(relative_error(100.0, 150.0), 0.5);
    assert_eq!(relative_error(0.0, 3.0), 3.0);
}

#[test]
fn v1_activation_estimate_is_capped_by_what_our_cgroups_can_have_activated() {
    use crate::v1_activate_file_bound;
    // Host noise only: our cgroups refaulted nothing.
    assert_eq!(v1_activate_file_bound(74, 0, 0, 0), 0);
    // Refaults, but nothing active at the end and nothing deactivated: none activated.
    assert_eq!(v1_activate_file_bound(521, 521, 0, 0), 0);
    // A thrashing cache: the global count is below both bounds and is kept.
    assert_eq!(v1_activate_file_bound(5120, 7155, 9000, 4000), 5120);
}

#[test]
fn v1_pswpout_is_capped_by_anon_scanned() {
    use crate::v1_pswpout_bound;
    // DAMON paged out 42 pages of another cgroup's shmem; our cgroup scanned no anon.
    assert_eq!(v1_pswpout_bound(42, 0), 0);
    // Our swapping cgroup: everything written was scanned first.
    assert_eq!(v1_pswpout_bound(3218, 13256), 3218);
}

#[test]
fn factor_of_two_allows_for_the_kernel_means_uncertainty() {
    // Stable counts: 2x either way is the line.
    assert!(!off_by_2x(6588.0, 9.0, 6451.0));
    assert!(off_by_2x(6588.0, 9.0, 3000.0));
    assert!(off_by_2x(6588.0, 9.0, 14000.0));
    // A few pages in some runs: a simulated 0 is consistent.
    assert!(!off_by_2x(4.3, 2.7, 0.0));
    assert!(!off_by_2x(1.0, 0.0, 0.0));
    // A bimodal mean with a wide standard error (f08's activations over 300 runs).
    assert!(!off_by_2x(514.0, 173.0, 688.0));
    assert!(off_by_2x(514.0, 173.0, 3000.0));
    // A kernel zero against a large simulated count.
    assert!(off_by_2x(0.0, 0.0, 688.0));
}

#[test]
fn mean_and_standard_error() {
    assert_eq!(mean_sem(&[]), (0.0, 0.0));
    assert_eq!(mean_sem(&[7]), (7.0, 0.0));
    // 0, 2, 4: mean 2, sample variance 4, sem = sqrt(4 / 3).
    let (m, se) = mean_sem(&[0, 2, 4]);
    assert_eq!(m, 2.0);
    assert!((se - (4.0f64 / 3.0).sqrt()).abs() < 1e-12);
}

#[test]
fn run_plan_stops_when_the_means_are_known() {
    let run = |a: u64| -> Counters { KEY_COUNTERS.iter().map(|k| (k.to_string(), a)).collect() };
    let plan = RunPlan {
        min: 2,
        max: 10,
        rel_sem: 0.15,
        max_seconds: Some(60.0),
    };
    assert!(!plan.satisfied(&[run(1000)], 1.0), "below min");
    assert!(plan.satisfied(&[run(1000), run(1010)], 1.0), "tight");
    // Bimodal (0 or 20480): the mean is not known after 3 runs.
    assert!(!plan.satisfied(&[run(0), run(0), run(20480)], 1.0));
    // ... and never more than max runs.
    let many: Vec<Counters> = (0..10)
        .map(|i| run(if i == 3 { 20480 } else { 0 }))
        .collect();
    assert!(plan.satisfied(&many, 1.0));
    // ... nor past the time budget.
    assert!(plan.satisfied(&[run(0), run(0), run(20480)], 61.0));
    // Counts of a page or two are close enough.
    assert!(plan.satisfied(&[run(0), run(2), run(0)], 1.0));
    assert!(RunPlan::fixed(1).satisfied(&[run(0)], 1.0));
}

/// The simulation is run once per flusher phase; without the flush modelled, once.
#[test]
fn simulation_is_averaged_over_flush_phases() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fidelity/f04-thrash-sw100.toml"),
    )
    .unwrap();
    let scn = scenario(&text);
    let s = crate::simulate_over_flush_phases(&scn).unwrap();
    for (k, &m) in &s.mean {
        assert!(s.min[k] <= m && m <= s.max[k], "{k}");
    }
    let w: f64 = s.phases.iter().map(|p| p.1).sum();
    assert!((w - 1.0).abs() < 1e-9, "phase weights sum to {w}");
    // The phase decides whether limit reclaim starts before the first flush (anon scanned).
    assert!(s.min["pgscan_anon"] < s.max["pgscan_anon"]);
    let mut exact = scn.clone();
    exact.model.memcg_stats_flush_ns = 0;
    let e = crate::simulate_over_flush_phases(&exact).unwrap();
    assert_eq!(e.min, e.max);
}

/// A run shorter than the flush period: the phases that fall after its end all give the run
/// without a flush, which is sampled once and weighted by their share of the period.
#[test]
fn short_runs_weight_the_flush_free_outcome() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fidelity/f08-file-transition.toml"),
    )
    .unwrap();
    let scn = scenario(&text);
    let s = crate::simulate_over_flush_phases(&scn).unwrap();
    let period = scn.model.memcg_stats_flush_ns;
    assert_eq!(s.phases.len() as u64, crate::FLUSH_PHASES + 1);
    let (last_phase, w_none) = *s.phases.last().unwrap();
    assert_eq!(last_phase, Some(period));
    assert!(w_none > 0.5 && w_none < 1.0, "{w_none}");
    // The sampled phases lie inside the run, evenly spaced.
    let inner: Vec<u64> = s.phases[..s.phases.len() - 1]
        .iter()
        .map(|p| p.0.unwrap())
        .collect();
    let t = (1.0 - w_none) * period as f64;
    assert!(inner.iter().all(|&p| (p as f64) < t));
    assert_eq!(inner[1] - inner[0], inner[2] - inner[1]);
}

/// The simulation's phase dependence sizes the real sample: f08's activations change only
/// when the first flush lands inside the short run.
#[test]
fn rare_phase_outcomes_ask_for_more_runs() {
    let mk = |vals: &[(f64, u64)]| SimCounters {
        mean: Counters::new(),
        min: Counters::new(),
        max: Counters::new(),
        phases: vals.iter().map(|&(w, _)| (None, w)).collect(),
        per_phase: vals
            .iter()
            .map(|&(_, v)| [("workingset_activate_file".to_string(), v)].into())
            .collect(),
        task_seconds: Vec::new(),
    };
    // Every phase agrees: nothing to plan for.
    let same = mk(&[(0.5, 100), (0.5, 150)]);
    assert_eq!(minority_share(&same, "workingset_activate_file"), 0.0);
    assert_eq!(runs_for_rare_outcomes(&same), (0, None));
    // 5% of phases activate 20000 pages, the rest none: 10 / 0.05 = 200 runs.
    let rare = mk(&[(0.95, 0), (0.025, 20000), (0.025, 15000)]);
    assert!((minority_share(&rare, "workingset_activate_file") - 0.05).abs() < 1e-12);
    assert_eq!(
        runs_for_rare_outcomes(&rare),
        (200, Some("workingset_activate_file"))
    );
    // f08 as simulated: a minority of a few percent of the phases.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fidelity/f08-file-transition.toml"),
    )
    .unwrap();
    let s = crate::simulate_over_flush_phases(&scenario(&text)).unwrap();
    let p = minority_share(&s, "workingset_activate_file");
    assert!(p > 0.01 && p < 0.2, "{p}");
}
