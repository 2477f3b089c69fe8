//! Memory compaction (mm/compaction.c) and page migration (mm/migrate.c) of movable folios.
//!
//! # The idea
//! A high-order allocation fails when free memory is plentiful but scattered. Compaction
//! runs two scanners over a zone: the migrate scanner walks forward from the zone start
//! isolating movable (LRU) folios, the free scanner walks backward from the zone end
//! isolating free pages; folios are migrated into the free pages, so the free memory gathers
//! at the start of the zone in contiguous blocks. The scanners stop when they meet, or as soon
//! as a block of the requested order is free.
//!
//! # In this model
//! `compact_zone()` with `isolate_migratepages()` / `isolate_migratepages_block()` (one
//! pageblock at a time, at most COMPACT_CLUSTER_MAX folios per batch unless the block is being
//! finished after a failed migration, skip bits, source suitability by pageblock type for
//! async direct compaction, async direct compaction's skip-on-failure per order-aligned
//! chunk), `fast_find_migrateblock()` (a migration source from the MOVABLE free lists for
//! costly orders), `fast_isolate_freepages()` / `fast_isolate_around()` (migration targets
//! from the MOVABLE free lists, round-robin over the orders below the target, before the
//! linear scan) and `isolate_freepages()` / `isolate_freepages_block()` (MOVABLE pageblocks
//! below a free block of pageblock order, async compaction's sampling stride, the min
//! watermark check of `__isolate_free_page()`; free blocks kept whole per order, as v6.9+
//! does, and split by `compaction_alloc()`), `__compact_finished()`, `compaction_suitable()`
//! with the fragmentation index, deferral, the cached scanner positions as the kernel moves
//! them while scanning (`update_cached_migrate()`, `update_pageblock_skip()`), and
//! `compact_blockskip_flush`.
//! Migration moves a folio's state to the new frames, repoints the PTE, the page-cache
//! entries or the swap-cache slot at it, frees the old frames and puts the new folio back on
//! the LRU with `folio_add_lru()` (as `migrate_folio_move()` does: flags such as active,
//! referenced, workingset and the multi-gen refs are kept, the list position is the head). A
//! large page-cache folio that finds no free block of its order is split and migrated page
//! by page (`migrate_pages_batch()`'s -ENOMEM case).
//! Callers: direct compaction in the allocator slow path (`try_to_compact_pages()`),
//! kcompactd (`kcompactd_do_work()`, proactive compaction) and the pre-v4.5 kswapd
//! (`compact_pgdat()`, `policy.kswapd_compaction = "kswapd"`).
//!
//! # Where we differ from the kernel (v6.18)
//! - `compact_init_migrate_pfn` / `compact_init_free_pfn` are the zone's first and last
//!   pageblocks (the kernel's `__reset_isolation_suitable()` moves them to the first and last
//!   blocks worth scanning); a pass that starts at the first is a whole-zone pass.
//! - No capture of a freed block (`compaction_capture()`), no lock contention,
//!   `too_many_isolated()` or `need_resched()` aborts. Migration sources go straight to the
//!   buddy lists (the kernel frees them to the compacting CPU's per-CPU lists, which
//!   `compact_zone()` drains once the migrate scanner leaves the block; the model drains
//!   that CPU's lists at the same point, for the pages other tasks left there).
//! - The fast searches walk the model's free lists, whose order is the model's (freed blocks
//!   go to the head; the kernel sometimes frees to the tail).
//! - Folios under writeback or with a read in flight are not isolated (sync-light migration
//!   would not wait for them; the model never uses MIGRATE_SYNC).
//! - Only LRU folios are movable (no `movable_ops` pages such as zsmalloc or balloon); as
//!   in the kernel, a folio of at least the target order or of pageblock order (a THP, an
//!   order-9 page-cache folio) is left in place (`skip_isolation_on_order()`). Only
//!   page-cache folios are split on -ENOMEM (the model's large anonymous folios are THPs).
//!
//! # Kernel references
//! mm/compaction.c `compact_zone()`, `isolate_migratepages()`,
//! `isolate_migratepages_block()`, `isolate_freepages()`, `isolate_freepages_block()`,
//! `fast_isolate_freepages()`, `fast_isolate_around()`, `fast_find_migrateblock()`,
//! `suitable_migration_source()`, `suitable_migration_target()`, `update_cached_migrate()`,
//! `update_pageblock_skip()`, `compaction_alloc()`, `__compact_finished()`,
//! `compaction_suitable()`,
//! `compaction_suit_allocation_order()`, `defer_compaction()`, `compaction_deferred()`,
//! `compaction_defer_reset()`, `compaction_restarting()`, `__reset_isolation_suitable()`,
//! `try_to_compact_pages()`, `fragmentation_score_zone()`; mm/page_alloc.c
//! `__alloc_pages_direct_compact()`, `__isolate_free_page()`; mm/migrate.c `migrate_pages()`,
//! `migrate_pages_batch()`, `try_split_folio()`, `migrate_folio_move()`.

use crate::filemap::cache_entry;
use crate::list::LinkStore;
use crate::memory::{pte_pfn, pte_present, PTE_PRESENT};
use crate::mmzone::{mt, Wmark, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use crate::page::pg;
use crate::swap::SLOT_CACHE;
use crate::types::*;
use crate::vmstat::Ev;
use crate::{Ctx, Mm, ObjKind};

/// Kernel: `skip_isolation_on_order()`: the migrate scanner leaves a folio of at least the
/// target order alone (unless compacting for `compact_memory`, order -1: a free block of the
/// target order would already have served), and never moves a folio of pageblock order or
/// more (a THP, an order-9 page-cache folio).
pub fn skip_isolation_on_order(order: u32, target_order: i32) -> bool {
    (target_order >= 0 && order as i32 >= target_order) || order >= PAGEBLOCK_ORDER
}

/// Kernel: `COMPACT_CLUSTER_MAX` (= SWAP_CLUSTER_MAX).
pub const COMPACT_CLUSTER_MAX: usize = 32;
/// Kernel: `COMPACT_MAX_DEFER_SHIFT`.
pub const COMPACT_MAX_DEFER_SHIFT: u32 = 6;
/// Kernel: `COMPACTION_HPAGE_ORDER` on x86-64 (HPAGE_PMD_ORDER).
pub const COMPACTION_HPAGE_ORDER: u32 = 9;

/// Kernel: `enum compact_result`, in the kernel's order (callers take the maximum).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CompactResult {
    NotSuitableZone,
    Skipped,
    Deferred,
    NoSuitablePage,
    Continue,
    Complete,
    PartialSkipped,
    Contended,
    Success,
}

/// Kernel: `enum compact_priority` (lower is stronger).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CompactPriority {
    /// `COMPACT_PRIO_SYNC_FULL` (`MIN_COMPACT_PRIORITY`).
    SyncFull = 0,
    /// `COMPACT_PRIO_SYNC_LIGHT` (`MIN_COMPACT_COSTLY_PRIORITY`, `DEF_COMPACT_PRIORITY`).
    SyncLight = 1,
    /// `COMPACT_PRIO_ASYNC` (`INIT_COMPACT_PRIORITY`).
    Async = 2,
}

/// Kernel: `enum migrate_mode` as compaction uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrateMode {
    Async,
    SyncLight,
}

/// Who runs a compaction (which counters it adds to and whose CPU it costs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Compactor {
    /// An allocating task (`cc->direct_compaction`).
    Direct,
    /// kcompactd (`compact_daemon_*` counters as well).
    Kcompactd,
    /// The pre-v4.5 kswapd (`compact_pgdat()`).
    Kswapd,
}

/// Per-zone compaction state (the `compact_*` fields of `struct zone`).
#[derive(Clone, Debug)]
pub struct ZoneCompact {
    /// `compact_cached_migrate_pfn[0 = async, 1 = sync]`.
    pub cached_migrate_pfn: [Pfn; 2],
    /// `compact_cached_free_pfn`.
    pub cached_free_pfn: Pfn,
    pub considered: u32,
    pub defer_shift: u32,
    pub order_failed: u32,
    /// `compact_blockskip_flush`.
    pub blockskip_flush: bool,
    /// `compact_init_migrate_pfn` / `compact_init_free_pfn`: where a pass over the whole zone
    /// starts (the model: the zone's first and last pageblocks; the kernel's
    /// `__reset_isolation_suitable()` refines them to the first and last blocks worth
    /// scanning).
    pub init_migrate_pfn: Pfn,
    pub init_free_pfn: Pfn,
    start_pfn: Pfn,
    end_pfn: Pfn,
}

#[inline]
fn pageblock_start(pfn: Pfn) -> Pfn {
    pfn & !(PAGEBLOCK_NR_PAGES as u32 - 1)
}

/// Kernel: `pageblock_end_pfn()`: the end of the pageblock holding `pfn`.
#[inline]
fn pageblock_end(pfn: Pfn) -> Pfn {
    pageblock_start(pfn) + PAGEBLOCK_NR_PAGES as u32
}

/// Kernel: `freelist_scan_limit()`: how many free-list entries a fast search looks at,
/// halved by each consecutive failure: `(COMPACT_CLUSTER_MAX >> fast_search_fail) + 1`.
pub fn freelist_scan_limit(fast_search_fail: u32) -> u32 {
    (COMPACT_CLUSTER_MAX as u32 >> fast_search_fail.min(31)) + 1
}

/// Kernel: `next_search_order()`: the fast free search visits orders `order - 1` down to 0
/// round-robin from `cc->search_order`; when it wraps round, `search_order` moves one down
/// (so the next search starts lower) and the search ends (-1).
pub fn next_search_order(cc: &mut CompactControl, order: i32) -> i32 {
    let mut order = order - 1;
    if order < 0 {
        order = cc.order - 1;
    }
    if order == cc.search_order {
        cc.search_order -= 1;
        if cc.search_order < 0 {
            cc.search_order = cc.order - 1;
        }
        return -1;
    }
    order
}

/// Kernel: `__isolate_free_page()`'s watermark check: compaction may take a free block of
/// `order` only while the zone keeps `_watermark[mark] + 2^order` free pages (the unboosted
/// watermark, checked at order 0): the min watermark since v4.9, the low one before
/// ([`KernelVersion::isolate_free_page_min_watermark`](crate::workingset::KernelVersion::isolate_free_page_min_watermark)).
#[inline]
pub fn isolate_free_page_allowed(z: &crate::mmzone::Zone, order: u32, mark: Wmark) -> bool {
    z.watermark_ok(0, z.wmark[mark as usize] + (1u64 << order))
}

impl ZoneCompact {
    pub fn new(start_pfn: Pfn, end_pfn: Pfn) -> Self {
        let mut z = ZoneCompact {
            cached_migrate_pfn: [start_pfn; 2],
            cached_free_pfn: 0,
            considered: 0,
            defer_shift: 0,
            order_failed: 0,
            blockskip_flush: false,
            init_migrate_pfn: start_pfn,
            init_free_pfn: pageblock_start(end_pfn.saturating_sub(1)).max(start_pfn),
            start_pfn,
            end_pfn,
        };
        z.reset_cached_positions();
        z
    }

    /// Kernel: `reset_cached_positions()`.
    pub fn reset_cached_positions(&mut self) {
        self.cached_migrate_pfn = [self.start_pfn; 2];
        self.cached_free_pfn = pageblock_start(self.end_pfn.saturating_sub(1)).max(self.start_pfn);
    }

    /// Kernel: `defer_compaction()`.
    pub fn defer_compaction(&mut self, order: u32) {
        self.considered = 0;
        self.defer_shift = (self.defer_shift + 1).min(COMPACT_MAX_DEFER_SHIFT);
        if order < self.order_failed {
            self.order_failed = order;
        }
    }

    /// Kernel: `compaction_deferred()`: true = skip the zone this time.
    pub fn compaction_deferred(&mut self, order: u32) -> bool {
        if order < self.order_failed {
            return false;
        }
        let limit = 1u32 << self.defer_shift;
        self.considered += 1;
        if self.considered >= limit {
            self.considered = limit;
            return false;
        }
        true
    }

    /// Kernel: `compaction_defer_reset()`.
    pub fn defer_reset(&mut self, order: u32, alloc_success: bool) {
        if alloc_success {
            self.considered = 0;
            self.defer_shift = 0;
        }
        if order >= self.order_failed {
            self.order_failed = order + 1;
        }
    }

    /// Kernel: `compaction_restarting()`.
    pub fn restarting(&self, order: u32) -> bool {
        order >= self.order_failed
            && self.defer_shift == COMPACT_MAX_DEFER_SHIFT
            && self.considered >= 1 << COMPACT_MAX_DEFER_SHIFT
    }
}

/// Kernel: `compact_gap()`.
#[inline]
pub fn compact_gap(order: u32) -> u64 {
    2u64 << order
}

/// Kernel (v6.16+): the proactive compaction watermarks for `vm.compaction_proactiveness`:
/// (low, high) fragmentation scores.
pub fn proactive_wmarks(proactiveness: u64) -> (u64, u64) {
    let low = 100u64.saturating_sub(proactiveness);
    let leeway = (low / 2).min(10);
    (low, (low + leeway).min(100))
}

/// `struct compact_control`.
pub struct CompactControl {
    pub zi: usize,
    /// -1: compact the whole zone (proactive, manual).
    pub order: i32,
    pub migratetype: u8,
    pub mode: MigrateMode,
    pub whole_zone: bool,
    pub ignore_skip_hint: bool,
    pub ignore_block_suitable: bool,
    pub who: Compactor,
    pub proactive: bool,
    pub migrate_pfn: Pfn,
    pub free_pfn: Pfn,
    /// Isolated free blocks (head pfns; their order in the frame table).
    freepages: Vec<Pfn>,
    nr_freepages: u64,
    migratepages: Vec<Pfn>,
    nr_migratepages: u64,
    pub migrate_scanned: u64,
    pub free_scanned: u64,
    pub isolated: u64,
    /// `cc->search_order`: where `fast_isolate_freepages()` starts its round-robin.
    pub search_order: i32,
    /// `cc->fast_search_fail`: consecutive failed fast searches (shrinks the scan limit).
    pub fast_search_fail: u32,
    /// `cc->fast_start_pfn`: lowest block `fast_find_migrateblock()` found (0: none yet,
    /// `Pfn::MAX`: already used to restart the linear scan).
    pub fast_start_pfn: Pfn,
    /// `cc->finish_pageblock`: isolate the rest of the current block, past COMPACT_CLUSTER_MAX.
    pub finish_pageblock: bool,
    /// The simulated time of the compaction (`compact_zone()`'s caller's clock): a folio
    /// whose read completed by then is no longer locked.
    pub now: u64,
}

impl CompactControl {
    /// `migratetype` is `gfp_migratetype()` of the request: kcompactd, proactive and kswapd
    /// compaction use GFP_KERNEL (UNMOVABLE).
    pub fn new(zi: usize, order: i32, mode: MigrateMode, who: Compactor) -> Self {
        CompactControl {
            zi,
            order,
            migratetype: mt::UNMOVABLE,
            mode,
            whole_zone: false,
            ignore_skip_hint: false,
            ignore_block_suitable: false,
            who,
            proactive: false,
            migrate_pfn: 0,
            free_pfn: 0,
            freepages: Vec::new(),
            nr_freepages: 0,
            migratepages: Vec::new(),
            nr_migratepages: 0,
            migrate_scanned: 0,
            free_scanned: 0,
            isolated: 0,
            search_order: order,
            fast_search_fail: 0,
            fast_start_pfn: 0,
            finish_pageblock: false,
            now: 0,
        }
    }
}

impl Mm {
    /// Kernel: `__compaction_suitable()` + `compaction_suitable()`: is there enough free
    /// memory to migrate into (order-0 check against low + compact_gap for costly orders,
    /// min + compact_gap for the others; before v4.9 low for every order), and would a
    /// failure be due to fragmentation (`fragmentation_index() > vm.extfrag_threshold`)?
    pub fn compaction_suitable(&self, zi: usize, order: u32) -> bool {
        let z = &self.zones[zi];
        let w = if order > PAGE_ALLOC_COSTLY_ORDER
            || !self.cfg.kernel.isolate_free_page_min_watermark()
        {
            z.wmark_pages(Wmark::Low)
        } else {
            z.wmark_pages(Wmark::Min)
        } + compact_gap(order);
        if !z.watermark_ok(0, w) {
            return false;
        }
        if order > PAGE_ALLOC_COSTLY_ORDER {
            let fi = z.contig_page_info(order).fragmentation_index(order);
            if fi >= 0 && fi <= self.cfg.extfrag_threshold as i64 {
                return false;
            }
        }
        true
    }

    /// Kernel (v6.18): `compaction_suitable(zone, order, watermark, ...)` with the caller's
    /// watermark: order-0 free pages above `watermark + compact_gap(order)`, plus `low - min`
    /// for costly orders ("the costly order-boost", v6.15's "mm: compaction: push watermark
    /// into compaction_suitable() callers"; before it the callers' min became low for costly
    /// orders, the same value), and for costly orders a fragmentation index above
    /// `vm.extfrag_threshold`.
    pub fn compaction_suitable_at(&self, zi: usize, order: u32, watermark: u64) -> bool {
        let z = &self.zones[zi];
        let boost = if order > PAGE_ALLOC_COSTLY_ORDER {
            z.wmark_pages(Wmark::Low) - z.wmark_pages(Wmark::Min)
        } else {
            0
        };
        if !z.watermark_ok(0, watermark + compact_gap(order) + boost) {
            return false;
        }
        if order > PAGE_ALLOC_COSTLY_ORDER {
            let fi = z.contig_page_info(order).fragmentation_index(order);
            if fi >= 0 && fi <= self.cfg.extfrag_threshold as i64 {
                return false;
            }
        }
        true
    }

    /// Kernel: `compaction_suit_allocation_order()`.
    pub fn compaction_suit_allocation_order(
        &self,
        zi: usize,
        order: u32,
        w: Wmark,
    ) -> CompactResult {
        let z = &self.zones[zi];
        if z.watermark_ok(order, z.wmark_pages(w) + (1 << order) - 1) {
            return CompactResult::Success;
        }
        if !self.compaction_suitable(zi, order) {
            return CompactResult::Skipped;
        }
        CompactResult::Continue
    }

    /// Kernel: `fragmentation_score_zone()`: `extfrag_for_order(zone, COMPACTION_HPAGE_ORDER)`.
    pub fn fragmentation_score_zone(&self, zi: usize) -> u64 {
        self.zones[zi]
            .contig_page_info(COMPACTION_HPAGE_ORDER)
            .extfrag_for_order(COMPACTION_HPAGE_ORDER)
    }

    /// Kernel: `fragmentation_score_node()`: the sum of `fragmentation_score_zone_weighted()`,
    /// each zone's score times its `present_pages` over the node's `node_present_pages` + 1,
    /// rounded down per zone.
    pub fn fragmentation_score_node(&self) -> u64 {
        let node: u64 = self.zones.iter().map(|z| z.present).sum();
        (0..self.zones.len())
            .map(|zi| self.zones[zi].present * self.fragmentation_score_zone(zi) / (node + 1))
            .sum()
    }

    /// Kernel: `__reset_isolation_suitable()`: clear every skip bit, reset the scanners.
    pub fn reset_isolation_suitable(&mut self, zi: usize) {
        let z = &mut self.zones[zi];
        z.compact.blockskip_flush = false;
        for b in z.pageblock.iter_mut() {
            *b &= !crate::mmzone::PB_SKIP;
        }
        z.compact.reset_cached_positions();
    }

    /// Kernel: `compact_zone()`. The scanners start at the zone's cached positions (a pass
    /// that starts at `compact_init_migrate_pfn` counts as a whole-zone pass, so meeting ends
    /// it with COMPLETE); the cached positions move while scanning (`update_cached_migrate()`,
    /// `update_pageblock_skip()`, `fast_isolate_freepages()`), not at the end, except that free
    /// pages left over are released and the cached free pfn moves back up to the highest of
    /// them. A pageblock whose migration failed part-way is rescanned whole once
    /// (`cc->finish_pageblock`), so it gets its skip bit.
    pub fn compact_zone(&mut self, ctx: &mut Ctx, cc: &mut CompactControl) -> CompactResult {
        let zi = cc.zi;
        cc.now = ctx.now;
        // The scanners walk frames: deferred max-order blocks must be real free blocks.
        self.zones[zi].link_all_deferred(&mut self.pages);
        if cc.order >= 0 {
            let r = self.compaction_suit_allocation_order(zi, cc.order as u32, Wmark::Min);
            if r != CompactResult::Continue {
                return r;
            }
            if self.zones[zi].compact.restarting(cc.order as u32) {
                self.reset_isolation_suitable(zi);
            }
        }
        let (zstart, zend) = (self.zones[zi].start_pfn, self.zones[zi].end_pfn);
        let sync = (cc.mode != MigrateMode::Async) as usize;
        if cc.whole_zone {
            cc.migrate_pfn = zstart;
            cc.free_pfn = pageblock_start(zend - 1).max(zstart);
        } else {
            let c = &mut self.zones[zi].compact;
            cc.migrate_pfn = c.cached_migrate_pfn[sync];
            cc.free_pfn = c.cached_free_pfn;
            if cc.free_pfn < zstart || cc.free_pfn >= zend {
                cc.free_pfn = pageblock_start(zend - 1).max(zstart);
                c.cached_free_pfn = cc.free_pfn;
            }
            if cc.migrate_pfn < zstart || cc.migrate_pfn >= zend {
                cc.migrate_pfn = zstart;
                c.cached_migrate_pfn = [zstart; 2];
            }
            if cc.migrate_pfn <= c.init_migrate_pfn {
                cc.whole_zone = true;
            }
        }
        let c = &self.zones[zi].compact;
        let mut update_cached = sync == 0 && c.cached_migrate_pfn[0] == c.cached_migrate_pfn[1];
        let mut last_migrated_pfn: Pfn = 0;
        let scanned0 = (cc.migrate_scanned, cc.free_scanned);
        let mut ret;
        loop {
            ret = self.compact_finished(cc);
            if ret != CompactResult::Continue {
                break;
            }
            let iteration_start = cc.migrate_pfn;
            cc.finish_pageblock =
                pageblock_start(last_migrated_pfn) == pageblock_start(iteration_start);
            loop {
                // rescan:
                if !self.isolate_migratepages(cc) {
                    if update_cached {
                        let c = &mut self.zones[zi].compact;
                        c.cached_migrate_pfn[1] = c.cached_migrate_pfn[0];
                    }
                    break;
                }
                update_cached = false;
                last_migrated_pfn = pageblock_start(cc.migrate_pfn - 1).max(zstart);
                if self.migrate_pages(ctx, cc) {
                    break;
                }
                // -ENOMEM from compaction_alloc(): out of free targets.
                if !self.scanners_met(cc) {
                    ret = CompactResult::Contended;
                    break;
                }
                if cc.migrate_pfn & (PAGEBLOCK_NR_PAGES as u32 - 1) != 0
                    && !cc.ignore_skip_hint
                    && !cc.finish_pageblock
                {
                    cc.finish_pageblock = true;
                    if cc.order == COMPACTION_HPAGE_ORDER as i32 {
                        last_migrated_pfn = 0;
                    }
                    continue;
                }
                break;
            }
            if ret == CompactResult::Contended {
                break;
            }
            // check_drain:
            if cc.order > 0 && last_migrated_pfn != 0 {
                let current_block_start = cc.migrate_pfn & !((1u32 << cc.order) - 1);
                if last_migrated_pfn < current_block_start {
                    self.drain_local_pages(zi);
                    last_migrated_pfn = 0;
                }
            }
        }
        // release_free_list(): the free pages left over go back; the cached free pfn moves
        // back up to the highest of them (only up: the scanners may have met and reset it).
        let mut high_pfn: Pfn = 0;
        for pfn in std::mem::take(&mut cc.freepages) {
            let o = self.pages.hot[pfn as usize].order as u32;
            self.zones[zi].free_block(&mut self.pages, pfn, o);
            high_pfn = high_pfn.max(pfn);
        }
        if cc.nr_freepages > 0 {
            let free_pfn = pageblock_start(high_pfn);
            let c = &mut self.zones[zi].compact;
            if free_pfn > c.cached_free_pfn {
                c.cached_free_pfn = free_pfn;
            }
        }
        cc.nr_freepages = 0;
        let ms = cc.migrate_scanned - scanned0.0;
        let fs = cc.free_scanned - scanned0.1;
        self.ev.add(Ev::CompactMigrateScanned, ms);
        self.ev.add(Ev::CompactFreeScanned, fs);
        if cc.who == Compactor::Kcompactd {
            self.ev.add(Ev::KcompactdMigrateScanned, ms);
            self.ev.add(Ev::KcompactdFreeScanned, fs);
        }
        let cost = (ms + fs) * self.cfg.costs.compact_scan_per_page_ns;
        ctx.cpu_ns += cost;
        self.compact_cpu_ns[cc.who as usize] += cost;
        ret
    }

    /// Kernel: `lru_add_drain_cpu_zone()` from `compact_zone()` (v4.6: `drain_local_pages()`
    /// under `get_cpu()`, with `lru_add_drain_cpu()`): once the migrate scanner has left the
    /// `cc->order`-aligned block it last isolated from, the compacting CPU's per-CPU lists of
    /// the zone go back to the buddy lists, "so that they can merge and compact_finished()
    /// can detect immediately if allocation would succeed". The kernel frees migration
    /// sources to that CPU's lists, so they are among the pages drained; the model frees
    /// them straight to the buddy lists, and what this drain returns is what other tasks
    /// left on the lists of the CPU the compactor runs on (kcompactd runs wherever the
    /// scheduler puts it). The LRU batches' drain is left out: the model's batches hold only
    /// their lock cost, no folios compaction could isolate.
    fn drain_local_pages(&mut self, zi: usize) {
        let cpu = self.pcp_cpu;
        self.zones[zi].drain_local_pages(&mut self.pages, cpu);
    }

    #[inline]
    fn scanners_met(&self, cc: &CompactControl) -> bool {
        (cc.free_pfn >> PAGEBLOCK_ORDER) <= (cc.migrate_pfn >> PAGEBLOCK_ORDER)
    }

    /// Kernel: `__compact_finished()`.
    fn compact_finished(&mut self, cc: &CompactControl) -> CompactResult {
        let zi = cc.zi;
        if self.scanners_met(cc) {
            self.zones[zi].compact.reset_cached_positions();
            if cc.who == Compactor::Direct {
                self.zones[zi].compact.blockskip_flush = true;
            }
            return if cc.whole_zone {
                CompactResult::Complete
            } else {
                CompactResult::PartialSkipped
            };
        }
        if cc.proactive {
            let (low, _) = proactive_wmarks(self.cfg.compaction_proactiveness);
            if self.fragmentation_score_zone(zi) <= low || self.kswapd.running {
                return CompactResult::Success;
            }
            return CompactResult::Continue;
        }
        if cc.order < 0 {
            return CompactResult::Continue;
        }
        if cc.migrate_pfn & (PAGEBLOCK_NR_PAGES as u32 - 1) != 0 {
            return CompactResult::Continue;
        }
        let z = &self.zones[zi];
        for o in cc.order as u32..=MAX_PAGE_ORDER {
            if !z.free_area[o as usize][cc.migratetype as usize].is_empty() {
                return CompactResult::Success;
            }
            if z.find_suitable_fallback(o, cc.migratetype, true) >= 0 {
                return CompactResult::Success;
            }
        }
        CompactResult::Continue
    }

    /// The watermark `__isolate_free_page()` keeps, by version.
    #[inline]
    fn isolate_free_page_wmark(&self) -> Wmark {
        if self.cfg.kernel.isolate_free_page_min_watermark() {
            Wmark::Min
        } else {
            Wmark::Low
        }
    }

    /// Kernel: `update_cached_migrate()`: where async and sync compaction restart (only
    /// forward).
    fn update_cached_migrate(&mut self, cc: &CompactControl, pfn: Pfn) {
        let pfn = pageblock_end(pfn);
        let c = &mut self.zones[cc.zi].compact;
        if pfn > c.cached_migrate_pfn[0] {
            c.cached_migrate_pfn[0] = pfn;
        }
        if cc.mode != MigrateMode::Async && pfn > c.cached_migrate_pfn[1] {
            c.cached_migrate_pfn[1] = pfn;
        }
    }

    /// Kernel: `update_pageblock_skip()` (free scanner): mark the block skipped and move the
    /// cached free pfn down to `pfn`.
    fn update_pageblock_skip(&mut self, zi: usize, block: Pfn, pfn: Pfn) {
        let z = &mut self.zones[zi];
        z.set_pageblock_skip(block, true);
        if pfn < z.compact.cached_free_pfn {
            z.compact.cached_free_pfn = pfn;
        }
    }

    /// Kernel: `isolation_suitable()`.
    #[inline]
    fn isolation_suitable(&self, cc: &CompactControl, pfn: Pfn) -> bool {
        cc.ignore_skip_hint || !self.zones[cc.zi].pageblock_skip(pfn)
    }

    /// Kernel: `pageblock_skip_persistent()`: a block starting with a folio of pageblock
    /// order or more (a THP) is never a migration source.
    #[inline]
    fn pageblock_skip_persistent(&self, block: Pfn) -> bool {
        let i = block as usize;
        self.pages.hot[i].flags & pg::HEAD != 0 && self.pages.hot[i].order as u32 >= PAGEBLOCK_ORDER
    }

    /// Kernel: `suitable_migration_source()`: async direct compaction only migrates from
    /// blocks of the request's type (any movable type for a movable request).
    fn suitable_migration_source(&self, cc: &CompactControl, block: Pfn) -> bool {
        if self.pageblock_skip_persistent(block) {
            return false;
        }
        if cc.mode != MigrateMode::Async || cc.who != Compactor::Direct {
            return true;
        }
        self.zones[cc.zi].pageblock_mt(block) == cc.migratetype
    }

    /// Kernel: `suitable_migration_target()`: a block whose first page is a free block of
    /// pageblock order is left alone; otherwise only MOVABLE blocks (any block when
    /// `ignore_block_suitable`).
    fn suitable_migration_target(&self, cc: &CompactControl, block: Pfn) -> bool {
        let i = block as usize;
        if self.pages.hot[i].flags & pg::BUDDY != 0
            && self.pages.hot[i].order as u32 >= PAGEBLOCK_ORDER
        {
            return false;
        }
        cc.ignore_block_suitable || self.zones[cc.zi].pageblock_mt(block) == mt::MOVABLE
    }

    /// Kernel: `fast_find_migrateblock()`: at the start of a pageblock, for a costly order
    /// (kcompactd, or a direct compaction for a MOVABLE request), look for a migration source
    /// on the MOVABLE free lists of orders `order - 1` down to PAGE_ALLOC_COSTLY_ORDER: the
    /// first free block (from the list head, at most `freelist_scan_limit()` entries) in the
    /// first half (first eighth once the scanner has moved) of the space between the
    /// scanners whose pageblock is not skipped. Its pageblock becomes the migrate scanner's
    /// (it is marked skipped once scanned without isolating anything, as any block is); the
    /// free block goes to the list's tail (`move_freelist_tail()`).
    /// A failed search restarts the linear scan at the lowest block a search found
    /// (`reinit_migrate_pfn()`). List entries count as migrate-scanned pages.
    fn fast_find_migrateblock(&mut self, cc: &mut CompactControl) -> Pfn {
        let zi = cc.zi;
        let zstart = self.zones[zi].start_pfn;
        let mut pfn = cc.migrate_pfn;
        if cc.ignore_skip_hint || cc.finish_pageblock {
            return pfn;
        }
        if pfn != zstart && pfn != pageblock_start(pfn) {
            return pfn;
        }
        if cc.order <= PAGE_ALLOC_COSTLY_ORDER as i32 {
            return pfn;
        }
        if cc.who == Compactor::Direct && cc.migratetype != mt::MOVABLE {
            return pfn;
        }
        let mut distance = cc.free_pfn.saturating_sub(cc.migrate_pfn) >> 1;
        if cc.migrate_pfn != zstart {
            distance >>= 2;
        }
        let high_pfn = pageblock_start(cc.migrate_pfn + distance);
        let limit = freelist_scan_limit(cc.fast_search_fail);
        let mut nr_scanned = 0u32;
        let mut found = false;
        let mut order = cc.order - 1;
        while order >= PAGE_ALLOC_COSTLY_ORDER as i32 && !found && nr_scanned < limit {
            let (o, t) = (order as usize, mt::MOVABLE as usize);
            let mut cur = self.zones[zi].free_area[o][t].head;
            while cur != NIL {
                let next = self.pages.hot[cur as usize].next;
                nr_scanned += 1;
                if nr_scanned > limit {
                    self.move_freelist_tail(zi, o, cur);
                    break;
                }
                if cur < high_pfn {
                    if self.zones[zi].pageblock_skip(cur) {
                        cur = next;
                        continue;
                    }
                    self.move_freelist_tail(zi, o, cur);
                    // update_fast_start_pfn()
                    if cc.fast_start_pfn != Pfn::MAX {
                        cc.fast_start_pfn = if cc.fast_start_pfn == 0 {
                            cur
                        } else {
                            cc.fast_start_pfn.min(cur)
                        };
                    }
                    pfn = pageblock_start(cur).max(zstart);
                    cc.fast_search_fail = 0;
                    found = true;
                    break;
                }
                cur = next;
            }
            order -= 1;
        }
        cc.migrate_scanned += nr_scanned as u64;
        if !found {
            cc.fast_search_fail += 1;
            // reinit_migrate_pfn()
            if cc.fast_start_pfn != 0 && cc.fast_start_pfn != Pfn::MAX {
                cc.migrate_pfn = cc.fast_start_pfn;
                cc.fast_start_pfn = Pfn::MAX;
            }
            pfn = cc.migrate_pfn;
        }
        pfn
    }

    /// Kernel: `move_freelist_tail()`: `pfn` and the entries before it go to the tail.
    fn move_freelist_tail(&mut self, zi: usize, order: usize, pfn: Pfn) {
        let next = self.pages.hot[pfn as usize].next;
        if next != NIL {
            let l: &mut [crate::page::Frame] = &mut self.pages.hot;
            l.rotate_to_head(
                &mut self.zones[zi].free_area[order][mt::MOVABLE as usize],
                next,
            );
        }
    }

    /// Kernel: `move_freelist_head()`: `pfn` becomes the head, the entries before it go to
    /// the tail (a reverse scan then sees the unscanned entries first).
    fn move_freelist_head(&mut self, zi: usize, order: usize, pfn: Pfn) {
        let l: &mut [crate::page::Frame] = &mut self.pages.hot;
        l.rotate_to_head(
            &mut self.zones[zi].free_area[order][mt::MOVABLE as usize],
            pfn,
        );
    }

    /// Kernel: `isolate_migratepages()`: from the pageblock `fast_find_migrateblock()` picked
    /// (or the migrate scanner's), walk whole pageblocks (never past the free scanner's),
    /// skipping blocks marked skipped (checked at a block's start) and unsuitable sources
    /// (which move the cached migrate pfn), and isolate from the first suitable one. Returns
    /// true when folios were isolated.
    fn isolate_migratepages(&mut self, cc: &mut CompactControl) -> bool {
        let zi = cc.zi;
        let zstart = self.zones[zi].start_pfn;
        let mut low = self.fast_find_migrateblock(cc);
        let mut block_start = pageblock_start(low).max(zstart);
        let mut fast_find_block = low != cc.migrate_pfn && cc.fast_search_fail == 0;
        let mut block_end = pageblock_end(low);
        while block_end <= cc.free_pfn {
            let aligned = low & (PAGEBLOCK_NR_PAGES as u32 - 1) == 0 || low == zstart;
            let skipped = aligned && !fast_find_block && !self.isolation_suitable(cc, block_start);
            if !skipped {
                if !self.suitable_migration_source(cc, block_start) {
                    self.update_cached_migrate(cc, block_end);
                } else {
                    self.isolate_migratepages_block(cc, low, block_end);
                    break;
                }
            }
            fast_find_block = false;
            low = block_end;
            cc.migrate_pfn = block_end;
            block_start = block_end;
            block_end += PAGEBLOCK_NR_PAGES as u32;
        }
        cc.nr_migratepages > 0
    }

    /// Kernel: `isolate_migratepages_block()`: isolate LRU folios from `[low, end)`, at most
    /// COMPACT_CLUSTER_MAX unless the block is being finished. Async direct compaction gives
    /// up on an order-aligned chunk at its first folio that cannot be isolated and puts back
    /// what it isolated there (`skip_on_failure`: the chunk cannot become a free block of the
    /// requested order). A block scanned to its end with nothing isolated (or finished) is
    /// marked skipped and moves the cached migrate pfn.
    fn isolate_migratepages_block(&mut self, cc: &mut CompactControl, low: Pfn, end: Pfn) {
        let skip_on_failure = cc.who == Compactor::Direct && cc.mode == MigrateMode::Async;
        let chunk_end = |p: Pfn, order: i32| -> Pfn {
            let sz = 1u32 << order.max(0);
            (p + 1).div_ceil(sz) * sz
        };
        let mut next_skip_pfn = if skip_on_failure {
            chunk_end(low, cc.order)
        } else {
            0
        };
        let mut p = low;
        let mut nr_isolated = 0u64;
        let first = cc.migratepages.len();
        while p < end {
            if skip_on_failure && p >= next_skip_pfn {
                if nr_isolated > 0 {
                    break;
                }
                next_skip_pfn = chunk_end(p, cc.order);
            }
            let i = p as usize;
            // PG_locked is cleared lazily in the model (`FrameTable::wait_locked()` clears it
            // once the read is done); the kernel unlocks a folio when its read completes
            // (`folio_end_read()`), so a read that is over no longer keeps the folio from
            // migrating.
            self.pages.wait_locked(p, cc.now);
            let f = self.pages.hot[i].flags;
            let o = self.pages.hot[i].order as u32;
            if f & pg::BUDDY != 0 {
                cc.migrate_scanned += 1 << o;
                p += 1 << o;
                continue;
            }
            let nr = if f & pg::HEAD != 0 { 1u64 << o } else { 1 };
            cc.migrate_scanned += nr;
            let movable = f & pg::HEAD != 0
                && !skip_isolation_on_order(o, cc.order)
                && f & pg::LRU != 0
                && f & (pg::WRITEBACK | pg::LOCKED | pg::ISOLATED) == 0
                && self.pages.obj[i] != NIL;
            p += nr as u32;
            if movable {
                // folio_isolate_lru()
                self.lru_del(p - nr as u32);
                self.pages.set(p - nr as u32, pg::ISOLATED);
                cc.migratepages.push(p - nr as u32);
                cc.nr_migratepages += nr;
                nr_isolated += nr;
                if cc.migratepages.len() >= COMPACT_CLUSTER_MAX && !cc.finish_pageblock {
                    break;
                }
                continue;
            }
            // isolate_fail:
            if !skip_on_failure {
                continue;
            }
            if nr_isolated > 0 {
                // putback_movable_pages()
                for k in first..cc.migratepages.len() {
                    let q = cc.migratepages[k];
                    self.pages.clear(q, pg::ISOLATED);
                    self.lru_add(q, false);
                }
                cc.migratepages.truncate(first);
                cc.nr_migratepages -= nr_isolated;
                nr_isolated = 0;
            }
            if p < next_skip_pfn {
                p = next_skip_pfn;
                next_skip_pfn += 1 << cc.order.max(0);
            }
        }
        let p = p.min(end);
        if p >= end && (nr_isolated == 0 || cc.finish_pageblock) {
            self.zones[cc.zi].set_pageblock_skip(low, true);
            self.update_cached_migrate(cc, p);
        }
        cc.migrate_pfn = p;
        cc.isolated += nr_isolated;
        self.ev.add(Ev::CompactIsolated, nr_isolated);
    }

    /// Kernel: `isolate_freepages_block()` (not strict): from `start` to `end` every
    /// `stride` frames, isolate free blocks (`__isolate_free_page()`: refused once the zone
    /// would fall below its min watermark, which ends the walk) until as many free pages
    /// as folios to migrate are isolated; a folio is stepped over whole. Counts every frame
    /// stepped on or isolated as free-scanned. Returns (pages isolated, where it stopped).
    fn isolate_freepages_block(
        &mut self,
        cc: &mut CompactControl,
        start: Pfn,
        end: Pfn,
        stride: u32,
    ) -> (u64, Pfn) {
        let zi = cc.zi;
        let mut p = start;
        let mut scanned = 0u64;
        let mut total = 0u64;
        while p < end {
            scanned += 1;
            let i = p as usize;
            let f = self.pages.hot[i].flags;
            let o = self.pages.hot[i].order as u32;
            if f & pg::HEAD != 0 {
                if o > 0 && p + (1 << o) <= end {
                    p += (1 << o) - 1;
                    scanned += (1 << o) - 1;
                }
                p += stride;
                continue;
            }
            if f & pg::BUDDY == 0 {
                p += stride;
                continue;
            }
            if !isolate_free_page_allowed(&self.zones[zi], o, self.isolate_free_page_wmark()) {
                break;
            }
            self.zones[zi].isolate_free_block(&mut self.pages, p);
            // An isolated free page: neither PageBuddy nor a folio.
            self.pages.hot[i].order = o as u8;
            cc.freepages.push(p);
            cc.nr_freepages += 1 << o;
            scanned += (1 << o) - 1;
            total += 1 << o;
            if cc.nr_migratepages <= cc.nr_freepages {
                p += 1 << o;
                break;
            }
            p += (1 << o) - 1 + stride;
        }
        cc.free_scanned += scanned;
        cc.isolated += total;
        self.ev.add(Ev::CompactIsolated, total);
        (total, p.min(end))
    }

    /// Kernel: `fast_isolate_freepages()`: before the linear free scanner, search the
    /// MOVABLE free lists of orders below the target (round-robin from `cc->search_order`,
    /// each list from its tail, at most a `freelist_scan_limit()`-derived number of entries,
    /// a full half pageblock's worth when the scan starts at the zone's top) for a free block
    /// in the top quarter of the space between the scanners, else the highest one in the top
    /// half; isolate it and the rest of its pageblock (`fast_isolate_around()`). A search that
    /// starts at the top and finds nothing moves the free scanner to the highest pageblock
    /// with a free block seen (or, for direct compaction, to the half-way mark). The list is
    /// rotated so that the next search sees other entries; the cached free pfn drops below
    /// the highest block seen. List entries count as free-scanned pages.
    fn fast_isolate_freepages(&mut self, cc: &mut CompactControl) {
        if cc.order <= 0 {
            return;
        }
        let zi = cc.zi;
        let zstart = self.zones[zi].start_pfn;
        let mut limit = (freelist_scan_limit(cc.fast_search_fail) >> 1).max(1);
        let mut scan_start = false;
        if cc.free_pfn >= self.zones[zi].compact.init_free_pfn {
            limit = (PAGEBLOCK_NR_PAGES >> 1) as u32;
            scan_start = true;
        }
        let distance = cc.free_pfn.saturating_sub(cc.migrate_pfn);
        let mut low_pfn = pageblock_start(cc.free_pfn - (distance >> 2));
        let min_pfn = pageblock_start(cc.free_pfn - (distance >> 1));
        if min_pfn > low_pfn {
            low_pfn = min_pfn;
        }
        cc.search_order = cc.search_order.min(cc.order - 1);
        let mut page: Option<Pfn> = None;
        let mut highest: Pfn = 0;
        let mut nr_scanned = 0u64;
        let mut nr_isolated = 0u64;
        let mut order = cc.search_order;
        while page.is_none() && order >= 0 {
            let o = order as usize;
            let t = mt::MOVABLE as usize;
            if !self.zones[zi].free_area[o][t].is_empty() {
                let mut order_scanned = 0u32;
                let mut high_pfn: Pfn = 0;
                let mut freepage = NIL;
                let mut cur = self.zones[zi].free_area[o][t].tail;
                while cur != NIL {
                    order_scanned += 1;
                    nr_scanned += 1;
                    if cur >= highest {
                        highest = pageblock_start(cur).max(zstart);
                    }
                    if cur >= low_pfn {
                        cc.fast_search_fail = 0;
                        cc.search_order = order;
                        page = Some(cur);
                        freepage = cur;
                        break;
                    }
                    if cur >= min_pfn && cur > high_pfn {
                        high_pfn = cur;
                        limit >>= 1;
                    }
                    freepage = cur;
                    if order_scanned >= limit {
                        break;
                    }
                    cur = self.pages.hot[cur as usize].prev;
                }
                if page.is_none() && high_pfn != 0 {
                    page = Some(high_pfn);
                    freepage = high_pfn;
                }
                if cur != NIL || page.is_some() {
                    self.move_freelist_head(zi, o, freepage);
                }
                if let Some(p) = page {
                    if isolate_free_page_allowed(
                        &self.zones[zi],
                        order as u32,
                        self.isolate_free_page_wmark(),
                    ) {
                        self.zones[zi].isolate_free_block(&mut self.pages, p);
                        self.pages.hot[p as usize].order = order as u8;
                        nr_isolated = 1 << order;
                        nr_scanned += nr_isolated - 1;
                        cc.freepages.push(p);
                        cc.nr_freepages += nr_isolated;
                        cc.isolated += nr_isolated;
                        self.ev.add(Ev::CompactIsolated, nr_isolated);
                    } else {
                        // If isolation fails, abort the search.
                        order = cc.search_order + 1;
                        page = None;
                    }
                }
                if cc.nr_freepages >= cc.nr_migratepages {
                    break;
                }
                if order_scanned >= limit {
                    limit = (limit >> 1).max(1);
                }
            }
            order = next_search_order(cc, order);
        }
        if page.is_none() {
            cc.fast_search_fail += 1;
            if scan_start {
                if highest >= min_pfn && highest != 0 {
                    page = Some(highest);
                    cc.free_pfn = highest;
                } else if cc.who == Compactor::Direct {
                    if self.suitable_migration_target(cc, min_pfn) {
                        page = Some(min_pfn);
                    }
                    cc.free_pfn = min_pfn;
                }
            }
        }
        let c = &mut self.zones[zi].compact;
        if highest != 0 && highest >= c.cached_free_pfn {
            c.cached_free_pfn = highest.saturating_sub(PAGEBLOCK_NR_PAGES as u32);
        }
        cc.free_scanned += nr_scanned;
        if let Some(p) = page {
            self.fast_isolate_around(cc, p, nr_isolated);
        }
    }

    /// Kernel: `fast_isolate_around()`: isolate the free pages of the rest of the pageblock
    /// around a block the fast search found (not for async direct compaction), and mark the
    /// block skipped if that still was not enough.
    fn fast_isolate_around(&mut self, cc: &mut CompactControl, pfn: Pfn, nr_isolated: u64) {
        if cc.nr_freepages >= cc.nr_migratepages {
            return;
        }
        if cc.who == Compactor::Direct && cc.mode == MigrateMode::Async {
            return;
        }
        let z = &self.zones[cc.zi];
        let start = pageblock_start(pfn).max(z.start_pfn);
        let end = pageblock_end(pfn).min(z.end_pfn);
        if start != pfn {
            self.isolate_freepages_block(cc, start, pfn, 1);
            if cc.nr_freepages >= cc.nr_migratepages {
                return;
            }
        }
        let after = pfn + nr_isolated as u32;
        if after < end {
            self.isolate_freepages_block(cc, after, end, 1);
        }
        if cc.nr_freepages < cc.nr_migratepages {
            self.zones[cc.zi].set_pageblock_skip(pfn, true);
        }
    }

    /// Kernel: `isolate_freepages()`: after `fast_isolate_freepages()`, if it isolated
    /// nothing, walk pageblocks down from the free scanner to the block above the migrate
    /// scanner's, isolating from suitable, non-skipped blocks; async compaction samples a
    /// block every `stride` frames (32 at first, back to 1 once a block gave pages, doubled
    /// after each block that gave none). A block scanned to its end is marked skipped. The
    /// walk stops when enough pages are isolated, or when a block's isolation stopped early.
    fn isolate_freepages(&mut self, cc: &mut CompactControl) {
        self.fast_isolate_freepages(cc);
        if cc.nr_freepages > 0 {
            return;
        }
        let zi = cc.zi;
        let zend = self.zones[zi].end_pfn;
        let pb = PAGEBLOCK_NR_PAGES as i64;
        let mut isolate_start = cc.free_pfn as i64;
        let mut block_start = pageblock_start(cc.free_pfn) as i64;
        let mut block_end = (block_start + pb).min(zend as i64);
        let low = pageblock_end(cc.migrate_pfn) as i64;
        let mut stride = if cc.mode == MigrateMode::Async {
            COMPACT_CLUSTER_MAX as u32
        } else {
            1
        };
        while block_start >= low {
            let bs = block_start as Pfn;
            if self.suitable_migration_target(cc, bs) && self.isolation_suitable(cc, bs) {
                let (nr, pos) = self.isolate_freepages_block(
                    cc,
                    isolate_start as Pfn,
                    block_end as Pfn,
                    stride,
                );
                isolate_start = pos as i64;
                if isolate_start == block_end {
                    self.update_pageblock_skip(
                        zi,
                        bs,
                        bs.saturating_sub(PAGEBLOCK_NR_PAGES as u32),
                    );
                }
                if cc.nr_freepages >= cc.nr_migratepages {
                    if isolate_start >= block_end {
                        isolate_start = block_start - pb;
                    }
                    break;
                } else if isolate_start < block_end {
                    break;
                }
                stride = if nr > 0 {
                    1
                } else {
                    (stride << 1).min(COMPACT_CLUSTER_MAX as u32)
                };
            }
            block_end = block_start;
            block_start -= pb;
            isolate_start = block_start;
        }
        cc.free_pfn = isolate_start.max(0) as Pfn;
    }

    /// Kernel: `compaction_alloc()`: the smallest isolated free block of at least `order`,
    /// split down to it (the rest stays isolated).
    fn compaction_alloc(&mut self, cc: &mut CompactControl, order: u32) -> Option<Pfn> {
        let mut best: Option<(usize, u32)> = None;
        for (k, &p) in cc.freepages.iter().enumerate() {
            let o = self.pages.hot[p as usize].order as u32;
            if o >= order && best.is_none_or(|(_, bo)| o < bo) {
                best = Some((k, o));
                if o == order {
                    break;
                }
            }
        }
        let (k, mut o) = best?;
        let pfn = cc.freepages.swap_remove(k);
        while o > order {
            o -= 1;
            let buddy = pfn + (1 << o);
            self.pages.hot[buddy as usize].order = o as u8;
            cc.freepages.push(buddy);
        }
        self.pages.hot[pfn as usize].order = order as u8;
        cc.nr_freepages -= 1 << order;
        cc.nr_migratepages = cc.nr_migratepages.saturating_sub(1 << order);
        Some(pfn)
    }

    /// Kernel: `migrate_pages()` over the isolated folios. Returns false when it ran out of
    /// free pages (-ENOMEM); folios that were not migrated go back to the LRU. A large
    /// page-cache folio for which no free block of its order can be found is split into
    /// order-0 folios (`migrate_pages_batch()`'s -ENOMEM case: `try_split_folio()` unless
    /// NUMA-misplaced), which are migrated after the rest of the list (`migrate_pages()`'s
    /// split-folio pass); running out of free pages for any other folio ends the migration.
    fn migrate_pages(&mut self, ctx: &mut Ctx, cc: &mut CompactControl) -> bool {
        let list = std::mem::take(&mut cc.migratepages);
        let mut split: Vec<Pfn> = Vec::new();
        let mut ok = true;
        let mut k = 0;
        let mut in_split_pass = false;
        loop {
            let src = if in_split_pass {
                match split.get(k) {
                    Some(&p) => p,
                    None => break,
                }
            } else {
                match list.get(k) {
                    Some(&p) => p,
                    None => {
                        in_split_pass = true;
                        k = 0;
                        continue;
                    }
                }
            };
            let order = self.pages.hot[src as usize].order as u32;
            let mut dst = self.compaction_alloc(cc, order);
            if dst.is_none() {
                self.isolate_freepages(cc);
                dst = self.compaction_alloc(cc, order);
            }
            let Some(dst) = dst else {
                if order > 0 && !in_split_pass && self.split_isolated_file_folio(src, &mut split) {
                    k += 1;
                    continue;
                }
                // putback_movable_pages() for the rest (and the split pieces).
                let rest: Vec<Pfn> = if in_split_pass {
                    split[k..].to_vec()
                } else {
                    list[k..].iter().chain(split.iter()).copied().collect()
                };
                for &p in &rest {
                    self.pages.clear(p, pg::ISOLATED);
                    self.lru_add(p, false);
                }
                self.ev.add(Ev::PgmigrateFail, rest.len() as u64);
                ok = false;
                break;
            };
            self.migrate_folio(src, dst);
            let cost = (1u64 << order) * self.cfg.costs.migrate_per_page_ns;
            ctx.cpu_ns += cost;
            self.compact_cpu_ns[cc.who as usize] += cost;
            self.ev.add(Ev::PgmigrateSuccess, 1 << order);
            k += 1;
        }
        cc.nr_migratepages = 0;
        ok
    }

    /// Kernel: `try_split_folio()` → `split_folio_to_list()` of an isolated large page-cache
    /// folio: it becomes order-0 folios, all still isolated; the tails get the head's flags
    /// except PG_readahead (`__split_folio_to_order()` does not copy it), owner and memcg;
    /// each page-cache entry points at its page. Appends the pieces (the head first) to
    /// `out`. Anonymous and shmem folios are not split here (the model's anonymous large
    /// folios are PMD-sized THPs, which compaction never isolates). Returns false when the
    /// folio is not a page-cache folio.
    fn split_isolated_file_folio(&mut self, pfn: Pfn, out: &mut Vec<Pfn>) -> bool {
        let i = pfn as usize;
        let obj = self.pages.obj[i];
        if obj == NIL || self.objects[obj as usize].kind != ObjKind::File {
            return false;
        }
        let order = self.pages.hot[i].order as u32;
        let flags = self.pages.hot[i].flags & !pg::READAHEAD;
        let (index, memcg) = (self.pages.index[i], self.pages.hot[i].memcg);
        for k in 0..(1u32 << order) {
            let t = (pfn + k) as usize;
            if k > 0 {
                self.pages.hot[t].flags = flags;
                self.pages.obj[t] = obj;
                self.pages.index[t] = index + k;
                self.pages.hot[t].memcg = memcg;
                self.pages.io_done_ns[t] = 0;
            }
            self.pages.hot[t].order = 0;
            self.objects[obj as usize].ent[(index + k) as usize] = cache_entry(pfn + k, 0);
            out.push(pfn + k);
        }
        true
    }

    /// Kernel: `migrate_folio_move()`: move an isolated folio's state to `dst`, repoint every
    /// reference, free the old frames and put `dst` on the LRU (`folio_add_lru()`).
    fn migrate_folio(&mut self, src: Pfn, dst: Pfn) {
        let (s, d) = (src as usize, dst as usize);
        let order = self.pages.hot[s].order as u32;
        let p = &mut self.pages;
        p.hot[d].flags = (p.hot[s].flags & !pg::ISOLATED) | pg::HEAD;
        p.obj[d] = p.obj[s];
        p.index[d] = p.index[s];
        p.hot[d].order = order as u8;
        p.hot[d].memcg = p.hot[s].memcg;
        p.swap_slot[d] = p.swap_slot[s];
        p.hot[d].swap_area = p.hot[s].swap_area;
        p.io_done_ns[d] = p.io_done_ns[s];
        let obj = p.obj[s] as usize;
        let index = p.index[s] as usize;
        let flags = p.hot[d].flags;
        match self.objects[obj].kind {
            ObjKind::File => {
                let e = cache_entry(dst, order);
                for k in 0..(1usize << order) {
                    self.objects[obj].ent[index + k] = e;
                }
            }
            ObjKind::Anon | ObjKind::Shmem => {
                let e = self.objects[obj].ent[index];
                if pte_present(e) && pte_pfn(e) == src {
                    self.objects[obj].ent[index] =
                        (e & !(u32::MAX as u64)) | dst as u64 | PTE_PRESENT;
                }
                if flags & pg::SWAPCACHE != 0 {
                    let a = self.pages.hot[d].swap_area as usize;
                    let slot = self.pages.swap_slot[d] as usize;
                    let v = self.swap[a].slots[slot];
                    debug_assert!(v & SLOT_CACHE != 0 && v as u32 == src);
                    self.swap[a].slots[slot] = (v & !(u32::MAX as u64)) | dst as u64;
                }
            }
        }
        // Free the source frames (the new folio keeps the memcg charge).
        self.pages.hot[s].flags = 0;
        self.pages.obj[s] = NIL;
        self.ev.add(Ev::PgFree, 1 << order);
        let zi = self.zone_of(src);
        self.zones[zi].free_block(&mut self.pages, src, order);
        self.lru_add(dst, false);
    }

    /// Kernel: `try_to_compact_pages()` + `__alloc_pages_direct_compact()`'s accounting: run
    /// direct compaction over the zonelist at priority `prio`. Returns the zone that reached
    /// SUCCESS, and the overall result.
    pub fn try_to_compact_pages(
        &mut self,
        ctx: &mut Ctx,
        order: u32,
        migratetype: u8,
        prio: CompactPriority,
    ) -> CompactResult {
        let mut rc = CompactResult::Skipped;
        for zi in (0..self.zones.len()).rev() {
            if prio > CompactPriority::SyncFull && self.zones[zi].compact.compaction_deferred(order)
            {
                rc = rc.max(CompactResult::Deferred);
                continue;
            }
            let mode = if prio == CompactPriority::Async {
                MigrateMode::Async
            } else {
                MigrateMode::SyncLight
            };
            let mut cc = CompactControl::new(zi, order as i32, mode, Compactor::Direct);
            cc.migratetype = migratetype;
            if prio == CompactPriority::SyncFull {
                cc.whole_zone = true;
                cc.ignore_skip_hint = true;
                cc.ignore_block_suitable = true;
            }
            let status = self.compact_zone(ctx, &mut cc);
            rc = rc.max(status);
            if status == CompactResult::Success {
                self.zones[zi].compact.defer_reset(order, false);
                break;
            }
            if prio != CompactPriority::Async
                && matches!(
                    status,
                    CompactResult::Complete | CompactResult::PartialSkipped
                )
            {
                self.zones[zi].compact.defer_compaction(order);
            }
        }
        rc
    }

    /// Kernel: `compact_node()` / `proactive_compact_node()`: compact every zone whole
    /// (order -1), sync-light, ignoring skip hints.
    pub fn compact_node(&mut self, ctx: &mut Ctx, who: Compactor, proactive: bool) {
        for zi in 0..self.zones.len() {
            let mut cc = CompactControl::new(zi, -1, MigrateMode::SyncLight, who);
            cc.whole_zone = true;
            cc.ignore_skip_hint = true;
            cc.proactive = proactive;
            self.compact_zone(ctx, &mut cc);
        }
    }

    /// Kernel (≤ v4.4): `compact_pgdat()` from kswapd: async compaction of every zone for
    /// `order` that is not already satisfied, honouring deferral.
    pub fn compact_pgdat(&mut self, ctx: &mut Ctx, order: u32) {
        for zi in 0..self.zones.len() {
            if self.zones[zi].compact.compaction_deferred(order) {
                continue;
            }
            let mut cc =
                CompactControl::new(zi, order as i32, MigrateMode::Async, Compactor::Kswapd);
            let status = self.compact_zone(ctx, &mut cc);
            if status == CompactResult::Success {
                self.zones[zi].compact.defer_reset(order, false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deferral_backs_off_exponentially() {
        let mut c = ZoneCompact::new(0, 4096);
        c.order_failed = 0;
        // One failure: defer_shift 1 -> the next attempt is skipped once, then tried.
        c.defer_compaction(9);
        assert_eq!((c.defer_shift, c.considered, c.order_failed), (1, 0, 0));
        assert!(c.compaction_deferred(9));
        assert!(!c.compaction_deferred(9));
        // Three failures: 2^3 - 1 = 7 skipped attempts before the 8th runs.
        c.defer_compaction(9);
        c.defer_compaction(9);
        assert_eq!(c.defer_shift, 3);
        let skipped = (0..8).take_while(|_| c.compaction_deferred(9)).count();
        assert_eq!(skipped, 7);
        // The shift saturates at 6.
        for _ in 0..10 {
            c.defer_compaction(9);
        }
        assert_eq!(c.defer_shift, COMPACT_MAX_DEFER_SHIFT);
        // A lower order than the one that failed is never deferred.
        c.order_failed = 5;
        assert!(!c.compaction_deferred(4));
        // Success resets the backoff and raises order_failed.
        c.defer_reset(9, true);
        assert_eq!((c.defer_shift, c.considered, c.order_failed), (0, 0, 10));
        assert!(!c.compaction_deferred(9));
    }

    #[test]
    fn restarting_after_a_full_deferral_cycle() {
        let mut c = ZoneCompact::new(0, 4096);
        for _ in 0..6 {
            c.defer_compaction(9);
        }
        assert!(!c.restarting(9));
        while c.compaction_deferred(9) {}
        assert_eq!(c.considered, 64);
        assert!(c.restarting(9));
    }

    #[test]
    fn freelist_scan_limit_halves_per_failure() {
        // (COMPACT_CLUSTER_MAX >> fast_search_fail) + 1
        assert_eq!(freelist_scan_limit(0), 33);
        assert_eq!(freelist_scan_limit(1), 17);
        assert_eq!(freelist_scan_limit(3), 5);
        assert_eq!(freelist_scan_limit(5), 2);
        assert_eq!(freelist_scan_limit(6), 1);
        assert_eq!(freelist_scan_limit(40), 1);
    }

    #[test]
    fn next_search_order_round_robin() {
        let mut cc = CompactControl::new(0, 9, MigrateMode::SyncLight, Compactor::Kcompactd);
        // fast_isolate_freepages() clamps search_order to order - 1 = 8.
        cc.search_order = 5;
        // From 5: 4 3 2 1 0, then wraps to 8 7 6, and meeting 5 again ends the search with
        // search_order one lower.
        let mut seen = vec![];
        let mut o = 5;
        loop {
            o = next_search_order(&mut cc, o);
            if o < 0 {
                break;
            }
            seen.push(o);
        }
        assert_eq!(seen, vec![4, 3, 2, 1, 0, 8, 7, 6]);
        assert_eq!(cc.search_order, 4);
        // search_order 0 wraps to order - 1.
        cc.search_order = 0;
        assert_eq!(next_search_order(&mut cc, 1), -1);
        assert_eq!(cc.search_order, 8);
    }

    /// fragmentation_score_zone() is extfrag_for_order(9); the node's score weights each
    /// zone by present_pages (not managed_pages) over node_present_pages + 1, rounding down
    /// per zone (`fragmentation_score_zone_weighted()`).
    #[test]
    fn fragmentation_score_weights_zones_by_present_pages() {
        let mut cfg = crate::testutil::tiny_config(crate::BalanceKind::RefaultCost, 4096);
        cfg.zones = vec![("DMA32", 4096), ("Normal", 4096)];
        let mut mm = crate::Mm::new(cfg);
        for z in mm.zones.iter_mut() {
            z.nr_free = [0; NR_PAGE_ORDERS];
        }
        // DMA32: 100 order-0 and 10 order-3 blocks, nothing of order 9: extfrag 100.
        mm.zones[0].nr_free[0] = 100;
        mm.zones[0].nr_free[3] = 10;
        // Normal: three order-8 blocks and one order-10 block: 1792 free, 1024 usable for
        // order 9: (1792 - 2 * 512) * 100 / 1792 = 42.
        mm.zones[1].nr_free[8] = 3;
        mm.zones[1].nr_free[10] = 1;
        assert_eq!(mm.fragmentation_score_zone(0), 100);
        assert_eq!(mm.fragmentation_score_zone(1), 42);
        (mm.zones[0].present, mm.zones[0].managed) = (1000, 500);
        (mm.zones[1].present, mm.zones[1].managed) = (3000, 3000);
        // 1000 * 100 / 4001 = 24 and 3000 * 42 / 4001 = 31 (by managed pages it would be
        // 500 * 100 / 3501 = 14 and 3000 * 42 / 3501 = 35: 49).
        assert_eq!(mm.fragmentation_score_node(), 55);
    }

    #[test]
    fn proactive_watermarks() {
        // Default proactiveness 20: act above 90, stop at 80.
        assert_eq!(proactive_wmarks(20), (80, 90));
        // 100: low 0, leeway min(10, 0) = 0.
        assert_eq!(proactive_wmarks(100), (0, 0));
        // 95: low 5, leeway 2.
        assert_eq!(proactive_wmarks(95), (5, 7));
    }
}

/// Behaviour on small machines: fragmentation, boosting, compaction, deferral.
#[cfg(test)]
mod behaviour {
    use super::*;
    use crate::alloc::Gfp;
    use crate::kswapd::KswapdNext;
    use crate::mmzone::mt;
    use crate::testutil::*;
    use crate::*;

    /// MADV_DONTNEED of one anon page (test helper): unmap and free its folio.
    fn zap_anon(mm: &mut Mm, obj: u32, index: u32) {
        let e = mm.objects[obj as usize].ent[index as usize];
        assert!(pte_present(e));
        let pfn = pte_pfn(e);
        mm.lru_del(pfn);
        mm.objects[obj as usize].ent[index as usize] = 0;
        mm.objects[obj as usize].nr_resident -= 1;
        mm.free_folio(pfn);
    }

    fn mm4096() -> Mm {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
        cfg.readahead_max_pages = 0;
        Mm::new(cfg)
    }

    fn order9_free(mm: &Mm) -> bool {
        mm.zones[0].watermark_ok(9, 0)
    }

    /// A 4096-page machine without readahead or watermark boosting (the page-table pages are
    /// unmovable: the first one steals a pageblock, which would boost the watermark and
    /// reclaim), its anon object's first 3968 pages faulted in.
    /// An 8192-page machine following `kernel`'s rules with 7000 anon pages faulted in and
    /// every other one freed again: order-0 holes in MOVABLE blocks.
    fn anon_holes(kernel: crate::workingset::KernelVersion) -> Mm {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 8192);
        cfg.objects[0].size_pages = 16384;
        cfg.kernel = kernel;
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for i in 0..7000u32 {
            mm.touch(&mut ctx, 0, i, true);
        }
        for i in (0..7000u32).step_by(2) {
            zap_anon(&mut mm, 0, i);
        }
        mm
    }

    fn mm4096_filled() -> Mm {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
        cfg.readahead_max_pages = 0;
        cfg.watermark_boost_factor = 0;
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for i in 0..3968 {
            mm.touch(&mut ctx, 0, i, true);
        }
        mm
    }

    #[test]
    fn compaction_makes_an_order9_block_by_migrating_movable_pages() {
        let mut mm = mm4096_filled();
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for i in (0..3968).step_by(2) {
            zap_anon(&mut mm, 0, i);
        }
        assert!(!order9_free(&mm), "holes only: no free order-9 block");
        let before: Vec<u64> = (1..3968).step_by(2).map(|i| mm.objects[0].ent[i]).collect();
        let mut cc = CompactControl::new(0, 9, MigrateMode::SyncLight, Compactor::Kcompactd);
        let r = mm.compact_zone(&mut ctx, &mut cc);
        assert_eq!(r, CompactResult::Success);
        assert!(order9_free(&mm));
        assert!(mm.ev.get(Ev::PgmigrateSuccess) > 0);
        assert!(mm.ev.get(Ev::CompactMigrateScanned) > 0);
        assert!(mm.ev.get(Ev::CompactFreeScanned) > 0);
        assert_eq!(
            mm.ev.get(Ev::KcompactdMigrateScanned),
            mm.ev.get(Ev::CompactMigrateScanned)
        );
        // Migrated pages moved: their PTEs point at new frames, still present and dirty.
        let after: Vec<u64> = (1..3968).step_by(2).map(|i| mm.objects[0].ent[i]).collect();
        let moved = before.iter().zip(&after).filter(|(b, a)| b != a).count() as u64;
        assert_eq!(moved, mm.ev.get(Ev::PgmigrateSuccess));
        assert!(after.iter().all(|&e| pte_present(e)));
        mm.check_invariants().unwrap();
    }

    /// A folio whose read completed long ago but that nobody has waited on since still has
    /// the model's lazily cleared PG_locked; compaction must migrate it (the kernel unlocks
    /// a folio when its read completes), while a folio whose read is still in flight stays.
    /// Before the fix every such folio was left in place: no order-9 block (COMPLETE).
    #[test]
    fn compaction_migrates_folios_whose_read_has_completed() {
        let mut mm = mm4096_filled();
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for i in (0..3968).step_by(2) {
            zap_anon(&mut mm, 0, i);
        }
        // Every remaining folio "locked for a read" that completed at 1 ms, one still in
        // flight until 10 s.
        let held: Vec<Pfn> = (1..3968)
            .step_by(2)
            .map(|i| pte_pfn(mm.objects[0].ent[i]))
            .collect();
        for &p in &held {
            mm.pages.lock_for_io(p, 1_000_000);
        }
        // A locked anonymous folio's PTE carries PTE_ATTN (the fault path's cue to wait).
        for i in (1..3968).step_by(2) {
            mm.objects[0].ent[i] |= crate::memory::PTE_ATTN;
        }
        let busy = held[0];
        mm.pages.lock_for_io(busy, 10_000_000_000);
        ctx.now = 2_000_000_000;
        let mut cc = CompactControl::new(0, 9, MigrateMode::SyncLight, Compactor::Kcompactd);
        let r = mm.compact_zone(&mut ctx, &mut cc);
        assert_eq!(r, CompactResult::Success);
        assert!(order9_free(&mm));
        assert!(mm.ev.get(Ev::PgmigrateSuccess) > 0);
        // The folio still being read was not moved and keeps its lock.
        assert_eq!(pte_pfn(mm.objects[0].ent[1]), busy);
        assert!(mm.pages.test(busy, pg::LOCKED));
        mm.check_invariants().unwrap();
    }

    /// `compact_zone()`'s drain of the compacting CPU's per-CPU lists (v4.6
    /// `drain_local_pages()`, v5.x+ `lru_add_drain_cpu_zone()`) once the migrate scanner
    /// leaves a block it migrated from. A 4096-page DMA32 zone below a 32768-page Normal one
    /// (v4.6 lists: batch 7, high 42), 34000 anon pages faulted on CPU 0 (Normal full),
    /// then every other one of the first 4000 unmapped on CPU 1, whose lists keep what
    /// their last bulk free left. Compacting Normal from CPU 1 empties CPU 1's lists; from CPU 0 it leaves them
    /// (it drains CPU 0's). Before the drain both runs left CPU 1's lists as they were.
    #[test]
    fn compaction_drains_the_compacting_cpus_lists() {
        for on in [1u16, 0] {
            let mut cfg = tiny_config(BalanceKind::RefaultCost, 32768);
            cfg.zones = vec![("DMA32", 4096), ("Normal", 32768)];
            cfg.readahead_max_pages = 0;
            cfg.watermark_boost_factor = 0;
            cfg.nr_cpus = 2;
            cfg.kernel = crate::workingset::KernelVersion::new(4, 6);
            let mut mm = Mm::new(cfg);
            let zi = 1;
            assert_eq!((mm.zones[zi].pcp_batch, mm.zones[zi].pcp_high), (7, 42));
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            mm.set_cpu(0);
            for i in 0..34000 {
                mm.touch(&mut ctx, 0, i, true);
            }
            mm.set_cpu(1);
            for i in (0..4000).step_by(2) {
                zap_anon(&mut mm, 0, i);
            }
            let held = mm.zones[zi].pcp[1].count;
            assert!(held > 0 && held < 42, "CPU 1 holds {held}");
            mm.set_cpu(on);
            ctx.cpu = on;
            let mut cc = CompactControl::new(zi, 9, MigrateMode::SyncLight, Compactor::Kcompactd);
            mm.compact_zone(&mut ctx, &mut cc);
            assert!(mm.ev.get(Ev::PgmigrateSuccess) > 0);
            let left = mm.zones[zi].pcp[1].count;
            if on == 1 {
                assert_eq!(left, 0, "compacting on CPU 1 drains its lists");
            } else {
                assert_eq!(left, held, "compacting on CPU 0 leaves CPU 1's lists");
                assert_eq!(mm.zones[zi].pcp[0].count, 0);
            }
            mm.check_invariants().unwrap();
        }
    }

    /// `__isolate_free_page()`'s watermark by version: v4.6 keeps the low watermark plus the
    /// page, v4.9+ the min one. A zone with min 1000, low 2000 and 1800 free pages: an
    /// order-0 page may be isolated under v4.9+ (1800 > 1001), not under v4.6 (1800 <= 2001);
    /// and v4.6's `compaction_suitable()` tests low + gap for an order-3 request too.
    #[test]
    fn isolate_free_page_watermark_by_version() {
        use crate::workingset::KernelVersion;
        let mut old = anon_holes(KernelVersion::new(4, 6));
        let mut new = anon_holes(KernelVersion::new(4, 9));
        assert_eq!(old.isolate_free_page_wmark(), Wmark::Low);
        assert_eq!(new.isolate_free_page_wmark(), Wmark::Min);
        for mm in [&mut old, &mut new] {
            let free = mm.zones[0].free;
            // free = low - 200 = min + 800.
            mm.zones[0].wmark = [free - 800, free + 200, free + 400];
        }
        let z = &new.zones[0];
        assert!(isolate_free_page_allowed(z, 0, Wmark::Min));
        assert!(!isolate_free_page_allowed(z, 0, Wmark::Low));
        // Order 3 (non-costly): min + 16 passes under v4.9, low + 16 fails under v4.6.
        assert!(new.compaction_suitable(0, 3));
        assert!(!old.compaction_suitable(0, 3));
    }

    /// Unmovable kernel pages with every other one freed.
    fn unmovable_holes() -> Mm {
        let mut mm = mm4096();
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let pfns: Vec<Pfn> = (0..4000)
            .map(|_| mm.alloc_kernel_pages(&mut ctx, 0, Gfp::NOWAIT).unwrap())
            .collect();
        for p in pfns.iter().step_by(2) {
            mm.free_kernel_pages(*p);
        }
        mm
    }

    /// Direct reclaim's `compaction_ready()` for order 9 on the fragmented zone of
    /// [`unmovable_holes`] (no free order-9 block; compaction suitable), with watermarks
    /// min/low/high = h-60/h-20/h set so that free = h + compact_gap(9) + 20 = h + 1044.
    /// v4.9–v6.14 skip reclaim: free above h + 1024. v6.15+ (v6.18) reclaim: free below
    /// h + 1024 plus low - min (40). v4.6 reclaims: free below h + balance_gap + 1024, with
    /// balance_gap = min(low, ceil(4096 / 100) = 41) = 41. Before this rule the model
    /// reclaimed for every costly direct reclaim: `try_to_free_pages()` of this zone (no LRU
    /// page) returned 0.
    #[test]
    fn compaction_ready_skips_direct_reclaim_by_version() {
        use crate::workingset::KernelVersion;
        for (kernel, ready) in [
            (KernelVersion::new(4, 6), false),
            (KernelVersion::new(6, 14), true),
            (KernelVersion::default(), false),
        ] {
            let mut mm = unmovable_holes();
            mm.cfg.kernel = kernel;
            let free = mm.zones[0].free;
            let high = free - 1024 - 20;
            mm.zones[0].wmark = [high - 60, high - 20, high];
            assert!(!order9_free(&mm));
            assert!(mm.compaction_suitable(0, 9));
            assert_eq!(mm.compaction_ready(0, 9), ready, "{kernel}");
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            // "Aborted reclaim to try compaction? don't OOM, then": progress 1.
            let progress = mm.try_to_free_pages(&mut ctx, 9, Gfp::KERNEL);
            assert_eq!(progress, u64::from(ready), "{kernel}");
            // 50 more free pages above each mark: above h' + 1064 and h' + 41 + 1024 too.
            mm.zones[0].wmark = [high - 110, high - 70, high - 50];
            assert!(mm.compaction_ready(0, 9), "{kernel}");
            mm.check_invariants().unwrap();
        }
    }

    #[test]
    fn compaction_cannot_help_a_zone_of_unmovable_pages() {
        let mut mm = unmovable_holes();
        assert!(mm.zones[0]
            .pageblock
            .iter()
            .all(|&b| b & PB_MT_MASK == mt::UNMOVABLE));
        assert!(!order9_free(&mm));
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let mut cc = CompactControl::new(0, 9, MigrateMode::SyncLight, Compactor::Kcompactd);
        let r = mm.compact_zone(&mut ctx, &mut cc);
        // The pass started at the zone's first pageblock (compact_init_migrate_pfn): a
        // whole-zone pass, so the scanners meeting is COMPLETE.
        assert_eq!(r, CompactResult::Complete);
        assert!(!order9_free(&mm));
        assert_eq!(mm.ev.get(Ev::PgmigrateSuccess), 0);
        mm.check_invariants().unwrap();
    }

    /// v4.6–v4.7 (`model.kernel` before 4.8, "mm, kswapd: replace kswapd compaction with
    /// waking up kcompactd"): with kcompactd, kswapd's balance test is the order-0 high
    /// watermark plus 1 << order, so a zone with plenty of scattered free pages and no
    /// order-9 block is balanced for an order-9 wakeup and kswapd goes back to sleep without
    /// reclaiming; from v4.8 it tests order 9 and reclaims. Under "kswapd" (v4.4) the rule
    /// does not apply.
    #[test]
    fn kswapd_before_4_8_balances_at_order0_plus_the_request() {
        use crate::workingset::KernelVersion;
        for (kernel, policy, balanced) in [
            (KernelVersion::new(4, 6), KswapdCompaction::Kcompactd, true),
            (KernelVersion::new(4, 7), KswapdCompaction::Kcompactd, true),
            (KernelVersion::new(4, 8), KswapdCompaction::Kcompactd, false),
            (KernelVersion::default(), KswapdCompaction::Kcompactd, false),
            (KernelVersion::new(4, 6), KswapdCompaction::Kswapd, false),
        ] {
            let mut mm = unmovable_holes();
            mm.cfg.kernel = kernel;
            mm.cfg.kswapd_compaction = policy;
            let z = &mm.zones[0];
            let free = z.free;
            assert!(free > z.wmark_pages(Wmark::High) + 512, "{free} free");
            assert!(!order9_free(&mm));
            assert_eq!(mm.kswapd_balanced(9), balanced, "{kernel} {policy:?}");
            // wakeup_kswapd() tests the true order-9 watermark under every rule.
            assert!(!mm.pgdat_balanced(9));
            mm.kswapd.order = 9;
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            let first = mm.kswapd_step(&mut ctx);
            if kernel < KernelVersion::new(4, 8) && policy == KswapdCompaction::Kcompactd {
                // v4.6's balance_pgdat() makes one pass (its end_zone scan tests the true
                // order-9 watermark) but skips the zone, balanced with the gap, and its
                // loop test (order 0 at high + 512) then sends kswapd to sleep unreclaimed.
                assert_eq!(first, KswapdNext::Continue, "{kernel}");
                assert_eq!(mm.kswapd_step(&mut ctx), KswapdNext::Done, "{kernel}");
                assert_eq!(mm.ev.get(Ev::PgStealKswapd), 0, "{kernel}");
            } else {
                assert_eq!(first == KswapdNext::Done, balanced, "{kernel} {policy:?}");
            }
        }
    }

    /// v4.6–v4.7 balance_pgdat() (accf62422b3a removed v4.4's "recheck the watermarks at
    /// order-0" after `2 << order` reclaimed pages; v4.8's kswapd_shrink_node() brought it
    /// back): a kswapd woken for order 9 keeps order 9 however much it has reclaimed, where
    /// v4.8+ and the v4.4 kswapd ("kswapd" policy) drop to order 0 after 1024 pages.
    #[test]
    fn kswapd_keeps_its_order_after_compact_gap_only_in_4_6_and_4_7() {
        use crate::workingset::KernelVersion;
        for (kernel, policy, keeps) in [
            (KernelVersion::new(4, 6), KswapdCompaction::Kcompactd, true),
            (KernelVersion::new(4, 7), KswapdCompaction::Kcompactd, true),
            (KernelVersion::new(4, 8), KswapdCompaction::Kcompactd, false),
            (KernelVersion::default(), KswapdCompaction::Kcompactd, false),
            (KernelVersion::new(4, 6), KswapdCompaction::Kswapd, false),
        ] {
            // 16384 pages, min_free_kbytes 8192: min 2048, high 3072 pages; page cache
            // read until free memory is just above min (read(), not mapped: a first lap of
            // kswapd over mapped pages touched once only clears their young bits, and
            // before v4.10 no cache-trim retry gives it a second lap).
            let mut cfg = tiny_config(BalanceKind::RefaultCost, 16384);
            cfg.readahead_max_pages = 0;
            cfg.watermark_boost_factor = 0;
            cfg.min_free_kbytes = Some(8192);
            cfg.kernel = kernel;
            cfg.kswapd_compaction = policy;
            let mut mm = Mm::new(cfg);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            let mut i = 0;
            while mm.zones[0].free > 2100 {
                mm.file_read(&mut ctx, 1, i, 1);
                i += 1;
            }
            mm.kswapd.order = 9;
            let mut seen = None;
            for _ in 0..10_000 {
                let next = mm.kswapd_step(&mut ctx);
                if let Some((order, reclaimed)) = mm.kswapd_sc_order_reclaimed() {
                    if reclaimed >= 1024 && seen.is_none() {
                        seen = Some(order);
                    }
                }
                if next == KswapdNext::Done {
                    break;
                }
            }
            let want = if keeps { 9 } else { 0 };
            assert_eq!(seen, Some(want), "{kernel} {policy:?}");
        }
    }

    /// Since v4.17 ("mm, page_alloc: wakeup kcompactd even if kswapd cannot free more
    /// memory") an allocation that cannot reclaim wakes kcompactd itself when kswapd will
    /// not run (here: kswapd has failed MAX_RECLAIM_RETRIES times); before (v4.6) it does not.
    #[test]
    fn nowait_allocation_wakes_kcompactd_directly_only_since_4_17() {
        use crate::workingset::KernelVersion;
        for (kernel, wakes) in [
            (KernelVersion::new(4, 6), false),
            (KernelVersion::new(4, 16), false),
            (KernelVersion::new(4, 17), true),
            (KernelVersion::default(), true),
        ] {
            let mut mm = unmovable_holes();
            mm.cfg.kernel = kernel;
            mm.node.kswapd_failures = crate::types::MAX_RECLAIM_RETRIES;
            assert!(mm.kcompactd_node_suitable_for(9), "{kernel}");
            mm.wakeup_kswapd(9, false);
            assert!(!mm.kswapd.wake_pending, "{kernel}");
            assert_eq!(mm.kcompactd.wake_pending, wakes, "{kernel}");
        }
    }

    /// Before v4.15 ("mm, compaction: kcompactd should not ignore pageblock skip")
    /// kcompactd compacted with `.ignore_skip_hint = true`: pageblocks whose skip bit is set
    /// are scanned anyway. From v4.15 kcompactd honours the bits and, with every block
    /// marked, scans nothing.
    #[test]
    fn kcompactd_ignores_skip_bits_before_4_15() {
        use crate::workingset::KernelVersion;
        for (kernel, scans) in [
            (KernelVersion::new(4, 6), true),
            (KernelVersion::new(4, 14), true),
            (KernelVersion::new(4, 15), false),
            (KernelVersion::default(), false),
        ] {
            let mut mm = mm4096_filled();
            mm.cfg.kernel = kernel;
            for i in (0..3968).step_by(2) {
                zap_anon(&mut mm, 0, i);
            }
            for b in mm.zones[0].pageblock.iter_mut() {
                *b |= crate::mmzone::PB_SKIP;
            }
            assert!(!order9_free(&mm));
            mm.kcompactd.max_order = 9;
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            mm.kcompactd_do_work(&mut ctx);
            assert_eq!(
                mm.ev.get(Ev::KcompactdMigrateScanned) > 0,
                scans,
                "{kernel}"
            );
            assert_eq!(order9_free(&mm), scans, "{kernel}");
            mm.check_invariants().unwrap();
        }
    }

    /// Proactive compaction ("mm: proactive compaction") arrived in v5.9: before it,
    /// kcompactd's timer does nothing however fragmented the node is.
    #[test]
    fn no_proactive_compaction_before_5_9() {
        use crate::workingset::KernelVersion;
        for (kernel, proactive) in [
            (KernelVersion::new(5, 8), false),
            (KernelVersion::new(4, 6), false),
            (KernelVersion::new(5, 9), true),
        ] {
            let mut mm = unmovable_holes();
            mm.cfg.kernel = kernel;
            assert!(mm.fragmentation_score_node() > proactive_wmarks(20).1);
            assert_eq!(mm.should_proactive_compact_node(), proactive, "{kernel}");
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            assert_eq!(
                mm.kcompactd_proactive(&mut ctx).is_some(),
                proactive,
                "{kernel}"
            );
        }
    }

    /// Watermark boosting arrived in v5.0 ("mm: reclaim small amounts of memory when an
    /// external fragmentation event occurs"): before it, `vm.watermark_boost_factor` has no
    /// effect and a fallback to another migratetype boosts nothing.
    #[test]
    fn no_watermark_boost_before_5_0() {
        use crate::workingset::KernelVersion;
        for (kernel, boosts) in [
            (KernelVersion::new(4, 20), false),
            (KernelVersion::new(5, 0), true),
        ] {
            // As in unmovable_allocations_among_movable_ones_fragment_and_boost: kernel
            // allocations claim blocks below pageblock order among anon holes.
            let mut mm = anon_holes(kernel);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            let mut boosted = false;
            for _ in 0..2000 {
                mm.alloc_kernel_pages(&mut ctx, 0, Gfp::KERNEL).unwrap();
                boosted |= mm.zones[0].watermark_boost > 0;
            }
            assert!(mm.ev.get(Ev::ExtfragFallback) > 1, "{kernel}");
            assert_eq!(boosted, boosts, "{kernel}");
        }
    }

    use crate::mmzone::PB_MT_MASK;

    #[test]
    fn deferral_stops_repeated_failing_compaction() {
        let mut mm = unmovable_holes();
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let mut ran = 0;
        let mut deferred = 0;
        for _ in 0..10 {
            let r = mm.try_to_compact_pages(&mut ctx, 9, mt::UNMOVABLE, CompactPriority::SyncLight);
            if r == CompactResult::Deferred {
                deferred += 1;
            } else {
                assert_eq!(r, CompactResult::Complete);
                ran += 1;
            }
        }
        // Failures at calls 1, 3 and 7 (defer_shift 1, 2, 3): 3 runs, 7 deferred.
        assert_eq!((ran, deferred), (3, 7));
        assert_eq!(mm.zones[0].compact.defer_shift, 3);
    }

    #[test]
    fn compaction_suitable_outcomes() {
        let mut mm = unmovable_holes();
        // ~2096 free pages in order-0 holes (and the untouched tail): fragmented.
        assert!(mm.compaction_suitable(0, 9));
        assert_eq!(
            mm.compaction_suit_allocation_order(0, 9, Wmark::Min),
            CompactResult::Continue
        );
        // Order <= 3 allocations are already satisfied from the free lists.
        assert_eq!(
            mm.compaction_suit_allocation_order(0, 0, Wmark::Min),
            CompactResult::Success
        );
        // vm.extfrag_threshold = 1000: every failure counts as lack of memory.
        mm.cfg.extfrag_threshold = 1000;
        assert!(!mm.compaction_suitable(0, 9));
        // Not enough free memory for low + compact_gap(9) = 1024 + low: skipped.
        mm.cfg.extfrag_threshold = 500;
        mm.zones[0].wmark = [1500, 1600, 1700];
        assert!(!mm.compaction_suitable(0, 9));
        assert_eq!(
            mm.compaction_suit_allocation_order(0, 9, Wmark::Min),
            CompactResult::Skipped
        );
    }

    #[test]
    fn unmovable_allocations_among_movable_ones_fragment_and_boost() {
        let mut mm = anon_holes(crate::workingset::KernelVersion::default());
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        // Kernel allocations: first whole free pageblocks are claimed (no boost), then the
        // holes: a claim below pageblock order boosts the watermark and wakes kswapd.
        let mut boosted = false;
        for _ in 0..2000 {
            mm.alloc_kernel_pages(&mut ctx, 0, Gfp::KERNEL).unwrap();
            boosted |= mm.zones[0].watermark_boost > 0;
        }
        assert!(mm.ev.get(Ev::ExtfragFallback) > 1);
        assert!(
            boosted,
            "a fallback below pageblock order boosted the watermark"
        );
        assert!(mm.kswapd.wake_pending);
        // Pageblocks now mix kernel pages with movable ones: compaction cannot empty them.
        let mixed = (0..16u32)
            .filter(|b| {
                let r = b * 512..(b + 1) * 512;
                let kernel = r.clone().any(|p| {
                    mm.pages.hot[p as usize].flags == pg::HEAD && mm.pages.obj[p as usize] == NIL
                });
                let lru = r.clone().any(|p| mm.pages.test(p, pg::LRU));
                kernel && lru
            })
            .count();
        assert!(mixed >= 2, "{mixed} mixed pageblocks");
        mm.check_invariants().unwrap();
    }

    /// kswapd going to sleep resets the skip bits a whole-zone direct compaction asked to
    /// flush, under both policies (the pre-v4.5 kswapd_try_to_sleep() does it too).
    #[test]
    fn kswapd_going_to_sleep_flushes_skip_bits_under_both_policies() {
        for policy in [KswapdCompaction::Kcompactd, KswapdCompaction::Kswapd] {
            let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
            cfg.kswapd_compaction = policy;
            let mut mm = Mm::new(cfg);
            mm.zones[0].set_pageblock_skip(0, true);
            mm.zones[0].compact.blockskip_flush = true;
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            assert!(mm.pgdat_balanced(0));
            assert_eq!(mm.kswapd_step(&mut ctx), KswapdNext::Done);
            assert!(!mm.zones[0].pageblock_skip(0), "{policy:?}");
            assert!(!mm.zones[0].compact.blockskip_flush, "{policy:?}");
        }
    }

    #[test]
    fn kswapd_reclaims_for_the_boost_without_swapping() {
        // Big enough that kswapd's priority-12 pass scans something (size >> 12).
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 32768);
        cfg.readahead_max_pages = 0;
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for i in 0..5000 {
            mm.touch(&mut ctx, 0, i, true);
        }
        for i in 0..20000 {
            mm.file_read(&mut ctx, 1, i, 1);
        }
        // Plenty free (> high + boost): balanced, but boosted.
        mm.zones[0].watermark_boost = 512;
        assert!(mm.pgdat_balanced(0));
        let mut steps = 0;
        loop {
            let mut ctx = Ctx::new(0, &mut io, 0);
            steps += 1;
            if mm.kswapd_step(&mut ctx) == KswapdNext::Done || steps > 100 {
                break;
            }
        }
        let stolen = mm.ev.get(Ev::PgStealKswapd);
        assert!(stolen >= 512, "boosted reclaim freed {stolen}");
        assert_eq!(mm.ev.get(Ev::PswpOut), 0);
        assert_eq!(mm.ev.get(Ev::PgStealAnon), 0);
        assert_eq!(mm.zones[0].watermark_boost, 0);
        mm.check_invariants().unwrap();
    }

    /// A large page-cache folio for which only order-0 free pages are available is split
    /// and migrated page by page (`migrate_pages_batch()`'s -ENOMEM → `try_split_folio()`),
    /// instead of ending the compaction with -ENOMEM.
    #[test]
    fn large_file_folio_is_split_when_only_order0_targets_exist() {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
        cfg.watermark_boost_factor = 0;
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for i in 0..256 {
            mm.file_read(&mut ctx, 1, i, 1);
        }
        let src = (0..4096u32)
            .find(|&p| {
                mm.pages.test(p, pg::HEAD | pg::LRU)
                    && mm.pages.hot[p as usize].order >= 2
                    && mm.pages.obj[p as usize] == 1
            })
            .expect("readahead made a large folio");
        let order = mm.pages.hot[src as usize].order as u32;
        let (index, nr) = (mm.pages.index[src as usize], 1u32 << order);
        // Order-0 targets only: kernel pages with every other one freed.
        let pfns: Vec<Pfn> = (0..2 * nr)
            .map(|_| mm.alloc_kernel_pages(&mut ctx, 0, Gfp::NOWAIT).unwrap())
            .collect();
        let mut cc = CompactControl::new(0, 9, MigrateMode::SyncLight, Compactor::Kcompactd);
        for &p in pfns.iter().step_by(2) {
            mm.free_kernel_pages(p);
            assert_eq!(mm.pages.hot[p as usize].order, 0);
            mm.zones[0].isolate_free_block(&mut mm.pages, p);
            cc.freepages.push(p);
            cc.nr_freepages += 1;
        }
        // No more free pages may be isolated (below the min watermark).
        mm.zones[0].wmark = [1 << 20; 3];
        mm.lru_del(src);
        mm.pages.set(src, pg::ISOLATED);
        cc.migratepages.push(src);
        cc.nr_migratepages = nr as u64;
        assert!(mm.migrate_pages(&mut ctx, &mut cc), "no -ENOMEM");
        assert_eq!(mm.ev.get(Ev::PgmigrateSuccess), nr as u64);
        assert_eq!(cc.nr_freepages, 0);
        for k in 0..nr {
            let e = mm.objects[1].ent[(index + k) as usize];
            assert_eq!(crate::filemap::cache_entry_order(e), 0);
            let p = (e & u32::MAX as u64) as Pfn;
            assert!(pfns.contains(&p), "page {k} moved to a target");
            assert!(mm.pages.test(p, pg::LRU));
        }
        mm.zones[0].wmark = [0; 3];
        mm.check_invariants().unwrap();
    }

    /// Async direct compaction gives up on an order-aligned chunk at the first page it
    /// cannot isolate and puts back what it took there (`skip_on_failure`); kcompactd
    /// isolates the movable folios of the same block.
    #[test]
    fn async_direct_compaction_skips_a_block_with_a_pinned_page() {
        let mut mm = mm4096_filled();
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        // An anon block (MOVABLE) with one unmovable kernel page in the middle.
        let block = (0..8u32)
            .map(|b| b * 512)
            .find(|&b| (b..b + 512).all(|p| mm.pages.test(p, pg::LRU)))
            .expect("a block of anon pages");
        let victim = block + 10;
        let e = (0..3968)
            .find(|&i| pte_pfn(mm.objects[0].ent[i]) == victim && pte_present(mm.objects[0].ent[i]))
            .unwrap();
        zap_anon(&mut mm, 0, e as u32);
        let k = mm.alloc_kernel_pages(&mut ctx, 0, Gfp::NOWAIT).unwrap();
        assert_eq!(k, victim, "the freed page is reused at once");
        for (who, mode, want) in [
            (Compactor::Direct, MigrateMode::Async, 0),
            (
                Compactor::Kcompactd,
                MigrateMode::SyncLight,
                COMPACT_CLUSTER_MAX,
            ),
        ] {
            let mut cc = CompactControl::new(0, 9, mode, who);
            cc.migratetype = mt::MOVABLE;
            cc.free_pfn = 4096 - 512;
            mm.isolate_migratepages_block(&mut cc, block, block + 512);
            assert_eq!(cc.migratepages.len(), want, "{who:?}");
            for &p in &cc.migratepages {
                mm.pages.clear(p, pg::ISOLATED);
                mm.lru_add(p, false);
            }
            mm.zones[0].set_pageblock_skip(block, false);
        }
        mm.check_invariants().unwrap();
    }
}
