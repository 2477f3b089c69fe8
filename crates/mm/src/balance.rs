//! Anon/file reclaim balancing: how `get_scan_count()` splits pressure between the anon and
//! file LRUs under `SCAN_FRACT`, and what reclaim feeds back into that split.
//!
//! # The problem
//! Reclaim must pick between swapping anon pages and dropping page cache. Picking wrong shows
//! up as refaults: IO the workload has to wait for. The two models here are the two answers
//! the kernel has given.
//!
//! # The two models (`policy.balance`)
//! - `legacy` (kernels before v5.8): each LRU type keeps `recent_scanned` and
//!   `recent_rotated`; a type whose scanned pages keep getting rotated (referenced, put back)
//!   looks valuable, so pressure goes where rotations are rare:
//!   `ap = swappiness * (scanned_anon + 1) / (rotated_anon + 1)`,
//!   `fp = (200 - swappiness) * (scanned_file + 1) / (rotated_file + 1)`, halving both numbers
//!   of a type when its scanned count exceeds a quarter of its list. Refaults only activate
//!   file pages whose distance fits in the active file list; anon evictions leave no shadow.
//! - `refault-cost` (the seed series as merged in v5.8/v5.9 and refined in v6.2): each type
//!   accumulates a *cost*: `nr_io * SWAP_CLUSTER_MAX + nr_rotated` (`lru_note_cost()`), fed
//!   by reclaim writes and rotations and by refaults of workingset pages (v5.8–v6.1: the
//!   IO alone, one per page, `KernelVersion::lru_cost_counts_rotations`). Both costs halve
//!   when their sum exceeds a quarter of the LRU. Pressure is inversely proportional to cost,
//!   with swappiness as the relative IO cost of anon:
//!   `total = ac + fc; a = total + ac; f = total + fc;`
//!   `ap = swappiness * (a + f + 1) / (a + 1); fp = (200 - swappiness) * (a + f + 1) / (f + 1)`.
//!   Worked example (the unit test): ac = 100, fc = 300, swappiness 60 → a = 500, f = 700,
//!   ap = 60·1201/501 = 143, fp = 140·1201/701 = 239.
//!
//! # Where we differ from the kernel
//! Legacy models the kernel the seed series replaced in what the balancing work changed: the
//! SCAN_FRACT inputs (including the rotation accounting of `update_page_reclaim_stat()` and
//! of referenced pages in `shrink_active_list()`), the refault-distance comparison, no anon
//! shadow entries, and new anonymous pages starting on the active list (v5.9 moved them to
//! the inactive list together with anon workingset detection), exact LRU sizes in
//! `inactive_is_low()` (before v5.8 it read `lruvec_lru_size()`, not the flushed memcg
//! statistics, and the same exact size for cache-trim mode), and no kswapd retry without
//! cache-trim mode (v6.10). Cache-trim mode itself, get_scan_count()'s "inactive file is plenty
//! and not thrashing" SCAN_FILE shortcut, is v5.5's (53138cea7f39) and applies to both: any
//! refault since the last reclaim cycle turns it off. (The ≤ v4.9 form, `active <= inactive`
//! with no refault check, combined with v4.13's refault-driven file deactivation, which this
//! model once had, let SCAN_FILE win every cycle of the S0 pgbench run.)
//! Everything else (the reclaim drivers, the writeback rules) is the current kernel's in both.
//!
//! # Kernel references
//! mm/vmscan.c `get_scan_count()` (v5.7 and v6.15), mm/swap.c `lru_note_cost()`,
//! `update_page_reclaim_stat()` (≤ v5.7); mm/workingset.c `workingset_test_recent()`;
//! seed 000 ("mm: balance LRU lists based on relative thrashing").

use crate::lruvec::{ancestors, Lruvec};
use crate::types::*;

/// Sizes `workingset_test_recent()` compares a refault distance with, read from the
/// eviction lruvec (hierarchical).
#[derive(Clone, Copy, Debug, Default)]
pub struct WsSizes {
    pub active_file: u64,
    pub inactive_file: u64,
    pub active_anon: u64,
    pub inactive_anon: u64,
}

/// What one `shrink_inactive_list()` call did (pages).
#[derive(Clone, Copy, Debug, Default)]
pub struct InactiveOutcome {
    /// Isolated from the list.
    pub taken: u64,
    /// Scanned (`nr_scanned`).
    pub scanned: u64,
    /// Freed.
    pub reclaimed: u64,
    /// Written out by reclaim (`stat.nr_pageout`).
    pub pageout: u64,
    /// Activated (`stat.nr_activate[type]`).
    pub activated: u64,
}

/// One balancing model. Stateless: the state lives in [`Lruvec`], as in the kernel.
pub trait ScanBalance: Send {
    fn name(&self) -> &'static str;
    /// SCAN_FRACT weights `[anon, file]`. `costs` is the `[anon_cost, file_cost]` snapshot
    /// `prepare_scan_control()` took from the reclaim target's lruvec, `own` the lruvec being
    /// shrunk and `sizes` its anon/file list sizes (for legacy's per-lruvec decay).
    fn fractions(
        &self,
        lvs: &mut [Lruvec],
        costs: [u64; 2],
        own: usize,
        swappiness: u64,
        sizes: [u64; 2],
    ) -> [u64; 2];
    /// After `shrink_folio_list()` in `shrink_inactive_list()`.
    fn note_inactive(&self, lvs: &mut [Lruvec], lv: usize, file: bool, o: &InactiveOutcome);
    /// After `shrink_active_list()`: `taken` isolated, `referenced` of them had young PTEs,
    /// `rotated` were kept active (referenced VM_EXEC file folios).
    fn note_active(
        &self,
        lvs: &mut [Lruvec],
        lv: usize,
        file: bool,
        taken: u64,
        referenced: u64,
        rotated: u64,
    );
    /// A refault of a folio that was PG_workingset at eviction (`lru_note_cost_refault`).
    fn note_workingset_refault(&self, lvs: &mut [Lruvec], lv: usize, file: bool, nr: u64);
    /// A folio read in from swap (`__read_swap_cache_async()`), before it joins the LRU.
    fn note_swapin(&self, _lvs: &mut [Lruvec], _lv: usize, _nr: u64) {}
    /// `folio_activate()` from `folio_mark_accessed()` (legacy `update_page_reclaim_stat`).
    fn note_access_activate(&self, _lvs: &mut [Lruvec], _lv: usize, _file: bool, _nr: u64) {}
    /// A new folio added to the LRU (`folio_add_lru()`: a fault, a page-cache insertion, a
    /// swap-in), active or not; not a putback of an isolated one.
    fn note_lru_add(&self, _lvs: &mut [Lruvec], _lv: usize, _file: bool, _active: bool, _nr: u64) {}
    /// The workingset size a refault distance of this type must fit in to activate.
    fn workingset_size(&self, file: bool, s: WsSizes, swap_available: bool) -> u64;
    /// Whether anon evictions store shadow entries in the swap slot (v5.9+).
    fn anon_shadows(&self) -> bool;
    /// Whether a new anonymous folio starts on the active list (≤ v5.8,
    /// `lru_cache_add_active_or_unevictable()`) instead of the inactive list (v5.9+).
    fn new_anon_active(&self) -> bool {
        false
    }
}

/// `policy.balance = "refault-cost"`, kernels from v5.8 on. `rotations` selects v6.2's form
/// ([`crate::workingset::KernelVersion::lru_cost_counts_rotations`]): `lru_note_cost()`
/// with IO weighted by SWAP_CLUSTER_MAX and rotations as the secondary cost; without it
/// (v5.8–v6.1) the cost is the IO alone, one per page.
pub struct RefaultCost {
    pub rotations: bool,
}

impl RefaultCost {
    /// v6.2+ (the model's default kernel).
    pub const V6_2: RefaultCost = RefaultCost { rotations: true };
    /// v5.8–v6.1.
    pub const V5_8: RefaultCost = RefaultCost { rotations: false };
}

/// Kernel: mm/swap.c `lru_note_cost()` (v6.2+): add `nr_io * SWAP_CLUSTER_MAX + nr_rotated`
/// to the type's cost in the lruvec and every ancestor, halving both costs of a level whose
/// sum exceeds a quarter of that level's LRU pages. `lru_pages` gives each level's LRU size.
pub fn lru_note_cost(
    lvs: &mut [Lruvec],
    lv: usize,
    file: bool,
    nr_io: u64,
    nr_rotated: u64,
    lru_pages: impl Fn(&[Lruvec], usize) -> u64,
) {
    lru_add_cost(
        lvs,
        lv,
        file,
        nr_io * SWAP_CLUSTER_MAX + nr_rotated,
        lru_pages,
    );
}

/// Kernel: mm/swap.c `lru_note_cost(lruvec, file, nr_pages)` (v5.8–v6.1): add `nr_pages` of
/// IO to the type's cost, with the same hierarchy walk and decay as v6.2's.
pub fn lru_note_cost_v5_8(
    lvs: &mut [Lruvec],
    lv: usize,
    file: bool,
    nr_pages: u64,
    lru_pages: impl Fn(&[Lruvec], usize) -> u64,
) {
    lru_add_cost(lvs, lv, file, nr_pages, lru_pages);
}

/// `lru_note_cost()`'s walk up the hierarchy: add `cost`, then halve both costs of a level
/// whose sum exceeds a quarter of its LRU pages.
fn lru_add_cost(
    lvs: &mut [Lruvec],
    lv: usize,
    file: bool,
    cost: u64,
    lru_pages: impl Fn(&[Lruvec], usize) -> u64,
) {
    if cost == 0 {
        return;
    }
    for l in ancestors(lv) {
        let lrusize = lru_pages(lvs, l);
        let v = &mut lvs[l];
        if file {
            v.file_cost += cost;
        } else {
            v.anon_cost += cost;
        }
        if v.file_cost + v.anon_cost > lrusize / 4 {
            v.file_cost /= 2;
            v.anon_cost /= 2;
        }
    }
}

/// Hierarchical LRU size of a level: the root sees every lruvec (node totals).
pub fn hier_lru_pages(lvs: &[Lruvec], l: usize) -> u64 {
    if l == 0 {
        lvs.iter().map(Lruvec::evictable_pages).sum()
    } else {
        lvs[l].evictable_pages()
    }
}

/// Kernel (v6.15) get_scan_count() SCAN_FRACT arithmetic.
pub fn refault_cost_fractions(anon_cost: u64, file_cost: u64, swappiness: u64) -> [u64; 2] {
    let total = anon_cost + file_cost;
    let a = total + anon_cost;
    let f = total + file_cost;
    let t2 = a + f;
    let ap = swappiness * (t2 + 1) / (a + 1);
    let fp = (200 - swappiness) * (t2 + 1) / (f + 1);
    [ap, fp]
}

impl ScanBalance for RefaultCost {
    fn name(&self) -> &'static str {
        "refault-cost"
    }
    fn fractions(
        &self,
        _lvs: &mut [Lruvec],
        costs: [u64; 2],
        _own: usize,
        swappiness: u64,
        _sizes: [u64; 2],
    ) -> [u64; 2] {
        refault_cost_fractions(costs[ANON], costs[FILE], swappiness)
    }
    fn note_inactive(&self, lvs: &mut [Lruvec], lv: usize, file: bool, o: &InactiveOutcome) {
        if !self.rotations {
            // v5.8–v6.1 shrink_inactive_list(): lru_note_cost(lruvec, file, stat.nr_pageout).
            lru_note_cost_v5_8(lvs, lv, file, o.pageout, hier_lru_pages);
            return;
        }
        lru_note_cost(
            lvs,
            lv,
            file,
            o.pageout,
            o.scanned - o.reclaimed,
            hier_lru_pages,
        );
    }
    fn note_active(
        &self,
        lvs: &mut [Lruvec],
        lv: usize,
        file: bool,
        _taken: u64,
        _referenced: u64,
        rotated: u64,
    ) {
        // v5.8–v6.1: shrink_active_list() notes no cost.
        if self.rotations {
            lru_note_cost(lvs, lv, file, 0, rotated, hier_lru_pages);
        }
    }
    fn note_workingset_refault(&self, lvs: &mut [Lruvec], lv: usize, file: bool, nr: u64) {
        if self.rotations {
            lru_note_cost(lvs, lv, file, nr, 0, hier_lru_pages);
        } else {
            // v5.8–v6.1 workingset_refault(): lru_note_cost_folio(folio).
            lru_note_cost_v5_8(lvs, lv, file, nr, hier_lru_pages);
        }
    }
    fn workingset_size(&self, file: bool, s: WsSizes, swap_available: bool) -> u64 {
        // Kernel ≥ v5.9 workingset_test_recent().
        let mut ws = s.active_file;
        if !file {
            ws += s.inactive_file;
        }
        if swap_available {
            ws += s.active_anon;
            if file {
                ws += s.inactive_anon;
            }
        }
        ws
    }
    fn anon_shadows(&self) -> bool {
        true
    }
}

/// `policy.balance = "refault-cost"` at a kernel before 4.10
/// ([`crate::workingset::KernelVersion::lru_balance_v4_7`]): the seed's series as posted
/// against v4.7-rc (June 2016, "mm: balance LRU lists based on relative thrashing", patches
/// 6-10), which is what its "lrucost" column ran, rather than the form merged in v5.8:
/// - `struct lru_cost`: `numer[type]` and `denom` per lruvec (no hierarchy); here `numer` is
///   `anon_cost`/`file_cost` and `denom` their sum (every `lru_note_cost()` adds to both);
/// - costs: rotations as CPU cost (1 per page: folios `putback_inactive_pages()` puts on
///   an active list, and referenced folios `shrink_active_list()` isolated), refaults of
///   PageWorkingset folios as IO cost (`SWAP_CLUSTER_MAX` per page, from
///   `__pagevec_lru_add_fn()`), and every swap-in, since `__read_swap_cache_async()` sets
///   PageWorkingset ("we don't track anonymous references, every swap-in event is considered
///   a workingset refault - regardless of distance"); reclaim's own writes cost nothing (v5.8
///   added `nr_pageout`);
/// - `get_scan_count()`: halve all three when `denom > (anon + file) / 8`, then
///   `ap = swappiness * (denom + 1) / (numer[anon] + 1)`,
///   `fp = (200 - swappiness) * (denom + 1) / (numer[file] + 1)`, denominator `ap + fp + 1`;
/// - no anon shadow entries; a file refault activates when its distance is within
///   `active_file + anon` (anon counted only with swap), and restores PageWorkingset;
/// - new anon pages start active (v4.7's `lru_cache_add_active_or_unevictable()`).
///
/// Left out: the deactivation cost of `lru_deactivate_fn()` (madvise/fadvise, not modelled).
pub struct RefaultCostV4_7;

/// The posted series' (v4.7-rc) get_scan_count() SCAN_FRACT weights, with its decay of
/// `lru_cost`. `sizes` = [anon list pages, file list pages] of the lruvec.
pub fn refault_cost_v4_7_fractions(lv: &mut Lruvec, swappiness: u64, sizes: [u64; 2]) -> [u64; 2] {
    if lv.anon_cost + lv.file_cost > (sizes[ANON] + sizes[FILE]) / 8 {
        lv.anon_cost /= 2;
        lv.file_cost /= 2;
    }
    let denom = lv.anon_cost + lv.file_cost;
    let ap = swappiness * (denom + 1) / (lv.anon_cost + 1);
    let fp = (200 - swappiness) * (denom + 1) / (lv.file_cost + 1);
    [ap, fp]
}

fn note_cost_v4_7(lv: &mut Lruvec, file: bool, cost: u64) {
    if file {
        lv.file_cost += cost;
    } else {
        lv.anon_cost += cost;
    }
}

impl ScanBalance for RefaultCostV4_7 {
    fn name(&self) -> &'static str {
        "refault-cost"
    }
    fn fractions(
        &self,
        lvs: &mut [Lruvec],
        _costs: [u64; 2],
        own: usize,
        swappiness: u64,
        sizes: [u64; 2],
    ) -> [u64; 2] {
        refault_cost_v4_7_fractions(&mut lvs[own], swappiness, sizes)
    }
    fn note_inactive(&self, lvs: &mut [Lruvec], lv: usize, file: bool, o: &InactiveOutcome) {
        // putback_inactive_pages(): lru_note_cost(COST_CPU) per page put on an active list.
        note_cost_v4_7(&mut lvs[lv], file, o.activated);
    }
    fn note_active(
        &self,
        lvs: &mut [Lruvec],
        lv: usize,
        file: bool,
        _taken: u64,
        referenced: u64,
        _rotated: u64,
    ) {
        // shrink_active_list(): lru_note_cost(COST_CPU, file, nr_rotated), nr_rotated
        // counting every referenced folio as before the series.
        note_cost_v4_7(&mut lvs[lv], file, referenced);
    }
    fn note_workingset_refault(&self, lvs: &mut [Lruvec], lv: usize, file: bool, nr: u64) {
        note_cost_v4_7(&mut lvs[lv], file, nr * SWAP_CLUSTER_MAX);
    }
    fn note_swapin(&self, lvs: &mut [Lruvec], lv: usize, nr: u64) {
        note_cost_v4_7(&mut lvs[lv], false, nr * SWAP_CLUSTER_MAX);
    }
    fn workingset_size(&self, file: bool, s: WsSizes, swap_available: bool) -> u64 {
        // workingset_refault(): refault_distance > active_file + anon -> no activation.
        if !file {
            return 0;
        }
        let mut ws = s.active_file;
        if swap_available {
            ws += s.active_anon + s.inactive_anon;
        }
        ws
    }
    fn anon_shadows(&self) -> bool {
        false
    }
    fn new_anon_active(&self) -> bool {
        true
    }
}

/// `policy.balance = "legacy"`: kernels before v5.8 (recent_scanned / recent_rotated).
pub struct Legacy;

/// Kernel (≤ v5.7) get_scan_count() SCAN_FRACT arithmetic, including the reclaim_stat decay.
/// `sizes` = [anon list pages, file list pages] of the lruvec being shrunk.
pub fn legacy_fractions(lv: &mut Lruvec, swappiness: u64, sizes: [u64; 2]) -> [u64; 2] {
    for t in [ANON, FILE] {
        if lv.recent_scanned[t] > sizes[t] / 4 {
            lv.recent_scanned[t] /= 2;
            lv.recent_rotated[t] /= 2;
        }
    }
    let anon_prio = swappiness;
    let file_prio = 200 - swappiness;
    let ap = anon_prio * (lv.recent_scanned[ANON] + 1) / (lv.recent_rotated[ANON] + 1);
    let fp = file_prio * (lv.recent_scanned[FILE] + 1) / (lv.recent_rotated[FILE] + 1);
    [ap, fp]
}

/// Kernel (≤ v5.7) `__pagevec_lru_add_fn()` -> `update_page_reclaim_stat(lruvec, file,
/// active)`: every new LRU page counts as scanned for its type, and as rotated too when it
/// starts active. New page cache (inactive) thus tips the balance toward the file list, new
/// anon (active) away from the anon list: the "use-once cache bias" the seed's series removes
/// ("mm: remove LRU balancing effect of temporary page isolation" keeps putbacks out of it,
/// as here; "mm: remove unnecessary use-once cache bias from LRU balancing" drops it, merged in
/// v5.8).
pub fn legacy_note_lru_add(lv: &mut Lruvec, file: bool, active: bool, nr: u64) {
    let t = file as usize;
    lv.recent_scanned[t] += nr;
    if active {
        lv.recent_rotated[t] += nr;
    }
}

impl ScanBalance for Legacy {
    fn name(&self) -> &'static str {
        "legacy"
    }
    fn fractions(
        &self,
        lvs: &mut [Lruvec],
        _costs: [u64; 2],
        own: usize,
        swappiness: u64,
        sizes: [u64; 2],
    ) -> [u64; 2] {
        legacy_fractions(&mut lvs[own], swappiness, sizes)
    }
    fn note_inactive(&self, lvs: &mut [Lruvec], lv: usize, file: bool, o: &InactiveOutcome) {
        // v5.7 shrink_inactive_list(): recent_scanned += nr_taken;
        // recent_rotated += stat.nr_activate[type].
        let t = file as usize;
        lvs[lv].recent_scanned[t] += o.taken;
        lvs[lv].recent_rotated[t] += o.activated;
    }
    fn note_active(
        &self,
        lvs: &mut [Lruvec],
        lv: usize,
        file: bool,
        taken: u64,
        referenced: u64,
        _rotated: u64,
    ) {
        // ≤ v5.7 shrink_active_list(): every folio found referenced counts as rotated, even
        // though (unless VM_EXEC) it is deactivated anyway.
        let t = file as usize;
        lvs[lv].recent_scanned[t] += taken;
        lvs[lv].recent_rotated[t] += referenced;
    }
    fn note_workingset_refault(&self, _lvs: &mut [Lruvec], _lv: usize, _file: bool, _nr: u64) {}
    fn note_access_activate(&self, lvs: &mut [Lruvec], lv: usize, file: bool, nr: u64) {
        // v5.7 __activate_page() -> update_page_reclaim_stat(lruvec, file, rotated = 1).
        let t = file as usize;
        lvs[lv].recent_scanned[t] += nr;
        lvs[lv].recent_rotated[t] += nr;
    }
    fn note_lru_add(&self, lvs: &mut [Lruvec], lv: usize, file: bool, active: bool, nr: u64) {
        legacy_note_lru_add(&mut lvs[lv], file, active, nr);
    }
    fn workingset_size(&self, file: bool, s: WsSizes, _swap_available: bool) -> u64 {
        // v5.7 workingset_refault(): refault_distance <= active_file (file only).
        if file {
            s.active_file
        } else {
            0
        }
    }
    fn anon_shadows(&self) -> bool {
        false
    }
    fn new_anon_active(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refault_cost_fraction_worked_example() {
        assert_eq!(refault_cost_fractions(100, 300, 60), [143, 239]);
        // Equal costs, swappiness 100: equal pressure.
        let [a, f] = refault_cost_fractions(50, 50, 100);
        assert_eq!(a, f);
        // swappiness 0: no anon pressure.
        assert_eq!(refault_cost_fractions(10, 10, 0)[0], 0);
        // No cost at all: a = f = 0 → ap = 60 * 1 / 1, fp = 140.
        assert_eq!(refault_cost_fractions(0, 0, 60), [60, 140]);
    }

    #[test]
    fn legacy_fractions_and_decay() {
        let mut lv = Lruvec {
            recent_scanned: [100, 1000],
            recent_rotated: [90, 10],
            ..Default::default()
        };
        // anon list 1000 pages: 100 <= 250, no decay; file list 2000: 1000 > 500 → halve.
        let f = legacy_fractions(&mut lv, 60, [1000, 2000]);
        assert_eq!(lv.recent_scanned, [100, 500]);
        assert_eq!(lv.recent_rotated, [90, 5]);
        // ap = 60 * 101 / 91 = 66; fp = 140 * 501 / 6 = 11690.
        assert_eq!(f, [66, 11690]);
    }

    /// ≤ v5.7 `update_page_reclaim_stat()` for new LRU pages: 100 new inactive file pages
    /// count as 100 scanned file; 50 new active anon pages as 50 scanned and 50 rotated anon.
    /// Then at swappiness 115 with 1000 pages of each type (no decay: 50 and 100 <= 250):
    /// ap = 115 * 51 / 51 = 115, fp = 85 * 101 / 1 = 8585: the use-once cache bias.
    #[test]
    fn legacy_lru_add_bias() {
        let mut lv = Lruvec::default();
        legacy_note_lru_add(&mut lv, true, false, 100);
        legacy_note_lru_add(&mut lv, false, true, 50);
        assert_eq!(lv.recent_scanned, [50, 100]);
        assert_eq!(lv.recent_rotated, [50, 0]);
        assert_eq!(legacy_fractions(&mut lv, 115, [1000, 1000]), [115, 8585]);
        // The refault-cost model keeps no such account.
        let mut lvs = vec![Lruvec::default()];
        RefaultCost::V6_2.note_lru_add(&mut lvs, 0, true, false, 100);
        assert_eq!((lvs[0].recent_scanned, lvs[0].file_cost), ([0, 0], 0));
    }

    /// The posted series' SCAN_FRACT (v4.7-rc): numer anon 100, file 300, denom 400, lists of
    /// 1000 + 2000 pages (400 > 3000 / 8 = 375: halve to 50, 150, denom 200), swappiness 115:
    /// ap = 115 * 201 / 51 = 453, fp = 85 * 201 / 151 = 113. Without the decay (lists of 4000
    /// pages): ap = 115 * 401 / 101 = 456, fp = 85 * 401 / 301 = 113.
    #[test]
    fn refault_cost_v4_7_fraction_worked_example() {
        let mut lv = Lruvec {
            anon_cost: 100,
            file_cost: 300,
            ..Default::default()
        };
        assert_eq!(
            refault_cost_v4_7_fractions(&mut lv, 115, [1000, 2000]),
            [453, 113]
        );
        assert_eq!((lv.anon_cost, lv.file_cost), (50, 150));
        let mut lv = Lruvec {
            anon_cost: 100,
            file_cost: 300,
            ..Default::default()
        };
        assert_eq!(
            refault_cost_v4_7_fractions(&mut lv, 115, [2000, 2000]),
            [456, 113]
        );
        // Every swap-in costs SWAP_CLUSTER_MAX for anon; reclaim's writes cost nothing.
        let mut lvs = vec![Lruvec::default()];
        RefaultCostV4_7.note_swapin(&mut lvs, 0, 2);
        let o = InactiveOutcome {
            taken: 32,
            scanned: 32,
            reclaimed: 20,
            pageout: 20,
            activated: 5,
        };
        RefaultCostV4_7.note_inactive(&mut lvs, 0, false, &o);
        assert_eq!(lvs[0].anon_cost, 2 * 32 + 5);
    }

    #[test]
    fn note_cost_weights_io_and_decays_up_the_hierarchy() {
        let mut lvs = vec![Lruvec::default(), Lruvec::default()];
        lvs[1].nr[0] = 400; // 400 LRU pages in the child; root sees the same 400.
        lru_note_cost(&mut lvs, 1, true, 2, 5, hier_lru_pages);
        // cost = 2 * 32 + 5 = 69 ≤ 100: no decay.
        assert_eq!((lvs[1].file_cost, lvs[0].file_cost), (69, 69));
        lru_note_cost(&mut lvs, 1, false, 1, 0, hier_lru_pages);
        // anon 32, file 69: sum 101 > 100 → halve both at both levels.
        assert_eq!((lvs[1].anon_cost, lvs[1].file_cost), (16, 34));
        assert_eq!((lvs[0].anon_cost, lvs[0].file_cost), (16, 34));
    }

    /// The same reclaim outcomes under v6.2+ and v5.8–v6.1 cost accounting, one lruvec of
    /// 4000 LRU pages (decay above 1000): a file shrink_inactive_list() call that scanned
    /// 32, reclaimed 10 and wrote 3; an anon shrink_active_list() that kept 5 VM_EXEC-style
    /// rotations; 2 anon workingset refaults.
    /// v6.2: file 3·32 + (32 − 10) = 118; anon 5, then + 2·32 = 69.
    /// v6.1: file 3 (the writes alone); anon 0 (no rotation cost), then 2.
    #[test]
    fn note_cost_by_kernel_version() {
        let o = InactiveOutcome {
            taken: 32,
            scanned: 32,
            reclaimed: 10,
            pageout: 3,
            activated: 4,
        };
        for (b, file, anon_rot, anon) in [
            (RefaultCost::V6_2, 118, 5, 69),
            (RefaultCost::V5_8, 3, 0, 2),
        ] {
            let mut lvs = vec![Lruvec::default()];
            lvs[0].nr[0] = 4000;
            b.note_inactive(&mut lvs, 0, true, &o);
            assert_eq!(lvs[0].file_cost, file);
            b.note_active(&mut lvs, 0, false, 20, 8, 5);
            assert_eq!(lvs[0].anon_cost, anon_rot);
            b.note_workingset_refault(&mut lvs, 0, false, 2);
            assert_eq!((lvs[0].anon_cost, lvs[0].file_cost), (anon, file));
        }
        // The decay is the same rule on the same sum: 1000 pages of IO under v6.1 halve
        // where v6.2 halves after 32 (32 · 32 = 1024 > 1000).
        let mut lvs = vec![Lruvec::default()];
        lvs[0].nr[0] = 4000;
        lru_note_cost_v5_8(&mut lvs, 0, true, 1000, hier_lru_pages);
        assert_eq!(lvs[0].file_cost, 1000);
        lru_note_cost_v5_8(&mut lvs, 0, true, 1, hier_lru_pages);
        assert_eq!(lvs[0].file_cost, 500);
        let mut lvs = vec![Lruvec::default()];
        lvs[0].nr[0] = 4000;
        lru_note_cost(&mut lvs, 0, true, 32, 0, hier_lru_pages);
        assert_eq!(lvs[0].file_cost, 512);
    }

    #[test]
    fn workingset_sizes_by_model() {
        let s = WsSizes {
            active_file: 10,
            inactive_file: 20,
            active_anon: 30,
            inactive_anon: 40,
        };
        let rc = RefaultCost::V6_2;
        assert_eq!(rc.workingset_size(true, s, true), 10 + 30 + 40);
        assert_eq!(rc.workingset_size(false, s, true), 10 + 20 + 30);
        assert_eq!(rc.workingset_size(true, s, false), 10);
        assert_eq!(Legacy.workingset_size(true, s, true), 10);
    }
}
