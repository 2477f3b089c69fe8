//! refault-twin: the live-kernel twin. The same scenario the simulator runs is executed for
//! real in memory cgroups on this host, its /proc/vmstat counters measured over N runs, and
//! compared with the simulation's.
//!
//! Everything the twin creates — memory cgroups, a zram device or swap file, the scenario's
//! files, the worker processes — is owned by a [`Setup`] whose `Drop` removes it, so a
//! failing workload, an error or Ctrl-C (SIGINT/SIGTERM set a flag the wait loop polls)
//! leaves the host as it was; the swap areas active before are restored exactly.
//!
//! Where the host differs from the model (documented in docs/fidelity.md): the host is a
//! machine with much more memory than the scenario's, so every task runs inside a memory
//! cgroup — the scenario's own, or one limited to `machine.memory` for tasks the scenario
//! leaves in the root cgroup — and only memcg limit reclaim happens, as in the simulation of
//! a cgroup below its machine's size.

pub mod exec;
pub mod host;

use exec::{create_file, drop_cache, file_path, Objects};
use refault_scenario::{ObjectKind, Scenario};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT/SIGTERM; the wait loop stops the workload and unwinds into cleanup.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

fn install_signal_handlers() {
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SwapKind {
    Zram,
    File,
    None,
}

impl std::str::FromStr for SwapKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "zram" => Ok(SwapKind::Zram),
            "file" => Ok(SwapKind::File),
            "none" => Ok(SwapKind::None),
            _ => Err(format!("--swap must be zram, file or none, not `{s}`")),
        }
    }
}

/// Everything the twin created, removed on drop.
pub struct Setup {
    pub host: host::Host,
    pub workdir: PathBuf,
    /// Memory cgroup directories created, one per scenario cgroup (+1 for root tasks).
    pub cgroups: Vec<PathBuf>,
    swap_dev: Option<String>,
    zram_id: Option<u32>,
    swap_file: Option<PathBuf>,
    pub children: Vec<libc::pid_t>,
    swaps_before: Vec<String>,
    /// `/sys/kernel/mm/lru_gen/{enabled,min_ttl_ms}` as they were, restored on cleanup.
    lru_gen_before: Option<(String, String)>,
}

const LRU_GEN_ENABLED: &str = "/sys/kernel/mm/lru_gen/enabled";
const LRU_GEN_MIN_TTL: &str = "/sys/kernel/mm/lru_gen/min_ttl_ms";

impl Setup {
    fn cleanup(&mut self) {
        if let Some((enabled, ttl)) = self.lru_gen_before.take() {
            let _ = std::fs::write(LRU_GEN_MIN_TTL, ttl.trim());
            let _ = std::fs::write(LRU_GEN_ENABLED, enabled.trim());
        }
        for &pid in &self.children {
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
        self.children.clear();
        if let Some(dev) = self.swap_dev.take() {
            let c = exec::cstr(&dev);
            unsafe { libc::swapoff(c.as_ptr()) };
        }
        if let Some(id) = self.zram_id.take() {
            let _ = std::fs::write(format!("/sys/block/zram{id}/reset"), "1");
            let _ = std::fs::write("/sys/class/zram-control/hot_remove", id.to_string());
        }
        if let Some(f) = self.swap_file.take() {
            let _ = std::fs::remove_file(f);
        }
        for cg in self.cgroups.drain(..) {
            // The workers are gone; a memcg may take a moment to release.
            for _ in 0..50 {
                if std::fs::remove_dir(&cg).is_ok() || !cg.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        let _ = std::fs::remove_dir_all(&self.workdir);
        // Anything we swapped on and did not turn off yet (defensive): restore the set.
        for s in host::active_swaps() {
            if !self.swaps_before.contains(&s) && s.contains("refault-twin") {
                let c = exec::cstr(&s);
                unsafe { libc::swapoff(c.as_ptr()) };
            }
        }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        self.cleanup();
    }
}

fn run_cmd(cmd: &str, args: &[&str]) -> Result<(), String> {
    let o = std::process::Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("running {cmd}: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    Ok(())
}

fn write(p: &Path, v: &str) -> Result<(), String> {
    std::fs::write(p, v).map_err(|e| format!("writing {v} to {}: {e}", p.display()))
}

/// Prepare the host for `scn`: work directory and files, cgroups, swap.
pub fn setup(scn: &Scenario, swap: SwapKind, base: &Path) -> Result<Setup, String> {
    let host = host::preflight()?;
    // From here on Ctrl-C must unwind through Setup's Drop, not kill the process.
    install_signal_handlers();
    let interrupted = || {
        if INTERRUPTED.load(Ordering::SeqCst) {
            Err("interrupted".to_string())
        } else {
            Ok(())
        }
    };
    if scn.policy.lru == refault_scenario::LruKind::Mglru && !host.lru_gen {
        return Err(format!(
            "the scenario asks for the multi-gen LRU, but this kernel ({}) has no CONFIG_LRU_GEN (/sys/kernel/mm/lru_gen missing)",
            host.kernel
        ));
    }
    if swap == SwapKind::Zram && !host.zram {
        return Err(
            "--swap zram: this kernel has no zram (/sys/class/zram-control missing)".into(),
        );
    }
    static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let pid = format!(
        "{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::SeqCst)
    );
    let mut s = Setup {
        workdir: base.join(format!("refault-twin-{pid}")),
        host,
        cgroups: Vec::new(),
        swap_dev: None,
        zram_id: None,
        swap_file: None,
        children: Vec::new(),
        swaps_before: host::active_swaps(),
        lru_gen_before: None,
    };
    if s.host.lru_gen {
        // The host has CONFIG_LRU_GEN: run the LRU the scenario asks for (a kernel that
        // enables the multi-gen LRU by default must be switched off for a classic scenario),
        // with its min_ttl_ms, and put both back afterwards.
        let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("reading {p}: {e}"));
        s.lru_gen_before = Some((read(LRU_GEN_ENABLED)?, read(LRU_GEN_MIN_TTL)?));
        let mglru = scn.policy.lru == refault_scenario::LruKind::Mglru;
        write(Path::new(LRU_GEN_ENABLED), if mglru { "y" } else { "n" })?;
        write(
            Path::new(LRU_GEN_MIN_TTL),
            &scn.policy.lru_gen_min_ttl_ms.to_string(),
        )?;
    }
    std::fs::create_dir_all(&s.workdir).map_err(|e| format!("{}: {e}", s.workdir.display()))?;
    for o in scn.objects.iter().filter(|o| o.kind == ObjectKind::File) {
        create_file(&file_path(&s.workdir, &o.name), o.size_pages, o.exists)
            .map_err(|e| format!("creating {}: {e}", o.name))?;
        interrupted()?;
    }
    // One cgroup per scenario cgroup, plus one standing in for the machine (root tasks).
    let mut limits: Vec<(String, u64, u32)> = scn
        .cgroups
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                c.memory_max_pages.unwrap_or(scn.machine.memory_pages),
                c.swappiness.unwrap_or(scn.sysctl.swappiness),
            )
        })
        .collect();
    limits.push((
        "machine".into(),
        scn.machine.memory_pages,
        scn.sysctl.swappiness,
    ));
    for (name, pages, swappiness) in limits {
        let dir = s
            .host
            .cgroup_root
            .join(format!("refault-twin-{pid}-{name}"));
        std::fs::create_dir(&dir).map_err(|e| format!("creating cgroup {}: {e}", dir.display()))?;
        s.cgroups.push(dir.clone());
        let bytes = (pages * 4096).to_string();
        match s.host.cgroup {
            host::CgroupVersion::V1 => {
                write(&dir.join("memory.limit_in_bytes"), &bytes)?;
                write(&dir.join("memory.swappiness"), &swappiness.to_string())?;
            }
            host::CgroupVersion::V2 => {
                write(&dir.join("memory.max"), &bytes)?;
                let _ = write(&dir.join("memory.swap.max"), "max");
            }
        }
    }
    let swap_pages: u64 = scn.swap.iter().map(|a| a.size_pages).sum();
    if swap != SwapKind::None && swap_pages > 0 {
        let dev = match swap {
            SwapKind::Zram => {
                let id: u32 = std::fs::read_to_string("/sys/class/zram-control/hot_add")
                    .map_err(|e| format!("zram hot_add: {e}"))?
                    .trim()
                    .parse()
                    .map_err(|e| format!("zram hot_add: {e}"))?;
                s.zram_id = Some(id);
                write(
                    Path::new(&format!("/sys/block/zram{id}/disksize")),
                    &(swap_pages * 4096).to_string(),
                )?;
                format!("/dev/zram{id}")
            }
            SwapKind::File => {
                let f = s.workdir.join("swapfile");
                create_file(&f, swap_pages, true).map_err(|e| format!("swap file: {e}"))?;
                s.swap_file = Some(f.clone());
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600));
                f.display().to_string()
            }
            SwapKind::None => unreachable!(),
        };
        run_cmd("mkswap", &[&dev])?;
        let c = exec::cstr(&dev);
        if unsafe { libc::swapon(c.as_ptr(), 0) } != 0 {
            return Err(format!("swapon {dev}: {}", std::io::Error::last_os_error()));
        }
        s.swap_dev = Some(dev);
    }
    interrupted()?;
    Ok(s)
}

/// One real run: fork every task instance into its cgroup, wait, and return the vmstat
/// deltas and the cgroups' memory.stat.
/// Counter name → value.
pub type Counters = BTreeMap<String, u64>;

pub fn run_once(scn: &Scenario, s: &mut Setup) -> Result<(Counters, Counters), String> {
    install_signal_handlers();
    if INTERRUPTED.load(Ordering::SeqCst) {
        return Err("interrupted".into());
    }
    for o in scn.objects.iter().filter(|o| o.kind == ObjectKind::File) {
        let p = file_path(&s.workdir, &o.name);
        if !o.exists {
            create_file(&p, o.size_pages, false).map_err(|e| format!("{}: {e}", p.display()))?;
        }
        drop_cache(&p).map_err(|e| format!("dropping {} from the cache: {e}", p.display()))?;
    }
    let objs = Objects::open(scn, &s.workdir).map_err(|e| format!("opening objects: {e}"))?;
    let sources = refault_workload::task_sources(scn);
    let n_tasks = sources.len() as u32;
    // A shared page where finished workers count themselves (they then keep their memory
    // until the run ends, as finished tasks do in the simulation).
    let shared = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if shared == libc::MAP_FAILED {
        return Err(format!("mmap: {}", std::io::Error::last_os_error()));
    }
    struct Unmap(*mut libc::c_void);
    impl Drop for Unmap {
        fn drop(&mut self) {
            unsafe { libc::munmap(self.0, 4096) };
        }
    }
    let _unmap = Unmap(shared);
    let done = unsafe { &*(shared as *const std::sync::atomic::AtomicU32) };
    done.store(0, Ordering::SeqCst);
    let machine_cg = s.cgroups.last().cloned().expect("machine cgroup");
    let before = host::read_vmstat();
    // The cgroups live across runs: their memory.stat event counters are taken as deltas.
    let stat_before: Vec<String> = s
        .cgroups
        .iter()
        .map(|cg| std::fs::read_to_string(cg.join("memory.stat")).unwrap_or_default())
        .collect();
    let t0 = {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    };
    for mut src in sources {
        let cg = match src.cgroup {
            Some(i) => s.cgroups[i].clone(),
            None => machine_cg.clone(),
        };
        let procs = cg.join("cgroup.procs");
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(format!("fork: {}", std::io::Error::last_os_error()));
        }
        if pid == 0 {
            exec::child_main(&mut src, &objs, Some(&procs), t0, done);
        }
        s.children.push(pid);
    }
    // Wait until every worker has finished its stream (or the scenario's duration passed);
    // a worker that exits before that failed (OOM kill, executor error).
    let deadline = if scn.run.duration_ns > 0 {
        Some(std::time::Instant::now() + std::time::Duration::from_nanos(scn.run.duration_ns))
    } else {
        None
    };
    loop {
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Err("interrupted".into());
        }
        if done.load(Ordering::SeqCst) >= n_tasks
            || deadline.is_some_and(|d| std::time::Instant::now() >= d)
        {
            break;
        }
        let mut status = 0;
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid > 0 {
            s.children.retain(|&c| c != pid);
            return Err(format!(
                "worker {pid} failed (wait status {status:#x}): OOM-killed or an executor error"
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let after = host::read_vmstat();
    let b: BTreeMap<_, _> = before.into_iter().collect();
    let mut delta: Counters = after
        .into_iter()
        .map(|(k, v)| {
            let d = v.saturating_sub(*b.get(&k).unwrap_or(&0));
            (k, d)
        })
        .collect();
    let mut memstat = BTreeMap::new();
    let stat_now: Vec<String> = s
        .cgroups
        .iter()
        .map(|cg| std::fs::read_to_string(cg.join("memory.stat")).unwrap_or_default())
        .collect();
    // End the workers (they were holding their memory, as finished tasks do).
    for &pid in &s.children {
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
    s.children.clear();
    // Counters the memory cgroups keep themselves are immune to the rest of the host: use
    // them (summed over our fresh cgroups) instead of the global deltas where they exist.
    for key in [
        "workingset_refault_anon",
        "workingset_refault_file",
        "workingset_activate_file",
        "pgmajfault",
    ] {
        let mut sum = None;
        for (text, old) in stat_now.iter().zip(&stat_before) {
            let get = |t: &str| host::parse_kv(t).into_iter().find(|(k, _)| k == key);
            if let Some((_, v)) = get(text) {
                let v0 = get(old).map_or(0, |(_, v)| v);
                *sum.get_or_insert(0) += v.saturating_sub(v0);
            }
        }
        if let Some(v) = sum {
            delta.insert(key.to_string(), v);
        } else if key == "workingset_activate_file" {
            let active_file: u64 = stat_now
                .iter()
                .filter_map(|t| {
                    host::parse_kv(t)
                        .into_iter()
                        .find(|(k, _)| k == "active_file")
                })
                .map(|(_, v)| v / 4096)
                .sum();
            let v = v1_activate_file_bound(
                delta.get(key).copied().unwrap_or(0),
                delta.get("workingset_refault_file").copied().unwrap_or(0),
                active_file,
                delta.get("pgdeactivate").copied().unwrap_or(0),
            );
            delta.insert(key.to_string(), v);
        }
    }
    for (i, text) in stat_now.iter().enumerate() {
        let name = scn
            .cgroups
            .get(i)
            .map(|c| c.name.as_str())
            .unwrap_or("machine");
        for (k, v) in host::parse_kv(text) {
            if !k.starts_with("total_") && !k.starts_with("hierarchical_") {
                memstat.insert(format!("{name}.{k}"), v);
            }
        }
    }
    Ok((delta, memstat))
}

/// workingset_activate_file of our cgroups on cgroup v1, whose memory.stat has no
/// activation counter: the global delta, which moves with the rest of the host (here other
/// cgroups' reads of long-evicted files add hundreds a second while this host is otherwise
/// idle), capped by two bounds that hold for our cgroups. An activation is a refault charged
/// to the refaulting task's memcg (`workingset_refault()`), so at most our own file refaults.
/// An activated refault is added to the active list, which it leaves only by deactivation
/// (counted in the global pgdeactivate) or by being freed (no file page is truncated or
/// dropped during a run), so at most our cgroups' active_file pages at the end plus the
/// run's pgdeactivate.
pub fn v1_activate_file_bound(
    global: u64,
    own_file_refaults: u64,
    active_file_pages_at_end: u64,
    pgdeactivate: u64,
) -> u64 {
    global
        .min(own_file_refaults)
        .min(active_file_pages_at_end + pgdeactivate)
}

/// The event counters compared (gauges and counters the model does not produce are left out).
pub const KEY_COUNTERS: [&str; 10] = [
    "workingset_refault_file",
    "workingset_refault_anon",
    "workingset_activate_file",
    "pswpin",
    "pswpout",
    "pgsteal_file",
    "pgsteal_anon",
    "pgscan_file",
    "pgscan_anon",
    "pgmajfault",
];

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub counter: String,
    pub real_mean: f64,
    pub real_min: u64,
    pub real_max: u64,
    pub simulated: u64,
    /// The simulation's min and max over the flusher phases ([`simulate_over_flush_phases`]).
    pub simulated_min: u64,
    pub simulated_max: u64,
    pub relative_error: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct TwinReport {
    pub scenario: String,
    pub kernel: String,
    pub cgroup: host::CgroupVersion,
    pub swap: SwapKind,
    pub runs: usize,
    pub rows: Vec<Row>,
    pub real: Vec<BTreeMap<String, u64>>,
    pub memcg_stat: Vec<BTreeMap<String, u64>>,
    pub simulated: BTreeMap<String, u64>,
}

/// Relative error of the simulation against the kernel's mean (0 when both are 0).
pub fn relative_error(real_mean: f64, simulated: f64) -> f64 {
    if real_mean == 0.0 && simulated == 0.0 {
        0.0
    } else {
        (simulated - real_mean).abs() / real_mean.max(1.0)
    }
}

/// Run `scn` `runs` times for real and once simulated, and compare.
pub fn twin(
    scn: &Scenario,
    runs: usize,
    swap: SwapKind,
    base: &Path,
) -> Result<TwinReport, String> {
    let mut s = setup(scn, swap, base)?;
    let mut real = Vec::new();
    let mut memcg = Vec::new();
    for _ in 0..runs.max(1) {
        let (d, m) = run_once(scn, &mut s)?;
        real.push(d);
        memcg.push(m);
    }
    let kernel = s.host.kernel.clone();
    let cgroup = s.host.cgroup.clone();
    drop(s);
    let sim = simulate_over_flush_phases(scn)?;
    let mut rows = Vec::new();
    for (name, &simv) in &sim.mean {
        if name.starts_with("nr_") || !real[0].contains_key(name) {
            continue;
        }
        let vals: Vec<u64> = real.iter().map(|r| r[name]).collect();
        let mean = vals.iter().sum::<u64>() as f64 / vals.len() as f64;
        rows.push(Row {
            counter: name.clone(),
            real_mean: mean,
            real_min: *vals.iter().min().unwrap(),
            real_max: *vals.iter().max().unwrap(),
            simulated: simv,
            simulated_min: sim.min[name],
            simulated_max: sim.max[name],
            relative_error: relative_error(mean, simv as f64),
        });
    }
    Ok(TwinReport {
        scenario: scn.name.clone(),
        kernel,
        cgroup,
        swap,
        runs: real.len(),
        rows,
        real,
        memcg_stat: memcg,
        simulated: sim.mean.clone(),
    })
}

/// Phases of the memcg statistics flusher the simulation is averaged over.
pub const FLUSH_PHASES: u64 = 4;

/// The simulation's counters: mean (rounded), min and max over runs whose first memcg
/// statistics flush lands at (2k + 1) / 8 of the flush period, k = 0..3 (one run when the
/// flush is not modelled). The kernel's flusher (`flush_memcg_stats_dwork()`) runs at a phase
/// unrelated to the workload and reclaim reads statistics as of its last flush, so each real
/// run samples one phase; the simulation's mean over evenly spread phases is what the
/// kernel's mean over runs estimates.
pub struct SimCounters {
    pub mean: Counters,
    pub min: Counters,
    pub max: Counters,
}

pub fn simulate_over_flush_phases(scn: &Scenario) -> Result<SimCounters, String> {
    let period = scn.model.memcg_stats_flush_ns;
    let phases: Vec<Option<u64>> = if period == 0 {
        vec![None]
    } else {
        (0..FLUSH_PHASES)
            .map(|k| Some((2 * k + 1) * period / (2 * FLUSH_PHASES)))
            .collect()
    };
    let mut runs = Vec::new();
    for first in &phases {
        let mut s = scn.clone();
        if let Some(f) = first {
            s.model.memcg_stats_first_flush_ns = *f;
        }
        let r = refault_sim::run(&s, Default::default()).map_err(|e| e.to_string())?;
        runs.push(r.vmstat);
    }
    let mut out = SimCounters {
        mean: Counters::new(),
        min: Counters::new(),
        max: Counters::new(),
    };
    let n = runs.len() as u64;
    for name in runs
        .iter()
        .flat_map(|r| r.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let vals: Vec<u64> = runs
            .iter()
            .map(|r| r.get(name).copied().unwrap_or(0))
            .collect();
        let sum: u64 = vals.iter().sum();
        out.mean.insert(name.clone(), (sum + n / 2) / n);
        out.min.insert(name.clone(), *vals.iter().min().unwrap());
        out.max.insert(name.clone(), *vals.iter().max().unwrap());
    }
    Ok(out)
}

/// The comparison as a table (key counters first, then the others that are non-zero).
pub fn render(r: &TwinReport) -> String {
    let mut out = format!(
        "{} on Linux {} (cgroup {:?}, swap {:?}, {} runs)\n{:<28} {:>12} {:>23} {:>12} {:>9}\n",
        r.scenario,
        r.kernel,
        r.cgroup,
        r.swap,
        r.runs,
        "counter",
        "kernel mean",
        "kernel min-max",
        "simulated",
        "error"
    );
    let key = |c: &str| {
        KEY_COUNTERS
            .iter()
            .position(|k| *k == c)
            .unwrap_or(usize::MAX)
    };
    let mut rows: Vec<&Row> = r
        .rows
        .iter()
        .filter(|x| key(&x.counter) != usize::MAX || x.real_mean > 0.0 || x.simulated > 0)
        .collect();
    rows.sort_by_key(|x| (key(&x.counter), x.counter.clone()));
    for x in rows {
        out += &format!(
            "{:<28} {:>12.0} {:>23} {:>12} {:>8.1}%\n",
            x.counter,
            x.real_mean,
            format!("{}-{}", x.real_min, x.real_max),
            x.simulated,
            x.relative_error * 100.0
        );
    }
    out
}

#[cfg(test)]
mod tests;
