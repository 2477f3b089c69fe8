//! refault-mm: the kernel memory-management model. Pure and deterministic: it takes the
//! simulated time as an argument, reaches block devices only through the [`Io`] trait, and
//! never reads a clock or iterates a hash map.
//!
//! | kernel                                   | here                         |
//! |------------------------------------------|------------------------------|
//! | `struct page`/`struct folio`              | [`page::FrameTable`]          |
//! | `list_head`                              | [`list`]                     |
//! | mm/page_alloc.c, include/linux/mmzone.h  | [`mmzone`], [`alloc`]        |
//! | mm/compaction.c, mm/migrate.c            | [`compaction`], [`kcompactd`] |
//! | `struct lruvec`                          | [`lruvec`]                   |
//! | `lruvec->lru_lock`, `folio_batch`         | [`lrulock`]                  |
//! | mm/swap.c (LRU add/activate, lru_note_cost) | [`lru`], [`balance`]      |
//! | mm/workingset.c                          | [`workingset`]               |
//! | mm/vmscan.c (classic LRU)                | [`vmscan`], [`kswapd`]       |
//! | mm/vmscan.c `lru_gen_*` (multi-gen LRU)   | [`mglru`]                    |
//! | mm/swapfile.c, mm/swap_state.c           | [`swap`]                     |
//! | mm/filemap.c, mm/readahead.c             | [`filemap`]                  |
//! | mm/page-writeback.c (dirty throttling)   | [`writeback`]                |
//! | mm/memory.c (faults)                     | [`memory`]                   |
//! | kernel/fork.c, kernel/exit.c, `exit_mmap()` | [`exit`]                  |
//! | mm/memcontrol.c                          | [`memcontrol`]               |
//! | mm/slub.c                                | [`slab`]                     |
//! | lib/xarray.c (page-cache nodes)          | [`xarray`]                   |
//! | mm/shrinker.c, fs/super.c (sb shrinker)  | [`shrinker`]                 |
//! | fs/dcache.c, fs/inode.c                  | [`fs`]                       |
//! | mm/vmstat.c                              | [`vmstat`]                   |
//! | VM_BUG_ON & co.                          | [`debug`]                    |

pub mod alloc;
pub mod balance;
pub mod compaction;
pub mod debug;
pub mod exit;
pub mod filemap;
pub mod fs;
pub mod kcompactd;
pub mod kswapd;
pub mod list;
pub mod lru;
pub mod lrulock;
pub mod lruvec;
pub mod memcontrol;
pub mod memory;
pub mod mglru;
pub mod mmzone;
pub mod page;
pub mod prefetch;
pub mod shrinker;
pub mod slab;
pub mod swap;
pub mod tlb;
pub mod types;
pub mod vmscan;
pub mod vmstat;
pub mod workingset;
pub mod writeback;
pub mod xarray;
pub mod xfs;
pub mod zeroed;

#[cfg(test)]
mod proptests;
#[cfg(test)]
pub(crate) mod testutil;

use balance::ScanBalance;
use lruvec::Lruvec;
use mmzone::Zone;
use page::FrameTable;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use types::*;
use vmstat::VmEvents;

/// A bio's operation and the flags its writeback control gives it (`wbc_to_write_flags()`),
/// which decide how writeback throttling (block/blk-wbt.c) treats a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BioOp {
    Read,
    /// WB_SYNC_NONE writeback without a background reason: `pageout()` from reclaim (swap-out
    /// and dirty file folios) and the flusher woken by reclaim (`WB_REASON_VMSCAN`). No
    /// REQ_SYNC, no REQ_BACKGROUND: `get_limit()` gives it `wb_normal`.
    Write,
    /// The flusher's background and periodic writeback (`wbc.for_background`,
    /// `wbc.for_kupdate`): REQ_BACKGROUND, limited to `wb_background`.
    WriteBackground,
    /// WB_SYNC_ALL writeback (fsync) and journal writes: REQ_SYNC, limited to `max_depth`.
    WriteSync,
}

impl BioOp {
    pub fn is_write(self) -> bool {
        self != BioOp::Read
    }
}

/// What [`Io::submit`] did with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Submitted {
    /// When the request got past the block layer's throttling and was issued: `now`, or
    /// later if the submitter slept in `rq_qos_wait()` (writeback throttling).
    pub issued: u64,
    /// Completion time.
    pub done: u64,
    /// CPU time the submitter spends (zram compression, a ram disk's copy).
    pub cpu_ns: u64,
}

/// Where block IO goes. Implemented by the simulator over its block-device models.
pub trait Io {
    /// Submit a request of `nr_pages` at device page offset `sector` at time `now`, from
    /// kswapd if `kswapd` (`current_is_kswapd()`: writeback throttling gives kswapd's writes
    /// a queue and a limit of their own).
    fn submit(
        &mut self,
        dev: u32,
        now: u64,
        op: BioOp,
        kswapd: bool,
        sector: u64,
        nr_pages: u32,
    ) -> Submitted;
}

/// An [`Io`] whose requests complete instantly (unit tests).
pub struct InstantIo;
impl Io for InstantIo {
    fn submit(&mut self, _d: u32, now: u64, _op: BioOp, _k: bool, _s: u64, _n: u32) -> Submitted {
        Submitted {
            issued: now,
            done: now,
            cpu_ns: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjKind {
    Anon,
    Shmem,
    File,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalanceKind {
    RefaultCost,
    Legacy,
}

/// Which LRU implementation reclaim uses (`CONFIG_LRU_GEN` + `/sys/kernel/mm/lru_gen/enabled`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LruKind {
    /// The active/inactive lists (mm/vmscan.c without lru_gen).
    Classic,
    /// The multi-gen LRU (mm/vmscan.c `lru_gen_*`).
    Mglru,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwapRaKind {
    Cluster,
    Vma,
}

/// CPU cost table (ns), see `refault_scenario::CostTable`.
#[derive(Clone, Debug, Default)]
pub struct Costs {
    pub touch_ns: u64,
    pub minor_fault_ns: u64,
    pub major_fault_ns: u64,
    pub pagecache_hit_ns: u64,
    pub page_alloc_ns: u64,
    pub scan_per_page_ns: u64,
    /// One rmap walk's per-call part: the anon_vma (i_mmap) lock and the walk setup
    /// ([`tlb`]).
    pub rmap_per_call_ns: u64,
    /// One mapping visited by `folio_referenced()` (`folio_referenced_one()`).
    pub rmap_per_mapping_ns: u64,
    /// One mapping unmapped by `try_to_unmap()` (`try_to_unmap_one()`, no TLB flush).
    pub unmap_per_mapping_ns: u64,
    /// `try_to_unmap()`'s immediate local TLB flush.
    pub tlb_flush_local_ns: u64,
    /// One batched TLB flush that interrupts other CPUs, besides the per-CPU part.
    pub tlb_shootdown_ns: u64,
    /// Per CPU a batched TLB flush interrupts.
    pub tlb_shootdown_per_cpu_ns: u64,
    /// Multi-gen LRU page-table walk: one PTE (or PMD entry) visited.
    pub pt_walk_per_pte_ns: u64,
    pub reclaim_per_page_ns: u64,
    pub io_submit_ns: u64,
    /// Compaction: one page visited by the migrate or free scanner.
    pub compact_scan_per_page_ns: u64,
    /// Migrating one page (copy + remapping).
    pub migrate_per_page_ns: u64,
    /// Taking and releasing an lruvec's `lru_lock` uncontended ([`lru_lock`]).
    pub lru_lock_ns: u64,
    /// One folio moved onto or off an LRU list under the `lru_lock`.
    pub lru_move_ns: u64,
}

/// Who compacts for kswapd's high-order wakeups (`policy.kswapd_compaction`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KswapdCompaction {
    /// v4.5+: kswapd reclaims to the order-0 high watermark and wakes kcompactd when it goes
    /// to sleep (`wakeup_kcompactd()` with kswapd's order).
    Kcompactd,
    /// Before v4.5 (commit accf62422b): kswapd compacts itself (`compact_pgdat()`) when its
    /// reclaim reached the order-0 high watermark and reclaimed more than it attempted.
    Kswapd,
}

/// `/sys/kernel/mm/transparent_hugepage/enabled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThpEnabled {
    /// Every anonymous VMA (unless advised MADV_NOHUGEPAGE).
    Always,
    /// Only VMAs advised MADV_HUGEPAGE.
    Madvise,
    Never,
}

/// `/sys/kernel/mm/transparent_hugepage/defrag`: what a THP fault's allocation may do when
/// no free order-9 block is at hand (`vma_thp_gfp_mask()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThpDefrag {
    /// Direct reclaim and compaction (`__GFP_NORETRY` unless the VMA is advised).
    Always,
    /// Wake kswapd / kcompactd and fail at once.
    Defer,
    /// Advised VMAs: direct reclaim/compaction; others: wake kswapd / kcompactd.
    DeferMadvise,
    /// Advised VMAs: direct reclaim/compaction; others: nothing.
    Madvise,
    /// No reclaim and no compaction: the free lists or fall back.
    Never,
}

/// An object's THP advice: `madvise(MADV_HUGEPAGE)` (VM_HUGEPAGE) or
/// `madvise(MADV_NOHUGEPAGE)` (VM_NOHUGEPAGE) on its whole mapping.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HugepageAdvice {
    #[default]
    None,
    Hugepage,
    NoHugepage,
}

#[derive(Clone, Debug)]
pub struct ObjectCfg {
    pub kind: ObjKind,
    pub size_pages: u64,
    /// Files: exists with its full size at start (else starts empty).
    pub exists: bool,
    /// Anon: MADV_HUGEPAGE / MADV_NOHUGEPAGE.
    pub hugepage: HugepageAdvice,
    /// Anon/shmem: the mapping is mlocked (VM_LOCKED from the start, `mlock()` /
    /// `MAP_LOCKED`): its faulted folios go to the unevictable list.
    pub mlock: bool,
}

#[derive(Clone, Debug)]
pub struct MemcgCfg {
    pub max_pages: Option<u64>,
    pub swappiness: Option<u64>,
    /// `memory.swap.max` (cgroup v2), in pages; None = max.
    pub swap_max_pages: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct SwapAreaCfg {
    pub dev: u32,
    pub size_pages: u64,
    pub priority: i32,
    pub synchronous: bool,
    pub rotational: bool,
}

/// The boot state of one zone beyond its size: what the kernel holds at the start and, for a
/// machine built from a real `/proc/zoneinfo`, the kernel's own watermarks and protection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZoneBoot {
    /// Frames of the zone's span that are no RAM: the model gives them frames so that the
    /// zone's pageblocks line up with the kernel's (x86-64's DMA zone: pfn 0 and the 97
    /// pfns 0x9f..0xff of the BIOS hole; `refault_scenario::layout::dma_holes()`). Held
    /// like reserved pages; neither present nor managed.
    pub holes: u64,
    /// Present pages never given to the buddy allocator (memblock reservations: the
    /// memmap, the kernel image, boot hash tables): `present - managed`.
    pub reserved: u64,
    /// Managed pages the kernel allocated before the workload starts (unreclaimable slab,
    /// kernel stacks, page tables, the rootfs): not free, on no LRU, never reclaimed.
    pub kernel: u64,
    /// `_watermark[MIN..=HIGH]` to use instead of computing them from `min_free_kbytes`.
    pub wmark: Option<[u64; 3]>,
    /// `lowmem_reserve[]` by highest zone type (DMA, DMA32, Normal) to use instead of
    /// computing it from `lowmem_reserve_ratio`.
    pub protection: Option<[u64; mmzone::NR_ZONE_TYPES]>,
}

/// Everything the model needs from a scenario, in model units.
#[derive(Clone, Debug)]
pub struct MmConfig {
    /// (name, present pages) in pfn order: "DMA", "DMA32", "Normal", each optional.
    pub zones: Vec<(&'static str, u64)>,
    /// Boot state per zone, parallel to `zones`; missing entries are `ZoneBoot::default()`.
    pub zone_boot: Vec<ZoneBoot>,
    /// `vm.lowmem_reserve_ratio` for DMA, DMA32, Normal.
    pub lowmem_reserve_ratio: [u64; mmzone::NR_ZONE_TYPES],
    pub swappiness: u64,
    pub min_free_kbytes: Option<u64>,
    pub watermark_scale_factor: u64,
    /// `vm.watermark_boost_factor`.
    pub watermark_boost_factor: u64,
    /// `vm.extfrag_threshold`.
    pub extfrag_threshold: u64,
    /// `vm.compaction_proactiveness`.
    pub compaction_proactiveness: u64,
    pub kswapd_compaction: KswapdCompaction,
    pub page_cluster: u32,
    pub dirty_ratio: u64,
    pub dirty_background_ratio: u64,
    /// `vm.dirty_bytes` / `vm.dirty_background_bytes` (0 = the ratio applies).
    pub dirty_bytes: u64,
    pub dirty_background_bytes: u64,
    pub dirty_expire_ns: u64,
    pub laptop_mode: bool,
    pub balance: BalanceKind,
    pub lru: LruKind,
    /// `/sys/kernel/mm/lru_gen/min_ttl_ms`, in ns (0 = off).
    pub lru_gen_min_ttl_ns: u64,
    pub swap_readahead: SwapRaKind,
    pub objects: Vec<ObjectCfg>,
    /// Child memcgs (the root memcg is implicit, id 0; child i has id i + 1).
    pub memcgs: Vec<MemcgCfg>,
    pub swap_areas: Vec<SwapAreaCfg>,
    pub fs_dev: u32,
    pub readahead_max_pages: u32,
    pub max_file_folio_order: u32,
    /// `transparent_hugepage/enabled` and `defrag` (anonymous faults, see [`memory`]).
    pub thp_enabled: ThpEnabled,
    pub thp_defrag: ThpDefrag,
    /// cgroup v1 memcg semantics (per-memcg swappiness, writeback waits in limit reclaim).
    pub cgroup_v1: bool,
    /// Created files, `vm.vfs_cache_pressure` and the slab-reclaim policy ([`fs`]).
    pub fs: fs::FsCfg,
    /// Period of the memcg statistics flusher (`flush_memcg_stats_dwork`, FLUSH_TIME = 2 s),
    /// in ns: reclaim heuristics and refault detection read the lruvec statistics as of the
    /// last flush (see [`memcontrol`]). 0 = they read exact, current counts.
    pub memcg_stats_flush_ns: u64,
    /// When the first flush lands (the flusher's phase relative to the start), in ns.
    pub memcg_stats_first_flush_ns: u64,
    /// The kernel version whose rules the model follows where they changed
    /// (`model.kernel`; see [`workingset::KernelVersion`]).
    pub kernel: workingset::KernelVersion,
    pub costs: Costs,
    /// CPUs of the machine (`num_online_cpus()`): each zone has per-CPU page lists for as
    /// many ([`mmzone::PerCpuPages`]); 0 runs without per-CPU lists (order-0 pages straight
    /// from and to the buddy lists, the model before them).
    pub nr_cpus: u32,
}

/// Reclaim CPU time by activity (ns), the profile seed S1 compares.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReclaimCpu {
    /// Isolating and sorting folios on the LRU lists.
    pub scan_ns: u64,
    /// rmap walks: `folio_referenced()` and `try_to_unmap()` ([`tlb`]).
    pub rmap_ns: u64,
    /// The part of `rmap_ns` spent in `try_to_unmap()`'s walks (the rest is
    /// `folio_referenced()`'s).
    pub unmap_ns: u64,
    /// TLB flushes of reclaim's unmaps: local flushes and IPI rounds ([`tlb`]).
    pub tlb_flush_ns: u64,
    /// Page-table walks of the multi-gen LRU's aging (`walk_mm()`), per PTE visited.
    pub pt_walk_ns: u64,
    /// Swap-cache and page-cache removal, freeing.
    pub reclaim_ns: u64,
    /// Submitting writeback / swap-out IO from reclaim.
    pub io_ns: u64,
    /// Spinning on a held `lru_lock` in reclaim ([`lrulock`]).
    pub lock_wait_ns: u64,
}

impl ReclaimCpu {
    /// What was charged since `base`, an earlier copy of the same counters: the profile of
    /// one reclaimer's step (kswapd's, for the simulator's per-kswapd profile) or of a
    /// measured period.
    pub fn since(&self, base: &ReclaimCpu) -> ReclaimCpu {
        ReclaimCpu {
            scan_ns: self.scan_ns - base.scan_ns,
            rmap_ns: self.rmap_ns - base.rmap_ns,
            unmap_ns: self.unmap_ns - base.unmap_ns,
            tlb_flush_ns: self.tlb_flush_ns - base.tlb_flush_ns,
            pt_walk_ns: self.pt_walk_ns - base.pt_walk_ns,
            reclaim_ns: self.reclaim_ns - base.reclaim_ns,
            io_ns: self.io_ns - base.io_ns,
            lock_wait_ns: self.lock_wait_ns - base.lock_wait_ns,
        }
    }

    /// Add `other`'s counters to these.
    pub fn add(&mut self, other: &ReclaimCpu) {
        self.scan_ns += other.scan_ns;
        self.rmap_ns += other.rmap_ns;
        self.unmap_ns += other.unmap_ns;
        self.tlb_flush_ns += other.tlb_flush_ns;
        self.pt_walk_ns += other.pt_walk_ns;
        self.reclaim_ns += other.reclaim_ns;
        self.io_ns += other.io_ns;
        self.lock_wait_ns += other.lock_wait_ns;
    }

    /// The activities summed (ns): everything reclaim charged (`unmap_ns` is part of
    /// `rmap_ns`).
    pub fn total_ns(&self) -> u64 {
        self.scan_ns
            + self.rmap_ns
            + self.tlb_flush_ns
            + self.pt_walk_ns
            + self.reclaim_ns
            + self.io_ns
            + self.lock_wait_ns
    }
}

/// The execution context of one model operation: the time it starts at, where IO goes, and
/// what it costs the thread that performs it.
pub struct Ctx<'a> {
    pub now: u64,
    pub io: &'a mut dyn Io,
    /// CPU time consumed (ns).
    pub cpu_ns: u64,
    /// The thread cannot continue before this time (IO it waits for).
    pub wait_until: u64,
    /// Memory cgroup of the task (for charging new folios).
    pub memcg: u16,
    /// The fault needed IO (`VM_FAULT_MAJOR`).
    pub major: bool,
    /// The allocating task was OOM-killed.
    pub oom: bool,
    /// The operation is done by kswapd.
    pub kswapd: bool,
    /// The simulated CPU the thread runs on (selects the per-CPU memcg charge stock).
    pub cpu: u16,
    /// The task doing the operation (`current`, for its dirty-throttling state), or
    /// [`NO_TASK`].
    pub task: u32,
    /// Time spent spinning on a held `lru_lock` (part of `cpu_ns`; [`lrulock`]).
    pub lock_wait_ns: u64,
    /// When the operation started (`now` before any wait moved it).
    pub start: u64,
    /// Time the thread waited on a run queue inside the operation, preempted at one of its
    /// `cond_resched()` points ([`Mm::cond_resched`]): its CPU time ends `cpu_ns +
    /// rq_wait_ns` after `start`.
    pub rq_wait_ns: u64,
    /// The scheduler's side of `cond_resched()` for the thread doing the operation (a task
    /// of the simulator); None: the operation is not preempted (kernel threads, tests).
    pub resched: Option<&'a mut dyn CondResched>,
}

/// The scheduler's side of a `cond_resched()` point inside a task's operation: whether a
/// woken kernel thread takes the CPU there, and that thread's work while it holds it.
pub trait CondResched {
    /// The task at a `cond_resched()` point at `now`, having spent `cpu_ns` of CPU time in
    /// this operation so far. When the scheduler's rules give its CPU to a woken kernel
    /// thread, that thread runs (on `mm`, its IO through `io`) until it gives the CPU back,
    /// and the time the task has it again is returned; None: the task runs on.
    fn cond_resched(&mut self, mm: &mut Mm, io: &mut dyn Io, now: u64, cpu_ns: u64) -> Option<u64>;
}

/// [`Ctx::task`] of an operation done outside any task (tests, kernel threads).
pub const NO_TASK: u32 = u32::MAX;

impl<'a> Ctx<'a> {
    pub fn new(now: u64, io: &'a mut dyn Io, memcg: u16) -> Self {
        Ctx {
            now,
            io,
            cpu_ns: 0,
            wait_until: now,
            memcg,
            major: false,
            oom: false,
            kswapd: false,
            cpu: 0,
            task: NO_TASK,
            lock_wait_ns: 0,
            start: now,
            rq_wait_ns: 0,
            resched: None,
        }
    }

    /// Where the operation's CPU time has got to: its start plus the CPU time spent and the
    /// run-queue waits, or later when it waited (IO, throttling) past that.
    #[inline]
    pub fn clock(&self) -> u64 {
        (self.start + self.cpu_ns + self.rq_wait_ns).max(self.now)
    }
    #[inline]
    pub fn wait(&mut self, t: u64) {
        self.wait_until = self.wait_until.max(t);
    }

    /// Submit a write of `nr` pages at `sector` of `dev` now, from kswapd if this is
    /// kswapd's context. Writeback throttling may sleep the submitter (blk-wbt's
    /// `rq_qos_wait()`) until the request is issued; the submitter's clock moves on to the
    /// issue.
    pub fn submit_write(&mut self, dev: u32, op: BioOp, sector: u64, nr: u32) -> Submitted {
        let sub = self.io.submit(dev, self.now, op, self.kswapd, sector, nr);
        if sub.issued > self.now {
            self.wait(sub.issued);
            self.now = sub.issued;
        }
        sub
    }
}

/// A memory object: anonymous region, shmem region, or file.
pub struct Object {
    pub kind: ObjKind,
    pub size_pages: u64,
    /// Anon/shmem: page-table entries (see [`memory`] for the encoding). File: page-cache
    /// entries: resident folio or shadow (see [`filemap`]).
    pub ent: zeroed::ZeroedVec<u64>,
    /// File only: state of the (single, shared) mapping's PTEs: bit0 present, bit1 young.
    pub mapped: zeroed::ZeroedVec<u8>,
    /// File: current size in pages.
    pub file_pages: u64,
    /// File: first page on its device.
    pub dev_base: u64,
    /// The readahead state of accesses made outside any task ([`NO_TASK`]: tests, kernel
    /// threads); a task reads through its own [`filemap::OpenFile`] ([`Mm::open_file`]).
    pub file: filemap::OpenFile,
    /// The access-pattern advice (fadvise / madvise). The kernel keeps POSIX_FADV_RANDOM
    /// and SEQUENTIAL per open file (FMODE_RANDOM, `f_ra.ra_pages`) and MADV_* per VMA; the
    /// model keeps one per object, which also stands for the VMA flags ([`Object::has_recency`]).
    pub hint: filemap::Hint,
    /// File: lowest and highest+1 dirty index (bounding box for writeback scans).
    pub dirty_lo: u64,
    pub dirty_hi: u64,
    /// Pages resident (page cache or mapped anon).
    pub nr_resident: u64,
    pub nr_dirty: u64,
    /// Writeback cursor (`mapping->writeback_index`).
    pub wb_index: u64,
    /// When the file went from clean to dirty (`inode->dirtied_when`); 0 = clean.
    pub dirtied_when: u64,
    /// Latest completion time of writeback issued for this file.
    pub wb_done_max: u64,
    /// File: a write extended the file since the last journal commit one of its fsyncs
    /// started or joined: ext4's `i_datasync_tid` is newer than the last commit, so an
    /// fdatasync must commit ([`Mm::fdatasync`]). Kernel: `ext4_do_update_inode()` passes
    /// `need_datasync` when `i_disksize` changes and block allocation does the same
    /// (`ext4_update_inode_fsync_trans(handle, inode, 1)`). Simplifies: jbd2's periodic
    /// commit (`commit=5` s) and other files' commits, which would also commit it, do not
    /// clear it; only this file's fsync or fdatasync does.
    pub datasync_meta: bool,
    /// VMA swap readahead state (`vma->swap_readahead_info`).
    pub swap_ra: swap::VmaRaInfo,
    /// Memcgs (bit `min(id, 63)`) whose tasks faulted pages into this object: the object is
    /// on those memcgs' mm lists for the multi-gen LRU's page-table walk.
    pub mm_memcgs: u64,
    /// Tasks that faulted into this object: the threads of the mm it stands for, whose CPUs
    /// an unmap's TLB flush reaches ([`tlb`]).
    pub mappers: tlb::TaskSet,
    /// Page-table pages allocated for the object's mapping (see [`memcontrol`]): one bit per
    /// PTE table (512 pages) and per PMD table (512 PTE tables).
    pub pgtables: memcontrol::PgTables,
    /// Anon: write faults may map a THP (`thp_vma_allowable_order()` as of the object's
    /// advice and `transparent_hugepage/enabled`), fixed at creation.
    pub thp: bool,
    /// Anon: advised MADV_HUGEPAGE (VM_HUGEPAGE), for the defrag gfp mask.
    pub thp_madvised: bool,
    /// VM_LOCKED ([`ObjectCfg::mlock`]).
    pub mlock: bool,
    /// File (not a `create` directory): the page cache's xarray nodes ([`xarray`]).
    pub xa: Option<Box<xarray::XaTree>>,
}

impl Object {
    /// Kernel: `vma_has_recency()`: false for a mapping advised MADV_RANDOM or
    /// MADV_SEQUENTIAL (the object's hint stands for the VMA flags; FMODE_NOREUSE is not
    /// modelled). Such a VMA's young bits are ignored by the rmap walk and the multi-gen LRU's
    /// page-table walk, and its faults are not "in fault" for the multi-gen LRU.
    #[inline]
    pub fn has_recency(&self) -> bool {
        self.hint == filemap::Hint::Normal
    }

    /// Kernel: `lru_gen_add_mm()`: a task of memcg `memcg` faulted into this object, which is
    /// now on that memcg's mm list (memcg ids above 63 share bit 63).
    #[inline]
    pub fn join_mm_list(&mut self, memcg: u16) {
        self.mm_memcgs |= Self::mm_list_bit(memcg as usize);
    }

    /// Is the object on the mm list of memcg `memcg`?
    #[inline]
    pub fn on_mm_list(&self, memcg: usize) -> bool {
        self.mm_memcgs & Self::mm_list_bit(memcg) != 0
    }

    #[inline]
    fn mm_list_bit(memcg: usize) -> u64 {
        1u64 << memcg.min(63)
    }
}

pub struct Memcg {
    pub max_pages: u64,
    /// `memory.current`: the page counter, which includes the charges held in the per-CPU
    /// stocks ([`memcontrol`]).
    pub usage: u64,
    /// `memory.swap.max` in pages (u64::MAX = max).
    pub swap_max: u64,
    /// Page-table pages charged (`pagetables` of memory.stat, part of `kernel`).
    pub pagetables: u64,
    pub swappiness: Option<u64>,
    pub events: vmstat::MemcgEvents,
    /// Swap entries charged (memory.swap.current).
    pub swap_usage: u64,
}

/// Node-wide reclaim state (`struct pglist_data` flags and kswapd bookkeeping).
#[derive(Default)]
pub struct NodeState {
    /// PGDAT_WRITEBACK: kswapd found only folios under writeback.
    pub pgdat_writeback: bool,
    /// PGDAT_DIRTY: kswapd found many dirty file folios at the LRU tail.
    pub pgdat_dirty: bool,
    pub kswapd_failures: u32,
    /// Gauges.
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    pub nr_swapcached: u64,
    pub nr_isolated: [u64; 2],
    /// Pages of kernel memory allocated by [`Mm::alloc_kernel_pages`] or held since boot
    /// ([`ZoneBoot::kernel`]).
    pub nr_kernel_pages: u64,
    /// Page-table pages (`NR_PAGETABLE`), allocated by the fault path ([`memcontrol`]).
    pub nr_page_table_pages: u64,
    /// NR_ANON_THPS: anonymous THPs mapped by a PMD (`nr_anon_transparent_hugepages`).
    pub nr_anon_thps: u64,
    /// Frames reserved at boot ([`ZoneBoot::reserved`]) or holes ([`ZoneBoot::holes`]):
    /// never managed.
    pub nr_reserved_pages: u64,
    /// Cursor of the round-robin memcg walk of direct reclaim (`mem_cgroup_iter` cookie;
    /// v6.11+, [`crate::workingset::KernelVersion::direct_reclaim_partial_memcg_walk`]).
    pub memcg_cursor: usize,
    /// Reclaimers sleeping in `reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK)`: (start, wakeup)
    /// times; their number is `pgdat->nr_writeback_throttled`.
    pub wb_throttled: Vec<(u64, u64)>,
    /// `pgdat->nr_reclaim_start`: NR_THROTTLED_WRITTEN when the first of them started.
    pub nr_reclaim_start: u64,
    /// LRUVEC_NODE_CONGESTED of the root lruvec: kswapd found every dirty file folio it
    /// took already queued for writeback and marked for reclaim.
    pub lruvec_node_congested: bool,
    /// LRUVEC_CGROUP_CONGESTED of the target lruvec of the limit reclaim in progress
    /// (cleared when its `do_try_to_free_pages()` ends).
    pub lruvec_cgroup_congested: bool,
}

/// The whole model of one node.
pub struct Mm {
    pub cfg: MmConfig,
    pub pages: FrameTable,
    pub zones: Vec<Zone>,
    pub lruvecs: Vec<Lruvec>,
    pub memcgs: Vec<Memcg>,
    pub objects: Vec<Object>,
    pub swap: Vec<swap::SwapArea>,
    /// Swap areas in allocation order (highest priority first; stable for equal ones).
    pub swap_order: Vec<usize>,
    pub swap_ra_global: swap::ClusterRaState,
    /// Per task (by [`Ctx::task`]), the files it has open: (object, state), sorted by object
    /// ([`Mm::open_file`]).
    pub open_files: Vec<Vec<(u32, filemap::OpenFile)>>,
    pub balance: Box<dyn ScanBalance>,
    pub ev: VmEvents,
    pub node: NodeState,
    pub kswapd: kswapd::Kswapd,
    pub kcompactd: kcompactd::Kcompactd,
    /// CPU time spent compacting (scanning and migrating), indexed by
    /// [`compaction::Compactor`]: direct, kcompactd, kswapd.
    pub compact_cpu_ns: [u64; 3],
    pub reclaim_cpu: ReclaimCpu,
    /// `lruvec->lru_lock` of each lruvec ([`lrulock`]).
    pub lru_locks: Vec<lrulock::LruLock>,
    /// Lock totals over every lruvec.
    pub lru_lock_stats: lrulock::LruLockStats,
    /// Per-CPU `folio_batch`es, grown to the highest CPU seen.
    pub cpu_batches: Vec<lrulock::CpuBatches>,
    /// Batch additions of the current operation, not yet settled on a CPU.
    pub(crate) lru_pending: lrulock::PendingBatches,
    /// Pending IO completions (writeback, swap-out): (time, pfn).
    pub(crate) completions: BinaryHeap<Reverse<(u64, u32)>>,
    /// Reusable scratch buffer for isolated folios.
    pub(crate) scratch: Vec<u32>,
    pub(crate) scratch2: Vec<u32>,
    pub(crate) scratch3: Vec<u32>,
    /// Reusable buffer for readahead and writeback IO batches.
    pub(crate) io_buf: Vec<u32>,
    /// The page-cache folio a `read()` holds a reference to while it starts the next
    /// asynchronous readahead window (`filemap_get_pages()` → `filemap_readahead()` with the
    /// folio from `filemap_get_read_batch()`), or `NIL`: reclaim entered by that window's
    /// allocations cannot free it (`__remove_mapping()`'s `folio_ref_freeze()` fails: `goto
    /// keep_locked`).
    pub(crate) read_pinned: u32,
    /// The flusher should run (dirty > background threshold).
    pub flusher_wanted: bool,
    /// The filesystem journal (fsync commits).
    pub journal: filemap::Journal,
    /// The filesystem device's writeback state (`bdi_writeback`) and the global wb domain.
    pub wb: writeback::Wb,
    /// Dirty-throttling state per task (slot 0: operations without a task, then task i at
    /// i + 1).
    pub task_dirty: Vec<writeback::TaskDirty>,
    pub min_free_kbytes: u64,
    /// Multi-gen LRU: the reclaimer has a page-table walk context
    /// (`current->reclaim_state->mm_walk`), so look-around promotes in batches.
    pub(crate) mm_walk_active: bool,
    /// The current operation is a page fault on a VMA with recency (`lru_gen_in_fault()`).
    pub(crate) in_lru_fault: bool,
    /// Each simulated CPU's loaded mm ([`tlb`]), set by the simulator.
    pub tlb_cpus: Vec<tlb::CpuTlb>,
    /// The reclaimer's deferred TLB flush (`current->tlb_ubc`).
    pub tlb_ubc: tlb::TlbBatch,
    /// TLB flushes of reclaim's unmaps.
    pub tlb_stats: tlb::TlbStats,
    /// kswapd invoked the OOM killer (`lru_gen.min_ttl_ms`): the next allocating task is the
    /// victim.
    pub(crate) oom_pending: bool,
    /// When the periodic memcg statistics flush is next due (u64::MAX when off).
    pub memcg_stats_next_flush: u64,
    /// When vmstat's next per-CPU refresh runs (`vmstat_update()`, every
    /// [`mmzone::STAT_INTERVAL_NS`]); u64::MAX when it does nothing the model keeps (no
    /// per-CPU lists, or a kernel before v6.7's `decay_pcp_high()`).
    pub(crate) vmstat_next_update: u64,
    /// Per-CPU memcg charge stocks (`memcg_stock_pcp`), grown to the highest CPU seen.
    pub memcg_stock: Vec<memcontrol::MemcgStock>,
    /// The simulated CPU of the operation in progress (`smp_processor_id()`): whose per-CPU
    /// page lists an order-0 allocation or free uses ([`mmzone::PerCpuPages`]). The
    /// simulator sets it with each operation's [`Ctx::cpu`] ([`Mm::set_cpu`]).
    pub pcp_cpu: u16,
    /// Slab caches ([`slab`]).
    pub slab: slab::SlabState,
    /// The page caches' shadow-only xarray leaves (`shadow_nodes`, [`xarray`]).
    pub shadow_nodes: xarray::ShadowNodes,
    /// Dentries and inodes of created files ([`fs`]).
    pub fs: fs::FsState,
    /// The superblock shrinker's deferred work ([`shrinker`]).
    pub shrinker: shrinker::SuperShrinker,
}

impl Mm {
    /// Kernel: `cond_resched()` in reclaim (`shrink_lruvec()` between its
    /// `SWAP_CLUSTER_MAX` rounds, `shrink_node_memcgs()` before each memcg,
    /// `try_to_shrink_lruvec()` after each batch, `__perform_reclaim()` after
    /// `try_to_free_pages()`; `might_alloc()` before each folio allocation of a readahead
    /// window), reached with no folio isolated (the per-folio point of
    /// `shrink_folio_list()` is [`Mm::cond_resched_isolated`]). Under voluntary preemption
    /// (Debian's `PREEMPT_DYNAMIC` default) this is where a kernel thread whose wakeup or
    /// tick asked for a reschedule takes a task's CPU: the scheduler ([`CondResched`]) runs
    /// it, and the task's clock moves on by the time it waited (`ctx.rq_wait_ns`; from
    /// then on its IO is submitted at the time it runs again).
    pub fn cond_resched(&mut self, ctx: &mut Ctx) {
        if ctx.resched.is_none() {
            return;
        }
        debug_assert!(
            self.scratch.is_empty() && self.scratch2.is_empty() && self.node.nr_isolated == [0, 0],
            "cond_resched() with folios isolated"
        );
        self.resched_to_kthread(ctx);
    }

    /// Kernel: the `cond_resched()` at the top of `shrink_folio_list()`'s loop, once per
    /// isolated folio: the reclaimer holds the folios it isolated (the caller's list, off
    /// every LRU list; those it decided to keep, in `self.scratch2`) and its deferred TLB
    /// flush (`current->tlb_ubc`, [`Mm::tlb_ubc`]). A kernel thread that takes the CPU here
    /// reclaims beside them, as kswapd does beside a direct reclaimer on another CPU: it
    /// cannot isolate them, and the reclaimer's batch stays its own (both are set aside
    /// while the thread runs). The thread sees them in NR_ISOLATED_*.
    pub(crate) fn cond_resched_isolated(&mut self, ctx: &mut Ctx) {
        if ctx.resched.is_none() {
            return;
        }
        debug_assert!(self.scratch.is_empty(), "the isolated list is the caller's");
        let kept = std::mem::take(&mut self.scratch2);
        let ubc = std::mem::take(&mut self.tlb_ubc);
        self.resched_to_kthread(ctx);
        debug_assert!(self.scratch.is_empty() && self.scratch2.is_empty());
        debug_assert!(
            !self.tlb_ubc.flush_required,
            "the thread flushed its own batch"
        );
        self.scratch2 = kept;
        self.tlb_ubc = ubc;
    }

    /// The scheduler's side of [`Mm::cond_resched`] and [`Mm::cond_resched_isolated`].
    fn resched_to_kthread(&mut self, ctx: &mut Ctx) {
        let now = ctx.clock();
        let Some(h) = ctx.resched.as_deref_mut() else {
            return;
        };
        if let Some(back) = h.cond_resched(self, &mut *ctx.io, now, ctx.cpu_ns) {
            debug_assert!(back >= now);
            ctx.rq_wait_ns = back - ctx.start - ctx.cpu_ns;
            ctx.now = ctx.now.max(back);
        }
    }

    pub fn new(cfg: MmConfig) -> Mm {
        let total: u64 = cfg.zones.iter().map(|z| z.1).sum();
        assert!(total < NIL as u64, "memory larger than 2^32 pages");
        let mut pages = FrameTable::new(total as usize);
        let (zones, node_kernel, node_reserved, min_free_kbytes) =
            Self::boot_zones(&cfg, &mut pages);
        let mut memcgs = vec![Memcg {
            max_pages: u64::MAX,
            usage: 0,
            swap_max: u64::MAX,
            pagetables: 0,
            swappiness: None,
            events: Default::default(),
            swap_usage: 0,
        }];
        for m in &cfg.memcgs {
            memcgs.push(Memcg {
                max_pages: m.max_pages.unwrap_or(u64::MAX),
                usage: 0,
                swap_max: m.swap_max_pages.unwrap_or(u64::MAX),
                pagetables: 0,
                swappiness: m.swappiness,
                events: Default::default(),
                swap_usage: 0,
            });
        }
        let mut dev_base = 0u64;
        // Leaves of the page caches' xarrays, numbered object by object for the shadow
        // node lists.
        let mut leaf_base = 0u64;
        let mut trees = Vec::new();
        let objects = cfg
            .objects
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let base = dev_base;
                let is_dir = cfg.fs.dirs.iter().any(|d| d.obj as usize == i);
                if o.kind == ObjKind::File {
                    dev_base += o.size_pages;
                }
                Object {
                    kind: o.kind,
                    size_pages: o.size_pages,
                    ent: zeroed::ZeroedVec::new(o.size_pages as usize),
                    mapped: zeroed::ZeroedVec::default(),
                    file_pages: if o.exists { o.size_pages } else { 0 },
                    dev_base: base,
                    file: Default::default(),
                    hint: filemap::Hint::Normal,
                    dirty_lo: 0,
                    dirty_hi: 0,
                    nr_resident: 0,
                    nr_dirty: 0,
                    wb_index: 0,
                    dirtied_when: 0,
                    wb_done_max: 0,
                    datasync_meta: false,
                    swap_ra: Default::default(),
                    mm_memcgs: 0,
                    mappers: Default::default(),
                    pgtables: Default::default(),
                    thp: o.kind == ObjKind::Anon
                        && memory::thp_allowed(cfg.thp_enabled, o.hugepage),
                    thp_madvised: o.hugepage == HugepageAdvice::Hugepage,
                    mlock: o.mlock && o.kind != ObjKind::File,
                    xa: (o.kind == ObjKind::File && !is_dir).then(|| {
                        let t = xarray::XaTree::new(o.size_pages, leaf_base as u32);
                        trees.push((leaf_base as u32, i as u32));
                        leaf_base += t.leaves() as u64;
                        assert!(leaf_base < u32::MAX as u64, "more than 2^32 xarray leaves");
                        Box::new(t)
                    }),
                }
            })
            .collect();
        let swap: Vec<swap::SwapArea> = cfg.swap_areas.iter().map(swap::SwapArea::new).collect();
        let mut swap_order: Vec<usize> = (0..swap.len()).collect();
        swap_order.sort_by_key(|&i| std::cmp::Reverse(swap[i].priority));
        let balance: Box<dyn ScanBalance> = match cfg.balance {
            // Seed S0's "after" kernel: the series as posted against v4.7-rc.
            BalanceKind::RefaultCost if cfg.kernel.lru_balance_v4_7() => {
                Box::new(balance::RefaultCostV4_7)
            }
            BalanceKind::RefaultCost => Box::new(balance::RefaultCost {
                rotations: cfg.kernel.lru_cost_counts_rotations(),
            }),
            BalanceKind::Legacy => Box::new(balance::Legacy),
        };
        let nr_memcgs = memcgs.len();
        let fs = fs::FsState::new(&cfg.fs.dirs, &cfg.objects, nr_memcgs);
        Mm {
            shadow_nodes: xarray::ShadowNodes::new(trees, leaf_base as usize, nr_memcgs),
            slab: slab::SlabState::new(nr_memcgs),
            fs,
            shrinker: shrinker::SuperShrinker {
                nr_deferred: vec![0; nr_memcgs],
            },
            pages,
            zones,
            lruvecs: vec![Lruvec::default(); nr_memcgs],
            memcgs,
            objects,
            swap,
            swap_order,
            swap_ra_global: Default::default(),
            open_files: Vec::new(),
            balance,
            ev: VmEvents::default(),
            node: NodeState {
                nr_kernel_pages: node_kernel,
                nr_reserved_pages: node_reserved,
                ..Default::default()
            },
            kswapd: kswapd::Kswapd::default(),
            kcompactd: kcompactd::Kcompactd::default(),
            compact_cpu_ns: [0; 3],
            reclaim_cpu: ReclaimCpu::default(),
            lru_locks: vec![Default::default(); nr_memcgs],
            lru_lock_stats: Default::default(),
            cpu_batches: Vec::new(),
            lru_pending: Default::default(),
            completions: BinaryHeap::new(),
            scratch: Vec::with_capacity(64),
            scratch2: Vec::with_capacity(64),
            scratch3: Vec::with_capacity(64),
            io_buf: Vec::with_capacity(64),
            read_pinned: crate::types::NIL,
            flusher_wanted: false,
            journal: Default::default(),
            wb: Default::default(),
            task_dirty: Vec::new(),
            min_free_kbytes,
            mm_walk_active: false,
            in_lru_fault: false,
            tlb_cpus: Vec::new(),
            tlb_ubc: Default::default(),
            tlb_stats: Default::default(),
            oom_pending: false,
            memcg_stats_next_flush: memcontrol::first_stats_flush(
                cfg.memcg_stats_flush_ns,
                cfg.memcg_stats_first_flush_ns,
            ),
            vmstat_next_update: if cfg.nr_cpus > 0 && cfg.kernel.pcp_high_autotuned() {
                mmzone::STAT_INTERVAL_NS
            } else {
                u64::MAX
            },
            memcg_stock: Vec::new(),
            pcp_cpu: 0,
            cfg,
        }
    }

    /// The zones as the kernel leaves them at boot: each zone's frames handed to the buddy
    /// allocator except its holes, reserved pages and the kernel's boot allocations (held at
    /// the top of the zone: memblock allocates top-down; in the DMA zone at its bottom,
    /// [`Mm::boot_dma_zone`]), the watermarks
    /// (`__setup_per_zone_wmarks()` from `vm.min_free_kbytes` or
    /// [`mmzone::boot_min_free_kbytes`], unless given) and the protection
    /// (`setup_per_zone_lowmem_reserve()`, unless given). Returns the zones, the kernel
    /// and reserved page counts, and `min_free_kbytes`.
    fn boot_zones(cfg: &MmConfig, pages: &mut FrameTable) -> (Vec<Zone>, u64, u64, u64) {
        let mut zones = Vec::new();
        let (mut kernel, mut reserved) = (0u64, 0u64);
        let mut start = 0u32;
        for (i, &(name, n)) in cfg.zones.iter().enumerate() {
            let boot = cfg.zone_boot.get(i).copied().unwrap_or_default();
            assert!(
                boot.holes + boot.reserved + boot.kernel <= n,
                "zone {name}: holes, reserved and kernel pages exceed its {n} frames"
            );
            let end = start + n as u32;
            let mut z = Zone::new(name, start, end);
            z.present = n - boot.holes;
            z.managed = n - boot.holes - boot.reserved;
            let held = (boot.holes + boot.reserved + boot.kernel) as u32;
            let (free_start, free_end) = if z.zone_type == mmzone::ZONE_DMA {
                Self::boot_dma_zone(&mut z, boot.holes);
                (start + held, end)
            } else {
                (start, end - held)
            };
            // Pageblocks wholly held by the kernel are unmovable ones.
            let mut pb = (free_end as u64).next_multiple_of(mmzone::PAGEBLOCK_NR_PAGES);
            while pb + mmzone::PAGEBLOCK_NR_PAGES <= end as u64 {
                z.set_pageblock_mt(pb as Pfn, mmzone::mt::UNMOVABLE);
                pb += mmzone::PAGEBLOCK_NR_PAGES;
            }
            z.init_free_range(pages, free_start, free_end);
            // Their frame records are written when first needed (`Zone::boot_held`).
            z.boot_held = [(start, free_start), (free_end, end)]
                .into_iter()
                .filter(|&(s, e)| s < e)
                .collect();
            kernel += boot.kernel;
            reserved += boot.holes + boot.reserved;
            zones.push(z);
            start = end;
        }
        let managed: Vec<u64> = zones.iter().map(|z| z.managed).collect();
        let given: Option<Vec<[u64; 3]>> = (0..zones.len())
            .map(|i| cfg.zone_boot.get(i).and_then(|b| b.wmark))
            .collect();
        let (w, min_free_kbytes) = match given {
            Some(w) if !w.is_empty() => {
                // The kernel's own watermarks: min_free_kbytes is what they add up to.
                let kb = cfg
                    .min_free_kbytes
                    .unwrap_or_else(|| w.iter().map(|w| w[0]).sum::<u64>() * 4);
                (w, kb)
            }
            _ => {
                let kb = cfg.min_free_kbytes.unwrap_or_else(|| {
                    mmzone::boot_min_free_kbytes(&managed, cfg.watermark_scale_factor)
                });
                (
                    mmzone::setup_per_zone_wmarks(&managed, kb, cfg.watermark_scale_factor),
                    kb,
                )
            }
        };
        let mut by_type = [0u64; mmzone::NR_ZONE_TYPES];
        for z in &zones {
            by_type[z.zone_type] += z.managed;
        }
        let reserve = mmzone::setup_per_zone_lowmem_reserve(&by_type, &cfg.lowmem_reserve_ratio);
        for (i, (z, w)) in zones.iter_mut().zip(w).enumerate() {
            z.wmark = w;
            z.boost_factor = if cfg.kernel.watermark_boosting() {
                cfg.watermark_boost_factor
            } else {
                0
            };
            z.boost_on_steal = cfg.kernel.boost_on_every_fallback();
            z.steal_moves_free_pages = cfg.kernel.fallback_moves_free_pages();
            z.highatomic = cfg.kernel.highatomic_rules();
            if cfg.nr_cpus > 0 {
                // setup_per_cpu_pageset() → zone_pcp_update(): every CPU's lists, sized from
                // the zone and the CPU count.
                let (batch, high) = mmzone::pcp_batch_high(
                    z.managed,
                    w[mmzone::Wmark::Low as usize],
                    cfg.nr_cpus,
                    cfg.kernel,
                );
                z.pcp = vec![mmzone::PerCpuPages::default(); cfg.nr_cpus as usize];
                z.pcp_batch = batch;
                z.pcp_high = high;
                z.pcp_high_max =
                    mmzone::pcp_high_max(z.managed, batch, high, cfg.nr_cpus, cfg.kernel);
                z.pcp_rules = mmzone::PcpRules {
                    free_factor: cfg.kernel.pcp_high_from_low_wmark(),
                    drain_requested_first: cfg.kernel.pcp_drain_requested_list_first(),
                    reclaim_active_cap: cfg.kernel.pcp_high_capped_under_reclaim(),
                    autotune: cfg.kernel.pcp_high_autotuned(),
                };
            }
            z.lowmem_reserve = cfg
                .zone_boot
                .get(i)
                .and_then(|b| b.protection)
                .unwrap_or(reserve[z.zone_type]);
        }
        (zones, kernel, reserved, min_free_kbytes)
    }

    /// Kernel: `min_free_kbytes_sysctl_handler()` (`echo kb > /proc/sys/vm/min_free_kbytes`):
    /// `user_min_free_kbytes = kb`, then `setup_per_zone_wmarks()` ([`Mm::setup_per_zone_wmarks`]).
    pub fn sysctl_min_free_kbytes(&mut self, kb: u64) {
        self.min_free_kbytes = kb;
        self.cfg.min_free_kbytes = Some(kb);
        self.setup_per_zone_wmarks();
    }

    /// Kernel: `watermark_scale_factor_sysctl_handler()`: the new factor, then
    /// `setup_per_zone_wmarks()`.
    pub fn sysctl_watermark_scale_factor(&mut self, factor: u64) {
        self.cfg.watermark_scale_factor = factor;
        self.setup_per_zone_wmarks();
    }

    /// Kernel: `setup_per_zone_wmarks()` → `__setup_per_zone_wmarks()` at run time: each
    /// zone's min, low and high watermarks from `min_free_kbytes` and
    /// `vm.watermark_scale_factor` ([`mmzone::setup_per_zone_wmarks`]); since v5.0 ("mm:
    /// reclaim small amounts of memory when an external fragmentation event occurs") it also
    /// sets `watermark_boost` to 0. The kernel's handlers do not recompute `lowmem_reserve`
    /// (`setup_per_zone_lowmem_reserve()` depends on the zones' managed pages and
    /// `vm.lowmem_reserve_ratio` only), so neither does this. `totalreserve_pages` (the dirty
    /// limits) follows, as the model derives it from the watermarks. Nothing is woken:
    /// kswapd runs when the next allocation finds a zone below its new low watermark.
    pub fn setup_per_zone_wmarks(&mut self) {
        let managed: Vec<u64> = self.zones.iter().map(|z| z.managed).collect();
        let w = mmzone::setup_per_zone_wmarks(
            &managed,
            self.min_free_kbytes,
            self.cfg.watermark_scale_factor,
        );
        let clear_boost = self.cfg.kernel.watermark_boosting();
        for (z, w) in self.zones.iter_mut().zip(w) {
            z.wmark = w;
            if clear_boost {
                z.watermark_boost = 0;
            }
        }
    }

    /// The DMA zone as an x86-64 kernel boots it (measured in the VM twin's 6.1 guest,
    /// `/proc/pagetypeinfo` at boot, docs/fidelity.md): its holes (pfn 0, the BIOS hole),
    /// reserved pages (the first MiB, reserved since v5.13: "x86/setup: always reserve the
    /// first 1M of RAM") and the kernel's boot allocations from the zone all sit in its
    /// first pageblock, the pages above are free. And `memmap_init_range()` marks a
    /// pageblock MIGRATE_MOVABLE only at a pageblock-aligned pfn: the zone starts at pfn 1
    /// (`holes` > 0: frame 0 is pfn 0), so its first pageblock keeps type 0,
    /// MIGRATE_UNMOVABLE, and the free pages in it are on the UNMOVABLE lists: they serve the
    /// unmovable allocations that reach the DMA zone without a fallback (the guest's 6.1
    /// kernel: 224 free pages there at boot, orders 5, 6 and 7; 3584 on the MOVABLE lists).
    fn boot_dma_zone(z: &mut Zone, holes: u64) {
        if holes > 0 {
            let start = z.start_pfn;
            z.set_pageblock_mt(start, mmzone::mt::UNMOVABLE);
        }
    }

    /// Total pages of the node.
    pub fn total_pages(&self) -> u64 {
        self.pages.len() as u64
    }

    /// The CPU the next operations run on ([`Mm::pcp_cpu`]).
    #[inline]
    pub fn set_cpu(&mut self, cpu: u16) {
        self.pcp_cpu = cpu;
    }

    /// Kernel: `vmstat_update()` → `refresh_cpu_vm_stats(true)` on every CPU, when due at
    /// `now`: v6.7+ `decay_pcp_high()` of each zone's per-CPU lists
    /// ([`mmzone::Zone::decay_pcp_high`]). The kernel's per-CPU work is deferrable and
    /// `round_jiffies_relative()`-aligned; the model runs every CPU's at each whole
    /// [`mmzone::STAT_INTERVAL_NS`]. The NUMA-only `drain_zone_pages()` of remote zones has
    /// nothing to do on the model's single node. The engine calls it through
    /// [`Mm::run_background`].
    #[inline]
    pub fn vmstat_update(&mut self, now: u64) {
        if now >= self.vmstat_next_update {
            self.vmstat_refresh(now);
        }
    }

    /// The refresh itself, out of line: the engine checks [`Mm::vmstat_update`] on every
    /// pass of its loop and the refresh is due once a second.
    #[cold]
    #[inline(never)]
    fn vmstat_refresh(&mut self, now: u64) {
        for z in &mut self.zones {
            for c in 0..z.pcp.len() {
                z.decay_pcp_high(&mut self.pages, c);
            }
        }
        let p = mmzone::STAT_INTERVAL_NS;
        self.vmstat_next_update = (now / p + 1) * p;
    }

    /// When vmstat's next refresh is due (u64::MAX when it has nothing to do).
    pub fn vmstat_update_due(&self) -> u64 {
        self.vmstat_next_update
    }

    /// Pages on the node's per-CPU page lists (free, but not in NR_FREE_PAGES).
    pub fn nr_pcp(&self) -> u64 {
        self.zones.iter().map(|z| z.nr_pcp).sum()
    }

    /// NR_FREE_PAGES of the node.
    pub fn nr_free(&self) -> u64 {
        self.zones.iter().map(|z| z.free).sum()
    }

    #[inline]
    pub fn zone_of(&self, pfn: Pfn) -> usize {
        let mut zi = self.zones.len() - 1;
        while zi > 0 && pfn < self.zones[zi].start_pfn {
            zi -= 1;
        }
        zi
    }

    /// Node LRU size of a list (`node_page_state(NR_*)`).
    pub fn node_lru(&self, lru: LruList) -> u64 {
        self.zones.iter().map(|z| z.nr_lru[lru.idx()]).sum()
    }

    /// Hierarchical lruvec list size (`lruvec_page_state()`): the root lruvec sees the
    /// node; a child only itself.
    pub fn lruvec_hier(&self, lv: usize, lru: LruList) -> u64 {
        if lv == 0 {
            self.node_lru(lru)
        } else {
            self.lruvecs[lv].nr[lru.idx()]
        }
    }

    /// Free swap pages over all areas (`get_nr_swap_pages()`).
    pub fn nr_swap_free(&self) -> u64 {
        self.swap.iter().map(|s| s.nr_free).sum()
    }
    pub fn total_swap_pages(&self) -> u64 {
        self.swap.iter().map(|s| s.size_pages).sum()
    }

    /// `vm_swap_full()`: more than half the swap space is in use.
    pub fn vm_swap_full(&self) -> bool {
        self.nr_swap_free() * 2 < self.total_swap_pages()
    }

    /// Process IO completions due by `now` (`folio_end_writeback()`).
    pub fn run_completions(&mut self, now: u64) {
        while let Some(&Reverse((t, pfn))) = self.completions.peek() {
            if t > now {
                break;
            }
            self.completions.pop();
            // A completion whose folio's writeback already ended (a cgroup v1 reclaimer
            // waited for it) is stale: the pfn may carry another writeback by now.
            if self.pages.io_done_ns[pfn as usize] == t {
                if self
                    .node
                    .wb_throttled
                    .iter()
                    .any(|&(s, e)| s <= t && t <= e)
                {
                    // acct_reclaim_writeback(): NR_THROTTLED_WRITTEN while reclaim is
                    // throttled on writeback.
                    let nr = self.pages.nr_pages(pfn);
                    self.ev.add(vmstat::Ev::NrThrottledWritten, nr);
                }
                self.end_writeback(pfn);
            }
        }
    }

    /// Time of the next pending IO completion.
    pub fn next_completion(&self) -> Option<u64> {
        self.completions.peek().map(|r| r.0 .0)
    }

    /// What runs in the background as simulated time reaches `now`, in this order: the IO
    /// completions due ([`Mm::run_completions`]), the periodic memcg statistics flush
    /// ([`Mm::memcg_flush_stats`]), vmstat's per-CPU refresh ([`Mm::vmstat_update`]) and
    /// XFS's inode reclaim worker ([`Mm::xfs_reclaim_worker`]).
    /// The engine calls it before every step and sample, and [`Mm::background_due`] tells
    /// it when a task's run of events must stop for it.
    #[inline]
    pub fn run_background(&mut self, now: u64) {
        self.run_completions(now);
        self.memcg_flush_stats(now);
        self.vmstat_update(now);
        self.xfs_reclaim_worker(now);
    }

    /// Whether any of [`Mm::run_background`]'s work is due at `now`.
    #[inline]
    pub fn background_due(&self, now: u64) -> bool {
        now >= self.memcg_stats_flush_due()
            || now >= self.vmstat_update_due()
            || now >= self.fs.icache.work_due
            || self.next_completion().is_some_and(|c| c <= now)
    }

    /// Counter snapshot with every /proc/vmstat name we produce (events and gauges).
    pub fn vmstat_snapshot(&self) -> Vec<(&'static str, u64)> {
        let mut v: Vec<(&'static str, u64)> = vmstat::EVENT_NAMES
            .iter()
            .zip(self.ev.0.iter())
            .map(|(n, c)| (*n, *c))
            .collect();
        let anon_pages: u64 = self
            .objects
            .iter()
            .filter(|o| o.kind == ObjKind::Anon)
            .map(|o| o.nr_resident)
            .sum();
        let shmem: u64 = self
            .objects
            .iter()
            .filter(|o| o.kind == ObjKind::Shmem)
            .map(|o| o.nr_resident)
            .sum();
        let file: u64 = self
            .objects
            .iter()
            .filter(|o| o.kind == ObjKind::File)
            .map(|o| o.nr_resident)
            .sum();
        let (bg_thresh, thresh) = self.dirty_limits();
        v.extend([
            ("nr_free_pages", self.nr_free()),
            ("nr_inactive_anon", self.node_lru(LruList::InactiveAnon)),
            ("nr_active_anon", self.node_lru(LruList::ActiveAnon)),
            ("nr_inactive_file", self.node_lru(LruList::InactiveFile)),
            ("nr_active_file", self.node_lru(LruList::ActiveFile)),
            ("nr_unevictable", self.node_lru(LruList::Unevictable)),
            // The model's only unevictable folios are mlocked ones.
            ("nr_mlock", self.node_lru(LruList::Unevictable)),
            ("nr_anon_pages", anon_pages),
            ("nr_anon_transparent_hugepages", self.node.nr_anon_thps),
            ("nr_shmem", shmem),
            ("nr_file_pages", file + shmem + self.node.nr_swapcached),
            ("nr_dirty", self.node.nr_dirty),
            ("nr_writeback", self.node.nr_writeback),
            ("nr_dirty_threshold", thresh),
            ("nr_dirty_background_threshold", bg_thresh),
            ("nr_swapcached", self.node.nr_swapcached),
            ("nr_page_table_pages", self.node.nr_page_table_pages),
            ("nr_slab_reclaimable", self.slab.node_pages().0),
            ("nr_slab_unreclaimable", self.slab.node_pages().1),
            ("workingset_nodes", self.shadow_nodes.total()),
            (
                "nr_swap_used",
                self.total_swap_pages() - self.nr_swap_free(),
            ),
        ]);
        v.sort_by(|a, b| a.0.cmp(b.0));
        v
    }
}

#[cfg(test)]
mod zone_boot_tests {
    use super::*;
    use crate::mmzone::{Wmark, ZONE_NORMAL};

    /// `echo 1024 > /proc/sys/vm/min_free_kbytes` (mmtests' stress-highalloc before its "at
    /// rest" pass) on a 4096-page zone booted with min_free_kbytes 4096, by hand: min
    /// 4096 / 4 = 1024, low and high + max(1024 / 4, 4096 * 10 / 10000) = 256; after the
    /// write min 256, delta max(64, 4) = 64: 256 / 320 / 384. vm.watermark_scale_factor 1000
    /// then: delta max(64, 409) = 409. The boost is cleared (v5.0+; v4.6 has none to
    /// clear, and the write leaves the field alone); lowmem_reserve is left alone.
    #[test]
    fn sysctl_writes_recompute_the_watermarks() {
        use crate::testutil::tiny_config;
        use crate::workingset::KernelVersion;
        for (kernel, boost_left) in [
            (KernelVersion::new(4, 6), 100),
            (KernelVersion::default(), 0),
        ] {
            let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
            cfg.min_free_kbytes = Some(4096);
            cfg.kernel = kernel;
            let mut mm = Mm::new(cfg);
            assert_eq!(mm.zones[0].wmark, [1024, 1280, 1536]);
            mm.zones[0].watermark_boost = 100;
            let reserve = mm.zones[0].lowmem_reserve;
            mm.sysctl_min_free_kbytes(1024);
            assert_eq!(mm.min_free_kbytes, 1024);
            assert_eq!(mm.zones[0].wmark, [256, 320, 384], "{kernel}");
            assert_eq!(mm.zones[0].watermark_boost, boost_left, "{kernel}");
            assert_eq!(mm.zones[0].lowmem_reserve, reserve);
            mm.sysctl_watermark_scale_factor(1000);
            assert_eq!(mm.zones[0].wmark, [256, 665, 1074], "{kernel}");
        }
    }

    /// Frames held since boot are not written at boot (`Zone::boot_held`): their records
    /// stay zero, the invariant checker counts them as kernel memory, and the first
    /// whole-zone pfn walk writes them as order-0 kernel heads; the checker passes before
    /// and after.
    #[test]
    fn boot_held_frames_are_written_on_the_first_pfn_walk() {
        let mut cfg = testutil::tiny_config(BalanceKind::RefaultCost, 0);
        cfg.zones = vec![("DMA", 4096), ("DMA32", 8192)];
        cfg.zone_boot = vec![
            ZoneBoot {
                holes: 2,
                reserved: 100,
                ..Default::default()
            },
            ZoneBoot {
                reserved: 200,
                kernel: 1000,
                ..Default::default()
            },
        ];
        cfg.swap_areas.clear();
        let mut mm = Mm::new(cfg);
        // DMA holds its bottom 102 frames, DMA32 its top 1200 (4096 + 8192 - 1200 = 11088).
        assert_eq!(mm.zones[0].boot_held, vec![(0, 102)]);
        assert_eq!(mm.zones[1].boot_held, vec![(11_088, 12_288)]);
        assert_eq!(mm.zones[1].boot_held_end(11_500), Some(12_288));
        assert_eq!(mm.zones[1].boot_held_end(11_087), None);
        assert!([0usize, 101, 11_088, 12_287]
            .iter()
            .all(|&p| mm.pages.hot[p] == page::Frame::default()));
        mm.check_invariants().unwrap();
        for zi in 0..2 {
            mm.zones[zi].link_all_deferred(&mut mm.pages);
            assert!(mm.zones[zi].boot_held.is_empty());
        }
        for p in [0usize, 101, 11_088, 12_287] {
            assert_eq!(
                (mm.pages.hot[p].flags, mm.pages.obj[p]),
                (page::pg::HEAD, NIL)
            );
        }
        assert_eq!(mm.pages.hot[102].flags & page::pg::HEAD, 0);
        mm.check_invariants().unwrap();
    }

    /// A DMA + DMA32 machine with reserved and boot-time kernel pages: managed and free pages,
    /// the computed protection, and user pages that reach the DMA zone only once DMA32 is at
    /// its low watermark, leaving DMA its reserve.
    #[test]
    fn boot_state_and_lowmem_reserve_in_allocation() {
        let mut cfg = testutil::tiny_config(BalanceKind::RefaultCost, 0);
        cfg.zones = vec![("DMA", 4096), ("DMA32", 8192)];
        cfg.zone_boot = vec![
            ZoneBoot {
                reserved: 100,
                ..Default::default()
            },
            ZoneBoot {
                reserved: 200,
                kernel: 1000,
                ..Default::default()
            },
        ];
        cfg.min_free_kbytes = Some(1024);
        cfg.objects[0].size_pages = 16_384;
        cfg.swap_areas.clear();
        let mut mm = Mm::new(cfg);
        assert_eq!((mm.zones[0].managed, mm.zones[0].free), (3996, 3996));
        assert_eq!((mm.zones[1].managed, mm.zones[1].free), (7992, 6992));
        // lowmem_reserve[Normal] of DMA: (DMA32 7992 + Normal 0) / 256 = 31.
        assert_eq!(mm.zones[0].lowmem_reserve, [0, 31, 31]);
        assert_eq!(mm.zones[1].lowmem_reserve, [0, 0, 0]);
        mm.check_invariants().unwrap();
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        // Fault anon pages until the first one lands in DMA.
        let mut i = 0;
        while mm.zones[0].free == 3996 {
            mm.touch(&mut ctx, 0, i, true);
            i += 1;
        }
        let dma32_low = mm.zones[1].wmark_pages(Wmark::Low);
        assert!(
            mm.zones[1].free <= dma32_low,
            "DMA32 was below its low watermark"
        );
        // Anon faults without swap: DMA is used down to min + reserve, never below.
        for _ in 0..12_000 {
            mm.touch(&mut ctx, 0, i, true);
            i += 1;
            if ctx.oom {
                break;
            }
        }
        // Against the unboosted min: a watermark boost (the page tables' unmovable
        // fallbacks) raises the bar after pages were taken, as boost_watermark() does.
        let z = &mm.zones[0];
        let min = z.wmark[Wmark::Min as usize];
        assert!(
            z.free >= min + z.lowmem_reserve[ZONE_NORMAL],
            "DMA keeps its reserve: free {} min {min} (boost {}) reserve {}",
            z.free,
            z.watermark_boost,
            z.lowmem_reserve[ZONE_NORMAL]
        );
        mm.check_invariants().unwrap();
    }

    /// The DMA zone of the VM twin's 6.1 guest at boot, as its /proc/pagetypeinfo
    /// (docs/zoneinfo/guest-debian-6.1-256m.pagetypeinfo) shows it: 3998 present pages
    /// (+ 98 hole frames: pfn 0 and 0x9f..0xff), 158 reserved, 32 held by the kernel. The
    /// model's free lists equal the kernel's per order and migratetype (orders 5, 6, 7
    /// UNMOVABLE, in the first pageblock, which `memmap_init_range()` never marks MOVABLE as
    /// the zone starts at pfn 1; orders 9 and 3 x 10 MOVABLE), and so do the pageblocks per
    /// type (1 UNMOVABLE, 7 MOVABLE). An unmovable allocation that reaches the DMA zone is
    /// served from the first pageblock without a fallback or a boost.
    #[test]
    fn dma_zone_boots_as_the_guest_kernel_reports_it() {
        let text = include_str!("../../../docs/zoneinfo/guest-debian-6.1-256m.pagetypeinfo");
        // "Node    0, zone      DMA, type    Unmovable      0 ..." rows and the
        // "Node 0, zone      DMA            1            7 ..." pageblock row.
        let mut want_free = [[0u32; NR_PAGE_ORDERS]; 2];
        let mut want_blocks = [0u64; 2];
        for line in text.lines().filter(|l| l.contains("zone      DMA,")) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let t = match f[5] {
                "Unmovable" => 0,
                "Movable" => 1,
                _ => continue,
            };
            for (o, n) in f[6..].iter().enumerate() {
                want_free[t][o] = n.parse().unwrap();
            }
        }
        let row = text
            .lines()
            .find(|l| l.starts_with("Node 0, zone      DMA "))
            .unwrap();
        let f: Vec<&str> = row.split_whitespace().collect();
        want_blocks[0] = f[4].parse().unwrap();
        want_blocks[1] = f[5].parse().unwrap();
        assert_eq!(want_free[0][5..8], [1, 1, 1], "the file read back");

        let mut cfg = testutil::tiny_config(BalanceKind::RefaultCost, 0);
        cfg.zones = vec![("DMA", 3998 + 98), ("DMA32", 8192)];
        cfg.zone_boot = vec![
            ZoneBoot {
                holes: 98,
                reserved: 158,
                kernel: 32,
                ..Default::default()
            },
            ZoneBoot::default(),
        ];
        cfg.kernel = crate::workingset::KernelVersion::new(6, 1);
        cfg.swap_areas.clear();
        let mut mm = Mm::new(cfg);
        mm.check_invariants().unwrap();
        let z = &mm.zones[0];
        assert_eq!((z.present, z.managed, z.free), (3998, 3840, 3808));
        for (t, want) in want_free.iter().enumerate() {
            let got: Vec<u32> = (0..NR_PAGE_ORDERS)
                .map(|o| z.nr_free_list(o, t) as u32)
                .collect();
            assert_eq!(got, want.to_vec(), "free blocks of type {t} by order");
        }
        let blocks = |t: u8| z.pageblock.iter().filter(|&&b| b & 7 == t).count() as u64;
        assert_eq!(
            [blocks(mmzone::mt::UNMOVABLE), blocks(mmzone::mt::MOVABLE)],
            want_blocks
        );
        // The zone's running counts agree with the array.
        assert_eq!(
            [
                z.nr_pageblocks[mmzone::mt::UNMOVABLE as usize],
                z.nr_pageblocks[mmzone::mt::MOVABLE as usize]
            ],
            want_blocks
        );
        let before = mm.zones[0].free;
        let p = mm.zones[0]
            .rmqueue(
                &mut mm.pages,
                0,
                mmzone::mt::UNMOVABLE,
                mmzone::alloc_flags::KSWAPD,
                &mut mm.ev,
            )
            .unwrap();
        assert!(p < 512, "from the first pageblock: {p}");
        assert_eq!(mm.zones[0].free, before - 1);
        assert_eq!(mm.ev.get(crate::vmstat::Ev::ExtfragFallback), 0);
        assert_eq!(mm.zones[0].watermark_boost, 0);
    }

    /// A machine with all three zones (DMA, DMA32, Normal) keeps per-zone LRU counts for
    /// each: user pages fill Normal, then DMA32, then DMA.
    #[test]
    fn three_zones_all_hold_lru_pages() {
        let mut cfg = testutil::tiny_config(BalanceKind::RefaultCost, 5120);
        cfg.zones = vec![("DMA", 1024), ("DMA32", 2048), ("Normal", 2048)];
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for i in 0..4500 {
            mm.touch(&mut ctx, 0, i, true);
        }
        for z in &mm.zones {
            assert!(
                z.nr_lru.iter().sum::<u64>() > 0,
                "zone {} holds LRU pages",
                z.name
            );
        }
        mm.check_invariants().unwrap();
    }
}
