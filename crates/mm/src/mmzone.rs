//! Zones, the buddy allocator's free lists by order and migratetype, pageblocks, and
//! watermarks.
//!
//! # The problem
//! Reclaim is driven by free memory falling below thresholds; where those thresholds sit and
//! how much of the node they cover decides when kswapd wakes, when allocations stall in
//! direct reclaim, and how much kswapd frees before it sleeps again. High-order allocations
//! also need the free memory to be contiguous: the allocator groups pages by mobility in
//! pageblocks so that unmovable kernel allocations do not pepper the movable blocks that
//! compaction can empty.
//!
//! # In this model
//! One node with up to three zones (DMA, DMA32, Normal: `enum zone_type` without HIGHMEM,
//! MOVABLE or DEVICE) as contiguous pfn ranges of present pages (holes of the physical
//! address space take no frames). A zone's `managed` pages are its present pages less those
//! reserved at boot (memblock: the memmap, the kernel image, hash tables), which never reach
//! the buddy allocator; pages the kernel allocated during boot are held at the top of the
//! zone. Each zone has a
//! buddy allocator (orders 0..=MAX_PAGE_ORDER, naturally aligned blocks, split on allocation,
//! merged with the buddy on free) with one free list per order and migratetype, and a
//! pageblock table (order 9) holding each block's migratetype and compaction skip bit. Every
//! free block sits on the list of its pageblock's type (the kernel's rule since v6.10).
//! Allocation follows `__rmqueue()` as of v6.15+: the requested type, then
//! `__rmqueue_claim()` (largest block first; `try_to_claim_block()` converts a pageblock when
//! half of it is free or alike, and boosts the watermark for a fallback below pageblock
//! order), then `__rmqueue_steal()` (smallest first, no conversion) unless
//! `ALLOC_NOFRAGMENT`. Watermarks come from `vm.min_free_kbytes` and
//! `vm.watermark_scale_factor` exactly as `__setup_per_zone_wmarks()` computes them, plus
//! `watermark_boost` (`boost_watermark()`, `vm.watermark_boost_factor`).
//!
//! Order-0 pages go through per-CPU lists ([`PerCpuPages`]: `rmqueue_pcplist()`,
//! `rmqueue_bulk()`, `free_unref_page()`, `free_pcppages_bulk()`, `drain_all_pages()`), one
//! set per CPU of the machine, sized by `zone_batchsize()` and `zone_highsize()` (before
//! v5.14 `6 * batch`); pages on them are not in NR_FREE_PAGES, as in the kernel. A freed
//! block whose buddy one order up is free goes to its list's tail (`buddy_merge_likely()`).
//!
//! # Where we differ from the kernel (v6.18)
//! - Per-CPU lists: order 0 only (no high-order or THP lists, v5.13+/v5.18+); `pcp->high`
//!   fixed at `high_min` (no v6.7+ autotuning, no v5.16+ `ZONE_RECLAIM_ACTIVE` lowering of
//!   high while kswapd reclaims, no `free_high`); compaction's freed source pages and its
//!   released free pages go straight to the buddy lists (the kernel frees them to the
//!   compacting CPU's lists and drains those per block, `drain_local_pages()`; the model
//!   keeps the drain, for what other tasks left on that CPU's lists); a page's type is its
//!   pageblock's at the time of the free.
//! - No CMA or isolate types; no highatomic reserve (the list exists and stays empty).
//! - Every allocation of the model is GFP_KERNEL or GFP_HIGHUSER_MOVABLE (highest zone
//!   Normal, or the empty Movable zone whose reserve equals Normal's), so the watermark
//!   checks use each zone's `lowmem_reserve[ZONE_NORMAL]`; no GFP_DMA/GFP_DMA32 allocations.
//! - Reserved and boot-time kernel pages sit at the top of their zone as one contiguous run
//!   (memblock allocates top-down; the kernel image really sits at 16 MiB), except in the
//!   DMA zone, where they and the zone's holes (pfn 0, the BIOS hole) fill the first
//!   pageblock, which stays UNMOVABLE as on x86-64 (`Mm::boot_dma_zone`).
//!
//! # Kernel references
//! mm/page_alloc.c: `__setup_per_zone_wmarks()`, `calculate_min_free_kbytes()`,
//! `setup_per_zone_lowmem_reserve()`, `nr_free_zone_pages()`,
//! `__zone_watermark_ok()`, `expand()`, `__free_one_page()`, `__rmqueue()`,
//! `__rmqueue_claim()`, `__rmqueue_steal()`, `try_to_claim_block()`,
//! `find_suitable_fallback()`, `boost_watermark()`, `buddy_merge_likely()`,
//! `zone_batchsize()`, `zone_highsize()`, `rmqueue_pcplist()`, `rmqueue_bulk()`,
//! `free_unref_page_commit()`, `nr_pcp_free()`, `free_pcppages_bulk()`,
//! `drain_pages_zone()`; mm/vmstat.c `fill_contig_page_info()`,
//! `__fragmentation_index()`; mm/khugepaged.c `set_recommended_min_free_kbytes()`.

use crate::list::{LinkStore, ListHead};
use crate::page::{pg, FrameTable};
use crate::types::*;
use crate::vmstat::{Ev, VmEvents};

/// Kernel: `enum zone_type` indices of the zones the model has (x86-64: ZONE_DMA below
/// 16 MiB, ZONE_DMA32 below 4 GiB, ZONE_NORMAL above).
pub const ZONE_DMA: usize = 0;
pub const ZONE_DMA32: usize = 1;
pub const ZONE_NORMAL: usize = 2;
/// Zone types the model knows (DMA, DMA32, Normal).
pub const NR_ZONE_TYPES: usize = 3;
/// /proc/zoneinfo names of the zone types.
pub const ZONE_NAMES: [&str; NR_ZONE_TYPES] = ["DMA", "DMA32", "Normal"];
/// Kernel: `sysctl_lowmem_reserve_ratio[]` defaults (`vm.lowmem_reserve_ratio`): DMA 256,
/// DMA32 256, Normal 32.
pub const DEFAULT_LOWMEM_RESERVE_RATIO: [u64; NR_ZONE_TYPES] = [256, 256, 32];

/// The zone type of a zone name ("DMA", "DMA32", anything else Normal).
pub fn zone_type_of(name: &str) -> usize {
    match name {
        "DMA" => ZONE_DMA,
        "DMA32" => ZONE_DMA32,
        _ => ZONE_NORMAL,
    }
}

/// Kernel: `enum zone_watermarks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wmark {
    Min = 0,
    Low = 1,
    High = 2,
}

/// Kernel: `PAGE_SIZE` on x86-64.
const PAGE_SIZE: u64 = 4096;

/// Kernel: `pageblock_order` on x86-64 with THP (`HPAGE_PMD_ORDER`).
pub const PAGEBLOCK_ORDER: u32 = 9;
/// Kernel: `pageblock_nr_pages`.
pub const PAGEBLOCK_NR_PAGES: u64 = 1 << PAGEBLOCK_ORDER;

/// Kernel: `enum migratetype` (the types the model uses).
pub mod mt {
    pub const UNMOVABLE: u8 = 0;
    pub const MOVABLE: u8 = 1;
    pub const RECLAIMABLE: u8 = 2;
    /// Kernel: `MIGRATE_PCPTYPES`: the three types above are mergeable and fall back to
    /// each other.
    pub const PCPTYPES: u8 = 3;
    /// `MIGRATE_HIGHATOMIC`: pageblocks reserved for high-order atomic allocations
    /// (`reserve_highatomic_pageblock()`, [`super::Zone::reserve_highatomic_pageblock`]); no
    /// fallback takes from them.
    pub const HIGHATOMIC: u8 = 3;
    pub const NAMES: [&str; super::MIGRATE_TYPES] =
        ["Unmovable", "Movable", "Reclaimable", "HighAtomic"];
}
pub const MIGRATE_TYPES: usize = 4;

/// Kernel: `fallbacks[MIGRATE_PCPTYPES][MIGRATE_PCPTYPES - 1]` (mm/page_alloc.c).
pub const FALLBACKS: [[u8; 2]; 3] = [
    [mt::RECLAIMABLE, mt::MOVABLE],
    [mt::RECLAIMABLE, mt::UNMOVABLE],
    [mt::UNMOVABLE, mt::MOVABLE],
];

/// Pageblock flag byte: migratetype in the low bits, then `PB_compact_skip`.
pub const PB_MT_MASK: u8 = 0x7;
pub const PB_SKIP: u8 = 0x8;

/// Allocation flags the free-list code looks at (`ALLOC_*` of mm/internal.h).
pub mod alloc_flags {
    /// `ALLOC_NOFRAGMENT`: only fall back by claiming whole pageblocks.
    pub const NOFRAGMENT: u32 = 1 << 0;
    /// `ALLOC_KSWAPD`: the allocation may wake kswapd (a boost sets ZONE_BOOSTED_WATERMARK).
    pub const KSWAPD: u32 = 1 << 1;
}

/// The highatomic reserve's rules by kernel version (set from `model.kernel` when the zones
/// are built).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HighatomicRules {
    /// v6.8+ ("mm: page_alloc: correct high atomic reserve calculations"): the reserve's
    /// limit is 1% of the zone aligned to pageblocks (none below one pageblock), and a
    /// pageblock-order allocation reserves its own blocks.
    pub reserve_aligned: bool,
    /// v6.12+ ("mm/page_alloc: keep track of free highatomic", c928807f6f6b, merged for
    /// v6.12-rc7 through mm-hotfixes-stable-2024-11-09): the watermark check of an
    /// allocation without reserve rights subtracts only the reserve's free pages.
    pub unusable_free_only: bool,
}

/// Kernel: `should_try_claim_block()`: may a fallback of `order` from a block of another type
/// claim the whole pageblock for `start_mt`?
#[inline]
pub fn should_try_claim_block(order: u32, start_mt: u8) -> bool {
    order >= PAGEBLOCK_ORDER
        || order >= PAGEBLOCK_ORDER / 2
        || start_mt == mt::RECLAIMABLE
        || start_mt == mt::UNMOVABLE
}

/// Kernel: `boost_watermark()` arithmetic: the new `watermark_boost` of a zone of `managed`
/// pages with high watermark `high`, or None when the zone is not boosted (factor 0, zone
/// smaller than four pageblocks, or a zero maximum).
pub fn boosted_watermark(boost: u64, high: u64, managed: u64, factor: u64) -> Option<u64> {
    if factor == 0 || PAGEBLOCK_NR_PAGES * 4 > managed {
        return None;
    }
    // mult_frac(high, factor, 10000)
    let max_boost = (high / 10_000) * factor + (high % 10_000) * factor / 10_000;
    if max_boost == 0 {
        return None;
    }
    let max_boost = max_boost.max(PAGEBLOCK_NR_PAGES);
    Some((boost + PAGEBLOCK_NR_PAGES).min(max_boost))
}

/// Free blocks of a zone as `fill_contig_page_info()` sums them for one order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContigPageInfo {
    pub free_pages: u64,
    pub free_blocks_total: u64,
    pub free_blocks_suitable: u64,
}

impl ContigPageInfo {
    /// Kernel: `fill_contig_page_info()` from the per-order free block counts.
    pub fn fill(nr_free: &[u64; NR_PAGE_ORDERS], suitable_order: u32) -> Self {
        let mut info = ContigPageInfo::default();
        for (o, &blocks) in nr_free.iter().enumerate() {
            info.free_blocks_total += blocks;
            info.free_pages += blocks << o;
            if o as u32 >= suitable_order {
                info.free_blocks_suitable += blocks << (o as u32 - suitable_order);
            }
        }
        info
    }

    /// Kernel: `__fragmentation_index()`: 0..1000, toward 0 a failure would be for lack of
    /// memory, toward 1000 for fragmentation; -1000 when a block of the order is free.
    pub fn fragmentation_index(&self, order: u32) -> i64 {
        let requested = 1u64 << order;
        if self.free_blocks_total == 0 {
            return 0;
        }
        if self.free_blocks_suitable > 0 {
            return -1000;
        }
        1000 - ((1000 + self.free_pages * 1000 / requested) / self.free_blocks_total) as i64
    }

    /// Kernel: `extfrag_for_order()`: percentage of free memory not usable for `order`.
    pub fn extfrag_for_order(&self, order: u32) -> u64 {
        if self.free_pages == 0 {
            return 0;
        }
        (self.free_pages - (self.free_blocks_suitable << order)) * 100 / self.free_pages
    }

    /// Kernel: `unusable_free_index()` (debugfs extfrag/unusable_index), in 1/1000.
    pub fn unusable_index(&self, order: u32) -> u64 {
        if self.free_pages == 0 {
            return 1000;
        }
        (self.free_pages - (self.free_blocks_suitable << order)) * 1000 / self.free_pages
    }
}

/// The `mm_page_alloc_extfrag` events of one zone by the tracepoint's fields, and the
/// boosts they caused. Observes only (the kernel has the tracepoint, not these sums):
/// `perf stat -e kmem:mm_page_alloc_extfrag` with a filter on `alloc_migratetype` and
/// `fragmenting` counts the same. Arrays are indexed by the allocation's migratetype
/// (`alloc_migratetype`: [`mt::UNMOVABLE`], [`mt::MOVABLE`], [`mt::RECLAIMABLE`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ExtfragStats {
    /// Fallbacks to a block below pageblock order (`fragmenting`: `fallback_order <
    /// pageblock_order`): the ones that boost the watermark before v6.15 (v6.15+ only when
    /// they try to claim the pageblock).
    pub fragmenting: [u64; 3],
    /// Fallbacks to a free block of pageblock order or more, whose pageblocks change type
    /// whole: no boost.
    pub whole_pageblock: [u64; 3],
    /// Fragmenting fallbacks after which the pageblock belongs to the allocation's type
    /// (`change_ownership`: the claim test passed).
    pub change_ownership: [u64; 3],
    /// `boost_watermark()` calls that raised the zone's `watermark_boost` (a boost already
    /// at its maximum is not counted).
    pub boosts: u64,
}

impl ExtfragStats {
    /// Count one `mm_page_alloc_extfrag` event: an allocation of `alloc_mt` fell back to a
    /// free block of `fallback_order`; `owned` is whether the block's pageblock now has the
    /// allocation's type.
    #[inline]
    pub fn note(&mut self, alloc_mt: u8, fallback_order: u32, owned: bool) {
        let t = alloc_mt as usize;
        if t >= 3 {
            return;
        }
        if fallback_order >= PAGEBLOCK_ORDER {
            self.whole_pageblock[t] += 1;
        } else {
            self.fragmenting[t] += 1;
            if owned {
                self.change_ownership[t] += 1;
            }
        }
    }

    /// All fallbacks counted (equals the zone's share of `mm_page_alloc_extfrag`).
    pub fn total(&self) -> u64 {
        self.fragmenting.iter().sum::<u64>() + self.whole_pageblock.iter().sum::<u64>()
    }
}

/// The per-CPU page lists' rules by kernel version (set from `model.kernel` when the zones
/// are built; [`crate::workingset::KernelVersion`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcpRules {
    /// v5.14+ `nr_pcp_free()`: each overflow without an allocation between frees twice as
    /// many pages (`free_factor`), between `batch` and `high - batch`.
    pub free_factor: bool,
    /// v5.18+ `free_pcppages_bulk()`: the freed page's own list first, whole lists in turn.
    pub drain_requested_first: bool,
    /// v5.14+ `nr_pcp_high()`: while kswapd reclaims the zone (`ZONE_RECLAIM_ACTIVE`,
    /// [`Zone::reclaim_active`]) a list overflows at `min(4 * batch, high)`.
    pub reclaim_active_cap: bool,
    /// v6.7+ `pcp->high` autotuning ([`Zone::nr_pcp_high`]): `high` moves between
    /// `high_min` ([`Zone::pcp_high`]) and `high_max` ([`Zone::pcp_high_max`]), growing on
    /// refills and on frees that overflow it, shrinking while the zone is below its high
    /// watermark (`ZONE_BELOW_HIGH`) or kswapd reclaims it, and decaying by an eighth a
    /// second from vmstat's refresh ([`Zone::decay_pcp_high`]); `free_count` replaces
    /// `free_factor` and `alloc_factor` scales refills ([`Zone::nr_pcp_alloc`]).
    pub autotune: bool,
}

/// Kernel: `CONFIG_PCP_BATCH_SCALE_MAX` (default 5, v6.7+): the largest shift of `batch`
/// for a refill (`alloc_factor`), for `free_count`, and for the pages one
/// `decay_pcp_high()` or high-order free may return.
pub const PCP_BATCH_SCALE_MAX: u32 = 5;

/// Kernel: `MIN_PERCPU_PAGELIST_HIGH_FRACTION` (8): v6.7+ `high_max` is this fraction of
/// the zone's managed pages, split over its CPUs (`zone_set_pageset_high_and_batch()`).
pub const MIN_PERCPU_PAGELIST_HIGH_FRACTION: u64 = 8;

/// Kernel: `sysctl_stat_interval` (HZ): vmstat's per-CPU `vmstat_update()` runs
/// `refresh_cpu_vm_stats()` (and from v6.7 `decay_pcp_high()`) once a second.
pub const STAT_INTERVAL_NS: u64 = 1_000_000_000;

/// Kernel: `struct per_cpu_pages`, order-0 part: one list per mobility type, the pages on
/// them (`count`; not in NR_FREE_PAGES), `free_factor` (v5.14–v6.6) and the v6.7+ tuning
/// state (`high`, `free_count`, `alloc_factor`). The lists link pages through the frame
/// table's `prev`/`next`, like the buddy lists; a page on them is neither `PageBuddy` nor a
/// folio (flags 0).
#[derive(Clone, Copy, Debug, Default)]
pub struct PerCpuPages {
    /// `lists[migratetype]` for UNMOVABLE, MOVABLE, RECLAIMABLE.
    pub lists: [ListHead; mt::PCPTYPES as usize],
    /// `count`: pages on the lists.
    pub count: u32,
    /// `free_factor` (v5.14–v6.6, [`PcpRules::free_factor`]).
    pub free_factor: u32,
    /// `high` (v6.7+, [`PcpRules::autotune`]): this CPU's current overflow mark, clamped to
    /// `[high_min, high_max]` on use (0 at boot, as the kernel's boot pageset).
    pub high: u32,
    /// `free_count` (v6.7+): pages freed since the last allocation, halved by each
    /// allocation, at most `batch << PCP_BATCH_SCALE_MAX`.
    pub free_count: u32,
    /// `alloc_factor` (v6.7+): refills without a free between double their size, up to
    /// `PCP_BATCH_SCALE_MAX`; each free halves it.
    pub alloc_factor: u32,
}

/// Kernel: `zone_batchsize()`: the pages a per-CPU list takes from or gives back to the buddy
/// lists at a time: about a thousandth of the zone, at most `cap_bytes`
/// ([`KernelVersion::pcp_batch_cap_bytes`](crate::workingset::KernelVersion::pcp_batch_cap_bytes)),
/// quartered, at least 1, then rounded to `2^n - 1` (`rounddown_pow_of_two(batch + batch /
/// 2) - 1`, so that batches do not fall into the same cache colours). 0 for a zone under
/// 8192 pages (32 MiB: the DMA zone), which the callers raise to 1.
pub fn zone_batchsize(managed: u64, cap_bytes: u64) -> u32 {
    let mut batch = (managed / 1024).min(cap_bytes / PAGE_SIZE);
    batch /= 4;
    batch = batch.max(1);
    let b = batch + batch / 2;
    ((1u64 << b.ilog2()) - 1) as u32
}

/// Kernel: `zone_highsize()` with `vm.percpu_pagelist_high_fraction` = 0 (the default; the
/// model has no other value), v5.14+: `total_pages` (the zone's low watermark for `high`,
/// from v6.7 also an eighth of its managed pages for `high_max`) split over the node's CPUs,
/// at least four batches ("the historical relationship between high and batch").
pub fn zone_highsize(total_pages: u64, batch: u32, nr_cpus: u32) -> u32 {
    let high = total_pages / nr_cpus.max(1) as u64;
    high.max((batch as u64) << 2) as u32
}

/// The per-CPU lists' `(batch, high)` for a zone: `zone_set_pageset_high_and_batch()` (v5.14+:
/// `batch = max(1, zone_batchsize())`, `high = zone_highsize()`), before v5.14
/// `pageset_set_batch()` (`high = 6 * zone_batchsize()`, `batch = max(1, zone_batchsize())`).
/// From v6.7 this `high` is `high_min`, the floor of the autotuned `pcp->high`
/// ([`pcp_high_max`] is its ceiling).
pub fn pcp_batch_high(
    managed: u64,
    low_wmark: u64,
    nr_cpus: u32,
    kernel: crate::workingset::KernelVersion,
) -> (u32, u32) {
    let b = zone_batchsize(managed, kernel.pcp_batch_cap_bytes());
    if kernel.pcp_high_from_low_wmark() {
        let batch = b.max(1);
        (batch, zone_highsize(low_wmark, batch, nr_cpus))
    } else {
        (b.max(1), 6 * b)
    }
}

/// v6.7+ `high_max` (`zone_set_pageset_high_and_batch()` without a
/// `percpu_pagelist_high_fraction`): `zone_highsize()` of the zone's managed pages divided
/// by [`MIN_PERCPU_PAGELIST_HIGH_FRACTION`]. Before v6.7 `high` is fixed: `high_max` is
/// `high` itself.
pub fn pcp_high_max(
    managed: u64,
    batch: u32,
    high_min: u32,
    nr_cpus: u32,
    kernel: crate::workingset::KernelVersion,
) -> u32 {
    if kernel.pcp_high_autotuned() {
        zone_highsize(managed / MIN_PERCPU_PAGELIST_HIGH_FRACTION, batch, nr_cpus).max(high_min)
    } else {
        high_min
    }
}

pub struct Zone {
    pub name: &'static str,
    /// `zone_idx()`: [`ZONE_DMA`], [`ZONE_DMA32`] or [`ZONE_NORMAL`].
    pub zone_type: usize,
    pub start_pfn: Pfn,
    pub end_pfn: Pfn,
    /// `present_pages`: frames of the zone (`end_pfn - start_pfn`).
    pub present: u64,
    /// `managed_pages`: present pages less those reserved at boot.
    pub managed: u64,
    /// `lowmem_reserve[]` by highest zone index of the allocation
    /// ([`setup_per_zone_lowmem_reserve`]): pages this zone keeps free for allocations that
    /// could have used a higher zone.
    pub lowmem_reserve: [u64; NR_ZONE_TYPES],
    /// NR_FREE_PAGES.
    pub free: u64,
    /// `_watermark[WMARK_MIN..=WMARK_HIGH]`.
    pub wmark: [u64; 3],
    pub watermark_boost: u64,
    /// `vm.watermark_boost_factor`.
    pub boost_factor: u64,
    /// Kernels before v6.15 boost the watermark on every fallback below pageblock order,
    /// the single-block steal included ([`crate::workingset::KernelVersion::boost_on_every_fallback`]).
    pub boost_on_steal: bool,
    /// Kernels before v6.10 fall back through v5.2's `__rmqueue_fallback()` and
    /// `steal_suitable_fallback()`, which move free blocks to the stealing type's lists
    /// without retyping their pageblock
    /// ([`crate::workingset::KernelVersion::fallback_moves_free_pages`]).
    pub steal_moves_free_pages: bool,
    /// `zone->nr_reserved_highatomic`: pages in pageblocks reserved as MIGRATE_HIGHATOMIC.
    pub nr_reserved_highatomic: u64,
    /// The kernel's highatomic rules by version ([`HighatomicRules`]).
    pub highatomic: HighatomicRules,
    /// `ZONE_BOOSTED_WATERMARK`: a fallback boosted the watermark; wake kswapd after this
    /// allocation.
    pub boosted_flag: bool,
    /// Fallbacks and boosts of this zone ([`ExtfragStats`]; observes only).
    pub extfrag: ExtfragStats,
    /// `free_area[order].free_list[migratetype]`.
    pub free_area: [[ListHead; MIGRATE_TYPES]; NR_PAGE_ORDERS],
    /// `free_area[order].nr_free`.
    pub nr_free: [u64; NR_PAGE_ORDERS],
    /// Pageblock flags (`pageblock_flags` bitmap): migratetype and skip bit, indexed by
    /// `(pfn >> PAGEBLOCK_ORDER) - (start_pfn >> PAGEBLOCK_ORDER)`.
    pub pageblock: Vec<u8>,
    /// Pageblocks per migratetype (`/proc/pagetypeinfo`'s "Number of blocks type"), kept
    /// with `pageblock` by [`Zone::set_pageblock_mt`], so that a result sample reads them
    /// instead of counting the array (7.5 M pageblocks on a 15 TiB machine).
    pub nr_pageblocks: [u64; MIGRATE_TYPES],
    /// Per-zone LRU sizes (`NR_ZONE_*`), indexed by `LruList`.
    pub nr_lru: [u64; NR_LRU_LISTS],
    /// Compaction state of the zone (mm/compaction.c).
    pub compact: crate::compaction::ZoneCompact,
    /// Free max-order MOVABLE blocks `[deferred.0, deferred.1)` not yet linked on
    /// `free_area[MAX_PAGE_ORDER][MOVABLE]` (counted in `free` and `nr_free`): conceptually
    /// they follow that list's tail, highest pfn first. Like DEFERRED_STRUCT_PAGE_INIT, the
    /// next one is linked when the list runs empty, so frames the workload never uses are
    /// never written and a large machine with a small workload starts at once. The list is
    /// never empty while blocks are deferred, so every emptiness check on it stays exact;
    /// whole-zone pfn walks (compaction's scanners) link them all first
    /// ([`Zone::link_all_deferred`]).
    pub deferred: (Pfn, Pfn),
    /// Frames held since boot (holes, reserved and the kernel's boot allocations, see
    /// `Mm::boot_zones()`) whose records are not written yet, as `[start, end)` ranges. The
    /// kernel's boot allocations grow with memory (its memmap alone is 64 bytes per 4 KiB
    /// page, 1.6%), so writing their frames at boot cost a 1 TiB machine about 100 MB of
    /// host memory the workload never reads. Like `deferred`, they are written on the first
    /// whole-zone pfn walk ([`Zone::link_all_deferred`]); until then the only frame readers
    /// that can reach them, the pageblock walks that move free blocks between lists
    /// (`move_freepages_block()`, [`count_block`]: fallback steals, highatomic reserves),
    /// step over an unwritten frame (no BUDDY, no HEAD: one pfn) exactly as over a written
    /// one (HEAD, order 0, not on an LRU).
    pub boot_held: Vec<(Pfn, Pfn)>,
    /// `zone->per_cpu_pageset`: one [`PerCpuPages`] per CPU of the machine; empty when the
    /// model runs without per-CPU lists (order-0 pages then come from and go to the buddy
    /// lists directly).
    pub pcp: Vec<PerCpuPages>,
    /// `pcp->batch` ([`pcp_batch_high`]), the same on every CPU.
    pub pcp_batch: u32,
    /// `pcp->high` ([`pcp_batch_high`]), the same on every CPU; from v6.7 `pcp->high_min`,
    /// the floor of each CPU's autotuned [`PerCpuPages::high`].
    pub pcp_high: u32,
    /// `pcp->high_max` ([`pcp_high_max`]): v6.7+ the ceiling of the autotuned `high`;
    /// before, equal to `pcp_high`.
    pub pcp_high_max: u32,
    /// `ZONE_RECLAIM_ACTIVE` (v5.14+): kswapd's `balance_pgdat()` is reclaiming for this
    /// zone (`set_reclaim_active()` / `clear_reclaim_active()`); caps the per-CPU lists
    /// ([`PcpRules::reclaim_active_cap`]).
    pub reclaim_active: bool,
    /// `ZONE_BELOW_HIGH` (v6.7+): an allocation found the zone under its high watermark
    /// (`get_page_from_freelist()`); cleared by a bulk free that lifts it back over
    /// (`free_unref_page_commit()`). While set, frees shrink `pcp->high` and refills do not
    /// grow it.
    pub below_high: bool,
    /// The per-CPU lists' rules by kernel version ([`PcpRules`]).
    pub pcp_rules: PcpRules,
    /// Pages on every CPU's lists (the sum of their `count`s).
    pub nr_pcp: u64,
}

impl Zone {
    pub fn new(name: &'static str, start_pfn: Pfn, end_pfn: Pfn) -> Self {
        let nr_pb = ((end_pfn.saturating_sub(1) >> PAGEBLOCK_ORDER) as usize + 1)
            - (start_pfn >> PAGEBLOCK_ORDER) as usize;
        Zone {
            name,
            zone_type: zone_type_of(name),
            start_pfn,
            end_pfn,
            present: (end_pfn - start_pfn) as u64,
            managed: (end_pfn - start_pfn) as u64,
            lowmem_reserve: [0; NR_ZONE_TYPES],
            free: 0,
            wmark: [0; 3],
            watermark_boost: 0,
            boost_factor: 0,
            boost_on_steal: false,
            steal_moves_free_pages: false,
            nr_reserved_highatomic: 0,
            highatomic: HighatomicRules::default(),
            boosted_flag: false,
            extfrag: ExtfragStats::default(),
            free_area: [[ListHead::new(); MIGRATE_TYPES]; NR_PAGE_ORDERS],
            nr_free: [0; NR_PAGE_ORDERS],
            // memmap_init_range(): every pageblock starts MIGRATE_MOVABLE.
            pageblock: vec![mt::MOVABLE; nr_pb],
            nr_pageblocks: std::array::from_fn(|t| {
                if t == mt::MOVABLE as usize {
                    nr_pb as u64
                } else {
                    0
                }
            }),
            nr_lru: [0; NR_LRU_LISTS],
            compact: crate::compaction::ZoneCompact::new(start_pfn, end_pfn),
            deferred: (start_pfn, start_pfn),
            boot_held: Vec::new(),
            pcp: Vec::new(),
            pcp_batch: 1,
            pcp_high: 0,
            pcp_high_max: 0,
            reclaim_active: false,
            below_high: false,
            pcp_rules: PcpRules::default(),
            nr_pcp: 0,
        }
    }

    /// Kernel: `wmark_pages()` — the watermark plus the current boost.
    #[inline]
    pub fn wmark_pages(&self, w: Wmark) -> u64 {
        self.wmark[w as usize] + self.watermark_boost
    }

    /// v4.4–v4.7's balance gap (`kswapd_shrink_zone()`, `compaction_ready()`):
    /// `min(low_wmark_pages(zone), DIV_ROUND_UP(managed, KSWAPD_ZONE_BALANCE_GAP_RATIO))`,
    /// removed in v4.8 with the node-based kswapd.
    pub fn balance_gap(&self) -> u64 {
        self.wmark_pages(Wmark::Low).min(
            self.managed
                .div_ceil(crate::kswapd::KSWAPD_ZONE_BALANCE_GAP_RATIO),
        )
    }

    #[inline]
    pub fn contains(&self, pfn: Pfn) -> bool {
        pfn >= self.start_pfn && pfn < self.end_pfn
    }

    #[inline]
    fn pb_idx(&self, pfn: Pfn) -> usize {
        ((pfn >> PAGEBLOCK_ORDER) - (self.start_pfn >> PAGEBLOCK_ORDER)) as usize
    }

    /// Kernel: `get_pageblock_migratetype()`.
    #[inline]
    pub fn pageblock_mt(&self, pfn: Pfn) -> u8 {
        self.pageblock[self.pb_idx(pfn)] & PB_MT_MASK
    }

    /// Kernel: `set_pageblock_migratetype()`.
    #[inline]
    pub fn set_pageblock_mt(&mut self, pfn: Pfn, t: u8) {
        let i = self.pb_idx(pfn);
        self.nr_pageblocks[(self.pageblock[i] & PB_MT_MASK) as usize] -= 1;
        self.nr_pageblocks[t as usize] += 1;
        self.pageblock[i] = (self.pageblock[i] & !PB_MT_MASK) | t;
    }

    /// Kernel: `get_pageblock_skip()`.
    #[inline]
    pub fn pageblock_skip(&self, pfn: Pfn) -> bool {
        self.pageblock[self.pb_idx(pfn)] & PB_SKIP != 0
    }

    /// Kernel: `set_pageblock_skip()` / `clear_pageblock_skip()`.
    #[inline]
    pub fn set_pageblock_skip(&mut self, pfn: Pfn, on: bool) {
        let i = self.pb_idx(pfn);
        if on {
            self.pageblock[i] |= PB_SKIP;
        } else {
            self.pageblock[i] &= !PB_SKIP;
        }
    }

    /// Kernel: `change_pageblock_range()`: every pageblock a block of `order` covers.
    fn change_pageblock_range(&mut self, pfn: Pfn, order: u32, t: u8) {
        let n = if order >= PAGEBLOCK_ORDER {
            1u32 << (order - PAGEBLOCK_ORDER)
        } else {
            1
        };
        for k in 0..n {
            self.set_pageblock_mt(pfn + (k << PAGEBLOCK_ORDER), t);
        }
    }

    /// Kernel: `__zone_watermark_ok()` for our allocations (highest zone index Normal, no
    /// CMA) without reserve rights: free pages, less those of the highatomic reserve
    /// ([`Zone::highatomic_unusable`]), must stay above `mark` plus
    /// `lowmem_reserve[ZONE_NORMAL]`, and for order > 0 a free block of at least `order` must
    /// exist on an UNMOVABLE, MOVABLE or RECLAIMABLE list (HIGHATOMIC lists are not usable).
    #[inline]
    pub fn watermark_ok(&self, order: u32, mark: u64) -> bool {
        self.watermark_ok_idx(order, mark, ZONE_NORMAL)
    }

    /// [`Zone::watermark_ok`] for a request whose highest usable zone is `highest_zoneidx`
    /// (`zone_watermark_ok_safe(zone, order, mark, highest_zoneidx)`): the zone keeps
    /// `lowmem_reserve[highest_zoneidx]` back. kswapd's `pgdat_balanced()` passes the zone
    /// index it was woken for, so a run for a DMA32 boost (`wakeup_kswapd(zone, 0, 0,
    /// zone_idx(zone))` from `rmqueue()`) tests DMA32 against its own watermark, without the
    /// pages it keeps back from Normal allocations.
    #[inline]
    pub fn watermark_ok_idx(&self, order: u32, mark: u64, highest_zoneidx: usize) -> bool {
        let free = if self.nr_reserved_highatomic == 0 {
            self.free
        } else {
            self.free.saturating_sub(self.highatomic_unusable())
        };
        let reserve = self.lowmem_reserve[highest_zoneidx.min(NR_ZONE_TYPES - 1)];
        if free <= mark + reserve {
            return false;
        }
        if order == 0 {
            return true;
        }
        (order as usize..NR_PAGE_ORDERS).any(|o| {
            self.nr_free[o] > 0
                && self.free_area[o][..mt::PCPTYPES as usize]
                    .iter()
                    .any(|l| !l.is_empty())
        })
    }

    /// `__zone_watermark_ok()` with the allocation's rights: `reserves` (v4.x ALLOC_HARDER,
    /// v6.3+ `ALLOC_RESERVES`) counts the free pages of the highatomic reserve as usable
    /// (`__zone_watermark_unusable_free()`); `highatomic` (v4.x ALLOC_HARDER: any free block
    /// of the order; v6.3+ ALLOC_HIGHATOMIC: a block on the HIGHATOMIC lists) lets a
    /// high-order check pass on a HIGHATOMIC block.
    pub fn watermark_ok_flags(
        &self,
        order: u32,
        mark: u64,
        reserves: bool,
        highatomic: bool,
    ) -> bool {
        let mut free = self.free;
        if !reserves && self.nr_reserved_highatomic > 0 {
            free = free.saturating_sub(self.highatomic_unusable());
        }
        if free <= mark + self.lowmem_reserve[ZONE_NORMAL] {
            return false;
        }
        if order == 0 {
            return true;
        }
        let types = if highatomic {
            MIGRATE_TYPES
        } else {
            mt::PCPTYPES as usize
        };
        (order as usize..NR_PAGE_ORDERS).any(|o| {
            self.nr_free[o] > 0 && self.free_area[o][..types].iter().any(|l| !l.is_empty())
        })
    }

    /// `__zone_watermark_unusable_free()`'s highatomic part: before v6.12 the reserved pages
    /// (`nr_reserved_highatomic`, "over-estimate the size of the atomic reserve but it avoids
    /// a search"); from v6.12 ("mm/page_alloc: keep track of free highatomic", Yu Zhao) only
    /// the free pages on the HIGHATOMIC lists (`nr_free_highatomic`).
    pub fn highatomic_unusable(&self) -> u64 {
        if !self.highatomic.unusable_free_only {
            return self.nr_reserved_highatomic;
        }
        (0..NR_PAGE_ORDERS)
            .map(|o| (self.free_area[o][mt::HIGHATOMIC as usize].len as u64) << o)
            .sum()
    }

    /// Kernel: `reserve_highatomic_pageblock()`, after a successful high-order allocation
    /// with ALLOC_HARDER (v4.4–v6.2) / ALLOC_HIGHATOMIC (v6.3+) from the block at `pfn`:
    /// the block becomes MIGRATE_HIGHATOMIC (its free pages move to the HIGHATOMIC lists)
    /// unless the reserve is full. The limit: v4.4–v6.7 `managed / 100 + pageblock_nr_pages`
    /// (1% of the zone plus a block); v6.8+ ("mm: page_alloc: correct high atomic reserve
    /// calculations") nothing when 1% of the zone is below a pageblock, else 1% rounded up
    /// to whole pageblocks, and an allocation of pageblock order or more reserves its own
    /// blocks (`change_pageblock_range()`, counting `1 << order`). Only mergeable types
    /// (UNMOVABLE, MOVABLE, RECLAIMABLE) are converted. Returns whether a block was reserved.
    pub fn reserve_highatomic_pageblock(
        &mut self,
        pages: &mut FrameTable,
        pfn: Pfn,
        order: u32,
    ) -> bool {
        let one_pct = self.managed / 100;
        let max = if self.highatomic.reserve_aligned {
            if one_pct < PAGEBLOCK_NR_PAGES {
                return false;
            }
            one_pct.div_ceil(PAGEBLOCK_NR_PAGES) * PAGEBLOCK_NR_PAGES
        } else {
            one_pct + PAGEBLOCK_NR_PAGES
        };
        if self.nr_reserved_highatomic >= max {
            return false;
        }
        let t = self.pageblock_mt(pfn);
        if t >= mt::PCPTYPES {
            return false;
        }
        if self.highatomic.reserve_aligned && order >= PAGEBLOCK_ORDER {
            self.change_pageblock_range(pfn, order, mt::HIGHATOMIC);
            self.nr_reserved_highatomic += 1 << order;
        } else {
            let start = pfn & !(PAGEBLOCK_NR_PAGES as u32 - 1);
            self.set_pageblock_mt(start, mt::HIGHATOMIC);
            self.move_freepages_block(pages, start, mt::HIGHATOMIC);
            self.nr_reserved_highatomic += PAGEBLOCK_NR_PAGES;
        }
        true
    }

    /// Kernel: `unreserve_highatomic_pageblock()` for one zone: unless `force`, a reserve of
    /// at most one pageblock is kept; else the pageblock of the first free HIGHATOMIC block
    /// (lowest order first) goes back to `new_mt` with its free pages, and the reserve
    /// shrinks by a pageblock (v6.8+: by `max(pageblock, 1 << order)`, at most the reserve).
    pub fn unreserve_highatomic_pageblock(
        &mut self,
        pages: &mut FrameTable,
        new_mt: u8,
        force: bool,
    ) -> bool {
        if !force && self.nr_reserved_highatomic <= PAGEBLOCK_NR_PAGES {
            return false;
        }
        for o in 0..NR_PAGE_ORDERS {
            let l = self.free_area[o][mt::HIGHATOMIC as usize];
            if l.is_empty() {
                continue;
            }
            let pfn = l.head;
            let size = if self.highatomic.reserve_aligned {
                PAGEBLOCK_NR_PAGES.max(1 << o)
            } else {
                PAGEBLOCK_NR_PAGES
            };
            self.nr_reserved_highatomic -= size.min(self.nr_reserved_highatomic);
            if o as u32 >= PAGEBLOCK_ORDER {
                // A free block of pageblock order or more: retype it whole.
                self.del_free_block(pages, pfn, o as u32);
                self.change_pageblock_range(pfn, o as u32, new_mt);
                self.add_free_block(pages, pfn, o as u32, new_mt);
            } else {
                let start = pfn & !(PAGEBLOCK_NR_PAGES as u32 - 1);
                self.set_pageblock_mt(start, new_mt);
                self.move_freepages_block(pages, start, new_mt);
            }
            return true;
        }
        false
    }

    /// `fill_contig_page_info()` for `order`.
    pub fn contig_page_info(&self, order: u32) -> ContigPageInfo {
        ContigPageInfo::fill(&self.nr_free, order)
    }

    /// Hand every frame of the zone to the buddy allocator in the largest aligned blocks.
    /// Blocks of the maximum order (one contiguous run, all MOVABLE at boot) are deferred
    /// (see `deferred`): the free lists come out as if each block had been added at the head
    /// in pfn order.
    pub fn init_free(&mut self, pages: &mut FrameTable) {
        self.init_free_upto(pages, self.end_pfn);
    }

    /// [`Zone::init_free`] for the frames below `end` only (the rest is held by the kernel).
    pub fn init_free_upto(&mut self, pages: &mut FrameTable, end: Pfn) {
        self.init_free_range(pages, self.start_pfn, end);
    }

    /// [`Zone::init_free`] for the frames `[start, end)` only (the rest is held by the
    /// kernel).
    pub fn init_free_range(&mut self, pages: &mut FrameTable, start: Pfn, end: Pfn) {
        let mut pfn = start;
        self.deferred = (pfn, pfn);
        while pfn < end {
            let mut order = MAX_PAGE_ORDER;
            while order > 0
                && (pfn & ((1 << order) - 1) != 0 || pfn as u64 + (1u64 << order) > end as u64)
            {
                order -= 1;
            }
            let t = self.pageblock_mt(pfn);
            if order == MAX_PAGE_ORDER && t == mt::MOVABLE {
                if self.deferred.0 == self.deferred.1 {
                    self.deferred = (pfn, pfn);
                }
                debug_assert_eq!(self.deferred.1, pfn, "max-order blocks are contiguous");
                self.deferred.1 = pfn + (1 << order);
                self.nr_free[order as usize] += 1;
                self.free += 1 << order;
            } else {
                self.add_free_block(pages, pfn, order, t);
            }
            pfn += 1 << order;
        }
        self.grow_deferred(pages);
    }

    /// Free blocks on list `[order][t]`, the deferred ones included.
    pub fn nr_free_list(&self, order: usize, t: usize) -> u64 {
        let mut n = self.free_area[order][t].len as u64;
        if order == MAX_PAGE_ORDER as usize && t == mt::MOVABLE as usize {
            n += ((self.deferred.1 - self.deferred.0) >> MAX_PAGE_ORDER) as u64;
        }
        n
    }

    /// Link the highest deferred max-order block on the MOVABLE max-order list when that
    /// list is empty: the block the list would have at its head had every block been linked
    /// at boot.
    #[inline]
    fn grow_deferred(&mut self, pages: &mut FrameTable) {
        let (lo, hi) = self.deferred;
        let l = &self.free_area[MAX_PAGE_ORDER as usize][mt::MOVABLE as usize];
        if lo < hi && l.is_empty() {
            self.link_deferred_block(pages);
        }
    }

    /// Move the highest deferred block to the list's tail (where it conceptually is).
    fn link_deferred_block(&mut self, pages: &mut FrameTable) {
        let pfn = self.deferred.1 - (1 << MAX_PAGE_ORDER);
        self.deferred.1 = pfn;
        pages.hot[pfn as usize].flags = pg::BUDDY;
        pages.hot[pfn as usize].order = MAX_PAGE_ORDER as u8;
        pages.free_mt[pfn as usize] = mt::MOVABLE;
        let l: &mut [crate::page::Frame] = &mut pages.hot;
        l.add_tail(
            &mut self.free_area[MAX_PAGE_ORDER as usize][mt::MOVABLE as usize],
            pfn,
        );
    }

    /// Link every deferred block, in list order: for walks over the zone's pfns (compaction's
    /// scanners look at frames, not lists).
    /// The frames held since boot are written then too ([`Zone::boot_held`]).
    pub fn link_all_deferred(&mut self, pages: &mut FrameTable) {
        while self.deferred.0 < self.deferred.1 {
            self.link_deferred_block(pages);
        }
        for (start, end) in std::mem::take(&mut self.boot_held) {
            write_boot_held(pages, start, end);
        }
    }

    /// The end of the unwritten boot-held range containing `pfn`, if any
    /// ([`Zone::boot_held`]).
    pub fn boot_held_end(&self, pfn: Pfn) -> Option<Pfn> {
        self.boot_held
            .iter()
            .find(|&&(s, e)| s <= pfn && pfn < e)
            .map(|&(_, e)| e)
    }

    /// Free block `pfn` of `order` onto the head of free list `t`.
    #[inline]
    fn add_free_block(&mut self, pages: &mut FrameTable, pfn: Pfn, order: u32, t: u8) {
        self.add_to_free_list(pages, pfn, order, t, false);
    }

    /// Kernel: `__add_to_free_list()`: free block `pfn` of `order` onto free list `t`, at
    /// its tail when `tail`.
    #[inline]
    fn add_to_free_list(
        &mut self,
        pages: &mut FrameTable,
        pfn: Pfn,
        order: u32,
        t: u8,
        tail: bool,
    ) {
        pages.hot[pfn as usize].flags = pg::BUDDY;
        pages.hot[pfn as usize].order = order as u8;
        pages.free_mt[pfn as usize] = t;
        let l: &mut [crate::page::Frame] = &mut pages.hot;
        let list = &mut self.free_area[order as usize][t as usize];
        if tail {
            l.add_tail(list, pfn);
        } else {
            l.add_head(list, pfn);
        }
        self.nr_free[order as usize] += 1;
        self.free += 1 << order;
    }

    /// Unlink free block `pfn` of `order` from the list it is on.
    #[inline]
    fn del_free_block(&mut self, pages: &mut FrameTable, pfn: Pfn, order: u32) {
        let t = pages.free_mt[pfn as usize];
        let l: &mut [crate::page::Frame] = &mut pages.hot;
        l.del(&mut self.free_area[order as usize][t as usize], pfn);
        self.nr_free[order as usize] -= 1;
        pages.hot[pfn as usize].flags = 0;
        self.free -= 1 << order;
        if order == MAX_PAGE_ORDER && t == mt::MOVABLE {
            self.grow_deferred(pages);
        }
    }

    /// Kernel: `page_del_and_expand()`: take free block `pfn` of order `cur` off list `t` and
    /// return its upper halves down to `order` to the lists of type `t`.
    #[inline]
    fn del_and_expand(&mut self, pages: &mut FrameTable, pfn: Pfn, order: u32, cur: u32, t: u8) {
        self.del_free_block(pages, pfn, cur);
        let mut c = cur;
        while c > order {
            c -= 1;
            self.add_free_block(pages, pfn + (1 << c), c, t);
        }
        pages.hot[pfn as usize].order = order as u8;
    }

    /// Kernel: `__rmqueue_smallest()` + `expand()`: take the smallest free block of at least
    /// `order` from the lists of type `t`, split it and return the upper halves.
    #[inline]
    pub fn rmqueue_smallest(&mut self, pages: &mut FrameTable, order: u32, t: u8) -> Option<Pfn> {
        let mut cur = order;
        while cur <= MAX_PAGE_ORDER && self.free_area[cur as usize][t as usize].is_empty() {
            cur += 1;
        }
        if cur > MAX_PAGE_ORDER {
            return None;
        }
        let pfn = self.free_area[cur as usize][t as usize].head;
        self.del_and_expand(pages, pfn, order, cur, t);
        Some(pfn)
    }

    /// Kernel: `__rmqueue()`: the requested type's lists, then `__rmqueue_claim()` (largest
    /// block first, converting a pageblock), then unless `ALLOC_NOFRAGMENT`
    /// `__rmqueue_steal()` (smallest block first, no type change). Each fallback counts
    /// `mm_page_alloc_extfrag`.
    pub fn rmqueue(
        &mut self,
        pages: &mut FrameTable,
        order: u32,
        t: u8,
        flags: u32,
        ev: &mut VmEvents,
    ) -> Option<Pfn> {
        if let Some(p) = self.rmqueue_smallest(pages, order, t) {
            return Some(p);
        }
        if self.steal_moves_free_pages {
            // v5.2's `__rmqueue()`: a fallback moves a block to the lists of `t` and the
            // allocation retries `__rmqueue_smallest()`, which takes from them.
            if !self.rmqueue_fallback_v5_2(pages, order, t, flags) {
                return None;
            }
            ev.add(Ev::ExtfragFallback, 1);
            return self.rmqueue_smallest(pages, order, t);
        }
        let boost_before = self.watermark_boost;
        let boosts_before = self.extfrag.boosts;
        let got = self.rmqueue_fallback(pages, order, t, flags);
        if self.boost_on_steal && self.watermark_boost > boost_before {
            self.extfrag.boosts = boosts_before + 1;
            // Before v6.15, `__rmqueue_fallback()` made one `steal_suitable_fallback()` call
            // per fallback, so an allocation boosted the watermark once (by a pageblock),
            // where v6.15's `__rmqueue_claim()` boosts at every order whose claim it tries.
            self.watermark_boost = boosted_watermark(
                boost_before,
                self.wmark[Wmark::High as usize],
                self.managed,
                self.boost_factor,
            )
            .unwrap_or(boost_before);
        }
        if got.is_some() {
            ev.add(Ev::ExtfragFallback, 1);
        }
        got
    }

    /// `__rmqueue_claim()`, then unless `ALLOC_NOFRAGMENT` `__rmqueue_steal()`.
    fn rmqueue_fallback(
        &mut self,
        pages: &mut FrameTable,
        order: u32,
        t: u8,
        flags: u32,
    ) -> Option<Pfn> {
        if let Some(p) = self.rmqueue_claim(pages, order, t, flags) {
            return Some(p);
        }
        if flags & alloc_flags::NOFRAGMENT == 0 {
            return self.rmqueue_steal(pages, order, t, flags);
        }
        None
    }

    /// Kernel: `__rmqueue_fallback()` as v5.2 has it (and every kernel before v6.10, see
    /// [`crate::workingset::KernelVersion::fallback_moves_free_pages`]): look for a
    /// fallback block from the largest order down; take the largest found, unless the
    /// allocation is MOVABLE, may not claim a block at that order (`can_steal`) and the
    /// block is larger than asked, in which case take the smallest block of any fallback
    /// type instead (`find_smallest`). `steal_suitable_fallback()` then moves free pages to
    /// the lists of `start_mt`; the caller retries `__rmqueue_smallest()`. Returns false
    /// when no fallback type has a free block. `ALLOC_NOFRAGMENT` searches pageblock-sized
    /// blocks only.
    fn rmqueue_fallback_v5_2(
        &mut self,
        pages: &mut FrameTable,
        order: u32,
        start_mt: u8,
        flags: u32,
    ) -> bool {
        let min_order = if flags & alloc_flags::NOFRAGMENT != 0 && order < PAGEBLOCK_ORDER {
            PAGEBLOCK_ORDER
        } else {
            order
        };
        let mut found: Option<(u32, u8, bool)> = None;
        let mut cur = MAX_PAGE_ORDER as i32;
        while cur >= min_order as i32 {
            let f = self.find_suitable_fallback(cur as u32, start_mt, false);
            if f >= 0 {
                let can_steal = should_try_claim_block(cur as u32, start_mt);
                if !can_steal && start_mt == mt::MOVABLE && cur as u32 > order {
                    break;
                }
                found = Some((cur as u32, f as u8, can_steal));
                break;
            }
            cur -= 1;
        }
        if found.is_none() && cur >= min_order as i32 {
            // find_smallest: from the requested order up (a fallback exists at `cur`).
            for o in order..=MAX_PAGE_ORDER {
                let f = self.find_suitable_fallback(o, start_mt, false);
                if f >= 0 {
                    found = Some((o, f as u8, should_try_claim_block(o, start_mt)));
                    break;
                }
            }
        }
        let Some((cur, f, can_steal)) = found else {
            return false;
        };
        let pfn = self.free_area[cur as usize][f as usize].head;
        self.steal_suitable_fallback(pages, pfn, cur, start_mt, can_steal, flags);
        let owned = self.pageblock_mt(pfn) == start_mt;
        self.extfrag.note(start_mt, cur, owned);
        true
    }

    /// Kernel: `steal_suitable_fallback()` (v5.2 to v6.9): a free block of pageblock order or
    /// more retypes its pageblocks; a smaller one boosts the watermark and, when the
    /// allocation may claim (`whole_block`), moves *every* free page of its pageblock to the
    /// lists of `start_mt` and then retypes the pageblock if at least half of it is free or
    /// of a compatible kind. Otherwise (and for a HIGHATOMIC block) only the block itself
    /// moves to the lists of `start_mt` (`single_page`: the whole free block, whatever the
    /// allocation's order, so its remainder serves the next allocations of that type).
    /// Simplified: a pageblock reaching outside the zone moves the single block (v5.2 moves
    /// from the block's own pfn when only its start is outside); v4.x's older forms are not
    /// modelled (see [`crate::workingset::KernelVersion::fallback_moves_free_pages`]).
    fn steal_suitable_fallback(
        &mut self,
        pages: &mut FrameTable,
        pfn: Pfn,
        cur: u32,
        start_mt: u8,
        whole_block: bool,
        flags: u32,
    ) {
        let old = self.pageblock_mt(pfn);
        if old != mt::HIGHATOMIC {
            if cur >= PAGEBLOCK_ORDER {
                self.change_pageblock_range(pfn, cur, start_mt);
            } else {
                self.boost_watermark(flags);
                let start = pfn & !(PAGEBLOCK_NR_PAGES as u32 - 1);
                let end = start + PAGEBLOCK_NR_PAGES as u32;
                if whole_block && start >= self.start_pfn && end <= self.end_pfn {
                    let claim = block_claimable(pages, start, start_mt, old);
                    self.move_freepages_block(pages, start, start_mt);
                    if claim {
                        self.set_pageblock_mt(start, start_mt);
                    }
                    return;
                }
            }
        }
        // single_page: list_move() of the block to the lists of `start_mt`.
        self.del_free_block(pages, pfn, cur);
        self.add_free_block(pages, pfn, cur, start_mt);
    }

    /// Kernel: `find_suitable_fallback()`: -2 when a claim is not allowed at this order, -1
    /// when no fallback list of this order has a block, else the fallback type.
    pub fn find_suitable_fallback(&self, order: u32, start_mt: u8, claimable: bool) -> i32 {
        if claimable && !should_try_claim_block(order, start_mt) {
            return -2;
        }
        if self.nr_free[order as usize] == 0 {
            return -1;
        }
        for &f in &FALLBACKS[start_mt as usize] {
            if !self.free_area[order as usize][f as usize].is_empty() {
                return f as i32;
            }
        }
        -1
    }

    /// Kernel: `__rmqueue_claim()`.
    fn rmqueue_claim(
        &mut self,
        pages: &mut FrameTable,
        order: u32,
        t: u8,
        flags: u32,
    ) -> Option<Pfn> {
        let min_order = if flags & alloc_flags::NOFRAGMENT != 0 && order < PAGEBLOCK_ORDER {
            PAGEBLOCK_ORDER
        } else {
            order
        };
        let mut cur = MAX_PAGE_ORDER as i32;
        while cur >= min_order as i32 {
            let f = self.find_suitable_fallback(cur as u32, t, true);
            if f == -2 {
                break;
            }
            if f >= 0 {
                let pfn = self.free_area[cur as usize][f as usize].head;
                if let Some(p) =
                    self.try_to_claim_block(pages, pfn, cur as u32, order, t, f as u8, flags)
                {
                    return Some(p);
                }
            }
            cur -= 1;
        }
        None
    }

    /// Kernel: `try_to_claim_block()`: a whole free pageblock changes type; a smaller block
    /// boosts the watermark and claims its pageblock when at least half of it is free or of
    /// a compatible kind.
    #[allow(clippy::too_many_arguments)]
    fn try_to_claim_block(
        &mut self,
        pages: &mut FrameTable,
        pfn: Pfn,
        cur: u32,
        order: u32,
        start_mt: u8,
        block_mt: u8,
        flags: u32,
    ) -> Option<Pfn> {
        if block_mt == mt::HIGHATOMIC {
            return None;
        }
        if cur >= PAGEBLOCK_ORDER {
            self.change_pageblock_range(pfn, cur, start_mt);
            self.del_and_expand(pages, pfn, order, cur, start_mt);
            self.extfrag.note(start_mt, cur, true);
            return Some(pfn);
        }
        self.boost_watermark(flags);
        // prep_move_freepages_block(): the block must lie inside the zone.
        let start = pfn & !(PAGEBLOCK_NR_PAGES as u32 - 1);
        let end = start + PAGEBLOCK_NR_PAGES as u32;
        if start < self.start_pfn || end > self.end_pfn {
            return None;
        }
        if block_claimable(pages, start, start_mt, block_mt) {
            self.move_freepages_block(pages, start, start_mt);
            self.set_pageblock_mt(start, start_mt);
            let got = self.rmqueue_smallest(pages, order, start_mt);
            if got.is_some() {
                self.extfrag.note(start_mt, cur, true);
            }
            return got;
        }
        None
    }

    /// Kernel: `__move_freepages_block()` (v5.2: `move_freepages()`): move every free block of
    /// the pageblock starting at `start` to the lists of `new`, whichever list it is on.
    pub fn move_freepages_block(&mut self, pages: &mut FrameTable, start: Pfn, new: u8) {
        let end = start + PAGEBLOCK_NR_PAGES as u32;
        let mut p = start;
        while p < end {
            let i = p as usize;
            let o = pages.hot[i].order as u32;
            if pages.hot[i].flags & pg::BUDDY != 0 {
                self.del_free_block(pages, p, o);
                self.add_free_block(pages, p, o, new);
                p += 1 << o;
            } else if pages.hot[i].flags & pg::HEAD != 0 {
                p += 1 << o;
            } else {
                p += 1;
            }
        }
    }

    /// Kernel: `boost_watermark()` on a fallback below pageblock order; with `ALLOC_KSWAPD`
    /// it sets ZONE_BOOSTED_WATERMARK so the allocation wakes kswapd.
    fn boost_watermark(&mut self, flags: u32) {
        if let Some(b) = boosted_watermark(
            self.watermark_boost,
            self.wmark[Wmark::High as usize],
            self.managed,
            self.boost_factor,
        ) {
            if b > self.watermark_boost {
                self.extfrag.boosts += 1;
            }
            self.watermark_boost = b;
            if flags & alloc_flags::KSWAPD != 0 {
                self.boosted_flag = true;
            }
        }
    }

    /// Kernel: `__rmqueue_steal()` (v6.15+): the smallest block of a fallback type, no type
    /// change and no boost. Before v6.15 (`boost_on_steal`) the same single-block fallback
    /// went through `steal_suitable_fallback()`, which boosted the watermark for any block
    /// below pageblock order before deciding not to claim it; the model keeps v6.15's
    /// search order (claim largest-first, then steal smallest-first) under both rules, where
    /// the older `__rmqueue_fallback()` took a single page from the largest block it found
    /// unless the allocation was MOVABLE and could not claim (then the smallest).
    fn rmqueue_steal(
        &mut self,
        pages: &mut FrameTable,
        order: u32,
        t: u8,
        flags: u32,
    ) -> Option<Pfn> {
        for cur in order..=MAX_PAGE_ORDER {
            let f = self.find_suitable_fallback(cur, t, false);
            if f < 0 {
                continue;
            }
            if self.boost_on_steal && cur < PAGEBLOCK_ORDER {
                self.boost_watermark(flags);
            }
            let pfn = self.free_area[cur as usize][f as usize].head;
            self.del_and_expand(pages, pfn, order, cur, f as u8);
            self.extfrag.note(t, cur, false);
            return Some(pfn);
        }
        None
    }

    /// Take a specific free block off its free list (compaction's free scanner,
    /// `__isolate_free_page()`), splitting it down to `order` with the rest returned.
    pub fn isolate_free_block(&mut self, pages: &mut FrameTable, pfn: Pfn) -> u32 {
        let o = pages.hot[pfn as usize].order as u32;
        self.del_free_block(pages, pfn, o);
        o
    }

    /// Kernel: `__free_one_page()`: merge with the buddy while it is free at the same order;
    /// at pageblock order and above, buddies of different mergeable types merge and the
    /// buddy's pageblocks take the freed block's type. The block goes on the free list of its
    /// pageblock's migratetype.
    pub fn free_block(&mut self, pages: &mut FrameTable, mut pfn: Pfn, mut order: u32) {
        let t = self.pageblock_mt(pfn);
        while order < MAX_PAGE_ORDER {
            let buddy = pfn ^ (1 << order);
            if !self.contains(buddy)
                || (buddy as u64 + (1u64 << order)) > self.end_pfn as u64
                || !pages.test(buddy, pg::BUDDY)
                || pages.hot[buddy as usize].order as u32 != order
            {
                break;
            }
            let bt = if order >= PAGEBLOCK_ORDER {
                let bt = self.pageblock_mt(buddy);
                if bt != t && (bt >= mt::PCPTYPES || t >= mt::PCPTYPES) {
                    break;
                }
                bt
            } else {
                t
            };
            self.del_free_block(pages, buddy, order);
            if bt != t {
                self.change_pageblock_range(buddy, order, t);
            }
            pfn = pfn.min(buddy);
            order += 1;
        }
        let tail = self.buddy_merge_likely(pages, pfn, order);
        self.add_to_free_list(pages, pfn, order, t, tail);
    }

    /// Kernel: `buddy_merge_likely()` (v5.1+; the same test inline in `__free_one_page()`
    /// since v2.6.36, "page allocator: reduce fragmentation in buddy allocator by adding
    /// buddies that are merging to the tail of the free lists"): below order
    /// `MAX_PAGE_ORDER - 1`, when the buddy of the block the freed one would merge into is
    /// free at that order, the freed block goes to the list's tail, so that it stays free
    /// longer (allocations take the head) and the pair is more likely to merge.
    #[inline]
    fn buddy_merge_likely(&self, pages: &FrameTable, pfn: Pfn, order: u32) -> bool {
        if order + 1 >= MAX_PAGE_ORDER {
            return false;
        }
        let combined = pfn & !((1u32 << (order + 1)) - 1);
        let higher_buddy = combined ^ (1u32 << (order + 1));
        self.contains(higher_buddy)
            && (higher_buddy as u64 + (2u64 << order)) <= self.end_pfn as u64
            && pages.test(higher_buddy, pg::BUDDY)
            && pages.hot[higher_buddy as usize].order as u32 == order + 1
    }

    /// Kernel: `rmqueue_pcplist()` → `__rmqueue_pcplist()` for an order-0 page of type `t` on
    /// `cpu`'s lists: the head of the list of `t` (the page freed last: LIFO, cache hot);
    /// an empty list is first refilled by `rmqueue_bulk()` with `batch` pages (v6.7+:
    /// [`Zone::nr_pcp_alloc`]). v5.14–v6.6 halve `free_factor` on every allocation, v6.7+
    /// `free_count`. Falls back to [`Zone::rmqueue`] when the zone has no per-CPU lists.
    pub fn rmqueue_pcplist(
        &mut self,
        pages: &mut FrameTable,
        cpu: u16,
        t: u8,
        flags: u32,
        ev: &mut VmEvents,
    ) -> Option<Pfn> {
        if self.pcp.is_empty() || t >= mt::PCPTYPES {
            return self.rmqueue(pages, 0, t, flags, ev);
        }
        let c = cpu as usize % self.pcp.len();
        if self.pcp_rules.autotune {
            self.pcp[c].free_count >>= 1;
        } else if self.pcp_rules.free_factor {
            self.pcp[c].free_factor >>= 1;
        }
        if self.pcp[c].lists[t as usize].is_empty() {
            let n = if self.pcp_rules.autotune {
                self.nr_pcp_alloc(c)
            } else {
                self.pcp_batch
            };
            self.rmqueue_bulk(pages, c, t, n, flags, ev);
        }
        let l = &mut self.pcp[c].lists[t as usize];
        if l.is_empty() {
            return None;
        }
        let pfn = l.head;
        let hot: &mut [crate::page::Frame] = &mut pages.hot;
        hot.del(l, pfn);
        self.pcp[c].count -= 1;
        self.nr_pcp -= 1;
        Some(pfn)
    }

    /// Kernel: `rmqueue_bulk()`: `count` order-0 pages of type `t` through `__rmqueue()` (so
    /// a refill is where fallbacks to other types, their block claims and watermark boosts
    /// happen), each added at the list's tail, so the list holds them in the order
    /// `__rmqueue()` returned them (for pages split from one block: ascending pfn). The pages
    /// leave NR_FREE_PAGES here. Stops early when the buddy lists run out.
    fn rmqueue_bulk(
        &mut self,
        pages: &mut FrameTable,
        c: usize,
        t: u8,
        count: u32,
        flags: u32,
        ev: &mut VmEvents,
    ) {
        for _ in 0..count {
            let Some(pfn) = self.rmqueue(pages, 0, t, flags, ev) else {
                break;
            };
            let hot: &mut [crate::page::Frame] = &mut pages.hot;
            hot.add_tail(&mut self.pcp[c].lists[t as usize], pfn);
            self.pcp[c].count += 1;
            self.nr_pcp += 1;
        }
    }

    /// Kernel (v6.7+): `nr_pcp_alloc()` for order 0: the refill size. `high` is first
    /// clamped to `[high_min, high_max]` and, unless the zone is below its high watermark,
    /// raised by the refill (`batch << alloc_factor`) up to `high_max` ("if we had larger
    /// pcp->high, we could avoid to allocate from zone"). The refill is at most what fits
    /// under `high` less one batch (at least one batch), and `alloc_factor` grows while the
    /// doubled refill would still fit.
    pub fn nr_pcp_alloc(&mut self, c: usize) -> u32 {
        let (base, min, max) = (self.pcp_batch, self.pcp_high, self.pcp_high_max);
        let p = &mut self.pcp[c];
        let mut high = p.high.clamp(min, max);
        p.high = high;
        if high < base {
            return 1;
        }
        let batch = base << p.alloc_factor;
        if min != max && !self.below_high {
            high = (high + batch).min(max);
            p.high = high;
        }
        let max_nr_alloc = (high as i64 - p.count as i64 - base as i64).max(base as i64) as u32;
        if batch <= max_nr_alloc && p.alloc_factor < PCP_BATCH_SCALE_MAX {
            p.alloc_factor += 1;
        }
        batch.min(max_nr_alloc)
    }

    /// Kernel: `free_unref_page()` → `free_unref_page_commit()` for an order-0 page on `cpu`
    /// (v4.x `free_hot_cold_page()`, hot): the page goes to the head of the list of its
    /// pageblock's type (`get_pfnblock_migratetype()`; a HIGHATOMIC block's page goes
    /// straight to the buddy lists, as the kernel frees isolated ones) and, when the list
    /// reaches `high` ([`Zone::nr_pcp_high`]), [`Zone::free_pcppages_bulk`] returns `batch`
    /// of them (v5.14+: [`Zone::nr_pcp_free`]). v6.7+ halves `alloc_factor`, counts the
    /// page in `free_count`, and after a bulk free that lifts the zone over its high
    /// watermark clears `ZONE_BELOW_HIGH`. Without per-CPU lists the page goes to the buddy
    /// lists.
    pub fn free_unref_page(&mut self, pages: &mut FrameTable, cpu: u16, pfn: Pfn) {
        let t = self.pageblock_mt(pfn);
        if self.pcp.is_empty() || t >= mt::PCPTYPES {
            self.free_block(pages, pfn, 0);
            return;
        }
        let c = cpu as usize % self.pcp.len();
        pages.hot[pfn as usize].flags = 0;
        pages.hot[pfn as usize].order = 0;
        let hot: &mut [crate::page::Frame] = &mut pages.hot;
        hot.add_head(&mut self.pcp[c].lists[t as usize], pfn);
        self.pcp[c].count += 1;
        self.nr_pcp += 1;
        let batch = self.pcp_batch;
        if self.pcp_rules.autotune {
            let p = &mut self.pcp[c];
            p.alloc_factor >>= 1;
            if p.free_count < batch << PCP_BATCH_SCALE_MAX {
                p.free_count += 1;
            }
        }
        let high = self.nr_pcp_high(c);
        if self.pcp[c].count >= high {
            let n = self.nr_pcp_free(c, high);
            self.free_pcppages_bulk(pages, c, n, t);
            // v6.7+: zone_watermark_ok(zone, 0, high_wmark_pages(zone), ZONE_MOVABLE, 0).
            if self.below_high
                && self.watermark_ok_idx(0, self.wmark_pages(Wmark::High), NR_ZONE_TYPES - 1)
            {
                self.below_high = false;
            }
        }
    }

    /// Kernel: `nr_pcp_high()` (v5.14+) for a free on CPU `c`: the count at which its lists
    /// overflow. Before v5.14 `pcp->high`. v5.14–v6.6: `high`, or `min(4 * batch, high)`
    /// while kswapd reclaims the zone (`ZONE_RECLAIM_ACTIVE`). v6.7+ it also tunes the CPU's
    /// `high` within `[high_min, high_max]`: reclaim active or the zone below its high
    /// watermark lowers it by `max(free_count, batch)` (below high, the lists overflow once
    /// they hold `high_min`); otherwise a list that reaches `high` raises it to
    /// `free_count + batch`, so a run of frees is held rather than returned.
    pub fn nr_pcp_high(&mut self, c: usize) -> u32 {
        let (batch, min, max) = (self.pcp_batch, self.pcp_high, self.pcp_high_max);
        if !self.pcp_rules.autotune {
            if self.pcp_rules.reclaim_active_cap && self.reclaim_active && min != 0 {
                return (batch << 2).min(min);
            }
            return min;
        }
        let p = &mut self.pcp[c];
        let high = p.high.clamp(min, max);
        p.high = high;
        if high == 0 {
            return 0;
        }
        if self.reclaim_active {
            let free_count = p.free_count.max(batch);
            p.high = high.saturating_sub(free_count).max(min);
            return (batch << 2).min(p.high);
        }
        if min == max {
            return high;
        }
        if self.below_high {
            let free_count = p.free_count.max(batch);
            p.high = high.saturating_sub(free_count).max(min);
            return p.count.max(min);
        }
        if p.count >= high {
            let need_high = p.free_count + batch;
            if p.high < need_high {
                p.high = need_high.clamp(min, max);
            }
        }
        high
    }

    /// Pages an overflowing list of CPU `c` returns, `high` being [`Zone::nr_pcp_high`]'s:
    /// before v5.14 `batch`; v5.14+ `nr_pcp_free()`: 1 if `high < batch`, else between
    /// `batch` and `high - batch`: v5.14–v6.6 `batch << free_factor`, `free_factor` growing
    /// while the doubled batch stays under `high - batch`; v6.7+ `free_count`.
    pub fn nr_pcp_free(&mut self, c: usize, high: u32) -> u32 {
        let batch = self.pcp_batch;
        if !self.pcp_rules.free_factor {
            return batch;
        }
        if high < batch {
            return 1;
        }
        let (min_nr, max_nr) = (batch, high - batch);
        if self.pcp_rules.autotune {
            // clamp_t(): max first, then min (max_nr wins when it is under batch).
            return self.pcp[c].free_count.max(min_nr).min(max_nr);
        }
        let b = batch << self.pcp[c].free_factor.min(16);
        if b < max_nr {
            self.pcp[c].free_factor += 1;
        }
        b.clamp(min_nr, max_nr.max(min_nr))
    }

    /// Kernel (v6.7+): `decay_pcp_high()` from vmstat's `refresh_cpu_vm_stats()` once a
    /// second on every CPU: a `high` over `high_min` drops by an eighth (but not under the
    /// count less `batch << PCP_BATCH_SCALE_MAX`, nor under `high_min`), then pages over
    /// `high` go back to the buddy lists. Returns the pages freed.
    pub fn decay_pcp_high(&mut self, pages: &mut FrameTable, c: usize) -> u32 {
        let (batch, min) = (self.pcp_batch, self.pcp_high);
        let p = &mut self.pcp[c];
        if p.high > min {
            let floor = p.count.saturating_sub(batch << PCP_BATCH_SCALE_MAX);
            p.high = floor.max(p.high - (p.high >> 3)).max(min);
        }
        let to_drain = p.count.saturating_sub(p.high);
        if to_drain > 0 {
            self.free_pcppages_bulk(pages, c, to_drain, 0);
        }
        to_drain
    }

    /// Kernel: `free_pcppages_bulk()`: return `count` pages of CPU `c`'s lists to the buddy
    /// lists (`__free_one_page()`), each from a list's tail (the coldest). Before v5.18 the
    /// lists are visited round robin from the one after UNMOVABLE, taking `batch_free` pages
    /// from each: 1, plus 1 for every empty list passed on the way to it (a lone non-empty
    /// list gives all); v5.18+ the list of `first` (the freed page's type) is emptied first,
    /// then each list in turn.
    pub fn free_pcppages_bulk(&mut self, pages: &mut FrameTable, c: usize, count: u32, first: u8) {
        let mut to_free = count.min(self.pcp[c].count);
        let n = mt::PCPTYPES as usize;
        if self.pcp_rules.drain_requested_first {
            let mut idx = first as usize % n;
            while to_free > 0 {
                while self.pcp[c].lists[idx].is_empty() {
                    idx = (idx + 1) % n;
                }
                while to_free > 0 && !self.pcp[c].lists[idx].is_empty() {
                    self.free_pcp_tail(pages, c, idx);
                    to_free -= 1;
                }
            }
            return;
        }
        let (mut idx, mut batch_free) = (0usize, 0u32);
        while to_free > 0 {
            loop {
                batch_free += 1;
                idx = (idx + 1) % n;
                if !self.pcp[c].lists[idx].is_empty() {
                    break;
                }
            }
            if batch_free == n as u32 {
                batch_free = to_free;
            }
            loop {
                self.free_pcp_tail(pages, c, idx);
                to_free -= 1;
                batch_free -= 1;
                if to_free == 0 || batch_free == 0 || self.pcp[c].lists[idx].is_empty() {
                    break;
                }
            }
        }
    }

    /// Take the tail page of CPU `c`'s list `idx` and free it to the buddy lists.
    #[inline]
    fn free_pcp_tail(&mut self, pages: &mut FrameTable, c: usize, idx: usize) {
        let l = &mut self.pcp[c].lists[idx];
        let pfn = l.tail;
        let hot: &mut [crate::page::Frame] = &mut pages.hot;
        hot.del(l, pfn);
        self.pcp[c].count -= 1;
        self.nr_pcp -= 1;
        self.free_block(pages, pfn, 0);
    }

    /// Kernel: `drain_pages_zone()` for CPU `c`: every page of its lists back to the buddy
    /// lists (`free_pcppages_bulk(zone, pcp->count, ...)`).
    pub fn drain_pages_zone(&mut self, pages: &mut FrameTable, c: usize) {
        let count = self.pcp[c].count;
        if count > 0 {
            self.free_pcppages_bulk(pages, c, count, mt::UNMOVABLE);
        }
    }

    /// Kernel: `drain_local_pages(zone)`: the lists of the CPU the caller runs on, `cpu`
    /// mapped onto the zone's lists as [`Zone::rmqueue_pcplist`] maps it; nothing without
    /// per-CPU lists.
    pub fn drain_local_pages(&mut self, pages: &mut FrameTable, cpu: u16) {
        if !self.pcp.is_empty() {
            self.drain_pages_zone(pages, cpu as usize % self.pcp.len());
        }
    }

    /// Kernel: `drain_all_pages(zone)`: every CPU's lists of the zone.
    pub fn drain_all_pages(&mut self, pages: &mut FrameTable) {
        for c in 0..self.pcp.len() {
            self.drain_pages_zone(pages, c);
        }
    }
}

/// The claim test of `try_to_claim_block()` (v5.2 to v6.9: `steal_suitable_fallback()`):
/// the pageblock at `start`, of type `block_mt`, may change to `start_mt` when at least half
/// of it is free or in use by pages alike: movable pages for a MOVABLE claimer; for any
/// other, the non-movable pages of a MOVABLE block.
fn block_claimable(pages: &FrameTable, start: Pfn, start_mt: u8, block_mt: u8) -> bool {
    let (free_pages, movable_pages) = count_block(pages, start);
    let alike = if start_mt == mt::MOVABLE {
        movable_pages
    } else if block_mt == mt::MOVABLE {
        PAGEBLOCK_NR_PAGES - free_pages - movable_pages
    } else {
        0
    };
    free_pages + alike >= PAGEBLOCK_NR_PAGES / 2
}

/// Write the records of frames held by the kernel since boot: order-0 heads owned by no
/// object, on no list, charged to no memcg (what `alloc_kernel_pages()` leaves).
pub fn write_boot_held(pages: &mut FrameTable, start: Pfn, end: Pfn) {
    for p in start as usize..end as usize {
        pages.hot[p].flags = pg::HEAD;
        pages.hot[p].order = 0;
        pages.hot[p].memcg = 0;
        pages.obj[p] = NIL;
    }
}

/// Kernel: `prep_move_freepages_block()`'s count: free pages and pages of LRU (movable)
/// folios in the pageblock starting at `start`.
pub fn count_block(pages: &FrameTable, start: Pfn) -> (u64, u64) {
    let end = start + PAGEBLOCK_NR_PAGES as u32;
    let (mut free, mut movable) = (0u64, 0u64);
    let mut p = start;
    while p < end {
        let i = p as usize;
        let f = pages.hot[i].flags;
        let o = pages.hot[i].order as u32;
        if f & pg::BUDDY != 0 {
            free += 1 << o;
            p += 1 << o;
        } else if f & pg::HEAD != 0 {
            if f & pg::LRU != 0 {
                movable += 1 << o;
            }
            p += 1 << o;
        } else {
            p += 1;
        }
    }
    (free, movable)
}

/// Kernel: `calculate_min_free_kbytes()`: `int_sqrt(lowmem_kbytes * 16)` clamped to
/// 128..=262144 KiB, where `lowmem_kbytes` is `nr_free_buffer_pages()` in KiB.
pub fn calculate_min_free_kbytes(nr_free_buffer_pages: u64) -> u64 {
    int_sqrt(nr_free_buffer_pages * 4 * 16).clamp(128, 262_144)
}

/// Kernel: `nr_free_zone_pages(gfp_zone(GFP_USER))` = `nr_free_buffer_pages()`: the managed
/// pages above each zone's high watermark, summed over the zones up to Normal.
pub fn nr_free_buffer_pages(managed: &[u64], wmarks: &[[u64; 3]]) -> u64 {
    managed
        .iter()
        .zip(wmarks)
        .map(|(&m, w)| m.saturating_sub(w[Wmark::High as usize]))
        .sum()
}

/// Kernel: `set_recommended_min_free_kbytes()` (mm/khugepaged.c, THP enabled): two free
/// pageblocks per populated zone up to Normal plus `MIGRATE_PCPTYPES^2` per zone for the
/// fallbacks, at most 5% of `nr_free_buffer_pages()`, in KiB.
pub fn recommended_min_free_kbytes(nr_zones: u64, nr_free_buffer_pages: u64) -> u64 {
    let per_zone = 2 + mt::PCPTYPES as u64 * mt::PCPTYPES as u64;
    (PAGEBLOCK_NR_PAGES * nr_zones * per_zone).min(nr_free_buffer_pages / 20) * 4
}

/// `min_free_kbytes` as a booting x86-64 kernel with THP enabled leaves it, from the managed
/// pages of the populated zones: `init_per_zone_wmark_min()` computes
/// [`calculate_min_free_kbytes`] while every watermark is still 0 (so
/// `nr_free_buffer_pages()` is all managed pages) and sets the watermarks from it; then
/// `hugepage_init()` starts khugepaged, whose [`recommended_min_free_kbytes`] (capped by the
/// pages above those first high watermarks) wins if it is larger.
pub fn boot_min_free_kbytes(managed: &[u64], watermark_scale_factor: u64) -> u64 {
    let computed = calculate_min_free_kbytes(managed.iter().sum());
    let w = setup_per_zone_wmarks(managed, computed, watermark_scale_factor);
    let nr_zones = managed.iter().filter(|&&m| m > 0).count() as u64;
    computed.max(recommended_min_free_kbytes(
        nr_zones,
        nr_free_buffer_pages(managed, &w),
    ))
}

/// Kernel: `setup_per_zone_lowmem_reserve()`: for zone type `i` and a higher zone type `j`,
/// `lowmem_reserve[j]` = the managed pages of zones `i+1..=j` / `ratio[i]` (0 when the ratio
/// is 0 or the zone has no managed pages). `managed` is indexed by zone type.
pub fn setup_per_zone_lowmem_reserve(
    managed: &[u64; NR_ZONE_TYPES],
    ratio: &[u64; NR_ZONE_TYPES],
) -> [[u64; NR_ZONE_TYPES]; NR_ZONE_TYPES] {
    let mut out = [[0u64; NR_ZONE_TYPES]; NR_ZONE_TYPES];
    for i in 0..NR_ZONE_TYPES {
        let clear = ratio[i] == 0 || managed[i] == 0;
        let mut upper = 0;
        for j in i + 1..NR_ZONE_TYPES {
            upper += managed[j];
            out[i][j] = if clear { 0 } else { upper / ratio[i] };
        }
    }
    out
}

/// Kernel: `__setup_per_zone_wmarks()`. Returns (min, low, high) for each zone.
pub fn setup_per_zone_wmarks(
    managed: &[u64],
    min_free_kbytes: u64,
    watermark_scale_factor: u64,
) -> Vec<[u64; 3]> {
    let pages_min = min_free_kbytes >> 2;
    let lowmem: u64 = managed.iter().sum::<u64>().max(1);
    managed
        .iter()
        .map(|&m| {
            let tmp = pages_min * m / lowmem;
            let wmin = tmp;
            let delta = (tmp >> 2).max(m * watermark_scale_factor / 10_000);
            [wmin, wmin + delta, wmin + 2 * delta]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watermarks_for_one_8g_zone() {
        // KERNEL-MODEL §7.1 worked example: 8 GiB zone, min_free ~ 11585 KiB
        // -> min 2896, delta = max(724, 2097152*10/10000 = 2097) -> low 4993, high 7090.
        let w = setup_per_zone_wmarks(&[2_097_152], 11_585, 10);
        assert_eq!(w[0], [2896, 4993, 7090]);
    }

    #[test]
    fn min_free_kbytes_computed_and_thp_recommended() {
        // 8 GiB lowmem in one zone: int_sqrt(8388608 * 16) = 11585 KiB; THP recommends
        // 512 * 1 * (2 + 3 * 3) = 5632 pages = 22528 KiB (< 5% of the pages above the
        // first high watermarks), which wins.
        assert_eq!(calculate_min_free_kbytes(2_097_152), 11_585);
        assert_eq!(boot_min_free_kbytes(&[2_097_152], 10), 22_528);
        // 64 MiB: computed int_sqrt(65536 * 16) = 1024 KiB -> watermarks min 256, delta
        // max(64, 16) = 64, high 384; recommended capped at (16384 - 384) / 20 = 800 pages
        // = 3200 KiB.
        assert_eq!(boot_min_free_kbytes(&[16_384], 10), 3_200);
    }

    /// The host's measured /proc/zoneinfo (docs/zoneinfo/host-6.18-24g.zoneinfo: 6.18,
    /// 24 GiB, THP madvise): managed DMA 3840, DMA32 772808, Normal 5394266 give
    /// min_free_kbytes 67584 (vm.min_free_kbytes read on the host), the watermarks and the
    /// protection the kernel printed.
    #[test]
    fn host_zoneinfo_reproduced() {
        let managed = [3840, 772_808, 5_394_266];
        // calculate: int_sqrt(6170914 * 4 * 16) = 19873 KiB; recommended: 3 zones * 512 *
        // 11 = 16896 pages = 67584 KiB.
        assert_eq!(calculate_min_free_kbytes(6_170_914), 19_873);
        assert_eq!(boot_min_free_kbytes(&managed, 10), 67_584);
        let w = setup_per_zone_wmarks(&managed, 67_584, 10);
        assert_eq!(
            w,
            vec![[10, 13, 16], [2115, 2887, 3659], [14769, 20163, 25557]]
        );
        let r = setup_per_zone_lowmem_reserve(&managed, &DEFAULT_LOWMEM_RESERVE_RATIO);
        assert_eq!(r, [[0, 3018, 24090], [0, 0, 21071], [0, 0, 0]]);
    }

    /// Zone layouts, watermarks and protection of 256 MiB, 4 GiB and 64 GiB x86-64 machines
    /// (present pages from refault_scenario::layout, default reservations), computed by
    /// hand from mm/page_alloc.c and mm/khugepaged.c as a booting kernel runs them.
    #[test]
    fn watermarks_and_protection_of_256m_4g_64g() {
        // 256 MiB: DMA 3998 present - 158 = 3840 managed; DMA32 61440 present -
        // 61440 * 120286 / 6287360 (= 1175) = 60265 managed. Total 64105.
        //  calculate_min_free_kbytes: int_sqrt(64105 * 64) = 2025 KiB -> pages_min 506;
        //    DMA min 506 * 3840 / 64105 = 30, delta max(7, 3) = 7 -> high 44;
        //    DMA32 min 506 * 60265 / 64105 = 475, delta max(118, 60) = 118 -> high 711.
        //  recommended: 2 zones * 512 * 11 = 11264 pages, capped at
        //    (3840 - 44 + 60265 - 711) / 20 = 3167 pages = 12668 KiB > 2025: wins.
        //  pages_min 3167: DMA min 3167 * 3840 / 64105 = 189, delta max(47, 3) = 47;
        //    DMA32 min 3167 * 60265 / 64105 = 2977, delta max(744, 60) = 744.
        //  lowmem_reserve: DMA [0, 60265/256 = 235, 235], DMA32 [0, 0, 0].
        //  (The kernel itself would not apply the recommendation here: hugepage_init()
        //  leaves THP off below 512 MiB of managed memory, so it keeps 2025 KiB and DMA
        //  30/37/44, DMA32 475/593/711; docs/zones.md, "Known departure".)
        let m = [3840, 60_265];
        assert_eq!(boot_min_free_kbytes(&m, 10), 12_668);
        assert_eq!(
            setup_per_zone_wmarks(&m, 12_668, 10),
            vec![[189, 236, 283], [2977, 3721, 4465]]
        );
        assert_eq!(
            setup_per_zone_lowmem_reserve(&[3840, 60_265, 0], &DEFAULT_LOWMEM_RESERVE_RATIO),
            [[0, 235, 235], [0, 0, 0], [0, 0, 0]]
        );
        // 4 GiB: DMA 3840; DMA32 782336 - 14967 = 767369; Normal 262144 - 5015 = 257129.
        // Total 1028338.
        //  calculate: int_sqrt(1028338 * 64) = 8112 KiB; recommended 3 * 512 * 11 = 16896
        //  pages = 67584 KiB (5% cap ~51000 pages does not bite): wins.
        //  pages_min 16896: DMA 16896 * 3840 / 1028338 = 63, delta max(15, 3) = 15;
        //    DMA32 16896 * 767369 / 1028338 = 12608, delta max(3152, 767) = 3152;
        //    Normal 16896 * 257129 / 1028338 = 4224, delta max(1056, 257) = 1056.
        //  lowmem_reserve: DMA [0, 767369/256 = 2997, (767369 + 257129)/256 = 4001],
        //    DMA32 [0, 0, 257129/256 = 1004].
        let m = [3840, 767_369, 257_129];
        assert_eq!(boot_min_free_kbytes(&m, 10), 67_584);
        assert_eq!(
            setup_per_zone_wmarks(&m, 67_584, 10),
            vec![[63, 78, 93], [12608, 15760, 18912], [4224, 5280, 6336]]
        );
        assert_eq!(
            setup_per_zone_lowmem_reserve(&m, &DEFAULT_LOWMEM_RESERVE_RATIO),
            [[0, 2997, 4001], [0, 0, 1004], [0, 0, 0]]
        );
        // 64 GiB: DMA 3840; DMA32 767369; Normal 15990784 - 305926 = 15684858.
        // Total 16456067.
        //  calculate: int_sqrt(16456067 * 64) = 32452 KiB < recommended 67584 KiB: wins.
        //  pages_min 16896: DMA 16896 * 3840 / 16456067 = 3, delta max(0, 3) = 3;
        //    DMA32 16896 * 767369 / 16456067 = 787, delta max(196, 767) = 767;
        //    Normal 16896 * 15684858 / 16456067 = 16104, delta max(4026, 15684) = 15684.
        //  lowmem_reserve: DMA [0, 2997, (767369 + 15684858)/256 = 64266],
        //    DMA32 [0, 0, 15684858/256 = 61268].
        let m = [3840, 767_369, 15_684_858];
        assert_eq!(boot_min_free_kbytes(&m, 10), 67_584);
        assert_eq!(
            setup_per_zone_wmarks(&m, 67_584, 10),
            vec![[3, 6, 9], [787, 1554, 2321], [16104, 31788, 47472]]
        );
        assert_eq!(
            setup_per_zone_lowmem_reserve(&m, &DEFAULT_LOWMEM_RESERVE_RATIO),
            [[0, 2997, 64266], [0, 0, 61268], [0, 0, 0]]
        );
    }

    /// lowmem_reserve in the watermark check: a DMA zone with plenty free above its
    /// watermark still refuses an allocation that could have used a higher zone.
    #[test]
    fn watermark_ok_honours_lowmem_reserve() {
        let mut pages = FrameTable::new(4096);
        let mut z = Zone::new("DMA", 0, 4096);
        z.init_free(&mut pages);
        assert!(z.watermark_ok(0, 100));
        z.lowmem_reserve = [0, 2997, 4001];
        assert!(!z.watermark_ok(0, 100), "4096 free <= 100 + 4001");
        z.lowmem_reserve = [0, 2997, 3995];
        assert!(z.watermark_ok(0, 100), "4096 free > 100 + 3995");
    }

    #[test]
    fn buddy_split_and_merge() {
        let mut pages = FrameTable::new(2048);
        let mut z = Zone::new("Normal", 0, 2048);
        z.init_free(&mut pages);
        assert_eq!(z.free, 2048);
        assert_eq!(z.nr_free[10], 2);
        let a = z.rmqueue_smallest(&mut pages, 0, mt::MOVABLE).unwrap();
        // One order-10 block split down: orders 0..=9 each get one buddy.
        assert_eq!(z.free, 2047);
        for o in 0..10 {
            assert_eq!(z.nr_free[o], 1, "order {o}");
        }
        let b = z.rmqueue_smallest(&mut pages, 3, mt::MOVABLE).unwrap();
        assert_eq!(b % 8, 0);
        z.free_block(&mut pages, a, 0);
        z.free_block(&mut pages, b, 3);
        assert_eq!(z.free, 2048);
        assert_eq!(z.nr_free[10], 2);
    }

    #[test]
    fn watermark_ok_needs_a_block_of_the_order() {
        let mut pages = FrameTable::new(16);
        let mut z = Zone::new("Normal", 0, 16);
        z.init_free(&mut pages);
        assert!(z.watermark_ok(4, 0));
        let p = z.rmqueue_smallest(&mut pages, 0, mt::MOVABLE).unwrap();
        assert!(!z.watermark_ok(4, 0));
        assert!(z.watermark_ok(3, 0));
        z.free_block(&mut pages, p, 0);
        assert!(z.watermark_ok(4, 0));
    }
    /// Deferred linking gives the same allocations as linking every block at boot: the
    /// highest max-order block first, then on down, with freed blocks reused first; and
    /// a claim for another migratetype takes the block the eager list would give.
    #[test]
    fn deferred_max_order_blocks_come_out_in_boot_order() {
        let n = 8 << MAX_PAGE_ORDER;
        let mut pages = FrameTable::new(n as usize + 5);
        // Start unaligned (5 frames of small blocks) like a Normal zone after DMA32.
        let mut z = Zone::new("Normal", 5, n + 5);
        z.init_free(&mut pages);
        assert_eq!(z.free, n as u64);
        let max = MAX_PAGE_ORDER as usize;
        let movable = mt::MOVABLE as usize;
        assert_eq!(z.nr_free[max], 7);
        assert_eq!(z.nr_free_list(max, movable), 7);
        assert_eq!(
            z.free_area[max][movable].len, 1,
            "only the list head is linked"
        );
        let mut ev = VmEvents::default();
        let block = 1u32 << MAX_PAGE_ORDER;
        let mut take = |z: &mut Zone, pages: &mut FrameTable, t: u8| {
            z.rmqueue(pages, MAX_PAGE_ORDER, t, 0, &mut ev).unwrap()
        };
        let a = take(&mut z, &mut pages, mt::MOVABLE);
        assert_eq!(
            a,
            7 * block,
            "the highest block first (the list head at boot)"
        );
        assert_eq!(take(&mut z, &mut pages, mt::MOVABLE), 6 * block);
        z.free_block(&mut pages, a, MAX_PAGE_ORDER);
        assert_eq!(
            take(&mut z, &mut pages, mt::MOVABLE),
            a,
            "a freed block goes to the head"
        );
        assert_eq!(
            take(&mut z, &mut pages, mt::UNMOVABLE),
            5 * block,
            "__rmqueue_claim() takes the MOVABLE list's head"
        );
        assert!(
            z.watermark_ok(MAX_PAGE_ORDER, 0),
            "deferred blocks count as free blocks"
        );
        z.link_all_deferred(&mut pages);
        assert_eq!(z.deferred.0, z.deferred.1);
        assert_eq!(z.free_area[max][movable].len, 4);
        assert_eq!(z.free_area[max][movable].head, 4 * block);
        assert_eq!(z.nr_free[max], 4);
    }

    /// A zone whose every frame is allocated (HEAD, owned by nobody) except `free`.
    fn full_zone(n: u32, free: std::ops::Range<u32>) -> (FrameTable, Zone) {
        let mut pages = FrameTable::new(n as usize);
        let mut z = Zone::new("Normal", 0, n);
        z.init_free(&mut pages);
        while let Some(p) = z.rmqueue_smallest(&mut pages, 0, mt::MOVABLE) {
            pages.hot[p as usize].flags = pg::HEAD;
        }
        for p in free {
            z.free_block(&mut pages, p, 0);
        }
        (pages, z)
    }

    #[test]
    fn fallback_claims_a_whole_free_pageblock_largest_first() {
        let mut pages = FrameTable::new(4096);
        let mut z = Zone::new("Normal", 0, 4096);
        z.init_free(&mut pages);
        let mut ev = VmEvents::default();
        // No UNMOVABLE free block: __rmqueue_claim() takes the largest (order-10) MOVABLE
        // block, converts both its pageblocks and splits it on the UNMOVABLE lists.
        let p = z.rmqueue(&mut pages, 0, mt::UNMOVABLE, 0, &mut ev).unwrap();
        let blk = p & !1023;
        assert_eq!(z.pageblock_mt(blk), mt::UNMOVABLE);
        assert_eq!(z.pageblock_mt(blk + 512), mt::UNMOVABLE);
        assert_eq!(ev.get(Ev::ExtfragFallback), 1);
        // Whole-block claims do not boost.
        assert_eq!(z.watermark_boost, 0);
        assert_eq!(z.extfrag.whole_pageblock, [1, 0, 0]);
        assert_eq!((z.extfrag.fragmenting, z.extfrag.boosts), ([0; 3], 0));
        for o in 0..10 {
            assert_eq!(z.free_area[o][mt::UNMOVABLE as usize].len, 1, "order {o}");
        }
        assert_eq!(z.nr_free_list(10, mt::MOVABLE as usize), 3);
        // The next unmovable allocation is served from the UNMOVABLE lists: no fallback.
        z.rmqueue(&mut pages, 0, mt::UNMOVABLE, 0, &mut ev).unwrap();
        assert_eq!(ev.get(Ev::ExtfragFallback), 1);
    }

    #[test]
    fn claim_of_a_partial_block_boosts_and_converts_when_half_is_alike() {
        // 2048 pages (4 pageblocks, the smallest zone boost_watermark() accepts); 300 free
        // pages at the start of pageblock 0, everything else allocated (not on an LRU, so
        // "alike" for an unmovable request: 512 - 300 free - 0 movable = 212).
        let (mut pages, mut z) = full_zone(2048, 0..300);
        z.boost_factor = 15_000;
        z.wmark = [4, 12, 20];
        let mut ev = VmEvents::default();
        let p = z
            .rmqueue(&mut pages, 0, mt::UNMOVABLE, alloc_flags::KSWAPD, &mut ev)
            .unwrap();
        assert!(p < 300);
        // 300 free + 212 alike >= 256: the pageblock is claimed.
        assert_eq!(z.pageblock_mt(0), mt::UNMOVABLE);
        // boost = min(0 + 512, max(512, 20 * 15000 / 10000)) = 512, flag set for kswapd.
        assert_eq!(z.watermark_boost, 512);
        assert!(z.boosted_flag);
        assert_eq!(ev.get(Ev::ExtfragFallback), 1);
        // A fragmenting UNMOVABLE fallback that took ownership of its pageblock, one boost.
        assert_eq!(z.extfrag.fragmenting, [1, 0, 0]);
        assert_eq!(
            (z.extfrag.change_ownership, z.extfrag.boosts),
            ([1, 0, 0], 1)
        );
        assert_eq!(
            z.free_area
                .iter()
                .map(|l| l[mt::MOVABLE as usize].len)
                .sum::<u32>(),
            0
        );
    }

    /// The v6.15 rule (KernelVersion::boost_on_every_fallback): a MOVABLE page stolen from
    /// a RECLAIMABLE pageblock whose free blocks are all below the claimable order (4) does
    /// not boost the watermark in v6.18's `__rmqueue_steal()`; the kernels before v6.15
    /// (`steal_suitable_fallback()`) boosted it and flagged the zone for kswapd.
    #[test]
    fn single_block_steal_boosts_only_before_v6_15() {
        for (boost_on_steal, boost) in [(false, 0), (true, 512)] {
            // Pageblock 1 RECLAIMABLE with 12 free pages (an order-3 and an order-2 block).
            let (mut pages, mut z) = full_zone(2048, 0..0);
            z.set_pageblock_mt(512, mt::RECLAIMABLE);
            for p in 512..524 {
                z.free_block(&mut pages, p, 0);
            }
            z.boost_factor = 15_000;
            z.wmark = [4, 12, 20];
            z.boost_on_steal = boost_on_steal;
            let mut ev = VmEvents::default();
            let p = z
                .rmqueue(&mut pages, 0, mt::MOVABLE, alloc_flags::KSWAPD, &mut ev)
                .unwrap();
            // The smallest fallback block (order 2, pfns 520..524) is split; the pageblock
            // stays RECLAIMABLE.
            assert!((520..524).contains(&p), "{p}");
            assert_eq!(z.pageblock_mt(512), mt::RECLAIMABLE);
            assert_eq!(ev.get(Ev::ExtfragFallback), 1);
            // min(0 + 512, max(512, 20 * 15000 / 10000)) = 512 under the older rule.
            assert_eq!(z.watermark_boost, boost, "boost_on_steal {boost_on_steal}");
            assert_eq!(z.boosted_flag, boost_on_steal);
        }
    }

    /// One fallback, one boost before v6.15: `__rmqueue_fallback()` called
    /// `steal_suitable_fallback()` once, boosting by a pageblock; v6.15's
    /// `__rmqueue_claim()` boosts at each order whose claim it tries and fails. A RECLAIMABLE
    /// page (fs_mark's slab) from a MOVABLE pageblock holding free blocks of orders 3, 1 and
    /// 0 among LRU pages: every claim fails (11 free + 0 alike < 256), the page is stolen.
    #[test]
    fn a_fallback_boosts_once_before_v6_15() {
        for (boost_on_steal, boost) in [(false, 3 * 512), (true, 512)] {
            let (mut pages, mut z) = full_zone(2048, 0..0);
            for p in 512..1024 {
                pages.hot[p].flags |= pg::LRU;
            }
            for p in (512..520).chain(528..530).chain(540..541) {
                pages.hot[p as usize].flags = pg::HEAD;
                z.free_block(&mut pages, p, 0);
            }
            z.boost_factor = 15_000;
            // max_boost = 2000 * 15000 / 10000 = 3000: no cap below 3 boosts.
            z.wmark = [1000, 1500, 2000];
            z.boost_on_steal = boost_on_steal;
            let mut ev = VmEvents::default();
            z.rmqueue(&mut pages, 0, mt::RECLAIMABLE, alloc_flags::KSWAPD, &mut ev)
                .unwrap();
            assert_eq!(z.pageblock_mt(512), mt::MOVABLE);
            assert_eq!(ev.get(Ev::ExtfragFallback), 1);
            assert_eq!(z.watermark_boost, boost, "boost_on_steal {boost_on_steal}");
            assert!(z.boosted_flag);
            // mm_page_alloc_extfrag: one RECLAIMABLE fallback to an order-0 block, fragmenting,
            // the pageblock not claimed; boost_watermark() raised the boost three times
            // (orders 3, 1, 0) under v6.15's rules, once before.
            let x = z.extfrag;
            assert_eq!((x.fragmenting, x.whole_pageblock), ([0, 0, 1], [0; 3]));
            assert_eq!(x.change_ownership, [0; 3]);
            assert_eq!(x.boosts, if boost_on_steal { 1 } else { 3 });
            assert_eq!(x.total(), ev.get(Ev::ExtfragFallback));
        }
    }

    /// v5.2's `steal_suitable_fallback()` (KernelVersion::fallback_moves_free_pages): a
    /// RECLAIMABLE page (fs_mark's slab) from a MOVABLE pageblock of 501 LRU pages and free
    /// blocks of orders 3 (512..520), 1 (528..530) and 0 (540). `__rmqueue_fallback()` takes
    /// the largest (order 3), boosts once and moves all 11 free pages to the RECLAIMABLE
    /// lists without claiming the block (11 free + 0 alike < 256); the retried
    /// `__rmqueue_smallest()` takes the order-0 page, and the next two RECLAIMABLE pages come
    /// from the moved blocks without a fallback. Under v6.18's rules each of them falls back.
    #[test]
    fn a_v5_2_fallback_moves_the_blocks_free_pages_without_claiming_it() {
        for v5_2 in [true, false] {
            let (mut pages, mut z) = full_zone(2048, 0..0);
            for p in 512..1024 {
                pages.hot[p].flags |= pg::LRU;
            }
            for p in (512..520).chain(528..530).chain(540..541) {
                pages.hot[p as usize].flags = pg::HEAD;
                z.free_block(&mut pages, p, 0);
            }
            z.boost_factor = 15_000;
            z.wmark = [1000, 1500, 2000];
            z.boost_on_steal = v5_2;
            z.steal_moves_free_pages = v5_2;
            let mut ev = VmEvents::default();
            let f = alloc_flags::KSWAPD;
            let p = z
                .rmqueue(&mut pages, 0, mt::RECLAIMABLE, f, &mut ev)
                .unwrap();
            assert_eq!(p, 540);
            assert_eq!(z.pageblock_mt(512), mt::MOVABLE);
            let on = |z: &Zone, o: usize, t: u8| z.free_area[o][t as usize].len;
            if v5_2 {
                assert_eq!(z.watermark_boost, 512);
                assert_eq!(
                    (on(&z, 3, mt::RECLAIMABLE), on(&z, 1, mt::RECLAIMABLE)),
                    (1, 1)
                );
                assert_eq!(pages.free_mt[512], mt::RECLAIMABLE);
                assert_eq!((on(&z, 3, mt::MOVABLE), on(&z, 1, mt::MOVABLE)), (0, 0));
            } else {
                assert_eq!((on(&z, 3, mt::MOVABLE), on(&z, 1, mt::MOVABLE)), (1, 1));
            }
            // The order-1 block serves the next two (split on the RECLAIMABLE lists under
            // v5.2; stolen smallest-first, one fallback each, under v6.18).
            let q = z
                .rmqueue(&mut pages, 0, mt::RECLAIMABLE, f, &mut ev)
                .unwrap();
            let r = z
                .rmqueue(&mut pages, 0, mt::RECLAIMABLE, f, &mut ev)
                .unwrap();
            assert_eq!((q, r), (528, 529));
            let fallbacks = if v5_2 { 1 } else { 3 };
            assert_eq!(ev.get(Ev::ExtfragFallback), fallbacks, "v5.2 {v5_2}");
            assert_eq!(z.extfrag.fragmenting, [0, 0, fallbacks], "v5.2 {v5_2}");
            assert_eq!(z.extfrag.change_ownership, [0; 3]);
            // Freed, the pages merge back and go to the list of their pageblock's type.
            z.free_block(&mut pages, 528, 0);
            z.free_block(&mut pages, 529, 0);
            assert_eq!(on(&z, 1, mt::MOVABLE), 1);
            assert_eq!(on(&z, 0, mt::RECLAIMABLE) + on(&z, 1, mt::RECLAIMABLE), 0);
        }
    }

    /// v5.2's single-block steal: a MOVABLE page may not claim at order 3 (below
    /// `pageblock_order / 2`), so `__rmqueue_fallback()` takes the smallest RECLAIMABLE block
    /// (order 2, 520..524), boosts, and moves the whole block to the MOVABLE lists; the page
    /// is its first, and the remainder (521, 522..524) serves the next MOVABLE allocations.
    #[test]
    fn a_v5_2_single_block_steal_moves_the_whole_block() {
        let (mut pages, mut z) = full_zone(2048, 0..0);
        z.set_pageblock_mt(512, mt::RECLAIMABLE);
        for p in 512..524 {
            z.free_block(&mut pages, p, 0);
        }
        z.boost_factor = 15_000;
        z.wmark = [4, 12, 20];
        z.boost_on_steal = true;
        z.steal_moves_free_pages = true;
        let mut ev = VmEvents::default();
        let f = alloc_flags::KSWAPD;
        let p = z.rmqueue(&mut pages, 0, mt::MOVABLE, f, &mut ev).unwrap();
        assert_eq!(p, 520);
        assert_eq!(z.watermark_boost, 512);
        assert!(z.boosted_flag);
        assert_eq!(z.pageblock_mt(512), mt::RECLAIMABLE);
        assert_eq!(z.free_area[0][mt::MOVABLE as usize].head, 521);
        assert_eq!(z.free_area[1][mt::MOVABLE as usize].head, 522);
        assert_eq!(z.free_area[3][mt::RECLAIMABLE as usize].head, 512);
        for want in [521, 522, 523] {
            assert_eq!(
                z.rmqueue(&mut pages, 0, mt::MOVABLE, f, &mut ev),
                Some(want)
            );
        }
        assert_eq!(ev.get(Ev::ExtfragFallback), 1);
    }

    #[test]
    fn movable_fallback_steals_smallest_without_claiming_an_unmovable_block() {
        // Pageblock 1 is UNMOVABLE with 100 free pages (64 + 32 + 4); nothing else is free.
        let mut pages = FrameTable::new(2048);
        let mut z = Zone::new("Normal", 0, 2048);
        z.init_free(&mut pages);
        while let Some(p) = z.rmqueue_smallest(&mut pages, 0, mt::MOVABLE) {
            pages.hot[p as usize].flags = pg::HEAD;
        }
        z.set_pageblock_mt(512, mt::UNMOVABLE);
        for p in 512..612 {
            z.free_block(&mut pages, p, 0);
        }
        assert_eq!(
            z.free_area[6][0].len + z.free_area[5][0].len + z.free_area[2][0].len,
            3
        );
        let mut ev = VmEvents::default();
        let p = z.rmqueue(&mut pages, 0, mt::MOVABLE, 0, &mut ev).unwrap();
        // Claims at orders 6 and 5 fail (alike = movable pages = 0, 100 free < 256); at
        // order 3 a movable request may no longer claim; the steal takes the smallest
        // block (order 2, pfns 608..612) and leaves the pageblock UNMOVABLE.
        assert!((608..612).contains(&p));
        assert_eq!(z.pageblock_mt(512), mt::UNMOVABLE);
        assert_eq!(ev.get(Ev::ExtfragFallback), 1);
        assert_eq!(z.free_area[1][0].len + z.free_area[0][0].len, 2);
        // With ALLOC_NOFRAGMENT only whole pageblocks may be taken: the allocation fails.
        assert!(z
            .rmqueue(&mut pages, 0, mt::MOVABLE, alloc_flags::NOFRAGMENT, &mut ev)
            .is_none());
    }

    #[test]
    fn fallback_table_and_claim_rule() {
        let z = Zone::new("Normal", 0, 1024);
        assert_eq!(
            FALLBACKS[mt::UNMOVABLE as usize],
            [mt::RECLAIMABLE, mt::MOVABLE]
        );
        assert_eq!(
            FALLBACKS[mt::MOVABLE as usize],
            [mt::RECLAIMABLE, mt::UNMOVABLE]
        );
        assert_eq!(
            FALLBACKS[mt::RECLAIMABLE as usize],
            [mt::UNMOVABLE, mt::MOVABLE]
        );
        assert!(should_try_claim_block(0, mt::UNMOVABLE));
        assert!(should_try_claim_block(0, mt::RECLAIMABLE));
        assert!(!should_try_claim_block(3, mt::MOVABLE));
        assert!(should_try_claim_block(4, mt::MOVABLE));
        assert_eq!(z.find_suitable_fallback(3, mt::MOVABLE, true), -2);
        assert_eq!(z.find_suitable_fallback(3, mt::MOVABLE, false), -1);
    }

    #[test]
    fn boost_arithmetic() {
        // KERNEL-MODEL §7.1 8 GiB zone: high 7090, factor 15000 -> max 10635.
        assert_eq!(boosted_watermark(0, 7090, 2_097_152, 15_000), Some(512));
        assert_eq!(
            boosted_watermark(10_500, 7090, 2_097_152, 15_000),
            Some(10_635)
        );
        // Small high watermark: the maximum is one pageblock.
        assert_eq!(boosted_watermark(512, 20, 4096, 15_000), Some(512));
        assert_eq!(boosted_watermark(0, 7090, 2_097_152, 0), None);
        // Zones smaller than four pageblocks are never boosted.
        assert_eq!(boosted_watermark(0, 7090, 2047, 15_000), None);
    }

    #[test]
    fn fragmentation_index_and_extfrag() {
        let mut nr = [0u64; NR_PAGE_ORDERS];
        nr[0] = 100;
        nr[3] = 10;
        let i = ContigPageInfo::fill(&nr, 9);
        assert_eq!(
            (i.free_pages, i.free_blocks_total, i.free_blocks_suitable),
            (180, 110, 0)
        );
        // 1000 - (1000 + 180 * 1000 / 512) / 110 = 1000 - 1351 / 110 = 988.
        assert_eq!(i.fragmentation_index(9), 988);
        assert_eq!(i.extfrag_for_order(9), 100);
        // Three order-8 blocks: 1000 - (1000 + 1500) / 3 = 167 (lack of memory, not
        // fragmentation).
        let mut nr = [0u64; NR_PAGE_ORDERS];
        nr[8] = 3;
        assert_eq!(ContigPageInfo::fill(&nr, 9).fragmentation_index(9), 167);
        // A free order-10 block: -1000; extfrag: (1024 + 768 - 2 * 512) * 100 / 1792 = 42.
        nr[10] = 1;
        let i = ContigPageInfo::fill(&nr, 9);
        assert_eq!(i.fragmentation_index(9), -1000);
        assert_eq!(i.extfrag_for_order(9), 42);
        assert_eq!(
            ContigPageInfo::fill(&[0; NR_PAGE_ORDERS], 9).fragmentation_index(9),
            0
        );
    }

    /// `reserve_highatomic_pageblock()`'s limit, by hand. 512 MiB zone (131072 pages, 1% =
    /// 1310): v4.6 `1310 + 512 = 1822`, so blocks are reserved while the reserve is below it:
    /// 0, 512, 1024, 1536 -> four blocks (2048); v6.8+ `ALIGN(1310, 512) = 1536`: three
    /// blocks. 16 MiB zone (4096 pages, 1% = 40): v4.6 `40 + 512 = 552`: two blocks (1024);
    /// v6.8+ 40 < 512: none. Order-0 allocations, each from a different pageblock.
    #[test]
    fn highatomic_reserve_limits() {
        let old = HighatomicRules::default();
        let new = HighatomicRules {
            reserve_aligned: true,
            unusable_free_only: true,
        };
        for (n, rules, blocks) in [
            (131072, old, 4),
            (131072, new, 3),
            (4096, old, 2),
            (4096, new, 0),
        ] {
            let mut pages = FrameTable::new(n as usize);
            let mut z = Zone::new("Normal", 0, n);
            z.highatomic = rules;
            z.init_free(&mut pages);
            let mut reserved = 0;
            for b in 0..8u32 {
                let pfn = b * PAGEBLOCK_NR_PAGES as u32;
                reserved += z.reserve_highatomic_pageblock(&mut pages, pfn, 0) as u64;
            }
            assert_eq!(reserved, blocks, "{n} {rules:?}");
            assert_eq!(z.nr_reserved_highatomic, blocks * 512, "{n} {rules:?}");
            let ha = (0..8u32)
                .filter(|b| z.pageblock_mt(b * 512) == mt::HIGHATOMIC)
                .count() as u64;
            assert_eq!(ha, blocks);
        }
    }

    /// A reserved pageblock's free pages move to the HIGHATOMIC lists: an allocation without
    /// reserve rights neither counts them (v4.6: the whole reserve, 512 pages; v6.12+: the
    /// free ones only) nor takes them, and unreserving gives the block back.
    #[test]
    fn highatomic_pages_are_unusable_without_rights() {
        for (free_only, unusable) in [(false, 512), (true, 300)] {
            // 300 free pages in pageblock 0, the rest allocated.
            let (mut pages, mut z) = full_zone(2048, 0..300);
            z.highatomic.unusable_free_only = free_only;
            assert!(z.reserve_highatomic_pageblock(&mut pages, 0, 1));
            assert_eq!(z.pageblock_mt(0), mt::HIGHATOMIC);
            assert_eq!(z.highatomic_unusable(), unusable);
            assert_eq!(z.free, 300);
            // 300 - unusable <= mark 0: no order-0 page without rights; with them, yes.
            assert!(!z.watermark_ok(0, 0));
            assert!(z.watermark_ok_flags(0, 0, true, false));
            assert!(z.watermark_ok_flags(1, 0, true, true));
            assert!(!z.watermark_ok_flags(1, 0, true, false));
            let mut ev = VmEvents::default();
            assert_eq!(z.rmqueue(&mut pages, 0, mt::UNMOVABLE, 0, &mut ev), None);
            // A reserve of one pageblock is kept unless forced.
            assert!(!z.unreserve_highatomic_pageblock(&mut pages, mt::UNMOVABLE, false));
            assert!(z.unreserve_highatomic_pageblock(&mut pages, mt::UNMOVABLE, true));
            assert_eq!(z.nr_reserved_highatomic, 0);
            assert_eq!(z.pageblock_mt(0), mt::UNMOVABLE);
            assert!(z
                .rmqueue(&mut pages, 0, mt::UNMOVABLE, 0, &mut ev)
                .is_some());
        }
    }

    /// `zone_batchsize()` / `zone_highsize()` against the guest's and the host's
    /// /proc/zoneinfo "pagesets" (docs/zoneinfo: 6.1 with 1 CPU, 6.18 with 2) and by hand
    /// for v4.6 (half-MiB cap, `high = 6 * batch`).
    #[test]
    fn pcp_batch_and_high_of_measured_zones() {
        use crate::workingset::KernelVersion as K;
        // Guest 6.1, 1 CPU: DMA managed 3840, low 40 → batch 1, high 40; DMA32 managed
        // 51813, low 543 → 51813 >> 10 = 50, / 4 = 12, rounddown_pow_of_two(18) - 1 = 15;
        // high = max(543 / 1, 60) = 543.
        assert_eq!(pcp_batch_high(3840, 40, 1, K::new(6, 1)), (1, 40));
        assert_eq!(pcp_batch_high(51813, 543, 1, K::new(6, 1)), (15, 543));
        // Host 6.18, 2 CPUs: DMA32 managed 772808, low 2887 → min(754, 256) / 4 = 64,
        // rounddown_pow_of_two(96) - 1 = 63; high = 2887 / 2 = 1443. (Normal's high is
        // autotuned there, between high_min = 20163 / 2 and high_max.)
        assert_eq!(pcp_batch_high(772808, 2887, 2, K::new(6, 18)), (63, 1443));
        assert_eq!(
            pcp_batch_high(5394266, 20163, 2, K::new(6, 18)),
            (63, 10081)
        );
        // v6.7+ high_max: managed / 8 over the CPUs: 5394266 / 8 = 674283, / 2 = 337141;
        // 772808 / 8 = 96601, / 2 = 48300. Before v6.7 high_max is high.
        assert_eq!(pcp_high_max(5394266, 63, 10081, 2, K::new(6, 18)), 337141);
        assert_eq!(pcp_high_max(772808, 63, 1443, 2, K::new(6, 7)), 48300);
        assert_eq!(pcp_high_max(772808, 63, 1443, 2, K::new(6, 6)), 1443);
        // A DMA zone with a low watermark under 4 batches gets 4 batches.
        assert_eq!(pcp_batch_high(3840, 3, 2, K::new(6, 1)), (1, 4));
        // v4.6: cap 512 KiB = 128 pages, / 4 = 32, rounddown_pow_of_two(48) - 1 = 31,
        // high 186; DMA: 3840 / 1024 = 3, / 4 = 0 → 1, rounddown_pow_of_two(1) - 1 = 0:
        // high 0, batch 1 (every free goes straight through).
        assert_eq!(pcp_batch_high(126_000, 500, 16, K::new(4, 6)), (31, 186));
        assert_eq!(pcp_batch_high(3840, 40, 16, K::new(4, 6)), (1, 0));
        assert_eq!(pcp_batch_high(51813, 543, 1, K::new(4, 6)), (15, 90));
    }

    /// A 4096-page zone with per-CPU lists on 2 CPUs, batch 7, high 20.
    fn pcp_zone(rules: PcpRules) -> (FrameTable, Zone) {
        let mut pages = FrameTable::new(4096);
        let mut z = Zone::new("Normal", 0, 4096);
        z.init_free(&mut pages);
        z.pcp = vec![PerCpuPages::default(); 2];
        z.pcp_batch = 7;
        z.pcp_high = 20;
        z.pcp_high_max = 20;
        z.pcp_rules = rules;
        (pages, z)
    }

    fn pcp_alloc(z: &mut Zone, pages: &mut FrameTable, cpu: u16, t: u8) -> Pfn {
        let mut ev = VmEvents::default();
        let p = z.rmqueue_pcplist(pages, cpu, t, 0, &mut ev).unwrap();
        pages.hot[p as usize].flags = pg::HEAD;
        p
    }

    fn pcp_list(z: &Zone, pages: &FrameTable, cpu: usize, t: u8) -> Vec<Pfn> {
        let mut v = Vec::new();
        let mut p = z.pcp[cpu].lists[t as usize].head;
        while p != NIL {
            v.push(p);
            p = pages.hot[p as usize].next;
        }
        v
    }

    #[test]
    fn pcp_refill_takes_a_batch_and_freed_pages_are_reused_lifo() {
        let (mut pages, mut z) = pcp_zone(PcpRules::default());
        let p = pcp_alloc(&mut z, &mut pages, 0, mt::MOVABLE);
        // rmqueue_bulk(): 7 pages left NR_FREE_PAGES, 6 wait on CPU 0's list in the order
        // __rmqueue() split them off one block (ascending pfn).
        assert_eq!((z.free, z.nr_pcp, z.pcp[0].count), (4096 - 7, 6, 6));
        assert_eq!(
            pcp_list(&z, &pages, 0, mt::MOVABLE),
            (p + 1..p + 7).collect::<Vec<_>>()
        );
        let q = pcp_alloc(&mut z, &mut pages, 0, mt::MOVABLE);
        assert_eq!(q, p + 1);
        // A page freed on CPU 0 is the next one CPU 0 allocates; CPU 1's free stays on CPU 1.
        z.free_unref_page(&mut pages, 1, q);
        z.free_unref_page(&mut pages, 0, p);
        assert_eq!(z.free, 4096 - 7, "freed pages stay off NR_FREE_PAGES");
        assert_eq!(pcp_alloc(&mut z, &mut pages, 0, mt::MOVABLE), p);
        assert_eq!(pcp_list(&z, &pages, 1, mt::MOVABLE), vec![q]);
        assert_eq!(z.nr_pcp, 5 + 1);
    }

    #[test]
    fn pcp_overflow_returns_a_batch_of_the_coldest_pages() {
        let (mut pages, mut z) = pcp_zone(PcpRules::default());
        let got: Vec<Pfn> = (0..21)
            .map(|_| pcp_alloc(&mut z, &mut pages, 0, mt::MOVABLE))
            .collect();
        assert_eq!((z.nr_pcp, z.free), (0, 4096 - 21));
        for &p in &got {
            z.free_unref_page(&mut pages, 0, p);
        }
        // The 20th free reached high: free_pcppages_bulk() returned batch = 7 pages from the
        // list's tail (the first 7 freed); the 21st stays.
        assert_eq!((z.pcp[0].count, z.free), (14, 4096 - 14));
        let l = pcp_list(&z, &pages, 0, mt::MOVABLE);
        assert_eq!(l.first(), Some(&got[20]));
        assert_eq!(l.last(), Some(&got[7]));
        // drain_all_pages(): everything back, and the buddy lists merge the zone whole again.
        z.drain_all_pages(&mut pages);
        assert_eq!((z.nr_pcp, z.free), (0, 4096));
        assert_eq!(
            z.nr_free_list(MAX_PAGE_ORDER as usize, mt::MOVABLE as usize),
            4
        );
    }

    #[test]
    fn pcp_free_factor_doubles_the_bulk_free_from_v5_14() {
        let rules = PcpRules {
            free_factor: true,
            drain_requested_first: true,
            ..PcpRules::default()
        };
        let (mut pages, mut z) = pcp_zone(rules);
        // 28 pages: four refills of 7, the list empty again.
        let got: Vec<Pfn> = (0..28)
            .map(|_| pcp_alloc(&mut z, &mut pages, 0, mt::MOVABLE))
            .collect();
        assert_eq!(z.pcp[0].count, 0);
        for &p in &got {
            z.free_unref_page(&mut pages, 0, p);
        }
        // Free 20 reaches high: 7 << 0 = 7 freed (free_factor → 1), count 13. Frees 21-27
        // reach 20 again: 7 << 1 = 14 is not under high - batch = 13 → clamped to 13
        // (free_factor stays 1), count 7. Free 28: count 8.
        assert_eq!((z.pcp[0].count, z.pcp[0].free_factor), (8, 1));
        // An allocation halves free_factor.
        pcp_alloc(&mut z, &mut pages, 0, mt::MOVABLE);
        assert_eq!(z.pcp[0].free_factor, 0);
    }

    /// `n` order-0 MOVABLE pages straight from the buddy lists, as in-use frames.
    fn buddy_pages(z: &mut Zone, pages: &mut FrameTable, n: usize) -> Vec<Pfn> {
        let mut ev = VmEvents::default();
        (0..n)
            .map(|_| {
                let p = z.rmqueue(pages, 0, mt::MOVABLE, 0, &mut ev).unwrap();
                pages.hot[p as usize].flags = pg::HEAD;
                p
            })
            .collect()
    }

    const RULES_5_18: PcpRules = PcpRules {
        free_factor: true,
        drain_requested_first: true,
        reclaim_active_cap: true,
        autotune: false,
    };
    const RULES_6_7: PcpRules = PcpRules {
        autotune: true,
        ..RULES_5_18
    };

    /// v5.14+ nr_pcp_high(): with ZONE_RECLAIM_ACTIVE the lists overflow at 4 batches.
    #[test]
    fn pcp_lists_hold_four_batches_while_kswapd_reclaims_from_v5_14() {
        let before = PcpRules {
            reclaim_active_cap: false,
            free_factor: false,
            drain_requested_first: false,
            autotune: false,
        };
        for (rules, active, left) in [
            // high 40: free 40 overflows (7 << 0 = 7 returned, free_factor 1): 33, then 35.
            (RULES_5_18, false, 35),
            // high min(4 * 7, 40) = 28: free 28 returns 7 (free_factor 1, count 21), free 35
            // returns 14 (under 28 - 7 = 21; free_factor 2, count 14), frees 36-42 → 21.
            (RULES_5_18, true, 21),
            // Before v5.14 the flag changes nothing: free 40 returns a batch → 33, then 35.
            (before, true, 35),
        ] {
            let (mut pages, mut z) = pcp_zone(rules);
            z.pcp_high = 40;
            z.pcp_high_max = 40;
            z.reclaim_active = active;
            for p in buddy_pages(&mut z, &mut pages, 42) {
                z.free_unref_page(&mut pages, 0, p);
            }
            assert_eq!(z.pcp[0].count, left, "{rules:?} reclaim active {active}");
        }
    }

    /// v6.7+ nr_pcp_alloc(): each refill without a free between doubles (alloc_factor) and
    /// raises `high` by itself up to high_max; not while the zone is below its high
    /// watermark.
    #[test]
    fn pcp_refills_double_and_raise_high_from_v6_7() {
        let (_, mut z) = pcp_zone(RULES_6_7);
        z.pcp_high_max = 100;
        // high 20 → 27, refill min(7, 27 - 7); 27 → 41, 14; 41 → 69, 28; 69 → 100, 56;
        // then 112 is over 100 - 7 = 93: 93, alloc_factor stays 4.
        let sizes: Vec<u32> = (0..5).map(|_| z.nr_pcp_alloc(0)).collect();
        assert_eq!(sizes, [7, 14, 28, 56, 93]);
        assert_eq!((z.pcp[0].high, z.pcp[0].alloc_factor), (100, 4));
        // Below the high watermark high stays at 20: 7, then 14 is over 20 - 7 = 13.
        z.below_high = true;
        let sizes: Vec<u32> = (0..2).map(|_| z.nr_pcp_alloc(1)).collect();
        assert_eq!(sizes, [7, 13]);
        assert_eq!(z.pcp[1].high, 20);
    }

    /// v6.7+ nr_pcp_high() / nr_pcp_free() on frees: an overflow raises `high` to
    /// free_count + batch and returns free_count pages (within [batch, high - batch]);
    /// ZONE_BELOW_HIGH and ZONE_RECLAIM_ACTIVE take free_count off `high`.
    #[test]
    fn pcp_frees_raise_high_and_below_high_lowers_it_from_v6_7() {
        // 39 frees: v5.18 (high 20): free 20 returns 7 (count 13), free 27 returns
        // clamp(14, 7, 13) = 13 (count 7), frees 28-39 stay: 19.
        // v6.7 (high 20..100): free 20 raises high to 20 + 7 = 27 and returns
        // clamp(20, 7, 13) = 13 (count 7); frees 21-39 stay (count 26 < 27).
        for (rules, left, high) in [(RULES_5_18, 19, 0), (RULES_6_7, 26, 27)] {
            let (mut pages, mut z) = pcp_zone(rules);
            z.pcp_high_max = 100;
            for p in buddy_pages(&mut z, &mut pages, 39) {
                z.free_unref_page(&mut pages, 0, p);
            }
            assert_eq!((z.pcp[0].count, z.pcp[0].high), (left, high), "{rules:?}");
        }
        let (mut pages, mut z) = pcp_zone(RULES_6_7);
        z.pcp_high_max = 100;
        z.wmark = [10, 20, 30];
        let mut got = buddy_pages(&mut z, &mut pages, 60);
        for p in got.drain(..40) {
            z.free_unref_page(&mut pages, 0, p);
        }
        // Free 40: count 27 reaches high 27 → high 40 + 7 = 47, 20 returned (count 7).
        assert_eq!(
            (z.pcp[0].count, z.pcp[0].high, z.pcp[0].free_count),
            (7, 47, 40)
        );
        // Below the high watermark: free 41 lowers high by free_count 41 to high_min 20.
        z.below_high = true;
        z.free_unref_page(&mut pages, 0, got.pop().unwrap());
        assert_eq!((z.pcp[0].count, z.pcp[0].high), (8, 20));
        // 12 more: count 20 reaches high_min, clamp(53, 7, 13) = 13 return; the zone is over
        // its high watermark (30) again, so ZONE_BELOW_HIGH clears.
        for _ in 0..12 {
            z.free_unref_page(&mut pages, 0, got.pop().unwrap());
        }
        assert_eq!((z.pcp[0].count, z.below_high), (7, false));
        // Reclaim active: high 60 less max(free_count, batch) = 7 (free_count 1) → 53, the
        // list overflowing at min(4 * 7, 53) = 28.
        pcp_alloc(&mut z, &mut pages, 0, mt::MOVABLE);
        z.pcp[0].free_count = 0;
        z.pcp[0].high = 60;
        z.reclaim_active = true;
        z.free_unref_page(&mut pages, 0, got.pop().unwrap());
        assert_eq!(z.pcp[0].high, 53);
        assert_eq!(z.nr_pcp_high(0), 28);
    }

    /// v6.7+ decay_pcp_high(): an eighth off `high` a second, the pages over it returned.
    #[test]
    fn pcp_high_decays_by_an_eighth_from_v6_7() {
        let (mut pages, mut z) = pcp_zone(RULES_6_7);
        z.pcp_high_max = 400;
        z.pcp[0].high = 300;
        for p in buddy_pages(&mut z, &mut pages, 250) {
            z.free_unref_page(&mut pages, 0, p);
        }
        assert_eq!((z.pcp[0].count, z.free), (250, 4096 - 250));
        // 300 - 37 = 263 (over count - 7 * 32 = 26): nothing to return; 263 - 32 = 231:
        // 19 back; 231 - 28 = 203: 28 back.
        let drained: Vec<u32> = (0..3).map(|_| z.decay_pcp_high(&mut pages, 0)).collect();
        assert_eq!(drained, [0, 19, 28]);
        assert_eq!(
            (z.pcp[0].high, z.pcp[0].count, z.free),
            (203, 203, 4096 - 203)
        );
        // At high_min nothing more decays.
        z.pcp[1].high = 20;
        assert_eq!(z.decay_pcp_high(&mut pages, 1), 0);
        assert_eq!(z.pcp[1].high, 20);
    }

    /// Mm: vmstat's refresh runs every second only where it has work (v6.7+
    /// `decay_pcp_high()`), and takes a whole-second decay step of every CPU's lists.
    #[test]
    fn vmstat_update_decays_every_cpus_lists_each_second_from_v6_7() {
        use crate::testutil::tiny_config;
        use crate::workingset::KernelVersion as K;
        for (k, due) in [(K::new(6, 6), u64::MAX), (K::new(6, 7), STAT_INTERVAL_NS)] {
            let mut cfg = tiny_config(crate::BalanceKind::RefaultCost, 8192);
            cfg.kernel = k;
            cfg.nr_cpus = 2;
            let mut mm = crate::Mm::new(cfg);
            assert_eq!(mm.vmstat_update_due(), due, "{k:?}");
            if due == u64::MAX {
                continue;
            }
            let zi = mm.zones.len() - 1;
            let z = &mut mm.zones[zi];
            assert!(z.pcp_high_max >= z.pcp_high);
            // CPU 1's high 80 over high_min: a second later 70.
            let min = z.pcp_high;
            z.pcp[1].high = min + 80;
            mm.vmstat_update(STAT_INTERVAL_NS - 1);
            assert_eq!(mm.zones[zi].pcp[1].high, min + 80, "not due yet");
            mm.vmstat_update(STAT_INTERVAL_NS + 5);
            let h = min + 80;
            assert_eq!(mm.zones[zi].pcp[1].high, h - (h >> 3).min(80));
            assert_eq!(mm.vmstat_update_due(), 2 * STAT_INTERVAL_NS);
        }
    }

    /// free_pcppages_bulk()'s list order: v4.x–v5.17 round robin from MOVABLE with a growing
    /// batch_free (one more page for each empty list passed); v5.18+ the requested list
    /// first, whole lists.
    #[test]
    fn pcp_bulk_free_list_order_by_version() {
        // [UNMOVABLE, MOVABLE, RECLAIMABLE] pages freed by a bulk free of 4 with UNMOVABLE
        // requested: round robin, one page a list while none is empty: MOVABLE,
        // RECLAIMABLE, UNMOVABLE, MOVABLE; v5.18+ empties UNMOVABLE (3) and takes 1 from
        // MOVABLE.
        for (first, expect) in [(false, [1u32, 2, 1]), (true, [3, 1, 0])] {
            let (mut pages, mut z) = full_zone(2048, 0..0);
            z.pcp = vec![PerCpuPages::default(); 1];
            z.pcp_batch = 7;
            z.pcp_high = 100;
            z.pcp_high_max = 100;
            z.pcp_rules = PcpRules {
                free_factor: false,
                drain_requested_first: first,
                ..PcpRules::default()
            };
            z.set_pageblock_mt(0, mt::UNMOVABLE);
            z.set_pageblock_mt(1024, mt::RECLAIMABLE);
            for base in [0u32, 512, 1024] {
                for k in 0..3 {
                    z.free_unref_page(&mut pages, 0, base + k);
                }
            }
            assert_eq!((z.pcp[0].count, z.free), (9, 0));
            z.free_pcppages_bulk(&mut pages, 0, 4, mt::UNMOVABLE);
            let freed: Vec<u32> = (0..3).map(|t| 3 - z.pcp[0].lists[t].len).collect();
            assert_eq!(freed, expect.to_vec(), "drain_requested_first={first}");
            assert_eq!((z.pcp[0].count, z.free, z.nr_pcp), (5, 4, 5));
        }
    }

    /// `buddy_merge_likely()`: a freed block whose merged-with buddy one order up is free goes
    /// to the tail of its list.
    #[test]
    fn freed_block_goes_to_the_tail_when_its_buddy_is_likely_to_merge() {
        let (mut pages, mut z) = full_zone(2048, 0..0);
        z.free_block(&mut pages, 0, 0);
        z.free_block(&mut pages, 1, 0);
        assert_eq!(z.free_area[1][mt::MOVABLE as usize].head, 0);
        // pfn 8: its pair at order 1 is pfns 10-11, allocated: head.
        z.free_block(&mut pages, 8, 0);
        // pfn 2: buddy 3 allocated; the order-1 block it would form (2-3) has its buddy
        // (0-1) free at order 1: tail.
        z.free_block(&mut pages, 2, 0);
        let l = &z.free_area[0][mt::MOVABLE as usize];
        assert_eq!((l.head, l.tail), (8, 2));
        // The next order-0 allocation takes pfn 8; pfn 2 waits for pfn 3.
        assert_eq!(z.rmqueue_smallest(&mut pages, 0, mt::MOVABLE), Some(8));
    }

    /// A refill of an UNMOVABLE list with only MOVABLE memory free falls back inside
    /// rmqueue_bulk(): one fallback claims a pageblock, the rest of the batch comes from it.
    #[test]
    fn pcp_refill_is_where_the_fallback_happens() {
        let (mut pages, mut z) = pcp_zone(PcpRules::default());
        let mut ev = VmEvents::default();
        let p = z
            .rmqueue_pcplist(&mut pages, 0, mt::UNMOVABLE, 0, &mut ev)
            .unwrap();
        assert_eq!(ev.get(Ev::ExtfragFallback), 1);
        assert_eq!(z.pageblock_mt(p), mt::UNMOVABLE);
        let l = pcp_list(&z, &pages, 0, mt::UNMOVABLE);
        assert_eq!(l.len(), 6);
        assert!(l
            .iter()
            .all(|&q| q >> PAGEBLOCK_ORDER == p >> PAGEBLOCK_ORDER));
        // The next six unmovable allocations on CPU 0 come from the list: no fallback, no
        // buddy access.
        let free = z.free;
        for _ in 0..6 {
            z.rmqueue_pcplist(&mut pages, 0, mt::UNMOVABLE, 0, &mut ev)
                .unwrap();
        }
        assert_eq!(
            (ev.get(Ev::ExtfragFallback), z.free, z.nr_pcp),
            (1, free, 0)
        );
    }
}
