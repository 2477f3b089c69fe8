//! The VM twin: the scenario run for real on a kernel booted in QEMU whose memory is the
//! scenario's machine, so that global reclaim (kswapd, direct reclaim, watermarks) and the
//! multi-gen LRU are compared, on any kernel version.
//!
//! The host side ([`twin_vm`]) builds an initramfs (busybox, the kernel's zram/virtio
//! modules, the C library the refault binary needs, an `/init` script) and an ext4 disk image
//! holding the refault binary and the resolved scenario (JSON), boots the kernel with
//! `-m machine.memory`, and reads the guest's result back from the disk image (`debugfs`),
//! once per real run (every run boots a fresh machine, as every simulation starts from one).
//! The guest side ([`guest_main`], `refault twin-guest`) is the host twin's executor with
//! the whole machine in place of a memory cgroup: tasks the scenario leaves in the root
//! cgroup run in the guest's root cgroup, the scenario's cgroups become cgroup v2 groups, the
//! sysctls and `read_ahead_kb` are set as the scenario says, swap is zram (hot-added) or a
//! swap file on the virtio disk, and `/proc/vmstat` deltas are global.
//!
//! Everything on the host lives in one work directory recorded in a [`crate::state`] file,
//! with the QEMU process (which dies with the twin: `PR_SET_PDEATHSIG`), so a killed VM twin
//! leaves nothing the next run does not remove.
//!
//! Timing: under emulation (TCG) the guest's clock runs at the emulator's pace, not a real
//! machine's; the per-task times are reported anyway and say so. The guest measures its own
//! CPU costs before each run ([`probe_cpu_costs`]) as it measures its disk, and the
//! simulation runs with them ([`CostProfile`]), so that kswapd and the tasks share the
//! simulated CPU in the guest's proportions.

use crate::state::{self, Resource, StateFile};
use crate::{check_interrupted, Counters, SwapKind};
use refault_scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The vm-setup script, embedded so that an installed binary can fetch what it needs.
const VM_SETUP: &str = include_str!("../../../scripts/vm-setup.sh");

/// What the guest brings back from one run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GuestRun {
    pub kernel: String,
    /// /proc/vmstat deltas over the run (global: the guest runs nothing else).
    pub vmstat: Counters,
    pub zoneinfo_before: String,
    pub zoneinfo_after: String,
    pub buddyinfo_before: String,
    pub buddyinfo_after: String,
    /// `/sys/kernel/mm/lru_gen/enabled` during the run ("" without CONFIG_LRU_GEN).
    pub lru_gen: String,
    pub task_seconds: Vec<(String, f64)>,
    pub memcg_stat: Counters,
    /// The virtio disk as measured from inside the guest before the run ([`probe_disk`]).
    #[serde(default)]
    pub disk_probe: Option<DiskProbe>,
    /// The guest's vmscan tracepoints over the run ([`VmscanTrace`]); None where tracefs or
    /// the events are missing.
    #[serde(default)]
    pub vmscan_trace: Option<VmscanTrace>,
    /// kswapd0's `/proc/PID/schedstat` over the run: CPU ns, run-queue wait ns, times run.
    #[serde(default)]
    pub kswapd_schedstat: Option<[u64; 3]>,
    /// The `cpu` line of `/proc/stat` over the run, in USER_HZ ticks: user, nice, system,
    /// idle, iowait, irq, softirq (is the guest's one CPU busy, or waiting for the disk?).
    #[serde(default)]
    pub cpu_ticks: Option<Vec<u64>>,
    /// The guest CPU's pace ([`probe_cpu`]): ns per read() of one cached 4 KiB page.
    #[serde(default)]
    pub cpu_probe_ns: Option<u64>,
    /// The guest's CPU costs of the model's cost table ([`probe_cpu_costs`]), measured
    /// after the setup and before the run's baseline counters; None in runs saved before it.
    #[serde(default)]
    pub cpu_costs: Option<CpuCostProbe>,
    /// `/proc/pagetypeinfo` (free blocks per zone, migratetype and order; pageblocks per
    /// zone and migratetype) as the executor started, before the scenario's setup: the
    /// allocator as boot left it.
    #[serde(default)]
    pub pagetypeinfo_boot: String,
    /// `/proc/pagetypeinfo` as the run started (after the setup, with `zoneinfo_before`).
    #[serde(default)]
    pub pagetypeinfo_before: String,
    /// `/proc/pagetypeinfo` as the run ended.
    #[serde(default)]
    pub pagetypeinfo_after: String,
    /// `/sys/kernel/debug/lru_gen_full` as the run started (with `zoneinfo_before`) and as
    /// it ended, when the multi-gen LRU was on: per memory cgroup and node, the generations
    /// with their ages and anon/file pages, and per tier the refaulted/evicted/protected
    /// counts ([`crate::lrugen::LruGenFull::parse`]). "" without the MGLRU or debugfs, and
    /// in runs saved before it.
    #[serde(default)]
    pub lru_gen_full_before: String,
    #[serde(default)]
    pub lru_gen_full_after: String,
}

/// Pages read per pass of [`probe_cpu`].
const CPU_PROBE_PAGES: u64 = 1024;

/// How fast the guest's CPU does kernel work: the mean time of a read() of one 4 KiB page
/// that is in the page cache (`filemap_read()`: lookup and copy, the work
/// `model.cost.pagecache_hit` stands for), over 4 MiB of the running binary (in the
/// initramfs, so always cached), read once to warm and then four times. Under emulation
/// (TCG) every CPU cost is tens of times a real core's while the virtio disk is not, so the
/// guest's reader is CPU-bound where the simulated one waits for its disk. Recorded as
/// evidence only: scaling every `model.cost` by it was tried and made the suite worse
/// (docs/fidelity.md, session 14); [`probe_cpu_costs`] measures each kind of work instead.
pub fn probe_cpu() -> Result<u64, String> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open("/proc/self/exe").map_err(|e| format!("/proc/self/exe: {e}"))?;
    let mut buf = vec![0u8; 4096];
    let mut pass = |f: &std::fs::File| -> Result<(), String> {
        for i in 0..CPU_PROBE_PAGES {
            f.read_at(&mut buf, i * 4096)
                .map_err(|e| format!("/proc/self/exe: {e}"))?;
        }
        Ok(())
    };
    pass(&f)?;
    let t = std::time::Instant::now();
    for _ in 0..4 {
        pass(&f)?;
    }
    Ok((t.elapsed().as_nanos() as u64 / (4 * CPU_PROBE_PAGES)).max(1))
}

/// Pages per stage of [`probe_cpu_costs`] (16 MiB): a fraction of a second of kernel work per
/// stage even at the emulated guest's pace (67 us per reclaimed page on 6.1).
pub const COST_PROBE_PAGES: u64 = 4096;
/// Pages [`probe_cpu_costs`] asks `memory.reclaim` for per stage (12 MiB of the 16): less
/// than the memory cgroup holds, so the write returns once it has them instead of retrying.
pub const COST_PROBE_RECLAIM_PAGES: u64 = 3072;
/// The memory cgroup [`probe_cpu_costs`] works in (cgroup v2, under the guest's root).
const COST_PROBE_CGROUP: &str = "/sys/fs/cgroup/refault-cost-probe";

/// The guest's CPU costs of the kernel work the model's cost table (`model.cost.*`) stands
/// for, measured inside the guest before its run ([`probe_cpu_costs`]): the calling thread's
/// CPU time (`CLOCK_THREAD_CPUTIME_ID`: the scheduler's `sum_exec_runtime`, user and system)
/// over each stage, and the pages the stage handled (its own count, or `/proc/vmstat` deltas
/// for what reclaim did). Raw figures; [`CostProfile::from_probe`] turns them into costs.
/// Each stage is skipped (left 0) where the guest cannot do it (no swap: no anon reclaim).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuCostProbe {
    /// First-touch write faults over a fresh private anonymous mapping (`do_anonymous_page()`:
    /// allocation, zeroing, memcg charge, LRU add): CPU ns and faults.
    pub fault_ns: u64,
    pub faults: u64,
    /// The same pages written again, present and mapped (the task's own memory access).
    pub touch_ns: u64,
    pub touches: u64,
    /// read() of cached 4 KiB pages of an ext4 file (`filemap_read()`).
    pub read_ns: u64,
    pub reads: u64,
    /// `memory.reclaim` of a memory cgroup holding only clean, unmapped file pages read once
    /// (each reclaimed at its first scan): CPU ns of the write, and `/proc/vmstat`'s
    /// `pgscan_file`, `pgsteal_file` over it.
    pub file_reclaim_ns: u64,
    pub file_scanned: u64,
    pub file_reclaimed: u64,
    /// `memory.reclaim` of the same cgroup holding only the faulted anon pages (mapped once,
    /// young): CPU ns, `pgscan_anon`, `pgsteal_anon`, `pgrefill` (active-list scans) and
    /// `pswpout` over it, to the run's swap device.
    pub anon_reclaim_ns: u64,
    pub anon_scanned: u64,
    pub anon_reclaimed: u64,
    pub anon_refill: u64,
    pub pswpout: u64,
    /// The anon pages read again after that reclaim: swap-in faults (zram decompresses in
    /// the fault; a swap file's IO wait is not CPU time): CPU ns and `pswpin`.
    pub swapin_ns: u64,
    pub pswpin: u64,
    /// A zram device of its own (hot-added and removed; the run's swap is zram), written and
    /// read with O_DIRECT in 64-page requests of pages like the anon ones above (one
    /// non-zero byte): CPU ns of the writes (`zram_submit_bio()` compressing each page),
    /// of the reads (decompressing), and pages.
    #[serde(default)]
    pub zram_write_ns: u64,
    #[serde(default)]
    pub zram_read_ns: u64,
    #[serde(default)]
    pub zram_pages: u64,
    /// The LRU the probe ran under (`/sys/kernel/mm/lru_gen/enabled`, "" without it).
    #[serde(default)]
    pub lru_gen: String,
}

/// Pages per request of the zram stage of [`probe_cpu_costs`].
const ZRAM_PROBE_REQUEST_PAGES: u64 = 64;

/// The zram stage of [`probe_cpu_costs`]: a device of its own, removed again.
fn probe_zram(p: &mut CpuCostProbe) -> Result<(), String> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let id: u32 = std::fs::read_to_string("/sys/class/zram-control/hot_add")
        .map_err(|e| format!("zram hot_add: {e}"))?
        .trim()
        .parse()
        .map_err(|e| format!("zram hot_add: {e}"))?;
    let result = (|| -> Result<(), String> {
        let pages = COST_PROBE_PAGES;
        std::fs::write(
            format!("/sys/block/zram{id}/disksize"),
            (pages * 4096).to_string(),
        )
        .map_err(|e| format!("zram{id} disksize: {e}"))?;
        let dev = format!("/dev/zram{id}");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&dev)
            .map_err(|e| format!("{dev}: {e}"))?;
        let len = (ZRAM_PROBE_REQUEST_PAGES * 4096) as usize;
        with_direct_io_buffer(len, "zram probe buffer", |buf| {
            for i in 0..ZRAM_PROBE_REQUEST_PAGES as usize {
                buf[i * 4096 + 8] = 1;
            }
            let t = thread_cpu_ns();
            for r in 0..pages / ZRAM_PROBE_REQUEST_PAGES {
                f.write_all_at(buf, r * len as u64)
                    .map_err(|e| format!("{dev}: {e}"))?;
            }
            p.zram_write_ns = thread_cpu_ns() - t;
            let t = thread_cpu_ns();
            for r in 0..pages / ZRAM_PROBE_REQUEST_PAGES {
                f.read_exact_at(buf, r * len as u64)
                    .map_err(|e| format!("{dev}: {e}"))?;
            }
            p.zram_read_ns = thread_cpu_ns() - t;
            p.zram_pages = pages;
            Ok(())
        })
    })();
    let _ = std::fs::write("/sys/class/zram-control/hot_remove", id.to_string());
    result
}

/// The calling thread's CPU time, ns.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `/proc/vmstat`'s values of `keys`, in order (0 where missing).
fn vmstat_values(keys: &[&str]) -> Vec<u64> {
    let all = crate::host::read_vmstat();
    keys.iter()
        .map(|k| all.iter().find(|(n, _)| n == k).map_or(0, |(_, v)| *v))
        .collect()
}

/// Measure [`CpuCostProbe`] inside the guest: in a memory cgroup of its own (created and
/// removed here), a 16 MiB file in `dir` (on the run's ext4 disk) is read once and
/// reclaimed with `memory.reclaim`, read twice more (the second pass timed: cached reads)
/// and deleted; then 16 MiB of anon memory is faulted in (timed), written again (timed),
/// reclaimed to the run's swap with `memory.reclaim` (when there is swap) and read back
/// (swap-in). Seconds under emulation. The caller runs it before the run's baseline
/// `/proc/vmstat`, so the run's counters do not include it; everything it allocated is
/// freed (the file deleted, the mapping unmapped, its swap slots freed) before the run.
pub fn probe_cpu_costs(dir: &Path, has_swap: bool, zram: bool) -> Result<CpuCostProbe, String> {
    use std::io::{Read, Seek};
    let cg = Path::new(COST_PROBE_CGROUP);
    if cg.exists() {
        let _ = std::fs::remove_dir(cg);
    }
    std::fs::create_dir(cg).map_err(|e| format!("{}: {e}", cg.display()))?;
    let file = dir.join("refault-cost-probe");
    let mut p = CpuCostProbe {
        lru_gen: std::fs::read_to_string(crate::LRU_GEN_ENABLED)
            .unwrap_or_default()
            .trim()
            .to_string(),
        ..Default::default()
    };
    let pid = std::process::id().to_string();
    let enter = || {
        std::fs::write(cg.join("cgroup.procs"), &pid)
            .map_err(|e| format!("{}/cgroup.procs: {e}", cg.display()))
    };
    let leave = || std::fs::write("/sys/fs/cgroup/cgroup.procs", &pid);
    // `memory.reclaim` of COST_PROBE_RECLAIM_PAGES: the CPU ns of the write and the deltas
    // of the `/proc/vmstat` counters `keys` over it.
    let reclaim_stage = |keys: &[&str]| -> (u64, Vec<u64>) {
        let v0 = vmstat_values(keys);
        let t = thread_cpu_ns();
        // -EAGAIN when it could not reclaim all it was asked for: what it did is counted.
        let _ = std::fs::write(
            cg.join("memory.reclaim"),
            (COST_PROBE_RECLAIM_PAGES * 4096).to_string(),
        );
        let ns = thread_cpu_ns() - t;
        let v1 = vmstat_values(keys);
        (
            ns,
            v1.iter()
                .zip(&v0)
                .map(|(b, a)| b.saturating_sub(*a))
                .collect(),
        )
    };
    let result = (|| -> Result<(), String> {
        let bytes = (COST_PROBE_PAGES * 4096) as usize;
        // The file, written and dropped from the cache outside the cgroup.
        crate::exec::create_file(&file, COST_PROBE_PAGES, true)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        crate::exec::drop_cache(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        enter()?;
        let mut f = std::fs::File::open(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut buf = vec![0u8; 4096];
        let mut pass = |f: &mut std::fs::File| -> Result<u64, String> {
            f.rewind().map_err(|e| e.to_string())?;
            let mut n = 0;
            loop {
                let r = f
                    .read(&mut buf)
                    .map_err(|e| format!("{}: {e}", file.display()))?;
                if r == 0 {
                    return Ok(n);
                }
                n += 1;
            }
        };
        // Read once from the disk: inactive, referenced once, clean, unmapped.
        pass(&mut f)?;
        let (ns, d) = reclaim_stage(&["pgscan_file", "pgsteal_file"]);
        p.file_reclaim_ns = ns;
        (p.file_scanned, p.file_reclaimed) = (d[0], d[1]);
        // Cached reads: read back what was reclaimed, then a timed pass over the cached file.
        pass(&mut f)?;
        let t = thread_cpu_ns();
        p.reads = pass(&mut f)?;
        p.read_ns = thread_cpu_ns() - t;
        drop(f);
        std::fs::remove_file(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        // Anon: first-touch faults, then the same pages written again.
        let m = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if m == libc::MAP_FAILED {
            return Err(format!("mmap: {}", std::io::Error::last_os_error()));
        }
        let base = m as *mut u8;
        let touch_all = |v: u8| {
            for i in 0..COST_PROBE_PAGES as usize {
                // SAFETY: within the mapping.
                unsafe { std::ptr::write_volatile(base.add(i * 4096 + 8), v) };
            }
        };
        let t = thread_cpu_ns();
        touch_all(1);
        p.fault_ns = thread_cpu_ns() - t;
        p.faults = COST_PROBE_PAGES;
        let t = thread_cpu_ns();
        touch_all(2);
        p.touch_ns = thread_cpu_ns() - t;
        p.touches = COST_PROBE_PAGES;
        if has_swap {
            let (ns, d) = reclaim_stage(&["pgscan_anon", "pgsteal_anon", "pgrefill", "pswpout"]);
            p.anon_reclaim_ns = ns;
            (p.anon_scanned, p.anon_reclaimed) = (d[0], d[1]);
            (p.anon_refill, p.pswpout) = (d[2], d[3]);
            let pswpin = vmstat_values(&["pswpin"])[0];
            let t = thread_cpu_ns();
            let mut sum = 0u64;
            for i in 0..COST_PROBE_PAGES as usize {
                // SAFETY: within the mapping.
                sum += unsafe { std::ptr::read_volatile(base.add(i * 4096 + 8)) } as u64;
            }
            p.swapin_ns = thread_cpu_ns() - t;
            std::hint::black_box(sum);
            p.pswpin = vmstat_values(&["pswpin"])[0].saturating_sub(pswpin);
        }
        unsafe { libc::munmap(m, bytes) };
        if zram {
            probe_zram(&mut p)?;
        }
        Ok(())
    })();
    let _ = leave();
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_dir(cg);
    result.map(|()| p)
}

/// What the guest's vmscan tracepoints said about one run: how often kswapd was woken
/// (`mm_vmscan_wakeup_kswapd`, with the allocation's order, zone and gfp flags), woke and
/// slept (`mm_vmscan_kswapd_wake`/`_sleep`), and who entered direct reclaim with which
/// order and gfp flags (`mm_vmscan_direct_reclaim_begin`). Evidence for issue 20 item 2.
/// Also every fallback of the buddy allocator to another migratetype's free list
/// (`kmem:mm_page_alloc_extfrag`: orders, migratetypes, `change_ownership`), counted by zone
/// (the pfn's x86-64 zone, [`zone_of_pfn`]) instead of page: where the boosts of
/// `boost_watermark()` can come from (issue 20 item 3).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct VmscanTrace {
    /// Events counted by (event, task name without pid, fields), most frequent first.
    pub counts: Vec<(String, u64)>,
    /// The first events as the trace buffer printed them (timestamps in seconds).
    pub head: Vec<String>,
    /// Events the buffer lost (`entries` vs `overrun` of per_cpu stats; 0 when none).
    pub lost: u64,
}

const TRACEFS: &str = "/sys/kernel/tracing";
/// The traced events, as (tracefs events directory, event).
const VMSCAN_EVENTS: [(&str, &str); 5] = [
    ("vmscan", "mm_vmscan_wakeup_kswapd"),
    ("vmscan", "mm_vmscan_kswapd_wake"),
    ("vmscan", "mm_vmscan_kswapd_sleep"),
    ("vmscan", "mm_vmscan_direct_reclaim_begin"),
    ("kmem", "mm_page_alloc_extfrag"),
];

/// The x86-64 zone of a pfn: DMA below 16 MiB, DMA32 below 4 GiB, Normal above.
pub fn zone_of_pfn(pfn: u64) -> &'static str {
    if pfn < 0x1000 {
        "DMA"
    } else if pfn < 0x10_0000 {
        "DMA32"
    } else {
        "Normal"
    }
}

/// Mount tracefs (if needed), clear the buffer and enable [`VMSCAN_EVENTS`]; false when the
/// guest kernel has no tracefs or events.
fn vmscan_trace_start() -> bool {
    let t = Path::new(TRACEFS);
    if !t.join("trace").exists() {
        let _ = std::process::Command::new("mount")
            .args(["-t", "tracefs", "nodev", TRACEFS])
            .status();
    }
    if !t.join("events/vmscan").exists() {
        return false;
    }
    let _ = std::fs::write(t.join("buffer_size_kb"), "8192");
    let _ = std::fs::write(t.join("trace"), "");
    let mut ok = true;
    for (dir, e) in VMSCAN_EVENTS {
        ok &= std::fs::write(t.join("events").join(dir).join(e).join("enable"), "1").is_ok();
    }
    ok && std::fs::write(t.join("tracing_on"), "1").is_ok()
}

/// Stop tracing and summarise the buffer ([`VmscanTrace`]).
fn vmscan_trace_stop() -> VmscanTrace {
    let t = Path::new(TRACEFS);
    let _ = std::fs::write(t.join("tracing_on"), "0");
    for (dir, e) in VMSCAN_EVENTS {
        let _ = std::fs::write(t.join("events").join(dir).join(e).join("enable"), "0");
    }
    let text = std::fs::read_to_string(t.join("trace")).unwrap_or_default();
    let stats = std::fs::read_to_string(t.join("per_cpu/cpu0/stats")).unwrap_or_default();
    let lost = stats
        .lines()
        .find_map(|l| l.strip_prefix("overrun:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    summarise_trace(&text, lost)
}

/// [`VmscanTrace`] of a tracefs `trace` text: lines `  TASK-PID  [CPU] FLAGS  TS: EVENT: FIELDS`.
pub fn summarise_trace(text: &str, lost: u64) -> VmscanTrace {
    let mut counts: std::collections::BTreeMap<String, u64> = Default::default();
    let mut head = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let Some((pre, rest)) = line.split_once(": mm_") else {
            continue;
        };
        if !rest.starts_with("vmscan_") && !rest.starts_with("page_alloc_extfrag") {
            continue;
        }
        let task = pre.split_whitespace().next().unwrap_or("");
        let task = task.rsplit_once('-').map_or(task, |(name, _)| name);
        // kswapd_sleep/wake carry only the node; wakeup_kswapd's and direct reclaim's fields
        // (order, zone, gfp flags) are the evidence. An extfrag event's page and pfn become
        // its zone.
        let mut fields: Vec<String> = Vec::new();
        for f in rest.split(' ') {
            if f.starts_with("page=") || f == "nid=0" {
                continue;
            }
            match f.strip_prefix("pfn=0x").map(|h| u64::from_str_radix(h, 16)) {
                Some(Ok(pfn)) => fields.push(format!("zone={}", zone_of_pfn(pfn))),
                _ => fields.push(f.to_string()),
            }
        }
        let key = format!("{task}: mm_{}", fields.join(" "));
        *counts.entry(key).or_default() += 1;
        if head.len() < 400 {
            head.push(line.trim().to_string());
        }
    }
    let mut counts: Vec<(String, u64)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    VmscanTrace { counts, head, lost }
}

/// kswapd0's `/proc/PID/schedstat` (CPU ns, wait ns, timeslices).
fn kswapd_schedstat() -> Option<[u64; 3]> {
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if comm.trim() == "kswapd0" {
            let s = std::fs::read_to_string(e.path().join("schedstat")).ok()?;
            let v: Vec<u64> = s
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            return (v.len() == 3).then(|| [v[0], v[1], v[2]]);
        }
    }
    None
}

/// The `cpu` line of /proc/stat: its first seven fields.
fn cpu_ticks() -> Option<Vec<u64>> {
    let s = std::fs::read_to_string("/proc/stat").ok()?;
    let line = s.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(7)
        .filter_map(|x| x.parse().ok())
        .collect();
    (v.len() == 7).then_some(v)
}

/// A short probe of the guest's virtio disk, read with O_DIRECT (the file system on it is
/// left alone): one request at a time, 4 KiB at random offsets for the per-request latency,
/// then 1 MiB requests in sequence for the transfer rate.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DiskProbe {
    /// Mean time of a 4 KiB random read, ns.
    pub latency_ns: u64,
    /// Sequential read rate, bytes/s, with the per-request latency taken out (at most half
    /// the elapsed time: [`seq_transfer_ns`]).
    pub read_bytes_per_sec: u64,
    pub random_reads: u64,
    pub sequential_bytes: u64,
}

/// Random 4 KiB reads in the probe.
const PROBE_RANDOM_READS: u64 = 256;
/// Sequential 1 MiB reads in the probe.
const PROBE_SEQ_MIB: u64 = 32;

/// Probe the block device `dev` ([`DiskProbe`]).
pub fn probe_disk(dev: &Path) -> Result<DiskProbe, String> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(dev)
        .map_err(|e| format!("{}: {e}", dev.display()))?;
    let size = {
        use std::io::Seek;
        let mut g = &f;
        g.seek(std::io::SeekFrom::End(0))
            .map_err(|e| format!("{}: {e}", dev.display()))?
    };
    let big = 1u64 << 20;
    if size < PROBE_SEQ_MIB * big {
        return Err(format!(
            "{}: {size} bytes, too small to probe",
            dev.display()
        ));
    }
    with_direct_io_buffer(big as usize, "probe buffer", |buf| {
        let blocks = size / 4096;
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let t = std::time::Instant::now();
        for _ in 0..PROBE_RANDOM_READS {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let off = ((x >> 17) % blocks) * 4096;
            f.read_exact_at(&mut buf[..4096], off)
                .map_err(|e| format!("{}: {e}", dev.display()))?;
        }
        let latency_ns = t.elapsed().as_nanos() as u64 / PROBE_RANDOM_READS;
        let t = std::time::Instant::now();
        for i in 0..PROBE_SEQ_MIB {
            f.read_exact_at(buf, i * big)
                .map_err(|e| format!("{}: {e}", dev.display()))?;
        }
        let elapsed = (t.elapsed().as_nanos() as u64).max(1);
        let ns = seq_transfer_ns(elapsed, PROBE_SEQ_MIB * latency_ns);
        let bytes = PROBE_SEQ_MIB * big;
        Ok(DiskProbe {
            latency_ns,
            read_bytes_per_sec: (bytes as u128 * 1_000_000_000 / ns as u128) as u64,
            random_reads: PROBE_RANDOM_READS,
            sequential_bytes: bytes,
        })
    })
}

/// `f` over a zeroed, page-aligned buffer of `len` bytes (O_DIRECT needs the alignment),
/// freed on every path; `what` names it in the out-of-memory error.
fn with_direct_io_buffer<T>(
    len: usize,
    what: &str,
    f: impl FnOnce(&mut [u8]) -> Result<T, String>,
) -> Result<T, String> {
    let layout = std::alloc::Layout::from_size_align(len, 4096).expect("layout");
    // SAFETY: the layout is non-zero; freed below.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(format!("{what}: out of memory"));
    }
    // SAFETY: ptr is valid for `len` bytes until dealloc, and nothing else refers to it.
    let result = f(unsafe { std::slice::from_raw_parts_mut(ptr, len) });
    // SAFETY: allocated above with this layout.
    unsafe { std::alloc::dealloc(ptr, layout) };
    result
}

/// The transfer time of the probe's sequential reads: the elapsed time less the requests'
/// latency, but never less than half the elapsed time (under emulation on a loaded host the
/// random reads' mean can exceed what a sequential request waits, and subtracting it all
/// would make the rate unbounded).
pub fn seq_transfer_ns(elapsed_ns: u64, latency_total_ns: u64) -> u64 {
    elapsed_ns - latency_total_ns.min(elapsed_ns / 2)
}

/// The scenario's file-system device as the guest measured it: the probe's per-request
/// latency and read rate replace the preset's (writes, queue depth, seek time and flags
/// stay the scenario's).
pub fn device_from_probe(scn: &mut Scenario, p: &DiskProbe) {
    let d = &mut scn.devices[scn.fs_device];
    d.latency_ns = p.latency_ns;
    d.read_bytes_per_sec = p.read_bytes_per_sec.max(1);
    d.preset = format!("{} (latency and read rate measured in the guest)", d.preset);
}

/// The guest's measured CPU costs as the simulation applies them: a property of the guest's
/// machine, like its disk's probe ([`device_from_probe`]), built from the runs'
/// [`CpuCostProbe`]s by [`CostProfile::from_probes`] and applied by [`apply_cost_profile`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CostProfile {
    /// Probes it was measured over (one per guest run that recorded one).
    pub probes: usize,
    /// What the probes measured, ns per unit (ratios of the summed CPU time and counts):
    /// `anon_fault`, `touch`, `cached_read`, `file_reclaim` (per page scanned),
    /// `anon_reclaim` (per page reclaimed), `anon_scans` (pages scanned per page reclaimed,
    /// a ratio), `swapin`, `zram_write`, `zram_read` (per page); a stage the probes did not
    /// run is absent.
    pub measured: Vec<(String, f64)>,
    /// The cost table the simulation ran with.
    pub costs: refault_scenario::CostTable,
    /// The zram swap device's CPU per page written (compression) and read (decompression),
    /// when measured.
    pub zram_write_ns: Option<u64>,
    pub zram_read_ns: Option<u64>,
}

impl CostProfile {
    /// The measured figure `key`, if its stage ran.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.measured
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v)
    }

    /// The profile of `probes` over the scenario's cost table `base`; None without probes.
    ///
    /// Each figure is the ratio of the probes' summed CPU time to their summed count. The
    /// table follows from them (the model's own per-operation sums, `b` = `base`, `'` = the
    /// result; every figure rounded to the ns):
    ///
    /// - `touch' = touch`, `pagecache_hit' = cached_read` (measured as they are).
    /// - A first-touch anon write fault costs the model `minor_fault + page_alloc`: both are
    ///   scaled by `kf = anon_fault / (b.minor_fault + b.page_alloc)`.
    /// - Reclaiming a clean, unmapped file page at its first scan costs the model
    ///   `scan_per_page + reclaim_per_page`: `kr = file_reclaim / (b.scan_per_page +
    ///   b.reclaim_per_page)` scales those two and the LRU list work (`lru_move`,
    ///   `lru_lock`). The page-table walk, compaction and migration costs, which no stage
    ///   measures, are scaled by `kr` too (the pace of the kernel's reclaim code);
    ///   `io_submit` stays the scenario's.
    /// - The zram device's CPU per page is `zram_write` for writes and `zram_read` for reads.
    /// - An anon page reclaimed to swap costs the model `s * scan_per_page' + (s - 1) *
    ///   lru_move' + reclaim_per_page' + io_submit + zram_write + R`, with the rmap part
    ///   `R = (s + 1) * rmap_per_call + s * rmap_per_mapping + unmap_per_mapping +
    ///   tlb_flush_local` (s = `anon_scans`: an activation and putback per scan but the
    ///   last, a `folio_referenced()` walk per scan and one `try_to_unmap()`, each over the
    ///   one mapping; the probe's mm runs only on the probing thread's CPU, so the unmap
    ///   flushes the local TLB at once). The four are scaled by one factor `ka`, what
    ///   `anon_reclaim` leaves after the rest divided by `R` of the base table (at least 0),
    ///   which keeps the measured split between them (refault_mm::tlb); `kr` without an
    ///   anon stage. The batched flush's
    ///   `tlb_shootdown` and `tlb_shootdown_per_cpu`, which no stage measures, stay the
    ///   scenario's.
    /// - A swap-in fault costs the model `major_fault + page_alloc' + io_submit + zram_read`:
    ///   `major_fault'` is what that leaves of `swapin` (at least 0; scaled by `kf` without a
    ///   swap-in stage).
    pub fn from_probes(
        probes: &[&CpuCostProbe],
        base: &refault_scenario::CostTable,
    ) -> Option<CostProfile> {
        if probes.is_empty() {
            return None;
        }
        let sum = |f: &dyn Fn(&CpuCostProbe) -> u64| -> u64 { probes.iter().map(|p| f(p)).sum() };
        let ratio = |num: u64, den: u64| (den > 0).then(|| num as f64 / den as f64);
        let mut measured: Vec<(String, f64)> = Vec::new();
        let mut put = |k: &str, v: Option<f64>| {
            if let Some(v) = v {
                measured.push((k.to_string(), v));
            }
            v
        };
        let fault = put(
            "anon_fault",
            ratio(sum(&|p| p.fault_ns), sum(&|p| p.faults)),
        );
        let touch = put("touch", ratio(sum(&|p| p.touch_ns), sum(&|p| p.touches)));
        let read = put("cached_read", ratio(sum(&|p| p.read_ns), sum(&|p| p.reads)));
        let file = put(
            "file_reclaim",
            ratio(sum(&|p| p.file_reclaim_ns), sum(&|p| p.file_scanned)),
        );
        let anon_reclaimed = sum(&|p| p.anon_reclaimed);
        let anon = put(
            "anon_reclaim",
            ratio(sum(&|p| p.anon_reclaim_ns), anon_reclaimed),
        );
        let scans = put(
            "anon_scans",
            ratio(sum(&|p| p.anon_scanned), anon_reclaimed),
        );
        let swapin = put("swapin", ratio(sum(&|p| p.swapin_ns), sum(&|p| p.pswpin)));
        let zram_pages = sum(&|p| p.zram_pages);
        let zw = put("zram_write", ratio(sum(&|p| p.zram_write_ns), zram_pages));
        let zr = put("zram_read", ratio(sum(&|p| p.zram_read_ns), zram_pages));
        let ns = |v: f64| v.max(0.0).round() as u64;
        let scale = |v: u64, k: Option<f64>| k.map_or(v, |k| ns(v as f64 * k));
        let b = base;
        let mut c = b.clone();
        let kf = fault.map(|f| f / (b.minor_fault_ns + b.page_alloc_ns).max(1) as f64);
        let kr = file.map(|f| f / (b.scan_per_page_ns + b.reclaim_per_page_ns).max(1) as f64);
        if let Some(t) = touch {
            c.touch_ns = ns(t);
        }
        if let Some(r) = read {
            c.pagecache_hit_ns = ns(r);
        }
        c.minor_fault_ns = scale(b.minor_fault_ns, kf);
        c.page_alloc_ns = scale(b.page_alloc_ns, kf);
        c.scan_per_page_ns = scale(b.scan_per_page_ns, kr);
        c.reclaim_per_page_ns = scale(b.reclaim_per_page_ns, kr);
        c.lru_move_ns = scale(b.lru_move_ns, kr);
        c.lru_lock_ns = scale(b.lru_lock_ns, kr);
        c.pt_walk_per_pte_ns = scale(b.pt_walk_per_pte_ns, kr);
        c.compact_scan_per_page_ns = scale(b.compact_scan_per_page_ns, kr);
        c.migrate_per_page_ns = scale(b.migrate_per_page_ns, kr);
        let ka = match (anon, scans) {
            (Some(a), Some(s)) => {
                let rest = s * c.scan_per_page_ns as f64
                    + (s - 1.0).max(0.0) * c.lru_move_ns as f64
                    + (c.reclaim_per_page_ns + c.io_submit_ns) as f64
                    + zw.unwrap_or(0.0);
                let rmap = (s + 1.0) * b.rmap_per_call_ns as f64
                    + s * b.rmap_per_mapping_ns as f64
                    + (b.unmap_per_mapping_ns + b.tlb_flush_local_ns) as f64;
                Some(((a - rest) / rmap.max(1.0)).max(0.0))
            }
            _ => kr,
        };
        c.rmap_per_call_ns = scale(b.rmap_per_call_ns, ka);
        c.rmap_per_mapping_ns = scale(b.rmap_per_mapping_ns, ka);
        c.unmap_per_mapping_ns = scale(b.unmap_per_mapping_ns, ka);
        c.tlb_flush_local_ns = scale(b.tlb_flush_local_ns, ka);
        c.major_fault_ns = match swapin {
            Some(si) => ns(si - (c.page_alloc_ns + c.io_submit_ns) as f64 - zr.unwrap_or(0.0)),
            None => scale(b.major_fault_ns, kf),
        };
        Some(CostProfile {
            probes: probes.len(),
            measured,
            costs: c,
            zram_write_ns: zw.map(ns),
            zram_read_ns: zr.map(ns),
        })
    }

    /// One line for the output: what was measured and the table it gave.
    pub fn describe(&self) -> String {
        let us = |k: &str| {
            self.get(k)
                .map_or("-".to_string(), |v| format!("{:.1}", v / 1e3))
        };
        let c = &self.costs;
        format!(
            "the guest's CPU costs ({} probe(s), us): anon fault {}, touch {}, cached read {}, \
             file reclaim {} per page scanned, anon reclaim {} per page reclaimed ({} scans), \
             swap-in {}, zram write {} / read {} per page; simulated model.cost (ns): \
             touch {}, minor_fault {}, major_fault {}, pagecache_hit {}, page_alloc {}, \
             scan_per_page {}, rmap_per_call {}, rmap_per_mapping {}, unmap_per_mapping {}, \
             tlb_flush_local {}, pt_walk_per_pte {}, reclaim_per_page {}, \
             io_submit {}, compact_scan_per_page {}, migrate_per_page {}, lru_lock {}, \
             lru_move {}; zram cpu_per_page (ns) {} write / {} read",
            self.probes,
            us("anon_fault"),
            us("touch"),
            us("cached_read"),
            us("file_reclaim"),
            us("anon_reclaim"),
            self.get("anon_scans")
                .map_or("-".to_string(), |v| format!("{v:.2}")),
            us("swapin"),
            us("zram_write"),
            us("zram_read"),
            c.touch_ns,
            c.minor_fault_ns,
            c.major_fault_ns,
            c.pagecache_hit_ns,
            c.page_alloc_ns,
            c.scan_per_page_ns,
            c.rmap_per_call_ns,
            c.rmap_per_mapping_ns,
            c.unmap_per_mapping_ns,
            c.tlb_flush_local_ns,
            c.pt_walk_per_pte_ns,
            c.reclaim_per_page_ns,
            c.io_submit_ns,
            c.compact_scan_per_page_ns,
            c.migrate_per_page_ns,
            c.lru_lock_ns,
            c.lru_move_ns,
            self.zram_write_ns
                .map_or("-".to_string(), |v| v.to_string()),
            self.zram_read_ns.map_or("-".to_string(), |v| v.to_string()),
        )
    }
}

/// The profile of the runs' cost probes over the scenario's cost table, when
/// `measured_costs` and any run recorded a probe.
pub fn guest_cost_profile(
    scn: &Scenario,
    runs: &[GuestRun],
    measured_costs: bool,
) -> Option<CostProfile> {
    if !measured_costs {
        return None;
    }
    let probes: Vec<&CpuCostProbe> = runs.iter().filter_map(|r| r.cpu_costs.as_ref()).collect();
    CostProfile::from_probes(&probes, &scn.costs)
}

/// The scenario on the guest's CPU: `p`'s cost table replaces the scenario's, and a zram
/// swap device (the `zram` preset, as [`crate::SwapKind::Zram`] runs it) takes the measured
/// compression and decompression per page.
pub fn apply_cost_profile(scn: &mut Scenario, p: &CostProfile) {
    scn.costs = p.costs.clone();
    let zram: Vec<usize> = scn
        .swap
        .iter()
        .map(|a| a.device)
        .filter(|&d| scn.devices[d].preset == "zram")
        .collect();
    for d in zram {
        let dev = &mut scn.devices[d];
        if let Some(w) = p.zram_write_ns {
            dev.cpu_ns_per_page = w;
        }
        if p.zram_read_ns.is_some() {
            dev.read_cpu_ns_per_page = p.zram_read_ns;
        }
    }
}

/// How QEMU runs the guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    /// KVM when /dev/kvm is usable and a short probe boot with it works, TCG otherwise
    /// ([`detect_accel`]); the run says which it used and why.
    Auto,
    /// Plain emulation: works everywhere, slow (the guest's clock is not a real machine's).
    Tcg,
    /// Hardware virtualisation through /dev/kvm.
    Kvm,
}

impl std::str::FromStr for Accel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Accel::Auto),
            "tcg" => Ok(Accel::Tcg),
            "kvm" => Ok(Accel::Kvm),
            _ => Err(format!("--accel must be auto, tcg or kvm, not `{s}`")),
        }
    }
}

/// Wall-clock limit of the KVM probe boot: a kernel that works under KVM reaches its init
/// in about a second; the failure seen on hosts where nested KVM is broken is a guest that
/// prints nothing at all.
const KVM_PROBE_SECONDS: f64 = 20.0;

/// Whether /dev/kvm exists and can be opened for reading and writing.
fn kvm_device_usable() -> Result<(), String> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .map(|_| ())
        .map_err(|e| format!("/dev/kvm: {e}"))
}

/// The probe's cache key: the host kernel, the QEMU build and the guest kernel image.
fn probe_key(kernel: &Path) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let qemu = std::process::Command::new("qemu-system-x86_64")
        .arg("--version")
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default();
    let size = std::fs::metadata(kernel).map(|m| m.len()).unwrap_or(0);
    format!(
        "{} | {} | {} {}",
        host.trim(),
        qemu.trim(),
        kernel.display(),
        size
    )
}

/// Resolve `--accel auto`: KVM if /dev/kvm is usable and a probe boot of `kernel` under KVM
/// (an init that prints a marker and powers off) finishes within [`KVM_PROBE_SECONDS`];
/// TCG otherwise. The verdict is remembered in `cache/accel-probe` per host kernel, QEMU
/// and guest kernel, so later runs do not boot the probe again. Returns the accelerator
/// and the reason, for the output.
pub fn detect_accel(cache: &Path, kernel: &Path, workdir: &Path) -> (Accel, String) {
    if let Err(e) = kvm_device_usable() {
        return (Accel::Tcg, format!("auto: TCG ({e})"));
    }
    let key = probe_key(kernel);
    let file = cache.join("accel-probe");
    let known = std::fs::read_to_string(&file).unwrap_or_default();
    for line in known.lines() {
        if let Some((k, v)) = line.rsplit_once('\t') {
            if k == key {
                return match v {
                    "kvm" => (
                        Accel::Kvm,
                        "auto: KVM (an earlier probe boot worked)".into(),
                    ),
                    _ => (
                        Accel::Tcg,
                        format!(
                            "auto: TCG (an earlier KVM probe boot failed: {v}; {})",
                            file.display()
                        ),
                    ),
                };
            }
        }
    }
    let verdict = kvm_probe(kernel, workdir);
    let v = match &verdict {
        Ok(()) => "kvm".to_string(),
        Err(e) => e.replace(['\t', '\n'], " "),
    };
    let _ = std::fs::create_dir_all(cache);
    let mut text = known;
    text.push_str(&format!("{key}\t{v}\n"));
    let _ = std::fs::write(&file, text);
    match verdict {
        Ok(()) => (Accel::Kvm, "auto: KVM (a probe boot worked)".into()),
        Err(e) => (
            Accel::Tcg,
            format!("auto: TCG (a KVM probe boot failed: {e})"),
        ),
    }
}

/// Boot `kernel` under KVM with an init that prints a marker and powers off.
fn kvm_probe(kernel: &Path, workdir: &Path) -> Result<(), String> {
    let dir = workdir.join("kvm-probe");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut c = Cpio::default();
    c.dir("bin");
    let busybox = std::fs::read("/bin/busybox").map_err(|e| format!("/bin/busybox: {e}"))?;
    c.file("bin/busybox", true, &busybox);
    c.file(
        "init",
        true,
        b"#!/bin/busybox sh\n/bin/busybox echo REFAULT-KVM-PROBE-OK\n/bin/busybox poweroff -f\n",
    );
    let initrd = dir.join("initrd.cpio");
    std::fs::write(&initrd, c.finish()).map_err(|e| format!("probe initramfs: {e}"))?;
    let console = dir.join("console.log");
    let mut cmd = std::process::Command::new("qemu-system-x86_64");
    cmd.args(["-accel", "kvm", "-cpu", "host", "-m", "256M", "-smp", "1"])
        .args(["-display", "none", "-monitor", "none", "-no-reboot"])
        .arg("-serial")
        .arg(format!("file:{}", console.display()))
        .arg("-kernel")
        .arg(kernel)
        .arg("-initrd")
        .arg(&initrd)
        .args(["-append", "console=ttyS0 quiet panic=-1"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| format!("starting qemu: {e}"))?;
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(st);
        }
        if t0.elapsed().as_secs_f64() > KVM_PROBE_SECONDS || check_interrupted().is_err() {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let log = std::fs::read_to_string(&console).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    check_interrupted()?;
    match status {
        _ if log.contains("REFAULT-KVM-PROBE-OK") => Ok(()),
        None => Err(format!(
            "no output from the guest within {KVM_PROBE_SECONDS:.0} s"
        )),
        Some(st) => {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            Err(format!(
                "qemu exited ({st}): {}",
                err.lines().last().unwrap_or("").trim()
            ))
        }
    }
}

#[derive(Clone, Debug)]
pub struct VmOptions {
    /// debian-6.1, debian-6.12, debian-7.2, or the path of a bzImage (with its modules, if
    /// any, in a `modules/` directory beside it).
    pub kernel: String,
    pub cache: PathBuf,
    pub accel: Accel,
    /// Wall-clock limit of one boot, seconds.
    pub boot_timeout: f64,
    /// Simulate with the guest's measured CPU costs ([`CostProfile`]); false keeps the
    /// scenario's `model.cost` (`--scenario-costs`).
    pub measured_costs: bool,
}

/// The default cache directory: $REFAULT_VM_CACHE, else ~/.cache/refault-vm.
pub fn default_cache() -> PathBuf {
    if let Some(d) = std::env::var_os("REFAULT_VM_CACHE") {
        return d.into();
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/root".into());
    Path::new(&home).join(".cache/refault-vm")
}

/// Run the embedded vm-setup script with `args`.
fn vm_setup(cache: &Path, args: &[&str]) -> Result<String, String> {
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(VM_SETUP)
        .arg("vm-setup.sh")
        .arg("--cache")
        .arg(cache)
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("running vm-setup: {e}"))?;
    if !o.status.success() {
        return Err(format!("vm-setup {} failed ({})", args.join(" "), o.status));
    }
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Whether QEMU can run here at all (the tools are installed or can be).
pub fn qemu_available() -> Result<(), String> {
    let ok = |c: &str| {
        std::process::Command::new(c)
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok("qemu-system-x86_64") {
        return Err("qemu-system-x86_64 is not installed (scripts/vm-setup.sh installs it)".into());
    }
    if !Path::new("/bin/busybox").exists() {
        return Err("/bin/busybox is missing (busybox-static; scripts/vm-setup.sh)".into());
    }
    Ok(())
}

/// The kernel image and its module directory, fetched into the cache when named.
pub fn kernel_files(opts: &VmOptions) -> Result<(PathBuf, Option<PathBuf>), String> {
    let named = matches!(
        opts.kernel.as_str(),
        "debian-6.1" | "debian-6.12" | "debian-7.2"
    );
    if !named {
        let p = PathBuf::from(&opts.kernel);
        if !p.is_file() {
            return Err(format!(
                "--kernel {}: neither debian-6.1, debian-6.12, debian-7.2 nor a kernel image file",
                opts.kernel
            ));
        }
        let m = p.parent().map(|d| d.join("modules"));
        return Ok((p, m.filter(|m| m.join("order").is_file())));
    }
    let dir = opts.cache.join("kernels").join(&opts.kernel);
    if !dir.join("vmlinuz").is_file() {
        vm_setup(&opts.cache, &[&opts.kernel])?;
    }
    if qemu_available().is_err() {
        vm_setup(&opts.cache, &["--tools-only"])?;
    }
    Ok((dir.join("vmlinuz"), Some(dir.join("modules"))))
}

/// A cpio "newc" archive (the initramfs format), uncompressed.
#[derive(Default)]
pub struct Cpio {
    buf: Vec<u8>,
    ino: u32,
}

impl Cpio {
    fn entry(&mut self, name: &str, mode: u32, data: &[u8]) {
        self.ino += 1;
        let hdr = format!(
            "070701{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}",
            self.ino,
            mode,
            0,
            0,
            1,
            0,
            data.len(),
            0,
            0,
            0,
            0,
            name.len() + 1,
            0
        );
        self.buf.extend_from_slice(hdr.as_bytes());
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.push(0);
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
        self.buf.extend_from_slice(data);
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
    }
    pub fn dir(&mut self, name: &str) {
        self.entry(name, 0o040755, &[]);
    }
    pub fn file(&mut self, name: &str, exec: bool, data: &[u8]) {
        self.entry(name, if exec { 0o100755 } else { 0o100644 }, data);
    }
    pub fn finish(mut self) -> Vec<u8> {
        self.entry("TRAILER!!!", 0, &[]);
        self.buf
    }
}

/// The shared libraries `exe` loads (absolute paths, the dynamic loader included), from
/// `ldd`. Empty for a static binary.
fn shared_libs(exe: &Path) -> Result<Vec<PathBuf>, String> {
    let o = std::process::Command::new("ldd")
        .arg(exe)
        .output()
        .map_err(|e| format!("ldd: {e}"))?;
    let text = String::from_utf8_lossy(&o.stdout);
    let mut libs = Vec::new();
    for l in text.lines() {
        let path = match l.split_once("=>") {
            Some((_, r)) => r.split_whitespace().next(),
            None => l.split_whitespace().next(),
        };
        if let Some(p) = path.filter(|p| p.starts_with('/')) {
            libs.push(PathBuf::from(p));
        }
    }
    Ok(libs)
}

/// The guest's /init: mount what the executor needs, load the modules, run
/// `refault twin-guest` from the disk, unmount, power off.
fn init_script(extra_args: &str) -> String {
    format!(
        r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /run /mnt /tmp
if [ -f /modules/order ]; then
    for m in $(cat /modules/order); do insmod /modules/$m.ko 2>/dev/null; done
fi
mount -t cgroup2 none /sys/fs/cgroup && echo +memory > /sys/fs/cgroup/cgroup.subtree_control
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
mount -t ext4 /dev/vda /mnt || echo "REFAULT-GUEST: cannot mount /dev/vda"
echo REFAULT-GUEST-START
/mnt/refault twin-guest /mnt/scenario.json --workdir /mnt --out /mnt/result.json {extra_args} > /mnt/guest.log 2>&1
echo "REFAULT-GUEST-EXIT $?"
cat /mnt/guest.log
sync
umount /mnt
poweroff -f
"#
    )
}

fn run_tool(cmd: &str, args: &[&str]) -> Result<String, String> {
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
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// One VM twin's host resources: its work directory (initramfs, disk image, console log)
/// and the QEMU process while it runs. Removed on drop; recorded in a state file.
pub struct VmSetup {
    pub workdir: PathBuf,
    created_base: Option<PathBuf>,
    state: Option<StateFile>,
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    pub disk: PathBuf,
    qemu: Option<std::process::Child>,
    /// The accelerator the boots use (`--accel auto` resolved) and why.
    pub accel: Accel,
    pub accel_reason: String,
}

impl Drop for VmSetup {
    fn drop(&mut self) {
        if let Some(mut q) = self.qemu.take() {
            let _ = q.kill();
            let _ = q.wait();
        }
        let _ = std::fs::remove_dir_all(&self.workdir);
        if let Some(b) = self.created_base.take() {
            let _ = std::fs::remove_dir(b);
        }
        if let Some(mut s) = self.state.take() {
            s.finish();
        }
        crate::restore_signal_handlers();
    }
}

/// Disk image size: the scenario's files and swap file, the binary, and room for ext4.
fn disk_bytes(scn: &Scenario, swap: SwapKind, exe_bytes: u64) -> u64 {
    let files: u64 = scn
        .objects
        .iter()
        .filter(|o| o.kind == refault_scenario::ObjectKind::File)
        .map(|o| o.size_pages * 4096)
        .sum();
    let swapb: u64 = if swap == SwapKind::File {
        scn.swap.iter().map(|a| a.size_pages * 4096).sum()
    } else {
        0
    };
    let raw = files + swapb + exe_bytes + (64 << 20);
    (raw + raw / 4).div_ceil(1 << 20) << 20
}

/// Prepare the work directory: initramfs and disk image.
pub fn setup_vm(
    scn: &Scenario,
    swap: SwapKind,
    opts: &VmOptions,
    base: &Path,
) -> Result<VmSetup, String> {
    qemu_available().or_else(|_| vm_setup(&opts.cache, &["--tools-only"]).map(|_| ()))?;
    qemu_available()?;
    let (kernel, modules) = kernel_files(opts)?;
    crate::remove_leftovers(Some(base));
    let created = crate::prepare_base(base)?;
    let workdir = base.join(format!("refault-twin-{}-vm", std::process::id()));
    std::fs::create_dir(&workdir).map_err(|e| format!("{}: {e}", workdir.display()))?;
    let mut first = vec![Resource::WorkDir(workdir.clone())];
    if created {
        first.push(Resource::BaseDir(base.to_path_buf()));
    }
    let state = StateFile::create(&workdir, &first)?;
    crate::install_signal_handlers();
    let mut s = VmSetup {
        initrd: workdir.join("initrd.cpio"),
        disk: workdir.join("disk.img"),
        workdir,
        created_base: created.then(|| base.to_path_buf()),
        state: Some(state),
        kernel,
        qemu: None,
        accel: opts.accel,
        accel_reason: "asked for (--accel)".into(),
    };
    if opts.accel == Accel::Auto {
        let (a, why) = detect_accel(&opts.cache, &s.kernel, &s.workdir);
        s.accel = a;
        s.accel_reason = why;
    }
    eprintln!(
        "twin --vm: accelerator {}: {}",
        match s.accel {
            Accel::Kvm => "KVM",
            _ => "TCG (emulation)",
        },
        s.accel_reason
    );
    // The initramfs: busybox, modules, the C library, /init.
    let mut c = Cpio::default();
    for d in [
        "bin", "dev", "proc", "sys", "mnt", "run", "tmp", "lib", "lib64", "modules",
    ] {
        c.dir(d);
    }
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("reading {}: {e}", p.display()));
    c.file("bin/busybox", true, &read(Path::new("/bin/busybox"))?);
    if let Some(m) = &modules {
        let order = std::fs::read_to_string(m.join("order")).unwrap_or_default();
        for name in order.split_whitespace() {
            c.file(
                &format!("modules/{name}.ko"),
                false,
                &read(&m.join(format!("{name}.ko")))?,
            );
        }
        c.file("modules/order", false, order.as_bytes());
    }
    let exe = std::env::current_exe().map_err(|e| format!("the refault binary: {e}"))?;
    let mut made: std::collections::BTreeSet<String> = Default::default();
    for lib in shared_libs(&exe)? {
        let rel = lib.strip_prefix("/").unwrap_or(&lib);
        let mut acc = PathBuf::new();
        for comp in rel.parent().into_iter().flat_map(|p| p.components()) {
            acc.push(comp);
            let a = acc.display().to_string();
            if made.insert(a.clone()) && !["lib", "lib64"].contains(&a.as_str()) {
                c.dir(&a);
            }
        }
        // Follow the symlink: the archive holds the library itself under the linked name.
        c.file(&rel.display().to_string(), true, &read(&lib)?);
    }
    let extra = format!("--swap {}", swap_name(swap));
    c.file("init", true, init_script(&extra).as_bytes());
    std::fs::write(&s.initrd, c.finish()).map_err(|e| format!("writing initramfs: {e}"))?;
    // The disk: the binary and the scenario; the guest creates the scenario's files.
    let staging = s.workdir.join("disk");
    std::fs::create_dir(&staging).map_err(|e| format!("{}: {e}", staging.display()))?;
    std::fs::copy(&exe, staging.join("refault")).map_err(|e| format!("copying refault: {e}"))?;
    let json = serde_json::to_string(scn).map_err(|e| e.to_string())?;
    std::fs::write(staging.join("scenario.json"), json).map_err(|e| e.to_string())?;
    let exe_bytes = std::fs::metadata(&exe).map(|m| m.len()).unwrap_or(0);
    let size = disk_bytes(scn, swap, exe_bytes);
    let f = std::fs::File::create(&s.disk).map_err(|e| format!("disk image: {e}"))?;
    f.set_len(size).map_err(|e| format!("disk image: {e}"))?;
    drop(f);
    run_tool(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            "root_owner=0:0",
            "-d",
            &staging.display().to_string(),
            &s.disk.display().to_string(),
        ],
    )?;
    let _ = std::fs::remove_dir_all(&staging);
    check_interrupted()?;
    Ok(s)
}

fn swap_name(s: SwapKind) -> &'static str {
    match s {
        SwapKind::Zram => "zram",
        SwapKind::File => "file",
        SwapKind::None => "none",
    }
}

/// Boot the guest once and return what it measured.
pub fn boot_once(
    scn: &Scenario,
    s: &mut VmSetup,
    opts: &VmOptions,
) -> Result<(GuestRun, f64), String> {
    check_interrupted()?;
    let console = s.workdir.join("console.log");
    let mem_mib = (scn.machine.memory_pages * 4096).div_ceil(1 << 20);
    let mut cmd = std::process::Command::new("qemu-system-x86_64");
    match s.accel {
        Accel::Kvm => cmd.args(["-accel", "kvm", "-cpu", "host"]),
        Accel::Tcg | Accel::Auto => cmd.args(["-accel", "tcg", "-cpu", "max"]),
    };
    cmd.args(["-m", &format!("{mem_mib}M")])
        .args(["-smp", &scn.machine.cpus.max(1).to_string()])
        .args(["-display", "none", "-monitor", "none", "-no-reboot"])
        .arg("-serial")
        .arg(format!("file:{}", console.display()))
        .arg("-kernel")
        .arg(&s.kernel)
        .arg("-initrd")
        .arg(&s.initrd)
        .args([
            "-append",
            "console=ttyS0 quiet loglevel=1 panic=-1 no_timer_check",
        ])
        .arg("-drive")
        .arg(format!("file={},format=raw,if=virtio", s.disk.display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            Ok(())
        });
    }
    let t0 = std::time::Instant::now();
    let child = cmd.spawn().map_err(|e| format!("starting qemu: {e}"))?;
    let pid = child.id();
    if let Some(st) = &mut s.state {
        st.record(&Resource::Process(pid, state::start_time(pid).unwrap_or(0)))?;
    }
    s.qemu = Some(child);
    let status = loop {
        check_interrupted()?;
        let q = s.qemu.as_mut().expect("qemu");
        if let Some(st) = q.try_wait().map_err(|e| e.to_string())? {
            break st;
        }
        if t0.elapsed().as_secs_f64() > opts.boot_timeout {
            return Err(format!(
                "the guest did not power off within {:.0} s; console:\n{}",
                opts.boot_timeout,
                tail(&console, 30)
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut q = s.qemu.take().expect("qemu");
    let _ = q.wait();
    let secs = t0.elapsed().as_secs_f64();
    if !status.success() {
        let mut err = String::new();
        if let Some(mut e) = q.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        return Err(format!(
            "qemu failed ({status}): {}\nconsole:\n{}",
            err.trim(),
            tail(&console, 30)
        ));
    }
    let log = std::fs::read_to_string(&console).unwrap_or_default();
    if !log.contains("REFAULT-GUEST-EXIT 0") {
        return Err(format!(
            "the guest's executor failed; console:\n{}",
            tail(&console, 40)
        ));
    }
    let out = s.workdir.join("result.json");
    let _ = std::fs::remove_file(&out);
    run_tool(
        "debugfs",
        &[
            "-R",
            &format!("dump /result.json {}", out.display()),
            &s.disk.display().to_string(),
        ],
    )?;
    let text = std::fs::read_to_string(&out).map_err(|e| format!("the guest's result: {e}"))?;
    let r: GuestRun =
        serde_json::from_str(&text).map_err(|e| format!("the guest's result: {e}"))?;
    Ok((r, secs))
}

fn tail(p: &Path, n: usize) -> String {
    let t = std::fs::read_to_string(p).unwrap_or_default();
    let lines: Vec<&str> = t.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The guest's `/sys/kernel/mm/transparent_hugepage/{enabled,defrag}` for a scenario.
/// The model has no THP on anonymous faults yet (issue 13), so every scenario runs with
/// `enabled = never` (the page cache's large folios do not depend on it) and the kernel's
/// default `defrag = madvise`; a scenario key for them maps here when the model has them.
pub fn thp_settings(_scn: &Scenario) -> (&'static str, &'static str) {
    ("never", "madvise")
}

/// Guest side: set the sysctls, the THP settings and the disk's queue as the scenario says.
fn apply_machine_settings(scn: &Scenario) -> Result<(), String> {
    let (thp_enabled, thp_defrag) = thp_settings(scn);
    let thp = Path::new("/sys/kernel/mm/transparent_hugepage");
    for (k, v) in [("enabled", thp_enabled), ("defrag", thp_defrag)] {
        let p = thp.join(k);
        std::fs::write(&p, v).map_err(|e| format!("writing {v} to {}: {e}", p.display()))?;
    }
    let w = |k: &str, v: String| {
        let p = format!("/proc/sys/vm/{k}");
        std::fs::write(&p, &v).map_err(|e| format!("writing {v} to {p}: {e}"))
    };
    let sc = &scn.sysctl;
    w("swappiness", sc.swappiness.to_string())?;
    w(
        "watermark_scale_factor",
        sc.watermark_scale_factor.to_string(),
    )?;
    w(
        "watermark_boost_factor",
        sc.watermark_boost_factor.to_string(),
    )?;
    w("page-cluster", sc.page_cluster.to_string())?;
    w("dirty_ratio", sc.dirty_ratio.to_string())?;
    w(
        "dirty_background_ratio",
        sc.dirty_background_ratio.to_string(),
    )?;
    // Writing a bytes form zeroes the ratio (and the reverse): write them only when set,
    // after the ratios.
    if sc.dirty_bytes > 0 {
        w("dirty_bytes", sc.dirty_bytes.to_string())?;
    }
    if sc.dirty_background_bytes > 0 {
        w(
            "dirty_background_bytes",
            sc.dirty_background_bytes.to_string(),
        )?;
    }
    w(
        "dirty_expire_centisecs",
        sc.dirty_expire_centisecs.to_string(),
    )?;
    w(
        "dirty_writeback_centisecs",
        sc.dirty_writeback_centisecs.to_string(),
    )?;
    w("vfs_cache_pressure", sc.vfs_cache_pressure.to_string())?;
    w("laptop_mode", (sc.laptop_mode as u32).to_string())?;
    if let Some(k) = sc.min_free_kbytes {
        w("min_free_kbytes", k.to_string())?;
    }
    let q = Path::new("/sys/block/vda/queue");
    if q.exists() {
        let dev = &scn.devices[scn.fs_device];
        let _ = std::fs::write(
            q.join("read_ahead_kb"),
            (scn.model.readahead_max_pages * 4).to_string(),
        );
        let _ = std::fs::write(q.join("rotational"), (dev.rotational as u32).to_string());
        // Writeback throttling's target, when the scenario sets one (the default is what the
        // guest kernel chose at the disk's registration).
        if let Some(l) = dev.wbt_lat_usec {
            let _ = std::fs::write(q.join("wbt_lat_usec"), l.to_string());
        }
    }
    Ok(())
}

/// The multi-gen LRU's debugfs file with the per-tier statistics (`lru_gen_seq_show()` with
/// `full`: the read-only twin of `/sys/kernel/debug/lru_gen`).
const LRU_GEN_FULL: &str = "/sys/kernel/debug/lru_gen_full";

/// Whether `/sys/kernel/mm/lru_gen/enabled` says the multi-gen LRU is on (its core switch,
/// bit 0x0001, as `show_enabled()` prints it: "0x0007"; "" without CONFIG_LRU_GEN).
fn lru_gen_on(enabled: &str) -> bool {
    u32::from_str_radix(enabled.trim().trim_start_matches("0x"), 16).is_ok_and(|v| v & 1 != 0)
}

/// `refault twin-guest`: inside the VM, run the scenario once on the whole machine and
/// write a [`GuestRun`] to `out`.
pub fn guest_main(
    scn: &Scenario,
    swap: SwapKind,
    workdir: &Path,
    out: &Path,
) -> Result<(), String> {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let pagetypeinfo_boot = read("/proc/pagetypeinfo");
    apply_machine_settings(scn)?;
    let cpu_probe_ns = match probe_cpu() {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("twin-guest: CPU probe failed: {e}");
            None
        }
    };
    let disk_probe = match probe_disk(Path::new("/dev/vda")) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("twin-guest: disk probe failed: {e}");
            None
        }
    };
    // After the setup (the scenario's files written and dropped from the cache, swap on):
    // the machine as the run starts on it.
    let mut s = crate::setup_whole_machine(scn, swap, workdir)?;
    // Before the run's baseline counters (run_once reads them), so the run does not count
    // the probe's faults, reclaim and swap; it frees all it took.
    let cpu_costs = match probe_cpu_costs(&s.workdir, s.swap_dev.is_some(), s.zram_id.is_some()) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("twin-guest: CPU cost probe failed: {e}");
            None
        }
    };
    let zoneinfo_before = read("/proc/zoneinfo");
    let buddyinfo_before = read("/proc/buddyinfo");
    let pagetypeinfo_before = read("/proc/pagetypeinfo");
    // Reading it takes the memcg iterator and prints; it neither ages nor evicts.
    let lru_gen_full = || {
        if lru_gen_on(&read(crate::LRU_GEN_ENABLED)) {
            read(LRU_GEN_FULL)
        } else {
            String::new()
        }
    };
    let lru_gen_full_before = lru_gen_full();
    let kswapd_before = kswapd_schedstat();
    let cpu_before = cpu_ticks();
    let tracing = vmscan_trace_start();
    let r = crate::run_once(scn, &mut s)?;
    let lru_gen_full_after = lru_gen_full();
    let vmscan_trace = tracing.then(vmscan_trace_stop);
    let kswapd_schedstat = kswapd_before
        .zip(kswapd_schedstat())
        .map(|(a, b)| [b[0] - a[0], b[1] - a[1], b[2] - a[2]]);
    let cpu_ticks = cpu_before.zip(cpu_ticks()).map(|(a, b)| {
        b.iter()
            .zip(&a)
            .map(|(b, a)| b.saturating_sub(*a))
            .collect()
    });
    let lru_gen = read(crate::LRU_GEN_ENABLED).trim().to_string();
    let pagetypeinfo_after = read("/proc/pagetypeinfo");
    drop(s);
    let g = GuestRun {
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        vmstat: r.vmstat,
        zoneinfo_before,
        zoneinfo_after: read("/proc/zoneinfo"),
        buddyinfo_before,
        buddyinfo_after: read("/proc/buddyinfo"),
        lru_gen,
        task_seconds: r.task_seconds,
        memcg_stat: r.memcg_stat,
        disk_probe,
        vmscan_trace,
        kswapd_schedstat,
        cpu_ticks,
        cpu_probe_ns,
        cpu_costs,
        pagetypeinfo_boot,
        pagetypeinfo_before,
        pagetypeinfo_after,
        lru_gen_full_before,
        lru_gen_full_after,
    };
    let text = serde_json::to_string(&g).map_err(|e| e.to_string())?;
    std::fs::write(out, text).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(())
}

/// Run `scn` on the VM as `plan` says (one boot per run) and compare with the simulation;
/// notes go to standard error ([`twin_vm_observed`] with [`crate::print_notes`]).
pub fn twin_vm(
    scn: &Scenario,
    plan: crate::RunPlan,
    swap: SwapKind,
    opts: &VmOptions,
    base: &Path,
) -> Result<crate::TwinReport, String> {
    twin_vm_observed(scn, plan, swap, opts, base, &mut crate::print_notes)
}

/// [`twin_vm`], telling `observe` how it goes (the simulation comes after the runs here:
/// it needs the guest's machine).
pub fn twin_vm_observed(
    scn: &Scenario,
    plan: crate::RunPlan,
    swap: SwapKind,
    opts: &VmOptions,
    base: &Path,
    observe: &mut dyn FnMut(crate::Event),
) -> Result<crate::TwinReport, String> {
    let mut s = setup_vm(scn, swap, opts, base)?;
    let mut runs: Vec<GuestRun> = Vec::new();
    let mut real: Vec<Counters> = Vec::new();
    let started = std::time::Instant::now();
    observe(crate::Event::Planned { runs: plan.min });
    loop {
        let (r, secs) = boot_once(scn, &mut s, opts)?;
        observe(crate::Event::RunDone {
            run: runs.len() + 1,
            seconds: secs,
        });
        observe(crate::Event::Note(&format!(
            "twin --vm: {} run {} on Linux {} done in {secs:.1} s (boot included, {:?})",
            scn.name,
            runs.len() + 1,
            r.kernel,
            s.accel
        )));
        real.push(r.vmstat.clone());
        runs.push(r);
        if plan.satisfied(&real, started.elapsed().as_secs_f64()) {
            break;
        }
        if runs.len() >= plan.min {
            observe(crate::Event::Planned {
                runs: runs.len() + 1,
            });
        }
    }
    let (accel, accel_reason) = (s.accel, s.accel_reason.clone());
    drop(s);
    check_interrupted()?;
    compare_vm_observed(
        scn,
        &runs,
        swap,
        accel,
        accel_reason,
        opts.measured_costs,
        observe,
    )
}

/// The simulation of `scn` on the guest's machine (as the first of `runs` started on it,
/// with its disk as probed and the rules of its kernel version) compared with the guest's
/// runs. `refault twin --vm` calls it after booting; `refault fidelity --vm --replay`
/// calls it on the runs a previous `--out` saved, to measure a model change against the
/// same kernel runs without booting again.
pub fn compare_vm(
    scn: &Scenario,
    runs: &[GuestRun],
    swap: SwapKind,
    accel: Accel,
    accel_reason: String,
    measured_costs: bool,
) -> Result<crate::TwinReport, String> {
    compare_vm_observed(
        scn,
        runs,
        swap,
        accel,
        accel_reason,
        measured_costs,
        &mut crate::print_notes,
    )
}

/// [`compare_vm`], telling `observe` how it goes.
pub fn compare_vm_observed(
    scn: &Scenario,
    runs: &[GuestRun],
    swap: SwapKind,
    accel: Accel,
    accel_reason: String,
    measured_costs: bool,
    observe: &mut dyn FnMut(crate::Event),
) -> Result<crate::TwinReport, String> {
    if runs.is_empty() {
        return Err("no guest runs to compare with".into());
    }
    let mut real: Vec<Counters> = runs.iter().map(|r| r.vmstat.clone()).collect();
    // The simulated machine is the guest's as the first run started on it.
    let zones =
        refault_scenario::zoneinfo::parse(&runs[0].zoneinfo_before, "the guest's /proc/zoneinfo")
            .map_err(|e| e.to_string())?;
    let mut sim_scn = machine_from_zoneinfo(scn, &runs[0].zoneinfo_before)?;
    // The guest's CPU as it measured it (runs saved before the probe have none, and
    // replay as before); before the guest's page cache is added, whose faulting-in is
    // simulated on this machine to delay the scenario's tasks.
    let cost_profile = guest_cost_profile(scn, runs, measured_costs);
    if let Some(p) = &cost_profile {
        apply_cost_profile(&mut sim_scn, p);
        observe(crate::Event::Note(&format!(
            "twin --vm: {}; the simulation uses these",
            p.describe()
        )));
    }
    add_guest_page_cache(&mut sim_scn, &runs[0].zoneinfo_before)?;
    // The guest's disk as it measured it (mean over the runs' probes).
    let probes: Vec<&DiskProbe> = runs.iter().filter_map(|r| r.disk_probe.as_ref()).collect();
    let disk_probe = (!probes.is_empty()).then(|| {
        let n = probes.len() as u64;
        DiskProbe {
            latency_ns: probes.iter().map(|p| p.latency_ns).sum::<u64>() / n,
            read_bytes_per_sec: probes.iter().map(|p| p.read_bytes_per_sec).sum::<u64>() / n,
            random_reads: probes.iter().map(|p| p.random_reads).sum(),
            sequential_bytes: probes.iter().map(|p| p.sequential_bytes).sum(),
        }
    });
    if let Some(p) = &disk_probe {
        device_from_probe(&mut sim_scn, p);
        observe(crate::Event::Note(&format!(
            "twin --vm: the guest's virtio disk: {:.0} us per 4 KiB random read, {:.0} MB/s sequential read; the simulated file-system device uses these",
            p.latency_ns as f64 / 1e3,
            p.read_bytes_per_sec as f64 / 1e6
        )));
    }
    // The simulation follows the rules of the kernel the guest booted (model.kernel).
    follow_guest_kernel(&mut sim_scn, model_kernel_for(&runs[0].kernel)?);
    if sim_scn.model.kernel != scn.model.kernel {
        observe(crate::Event::Note(&format!(
            "twin --vm: simulating with model.kernel = \"{}\" (the guest's Linux {}; the scenario said \"{}\")",
            sim_scn.model.kernel, runs[0].kernel, scn.model.kernel
        )));
    }
    let mut sim = crate::simulate_over_flush_phases_observed(&sim_scn, &mut |f| {
        observe(crate::Event::Simulating { fraction: f })
    })?;
    // Direct reclaim stalls summed over the zone index they are counted at: the kernel
    // counts a user page's at ZONE_MOVABLE (gfp_zone() of GFP_HIGHUSER_MOVABLE), the model
    // at its highest zone.
    for c in [&mut sim.mean, &mut sim.min, &mut sim.max] {
        add_allocstall_total(c);
    }
    for r in &mut real {
        add_allocstall_total(r);
    }
    let kernel = format!(
        "{} (VM, {}{})",
        runs[0].kernel,
        match accel {
            Accel::Kvm => "KVM",
            Accel::Tcg | Accel::Auto =>
                "emulated (TCG): the guest's times are not a real machine's",
        },
        if runs[0].lru_gen.is_empty() {
            String::new()
        } else {
            format!(", lru_gen {}", runs[0].lru_gen)
        }
    );
    let mut rep = crate::compare(scn, &sim, &real, swap, kernel);
    rep.cgroup = crate::host::CgroupVersion::V2;
    rep.memcg_stat = runs.iter().map(|r| r.memcg_stat.clone()).collect();
    rep.real_task_seconds = runs.iter().map(|r| r.task_seconds.clone()).collect();
    rep.vm = Some(VmReport {
        guest_runs: runs.to_vec(),
        accel,
        accel_reason,
        zones,
        simulated_zones: sim_scn
            .machine
            .zones
            .iter()
            .map(|z| (format!("{:?}", z.kind), z.pages))
            .collect(),
        simulated_min_free_kbytes: sim_scn.sysctl.min_free_kbytes,
        simulated_kernel: sim_scn.model.kernel.clone(),
        disk_probe,
        cost_profile,
        zoneinfo_before: runs[0].zoneinfo_before.clone(),
        buddyinfo_before: runs.iter().map(|r| r.buddyinfo_before.clone()).collect(),
        buddyinfo_after: runs.iter().map(|r| r.buddyinfo_after.clone()).collect(),
        zoneinfo_after: runs.iter().map(|r| r.zoneinfo_after.clone()).collect(),
    });
    Ok(rep)
}

/// The simulation follows the rules of the kernel the guest booted: `model.kernel` becomes
/// `kernel`, and what the scenario's load derived from its own version follows too: a
/// `model.max_file_folio_order` left at the scenario kernel's default gets the guest
/// kernel's (ext4 builds order-0 folios only before v6.16; the 6.1 guest's file streams did).
pub fn follow_guest_kernel(scn: &mut Scenario, kernel: String) {
    let folio_default = refault_scenario::default_file_folio_order_of;
    if Some(scn.model.max_file_folio_order) == folio_default(&scn.model.kernel) {
        if let Some(order) = folio_default(&kernel) {
            scn.model.max_file_folio_order = order;
        }
    }
    scn.model.kernel = kernel;
}

/// `model.kernel` for a guest's release string (`/proc/sys/kernel/osrelease`).
pub fn model_kernel_for(release: &str) -> Result<String, String> {
    refault_scenario::parse_kernel_version(release).ok_or_else(|| {
        format!(
            "the guest runs Linux {release:?}: the model knows kernels from 4.4 on \
             (model.kernel)"
        )
    })
}

/// What the VM twin adds to a report: the guest's own view of its memory.
#[derive(Clone, Debug, Serialize)]
pub struct VmReport {
    /// What each guest run brought back (for `refault fidelity --vm --replay`).
    pub guest_runs: Vec<GuestRun>,
    pub accel: Accel,
    /// Why this accelerator (`--accel auto`'s probe, or asked for).
    pub accel_reason: String,
    /// The guest's zones as the first run started ([`refault_scenario::zoneinfo::parse`]).
    pub zones: Vec<refault_scenario::zoneinfo::ZoneInfo>,
    /// The simulated machine's zones (kind, pages) and min_free_kbytes
    /// ([`machine_from_zoneinfo`]).
    pub simulated_zones: Vec<(String, u64)>,
    pub simulated_min_free_kbytes: Option<u64>,
    /// The `model.kernel` the simulation followed: the guest's version.
    pub simulated_kernel: String,
    /// The guest's disk as probed (mean over the runs); the simulated file-system device's
    /// latency and read rate.
    pub disk_probe: Option<DiskProbe>,
    /// The guest's CPU costs the simulation ran with ([`CostProfile`]); None for runs saved
    /// before the probe, or with `--scenario-costs`.
    pub cost_profile: Option<CostProfile>,
    /// /proc/zoneinfo at the start of the first run.
    pub zoneinfo_before: String,
    /// Per run.
    pub zoneinfo_after: Vec<String>,
    pub buddyinfo_before: Vec<String>,
    pub buddyinfo_after: Vec<String>,
}

/// `allocstall_total`: the sum of the `allocstall_<zone>` counters.
pub fn add_allocstall_total(c: &mut Counters) {
    let t: u64 = c
        .iter()
        .filter(|(k, _)| k.starts_with("allocstall_") && *k != "allocstall_total")
        .map(|(_, v)| *v)
        .sum();
    c.insert("allocstall_total".into(), t);
}

/// A per-node statistic of a /proc/zoneinfo text (`nr_inactive_file`, ...: the node's,
/// printed once under its first zone's "per-node stats"); 0 when absent.
pub fn zoneinfo_node_stat(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            let mut it = l.split_whitespace();
            (it.next() == Some(key))
                .then(|| it.next().and_then(|v| v.parse().ok()))
                .flatten()
        })
        .unwrap_or(0)
}

/// The object and task [`machine_from_zoneinfo`] adds for the guest's own page cache.
pub const GUEST_PAGE_CACHE: &str = "guest-page-cache";

/// The scenario with the guest's own page cache added, as the guest's `/proc/zoneinfo`
/// counted it when the run started: `nr_inactive_file + nr_active_file` (the refault binary
/// on the virtio disk, mapped by the running executor; the scenario does not describe it)
/// become a file object of that many pages, mapped by a page fault each. Under the classic
/// LRU the first `nr_active_file` of them are then read twice with read(), as the executor
/// reads its own binary before the run ([`probe_cpu`]: `mark_page_accessed()` twice makes
/// `folio_activate()` move them to the active list), so the simulated run starts with the
/// guest's active and inactive file lists. Under the multi-gen LRU the reads are left out:
/// the guest switched its MGLRU on after the executor's reads, and `fill_evictable()` moved
/// the active folios to `max_seq` with no refs (its `lru_gen_full` shows 1,293 of 1,327
/// there in v04), where reads under the model's MGLRU would give them refs
/// (`folio_inc_refs()`) instead; the model's fault puts all of them in `max_seq` too when it
/// simulates a kernel before v6.14 (6.1, 6.12: `lru_gen_add_folio()` puts an active folio
/// there), and in the second youngest generation from v6.14 (the default kernel).
///
/// A task of their own ([`GUEST_PAGE_CACHE`], appended after the scenario's objects and
/// tasks so theirs keep their indices and random streams) builds them; the guest kernel
/// counted them in use (managed - free), so they leave the zones' boot-time kernel pages
/// ([`machine_from_zoneinfo`]). The guest had them before its run started, so the
/// scenario's own tasks start once that task is done: every start moves by the time that
/// task alone takes on the machine (a short simulation of it, rounded up to the
/// millisecond; on one CPU a task still faulting them in would take the CPU from kswapd
/// while the scenario's tasks run), and the counters are measured from then
/// (`run.warmup`), as the guest's baseline `/proc/vmstat` was read with these pages
/// resident. Simplifications: the guest's anon and shmem (its processes' anon, the
/// initramfs on tmpfs: `nr_active_anon + nr_inactive_anon`) and slab stay among the kernel's
/// pages (docs/fidelity.md, session 19: the guest's MGLRU reclaims some of that anon, and
/// adding its mapped part, touched once, was tried and not kept); the executor's later use
/// of its code (its accessed bits set again on every op) is not modelled — nothing touches
/// these pages again.
pub fn add_guest_page_cache(scn: &mut Scenario, zoneinfo: &str) -> Result<(), String> {
    use refault_scenario::{
        Access, Advice, LruKind, ObjectKind, ObjectSpec, Pattern, PhaseSpec, TaskSpec, Workload,
    };
    let stat = |k| zoneinfo_node_stat(zoneinfo, k);
    let active_file = stat("nr_active_file");
    let pages = stat("nr_inactive_file") + active_file;
    if pages == 0 || scn.machine.zones.is_empty() {
        return Ok(());
    }
    let phase = |name: &str, access, object, end_page| PhaseSpec {
        name: name.into(),
        access,
        object,
        pattern: Pattern::Sequential,
        start_page: 0,
        end_page,
        ops: end_page,
        pages_per_op: 1,
        write_fraction: 0.0,
        think_ns: 0,
        advice: Advice::Normal,
        fsync: false,
        mix: Vec::new(),
    };
    let object = scn.objects.len();
    scn.objects.push(ObjectSpec {
        name: GUEST_PAGE_CACHE.into(),
        kind: ObjectKind::File,
        size_pages: pages,
        exists: true,
        file_pages: 0,
        madvise: Default::default(),
        mlock: false,
    });
    let mut phases = vec![phase("map", Access::Touch, object, pages)];
    if scn.policy.lru == LruKind::Classic && active_file > 0 {
        phases.push(phase("read", Access::Read, object, active_file));
        phases.push(phase("read-again", Access::Read, object, active_file));
    }
    scn.tasks.push(TaskSpec {
        name: GUEST_PAGE_CACHE.into(),
        cgroup: None,
        instances: 1,
        start_ns: 0,
        workload: Workload::Phases { phases, repeat: 1 },
    });
    // The guest kernel held them when the run started (managed - free): they leave the
    // zones' boot-time kernel pages, highest zone first (where the allocator put them),
    // and become the objects' pages once the task faults them in.
    let mut left = pages;
    for z in scn.machine.zones.iter_mut().rev() {
        let n = left.min(z.kernel);
        z.kernel -= n;
        left -= n;
    }
    if left > 0 {
        return Err(format!(
            "the guest's zoneinfo counts {pages} file pages but its zones hold only {} pages \
             in use",
            pages - left
        ));
    }
    let mut alone = scn.clone();
    alone.tasks = vec![scn.tasks.last().expect("just pushed").clone()];
    let r = refault_sim::run(&alone, Default::default()).map_err(|e| e.to_string())?;
    const MS: u64 = 1_000_000;
    let settle = ((r.sim_seconds * 1e9) as u64).div_ceil(MS).max(1) * MS;
    let n = scn.tasks.len() - 1;
    for t in &mut scn.tasks[..n] {
        t.start_ns += settle;
    }
    // The guest read its baseline /proc/vmstat with these pages already resident, so the
    // counters compared start where the scenario's tasks do (`run.warmup`, moved with
    // them): faulting them in again (a major fault, the readahead around it) is not the
    // run's.
    scn.run.warmup_ns += settle;
    Ok(())
}

/// The scenario with the guest's machine as `machine.from_zoneinfo` builds it
/// ([`refault_scenario::zoneinfo::machine_zones`]): each populated zone of the guest (DMA,
/// DMA32, Normal) with its present pages, the pages reserved at boot (present - managed),
/// the pages the guest kernel held when the run started (managed - free: its slab, page
/// tables, the initramfs in its rootfs, the executor's own pages), its `min`/`low`/`high`
/// watermarks and its `protection` (`lowmem_reserve[]`), so the simulation starts with the
/// free memory, watermarks and zone layout the guest kernel had. The 16 MiB DMA zone matters
/// to kswapd: `pgdat_balanced()` is satisfied by any eligible zone at its high watermark
/// (plus its `lowmem_reserve` against the waker's highest zone), and the allocator reaches
/// DMA only once DMA32 is below its low watermark. `min_free_kbytes` is the guest's (four
/// times the sum of its zones' min watermarks). `zoneinfo` is the guest's /proc/zoneinfo
/// text; bad input is an error naming the line.
pub fn machine_from_zoneinfo(scn: &Scenario, zoneinfo: &str) -> Result<Scenario, String> {
    const ORIGIN: &str = "the guest's /proc/zoneinfo";
    let parsed = refault_scenario::zoneinfo::parse(zoneinfo, ORIGIN).map_err(|e| e.to_string())?;
    let zones = refault_scenario::zoneinfo::machine_zones(&parsed, zoneinfo, ORIGIN)
        .map_err(|e| e.to_string())?;
    let mut out = scn.clone();
    out.machine.memory_pages = zones.iter().map(|z| z.pages).sum();
    out.sysctl.min_free_kbytes = Some(
        zones
            .iter()
            .filter_map(|z| z.wmark)
            .map(|w| w[0])
            .sum::<u64>()
            * 4,
    );
    out.machine.zones = zones;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use refault_scenario::Access;

    /// A tracefs text as 6.1 prints the four vmscan events: counted by task name (the pid
    /// dropped) and fields, most frequent first; the node id dropped.
    #[test]
    fn vmscan_trace_is_counted_by_task_and_fields() {
        let text = "# tracer: nop\n#\n\
            reader-301 [000] d..2. 10.000001: mm_vmscan_wakeup_kswapd: nid=0 order=0 gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_NORETRY\n\
            kswapd0-30 [000] ..... 10.000002: mm_vmscan_kswapd_wake: nid=0 order=0\n\
            reader-301 [000] d..2. 10.000101: mm_vmscan_wakeup_kswapd: nid=0 order=0 gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_NORETRY\n\
            reader-302 [000] ..... 10.0002: mm_vmscan_direct_reclaim_begin: order=0 gfp_flags=GFP_HIGHUSER_MOVABLE\n\
            reader-301 [000] d..2. 10.0003: mm_page_alloc_extfrag: page=0000000012345678 pfn=0xe2c alloc_order=0 fallback_order=9 pageblock_order=9 alloc_migratetype=1 fallback_migratetype=0 fragmenting=0 change_ownership=1\n\
            reader-301 [000] d..2. 10.0004: mm_page_alloc_extfrag: page=00000000abcdef01 pfn=0x3f01 alloc_order=0 fallback_order=3 pageblock_order=9 alloc_migratetype=0 fallback_migratetype=1 fragmenting=1 change_ownership=0\n";
        let t = summarise_trace(text, 3);
        assert_eq!(t.lost, 3);
        assert_eq!(t.head.len(), 6);
        assert_eq!(
            t.counts,
            vec![
                ("reader: mm_vmscan_wakeup_kswapd: order=0 gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_NORETRY".to_string(), 2),
                ("kswapd0: mm_vmscan_kswapd_wake: order=0".to_string(), 1),
                ("reader: mm_page_alloc_extfrag: zone=DMA alloc_order=0 fallback_order=9 pageblock_order=9 alloc_migratetype=1 fallback_migratetype=0 fragmenting=0 change_ownership=1".to_string(), 1),
                ("reader: mm_page_alloc_extfrag: zone=DMA32 alloc_order=0 fallback_order=3 pageblock_order=9 alloc_migratetype=0 fallback_migratetype=1 fragmenting=1 change_ownership=0".to_string(), 1),
                ("reader: mm_vmscan_direct_reclaim_begin: order=0 gfp_flags=GFP_HIGHUSER_MOVABLE".to_string(), 1),
            ]
        );
    }

    /// A guest's /proc/zoneinfo as a run started: Debian's 6.1 cloud kernel on the suite's
    /// 256 MiB machine (runs B of docs/fidelity/vm-debian-6.1-s12-runs-b.json).
    const ZONEINFO: &str = include_str!("../../../docs/zoneinfo/guest-debian-6.1-256m.zoneinfo");

    fn tiny_scenario(extra: &str) -> Scenario {
        refault_scenario::parse(
            &format!("[machine]\nmemory = \"256M\"\n{extra}"),
            "t.toml",
            &[],
            None,
        )
        .unwrap()
    }

    /// The simulated machine is the guest's zone layout as `machine.from_zoneinfo` reads it:
    /// the 16 MiB DMA zone and DMA32 with their present, reserved and in-use pages, the
    /// kernel's watermarks and protection, and the Mm built from it has exactly the guest's
    /// managed and free pages per zone.
    #[test]
    fn machine_built_from_the_guests_zone_layout() {
        let scn = tiny_scenario("[[object]]\nname = \"a\"\nkind = \"anon\"\nsize = \"1M\"\n[[task]]\nname = \"t\"\n[[task.phase]]\naccess = \"touch\"\nobject = \"a\"\npattern = \"sequential\"\n");
        let m = machine_from_zoneinfo(&scn, ZONEINFO).unwrap();
        use refault_scenario::{ZoneKind, ZoneSpec};
        assert_eq!(
            m.machine.zones,
            vec![
                ZoneSpec {
                    kind: ZoneKind::Dma,
                    pages: 3998,
                    reserved: 3998 - 3840,
                    kernel: 3840 - 3808,
                    wmark: Some([32, 40, 48]),
                    protection: Some([0, 188, 188]),
                },
                ZoneSpec {
                    kind: ZoneKind::Dma32,
                    pages: 61405,
                    reserved: 61405 - 51813,
                    kernel: 51813 - 42441,
                    wmark: Some([435, 543, 651]),
                    protection: Some([0, 0, 0]),
                },
            ]
        );
        assert_eq!(m.machine.memory_pages, 3998 + 61405);
        assert_eq!(m.sysctl.min_free_kbytes, Some((32 + 435) * 4));
        // The simulation runs on it with the guest's managed pages and watermarks.
        let r = refault_sim::run(&m, Default::default()).unwrap();
        let z: Vec<_> = r
            .watermarks
            .iter()
            .map(|z| (z.managed_pages, z.min, z.low, z.high))
            .collect();
        assert_eq!(z, vec![(3840, 32, 40, 48), (51813, 435, 543, 651)]);
        // A zoneinfo the twin cannot use is an error naming the line, not a panic.
        let bad = ZONEINFO.replace("min      435", "min      4x5");
        assert_eq!(
            machine_from_zoneinfo(&scn, &bad).unwrap_err(),
            "the guest's /proc/zoneinfo:84:9: min: `4x5` is not a page count"
        );
    }

    /// The guest's file pages at the start (808 inactive + 12 active) join the machine as
    /// a mapped file object: a file stream past them reclaims each once, after keeping it
    /// once for its young PTE (two scans each), where the stream's own unmapped pages are
    /// scanned once.
    #[test]
    fn the_simulation_follows_the_guest_kernels_file_folio_order() {
        let scn = tiny_scenario("");
        assert_eq!(scn.model.kernel, "6.18");
        assert_eq!(scn.model.max_file_folio_order, 9);
        // A 6.1 guest: ext4 without large folios.
        let mut m = scn.clone();
        follow_guest_kernel(&mut m, "6.1".into());
        assert_eq!(
            (m.model.kernel.as_str(), m.model.max_file_folio_order),
            ("6.1", 0)
        );
        // A 7.2 guest keeps order 9; an order the scenario chose is kept.
        let mut m = scn.clone();
        follow_guest_kernel(&mut m, "7.2".into());
        assert_eq!(m.model.max_file_folio_order, 9);
        let mut m = scn.clone();
        m.model.max_file_folio_order = 4;
        follow_guest_kernel(&mut m, "6.1".into());
        assert_eq!(m.model.max_file_folio_order, 4);
    }

    #[test]
    fn guest_page_cache_is_on_the_simulated_machine() {
        assert_eq!(zoneinfo_node_stat(ZONEINFO, "nr_inactive_file"), 808);
        assert_eq!(zoneinfo_node_stat(ZONEINFO, "nr_active_file"), 12);
        let scn = tiny_scenario("[[object]]\nname = \"f\"\nkind = \"file\"\nsize = \"512M\"\n[[task]]\nname = \"t\"\nstart = \"10ms\"\n[[task.phase]]\naccess = \"read\"\nobject = \"f\"\npattern = \"sequential\"\npages_per_op = 32\n");
        let bare = machine_from_zoneinfo(&scn, ZONEINFO).unwrap();
        let mut m = bare.clone();
        add_guest_page_cache(&mut m, ZONEINFO).unwrap();
        // The guest counted them in use in DMA32: they leave its kernel pages.
        assert_eq!(m.machine.memory_pages, bare.machine.memory_pages);
        assert_eq!(
            m.machine.zones[1].kernel,
            bare.machine.zones[1].kernel - 820
        );
        assert_eq!(m.machine.zones[0], bare.machine.zones[0]);
        // The scenario's task starts once the guest's pages are mapped.
        let settle = m.tasks[0].start_ns - bare.tasks[0].start_ns;
        assert!(settle > 0 && settle.is_multiple_of(1_000_000), "{settle}");
        // ... and the counters compared start with it: the guest read its baseline with
        // these pages resident, so their fault (a major one: the file is not in the cache
        // at the simulation's start) is not the run's.
        assert_eq!(m.run.warmup_ns, bare.run.warmup_ns + settle);
        let majflt = |scn: &Scenario| {
            let r = refault_sim::run(scn, Default::default()).unwrap();
            r.vmstat.get("pgmajfault").copied().unwrap_or(0)
        };
        assert_eq!(majflt(&bare), 0);
        assert_eq!(majflt(&m), 0);
        let mut from_zero = m.clone();
        from_zero.run.warmup_ns = 0;
        assert!(majflt(&from_zero) >= 1);
        assert_eq!(m.objects.len(), 2);
        assert_eq!(m.objects[1].size_pages, 820);
        assert_eq!(m.tasks[1].name, GUEST_PAGE_CACHE);
        let extra_scans = |scn: &Scenario| {
            let r = refault_sim::run(scn, Default::default()).unwrap();
            let v = |k: &str| r.vmstat.get(k).copied().unwrap_or(0);
            // Folios kswapd set aside for a higher zone than the boosted DMA zone it reclaims
            // for count as scanned (`isolate_lru_folios()`), not as pages the guest's cache
            // added.
            let skipped = v("pgskip_dma") + v("pgskip_dma32") + v("pgskip_normal");
            (
                v("pgscan_file") - v("pgsteal_file") - skipped,
                v("pgsteal_file"),
            )
        };
        let (extra_bare, _) = extra_scans(&bare);
        let (extra, stolen) = extra_scans(&m);
        assert_eq!(extra_bare, 0);
        // The 808 inactive ones, each kept once (mapped, young); the 12 active ones start on
        // the active list and are not reached.
        assert_eq!(extra, 808);
        assert!(stolen > 131_072 - 60_000, "{stolen}");
    }

    /// The guest's page cache starts as the guest's zoneinfo counts it: under the classic
    /// LRU the `nr_active_file` pages are on the active list once the guest's task is done
    /// (read twice: `folio_activate()`), the rest inactive; under the multi-gen LRU none is
    /// read (a read would give it refs) and all are where the model's fault puts them: with
    /// the default kernel (v6.14+) the second youngest generation (6.1 and 6.12 put them in
    /// `max_seq`, where the 6.1 guest's `lru_gen_full` shows most of them).
    #[test]
    fn guest_active_file_pages_start_active() {
        let zoneinfo = ZONEINFO
            .replace("nr_inactive_file 808", "nr_inactive_file 20")
            .replace("nr_active_file 12", "nr_active_file 800");
        let guest_alone = |lru: &str| {
            let scn = tiny_scenario(&format!(
                "[policy]\nlru = \"{lru}\"\n[[object]]\nname = \"a\"\nkind = \"anon\"\nsize = \"4K\"\n[[task]]\nname = \"t\"\n[[task.phase]]\naccess = \"touch\"\nobject = \"a\"\npattern = \"sequential\"\n"
            ));
            let mut m = machine_from_zoneinfo(&scn, &zoneinfo).unwrap();
            add_guest_page_cache(&mut m, &zoneinfo).unwrap();
            m.tasks.remove(0);
            m.run.warmup_ns = 0;
            (m.clone(), refault_sim::run(&m, Default::default()).unwrap())
        };
        let (m, r) = guest_alone("classic");
        let phases = match &m.tasks[0].workload {
            refault_scenario::Workload::Phases { phases, .. } => phases.clone(),
            w => panic!("{w:?}"),
        };
        let what: Vec<(Access, u64)> = phases.iter().map(|p| (p.access, p.end_page)).collect();
        assert_eq!(
            what,
            vec![
                (Access::Touch, 820),
                (Access::Read, 800),
                (Access::Read, 800)
            ]
        );
        let last = |k: &str| *r.timeseries[k].last().unwrap() as u64;
        assert_eq!(
            (last("nr_active_file"), last("nr_inactive_file")),
            (800, 20)
        );
        let (m, r) = guest_alone("mglru");
        match &m.tasks[0].workload {
            refault_scenario::Workload::Phases { phases, .. } => assert_eq!(phases.len(), 1),
            w => panic!("{w:?}"),
        }
        let root = &r.lru_gen.as_ref().unwrap()[0];
        let youngest = root.generations.last().unwrap();
        let second = &root.generations[root.generations.len() - 2];
        assert_eq!(
            (youngest.nr_file, second.seq, second.nr_file),
            (0, root.max_seq - 1, 820)
        );
        assert_eq!(r.vmstat.get("pgactivate").copied().unwrap_or(0), 0);
    }

    #[test]
    fn cpio_newc_layout() {
        let mut c = Cpio::default();
        c.file("init", true, b"hi");
        let b = c.finish();
        // Header (110 bytes) + "init\0" padded to 116, data padded to 120, then the trailer.
        assert_eq!(&b[..6], b"070701");
        assert_eq!(&b[110..115], b"init\0");
        assert_eq!(&b[116..118], b"hi");
        assert_eq!(&b[120..126], b"070701");
        assert_eq!(b.len() % 4, 0);
        // mode 100755, size 2, namesize 5
        let h = std::str::from_utf8(&b[..110]).unwrap();
        assert_eq!(&h[14..22], "000081ed");
        assert_eq!(&h[54..62], "00000002");
        assert_eq!(&h[94..102], "00000005");
    }

    #[test]
    fn disk_holds_files_binary_and_slack() {
        let scn = refault_scenario::parse(
            "[machine]\nmemory = \"256M\"\n[[object]]\nname = \"f\"\nkind = \"file\"\nsize = \"100M\"\n[[task]]\nname = \"t\"\n[[task.phase]]\naccess = \"read\"\nobject = \"f\"\npattern = \"sequential\"\n",
            "t.toml",
            &[],
            None,
        )
        .unwrap();
        let b = disk_bytes(&scn, SwapKind::None, 10 << 20);
        // (100 + 10 + 64) MiB * 1.25, rounded up to a MiB.
        assert_eq!(b, ((174u64 << 20) * 5 / 4).div_ceil(1 << 20) << 20);
    }

    #[test]
    fn accel_names_and_the_guest_kernel_version() {
        assert_eq!("auto".parse::<Accel>(), Ok(Accel::Auto));
        assert_eq!("kvm".parse::<Accel>(), Ok(Accel::Kvm));
        assert!("hvf"
            .parse::<Accel>()
            .unwrap_err()
            .contains("auto, tcg or kvm"));
        assert_eq!(model_kernel_for("6.1.0-50-cloud-amd64").unwrap(), "6.1");
        assert_eq!(
            model_kernel_for("6.12.48+deb13-cloud-amd64").unwrap(),
            "6.12"
        );
        // model.kernel reaches back to 5.0 (the S3 seed's kernels); the multi-gen LRU is
        // refused below 6.1 where the scenario is resolved.
        assert_eq!(model_kernel_for("5.10.0-30-amd64").unwrap(), "5.10");
        assert!(model_kernel_for("3.10.0-1160.el7.x86_64")
            .unwrap_err()
            .contains("(model.kernel)"));
    }

    #[test]
    fn the_probed_disk_replaces_latency_and_read_rate_only() {
        let mut scn = refault_scenario::parse(
            "[machine]\nmemory = \"256M\"\n[[device]]\nname = \"disk\"\npreset = \"nvme\"\n[fs]\ndevice = \"disk\"\n",
            "t.toml",
            &[],
            None,
        )
        .unwrap();
        let before = scn.devices[scn.fs_device].clone();
        let p = DiskProbe {
            latency_ns: 250_000,
            read_bytes_per_sec: 400_000_000,
            random_reads: 256,
            sequential_bytes: 32 << 20,
        };
        device_from_probe(&mut scn, &p);
        let d = &scn.devices[scn.fs_device];
        assert_eq!((d.latency_ns, d.read_bytes_per_sec), (250_000, 400_000_000));
        assert_eq!(d.write_bytes_per_sec, before.write_bytes_per_sec);
        assert_eq!(d.queue_depth, before.queue_depth);
        assert_eq!(d.rotational, before.rotational);
        assert!(d.preset.starts_with("nvme"));
    }

    /// The probe's sequential rate: the latency comes out, but at most half the time (a
    /// slow random-read mean on a loaded emulator made the rate 16,777,216 TB/s before).
    #[test]
    fn probe_transfer_time_keeps_at_least_half_the_elapsed_time() {
        assert_eq!(seq_transfer_ns(100_000_000, 20_000_000), 80_000_000);
        assert_eq!(seq_transfer_ns(40_000_000, 54_848_000), 20_000_000);
        assert_eq!(seq_transfer_ns(1, 0), 1);
    }

    /// Two probes whose sums give round figures over the default cost table, and the table
    /// `CostProfile::from_probes` derives, computed by hand from its formulas.
    fn two_probes() -> (CpuCostProbe, CpuCostProbe) {
        let a = CpuCostProbe {
            fault_ns: 3_000_000,
            faults: 500,
            touch_ns: 100_000,
            touches: 1_000,
            read_ns: 2_000_000,
            reads: 1_000,
            file_reclaim_ns: 600_000,
            file_scanned: 400,
            file_reclaimed: 400,
            anon_reclaim_ns: 20_000_000,
            anon_scanned: 1_000,
            anon_reclaimed: 500,
            pswpout: 500,
            swapin_ns: 7_000_000,
            pswpin: 500,
            zram_write_ns: 30_000_000,
            zram_read_ns: 3_000_000,
            zram_pages: 1_000,
            ..Default::default()
        };
        let b = CpuCostProbe {
            fault_ns: 3_500_000,
            faults: 500,
            file_reclaim_ns: 1_300_000,
            file_scanned: 600,
            file_reclaimed: 600,
            anon_reclaim_ns: 17_800_000,
            anon_scanned: 1_000,
            anon_reclaimed: 500,
            pswpout: 500,
            swapin_ns: 7_500_000,
            pswpin: 500,
            ..Default::default()
        };
        (a, b)
    }

    #[test]
    fn cost_profile_follows_its_formulas() {
        let scn = scenario_for_costs();
        let base = &scn.costs;
        // The defaults the hand computation below starts from.
        assert_eq!(
            (
                base.minor_fault_ns,
                base.page_alloc_ns,
                base.scan_per_page_ns
            ),
            (500, 150, 40)
        );
        assert_eq!(
            (
                base.reclaim_per_page_ns,
                base.lru_move_ns,
                base.io_submit_ns
            ),
            (150, 50, 2_000)
        );
        let (a, b) = two_probes();
        let p = CostProfile::from_probes(&[&a, &b], base).unwrap();
        assert_eq!(p.probes, 2);
        // Sums: 6.5 ms / 1000 faults; 1.9 ms / 1000 file pages; 37.8 ms / 1000 anon pages
        // reclaimed, 2000 scanned; 14.5 ms / 1000 swap-ins; zram 30 / 3 us per page.
        assert_eq!(p.get("anon_fault"), Some(6_500.0));
        assert_eq!(p.get("file_reclaim"), Some(1_900.0));
        assert_eq!(p.get("anon_scans"), Some(2.0));
        let c = &p.costs;
        assert_eq!((c.touch_ns, c.pagecache_hit_ns), (100, 2_000));
        // kf = 6500 / (500 + 150) = 10.
        assert_eq!((c.minor_fault_ns, c.page_alloc_ns), (5_000, 1_500));
        // kr = 1900 / (40 + 150) = 10, also for the costs no stage measures.
        assert_eq!((c.scan_per_page_ns, c.reclaim_per_page_ns), (400, 1_500));
        assert_eq!((c.lru_move_ns, c.lru_lock_ns), (500, 1_000));
        assert_eq!(
            (
                c.pt_walk_per_pte_ns,
                c.compact_scan_per_page_ns,
                c.migrate_per_page_ns
            ),
            (100, 100, 10_000)
        );
        assert_eq!(c.io_submit_ns, 2_000);
        // rmap: 37800 - (2 * 400 + 1 * 500 + 1500 + 2000 + 30000) = 3000 ns per reclaimed
        // page for three walks (2 folio_referenced(), 1 try_to_unmap()) and a local flush:
        // over the defaults 3 * 150 + 2 * 237 + 560 + 137 = 1621 ns, ka = 3000 / 1621.
        assert_eq!(
            (base.rmap_per_call_ns, base.rmap_per_mapping_ns),
            (150, 237)
        );
        assert_eq!(
            (base.unmap_per_mapping_ns, base.tlb_flush_local_ns),
            (560, 137)
        );
        assert_eq!(
            (
                c.rmap_per_call_ns,
                c.rmap_per_mapping_ns,
                c.unmap_per_mapping_ns,
                c.tlb_flush_local_ns
            ),
            (278, 439, 1_036, 254)
        );
        // The IPI costs are not measured: the scenario's.
        assert_eq!(
            (c.tlb_shootdown_ns, c.tlb_shootdown_per_cpu_ns),
            (base.tlb_shootdown_ns, base.tlb_shootdown_per_cpu_ns)
        );
        // major fault: 14500 - (1500 + 2000 + 3000) = 8000.
        assert_eq!(c.major_fault_ns, 8_000);
        assert_eq!(
            (p.zram_write_ns, p.zram_read_ns),
            (Some(30_000), Some(3_000))
        );
        assert!(p.describe().contains("anon fault 6.5"), "{}", p.describe());
    }

    /// Without an anon, swap-in or zram stage (a guest without swap) the rmap and major
    /// fault costs scale with the reclaim and fault paces, and no device CPU is measured.
    #[test]
    fn cost_profile_without_swap_stages_scales_rmap_and_major_fault() {
        let scn = scenario_for_costs();
        let a = CpuCostProbe {
            fault_ns: 6_500_000,
            faults: 1_000,
            file_reclaim_ns: 3_800_000,
            file_scanned: 1_000,
            ..Default::default()
        };
        let p = CostProfile::from_probes(&[&a], &scn.costs).unwrap();
        // kf = 10, kr = 20; touch and cached reads not measured: the scenario's.
        assert_eq!(
            (
                p.costs.rmap_per_call_ns,
                p.costs.rmap_per_mapping_ns,
                p.costs.unmap_per_mapping_ns,
                p.costs.tlb_flush_local_ns
            ),
            (150 * 20, 237 * 20, 560 * 20, 137 * 20)
        );
        assert_eq!(p.costs.major_fault_ns, 2_000 * 10);
        assert_eq!((p.costs.touch_ns, p.costs.pagecache_hit_ns), (5, 200));
        assert_eq!((p.zram_write_ns, p.zram_read_ns), (None, None));
        assert_eq!(p.get("anon_reclaim"), None);
    }

    /// The profile replaces the cost table and gives the zram swap device its measured
    /// write and read CPU; the file-system device is left alone.
    #[test]
    fn cost_profile_applies_to_the_table_and_the_zram_device() {
        let mut scn = scenario_for_costs();
        let (a, b) = two_probes();
        let p = CostProfile::from_probes(&[&a, &b], &scn.costs).unwrap();
        let disk = scn.devices[scn.fs_device].clone();
        apply_cost_profile(&mut scn, &p);
        assert_eq!(scn.costs, p.costs);
        let z = &scn.devices[scn.swap[0].device];
        assert_eq!(
            (z.cpu_ns_per_page, z.read_cpu_ns_per_page),
            (30_000, Some(3_000))
        );
        assert_eq!(scn.devices[scn.fs_device], disk);
    }

    /// Runs saved before the probe (no `cpu_costs` in their JSON) give no profile, so they
    /// replay with the scenario's costs as before; `--scenario-costs` gives none either.
    #[test]
    fn runs_without_the_probe_keep_the_scenario_costs() {
        let scn = scenario_for_costs();
        let old: GuestRun = serde_json::from_str(
            r#"{"kernel": "6.1.0", "vmstat": {}, "zoneinfo_before": "", "zoneinfo_after": "",
            "buddyinfo_before": "", "buddyinfo_after": "", "lru_gen": "",
            "task_seconds": [], "memcg_stat": {}, "cpu_probe_ns": 19000}"#,
        )
        .unwrap();
        assert_eq!(old.cpu_costs, None);
        assert_eq!(
            guest_cost_profile(&scn, std::slice::from_ref(&old), true),
            None
        );
        let (a, _) = two_probes();
        let new = GuestRun {
            cpu_costs: Some(a),
            ..old.clone()
        };
        assert!(guest_cost_profile(&scn, &[old.clone(), new.clone()], true).is_some());
        assert_eq!(guest_cost_profile(&scn, &[new], false), None);
    }

    fn scenario_for_costs() -> Scenario {
        refault_scenario::parse(
            "[machine]\nmemory = \"256M\"\n[[device]]\nname = \"disk\"\npreset = \"nvme\"\n\
             [[device]]\nname = \"zram0\"\npreset = \"zram\"\n[fs]\ndevice = \"disk\"\n\
             [[swap.area]]\ndevice = \"zram0\"\nsize = \"64M\"\n[[object]]\nname = \"a\"\n\
             kind = \"anon\"\nsize = \"1M\"\n[[task]]\nname = \"t\"\n[[task.phase]]\n\
             access = \"touch-write\"\nobject = \"a\"\npattern = \"sequential\"\n",
            "costs.toml",
            &[],
            None,
        )
        .unwrap()
    }
}
