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
pub mod lrugen;
pub mod state;
pub mod vm;

use exec::{create_file, drop_cache, file_path, Objects};
use refault_scenario::{ObjectKind, Scenario};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT/SIGTERM/SIGHUP while the twin holds host resources; the wait loop stops
/// the workload and unwinds into cleanup.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

const CAUGHT: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// While resources exist, a signal that would end the process (Ctrl-C, `kill`, the terminal
/// going away) only sets [`INTERRUPTED`], so that the process unwinds through cleanup.
pub(crate) fn install_signal_handlers() {
    for sig in CAUGHT {
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
}

/// Once nothing is held (the simulation, the report), the signals end the process at once
/// again, as in every other command: a Ctrl-C while simulating after the real runs (the
/// next scenario of `refault fidelity`) was otherwise only noticed at the next setup.
pub(crate) fn restore_signal_handlers() {
    for sig in CAUGHT {
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
}

/// Err("interrupted") once a caught signal has arrived.
pub fn check_interrupted() -> Result<(), String> {
    if INTERRUPTED.load(Ordering::SeqCst) {
        Err("interrupted".to_string())
    } else {
        Ok(())
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
    /// The memory cgroups of the current run, one per scenario cgroup (+1 for root tasks).
    /// Every run gets fresh ones ([`Setup::create_run_cgroups`]).
    pub cgroups: Vec<PathBuf>,
    /// (name, limit in pages, swappiness) of each cgroup a run creates.
    cgroup_specs: Vec<(String, u64, u32)>,
    /// Unique to this twin: `<pid>-<sequence>`, in every name it creates.
    tag: String,
    runs_started: u32,
    /// The host's DAMON pageout schemes (`kdamond` directories), measured as noise.
    damon: Vec<PathBuf>,
    swap_dev: Option<String>,
    zram_id: Option<u32>,
    swap_file: Option<PathBuf>,
    pub children: Vec<libc::pid_t>,
    swaps_before: Vec<String>,
    /// `/sys/kernel/mm/lru_gen/{enabled,min_ttl_ms}` as they were, restored on cleanup.
    lru_gen_before: Option<(String, String)>,
    /// `--workdir` when this run created it (only its last component): removed if empty.
    created_base: Option<PathBuf>,
    /// What this run creates, written down before each resource exists ([`state`]).
    state: Option<state::StateFile>,
    /// The VM twin's guest: tasks the scenario leaves in the root cgroup run in the root
    /// cgroup (the whole machine) and the counters are the global ones.
    whole_machine: bool,
}

pub(crate) const LRU_GEN_ENABLED: &str = "/sys/kernel/mm/lru_gen/enabled";
pub(crate) const LRU_GEN_MIN_TTL: &str = "/sys/kernel/mm/lru_gen/min_ttl_ms";

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
        self.remove_cgroups();
        let _ = std::fs::remove_dir_all(&self.workdir);
        if let Some(b) = self.created_base.take() {
            let _ = std::fs::remove_dir(b);
        }
        // Anything we swapped on and did not turn off yet (defensive): restore the set.
        for s in host::active_swaps() {
            if !self.swaps_before.contains(&s) && s.contains("refault-twin") {
                let c = exec::cstr(&s);
                unsafe { libc::swapoff(c.as_ptr()) };
            }
        }
        if let Some(mut st) = self.state.take() {
            st.finish();
        }
    }

    /// Write `r` to the state file before creating it.
    fn record(&mut self, r: state::Resource) -> Result<(), String> {
        match &mut self.state {
            Some(s) => s.record(&r),
            None => Ok(()),
        }
    }
}

/// Remove what dead twin runs left behind (see [`state`]), saying what, on stderr.
/// Returns the lines said.
pub fn remove_leftovers(base: Option<&Path>) -> Vec<String> {
    let root = host::preflight().ok().map(|h| h.cgroup_root);
    let said = state::remove_dead_runs(base, root.as_deref());
    for l in &said {
        eprintln!("twin: removed what a dead twin run left: {l}");
    }
    said
}

/// The `--workdir` directory: used if it exists; its last component created (and removed
/// afterwards) if only that is missing; refused otherwise, so that a typo does not leave a
/// tree of directories behind. Returns whether it was created.
pub fn prepare_base(base: &Path) -> Result<bool, String> {
    if base.is_dir() {
        return Ok(false);
    }
    if base.exists() {
        return Err(format!("--workdir {}: not a directory", base.display()));
    }
    let parent = match base.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => return Err(format!("--workdir {}: no such directory", base.display())),
    };
    if !parent.is_dir() {
        return Err(format!(
            "--workdir {}: {} does not exist (only the last component is created)",
            base.display(),
            parent.display()
        ));
    }
    std::fs::create_dir(base).map_err(|e| format!("--workdir {}: {e}", base.display()))?;
    Ok(true)
}

impl Setup {
    /// Fresh memory cgroups for one run, so that every run starts as the simulation does:
    /// nothing charged, no event counted, and flushed statistics that read zero until the
    /// first periodic flush (`flush_memcg_stats_dwork()`). Reused cgroups carried the
    /// previous run's statistics, as of its last flush, into the next run's reclaim
    /// decisions.
    pub fn create_run_cgroups(&mut self) -> Result<(), String> {
        self.remove_cgroups();
        self.runs_started += 1;
        for (name, pages, swappiness) in self.cgroup_specs.clone() {
            let dir = self.host.cgroup_root.join(format!(
                "refault-twin-{}-r{}-{name}",
                self.tag, self.runs_started
            ));
            self.record(state::Resource::Cgroup(dir.clone()))?;
            std::fs::create_dir(&dir)
                .map_err(|e| format!("creating cgroup {}: {e}", dir.display()))?;
            self.cgroups.push(dir.clone());
            let bytes = (pages * 4096).to_string();
            match self.host.cgroup {
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
        Ok(())
    }

    /// Remove the run's cgroups (their tasks are gone; the page cache still charged to them
    /// is reparented by the kernel and dropped before the next run).
    fn remove_cgroups(&mut self) {
        for cg in self.cgroups.drain(..) {
            // The workers are gone; a memcg may take a moment to release.
            for _ in 0..50 {
                if std::fs::remove_dir(&cg).is_ok() || !cg.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        self.cleanup();
        restore_signal_handlers();
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
    setup_inner(scn, swap, base, false)
}

/// [`setup`] for the VM twin's guest, whose whole machine is the scenario's.
pub fn setup_whole_machine(scn: &Scenario, swap: SwapKind, base: &Path) -> Result<Setup, String> {
    setup_inner(scn, swap, base, true)
}

fn setup_inner(
    scn: &Scenario,
    swap: SwapKind,
    base: &Path,
    whole_machine: bool,
) -> Result<Setup, String> {
    let host = host::preflight()?;
    let interrupted = check_interrupted;
    remove_leftovers(Some(base));
    if let Some(t) = scn
        .tasks
        .iter()
        .find(|t| matches!(t.workload, refault_scenario::Workload::Kalloc(_)))
    {
        return Err(format!(
            "task `{}` has workload = \"kalloc\": kernel allocations cannot be made from user \
             space, so the twin cannot run this scenario",
            t.name
        ));
    }
    if let Some(t) = scn
        .tasks
        .iter()
        .find(|t| matches!(t.workload, refault_scenario::Workload::Process(_)))
    {
        return Err(format!(
            "task `{}` has workload = \"process\": the twin's executor has no fork/exit of \
             an object's address space, so it cannot run this scenario",
            t.name
        ));
    }
    if let Some(t) = scn.tasks.iter().find(|t| match &t.workload {
        refault_scenario::Workload::Phases { phases, .. } => phases
            .iter()
            .any(|p| p.access == refault_scenario::Access::Create),
        _ => false,
    }) {
        return Err(format!(
            "task `{}` has an access = \"create\" phase: the twin has no executor for file \
             creation yet, so it cannot run this scenario",
            t.name
        ));
    }
    if !scn.run.drop_caches.is_empty() {
        return Err(
            "the scenario has [[run.drop_caches]]: the twin does not write the host's \
             /proc/sys/vm/drop_caches (it would drop every cache of the machine, not only the \
             scenario's), so it cannot run this scenario"
                .to_string(),
        );
    }
    if !scn.run.sysctl_writes.is_empty() {
        return Err(
            "the scenario has [[run.sysctl]]: the twin does not change the host's sysctls \
             during a run (they are the whole machine's), so it cannot run this scenario"
                .to_string(),
        );
    }
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
        cgroup_specs: Vec::new(),
        tag: pid.clone(),
        runs_started: 0,
        damon: host::damon_pageout_kdamonds(),
        swap_dev: None,
        zram_id: None,
        swap_file: None,
        children: Vec::new(),
        swaps_before: host::active_swaps(),
        lru_gen_before: None,
        created_base: None,
        state: None,
        whole_machine,
    };
    // From here on Ctrl-C must unwind through Setup's Drop, not kill the process.
    install_signal_handlers();
    if prepare_base(base)? {
        s.created_base = Some(base.to_path_buf());
    }
    std::fs::create_dir(&s.workdir).map_err(|e| format!("{}: {e}", s.workdir.display()))?;
    let mut first = vec![state::Resource::WorkDir(s.workdir.clone())];
    if let Some(b) = &s.created_base {
        first.push(state::Resource::BaseDir(b.clone()));
    }
    s.state = Some(state::StateFile::create(&s.workdir, &first)?);
    if s.host.lru_gen {
        // The host has CONFIG_LRU_GEN: run the LRU the scenario asks for (a kernel that
        // enables the multi-gen LRU by default must be switched off for a classic scenario),
        // with its min_ttl_ms, and put both back afterwards.
        let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("reading {p}: {e}"));
        let before = (read(LRU_GEN_ENABLED)?, read(LRU_GEN_MIN_TTL)?);
        s.record(state::Resource::LruGen(before.0.clone(), before.1.clone()))?;
        s.lru_gen_before = Some(before);
        let mglru = scn.policy.lru == refault_scenario::LruKind::Mglru;
        write(Path::new(LRU_GEN_ENABLED), if mglru { "y" } else { "n" })?;
        write(
            Path::new(LRU_GEN_MIN_TTL),
            &scn.policy.lru_gen_min_ttl_ms.to_string(),
        )?;
    }
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
    if !whole_machine {
        limits.push((
            "machine".into(),
            scn.machine.memory_pages,
            scn.sysctl.swappiness,
        ));
    }
    s.cgroup_specs = limits;
    // Fail now, not halfway, if cgroups cannot be created here.
    s.create_run_cgroups()?;
    s.remove_cgroups();
    let swap_pages: u64 = scn.swap.iter().map(|a| a.size_pages).sum();
    if swap != SwapKind::None && swap_pages > 0 {
        let dev = match swap {
            SwapKind::Zram => {
                let id: u32 = std::fs::read_to_string("/sys/class/zram-control/hot_add")
                    .map_err(|e| format!("zram hot_add: {e}"))?
                    .trim()
                    .parse()
                    .map_err(|e| format!("zram hot_add: {e}"))?;
                // Reading hot_add creates the device and names it: recorded at once.
                s.record(state::Resource::Zram(id))?;
                s.zram_id = Some(id);
                write(
                    Path::new(&format!("/sys/block/zram{id}/disksize")),
                    &(swap_pages * 4096).to_string(),
                )?;
                format!("/dev/zram{id}")
            }
            SwapKind::File => {
                let f = s.workdir.join("swapfile");
                s.record(state::Resource::File(f.clone()))?;
                create_file(&f, swap_pages, true).map_err(|e| format!("swap file: {e}"))?;
                s.swap_file = Some(f.clone());
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600));
                f.display().to_string()
            }
            SwapKind::None => unreachable!(),
        };
        run_cmd("mkswap", &[&dev])?;
        s.record(state::Resource::Swap(dev.clone()))?;
        let c = exec::cstr(&dev);
        if unsafe { libc::swapon(c.as_ptr(), 0) } != 0 {
            return Err(format!("swapon {dev}: {}", std::io::Error::last_os_error()));
        }
        s.swap_dev = Some(dev);
    }
    interrupted()?;
    Ok(s)
}

/// Counter name → value.
pub type Counters = BTreeMap<String, u64>;

/// What one real run measured.
#[derive(Clone, Debug, Serialize)]
pub struct RealRun {
    /// /proc/vmstat deltas, with the counters our cgroups keep themselves taken from them
    /// instead ([`run_once`]).
    pub vmstat: Counters,
    /// The cgroups' memory.stat at the end (`<cgroup>.<key>`).
    pub memcg_stat: Counters,
    /// Each task instance's time from its start to the end of its event stream (seconds).
    pub task_seconds: Vec<(String, f64)>,
}

/// One real run in fresh cgroups: fork every task instance into its cgroup, wait, and
/// return the counters.
pub fn run_once(scn: &Scenario, s: &mut Setup) -> Result<RealRun, String> {
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
    s.create_run_cgroups()?;
    let mut objs = Objects::open(scn, &s.workdir).map_err(|e| format!("opening objects: {e}"))?;
    let sources = refault_workload::task_sources(scn);
    let n_tasks = sources.len();
    let names: Vec<String> = sources.iter().map(|t| t.name.clone()).collect();
    // A shared mapping where finished workers count themselves (word 0; they then keep
    // their memory until the run ends, as finished tasks do in the simulation) and note
    // when their stream ended (word 1 + i, ns after their start).
    let shared_len = (8 * (n_tasks + 1)).div_ceil(4096) * 4096;
    let shared = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            shared_len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if shared == libc::MAP_FAILED {
        return Err(format!("mmap: {}", std::io::Error::last_os_error()));
    }
    struct Unmap(*mut libc::c_void, usize);
    impl Drop for Unmap {
        fn drop(&mut self) {
            unsafe { libc::munmap(self.0, self.1) };
        }
    }
    let _unmap = Unmap(shared, shared_len);
    let words = unsafe {
        std::slice::from_raw_parts(shared as *const std::sync::atomic::AtomicU64, n_tasks + 1)
    };
    let done = &words[0];
    // Root tasks: in the cgroup standing in for the machine, or on the VM in the root.
    let machine_cg = if s.whole_machine {
        None
    } else {
        Some(s.cgroups.last().cloned().expect("machine cgroup"))
    };
    let before = host::read_vmstat();
    let stat_before = read_memcg_stats(&s.cgroups);
    let t0 = exec::now_ns();
    for (i, mut src) in sources.into_iter().enumerate() {
        let cg = match src.cgroup {
            Some(i) => Some(s.cgroups[i].clone()),
            None => machine_cg.clone(),
        };
        let procs = cg.map(|c| c.join("cgroup.procs"));
        let parent = unsafe { libc::getpid() };
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(format!("fork: {}", std::io::Error::last_os_error()));
        }
        if pid == 0 {
            exec::die_with_parent(parent);
            // Its own open files (its own readahead state), as a separate process has.
            if objs.reopen_files().is_err() {
                unsafe { libc::_exit(4) };
            }
            exec::child_main(&mut src, &objs, procs.as_deref(), t0, done, &words[1 + i]);
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
        if done.load(Ordering::SeqCst) >= n_tasks as u64
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
    let stat_now = read_memcg_stats(&s.cgroups);
    // End the workers (they were holding their memory, as finished tasks do).
    for &pid in &s.children {
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
    s.children.clear();
    let task_seconds = names
        .into_iter()
        .zip(&words[1..])
        .map(|(n, w)| (n, w.load(Ordering::SeqCst) as f64 / 1e9))
        .collect();
    let global = delta.clone();
    let own = |key: &str| -> Option<u64> {
        let mut sum = None;
        for (now, old) in stat_now.iter().zip(&stat_before) {
            if let Some(v) = now.get(key) {
                let v0 = old.get(key).copied().unwrap_or(0);
                *sum.get_or_insert(0) += v.saturating_sub(v0);
            }
        }
        sum
    };
    // Counters the memory cgroups keep themselves are immune to the rest of the host: use
    // them (summed over our cgroups) instead of the global deltas wherever memory.stat has
    // them (v1: workingset_refault_*, pgmajfault; v2 also workingset_activate_*, pswp*,
    // pgscan/pgsteal by type on recent kernels). Where it has not, bound the global delta by
    // what our cgroups can have caused.
    for key in KEY_COUNTERS {
        if s.whole_machine {
            // The VM runs nothing else: the global counters are the scenario's.
            break;
        }
        if let Some(v) = own(key) {
            delta.insert(key.to_string(), v);
            continue;
        }
        let g = |k: &str| global.get(k).copied().unwrap_or(0);
        match key {
            "workingset_activate_file" => {
                let active_file: u64 = stat_now
                    .iter()
                    .filter_map(|m| m.get("active_file"))
                    .map(|v| v / 4096)
                    .sum();
                let v = v1_activate_file_bound(
                    g(key),
                    delta.get("workingset_refault_file").copied().unwrap_or(0),
                    active_file,
                    g("pgdeactivate"),
                );
                delta.insert(key.to_string(), v);
            }
            "pswpout" => {
                delta.insert(
                    key.to_string(),
                    v1_pswpout_bound(g("pswpout"), g("pgscan_anon")),
                );
            }
            _ => {}
        }
    }
    let mut memcg_stat = BTreeMap::new();
    for (i, stat) in stat_now.iter().enumerate() {
        let name = scn
            .cgroups
            .get(i)
            .map(|c| c.name.as_str())
            .unwrap_or("machine");
        for (k, v) in stat {
            if !k.starts_with("total_") && !k.starts_with("hierarchical_") {
                memcg_stat.insert(format!("{name}.{k}"), *v);
            }
        }
    }
    s.remove_cgroups();
    Ok(RealRun {
        vmstat: delta,
        memcg_stat,
        task_seconds,
    })
}

/// Each cgroup's memory.stat, parsed (empty when unreadable).
fn read_memcg_stats(cgroups: &[PathBuf]) -> Vec<Counters> {
    cgroups
        .iter()
        .map(|cg| {
            host::parse_kv(&std::fs::read_to_string(cg.join("memory.stat")).unwrap_or_default())
                .into_iter()
                .collect()
        })
        .collect()
}

/// pswpout of our cgroups where memory.stat does not count it (cgroup v1): the global
/// delta, capped by the global pgscan_anon. A page our cgroups' limit reclaim writes to
/// swap was isolated by `shrink_inactive_list()`, which counts it in PGSCAN_ANON first;
/// swap-outs that bypass that count come from `reclaim_pages()` (DAMON's pageout action,
/// MADV_PAGEOUT) of other memory. This host runs a DAMON pageout scheme (kdamond.0, cold
/// unmapped pages) whose writes of other cgroups' shmem pages reached the twin's swap
/// device: traced with `vmscan:mm_vmscan_write_folio`, 0–42 pages per f02 run, with
/// pgscan_anon 0.
pub fn v1_pswpout_bound(global_pswpout: u64, global_pgscan_anon: u64) -> u64 {
    global_pswpout.min(global_pgscan_anon)
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

/// The VM twin's key counters: the host twin's and the global ones a memory cgroup cannot
/// show (kswapd against direct reclaim, watermark hits, kswapd runs, anon workingset).
pub const VM_KEY_COUNTERS: [&str; 18] = [
    "workingset_refault_file",
    "workingset_refault_anon",
    "workingset_activate_file",
    "workingset_activate_anon",
    "pswpin",
    "pswpout",
    "pgsteal_file",
    "pgsteal_anon",
    "pgscan_file",
    "pgscan_anon",
    "pgmajfault",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "allocstall_total",
    "kswapd_low_wmark_hit_quickly",
    "pageoutrun",
];

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub counter: String,
    pub real_mean: f64,
    pub real_min: u64,
    pub real_max: u64,
    /// Standard error of `real_mean` (sample standard deviation / sqrt(runs); 0 for one run).
    pub real_sem: f64,
    pub simulated: u64,
    /// The simulation's min and max over the flusher phases ([`simulate_over_flush_phases`]).
    pub simulated_min: u64,
    pub simulated_max: u64,
    pub relative_error: f64,
    /// [`off_by_2x`].
    pub off_by_2x: bool,
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
    /// Per run, each task instance's time from its start to the end of its stream.
    pub real_task_seconds: Vec<Vec<(String, f64)>>,
    /// The same in the simulation (weighted over flusher phases like the counters).
    pub simulated_task_seconds: Vec<(String, f64)>,
    /// Bytes the host's DAMON pageout schemes paged out per real run (mean over the runs;
    /// host noise: their swap-outs are in the global pswpout, see [`v1_pswpout_bound`];
    /// null when the host has no such scheme). Read once before and once after the runs:
    /// refreshing the statistics waits for kdamond's next sampling interval.
    pub damon_pageout_bytes_per_run: Option<f64>,
    /// The VM twin's guest memory as the guest kernel saw it (null for the host twin).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vm: Option<vm::VmReport>,
}

/// How many real runs: at least `min`; then more, up to `max` runs and `max_seconds` of
/// real runs, while a key counter's kernel mean is uncertain: its standard error above
/// `rel_sem` of the mean and above [`SEM_FLOOR_PAGES`]. Counters whose outcome depends on
/// a race with the memcg statistics flusher are bimodal across runs (f08's activations: 0
/// or ~20000), and their mean needs many runs to be worth comparing.
#[derive(Clone, Copy, Debug)]
pub struct RunPlan {
    pub min: usize,
    pub max: usize,
    pub rel_sem: f64,
    pub max_seconds: Option<f64>,
}

/// A standard error below this many pages is close enough whatever the mean.
pub const SEM_FLOOR_PAGES: f64 = 2.0;

impl RunPlan {
    pub fn fixed(n: usize) -> RunPlan {
        RunPlan {
            min: n.max(1),
            max: n.max(1),
            rel_sem: 0.0,
            max_seconds: None,
        }
    }

    /// Whether the runs so far (taking `seconds` in all) are enough.
    pub fn satisfied(&self, runs: &[Counters], seconds: f64) -> bool {
        let n = runs.len();
        if n < self.min {
            return false;
        }
        if n >= self.max || self.max_seconds.is_some_and(|m| seconds >= m) {
            return true;
        }
        KEY_COUNTERS.iter().all(|k| {
            let v: Vec<u64> = runs
                .iter()
                .map(|r| r.get(*k).copied().unwrap_or(0))
                .collect();
            let (mean, sem) = mean_sem(&v);
            sem <= (self.rel_sem * mean).max(SEM_FLOOR_PAGES)
        })
    }
}

/// Real runs expected to show the rarer outcome this many times before the kernel's mean
/// of a phase-sensitive counter is compared ([`runs_for_rare_outcomes`]).
pub const RARE_OUTCOMES: f64 = 10.0;

/// The share of flusher phases in which the simulation puts `counter` away from its
/// majority outcome: the largest weight of phases whose values lie within a factor of two
/// (plus [`SEM_FLOOR_PAGES`]) of one of them is the majority; the rest is the minority.
/// 0 when every phase agrees.
pub fn minority_share(sim: &SimCounters, counter: &str) -> f64 {
    let vals: Vec<(f64, f64)> = sim
        .per_phase
        .iter()
        .zip(&sim.phases)
        .map(|(c, (_, w))| (*w, c.get(counter).copied().unwrap_or(0) as f64))
        .collect();
    let close = |a: f64, b: f64| {
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        hi <= 2.0 * lo + SEM_FLOOR_PAGES
    };
    let majority = vals
        .iter()
        .map(|&(_, v)| {
            vals.iter()
                .filter(|&&(_, u)| close(u, v))
                .map(|&(w, _)| w)
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    (1.0 - majority).max(0.0)
}

/// Real runs needed to see each key counter's rarer outcome [`RARE_OUTCOMES`] times, if
/// the kernel's phase dependence is what the simulation's is: a counter the flusher's phase
/// decides only in a short window (f08's activations: ~5% of phases) looks constant over a
/// handful of runs, and its mean needs a couple of hundred. The largest over the key
/// counters, with the counter that asks for it.
pub fn runs_for_rare_outcomes(sim: &SimCounters) -> (usize, Option<&'static str>) {
    let mut best = (0, None);
    for k in KEY_COUNTERS {
        let p = minority_share(sim, k);
        if p > 1e-9 {
            let n = (RARE_OUTCOMES / p).ceil() as usize;
            if n > best.0 {
                best = (n, Some(k));
            }
        }
    }
    best
}

/// Mean and standard error of the mean (0 for fewer than two values).
pub fn mean_sem(v: &[u64]) -> (f64, f64) {
    let n = v.len() as f64;
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let mean = v.iter().sum::<u64>() as f64 / n;
    if v.len() < 2 {
        return (mean, 0.0);
    }
    let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// Whether the simulated value is off by more than a factor of two from the kernel's
/// mean once the mean's own uncertainty is allowed for: outside [lo / 2, 2 · hi], where
/// lo..hi is the mean ± 2 standard errors widened by [`SEM_FLOOR_PAGES`] (lo clamped at
/// 0). A counter the kernel moves by a handful of pages in some runs and not in others
/// (f01's anon refaults: 0–30, mean 4 ± 3) is then not a factor-of-two disagreement with
/// a simulated 0, while a stable count (f02's 6588 ± 9 file refaults) still is unless the
/// simulation is within 2x of it.
pub fn off_by_2x(real_mean: f64, real_sem: f64, simulated: f64) -> bool {
    let slack = 2.0 * real_sem + SEM_FLOOR_PAGES;
    let lo = (real_mean - slack).max(0.0);
    let hi = real_mean + slack;
    simulated < lo / 2.0 || simulated > 2.0 * hi
}

/// Relative error of the simulation against the kernel's mean (0 when both are 0).
pub fn relative_error(real_mean: f64, simulated: f64) -> f64 {
    if real_mean == 0.0 && simulated == 0.0 {
        0.0
    } else {
        (simulated - real_mean).abs() / real_mean.max(1.0)
    }
}

/// What a twin reports as it goes, for a progress display (`refault twin`, `refault
/// fidelity`); see [`print_notes`] for the plain one.
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// The simulations over the flusher's phases have done `fraction` (0..=1) of their work.
    Simulating { fraction: f64 },
    /// At least `runs` real runs are planned (before the first, and when the plan grows).
    Planned { runs: usize },
    /// Real run `run` (1-based) is done, after `seconds` of wall time.
    RunDone { run: usize, seconds: f64 },
    /// A line for the person running the twin.
    Note(&'a str),
}

/// The observer of a twin that only prints its notes on standard error.
pub fn print_notes(e: Event) {
    if let Event::Note(s) = e {
        eprintln!("{s}");
    }
}

/// Run `scn` for real as `plan` says and simulated over the flusher phases, and compare;
/// notes go to standard error ([`twin_observed`] with [`print_notes`]).
pub fn twin(
    scn: &Scenario,
    plan: RunPlan,
    swap: SwapKind,
    base: &Path,
) -> Result<TwinReport, String> {
    twin_observed(scn, plan, swap, base, &mut print_notes)
}

/// [`twin`], telling `observe` how it goes.
pub fn twin_observed(
    scn: &Scenario,
    plan: RunPlan,
    swap: SwapKind,
    base: &Path,
    observe: &mut dyn FnMut(Event),
) -> Result<TwinReport, String> {
    // Simulate first: the simulation's phase dependence says how many real runs a
    // phase-sensitive counter needs (only when the plan allows more than its minimum).
    let sim = simulate_over_flush_phases_observed(scn, &mut |f| {
        observe(Event::Simulating { fraction: f })
    })?;
    let mut plan = plan;
    if plan.max > plan.min {
        let (n, counter) = runs_for_rare_outcomes(&sim);
        if n > plan.min {
            plan.min = n.min(plan.max);
            observe(Event::Note(&format!(
                "twin: {}: the simulation gives {} a different outcome in {:.1}% of the memcg flusher's phases; planning {} runs (--max-runs {})",
                scn.name,
                counter.unwrap_or("?"),
                100.0 * RARE_OUTCOMES / n as f64,
                plan.min,
                plan.max
            )));
        }
    }
    observe(Event::Planned { runs: plan.min });
    let mut s = setup(scn, swap, base)?;
    let mut runs: Vec<RealRun> = Vec::new();
    let mut real: Vec<Counters> = Vec::new();
    let damon_before = host::damon_pageout_bytes(&s.damon);
    let started = std::time::Instant::now();
    loop {
        let t = std::time::Instant::now();
        let r = run_once(scn, &mut s)?;
        real.push(r.vmstat.clone());
        runs.push(r);
        observe(Event::RunDone {
            run: runs.len(),
            seconds: t.elapsed().as_secs_f64(),
        });
        if plan.max > 1 {
            observe(Event::Note(&format!(
                "twin: {} run {} done in {:.1} s",
                scn.name,
                runs.len(),
                t.elapsed().as_secs_f64()
            )));
        }
        if plan.satisfied(&real, started.elapsed().as_secs_f64()) {
            break;
        }
        if runs.len() >= plan.min {
            // The plan goes on past its minimum: one more at least.
            observe(Event::Planned {
                runs: runs.len() + 1,
            });
        }
    }
    let damon = match (damon_before, host::damon_pageout_bytes(&s.damon)) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / runs.len() as f64),
        _ => None,
    };
    let kernel = s.host.kernel.clone();
    let cgroup = s.host.cgroup.clone();
    drop(s);
    // A signal that came during the cleanup.
    check_interrupted()?;
    let mut rep = compare(scn, &sim, &real, swap, kernel);
    rep.cgroup = cgroup;
    rep.memcg_stat = runs.iter().map(|r| r.memcg_stat.clone()).collect();
    rep.real_task_seconds = runs.iter().map(|r| r.task_seconds.clone()).collect();
    rep.damon_pageout_bytes_per_run = damon;
    Ok(rep)
}

/// The comparison of the real runs' counters with the simulation's, one row per counter
/// both have (gauges `nr_*` left out).
pub fn compare(
    scn: &Scenario,
    sim: &SimCounters,
    real: &[Counters],
    swap: SwapKind,
    kernel: String,
) -> TwinReport {
    let mut rows = Vec::new();
    for (name, &simv) in &sim.mean {
        if name.starts_with("nr_") || !real[0].contains_key(name) {
            continue;
        }
        let vals: Vec<u64> = real.iter().map(|r| r[name]).collect();
        let (mean, sem) = mean_sem(&vals);
        rows.push(Row {
            counter: name.clone(),
            real_mean: mean,
            real_min: *vals.iter().min().unwrap(),
            real_max: *vals.iter().max().unwrap(),
            real_sem: sem,
            simulated: simv,
            simulated_min: sim.min[name],
            simulated_max: sim.max[name],
            relative_error: relative_error(mean, simv as f64),
            off_by_2x: off_by_2x(mean, sem, simv as f64),
        });
    }
    TwinReport {
        scenario: scn.name.clone(),
        kernel,
        cgroup: host::CgroupVersion::V2,
        swap,
        runs: real.len(),
        rows,
        real: real.to_vec(),
        memcg_stat: Vec::new(),
        simulated: sim.mean.clone(),
        real_task_seconds: Vec::new(),
        simulated_task_seconds: sim.task_seconds.clone(),
        damon_pageout_bytes_per_run: None,
        vm: None,
    }
}

/// Phases of the memcg statistics flusher the simulation is sampled at.
pub const FLUSH_PHASES: u64 = 8;

/// The simulation's counters as the expectation over the phase of the memcg statistics
/// flusher (`flush_memcg_stats_dwork()`, every period P), which in the kernel runs at a
/// phase unrelated to the workload: each real run samples one phase, and reclaim and
/// refault detection read statistics as of the last flush, so the kernel's mean over runs
/// estimates this expectation. With the first flush at φ uniform in [0, P): a run that
/// ends at T < P without a flush before φ is the same for every φ ≥ T, so the expectation
/// is (1 − T/P)·R(no flush) + (T/P)·E[R(φ) | φ < T], the latter sampled at
/// [`FLUSH_PHASES`] stratified points of [0, T); a run of P or longer is sampled at
/// stratified points of [0, P). T comes from the run whose first flush is at P. One run
/// when the flush is not modelled. `min`/`max` are over the sampled runs.
pub struct SimCounters {
    pub mean: Counters,
    pub min: Counters,
    pub max: Counters,
    /// (φ in ns, weight) of each sampled run.
    pub phases: Vec<(Option<u64>, f64)>,
    /// Each sampled run's counters, in the order of `phases`.
    pub per_phase: Vec<Counters>,
    pub task_seconds: Vec<(String, f64)>,
}

pub fn simulate_over_flush_phases(scn: &Scenario) -> Result<SimCounters, String> {
    simulate_over_flush_phases_observed(scn, &mut |_| {})
}

/// [`simulate_over_flush_phases`], telling `progress` the fraction of the simulations done.
pub fn simulate_over_flush_phases_observed(
    scn: &Scenario,
    progress: &mut dyn FnMut(f64),
) -> Result<SimCounters, String> {
    let period = scn.model.memcg_stats_flush_ns;
    let total = if period == 0 { 1 } else { 1 + FLUSH_PHASES } as f64;
    let mut done = 0.0;
    let mut sim = |first: Option<u64>| {
        let mut s = scn.clone();
        if let Some(f) = first {
            s.model.memcg_stats_first_flush_ns = f;
        }
        let mut each = |x: f64| progress((done + x) / total);
        let opts = refault_sim::RunOptions {
            progress: Some(&mut each),
            ..Default::default()
        };
        let r = refault_sim::run(&s, opts).map_err(|e| e.to_string());
        done += 1.0;
        r
    };
    let mut runs: Vec<(Option<u64>, f64, refault_sim::SimResult)> = Vec::new();
    if period == 0 {
        runs.push((None, 1.0, sim(None)?));
    } else {
        let late = sim(Some(period))?;
        let t = (late.sim_seconds * 1e9) as u64;
        let (window, w_none) = if t < period {
            (t.max(1), (period - t) as f64 / period as f64)
        } else {
            (period, 0.0)
        };
        let w_each = (1.0 - w_none) / FLUSH_PHASES as f64;
        for k in 0..FLUSH_PHASES {
            let phi = (2 * k + 1) * window / (2 * FLUSH_PHASES);
            runs.push((Some(phi), w_each, sim(Some(phi))?));
        }
        if w_none > 0.0 {
            runs.push((Some(period), w_none, late));
        }
    }
    let mut out = SimCounters {
        mean: Counters::new(),
        min: Counters::new(),
        max: Counters::new(),
        phases: runs.iter().map(|(p, w, _)| (*p, *w)).collect(),
        per_phase: runs.iter().map(|(_, _, r)| r.vmstat.clone()).collect(),
        task_seconds: Vec::new(),
    };
    for name in runs
        .iter()
        .flat_map(|(_, _, r)| r.vmstat.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let vals: Vec<(f64, u64)> = runs
            .iter()
            .map(|(_, w, r)| (*w, r.vmstat.get(name).copied().unwrap_or(0)))
            .collect();
        let mean: f64 = vals.iter().map(|(w, v)| w * *v as f64).sum();
        out.mean.insert(name.clone(), mean.round() as u64);
        out.min
            .insert(name.clone(), vals.iter().map(|v| v.1).min().unwrap());
        out.max
            .insert(name.clone(), vals.iter().map(|v| v.1).max().unwrap());
    }
    out.task_seconds = runs[0]
        .2
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let secs = runs
                .iter()
                .map(|(_, w, r)| w * r.tasks.get(i).map_or(0.0, |t| t.seconds))
                .sum();
            (t.name.clone(), secs)
        })
        .collect();
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
        "kernel mean ±se",
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
            "{:<28} {:>12} {:>23} {:>12} {:>8.1}%{}\n",
            x.counter,
            mean_pm(x.real_mean, x.real_sem),
            format!("{}-{}", x.real_min, x.real_max),
            x.simulated,
            x.relative_error * 100.0,
            if x.off_by_2x { "  >2x" } else { "" }
        );
    }
    out += "task seconds                 kernel mean          kernel min-max    simulated\n";
    for (i, (name, sim)) in r.simulated_task_seconds.iter().enumerate() {
        let v: Vec<f64> = r
            .real_task_seconds
            .iter()
            .filter_map(|run| run.get(i).map(|x| x.1))
            .collect();
        if v.is_empty() {
            continue;
        }
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
        out += &format!(
            "  {:<26} {:>12.3} {:>23} {:>12.3}\n",
            name,
            mean,
            format!("{lo:.3}-{hi:.3}"),
            sim
        );
    }
    if let Some(v) = &r.vm {
        out += "guest zones at the start (pages): ";
        out += &v
            .zones
            .iter()
            .map(|z| {
                format!(
                    "{} free {} managed {} min/low/high {}/{}/{}",
                    z.name, z.free, z.managed, z.min, z.low, z.high
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        out += &format!(
            "\nsimulated machine: {} pages, min_free_kbytes {}\n",
            v.simulated_zones
                .iter()
                .map(|(k, p)| format!("{k} {p}"))
                .collect::<Vec<_>>()
                .join(", "),
            v.simulated_min_free_kbytes.unwrap_or(0)
        );
        if let Some(p) = &v.cost_profile {
            out += &format!("simulated CPU: {}\n", p.describe());
        }
    }
    if let Some(b) = r.damon_pageout_bytes_per_run {
        out += &format!(
            "host noise: DAMON pageout schemes paged out {:.1} MiB per run (mean) outside our cgroups' reclaim; the global pswpout includes their swap-outs and is bounded by pgscan_anon where memory.stat has no pswpout\n",
            b / (1 << 20) as f64
        );
    }
    out
}

/// "mean ±sem" (just the mean for one run).
pub fn mean_pm(mean: f64, sem: f64) -> String {
    if sem > 0.0 {
        format!("{mean:.0} ±{sem:.0}")
    } else {
        format!("{mean:.0}")
    }
}

#[cfg(test)]
mod tests;
