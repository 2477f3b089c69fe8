//! Classic (active/inactive) reclaim: `scan_control`, `shrink_node()`, `get_scan_count()`,
//! `shrink_lruvec()`, `shrink_active_list()`, `shrink_inactive_list()`,
//! `shrink_folio_list()` and `folio_check_references()`, direct reclaim and memcg limit
//! reclaim.
//!
//! # The problem
//! Free memory must be made from pages in use, at the lowest cost to the workload: pages that
//! will not be used again soon, reclaimed in the cheapest way (clean cache before dirty cache,
//! cache before swap unless the cache is the working set).
//!
//! # The idea
//! Each lruvec keeps, per type (anon, file), an active and an inactive list. New pages start
//! inactive; a second use promotes them (through `folio_mark_accessed()` for file reads, or
//! the young bit found by `folio_check_references()` for mapped pages). Reclaim scans the
//! tail of the inactive lists, refilling them from the active lists when they fall below
//! `inactive_is_low()`'s ratio. `get_scan_count()` decides how much of each list to scan
//! (`size >> priority`, weighted between anon and file by the balancing model), and the
//! priority drops from DEF_PRIORITY (12) toward 0 until enough pages are freed.
//!
//! # In this model
//! `ScanControl` carries the request; `Mm::shrink_node()` runs one pass over the lruvecs of
//! the target; kswapd (`kswapd.rs`), direct reclaim (`try_to_free_pages`) and limit reclaim
//! (`try_to_free_mem_cgroup_pages`) drive it. CPU time is charged per folio scanned, per
//! mapping checked by the rmap walk, per folio reclaimed and per IO submitted, to the thread
//! doing the reclaim, and broken down in `Mm::reclaim_cpu`.
//!
//! # Where we differ from the kernel (v6.18)
//! - No `too_many_isolated()` throttling (VMSCAN_THROTTLE_ISOLATED: there is a single
//!   reclaimer at a time in one simulated step). The other `reclaim_throttle()` reasons are
//!   modelled: WRITEBACK (kswapd meeting folios it marked for immediate reclaim, and limit
//!   reclaim that freed nothing), woken after SWAP_CLUSTER_MAX written pages per sleeper or
//!   HZ/10; CONGESTED (direct and limit reclaim on a lruvec whose dirty folios were all
//!   already queued) and NOPROGRESS (direct reclaim with nothing at priority 1), one jiffy,
//!   skipped by `skip_throttle_noprogress()`. Nothing wakes NOPROGRESS sleepers early (the
//!   kernel wakes them when another reclaimer reaches 12 % efficiency).
//! - Limit reclaim that frees nothing sleeps as a WRITEBACK throttle when writeback is in
//!   flight (the kernel's `try_charge_memcg()` simply retries; its reclaim stalls only on
//!   the CONGESTED flag): without it the model's single-step reclaimer would rescan the same
//!   folios with no time passing.
//! - `reclaim_idx` is below the highest zone only for kswapd woken by a watermark boost of a
//!   lower zone (every allocation of the model may use every zone). The classic LRU's
//!   isolation then skips (and counts as scanned) the folios of higher zones as
//!   `isolate_lru_folios()` does, and `get_scan_count()` sizes the lists over the eligible
//!   zones only (`lruvec_lru_size(lruvec, lru, sc->reclaim_idx)`, v5.3 and v6.18 alike).
//!   v5.3's `inactive_list_is_low()` also left the ineligible zones out of the
//!   inactive:active ratio; the model uses the whole lruvec there (as v6.18's
//!   `inactive_is_low()` does). The multi-gen LRU's eviction takes the eligible zones' lists
//!   first and moves ineligible folios to the next generation (`scan_folios()`,
//!   `sort_folio()` in `crate::mglru`).
//! - No VM_EXEC mappings, mlock or unevictable folios: the VM_EXEC rotation rules never fire.
//! - `folio_referenced()` ignores mappings without recency (`vma_has_recency()`), with the
//!   object's madvise hint standing for the VMA flags; FMODE_NOREUSE is not modelled.
//! - `shrink_slab()` runs after each memcg's `shrink_lruvec()` ([`crate::shrinker`]); no
//!   memory.low/min protection.
//! - Global direct reclaim's partial walk over the memcgs (v6.11+; every memcg per call
//!   before, `KernelVersion::direct_reclaim_partial_memcg_walk`) has no second, full walk
//!   (`sc->memcg_full_walk`) when it reclaimed nothing.
//! - Dirty file folios reached by direct reclaim are activated with PG_reclaim and the flusher
//!   is woken, as the kernel does; kswapd writes them itself only on the second encounter
//!   with PGDAT_DIRTY set.
//!
//! # Rules that follow the current kernel
//! - `shrink_lruvec()` makes one proportional nudge once it has reclaimed enough and breaks
//!   out on the next pass ([`scan_lruvec_lists`], v5.19's overreclaim fix).
//! - `get_scan_count()`'s `can_reclaim_anon_pages()` and the workingset size ask for the
//!   memcg's available swap (`mem_cgroup_get_nr_swap_pages()`, memory.swap.max counts);
//!   `can_age_anon_pages()` (shrink_lruvec()'s and kswapd_age_node()'s anon aging) asks only
//!   whether any swap is configured.
//! - `prepare_scan_control()` turns cache-trim mode off under `no_cache_trim_mode`, and
//!   `shrink_node()` sets `cache_trim_mode_failed` when a pass in cache-trim mode reclaimed
//!   nothing; kswapd then retries its priority loop once without it (v6.10, `kswapd.rs`;
//!   `KernelVersion::kswapd_retries_without_cache_trim`).
//!
//! # Kernel references
//! mm/vmscan.c (v6.15): `prepare_scan_control()`, `get_scan_count()`, `shrink_lruvec()`,
//! `shrink_list()`, `inactive_is_low()`, `isolate_lru_folios()`, `shrink_inactive_list()`,
//! `shrink_folio_list()`, `folio_check_references()`, `shrink_active_list()`,
//! `move_folios_to_lru()`, `do_try_to_free_pages()`, `try_to_free_pages()`,
//! `try_to_free_mem_cgroup_pages()`, `snapshot_refaults()`.

use crate::alloc::Gfp;
use crate::page::pg;
use crate::types::*;
use crate::vmstat::Ev;
use crate::{Ctx, Mm, ObjKind};

/// Kernel: `struct scan_control`.
#[derive(Clone, Debug)]
pub struct ScanControl {
    /// How many pages reclaim should free before stopping.
    pub nr_to_reclaim: u64,
    /// Scan `size >> priority` of each list; DEF_PRIORITY down to 0.
    pub priority: i32,
    /// Allocation order reclaim works for (kswapd's `order`).
    pub order: u32,
    /// `sc->reclaim_idx`: the highest zone type reclaim may take folios from. Every
    /// allocation of the model may use every zone, so only kswapd woken for a boosted
    /// lower zone (`wakeup_kswapd(zone, 0, 0, zone_idx(zone))`) restricts it.
    pub reclaim_idx: usize,
    /// The `allocstall_<zone>` counter of direct reclaim: `gfp_zone(sc->gfp_mask)`, which
    /// the kernel also uses as `sc->reclaim_idx` (the model keeps every zone eligible for
    /// allocations, so only the counter follows it; see [`Gfp::allocstall`]).
    pub allocstall: Ev,
    /// May write dirty pages (swap-out, kswapd file writeback).
    pub may_writepage: bool,
    /// May unmap mapped pages.
    pub may_unmap: bool,
    /// May swap anon pages.
    pub may_swap: bool,
    /// May run the shrinkers (`shrink_slab()`). Always true but for v5.0–v5.2 boosted
    /// kswapd reclaim (`may_shrinkslab`, `policy.boosted_reclaim_skips_slab`).
    pub may_shrinkslab: bool,
    /// May deactivate active pages: bit 0 anon, bit 1 file.
    pub may_deactivate: u8,
    pub force_deactivate: bool,
    /// An active list was not shrunk because `may_deactivate` forbade it.
    pub skipped_deactivate: bool,
    /// Enough inactive file to reclaim from the file list alone.
    pub cache_trim_mode: bool,
    /// v6.10+: cache-trim mode may not be turned on (kswapd's second round, after a full
    /// priority loop in cache-trim mode reclaimed nothing).
    pub no_cache_trim_mode: bool,
    /// v6.10+: a `shrink_node()` pass in cache-trim mode reclaimed nothing.
    pub cache_trim_mode_failed: bool,
    /// The file LRU is too small to make the node balanced: scan anon.
    pub file_is_tiny: bool,
    /// `[anon_cost, file_cost]` snapshot of the target lruvec.
    pub cost: [u64; 2],
    /// Lruvec (= memcg id) of the reclaim target (root for global reclaim).
    pub target: usize,
    /// Memory-cgroup limit reclaim (`cgroup_reclaim()`).
    pub cgroup_reclaim: bool,
    /// Reclaim by kswapd (`current_is_kswapd()`).
    pub kswapd: bool,
    /// Pages scanned and reclaimed so far.
    pub nr_scanned: u64,
    pub nr_reclaimed: u64,
    /// Per-pass statistics (`sc->nr`).
    pub nr: PassStats,
    /// Multi-gen LRU before v6.7: `sc->memcgs_need_aging`, kswapd's hint that its last
    /// eviction pass needed no aging (see `lru_gen_age_node()` in mglru.rs).
    pub memcgs_need_aging: bool,
    /// Multi-gen LRU before v6.7: `sc->last_reclaimed`, `nr_reclaimed` as kswapd's
    /// `lru_gen_age_node()` last saw it (6.1's `should_abort_scan()` compares with it).
    pub last_reclaimed: u64,
}

/// Kernel: the `sc->nr` block accumulated by `shrink_inactive_list()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassStats {
    pub dirty: u64,
    pub unqueued_dirty: u64,
    pub congested: u64,
    pub writeback: u64,
    pub immediate: u64,
    pub file_taken: u64,
    pub taken: u64,
}

/// Kernel: `struct reclaim_stat` filled by `shrink_folio_list()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReclaimStat {
    pub nr_dirty: u64,
    pub nr_unqueued_dirty: u64,
    pub nr_congested: u64,
    pub nr_writeback: u64,
    pub nr_immediate: u64,
    pub nr_pageout: u64,
    pub nr_activate: [u64; 2],
    pub nr_ref_keep: u64,
    pub nr_unmap_fail: u64,
    /// Pages `shrink_folio_list()` took past `folio_trylock()`: what it adds to
    /// `sc->nr_scanned` ("Account the number of base pages"; a THP split to base pages
    /// counts its head once, `sc->nr_scanned -= (nr_pages - 1)`). The multi-gen LRU's
    /// `evict_folios()` counts this; the classic path counts the isolation scan instead.
    pub nr_scanned: u64,
}

/// Kernel: `enum folio_references`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FolioRef {
    Activate,
    Keep,
    Reclaim,
    ReclaimClean,
}

/// Kernel: `enum scan_balance`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanBalanceCase {
    Equal,
    Fract,
    Anon,
    File,
}

/// Kernel: `inactive_is_low()`: the inactive:active target ratio is `int_sqrt(10 * GiB)`
/// (1 below 1 GiB). Worked example: 3 GiB of one type → ratio int_sqrt(30) = 5, so the
/// inactive list is low while inactive * 5 < active.
pub fn inactive_is_low_ratio(inactive: u64, active: u64) -> bool {
    let gb = (inactive + active) >> (30 - 12);
    let ratio = if gb > 0 { int_sqrt(10 * gb) } else { 1 };
    inactive * ratio < active
}

/// Kernel: get_scan_count()'s per-list arithmetic, given the balance case, the SCAN_FRACT
/// weights and the list sizes `[inactive_anon, active_anon, inactive_file, active_file]`.
pub fn scan_targets(
    case: ScanBalanceCase,
    fraction: [u64; 2],
    sizes: [u64; 4],
    priority: i32,
) -> [u64; 4] {
    scan_targets_over(case, fraction, fraction[0] + fraction[1], sizes, priority)
}

/// [`scan_targets`] with SCAN_FRACT's denominator given: `ap + fp` since v5.8, `ap + fp + 1`
/// before (the legacy balance: v4.7 to v5.7's get_scan_count()).
pub fn scan_targets_over(
    case: ScanBalanceCase,
    fraction: [u64; 2],
    denominator: u64,
    sizes: [u64; 4],
    priority: i32,
) -> [u64; 4] {
    let mut nr = [0u64; 4];
    for (i, lru) in EVICTABLE_LRUS.iter().enumerate() {
        let file = lru.is_file();
        let scan = sizes[i] >> priority;
        nr[i] = match case {
            ScanBalanceCase::Equal => scan,
            ScanBalanceCase::Fract => (scan * fraction[file as usize])
                .checked_div(denominator)
                .unwrap_or(0),
            ScanBalanceCase::File => {
                if file {
                    scan
                } else {
                    0
                }
            }
            ScanBalanceCase::Anon => {
                if file {
                    0
                } else {
                    scan
                }
            }
        };
    }
    nr
}

/// Kernel: `shrink_lruvec()`'s scan loop over the get_scan_count() `targets`: each pass
/// scans up to SWAP_CLUSTER_MAX of every list with a target left (`shrink(Some((lru, n)))`
/// returns the pages reclaimed), then passes its `cond_resched()` (`shrink(None)`). Outside
/// proportional reclaim (direct reclaim at DEF_PRIORITY), once `nr_to_reclaim` is met it
/// makes one nudge toward proportionality: the type with less left stops, the other's targets
/// shrink to its original targets times the fraction the smaller type had left to do (less
/// what it already scanned). A later pass past the goal finds one
/// type at zero and breaks out (v5.19+, "fix extreme overreclaim and swap floods": before it,
/// a `scan_adjusted` flag let the loop scan the adjusted targets to the end). Returns the
/// pages reclaimed.
///
/// Worked example (the unit test): targets [64, 0, 256, 0], every page scanned is reclaimed,
/// goal 32. Pass 1 scans 32 anon + 32 file (reclaimed 64); anon has 32 left of 65 (49%), so
/// anon stops and file's target becomes 256 * 51% = 130, less the 32 scanned: 98. Pass 2
/// scans 32 file, then anon is at zero: stop. File scanned: 64 (the pre-v5.19 loop: 130).
pub fn scan_lruvec_lists(
    targets: [u64; 4],
    nr_to_reclaim: u64,
    proportional: bool,
    mut shrink: impl FnMut(Option<(LruList, u64)>) -> u64,
) -> u64 {
    let mut nr = targets;
    let mut reclaimed = 0u64;
    while nr[0] > 0 || nr[2] > 0 || nr[3] > 0 {
        for (i, lru) in EVICTABLE_LRUS.iter().enumerate() {
            if nr[i] > 0 {
                let n = nr[i].min(SWAP_CLUSTER_MAX);
                nr[i] -= n;
                reclaimed += shrink(Some((*lru, n)));
            }
        }
        // cond_resched(): `shrink` is called with None (it returns 0).
        shrink(None);
        if reclaimed < nr_to_reclaim || proportional {
            continue;
        }
        let nr_file = nr[2] + nr[3];
        let nr_anon = nr[0] + nr[1];
        if nr_file == 0 || nr_anon == 0 {
            break;
        }
        let (small, big, pct) = if nr_file > nr_anon {
            (
                0usize,
                2usize,
                nr_anon * 100 / (targets[0] + targets[1] + 1),
            )
        } else {
            (
                2usize,
                0usize,
                nr_file * 100 / (targets[2] + targets[3] + 1),
            )
        };
        nr[small] = 0;
        nr[small + 1] = 0;
        for l in [big, big + 1] {
            let done = targets[l] - nr[l];
            let mut v = targets[l] * (100 - pct) / 100;
            v -= v.min(done);
            nr[l] = v;
        }
    }
    reclaimed
}

impl ScanControl {
    pub fn new(nr_to_reclaim: u64, target: usize) -> Self {
        ScanControl {
            nr_to_reclaim,
            priority: DEF_PRIORITY,
            order: 0,
            reclaim_idx: crate::mmzone::NR_ZONE_TYPES - 1,
            allocstall: Ev::AllocStallNormal,
            may_writepage: true,
            may_unmap: true,
            may_swap: true,
            may_shrinkslab: true,
            may_deactivate: 0,
            force_deactivate: false,
            skipped_deactivate: false,
            cache_trim_mode: false,
            no_cache_trim_mode: false,
            cache_trim_mode_failed: false,
            file_is_tiny: false,
            cost: [0; 2],
            target,
            cgroup_reclaim: false,
            kswapd: false,
            nr_scanned: 0,
            nr_reclaimed: 0,
            nr: PassStats::default(),
            memcgs_need_aging: false,
            last_reclaimed: 0,
        }
    }
}

const DEACT_ANON: u8 = 1;
const DEACT_FILE: u8 = 2;

impl Mm {
    /// Kernel: `inactive_is_low()` on hierarchical lruvec counts (`lruvec_page_state()`:
    /// as of the last memcg stats flush). The legacy balance model stands for kernels before
    /// v5.8, whose `inactive_list_is_low()` read the exact LRU sizes (`lruvec_lru_size()`,
    /// per zone up to the reclaim index, from `mem_cgroup_get_zone_lru_size()`), so under it
    /// the sizes are exact.
    ///
    /// Before v4.10 ([`crate::workingset::KernelVersion::lru_balance_v4_7`]) the file lists
    /// are kept 1:1 (`inactive_file_is_low()`: `active > inactive`), from exact sizes.
    pub fn inactive_is_low(&self, lv: usize, file: bool) -> bool {
        let (ia, a) = (LruList::of(file, false), LruList::of(file, true));
        if self.cfg.kernel.lru_balance_v4_7() {
            let (inactive, active) = (self.lruvec_hier(lv, ia), self.lruvec_hier(lv, a));
            return if file {
                active > inactive
            } else {
                inactive_is_low_ratio(inactive, active)
            };
        }
        let (inactive, active) = if self.cfg.balance == crate::BalanceKind::Legacy {
            (self.lruvec_hier(lv, ia), self.lruvec_hier(lv, a))
        } else {
            (
                self.lruvec_page_state(lv, ia),
                self.lruvec_page_state(lv, a),
            )
        };
        inactive_is_low_ratio(inactive, active)
    }

    /// Kernel: `prepare_scan_control()`.
    fn prepare_scan_control(&mut self, sc: &mut ScanControl) {
        // Before v6.12 reclaim flushed the memcg statistics here (mem_cgroup_flush_stats()
        // in prepare_scan_count()); since, it reads them as of the last periodic flush.
        if !self.cfg.kernel.reclaim_reads_ratelimited_stats() {
            self.memcg_flush_stats_now();
        }
        let t = sc.target;
        let tv = &self.lruvecs[t];
        sc.cost = [tv.anon_cost, tv.file_cost];
        if self.cfg.kernel.lru_balance_v4_7() {
            // Before v4.10 there is no reclaim-root state: shrink_list() asks each lruvec's
            // inactive_list_is_low(), get_scan_count() its own "file is plenty" test, and
            // the cache trap check needs only the node's file and free pages.
            sc.may_deactivate = 0;
            sc.cache_trim_mode = false;
            sc.file_is_tiny = false;
            if !sc.cgroup_reclaim {
                let free = self.nr_free();
                let file =
                    self.node_lru(LruList::ActiveFile) + self.node_lru(LruList::InactiveFile);
                let hw: u64 = self
                    .zones
                    .iter()
                    .map(|z| z.wmark_pages(crate::mmzone::Wmark::High))
                    .sum();
                sc.file_is_tiny = file + free <= hw;
            }
            return;
        }
        if !sc.force_deactivate {
            let mut bits = 0;
            for (file, bit) in [(false, DEACT_ANON), (true, DEACT_FILE)] {
                let refaults = self.lruvec_activate_state(t, file);
                if refaults != self.lruvecs[t].refaults[file as usize]
                    || self.inactive_is_low(t, file)
                {
                    bits |= bit;
                }
            }
            sc.may_deactivate = bits;
        } else {
            sc.may_deactivate = DEACT_ANON | DEACT_FILE;
        }
        // Cache-trim mode: "inactive file is plenty and not thrashing", get_scan_count()'s
        // SCAN_FILE shortcut. In this form since v5.5 ("mm: vmscan: move file exhaustion
        // detection to the node level", 53138cea7f39), so the legacy balance (v5.7, the
        // seed's "before") has it too: refaults since the last cycle set DEACT_FILE and turn
        // it off. Only the v6.10 retry without it (`no_cache_trim_mode`) is newer.
        let inactive_file = if self.cfg.balance == crate::BalanceKind::Legacy {
            // Before v5.8 no rstat flush stood between reclaim and the counters: exact
            // sizes, as in inactive_is_low() above.
            self.lruvec_hier(t, LruList::InactiveFile)
        } else {
            self.lruvec_page_state(t, LruList::InactiveFile)
        };
        sc.cache_trim_mode = (inactive_file >> sc.priority) != 0
            && sc.may_deactivate & DEACT_FILE == 0
            && !sc.no_cache_trim_mode;
        sc.file_is_tiny = false;
        if !sc.cgroup_reclaim {
            let free = self.nr_free();
            let file = self.node_lru(LruList::ActiveFile) + self.node_lru(LruList::InactiveFile);
            let hw: u64 = self
                .zones
                .iter()
                .map(|z| z.wmark_pages(crate::mmzone::Wmark::High))
                .sum();
            let anon = self.node_lru(LruList::InactiveAnon);
            sc.file_is_tiny = file + free <= hw
                && sc.may_deactivate & DEACT_ANON == 0
                && (anon >> sc.priority) != 0;
        }
    }

    /// Kernel: `lruvec_lru_size(lruvec, lru, zone_idx)`: the pages of list `lru` of this
    /// lruvec in the zones up to zone type `zone_idx` (`mem_cgroup_get_zone_lru_size()`
    /// summed over the eligible zones).
    pub fn lruvec_lru_size(&self, lv: usize, lru: usize, zone_idx: usize) -> u64 {
        let v = &self.lruvecs[lv];
        let mut size = 0;
        for (zi, z) in self.zones.iter().enumerate() {
            if z.zone_type <= zone_idx {
                size += v.nr_zone[zi][lru];
            }
        }
        size
    }

    /// Kernel: `get_scan_count()`. The cases are kept apart as the kernel writes them, even
    /// where two give the same balance.
    #[allow(clippy::if_same_then_else)]
    pub fn get_scan_count(&mut self, lv: usize, sc: &ScanControl) -> [u64; 4] {
        let swappiness = self.memcg_swappiness(lv);
        // can_reclaim_anon_pages(): mem_cgroup_get_nr_swap_pages() of the lruvec's memcg.
        let can_reclaim_anon = self.memcg_nr_swap_pages(lv) > 0;
        let case = if !sc.may_swap || !can_reclaim_anon {
            ScanBalanceCase::File
        } else if sc.cgroup_reclaim && swappiness == 0 {
            ScanBalanceCase::File
        } else if sc.priority == 0 && swappiness != 0 {
            ScanBalanceCase::Equal
        } else if sc.file_is_tiny {
            ScanBalanceCase::Anon
        } else if sc.cache_trim_mode {
            ScanBalanceCase::File
        } else if self.cfg.kernel.lru_balance_v4_7()
            && !self.inactive_is_low(lv, true)
            && (self.lruvec_lru_size(lv, LruList::InactiveFile.idx(), sc.reclaim_idx)
                >> sc.priority)
                != 0
        {
            // Before v5.5: "only evict file pages when we have plenty" of this lruvec,
            // whether or not they refault.
            ScanBalanceCase::File
        } else {
            ScanBalanceCase::Fract
        };
        let sizes = [0, 1, 2, 3].map(|l| self.lruvec_lru_size(lv, l, sc.reclaim_idx));
        let fraction = if case == ScanBalanceCase::Fract {
            let type_sizes = [sizes[0] + sizes[1], sizes[2] + sizes[3]];
            self.balance
                .fractions(&mut self.lruvecs, sc.cost, lv, swappiness, type_sizes)
        } else {
            [0, 0]
        };
        let mut denominator = fraction[0] + fraction[1];
        if self.cfg.balance == crate::BalanceKind::Legacy {
            denominator += 1;
        }
        scan_targets_over(case, fraction, denominator, sizes, sc.priority)
    }

    /// Kernel: `shrink_node()` (classic LRU): passes over the lruvecs under the target,
    /// repeated while `should_continue_reclaim()` says a costly high-order request still
    /// needs reclaim for compaction. Returns the pages reclaimed.
    pub fn shrink_node(&mut self, ctx: &mut Ctx, sc: &mut ScanControl) -> u64 {
        if self.cfg.lru == crate::LruKind::Mglru {
            return self.lru_gen_shrink_node(ctx, sc);
        }
        let start = sc.nr_reclaimed;
        loop {
            let pass = self.shrink_node_pass(ctx, sc);
            if !self.should_continue_reclaim(sc, pass) {
                return sc.nr_reclaimed - start;
            }
        }
    }

    /// Kernel: `should_continue_reclaim()` (v6.18): in reclaim/compaction mode (order > 0,
    /// and costly or below DEF_PRIORITY - 2), keep reclaiming while the last pass reclaimed
    /// something, no zone could already satisfy the allocation at the min watermark, none is
    /// suitable for compaction (order-0 free above min + `compact_gap()`, fragmentation
    /// index), and the inactive lists hold more than `compact_gap()`.
    pub(crate) fn should_continue_reclaim(&self, sc: &ScanControl, nr_reclaimed: u64) -> bool {
        let order = sc.order;
        if order == 0 || (order <= PAGE_ALLOC_COSTLY_ORDER && sc.priority >= DEF_PRIORITY - 2) {
            return false;
        }
        if nr_reclaimed == 0 {
            return false;
        }
        let mut inactive = self.node_lru(LruList::InactiveFile);
        if self.nr_swap_free() > 0 {
            inactive += self.node_lru(LruList::InactiveAnon);
        }
        let gap = crate::compaction::compact_gap(order);
        if !self.cfg.kernel.reclaim_compaction_stops_when_suitable() {
            // v4.6: reclaim compact_gap(order) pages first, then stop once compaction would
            // go ahead or the allocation would succeed (COMPACT_PARTIAL / COMPACT_CONTINUE).
            if sc.nr_reclaimed < gap && inactive > gap {
                return true;
            }
            return !(0..self.zones.len()).any(|zi| self.compaction_suitable_v4_6(zi, order));
        }
        for zi in 0..self.zones.len() {
            let z = &self.zones[zi];
            let min = z.wmark_pages(crate::mmzone::Wmark::Min);
            if z.watermark_ok(order, min + (1 << order) - 1) {
                return false;
            }
            if self.compaction_suitable_at(zi, order, min) {
                return false;
            }
        }
        inactive > gap
    }

    /// Kernel: `compaction_ready()` (direct reclaim, `shrink_zones()`, orders above
    /// PAGE_ALLOC_COSTLY_ORDER): true = skip reclaiming this zone, compaction should run
    /// instead. By version ([`KernelVersion::compaction_ready_by_suitability`](crate::workingset::KernelVersion::compaction_ready_by_suitability)):
    /// - v4.9+: the allocation would already succeed at the min watermark → true;
    ///   compaction not suitable ([`Mm::compaction_suitable`]) → false; else free pages
    ///   above `high + compact_gap(order)`. v6.15+ (v6.18): after the first test, one
    ///   `compaction_suitable()` at the high watermark: free pages above `high +
    ///   compact_gap(order) + (low - min)` and the fragmentation index
    ///   ([`KernelVersion::compaction_ready_costly_boost`](crate::workingset::KernelVersion::compaction_ready_costly_boost)).
    /// - v4.6: free pages above `high + balance_gap + compact_gap(order)` (balance_gap =
    ///   min(low, managed / KSWAPD_ZONE_BALANCE_GAP_RATIO (100)), rounded up), asked after
    ///   `compaction_deferred()` (which counts the consideration, and when deferred decides
    ///   alone); otherwise false when compaction_suitable() would be SKIPPED.
    pub(crate) fn compaction_ready(&mut self, zi: usize, order: u32) -> bool {
        use crate::mmzone::Wmark;
        let z = &self.zones[zi];
        let high = z.wmark_pages(Wmark::High);
        let gap = crate::compaction::compact_gap(order);
        if self.cfg.kernel.compaction_ready_by_suitability() {
            let min = z.wmark_pages(Wmark::Min);
            if z.watermark_ok(order, min + (1 << order) - 1) {
                return true;
            }
            if self.cfg.kernel.compaction_ready_costly_boost() {
                // v6.15+: compaction_suitable(zone, order, high): high + gap + (low - min).
                return self.compaction_suitable_at(zi, order, high);
            }
            if !self.compaction_suitable(zi, order) {
                return false;
            }
            return self.zones[zi].watermark_ok(0, high + gap);
        }
        let watermark_ok = z.watermark_ok(0, high + z.balance_gap() + gap);
        if self.zones[zi].compact.compaction_deferred(order) {
            return watermark_ok;
        }
        if !self.compaction_suitable_v4_6(zi, order) {
            return false;
        }
        watermark_ok
    }

    /// v4.6's `compaction_suitable(zone, order, 0, 0)` is not COMPACT_SKIPPED: the order-N
    /// allocation would succeed at the low watermark (COMPACT_PARTIAL), or compaction may
    /// run ([`Mm::compaction_suitable`]: low watermark plus `2UL << order` order-0 free
    /// pages, fragmentation index; COMPACT_CONTINUE). That is
    /// [`Mm::compaction_suit_allocation_order`] at the low watermark, not Skipped.
    pub(crate) fn compaction_suitable_v4_6(&self, zi: usize, order: u32) -> bool {
        self.compaction_suit_allocation_order(zi, order, crate::mmzone::Wmark::Low)
            != crate::compaction::CompactResult::Skipped
    }

    /// One pass of `shrink_node()` over the lruvecs under the target. Returns the pages
    /// reclaimed in this pass.
    fn shrink_node_pass(&mut self, ctx: &mut Ctx, sc: &mut ScanControl) -> u64 {
        let before = sc.nr_reclaimed;
        sc.nr = PassStats::default();
        self.prepare_scan_control(sc);
        if sc.cgroup_reclaim {
            self.shrink_lruvec(ctx, sc.target, sc);
            self.shrink_slab_for(sc.target, sc);
        } else {
            // shrink_node_memcgs(): kswapd walks every memcg; since v6.11 direct reclaim
            // resumes the shared round-robin walk and stops once it has reclaimed enough,
            // before it walks every memcg too
            // ([`crate::workingset::KernelVersion::direct_reclaim_partial_memcg_walk`]).
            // Not modelled: v6.11's second, full walk (`memcg_full_walk`) of a direct
            // reclaim whose partial walks reclaimed nothing at every priority.
            let partial = !sc.kswapd && self.cfg.kernel.direct_reclaim_partial_memcg_walk();
            let n = self.lruvecs.len();
            let start = if partial {
                self.node.memcg_cursor % n
            } else {
                0
            };
            for k in 0..n {
                let lv = (start + k) % n;
                self.cond_resched(ctx);
                self.shrink_lruvec(ctx, lv, sc);
                self.shrink_slab_for(lv, sc);
                if partial && sc.nr_reclaimed >= sc.nr_to_reclaim {
                    self.node.memcg_cursor = lv + 1;
                    break;
                }
            }
        }
        let reclaimed = sc.nr_reclaimed - before;
        if sc.kswapd {
            if sc.nr.writeback > 0 && sc.nr.writeback == sc.nr.taken {
                self.node.pgdat_writeback = true;
            }
            if sc.nr.unqueued_dirty > 0 && sc.nr.unqueued_dirty == sc.nr.file_taken {
                self.node.pgdat_dirty = true;
            }
        }
        // Every dirty folio taken is already queued for writeback with PG_reclaim: the
        // device is the bottleneck (kswapd, or cgroup reclaim with sane writeback throttling).
        let sane_cgroup = sc.cgroup_reclaim && !self.cfg.cgroup_v1;
        if (sc.kswapd || sane_cgroup) && sc.nr.dirty > 0 && sc.nr.dirty == sc.nr.congested {
            if sane_cgroup {
                self.node.lruvec_cgroup_congested = true;
            }
            if sc.kswapd {
                self.node.lruvec_node_congested = true;
            }
        }
        // Direct and limit reclaim stall on a congested target lruvec (current_may_throttle():
        // every task here may).
        let congested = if sc.cgroup_reclaim {
            self.node.lruvec_cgroup_congested
        } else {
            self.node.lruvec_node_congested
        };
        if !sc.kswapd && congested {
            self.reclaim_throttle_short(ctx);
        }
        if reclaimed > 0 {
            self.node.kswapd_failures = 0;
        } else if sc.cache_trim_mode
            && self.cfg.balance != crate::BalanceKind::Legacy
            && self.cfg.kernel.kswapd_retries_without_cache_trim()
        {
            // v6.10+ only: older kernels (and the legacy balance's) have no retry without
            // cache-trim mode, so nothing notes the failure.
            sc.cache_trim_mode_failed = true;
        }
        reclaimed
    }

    /// Kernel: `shrink_lruvec()`.
    fn shrink_lruvec(&mut self, ctx: &mut Ctx, lv: usize, sc: &mut ScanControl) {
        let targets = self.get_scan_count(lv, sc);
        let proportional = !sc.cgroup_reclaim && !sc.kswapd && sc.priority == DEF_PRIORITY;
        let nr_to_reclaim = sc.nr_to_reclaim;
        let reclaimed =
            scan_lruvec_lists(targets, nr_to_reclaim, proportional, |step| match step {
                Some((lru, n)) => self.shrink_list(ctx, lru, n, lv, sc),
                None => {
                    self.cond_resched(ctx);
                    0
                }
            });
        sc.nr_reclaimed += reclaimed;
        // Age the active anon list even when only file was scanned, so the inactive anon list
        // has candidates when pressure shifts (can_age_anon_pages(): any swap configured,
        // full or not).
        if self.total_swap_pages() > 0 && self.inactive_is_low(lv, false) {
            self.shrink_active_list(ctx, lv, LruList::ActiveAnon, SWAP_CLUSTER_MAX, sc);
        }
    }

    /// Kernel: `shrink_list()`.
    fn shrink_list(
        &mut self,
        ctx: &mut Ctx,
        lru: LruList,
        n: u64,
        lv: usize,
        sc: &mut ScanControl,
    ) -> u64 {
        if lru.is_active() {
            let bit = if lru.is_file() {
                DEACT_FILE
            } else {
                DEACT_ANON
            };
            let deactivate = if self.cfg.kernel.lru_balance_v4_7() {
                // Before v4.12: only to refill a low inactive list.
                self.inactive_is_low(lv, lru.is_file())
            } else {
                sc.may_deactivate & bit != 0
            };
            if deactivate {
                self.shrink_active_list(ctx, lv, lru, n, sc);
            } else if !self.cfg.kernel.lru_balance_v4_7() {
                // v5.5+: do_try_to_free_pages() retries with force_deactivate.
                sc.skipped_deactivate = true;
            }
            return 0;
        }
        self.shrink_inactive_list(ctx, lv, lru, n, sc)
    }

    /// Kernel: `isolate_lru_folios()`: take folios from the tail until `nr_to_scan` pages
    /// of eligible zones were scanned; folios of zones above `reclaim_idx` (since v6.13 at
    /// most SWAP_CLUSTER_MAX_SKIPPED of them per call) are set aside and put back at the head of the list
    /// (`pgskip_*`). Fills `self.scratch`; returns (pages taken, pages scanned), the scanned
    /// ones including the skipped (`*nr_scanned = total_scan`, which PGSCAN_* counts).
    fn isolate_lru_folios(
        &mut self,
        ctx: &mut Ctx,
        lv: usize,
        lru: LruList,
        nr_to_scan: u64,
        reclaim_idx: usize,
    ) -> (u64, u64) {
        self.scratch.clear();
        let mut scanned = 0;
        let mut total_scan = 0;
        let mut taken = 0;
        let file = lru.is_file() as usize;
        let top = self.zones.len() - 1;
        let restricted = reclaim_idx < self.zones[top].zone_type;
        let mut skipped: Vec<Pfn> = Vec::new();
        let mut nr_skipped = [0u64; crate::mmzone::NR_ZONE_TYPES];
        let max_skipped = if self.cfg.kernel.isolate_caps_skipped() {
            SWAP_CLUSTER_MAX_SKIPPED
        } else {
            u64::MAX
        };
        while scanned < nr_to_scan {
            let pfn = self.lruvecs[lv].lists[lru.idx()].tail;
            if pfn == NIL {
                break;
            }
            let nr = self.pages.nr_pages(pfn);
            total_scan += nr;
            if restricted && (skipped.len() as u64) < max_skipped {
                let zt = self.zones[self.zone_of(pfn)].zone_type;
                if zt > reclaim_idx {
                    // A folio of an ineligible zone: set aside, put back at the head below,
                    // counted in nr_scanned (total_scan) but not in `scan`.
                    nr_skipped[zt] += nr;
                    self.lru_del(pfn);
                    skipped.push(pfn);
                    continue;
                }
            }
            scanned += nr;
            self.lru_del(pfn);
            self.pages.set(pfn, pg::ISOLATED);
            self.node.nr_isolated[file] += nr;
            self.scratch.push(pfn);
            taken += nr;
        }
        // list_splice(&folios_skipped, src): the skipped folios go to the head of the list,
        // the last one skipped first (each was list_move()d to the head of folios_skipped).
        for &pfn in &skipped {
            self.lru_add(pfn, false);
        }
        self.ev
            .add(Ev::PgSkipDma32, nr_skipped[crate::mmzone::ZONE_DMA32]);
        self.ev
            .add(Ev::PgSkipNormal, nr_skipped[crate::mmzone::ZONE_NORMAL]);
        // The whole isolation batch is done under the lruvec's lru_lock.
        let cost = self.cfg.costs.scan_per_page_ns * (self.scratch.len() + skipped.len()) as u64;
        self.lru_lock_hold(ctx, lv, cost, true);
        self.reclaim_cpu.scan_ns += cost;
        (taken, total_scan)
    }

    /// Kernel: `move_folios_to_lru()`: put back what reclaim kept; activated folios age the
    /// non-resident clock. Done under the lru_lock of the folios' lruvec: `model.cost.lru_lock`
    /// plus `model.cost.lru_move` per folio ([`crate::lrulock`]).
    pub(crate) fn putback(&mut self, ctx: &mut Ctx, list_is_scratch2: bool) {
        let list = if list_is_scratch2 {
            std::mem::take(&mut self.scratch2)
        } else {
            std::mem::take(&mut self.scratch)
        };
        if let Some(&first) = list.first() {
            let lv = self.pages.hot[first as usize].memcg as usize;
            let work = self.cfg.costs.lru_move_ns * list.len() as u64;
            self.lru_lock_hold(ctx, lv, work, true);
            self.reclaim_cpu.scan_ns += work;
        }
        for &pfn in &list {
            let nr = self.pages.nr_pages(pfn);
            let file = self.pages.is_file_lru(pfn) as usize;
            self.pages.clear(pfn, pg::ISOLATED);
            self.node.nr_isolated[file] -= nr;
            // v5.9+ (the model from v4.10): putting back an active folio ages the clock.
            if self.pages.test(pfn, pg::ACTIVE) && !self.cfg.kernel.lru_balance_v4_7() {
                let lv = self.pages.hot[pfn as usize].memcg as usize;
                self.workingset_age_nonresident(lv, nr);
            }
            self.lru_add(pfn, false);
        }
        if list_is_scratch2 {
            self.scratch2 = list;
            self.scratch2.clear();
        } else {
            self.scratch = list;
            self.scratch.clear();
        }
    }

    /// PGSCAN_KSWAPD/PGSCAN_DIRECT for root reclaim (memcg limit reclaim counts only in the
    /// target memcg), and PGSCAN_ANON/PGSCAN_FILE, as `shrink_inactive_list()` and the
    /// multi-gen LRU's `scan_folios()` count them.
    pub(crate) fn count_scan(&mut self, sc: &ScanControl, file: bool, n: u64) {
        if !sc.cgroup_reclaim {
            let ev = if sc.kswapd {
                Ev::PgScanKswapd
            } else {
                Ev::PgScanDirect
            };
            self.ev.add(ev, n);
        } else {
            self.memcgs[sc.target].events.pgscan += n;
        }
        self.ev
            .add(if file { Ev::PgScanFile } else { Ev::PgScanAnon }, n);
    }

    /// PGSTEAL_* likewise (`shrink_inactive_list()`, `evict_folios()`).
    pub(crate) fn count_steal(&mut self, sc: &ScanControl, file: bool, n: u64) {
        if !sc.cgroup_reclaim {
            let ev = if sc.kswapd {
                Ev::PgStealKswapd
            } else {
                Ev::PgStealDirect
            };
            self.ev.add(ev, n);
        } else {
            self.memcgs[sc.target].events.pgsteal += n;
        }
        self.ev.add(
            if file {
                Ev::PgStealFile
            } else {
                Ev::PgStealAnon
            },
            n,
        );
    }

    /// Kernel: `shrink_inactive_list()`.
    fn shrink_inactive_list(
        &mut self,
        ctx: &mut Ctx,
        lv: usize,
        lru: LruList,
        nr_to_scan: u64,
        sc: &mut ScanControl,
    ) -> u64 {
        let file = lru.is_file();
        self.reclaim_run_completions(ctx);
        self.lru_add_drain(ctx);
        let (taken, scanned) = self.isolate_lru_folios(ctx, lv, lru, nr_to_scan, sc.reclaim_idx);
        sc.nr_scanned += scanned;
        self.count_scan(sc, file, scanned);
        if taken == 0 {
            return 0;
        }
        let (reclaimed, stat) = self.shrink_folio_list(ctx, sc);
        self.putback(ctx, true);
        self.count_steal(sc, file, reclaimed);
        let outcome = crate::balance::InactiveOutcome {
            taken,
            scanned,
            reclaimed,
            pageout: stat.nr_pageout,
            activated: stat.nr_activate[file as usize],
        };
        self.balance
            .note_inactive(&mut self.lruvecs, lv, file, &outcome);
        if stat.nr_unqueued_dirty == taken {
            // wakeup_flusher_threads(WB_REASON_VMSCAN)
            self.flusher_wanted = true;
        }
        sc.nr.dirty += stat.nr_dirty;
        sc.nr.congested += stat.nr_congested;
        sc.nr.unqueued_dirty += stat.nr_unqueued_dirty;
        sc.nr.writeback += stat.nr_writeback;
        sc.nr.immediate += stat.nr_immediate;
        sc.nr.taken += taken;
        if file {
            sc.nr.file_taken += taken;
        }
        reclaimed
    }

    /// IO that completed while this reclaimer ran: `folio_end_writeback()` runs from the
    /// completion interrupt, concurrently with reclaim, so a folio whose swap or file write
    /// it started a few batches earlier is clean and rotated to the inactive tail
    /// (`folio_rotate_reclaimable()`) by the time it isolates the next batch. The engine
    /// ends writeback only between steps, and one limit-reclaim call is one step: without
    /// this, a call escalating through the priorities against an async swap device found
    /// nothing it had written clean, wrote the whole inactive list before freeing its 32
    /// pages, and left thousands of written folios resident (f07: 50857 written for 36586
    /// reclaimed; the kernel writes 36719 for 36794). The reclaimer's clock is its step's
    /// start plus the CPU time it has used.
    pub(crate) fn reclaim_run_completions(&mut self, ctx: &Ctx) {
        self.run_completions(ctx.now + ctx.cpu_ns);
    }

    /// Kernel: `reclaim_throttle(pgdat, VMSCAN_THROTTLE_WRITEBACK)` and its wakeup by
    /// `__acct_reclaim_writeback()`: a reclaimer starting to sleep at `now` joins the
    /// throttled ones (`nr_writeback_throttled`; the first records NR_THROTTLED_WRITTEN in
    /// `nr_reclaim_start`) and is woken by the writeback completion that brings the pages
    /// written since then above `SWAP_CLUSTER_MAX * nr_throttled`, or after HZ/10. Returns
    /// that time, from the pending completions in time order, and records the sleep so the
    /// completions in between count as NR_THROTTLED_WRITTEN. The number of throttled
    /// reclaimers is taken when this one starts (the kernel rereads it at each completion).
    pub(crate) fn reclaim_throttle_wake(&mut self, now: u64) -> u64 {
        let deadline = now + HZ_NS / 10;
        self.node.wb_throttled.retain(|&(_, end)| end > now);
        let written = self.ev.get(Ev::NrThrottledWritten);
        if self.node.wb_throttled.is_empty() {
            self.node.nr_reclaim_start = written;
        }
        let nr_throttled = self.node.wb_throttled.len() as u64 + 1;
        let done = written - self.node.nr_reclaim_start;
        // Woken when the count exceeds the target: at the next completion if it already does.
        let mut need = (SWAP_CLUSTER_MAX * nr_throttled + 1)
            .saturating_sub(done)
            .max(1);
        let mut due = std::mem::take(&mut self.scratch3);
        due.clear();
        due.extend(self.completions.iter().filter_map(|r| {
            let (t, pfn) = r.0;
            (t <= deadline && self.pages.io_done_ns[pfn as usize] == t).then_some(pfn)
        }));
        due.sort_unstable_by_key(|&pfn| (self.pages.io_done_ns[pfn as usize], pfn));
        let mut wake = deadline;
        for &pfn in &due {
            let nr = self.pages.nr_pages(pfn);
            if nr >= need {
                wake = self.pages.io_done_ns[pfn as usize].max(now);
                break;
            }
            need -= nr;
        }
        due.clear();
        self.scratch3 = due;
        self.node.wb_throttled.push((now, wake));
        wake
    }

    /// Kernel: `skip_throttle_noprogress()`: do not stall a reclaimer that makes no progress
    /// when kswapd has given up on the node or when write-pending pages (dirty + writeback)
    /// are at most half of the reclaimable ones (`zone_reclaimable_pages()`: the file LRU,
    /// plus the anon LRU while swap has room).
    pub(crate) fn skip_throttle_noprogress(&self) -> bool {
        if self.node.kswapd_failures >= MAX_RECLAIM_RETRIES {
            return true;
        }
        let mut reclaimable =
            self.node_lru(LruList::InactiveFile) + self.node_lru(LruList::ActiveFile);
        if self.nr_swap_free() > 0 {
            reclaimable +=
                self.node_lru(LruList::InactiveAnon) + self.node_lru(LruList::ActiveAnon);
        }
        let write_pending = self.node.nr_dirty + self.node.nr_writeback;
        2 * write_pending <= reclaimable
    }

    /// Kernel: `reclaim_throttle()` for VMSCAN_THROTTLE_CONGESTED and
    /// VMSCAN_THROTTLE_NOPROGRESS: unless [`Mm::skip_throttle_noprogress`], sleep one jiffy
    /// (of [`crate::writeback::HZ`]); nothing in the model wakes these sleepers early. The
    /// reclaimer's clock moves on and the completions due run.
    pub(crate) fn reclaim_throttle_short(&mut self, ctx: &mut Ctx) {
        if self.skip_throttle_noprogress() {
            return;
        }
        let until = ctx.now + crate::writeback::JIFFY_NS;
        ctx.wait(until);
        ctx.now = until;
        self.run_completions(until);
    }

    /// Kernel: `folio_referenced()`: test-and-clear the young bits of every mapping of the
    /// folio; returns the number of mappings that were young. Charges the walk of a mapped
    /// folio: `rmap_per_call` plus `rmap_per_mapping` for its one mapping ([`crate::tlb`]).
    ///
    /// `invalid_folio_referenced_vma()` skips a mapping without recency (`vma_has_recency()`:
    /// VM_RAND_READ or VM_SEQ_READ from madvise(MADV_RANDOM / MADV_SEQUENTIAL)): its young
    /// bits are neither counted nor cleared, so reclaim takes such folios at their first trip
    /// down the inactive list. In the model an object's hint is applied to its (single)
    /// mapping as the twin's executor does (madvise on the mapping, fadvise on the file); the
    /// memcg-ownership test of the same function always passes (one task per mapping, in the
    /// memcg it charges).
    ///
    /// Before v6.3 ([`crate::workingset::KernelVersion::rmap_ignores_vmas_without_recency`])
    /// only a MADV_SEQUENTIAL mapping's young bits go uncounted (they are still cleared), a
    /// MADV_RANDOM mapping's count, and the multi-gen LRU's look-around runs for neither.
    pub(crate) fn folio_referenced(&mut self, ctx: &mut Ctx, pfn: Pfn) -> u32 {
        let o = self.pages.owner(pfn);
        let nr = self.pages.nr_pages(pfn);
        let hint = self.objects[o.obj as usize].hint;
        let recency = hint == crate::filemap::Hint::Normal;
        let skip_vma = self.cfg.kernel.rmap_ignores_vmas_without_recency();
        let look_around = recency && self.cfg.lru == crate::LruKind::Mglru;
        let counted = hint != crate::filemap::Hint::Sequential;
        if !recency && skip_vma {
            // The walk runs, but skips the mapping (invalid_folio_referenced_vma()): the
            // per-call part only.
            if self.folio_mapped(pfn) {
                self.charge_rmap_walk(ctx, 0, 0);
            }
            return 0;
        }
        let obj = &mut self.objects[o.obj as usize];
        let (young, mapped) = match obj.kind {
            ObjKind::Anon | ObjKind::Shmem if nr == 1 => {
                let e = &mut obj.ent[o.index as usize];
                if crate::memory::pte_present(*e) && crate::memory::pte_pfn(*e) == pfn {
                    let y = *e & crate::memory::PTE_YOUNG != 0;
                    *e &= !crate::memory::PTE_YOUNG;
                    (y, true)
                } else {
                    (false, false)
                }
            }
            ObjKind::Anon | ObjKind::Shmem => {
                // A THP: its PMD's young bit is the OR of the 512 entries' (see
                // crate::memory); a PTE-mapped one (mapped again from the swap cache) counts
                // each young PTE, as folio_referenced_one() does per PTE.
                let mut young = 0u32;
                let mut mapped = false;
                for k in 0..nr as u32 {
                    let e = &mut obj.ent[(o.index + k) as usize];
                    if crate::memory::pte_present(*e) && crate::memory::pte_pfn(*e) == pfn + k {
                        mapped = true;
                        young += (*e & crate::memory::PTE_YOUNG != 0) as u32;
                        *e &= !crate::memory::PTE_YOUNG;
                    }
                }
                if mapped {
                    self.charge_referenced_walk(ctx);
                }
                if self.pages.test(pfn, pg::PMD_MAPPED) {
                    // pmdp_clear_flush_young_notify(): one entry, no look-around.
                    return young.min(1);
                }
                if young > 0 && look_around {
                    let lv = self.pages.hot[pfn as usize].memcg as usize;
                    self.lru_gen_look_around(ctx, lv, o.obj, o.index as u64, pfn);
                }
                return if counted { young } else { 0 };
            }
            ObjKind::File => {
                if obj.mapped.is_empty() {
                    (false, false)
                } else {
                    let mut y = false;
                    let mut m = false;
                    for i in o.index as u64..o.index as u64 + nr {
                        let b = &mut obj.mapped[i as usize];
                        m |= *b & 1 != 0;
                        y |= *b & 2 != 0;
                        *b &= !2;
                    }
                    (y, m)
                }
            }
        };
        if mapped {
            self.charge_referenced_walk(ctx);
        }
        if young && look_around {
            // folio_referenced_one() under the multi-gen LRU: lru_gen_look_around().
            let lv = self.pages.hot[pfn as usize].memcg as usize;
            self.lru_gen_look_around(ctx, lv, o.obj, o.index as u64, pfn);
        }
        (young && counted) as u32
    }

    /// `folio_referenced()`'s walk over the folio's one mapping: `rmap_per_call +
    /// rmap_per_mapping`, charged to the reclaimer and to `reclaim_cpu.rmap_ns`
    /// ([`crate::tlb`]).
    fn charge_referenced_walk(&mut self, ctx: &mut Ctx) {
        self.charge_rmap_walk(ctx, self.cfg.costs.rmap_per_mapping_ns, 1);
    }

    /// Kernel: `folio_check_references()`. Before v5.9 (`new_anon_active()`, the legacy balance
    /// and the v4.7 series) a young PTE activates a swap-backed folio at once (v4.7's
    /// `page_check_references()`); from v5.9 anon, like file, is kept and marked at the first
    /// sighting and activated at the second. Under the multi-gen LRU since v6.14 a young PTE
    /// goes through `lru_gen_set_refs()`. Before v6.14
    /// ([`crate::workingset::KernelVersion::mglru_folio_seq_by_workingset`]) the classic
    /// rules apply (`isolate_folio()` cleared PG_referenced, and look-around sets it again on
    /// the folio whose PTE it starts from), after `shrink_folio_list()`'s "folio_update_gen()
    /// tried to promote this page?" test: a mapped folio that the page-table walk or a
    /// look-around marked referenced while isolated is kept without an rmap walk (the
    /// kernel tests this before the writeback checks; the model after them).
    pub(crate) fn folio_check_references(&mut self, ctx: &mut Ctx, pfn: Pfn) -> FolioRef {
        let mglru = self.cfg.lru == crate::LruKind::Mglru;
        let mglru_old = mglru && !self.cfg.kernel.mglru_folio_seq_by_workingset();
        if mglru_old && self.pages.test(pfn, pg::REFERENCED) && self.folio_mapped(pfn) {
            return FolioRef::Keep;
        }
        let ptes = self.folio_referenced(ctx, pfn);
        if mglru && !mglru_old {
            // The multi-gen LRU's branch: fd accesses are left to the tiers (sort_folio());
            // a young PTE keeps the folio the first time and activates it after.
            if ptes == 0 {
                return FolioRef::Reclaim;
            }
            return if self.lru_gen_set_refs(pfn) {
                FolioRef::Activate
            } else {
                FolioRef::Keep
            };
        }
        let referenced = self.pages.test_clear(pfn, pg::REFERENCED);
        if ptes > 0 {
            // Before v5.9 a young PTE activated a swap-backed folio (anon or shmem) at once:
            // page_check_references()'s `if (PageSwapBacked(page)) return PAGEREF_ACTIVATE`,
            // removed by b518154e59aa ("mm/vmscan: protect the workingset on anonymous
            // LRU"), the commit that also made new anon pages start inactive, which is what
            // `new_anon_active()` stands for.
            if self.balance.new_anon_active() && self.pages.test(pfn, pg::SWAPBACKED) {
                return FolioRef::Activate;
            }
            self.pages.set(pfn, pg::REFERENCED);
            if referenced || ptes > 1 {
                return FolioRef::Activate;
            }
            return FolioRef::Keep;
        }
        if referenced && self.pages.is_file_lru(pfn) {
            return FolioRef::ReclaimClean;
        }
        FolioRef::Reclaim
    }

    /// Kernel: `shrink_folio_list()`: decide the fate of each isolated folio in
    /// `self.scratch`. Kept and activated folios go to `self.scratch2` for the putback.
    pub(crate) fn shrink_folio_list(
        &mut self,
        ctx: &mut Ctx,
        sc: &mut ScanControl,
    ) -> (u64, ReclaimStat) {
        let mut stat = ReclaimStat::default();
        let mut reclaimed = 0;
        let mut list = std::mem::take(&mut self.scratch);
        self.scratch2.clear();
        // A THP split below appends its tail pages to the list (split_folio_to_list()).
        let mut next = 0;
        while next < list.len() {
            // cond_resched() per folio: a woken kernel thread may take the CPU here.
            self.cond_resched_isolated(ctx);
            self.prefetch_isolated(&list, next);
            let pfn = list[next];
            next += 1;
            let mut nr = self.pages.nr_pages(pfn);
            let file = self.pages.is_file_lru(pfn);
            let anon = !file;
            // folio_trylock(): a folio whose read is still in flight is locked (readahead adds
            // its folios to the page cache locked, `filemap_add_folio()`, and the read's
            // completion unlocks them; a swap-in's folio likewise), so reclaim cannot take it
            // and puts it back (`goto keep`). `wait_locked()` clears a PG_locked whose read
            // is known to be done.
            if self.pages.wait_locked(pfn, ctx.now) > ctx.now {
                self.scratch2.push(pfn);
                continue;
            }
            stat.nr_scanned += nr;
            let f = self.pages.hot[pfn as usize].flags;
            // folio_check_dirty_writeback(): only file-LRU folios report dirty/writeback to
            // the statistics (an anon folio under swap-out does not), while the writeback
            // test below uses the folio flag itself.
            let dirty = file && f & pg::DIRTY != 0;
            let writeback = f & pg::WRITEBACK != 0;
            let file_writeback = file && writeback;
            if dirty || file_writeback {
                stat.nr_dirty += nr;
            }
            if dirty && !file_writeback {
                stat.nr_unqueued_dirty += nr;
            }
            if file_writeback && f & pg::RECLAIM != 0 {
                stat.nr_congested += nr;
            }
            if writeback {
                if sc.kswapd && f & pg::RECLAIM != 0 && self.node.pgdat_writeback {
                    stat.nr_immediate += nr;
                    self.activate_locked(pfn, &mut stat);
                    continue;
                } else if !(sc.cgroup_reclaim && self.cfg.cgroup_v1) || f & pg::RECLAIM == 0 {
                    // writeback_throttling_sane() (or the first encounter): mark and move on.
                    self.pages.set(pfn, pg::RECLAIM);
                    stat.nr_writeback += nr;
                    self.activate_locked(pfn, &mut stat);
                    continue;
                }
                // cgroup v1 limit reclaim meeting a folio it already marked: wait for the
                // writeback (folio_wait_writeback()), then try to reclaim it.
                let t = self.pages.io_done_ns[pfn as usize];
                ctx.wait(t);
                ctx.now = ctx.now.max(t);
                self.end_writeback(pfn);
            }
            let refs = self.folio_check_references(ctx, pfn);
            if pfn == self.read_pinned && !matches!(refs, FolioRef::Activate) {
                // The read's own reference: __remove_mapping() cannot freeze the refcount
                // (`goto keep_locked`).
                self.scratch2.push(pfn);
                continue;
            }
            match refs {
                FolioRef::Activate => {
                    self.activate_locked(pfn, &mut stat);
                    continue;
                }
                FolioRef::Keep => {
                    stat.nr_ref_keep += nr;
                    self.scratch2.push(pfn);
                    continue;
                }
                _ => {}
            }
            if anon
                && !self.pages.test(pfn, pg::SWAPCACHE)
                && (!sc.may_swap || !self.add_to_swap(pfn))
            {
                if !sc.may_swap || nr == 1 {
                    self.activate_locked(pfn, &mut stat);
                    continue;
                }
                // No free swap cluster for the THP: split it and swap out base pages
                // (thp_swpout_fallback); the tails are reclaimed later in this same list.
                self.split_huge_page_to_list(pfn, &mut list);
                // The tails are counted as the list reaches them.
                stat.nr_scanned -= nr - 1;
                nr = 1;
                self.ev.add(Ev::ThpSwpoutFallback, 1);
                if !self.add_to_swap(pfn) {
                    self.activate_locked(pfn, &mut stat);
                    continue;
                }
            }
            // try_to_unmap(): PTEs become swap entries (anon) or are cleared (file).
            if self.folio_mapped(pfn) {
                if !sc.may_unmap {
                    self.scratch2.push(pfn);
                    continue;
                }
                self.try_to_unmap(ctx, pfn);
            }
            if self.pages.test(pfn, pg::DIRTY) {
                if file
                    && (!sc.kswapd || !self.pages.test(pfn, pg::RECLAIM) || !self.node.pgdat_dirty)
                {
                    // Leave file writeback to the flushers; come back once it is clean.
                    self.ev.add(Ev::NrVmscanImmediateReclaim, nr);
                    self.pages.set(pfn, pg::RECLAIM);
                    self.activate_locked(pfn, &mut stat);
                    continue;
                }
                if refs == FolioRef::ReclaimClean || !sc.may_writepage {
                    self.scratch2.push(pfn);
                    continue;
                }
                // The folio is written while a CPU could still write through a stale TLB
                // entry of a batched dirty PTE: flush those first.
                self.try_to_unmap_flush_dirty(ctx);
                // pageout()
                let done = self.pageout(ctx, pfn);
                stat.nr_pageout += nr;
                if !done {
                    // Async IO in flight: stays inactive, rotated when it completes.
                    self.scratch2.push(pfn);
                    continue;
                }
            }
            // __remove_mapping() with a shadow entry, then free.
            self.remove_mapping(pfn, sc.target);
            let c = self.cfg.costs.reclaim_per_page_ns;
            ctx.cpu_ns += c;
            self.reclaim_cpu.reclaim_ns += c;
            self.node.nr_isolated[file as usize] -= nr;
            self.free_folio(pfn);
            reclaimed += nr;
        }
        self.scratch = list;
        self.scratch.clear();
        // The unmaps still batched are flushed before their folios are freed.
        self.try_to_unmap_flush(ctx);
        let activated = stat.nr_activate[0] + stat.nr_activate[1];
        self.ev.add(Ev::PgActivate, activated);
        (reclaimed, stat)
    }

    /// Kernel: `split_folio_to_list()` of an isolated anonymous THP that reclaim holds
    /// (`__folio_split()` to order 0): the PMD, if any, is split into PTEs (`thp_split_pmd`;
    /// the entries already point at their subpages), and the 511 tails become order-0 folios
    /// with the head's flags, owner and memcg, appended to `list` still isolated
    /// (`thp_split_page`). NR_ISOLATED_ANON and the memcg charge are unchanged.
    pub(crate) fn split_huge_page_to_list(&mut self, pfn: Pfn, list: &mut Vec<u32>) {
        let i = pfn as usize;
        let nr = self.pages.nr_pages(pfn) as u32;
        debug_assert!(nr > 1 && self.pages.test(pfn, pg::ISOLATED | pg::SWAPBACKED));
        debug_assert!(!self
            .pages
            .test(pfn, pg::SWAPCACHE | pg::WRITEBACK | pg::LOCKED));
        if self.pages.test_clear(pfn, pg::PMD_MAPPED) {
            self.ev.add(Ev::ThpSplitPmd, 1);
            self.node.nr_anon_thps -= 1;
        }
        let flags = self.pages.hot[i].flags;
        let (obj, index, memcg) = (
            self.pages.obj[i],
            self.pages.index[i],
            self.pages.hot[i].memcg,
        );
        self.pages.hot[i].order = 0;
        for k in 1..nr {
            let t = (pfn + k) as usize;
            self.pages.hot[t].flags = flags;
            self.pages.hot[t].order = 0;
            self.pages.obj[t] = obj;
            self.pages.index[t] = index + k;
            self.pages.hot[t].memcg = memcg;
            self.pages.io_done_ns[t] = 0;
            list.push(pfn + k);
        }
        self.ev.add(Ev::ThpSplitPage, 1);
    }

    /// The `activate_locked:` label of `shrink_folio_list()`.
    fn activate_locked(&mut self, pfn: Pfn, stat: &mut ReclaimStat) {
        if self.pages.test(pfn, pg::SWAPCACHE)
            && !self.pages.test(pfn, pg::WRITEBACK)
            && self.vm_swap_full()
        {
            self.folio_free_swap(pfn);
        }
        let nr = self.pages.nr_pages(pfn);
        self.pages.set(pfn, pg::ACTIVE);
        stat.nr_activate[self.pages.is_file_lru(pfn) as usize] += nr;
        self.scratch2.push(pfn);
    }

    /// Kernel: `shrink_active_list()`: deactivate folios from the active tail (referenced
    /// non-exec folios are deactivated too; their young bits are cleared).
    fn shrink_active_list(
        &mut self,
        ctx: &mut Ctx,
        lv: usize,
        lru: LruList,
        nr_to_scan: u64,
        sc: &mut ScanControl,
    ) {
        let file = lru.is_file();
        self.reclaim_run_completions(ctx);
        self.lru_add_drain(ctx);
        let (taken, scanned) = self.isolate_lru_folios(ctx, lv, lru, nr_to_scan, sc.reclaim_idx);
        if !sc.cgroup_reclaim {
            self.ev.add(Ev::PgRefill, scanned);
        }
        let list = std::mem::take(&mut self.scratch);
        let mut deactivated = 0;
        let mut referenced = 0;
        for (i, &pfn) in list.iter().enumerate() {
            self.prefetch_isolated(&list, i);
            if self.folio_referenced(ctx, pfn) > 0 {
                referenced += self.pages.nr_pages(pfn);
            }
            self.pages.clear(pfn, pg::ACTIVE);
            self.pages.set(pfn, pg::WORKINGSET);
            deactivated += self.pages.nr_pages(pfn);
        }
        self.scratch = list;
        self.putback(ctx, false);
        self.ev.add(Ev::PgDeactivate, deactivated);
        // No VM_EXEC mappings in the model: nothing is rotated back onto the active list.
        self.balance
            .note_active(&mut self.lruvecs, lv, file, taken, referenced, 0);
    }

    /// Kernel: `snapshot_refaults()` (of `lruvec_page_state()`: the flushed counts).
    fn snapshot_refaults(&mut self, target: usize) {
        let r = [
            self.lruvec_activate_state(target, false),
            self.lruvec_activate_state(target, true),
        ];
        self.lruvecs[target].refaults = r;
    }

    /// Kernel: `do_try_to_free_pages()`.
    fn do_try_to_free_pages(&mut self, ctx: &mut Ctx, sc: &mut ScanControl) -> u64 {
        let mut compaction_ready = false;
        loop {
            if !sc.cgroup_reclaim {
                // `__count_zid_vm_events(ALLOCSTALL, sc->reclaim_idx, 1)`: the stall is
                // counted under the zone type `gfp_zone()` names for the allocation's mask,
                // whether or not the machine has that zone ([`Gfp::allocstall`]).
                self.ev.add(sc.allocstall, 1);
            }
            loop {
                sc.nr_scanned = 0;
                // shrink_zones(): for a costly order, global direct reclaim skips the zones
                // where compaction_ready() says compaction should run instead (and then
                // stops after this priority; with nothing reclaimed it reports progress so
                // that the allocator compacts). The model shrinks the node once unless every
                // zone is ready.
                let mut all_ready = false;
                if !sc.kswapd && !sc.cgroup_reclaim && sc.order > PAGE_ALLOC_COSTLY_ORDER {
                    all_ready = true;
                    for zi in 0..self.zones.len() {
                        if self.compaction_ready(zi, sc.order) {
                            compaction_ready = true;
                        } else {
                            all_ready = false;
                        }
                    }
                }
                if !all_ready {
                    self.shrink_node(ctx, sc);
                }
                // consider_reclaim_throttle(): direct reclaim that reclaimed nothing by
                // priority 1 stalls (NOPROGRESS); kswapd and limit reclaim do not.
                if sc.nr_reclaimed <= sc.nr_scanned >> 3
                    && !sc.kswapd
                    && !sc.cgroup_reclaim
                    && sc.priority == 1
                    && sc.nr_reclaimed == 0
                {
                    self.reclaim_throttle_short(ctx);
                }
                if sc.nr_reclaimed >= sc.nr_to_reclaim || compaction_ready {
                    break;
                }
                if sc.priority < DEF_PRIORITY - 2 {
                    sc.may_writepage = true;
                }
                sc.priority -= 1;
                if sc.priority < 0 {
                    break;
                }
            }
            self.snapshot_refaults(sc.target);
            if sc.cgroup_reclaim {
                self.node.lruvec_cgroup_congested = false;
            }
            if sc.nr_reclaimed > 0 {
                return sc.nr_reclaimed;
            }
            // "Aborted reclaim to try compaction? don't OOM, then".
            if compaction_ready {
                return 1;
            }
            if sc.skipped_deactivate && !sc.force_deactivate {
                sc.priority = DEF_PRIORITY;
                sc.force_deactivate = true;
                sc.skipped_deactivate = false;
                continue;
            }
            return 0;
        }
    }

    /// Kernel: `try_to_free_pages()`: direct reclaim of SWAP_CLUSTER_MAX pages.
    pub fn try_to_free_pages(&mut self, ctx: &mut Ctx, order: u32, gfp: Gfp) -> u64 {
        let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, 0);
        sc.order = order;
        sc.allocstall = gfp.allocstall();
        sc.may_writepage = !self.cfg.laptop_mode;
        self.do_try_to_free_pages(ctx, &mut sc)
    }

    /// Kernel: `try_to_free_mem_cgroup_pages()`: limit reclaim of memcg `memcg`.
    pub fn try_to_free_mem_cgroup_pages(&mut self, ctx: &mut Ctx, memcg: usize, nr: u64) -> u64 {
        let mut sc = ScanControl::new(nr.max(SWAP_CLUSTER_MAX), memcg);
        sc.cgroup_reclaim = true;
        sc.may_writepage = !self.cfg.laptop_mode;
        self.do_try_to_free_pages(ctx, &mut sc)
    }

    /// kswapd_age_node() for the classic LRU: deactivate anon when the inactive anon list of a
    /// memcg is low, so it has candidates (can_age_anon_pages: swap present).
    pub(crate) fn kswapd_age_node(&mut self, ctx: &mut Ctx, sc: &mut ScanControl) {
        if self.cfg.lru == crate::LruKind::Mglru {
            return self.lru_gen_age_node(ctx, sc);
        }
        if self.total_swap_pages() == 0 {
            return;
        }
        for lv in 0..self.lruvecs.len() {
            if self.inactive_is_low(lv, false) {
                self.shrink_active_list(ctx, lv, LruList::ActiveAnon, SWAP_CLUSTER_MAX, sc);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inactive_is_low_ratios() {
        // < 1 GiB total: ratio 1.
        assert!(inactive_is_low_ratio(100, 101));
        assert!(!inactive_is_low_ratio(100, 100));
        // 3 GiB total (786432 pages): ratio int_sqrt(30) = 5.
        assert!(inactive_is_low_ratio(131_000, 655_432));
        assert!(!inactive_is_low_ratio(131_072, 655_360));
        // 10 GiB: ratio 10.
        let ten_gib = 10 * 262_144;
        assert!(inactive_is_low_ratio(
            ten_gib / 11 - 1,
            ten_gib - ten_gib / 11 + 1
        ));
    }

    #[test]
    fn scan_targets_in_every_balance_case() {
        let sizes = [4096 * 10, 4096 * 20, 4096 * 30, 4096 * 40];
        // priority 12: size >> 12 = [10, 20, 30, 40]
        assert_eq!(
            scan_targets(ScanBalanceCase::Equal, [0, 0], sizes, 12),
            [10, 20, 30, 40]
        );
        assert_eq!(
            scan_targets(ScanBalanceCase::File, [0, 0], sizes, 12),
            [0, 0, 30, 40]
        );
        assert_eq!(
            scan_targets(ScanBalanceCase::Anon, [0, 0], sizes, 12),
            [10, 20, 0, 0]
        );
        // SCAN_FRACT with the worked-example fractions [143, 239]: denominator 382.
        // anon: 10*143/382 = 3, 20*143/382 = 7; file: 30*239/382 = 18, 40*239/382 = 25.
        assert_eq!(
            scan_targets(ScanBalanceCase::Fract, [143, 239], sizes, 12),
            [3, 7, 18, 25]
        );
        // priority 0 scans everything.
        assert_eq!(
            scan_targets(ScanBalanceCase::Equal, [0, 0], [5, 6, 7, 8], 0),
            [5, 6, 7, 8]
        );
    }
}

#[cfg(test)]
mod list_tests {
    use crate::page::pg;
    use crate::testutil::*;
    use crate::vmscan::ScanControl;
    use crate::*;

    /// page_check_references() on a folio with one young PTE and PG_referenced clear. Before
    /// v5.9 (the legacy balance and the v4.7 series, `new_anon_active()`) a swap-backed folio
    /// is activated at once; a file folio is kept and marked. From v5.9 (b518154e59aa) anon
    /// is treated as file: kept and marked at the first sighting, reclaimed at the next if no
    /// PTE was young in between.
    #[test]
    fn young_swap_backed_folio_activates_at_once_before_v5_9() {
        use crate::vmscan::FolioRef;
        for (balance, anon_first, anon_second) in [
            (BalanceKind::Legacy, FolioRef::Activate, FolioRef::Reclaim),
            (BalanceKind::RefaultCost, FolioRef::Keep, FolioRef::Reclaim),
        ] {
            let mut mm = tiny_mm(balance, 4096);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            mm.touch(&mut ctx, 0, 0, true);
            mm.touch(&mut ctx, 1, 0, false);
            let anon = crate::memory::pte_pfn(mm.objects[0].ent[0]);
            let file = mm.cache_lookup(1, 0).unwrap();
            assert!(mm.pages.test(anon, pg::SWAPBACKED));
            let got = mm.folio_check_references(&mut ctx, anon);
            assert_eq!(got, anon_first, "{balance:?}");
            // Activation leaves PG_referenced clear; keeping sets it.
            assert_eq!(
                mm.pages.test(anon, pg::REFERENCED),
                got == FolioRef::Keep,
                "{balance:?}"
            );
            // No young PTE since: a second look without PG_referenced reclaims, with it (an
            // anon folio is not clean-reclaimable) reclaims too.
            assert_eq!(
                mm.folio_check_references(&mut ctx, anon),
                anon_second,
                "{balance:?}"
            );
            assert_eq!(
                mm.folio_check_references(&mut ctx, file),
                FolioRef::Keep,
                "{balance:?}: a file folio needs two looks under every kernel"
            );
        }
    }

    /// should_continue_reclaim() outcomes on a 4096-page machine whose memory is page cache.
    #[test]
    fn should_continue_reclaim_for_costly_orders() {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
        cfg.readahead_max_pages = 0;
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..4000 {
            mm.file_read(&mut ctx, 1, p, 1);
        }
        let free = mm.nr_free();
        let min = mm.zones[0].wmark_pages(crate::mmzone::Wmark::Min);
        assert!(free < min + 1024, "free {free}, min {min}");
        assert!(mm.node_lru(LruList::InactiveFile) > 1024);
        let mut sc = ScanControl::new(32, 0);
        // Order 0, or nothing reclaimed: stop.
        assert!(!mm.should_continue_reclaim(&sc, 32));
        sc.order = 9;
        assert!(!mm.should_continue_reclaim(&sc, 0));
        // Costly order, progress, compaction not yet suitable, 4000 inactive > 1024: go on.
        assert!(mm.should_continue_reclaim(&sc, 32));
        // Order 3 is not costly: not in reclaim/compaction mode at DEF_PRIORITY; below
        // DEF_PRIORITY - 2 it is, but free > min + compact_gap(3) = min + 16 makes compaction
        // suitable (no fragmentation-index test below costly orders): stop.
        sc.order = 3;
        assert!(!mm.should_continue_reclaim(&sc, 32));
        sc.priority = DEF_PRIORITY - 3;
        assert!(free > min + 16);
        assert!(!mm.should_continue_reclaim(&sc, 32));
        // Reclaim until compaction would go ahead: then it stops.
        // (Priority 1: the pages were read once, so the first pass only marks them.)
        sc.order = 9;
        sc.priority = 1;
        sc.nr_to_reclaim = 32;
        let got = mm.shrink_node(&mut ctx, &mut sc);
        let free = mm.nr_free();
        assert!(got > 32, "one call reclaimed {got}");
        // It stopped because an order-9 block is free (pages freed in pfn order merge) or
        // compaction became suitable.
        assert!(
            mm.zones[0].watermark_ok(9, min + 511) || free > min + 1024,
            "stopped at free {free}"
        );
        assert!(!mm.should_continue_reclaim(&sc, 32));
        mm.check_invariants().unwrap();
    }

    /// v4.6's should_continue_reclaim(): reclaim/compaction goes on until compact_gap(9) =
    /// 1024 pages are reclaimed, even where compaction could already run (v5.3+ stops
    /// there). 4096-page machine, 2000 pages of page cache: free > low + 1024.
    #[test]
    fn should_continue_reclaim_reclaims_compact_gap_first_in_v4_6() {
        for (kernel, go_on) in [
            (crate::workingset::KernelVersion::new(4, 6), true),
            (crate::workingset::KernelVersion::default(), false),
        ] {
            let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
            cfg.readahead_max_pages = 0;
            cfg.kernel = kernel;
            let mut mm = Mm::new(cfg);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            for p in 0..2000 {
                mm.file_read(&mut ctx, 1, p, 1);
            }
            let low = mm.zones[0].wmark_pages(crate::mmzone::Wmark::Low);
            assert!(mm.nr_free() > low + 1024);
            assert!(mm.node_lru(LruList::InactiveFile) > 1024);
            assert!(mm.compaction_suitable(0, 9));
            let mut sc = ScanControl::new(32, 0);
            sc.order = 9;
            sc.nr_reclaimed = 32;
            assert_eq!(mm.should_continue_reclaim(&sc, 32), go_on, "{kernel}");
            // Nothing reclaimed in the last pass: stop, in both.
            assert!(!mm.should_continue_reclaim(&sc, 0));
            // 1024 reclaimed: v4.6 stops too, compaction being suitable.
            sc.nr_reclaimed = 1024;
            assert!(!mm.should_continue_reclaim(&sc, 32));
        }
    }

    /// List-state walk-through of the classic LRU on a tiny machine (file pages, read()).
    #[test]
    fn mark_accessed_and_reclaim_move_folios_between_lists() {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 1024);
        cfg.readahead_max_pages = 0; // one order-0 folio per read
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        // Read pages 0, 1, 2 once: inactive file [2 1 0] (head first), all referenced.
        for p in 0..3 {
            mm.file_read(&mut ctx, 1, p, 1);
        }
        let pfn = |mm: &Mm, i: u32| mm.cache_lookup(1, i).unwrap();
        let (a, b, c) = (pfn(&mm, 0), pfn(&mm, 1), pfn(&mm, 2));
        assert_eq!(mm.dump_lru(0)[2], vec![c, b, a]);
        assert!(mm.pages.test(a, pg::REFERENCED));
        // Read page 1 again in a separate read(): second access → active.
        mm.file_read(&mut ctx, 1, 1, 1);
        assert_eq!(mm.dump_lru(0)[2], vec![c, a]);
        assert_eq!(mm.dump_lru(0)[3], vec![b]);
        assert_eq!(mm.ev.get(vmstat::Ev::PgActivate), 1);
        // Reclaim two pages: the inactive tail (a, then c) goes; referenced unmapped file
        // pages are reclaimed (RECLAIM_CLEAN, they are clean); shadows are left behind.
        let mut sc = ScanControl::new(2, 0);
        sc.priority = 0;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.shrink_node(&mut ctx, &mut sc);
        assert_eq!(mm.dump_lru(0)[2], Vec::<u32>::new());
        assert_eq!(mm.dump_lru(0)[3], vec![b]);
        assert!(mm.cache_lookup(1, 0).is_none());
        assert_eq!(mm.ev.get(vmstat::Ev::PgStealFile), 2);
        // Refault page 0: the shadow is found (workingset_refault_file).
        mm.file_read(&mut ctx, 1, 0, 1);
        assert_eq!(mm.ev.get(vmstat::Ev::WorkingsetRefaultFile), 1);
        mm.check_invariants().unwrap();
    }
}

/// The four rules of issue 16 where the model followed older kernels.
#[cfg(test)]
mod kernel_rules {
    use super::*;
    use crate::testutil::*;
    use crate::*;

    /// A tiny machine at `kernel` with 8192 inactive file pages (read once) and 4096 active
    /// anon pages (touched, then activated), the balance inputs zeroed.
    fn file_and_anon(kernel: workingset::KernelVersion, balance: BalanceKind) -> Mm {
        let mut cfg = tiny_config(balance, 16_384);
        cfg.readahead_max_pages = 0;
        cfg.kernel = kernel;
        cfg.swappiness = 100;
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..8192 {
            mm.file_read(&mut ctx, 1, p, 1);
        }
        for k in 0..4096 {
            mm.touch(&mut ctx, 0, k, true);
            let pfn = memory::pte_pfn(mm.objects[0].ent[k as usize]);
            mm.folio_activate(pfn);
        }
        mm.lruvecs[0].recent_scanned = [0; 2];
        mm.lruvecs[0].recent_rotated = [0; 2];
        assert_eq!(mm.lruvec_hier(0, LruList::InactiveFile), 8192);
        assert_eq!(mm.lruvec_hier(0, LruList::ActiveAnon), 4096);
        mm
    }

    /// v4.7 get_scan_count(): "only evict file pages when we have plenty" takes SCAN_FILE
    /// whenever the inactive file list is not low (active file 0 <= inactive 8192) and has
    /// pages at this priority, refaults or not; v5.5+ cache-trim mode does not after a
    /// refault, and SCAN_FRACT (swappiness 100, no history) gives anon a share. Priority 10:
    /// file 8192 >> 10 = 8 pages; anon 4096 >> 10 = 4, of which 4 * 100 / 200 = 2 under
    /// refault-cost (denominator ap + fp) and 4 * 100 / 201 = 1 under legacy (ap + fp + 1,
    /// before v5.8), file 8 * 100 / 201 = 3.
    #[test]
    fn v4_7_scan_file_when_plenty_despite_refaults() {
        use crate::workingset::KernelVersion;
        for (kernel, balance, want) in [
            (KernelVersion::new(4, 7), BalanceKind::Legacy, [0, 0, 8, 0]),
            (
                KernelVersion::new(4, 7),
                BalanceKind::RefaultCost,
                [0, 0, 8, 0],
            ),
            (KernelVersion::default(), BalanceKind::Legacy, [0, 1, 3, 0]),
            (
                KernelVersion::default(),
                BalanceKind::RefaultCost,
                [0, 2, 4, 0],
            ),
        ] {
            let mut mm = file_and_anon(kernel, balance);
            // WORKINGSET_ACTIVATE moved since the snapshot of the last cycle.
            mm.lruvecs[0].refaults[1] = mm.lruvec_activate_state(0, true) + 1;
            let mut sc = ScanControl::new(32, 0);
            sc.kswapd = true;
            sc.priority = 10;
            mm.prepare_scan_control(&mut sc);
            assert_eq!(mm.get_scan_count(0, &sc), want, "{kernel} {balance:?}");
        }
    }

    /// inactive_list_is_low() before v4.10 keeps the file lists 1:1 (`active > inactive`);
    /// from v4.10 both types use int_sqrt(10 * GiB). 200,000 inactive and 300,000 active
    /// file pages (1.9 GiB: ratio int_sqrt(10) = 3): low at 4.7 (300,000 > 200,000), not at
    /// 6.18 (200,000 * 3 = 600,000 >= 300,000). Anon keeps the square-root ratio at both.
    #[test]
    fn v4_7_inactive_file_is_low_is_one_to_one() {
        use crate::workingset::KernelVersion;
        for (kernel, file_low) in [
            (KernelVersion::new(4, 7), true),
            (KernelVersion::new(4, 9), true),
            (KernelVersion::new(4, 10), false),
            (KernelVersion::default(), false),
        ] {
            let mut cfg = tiny_config(BalanceKind::Legacy, 64);
            cfg.kernel = kernel;
            let mut mm = Mm::new(cfg);
            mm.zones[0].nr_lru[LruList::InactiveFile.idx()] = 200_000;
            mm.zones[0].nr_lru[LruList::ActiveFile.idx()] = 300_000;
            mm.zones[0].nr_lru[LruList::InactiveAnon.idx()] = 200_000;
            mm.zones[0].nr_lru[LruList::ActiveAnon.idx()] = 300_000;
            assert_eq!(mm.inactive_is_low(0, true), file_low, "{kernel}");
            assert!(!mm.inactive_is_low(0, false), "{kernel}");
        }
    }

    /// shrink_list() before v4.12 deactivates active pages only to refill a low inactive
    /// list: with 8192 inactive file pages and 100 active ones, a refault since the last
    /// cycle makes v5.5+ reclaim deactivate (32 scanned, all deactivated); v4.7 leaves the
    /// active list alone.
    #[test]
    fn v4_7_no_deactivation_on_refaults() {
        use crate::workingset::KernelVersion;
        for (kernel, want) in [
            (KernelVersion::new(4, 7), 0),
            (KernelVersion::default(), 32),
        ] {
            let mut mm = file_and_anon(kernel, BalanceKind::Legacy);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            for p in 0..100 {
                // A resident page-cache entry holds the pfn in its low 32 bits.
                let pfn = (mm.objects[1].ent[p] & 0xffff_ffff) as Pfn;
                mm.folio_activate(pfn);
            }
            assert_eq!(mm.lruvec_hier(0, LruList::ActiveFile), 100);
            mm.lruvecs[0].refaults[1] = mm.lruvec_activate_state(0, true) + 1;
            let mut sc = ScanControl::new(32, 0);
            sc.kswapd = true;
            sc.priority = 10;
            mm.prepare_scan_control(&mut sc);
            let before = mm.ev.get(Ev::PgDeactivate);
            mm.shrink_list(&mut ctx, LruList::ActiveFile, 32, 0, &mut sc);
            assert_eq!(mm.ev.get(Ev::PgDeactivate) - before, want, "{kernel}");
        }
    }

    /// Before v5.9 (the legacy balance) a shmem page starts on the inactive anon list
    /// (`shmem_getpage_gfp()` -> `lru_cache_add_anon()`), a private anon page on the active
    /// one; from v5.9 both start inactive.
    #[test]
    fn legacy_shmem_starts_inactive() {
        for (kind, balance, active) in [
            (ObjKind::Shmem, BalanceKind::Legacy, 0),
            (ObjKind::Anon, BalanceKind::Legacy, 1),
            (ObjKind::Shmem, BalanceKind::RefaultCost, 0),
        ] {
            let mut cfg = tiny_config(balance, 1024);
            cfg.objects[0].kind = kind;
            let mut mm = Mm::new(cfg);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            mm.touch(&mut ctx, 0, 0, true);
            assert_eq!(
                mm.lruvec_hier(0, LruList::ActiveAnon),
                active,
                "{kind:?} {balance:?}"
            );
            assert_eq!(mm.lruvec_hier(0, LruList::InactiveAnon), 1 - active);
        }
    }

    /// shrink_lruvec() (v5.19+): one nudge, then out (the worked example of
    /// [`scan_lruvec_lists`]); proportional reclaim scans every target.
    #[test]
    fn shrink_lruvec_makes_one_nudge() {
        let mut scanned = [0u64; 4];
        let r = scan_lruvec_lists([64, 0, 256, 0], 32, false, |step| {
            let Some((lru, n)) = step else { return 0 };
            scanned[lru.idx()] += n;
            n
        });
        assert_eq!(scanned, [32, 0, 64, 0]);
        assert_eq!(r, 96);
        // The smaller type with more left: file stops, anon goes on to 512 * 50% = 256.
        let mut scanned = [0u64; 4];
        scan_lruvec_lists([512, 0, 64, 0], 32, false, |step| {
            let Some((lru, n)) = step else { return 0 };
            scanned[lru.idx()] += n;
            n
        });
        // Pass 1: anon 480 left, file 32 of 65 left (49%): anon target 512 * 51% = 261,
        // less 32 scanned: 229; pass 2 scans 32 more anon, then file is at zero.
        assert_eq!(scanned, [64, 0, 32, 0]);
        let mut scanned = [0u64; 4];
        scan_lruvec_lists([64, 0, 256, 0], 32, true, |step| {
            let Some((lru, n)) = step else { return 0 };
            scanned[lru.idx()] += n;
            n
        });
        assert_eq!(scanned, [64, 0, 256, 0]);
    }

    /// The legacy balance (before v5.8) reads exact LRU sizes in inactive_is_low(); the
    /// current kernel's model reads the sizes as of the last memcg stats flush.
    #[test]
    fn legacy_inactive_is_low_reads_exact_sizes() {
        for (balance, low) in [
            (BalanceKind::Legacy, true),
            (BalanceKind::RefaultCost, false),
        ] {
            let mut cfg = tiny_config(balance, 1024);
            cfg.memcg_stats_flush_ns = 2_000_000_000;
            cfg.memcg_stats_first_flush_ns = 1_000_000_000;
            let mut mm = Mm::new(cfg);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            for k in 0..10 {
                mm.touch(&mut ctx, 0, k, true);
                let pfn = memory::pte_pfn(mm.objects[0].ent[k as usize]);
                mm.folio_activate(pfn);
            }
            // Exact: 0 inactive, 10 active. Flushed (no flush yet): 0 and 0.
            assert_eq!(mm.lruvec_hier(0, LruList::ActiveAnon), 10);
            assert_eq!(mm.lruvec_page_state(0, LruList::ActiveAnon), 0);
            assert_eq!(mm.inactive_is_low(0, false), low, "{balance:?}");
        }
    }

    /// Legacy get_scan_count() (v5.5-v5.7): the SCAN_FILE shortcut is cache-trim mode, which
    /// refaults since the last reclaim cycle turn off (DEACTIVATE_FILE): with plenty of
    /// inactive file (8192 pages, none active) and no refaults it scans only file; after a
    /// refault it falls through to SCAN_FRACT and scans anon too. The model once used the
    /// <= v4.9 `active <= inactive` test here, which chose SCAN_FILE in both cases.
    #[test]
    fn legacy_scan_file_only_without_refaults() {
        for (refaulted, case_fract) in [(false, false), (true, true)] {
            let mut cfg = tiny_config(BalanceKind::Legacy, 16_384);
            cfg.readahead_max_pages = 0;
            let mut mm = Mm::new(cfg);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            for p in 0..8192 {
                mm.file_read(&mut ctx, 1, p, 1);
            }
            for k in 0..4096 {
                mm.touch(&mut ctx, 0, k, true);
            }
            assert_eq!(mm.lruvec_hier(0, LruList::InactiveFile), 8192);
            assert_eq!(mm.lruvec_hier(0, LruList::ActiveFile), 0);
            assert_eq!(mm.lruvec_hier(0, LruList::ActiveAnon), 4096);
            if refaulted {
                // WORKINGSET_ACTIVATE moved since the snapshot of the last cycle.
                mm.lruvecs[0].refaults[1] = mm.lruvec_activate_state(0, true) + 1;
            }
            // The SCAN_FRACT inputs zeroed: this test is about the shortcut (the new pages'
            // use-once bias, which would leave anon 0 of 4 pages here, is
            // balance::tests::legacy_lru_add_bias's).
            mm.lruvecs[0].recent_scanned = [0; 2];
            mm.lruvecs[0].recent_rotated = [0; 2];
            let mut sc = ScanControl::new(32, 0);
            sc.kswapd = true;
            sc.priority = 10;
            mm.prepare_scan_control(&mut sc);
            assert_eq!(sc.cache_trim_mode, !refaulted);
            let nr = mm.get_scan_count(0, &sc);
            // File: 8192 >> 10 = 8 inactive file pages, nothing else.
            assert_eq!(nr[2], if case_fract { nr[2] } else { 8 });
            assert_eq!(nr[1] > 0, case_fract, "refaulted {refaulted}: {nr:?}");
            assert!(nr[2] > 0);
        }
    }

    /// Reclaim's statistics by kernel version: before v6.12 prepare_scan_count() flushed
    /// the memcg statistics, so cache-trim mode sees the inactive file pages read since the
    /// last periodic flush; since v6.12 ("memcg: use ratelimited stats flush in the
    /// reclaim") it reads them as of that flush: here none, so no cache-trim mode.
    #[test]
    fn reclaim_flushes_memcg_stats_before_6_12() {
        for (kernel, trim) in [((6, 1), true), ((6, 11), true), ((6, 12), false)] {
            let mut cfg = tiny_config(BalanceKind::RefaultCost, 16_384);
            cfg.memcg_stats_flush_ns = 2_000_000_000;
            cfg.memcg_stats_first_flush_ns = 1_000_000_000;
            cfg.readahead_max_pages = 0;
            cfg.kernel = crate::workingset::KernelVersion::new(kernel.0, kernel.1);
            let mut mm = Mm::new(cfg);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            for p in 0..8192 {
                mm.file_read(&mut ctx, 1, p, 1);
            }
            assert_eq!(mm.lruvec_hier(0, LruList::InactiveFile), 8192);
            assert_eq!(mm.lruvec_page_state(0, LruList::InactiveFile), 0);
            let mut sc = ScanControl::new(32, 0);
            sc.kswapd = true;
            mm.prepare_scan_control(&mut sc);
            assert_eq!(sc.cache_trim_mode, trim, "{kernel:?}");
            let seen = if trim { 8192 } else { 0 };
            assert_eq!(mm.lruvec_page_state(0, LruList::InactiveFile), seen);
            // The periodic flusher's schedule is its own.
            assert_eq!(mm.memcg_stats_flush_due(), 1_000_000_000);
        }
    }

    /// shrink_node_memcgs() for global direct reclaim: from v5.5 to v6.10 each call walks
    /// every memcg; since v6.11 it stops at the memcg where it met its goal and the next
    /// call resumes after it. Two memcgs (the root and one child) hold 2,000 clean, unmapped
    /// inactive file pages each, nothing else, so from priority 11 on (4000 >> 11 > 0) the
    /// root's cache-trim mode scans file only, 2000 >> p pages per memcg and priority:
    /// 0, 1, 3, 7 at priorities 11 to 8 (11 per memcg, 22 in all, short of
    /// SWAP_CLUSTER_MAX), then 15 at priority 7. 6.1 takes the 15 from both memcgs: 26 each,
    /// 52 in all. 6.11+ stops after the root's 15 (22 + 15 = 37): the root gave 26, the
    /// child 11; the next call starts at the child (3,963 pages left: again from priority
    /// 11), which gives 26 and the root 11.
    #[test]
    fn direct_reclaim_walks_every_memcg_before_6_11() {
        for (kernel, partial) in [
            ((6, 1), false),
            ((6, 10), false),
            ((6, 11), true),
            ((6, 18), true),
        ] {
            let mut cfg = tiny_config(BalanceKind::RefaultCost, 16_384);
            cfg.readahead_max_pages = 0;
            cfg.kernel = crate::workingset::KernelVersion::new(kernel.0, kernel.1);
            cfg.memcgs = vec![crate::MemcgCfg {
                max_pages: None,
                swappiness: None,
                swap_max_pages: None,
            }];
            let mut mm = Mm::new(cfg);
            let mut io = InstantIo;
            for memcg in [0u16, 1] {
                let mut ctx = Ctx::new(0, &mut io, memcg);
                for p in 0..2000 {
                    mm.file_read(&mut ctx, 1, memcg as u32 * 2000 + p, 1);
                }
            }
            let file = |mm: &Mm, lv: usize| mm.lruvecs[lv].nr[LruList::InactiveFile.idx()];
            assert_eq!((file(&mm, 0), file(&mm, 1)), (2000, 2000));
            let mut ctx = Ctx::new(1_000_000, &mut io, 1);
            let gfp = Gfp::HIGHUSER_MOVABLE;
            if partial {
                assert_eq!(mm.try_to_free_pages(&mut ctx, 0, gfp), 37, "{kernel:?}");
                assert_eq!((file(&mm, 0), file(&mm, 1)), (1974, 1989), "{kernel:?}");
                assert_eq!(mm.try_to_free_pages(&mut ctx, 0, gfp), 37, "{kernel:?}");
                assert_eq!((file(&mm, 0), file(&mm, 1)), (1963, 1963), "{kernel:?}");
            } else {
                assert_eq!(mm.try_to_free_pages(&mut ctx, 0, gfp), 52, "{kernel:?}");
                assert_eq!((file(&mm, 0), file(&mm, 1)), (1974, 1974), "{kernel:?}");
            }
            mm.check_invariants().unwrap();
        }
    }

    /// shrink_node() notes a pass in cache-trim mode that reclaimed nothing (v6.10+): every
    /// inactive file folio is under writeback.
    #[test]
    fn cache_trim_mode_failure_is_noted() {
        let mut mm = Mm::new(tiny_config(BalanceKind::RefaultCost, 16_384));
        let mut io = DelayIo(1_000_000_000_000);
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.file_write(&mut ctx, 1, 0, 8192);
        mm.writeback_file(&mut ctx, 1, u64::MAX, crate::BioOp::WriteSync);
        assert_eq!(mm.node.nr_writeback, 8192);
        let mut sc = ScanControl::new(32, 0);
        sc.kswapd = true;
        ctx.kswapd = true;
        assert_eq!(mm.shrink_node(&mut ctx, &mut sc), 0);
        assert!(sc.cache_trim_mode && sc.cache_trim_mode_failed);
        // With cache-trim mode forbidden it is off, and the flag stays as it was.
        let mut sc = ScanControl::new(32, 0);
        sc.kswapd = true;
        sc.no_cache_trim_mode = true;
        mm.shrink_node(&mut ctx, &mut sc);
        assert!(!sc.cache_trim_mode && !sc.cache_trim_mode_failed);
        // v6.9 and older have no such flag: the same failed pass in cache-trim mode notes
        // nothing.
        mm.cfg.kernel = crate::workingset::KernelVersion::new(6, 9);
        let mut sc = ScanControl::new(32, 0);
        sc.kswapd = true;
        assert_eq!(mm.shrink_node(&mut ctx, &mut sc), 0);
        assert!(sc.cache_trim_mode && !sc.cache_trim_mode_failed);
    }

    /// balance_pgdat() (v6.10+): a priority loop that reclaimed nothing while cache-trim mode
    /// failed runs once more with cache-trim mode off: twice the 12 steps of one loop
    /// (DEF_PRIORITY down to 1), then one kswapd failure. v6.9 (and 6.1) count the failure
    /// after the first loop. Memory is full of kernel pages, so nothing is reclaimable.
    #[test]
    fn kswapd_retries_without_cache_trim_mode() {
        use crate::workingset::KernelVersion;
        for (kernel, trim_failed, steps) in [
            (KernelVersion::new(6, 10), false, 12),
            (KernelVersion::new(6, 10), true, 24),
            (KernelVersion::new(6, 9), true, 12),
            (KernelVersion::new(6, 1), true, 12),
        ] {
            let mut cfg = tiny_config(BalanceKind::RefaultCost, 1024);
            cfg.kernel = kernel;
            let mut mm = Mm::new(cfg);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            while mm.nr_free() > 4 {
                if mm
                    .alloc_kernel_pages(&mut ctx, 0, alloc::Gfp::NOWAIT)
                    .is_none()
                {
                    break;
                }
            }
            assert!(!mm.pgdat_balanced(0));
            let mut n = 0;
            loop {
                let mut ctx = Ctx::new(0, &mut io, 0);
                let next = mm.kswapd_step(&mut ctx);
                n += 1;
                if n == 1 && trim_failed {
                    mm.kswapd_mark_cache_trim_failed();
                }
                if next == kswapd::KswapdNext::Done {
                    break;
                }
                assert!(n < 100);
            }
            assert_eq!(n, steps, "{kernel:?} cache_trim_mode_failed {trim_failed}");
            assert_eq!(mm.node.kswapd_failures, 1);
        }
    }

    /// "mm: vmscan: allow kswapd to give up" (v4.12): runs that reclaim nothing count in
    /// `kswapd_failures`, and after MAX_RECLAIM_RETRIES of them `wakeup_kswapd()` no longer
    /// wakes kswapd. v4.6 (seed S4's kernel) has no such counter: the 20th run is woken like
    /// the first. Memory is full of kernel pages, so nothing is reclaimable.
    #[test]
    fn kswapd_gives_up_only_since_4_12() {
        use crate::workingset::KernelVersion;
        for (kernel, failures, woken) in [
            (KernelVersion::new(4, 6), 0, true),
            (KernelVersion::new(4, 11), 0, true),
            (KernelVersion::new(4, 12), MAX_RECLAIM_RETRIES, false),
            (KernelVersion::default(), MAX_RECLAIM_RETRIES, false),
        ] {
            let mut cfg = tiny_config(BalanceKind::RefaultCost, 1024);
            cfg.kernel = kernel;
            let mut mm = Mm::new(cfg);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            while mm.nr_free() > 4 {
                if mm
                    .alloc_kernel_pages(&mut ctx, 0, alloc::Gfp::NOWAIT)
                    .is_none()
                {
                    break;
                }
            }
            for _ in 0..20 {
                mm.wakeup_kswapd(0, false);
                if !mm.kswapd.wake_pending {
                    break;
                }
                loop {
                    let mut ctx = Ctx::new(0, &mut io, 0);
                    if mm.kswapd_step(&mut ctx) == kswapd::KswapdNext::Done {
                        break;
                    }
                }
            }
            assert_eq!(mm.node.kswapd_failures, failures, "{kernel}");
            mm.wakeup_kswapd(0, false);
            assert_eq!(mm.kswapd.wake_pending, woken, "{kernel}");
        }
    }
}

#[cfg(test)]
mod throttle_tests {
    use crate::testutil::*;
    use crate::types::HZ_NS;
    use crate::vmstat::Ev;
    use crate::*;

    /// Puts `nr` dirty pages of file 1 starting at `page` under writeback at `now`; the
    /// device completes them `delay` later (one request).
    fn writeback_at(mm: &mut Mm, now: u64, page: u32, nr: u32, delay: u64) {
        let mut io = DelayIo(delay);
        let mut ctx = Ctx::new(now, &mut io, 0);
        mm.file_write(&mut ctx, 1, page, nr);
        mm.objects[1].wb_index = page as u64;
        mm.writeback_file(&mut ctx, 1, nr as u64, crate::BioOp::WriteSync);
    }

    /// reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK): woken by the completion that brings the
    /// pages written since the sleep began above SWAP_CLUSTER_MAX (32) per throttled
    /// reclaimer, not by the first one; after HZ/10 when not enough completes; and the
    /// pages completed meanwhile count as nr_throttled_written.
    #[test]
    fn writeback_throttle_wakes_after_32_pages_per_sleeper() {
        let mut mm = tiny_mm(BalanceKind::RefaultCost, 4096);
        // 20 pages complete at 5 ms, 20 at 6 ms, 40 at 7 ms.
        writeback_at(&mut mm, 0, 0, 20, 5_000_000);
        writeback_at(&mut mm, 1_000_000, 20, 20, 5_000_000);
        writeback_at(&mut mm, 2_000_000, 40, 40, 5_000_000);
        assert_eq!(mm.node.nr_writeback, 80);
        // The 33rd page completes with the second request.
        assert_eq!(mm.reclaim_throttle_wake(2_000_000), 6_000_000);
        // A second reclaimer joining at 3 ms: two sleepers need 65 pages: the third request.
        assert_eq!(mm.reclaim_throttle_wake(3_000_000), 7_000_000);
        mm.run_completions(7_000_000);
        assert_eq!(mm.ev.get(Ev::NrThrottledWritten), 80);
        // Nothing in flight: the whole HZ/10.
        assert_eq!(mm.reclaim_throttle_wake(8_000_000), 8_000_000 + HZ_NS / 10);
        // Too little in flight: also HZ/10 (a sleeper joining after the others woke starts a
        // new count).
        writeback_at(&mut mm, 9_000_000, 80, 10, 1_000_000);
        assert_eq!(
            mm.reclaim_throttle_wake(200_000_000),
            200_000_000 + HZ_NS / 10
        );
    }

    /// VMSCAN_THROTTLE_CONGESTED / NOPROGRESS: one jiffy, skipped when little is
    /// write-pending (at most half the reclaimable pages) or kswapd has given up.
    #[test]
    fn congested_and_noprogress_stalls_are_one_jiffy() {
        let mut mm = tiny_mm(BalanceKind::RefaultCost, 4096);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(5_000, &mut io, 0);
        mm.reclaim_throttle_short(&mut ctx);
        assert_eq!(ctx.now, 5_000, "nothing write-pending: no stall");
        // 80 file pages, all under writeback: 2 * 80 > 80 reclaimable.
        writeback_at(&mut mm, 0, 0, 80, 50_000_000);
        assert!(!mm.skip_throttle_noprogress());
        let mut io = InstantIo;
        let mut ctx = Ctx::new(5_000, &mut io, 0);
        mm.reclaim_throttle_short(&mut ctx);
        assert_eq!((ctx.now, ctx.wait_until), (1_005_000, 1_005_000));
        mm.node.kswapd_failures = MAX_RECLAIM_RETRIES;
        assert!(mm.skip_throttle_noprogress());
    }

    /// Limit reclaim that meets only folios under writeback sleeps until enough of them are
    /// written (and then reclaims them, rotated to the inactive tail) instead of rescanning
    /// them in a loop: the charging task's clock jumps to the completion of the 33rd page.
    #[test]
    fn limit_reclaim_meeting_writeback_throttles_instead_of_spinning() {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
        // 64 file pages and the page their xarray leaf node (576 bytes) is charged in.
        cfg.memcgs = vec![MemcgCfg {
            max_pages: Some(65),
            swappiness: None,
            swap_max_pages: None,
        }];
        let mut mm = Mm::new(cfg);
        // Fill the memcg with 64 dirty file pages and put them under writeback: 32 complete
        // at 10 ms, 32 at 20 ms.
        for (i, delay) in [(0u32, 10_000_000u64), (32, 20_000_000)] {
            let mut io = DelayIo(delay);
            let mut ctx = Ctx::new(0, &mut io, 1);
            mm.file_write(&mut ctx, 1, i, 32);
            mm.objects[1].wb_index = i as u64;
            mm.writeback_file(&mut ctx, 1, 32, crate::BioOp::WriteSync);
        }
        assert_eq!(mm.memcgs[1].usage, 65);
        assert_eq!(mm.node.nr_writeback, 64);
        // One more page: limit reclaim finds every folio under writeback (marks them
        // PG_reclaim, activates them), frees nothing, and throttles.
        let mut io = DelayIo(1_000_000);
        let mut ctx = Ctx::new(1_000_000, &mut io, 1);
        mm.file_write(&mut ctx, 1, 64, 1);
        assert_eq!(ctx.now, 20_000_000, "woken at the 33rd written page");
        assert!(mm.memcgs[1].usage <= 65);
        assert!(mm.ev.get(Ev::NrThrottledWritten) >= 33);
        assert!(
            mm.ev.get(Ev::PgRotated) > 0,
            "written PG_reclaim folios rotated"
        );
        assert!(mm.cache_lookup(1, 64).is_some(), "the write went through");
    }
}

#[cfg(test)]
mod reclaim_idx_tests {
    use crate::mmzone::{ZONE_DMA32, ZONE_NORMAL};
    use crate::testutil::tiny_config;
    use crate::vmstat::Ev;
    use crate::*;

    /// A DMA32 + Normal machine whose inactive file list holds Normal-zone pages at its tail
    /// (allocations fill the highest zone first) and DMA32 pages nearer the head.
    fn two_zone_file_mm() -> Mm {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
        cfg.zones = vec![("DMA32", 2048), ("Normal", 2048)];
        cfg.readahead_max_pages = 0;
        cfg.swap_areas.clear();
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..2600 {
            mm.file_read(&mut ctx, 1, p, 1);
        }
        mm
    }

    /// isolate_lru_folios() for kswapd woken by a DMA32 boost (reclaim_idx = DMA32): the
    /// Normal-zone folios at the tail are skipped (pgskip_normal), put back at the head of
    /// the list, and counted in the pages scanned (`*nr_scanned = total_scan`), which is
    /// what PGSCAN_KSWAPD counts; only DMA32 folios are taken.
    #[test]
    fn isolation_skips_ineligible_zones_and_counts_them_scanned() {
        let mut mm = two_zone_file_mm();
        let tail = mm.lruvecs[0].lists[LruList::InactiveFile.idx()].tail;
        assert_eq!(mm.zones[mm.zone_of(tail)].zone_type, ZONE_NORMAL);
        let normal_on_lru = mm.zones[1].nr_lru[LruList::InactiveFile.idx()];
        assert!(normal_on_lru > 1000, "{normal_on_lru}");
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let (taken, scanned) =
            mm.isolate_lru_folios(&mut ctx, 0, LruList::InactiveFile, 32, ZONE_DMA32);
        assert_eq!(taken, 32);
        assert_eq!(
            scanned,
            32 + normal_on_lru,
            "skipped folios count as scanned"
        );
        assert_eq!(mm.ev.get(Ev::PgSkipNormal), normal_on_lru);
        for &p in &mm.scratch {
            assert_eq!(mm.zones[mm.zone_of(p)].zone_type, ZONE_DMA32);
        }
        // The skipped folios are back on the list, at its head: the tail is now DMA32.
        assert_eq!(
            mm.zones[1].nr_lru[LruList::InactiveFile.idx()],
            normal_on_lru
        );
        let head = mm.lruvecs[0].lists[LruList::InactiveFile.idx()].head;
        assert_eq!(mm.zones[mm.zone_of(head)].zone_type, ZONE_NORMAL);
        let tail = mm.lruvecs[0].lists[LruList::InactiveFile.idx()].tail;
        assert_eq!(mm.zones[mm.zone_of(tail)].zone_type, ZONE_DMA32);
        // Unrestricted isolation (the highest zone) takes the tail as it is.
        let mut mm = two_zone_file_mm();
        let (taken, scanned) =
            mm.isolate_lru_folios(&mut ctx, 0, LruList::InactiveFile, 32, ZONE_NORMAL);
        assert_eq!((taken, scanned), (32, 32));
        assert_eq!(mm.ev.get(Ev::PgSkipNormal), 0);
    }

    /// get_scan_count() sizes each list over the eligible zones
    /// (`lruvec_lru_size(lruvec, lru, sc->reclaim_idx)`): kswapd reclaiming for a boosted
    /// DMA32 zone aims at DMA32's share of the inactive file list, not the whole list (which
    /// made it skip the Normal zone's folios over and over).
    #[test]
    fn scan_targets_count_eligible_zones_only() {
        let mut mm = two_zone_file_mm();
        let dma32 = mm.zones[0].nr_lru[LruList::InactiveFile.idx()];
        let normal = mm.zones[1].nr_lru[LruList::InactiveFile.idx()];
        assert!(dma32 > 0 && normal > 0, "{dma32} {normal}");
        let mut sc = crate::vmscan::ScanControl::new(32, 0);
        sc.kswapd = true;
        sc.may_swap = false;
        sc.priority = 0;
        sc.reclaim_idx = ZONE_DMA32;
        let nr = mm.get_scan_count(0, &sc);
        assert_eq!(nr[LruList::InactiveFile.idx()], dma32);
        sc.reclaim_idx = ZONE_NORMAL;
        let nr = mm.get_scan_count(0, &sc);
        assert_eq!(nr[LruList::InactiveFile.idx()], dma32 + normal);
        assert_eq!(
            mm.lruvec_lru_size(0, LruList::InactiveFile.idx(), ZONE_DMA32),
            dma32
        );
    }

    /// v5.3's isolate_lru_pages() skips every ineligible page it meets; since v6.13 at
    /// most SWAP_CLUSTER_MAX_SKIPPED folios per call are set aside and the rest are taken.
    #[test]
    fn skip_cap_follows_the_kernel_version() {
        use crate::workingset::KernelVersion;
        assert!(!KernelVersion::new(5, 3).isolate_caps_skipped());
        assert!(KernelVersion::new(6, 18).isolate_caps_skipped());
    }

    /// A watermark boost of the DMA32 zone wakes kswapd for DMA32 (`wakeup_kswapd(zone, 0,
    /// 0, zone_idx(zone))`): its balance_pgdat() runs with reclaim_idx = DMA32; an ordinary
    /// allocation's wakeup raises it to the highest zone.
    #[test]
    fn boost_wakeup_restricts_kswapd_to_the_boosted_zone() {
        let mut mm = two_zone_file_mm();
        mm.wakeup_kswapd_zone(0, false, ZONE_DMA32);
        assert_eq!(mm.kswapd.highest_zoneidx, Some(ZONE_DMA32));
        mm.wakeup_kswapd(0, false);
        assert_eq!(mm.kswapd.highest_zoneidx, Some(ZONE_NORMAL));
        mm.wakeup_kswapd_zone(0, false, ZONE_DMA32);
        assert_eq!(
            mm.kswapd.highest_zoneidx,
            Some(ZONE_NORMAL),
            "never lowered"
        );
    }
}

/// `shrink_folio_list()`'s per-folio `cond_resched()` ([`Mm::cond_resched_isolated`]).
#[cfg(test)]
mod resched_tests {
    use super::*;
    use crate::testutil::*;
    use crate::*;

    /// A kernel thread that, the first time it gets the CPU with file folios isolated, runs
    /// kswapd-style reclaim of `nr` pages beside them.
    #[derive(Default)]
    struct Kthread {
        calls: u64,
        calls_isolated: u64,
        isolated_seen: u64,
        reclaimed: u64,
    }

    impl CondResched for Kthread {
        fn cond_resched(&mut self, mm: &mut Mm, io: &mut dyn Io, now: u64, _: u64) -> Option<u64> {
            self.calls += 1;
            let isolated = mm.node.nr_isolated[1];
            if isolated == 0 {
                return None;
            }
            self.calls_isolated += 1;
            if self.isolated_seen == 0 {
                self.isolated_seen = isolated;
                self.reclaimed = kswapd_pass_at(mm, io, now, SWAP_CLUSTER_MAX);
            }
            None
        }
    }

    /// Direct reclaim of 512 clean, once-read file pages (classic LRU, no anon on the lists)
    /// offers the CPU once per folio it isolated, with that folio still isolated; a thread
    /// that takes it there and reclaims beside the isolated batch neither sees nor disturbs
    /// it. The thread's first turn comes with the first batch the direct reclaimer isolated
    /// (priority 9's one page: 512 >> 9), and kswapd's pass at priority 0 then reclaims one
    /// SWAP_CLUSTER_MAX round (32 pages; no anon target is left, so it stops). Afterwards
    /// nothing is isolated and every page is free or on the inactive list. Debug build: a
    /// few milliseconds.
    #[test]
    fn shrink_folio_list_yields_per_folio_with_its_batch_isolated() {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 2048);
        cfg.readahead_max_pages = 0;
        cfg.swap_areas.clear();
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..512 {
            mm.file_read(&mut ctx, 1, p, 1);
        }
        assert_eq!(mm.lruvec_hier(0, LruList::InactiveFile), 512);
        let mut k = Kthread::default();
        let mut ctx = Ctx::new(0, &mut io, 0);
        ctx.resched = Some(&mut k);
        let direct = mm.try_to_free_pages(&mut ctx, 0, Gfp::HIGHUSER_MOVABLE);
        let scanned = mm.ev.get(Ev::PgScanDirect);
        assert!(direct >= SWAP_CLUSTER_MAX, "direct reclaim freed {direct}");
        assert_eq!(mm.ev.get(Ev::PgStealDirect), direct);
        // One point per folio, each with that folio (at least) isolated.
        assert_eq!(k.calls_isolated, scanned);
        assert!(k.calls > k.calls_isolated, "shrink_lruvec()'s own points");
        assert_eq!(k.isolated_seen, 1);
        assert_eq!(k.reclaimed, SWAP_CLUSTER_MAX);
        assert_eq!(mm.ev.get(Ev::PgStealKswapd), SWAP_CLUSTER_MAX);
        assert_eq!(mm.node.nr_isolated, [0, 0]);
        assert_eq!(
            mm.lruvec_hier(0, LruList::InactiveFile) + direct + k.reclaimed,
            512
        );
        mm.check_invariants().unwrap();
    }
}
