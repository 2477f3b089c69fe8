//! The result of a run, serialised as the result JSON (`refault run --out`).

use crate::block::DeviceStats;
use crate::hist::Histogram;
use refault_mm::Mm;
use refault_scenario::Scenario;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize, Clone, Debug)]
pub struct SimResult {
    /// The resolved scenario (every default filled in).
    pub scenario: Scenario,
    /// /proc/vmstat counters: events as deltas over the measured period (after warm-up),
    /// gauges (`nr_*`) as at the end.
    pub vmstat: BTreeMap<String, u64>,
    pub tasks: Vec<TaskResult>,
    /// Sampled every `run.sample_interval`: `t_s` and one array per series.
    pub timeseries: BTreeMap<String, Vec<f64>>,
    pub sim_seconds: f64,
    pub wall_seconds: f64,
    /// Workload events simulated.
    pub events: u64,
    /// Page accesses among them: touches, and the pages of `read()`, `write()` and file
    /// creation (the other events are fsync, advice, think time, operation ends, phase
    /// markers and kernel allocations).
    pub accesses: u64,
    /// Reclaim CPU time by activity (seconds), all reclaimers.
    pub reclaim_cpu: ReclaimCpuSeconds,
    /// kswapd's CPU over the measured period and what it spent it on, the view a `perf`
    /// profile of kswapd gives (seed S1 compares two).
    pub kswapd_cpu: KswapdCpuSeconds,
    /// memory.stat-like figures per cgroup at the end.
    pub cgroups: Vec<CgroupResult>,
    pub devices: Vec<DeviceResult>,
    pub watermarks: Vec<ZoneResult>,
    pub min_free_kbytes: u64,
    /// Compaction work by who did it, and how long kswapd and kcompactd were awake.
    pub compaction: CompactionResult,
    /// kswapd's reclaim split between boosted and normal passes of balance_pgdat() (whole
    /// run, warm-up included; `refault_mm::kswapd::KswapdBoostStats`).
    pub kswapd_boost: refault_mm::kswapd::KswapdBoostStats,
    /// The CPU scheduler (`crate::sched`): each thread's CPU time and run-queue wait over
    /// the whole run (warm-up included).
    pub sched: SchedResult,
    /// The LRU locks: acquisitions, contention, wait and hold time (measured period).
    pub lru_lock: LruLockResult,
    /// `/proc/buddyinfo` and `/proc/pagetypeinfo` views with the extfrag indices, sampled
    /// every `run.sample_interval` (and at the end).
    pub buddyinfo: Vec<BuddySample>,
    /// Multi-gen LRU only: each memcg's generations and tiers at the end, as
    /// `/sys/kernel/debug/lru_gen_full` shows them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lru_gen: Option<Vec<LruGenResult>>,
}

/// One memcg's multi-gen LRU state (`lru_gen_full`).
#[derive(Serialize, Clone, Debug)]
pub struct LruGenResult {
    /// `/` for the root, else the cgroup's name.
    pub memcg: String,
    pub max_seq: u64,
    pub min_seq_anon: u64,
    pub min_seq_file: u64,
    /// Oldest first.
    pub generations: Vec<LruGenGeneration>,
    /// Per type, tiers 0..3 of the current history slot and the running averages.
    pub tiers_anon: Vec<LruGenTier>,
    pub tiers_file: Vec<LruGenTier>,
    /// Aging and page-table walk statistics.
    pub agings: u64,
    pub vmas_walked: u64,
    pub pmd_total: u64,
    pub pmd_found: u64,
    pub pmd_added: u64,
    pub pte_total: u64,
    pub pte_young: u64,
    pub look_arounds: u64,
    pub look_around_young: u64,
}

#[derive(Serialize, Clone, Debug)]
pub struct LruGenGeneration {
    pub seq: u64,
    pub age_ms: u64,
    pub nr_anon: u64,
    pub nr_file: u64,
}

#[derive(Serialize, Clone, Debug)]
pub struct LruGenTier {
    pub tier: usize,
    pub avg_refaulted: u64,
    pub avg_total: u64,
    pub refaulted: u64,
    pub evicted: u64,
    pub protected: u64,
}

impl LruGenResult {
    pub fn from_view(v: &refault_mm::mglru::LruGenView, names: &[String]) -> Self {
        let tiers = |ty: usize| {
            v.tiers[ty]
                .iter()
                .enumerate()
                .map(|(tier, t)| LruGenTier {
                    tier,
                    avg_refaulted: t.0,
                    avg_total: t.1,
                    refaulted: t.2,
                    evicted: t.3,
                    protected: t.4,
                })
                .collect()
        };
        LruGenResult {
            memcg: if v.memcg == 0 {
                "/".into()
            } else {
                names.get(v.memcg - 1).cloned().unwrap_or_default()
            },
            max_seq: v.max_seq,
            min_seq_anon: v.min_seq[0],
            min_seq_file: v.min_seq[1],
            generations: v
                .gens
                .iter()
                .map(|&(seq, age_ms, nr_anon, nr_file)| LruGenGeneration {
                    seq,
                    age_ms,
                    nr_anon,
                    nr_file,
                })
                .collect(),
            tiers_anon: tiers(0),
            tiers_file: tiers(1),
            agings: v.walk.agings,
            vmas_walked: v.walk.vmas_walked,
            pmd_total: v.walk.pmd_total,
            pmd_found: v.walk.pmd_found,
            pmd_added: v.walk.pmd_added,
            pte_total: v.walk.pte_total,
            pte_young: v.walk.pte_young,
            look_arounds: v.walk.look_arounds,
            look_around_young: v.walk.look_around_young,
        }
    }
}

#[derive(Serialize, Clone, Debug)]
pub struct TaskResult {
    pub name: String,
    pub ops: u64,
    pub ops_per_sec: f64,
    /// Simulated time from the task's start (or the end of warm-up) to the end of its
    /// stream, or to the end of the run for a task that did not finish.
    pub seconds: f64,
    pub latency_us: LatencyUs,
    pub cpu_seconds: f64,
    /// CPU time over the measured period (after the warm-up), the period `ops` counts.
    pub measured_cpu_seconds: f64,
    pub major_faults: u64,
    pub finished: bool,
    pub oom_killed: bool,
    /// kalloc workload: allocations attempted and satisfied (after warm-up).
    #[serde(skip_serializing_if = "is_zero")]
    pub kalloc_attempts: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub kalloc_success: u64,
    /// Time the task spent paused by dirty throttling (`balance_dirty_pages()`), seconds,
    /// over the whole run.
    pub dirty_throttle_seconds: f64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The scheduler's view of a run.
#[derive(Serialize, Clone, Debug, Default)]
pub struct SchedResult {
    pub cpus: u32,
    /// `sysctl_sched_base_slice` for that many CPUs.
    pub base_slice_ms: f64,
    /// Tasks (by name) then kswapd0, the flusher and kcompactd0.
    pub threads: Vec<ThreadSchedResult>,
}

/// One thread's `/proc/PID/schedstat`-like figures.
#[derive(Serialize, Clone, Debug, Default)]
pub struct ThreadSchedResult {
    pub name: String,
    /// Time on a CPU.
    pub cpu_seconds: f64,
    /// Time runnable but waiting for a CPU (`run_delay`).
    pub runqueue_wait_seconds: f64,
    /// Longest single wait.
    pub max_wait_ms: f64,
    /// Times it had to wait for a CPU.
    pub nr_waits: u64,
    /// Times it lost its CPU while still runnable (involuntary switches).
    pub nr_preempted: u64,
    /// CPU time spent spinning on a held `lru_lock` (part of `cpu_seconds`).
    pub lru_lock_wait_seconds: f64,
}

#[derive(Serialize, Clone, Debug, Default)]
pub struct CompactionResult {
    /// CPU time spent scanning and migrating by allocating tasks (direct compaction).
    pub direct_cpu_seconds: f64,
    /// ... by kcompactd (woken and proactive).
    pub kcompactd_cpu_seconds: f64,
    /// ... by kswapd itself (policy.kswapd_compaction = "kswapd").
    pub kswapd_cpu_seconds: f64,
    /// Time kcompactd was awake ("Time kcompactd awake" of the seed's ftrace monitor).
    pub kcompactd_awake_seconds: f64,
    /// Time kswapd was awake, from wakeup to the end of balance_pgdat().
    pub kswapd_awake_seconds: f64,
}

/// One sample of the free lists.
#[derive(Serialize, Clone, Debug)]
pub struct BuddySample {
    pub t_s: f64,
    pub zones: Vec<ZoneBuddy>,
}

#[derive(Serialize, Clone, Debug)]
pub struct ZoneBuddy {
    pub zone: String,
    /// `/proc/buddyinfo`: free blocks per order 0..=10.
    pub free_blocks: Vec<u64>,
    /// `/proc/pagetypeinfo`: free blocks per migratetype and order.
    pub free_blocks_by_type: BTreeMap<String, Vec<u64>>,
    /// `/proc/pagetypeinfo`'s "Number of blocks type": pageblocks per migratetype.
    pub pageblocks_by_type: BTreeMap<String, u64>,
    /// `/sys/kernel/debug/extfrag/unusable_index` per order (0..1).
    pub unusable_index: Vec<f64>,
    /// `/sys/kernel/debug/extfrag/extfrag_index` per order (-1 = a block of the order is
    /// free, else 0..1).
    pub extfrag_index: Vec<f64>,
    pub watermark_boost: u64,
}

impl ZoneBuddy {
    pub fn of(z: &refault_mm::mmzone::Zone) -> Self {
        use refault_mm::mmzone::{mt::NAMES, MIGRATE_TYPES};
        let mut by_type = BTreeMap::new();
        let mut blocks = BTreeMap::new();
        for (t, name) in NAMES.iter().enumerate().take(MIGRATE_TYPES) {
            by_type.insert(
                name.to_string(),
                (0..z.free_area.len())
                    .map(|o| z.nr_free_list(o, t))
                    .collect(),
            );
            blocks.insert(name.to_string(), z.nr_pageblocks[t]);
        }
        let orders = 0..z.nr_free.len() as u32;
        ZoneBuddy {
            zone: z.name.to_string(),
            free_blocks: z.nr_free.to_vec(),
            free_blocks_by_type: by_type,
            pageblocks_by_type: blocks,
            unusable_index: orders
                .clone()
                .map(|o| z.contig_page_info(o).unusable_index(o) as f64 / 1000.0)
                .collect(),
            extfrag_index: orders
                .map(|o| {
                    let i = z.contig_page_info(o).fragmentation_index(o);
                    if i < 0 {
                        -1.0
                    } else {
                        i as f64 / 1000.0
                    }
                })
                .collect(),
            watermark_boost: z.watermark_boost,
        }
    }
}

#[derive(Serialize, Clone, Debug)]
pub struct LatencyUs {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl LatencyUs {
    pub fn from_hist(h: &Histogram) -> Self {
        let us = |ns: u64| ns as f64 / 1e3;
        LatencyUs {
            mean: (h.mean() / 1e3 * 1000.0).round() / 1000.0,
            p50: us(h.quantile(0.5)),
            p90: us(h.quantile(0.9)),
            p99: us(h.quantile(0.99)),
            p999: us(h.quantile(0.999)),
            max: us(h.max),
        }
    }
}

#[derive(Serialize, Clone, Debug, Default)]
pub struct ReclaimCpuSeconds {
    pub scan: f64,
    pub rmap_walk: f64,
    /// Multi-gen LRU aging: page-table walks (`walk_mm()`); 0 under the classic LRU.
    pub page_table_walk: f64,
    pub reclaim: f64,
    pub io_submit: f64,
    /// Spinning on a held `lruvec->lru_lock` in reclaim (isolation, putback,
    /// `lru_add_drain()`); part of the reclaimers' CPU time.
    pub lock_wait: f64,
    /// TLB flushes of reclaim's unmaps (refault_mm::tlb): immediate local flushes and the
    /// IPI rounds of the batched ones; part of the reclaimers' CPU time.
    pub tlb_flush: f64,
    /// IPI rounds of batched TLB flushes (`try_to_unmap_flush()` reaching other CPUs), and
    /// the CPUs they interrupted, summed.
    pub tlb_shootdowns: u64,
    pub tlb_shootdown_cpus: u64,
    pub kswapd_total: f64,
    pub flusher_total: f64,
}

impl ReclaimCpuSeconds {
    /// Reclaim's CPU summed over its activities (scan, rmap and page-table walks, reclaim,
    /// IO submission, `lru_lock` wait, TLB flushes), whoever reclaimed; not the per-thread
    /// totals `kswapd_total` and `flusher_total`.
    pub fn activities(&self) -> f64 {
        self.scan
            + self.rmap_walk
            + self.page_table_walk
            + self.reclaim
            + self.io_submit
            + self.lock_wait
            + self.tlb_flush
    }
}

/// kswapd's CPU over the measured period by activity (seconds): what kswapd's steps charged
/// to each reclaim activity (`refault_mm::ReclaimCpu`), with `folio_referenced()` and
/// `try_to_unmap()` apart. `other` is kswapd's CPU outside those activities (slab
/// shrinking, the per-CPU batch drains of its steps, compaction).
#[derive(Serialize, Clone, Debug, Default)]
pub struct KswapdCpuSeconds {
    /// kswapd's CPU time over the measured period.
    pub cpu: f64,
    /// Isolating, sorting and putting back folios (LRU list moves, `lru_lock` hold).
    pub scan: f64,
    /// `folio_referenced()` walks (`page_vma_mapped_walk()`, young-bit test and clear).
    pub folio_referenced: f64,
    /// `try_to_unmap()` walks, without their TLB flushes.
    pub try_to_unmap: f64,
    /// TLB flushes of the unmaps: local flushes and IPI rounds.
    pub tlb_flush: f64,
    /// The multi-gen LRU's page-table walks (aging, look-around).
    pub page_table_walk: f64,
    /// `__remove_mapping()` and freeing.
    pub reclaim: f64,
    /// Swap-out and writeback submission, a synchronous device's copy included (brd's
    /// memcpy, zram's compression).
    pub io_submit: f64,
    /// Spinning on a held `lru_lock`.
    pub lock_wait: f64,
    /// IPI rounds kswapd sent.
    pub tlb_shootdowns: u64,
}

impl KswapdCpuSeconds {
    /// From kswapd's charges (`rc`, ns), its CPU time (`cpu_ns`) and its IPI rounds.
    pub fn from_ns(rc: &refault_mm::ReclaimCpu, cpu_ns: u64, tlb_shootdowns: u64) -> Self {
        let s = |ns: u64| ns as f64 / 1e9;
        KswapdCpuSeconds {
            cpu: s(cpu_ns),
            scan: s(rc.scan_ns),
            folio_referenced: s(rc.rmap_ns - rc.unmap_ns),
            try_to_unmap: s(rc.unmap_ns),
            tlb_flush: s(rc.tlb_flush_ns),
            page_table_walk: s(rc.pt_walk_ns),
            reclaim: s(rc.reclaim_ns),
            io_submit: s(rc.io_ns),
            lock_wait: s(rc.lock_wait_ns),
            tlb_shootdowns,
        }
    }

    /// kswapd's CPU outside the reclaim activities (seconds, at least 0).
    pub fn other(&self) -> f64 {
        let charged = self.scan
            + self.folio_referenced
            + self.try_to_unmap
            + self.tlb_flush
            + self.page_table_walk
            + self.reclaim
            + self.io_submit
            + self.lock_wait;
        (self.cpu - charged).max(0.0)
    }

    /// `part`'s share of kswapd's CPU in percent (0 when kswapd did not run).
    pub fn share(&self, part: f64) -> f64 {
        if self.cpu > 0.0 {
            part / self.cpu * 100.0
        } else {
            0.0
        }
    }
}

/// The `lruvec->lru_lock`s (refault_mm::lrulock) over the measured period: every taker,
/// reclaim and workload alike.
#[derive(Serialize, Clone, Debug, Default)]
pub struct LruLockResult {
    /// Times a lock was taken.
    pub acquisitions: u64,
    /// Times the taker found it held and spun.
    pub contended: u64,
    /// CPU time spent spinning (seconds, all threads).
    pub wait_seconds: f64,
    /// Time the locks were held (seconds).
    pub hold_seconds: f64,
}

#[derive(Serialize, Clone, Debug)]
pub struct CgroupResult {
    pub name: String,
    /// memory.current: the page counter, including the charge the per-CPU stocks hold.
    pub usage_pages: u64,
    pub max_pages: Option<u64>,
    pub swap_pages: u64,
    /// memory.swap.max; None = max.
    pub swap_max_pages: Option<u64>,
    /// `swap_max` of memory.events.
    pub swap_max_events: u64,
    /// Page-table pages charged (`pagetables` of memory.stat).
    pub pagetables_pages: u64,
    /// Kernel memory charged (`kernel` of cgroup v2's memory.stat, MEMCG_KMEM): the page
    /// tables and the pages the memcg's slab objects (dentries, inodes, page-cache xarray
    /// nodes) are charged in.
    pub kernel_pages: u64,
    /// Charge held in the per-CPU stocks at the end (part of usage_pages, not in use).
    pub stock_pages: u64,
    /// memory.stat as cgroup v2 names it (sizes in bytes): kernel, pagetables, slab,
    /// slab_reclaimable, slab_unreclaimable, the four evictable LRU lists, pgscan, pgsteal.
    pub memory_stat: std::collections::BTreeMap<String, u64>,
    pub pgscan: u64,
    pub pgsteal: u64,
    pub max_events: u64,
    pub oom_kill: u64,
    pub inactive_anon: u64,
    pub active_anon: u64,
    pub inactive_file: u64,
    pub active_file: u64,
    /// memory.stat `slab_reclaimable` / `slab_unreclaimable` (bytes of slab objects).
    pub slab_reclaimable: u64,
    pub slab_unreclaimable: u64,
}

#[derive(Serialize, Clone, Debug)]
pub struct DeviceResult {
    pub name: String,
    pub stats: DeviceStats,
}

#[derive(Serialize, Clone, Debug)]
pub struct ZoneResult {
    pub name: String,
    pub managed_pages: u64,
    pub min: u64,
    pub low: u64,
    pub high: u64,
    /// The zone's `mm_page_alloc_extfrag` events by allocation type, fragmenting or whole
    /// pageblock, and its watermark boosts (whole run; `refault_mm::mmzone::ExtfragStats`).
    pub extfrag: refault_mm::mmzone::ExtfragStats,
}

/// Series sampled over time: memory composition (pages) and cumulative counters.
const GAUGES: [&str; 14] = [
    "nr_free_pages",
    "nr_inactive_anon",
    "nr_active_anon",
    "nr_inactive_file",
    "nr_active_file",
    "nr_dirty",
    "nr_writeback",
    "nr_dirty_threshold",
    "nr_dirty_background_threshold",
    "nr_swapcached",
    "nr_swap_used",
    "nr_file_pages",
    "nr_slab_reclaimable",
    "nr_slab_unreclaimable",
];
const COUNTERS: [&str; 22] = [
    "pgscan_kswapd",
    "pgscan_direct",
    "pgscan_anon",
    "pgscan_file",
    "pgsteal_anon",
    "pgsteal_file",
    "pgrefill",
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
    "pswpin",
    "pswpout",
    "pgmajfault",
    "pgsteal_kswapd",
    "slabs_scanned",
    "kswapd_inodesteal",
    "pginodesteal",
    "nr_vmscan_immediate_reclaim",
    // kswapd's balance_pgdat() runs (its wake-ups that found work) and direct reclaim
    // entries: the plots' "who reclaims" panel.
    "pageoutrun",
    "allocstall_movable",
    "allocstall_normal",
];

/// The first interval of an adaptive series (`run.sample_interval = "auto"` on a run
/// without a duration).
pub const ADAPTIVE_START_NS: u64 = 10_000_000;
/// An adaptive series keeps between this many and twice this many intervals: past twice,
/// every other sample is dropped and the interval doubles.
pub const ADAPTIVE_SAMPLES: usize = 200;

/// Drops every odd-indexed sample (the first, t = 0, stays).
fn keep_even_samples<T>(v: &mut Vec<T>) {
    let mut i = 0;
    v.retain(|_| {
        i += 1;
        (i - 1) % 2 == 0
    });
}

/// The time series. Sampling only observes: the samples' times never change the
/// simulation (checked by tests that vary `run.sample_interval`).
pub struct Sampler {
    series: BTreeMap<String, Vec<f64>>,
    pub buddy: Vec<BuddySample>,
    cgroups: Vec<String>,
    task_names: Vec<String>,
    interval_ns: u64,
    adaptive: bool,
}

impl Sampler {
    pub fn new(scn: &Scenario) -> Self {
        let mut task_names = Vec::new();
        for t in &scn.tasks {
            for i in 0..t.instances {
                task_names.push(if t.instances > 1 {
                    format!("{}/{}", t.name, i)
                } else {
                    t.name.clone()
                });
            }
        }
        let adaptive = scn.run.sample_interval_ns == 0;
        Sampler {
            series: BTreeMap::new(),
            buddy: Vec::new(),
            cgroups: scn.cgroups.iter().map(|c| c.name.clone()).collect(),
            task_names,
            interval_ns: if adaptive {
                ADAPTIVE_START_NS
            } else {
                scn.run.sample_interval_ns
            },
            adaptive,
        }
    }

    /// The time of the sample after the one just taken at `t_ns` (a multiple of the
    /// interval). An adaptive series past 2 x [`ADAPTIVE_SAMPLES`] intervals first drops
    /// every other sample (keeping t = 0 and the even multiples) and doubles its interval,
    /// so every kept sample stays on the new interval's boundaries.
    pub fn next_after(&mut self, t_ns: u64) -> u64 {
        let n = self.series.get("t_s").map_or(0, Vec::len);
        if self.adaptive && n > 2 * ADAPTIVE_SAMPLES + 1 {
            for v in self.series.values_mut() {
                keep_even_samples(v);
            }
            keep_even_samples(&mut self.buddy);
            self.interval_ns *= 2;
            // t_ns was an odd multiple of the old interval when the count went odd-past:
            // the next sample is the next multiple of the new one.
            return (t_ns / self.interval_ns + 1) * self.interval_ns;
        }
        t_ns + self.interval_ns
    }

    /// Records a sample at `t_ns`; `task_ops` is, per task, its operations so far and
    /// the sum of their latencies in µs.
    pub fn sample(&mut self, t_ns: u64, mm: &Mm, task_ops: &[(u64, f64)]) {
        // Do not record the same instant twice (end-of-run sample on a boundary).
        if let Some(ts) = self.series.get("t_s") {
            if ts.last().is_some_and(|&l| l >= t_ns as f64 / 1e9) {
                return;
            }
        }
        let snap = mm.vmstat_snapshot();
        let get = |n: &str| snap.iter().find(|x| x.0 == n).map(|x| x.1).unwrap_or(0) as f64;
        let mut push = |k: String, v: f64| self.series.entry(k).or_default().push(v);
        push("t_s".into(), t_ns as f64 / 1e9);
        self.buddy.push(BuddySample {
            t_s: t_ns as f64 / 1e9,
            zones: mm.zones.iter().map(ZoneBuddy::of).collect(),
        });
        for g in GAUGES.iter().chain(COUNTERS.iter()) {
            push((*g).to_string(), get(g));
        }
        for (i, name) in self.cgroups.iter().enumerate() {
            let lv = &mm.lruvecs[i + 1];
            push(
                format!("cgroup.{name}.usage_pages"),
                mm.memcgs[i + 1].usage as f64,
            );
            push(format!("cgroup.{name}.nr_inactive_anon"), lv.nr[0] as f64);
            push(format!("cgroup.{name}.nr_active_anon"), lv.nr[1] as f64);
            push(format!("cgroup.{name}.nr_inactive_file"), lv.nr[2] as f64);
            push(format!("cgroup.{name}.nr_active_file"), lv.nr[3] as f64);
            push(
                format!("cgroup.{name}.slab_reclaimable"),
                mm.slab.memcg_bytes[i + 1][0] as f64,
            );
            // Cumulative: memory.stat pgscan / pgsteal, memory.events max (reclaim at the
            // limit), and workingset_activate_{anon,file} of memory.stat (refaults that
            // found their page in the workingset, hierarchical as the kernel's lruvec
            // counter).
            let ev = &mm.memcgs[i + 1].events;
            push(format!("cgroup.{name}.pgscan"), ev.pgscan as f64);
            push(format!("cgroup.{name}.pgsteal"), ev.pgsteal as f64);
            push(format!("cgroup.{name}.max_events"), ev.max_events as f64);
            push(
                format!("cgroup.{name}.workingset_activate_anon"),
                lv.workingset_activate[0] as f64,
            );
            push(
                format!("cgroup.{name}.workingset_activate_file"),
                lv.workingset_activate[1] as f64,
            );
        }
        if mm.cfg.lru == refault_mm::LruKind::Mglru {
            // The multi-gen LRU's generations by age, over every lruvec: `lru_gen.genK.TYPE`
            // is the pages K generations older than their lruvec's youngest (K = 0..3), as
            // debugfs lru_gen lists them; `lru_gen.max_seq` the root's youngest sequence
            // number (it counts the aging rounds).
            let mut by_age = [[0u64; 2]; refault_mm::mglru::MAX_NR_GENS as usize];
            for lv in &mm.lruvecs {
                let g = &lv.lrugen;
                for ty in 0..2 {
                    for seq in g.min_seq[ty]..=g.max_seq {
                        let age = (g.max_seq - seq) as usize;
                        let gen = (seq % refault_mm::mglru::MAX_NR_GENS) as usize;
                        if let Some(slot) = by_age.get_mut(age) {
                            slot[ty] += g.nr_pages[gen][ty].iter().sum::<u64>();
                        }
                    }
                }
            }
            for (age, pages) in by_age.iter().enumerate() {
                push(format!("lru_gen.gen{age}.anon"), pages[0] as f64);
                push(format!("lru_gen.gen{age}.file"), pages[1] as f64);
            }
            push(
                "lru_gen.max_seq".into(),
                mm.lruvecs[0].lrugen.max_seq as f64,
            );
        }
        for (i, (name, (ops, lat_us))) in self.task_names.iter().zip(task_ops).enumerate() {
            push(format!("task.{name}.ops"), *ops as f64);
            // Cumulative, as ops: the mean latency of an interval is the difference of this
            // over the difference of ops.
            push(format!("task.{name}.latency_sum_us"), *lat_us);
            // Cumulative time paused by balance_dirty_pages().
            push(
                format!("task.{name}.dirty_throttle_s"),
                mm.task_throttle_ns(i as u32) as f64 / 1e9,
            );
        }
    }

    pub fn finish(self) -> (BTreeMap<String, Vec<f64>>, Vec<BuddySample>) {
        (self.series, self.buddy)
    }
}

#[cfg(test)]
mod kswapd_cpu_tests {
    use super::KswapdCpuSeconds;

    #[test]
    fn kswapd_profile_splits_the_rmap_walk_and_leaves_the_rest_as_other() {
        let rc = refault_mm::ReclaimCpu {
            scan_ns: 100_000_000,
            rmap_ns: 400_000_000,
            unmap_ns: 150_000_000,
            tlb_flush_ns: 200_000_000,
            pt_walk_ns: 0,
            reclaim_ns: 50_000_000,
            io_ns: 1_000_000_000,
            lock_wait_ns: 50_000_000,
        };
        let k = KswapdCpuSeconds::from_ns(&rc, 2_000_000_000, 7);
        assert_eq!(k.cpu, 2.0);
        assert_eq!(k.folio_referenced, 0.25);
        assert_eq!(k.try_to_unmap, 0.15);
        assert_eq!(k.tlb_shootdowns, 7);
        // 2 s of CPU, 1.8 s charged to activities.
        assert!((k.other() - 0.2).abs() < 1e-9, "{}", k.other());
        assert!((k.share(k.io_submit) - 50.0).abs() < 1e-9);
        assert!((k.share(k.folio_referenced) - 12.5).abs() < 1e-9);
        // kswapd never ran: no shares, nothing else.
        let idle = KswapdCpuSeconds::default();
        assert_eq!((idle.share(0.0), idle.other()), (0.0, 0.0));
    }
}
