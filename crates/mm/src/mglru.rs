//! The multi-gen LRU: the second implementation of the LRU interface (`policy.lru = "mglru"`,
//! `lru_gen.enabled = true`).
//!
//! # The problem
//! The active/inactive LRU learns that a mapped page is in use only by asking the rmap, one
//! folio at a time, and it sorts pages into just two bins. Under pressure, most of kswapd's
//! time goes into `page_vma_mapped_walk()` for pages that turn out to be hot, and the two
//! bins cannot tell a page used twice an hour ago from one used twice a second ago.
//!
//! # The idea
//! ```text
//!  max_seq ─┬─ gen (max_seq)     youngest   ← faults, promotions by the page-table walk
//!           ├─ gen (max_seq - 1)             ← activated folios           "active"
//!           ├─ gen (max_seq - 2)                                           "inactive"
//!  min_seq ─┴─ gen (min_seq)     oldest     ← eviction takes from here; read() adds here
//! ```
//! Each lruvec keeps up to four generations per type (anon, file), indexed by `seq % 4`.
//! *Aging* creates a new generation (`max_seq + 1`) after walking the processes' page tables
//! for young PTEs, so hot mapped pages are found in bulk, page table by page table (Bloom
//! filters remember which PTE tables were dense with young entries). *Eviction* consumes the
//! oldest generation. Pages accessed through file descriptors are sorted into *tiers* by the
//! number of accesses (`order_base_2(N)`); a feedback loop modelled on a PID controller
//! compares the refault rates of tiers and types and protects the tiers that refault more
//! than the first, and chooses anon or file by their refault rates weighted by swappiness.
//!
//! # In this model
//! - Per lruvec ([`LruGen`]): `max_seq`, `min_seq[type]`, the generation lists and page
//!   counts per generation/type/zone, the tier statistics and two Bloom filters. Eviction
//!   takes the zones' lists in the kernel's order and moves folios of zones above
//!   `sc->reclaim_idx` (kswapd woken for a lower zone's watermark boost) to the next
//!   generation instead of evicting them.
//! - Per folio, in its flags: the generation (`gen + 1`, [`pg::LRU_GEN_MASK`]), the refs
//!   counter of fd accesses ([`pg::LRU_REFS_MASK`]) with PG_referenced and PG_workingset,
//!   and which generation list it is linked on ([`pg::LRU_LIST_MASK`]). The kernel leaves a
//!   folio promoted by the page-table walk on its old list until `sort_folio()` or
//!   `inc_min_seq()` reaches it; the model does the same and needs the list bits because its
//!   list heads keep a tail pointer.
//! - The active/inactive sizes (`nr_active_*`, `nr_inactive_*`) are kept for compatibility,
//!   as `lru_gen_update_size()` does: the two youngest generations count as active.
//! - CPU: the page-table walk costs `model.cost.pt_walk_per_pte` per PTE (and per PMD entry
//!   it visits), charged to `reclaim_cpu.pt_walk_ns`; rmap walks cost `rmap_per_call` plus
//!   `rmap_per_mapping` per mapping as in the classic LRU, and eviction's unmaps and their
//!   TLB flushes go through the same `shrink_folio_list()` ([`crate::tlb`]); look-around
//!   PTEs are page-table work.
//!
//! # Where we differ from the kernel (v6.15–6.18)
//! - `NR_HIST_GENS` is 1 (the kernel's default), so the controller's history is one slot.
//! - The memcg LRU of `shrink_many()` (generations × bins) becomes a round-robin walk over
//!   the memcgs, stopping when `should_abort_scan()` says enough was reclaimed.
//! - The mm list of a memcg is the set of objects (VMAs) its tasks have faulted into; every
//!   listed mm is walked in a round (the kernel skips mms that did not run since the last
//!   round, which only saves the walk of PTE tables that hold no young entries).
//! - No non-leaf PMD accessed bit (`lru_gen.enabled` 0x0004): the Bloom filter alone decides
//!   which PTE tables to visit. A PTE table exists in the model where any of its 512 entries
//!   was ever used.
//! - An OOM kill decided by kswapd under `lru_gen.min_ttl_ms` takes the next task that
//!   allocates (the kernel picks the largest task by `oom_badness()`).
//! - No per-CPU batches: `folio_update_gen()` size updates apply at once.
//!
//! # Kernel references
//! mm/vmscan.c (v6.15): `lru_gen_add_folio()`/`lru_gen_del_folio()` and
//! `lru_gen_folio_seq()` (include/linux/mm_inline.h), `lru_gen_inc_refs()` (mm/swap.c),
//! `folio_update_gen()`, `folio_inc_gen()`, `inc_min_seq()`, `try_to_inc_min_seq()`,
//! `inc_max_seq()`, `try_to_inc_max_seq()`, `walk_mm()`/`walk_pte_range()`,
//! `lru_gen_look_around()`, `read_ctrl_pos()`, `reset_ctrl_pos()`, `positive_ctrl_err()`,
//! `get_type_to_scan()`, `get_tier_idx()`, `sort_folio()`, `isolate_folio()`,
//! `scan_folios()`, `isolate_folios()`, `evict_folios()`, `should_run_aging()`,
//! `get_nr_to_scan()`, `try_to_shrink_lruvec()`, `should_abort_scan()`,
//! `set_initial_priority()`, `lru_gen_shrink_node()`, `lru_gen_shrink_lruvec()`,
//! `lru_gen_age_node()`, `lruvec_is_reclaimable()`; mm/workingset.c `lru_gen_eviction()`,
//! `lru_gen_test_recent()`, `lru_gen_refault()`; seed 001.

use crate::list::{LinkStore, ListHead};
use crate::memory::{pte_pfn, pte_present, PTE_DIRTY, PTE_YOUNG};
use crate::page::pg;
use crate::types::*;
use crate::vmscan::{PassStats, ScanControl};
use crate::vmstat::Ev;
use crate::workingset::{workingset_events, KernelVersion, Shadow};
use crate::{Ctx, Mm, ObjKind};

/// Kernel: `MIN_NR_GENS`: two generations are needed for eviction to be possible.
pub const MIN_NR_GENS: u64 = 2;
/// Kernel: `MAX_NR_GENS`.
pub const MAX_NR_GENS: u64 = 4;
/// Kernel: `MAX_NR_TIERS`.
pub const MAX_NR_TIERS: usize = 4;
/// Kernel: `LRU_REFS_WIDTH` (v6.14+): the refs counter has two bits.
pub const LRU_REFS_WIDTH: u32 = 2;
/// Kernel: `MIN_LRU_BATCH` (`BITS_PER_LONG`).
pub const MIN_LRU_BATCH: u64 = 64;
/// Kernel: `MAX_LRU_BATCH`.
pub const MAX_LRU_BATCH: u64 = MIN_LRU_BATCH * 64;
/// Kernel: `MAX_SWAPPINESS`.
pub const MAX_SWAPPINESS: u64 = 200;
/// Kernel: `BLOOM_FILTER_SHIFT`: 2^15 bits per filter.
const BLOOM_FILTER_SHIFT: u32 = 15;
const BLOOM_WORDS: usize = (1 << BLOOM_FILTER_SHIFT) / 64;
/// PTEs per page table (x86-64 `PTRS_PER_PTE`).
pub const PTRS_PER_PTE: u64 = 512;
/// x86-64: `clamp(cache_line_size() / sizeof(pte_t), 2, 8)` in `suitable_to_scan()`.
const PTES_PER_CACHELINE: u64 = 8;
/// Zones per generation and type (`MAX_NR_ZONES` of `lrugen->folios`): the zone types
/// the model knows. The kernel's ZONE_MOVABLE and ZONE_DEVICE lists would always be empty.
const NR_ZONES: usize = crate::mmzone::NR_ZONE_TYPES;
/// The age field of a shadow entry: `token >> LRU_REFS_WIDTH` is compared under this mask.
const SEQ_MASK: u64 = (1u64 << 40) - 1;

/// Kernel: `lru_gen_from_seq()`.
#[inline]
pub fn lru_gen_from_seq(seq: u64) -> usize {
    (seq % MAX_NR_GENS) as usize
}

/// Kernel: `order_base_2()`: ceil(log2(n)), 0 for 0 and 1.
#[inline]
pub fn order_base_2(n: u64) -> usize {
    if n <= 1 {
        0
    } else {
        (64 - (n - 1).leading_zeros()) as usize
    }
}

/// Kernel: `lru_tier_from_refs()` (v6.14+): refs 0, 1 → tier 0; 2 → 1; 3, 4 → 2;
/// PG_workingset → tier 3.
#[inline]
pub fn lru_tier_from_refs(refs: u32, workingset: bool) -> usize {
    if workingset {
        MAX_NR_TIERS - 1
    } else {
        order_base_2(refs as u64)
    }
}

/// Kernel: `folio_lru_refs()`: the number of fd accesses, 0 without PG_referenced, else the
/// refs counter plus one (1..=4).
#[inline]
pub fn folio_lru_refs(flags: u32) -> u32 {
    if flags & pg::REFERENCED == 0 {
        0
    } else {
        ((flags & pg::LRU_REFS_MASK) >> pg::LRU_REFS_SHIFT) + 1
    }
}

/// Kernel: `folio_lru_refs()` before v6.14
/// ([`KernelVersion::mglru_folio_seq_by_workingset`]): the fd accesses beyond the first,
/// counted as the refs counter plus PG_workingset (0..=4). `folio_inc_refs()` sets
/// PG_referenced at the first access, PG_workingset at the second, then counts the refs
/// bits up.
#[inline]
pub fn folio_lru_refs_before_6_14(flags: u32) -> u32 {
    ((flags & pg::LRU_REFS_MASK) >> pg::LRU_REFS_SHIFT) + (flags & pg::WORKINGSET != 0) as u32
}

/// Kernel: `lru_tier_from_refs()` before v6.14: `order_base_2(refs + 1)` of
/// [`folio_lru_refs_before_6_14`]'s refs: 0 → tier 0; 1 → 1; 2, 3 → 2; 4 → 3. (The same
/// tier per number of fd accesses as v6.14's, from other flag bits.)
#[inline]
pub fn lru_tier_from_refs_before_6_14(refs: u32) -> usize {
    order_base_2(refs as u64 + 1)
}

/// Kernel: `folio_lru_gen()`: the generation in the flags, `None` when off the lists.
#[inline]
pub fn folio_lru_gen(flags: u32) -> Option<usize> {
    let g = (flags & pg::LRU_GEN_MASK) >> pg::LRU_GEN_SHIFT;
    if g == 0 {
        None
    } else {
        Some(g as usize - 1)
    }
}

#[inline]
fn folio_list_gen(flags: u32) -> usize {
    ((flags & pg::LRU_LIST_MASK) >> pg::LRU_LIST_SHIFT) as usize
}

/// Which types reclaim may evict at this swappiness (`for_each_evictable_type()`):
/// 0 → file only; 1..=200 → both; above 200 → anon only.
#[inline]
pub fn evictable(ty: usize, swappiness: u64) -> bool {
    if ty == ANON {
        swappiness != 0
    } else {
        swappiness <= MAX_SWAPPINESS
    }
}

/// Kernel: `struct ctrl_pos`: a refault rate (`refaulted / total`) with a gain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtrlPos {
    pub refaulted: u64,
    pub total: u64,
    pub gain: u64,
}

/// Kernel: `positive_ctrl_err()`: is the process variable `pv` not worse than the set point
/// `sp`, i.e. `pv.refaulted / pv.total * pv.gain <= sp.refaulted / sp.total * sp.gain`
/// (with `MIN_LRU_BATCH` of slack, and too few refaults counting as fine)?
pub fn positive_ctrl_err(sp: CtrlPos, pv: CtrlPos) -> bool {
    let lhs = pv.refaulted as u128 * (sp.total + MIN_LRU_BATCH) as u128 * sp.gain as u128;
    let rhs = (sp.refaulted + 1) as u128 * pv.total as u128 * pv.gain as u128;
    pv.refaulted < MIN_LRU_BATCH || lhs <= rhs
}

/// Page-table walk and look-around statistics (the `mm_stats` of `lru_gen_full`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WalkStats {
    /// `inc_max_seq()` calls: generations created.
    pub agings: u64,
    /// VMAs (objects) walked by `walk_mm()`.
    pub vmas_walked: u64,
    /// PMD entries visited (`MM_NONLEAF_TOTAL`).
    pub pmd_total: u64,
    /// PTE tables walked (`MM_NONLEAF_FOUND`).
    pub pmd_found: u64,
    /// PTE tables added to the next Bloom filter (`MM_NONLEAF_ADDED`).
    pub pmd_added: u64,
    /// PTEs visited by the walk (`MM_LEAF_TOTAL`).
    pub pte_total: u64,
    /// Young PTEs the walk cleared (`MM_LEAF_YOUNG`).
    pub pte_young: u64,
    /// Look-arounds run from the rmap walk.
    pub look_arounds: u64,
    /// Young PTEs found by look-around beyond the one the rmap walk found.
    pub look_around_young: u64,
}

/// Kernel: `struct lru_gen_folio` (+ the `lru_gen_mm_state` Bloom filters) of one lruvec.
#[derive(Clone, Debug)]
pub struct LruGen {
    /// The youngest generation (shared by both types).
    pub max_seq: u64,
    /// The oldest generation of each type.
    pub min_seq: [u64; 2],
    /// When each generation was created (simulated ns).
    pub timestamps: [u64; MAX_NR_GENS as usize],
    /// The generation lists `[gen][type][zone]` (`lrugen->folios`, one per zone as in 6.1
    /// and v6.12; the zone is the index into [`Mm::zones`]), so eviction can take the
    /// eligible zones first (`scan_folios()`).
    pub folios: [[[ListHead; NR_ZONES]; 2]; MAX_NR_GENS as usize],
    /// Pages per generation, type and zone, by the generation in the folio flags.
    pub nr_pages: [[[u64; NR_ZONES]; 2]; MAX_NR_GENS as usize],
    /// The controller's integral term: EMAs per type and tier.
    pub avg_refaulted: [[u64; MAX_NR_TIERS]; 2],
    pub avg_total: [[u64; MAX_NR_TIERS]; 2],
    /// The proportional term of the current generation (history slot 0).
    pub protected: [[u64; MAX_NR_TIERS]; 2],
    pub evicted: [[u64; MAX_NR_TIERS]; 2],
    pub refaulted: [[u64; MAX_NR_TIERS]; 2],
    /// `mm_state.seq`: the last aging round that finished.
    pub mm_seq: u64,
    /// Bloom filters of dense PTE tables, `[seq % 2]`; empty = not allocated (test passes).
    pub filters: [Vec<u64>; 2],
    pub walk: WalkStats,
}

impl Default for LruGen {
    /// Kernel: `lru_gen_init_lruvec()`: `max_seq = MIN_NR_GENS + 1`, `min_seq = 0` (four
    /// generations), `mm_state.seq = MIN_NR_GENS`.
    fn default() -> Self {
        LruGen {
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0, 0],
            timestamps: [0; MAX_NR_GENS as usize],
            folios: Default::default(),
            nr_pages: Default::default(),
            avg_refaulted: Default::default(),
            avg_total: Default::default(),
            protected: Default::default(),
            evicted: Default::default(),
            refaulted: Default::default(),
            mm_seq: MIN_NR_GENS,
            filters: [Vec::new(), Vec::new()],
            walk: WalkStats::default(),
        }
    }
}

impl LruGen {
    /// Generations of a type: `max_seq - min_seq[type] + 1`, in [2, 4].
    pub fn nr_gens(&self, ty: usize) -> u64 {
        self.max_seq - self.min_seq[ty] + 1
    }

    /// Kernel: `lru_gen_is_active()`: the two youngest generations are "active".
    pub fn is_active(&self, gen: usize) -> bool {
        gen == lru_gen_from_seq(self.max_seq) || gen == lru_gen_from_seq(self.max_seq - 1)
    }

    /// Kernel: `evictable_min_seq()`: the oldest generation over the evictable types.
    pub fn evictable_min_seq(&self, swappiness: u64) -> u64 {
        let mut seq = u64::MAX;
        for ty in [ANON, FILE] {
            if evictable(ty, swappiness) {
                seq = seq.min(self.min_seq[ty]);
            }
        }
        seq
    }

    /// Pages in the generations of the types evictable at this swappiness (the size
    /// `should_run_aging()` and `lruvec_is_sizable()` add up).
    pub fn evictable_pages(&self, swappiness: u64) -> u64 {
        [ANON, FILE]
            .into_iter()
            .filter(|&ty| evictable(ty, swappiness))
            .flat_map(|ty| {
                (self.min_seq[ty]..=self.max_seq).map(move |s| {
                    let g = lru_gen_from_seq(s);
                    self.nr_pages[g][ty][0] + self.nr_pages[g][ty][1]
                })
            })
            .sum()
    }

    /// Kernel: `read_ctrl_pos()`: refaulted and total (EMA plus the current generation's
    /// evicted + protected) of one tier, or of all tiers with `tier == MAX_NR_TIERS`.
    pub fn read_ctrl_pos(&self, ty: usize, tier: usize, gain: u64) -> CtrlPos {
        let tiers = if tier == MAX_NR_TIERS {
            0..MAX_NR_TIERS
        } else {
            tier..tier + 1
        };
        let mut pos = CtrlPos {
            refaulted: 0,
            total: 0,
            gain,
        };
        for t in tiers {
            pos.refaulted += self.avg_refaulted[ty][t] + self.refaulted[ty][t];
            pos.total += self.avg_total[ty][t] + self.protected[ty][t] + self.evicted[ty][t];
        }
        pos
    }

    /// Kernel: `reset_ctrl_pos()`. With `carryover` (min_seq of the type advanced) the
    /// current generation's figures are folded into the EMAs (factor 1/2) and, with one
    /// history slot, cleared.
    pub fn reset_ctrl_pos(&mut self, ty: usize, carryover: bool) {
        if !carryover {
            return;
        }
        for t in 0..MAX_NR_TIERS {
            self.avg_refaulted[ty][t] = (self.avg_refaulted[ty][t] + self.refaulted[ty][t]) / 2;
            self.avg_total[ty][t] =
                (self.avg_total[ty][t] + self.protected[ty][t] + self.evicted[ty][t]) / 2;
            self.refaulted[ty][t] = 0;
            self.evicted[ty][t] = 0;
            self.protected[ty][t] = 0;
        }
    }

    /// Kernel: `get_type_to_scan()`: file unless its refault rate, weighted by
    /// `200 - swappiness`, is worse than anon's weighted by `swappiness`.
    pub fn get_type_to_scan(&self, swappiness: u64) -> usize {
        if swappiness <= 1 {
            return FILE;
        }
        if swappiness >= MAX_SWAPPINESS {
            return ANON;
        }
        let sp = self.read_ctrl_pos(ANON, MAX_NR_TIERS, swappiness);
        let pv = self.read_ctrl_pos(FILE, MAX_NR_TIERS, MAX_SWAPPINESS - swappiness);
        if positive_ctrl_err(sp, pv) {
            FILE
        } else {
            ANON
        }
    }

    /// Kernel: `get_type_to_scan()` + the obvious choices of `isolate_folios()` before v6.14
    /// ([`KernelVersion::mglru_type_by_all_tiers`]): (type, last tier to evict or `None` for
    /// `get_tier_idx()`). No swap → file; anon's oldest generation older than file's →
    /// anon; swappiness 1 → file, 200 → anon; else the first tiers compared with gains
    /// swappiness : 200 - swappiness, and the chosen type's tiers compared with the other
    /// type's first tier to find the last tier to evict. (6.1 also picks file for reclaim
    /// without `__GFP_IO`, which the model's reclaim always has.)
    pub fn get_type_to_scan_before_6_14(&self, swappiness: u64) -> (usize, Option<usize>) {
        if swappiness == 0 {
            return (FILE, None);
        }
        if self.min_seq[ANON] < self.min_seq[FILE] {
            return (ANON, None);
        }
        if swappiness == 1 {
            return (FILE, None);
        }
        if swappiness >= MAX_SWAPPINESS {
            return (ANON, None);
        }
        let gain = [swappiness, MAX_SWAPPINESS - swappiness];
        let sp = self.read_ctrl_pos(ANON, 0, gain[ANON]);
        let pv = self.read_ctrl_pos(FILE, 0, gain[FILE]);
        let ty = if positive_ctrl_err(sp, pv) {
            FILE
        } else {
            ANON
        };
        let sp = self.read_ctrl_pos(1 - ty, 0, gain[1 - ty]);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(ty, tier, gain[ty]);
            if !positive_ctrl_err(sp, pv) {
                break;
            }
            tier += 1;
        }
        (ty, Some(tier - 1))
    }

    /// Kernel: `get_tier_idx()`: the highest tier whose refault rate is not worse than the
    /// first tier's (gain 2 vs 3: a tier must refault 1.5x more to be protected); tiers above
    /// the returned one are protected by `sort_folio()`.
    /// Before v6.14 ([`KernelVersion::mglru_type_by_all_tiers`]) the gains are 1:2.
    pub fn get_tier_idx(&self, ty: usize, kernel: KernelVersion) -> usize {
        let (gsp, gpv) = if kernel.mglru_type_by_all_tiers() {
            (2, 3)
        } else {
            (1, 2)
        };
        let sp = self.read_ctrl_pos(ty, 0, gsp);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(ty, tier, gpv);
            if !positive_ctrl_err(sp, pv) {
                break;
            }
            tier += 1;
        }
        tier - 1
    }

    /// Kernel: `lru_gen_folio_seq()`: the generation a folio joins when added to the LRU.
    /// Active (faulted-in, activated) → `max_seq - 1` (`max_seq` if PG_workingset); rotated
    /// after writeback (`reclaiming`) → the oldest; anon outside the swap cache or a folio
    /// waiting for writeback it was reclaimed for → `max_seq - 1`; the rest (read() misses,
    /// swap-cache folios) → the oldest, or one younger if PG_workingset. Never older than
    /// `min_seq` of the type. Before v6.14 the older placement
    /// ([`KernelVersion::mglru_folio_seq_by_workingset`]).
    pub fn folio_seq(
        &self,
        flags: u32,
        anon_not_swapcache: bool,
        reclaiming: bool,
        kernel: KernelVersion,
    ) -> u64 {
        let ty = (flags & pg::SWAPBACKED == 0) as usize;
        let dirty_under_reclaim =
            flags & pg::RECLAIM != 0 && flags & (pg::DIRTY | pg::WRITEBACK) != 0;
        if !kernel.mglru_folio_seq_by_workingset() {
            // Before v6.14: lru_gen_add_folio() of 6.1.69+ / 6.8-6.13.
            let min = self.min_seq[ty];
            return if flags & pg::ACTIVE != 0 {
                self.max_seq
            } else if anon_not_swapcache || dirty_under_reclaim {
                self.max_seq - 1
            } else if reclaiming || min + MIN_NR_GENS >= self.max_seq {
                min
            } else {
                min + 1
            };
        }
        let ws = (flags & pg::WORKINGSET != 0) as u64;
        let g = if flags & pg::ACTIVE != 0 {
            MIN_NR_GENS - ws
        } else if reclaiming {
            MAX_NR_GENS
        } else if anon_not_swapcache || dirty_under_reclaim {
            MIN_NR_GENS
        } else {
            MAX_NR_GENS - ws
        };
        (self.max_seq + 1 - g).max(self.min_seq[ty])
    }

    fn bloom_keys(obj: u32, pmd: u64) -> (usize, usize) {
        // hash_ptr() of the PMD: a fixed 64-bit mix of (VMA, PMD index), two 15-bit keys.
        let mut h = (obj as u64) << 32 ^ pmd;
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
        let m = (1u64 << BLOOM_FILTER_SHIFT) - 1;
        ((h & m) as usize, ((h >> BLOOM_FILTER_SHIFT) & m) as usize)
    }

    /// Kernel: `test_bloom_filter()`: true when the filter of `seq` is not allocated.
    pub fn test_bloom(&self, seq: u64, obj: u32, pmd: u64) -> bool {
        let f = &self.filters[(seq % 2) as usize];
        if f.is_empty() {
            return true;
        }
        let (a, b) = Self::bloom_keys(obj, pmd);
        f[a / 64] & (1 << (a % 64)) != 0 && f[b / 64] & (1 << (b % 64)) != 0
    }

    /// Kernel: `update_bloom_filter()`.
    pub fn update_bloom(&mut self, seq: u64, obj: u32, pmd: u64) {
        let f = &mut self.filters[(seq % 2) as usize];
        if f.is_empty() {
            return;
        }
        let (a, b) = Self::bloom_keys(obj, pmd);
        f[a / 64] |= 1 << (a % 64);
        f[b / 64] |= 1 << (b % 64);
    }

    /// Kernel: `reset_bloom_filter()`: allocate (or clear) the filter of `seq`.
    pub fn reset_bloom(&mut self, seq: u64) {
        let f = &mut self.filters[(seq % 2) as usize];
        if f.is_empty() {
            *f = vec![0; BLOOM_WORDS];
        } else {
            f.iter_mut().for_each(|w| *w = 0);
        }
    }
}

/// Per tier: (avg_refaulted, avg_total, refaulted, evicted, protected).
pub type TierStats = (u64, u64, u64, u64, u64);

/// One memcg's generations as `/sys/kernel/debug/lru_gen_full` shows them.
#[derive(Clone, Debug, PartialEq)]
pub struct LruGenView {
    pub memcg: usize,
    pub max_seq: u64,
    pub min_seq: [u64; 2],
    /// (seq, age in ms, anon pages, file pages), oldest first.
    pub gens: Vec<(u64, u64, u64, u64)>,
    /// Per type and tier: (avg_refaulted, avg_total, refaulted, evicted, protected).
    pub tiers: [[TierStats; MAX_NR_TIERS]; 2],
    pub walk: WalkStats,
}

impl Mm {
    /// `__update_lru_size()`: the compatibility active/inactive sizes of lruvec and zone.
    fn update_lru_size(&mut self, lv: usize, lru: usize, zone: usize, nr: u64, add: bool) {
        let v = &mut self.lruvecs[lv];
        let z = &mut self.zones[zone].nr_lru[lru];
        if add {
            v.nr[lru] += nr;
            v.nr_zone[zone][lru] += nr;
            *z += nr;
        } else {
            v.nr[lru] -= nr;
            v.nr_zone[zone][lru] -= nr;
            *z -= nr;
        }
    }

    /// Kernel: `lru_gen_update_size()`: move a folio's pages from generation `old` to `new`
    /// (either may be none), keeping the active/inactive compatibility sizes.
    fn lru_gen_update_size(&mut self, pfn: Pfn, old: Option<usize>, new: Option<usize>) {
        let lv = self.pages.hot[pfn as usize].memcg as usize;
        let ty = self.pages.is_file_lru(pfn) as usize;
        let nr = self.pages.nr_pages(pfn);
        let zone = self.zone_of(pfn);
        if let Some(g) = old {
            let lg = &mut self.lruvecs[lv].lrugen;
            lg.nr_pages[g][ty][zone] -= nr;
            let lru = 2 * ty + lg.is_active(g) as usize;
            self.update_lru_size(lv, lru, zone, nr, false);
        }
        if let Some(g) = new {
            let lg = &mut self.lruvecs[lv].lrugen;
            lg.nr_pages[g][ty][zone] += nr;
            let lru = 2 * ty + lg.is_active(g) as usize;
            self.update_lru_size(lv, lru, zone, nr, true);
        }
    }

    fn anon_not_swapcache(&self, pfn: Pfn) -> bool {
        !self.pages.test(pfn, pg::SWAPCACHE)
            && self.objects[self.pages.obj[pfn as usize] as usize].kind == ObjKind::Anon
    }

    /// Kernel: `lru_gen_add_folio()`: put a folio on the generation `lru_gen_folio_seq()`
    /// picks, at the head (at the tail when `reclaiming`: rotation after writeback). Before
    /// v6.14 an active folio's refs and PG_referenced are cleared as it is added.
    pub(crate) fn lru_gen_add_folio(&mut self, pfn: Pfn, reclaiming: bool) {
        let lv = self.pages.hot[pfn as usize].memcg as usize;
        let ty = self.pages.is_file_lru(pfn) as usize;
        let f = self.pages.hot[pfn as usize].flags;
        let seq = self.lruvecs[lv].lrugen.folio_seq(
            f,
            self.anon_not_swapcache(pfn),
            reclaiming,
            self.cfg.kernel,
        );
        let gen = lru_gen_from_seq(seq);
        let mut clear = pg::LRU_GEN_MASK | pg::LRU_LIST_MASK | pg::ACTIVE;
        if f & pg::ACTIVE != 0 && !self.cfg.kernel.mglru_folio_seq_by_workingset() {
            // Before v6.14 an active folio also loses its refs and PG_referenced (not
            // PG_workingset, which PSI accounting of a refault may still need).
            clear |= pg::LRU_REFS_MASK | pg::REFERENCED;
        }
        let f = f & !clear;
        self.pages.hot[pfn as usize].flags = f
            | ((gen as u32 + 1) << pg::LRU_GEN_SHIFT)
            | ((gen as u32) << pg::LRU_LIST_SHIFT)
            | pg::LRU;
        self.lru_gen_update_size(pfn, None, Some(gen));
        let zone = self.zone_of(pfn);
        let l: &mut [crate::page::Frame] = &mut self.pages.hot;
        let list = &mut self.lruvecs[lv].lrugen.folios[gen][ty][zone];
        if reclaiming {
            l.add_tail(list, pfn);
        } else {
            l.add_head(list, pfn);
        }
    }

    /// Kernel: `lru_gen_del_folio()`: take a folio off its generation list. Unless reclaim
    /// is isolating it, a folio of an active generation leaves with PG_active set.
    pub(crate) fn lru_gen_del_folio(&mut self, pfn: Pfn, reclaiming: bool) {
        let lv = self.pages.hot[pfn as usize].memcg as usize;
        let ty = self.pages.is_file_lru(pfn) as usize;
        let f = self.pages.hot[pfn as usize].flags;
        let gen = folio_lru_gen(f).expect("lru_gen_del_folio: folio not on a generation");
        let zone = self.zone_of(pfn);
        let l: &mut [crate::page::Frame] = &mut self.pages.hot;
        l.del(
            &mut self.lruvecs[lv].lrugen.folios[folio_list_gen(f)][ty][zone],
            pfn,
        );
        self.lru_gen_update_size(pfn, Some(gen), None);
        let active = !reclaiming && self.lruvecs[lv].lrugen.is_active(gen);
        let mut f = f & !(pg::LRU_GEN_MASK | pg::LRU_LIST_MASK | pg::LRU);
        if active {
            f |= pg::ACTIVE;
        }
        self.pages.hot[pfn as usize].flags = f;
    }

    /// Relink a folio onto the list of generation `gen` of its zone
    /// (`list_move()`/`list_move_tail()` onto `lrugen->folios[gen][type][zone]`).
    fn lru_gen_list_move(&mut self, pfn: Pfn, gen: usize, tail: bool) {
        let lv = self.pages.hot[pfn as usize].memcg as usize;
        let ty = self.pages.is_file_lru(pfn) as usize;
        let zone = self.zone_of(pfn);
        let f = self.pages.hot[pfn as usize].flags;
        let l: &mut [crate::page::Frame] = &mut self.pages.hot;
        let lists = &mut self.lruvecs[lv].lrugen.folios;
        l.del(&mut lists[folio_list_gen(f)][ty][zone], pfn);
        if tail {
            l.add_tail(&mut lists[gen][ty][zone], pfn);
        } else {
            l.add_head(&mut lists[gen][ty][zone], pfn);
        }
        self.pages.hot[pfn as usize].flags =
            (f & !pg::LRU_LIST_MASK) | ((gen as u32) << pg::LRU_LIST_SHIFT);
    }

    /// Kernel: `lru_gen_inc_refs()` (`folio_mark_accessed()` under the multi-gen LRU): the
    /// first fd access sets PG_referenced, the next ones count up to 4, then PG_workingset.
    /// No list move: tiers are sorted at eviction. Before v6.14 (`folio_inc_refs()`,
    /// [`KernelVersion::mglru_folio_seq_by_workingset`]) the second access sets
    /// PG_workingset and the later ones count the refs bits up to 3, where they stay.
    pub(crate) fn lru_gen_inc_refs(&mut self, pfn: Pfn) {
        let f = self.pages.hot[pfn as usize].flags;
        if f & pg::UNEVICTABLE != 0 {
            return;
        }
        if !self.cfg.kernel.mglru_folio_seq_by_workingset() {
            let nf = if f & pg::REFERENCED == 0 {
                f | pg::REFERENCED
            } else if f & pg::WORKINGSET == 0 {
                f | pg::WORKINGSET
            } else if f & pg::LRU_REFS_MASK != pg::LRU_REFS_MASK {
                f + (1 << pg::LRU_REFS_SHIFT)
            } else {
                f
            };
            self.pages.hot[pfn as usize].flags = nf;
            return;
        }
        if f & pg::REFERENCED == 0 {
            self.pages.hot[pfn as usize].flags = (f & !pg::LRU_REFS_MASK) | pg::REFERENCED;
            return;
        }
        if f & pg::LRU_REFS_MASK == pg::LRU_REFS_MASK {
            self.pages.set(pfn, pg::WORKINGSET);
            return;
        }
        self.pages.hot[pfn as usize].flags = f + (1 << pg::LRU_REFS_SHIFT);
    }

    /// Kernel: `folio_update_gen()`: a young PTE seen by the page-table walk (or by
    /// look-around with a walk context). The first sighting of a folio that is neither
    /// referenced nor workingset only sets PG_referenced; otherwise the folio moves to
    /// generation `gen` (in its flags and counts, not on the lists) and becomes workingset.
    /// Returns the previous generation when the folio was moved. Before v6.14
    /// ([`KernelVersion::mglru_folio_seq_by_workingset`]) every young PTE moves the folio,
    /// clearing its refs, PG_referenced and PG_workingset; a folio reclaim has isolated
    /// gets PG_referenced instead (for `shrink_folio_list()`).
    fn folio_update_gen(&mut self, pfn: Pfn, gen: usize) -> Option<usize> {
        let f = self.pages.hot[pfn as usize].flags;
        if !self.cfg.kernel.mglru_folio_seq_by_workingset() {
            let Some(old) = folio_lru_gen(f) else {
                self.pages.set(pfn, pg::REFERENCED);
                return None;
            };
            self.pages.hot[pfn as usize].flags =
                (f & !(pg::LRU_GEN_MASK | pg::LRU_REFS_MASK | pg::REFERENCED | pg::WORKINGSET))
                    | ((gen as u32 + 1) << pg::LRU_GEN_SHIFT);
            if old != gen {
                self.lru_gen_update_size(pfn, Some(old), Some(gen));
            }
            return Some(old);
        }
        if f & (pg::REFERENCED | pg::WORKINGSET) == 0 {
            self.pages.hot[pfn as usize].flags = (f & !pg::LRU_REFS_MASK) | pg::REFERENCED;
            return None;
        }
        let old = folio_lru_gen(f)?;
        self.pages.hot[pfn as usize].flags =
            (f & !(pg::LRU_GEN_MASK | pg::LRU_REFS_MASK | pg::REFERENCED))
                | ((gen as u32 + 1) << pg::LRU_GEN_SHIFT)
                | pg::WORKINGSET;
        if old != gen {
            self.lru_gen_update_size(pfn, Some(old), Some(gen));
        }
        Some(old)
    }

    /// Kernel: `lru_gen_set_refs()`: a young PTE found by the rmap walk. First sighting of a
    /// folio neither referenced nor workingset: mark it referenced, keep it (false);
    /// otherwise clear the refs and make it workingset: activate it (true).
    pub(crate) fn lru_gen_set_refs(&mut self, pfn: Pfn) -> bool {
        let f = self.pages.hot[pfn as usize].flags;
        if f & (pg::REFERENCED | pg::WORKINGSET) == 0 {
            self.pages.hot[pfn as usize].flags = (f & !pg::LRU_REFS_MASK) | pg::REFERENCED;
            return false;
        }
        self.pages.hot[pfn as usize].flags =
            (f & !(pg::LRU_REFS_MASK | pg::REFERENCED)) | pg::WORKINGSET;
        true
    }

    /// Kernel: `folio_inc_gen()`: move a folio of the oldest generation to the next one,
    /// clearing its refs (PG_workingset stays; before v6.14 it is cleared too); a folio the
    /// walk already promoted keeps its generation. The caller relinks it. Returns the new generation.
    fn folio_inc_gen(&mut self, pfn: Pfn, reclaiming: bool) -> usize {
        let lv = self.pages.hot[pfn as usize].memcg as usize;
        let ty = self.pages.is_file_lru(pfn) as usize;
        let old_gen = lru_gen_from_seq(self.lruvecs[lv].lrugen.min_seq[ty]);
        let f = self.pages.hot[pfn as usize].flags;
        if let Some(g) = folio_lru_gen(f) {
            if g != old_gen {
                return g;
            }
        }
        let new_gen = (old_gen + 1) % MAX_NR_GENS as usize;
        let mut clear = pg::LRU_GEN_MASK | pg::LRU_REFS_MASK | pg::REFERENCED;
        if !self.cfg.kernel.mglru_folio_seq_by_workingset() {
            // Before v6.14 LRU_REFS_FLAGS includes PG_workingset.
            clear |= pg::WORKINGSET;
        }
        let mut nf = (f & !clear) | ((new_gen as u32 + 1) << pg::LRU_GEN_SHIFT);
        if reclaiming {
            nf |= pg::RECLAIM;
        }
        self.pages.hot[pfn as usize].flags = nf;
        self.lru_gen_update_size(pfn, Some(old_gen), Some(new_gen));
        new_gen
    }

    /// Kernel: `inc_min_seq()`: retire the oldest generation of a type, moving what is left
    /// in it to the next one, zone by zone from the lowest (counted as protected per tier,
    /// except the lazily promoted workingset). A type that is not evictable at this
    /// swappiness advances without moving: its old folios become part of the generation
    /// `inc_max_seq()` is about to create.
    fn inc_min_seq(&mut self, lv: usize, ty: usize, swappiness: u64) {
        if evictable(ty, swappiness) {
            let old_gen = lru_gen_from_seq(self.lruvecs[lv].lrugen.min_seq[ty]);
            for zone in 0..NR_ZONES {
                loop {
                    let pfn = self.lruvecs[lv].lrugen.folios[old_gen][ty][zone].tail;
                    if pfn == NIL {
                        break;
                    }
                    let f = self.pages.hot[pfn as usize].flags;
                    let refs = folio_lru_refs(f);
                    let ws = f & pg::WORKINGSET != 0;
                    let new_gen = self.folio_inc_gen(pfn, false);
                    self.lru_gen_list_move(pfn, new_gen, true);
                    // Before v6.14 inc_min_seq() counts nothing as protected.
                    if refs + ws as u32 != (1 << LRU_REFS_WIDTH) + 1
                        && self.cfg.kernel.mglru_min_seqs_move_independently()
                    {
                        let tier = lru_tier_from_refs(refs, ws);
                        let nr = self.pages.nr_pages(pfn);
                        self.lruvecs[lv].lrugen.protected[ty][tier] += nr;
                    }
                }
            }
        }
        let lg = &mut self.lruvecs[lv].lrugen;
        lg.reset_ctrl_pos(ty, true);
        lg.min_seq[ty] += 1;
    }

    /// Kernel: `try_to_inc_min_seq()`: advance `min_seq` of the evictable types over empty
    /// generations (every zone's list empty; keeping at least two), and keep anon and file
    /// within reach of each other. Before v6.14 ([`KernelVersion::mglru_min_seqs_move_independently`]) with
    /// swap, anon's `min_seq` may not pass file's and file's only follows anon's. Returns
    /// whether any advanced.
    fn try_to_inc_min_seq(&mut self, lv: usize, swappiness: u64) -> bool {
        let lg = &self.lruvecs[lv].lrugen;
        let mut min_seq = lg.min_seq;
        for (ty, seq) in min_seq.iter_mut().enumerate() {
            if !evictable(ty, swappiness) {
                continue;
            }
            while *seq + MIN_NR_GENS <= lg.max_seq
                && lg.folios[lru_gen_from_seq(*seq)][ty]
                    .iter()
                    .all(ListHead::is_empty)
            {
                *seq += 1;
            }
        }
        if !self.cfg.kernel.mglru_min_seqs_move_independently() {
            // 6.1: "see the comment on lru_gen_struct".
            if swappiness != 0 {
                min_seq[ANON] = min_seq[ANON].min(min_seq[FILE]);
                min_seq[FILE] = min_seq[ANON].max(lg.min_seq[FILE]);
            }
        } else if swappiness != 0 && swappiness <= MAX_SWAPPINESS {
            let seq = lg.max_seq - MIN_NR_GENS;
            if min_seq[ANON] > seq && min_seq[FILE] < seq {
                min_seq[ANON] = seq;
            } else if min_seq[FILE] > seq && min_seq[ANON] < seq {
                min_seq[FILE] = seq;
            }
        }
        let mut success = false;
        for (ty, &seq) in min_seq.iter().enumerate() {
            let lg = &mut self.lruvecs[lv].lrugen;
            if !evictable(ty, swappiness) || seq <= lg.min_seq[ty] {
                continue;
            }
            lg.reset_ctrl_pos(ty, true);
            lg.min_seq[ty] = seq;
            success = true;
        }
        success
    }

    /// Kernel: `inc_max_seq()`: create a new youngest generation, retiring the oldest of a
    /// type that has four already; the generation that was second youngest turns inactive.
    fn inc_max_seq(&mut self, lv: usize, seq: u64, swappiness: u64, now: u64) -> bool {
        if seq != self.lruvecs[lv].lrugen.max_seq {
            return false;
        }
        for ty in [ANON, FILE] {
            if self.lruvecs[lv].lrugen.nr_gens(ty) == MAX_NR_GENS {
                self.inc_min_seq(lv, ty, swappiness);
            }
        }
        let lg = &self.lruvecs[lv].lrugen;
        let prev = lru_gen_from_seq(lg.max_seq - 1);
        let next = lru_gen_from_seq(lg.max_seq + 1);
        let (pn, nn) = (lg.nr_pages[prev], lg.nr_pages[next]);
        for ty in [ANON, FILE] {
            for zone in 0..self.zones.len() {
                // prev turns inactive, next (the new youngest) turns active.
                let (p, n) = (pn[ty][zone], nn[ty][zone]);
                self.update_lru_size(lv, 2 * ty + 1, zone, p, false);
                self.update_lru_size(lv, 2 * ty, zone, p, true);
                self.update_lru_size(lv, 2 * ty, zone, n, false);
                self.update_lru_size(lv, 2 * ty + 1, zone, n, true);
            }
        }
        let lg = &mut self.lruvecs[lv].lrugen;
        lg.reset_ctrl_pos(ANON, false);
        lg.reset_ctrl_pos(FILE, false);
        lg.timestamps[next] = now;
        lg.max_seq += 1;
        lg.walk.agings += 1;
        true
    }

    /// Kernel: `try_to_inc_max_seq()`: one aging round: walk the page tables of the memcg's
    /// processes (`walk_mm()`), promoting young folios to generation `seq`, then
    /// `inc_max_seq()`. Returns false when another reclaimer already finished this round.
    fn try_to_inc_max_seq(&mut self, ctx: &mut Ctx, lv: usize, seq: u64, swappiness: u64) -> bool {
        if seq <= self.lruvecs[lv].lrugen.mm_seq {
            return false;
        }
        // The aging allocates a walk context that the rest of this reclaim call keeps
        // (set_mm_walk(NULL, true)), so look-around batches promotions from now on.
        self.mm_walk_active = true;
        self.lruvecs[lv].lrugen.reset_bloom(seq + 1);
        for obj in 0..self.objects.len() {
            self.walk_vma(ctx, lv, obj as u32, seq, swappiness);
        }
        self.lruvecs[lv].lrugen.mm_seq = seq;
        self.inc_max_seq(lv, seq, swappiness, ctx.now)
    }

    /// Kernel: `walk_mm()` → `walk_pmd_range()` → `walk_pte_range()` over one VMA (object):
    /// visit the PTE tables the Bloom filter of `seq` names, clear young PTEs of this memcg's
    /// folios and promote them to generation `seq`; dense tables go into the next filter.
    fn walk_vma(&mut self, ctx: &mut Ctx, lv: usize, obj: u32, seq: u64, swappiness: u64) {
        let o = &self.objects[obj as usize];
        if !o.on_mm_list(lv) {
            return;
        }
        // should_skip_vma(): VMAs without recency (vma_has_recency(): MADV_RANDOM /
        // MADV_SEQUENTIAL); anon VMAs when anon is not evictable; file VMAs never mapped.
        let file = o.kind == ObjKind::File;
        if !o.has_recency() {
            return;
        }
        if !file && swappiness == 0 {
            return;
        }
        if file && o.mapped.is_empty() {
            return;
        }
        let size = o.size_pages;
        let new_gen = lru_gen_from_seq(seq);
        let pte_ns = self.cfg.costs.pt_walk_per_pte_ns;
        let mut cost = 0u64;
        self.lruvecs[lv].lrugen.walk.vmas_walked += 1;
        let nr_pmds = size.div_ceil(PTRS_PER_PTE);
        for pmd in 0..nr_pmds {
            cost += pte_ns;
            self.lruvecs[lv].lrugen.walk.pmd_total += 1;
            if !self.lruvecs[lv].lrugen.test_bloom(seq, obj, pmd) {
                continue;
            }
            let start = pmd * PTRS_PER_PTE;
            let end = (start + PTRS_PER_PTE).min(size);
            let (total, young, present) = self.walk_pte_range(lv, obj, start, end, new_gen);
            if !present {
                // pmd_none(): no PTE table here.
                continue;
            }
            cost += total * pte_ns;
            let lg = &mut self.lruvecs[lv].lrugen;
            lg.walk.pmd_found += 1;
            lg.walk.pte_total += total;
            lg.walk.pte_young += young;
            if young * PTES_PER_CACHELINE >= total {
                lg.walk.pmd_added += 1;
                lg.update_bloom(seq + 1, obj, pmd);
            }
        }
        ctx.cpu_ns += cost;
        self.reclaim_cpu.pt_walk_ns += cost;
    }

    /// The PTE loop of `walk_pte_range()` (and of `lru_gen_look_around()` with a walk
    /// context) over pages [start, end) of `obj`. Returns (PTEs visited, young PTEs cleared,
    /// whether any entry is in use).
    fn walk_pte_range(
        &mut self,
        lv: usize,
        obj: u32,
        start: u64,
        end: u64,
        new_gen: usize,
    ) -> (u64, u64, bool) {
        let (young, present) = self.update_young_range(true, lv, obj, start, end, new_gen);
        (end - start, young, present)
    }

    /// The PTE loop shared by `walk_pte_range()` and `lru_gen_look_around()`: clear the
    /// young PTEs of memcg `lv`'s folios in pages [start, end) of `obj` and update each
    /// folio once per run of its PTEs (`walk_update_folio()`). Returns (young PTEs, whether
    /// any entry is in use).
    fn update_young_range(
        &mut self,
        walk: bool,
        lv: usize,
        obj: u32,
        start: u64,
        end: u64,
        new_gen: usize,
    ) -> (u64, bool) {
        let mut young = 0;
        let mut present = false;
        let mut last = NIL;
        let mut last_dirty = false;
        let file = self.objects[obj as usize].kind == ObjKind::File;
        // Before v6.3, look-around without a walk context batches its moves (see
        // look_around_batch_before_6_3()): the PTEs whose folio needs moving are counted
        // and the folios kept (at most MIN_LRU_BATCH PTEs, so as many folios).
        let batch = !walk && !self.cfg.kernel.mglru_look_around_activates_each();
        let mut pending = [NIL; MIN_LRU_BATCH as usize];
        let (mut nr_pending, mut bits) = (0usize, 0u64);
        for i in start..end {
            if i + crate::prefetch::WALK_AHEAD < end {
                self.prefetch_frame(obj, (i + crate::prefetch::WALK_AHEAD) as u32);
            }
            let Some((pfn, dirty)) = self.clear_young_pte(lv, obj, i, file, &mut present) else {
                continue;
            };
            if batch {
                let g = folio_lru_gen(self.pages.hot[pfn as usize].flags);
                if g.is_some_and(|g| g != new_gen) {
                    bits += 1;
                    if nr_pending == 0 || pending[nr_pending - 1] != pfn {
                        pending[nr_pending] = pfn;
                        nr_pending += 1;
                    }
                }
            }
            if pfn != last {
                self.walk_update_folio(walk, batch, last, new_gen, last_dirty);
                last = pfn;
                last_dirty = false;
            }
            last_dirty |= dirty;
            young += 1;
        }
        self.walk_update_folio(walk, batch, last, new_gen, last_dirty);
        if batch {
            self.look_around_batch_before_6_3(&pending[..nr_pending], bits, new_gen);
        }
        (young, present)
    }

    /// The end of 6.1's `lru_gen_look_around()` without a walk context (before v6.3's "mm:
    /// multi-gen LRU: simplify lru_gen_look_around()",
    /// [`KernelVersion::mglru_look_around_activates_each`]): fewer than `PAGEVEC_SIZE` (15)
    /// young PTEs of folios outside the youngest generation → `folio_activate()` each (the
    /// pagevec path, `pgactivate`); otherwise all are moved to the youngest generation in
    /// place under the lru_lock (`folio_update_gen()`, no `pgactivate`). The model charges
    /// no lru_lock time for the in-place moves.
    fn look_around_batch_before_6_3(&mut self, folios: &[Pfn], bits: u64, new_gen: usize) {
        /// Kernel: `PAGEVEC_SIZE` (include/linux/pagevec.h, 6.1).
        const PAGEVEC_SIZE: u64 = 15;
        for &pfn in folios {
            if folio_lru_gen(self.pages.hot[pfn as usize].flags).is_none() {
                continue;
            }
            if bits < PAGEVEC_SIZE {
                self.folio_activate(pfn);
            } else {
                self.folio_update_gen(pfn, new_gen);
            }
        }
    }

    /// `get_pte_pfn()` + `get_pfn_folio()` + `ptep_clear_young_notify()`: if the PTE at
    /// `obj`/`i` is present and young and maps a folio of memcg `lv` on a generation list
    /// (before v6.14 also one isolated by reclaim), clear its young bit and return (folio,
    /// PTE dirty). Notes whether the entry is in use.
    #[inline]
    fn clear_young_pte(
        &mut self,
        lv: usize,
        obj: u32,
        i: u64,
        file: bool,
        in_use: &mut bool,
    ) -> Option<(Pfn, bool)> {
        let o = &mut self.objects[obj as usize];
        let (pfn, dirty) = if file {
            let m = o.mapped[i as usize];
            *in_use |= m != 0;
            if m & 3 != 3 {
                return None;
            }
            let e = o.ent[i as usize];
            if e & crate::filemap::CACHE_PRESENT == 0 {
                return None;
            }
            (e as u32, false)
        } else {
            let e = o.ent[i as usize];
            *in_use |= e != 0;
            if !pte_present(e) || e & PTE_YOUNG == 0 {
                return None;
            }
            // A THP's subpage entries lead to its head (`walk_pmd_range_locked()` for a PMD).
            (self.pages.anon_folio_of(pte_pfn(e)), e & PTE_DIRTY != 0)
        };
        let f = self.pages.hot[pfn as usize].flags;
        // get_pfn_folio(): since v6.14 only folios on a generation list; before, a folio
        // reclaim has isolated too (walk_update_folio() marks it referenced).
        let isolated = f & pg::ISOLATED != 0 && !self.cfg.kernel.mglru_folio_seq_by_workingset();
        if (f & pg::LRU_GEN_MASK == 0 && !isolated)
            || self.pages.hot[pfn as usize].memcg as usize != lv
        {
            return None;
        }
        let o = &mut self.objects[obj as usize];
        if file {
            o.mapped[i as usize] &= !2;
        } else {
            o.ent[i as usize] &= !PTE_YOUNG;
        }
        Some((pfn, dirty))
    }

    /// Kernel: `walk_update_folio()`: transfer the PTE dirty bit (not for anon outside the
    /// swap cache), then promote with a walk context, or activate through
    /// `lru_gen_set_refs()` without one. Before v6.14 (the loop bodies of
    /// `walk_pte_range()` and `lru_gen_look_around()`, as v6.13 has them): a folio isolated
    /// by reclaim gets PG_referenced; with a walk context the folio is promoted
    /// (`folio_update_gen()`), without one activated (`folio_activate()`) unless it is in
    /// the youngest generation already (before v6.3 in a batch after the loop:
    /// [`Mm::look_around_batch_before_6_3`]).
    ///
    /// `deferred`: a 6.1 look-around batch ([`Mm::look_around_batch_before_6_3`]) moves the
    /// folio later; only the dirty bit and an isolated folio's PG_referenced are done here.
    fn walk_update_folio(
        &mut self,
        walk: bool,
        deferred: bool,
        pfn: Pfn,
        new_gen: usize,
        dirty: bool,
    ) {
        if pfn == NIL {
            return;
        }
        if dirty && !self.pages.test(pfn, pg::DIRTY) && self.pages.test(pfn, pg::SWAPCACHE) {
            self.pages.set(pfn, pg::DIRTY);
        }
        if !self.cfg.kernel.mglru_folio_seq_by_workingset() {
            match folio_lru_gen(self.pages.hot[pfn as usize].flags) {
                None => self.pages.set(pfn, pg::REFERENCED),
                Some(_) if deferred => {}
                Some(_) if walk => {
                    self.folio_update_gen(pfn, new_gen);
                }
                Some(old) if old != new_gen => self.folio_activate(pfn),
                Some(_) => {}
            }
            return;
        }
        if walk {
            self.folio_update_gen(pfn, new_gen);
        } else if self.lru_gen_set_refs(pfn) {
            if let Some(old) = folio_lru_gen(self.pages.hot[pfn as usize].flags) {
                if old != new_gen {
                    self.folio_activate(pfn);
                }
            }
        }
    }

    /// Kernel: `lru_gen_look_around()`: the rmap walk found the PTE of `obj`/`index` young;
    /// scan up to 64 neighbouring PTEs of the same page table, promoting (kswapd, or after
    /// an aging in this reclaim call) or activating the young ones, and add the page table to
    /// the Bloom filter of the next aging if it is dense. Before v6.14 the folio `target`
    /// whose young PTE started it (isolated by reclaim; its PTE already cleared by the
    /// caller) is marked referenced, as the kernel's loop does for a folio off the lists.
    pub(crate) fn lru_gen_look_around(
        &mut self,
        ctx: &mut Ctx,
        lv: usize,
        obj: u32,
        index: u64,
        target: Pfn,
    ) {
        if !self.cfg.kernel.mglru_folio_seq_by_workingset()
            && folio_lru_gen(self.pages.hot[target as usize].flags).is_none()
        {
            self.pages.set(target, pg::REFERENCED);
        }
        let size = self.objects[obj as usize].size_pages;
        let pmd_start = index & !(PTRS_PER_PTE - 1);
        let (mut start, mut end) = (pmd_start, (pmd_start + PTRS_PER_PTE).min(size));
        if end - start == 1 {
            return;
        }
        if end - start > MIN_LRU_BATCH {
            if index - start < MIN_LRU_BATCH / 2 {
                end = start + MIN_LRU_BATCH;
            } else if end - index < MIN_LRU_BATCH / 2 {
                start = end - MIN_LRU_BATCH;
            } else {
                start = index - MIN_LRU_BATCH / 2;
                end = index + MIN_LRU_BATCH / 2;
            }
        }
        let walk = self.mm_walk_active;
        let max_seq = self.lruvecs[lv].lrugen.max_seq;
        let new_gen = lru_gen_from_seq(max_seq);
        let (young, _) = self.update_young_range(walk, lv, obj, start, end, new_gen);
        let lg = &mut self.lruvecs[lv].lrugen;
        lg.walk.look_arounds += 1;
        lg.walk.look_around_young += young;
        if young * PTES_PER_CACHELINE >= end - start {
            lg.update_bloom(max_seq, obj, index / PTRS_PER_PTE);
        }
        let cost = (end - start) * self.cfg.costs.pt_walk_per_pte_ns;
        ctx.cpu_ns += cost;
        self.reclaim_cpu.pt_walk_ns += cost;
    }

    /// Kernel: `get_swappiness()`: 0 when reclaim may not swap or swap is (nearly) full.
    /// Before v6.3 ([`KernelVersion::mglru_rejects_opportunistic_reclaim`]) 6.1's
    /// `lru_gen_shrink_lruvec()` asks `get_swappiness()` (swap left only) when
    /// `sc->may_swap` is set, else uses 1 for root reclaim (kswapd's boosted passes: file
    /// first, both types counted by the aging) if that is non-zero, and 0 for memcg reclaim.
    fn lru_gen_swappiness(&self, lv: usize, sc: &ScanControl) -> u64 {
        if self.memcg_nr_swap_pages(lv) < MIN_LRU_BATCH {
            return 0;
        }
        if !sc.may_swap {
            let old = !self.cfg.kernel.mglru_rejects_opportunistic_reclaim();
            let swappiness = self.memcg_swappiness(lv);
            return (old && !sc.cgroup_reclaim && swappiness != 0) as u64;
        }
        self.memcg_swappiness(lv)
    }

    /// Kernel: `isolate_folio()`'s refusals before v6.3
    /// ([`KernelVersion::mglru_rejects_opportunistic_reclaim`]): a mapped folio without
    /// `sc->may_unmap` ("unmapping inhibited"), a dirty folio or an anon folio outside the
    /// swap cache without `sc->may_writepage` ("swapping inhibited"; the model's reclaim
    /// always has `__GFP_IO`). From v6.3 root reclaim without those flags never gets here.
    fn lru_gen_isolate_refused(&self, pfn: Pfn, sc: &ScanControl) -> bool {
        if self.cfg.kernel.mglru_rejects_opportunistic_reclaim() {
            return false;
        }
        (!sc.may_unmap && self.folio_mapped(pfn))
            || (!sc.may_writepage
                && (self.pages.test(pfn, pg::DIRTY) || self.anon_not_swapcache(pfn)))
    }

    /// Kernel: `sort_folio()`: handle a folio at the tail of the oldest generation without
    /// isolating it, if it was promoted, is in a protected tier, is of a zone above
    /// `sc->reclaim_idx` ("ineligible": to the tail of the next generation, so the oldest
    /// can still empty and `min_seq` move; v6.5's "Multi-gen LRU: fix per-zone reclaim",
    /// in 6.1 stable since 6.1.54), or waits for writeback. Tiers before v6.14 come from
    /// [`folio_lru_refs_before_6_14`].
    fn sort_folio(&mut self, pfn: Pfn, sc: &mut ScanControl, tier_idx: usize) -> bool {
        let lv = self.pages.hot[pfn as usize].memcg as usize;
        let ty = self.pages.is_file_lru(pfn) as usize;
        let nr = self.pages.nr_pages(pfn);
        let f = self.pages.hot[pfn as usize].flags;
        let gen = folio_lru_gen(f).expect("sort_folio: folio off the generations");
        let new_rules = self.cfg.kernel.mglru_folio_seq_by_workingset();
        let (tier, lazy, top) = if new_rules {
            let refs = folio_lru_refs(f);
            let ws = f & pg::WORKINGSET != 0;
            let lazy = refs + ws as u32 == (1 << LRU_REFS_WIDTH) + 1;
            (lru_tier_from_refs(refs, ws), lazy, lazy)
        } else {
            // Before v6.14: refs counter + PG_workingset; the top (4) is always protected
            // (6.1.69+ / 6.8-6.13, "mm/mglru: fix underprotected page cache") and counted.
            let refs = folio_lru_refs_before_6_14(f);
            (
                lru_tier_from_refs_before_6_14(refs),
                false,
                refs == 1 << LRU_REFS_WIDTH,
            )
        };
        let lg = &self.lruvecs[lv].lrugen;
        // promoted by the page-table walk or look-around
        if gen != lru_gen_from_seq(lg.min_seq[ty]) {
            self.lru_gen_list_move(pfn, gen, false);
            return true;
        }
        // protected tier
        if tier > tier_idx || top {
            let g = self.folio_inc_gen(pfn, false);
            // Before v6.14 the protected folio goes to the tail of the next generation.
            self.lru_gen_list_move(pfn, g, !new_rules);
            if !lazy {
                self.lruvecs[lv].lrugen.protected[ty][tier] += nr;
            }
            if !self.cfg.kernel.mglru_counts_every_refault() {
                // Before v6.5 ("Multi-gen LRU: fix workingset accounting") a folio
                // protected by its tier counted as a workingset activation.
                self.ev.add(workingset_events(ty == FILE).1, nr);
            }
            return true;
        }
        // ineligible
        if self.zones[self.zone_of(pfn)].zone_type > sc.reclaim_idx {
            let g = self.folio_inc_gen(pfn, false);
            self.lru_gen_list_move(pfn, g, true);
            return true;
        }
        let dirty = f & pg::DIRTY != 0;
        let writeback = f & pg::WRITEBACK != 0;
        if ty == FILE && dirty {
            sc.nr.file_taken += nr;
            if !writeback {
                sc.nr.unqueued_dirty += nr;
            }
        }
        // waiting for writeback
        if writeback || (ty == FILE && dirty) {
            let g = self.folio_inc_gen(pfn, true);
            self.lru_gen_list_move(pfn, g, false);
            return true;
        }
        false
    }

    /// Kernel: `isolate_folio()`: take a folio off the lists for `shrink_folio_list()`. An
    /// unreferenced folio loses its refs; before v6.14 also PG_workingset, and PG_referenced
    /// is cleared in any case (so `folio_check_references()` sees only what the rmap walk
    /// and look-around find from here on).
    fn lru_gen_isolate(&mut self, pfn: Pfn) {
        let f = self.pages.hot[pfn as usize].flags;
        let mut nf = f & !pg::RECLAIM;
        let old_rules = !self.cfg.kernel.mglru_folio_seq_by_workingset();
        if f & pg::REFERENCED == 0 {
            nf &= !pg::LRU_REFS_MASK;
            if old_rules {
                nf &= !pg::WORKINGSET;
            }
        }
        if old_rules {
            nf &= !pg::REFERENCED;
        }
        self.pages.hot[pfn as usize].flags = nf;
        self.lru_gen_del_folio(pfn, true);
        self.pages.set(pfn, pg::ISOLATED);
        let nr = self.pages.nr_pages(pfn);
        self.node.nr_isolated[self.pages.is_file_lru(pfn) as usize] += nr;
        self.scratch.push(pfn);
    }

    /// Kernel: `scan_folios()`: from the tails of the oldest generation's lists of `ty`, zone
    /// by zone in [`Mm::lru_gen_zone_order`], sort or isolate folios until 64 pages are
    /// isolated or MAX_LRU_BATCH folios were looked at (both counted over the zones, as the
    /// kernel's `isolated` and `remaining`). Returns the pages scanned (0 if nothing could
    /// be isolated and the batch was not used up). Before v6.3 `isolate_folio()` refuses
    /// folios [`Mm::lru_gen_isolate_refused`] names: they go back to the head of their list
    /// after the zone is scanned, counted in `pgskip_dma32`/`pgskip_normal` (the model has
    /// no `pgskip_dma`), and a zone's scan stops at 64 skipped pages. From v6.3 it never
    /// fails in the model (no `__GFP_IO`-less reclaim).
    fn scan_folios(
        &mut self,
        ctx: &mut Ctx,
        lv: usize,
        sc: &mut ScanControl,
        ty: usize,
        tier_idx: usize,
    ) -> u64 {
        let lg = &self.lruvecs[lv].lrugen;
        if lg.nr_gens(ty) == MIN_NR_GENS {
            return 0;
        }
        let gen = lru_gen_from_seq(lg.min_seq[ty]);
        let mut remaining = MAX_LRU_BATCH;
        let (mut scanned, mut sorted, mut isolated, mut folios) = (0u64, 0u64, 0u64, 0u64);
        let (order, nr_zones) = self.lru_gen_zone_order(sc.reclaim_idx);
        let mut moved = std::mem::take(&mut self.scratch3);
        for &zone in &order[..nr_zones] {
            // Folios isolate_folio() refused (before v6.3 only): off the list while the zone
            // is scanned, then back at its head (`list_splice(&moved, head)`).
            moved.clear();
            let mut skipped_zone = 0u64;
            loop {
                let pfn = self.lruvecs[lv].lrugen.folios[gen][ty][zone].tail;
                if pfn == NIL {
                    break;
                }
                let nr = self.pages.nr_pages(pfn);
                scanned += nr;
                folios += 1;
                if self.sort_folio(pfn, sc, tier_idx) {
                    sorted += nr;
                } else if self.lru_gen_isolate_refused(pfn, sc) {
                    let l: &mut [crate::page::Frame] = &mut self.pages.hot;
                    l.del(&mut self.lruvecs[lv].lrugen.folios[gen][ty][zone], pfn);
                    moved.push(pfn);
                    skipped_zone += nr;
                } else {
                    self.lru_gen_isolate(pfn);
                    isolated += nr;
                }
                remaining -= 1;
                if remaining == 0 || isolated.max(skipped_zone) >= MIN_LRU_BATCH {
                    break;
                }
            }
            for &pfn in &moved {
                let l: &mut [crate::page::Frame] = &mut self.pages.hot;
                l.add_head(&mut self.lruvecs[lv].lrugen.folios[gen][ty][zone], pfn);
            }
            match self.zones[zone].zone_type {
                crate::mmzone::ZONE_DMA32 => self.ev.add(Ev::PgSkipDma32, skipped_zone),
                crate::mmzone::ZONE_NORMAL => self.ev.add(Ev::PgSkipNormal, skipped_zone),
                _ => {}
            }
            if remaining == 0 || isolated >= MIN_LRU_BATCH {
                break;
            }
        }
        self.scratch3 = moved;
        // scan_folios() sorts and isolates under the lruvec's lru_lock.
        let cost = self.cfg.costs.scan_per_page_ns * folios;
        self.lru_lock_hold(ctx, lv, cost, true);
        self.reclaim_cpu.scan_ns += cost;
        // PGSCAN_* count the isolated folios, not the scanned ones; PGREFILL the sorted.
        self.count_scan(sc, ty == FILE, isolated);
        if !sc.cgroup_reclaim {
            self.ev.add(Ev::PgRefill, sorted);
        }
        if ty == FILE {
            sc.nr.file_taken += isolated;
        }
        if isolated > 0 || remaining == 0 {
            scanned
        } else {
            0
        }
    }

    /// The order in which `scan_folios()` takes the zones' lists: the kernel's
    /// `zone = (sc->reclaim_idx + i) % MAX_NR_ZONES` for `i = MAX_NR_ZONES..1`, i.e.
    /// `reclaim_idx` and the zones below it from the highest down, then the ineligible ones
    /// above it from the highest down (whose folios `sort_folio()` only moves to the next
    /// generation). Returns zone indices into [`Mm::zones`] and how many there are.
    pub(crate) fn lru_gen_zone_order(&self, reclaim_idx: usize) -> ([usize; NR_ZONES], usize) {
        let mut order = [0; NR_ZONES];
        let mut n = 0;
        for eligible in [true, false] {
            for zi in (0..self.zones.len()).rev() {
                if (self.zones[zi].zone_type <= reclaim_idx) == eligible {
                    order[n] = zi;
                    n += 1;
                }
            }
        }
        (order, n)
    }

    /// Kernel: `isolate_folios()`: scan the type the controller picks, the other if that
    /// yields nothing. Returns (pages scanned, type scanned).
    fn isolate_folios(
        &mut self,
        ctx: &mut Ctx,
        lv: usize,
        sc: &mut ScanControl,
        swappiness: u64,
    ) -> (u64, usize) {
        let kernel = self.cfg.kernel;
        let lg = &self.lruvecs[lv].lrugen;
        let (mut ty, mut tier) = if kernel.mglru_type_by_all_tiers() {
            (lg.get_type_to_scan(swappiness), None)
        } else {
            lg.get_type_to_scan_before_6_14(swappiness)
        };
        let nr_types = evictable(ANON, swappiness) as usize + evictable(FILE, swappiness) as usize;
        for _ in 0..nr_types {
            let t = tier
                .take()
                .unwrap_or_else(|| self.lruvecs[lv].lrugen.get_tier_idx(ty, kernel));
            let s = self.scan_folios(ctx, lv, sc, ty, t);
            if s > 0 {
                return (s, ty);
            }
            ty = 1 - ty;
        }
        (0, ty)
    }

    /// Kernel: `evict_folios()`: isolate a batch from the oldest generation, run it through
    /// `shrink_folio_list()`, put back what was kept (never into the oldest generation), and
    /// retry once the clean, unmapped folios that may have missed their rotation. Before
    /// v6.14 every rejected folio but those under writeback for reclaim goes back active,
    /// its refs, PG_referenced and PG_workingset cleared, and a locked folio is not retried
    /// (`folio_test_locked()`; the loop "mm: multi-gen LRU: retry folios written back while
    /// isolated" gave 6.1 in 6.1-rc7, unchanged to v6.13). `sc->nr_scanned` is what each
    /// `shrink_folio_list()` pass counts, so a retried folio counts twice: the loop's
    /// `sc->nr_scanned -= folio_nr_pages(folio)` was removed by "mm/mglru: fix div-by-zero in
    /// vmpressure_calc_level()" (8b671fe1a879, v6.11-rc1; 6.1.103, 6.6.44, 6.10.3), so only
    /// the kernels before it and those backports counted a retried folio once; the model's
    /// 6.1 is Debian's 6.1.0-50, which carries the removal. Simplified: PG_locked is only a
    /// read in flight (`wait_locked()`).
    fn evict_folios(
        &mut self,
        ctx: &mut Ctx,
        lv: usize,
        sc: &mut ScanControl,
        swappiness: u64,
    ) -> (u64, usize) {
        self.scratch.clear();
        self.reclaim_run_completions(ctx);
        // lru_add_drain() of lru_gen_shrink_lruvec() / lru_gen_shrink_node().
        self.lru_add_drain(ctx);
        let (mut scanned, ty) = self.isolate_folios(ctx, lv, sc, swappiness);
        scanned += self.try_to_inc_min_seq(lv, swappiness) as u64;
        let lg = &self.lruvecs[lv].lrugen;
        if lg.evictable_min_seq(swappiness) + MIN_NR_GENS > lg.max_seq {
            scanned = 0;
        }
        if self.scratch.is_empty() {
            return (scanned, ty);
        }
        let mut skip_retry = false;
        loop {
            let (reclaimed, stat) = self.shrink_folio_list(ctx, sc);
            sc.nr_scanned += stat.nr_scanned;
            sc.nr.unqueued_dirty += stat.nr_unqueued_dirty;
            sc.nr_reclaimed += reclaimed;
            // The survivors are in scratch2: pick the retry candidates, keep the rest out
            // of the oldest generation.
            let mut survivors = std::mem::take(&mut self.scratch2);
            let mut retry = std::mem::take(&mut self.scratch3);
            retry.clear();
            let old_rules = !self.cfg.kernel.mglru_folio_seq_by_workingset();
            let now = ctx.now;
            survivors.retain(|&pfn| {
                let f = self.pages.hot[pfn as usize].flags;
                if old_rules {
                    // Before v6.14: a folio under writeback for reclaim keeps its place
                    // (PG_referenced back if PG_workingset); the rest of the rejected ones
                    // lose their refs and flags and become active (the youngest generation);
                    // clean, unmapped, unlocked, inactive ones are retried once. Locked: a
                    // read still in flight (PG_locked, cleared lazily: `wait_locked()`).
                    if f & pg::RECLAIM != 0 && f & (pg::DIRTY | pg::WRITEBACK) != 0 {
                        if f & pg::WORKINGSET != 0 {
                            self.pages.hot[pfn as usize].flags = f | pg::REFERENCED;
                        }
                        return true;
                    }
                    if skip_retry
                        || f & (pg::ACTIVE | pg::REFERENCED | pg::DIRTY | pg::WRITEBACK) != 0
                        || self.folio_mapped(pfn)
                        || (f & pg::LOCKED != 0 && self.pages.io_done_ns[pfn as usize] > now)
                    {
                        let clear = pg::LRU_REFS_MASK | pg::REFERENCED | pg::WORKINGSET;
                        self.pages.hot[pfn as usize].flags = (f & !clear) | pg::ACTIVE;
                        return true;
                    }
                    retry.push(pfn);
                    return false;
                }
                if !skip_retry
                    && f & (pg::ACTIVE | pg::DIRTY | pg::WRITEBACK) == 0
                    && !self.folio_mapped(pfn)
                {
                    retry.push(pfn);
                    return false;
                }
                let anon_nsc = self.anon_not_swapcache(pfn);
                let lg = &self.lruvecs[lv].lrugen;
                let t = self.pages.is_file_lru(pfn) as usize;
                if lg.folio_seq(f, anon_nsc, false, self.cfg.kernel) == lg.min_seq[t] {
                    self.pages.hot[pfn as usize].flags =
                        (f & !(pg::LRU_REFS_MASK | pg::REFERENCED)) | pg::ACTIVE;
                }
                true
            });
            self.scratch2 = survivors;
            self.putback(ctx, true);
            self.count_steal(sc, ty == FILE, reclaimed);
            if retry.is_empty() || skip_retry {
                // Anything left in retry on the second pass was put back above.
                self.scratch3 = retry;
                break;
            }
            skip_retry = true;
            let list = std::mem::replace(&mut self.scratch, retry);
            self.scratch3 = list;
            self.scratch3.clear();
        }
        (scanned, ty)
    }

    /// Kernel: `should_run_aging()` before v6.14
    /// ([`KernelVersion::mglru_aging_by_generations_only`]): (need aging, pages to scan at
    /// this priority). Out of cold generations → aging, nothing to scan; more than
    /// `MIN_NR_GENS + 1` generations → no aging; exactly that many → aging when the youngest
    /// generation holds more than 1/2 of the pages or the oldest-but-one ("old",
    /// `seq + MIN_NR_GENS == max_seq`) less than 1/4. The types counted are those
    /// reclaim may evict (the kernel's `min_seq[!can_swap]` is the older type's, which
    /// `evictable_min_seq()` gives).
    pub fn should_run_aging_before_6_14(
        &self,
        lv: usize,
        swappiness: u64,
        priority: i32,
    ) -> (bool, u64) {
        let lg = &self.lruvecs[lv].lrugen;
        let max_seq = lg.max_seq;
        let min = lg.evictable_min_seq(swappiness);
        if min + MIN_NR_GENS > max_seq {
            return (true, 0);
        }
        let (mut young, mut old, mut total) = (0u64, 0u64, 0u64);
        for ty in [ANON, FILE] {
            if !evictable(ty, swappiness) {
                continue;
            }
            for seq in lg.min_seq[ty]..=max_seq {
                let g = lru_gen_from_seq(seq);
                let size = lg.nr_pages[g][ty][0] + lg.nr_pages[g][ty][1];
                total += size;
                if seq == max_seq {
                    young += size;
                } else if seq + MIN_NR_GENS == max_seq {
                    old += size;
                }
            }
        }
        let nr = total >> priority;
        if min + MIN_NR_GENS < max_seq {
            return (false, nr);
        }
        let need = young * MIN_NR_GENS > total || old * (MIN_NR_GENS + 2) < total;
        (need, nr)
    }

    /// Kernel: `should_run_aging()` + `get_nr_to_scan()`: how much to scan this lruvec at
    /// this priority; ages it instead (returns -1) when it is down to its last cold
    /// generation, or returns 0 when another reclaimer is aging it. Before v6.14 the older
    /// aging trigger ([`Mm::should_run_aging_before_6_14`]); before v6.7 kswapd leaves the
    /// aging to `lru_gen_age_node()` (returns 0) and direct reclaim ages and goes on
    /// evicting. Also returns whether aging was needed (6.1's `*need_aging`).
    fn get_nr_to_scan(
        &mut self,
        ctx: &mut Ctx,
        lv: usize,
        sc: &ScanControl,
        swappiness: u64,
    ) -> (i64, bool) {
        let kernel = self.cfg.kernel;
        let lg = &self.lruvecs[lv].lrugen;
        let max_seq = lg.max_seq;
        let min = lg.evictable_min_seq(swappiness);
        let (need_aging, total) = if !kernel.mglru_aging_by_generations_only() {
            let (need, nr) = self.should_run_aging_before_6_14(lv, swappiness, sc.priority);
            (need, nr << sc.priority)
        } else if min + MIN_NR_GENS > max_seq {
            (true, 0)
        } else {
            (min + MIN_NR_GENS == max_seq, lg.evictable_pages(swappiness))
        };
        let nr_to_scan = (total >> sc.priority) as i64;
        if !kernel.mglru_kswapd_ages_in_eviction() {
            // 6.1's get_nr_to_scan().
            if !need_aging {
                return (nr_to_scan, false);
            }
            if sc.priority != DEF_PRIORITY {
                if sc.kswapd {
                    return (0, true);
                }
                if self.try_to_inc_max_seq(ctx, lv, max_seq, swappiness) {
                    return (nr_to_scan, true);
                }
            }
            let lg = &self.lruvecs[lv].lrugen;
            let n = if lg.evictable_min_seq(swappiness) + MIN_NR_GENS <= lg.max_seq {
                nr_to_scan
            } else {
                0
            };
            return (n, true);
        }
        if !need_aging || sc.priority == DEF_PRIORITY {
            return (nr_to_scan, need_aging);
        }
        if self.try_to_inc_max_seq(ctx, lv, max_seq, swappiness) {
            (-1, true)
        } else {
            (0, true)
        }
    }

    /// Kernel: `should_abort_scan()` (root reclaim only): enough was reclaimed, or kswapd
    /// sees every zone above its high watermark plus a batch.
    fn should_abort_scan(&self, sc: &ScanControl) -> bool {
        if sc.cgroup_reclaim {
            return false;
        }
        if sc.nr_reclaimed >= sc.nr_to_reclaim.max(2u64 << sc.order) {
            return true;
        }
        if !sc.kswapd || sc.order > 0 {
            return false;
        }
        self.zones
            .iter()
            .all(|z| z.watermark_ok(0, z.wmark_pages(crate::mmzone::Wmark::High) + MIN_LRU_BATCH))
    }

    /// Kernel: `should_abort_scan()` before v6.7
    /// ([`KernelVersion::mglru_stops_at_high_watermarks`]), as 6.1 has it. Direct and
    /// memcg reclaim stop once they aged this lruvec twice since they began (`seq` was its
    /// `max_seq` then), or reclaimed `nr_to_reclaim` while swapping; memcg reclaim goes on
    /// otherwise. kswapd goes on until it has reclaimed `nr_to_reclaim` since its last
    /// `lru_gen_age_node()`. Then, below priority `DEF_PRIORITY - 2`, reclaim stops when
    /// every zone is above its high (kswapd) or low (direct reclaim) watermark, counting
    /// `MIN_LRU_BATCH` more pages as reclaimed (as the kernel does).
    fn should_abort_scan_before_6_7(
        &self,
        lv: usize,
        seq: u64,
        sc: &mut ScanControl,
        need_swapping: bool,
    ) -> bool {
        if !sc.kswapd {
            if self.lruvecs[lv].lrugen.max_seq - seq > 1 {
                return true;
            }
            if sc.nr_reclaimed >= sc.nr_to_reclaim && need_swapping {
                return true;
            }
            if sc.cgroup_reclaim {
                return false;
            }
        } else if sc.nr_reclaimed - sc.last_reclaimed < sc.nr_to_reclaim {
            return false;
        }
        if sc.priority > DEF_PRIORITY - 2 {
            return false;
        }
        let wmark = if sc.kswapd {
            crate::mmzone::Wmark::High
        } else {
            crate::mmzone::Wmark::Low
        };
        if self.zones.iter().any(|z| z.wmark_pages(wmark) > z.free) {
            return false;
        }
        sc.nr_reclaimed += MIN_LRU_BATCH;
        true
    }

    /// Kernel: `try_to_shrink_lruvec()`: evict until the lruvec's share for this priority is
    /// scanned. Returns whether the lruvec was aged (the memcg rotates). Before v6.3 (6.1's
    /// `lru_gen_shrink_lruvec()`) a pass that reclaimed `MIN_LRU_BATCH` pages without needing
    /// aging clears `sc->memcgs_need_aging`, but only when the loop ends by `break` (its share
    /// scanned, or `should_abort_scan()`): nothing to scan or an eviction that returns 0
    /// (`evict_folios()` down to `MIN_NR_GENS` generations) jumps past it (`goto done`), so
    /// kswapd's next `lru_gen_age_node()` ages.
    fn try_to_shrink_lruvec(&mut self, ctx: &mut Ctx, lv: usize, sc: &mut ScanControl) -> bool {
        let swappiness = self.lru_gen_swappiness(lv, sc);
        let mut scanned = 0u64;
        let mut nr_to_scan;
        let reclaimed = sc.nr_reclaimed;
        let mut need_aging;
        let stops_at_high = self.cfg.kernel.mglru_stops_at_high_watermarks();
        let seq = self.lruvecs[lv].lrugen.max_seq;
        let mut need_swapping = false;
        // 6.1's `goto done`: the loop ended without scanning its share.
        let mut done = false;
        loop {
            (nr_to_scan, need_aging) = self.get_nr_to_scan(ctx, lv, sc, swappiness);
            if nr_to_scan <= 0 {
                done = true;
                break;
            }
            let (delta, ty) = self.evict_folios(ctx, lv, sc, swappiness);
            if delta == 0 {
                done = true;
                break;
            }
            // 6.1 evict_folios(): *need_swapping when the batch was anon.
            need_swapping |= ty == ANON;
            scanned += delta;
            if scanned >= nr_to_scan as u64 {
                break;
            }
            let abort = if stops_at_high {
                self.should_abort_scan(sc)
            } else {
                self.should_abort_scan_before_6_7(lv, seq, sc, need_swapping)
            };
            if abort {
                break;
            }
            self.cond_resched(ctx);
        }
        if sc.nr.unqueued_dirty > 0 && sc.nr.unqueued_dirty == sc.nr.file_taken {
            // wakeup_flusher_threads(WB_REASON_VMSCAN)
            self.flusher_wanted = true;
        }
        // Before v6.7: "see the comment in lru_gen_age_node()".
        if !done && sc.nr_reclaimed - reclaimed >= MIN_LRU_BATCH && !need_aging {
            sc.memcgs_need_aging = false;
        }
        nr_to_scan < 0
    }

    /// Kernel: `set_initial_priority()`: start root reclaim at the priority where the
    /// inactive pages shifted right give about `nr_to_reclaim`, between 6 and 12.
    pub(crate) fn set_initial_priority(&self, sc: &mut ScanControl) {
        if sc.priority != DEF_PRIORITY || sc.nr_to_reclaim < MIN_LRU_BATCH {
            return;
        }
        let mut reclaimable = self.node_lru(LruList::InactiveFile);
        if sc.may_swap && self.nr_swap_free() > 0 {
            reclaimable += self.node_lru(LruList::InactiveAnon);
        }
        let fls = |x: u64| 64 - x.leading_zeros() as i32;
        let prio = fls(reclaimable) - 1 - fls(sc.nr_to_reclaim - 1);
        sc.priority = prio.clamp(DEF_PRIORITY / 2, DEF_PRIORITY);
    }

    /// Kernel: `shrink_node()` → `lru_gen_shrink_node()` for root reclaim (kswapd, direct
    /// reclaim) and `shrink_lruvec()` → `lru_gen_shrink_lruvec()` for memcg limit reclaim.
    /// Returns the pages reclaimed. From v6.3 root reclaim without `may_writepage` or
    /// `may_unmap` (kswapd's boosted passes) returns at once; 6.1 evicts
    /// ([`KernelVersion::mglru_rejects_opportunistic_reclaim`]).
    pub(crate) fn lru_gen_shrink_node(&mut self, ctx: &mut Ctx, sc: &mut ScanControl) -> u64 {
        let before = sc.nr_reclaimed;
        sc.nr = PassStats::default();
        if sc.cgroup_reclaim {
            self.mm_walk_active = false;
            self.try_to_shrink_lruvec(ctx, sc.target, sc);
            self.mm_walk_active = false;
            self.shrink_slab_for(sc.target, sc);
            return sc.nr_reclaimed - before;
        }
        // v6.3+: "unmapped clean folios are already prioritized"; 6.1 goes on.
        if (!sc.may_writepage || !sc.may_unmap)
            && self.cfg.kernel.mglru_rejects_opportunistic_reclaim()
        {
            return 0;
        }
        // set_mm_walk(pgdat, ...): kswapd always has a walk context.
        self.mm_walk_active = sc.kswapd;
        let stops_at_high = self.cfg.kernel.mglru_stops_at_high_watermarks();
        if stops_at_high {
            self.set_initial_priority(sc);
        }
        // Since v6.7 kswapd counts from zero in each call, so that `should_abort_scan()`
        // compares `nr_to_reclaim` with what this call reclaimed, not with what the whole
        // `balance_pgdat()` run has (its scan_control lives across the priority loop); the
        // run's total is restored afterwards.
        let kswapd_reset = stops_at_high && sc.kswapd;
        if kswapd_reset {
            sc.nr_reclaimed = 0;
        }
        // shrink_many(), as a round-robin walk over the memcgs (before v6.7,
        // shrink_node_memcgs(): every memcg in turn).
        let n = self.lruvecs.len();
        let start = self.node.memcg_cursor % n;
        for k in 0..n {
            let lv = (start + k) % n;
            self.try_to_shrink_lruvec(ctx, lv, sc);
            // shrink_one(): the memcg's shrinkers after its lruvec.
            self.shrink_slab_for(lv, sc);
            if stops_at_high && self.should_abort_scan(sc) {
                self.node.memcg_cursor = lv + 1;
                break;
            }
        }
        self.mm_walk_active = false;
        if kswapd_reset {
            sc.nr_reclaimed += before;
        }
        let reclaimed = sc.nr_reclaimed - before;
        if reclaimed > 0 {
            self.node.kswapd_failures = 0;
        }
        reclaimed
    }

    /// Kernel: `lruvec_is_reclaimable()`: sizable at this priority and its oldest evictable
    /// generation is older than `min_ttl`.
    fn lruvec_is_reclaimable(&self, lv: usize, sc: &ScanControl, min_ttl: u64, now: u64) -> bool {
        let swappiness = self.lru_gen_swappiness(lv, sc);
        let lg = &self.lruvecs[lv].lrugen;
        if lg.evictable_pages(swappiness) >> sc.priority == 0 {
            return false;
        }
        let birth = lg.timestamps[lru_gen_from_seq(lg.evictable_min_seq(swappiness))];
        now > birth + min_ttl
    }

    /// Kernel: `lru_gen_age_node()` (kswapd, v6.7+): no aging here, only the
    /// `lru_gen.min_ttl_ms` check: when no memcg has a generation older than min_ttl worth
    /// reclaiming, invoke the OOM killer rather than evict the working set. Before v6.7
    /// ([`KernelVersion::mglru_kswapd_ages_in_eviction`]) the older form
    /// ([`Mm::lru_gen_age_node_before_6_7`]).
    pub(crate) fn lru_gen_age_node(&mut self, ctx: &mut Ctx, sc: &mut ScanControl) {
        if !self.cfg.kernel.mglru_stops_at_high_watermarks() {
            // 6.1: sc->last_reclaimed for should_abort_scan(); no set_initial_priority().
            sc.last_reclaimed = sc.nr_reclaimed;
        } else {
            self.set_initial_priority(sc);
        }
        if !self.cfg.kernel.mglru_kswapd_ages_in_eviction() {
            return self.lru_gen_age_node_before_6_7(ctx, sc);
        }
        let min_ttl = self.cfg.lru_gen_min_ttl_ns;
        if min_ttl == 0 {
            return;
        }
        let reclaimable =
            (0..self.lruvecs.len()).any(|lv| self.lruvec_is_reclaimable(lv, sc, min_ttl, ctx.now));
        if !reclaimable && sc.order == 0 {
            self.oom_pending = true;
        }
    }

    /// Kernel: `lru_gen_age_node()` + `age_lruvec()` before v6.7: unless the last eviction
    /// pass reclaimed a batch without needing aging (`sc->memcgs_need_aging` clear: then
    /// only set it again), age every memcg that `should_run_aging()` names, with a walk
    /// context, skipping those whose oldest file generation is younger than `min_ttl_ms`
    /// (or, below the default priority, too small to scan); with min_ttl set and no memcg
    /// old enough, invoke the OOM killer.
    pub(crate) fn lru_gen_age_node_before_6_7(&mut self, ctx: &mut Ctx, sc: &mut ScanControl) {
        if !sc.memcgs_need_aging {
            sc.memcgs_need_aging = true;
            return;
        }
        let min_ttl = self.cfg.lru_gen_min_ttl_ns;
        let mut success = false;
        self.mm_walk_active = true;
        for lv in 0..self.lruvecs.len() {
            let swappiness = self.lru_gen_swappiness(lv, sc);
            let (need_aging, nr) = self.should_run_aging_before_6_14(lv, swappiness, sc.priority);
            if min_ttl > 0 {
                let lg = &self.lruvecs[lv].lrugen;
                let birth = lg.timestamps[lru_gen_from_seq(lg.min_seq[FILE])];
                if ctx.now < birth + min_ttl {
                    continue;
                }
                if nr == 0 && sc.priority != DEF_PRIORITY {
                    continue;
                }
            }
            if need_aging {
                let max_seq = self.lruvecs[lv].lrugen.max_seq;
                self.try_to_inc_max_seq(ctx, lv, max_seq, swappiness);
            }
            success = true;
        }
        self.mm_walk_active = false;
        if !success && min_ttl > 0 && sc.order == 0 {
            self.oom_pending = true;
        }
    }

    /// Kernel: `lru_gen_eviction()`: the shadow of an evicted folio: the oldest generation
    /// of its type and its refs (the token), its memcg and PG_workingset; counts the folio as
    /// evicted from its tier. Before v6.14 the refs are [`folio_lru_refs_before_6_14`]'s
    /// and the shadow's workingset bit says whether they are non-zero.
    pub(crate) fn lru_gen_eviction(&mut self, pfn: Pfn) -> Shadow {
        let lv = self.pages.hot[pfn as usize].memcg as usize;
        let ty = self.pages.is_file_lru(pfn) as usize;
        let f = self.pages.hot[pfn as usize].flags;
        let (refs, ws, tier) = if self.cfg.kernel.mglru_folio_seq_by_workingset() {
            let refs = folio_lru_refs(f);
            let ws = f & pg::WORKINGSET != 0;
            (refs, ws, lru_tier_from_refs(refs, ws))
        } else {
            let refs = folio_lru_refs_before_6_14(f);
            (refs, refs != 0, lru_tier_from_refs_before_6_14(refs))
        };
        let lg = &mut self.lruvecs[lv].lrugen;
        let token = (lg.min_seq[ty] << LRU_REFS_WIDTH) | refs.saturating_sub(1) as u64;
        lg.evicted[ty][tier] += self.pages.nr_pages(pfn);
        Shadow::pack(token, lv as u16, ws)
    }

    /// Kernel: `lru_gen_test_recent()`: was the folio evicted less than four generations
    /// ago (`max_seq` now vs `min_seq` then)? Before v6.14
    /// ([`KernelVersion::mglru_recent_within_max_nr_gens`]): was it evicted from the
    /// generation that is still the oldest of its type?
    pub fn lru_gen_test_recent(&self, shadow: Shadow, file: bool) -> bool {
        let lv = shadow.memcg() as usize;
        let Some(v) = self.lruvecs.get(lv) else {
            return false;
        };
        let then = shadow.age() >> LRU_REFS_WIDTH;
        let mask = SEQ_MASK >> LRU_REFS_WIDTH;
        if !self.cfg.kernel.mglru_recent_within_max_nr_gens() {
            return then == v.lrugen.min_seq[file as usize] & mask;
        }
        let max_seq = v.lrugen.max_seq & mask;
        max_seq.abs_diff(then) < MAX_NR_GENS
    }

    /// Kernel: `lru_gen_refault()`: a folio (not yet on the LRU) replaces its shadow. Counts
    /// the refault; if recent, credits its tier's refaults, counts an activation when in a
    /// fault (`folio_add_lru()` makes it active), and restores PG_workingset or the refs.
    /// Earlier kernels count differently ([`KernelVersion`]): before v6.5 only recent
    /// refaults count as refaults and none as an activation; v6.5-6.13 count every recent
    /// refault as an activation; before v6.14 a refault in a fault, or with the refs
    /// counter at its top, becomes PG_workingset and counts as a restore (the refs bits are
    /// set to the top, not restored), and the tier is [`lru_tier_from_refs_before_6_14`] of
    /// the refs bits plus the shadow's workingset bit.
    pub(crate) fn lru_gen_refault(&mut self, pfn: Pfn, shadow: Shadow) {
        let lv = self.pages.hot[pfn as usize].memcg as usize;
        if shadow.memcg() as usize != lv {
            return;
        }
        let kernel = self.cfg.kernel;
        let file = self.pages.is_file_lru(pfn);
        let nr = self.pages.nr_pages(pfn);
        let (refault, activate, restore) = workingset_events(file);
        let recent = self.lru_gen_test_recent(shadow, file);
        if kernel.mglru_counts_every_refault() {
            self.ev.add(refault, nr);
        }
        if !recent {
            return;
        }
        if !kernel.mglru_counts_every_refault() {
            self.ev.add(refault, nr);
        }
        let token = shadow.age();
        let refs = (token & ((1 << LRU_REFS_WIDTH) - 1)) as u32 + 1;
        let ws = shadow.workingset();
        // refs as the older kernels count them: the refs bits plus PG_workingset.
        let old_refs = (refs - 1) + ws as u32;
        let tier = if kernel.mglru_folio_seq_by_workingset() {
            lru_tier_from_refs(refs, ws)
        } else {
            lru_tier_from_refs_before_6_14(old_refs)
        };
        self.lruvecs[lv].lrugen.refaulted[file as usize][tier] += nr;
        if !kernel.mglru_folio_seq_by_workingset() {
            if kernel.mglru_counts_every_refault() {
                self.ev.add(activate, nr);
            }
            if self.in_lru_fault || old_refs >= (1 << LRU_REFS_WIDTH) - 1 {
                let f = self.pages.hot[pfn as usize].flags;
                self.pages.hot[pfn as usize].flags = f | pg::LRU_REFS_MASK | pg::WORKINGSET;
                self.ev.add(restore, nr);
            }
            return;
        }
        if self.in_lru_fault {
            self.ev.add(activate, nr);
        }
        if ws {
            self.pages.set(pfn, pg::WORKINGSET);
            self.ev.add(restore, nr);
        } else {
            let f = self.pages.hot[pfn as usize].flags & !pg::LRU_REFS_MASK;
            self.pages.hot[pfn as usize].flags = f | ((refs - 1) << pg::LRU_REFS_SHIFT);
        }
    }

    /// The lru_gen debugfs view of every memcg (`/sys/kernel/debug/lru_gen_full`).
    pub fn lru_gen_view(&self, now: u64) -> Vec<LruGenView> {
        self.lruvecs
            .iter()
            .enumerate()
            .map(|(memcg, v)| {
                let lg = &v.lrugen;
                let oldest = lg.min_seq[ANON].min(lg.min_seq[FILE]);
                let gens = (oldest..=lg.max_seq)
                    .map(|seq| {
                        let g = lru_gen_from_seq(seq);
                        let pages = |ty: usize| {
                            if seq >= lg.min_seq[ty] {
                                lg.nr_pages[g][ty].iter().sum::<u64>()
                            } else {
                                0
                            }
                        };
                        let age_ms = now.saturating_sub(lg.timestamps[g]) / 1_000_000;
                        (seq, age_ms, pages(ANON), pages(FILE))
                    })
                    .collect();
                let mut tiers = [[(0, 0, 0, 0, 0); MAX_NR_TIERS]; 2];
                for (ty, row) in tiers.iter_mut().enumerate() {
                    for (t, cell) in row.iter_mut().enumerate() {
                        *cell = (
                            lg.avg_refaulted[ty][t],
                            lg.avg_total[ty][t],
                            lg.refaulted[ty][t],
                            lg.evicted[ty][t],
                            lg.protected[ty][t],
                        );
                    }
                }
                LruGenView {
                    memcg,
                    max_seq: lg.max_seq,
                    min_seq: lg.min_seq,
                    gens,
                    tiers,
                    walk: lg.walk.clone(),
                }
            })
            .collect()
    }

    /// Generation-list invariants: every folio on the list its list bits name, of the right
    /// type, zone and memcg, with a generation within [min_seq, max_seq] of its type; page
    /// counts per generation match; lists of retired generations are empty; the classic
    /// lists are empty. Returns the compatibility sizes the lists add up to, per lruvec and
    /// zone.
    pub(crate) fn check_lru_gen(
        &self,
        lru_pages: &mut [[u64; NR_LRU_LISTS]],
        zone_pages: &mut [[u64; NR_LRU_LISTS]],
    ) -> Result<(), String> {
        for (lv, v) in self.lruvecs.iter().enumerate() {
            let lg = &v.lrugen;
            if v.lists.iter().any(|l| !l.is_empty()) {
                return Err(format!(
                    "lruvec {lv}: classic lists in use under the multi-gen LRU"
                ));
            }
            let mut counted = [[[0u64; NR_ZONES]; 2]; MAX_NR_GENS as usize];
            for ty in [ANON, FILE] {
                let n = lg.nr_gens(ty);
                if !(MIN_NR_GENS..=MAX_NR_GENS).contains(&n) {
                    return Err(format!(
                        "lruvec {lv} type {ty}: {n} generations (max_seq {}, min_seq {})",
                        lg.max_seq, lg.min_seq[ty]
                    ));
                }
                let valid =
                    |g: usize| (lg.min_seq[ty]..=lg.max_seq).any(|s| lru_gen_from_seq(s) == g);
                for (list_gen, list_zone) in
                    (0..MAX_NR_GENS as usize).flat_map(|g| (0..NR_ZONES).map(move |z| (g, z)))
                {
                    let list = &lg.folios[list_gen][ty][list_zone];
                    if !valid(list_gen) && !list.is_empty() {
                        return Err(format!(
                            "lruvec {lv} type {ty}: retired generation list {list_gen} not empty"
                        ));
                    }
                    let mut p = list.head;
                    let mut prev = NIL;
                    let mut cnt = 0;
                    while p != NIL {
                        let f = self.pages.hot[p as usize].flags;
                        let Some(g) = folio_lru_gen(f) else {
                            return Err(format!("no generation: {}", self.dump_folio(p)));
                        };
                        if self.pages.hot[p as usize].prev != prev
                            || f & pg::LRU == 0
                            || f & pg::ACTIVE != 0
                            || folio_list_gen(f) != list_gen
                            || self.pages.is_file_lru(p) as usize != ty
                            || self.pages.hot[p as usize].memcg as usize != lv
                            || !valid(g)
                        {
                            return Err(format!(
                                "{} (gen {g}) on lruvec {lv} generation list {list_gen} type {ty}",
                                self.dump_folio(p)
                            ));
                        }
                        let nr = self.pages.nr_pages(p);
                        let zone = self.zone_of(p);
                        if zone != list_zone {
                            return Err(format!(
                                "{} of zone {zone} on lruvec {lv} generation list {list_gen} type {ty} zone {list_zone}",
                                self.dump_folio(p)
                            ));
                        }
                        counted[g][ty][zone] += nr;
                        let lru = 2 * ty + lg.is_active(g) as usize;
                        lru_pages[lv][lru] += nr;
                        zone_pages[zone][lru] += nr;
                        cnt += 1;
                        prev = p;
                        p = self.pages.hot[p as usize].next;
                    }
                    if cnt != list.len || list.tail != prev {
                        return Err(format!(
                            "lruvec {lv} generation list {list_gen} type {ty} zone {list_zone}: len {} but {cnt} linked",
                            list.len
                        ));
                    }
                }
            }
            if counted != lg.nr_pages {
                return Err(format!(
                    "lruvec {lv}: nr_pages {:?} but lists hold {:?}",
                    lg.nr_pages, counted
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_arithmetic() {
        assert_eq!(lru_gen_from_seq(3), 3);
        assert_eq!(lru_gen_from_seq(4), 0);
        assert_eq!(lru_gen_from_seq(9), 1);
        let lg = LruGen::default();
        // lru_gen_init_lruvec(): max_seq 3, min_seq 0: four generations of each type.
        assert_eq!((lg.max_seq, lg.nr_gens(ANON), lg.nr_gens(FILE)), (3, 4, 4));
        // The two youngest (3 and 2) are active.
        assert!(lg.is_active(3) && lg.is_active(2));
        assert!(!lg.is_active(1) && !lg.is_active(0));
        assert_eq!(lg.evictable_min_seq(0), 0);
        let mut lg = lg;
        lg.min_seq = [2, 1];
        assert_eq!(lg.evictable_min_seq(0), 1); // file only
        assert_eq!(lg.evictable_min_seq(60), 1);
        lg.min_seq = [1, 2];
        assert_eq!(lg.evictable_min_seq(0), 2);
        assert_eq!(lg.evictable_min_seq(100), 1);
    }

    #[test]
    fn tiers_from_refs() {
        // order_base_2: 0, 1 → 0; 2 → 1; 3, 4 → 2.
        assert_eq!(
            (0..=4)
                .map(|r| lru_tier_from_refs(r, false))
                .collect::<Vec<_>>(),
            vec![0, 0, 1, 2, 2]
        );
        assert_eq!(lru_tier_from_refs(1, true), 3);
        assert_eq!(order_base_2(5), 3);
        // folio_lru_refs(): 0 without PG_referenced, refs bits + 1 with it.
        assert_eq!(folio_lru_refs(2 << pg::LRU_REFS_SHIFT), 0);
        assert_eq!(folio_lru_refs(pg::REFERENCED), 1);
        assert_eq!(
            folio_lru_refs(pg::REFERENCED | (3 << pg::LRU_REFS_SHIFT)),
            4
        );
    }

    #[test]
    fn folio_seq_placement() {
        const V: KernelVersion = KernelVersion::new(6, 18);
        let mut lg = LruGen {
            max_seq: 7,
            min_seq: [4, 5],
            ..Default::default()
        };
        let file = 0;
        let anon = pg::SWAPBACKED;
        // Active (faulted in): max_seq - 1; with PG_workingset: max_seq.
        assert_eq!(lg.folio_seq(file | pg::ACTIVE, false, false, V), 6);
        assert_eq!(
            lg.folio_seq(file | pg::ACTIVE | pg::WORKINGSET, false, false, V),
            7
        );
        // Rotated after writeback: the oldest (7 - 4 + 1 = 4), clamped to min_seq[file] = 5.
        assert_eq!(lg.folio_seq(file, false, true, V), 5);
        assert_eq!(lg.folio_seq(anon, false, true, V), 4);
        // New anon outside the swap cache: max_seq - 1.
        assert_eq!(lg.folio_seq(anon, true, false, V), 6);
        // Reclaimed while dirty: max_seq - 1.
        assert_eq!(
            lg.folio_seq(file | pg::RECLAIM | pg::DIRTY, false, false, V),
            6
        );
        // read() miss: the oldest; workingset: one younger.
        lg.min_seq = [4, 4];
        assert_eq!(lg.folio_seq(file, false, false, V), 4);
        assert_eq!(lg.folio_seq(file | pg::WORKINGSET, false, false, V), 5);
    }

    #[test]
    fn controller_decisions_by_hand() {
        let mut lg = LruGen::default();
        // No refaults anywhere: file is scanned (pv.refaulted < 64).
        assert_eq!(lg.get_type_to_scan(60), FILE);
        assert_eq!(lg.get_type_to_scan(1), FILE);
        assert_eq!(lg.get_type_to_scan(200), ANON);
        // File refaults 1000 of 2000 evicted, anon 10 of 1000 at swappiness 60:
        // sp = anon {10, 1000, 60}, pv = file {1000, 2000, 140}:
        // 1000 * (1000 + 64) * 60 = 63_840_000 > (10 + 1) * 2000 * 140 = 3_080_000 → anon.
        lg.refaulted[FILE][0] = 1000;
        lg.evicted[FILE][0] = 2000;
        lg.refaulted[ANON][0] = 10;
        lg.evicted[ANON][0] = 1000;
        assert_eq!(lg.get_type_to_scan(60), ANON);
        // Anon refaulting as much (500 of 1000): 1000 * 1064 * 60 = 63_840_000 <=
        // 501 * 2000 * 140 = 140_280_000 → file.
        lg.refaulted[ANON][0] = 500;
        assert_eq!(lg.get_type_to_scan(60), FILE);
        // Tiers of file: tier 0 refaults 100 of 1000 (sp gain 2); tier 1 refaults 600 of
        // 1000 (gain 3): 600 * (1000 + 64) * 2 = 1_276_800 > 101 * 1000 * 3 = 303_000 →
        // tier 1 is worse: get_tier_idx returns 0, protecting tiers 1 and up.
        let mut lg = LruGen::default();
        lg.refaulted[FILE] = [100, 600, 0, 0];
        lg.evicted[FILE] = [1000, 1000, 0, 0];
        assert_eq!(lg.get_tier_idx(FILE, KernelVersion::default()), 0);
        // Tier 1 refaulting 100 of 1000 like tier 0: 100 * 1064 * 2 = 212_800 <=
        // 101 * 1000 * 3 = 303_000 → not worse; tiers 2, 3 have < 64 refaults → not worse:
        // nothing protected (tier 3).
        lg.refaulted[FILE][1] = 100;
        assert_eq!(lg.get_tier_idx(FILE, KernelVersion::default()), 3);
    }

    #[test]
    fn reset_ctrl_pos_folds_into_the_averages() {
        let mut lg = LruGen::default();
        lg.avg_refaulted[FILE][1] = 10;
        lg.avg_total[FILE][1] = 100;
        lg.refaulted[FILE][1] = 30;
        lg.evicted[FILE][1] = 50;
        lg.protected[FILE][1] = 150;
        // Without carryover (inc_max_seq), one history slot: nothing changes.
        lg.reset_ctrl_pos(FILE, false);
        assert_eq!(lg.refaulted[FILE][1], 30);
        lg.reset_ctrl_pos(FILE, true);
        // (10 + 30) / 2 = 20; (100 + 150 + 50) / 2 = 150; current slot cleared.
        assert_eq!(
            (lg.avg_refaulted[FILE][1], lg.avg_total[FILE][1]),
            (20, 150)
        );
        assert_eq!(
            (
                lg.refaulted[FILE][1],
                lg.evicted[FILE][1],
                lg.protected[FILE][1]
            ),
            (0, 0, 0)
        );
    }

    #[test]
    fn bloom_filter_membership() {
        let mut lg = LruGen::default();
        // Unallocated filter: every PTE table passes.
        assert!(lg.test_bloom(4, 1, 7));
        lg.reset_bloom(4);
        assert!(!lg.test_bloom(4, 1, 7));
        lg.update_bloom(4, 1, 7);
        assert!(lg.test_bloom(4, 1, 7));
        // seq 6 shares the slot of seq 4 (seq % 2); seq 5 is the other filter.
        assert!(lg.test_bloom(6, 1, 7));
        assert!(lg.test_bloom(5, 1, 8));
        lg.reset_bloom(6);
        assert!(!lg.test_bloom(4, 1, 7));
    }

    /// lru_gen.min_ttl_ms: kswapd's lru_gen_age_node() invokes the OOM killer when the
    /// oldest evictable generation is younger than min_ttl, and only then.
    #[test]
    fn min_ttl_protects_young_generations_with_the_oom_killer() {
        use crate::testutil::tiny_config;
        use crate::{BalanceKind, Ctx, InstantIo, LruKind};
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 1024);
        cfg.lru = LruKind::Mglru;
        cfg.lru_gen_min_ttl_ns = 1_000_000_000; // 1 s
        let mut mm = crate::Mm::new(cfg);
        let mut io = InstantIo;
        // 600 anon pages faulted in at t = 0: they join generation max_seq - 1.
        let mut ctx = Ctx::new(0, &mut io, 0);
        for i in 0..600 {
            mm.touch(&mut ctx, 0, i, true);
        }
        mm.check_invariants().unwrap();
        let mut sc = ScanControl::new(64, 0);
        sc.kswapd = true;
        sc.priority = 0;
        // At 0.5 s every generation (created at 0) is younger than min_ttl: OOM.
        let mut ctx = Ctx::new(500_000_000, &mut io, 0);
        mm.lru_gen_age_node(&mut ctx, &mut sc);
        assert!(mm.oom_pending);
        // The next allocation is the victim.
        let mut ctx = Ctx::new(500_000_000, &mut io, 0);
        assert!(mm.alloc_folio(&mut ctx, 0, 0).is_none() && ctx.oom);
        assert!(!mm.oom_pending);
        // At 2 s the oldest generation is older than min_ttl: reclaimable, no OOM.
        let mut ctx = Ctx::new(2_000_000_000, &mut io, 0);
        mm.lru_gen_age_node(&mut ctx, &mut sc);
        assert!(!mm.oom_pending);
        // min_ttl 0 never invokes the OOM killer.
        mm.cfg.lru_gen_min_ttl_ns = 0;
        let mut ctx = Ctx::new(1, &mut io, 0);
        mm.lru_gen_age_node(&mut ctx, &mut sc);
        assert!(!mm.oom_pending);
    }

    /// List-state walk-through: a read() miss joins the oldest generation, a fault the second
    /// youngest; fd accesses only count refs; eviction takes the oldest generation and a
    /// refault within four generations counts and restores the refs.
    #[test]
    fn generations_through_add_access_evict_refault() {
        use crate::testutil::tiny_config;
        use crate::{BalanceKind, Ctx, InstantIo, LruKind};
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 1024);
        cfg.lru = LruKind::Mglru;
        cfg.readahead_max_pages = 0;
        let mut mm = crate::Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.file_read(&mut ctx, 1, 0, 1);
        mm.touch(&mut ctx, 0, 0, true);
        let f = mm.cache_lookup(1, 0).unwrap();
        let a = crate::memory::pte_pfn(mm.objects[0].ent[0]);
        // max_seq 3: the read() miss is in generation 0 (the oldest), the fault in 2.
        assert_eq!(folio_lru_gen(mm.pages.hot[f as usize].flags), Some(0));
        assert_eq!(folio_lru_gen(mm.pages.hot[a as usize].flags), Some(2));
        assert_eq!(mm.lruvecs[0].nr[LruList::InactiveFile.idx()], 1);
        assert_eq!(mm.lruvecs[0].nr[LruList::ActiveAnon.idx()], 1);
        // Three more reads of page 0, each after a read of another page (filemap_read() does
        // not mark the folio the previous read ended in): the miss set PG_referenced, these
        // count the refs bits up to 3: folio_lru_refs = 4, tier 2.
        for p in 1..4 {
            mm.file_read(&mut ctx, 1, p, 1);
            mm.file_read(&mut ctx, 1, 0, 1);
        }
        let fl = mm.pages.hot[f as usize].flags;
        assert_eq!(folio_lru_refs(fl), 4);
        assert_eq!(folio_lru_gen(fl), Some(0)); // no list move on fd access
        mm.check_invariants().unwrap();
        // Evict: no refaults yet, so get_tier_idx() protects nothing and the folio is
        // isolated and reclaimed from generation 0 with pages 1-3 (tier 0); its shadow records
        // min_seq 0 and refs - 1 = 3.
        let mut sc = ScanControl::new(1, 0);
        sc.priority = 0;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.shrink_node(&mut ctx, &mut sc);
        assert!(mm.cache_lookup(1, 0).is_none());
        assert_eq!(mm.lruvecs[0].lrugen.evicted[FILE][2], 1);
        mm.file_read(&mut ctx, 1, 0, 1);
        assert_eq!(mm.ev.get(crate::vmstat::Ev::WorkingsetRefaultFile), 1);
        assert_eq!(mm.lruvecs[0].lrugen.refaulted[FILE][2], 1);
        let f = mm.cache_lookup(1, 0).unwrap();
        // The refs bits are restored (3), PG_referenced is not (the refaulting read does not
        // mark the folio: the previous read ended in it).
        assert_eq!(
            mm.pages.hot[f as usize].flags & pg::LRU_REFS_MASK,
            3 << pg::LRU_REFS_SHIFT
        );
        mm.check_invariants().unwrap();
    }

    fn mglru_mm(kernel: KernelVersion) -> crate::Mm {
        use crate::testutil::tiny_config;
        let mut cfg = tiny_config(crate::BalanceKind::RefaultCost, 1024);
        cfg.lru = crate::LruKind::Mglru;
        cfg.readahead_max_pages = 0;
        cfg.kernel = kernel;
        crate::Mm::new(cfg)
    }

    #[test]
    fn kernel_versions_parse_and_select_rules() {
        let p = |s: &str| KernelVersion::parse(s).unwrap();
        assert_eq!(p("6.1"), KernelVersion::new(6, 1));
        assert_eq!(p("6.1.0-50-cloud-amd64"), KernelVersion::new(6, 1));
        assert_eq!(p("6.12.48+deb13-cloud-amd64"), KernelVersion::new(6, 12));
        assert_eq!(p("7.2"), KernelVersion::new(7, 2));
        assert!(KernelVersion::parse("six").is_none());
        assert_eq!(KernelVersion::default(), KernelVersion::new(6, 18));
        let rules = |v: KernelVersion| {
            (
                v.mglru_counts_every_refault(),
                v.mglru_recent_within_max_nr_gens(),
                v.mglru_folio_seq_by_workingset(),
            )
        };
        assert_eq!(rules(p("6.1")), (false, false, false));
        assert_eq!(rules(p("6.4")), (false, false, false));
        assert_eq!(rules(p("6.5")), (true, false, false));
        assert_eq!(rules(p("6.12")), (true, false, false));
        assert_eq!(rules(p("6.14")), (true, true, true));
        assert_eq!(rules(p("6.18")), (true, true, true));
        assert_eq!(rules(p("7.2")), (true, true, true));
    }

    /// Before v6.14 (with 6.1.69's "mm/mglru: fix underprotected page cache"): an active
    /// folio joins the youngest generation, anon outside the swap cache the second
    /// youngest, a read() miss one above the oldest unless only two generations are left.
    #[test]
    fn folio_seq_placement_before_6_14() {
        const V: KernelVersion = KernelVersion::new(6, 1);
        let mut lg = LruGen {
            max_seq: 7,
            min_seq: [4, 4],
            ..Default::default()
        };
        let (file, anon) = (0, pg::SWAPBACKED);
        assert_eq!(lg.folio_seq(file | pg::ACTIVE, false, false, V), 7);
        assert_eq!(lg.folio_seq(anon | pg::ACTIVE, false, false, V), 7);
        assert_eq!(
            lg.folio_seq(file | pg::ACTIVE | pg::WORKINGSET, false, false, V),
            7
        );
        assert_eq!(lg.folio_seq(anon, true, false, V), 6);
        assert_eq!(
            lg.folio_seq(file | pg::RECLAIM | pg::WRITEBACK, false, false, V),
            6
        );
        // Four generations (4..=7): a read() miss joins min_seq + 1, workingset or not; a
        // folio rotated after writeback the oldest.
        assert_eq!(lg.folio_seq(file, false, false, V), 5);
        assert_eq!(lg.folio_seq(file | pg::WORKINGSET, false, false, V), 5);
        assert_eq!(lg.folio_seq(file, false, true, V), 4);
        // Three file generations (5..=7): min_seq + 2 >= max_seq, so the oldest.
        lg.min_seq = [4, 5];
        assert_eq!(lg.folio_seq(file, false, false, V), 5);
        assert_eq!(lg.folio_seq(anon, false, false, V), 5);
    }

    /// lru_gen_test_recent(): with max_seq 3 and the file type's oldest generation at 1, a
    /// shadow from generation 0 is recent for v6.14+ (within MAX_NR_GENS of max_seq) and
    /// not before (not the current oldest); one from generation 1 is recent for all.
    #[test]
    fn refault_recency_by_kernel_version() {
        for (v, old_recent) in [((6, 1), false), ((6, 12), false), ((6, 18), true)] {
            let mut mm = mglru_mm(KernelVersion::new(v.0, v.1));
            mm.lruvecs[0].lrugen.min_seq = [0, 1];
            let shadow = |seq: u64| Shadow::pack(seq << LRU_REFS_WIDTH, 0, false);
            assert_eq!(mm.lru_gen_test_recent(shadow(0), true), old_recent, "{v:?}");
            assert!(mm.lru_gen_test_recent(shadow(1), true), "{v:?}");
            // Anon's oldest is still 0: generation 0 is recent for anon on every version.
            assert!(mm.lru_gen_test_recent(shadow(0), false), "{v:?}");
        }
    }

    /// lru_gen_refault()'s counters by version, for four refaults: from a generation that
    /// is no longer the oldest (A), from the oldest by read() (B), by a fault (C), and by
    /// read() of a folio evicted PG_workingset with its refs at the top (D).
    ///
    /// | version | refault | activate | restore |
    /// |---|---|---|---|
    /// | 6.18 | A B C D = 4 | C = 1 | D = 1 |
    /// | 6.12 | A B C D = 4 | B C D = 3 | C D = 2 |
    /// | 6.1 | B C D = 3 | 0 | C D = 2 |
    #[test]
    fn refault_accounting_by_kernel_version() {
        use crate::vmstat::Ev;
        use crate::{Ctx, InstantIo};
        for (v, want) in [
            ((6, 18), (4, 1, 1)),
            ((6, 12), (4, 3, 2)),
            ((6, 1), (3, 0, 2)),
        ] {
            let mut mm = mglru_mm(KernelVersion::new(v.0, v.1));
            mm.lruvecs[0].lrugen.min_seq = [0, 1];
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            let mut refault = |mm: &mut crate::Mm, seq: u64, low: u64, ws: bool, fault: bool| {
                let pfn = mm.alloc_folio(&mut ctx, 0, 0).unwrap();
                mm.in_lru_fault = fault;
                mm.lru_gen_refault(pfn, Shadow::pack(seq << LRU_REFS_WIDTH | low, 0, ws));
                mm.in_lru_fault = false;
                mm.pages.hot[pfn as usize].flags
            };
            refault(&mut mm, 0, 0, false, false);
            refault(&mut mm, 1, 0, false, false);
            let c = refault(&mut mm, 1, 0, false, true);
            let d = refault(&mut mm, 1, 3, true, false);
            let got = (
                mm.ev.get(Ev::WorkingsetRefaultFile),
                mm.ev.get(Ev::WorkingsetActivateFile),
                mm.ev.get(Ev::WorkingsetRestoreFile),
            );
            assert_eq!(got, want, "kernel {v:?}");
            // Before v6.14 a refault in a fault becomes PG_workingset; from v6.14 only the
            // shadow's PG_workingset is restored.
            assert_eq!(c & pg::WORKINGSET != 0, v != (6, 18), "kernel {v:?}");
            assert!(d & pg::WORKINGSET != 0, "kernel {v:?}");
        }
    }

    /// Before v6.5, sort_folio() counts a folio it protects by its tier as a workingset
    /// activation; later kernels count activations only at refault.
    #[test]
    fn tier_protection_counts_activations_before_6_5() {
        use crate::vmstat::Ev;
        use crate::{Ctx, InstantIo};
        for (v, activated) in [((6, 1), true), ((6, 12), false), ((6, 18), false)] {
            let mut mm = mglru_mm(KernelVersion::new(v.0, v.1));
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            // Page 0 read twice (tier 1: refs 2 from v6.14, PG_workingset before), pages 1-3
            // once (tier 0).
            for p in 0..4 {
                mm.file_read(&mut ctx, 1, p, 1);
            }
            mm.file_read(&mut ctx, 1, 0, 1);
            let f = mm.cache_lookup(1, 0).unwrap();
            let fl = mm.pages.hot[f as usize].flags;
            if v == (6, 18) {
                assert_eq!(folio_lru_refs(fl), 2);
            } else {
                assert_eq!(folio_lru_refs_before_6_14(fl), 1);
                assert_eq!(lru_tier_from_refs_before_6_14(1), 1);
            }
            // Tier 1 refaults far more than tier 0: get_tier_idx() returns 0, tiers 1 and up
            // are protected.
            let lg = &mut mm.lruvecs[0].lrugen;
            lg.evicted[FILE] = [1000, 1000, 0, 0];
            lg.refaulted[FILE] = [0, 600, 0, 0];
            assert_eq!(lg.get_tier_idx(FILE, KernelVersion::default()), 0);
            // Before v6.14 the read() misses joined min_seq + 1: the first pass finds the
            // oldest generation empty and ages; the next evicts.
            for _ in 0..3 {
                if mm.cache_lookup(1, 1).is_none() {
                    break;
                }
                let mut sc = ScanControl::new(3, 0);
                sc.priority = 0;
                mm.shrink_node(&mut ctx, &mut sc);
            }
            // Page 0 was protected (moved to the next generation), the others evicted.
            assert!(mm.cache_lookup(1, 0).is_some(), "kernel {v:?}");
            assert!(mm.cache_lookup(1, 1).is_none(), "kernel {v:?}");
            assert_eq!(
                mm.ev.get(Ev::WorkingsetActivateFile),
                activated as u64,
                "kernel {v:?}"
            );
            mm.check_invariants().unwrap();
        }
    }

    /// fd accesses by version (`folio_inc_refs()` before v6.14, `lru_gen_inc_refs()` after):
    /// the flags after N accesses and the tier they give, by hand. R = PG_referenced, W =
    /// PG_workingset, cK = the refs bits.
    ///
    /// | N | 6.1 flags | 6.1 refs → tier | 6.18 flags | 6.18 refs → tier |
    /// |---|---|---|---|---|
    /// | 1 | R | 0 → 0 | R | 1 → 0 |
    /// | 2 | R W | 1 → 1 | R c1 | 2 → 1 |
    /// | 3 | R W c1 | 2 → 2 | R c2 | 3 → 2 |
    /// | 4 | R W c2 | 3 → 2 | R c3 | 4 → 2 |
    /// | 5 | R W c3 | 4 → 3 | R W c3 | W → 3 |
    /// | 6 | R W c3 | 4 → 3 | R W c3 | W → 3 |
    #[test]
    fn fd_access_tiers_by_kernel_version() {
        use crate::{Ctx, InstantIo};
        const R: u32 = pg::REFERENCED;
        const W: u32 = pg::WORKINGSET;
        let c = |k: u32| k << pg::LRU_REFS_SHIFT;
        let want_61 = [
            R,
            R | W,
            R | W | c(1),
            R | W | c(2),
            R | W | c(3),
            R | W | c(3),
        ];
        let tiers_61 = [0, 1, 2, 2, 3, 3];
        let want_618 = [R, R | c(1), R | c(2), R | c(3), R | W | c(3), R | W | c(3)];
        for (v, want, tiers) in [((6, 1), want_61, tiers_61), ((6, 18), want_618, tiers_61)] {
            let mut mm = mglru_mm(KernelVersion::new(v.0, v.1));
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            mm.file_read(&mut ctx, 1, 0, 1);
            let f = mm.cache_lookup(1, 0).unwrap();
            for n in 0..6 {
                if n > 0 {
                    mm.lru_gen_inc_refs(f);
                }
                let fl = mm.pages.hot[f as usize].flags;
                let bits = fl & (R | W | pg::LRU_REFS_MASK);
                assert_eq!(bits, want[n], "kernel {v:?}, {} accesses", n + 1);
                let tier = if v == (6, 1) {
                    lru_tier_from_refs_before_6_14(folio_lru_refs_before_6_14(fl))
                } else {
                    lru_tier_from_refs(folio_lru_refs(fl), fl & W != 0)
                };
                assert_eq!(tier, tiers[n], "kernel {v:?}, {} accesses", n + 1);
            }
        }
    }

    /// folio_update_gen() (a young PTE seen by the page-table walk): before v6.14 the first
    /// sighting moves the folio and clears its refs, PG_referenced and PG_workingset; since
    /// v6.14 the first sighting only sets PG_referenced and the second moves it and sets
    /// PG_workingset. A folio reclaim has isolated gets PG_referenced before v6.14.
    #[test]
    fn walk_promotion_by_kernel_version() {
        use crate::{Ctx, InstantIo};
        for v in [(6, 1), (6, 12), (6, 18)] {
            let old = v != (6, 18);
            let mut mm = mglru_mm(KernelVersion::new(v.0, v.1));
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            mm.touch(&mut ctx, 0, 0, true);
            let a = crate::memory::pte_pfn(mm.objects[0].ent[0]);
            let young = lru_gen_from_seq(mm.lruvecs[0].lrugen.max_seq);
            // Fault placement: the youngest generation before v6.14, the second after.
            let placed = folio_lru_gen(mm.pages.hot[a as usize].flags).unwrap();
            assert_eq!(placed == young, old, "kernel {v:?}");
            let refs_bits = pg::LRU_REFS_MASK & (1 << pg::LRU_REFS_SHIFT);
            mm.pages.hot[a as usize].flags |= refs_bits;
            let got = mm.folio_update_gen(a, young);
            let fl = mm.pages.hot[a as usize].flags;
            if old {
                assert_eq!(got, Some(placed), "kernel {v:?}");
                assert_eq!(folio_lru_gen(fl), Some(young));
                assert_eq!(
                    fl & (pg::REFERENCED | pg::WORKINGSET | pg::LRU_REFS_MASK),
                    0
                );
            } else {
                assert_eq!(got, None);
                assert_eq!(folio_lru_gen(fl), Some(placed));
                assert_ne!(fl & pg::REFERENCED, 0);
                assert_eq!(mm.folio_update_gen(a, young), Some(placed));
                let fl = mm.pages.hot[a as usize].flags;
                assert_eq!(folio_lru_gen(fl), Some(young));
                assert_eq!(fl & (pg::REFERENCED | pg::WORKINGSET), pg::WORKINGSET);
            }
            mm.check_invariants().unwrap();
            // Off the lists (isolated by reclaim).
            mm.lru_gen_isolate(a);
            let fl = mm.pages.hot[a as usize].flags;
            assert_eq!(fl & pg::REFERENCED, 0, "kernel {v:?}");
            assert_eq!(mm.folio_update_gen(a, young), None);
            let fl2 = mm.pages.hot[a as usize].flags;
            assert_eq!(fl2 & pg::REFERENCED != 0, old, "kernel {v:?}");
        }
    }

    /// lru_gen_eviction() and lru_gen_refault() of a file folio read three times, by hand.
    /// 6.1: PG_workingset + refs bits 1 → refs 2, tier order_base_2(3) = 2; token low bits
    /// refs - 1 = 1, shadow workingset bit (refs != 0) set; at refault (token 1 + workingset
    /// 1 = refs 2) tier 2 again, and no restore (not in a fault, refs below 3). 6.18 with
    /// its own flags for three reads (refs bits 2, refs 3): tier order_base_2(3) = 2, token
    /// low bits 2, no workingset bit; at refault tier 2, refs bits set back to 2.
    #[test]
    fn eviction_and_refault_tiers_by_kernel_version() {
        use crate::vmstat::Ev;
        use crate::{Ctx, InstantIo};
        let c = |k: u32| k << pg::LRU_REFS_SHIFT;
        for (v, flags, low, ws) in [
            ((6, 1), pg::REFERENCED | pg::WORKINGSET | c(1), 1, true),
            ((6, 18), pg::REFERENCED | c(2), 2, false),
        ] {
            let mut mm = mglru_mm(KernelVersion::new(v.0, v.1));
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            mm.file_read(&mut ctx, 1, 0, 1);
            let f = mm.cache_lookup(1, 0).unwrap();
            let fl = mm.pages.hot[f as usize].flags & !(pg::REFERENCED | pg::LRU_REFS_MASK);
            mm.pages.hot[f as usize].flags = fl | flags;
            let shadow = mm.lru_gen_eviction(f);
            let min_seq = mm.lruvecs[0].lrugen.min_seq[FILE];
            assert_eq!(
                shadow.age(),
                min_seq << LRU_REFS_WIDTH | low,
                "kernel {v:?}"
            );
            assert_eq!(shadow.workingset(), ws, "kernel {v:?}");
            assert_eq!(
                mm.lruvecs[0].lrugen.evicted[FILE],
                [0, 0, 1, 0],
                "kernel {v:?}"
            );
            let pfn = mm.alloc_folio(&mut ctx, 0, 0).unwrap();
            mm.lru_gen_refault(pfn, shadow);
            assert_eq!(
                mm.lruvecs[0].lrugen.refaulted[FILE],
                [0, 0, 1, 0],
                "kernel {v:?}"
            );
            assert_eq!(mm.ev.get(Ev::WorkingsetRestoreFile), 0, "kernel {v:?}");
        }
    }

    /// folio_check_references() by version for an isolated anon folio with a young PTE: 6.1
    /// (the classic rules) activates it, since look-around marks the folio it starts from
    /// referenced; 6.18 keeps it at the first sighting (lru_gen_set_refs()). Before v6.14 a
    /// mapped folio already marked referenced while isolated is kept without an rmap walk
    /// (its PTE stays young).
    #[test]
    fn isolated_folio_references_by_kernel_version() {
        use crate::vmscan::FolioRef;
        use crate::{Ctx, InstantIo};
        for (v, want) in [((6, 1), FolioRef::Activate), ((6, 18), FolioRef::Keep)] {
            let mut mm = mglru_mm(KernelVersion::new(v.0, v.1));
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            mm.touch(&mut ctx, 0, 0, true);
            mm.touch(&mut ctx, 0, 1, true);
            let a = crate::memory::pte_pfn(mm.objects[0].ent[0]);
            let b = crate::memory::pte_pfn(mm.objects[0].ent[1]);
            if v == (6, 1) {
                mm.lru_gen_isolate(b);
                mm.pages.set(b, pg::REFERENCED);
                assert_eq!(mm.folio_check_references(&mut ctx, b), FolioRef::Keep);
                assert_ne!(mm.objects[0].ent[1] & crate::memory::PTE_YOUNG, 0);
            }
            mm.lru_gen_isolate(a);
            assert_eq!(mm.folio_check_references(&mut ctx, a), want, "kernel {v:?}");
        }
    }

    /// folio_referenced() on MADV_RANDOM and MADV_SEQUENTIAL mappings: before v6.3 the walk
    /// clears their young bits and counts the random mapping's; from v6.3 both mappings are
    /// skipped (young bits left, nothing counted).
    #[test]
    fn references_of_mappings_without_recency_by_kernel_version() {
        use crate::filemap::Hint;
        use crate::{Ctx, InstantIo};
        for (v, hint, counted, cleared) in [
            ((6, 1), Hint::Random, 1, true),
            ((6, 1), Hint::Sequential, 0, true),
            ((6, 3), Hint::Random, 0, false),
            ((6, 18), Hint::Sequential, 0, false),
        ] {
            for lru in [crate::LruKind::Classic, crate::LruKind::Mglru] {
                let mut mm = mglru_mm(KernelVersion::new(v.0, v.1));
                mm.cfg.lru = lru;
                let mut io = InstantIo;
                let mut ctx = Ctx::new(0, &mut io, 0);
                mm.touch(&mut ctx, 0, 0, true);
                let a = crate::memory::pte_pfn(mm.objects[0].ent[0]);
                mm.set_hint(0, hint);
                let got = mm.folio_referenced(&mut ctx, a);
                let young = mm.objects[0].ent[0] & crate::memory::PTE_YOUNG != 0;
                assert_eq!((got, !young), (counted, cleared), "{v:?} {hint:?} {lru:?}");
            }
        }
    }

    /// lru_gen_look_around() without a walk context, after one aging has left n freshly
    /// faulted pages (all young) one generation below the youngest: 6.1 activates them when
    /// fewer than PAGEVEC_SIZE (15) PTEs need it (n pgactivate) and otherwise moves them in
    /// place (no pgactivate); from v6.3 each is activated. Every page ends in the youngest
    /// generation.
    #[test]
    fn look_around_batch_by_kernel_version() {
        use crate::vmstat::Ev;
        use crate::{Ctx, InstantIo};
        for (v, n, activated) in [
            ((6, 1), 10, 10),
            ((6, 1), 20, 0),
            ((6, 12), 10, 10),
            ((6, 12), 20, 20),
        ] {
            let mut mm = mglru_mm(KernelVersion::new(v.0, v.1));
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            for i in 0..n {
                mm.touch(&mut ctx, 0, i, true);
            }
            let max_seq = mm.lruvecs[0].lrugen.max_seq;
            assert!(mm.inc_max_seq(0, max_seq, 60, 0));
            let young = lru_gen_from_seq(max_seq + 1);
            let pfns: Vec<Pfn> = (0..n as usize)
                .map(|i| crate::memory::pte_pfn(mm.objects[0].ent[i]))
                .collect();
            assert!(pfns
                .iter()
                .all(|&p| folio_lru_gen(mm.pages.hot[p as usize].flags) != Some(young)));
            let before = mm.ev.get(Ev::PgActivate);
            mm.mm_walk_active = false;
            mm.lru_gen_look_around(&mut ctx, 0, 0, 0, pfns[0]);
            assert_eq!(mm.ev.get(Ev::PgActivate) - before, activated, "{v:?} n={n}");
            assert!(
                pfns.iter()
                    .all(|&p| folio_lru_gen(mm.pages.hot[p as usize].flags) == Some(young)),
                "{v:?} n={n}"
            );
            mm.check_invariants().unwrap();
        }
    }

    /// should_run_aging() before v6.14, by hand: three generations (1, 2, 3) of 100 file
    /// pages: aging when the youngest holds more than half, or the old one (seq 1) less than
    /// a quarter; four generations never; two always, with nothing to scan.
    #[test]
    fn aging_trigger_before_6_14_by_hand() {
        let mut mm = mglru_mm(KernelVersion::new(6, 12));
        let set = |mm: &mut crate::Mm, min: u64, sizes: [u64; 4]| {
            let lg = &mut mm.lruvecs[0].lrugen;
            lg.max_seq = 3;
            lg.min_seq = [min, min];
            for (seq, n) in sizes.iter().enumerate() {
                lg.nr_pages[lru_gen_from_seq(seq as u64)][FILE] = [*n, 0, 0];
            }
        };
        // (seq 0, 1, 2, 3) sizes; swappiness 0: file only.
        set(&mut mm, 1, [0, 20, 20, 60]);
        assert_eq!(mm.should_run_aging_before_6_14(0, 0, 0), (true, 100)); // 120 > 100
        assert_eq!(mm.should_run_aging_before_6_14(0, 0, 2), (true, 25));
        set(&mut mm, 1, [0, 20, 40, 40]);
        assert_eq!(mm.should_run_aging_before_6_14(0, 0, 0), (true, 100)); // 80 < 100
        set(&mut mm, 1, [0, 30, 30, 40]);
        assert_eq!(mm.should_run_aging_before_6_14(0, 0, 0), (false, 100));
        set(&mut mm, 0, [10, 10, 10, 70]);
        assert_eq!(mm.should_run_aging_before_6_14(0, 0, 0), (false, 100));
        set(&mut mm, 2, [0, 0, 50, 50]);
        assert_eq!(mm.should_run_aging_before_6_14(0, 0, 0), (true, 0));
    }

    /// Before v6.7 kswapd's eviction leaves the aging to lru_gen_age_node() (nothing to
    /// scan, no new generation); direct reclaim ages and returns what is to scan. From v6.7
    /// both age in the eviction path and rotate (-1).
    #[test]
    fn who_ages_by_kernel_version() {
        use crate::{Ctx, InstantIo};
        for (v, kswapd_ages) in [((6, 1), false), ((6, 12), true), ((6, 18), true)] {
            for kswapd in [true, false] {
                let mut mm = mglru_mm(KernelVersion::new(v.0, v.1));
                let mut io = InstantIo;
                let mut ctx = Ctx::new(0, &mut io, 0);
                for p in 0..64 {
                    mm.file_read(&mut ctx, 1, p, 1);
                }
                // Two generations left (2, 3): aging is needed on every version, and
                // nothing is cold enough to scan before it.
                mm.lruvecs[0].lrugen.min_seq = [2, 2];
                let mut sc = ScanControl::new(32, 0);
                sc.priority = 4;
                sc.kswapd = kswapd;
                let (nr, need) = mm.get_nr_to_scan(&mut ctx, 0, &sc, 0);
                assert!(need, "{v:?}");
                let aged = mm.lruvecs[0].lrugen.max_seq == 4;
                if kswapd && !kswapd_ages {
                    assert_eq!((nr, aged), (0, false), "{v:?}");
                } else if v == (6, 1) {
                    // 6.1's direct reclaim ages and returns what is to scan (0 here).
                    assert_eq!((nr, aged), (0, true), "{v:?} direct");
                } else {
                    assert_eq!((nr, aged), (-1, true), "{v:?} kswapd {kswapd}");
                }
            }
        }
    }

    /// Before v6.7 kswapd's lru_gen_age_node() ages a memcg that needs it, every other call
    /// while the eviction reclaims without needing aging (`memcgs_need_aging`).
    #[test]
    fn kswapd_ages_in_lru_gen_age_node_before_6_7() {
        use crate::{Ctx, InstantIo};
        let mut mm = mglru_mm(KernelVersion::new(6, 1));
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..64 {
            mm.touch(&mut ctx, 0, p, true);
        }
        // Faults joined max_seq (3): the youngest holds everything: aging is needed.
        assert_eq!(mm.lruvecs[0].lrugen.nr_pages[3][ANON][0], 64);
        mm.lruvecs[0].lrugen.min_seq = [1, 1];
        let mut sc = ScanControl::new(32, 0);
        sc.kswapd = true;
        sc.priority = 4;
        mm.lru_gen_age_node(&mut ctx, &mut sc);
        assert_eq!(
            mm.lruvecs[0].lrugen.max_seq, 3,
            "the first call only sets the flag"
        );
        assert!(sc.memcgs_need_aging);
        mm.lru_gen_age_node(&mut ctx, &mut sc);
        assert_eq!(mm.lruvecs[0].lrugen.max_seq, 4);
        mm.check_invariants().unwrap();
        // v6.18: lru_gen_age_node() never ages.
        let mut mm = mglru_mm(KernelVersion::new(6, 18));
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..64 {
            mm.touch(&mut ctx, 0, p, true);
        }
        let mut sc = ScanControl::new(32, 0);
        sc.kswapd = true;
        sc.memcgs_need_aging = true;
        mm.lru_gen_age_node(&mut ctx, &mut sc);
        assert_eq!(mm.lruvecs[0].lrugen.max_seq, 3);
    }

    /// v6.7+ `lru_gen_shrink_node()`: kswapd's `sc->nr_reclaimed` counts from zero in each
    /// call, so a `balance_pgdat()` pass late in a run (its scan_control already holds what
    /// the earlier passes reclaimed) still reclaims `nr_to_reclaim` before
    /// `should_abort_scan()` stops it, and the run's total is kept. (Without the reset the
    /// pass stopped after its first batch of 64.)
    #[test]
    fn kswapd_counts_each_lru_gen_shrink_node_call_from_zero() {
        use crate::mmzone::Wmark;
        use crate::{Ctx, InstantIo};
        let mut mm = mglru_mm(KernelVersion::new(6, 18));
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..600 {
            mm.file_read(&mut ctx, 1, p, 1);
        }
        // Every zone far below its high watermark: the watermark rule cannot stop the pass.
        let free = mm.zones[0].free;
        mm.zones[0].wmark[Wmark::High as usize] = free + 1000;
        let mut sc = ScanControl::new(256, 0);
        sc.kswapd = true;
        // A late pass of the priority loop (set_initial_priority() leaves it): its share
        // of the lruvec (600 >> 1) is more than nr_to_reclaim.
        sc.priority = 1;
        sc.nr_reclaimed = 1000; // reclaimed by this balance_pgdat() run's earlier passes
        let got = mm.lru_gen_shrink_node(&mut ctx, &mut sc);
        assert!(got >= 256, "reclaimed {got}, want nr_to_reclaim (256)");
        assert_eq!(sc.nr_reclaimed, 1000 + got);
        mm.check_invariants().unwrap();
    }

    /// try_to_inc_min_seq() on the same lists under both rules: max_seq 3, an anon page in
    /// generation 3 and a file page in generation 1 (6.1's placement of a fault and a
    /// read() miss). Both types' empty generations would let anon reach 2 and file 1; 6.1
    /// keeps anon's `min_seq` at file's (1, 1), v6.14+ lets anon move ahead (2, 1).
    #[test]
    fn min_seq_order_by_kernel_version() {
        use crate::{Ctx, InstantIo};
        for (v, want) in [((6, 1), [1, 1]), ((6, 18), [2, 1])] {
            let mut mm = mglru_mm(KernelVersion::new(6, 1));
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            mm.touch(&mut ctx, 0, 0, true);
            mm.file_read(&mut ctx, 1, 0, 1);
            let a = crate::memory::pte_pfn(mm.objects[0].ent[0]);
            let f = mm.cache_lookup(1, 0).unwrap();
            assert_eq!(folio_lru_gen(mm.pages.hot[a as usize].flags), Some(3));
            assert_eq!(folio_lru_gen(mm.pages.hot[f as usize].flags), Some(1));
            mm.cfg.kernel = KernelVersion::new(v.0, v.1);
            assert!(mm.try_to_inc_min_seq(0, 60));
            assert_eq!(mm.lruvecs[0].lrugen.min_seq, want, "kernel {v:?}");
            // No swap: anon stays where it is and file advances alone (over two empty
            // generations) on both.
            let mut mm2 = mglru_mm(KernelVersion::new(v.0, v.1));
            mm2.lruvecs[0].lrugen.min_seq = [0, 0];
            assert!(mm2.try_to_inc_min_seq(0, 0));
            assert_eq!(mm2.lruvecs[0].lrugen.min_seq, [0, 2], "kernel {v:?}");
            mm.check_invariants().unwrap();
        }
    }

    /// Type selection by hand. Anon tier 0 refaults 10 of 1000; file tier 0 10 of 1000 and
    /// file tier 1 900 of 1000; swappiness 60.
    /// - v6.14+ (all tiers): anon (10, 1000) gain 60 vs file (910, 2000) gain 140:
    ///   910 * 1064 * 60 = 58_094_400 > 11 * 2000 * 140 = 3_080_000 → anon.
    /// - 6.1 (first tiers): file's 10 refaults are under MIN_LRU_BATCH → file; the last
    ///   tier to evict: file tier 1 (900, 1000) gain 140 vs anon tier 0 (10, 1000) gain
    ///   60: 900 * 1064 * 60 = 57_456_000 > 11 * 1000 * 140 = 1_540_000 → tier 0, so
    ///   file's tiers 1 and up are protected.
    /// - 6.1's obvious choices: anon's oldest generation older than file's → anon;
    ///   swappiness 1 → file, 200 → anon, 0 → file.
    #[test]
    fn type_selection_by_kernel_version_by_hand() {
        let mut lg = LruGen::default();
        lg.refaulted[ANON][0] = 10;
        lg.evicted[ANON][0] = 1000;
        lg.refaulted[FILE] = [10, 900, 0, 0];
        lg.evicted[FILE] = [1000, 1000, 0, 0];
        assert_eq!(lg.get_type_to_scan(60), ANON);
        assert_eq!(lg.get_type_to_scan_before_6_14(60), (FILE, Some(0)));
        assert_eq!(lg.get_type_to_scan_before_6_14(1), (FILE, None));
        assert_eq!(lg.get_type_to_scan_before_6_14(200), (ANON, None));
        assert_eq!(lg.get_type_to_scan_before_6_14(0), (FILE, None));
        lg.min_seq = [0, 1];
        assert_eq!(lg.get_type_to_scan_before_6_14(60), (ANON, None));
        assert_eq!(lg.get_type_to_scan_before_6_14(1), (ANON, None));
        // get_tier_idx() gains: file tier 1 (300, 1000) vs tier 0 (100, 1000).
        // 6.18 (2:3): 300 * 1064 * 2 = 638_400 > 101 * 1000 * 3 = 303_000 → tier 0.
        // 6.1 (1:2): 300 * 1064 * 1 = 319_200 > 101 * 1000 * 2 = 202_000 → tier 0;
        // with tier 1 at 150: 6.1 159_600 <= 202_000 → not worse (tiers 2, 3 have no
        // refaults: tier 3); 6.18 319_200 > 303_000 → tier 0.
        lg.refaulted[FILE] = [100, 300, 0, 0];
        assert_eq!(lg.get_tier_idx(FILE, KernelVersion::new(6, 18)), 0);
        assert_eq!(lg.get_tier_idx(FILE, KernelVersion::new(6, 1)), 0);
        lg.refaulted[FILE][1] = 150;
        assert_eq!(lg.get_tier_idx(FILE, KernelVersion::new(6, 18)), 0);
        assert_eq!(lg.get_tier_idx(FILE, KernelVersion::new(6, 1)), 3);
    }

    /// kswapd's eviction of 800 read() pages (no swap) asking for 512 pages, by version.
    /// v6.7+ (`set_initial_priority()`): reclaimable 800, fls(800) - 1 - fls(511) = 0, so
    /// priority 6 (the floor); it then reclaims. 6.1: the eviction runs at the priority
    /// kswapd's loop gives: at DEF_PRIORITY 800 >> 12 = 0 pages to scan, nothing reclaimed;
    /// at priority 2 the share is recomputed before each batch from what is left: 200
    /// (the first call only moves file's `min_seq` past the empty generation 0: 1 page
    /// counted), 200 (64 evicted: 65), 184 (129), 168 (193 >= 168: done): 192 pages
    /// reclaimed, short of the 512 asked (6.1's should_abort_scan() would go on for
    /// kswapd until nr_to_reclaim, but the priority's share ends the loop first).
    #[test]
    fn kswapd_eviction_priority_by_kernel_version() {
        use crate::{Ctx, InstantIo};
        for v in [(6, 1), (6, 18)] {
            let mut mm = mglru_mm(KernelVersion::new(v.0, v.1));
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            for p in 0..800 {
                mm.file_read(&mut ctx, 1, p, 1);
            }
            let mut sc = ScanControl::new(512, 0);
            sc.kswapd = true;
            sc.priority = DEF_PRIORITY;
            mm.shrink_node(&mut ctx, &mut sc);
            if v == (6, 1) {
                assert_eq!(sc.priority, DEF_PRIORITY);
                assert_eq!(sc.nr_reclaimed, 0);
                sc.priority = 2;
                mm.shrink_node(&mut ctx, &mut sc);
                assert_eq!(sc.nr_reclaimed, 192);
            } else {
                assert_eq!(sc.priority, DEF_PRIORITY / 2);
                assert!(sc.nr_reclaimed > 0);
            }
            mm.check_invariants().unwrap();
        }
    }

    /// A file stream read past a hot anon set on 6.1 (the guest's v04, docs/fidelity.md
    /// session 21), 2,048 pages of which ~1,510 are on the LRU once reclaim starts (the rest
    /// free). The hot set's faults put it in `max_seq` (3); the stream's read() misses join
    /// generation 1 (`min_seq + 1` of four generations). The first eviction finds both
    /// oldest generations (0) empty and moves both `min_seq` to 1 (anon's, which could go
    /// to 2, may not pass file's). Three generations are left, and `should_run_aging()`
    /// before v6.14 asks for a new one when the youngest holds more than half the pages or
    /// the oldest less than a quarter:
    /// - 1,000 hot pages (2 x 1,000 > ~1,510): one aging (`max_seq` 4). Its walk promotes
    ///   the hot pages it finds young to generation 3 (the walk's `max_seq`), the reads
    ///   join generation 2 until generation 1 drains, then both `min_seq` move to 2: three
    ///   generations again, the youngest (4) empty and the oldest (2) the stream's ~500
    ///   pages (4 x 500 > ~1,510), so no second aging; the reads join the oldest generation
    ///   (`min_seq + MIN_NR_GENS >= max_seq`) from then on. Anon's oldest generation is
    ///   empty throughout: no anon page is scanned (the guest scans anon of its own
    ///   processes and initramfs, older than the hot set, which the model leaves out).
    /// - 600 hot pages (2 x 600 < ~1,500; the stream's ~900 in the oldest): no aging
    ///   (`max_seq` stays 3, as in the guest's v07).
    ///
    /// Cost: ~0.05 s (debug build).
    #[test]
    fn file_stream_beside_hot_anon_ages_once_on_6_1() {
        use crate::{Ctx, InstantIo};
        for (hot, max_seq) in [(1000u32, 4u64), (600, 3)] {
            let mut cfg = crate::testutil::tiny_config(crate::BalanceKind::RefaultCost, 2048);
            cfg.lru = crate::LruKind::Mglru;
            cfg.readahead_max_pages = 0;
            cfg.kernel = KernelVersion::new(6, 1);
            let mut mm = crate::Mm::new(cfg);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            for i in 0..hot {
                mm.touch(&mut ctx, 0, i, true);
            }
            for i in 0..4 * 2048u32 {
                mm.file_read(&mut ctx, 1, i, 1);
                mm.touch(&mut ctx, 0, (i * 7) % hot, false);
                ctx.now += 10_000;
            }
            let ev = |e: Ev| mm.ev.0[e as usize];
            assert!(
                ev(Ev::PgStealKswapd) + ev(Ev::PgStealDirect) > 4000,
                "hot {hot}"
            );
            let lg = &mm.lruvecs[0].lrugen;
            assert_eq!(
                (lg.max_seq, lg.walk.agings),
                (max_seq, max_seq - 3),
                "hot {hot}"
            );
            assert_eq!(lg.min_seq, [max_seq - 2; 2], "hot {hot}");
            assert_eq!(ev(Ev::PgScanAnon), 0, "hot {hot}");
            // The stream is in the oldest generation, the hot set in the one after it.
            let pages = |seq: u64, ty: usize| lg.nr_pages[lru_gen_from_seq(seq)][ty][0];
            let total: u64 = (lg.min_seq[ANON]..=lg.max_seq)
                .map(|seq| pages(seq, ANON) + pages(seq, FILE))
                .sum();
            assert!(pages(max_seq - 2, FILE) * 4 > total, "hot {hot}");
            assert_eq!(pages(max_seq - 2, ANON), 0, "hot {hot}");
            assert!(pages(3, ANON) >= hot as u64 * 9 / 10, "hot {hot}");
            mm.check_invariants().unwrap();
        }
    }

    /// kswapd's boosted pass (`sc->may_writepage` and `sc->may_swap` clear) by kernel
    /// version. 64 anon pages and 200 clean file pages share the oldest generation (3 of
    /// 3..5). 6.1: root reclaim evicts at swappiness 1 (memcg reclaim at 0), takes file
    /// pages, and `isolate_folio()` refuses the anon ones (outside the swap cache), which
    /// stay on their list; with `may_writepage` the same anon scan isolates 64. v6.12: the
    /// pass evicts nothing.
    #[test]
    fn boosted_kswapd_pass_by_kernel_version() {
        use crate::{Ctx, InstantIo};
        for v in [(6, 1), (6, 12)] {
            let old = v == (6, 1);
            let mut mm = mglru_mm(KernelVersion::new(v.0, v.1));
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            for p in 0..64 {
                mm.touch(&mut ctx, 0, p, true);
            }
            // Two agings without a walk: max_seq 5, the faults' generation (3) the oldest.
            mm.inc_max_seq(0, 3, 60, 0);
            mm.inc_max_seq(0, 4, 60, 0);
            mm.try_to_inc_min_seq(0, 60);
            for p in 0..200 {
                mm.file_read(&mut ctx, 1, p, 1);
            }
            let lg = &mm.lruvecs[0].lrugen;
            assert_eq!((lg.min_seq, lg.max_seq), ([3, 3], 5), "{v:?}");
            assert_eq!(lg.nr_pages[3][ANON][0], 64, "{v:?}");
            assert_eq!(lg.nr_pages[3][FILE][0], 200, "{v:?}");
            let mut sc = ScanControl::new(32, 0);
            sc.kswapd = true;
            sc.priority = 0;
            sc.may_writepage = false;
            sc.may_swap = false;
            assert_eq!(mm.lru_gen_swappiness(0, &sc), old as u64, "{v:?}");
            sc.cgroup_reclaim = true;
            assert_eq!(mm.lru_gen_swappiness(0, &sc), 0, "{v:?}");
            sc.cgroup_reclaim = false;
            if old {
                assert_eq!(mm.scan_folios(&mut ctx, 0, &mut sc, ANON, 0), 0);
                assert_eq!(mm.ev.get(Ev::PgScanAnon), 0);
                assert_eq!(mm.lruvecs[0].lrugen.nr_pages[3][ANON][0], 64);
                mm.check_invariants().unwrap();
            }
            let got = mm.lru_gen_shrink_node(&mut ctx, &mut sc);
            if old {
                // (`got` includes the MIN_LRU_BATCH 6.1's should_abort_scan() adds.)
                assert!(got > 0, "6.1 reclaimed nothing");
                assert!(mm.ev.get(Ev::PgStealFile) > 0);
            } else {
                assert_eq!(got, 0, "{v:?}");
            }
            assert_eq!(mm.ev.get(Ev::PgScanAnon), 0, "{v:?}");
            assert_eq!(mm.ev.get(Ev::PswpOut), 0, "{v:?}");
            mm.check_invariants().unwrap();
            if old {
                sc.may_writepage = true;
                assert!(mm.scan_folios(&mut ctx, 0, &mut sc, ANON, 0) > 0);
                assert_eq!(mm.ev.get(Ev::PgScanAnon), 64);
            }
        }
    }

    /// 6.1's `lru_gen_shrink_lruvec()` leaves `sc->memcgs_need_aging` set when the loop ends
    /// on an eviction that returns 0 (`goto done`), even after reclaiming a batch without
    /// needing aging: 100 file pages in the oldest of three generations, kswapd at priority
    /// 0; the second eviction empties the generation, `min_seq` moves and only two are left.
    #[test]
    fn memcgs_need_aging_kept_when_eviction_runs_out_on_6_1() {
        use crate::{Ctx, InstantIo};
        let mut mm = mglru_mm(KernelVersion::new(6, 1));
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..100 {
            mm.file_read(&mut ctx, 1, p, 1);
        }
        mm.try_to_inc_min_seq(0, 60);
        assert_eq!(mm.lruvecs[0].lrugen.min_seq, [1, 1]);
        assert_eq!(mm.lruvecs[0].lrugen.nr_pages[1][FILE][0], 100);
        let mut sc = ScanControl::new(1000, 0);
        sc.kswapd = true;
        sc.priority = 0;
        sc.memcgs_need_aging = true;
        mm.try_to_shrink_lruvec(&mut ctx, 0, &mut sc);
        assert_eq!(mm.ev.get(Ev::PgStealFile), 100);
        assert_eq!(mm.lruvecs[0].lrugen.min_seq, [2, 2]);
        assert!(sc.memcgs_need_aging);
        mm.check_invariants().unwrap();
    }

    /// `evict_folios()`'s retry and `sc->nr_scanned`. Eight clean file pages in the oldest
    /// generation; one is held by a read (`read_pinned`: `__remove_mapping()` cannot freeze
    /// it), one is still being read (PG_locked, `folio_trylock()` fails). Each
    /// `shrink_folio_list()` pass counts the pages it got past the lock: 7, then the pinned
    /// one again on the retry (6.1.103+ and v6.11+ no longer take it off before the retry)
    /// = 8. 6.1 does not retry the locked folio (`folio_test_locked()`): it goes back
    /// active at once; v6.14+ retries it (no lock test), and it fails the lock again. The
    /// model before this test counted the batch as isolated (8), the retried pair again
    /// (10), and retried the locked folio on 6.1. Debug cost ~0.05 s.
    #[test]
    fn retried_folio_counted_per_pass_and_locked_not_retried_on_6_1() {
        use crate::{Ctx, InstantIo};
        for v in [(6, 1), (6, 12), (6, 18)] {
            let old = v != (6, 18);
            let mut mm = mglru_mm(KernelVersion::new(v.0, v.1));
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            for p in 0..8 {
                mm.file_read(&mut ctx, 1, p, 1);
            }
            mm.try_to_inc_min_seq(0, 60);
            let lg = &mm.lruvecs[0].lrugen;
            let oldest = lru_gen_from_seq(lg.min_seq[FILE]);
            assert_eq!(lg.nr_pages[oldest][FILE][0], 8, "{v:?}");
            let pinned = mm.cache_lookup(1, 2).unwrap();
            let locked = mm.cache_lookup(1, 5).unwrap();
            mm.read_pinned = pinned;
            mm.pages.lock_for_io(locked, u64::MAX / 2);
            let mut sc = ScanControl::new(32, 0);
            sc.kswapd = true;
            sc.priority = 0;
            mm.evict_folios(&mut ctx, 0, &mut sc, 60);
            assert_eq!(mm.ev.get(Ev::PgStealFile), 6, "{v:?}");
            assert_eq!(sc.nr_scanned, 8, "{v:?}");
            // Before v6.14 both went back active: the youngest generation.
            let youngest = lru_gen_from_seq(mm.lruvecs[0].lrugen.max_seq);
            for pfn in [pinned, locked] {
                let gen = folio_lru_gen(mm.pages.hot[pfn as usize].flags);
                assert!(gen.is_some(), "{v:?}");
                if old {
                    assert_eq!(gen, Some(youngest), "{v:?}");
                }
            }
            mm.check_invariants().unwrap();
        }
    }
}

/// The per-zone generation lists (`lrugen->folios[gen][type][zone]`) under kswapd woken for
/// a lower zone's watermark boost (`sc->reclaim_idx` below the highest zone).
#[cfg(test)]
mod zone_tests {
    use super::*;
    use crate::mmzone::{ZONE_DMA, ZONE_DMA32};
    use crate::testutil::tiny_config;
    use crate::{Ctx, InstantIo, Mm};

    const DMA: usize = 0;
    const DMA32: usize = 1;

    /// A DMA (512 pages) + DMA32 (1536) machine under the multi-gen LRU (v6.12), no swap,
    /// after reading 1700 file pages once: allocations fill DMA32 first, then DMA, so the
    /// oldest file generation holds folios of both zones, DMA32's at the tail.
    fn two_zone_mglru_mm() -> Mm {
        let mut cfg = tiny_config(crate::BalanceKind::RefaultCost, 2048);
        cfg.zones = vec![("DMA", 512), ("DMA32", 1536)];
        cfg.lru = crate::LruKind::Mglru;
        cfg.readahead_max_pages = 0;
        cfg.swap_areas.clear();
        cfg.kernel = KernelVersion::new(6, 12);
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..1700 {
            mm.file_read(&mut ctx, 1, p, 1);
        }
        mm.try_to_inc_min_seq(0, 0);
        mm
    }

    fn kswapd_sc(reclaim_idx: usize) -> ScanControl {
        let mut sc = ScanControl::new(32, 0);
        sc.kswapd = true;
        sc.reclaim_idx = reclaim_idx;
        sc
    }

    /// The oldest file generation's pages per zone, and the next generation's.
    fn oldest_file(mm: &Mm) -> ([u64; NR_ZONES], [u64; NR_ZONES]) {
        let lg = &mm.lruvecs[0].lrugen;
        let gen = lru_gen_from_seq(lg.min_seq[FILE]);
        (
            lg.nr_pages[gen][FILE],
            lg.nr_pages[(gen + 1) % MAX_NR_GENS as usize][FILE],
        )
    }

    /// kswapd balancing a boosted DMA (`reclaim_idx` = DMA) evicts only DMA folios:
    /// `scan_folios()` takes DMA's list first, 64 pages a batch (172 DMA folios; the 1,528
    /// DMA32 folios of the same generation stay untouched), and once DMA's list is empty moves
    /// the DMA32 folios it reaches to the next generation (`sort_folio()`'s "ineligible":
    /// PGREFILL, no eviction) so `min_seq` can advance. Before the per-zone lists this
    /// pass evicted the DMA32 folios at the tail of the single list. Debug cost ~0.1 s.
    #[test]
    fn kswapd_for_dma_evicts_only_dma_folios() {
        let mut mm = two_zone_mglru_mm();
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let seq = mm.lruvecs[0].lrugen.min_seq[FILE];
        assert!(mm.lruvecs[0].lrugen.nr_gens(FILE) > MIN_NR_GENS);
        let (old, next) = oldest_file(&mm);
        assert_eq!((old[DMA], old[DMA32], next[DMA32]), (172, 1528, 0));
        let free = [mm.zones[DMA].free, mm.zones[DMA32].free];
        let mut sc = kswapd_sc(ZONE_DMA);
        mm.evict_folios(&mut ctx, 0, &mut sc, 0);
        // First batch: 64 DMA pages, nothing of DMA32 scanned.
        assert_eq!(sc.nr_reclaimed, 64);
        assert_eq!(mm.zones[DMA].free, free[0] + 64);
        assert_eq!(mm.zones[DMA32].free, free[1]);
        assert_eq!(oldest_file(&mm).0[DMA32], 1528);
        assert_eq!(mm.ev.get(Ev::PgRefill), 0);
        // 64 + 44 more, then DMA32's 1,528 move to the next generation, which becomes the
        // oldest.
        mm.evict_folios(&mut ctx, 0, &mut sc, 0);
        mm.evict_folios(&mut ctx, 0, &mut sc, 0);
        assert_eq!(sc.nr_reclaimed, 172);
        assert_eq!(mm.zones[DMA].free, free[0] + 172);
        assert_eq!(mm.zones[DMA32].free, free[1]);
        assert_eq!(mm.ev.get(Ev::PgRefill), 1528);
        assert_eq!(mm.lruvecs[0].lrugen.min_seq[FILE], seq + 1);
        assert_eq!(oldest_file(&mm).0, [0, 1528, 0]);
        mm.check_invariants().unwrap();
    }

    /// `scan_folios()`'s zone order, `zone = (reclaim_idx + i) % MAX_NR_ZONES` for
    /// `i = MAX_NR_ZONES..1` with the kernel's five zone types (DMA, DMA32, Normal,
    /// Movable, Device), by hand: reclaim_idx Normal → 2, 1, 0, (4, 3); DMA32 → 1, 0, (4, 3),
    /// 2; DMA → 0, (4, 3), 2, 1. On the two-zone machine kswapd for DMA32 (the highest
    /// zone) takes DMA32's list first: one batch of 64 DMA32 pages, DMA's untouched.
    #[test]
    fn scan_folios_zone_order() {
        use crate::mmzone::ZONE_NORMAL;
        let mut cfg = tiny_config(crate::BalanceKind::RefaultCost, 3072);
        cfg.zones = vec![("DMA", 1024), ("DMA32", 1024), ("Normal", 1024)];
        let three = Mm::new(cfg);
        let order = |idx| {
            let (o, n) = three.lru_gen_zone_order(idx);
            o[..n].to_vec()
        };
        assert_eq!(order(ZONE_NORMAL), [2, 1, 0]);
        assert_eq!(order(ZONE_DMA32), [1, 0, 2]);
        assert_eq!(order(ZONE_DMA), [0, 2, 1]);

        let mut mm = two_zone_mglru_mm();
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let free = [mm.zones[DMA].free, mm.zones[DMA32].free];
        let mut sc = kswapd_sc(ZONE_DMA32);
        mm.evict_folios(&mut ctx, 0, &mut sc, 0);
        assert_eq!(sc.nr_reclaimed, 64);
        assert_eq!(mm.zones[DMA32].free, free[1] + 64);
        assert_eq!(mm.zones[DMA].free, free[0]);
        assert_eq!(oldest_file(&mm).0, [172, 1528 - 64, 0]);
        mm.check_invariants().unwrap();
    }
}
