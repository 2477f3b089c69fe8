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
//! pageblock at a time, at most COMPACT_CLUSTER_MAX folios per batch, skip bits, source
//! suitability by pageblock type for async direct compaction), `isolate_freepages()` /
//! `isolate_freepages_block()` (only MOVABLE pageblocks, never a free block of pageblock
//! order; free blocks kept whole per order, as v6.9+ does, and split by
//! `compaction_alloc()`), `__compact_finished()`, `compaction_suitable()` with the
//! fragmentation index, deferral, the cached scanner positions, and `compact_blockskip_flush`.
//! Migration moves a folio's state to the new frames, repoints the PTE, the page-cache
//! entries or the swap-cache slot at it, frees the old frames and puts the new folio back on
//! the LRU with `folio_add_lru()` (as `migrate_folio_move()` does: flags such as active,
//! referenced, workingset and the multi-gen refs are kept, the list position is the head).
//! Callers: direct compaction in the allocator slow path (`try_to_compact_pages()`),
//! kcompactd (`kcompactd_do_work()`, proactive compaction) and the pre-v4.5 kswapd
//! (`compact_pgdat()`, `policy.kswapd_compaction = "kswapd"`).
//!
//! # Where we differ from the kernel (v6.18)
//! - No `fast_find_migrateblock()` / `fast_isolate_freepages()` (the linear scanners only),
//!   no async scan-stride doubling, no skip-on-failure of async direct compaction, no capture
//!   of a freed block (`compaction_capture()`), no lock contention or `need_resched()` aborts.
//! - Folios under writeback or with a read in flight are not isolated (sync-light migration
//!   would not wait for them; the model never uses MIGRATE_SYNC).
//! - Only LRU folios are movable (no `movable_ops` pages such as zsmalloc or balloon); as
//!   in the kernel, a folio of at least the target order or of pageblock order (a THP, an
//!   order-9 page-cache folio) is left in place (`skip_isolation_on_order()`).
//!
//! # Kernel references
//! mm/compaction.c `compact_zone()`, `isolate_migratepages()`,
//! `isolate_migratepages_block()`, `isolate_freepages()`, `isolate_freepages_block()`,
//! `compaction_alloc()`, `__compact_finished()`, `compaction_suitable()`,
//! `compaction_suit_allocation_order()`, `defer_compaction()`, `compaction_deferred()`,
//! `compaction_defer_reset()`, `compaction_restarting()`, `__reset_isolation_suitable()`,
//! `try_to_compact_pages()`, `fragmentation_score_zone()`; mm/page_alloc.c
//! `__alloc_pages_direct_compact()`; mm/migrate.c `migrate_pages()`, `migrate_folio_move()`.

use crate::filemap::cache_entry;
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
    start_pfn: Pfn,
    end_pfn: Pfn,
}

#[inline]
fn pageblock_start(pfn: Pfn) -> Pfn {
    pfn & !(PAGEBLOCK_NR_PAGES as u32 - 1)
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
        }
    }
}

impl Mm {
    /// Kernel: `__compaction_suitable()` + `compaction_suitable()`: is there enough free
    /// memory to migrate into (order-0 check against low/min + compact_gap), and would a
    /// failure be due to fragmentation (`fragmentation_index() > vm.extfrag_threshold`)?
    pub fn compaction_suitable(&self, zi: usize, order: u32) -> bool {
        let z = &self.zones[zi];
        let w = if order > PAGE_ALLOC_COSTLY_ORDER {
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
    /// watermark: order-0 free pages above `watermark + compact_gap(order)`, and for costly
    /// orders a fragmentation index above `vm.extfrag_threshold`.
    pub fn compaction_suitable_at(&self, zi: usize, order: u32, watermark: u64) -> bool {
        let z = &self.zones[zi];
        if !z.watermark_ok(0, watermark + compact_gap(order)) {
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

    /// Kernel: `fragmentation_score_node()`: zone scores weighted by present pages.
    pub fn fragmentation_score_node(&self) -> u64 {
        let node: u64 = self.zones.iter().map(|z| z.managed).sum();
        (0..self.zones.len())
            .map(|zi| self.zones[zi].managed * self.fragmentation_score_zone(zi) / (node + 1))
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

    /// Kernel: `compact_zone()`.
    pub fn compact_zone(&mut self, ctx: &mut Ctx, cc: &mut CompactControl) -> CompactResult {
        let zi = cc.zi;
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
            let c = &self.zones[zi].compact;
            cc.migrate_pfn = c.cached_migrate_pfn[sync];
            cc.free_pfn = c.cached_free_pfn;
            if cc.free_pfn < zstart || cc.free_pfn >= zend {
                cc.free_pfn = pageblock_start(zend - 1).max(zstart);
            }
            if cc.migrate_pfn < zstart || cc.migrate_pfn >= zend {
                cc.migrate_pfn = zstart;
            }
        }
        let scanned0 = (cc.migrate_scanned, cc.free_scanned);
        let mut ret;
        loop {
            ret = self.compact_finished(cc);
            if ret != CompactResult::Continue {
                break;
            }
            if !self.isolate_migratepages(cc) {
                continue;
            }
            if !self.migrate_pages(ctx, cc) && !self.scanners_met(cc) {
                // -ENOMEM from compaction_alloc(): out of free targets.
                ret = CompactResult::Contended;
                break;
            }
        }
        // Release the free pages left over.
        for pfn in std::mem::take(&mut cc.freepages) {
            let o = self.pages.order[pfn as usize] as u32;
            self.zones[zi].free_block(&mut self.pages, pfn, o);
        }
        cc.nr_freepages = 0;
        if !cc.whole_zone && ret != CompactResult::Complete && ret != CompactResult::PartialSkipped
        {
            let c = &mut self.zones[zi].compact;
            c.cached_migrate_pfn[sync] = cc.migrate_pfn;
            c.cached_free_pfn = cc.free_pfn;
        }
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

    /// Kernel: `isolate_migratepages()` for one pageblock: returns true when folios were
    /// isolated.
    fn isolate_migratepages(&mut self, cc: &mut CompactControl) -> bool {
        let zi = cc.zi;
        let low = cc.migrate_pfn.max(self.zones[zi].start_pfn);
        let block_end =
            (pageblock_start(low) + PAGEBLOCK_NR_PAGES as u32).min(self.zones[zi].end_pfn);
        // Never cross the free scanner's pageblock.
        if pageblock_start(low) >= cc.free_pfn {
            cc.migrate_pfn = cc.free_pfn;
            return false;
        }
        let z = &self.zones[zi];
        let skip = !cc.ignore_skip_hint && z.pageblock_skip(low);
        let bt = z.pageblock_mt(low);
        let first_free_big = self
            .pages
            .test(pageblock_start(low).max(z.start_pfn), pg::BUDDY)
            && self.pages.order[pageblock_start(low).max(z.start_pfn) as usize] as u32
                >= PAGEBLOCK_ORDER;
        // suitable_migration_source(): async direct compaction only migrates from blocks of
        // the request's type (any movable type for a movable request).
        let unsuitable = first_free_big
            || (cc.mode == MigrateMode::Async
                && cc.who == Compactor::Direct
                && bt != cc.migratetype);
        if skip || unsuitable {
            cc.migrate_pfn = block_end;
            return false;
        }
        self.isolate_migratepages_block(cc, low, block_end)
    }

    /// Kernel: `isolate_migratepages_block()`.
    fn isolate_migratepages_block(&mut self, cc: &mut CompactControl, low: Pfn, end: Pfn) -> bool {
        let mut p = low;
        let mut nr_isolated = 0u64;
        while p < end {
            let i = p as usize;
            let f = self.pages.flags[i];
            let o = self.pages.order[i] as u32;
            if f & pg::BUDDY != 0 {
                cc.migrate_scanned += 1 << o;
                p += 1 << o;
                continue;
            }
            if f & pg::HEAD == 0 {
                cc.migrate_scanned += 1;
                p += 1;
                continue;
            }
            let nr = 1u64 << o;
            cc.migrate_scanned += nr;
            let movable = !skip_isolation_on_order(o, cc.order)
                && f & pg::LRU != 0
                && f & (pg::WRITEBACK | pg::LOCKED | pg::ISOLATED) == 0
                && self.pages.obj[i] != NIL;
            if movable {
                // folio_isolate_lru()
                self.lru_del(p);
                self.pages.set(p, pg::ISOLATED);
                cc.migratepages.push(p);
                cc.nr_migratepages += nr;
                nr_isolated += nr;
            }
            p += nr as u32;
            if cc.migratepages.len() >= COMPACT_CLUSTER_MAX {
                break;
            }
        }
        let p = p.min(end);
        if p >= end && nr_isolated == 0 && !cc.ignore_skip_hint {
            self.zones[cc.zi].set_pageblock_skip(low, true);
        }
        cc.migrate_pfn = p;
        cc.isolated += nr_isolated;
        self.ev.add(Ev::CompactIsolated, nr_isolated);
        nr_isolated > 0
    }

    /// Kernel: `isolate_freepages()`: walk pageblocks backward from the free scanner
    /// isolating free blocks until there are as many free pages as folios to migrate.
    fn isolate_freepages(&mut self, cc: &mut CompactControl) {
        let zi = cc.zi;
        let zstart = self.zones[zi].start_pfn;
        let low_limit = pageblock_start(cc.migrate_pfn) + PAGEBLOCK_NR_PAGES as u32;
        let mut block = cc.free_pfn;
        while block >= low_limit && block >= zstart {
            let end = (block + PAGEBLOCK_NR_PAGES as u32).min(self.zones[zi].end_pfn);
            let z = &self.zones[zi];
            let head_big = self.pages.test(block, pg::BUDDY)
                && self.pages.order[block as usize] as u32 >= PAGEBLOCK_ORDER;
            let suitable =
                !head_big && (cc.ignore_block_suitable || z.pageblock_mt(block) == mt::MOVABLE);
            let skip = !cc.ignore_skip_hint && z.pageblock_skip(block);
            let mut got = 0u64;
            let mut p = block;
            if suitable && !skip {
                while p < end {
                    let i = p as usize;
                    let o = self.pages.order[i] as u32;
                    if self.pages.flags[i] & pg::BUDDY != 0 {
                        cc.free_scanned += 1 << o;
                        self.zones[zi].isolate_free_block(&mut self.pages, p);
                        // An isolated free page: neither PageBuddy nor a folio.
                        self.pages.order[i] = o as u8;
                        cc.freepages.push(p);
                        cc.nr_freepages += 1 << o;
                        got += 1 << o;
                        p += 1 << o;
                    } else {
                        cc.free_scanned += 1;
                        p += 1;
                    }
                    if cc.nr_freepages >= cc.nr_migratepages {
                        break;
                    }
                }
                if got == 0 && p >= end && !cc.ignore_skip_hint {
                    self.zones[zi].set_pageblock_skip(block, true);
                }
            }
            self.ev.add(Ev::CompactIsolated, got);
            cc.isolated += got;
            if cc.nr_freepages >= cc.nr_migratepages && p < end {
                // Resume in this block next time.
                cc.free_pfn = block;
                return;
            }
            if block < PAGEBLOCK_NR_PAGES as u32 {
                cc.free_pfn = 0;
                return;
            }
            block -= PAGEBLOCK_NR_PAGES as u32;
            cc.free_pfn = block;
            if cc.nr_freepages >= cc.nr_migratepages {
                return;
            }
        }
        cc.free_pfn = cc
            .free_pfn
            .min(low_limit.saturating_sub(PAGEBLOCK_NR_PAGES as u32));
    }

    /// Kernel: `compaction_alloc()`: the smallest isolated free block of at least `order`,
    /// split down to it (the rest stays isolated).
    fn compaction_alloc(&mut self, cc: &mut CompactControl, order: u32) -> Option<Pfn> {
        let mut best: Option<(usize, u32)> = None;
        for (k, &p) in cc.freepages.iter().enumerate() {
            let o = self.pages.order[p as usize] as u32;
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
            self.pages.order[buddy as usize] = o as u8;
            cc.freepages.push(buddy);
        }
        self.pages.order[pfn as usize] = order as u8;
        cc.nr_freepages -= 1 << order;
        Some(pfn)
    }

    /// Kernel: `migrate_pages()` over the isolated folios. Returns false when it ran out of
    /// free pages (-ENOMEM); folios that were not migrated go back to the LRU.
    fn migrate_pages(&mut self, ctx: &mut Ctx, cc: &mut CompactControl) -> bool {
        let list = std::mem::take(&mut cc.migratepages);
        let mut ok = true;
        for (k, &src) in list.iter().enumerate() {
            let order = self.pages.order[src as usize] as u32;
            let mut dst = self.compaction_alloc(cc, order);
            if dst.is_none() {
                self.isolate_freepages(cc);
                dst = self.compaction_alloc(cc, order);
            }
            let Some(dst) = dst else {
                // putback_movable_pages() for the rest.
                for &p in &list[k..] {
                    self.pages.clear(p, pg::ISOLATED);
                    self.lru_add(p, false);
                }
                self.ev.add(Ev::PgmigrateFail, (list.len() - k) as u64);
                ok = false;
                break;
            };
            self.migrate_folio(src, dst);
            let cost = (1u64 << order) * self.cfg.costs.migrate_per_page_ns;
            ctx.cpu_ns += cost;
            self.compact_cpu_ns[cc.who as usize] += cost;
            self.ev.add(Ev::PgmigrateSuccess, 1 << order);
        }
        cc.nr_migratepages = 0;
        ok
    }

    /// Kernel: `migrate_folio_move()`: move an isolated folio's state to `dst`, repoint every
    /// reference, free the old frames and put `dst` on the LRU (`folio_add_lru()`).
    fn migrate_folio(&mut self, src: Pfn, dst: Pfn) {
        let (s, d) = (src as usize, dst as usize);
        let order = self.pages.order[s] as u32;
        let p = &mut self.pages;
        p.flags[d] = (p.flags[s] & !pg::ISOLATED) | pg::HEAD;
        p.obj[d] = p.obj[s];
        p.index[d] = p.index[s];
        p.order[d] = order as u8;
        p.memcg[d] = p.memcg[s];
        p.swap_slot[d] = p.swap_slot[s];
        p.swap_area[d] = p.swap_area[s];
        p.io_done_ns[d] = p.io_done_ns[s];
        let obj = p.obj[s] as usize;
        let index = p.index[s] as usize;
        let flags = p.flags[d];
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
                    let a = self.pages.swap_area[d] as usize;
                    let slot = self.pages.swap_slot[d] as usize;
                    let v = self.swap[a].slots[slot];
                    debug_assert!(v & SLOT_CACHE != 0 && v as u32 == src);
                    self.swap[a].slots[slot] = (v & !(u32::MAX as u64)) | dst as u64;
                }
            }
        }
        // Free the source frames (the new folio keeps the memcg charge).
        self.pages.flags[s] = 0;
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

    #[test]
    fn compaction_makes_an_order9_block_by_migrating_movable_pages() {
        // The page-table pages are unmovable: the first one steals a pageblock, which would
        // boost the watermark and reclaim; without boosting the region fits.
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
        cfg.readahead_max_pages = 0;
        cfg.watermark_boost_factor = 0;
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for i in 0..3968 {
            mm.touch(&mut ctx, 0, i, true);
        }
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
        assert_eq!(r, CompactResult::PartialSkipped);
        assert!(!order9_free(&mm));
        assert_eq!(mm.ev.get(Ev::PgmigrateSuccess), 0);
        mm.check_invariants().unwrap();
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
                assert_eq!(r, CompactResult::PartialSkipped);
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
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 8192);
        cfg.objects[0].size_pages = 16384;
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        // Anon memory with every other page freed again: order-0 holes in MOVABLE blocks.
        for i in 0..7000u32 {
            mm.touch(&mut ctx, 0, i, true);
        }
        for i in (0..7000u32).step_by(2) {
            zap_anon(&mut mm, 0, i);
        }
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
                    mm.pages.flags[p as usize] == pg::HEAD && mm.pages.obj[p as usize] == NIL
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
}
