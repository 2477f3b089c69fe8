//! The resolved scenario: every default filled in, every name turned into an index, every
//! size in pages and every time in nanoseconds. This is what the simulator consumes and what
//! the result JSON echoes under `scenario`.
//!
//! Sizes are 4 KiB pages (`_pages`), times nanoseconds (`_ns`). Indices (`device`, `cgroup`,
//! `object`) point into the vectors of [`Scenario`].

use serde::{Deserialize, Serialize};

/// Base page size the model uses everywhere (bytes).
pub const PAGE_SIZE: u64 = 4096;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    /// Scenario name (defaults to the file stem).
    pub name: String,
    /// Free text: what the scenario models and how it was scaled.
    pub description: String,
    /// Seed of every random generator in the run. Default 1 (never the clock).
    pub seed: u64,
    pub run: RunSpec,
    pub machine: MachineSpec,
    pub sysctl: Sysctl,
    pub policy: PolicySpec,
    /// Block devices by name; `fs_device` and each swap area point into this list.
    pub devices: Vec<DeviceSpec>,
    /// Index of the device that holds the files.
    pub fs_device: usize,
    /// Swap areas, in priority order (highest first). Empty: no swap.
    pub swap: Vec<SwapSpec>,
    /// Memory cgroups below the root. Tasks without a cgroup run in the root cgroup.
    pub cgroups: Vec<CgroupSpec>,
    /// Anonymous regions and files the tasks access, by index (`ObjId` in events).
    pub objects: Vec<ObjectSpec>,
    /// Task groups; each runs `instances` copies with their own event stream.
    pub tasks: Vec<TaskSpec>,
    /// CPU cost of kernel work, in nanoseconds (model-only knobs, `model.cost.*`).
    pub costs: CostTable,
    /// Model-only knobs (`model.*`).
    pub model: ModelKnobs,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// Stop the simulation at this simulated time; 0 = run until every task finished.
    pub duration_ns: u64,
    /// Statistics are reset at this time (warm-up excluded from the result); 0 = none.
    pub warmup_ns: u64,
    /// Interval of the time series samples; 0 = adaptive (`run.sample_interval = "auto"` on
    /// a run without a duration: 10 ms at first, doubled whenever the series passes 400
    /// samples, so it ends with 200-400).
    pub sample_interval_ns: u64,
    /// `[[run.drop_caches]]`, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop_caches: Vec<DropCachesSpec>,
    /// `[[run.sysctl]]`, in time order (file order at equal times).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sysctl_writes: Vec<SysctlWriteSpec>,
}

/// A sysctl the simulator can change during a run (`[[run.sysctl]]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RuntimeSysctl {
    /// `vm.min_free_kbytes` (`min_free_kbytes_sysctl_handler()` → `setup_per_zone_wmarks()`).
    #[serde(rename = "vm.min_free_kbytes")]
    MinFreeKbytes,
    /// `vm.watermark_scale_factor` (`watermark_scale_factor_sysctl_handler()` →
    /// `setup_per_zone_wmarks()`).
    #[serde(rename = "vm.watermark_scale_factor")]
    WatermarkScaleFactor,
}

impl RuntimeSysctl {
    /// Every sysctl `[[run.sysctl]]` accepts, with its name.
    pub const ALL: [(RuntimeSysctl, &'static str); 2] = [
        (RuntimeSysctl::MinFreeKbytes, "vm.min_free_kbytes"),
        (
            RuntimeSysctl::WatermarkScaleFactor,
            "vm.watermark_scale_factor",
        ),
    ];
}

/// `echo value > /proc/sys/<name>` at simulated time `at_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SysctlWriteSpec {
    pub at_ns: u64,
    pub name: RuntimeSysctl,
    pub value: u64,
}

/// `echo value > /proc/sys/vm/drop_caches` at simulated time `at_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCachesSpec {
    pub at_ns: u64,
    /// 1 = page cache, 2 = reclaimable slab, 3 = both.
    pub value: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineSpec {
    /// RAM in pages (`machine.memory`); the zones' present pages add up to this less the
    /// holes of the x86-64 layout (98 pages), or to exactly this in a flat layout.
    pub memory_pages: u64,
    /// Simulated CPUs that tasks and kernel threads share.
    pub cpus: u32,
    /// Zones in pfn order (DMA, DMA32, Normal, each if populated).
    pub zones: Vec<ZoneSpec>,
    /// The /proc/zoneinfo the machine was built from (`machine.from_zoneinfo`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_zoneinfo: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ZoneKind {
    Dma,
    Dma32,
    Normal,
}

impl ZoneKind {
    /// The zone's name in /proc/zoneinfo and /proc/vmstat.
    pub fn name(self) -> &'static str {
        match self {
            ZoneKind::Dma => "DMA",
            ZoneKind::Dma32 => "DMA32",
            ZoneKind::Normal => "Normal",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZoneSpec {
    pub kind: ZoneKind,
    /// Present pages: the zone's frames (holes of the physical address space excluded).
    pub pages: u64,
    /// Present pages reserved at boot (memblock: memmap, kernel image, hash tables), not
    /// managed: `present - managed`.
    #[serde(default)]
    pub reserved: u64,
    /// Managed pages the kernel holds when the workload starts (slab, kernel stacks, page
    /// tables, rootfs; from a zoneinfo: everything not free), never reclaimed.
    #[serde(default)]
    pub kernel: u64,
    /// The kernel's `min`, `low`, `high` watermarks (from a zoneinfo); None = computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wmark: Option<[u64; 3]>,
    /// The kernel's `protection` (`lowmem_reserve[]`) against allocations whose highest zone
    /// is DMA, DMA32, Normal (from a zoneinfo); None = computed from lowmem_reserve_ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protection: Option<[u64; 3]>,
}

impl ZoneSpec {
    /// A zone of `pages` present pages, all managed and free at the start.
    pub fn new(kind: ZoneKind, pages: u64) -> Self {
        ZoneSpec {
            kind,
            pages,
            reserved: 0,
            kernel: 0,
            wmark: None,
            protection: None,
        }
    }

    /// `managed_pages`.
    pub fn managed(&self) -> u64 {
        self.pages - self.reserved
    }
}

/// The sysctls we model, under their /proc/sys/vm names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sysctl {
    /// vm.swappiness, 0..=200, default 60.
    pub swappiness: u32,
    /// vm.min_free_kbytes; None = computed as the kernel does at boot.
    pub min_free_kbytes: Option<u64>,
    /// vm.watermark_scale_factor, 1..=3000, default 10.
    pub watermark_scale_factor: u32,
    /// vm.watermark_boost_factor, default 15000.
    pub watermark_boost_factor: u32,
    /// vm.extfrag_threshold, 0..=1000, default 500.
    pub extfrag_threshold: u32,
    /// vm.compaction_proactiveness, 0..=100, default 20.
    pub compaction_proactiveness: u32,
    /// vm.page-cluster, 0..=31, default 3.
    pub page_cluster: u32,
    /// vm.dirty_ratio, default 20.
    pub dirty_ratio: u32,
    /// vm.dirty_background_ratio, default 10.
    pub dirty_background_ratio: u32,
    /// vm.dirty_bytes, default 0 (the ratio applies).
    pub dirty_bytes: u64,
    /// vm.dirty_background_bytes, default 0 (the ratio applies).
    pub dirty_background_bytes: u64,
    /// vm.dirty_expire_centisecs, default 3000.
    pub dirty_expire_centisecs: u32,
    /// vm.dirty_writeback_centisecs, default 500.
    pub dirty_writeback_centisecs: u32,
    /// vm.vfs_cache_pressure, default 100.
    pub vfs_cache_pressure: u32,
    /// vm.laptop_mode, default false.
    pub laptop_mode: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LruKind {
    /// The active/inactive LRU (mm/vmscan.c without CONFIG_LRU_GEN).
    Classic,
    /// The multi-gen LRU.
    Mglru,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BalanceKind {
    /// lru_note_cost(): rotations are CPU cost, refaults and writes IO cost (v5.8+ / v6.2+).
    RefaultCost,
    /// recent_scanned / recent_rotated (before v5.8).
    Legacy,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwapReadaheadKind {
    /// swap_cluster_readahead(): physical-offset window.
    Cluster,
    /// swap_vma_readahead(): virtual-address window (the default when no rotational swap).
    Vma,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicySpec {
    /// policy.lru (lru_gen.enabled = true is the same as "mglru").
    pub lru: LruKind,
    /// policy.balance.
    pub balance: BalanceKind,
    /// swap.readahead; None = the kernel's choice (vma unless a rotational swap device, or
    /// swap.vma_ra_enabled = false).
    pub swap_readahead: SwapReadaheadKind,
    /// lru_gen.min_ttl_ms.
    pub lru_gen_min_ttl_ms: u64,
    /// policy.kswapd_compaction.
    pub kswapd_compaction: KswapdCompactionKind,
    /// policy.boosted_reclaim_skips_slab (v5.0–v5.2 `may_shrinkslab`).
    #[serde(default)]
    pub boosted_reclaim_skips_slab: bool,
    /// transparent_hugepage.enabled.
    pub thp_enabled: ThpEnabledKind,
    /// transparent_hugepage.defrag.
    pub thp_defrag: ThpDefragKind,
}

/// `/sys/kernel/mm/transparent_hugepage/enabled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThpEnabledKind {
    Always,
    Madvise,
    Never,
}

/// `/sys/kernel/mm/transparent_hugepage/defrag`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThpDefragKind {
    Always,
    Defer,
    #[serde(rename = "defer+madvise")]
    DeferMadvise,
    Madvise,
    Never,
}

/// An object's `madvise()` THP advice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HugepageAdviceKind {
    /// No advice.
    #[default]
    None,
    /// MADV_HUGEPAGE.
    Hugepage,
    /// MADV_NOHUGEPAGE.
    Nohugepage,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KswapdCompactionKind {
    /// v4.5+: kswapd wakes kcompactd when it goes to sleep.
    Kcompactd,
    /// Before v4.5: kswapd compacts itself (compact_pgdat()); no kcompactd.
    Kswapd,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceSpec {
    pub name: String,
    /// Preset the values came from (hdd, sata-ssd, nvme, zram, ramdisk) or "custom".
    pub preset: String,
    /// Fixed per-request latency.
    pub latency_ns: u64,
    /// Extra latency when a request does not continue where the previous one ended (HDD seek).
    pub seek_ns: u64,
    /// Transfer rates.
    pub read_bytes_per_sec: u64,
    pub write_bytes_per_sec: u64,
    /// Requests served in parallel (NVMe queues, SSD channels); 1 for an HDD.
    pub queue_depth: u32,
    /// Rotational device (affects swap readahead choice).
    pub rotational: bool,
    /// Synchronous device (zram, SWP_SYNCHRONOUS_IO): swap-in bypasses the swap cache.
    pub synchronous: bool,
    /// CPU time the submitting task spends per page (zram compression / decompression).
    pub cpu_ns_per_page: u64,
    /// CPU time per page of a read, where it differs from a write's (zram decompresses far
    /// faster than it compresses); None = `cpu_ns_per_page` for both. No scenario key sets it:
    /// the VM twin sets it from the guest's measured zram costs (`refault_twin::vm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_cpu_ns_per_page: Option<u64>,
    /// `queue/wbt_lat_usec`: the writeback-throttling latency target of a request-based
    /// device, 0 = throttling off (as with BFQ); None = the kernel's default
    /// (`wbt_default_latency_nsec()`: 2 ms non-rotational, 75 ms rotational). Synchronous
    /// (bio-based) devices have no writeback throttling whatever it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wbt_lat_usec: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SwapSpec {
    pub device: usize,
    pub size_pages: u64,
    pub priority: i32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CgroupSpec {
    pub name: String,
    /// memory.max (v2) / memory.limit_in_bytes (v1); None = unlimited.
    pub memory_max_pages: Option<u64>,
    /// memory.swappiness (cgroup v1 semantics); None = vm.swappiness.
    pub swappiness: Option<u32>,
    /// memory.swap.max (cgroup v2); None = unlimited.
    #[serde(default)]
    pub swap_max_pages: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ObjectKind {
    /// Private anonymous memory (MAP_PRIVATE|MAP_ANONYMOUS).
    Anon,
    /// Shared anonymous memory / tmpfs / SysV shm: swap-backed, on the anon LRU.
    Shmem,
    /// A regular file on `fs_device`.
    File,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObjectSpec {
    pub name: String,
    pub kind: ObjectKind,
    pub size_pages: u64,
    /// Files only: the file exists with this size when the run starts (not cached).
    /// false: it starts empty and grows by writes (size_pages is the maximum).
    /// Always false for anon and shmem objects (they are created when first touched).
    pub exists: bool,
    /// Files only: pages per file of a tree of files (`file_size`), whose reads look up
    /// each file's dentry and inode; 0 = the object is one file.
    #[serde(default)]
    pub file_pages: u64,
    /// Anon only: madvise(MADV_HUGEPAGE / MADV_NOHUGEPAGE) over the whole object.
    pub madvise: HugepageAdviceKind,
    /// Anon and shmem only: the mapping is mlocked (`mlock()`, `MAP_LOCKED`): every page
    /// faulted in goes to the unevictable list and is never reclaimed.
    #[serde(default)]
    pub mlock: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskSpec {
    pub name: String,
    /// Index into `Scenario::cgroups`; None = root cgroup.
    pub cgroup: Option<usize>,
    /// Copies of this task, each with its own stream (seeded from seed, task and instance).
    pub instances: u32,
    /// Start delay.
    pub start_ns: u64,
    pub workload: Workload,
}

/// What a task does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Workload {
    /// Generated phases, run in order; the list repeats `repeat` times (0 = forever).
    Phases { phases: Vec<PhaseSpec>, repeat: u64 },
    /// pgbench TPC-B-like client (see refault-workload's emul::pgbench).
    Pgbench(PgbenchSpec),
    /// memcached-like key-value server load (anon items, random gets/sets).
    Memcached(MemcachedSpec),
    /// Background large-file copy (parallelio's IO load): read `src`, write `dst`.
    Copy(CopySpec),
    /// Kernel allocations of order N (stress-highalloc, or slab/page-table churn).
    Kalloc(KallocSpec),
    /// Short-lived processes, one after another: fork, fault and use an anonymous address
    /// space, exit (`[task.process]`).
    Process(ProcessSpec),
    /// Replay of a recorded trace (`[[task.phase]] source = { trace = ... }`).
    Trace(TraceSpec),
}

/// gfp mask of a kalloc workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KallocGfp {
    /// GFP_NOWAIT | __GFP_HIGH: only wakes kswapd (and so kcompactd), never reclaims or
    /// compacts itself.
    Nowait,
    /// GFP_KERNEL: may enter direct reclaim and direct compaction.
    Kernel,
    /// GFP_KERNEL | __GFP_HIGH (seed S4's "-direct" runs): as `Kernel`, and the slow path
    /// may use half of the min watermark's reserve.
    KernelHigh,
    /// GFP_ATOMIC (`__GFP_HIGH | __GFP_KSWAPD_RECLAIM`, and `__GFP_ATOMIC` before v6.3):
    /// only wakes kswapd; may use most of the min watermark and the highatomic reserve.
    Atomic,
}

/// The migratetype of a kalloc workload's allocations (`gfp_migratetype()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KallocMigratetype {
    Unmovable,
    Reclaimable,
    Movable,
}

/// Short-lived processes (`workload = "process"`): each instance runs `count` processes one
/// after another. A process forks (kernel stack, PGD), makes `ops` stores to random pages
/// of its anonymous object (faulting it in: page tables, THP where allowed), with `think`
/// CPU time after each, and exits (every page freed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessSpec {
    /// The anonymous object that is each process's address space (index into
    /// `Scenario::objects`); no other task uses it.
    pub object: usize,
    /// Processes per instance, one after another; 0 = until the run's duration.
    pub count: u64,
    /// Stores to random pages of the object per process.
    pub ops: u64,
    /// CPU time after each store.
    pub think_ns: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KallocSpec {
    /// Allocation order.
    pub order: u32,
    /// Allocations per instance; 0 = until the run's duration.
    pub count: u64,
    pub gfp: KallocGfp,
    pub migratetype: KallocMigratetype,
    /// Allocations held at once: 0 = keep every one until the task ends; N = free the oldest
    /// when the (N+1)-th is made.
    pub live: u64,
    /// CPU time between allocations.
    pub think_ns: u64,
}

/// A trace replayed by a task (refault-trace reads it; docs/traces.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceSpec {
    /// The trace file (resolved against the scenario file's directory).
    pub path: std::path::PathBuf,
    /// Format name as written ("auto", "binary", "text", "lackey", "oracle-general", "csv").
    pub format: String,
    /// csv only: the column spec.
    pub columns: Option<String>,
    /// The replayed task: its index among the trace's tasks, and its name.
    pub trace_task: u32,
    pub trace_task_name: String,
    /// For each object the trace declares, its index in `Scenario::objects`.
    pub objects: Vec<usize>,
    /// Replays of the whole trace; 0 = until the run's duration.
    pub repeat: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Page-table access through a mapping (anon, shmem, or mmap of a file): read.
    Touch,
    /// Page-table write access.
    TouchWrite,
    /// read() through a file descriptor.
    Read,
    /// write() through a file descriptor.
    Write,
    /// Create files in a directory (a file object cut into files of `pages_per_op` pages):
    /// open(O_CREAT), write the file, optionally fsync, close; never read again.
    Create,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "pattern", rename_all = "kebab-case")]
pub enum Pattern {
    /// start..end once per pass, in order.
    Sequential,
    /// Uniformly random pages.
    Random,
    /// Zipf over the range with exponent `s` (rank 0 = first page of the range unless
    /// `scatter`, which permutes ranks over the range deterministically).
    Zipf { s: f64, scatter: bool },
    /// `hot_fraction` of the range (at its start) receives `hot_probability` of accesses.
    HotCold {
        hot_fraction: f64,
        hot_probability: f64,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseSpec {
    pub name: String,
    pub access: Access,
    /// Index into `Scenario::objects`.
    pub object: usize,
    pub pattern: Pattern,
    /// Page range [start, end) within the object.
    pub start_page: u64,
    pub end_page: u64,
    /// Operations in this phase. Default: ceil(range pages / pages_per_op), one pass over the
    /// range's worth of pages whatever the pattern.
    pub ops: u64,
    /// Pages per operation (a read() of several pages, a touch of consecutive pages).
    pub pages_per_op: u32,
    /// For touch phases: fraction of accesses that are writes (0..=1); ignored for read/write.
    pub write_fraction: f64,
    /// CPU time between operations.
    pub think_ns: u64,
    /// Phase-long fadvise/madvise hint derived from the pattern unless given:
    /// random -> POSIX_FADV_RANDOM / MADV_RANDOM, sequential -> normal.
    pub advice: Advice,
    /// fsync the file at the end of the phase (write phases).
    pub fsync: bool,
    /// Per-op mix (`mix = [...]`): when not empty, each operation picks one entry with
    /// probability proportional to its weight, from the phase's one random stream, and
    /// `object`, `access`, `pattern`, the range, `pages_per_op` and `write_fraction` above
    /// are the first entry's (for reports). `advice` applies to every object of the mix.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<MixSpec>,
}

/// One entry of a per-op mix: what one operation does when it picks this entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MixSpec {
    /// Index into `Scenario::objects`.
    pub object: usize,
    pub access: Access,
    pub pattern: Pattern,
    pub start_page: u64,
    pub end_page: u64,
    pub pages_per_op: u32,
    pub write_fraction: f64,
    /// Relative weight (> 0): the entry's share of the operations.
    pub weight: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Advice {
    Normal,
    Random,
    Sequential,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PgbenchSpec {
    /// Shared buffers (a Shmem object).
    pub shared_buffers: usize,
    /// The database file (File object).
    pub database: usize,
    /// WAL file (File object, written sequentially, fdatasync per transaction).
    pub wal: usize,
    /// Transactions per client; 0 = until the run's duration.
    pub transactions: u64,
    /// Zipf exponent of the page popularity in the database (TPC-B accounts are uniform;
    /// branches/tellers/indexes are hot).
    pub zipf_s: f64,
    /// Client think time between transactions (network round trip, parsing).
    pub think_ns: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemcachedSpec {
    /// The item memory (an Anon object).
    pub items: usize,
    /// Fill the item memory sequentially before serving requests.
    pub fill: bool,
    /// Requests per instance after the fill; 0 = until the run's duration.
    pub requests: u64,
    /// Fraction of requests that are sets (writes).
    pub set_fraction: f64,
    /// Key popularity: 0 = uniform, else Zipf exponent.
    pub zipf_s: f64,
    /// Pages touched per request.
    pub pages_per_request: u32,
    pub think_ns: u64,
    /// memcached's slab chunk size in bytes, 0 = requests touch aligned slots of
    /// `pages_per_request` pages. Else items are chunks of this size packed into 1 MiB slab
    /// pages ([`MEMCACHED_SLAB_PAGE`]) and a request touches every page its chunk spans.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub item_size: u32,
    /// memcached's hash bucket array (an Anon object), or None: a request then touches only
    /// its item. With it, a request first reads its key's bucket and the headers of the
    /// items ahead of its own in the bucket's chain (assoc.c `assoc_find()`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hashtable: Option<usize>,
}

/// memcached's slab page: `settings.slab_page_size` = 1 MiB by default (memcached's `-I`
/// item size limit, slabs.c: each slab class grabs memory in pages of this size and cuts
/// them into `slab_page / chunk_size` chunks; the remainder of the page is unused).
pub const MEMCACHED_SLAB_PAGE: u64 = 1 << 20;

/// memcached's initial hash power: 2^16 buckets (memcached.h `HASHPOWER_DEFAULT`).
pub const MEMCACHED_HASHPOWER_DEFAULT: u32 = 16;

/// The key slots of an item memory of `pages` pages: aligned slots of `ppr` pages, or with
/// `item_size` the chunks of that size memcached cuts from each 1 MiB slab page (slabs.c
/// `do_slabs_newslab()`: `slab_page / size` chunks, the remainder unused).
pub fn memcached_slots(pages: u64, ppr: u32, item_size: u32) -> u64 {
    let item_size = u64::from(item_size);
    match MEMCACHED_SLAB_PAGE.checked_div(item_size) {
        None => pages / u64::from(ppr.max(1)),
        Some(per_slab) => {
            let bytes = pages * PAGE_SIZE;
            let tail = (bytes % MEMCACHED_SLAB_PAGE).min(per_slab * item_size);
            bytes / MEMCACHED_SLAB_PAGE * per_slab + tail / item_size
        }
    }
}

/// The hash power memcached's table reaches holding `items` items: it starts at
/// [`MEMCACHED_HASHPOWER_DEFAULT`] and doubles while the items exceed 1.5 per bucket
/// (assoc.c `assoc_start_expand()`: `curr_items > hashsize(hashpower) * 3 / 2`).
pub fn memcached_hashpower(items: u64) -> u32 {
    let mut power = MEMCACHED_HASHPOWER_DEFAULT;
    while items > (3u64 << power) / 2 {
        power += 1;
    }
    power
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CopySpec {
    pub src: usize,
    pub dst: usize,
    /// Pages per read()/write() call (cp uses 128 KiB = 32 pages).
    pub chunk_pages: u32,
    /// Copies of the whole file, one after the other; 0 = until the run's duration.
    pub passes: u64,
    /// fsync the destination at the end of each pass.
    pub fsync: bool,
    pub think_ns: u64,
}

/// CPU cost of kernel work in nanoseconds (`model.cost.*`). The defaults are order-of-magnitude
/// figures for a current x86-64 server core; each is documented in the scenario reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostTable {
    /// A page-table access that hits a present page (TLB miss amortised): tiny.
    pub touch_ns: u64,
    /// Minor fault (anon zero-fill or page-cache hit through a mapping).
    pub minor_fault_ns: u64,
    /// Major fault bookkeeping, excluding the IO wait.
    pub major_fault_ns: u64,
    /// read()/write() of one cached page (copy + lookup).
    pub pagecache_hit_ns: u64,
    /// Allocating a page (buddy + zeroing for anon).
    pub page_alloc_ns: u64,
    /// Isolating and examining one folio on an LRU list.
    pub scan_per_page_ns: u64,
    /// One rmap walk's per-call part: the anon_vma (i_mmap) read lock and the walk setup.
    #[serde(default = "default_rmap_per_call")]
    pub rmap_per_call_ns: u64,
    /// One mapping visited by `folio_referenced()` (`folio_referenced_one()`:
    /// page_vma_mapped_walk + young test-and-clear).
    pub rmap_per_mapping_ns: u64,
    /// One mapping unmapped by `try_to_unmap()` (`try_to_unmap_one()` without the TLB flush).
    #[serde(default = "default_unmap_per_mapping")]
    pub unmap_per_mapping_ns: u64,
    /// `try_to_unmap()`'s immediate local TLB flush (the flush was not deferred).
    #[serde(default = "default_tlb_flush_local")]
    pub tlb_flush_local_ns: u64,
    /// One batched TLB flush that interrupts other CPUs, besides the per-CPU part.
    #[serde(default = "default_tlb_shootdown")]
    pub tlb_shootdown_ns: u64,
    /// Per CPU a batched TLB flush interrupts.
    #[serde(default = "default_tlb_shootdown_per_cpu")]
    pub tlb_shootdown_per_cpu_ns: u64,
    /// Multi-gen LRU aging: visiting one PTE (or PMD entry) in a page-table walk.
    pub pt_walk_per_pte_ns: u64,
    /// Removing one reclaimed folio from the swap or page cache and freeing it (the unmap
    /// is `unmap_per_mapping_ns`).
    pub reclaim_per_page_ns: u64,
    /// Submitting one IO request.
    pub io_submit_ns: u64,
    /// Compaction: one page visited by the migrate or free scanner.
    pub compact_scan_per_page_ns: u64,
    /// Migrating one page (copy + remapping).
    pub migrate_per_page_ns: u64,
    /// Taking and releasing an lruvec's `lru_lock` (one cache-line transfer; waiting is
    /// simulated separately).
    #[serde(default = "default_lru_lock")]
    pub lru_lock_ns: u64,
    /// One folio moved onto or off an LRU list under the `lru_lock`.
    #[serde(default = "default_lru_move")]
    pub lru_move_ns: u64,
}

fn default_lru_lock() -> u64 {
    crate::defs::default::<crate::size::Duration>("model.cost", "lru_lock").0
}

fn default_lru_move() -> u64 {
    crate::defs::default::<crate::size::Duration>("model.cost", "lru_move").0
}

fn default_rmap_per_call() -> u64 {
    crate::defs::default::<crate::size::Duration>("model.cost", "rmap_per_call").0
}

fn default_unmap_per_mapping() -> u64 {
    crate::defs::default::<crate::size::Duration>("model.cost", "unmap_per_mapping").0
}

fn default_tlb_flush_local() -> u64 {
    crate::defs::default::<crate::size::Duration>("model.cost", "tlb_flush_local").0
}

fn default_tlb_shootdown() -> u64 {
    crate::defs::default::<crate::size::Duration>("model.cost", "tlb_shootdown").0
}

fn default_tlb_shootdown_per_cpu() -> u64 {
    crate::defs::default::<crate::size::Duration>("model.cost", "tlb_shootdown_per_cpu").0
}

/// Model-only knobs (`model.*`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelKnobs {
    /// read_ahead_kb of the fs device in pages (default 128 KiB = 32 pages).
    pub readahead_max_pages: u32,
    /// Largest page-cache folio order readahead may build (ext4: 9 = 2 MiB). 0 = order-0 only.
    pub max_file_folio_order: u32,
    /// Run the invariant checks every N events (0 = never; `refault run --check` sets 1).
    pub check_interval: u64,
    /// Memory-cgroup semantics: 1 = cgroup v1 (per-cgroup memory.swappiness; limit reclaim
    /// waits for writeback of folios it already marked PG_reclaim), 2 = the default hierarchy
    /// (vm.swappiness for every cgroup; no such wait).
    pub cgroup_version: u32,
    /// Period of the memcg statistics flusher in ns (kernel FLUSH_TIME = 2 s); reclaim
    /// heuristics read statistics as of the last flush. 0 = exact statistics.
    pub memcg_stats_flush_ns: u64,
    /// Time of the first flush after the start in ns (the flusher's phase; default half the
    /// period).
    pub memcg_stats_first_flush_ns: u64,
    /// The kernel version whose rules the model follows where they changed between versions
    /// (`model.kernel`, "MAJOR.MINOR", at least 6.1; default 6.18, the version the model
    /// follows).
    #[serde(default = "default_kernel")]
    pub kernel: String,
}

fn default_kernel() -> String {
    crate::defs::default::<String>("model", "kernel")
}
