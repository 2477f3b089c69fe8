//! Workingset detection: telling a page that comes back from a page seen once.
//!
//! # The problem
//! The inactive list is the only place reclaim can see a page's use before evicting it. When
//! the working set is larger than the inactive list but would fit in memory, pages are
//! evicted before their second access and the active list never learns of them: the cache
//! thrashes and nothing in the LRU notices. The workingset_refault_* counters are that IO.
//!
//! # The idea
//! ```text
//!    fault ─> [ inactive ] ─evict─> shadow entry in the page-cache / swap slot
//!                  │  ↑                   │ (nonresident_age at eviction, memcg, workingset bit)
//!          activate│  │deactivate         ▼
//!             [ active ]        refault: distance = age(now) - age(eviction)
//! ```
//! The non-resident clock (`nonresident_age`) advances on every eviction and activation, so
//! the distance between a page's eviction and its refault counts the slots that were taken
//! from the inactive list meanwhile. Had the inactive list been `distance` pages longer, the
//! page would have stayed. If that many pages could have been taken from the other lists
//! (the "workingset size" — active file, plus anon when there is swap), the refault is a sign
//! of thrashing, and the page is activated at once to compete with the active pages:
//! ```text
//!     activate  ⇔  distance ≤ workingset_size(lruvec, type, swap available)
//! ```
//! A refault of a page that was already PG_workingset (it had been active) is a *restore*:
//! memory is too small for the working set, and the balancing model is told the IO cost.
//!
//! # Why this rule and what a wrong guess costs
//! The activation is speculative. A wrongly activated page is deactivated by the next
//! active-list scan like any other, so a wrong guess costs one trip around the active list.
//!
//! # In this model
//! Shadows are packed into 57 bits: age (40 bits), memcg id (16), workingset (1). The
//! eviction lruvec is the *reclaim target's* (root for global reclaim, the memcg for limit
//! reclaim), as `workingset_eviction()` takes `target_memcg`. Counters:
//! workingset_refault_*, workingset_activate_*, workingset_restore_*. Worked example (unit
//! test `refault_distance_activation`): evicted at age 100, refault at age 150, distance 50;
//! active file 40 + active anon 5 + inactive anon 10 with swap → 55 ≥ 50 → activate.
//!
//! # Where we differ from the kernel (v6.18)
//! - No `bucket_order` coarsening (exact ages; the kernel is exact below 2^36 pages too).
//! - Shadows are kept until the slot is reused or the shadow-node shrinker frees the xarray
//!   leaf holding them ([`crate::xarray`]: `workingset_nodes`, `workingset_nodereclaim`).
//!
//! # Kernel references
//! mm/workingset.c `workingset_age_nonresident()`, `workingset_eviction()`,
//! `workingset_test_recent()`, `workingset_refault()`; seed 000.

use crate::balance::WsSizes;
use crate::lruvec::ancestors;
use crate::page::pg;
use crate::types::*;
use crate::vmstat::Ev;
use crate::Mm;

const AGE_BITS: u32 = 40;
const AGE_MASK: u64 = (1 << AGE_BITS) - 1;

/// A packed shadow entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shadow(pub u64);

impl Shadow {
    pub fn pack(age: u64, memcg: u16, workingset: bool) -> Shadow {
        Shadow(((age & AGE_MASK) << 17) | ((memcg as u64) << 1) | workingset as u64)
    }
    pub fn age(self) -> u64 {
        self.0 >> 17
    }
    pub fn memcg(self) -> u16 {
        ((self.0 >> 1) & 0xffff) as u16
    }
    pub fn workingset(self) -> bool {
        self.0 & 1 != 0
    }
}

/// The kernel version the model follows (`model.kernel`): the rules that changed between
/// the kernels the VM twin boots are switched on it. The model follows v6.18; an older
/// version selects the older rule where a commit listed below changed one (each rule's doc
/// comment names its commit); a newer version than 6.18 gets 6.18's rules
/// except where a later commit is listed (7.1's shadow-shrinker sizing).
///
/// | since | commit (subject) | rule |
/// |---|---|---|
/// | 6.5 | "Multi-gen LRU: fix workingset accounting" | [`Self::mglru_counts_every_refault`] |
/// | 6.3 | "mm: add vma_has_recency()" | [`Self::rmap_ignores_vmas_without_recency`] |
/// | 6.3 | "mm: multi-gen LRU: simplify lru_gen_look_around()" | [`Self::mglru_look_around_activates_each`] |
/// | 6.14 | "mm/mglru: rework refault detection" | [`Self::mglru_recent_within_max_nr_gens`] |
/// | 6.14 | "mm/mglru: rework workingset protection" | [`Self::mglru_folio_seq_by_workingset`] |
/// | 6.14 | "mm/mglru: rework aging feedback" | [`Self::mglru_aging_by_generations_only`] |
/// | 6.7 | "mm/mglru: respect min_ttl_ms with memcgs" | [`Self::mglru_kswapd_ages_in_eviction`] |
/// | 6.12 | "memcg: use ratelimited stats flush in the reclaim" | [`Self::reclaim_reads_ratelimited_stats`] |
/// | 6.10 | "mm, vmscan: retry kswapd's priority loop with cache_trim_mode off on failure" | [`Self::kswapd_retries_without_cache_trim`] |
/// | 6.2 | "mm: vmscan: make rotations a secondary factor in balancing anon vs file" | [`Self::lru_cost_counts_rotations`] |
/// | 6.15 | "mm: page_alloc: don't steal single pages from biggest buddy" | [`Self::boost_on_every_fallback`] |
/// | 4.7 | "mm: filemap: only do access activations on reads" | [`Self::write_begin_marks_accessed`] |
/// | 4.6 | SLUB `allocate_slab()`'s first attempt clears `__GFP_RECLAIM` (not only direct reclaim; boundary not bisected) | [`Self::slab_first_try_skips_kswapd`] |
/// | 4.8 | "mm, vmscan: make kswapd reclaim in terms of nodes" | [`Self::kswapd_balances_high_order`] |
/// | 5.0 | "mm: reclaim small amounts of memory when an external fragmentation event occurs" | [`Self::watermark_boosting`] |
/// | 5.9 | "mm: proactive compaction" | [`Self::proactive_compaction`] |
/// | 7.1 | "mm: workingset: use lruvec_lru_size() to get the number of lru pages" | [`Self::shadow_shrinker_counts_memcg_lru_zone_size`] |
/// | 4.10 | "mm: vmscan: reduce size of inactive file list" (and the v4.7 reclaim rules listed there) | [`Self::lru_balance_v4_7`] |
/// | 5.1 | "mm, page_alloc: always use a captured page regardless of compaction result" | [`Self::deferred_direct_compaction_stalls`] |
/// | 4.9 | "mm, vmscan: make compaction_ready() more accurate and readable" | [`Self::compaction_ready_by_suitability`] |
/// | 6.15 | "mm: compaction: push watermark into compaction_suitable() callers" | [`Self::compaction_ready_costly_boost`] |
/// | 5.3 | "mm, reclaim: make should_continue_reclaim perform dryrun detection" | [`Self::reclaim_compaction_stops_when_suitable`] |
/// | 6.16 | "ext4: enable large folio for regular file" | the default of `model.max_file_folio_order` (refault-scenario's resolve: 0 before) |
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct KernelVersion {
    pub major: u16,
    pub minor: u16,
}

impl Default for KernelVersion {
    /// v6.18, the version the model follows.
    fn default() -> Self {
        KernelVersion::new(6, 18)
    }
}

impl KernelVersion {
    pub const fn new(major: u16, minor: u16) -> Self {
        KernelVersion { major, minor }
    }

    /// Since v6.5 ("Multi-gen LRU: fix workingset accounting", Fixes: the multi-gen LRU's
    /// first commit; not found in the 6.1-stable series searched, and Debian's
    /// 6.1.0-50 counts as the older rule says): `lru_gen_refault()` counts
    /// `workingset_refault_*` for every refault whose shadow is the folio's own lruvec, and
    /// `workingset_activate_*` for the recent ones. Before (6.1): only recent refaults count
    /// as refaults, and `workingset_activate_*` counts the folios `sort_folio()` protects
    /// by their tier instead.
    pub fn mglru_counts_every_refault(self) -> bool {
        self >= KernelVersion::new(6, 5)
    }

    /// Since v6.3 ("mm: add vma_has_recency()", Yu Zhao, December 2022):
    /// `folio_referenced()` skips every mapping without recency (`VM_SEQ_READ` or
    /// `VM_RAND_READ`, from MADV_SEQUENTIAL / MADV_RANDOM) through
    /// `invalid_folio_referenced_vma()`, for both LRUs. Before (6.1): the rmap walk visits
    /// such mappings and clears their young bits; `folio_referenced_one()` counts a young
    /// PTE unless the mapping is `VM_SEQ_READ` (so a MADV_RANDOM mapping's references count
    /// as any other's), and the multi-gen LRU's look-around runs only for mappings with
    /// neither flag.
    pub fn rmap_ignores_vmas_without_recency(self) -> bool {
        self >= KernelVersion::new(6, 3)
    }

    /// Since v6.3 ("mm: multi-gen LRU: clarify scan_control flags", Yu Zhao, December
    /// 2022): root reclaim without `sc->may_writepage` or `sc->may_unmap` (kswapd's boosted
    /// passes) evicts nothing from the multi-gen LRU (`lru_gen_shrink_node()` returns at
    /// once), `get_swappiness()` is 0 without `sc->may_swap`, and `isolate_folio()` refuses
    /// dirty folios and anon folios outside the swap cache only without `__GFP_IO`. Before
    /// (6.1): root reclaim always reaches `lru_gen_shrink_lruvec()`, which evicts at
    /// swappiness 1 when `sc->may_swap` is clear (0 for memcg reclaim), and `isolate_folio()`
    /// refuses a mapped folio without `sc->may_unmap` and a dirty folio or an anon folio
    /// outside the swap cache without `sc->may_writepage` (`scan_folios()` skips them).
    pub fn mglru_rejects_opportunistic_reclaim(self) -> bool {
        self >= KernelVersion::new(6, 3)
    }

    /// Since v6.3 ("mm: multi-gen LRU: simplify lru_gen_look_around()", T.J. Alumbaugh,
    /// January 2023): look-around without a page-table walk context activates each young
    /// folio outside the youngest generation (`folio_activate()`). Before (6.1): it counts
    /// those PTEs first and activates their folios only when fewer than `PAGEVEC_SIZE` (15),
    /// else moves them all to the youngest generation in place under the lru_lock
    /// (`folio_update_gen()`, no `pgactivate`).
    pub fn mglru_look_around_activates_each(self) -> bool {
        self >= KernelVersion::new(6, 3)
    }

    /// Since v6.14 ("mm/mglru: rework refault detection"): `lru_gen_test_recent()` calls a
    /// refault recent when its eviction generation is within `MAX_NR_GENS` of `max_seq`.
    /// Before: only when it was evicted from the generation that is still the oldest of its
    /// type (`min_seq[type]`).
    pub fn mglru_recent_within_max_nr_gens(self) -> bool {
        self >= KernelVersion::new(6, 14)
    }

    /// Since v6.14 ("mm/mglru: rework workingset protection"): `lru_gen_folio_seq()` places
    /// by PG_workingset (an active folio joins `max_seq - 1`, `max_seq` if workingset; a
    /// read() miss the oldest generation), `lru_gen_refault()` activates only in a fault and
    /// restores PG_workingset from the shadow. Before (6.1 from 6.1.69 and 6.8–6.13, with
    /// "mm/mglru: fix underprotected page cache"): `lru_gen_add_folio()` puts an active
    /// folio in `max_seq`, anon outside the swap cache and dirty folios under reclaim in
    /// `max_seq - 1`, the rest in `min_seq + 1` unless only two generations are left or it
    /// is rotated after writeback (`min_seq`); a refault in a fault, or with the refs
    /// counter at its top, sets PG_workingset and counts `workingset_restore_*`. The same
    /// commit changed how the flags count accesses; before it (mm/mglru.rs
    /// `folio_lru_refs_before_6_14()`): `folio_inc_refs()` sets PG_referenced, then
    /// PG_workingset, then counts the refs bits; a tier is `order_base_2(refs + 1)` of the
    /// refs bits plus PG_workingset; `folio_update_gen()` promotes at the first young PTE
    /// and clears the refs, PG_referenced and PG_workingset (a folio isolated by reclaim
    /// gets PG_referenced); `isolate_folio()` clears PG_referenced (and an unreferenced
    /// folio's PG_workingset); `folio_check_references()` has no multi-gen branch (the
    /// classic rules, after `shrink_folio_list()` keeps a mapped folio the walk marked
    /// referenced); `evict_folios()` puts every rejected folio back active.
    pub fn mglru_folio_seq_by_workingset(self) -> bool {
        self >= KernelVersion::new(6, 14)
    }

    /// Since v6.14 ("mm/mglru: rework aging feedback"): `should_run_aging()` asks for a new
    /// generation when the evictable types are down to `MIN_NR_GENS + 1` generations.
    /// Before: also when they have exactly that many and the youngest generation holds more
    /// than half the pages, or the oldest of the two older ones less than a quarter.
    pub fn mglru_aging_by_generations_only(self) -> bool {
        self >= KernelVersion::new(6, 14)
    }

    /// Since v6.14 ("mm/mglru: rework aging feedback"): anon and file `min_seq` move
    /// independently in `try_to_inc_min_seq()` (each within reach of `max_seq -
    /// MIN_NR_GENS`), and `inc_min_seq()` counts the folios it moves up as protected in
    /// their tier (tier 0 included). Before (6.1): with swap, anon's `min_seq` may not pass
    /// file's and file's may only follow anon's (`min_seq[ANON] = min(anon, file)`,
    /// `min_seq[FILE] = max(min_seq[ANON], old file)`), so a file type whose oldest
    /// generation has emptied waits for anon's; `inc_min_seq()` counts nothing and only
    /// `sort_folio()` protects (tiers 1 and up).
    pub fn mglru_min_seqs_move_independently(self) -> bool {
        self >= KernelVersion::new(6, 14)
    }

    /// Since v6.14 ("mm/mglru: rework type selection"): `isolate_folios()` scans the type
    /// `get_type_to_scan()` picks by the refault rates of all tiers (gains swappiness :
    /// 200 - swappiness), then each type's `get_tier_idx()` with gains 2:3. Before (6.1):
    /// the obvious choice first (no swap → file; anon's `min_seq` older than file's → anon;
    /// swappiness 1 → file, 200 → anon), else `get_type_to_scan()` compares the first tier
    /// of each type and picks the last tier to evict by comparing the chosen type's tiers
    /// with the other type's first tier (same gains); `get_tier_idx()`, for the fallback
    /// type, uses gains 1:2.
    pub fn mglru_type_by_all_tiers(self) -> bool {
        self >= KernelVersion::new(6, 14)
    }

    /// Since v6.7 ("mm/mglru: try to stop at high watermarks", which fixes the memcg LRU of
    /// 6.3; 6.1 has neither): root reclaim starts at the priority `set_initial_priority()`
    /// picks, and `should_abort_scan()` stops once `nr_to_reclaim` is reclaimed or (kswapd)
    /// every zone is above its high watermark plus a batch; kswapd's `sc->nr_reclaimed`
    /// counts from zero in each `lru_gen_shrink_node()` call (the run's total is restored
    /// after it), so the first test is per pass. Before (6.1): reclaim runs
    /// through `shrink_node()` → `shrink_lruvec()` → `lru_gen_shrink_lruvec()` at the
    /// priorities kswapd's and direct reclaim's loops give (from `DEF_PRIORITY`), every
    /// memcg in turn, and 6.1's `should_abort_scan()` stops the eviction early only below
    /// priority `DEF_PRIORITY - 2` (direct reclaim also once it aged the lruvec twice, or
    /// reclaimed enough by swapping), when kswapd has reclaimed `nr_to_reclaim` since its
    /// last `lru_gen_age_node()` and every zone is above its high (direct reclaim: low)
    /// watermark, counting an extra `MIN_LRU_BATCH` as reclaimed.
    pub fn mglru_stops_at_high_watermarks(self) -> bool {
        self >= KernelVersion::new(6, 7)
    }

    /// Since v6.7 ("mm/mglru: respect min_ttl_ms with memcgs"): kswapd's
    /// `lru_gen_age_node()` only checks `min_ttl_ms`; the aging happens in the eviction
    /// path. Before (6.1): `lru_gen_age_node()` ages every memcg that
    /// `should_run_aging()` names (`age_lruvec()`), unless the previous eviction pass
    /// reclaimed a batch without needing aging (`sc->memcgs_need_aging`), and kswapd's
    /// eviction path leaves the aging to it; direct reclaim ages and goes on evicting.
    pub fn mglru_kswapd_ages_in_eviction(self) -> bool {
        self >= KernelVersion::new(6, 7)
    }

    /// Since v6.12 ("memcg: use ratelimited stats flush in the reclaim"):
    /// `prepare_scan_control()` calls `mem_cgroup_flush_stats_ratelimited()`, so the
    /// classic LRU's heuristics (`may_deactivate`, cache-trim mode, `file_is_tiny`) read list
    /// sizes and activation counts as of the last periodic flush, up to 2 s old. Before
    /// (6.1–6.11): `prepare_scan_count()` calls `mem_cgroup_flush_stats()`, which flushes
    /// whenever more than (online CPUs + 1) × `MEMCG_CHARGE_BATCH` (64) statistics updates
    /// are pending, so reclaim reads them nearly exact. The model flushes at every
    /// `prepare_scan_control()` under the older rule (the pending-updates threshold, at
    /// most a few hundred pages of list moves, is left out).
    pub fn reclaim_reads_ratelimited_stats(self) -> bool {
        self >= KernelVersion::new(6, 12)
    }

    /// Since v6.2 ("mm: vmscan: make rotations a secondary factor in balancing anon vs file",
    /// 0538a82c39e9, Johannes Weiner, posted 2022-10-13, merged into mainline in the v6.2
    /// merge window, December 2022): `lru_note_cost()` adds `nr_io * SWAP_CLUSTER_MAX + nr_rotated`, fed by
    /// `shrink_inactive_list()` (`stat.nr_pageout` and `nr_scanned - nr_reclaimed`),
    /// `shrink_active_list()` (`nr_rotated`) and workingset refaults (IO). Before (v5.8–v6.1,
    /// "mm: balance LRU lists based on relative thrashing" took the rotations out): the cost
    /// is the IO alone, one per page: `lru_note_cost(lruvec, file, stat.nr_pageout)` and
    /// `lru_note_cost_folio()` of a workingset refault; `shrink_active_list()` notes
    /// nothing. The decay (halve both when their sum exceeds a quarter of the LRU) is the
    /// same, so under 6.1 it halves 32 times less often per page written.
    pub fn lru_cost_counts_rotations(self) -> bool {
        self >= KernelVersion::new(6, 2)
    }

    /// Since v6.10 ("mm, vmscan: retry kswapd's priority loop with cache_trim_mode off on
    /// failure", Byungchul Park: v6 of the patch posted 2024-03-04, taken into akpm's
    /// mm-unstable on 2024-03-06 beside "mm: add swappiness= arg to memory.reclaim", after
    /// mm-stable for the v6.9 merge window had closed; the release is the model's reading of
    /// those dates, not a bisected one): `shrink_node()` sets `sc->cache_trim_mode_failed`
    /// when a pass in cache-trim mode reclaimed nothing, and `balance_pgdat()`, after a
    /// whole priority loop that reclaimed nothing with that flag set, runs the loop once
    /// more with `sc->no_cache_trim_mode`, so the anon lists get scanned before kswapd counts
    /// a failure. Before (6.1): neither field exists; such a loop counts in
    /// `kswapd_failures` at once.
    pub fn kswapd_retries_without_cache_trim(self) -> bool {
        self >= KernelVersion::new(6, 10)
    }

    /// Before v6.15 ("mm: page_alloc: don't steal single pages from biggest buddy",
    /// c2f6ea38fc1b, Johannes Weiner), every fallback to another migratetype's block below
    /// pageblock order went through `steal_suitable_fallback()`, which called
    /// `boost_watermark()` (and set ZONE_BOOSTED_WATERMARK for an `ALLOC_KSWAPD`
    /// allocation) before deciding whether to claim the block, so a page-cache page stolen
    /// from a RECLAIMABLE block boosted too (v5.0, 1c30844d2dfe, to v6.14). Since: only
    /// `try_to_claim_block()` boosts; `__rmqueue_steal()` takes a single block without.
    pub fn boost_on_every_fallback(self) -> bool {
        self < KernelVersion::new(6, 15)
    }

    /// Before v6.10 ("mm: page_alloc: fix freelist movement during block conversion", in
    /// Johannes Weiner's freelist-hygiene series; the boundary is the model's reading of the
    /// v5.2/v6.1 and v6.10 forms of the code, not bisected), `__rmqueue_fallback()` took the
    /// largest fallback block and `steal_suitable_fallback()` moved the free pages of its
    /// pageblock (or, for a single-block steal, the whole free block) to the allocation's
    /// lists whether or not it claimed the pageblock, so a pageblock's free pages could sit
    /// on another type's lists. Since: free pages move only with a claim, and a single-block
    /// steal returns the unused remainder to the block's own type. v6.10 to v6.14 are
    /// modelled with v6.15's search order ([`Self::boost_on_every_fallback`]). v4.x kernels
    /// (seed S4's 4.6) are modelled with v5.2's form, though theirs took the largest block for
    /// MOVABLE requests too and claimed a pageblock by its free pages alone (the smallest-block
    /// rule and the count of alike pages came in a later v4.x; not dated here).
    pub fn fallback_moves_free_pages(self) -> bool {
        self < KernelVersion::new(6, 10)
    }

    /// SLUB's `allocate_slab()` makes its first, opportunistic attempt at the cache's order
    /// (when above the minimum) without `__GFP_DIRECT_RECLAIM`; from v4.6 the mask clears
    /// `__GFP_RECLAIM`, so that attempt does not wake kswapd either (the code a 2016 linux-mm
    /// patch by Joonsoo Kim quotes as current while proposing to keep kswapd's wakeup; it
    /// was not merged: v5.3 and v6.18 still clear `__GFP_RECLAIM`); the v4.4-era form
    /// cleared `__GFP_DIRECT_RECLAIM` only. The 4.5/4.6 boundary is the model's reading of
    /// those two forms, not a bisected commit.
    pub fn slab_first_try_skips_kswapd(self) -> bool {
        self >= KernelVersion::new(4, 6)
    }

    /// Before v4.7 ("mm: filemap: only do access activations on reads", bbddabe2e436,
    /// merged for v4.7-rc1) `grab_cache_page_write_begin()` asked `pagecache_get_page()` for
    /// FGP_ACCESSED: a page a write() creates starts with PG_referenced
    /// (`__SetPageReferenced()` before `add_to_page_cache_lru()`), and a write to a cached
    /// page calls `mark_page_accessed()`, so a page written twice is activated. Since v4.7
    /// writes mark nothing (v5.3's XFS path, `iomap_write_begin()`, calls the same helper).
    pub fn write_begin_marks_accessed(self) -> bool {
        self < KernelVersion::new(4, 7)
    }

    /// Since v4.8 ("mm, vmscan: make kswapd reclaim in terms of nodes", Mel Gorman's node-LRU
    /// series): kswapd's `zone_balanced()` tests the high watermark at the order it was woken
    /// for, and `kswapd_shrink_node()` drops to order 0 once it has reclaimed twice the
    /// allocation's size. Before (v4.6–v4.7, from "mm, kswapd: replace kswapd compaction with
    /// waking up kcompactd", accf62422b3a, the kernel of seed S4): with `CONFIG_COMPACTION`,
    /// `pgdat_balanced()`, `balance_pgdat()` and `kswapd_shrink_zone()` call
    /// `zone_balanced(..., highorder = false, ...)`, which tests the order-0 watermark at
    /// `high + (1 << order)`: kswapd stops at enough base pages and leaves the high-order
    /// page to kcompactd; only `wakeup_kswapd()` tests the true high-order watermark. Under
    /// `policy.kswapd_compaction = "kswapd"` (v4.4's balance_pgdat()) the rule does not apply.
    pub fn kswapd_balances_high_order(self) -> bool {
        self >= KernelVersion::new(4, 8)
    }

    /// Since v4.8 ("mm, vmscan: make kswapd reclaim in terms of nodes", 1d82de618ddd):
    /// `kswapd_shrink_node()` drops `sc->order` to 0 once kswapd has reclaimed
    /// `compact_gap(order)` (twice the allocation's size). v4.4's `balance_pgdat()` had the
    /// same rule ("If twice the allocation size has been reclaimed ... recheck the watermarks
    /// at order-0"); "mm, kswapd: replace kswapd compaction with waking up kcompactd"
    /// (accf62422b3a, v4.6, the kernel of seed S4) removed it, so v4.6–v4.7 kswapd keeps
    /// the order it was woken for until `pgdat_balanced()` (order-0 at `high + (1 << order)`)
    /// holds. Under `policy.kswapd_compaction = "kswapd"` (v4.4) the rule applies.
    pub fn kswapd_drops_order_after_compact_gap(self) -> bool {
        self >= KernelVersion::new(4, 8)
    }

    /// Since v4.15 ("mm, compaction: kcompactd should not ignore pageblock skip", David
    /// Rientjes, posted August 2017, in the mmotm queue based on v4.14 that went into the
    /// v4.15 merge window): `kcompactd_do_work()` sets `.ignore_skip_hint = false`, so
    /// kcompactd skips the pageblocks where isolation recently failed until the skip bits
    /// are reset. Before (v4.6, the kernel of seed S4, to v4.14): `.ignore_skip_hint =
    /// true`, kcompactd scans every pageblock of the zone and neither reads nor sets the
    /// skip bits.
    pub fn kcompactd_honours_skip_hint(self) -> bool {
        self >= KernelVersion::new(4, 15)
    }

    /// Since v4.17 ("mm, page_alloc: wakeup kcompactd even if kswapd cannot free more
    /// memory", David Rientjes, in the mmotm queue based on v4.16): `wakeup_kswapd()` for
    /// an allocation without `__GFP_DIRECT_RECLAIM` wakes kcompactd itself when kswapd is
    /// not woken (the node is balanced at the allocation's order, or kswapd has failed
    /// MAX_RECLAIM_RETRIES times). Before (v4.6): such an allocation reaches kcompactd only
    /// through kswapd, which wakes it when it goes to sleep.
    pub fn wakeup_kswapd_wakes_kcompactd(self) -> bool {
        self >= KernelVersion::new(4, 17)
    }

    /// Since v4.12 ("mm: vmscan: allow kswapd to give up", c73322d098e4): a balance_pgdat()
    /// run that reclaims nothing counts in `pgdat->kswapd_failures`, and after
    /// MAX_RECLAIM_RETRIES of them `wakeup_kswapd()` stops waking kswapd (and, since v4.17,
    /// wakes kcompactd instead) until some reclaim makes progress. Before (v4.6, the kernel of
    /// seed S4): there is no such counter; kswapd is woken whenever the allocation's zone is
    /// not balanced at its order (`zone_balanced(zone, order, true, 0, 0)`), however many
    /// runs reclaimed nothing; the old give-up test, `zone_reclaimable()` (pages scanned
    /// below six times the reclaimable ones), only let kswapd treat a zone it had scanned
    /// six times over as balanced.
    pub fn kswapd_gives_up(self) -> bool {
        self >= KernelVersion::new(4, 12)
    }

    /// Which allocations may use and create the highatomic reserve (`gfp_to_alloc_flags()`,
    /// slow path only): v4.4–v6.2 ALLOC_HARDER, from `__GFP_ATOMIC` (GFP_ATOMIC) — not
    /// GFP_NOWAIT | __GFP_HIGH, the flags of seed S4; v6.3–v6.17 ("mm/page_alloc: explicitly
    /// define how __GFP_HIGH non-blocking allocations accesses reserves", 1ebbb21811b7)
    /// ALLOC_HIGHATOMIC for every non-blocking (no `__GFP_DIRECT_RECLAIM`) allocation of
    /// order > 0; v6.18+ ("mm/page_alloc: only set ALLOC_HIGHATOMIC for __GPF_HIGH
    /// allocations", 6a204d4b14c9, in the v6.18 merge window, October 2025; backported to
    /// the 6.17 stable series) only when it also has `__GFP_HIGH` (ALLOC_MIN_RESERVE).
    pub fn highatomic_alloc(
        self,
        gfp_atomic: bool,
        direct_reclaim: bool,
        high: bool,
        order: u32,
    ) -> bool {
        if order == 0 {
            return false;
        }
        if self < KernelVersion::new(6, 3) {
            return gfp_atomic;
        }
        !direct_reclaim && (high || self < KernelVersion::new(6, 18))
    }

    /// Since v4.9 ("mm, compaction: require only min watermarks for non-costly orders",
    /// Vlastimil Babka, patch 10/11 of "make direct compaction more deterministic", v6 posted
    /// 2016-08-10, after the v4.8 merge window): `__isolate_free_page()` lets compaction take
    /// a free page while the zone keeps `min_wmark_pages(zone) + (1 << order)`, and
    /// `__compaction_suitable()` tests the min watermark (plus the gap) for orders up to
    /// PAGE_ALLOC_COSTLY_ORDER. Before (v4.6, the kernel of seed S4: "Obey watermarks as if
    /// the page was being allocated"): the low watermark in both, so the free scanner stops
    /// with the zone at its low watermark plus the page, and compaction has fewer pages to
    /// migrate into.
    pub fn isolate_free_page_min_watermark(self) -> bool {
        self >= KernelVersion::new(4, 9)
    }

    /// Since v5.1 ("mm, page_alloc: always use a captured page regardless of compaction
    /// result", Mel Gorman, April 2019, a fix of 5e1f0f098b46 "mm, compaction: capture a page
    /// under direct compaction"), and v5.12+ in the form `*compact_result == COMPACT_SKIPPED`
    /// (Charan Teja Kalla): `__alloc_pages_direct_compact()` counts a `compact_stall` (and
    /// then `compact_fail` or `compact_success`) when `try_to_compact_pages()` found every
    /// zone deferred (COMPACT_DEFERRED). Before (v4.6, the kernel of seed S4: a `switch` on
    /// COMPACT_DEFERRED / COMPACT_SKIPPED; v4.7–v5.0 `<= COMPACT_INACTIVE`): a deferred
    /// direct compaction returns at once, no stall, no free-list attempt.
    pub fn deferred_direct_compaction_stalls(self) -> bool {
        self >= KernelVersion::new(5, 1)
    }

    /// Since v4.8/v4.9 ("mm, vmscan: make compaction_ready() more accurate and readable",
    /// Vlastimil Babka, patch 17/18 of "make direct compaction more deterministic"; the model
    /// switches with the series' [`Self::isolate_free_page_min_watermark`], v4.9): direct
    /// reclaim's `compaction_ready()` skips a zone whose costly-order allocation would
    /// already succeed, reclaims one where compaction is not suitable, and otherwise skips
    /// it above `high + compact_gap(order)` (v4.9–v4.x plus the balance gap; the balance
    /// gap went with the node-based kswapd, v6.18 has `high + compact_gap`). Before (v4.6):
    /// the zone is skipped when free pages exceed `high + balance_gap + compact_gap(order)`
    /// (balance_gap = min(low, 1% of the zone)) and compaction is deferred or not SKIPPED;
    /// `compaction_deferred()` is asked first, and counts the consideration.
    pub fn compaction_ready_by_suitability(self) -> bool {
        self >= KernelVersion::new(4, 9)
    }

    /// Since v6.15 ("mm: compaction: push watermark into compaction_suitable() callers",
    /// Johannes Weiner, March 2025): `compaction_ready()` makes one `compaction_suitable()`
    /// call at the high watermark, which adds `low - min` for costly orders: free pages
    /// above `high + compact_gap(order) + (low - min)`. v4.9–v6.14: compaction suitable at
    /// low + gap, then free pages above `high + compact_gap(order)`.
    pub fn compaction_ready_costly_boost(self) -> bool {
        self >= KernelVersion::new(6, 15)
    }

    /// Since v5.3 ("mm, reclaim: make should_continue_reclaim perform dryrun detection",
    /// Hillf Danton): `should_continue_reclaim()` stops reclaim/compaction as soon as a zone
    /// can satisfy the allocation or is suitable for compaction, and only then looks at
    /// `compact_gap(order)`. Before (v4.6, the kernel of seed S4): it continues while
    /// `sc->nr_reclaimed < 2UL << sc->order` and the inactive lists hold more than that,
    /// whatever compaction_suitable() says, and then stops only when compaction would go
    /// ahead (COMPACT_PARTIAL or COMPACT_CONTINUE).
    pub fn reclaim_compaction_stops_when_suitable(self) -> bool {
        self >= KernelVersion::new(5, 3)
    }

    /// Since v4.10 ("mm: try to exhaust highatomic reserve before the OOM", 04c8716f7b00,
    /// Minchan Kim, merged December 2016): `should_reclaim_retry()` calls
    /// `unreserve_highatomic_pageblock(ac, true)` (forced: the last pageblock too) instead
    /// of giving up once the rounds without progress exceed MAX_RECLAIM_RETRIES, and
    /// retries when a block came back. Before (v4.6, the kernel of seed S4): the reserve is
    /// only given back by a failed direct reclaim, keeping one pageblock, and OOM leaves the
    /// rest in place.
    pub fn unreserve_highatomic_before_oom(self) -> bool {
        self >= KernelVersion::new(4, 10)
    }

    /// Since v6.8 ("mm: page_alloc: unreserve highatomic page blocks before oom", Charan
    /// Teja Kalla, posted November 2023, merged with "mm: page_alloc: correct high atomic
    /// reserve calculations" and backported to the stable series): the forced unreserve
    /// happens whenever `should_reclaim_retry()` would return false (`out: if (!ret)`), also
    /// when the zones' watermark check fails before the retries run out. Before (v4.10–v6.7):
    /// only when the retries ran out.
    pub fn unreserve_on_every_oom_verdict(self) -> bool {
        self >= KernelVersion::new(6, 8)
    }

    /// The highatomic reserve's size and watermark rules
    /// ([`crate::mmzone::HighatomicRules`]): v6.8's aligned limit, v6.12's free-page count.
    pub fn highatomic_rules(self) -> crate::mmzone::HighatomicRules {
        crate::mmzone::HighatomicRules {
            reserve_aligned: self >= KernelVersion::new(6, 8),
            unusable_free_only: self >= KernelVersion::new(6, 12),
        }
    }

    /// Since v6.3 ("mm/page_alloc: explicitly define how __GFP_HIGH non-blocking
    /// allocations accesses reserves", 1ebbb21811b7): `gfp_to_alloc_flags()` gives an
    /// allocation without `__GFP_DIRECT_RECLAIM` ALLOC_NON_BLOCK, which for a `__GFP_HIGH`
    /// one lowers the min watermark by a further quarter ([`crate::alloc::reserve_min`]).
    pub fn alloc_non_block(self) -> bool {
        self >= KernelVersion::new(6, 3)
    }

    /// Since v5.0 ("mm: reclaim small amounts of memory when an external fragmentation event
    /// occurs", 1c30844d2dfe): a fallback to another migratetype boosts the zone's
    /// watermarks by `vm.watermark_boost_factor`. Before: no boosting (the sysctl does not
    /// exist); the model runs with a boost factor of 0.
    pub fn watermark_boosting(self) -> bool {
        self >= KernelVersion::new(5, 0)
    }

    /// `zone_batchsize()`'s cap on the per-CPU refill batch, in bytes, before it is quartered
    /// and rounded: half a MiB until v4.19 ("mm, page_alloc: double zone's batchsize", Aaron
    /// Lu, 2018: 31 → 63 pages on any zone over 1 GiB), a MiB since.
    pub fn pcp_batch_cap_bytes(self) -> u64 {
        if self >= KernelVersion::new(4, 19) {
            1 << 20
        } else {
            512 << 10
        }
    }

    /// Since v5.14 ("mm/page_alloc: disassociate the pcp->high from pcp->batch", Mel
    /// Gorman): `pcp->high` is the zone's low watermark split over the node's CPUs
    /// (`zone_highsize()`, at least 4 batches), and `nr_pcp_free()` doubles the pages a free
    /// returns to the buddy lists on each overflow without an allocation between
    /// (`free_factor`). Before: `high = 6 * batch` (`pageset_set_batch()`) and every overflow
    /// returns one batch.
    pub fn pcp_high_from_low_wmark(self) -> bool {
        self >= KernelVersion::new(5, 14)
    }

    /// Since v5.14 ("mm/page_alloc: limit the number of pages on PCP lists when reclaim is
    /// active", Mel Gorman): while kswapd's `balance_pgdat()` reclaims a zone
    /// (`ZONE_RECLAIM_ACTIVE`), `nr_pcp_high()` lets its per-CPU lists hold at most four
    /// batches. Before: `high` regardless of reclaim.
    pub fn pcp_high_capped_under_reclaim(self) -> bool {
        self >= KernelVersion::new(5, 14)
    }

    /// Since v6.7 ("mm: tune PCP high automatically" and the rest of Huang Ying's series):
    /// each CPU's `pcp->high` is tuned between `high_min` (the v5.14 `high`) and `high_max`
    /// (an eighth of the zone split over its CPUs): refills and overflowing frees raise it,
    /// `ZONE_BELOW_HIGH` and `ZONE_RECLAIM_ACTIVE` lower it, `decay_pcp_high()` takes an
    /// eighth off every second; `free_count` and `alloc_factor` size bulk frees and refills.
    pub fn pcp_high_autotuned(self) -> bool {
        self >= KernelVersion::new(6, 7)
    }

    /// Since v5.18 ("mm/page_alloc: drain the requested list first during bulk free" and
    /// "simplify how many pages are selected per pcp list during bulk free", Mel Gorman):
    /// `free_pcppages_bulk()` empties the freed page's own list first, then whole lists in
    /// turn. Before: round robin from the MOVABLE list, one page from each non-empty list
    /// plus one for every empty list passed (`batch_free`).
    pub fn pcp_drain_requested_list_first(self) -> bool {
        self >= KernelVersion::new(5, 18)
    }

    /// Since v5.9 ("mm: proactive compaction", facdaa917c4d): kcompactd's 500 ms timer
    /// compacts the node when its fragmentation score is above the high mark of
    /// `vm.compaction_proactiveness`. Before: kcompactd compacts only when woken (the sysctl
    /// does not exist).
    pub fn proactive_compaction(self) -> bool {
        self >= KernelVersion::new(5, 9)
    }

    /// Since v5.13 ("mm: vmscan: shrink deferred objects proportional to priority"):
    /// `do_shrink_slab()` adds `nr_deferred >> priority` of the deferred work to a call and
    /// caps `nr_deferred` to twice the cache. Before (the seed S3's v5.3): the whole backlog,
    /// capped to half the cache unless `delta` is a quarter of it
    /// ([`crate::shrinker::do_shrink_slab_windup`]).
    pub fn shrinker_deferred_by_priority(self) -> bool {
        self >= KernelVersion::new(5, 13)
    }

    /// Global direct reclaim walks the memcgs incrementally: it stops once it has reclaimed
    /// `nr_to_reclaim` and the next direct reclaimer resumes at the following memcg (an
    /// iterator shared through a `mem_cgroup_reclaim_cookie`; "mm: vmscan: restore
    /// incremental cgroup iteration", Johannes Weiner, posted 2024-05-14 during v6.10's merge
    /// window: v6.11 at the earliest, the release the model takes; not bisected).
    /// From v5.5 ("mm: vmscan: do not share cgroup iteration between reclaimers",
    /// 1ba6fc9af35b) to v6.10, `shrink_node_memcgs()` walks every memcg on each call; before
    /// v5.5 the walk was shared, but only memcg limit reclaim stopped at its goal, so global
    /// reclaim also covered every memcg per call. kswapd always walks them all.
    pub fn direct_reclaim_partial_memcg_walk(self) -> bool {
        self >= KernelVersion::new(6, 11)
    }

    /// `isolate_lru_folios()` sets aside at most `SWAP_CLUSTER_MAX_SKIPPED` folios of
    /// ineligible zones per call ("mm/vmscan: fix hard LOCKUP in function
    /// isolate_lru_folios", posted December 2024, in v6.18; the release it first shipped in
    /// is taken as v6.13). Before, v5.3 included, every ineligible folio met is skipped.
    pub fn isolate_caps_skipped(self) -> bool {
        self >= KernelVersion::new(6, 13)
    }

    /// Since v6.6 ("sched/fair: Implement an EEVDF-like scheduling policy"): the fair class
    /// schedules by earliest eligible virtual deadline. Before (6.1): CFS, where a woken
    /// thread that slept while others ran preempts at once (`place_entity()`,
    /// `check_preempt_wakeup()`); the simulator's scheduler follows it (refault-sim's
    /// `sched` module).
    pub fn sched_eevdf(self) -> bool {
        self >= KernelVersion::new(6, 6)
    }

    /// Since v7.1 ("mm: workingset: use lruvec_lru_size() to get the number of lru pages",
    /// Qi Zheng, from the series that reparents LRU folios; in Debian's 7.1.8 source, not in
    /// v6.18): `count_shadow_nodes()` sizes a memcg by `lruvec_lru_size()`, which reads the
    /// memcg's `lru_zone_size[][]`. Only `update_lru_size()` (the classic LRU's list moves)
    /// maintains those through `mem_cgroup_update_lru_size()`; the multi-gen LRU's
    /// `lru_gen_update_size()` calls `__update_lru_size()`, which updates the vmstat
    /// counters only. So under the multi-gen LRU the shadow shrinker counts none of the
    /// memcg's LRU pages, allows one shadow node per 8 of its slab pages only, and frees
    /// nearly every shadow-only node whenever `shrink_slab()` runs: refaults go undetected
    /// (the VM twin's 7.2 guest: `workingset_nodereclaim` 1,533–1,664 and
    /// `workingset_refault_file` 128–431 where 6.12 counted 61,962–61,975). Before (and
    /// under the classic LRU, whose `lru_zone_size` is exact): `lruvec_page_state_local()`
    /// of `NR_LRU_BASE + lru`, which both LRUs keep.
    pub fn shadow_shrinker_counts_memcg_lru_zone_size(self) -> bool {
        self >= KernelVersion::new(7, 1)
    }

    /// Since v4.10 ("mm: vmscan: reduce size of inactive file list", Rik van Riel,
    /// 59dc76b0d4df): `inactive_list_is_low()` applies the `int_sqrt(10 * GiB)` target ratio
    /// to both types. Before (v4.7, the kernel seed S0's series was posted against, June
    /// 2016, and up to v4.9), and the rules that went with it up to v5.5 as far as the model
    /// has them (each named in [`crate::vmscan`]):
    /// - `inactive_file_is_low()` is `active > inactive` (1:1, "mm: thrash detection-based
    ///   file cache sizing", v3.15); the anon list keeps the square-root ratio;
    /// - the active lists are shrunk only when their inactive list is low (`shrink_list()`;
    ///   v4.12's "mm: vmscan: fix IO/refault regression in cache workingset transition",
    ///   2a2e48854d70, added deactivation on refaults, v5.5 moved it to the reclaim root);
    /// - `get_scan_count()` takes its SCAN_FILE shortcut whenever the lruvec's inactive file
    ///   list is not low and has pages at this priority ("mm,vmscan: only evict file pages
    ///   when we have plenty", e9868505987a, v3.9), with no refault check (v5.5's cache-trim
    ///   mode added it), and picks SCAN_ANON when file + free pages are at or below the high
    ///   watermarks, with neither of v5.5's extra conditions;
    /// - the non-resident clock advances on evictions and on activations of
    ///   `mark_page_accessed()` and of refaults only (`workingset_activation()`); reclaim
    ///   putting back active pages does not age it (v5.9's "mm: workingset: age nonresident
    ///   information alongside anonymous pages", 31d8fcac00fc, does).
    ///
    /// Kernels 4.10 to 5.8 get the model's later rules (v5.5's for the first three, v5.9's
    /// putback aging; the v4.10 and v4.12 forms are not modelled separately), so seed S3's
    /// 5.3 and the default kernel are unaffected; seed S4's 4.6 follows these.
    pub fn lru_balance_v4_7(self) -> bool {
        self < KernelVersion::new(4, 10)
    }

    /// Parse "6.1", "6.12", "7.2" or a release string such as "6.1.0-50-cloud-amd64".
    pub fn parse(s: &str) -> Option<KernelVersion> {
        let mut it = s.trim().splitn(3, '.');
        let major: u16 = it.next()?.parse().ok()?;
        let minor_part = it.next()?;
        let digits: String = minor_part
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        let minor: u16 = digits.parse().ok()?;
        Some(KernelVersion::new(major, minor))
    }
}

impl std::fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The WORKINGSET_{REFAULT,ACTIVATE,RESTORE} counters of a type (`WORKINGSET_*_BASE + type`).
pub(crate) fn workingset_events(file: bool) -> (Ev, Ev, Ev) {
    if file {
        (
            Ev::WorkingsetRefaultFile,
            Ev::WorkingsetActivateFile,
            Ev::WorkingsetRestoreFile,
        )
    } else {
        (
            Ev::WorkingsetRefaultAnon,
            Ev::WorkingsetActivateAnon,
            Ev::WorkingsetRestoreAnon,
        )
    }
}

impl Mm {
    /// Kernel: `workingset_age_nonresident()`: advance the clock of the lruvec and every
    /// ancestor.
    pub fn workingset_age_nonresident(&mut self, lv: usize, nr: u64) {
        for l in ancestors(lv) {
            self.lruvecs[l].nonresident_age += nr;
        }
    }

    /// Kernel: `workingset_eviction()`: the shadow left behind by folio `pfn` evicted by
    /// reclaim targeting `target_lv`. Reads the clock, then ages it.
    pub fn workingset_eviction(&mut self, pfn: Pfn, target_lv: usize) -> Shadow {
        if self.cfg.lru == crate::LruKind::Mglru {
            return self.lru_gen_eviction(pfn);
        }
        let age = self.lruvecs[target_lv].nonresident_age;
        self.workingset_age_nonresident(target_lv, self.pages.nr_pages(pfn));
        Shadow::pack(age, target_lv as u16, self.pages.test(pfn, pg::WORKINGSET))
    }

    /// Kernel: `workingset_test_recent()`: is the refault distance within the workingset
    /// size of the eviction lruvec?
    pub fn workingset_test_recent(&self, shadow: Shadow, file: bool) -> bool {
        let lv = shadow.memcg() as usize;
        if lv >= self.lruvecs.len() {
            return false;
        }
        let now = self.lruvecs[lv].nonresident_age & AGE_MASK;
        let distance = now.wrapping_sub(shadow.age()) & AGE_MASK;
        // lruvec_page_state(): the sizes as of the last memcg stats flush.
        let s = WsSizes {
            active_file: self.lruvec_page_state(lv, LruList::ActiveFile),
            inactive_file: self.lruvec_page_state(lv, LruList::InactiveFile),
            active_anon: self.lruvec_page_state(lv, LruList::ActiveAnon),
            inactive_anon: self.lruvec_page_state(lv, LruList::InactiveAnon),
        };
        // mem_cgroup_get_nr_swap_pages() of the eviction memcg.
        let swap_available = self.memcg_nr_swap_pages(lv) > 0;
        distance <= self.balance.workingset_size(file, s, swap_available)
    }

    /// Kernel: `workingset_refault()`: folio `pfn` (not yet on an LRU) replaces `shadow`.
    /// May set PG_active and PG_workingset; counts the refault events.
    pub fn workingset_refault(&mut self, pfn: Pfn, shadow: Shadow) {
        if self.cfg.lru == crate::LruKind::Mglru {
            return self.lru_gen_refault(pfn, shadow);
        }
        let file = self.pages.is_file_lru(pfn);
        let nr = self.pages.nr_pages(pfn);
        let lv = self.pages.hot[pfn as usize].memcg as usize;
        let (refault, activate, restore) = workingset_events(file);
        self.ev.add(refault, nr);
        if !self.workingset_test_recent(shadow, file) {
            return;
        }
        self.pages.set(pfn, pg::ACTIVE);
        self.workingset_age_nonresident(lv, nr);
        self.ev.add(activate, nr);
        for l in ancestors(lv) {
            self.lruvecs[l].workingset_activate[file as usize] += nr;
        }
        if shadow.workingset() {
            self.pages.set(pfn, pg::WORKINGSET);
            self.balance
                .note_workingset_refault(&mut self.lruvecs, lv, file, nr);
            self.ev.add(restore, nr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tiny_mm;

    #[test]
    fn shadow_packs_and_unpacks() {
        let s = Shadow::pack(123_456_789, 7, true);
        assert_eq!((s.age(), s.memcg(), s.workingset()), (123_456_789, 7, true));
        assert!(s.0 < 1 << 57);
    }

    #[test]
    fn refault_distance_activation() {
        let mut mm = tiny_mm(crate::BalanceKind::RefaultCost, 64);
        // Fake list sizes on the root lruvec through the zone counters.
        mm.zones[0].nr_lru[LruList::ActiveFile.idx()] = 40;
        mm.zones[0].nr_lru[LruList::ActiveAnon.idx()] = 5;
        mm.zones[0].nr_lru[LruList::InactiveAnon.idx()] = 10;
        mm.lruvecs[0].nonresident_age = 150;
        // distance 50 <= 40 + 5 + 10 (swap available) → recent.
        assert!(mm.workingset_test_recent(Shadow::pack(100, 0, false), true));
        // distance 56 > 55 → not recent.
        assert!(!mm.workingset_test_recent(Shadow::pack(94, 0, false), true));
        // anon refault: active_file + inactive_file + active_anon = 45 < 50.
        assert!(!mm.workingset_test_recent(Shadow::pack(100, 0, false), false));
        // legacy: file distance compared with active_file only.
        let mut legacy = tiny_mm(crate::BalanceKind::Legacy, 64);
        legacy.zones[0].nr_lru[LruList::ActiveFile.idx()] = 40;
        legacy.zones[0].nr_lru[LruList::InactiveAnon.idx()] = 10;
        legacy.lruvecs[0].nonresident_age = 150;
        assert!(!legacy.workingset_test_recent(Shadow::pack(100, 0, false), true));
        assert!(legacy.workingset_test_recent(Shadow::pack(110, 0, false), true));
    }
}
