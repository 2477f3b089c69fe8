//! The page allocator's entry points as user-page allocations see them: the fast path against
//! the low watermark, waking kswapd, the slow path against the min watermark, direct reclaim
//! with its retry rule, and OOM.
//!
//! # Where we differ from the kernel (v6.18)
//! - Allocations are user pages (GFP_HIGHUSER_MOVABLE): the zonelist is Normal then DMA32,
//!   no lowmem_reserve, no ALLOC_NOFRAGMENT, no per-CPU page lists, no compaction yet.
//! - Large page-cache folios are allocated like readahead does (`__GFP_NORETRY`-style): when
//!   no free block of the order exists above the min watermark they fail at once and the
//!   caller falls back to a smaller order; only order-0 allocations enter direct reclaim.
//! - OOM kills the allocating task (the simulator stops it); its memory is not freed.
//!
//! # Kernel references
//! mm/page_alloc.c `get_page_from_freelist()`, `__alloc_pages_slowpath()`,
//! `should_reclaim_retry()`, `wakeup_kswapd()`; mm/vmscan.c `try_to_free_pages()`.

use crate::mmzone::Wmark;
use crate::page::pg;
use crate::types::*;
use crate::vmstat::Ev;
use crate::{Ctx, Mm};

impl Mm {
    /// Kernel: `get_page_from_freelist()` over the zonelist (Normal, then DMA32) against
    /// watermark `w`.
    fn get_page_from_freelist(&mut self, order: u32, w: Wmark) -> Option<Pfn> {
        for zi in (0..self.zones.len()).rev() {
            let z = &self.zones[zi];
            let mark = z.wmark_pages(w);
            if !z.watermark_ok(order, mark + (1 << order) - 1) {
                continue;
            }
            if let Some(pfn) = self.zones[zi].rmqueue(&mut self.pages, order) {
                let ev = if self.zones[zi].name == "DMA32" {
                    Ev::PgallocDma32
                } else {
                    Ev::PgallocNormal
                };
                self.ev.add(ev, 1 << order);
                return Some(pfn);
            }
        }
        None
    }

    /// Allocate a folio of `order` for memcg `memcg` and charge it. Returns None when a large
    /// allocation cannot be satisfied cheaply (caller falls back) or, for order 0, on OOM
    /// (`ctx.oom` set).
    pub fn alloc_folio(&mut self, ctx: &mut Ctx, order: u32, memcg: u16) -> Option<Pfn> {
        if self.oom_pending && !ctx.kswapd {
            // kswapd's lru_gen_age_node() found nothing older than lru_gen.min_ttl_ms and
            // called out_of_memory(): this task is the victim.
            self.oom_pending = false;
            self.ev.add(Ev::OomKill, 1);
            ctx.oom = true;
            return None;
        }
        let nr = 1u64 << order;
        if !self.try_charge(ctx, memcg, nr) {
            ctx.oom = true;
            return None;
        }
        ctx.cpu_ns += self.cfg.costs.page_alloc_ns;
        let pfn = match self.alloc_pages(ctx, order) {
            Some(p) => p,
            None => {
                self.uncharge(memcg, nr);
                return None;
            }
        };
        let i = pfn as usize;
        self.pages.flags[i] = pg::HEAD;
        self.pages.order[i] = order as u8;
        self.pages.memcg[i] = memcg;
        self.pages.io_done_ns[i] = 0;
        Some(pfn)
    }

    /// Kernel: `__alloc_pages()` → fast path, `wake_all_kswapds()`, slow path with direct
    /// reclaim and `should_reclaim_retry()`.
    fn alloc_pages(&mut self, ctx: &mut Ctx, order: u32) -> Option<Pfn> {
        if let Some(p) = self.get_page_from_freelist(order, Wmark::Low) {
            return Some(p);
        }
        self.wakeup_kswapd(order);
        if let Some(p) = self.get_page_from_freelist(order, Wmark::Min) {
            return Some(p);
        }
        if order > 0 {
            return None;
        }
        let mut no_progress_loops = 0;
        loop {
            let progress = self.try_to_free_pages(ctx, order);
            if let Some(p) = self.get_page_from_freelist(order, Wmark::Min) {
                return Some(p);
            }
            if progress > 0 {
                no_progress_loops = 0;
            } else {
                no_progress_loops += 1;
                self.reclaim_throttle_writeback(ctx);
            }
            // should_reclaim_retry(): give up when no zone could reach the min watermark even
            // if everything reclaimable were reclaimed, or after MAX_RECLAIM_RETRIES loops
            // without progress.
            let can_anon = self.nr_swap_free() > 0;
            let reclaimable: u64 = self
                .zones
                .iter()
                .map(|z| {
                    z.nr_lru[LruList::InactiveFile.idx()]
                        + z.nr_lru[LruList::ActiveFile.idx()]
                        + if can_anon {
                            z.nr_lru[LruList::InactiveAnon.idx()]
                                + z.nr_lru[LruList::ActiveAnon.idx()]
                        } else {
                            0
                        }
                        + z.free
                })
                .max()
                .unwrap_or(0);
            let min = self
                .zones
                .iter()
                .map(|z| z.wmark_pages(Wmark::Min))
                .min()
                .unwrap_or(0);
            if no_progress_loops > MAX_RECLAIM_RETRIES || reclaimable <= min {
                self.ev.add(Ev::OomKill, 1);
                ctx.oom = true;
                return None;
            }
        }
    }

    /// Free a folio that is off every list and unmapped: uncharge, return to the buddy.
    pub fn free_folio(&mut self, pfn: Pfn) {
        let i = pfn as usize;
        let order = self.pages.order[i] as u32;
        let nr = 1u64 << order;
        let memcg = self.pages.memcg[i];
        self.uncharge(memcg, nr);
        self.pages.flags[i] = 0;
        self.pages.obj[i] = NIL;
        self.ev.add(Ev::PgFree, nr);
        let zi = self.zone_of(pfn);
        self.zones[zi].free_block(&mut self.pages, pfn, order);
    }

    /// Kernel: `wakeup_kswapd()`: note the order and wake kswapd unless the node is already
    /// balanced or kswapd has failed MAX_RECLAIM_RETRIES times.
    pub fn wakeup_kswapd(&mut self, order: u32) {
        self.kswapd.order = self.kswapd.order.max(order);
        if self.node.kswapd_failures >= MAX_RECLAIM_RETRIES {
            return;
        }
        if self.pgdat_balanced(order) {
            return;
        }
        self.kswapd.wake_pending = true;
    }

    /// Kernel: `pgdat_balanced()`: any eligible zone meets its high watermark at `order`.
    pub fn pgdat_balanced(&self, order: u32) -> bool {
        self.zones
            .iter()
            .any(|z| z.watermark_ok(order, z.wmark_pages(Wmark::High)))
    }
}
