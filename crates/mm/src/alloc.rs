//! The page allocator's entry points: the fast path against the low watermark (with
//! `ALLOC_NOFRAGMENT`), waking kswapd, the slow path against the min watermark, direct
//! compaction and direct reclaim with their retry rules, and OOM.
//!
//! # Where we differ from the kernel (v6.18)
//! - The zonelist is Normal, DMA32, DMA (the populated ones); every allocation's highest
//!   zone is Normal, so each zone keeps its `lowmem_reserve[ZONE_NORMAL]` ([`crate::mmzone`]).
//!   Order-0 pages come from and go to per-CPU lists ([`crate::mmzone::PerCpuPages`]) of
//!   the CPU the thread runs on; no high-order per-CPU lists (v5.13+), no capture of a
//!   compacted block. `__GFP_HIGH` lowers the slow path's min watermark
//!   ([`reserve_min`]); GFP_ATOMIC's `__GFP_ATOMIC`/ALLOC_HARDER (v4.x–v6.2) is not modelled
//!   (no workload allocates with it).
//! - User pages (GFP_HIGHUSER_MOVABLE) of order 0 take the full slow path below; order-0
//!   readahead pages (`readahead_gfp_mask()`, `__GFP_NORETRY`) fail after one round of direct
//!   reclaim instead of retrying or invoking OOM, and readahead ends its window there. Large
//!   page-cache folios are allocated like readahead does, but without direct reclaim or
//!   compaction (the model's `__GFP_NORETRY` readahead allocation stops after waking kswapd
//!   and trying the min watermark; the caller falls back to a smaller order).
//! - Order > 0 allocations that may enter direct reclaim (kernel allocations of the
//!   `kalloc` workload, THP faults with a direct-compaction defrag mode) follow
//!   `__alloc_pages_slowpath()`: async compaction first for costly orders, then rounds of
//!   reclaim and compaction; costly orders without `__GFP_RETRY_MAYFAIL` give up after one
//!   round, as the kernel does; `should_compact_retry()` raises the compaction priority.
//! - OOM kills the allocating task (the simulator stops it); its memory is not freed.
//!
//! # Kernel references
//! mm/page_alloc.c `get_page_from_freelist()`, `alloc_flags_nofragment()`, `rmqueue()`,
//! `__alloc_pages_slowpath()`, `__alloc_pages_direct_compact()`, `should_reclaim_retry()`,
//! `should_compact_retry()`, `wakeup_kswapd()`; mm/vmscan.c `try_to_free_pages()`.

use crate::compaction::{CompactPriority, CompactResult};
use crate::mmzone::{alloc_flags, mt, Wmark, ZONE_DMA, ZONE_DMA32, ZONE_NORMAL};
use crate::page::pg;
use crate::types::*;
use crate::vmstat::Ev;
use crate::{Ctx, Mm};

/// The parts of a gfp mask the model acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gfp {
    /// `gfp_migratetype()`: MOVABLE for user pages and page cache, RECLAIMABLE for
    /// reclaimable slab, UNMOVABLE for other kernel memory.
    pub mt: u8,
    /// `__GFP_DIRECT_RECLAIM`.
    pub direct_reclaim: bool,
    /// `__GFP_KSWAPD_RECLAIM`.
    pub kswapd_reclaim: bool,
    /// `__GFP_NORETRY`.
    pub noretry: bool,
    /// `__GFP_RETRY_MAYFAIL`.
    pub retry_mayfail: bool,
    /// `__GFP_HIGH`: the slow path may dip below the min watermark ([`reserve_min`]).
    pub high: bool,
    /// `__GFP_ATOMIC` (v4.4–v6.2, part of GFP_ATOMIC): ALLOC_HARDER, the highatomic reserve
    /// and a further quarter of the min watermark. From v6.3 the flag is gone and
    /// GFP_ATOMIC's rights follow from `!__GFP_DIRECT_RECLAIM` and `__GFP_HIGH`.
    pub atomic: bool,
}

impl Gfp {
    /// The `allocstall_<zone>` event of a direct reclaim for this mask. Kernel: `gfp_zone()`
    /// of `try_to_free_pages()`' mask, counted by `do_try_to_free_pages()` as
    /// `__count_zid_vm_events(ALLOCSTALL, sc->reclaim_idx, 1)`. `GFP_ZONE_TABLE` maps
    /// `__GFP_HIGHMEM | __GFP_MOVABLE` to ZONE_MOVABLE, so every user page, page-cache,
    /// THP and zsmalloc allocation (GFP_HIGHUSER_MOVABLE and the masks built from it) stalls
    /// as `allocstall_movable` even on a machine without a Movable zone; GFP_KERNEL and the
    /// other kernel masks (no zone modifier) as `allocstall_normal`, even on a machine
    /// without a Normal zone. The model's movable migratetype marks exactly the masks with
    /// both modifiers (no model allocation carries `__GFP_MOVABLE` without `__GFP_HIGHMEM`,
    /// nor `__GFP_DMA`/`__GFP_DMA32`).
    pub fn allocstall(self) -> Ev {
        if self.mt == mt::MOVABLE {
            Ev::AllocStallMovable
        } else {
            Ev::AllocStallNormal
        }
    }

    /// GFP_HIGHUSER_MOVABLE.
    pub const HIGHUSER_MOVABLE: Gfp = Gfp {
        mt: mt::MOVABLE,
        direct_reclaim: true,
        kswapd_reclaim: true,
        noretry: false,
        retry_mayfail: false,
        high: false,
        atomic: false,
    };
    /// GFP_KERNEL.
    pub const KERNEL: Gfp = Gfp {
        mt: mt::UNMOVABLE,
        direct_reclaim: true,
        kswapd_reclaim: true,
        noretry: false,
        retry_mayfail: false,
        high: false,
        atomic: false,
    };
    /// GFP_NOWAIT (wakes kswapd, never reclaims or compacts itself).
    pub const NOWAIT: Gfp = Gfp {
        mt: mt::UNMOVABLE,
        direct_reclaim: false,
        kswapd_reclaim: true,
        noretry: false,
        retry_mayfail: false,
        high: false,
        atomic: false,
    };
    /// GFP_ATOMIC (`__GFP_HIGH | __GFP_KSWAPD_RECLAIM`, and `__GFP_ATOMIC` before v6.3):
    /// never reclaims, may use the highatomic reserve and most of the min watermark.
    pub const ATOMIC: Gfp = Gfp {
        mt: mt::UNMOVABLE,
        direct_reclaim: false,
        kswapd_reclaim: true,
        noretry: false,
        retry_mayfail: false,
        high: true,
        atomic: true,
    };
    /// The readahead mask of a large page-cache folio (`readahead_gfp_mask()`: may reclaim,
    /// `__GFP_NORETRY`); the model stops its slow path before direct reclaim (module doc).
    pub const READAHEAD_LARGE: Gfp = Gfp {
        mt: mt::MOVABLE,
        direct_reclaim: true,
        kswapd_reclaim: true,
        noretry: true,
        retry_mayfail: false,
        high: false,
        atomic: false,
    };
    /// Readahead's mask (`readahead_gfp_mask()`: the mapping's GFP_HIGHUSER_MOVABLE with
    /// `__GFP_NORETRY | __GFP_NOWARN`). Order 0: one round of direct reclaim, then the
    /// allocation fails (no retries, no OOM) and readahead ends its window there.
    pub const READAHEAD: Gfp = Gfp::READAHEAD_LARGE;
}

/// The min watermark an allocation of `gfp` checks in the slow path, from the zone's `min`
/// (`__zone_watermark_ok()` with the slow path's alloc_flags; the fast path's flags never
/// carry these, `gfp_to_alloc_flags()` is slow-path only):
/// - `__GFP_HIGH` → ALLOC_HIGH (v4.x–v6.2) / ALLOC_MIN_RESERVE (v6.3+): `min -= min / 2`.
/// - v6.3+ ("mm/page_alloc: explicitly define how __GFP_HIGH non-blocking allocations
///   accesses reserves", 1ebbb21811b7): a `__GFP_HIGH` allocation without
///   `__GFP_DIRECT_RECLAIM` (and without `__GFP_NOMEMALLOC`) also gets ALLOC_NON_BLOCK,
///   `min -= min / 4` after the halving. Before (v4.6, the kernel of seed S4), the extra
///   quarter was ALLOC_HARDER, set by `__GFP_ATOMIC` (GFP_ATOMIC; [`Gfp::atomic`]) or a
///   real-time task, not by GFP_NOWAIT | __GFP_HIGH.
pub fn reserve_min(min: u64, gfp: Gfp, kernel: crate::workingset::KernelVersion) -> u64 {
    let mut m = min;
    if gfp.high {
        m -= m / 2;
    }
    let harder = if kernel.alloc_non_block() {
        gfp.high && !gfp.direct_reclaim
    } else {
        gfp.atomic
    };
    if harder {
        m -= m / 4;
    }
    m
}

/// The slow path's rights over the highatomic reserve (`gfp_to_alloc_flags()`): `reserves`
/// (v4.x ALLOC_HARDER; v6.3+ `ALLOC_RESERVES`: `__GFP_HIGH` or non-blocking) lets the
/// watermark check count the reserve's free pages; `highatomic` (v4.x ALLOC_HARDER; v6.3+
/// ALLOC_HIGHATOMIC, [`KernelVersion::highatomic_alloc`](crate::workingset::KernelVersion::highatomic_alloc))
/// takes from the HIGHATOMIC lists first and reserves a pageblock after a high-order
/// success; `non_block` (v6.3+ ALLOC_NON_BLOCK) falls back to the HIGHATOMIC lists when
/// every other list is empty (`rmqueue_buddy()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HighatomicRights {
    pub reserves: bool,
    pub highatomic: bool,
    pub non_block: bool,
}

/// [`HighatomicRights`] of a slow-path allocation of `order` with `gfp`.
pub fn highatomic_rights(
    gfp: Gfp,
    order: u32,
    kernel: crate::workingset::KernelVersion,
) -> HighatomicRights {
    let highatomic = kernel.highatomic_alloc(gfp.atomic, gfp.direct_reclaim, gfp.high, order);
    if !kernel.alloc_non_block() {
        return HighatomicRights {
            reserves: gfp.atomic,
            highatomic,
            non_block: false,
        };
    }
    HighatomicRights {
        reserves: gfp.high || !gfp.direct_reclaim,
        highatomic,
        non_block: !gfp.direct_reclaim,
    }
}

impl Mm {
    /// Kernel: `get_page_from_freelist()` over the zonelist (Normal, then DMA32) against
    /// watermark `w`. With `ALLOC_NOFRAGMENT` (the fast path when the preferred zone is
    /// Normal and a DMA32 zone exists: `alloc_flags_nofragment()`), a fallback may only claim
    /// whole pageblocks; when every zone fails that way the zonelist is walked again without
    /// it. After a claim boosted a zone's watermark (ZONE_BOOSTED_WATERMARK), kswapd is woken
    /// (`rmqueue()`).
    fn get_page_from_freelist(
        &mut self,
        order: u32,
        w: Wmark,
        gfp: Gfp,
        fast: bool,
    ) -> Option<Pfn> {
        let mut flags = if gfp.kswapd_reclaim {
            alloc_flags::KSWAPD
        } else {
            0
        };
        // alloc_flags_nofragment(): the preferred zone is Normal and DMA32 is populated.
        let nz = self.zones.len();
        if fast
            && nz > 1
            && self.zones[nz - 1].zone_type == ZONE_NORMAL
            && self.zones[nz - 2].zone_type == ZONE_DMA32
        {
            flags |= alloc_flags::NOFRAGMENT;
        }
        // gfp_to_alloc_flags() is the slow path's: the fast path has no reserve rights.
        let rights = if fast {
            HighatomicRights::default()
        } else {
            highatomic_rights(gfp, order, self.cfg.kernel)
        };
        loop {
            for zi in (0..self.zones.len()).rev() {
                // v6.7+: a zone found under its high watermark gets ZONE_BELOW_HIGH, which
                // shrinks its per-CPU lists' `high` on frees (Zone::nr_pcp_high). The kernel
                // then skips the allocation's own watermark test when the high one passed;
                // that test passes whenever the high one does, so the model just runs it.
                if self.zones[zi].pcp_rules.autotune && !self.zones[zi].below_high {
                    let z = &self.zones[zi];
                    let high = z.wmark_pages(Wmark::High) + (1 << order) - 1;
                    let ok = if rights == HighatomicRights::default() {
                        z.watermark_ok(order, high)
                    } else {
                        z.watermark_ok_flags(order, high, rights.reserves, rights.highatomic)
                    };
                    if !ok {
                        self.zones[zi].below_high = true;
                    }
                }
                let z = &self.zones[zi];
                let mut mark = z.wmark_pages(w);
                if w == Wmark::Min {
                    mark = reserve_min(mark, gfp, self.cfg.kernel);
                }
                let ok = if rights == HighatomicRights::default() {
                    z.watermark_ok(order, mark + (1 << order) - 1)
                } else {
                    z.watermark_ok_flags(
                        order,
                        mark + (1 << order) - 1,
                        rights.reserves,
                        rights.highatomic,
                    )
                };
                if !ok {
                    continue;
                }
                // rmqueue_buddy(): an ALLOC_HARDER / ALLOC_HIGHATOMIC allocation of order > 0
                // tries the HIGHATOMIC lists first; v6.3+ a non-blocking one falls back to
                // them when the rest is empty.
                let mut got = None;
                if rights.highatomic {
                    got = self.zones[zi].rmqueue_smallest(&mut self.pages, order, mt::HIGHATOMIC);
                }
                if got.is_none() {
                    // rmqueue(): order 0 through the per-CPU lists (pcp_allowed_order()).
                    got = if order == 0 {
                        let cpu = self.pcp_cpu;
                        self.zones[zi].rmqueue_pcplist(
                            &mut self.pages,
                            cpu,
                            gfp.mt,
                            flags,
                            &mut self.ev,
                        )
                    } else {
                        self.zones[zi].rmqueue(&mut self.pages, order, gfp.mt, flags, &mut self.ev)
                    };
                }
                if got.is_none() && rights.non_block {
                    got = self.zones[zi].rmqueue_smallest(&mut self.pages, order, mt::HIGHATOMIC);
                }
                if let (Some(pfn), true) = (got, rights.highatomic) {
                    // get_page_from_freelist(): "if this is a high-order atomic allocation
                    // then check if the pageblock should be reserved for the future".
                    self.zones[zi].reserve_highatomic_pageblock(&mut self.pages, pfn, order);
                }
                if self.zones[zi].boosted_flag {
                    // wakeup_kswapd(zone, 0, 0, zone_idx(zone)): kswapd reclaims for the
                    // boosted zone and the ones below it.
                    self.zones[zi].boosted_flag = false;
                    let idx = self.zones[zi].zone_type;
                    self.wakeup_kswapd_zone(0, false, idx);
                }
                if let Some(pfn) = got {
                    let ev = match self.zones[zi].zone_type {
                        ZONE_DMA => Ev::PgallocDma,
                        ZONE_DMA32 => Ev::PgallocDma32,
                        _ => Ev::PgallocNormal,
                    };
                    self.ev.add(ev, 1 << order);
                    return Some(pfn);
                }
            }
            if flags & alloc_flags::NOFRAGMENT == 0 {
                return None;
            }
            flags &= !alloc_flags::NOFRAGMENT;
        }
    }

    /// Allocate a folio of `order` for memcg `memcg` and charge it. Returns None when a large
    /// allocation cannot be satisfied cheaply (caller falls back) or, for order 0, on OOM
    /// (`ctx.oom` set).
    pub fn alloc_folio(&mut self, ctx: &mut Ctx, order: u32, memcg: u16) -> Option<Pfn> {
        let gfp = if order == 0 {
            Gfp::HIGHUSER_MOVABLE
        } else {
            Gfp::READAHEAD_LARGE
        };
        self.alloc_folio_gfp(ctx, order, memcg, gfp)
    }

    /// [`Mm::alloc_folio`] with an explicit gfp mask.
    pub fn alloc_folio_gfp(
        &mut self,
        ctx: &mut Ctx,
        order: u32,
        memcg: u16,
        gfp: Gfp,
    ) -> Option<Pfn> {
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
        let pfn = match self.alloc_pages(ctx, order, gfp) {
            Some(p) => p,
            None => {
                self.uncharge(memcg, nr);
                return None;
            }
        };
        let i = pfn as usize;
        self.pages.hot[i].flags = pg::HEAD;
        self.pages.hot[i].order = order as u8;
        self.pages.hot[i].memcg = memcg;
        self.pages.io_done_ns[i] = 0;
        Some(pfn)
    }

    /// Allocate `1 << order` pages of kernel memory (not on any LRU, not charged, owner NIL):
    /// the `kalloc` workload's slab, page-table and network buffers. None when the allocation
    /// fails (never OOM-kills for order > 3; for smaller orders OOM sets `ctx.oom`).
    pub fn alloc_kernel_pages(&mut self, ctx: &mut Ctx, order: u32, gfp: Gfp) -> Option<Pfn> {
        ctx.cpu_ns += self.cfg.costs.page_alloc_ns;
        let pfn = self.alloc_pages(ctx, order, gfp)?;
        let i = pfn as usize;
        self.pages.hot[i].flags = pg::HEAD;
        self.pages.hot[i].order = order as u8;
        self.pages.hot[i].memcg = 0;
        self.pages.obj[i] = NIL;
        self.pages.io_done_ns[i] = 0;
        self.node.nr_kernel_pages += 1 << order;
        Some(pfn)
    }

    /// Free kernel pages from [`Mm::alloc_kernel_pages`].
    pub fn free_kernel_pages(&mut self, pfn: Pfn) {
        let i = pfn as usize;
        let order = self.pages.hot[i].order as u32;
        self.pages.hot[i].flags = 0;
        self.node.nr_kernel_pages -= 1 << order;
        self.ev.add(Ev::PgFree, 1 << order);
        self.free_pages(pfn, order);
    }

    /// Kernel: `__free_pages()`: an order-0 page through the current CPU's per-CPU lists
    /// (`free_unref_page()`, [`crate::mmzone::Zone::free_unref_page`]), a larger block
    /// straight to the buddy lists (`__free_pages_ok()`; the model has no high-order
    /// per-CPU lists, v5.13+).
    pub fn free_pages(&mut self, pfn: Pfn, order: u32) {
        let zi = self.zone_of(pfn);
        if order == 0 {
            let cpu = self.pcp_cpu;
            self.zones[zi].free_unref_page(&mut self.pages, cpu, pfn);
        } else {
            self.zones[zi].free_block(&mut self.pages, pfn, order);
        }
    }

    /// Kernel: `drain_all_pages(NULL)`: every CPU's per-CPU lists of every zone back to the
    /// buddy lists.
    pub fn drain_all_pages(&mut self) {
        for z in &mut self.zones {
            z.drain_all_pages(&mut self.pages);
        }
    }

    /// Kernel: `__alloc_pages()` → fast path, `wake_all_kswapds()`, slow path.
    pub(crate) fn alloc_pages(&mut self, ctx: &mut Ctx, order: u32, gfp: Gfp) -> Option<Pfn> {
        if let Some(p) = self.get_page_from_freelist(order, Wmark::Low, gfp, true) {
            return Some(p);
        }
        if gfp.kswapd_reclaim {
            self.wakeup_kswapd(order, gfp.direct_reclaim);
        }
        if let Some(p) = self.get_page_from_freelist(order, Wmark::Min, gfp, false) {
            return Some(p);
        }
        if !gfp.direct_reclaim || (order > 0 && gfp == Gfp::READAHEAD_LARGE) {
            return None;
        }
        if order > 0 {
            return self.alloc_pages_slowpath_high(ctx, order, gfp);
        }
        let mut no_progress_loops = 0;
        loop {
            let progress = self.try_to_free_pages(ctx, order, gfp);
            // __perform_reclaim(): cond_resched() after try_to_free_pages().
            self.cond_resched(ctx);
            if let Some(p) = self.get_page_after_direct_reclaim(order, gfp) {
                return Some(p);
            }
            if gfp.noretry {
                // __alloc_pages_slowpath(): "Do not loop if specifically requested" — after
                // one direct reclaim (and, for order 0, no compaction) it fails without OOM.
                return None;
            }
            // No sleep here (v5.16+): a reclaimer without progress stalls inside
            // do_try_to_free_pages() (consider_reclaim_throttle()).
            if progress > 0 {
                no_progress_loops = 0;
            } else {
                no_progress_loops += 1;
            }
            if !self.should_reclaim_retry(gfp.mt, no_progress_loops) {
                self.ev.add(Ev::OomKill, 1);
                ctx.oom = true;
                return None;
            }
        }
    }

    /// `__alloc_pages_direct_reclaim()` after `__perform_reclaim()`: try the free lists; on
    /// failure give one pageblock of the highatomic reserve back
    /// (`unreserve_highatomic_pageblock(ac, false)`, [`Mm::unreserve_highatomic_pageblock`]),
    /// drain every CPU's per-CPU lists (`drain_all_pages(NULL)`, so the pages they hold count
    /// as free and can merge) and try once more.
    fn get_page_after_direct_reclaim(&mut self, order: u32, gfp: Gfp) -> Option<Pfn> {
        if let Some(p) = self.get_page_from_freelist(order, Wmark::Min, gfp, false) {
            return Some(p);
        }
        let unreserved = self.unreserve_highatomic_pageblock(gfp.mt, false);
        let drained = self.zones.iter().any(|z| z.nr_pcp > 0);
        self.drain_all_pages();
        if unreserved || drained {
            return self.get_page_from_freelist(order, Wmark::Min, gfp, false);
        }
        None
    }

    /// Kernel: `unreserve_highatomic_pageblock()` over the zonelist (Normal first): the first
    /// zone that gives a pageblock of its reserve back to `new_mt`
    /// ([`crate::mmzone::Zone::unreserve_highatomic_pageblock`]).
    pub fn unreserve_highatomic_pageblock(&mut self, new_mt: u8, force: bool) -> bool {
        for zi in (0..self.zones.len()).rev() {
            if self.zones[zi].unreserve_highatomic_pageblock(&mut self.pages, new_mt, force) {
                return true;
            }
        }
        false
    }

    /// Kernel: `should_reclaim_retry()` after the caller counted `no_progress_loops`: retry
    /// while there have been at most MAX_RECLAIM_RETRIES rounds without progress and
    /// reclaim could still lift some zone to its min watermark
    /// ([`Mm::reclaim_could_reach_min`]). Otherwise the allocation is headed for OOM, and
    /// the highatomic reserve is exhausted first, by version
    /// ([`KernelVersion::unreserve_highatomic_before_oom`](crate::workingset::KernelVersion::unreserve_highatomic_before_oom)):
    /// before v4.10 never; v4.10–v6.7 ("mm: try to exhaust highatomic reserve before the
    /// OOM", 04c8716f7b00) once the rounds without progress exceed MAX_RECLAIM_RETRIES;
    /// v6.8+ ("mm: page_alloc: unreserve highatomic page blocks before oom", Charan Teja
    /// Kalla) whenever it would return false. The forced `unreserve_highatomic_pageblock(ac,
    /// true)` gives back one pageblock, even the last, and a success means "retry". The
    /// model's v4.6 loop is this function's shape without the unreserve (v4.6 had
    /// `should_alloc_retry()`, which the model does not follow).
    pub(crate) fn should_reclaim_retry(&mut self, migratetype: u8, no_progress_loops: u32) -> bool {
        let exhausted = no_progress_loops > MAX_RECLAIM_RETRIES;
        if !exhausted && self.reclaim_could_reach_min() {
            return true;
        }
        let k = self.cfg.kernel;
        if k.unreserve_highatomic_before_oom() && (exhausted || k.unreserve_on_every_oom_verdict())
        {
            return self.unreserve_highatomic_pageblock(migratetype, true);
        }
        false
    }

    /// `should_reclaim_retry()`'s watermark test: could some zone reach its min watermark
    /// (plus its `lowmem_reserve`) if everything reclaimable in it were reclaimed
    /// (`__zone_watermark_ok()` with `zone_reclaimable_pages() + NR_FREE_PAGES`, less the
    /// highatomic reserve the allocation may not use: `__zone_watermark_unusable_free()`,
    /// v4.x `nr_reserved_highatomic` without ALLOC_HARDER)?
    fn reclaim_could_reach_min(&self) -> bool {
        let can_anon = self.nr_swap_free() > 0;
        self.zones.iter().any(|z| {
            let available = z.nr_lru[LruList::InactiveFile.idx()]
                + z.nr_lru[LruList::ActiveFile.idx()]
                + if can_anon {
                    z.nr_lru[LruList::InactiveAnon.idx()] + z.nr_lru[LruList::ActiveAnon.idx()]
                } else {
                    0
                }
                + z.free.saturating_sub(if z.nr_reserved_highatomic > 0 {
                    z.highatomic_unusable()
                } else {
                    0
                });
            available > z.wmark_pages(Wmark::Min) + z.lowmem_reserve[ZONE_NORMAL]
        })
    }

    /// Kernel: `__alloc_pages_direct_compact()`: compact, count the stall, try the free lists.
    /// A compaction skipped in every zone is no stall; one deferred in every zone is one
    /// from v5.1 only ([`KernelVersion::deferred_direct_compaction_stalls`](crate::workingset::KernelVersion::deferred_direct_compaction_stalls)).
    fn direct_compact(
        &mut self,
        ctx: &mut Ctx,
        order: u32,
        gfp: Gfp,
        prio: CompactPriority,
    ) -> (Option<Pfn>, CompactResult) {
        let r = self.try_to_compact_pages(ctx, order, gfp.mt, prio);
        if r == CompactResult::Skipped
            || (r == CompactResult::Deferred
                && !self.cfg.kernel.deferred_direct_compaction_stalls())
        {
            return (None, r);
        }
        self.ev.add(Ev::CompactStall, 1);
        if let Some(p) = self.get_page_from_freelist(order, Wmark::Min, gfp, false) {
            let zi = self.zone_of(p);
            self.zones[zi].compact.defer_reset(order, true);
            self.ev.add(Ev::CompactSuccess, 1);
            return (Some(p), r);
        }
        self.ev.add(Ev::CompactFail, 1);
        (None, r)
    }

    /// Kernel: `__alloc_pages_slowpath()` for order > 0 with `__GFP_DIRECT_RECLAIM`.
    fn alloc_pages_slowpath_high(&mut self, ctx: &mut Ctx, order: u32, gfp: Gfp) -> Option<Pfn> {
        let costly = order > PAGE_ALLOC_COSTLY_ORDER;
        // DEF_COMPACT_PRIORITY after the first, async attempt (INIT_COMPACT_PRIORITY); a
        // costly __GFP_NORETRY allocation stays async.
        let mut prio = CompactPriority::SyncLight;
        if costly || gfp.mt != mt::MOVABLE {
            let (p, r) = self.direct_compact(ctx, order, gfp, CompactPriority::Async);
            if p.is_some() {
                return p;
            }
            if costly && gfp.noretry {
                if matches!(r, CompactResult::Skipped | CompactResult::Deferred) {
                    return None;
                }
                prio = CompactPriority::Async;
            }
        }
        let mut compaction_retries = 0u32;
        let mut no_progress_loops = 0u32;
        loop {
            if gfp.kswapd_reclaim {
                self.wakeup_kswapd(order, true);
            }
            if let Some(p) = self.get_page_from_freelist(order, Wmark::Min, gfp, false) {
                return Some(p);
            }
            let progress = self.try_to_free_pages(ctx, order, gfp);
            // __perform_reclaim(): cond_resched() after try_to_free_pages().
            self.cond_resched(ctx);
            if progress > 0 {
                if let Some(p) = self.get_page_after_direct_reclaim(order, gfp) {
                    return Some(p);
                }
            }
            let (p, r) = self.direct_compact(ctx, order, gfp, prio);
            if p.is_some() {
                return p;
            }
            if gfp.noretry || (costly && !gfp.retry_mayfail) {
                return None;
            }
            // should_reclaim_retry(): progress only counts for non-costly orders.
            if progress > 0 && !costly {
                no_progress_loops = 0;
            } else {
                no_progress_loops += 1;
            }
            if self.should_reclaim_retry(gfp.mt, no_progress_loops) {
                continue;
            }
            // should_compact_retry()
            if progress == 0 {
                return None;
            }
            match r {
                CompactResult::Skipped => return None,
                CompactResult::Success => {
                    compaction_retries += 1;
                    let max = if costly {
                        MAX_RECLAIM_RETRIES / 4
                    } else {
                        MAX_RECLAIM_RETRIES
                    };
                    if compaction_retries <= max {
                        continue;
                    }
                }
                _ => {}
            }
            let min_prio = if costly {
                CompactPriority::SyncLight
            } else {
                CompactPriority::SyncFull
            };
            if prio > min_prio {
                prio = if prio == CompactPriority::Async {
                    CompactPriority::SyncLight
                } else {
                    CompactPriority::SyncFull
                };
                compaction_retries = 0;
                continue;
            }
            return None;
        }
    }

    /// Free a folio that is off every list and unmapped: uncharge, return to the buddy.
    pub fn free_folio(&mut self, pfn: Pfn) {
        let i = pfn as usize;
        let order = self.pages.hot[i].order as u32;
        let nr = 1u64 << order;
        let memcg = self.pages.hot[i].memcg;
        self.uncharge(memcg, nr);
        self.pages.hot[i].flags = 0;
        self.pages.obj[i] = NIL;
        self.ev.add(Ev::PgFree, nr);
        self.free_pages(pfn, order);
    }

    /// Kernel: `wakeup_kswapd()`: note the order and wake kswapd unless the node is already
    /// balanced (and not boosted) or kswapd has failed MAX_RECLAIM_RETRIES times; in that
    /// case an allocation that cannot reclaim directly wakes kcompactd instead
    /// (fragmentation is the only problem).
    pub fn wakeup_kswapd(&mut self, order: u32, direct_reclaim: bool) {
        let top = self.top_zone_idx();
        self.wakeup_kswapd_zone(order, direct_reclaim, top);
    }

    /// The highest zone type of the node (every allocation of the model may use it).
    pub fn top_zone_idx(&self) -> usize {
        self.zones.last().map_or(0, |z| z.zone_type)
    }

    /// Kernel: `wakeup_kswapd()` with the allocation's `highest_zoneidx`: raises
    /// `kswapd_highest_zoneidx` (unset, or lower than this one) and checks balance and
    /// boosts (`pgdat_watermark_boosted()`) over the zones up to it.
    pub fn wakeup_kswapd_zone(&mut self, order: u32, direct_reclaim: bool, highest_zoneidx: usize) {
        if self
            .kswapd
            .highest_zoneidx
            .is_none_or(|c| c < highest_zoneidx)
        {
            self.kswapd.highest_zoneidx = Some(highest_zoneidx);
        }
        self.kswapd.order = self.kswapd.order.max(order);
        let boosted = self
            .zones
            .iter()
            .any(|z| z.zone_type <= highest_zoneidx && z.watermark_boost > 0);
        if self.node.kswapd_failures >= MAX_RECLAIM_RETRIES
            || (self.pgdat_balanced_idx(order, highest_zoneidx) && !boosted)
        {
            // v4.17+ ("mm, page_alloc: wakeup kcompactd even if kswapd cannot free more
            // memory"); before, only kswapd going to sleep wakes kcompactd.
            if !direct_reclaim && self.cfg.kernel.wakeup_kswapd_wakes_kcompactd() {
                self.wakeup_kcompactd(order);
            }
            return;
        }
        self.kswapd.wake_pending = true;
    }

    /// Kernel: `pgdat_balanced()`: any eligible zone meets its high watermark at `order`.
    pub fn pgdat_balanced(&self, order: u32) -> bool {
        self.pgdat_balanced_idx(order, self.top_zone_idx())
    }

    /// `pgdat_balanced()` over the zones up to `highest_zoneidx`, each zone against its high
    /// watermark (boost included) plus its `lowmem_reserve[highest_zoneidx]`
    /// (`zone_watermark_ok_safe(zone, order, mark, highest_zoneidx)`).
    pub fn pgdat_balanced_idx(&self, order: u32, highest_zoneidx: usize) -> bool {
        self.zones.iter().any(|z| {
            z.zone_type <= highest_zoneidx
                && z.watermark_ok_idx(order, z.wmark_pages(Wmark::High), highest_zoneidx)
        })
    }

    /// kswapd's own balance test (`balance_pgdat()`, `prepare_kswapd_sleep()`): since v4.8
    /// [`Mm::pgdat_balanced`] at kswapd's order. v4.6–v4.7 with kcompactd
    /// ([`KernelVersion::kswapd_balances_high_order`](crate::workingset::KernelVersion::kswapd_balances_high_order)):
    /// `zone_balanced(..., highorder = false, ...)`, the order-0 watermark at
    /// `high + (1 << order)`, so kswapd sleeps once there are enough base pages and
    /// kcompactd makes the high-order page. The model keeps v4.8's "any eligible zone"
    /// where v4.6's `pgdat_balanced()` wanted, for order > 0, zones holding a quarter of the
    /// node's managed pages balanced (and every zone for order 0); with one large zone the
    /// two agree.
    pub fn kswapd_balanced(&self, order: u32) -> bool {
        self.kswapd_balanced_idx(order, self.top_zone_idx())
    }

    /// [`Mm::kswapd_balanced`] over the zones up to `highest_zoneidx` (kswapd's
    /// `sc.reclaim_idx`, `pgdat_balanced(pgdat, order, highest_zoneidx)`).
    pub fn kswapd_balanced_idx(&self, order: u32, highest_zoneidx: usize) -> bool {
        if order > 0
            && self.cfg.kswapd_compaction == crate::KswapdCompaction::Kcompactd
            && !self.cfg.kernel.kswapd_balances_high_order()
        {
            return self.zones.iter().any(|z| {
                z.zone_type <= highest_zoneidx
                    && z.watermark_ok_idx(
                        0,
                        z.wmark_pages(Wmark::High) + (1u64 << order),
                        highest_zoneidx,
                    )
            });
        }
        self.pgdat_balanced_idx(order, highest_zoneidx)
    }
}

#[cfg(test)]
mod reserve_tests {
    use super::*;
    use crate::workingset::KernelVersion;

    /// Seed S4's two tables' flags: GFP_NOWAIT | __GFP_HIGH and GFP_KERNEL | __GFP_HIGH.
    const NOWAIT_HIGH: Gfp = Gfp {
        high: true,
        ..Gfp::NOWAIT
    };
    const KERNEL_HIGH: Gfp = Gfp {
        high: true,
        ..Gfp::KERNEL
    };

    /// `__zone_watermark_ok()`'s reserve arithmetic, by hand: min 5632 (seed S4's scaled
    /// zone). ALLOC_HIGH / ALLOC_MIN_RESERVE: 5632 - 2816 = 2816. v6.3+ ALLOC_NON_BLOCK for a
    /// non-blocking __GFP_HIGH allocation: 2816 - 704 = 2112. Odd min 1001: 1001 - 500 = 501,
    /// then 501 - 125 = 376.
    #[test]
    fn gfp_high_reserve_arithmetic() {
        let v46 = KernelVersion::new(4, 6);
        let v62 = KernelVersion::new(6, 2);
        let v63 = KernelVersion::new(6, 3);
        let v618 = KernelVersion::default();
        for k in [v46, v62, v63, v618] {
            assert_eq!(reserve_min(5632, Gfp::NOWAIT, k), 5632, "{k}");
            assert_eq!(reserve_min(5632, Gfp::KERNEL, k), 5632, "{k}");
            assert_eq!(reserve_min(5632, KERNEL_HIGH, k), 2816, "{k}");
        }
        assert_eq!(reserve_min(5632, NOWAIT_HIGH, v46), 2816);
        assert_eq!(reserve_min(5632, NOWAIT_HIGH, v62), 2816);
        assert_eq!(reserve_min(5632, NOWAIT_HIGH, v63), 2112);
        assert_eq!(reserve_min(5632, NOWAIT_HIGH, v618), 2112);
        assert_eq!(reserve_min(1001, NOWAIT_HIGH, v46), 501);
        assert_eq!(reserve_min(1001, NOWAIT_HIGH, v618), 376);
    }

    /// GFP_NOWAIT stops at the min watermark; GFP_NOWAIT | __GFP_HIGH goes on to half of it
    /// (v4.6) or three eighths (v6.18). 4096 pages, min_free_kbytes 4096: min 1024 pages.
    #[test]
    fn gfp_high_allocations_dip_into_the_min_reserve() {
        use crate::testutil::*;
        use crate::{BalanceKind, InstantIo};
        for (kernel, high, floor) in [
            (KernelVersion::new(4, 6), false, 1024),
            (KernelVersion::new(4, 6), true, 512),
            (KernelVersion::default(), true, 384),
        ] {
            let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
            cfg.min_free_kbytes = Some(4096);
            cfg.watermark_boost_factor = 0;
            cfg.kernel = kernel;
            let mut mm = Mm::new(cfg);
            assert_eq!(mm.zones[0].wmark_pages(Wmark::Min), 1024);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            let gfp = Gfp {
                high,
                ..Gfp::NOWAIT
            };
            while mm.alloc_kernel_pages(&mut ctx, 0, gfp).is_some() {}
            // The last success left free > floor; the failure saw free <= floor.
            assert_eq!(mm.zones[0].free, floor, "{kernel} high={high}");
        }
    }

    /// Who gets the highatomic reserve (`gfp_to_alloc_flags()`), for an order-9 allocation:
    /// v4.6 only GFP_ATOMIC (`__GFP_ATOMIC` -> ALLOC_HARDER), not seed S4's GFP_NOWAIT |
    /// __GFP_HIGH; v6.3-v6.17 every non-blocking allocation (GFP_NOWAIT too); v6.18+ a
    /// non-blocking `__GFP_HIGH` one. Never order 0, never with `__GFP_DIRECT_RECLAIM`.
    #[test]
    fn highatomic_rights_by_version() {
        let v = KernelVersion::new;
        for (k, gfp, order, highatomic, reserves) in [
            (v(4, 6), Gfp::ATOMIC, 9, true, true),
            (v(4, 6), Gfp::ATOMIC, 0, false, true),
            (v(4, 6), NOWAIT_HIGH, 9, false, false),
            (v(4, 6), Gfp::NOWAIT, 9, false, false),
            (v(6, 2), NOWAIT_HIGH, 9, false, false),
            (v(6, 3), Gfp::NOWAIT, 9, true, true),
            (v(6, 16), Gfp::NOWAIT, 9, true, true),
            (v(6, 17), Gfp::NOWAIT, 9, true, true),
            (v(6, 18), Gfp::NOWAIT, 9, false, true),
            (v(6, 18), NOWAIT_HIGH, 9, true, true),
            (v(6, 18), NOWAIT_HIGH, 0, false, true),
            (v(6, 18), KERNEL_HIGH, 9, false, true),
            (v(6, 18), Gfp::KERNEL, 9, false, false),
        ] {
            let r = highatomic_rights(gfp, order, k);
            assert_eq!(r.highatomic, highatomic, "{k} {gfp:?} {order}");
            assert_eq!(r.reserves, reserves, "{k} {gfp:?} {order}");
        }
        // The reserve's watermark rule: the whole reserve before v6.12, its free pages from
        // v6.12 (c928807f6f6b, merged for v6.12-rc7).
        assert!(!v(6, 11).highatomic_rules().unusable_free_only);
        assert!(v(6, 12).highatomic_rules().unusable_free_only);
        // v4.6 ALLOC_HARDER's quarter: GFP_ATOMIC with min 5632: 2816, then 2112.
        assert_eq!(reserve_min(5632, Gfp::ATOMIC, v(4, 6)), 2112);
        assert_eq!(reserve_min(5632, Gfp::ATOMIC, v(6, 18)), 2112);
    }

    /// `should_reclaim_retry()`'s forced unreserve before OOM, by version. A 65,536-page
    /// zone with no reclaimable memory and a highatomic reserve of one free pageblock (512
    /// pages): GFP_KERNEL order-0 allocations run the zone down to its min watermark (the
    /// reserve not counted). v4.6 goes OOM with the reserve untouched (a failed direct
    /// reclaim keeps the last block). v4.10 too: its forced unreserve comes only after 16
    /// rounds without progress, and the watermark check (nothing reclaimable) fails first —
    /// the early OOM that v6.8's patch describes. v6.8+ unreserves whenever the function
    /// would return false, so its 512 pages are handed out before OOM.
    #[test]
    fn forced_unreserve_before_oom_by_version() {
        use crate::testutil::*;
        use crate::{BalanceKind, InstantIo};
        let setup = |kernel: KernelVersion| {
            let mut cfg = tiny_config(BalanceKind::RefaultCost, 65536);
            cfg.swap_areas.clear();
            cfg.watermark_boost_factor = 0;
            cfg.kernel = kernel;
            let mut mm = Mm::new(cfg);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            // One pageblock reserved (as reserve_highatomic_pageblock() after an order-9
            // ALLOC_HARDER / ALLOC_HIGHATOMIC allocation), then freed onto its lists.
            let p = mm.alloc_kernel_pages(&mut ctx, 9, Gfp::KERNEL).unwrap();
            assert!(mm.zones[0].reserve_highatomic_pageblock(&mut mm.pages, p, 9));
            mm.free_kernel_pages(p);
            assert_eq!(mm.zones[0].nr_reserved_highatomic, 512);
            mm
        };
        for (kernel, reserve_left, extra) in [
            (KernelVersion::new(4, 6), 512, 0),
            (KernelVersion::new(4, 10), 512, 0),
            (KernelVersion::new(6, 7), 512, 0),
            (KernelVersion::new(6, 8), 0, 512),
            (KernelVersion::default(), 0, 512),
        ] {
            let mut mm = setup(kernel);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            let mut got = 0u64;
            while mm.alloc_kernel_pages(&mut ctx, 0, Gfp::KERNEL).is_some() {
                got += 1;
            }
            assert!(ctx.oom, "{kernel}");
            let min = mm.zones[0].wmark_pages(Wmark::Min);
            assert_eq!(mm.zones[0].nr_reserved_highatomic, reserve_left, "{kernel}");
            // Every page above the min watermark (the order-9 allocation came back whole),
            // plus the reserve's when it was released.
            assert_eq!(got, 65536 - 512 - min + extra, "{kernel}");
        }
        // The rounds-exhausted branch, directly: with the zone above its min watermark (the
        // check passes) v4.6 gives up after MAX_RECLAIM_RETRIES rounds without progress
        // keeping the reserve; v4.10 and v6.18 give the last block back and retry.
        for (kernel, released) in [
            (KernelVersion::new(4, 6), false),
            (KernelVersion::new(4, 10), true),
            (KernelVersion::default(), true),
        ] {
            let mut mm = setup(kernel);
            assert!(mm.should_reclaim_retry(mt::UNMOVABLE, MAX_RECLAIM_RETRIES));
            assert_eq!(mm.zones[0].nr_reserved_highatomic, 512, "{kernel}");
            assert_eq!(
                mm.should_reclaim_retry(mt::UNMOVABLE, MAX_RECLAIM_RETRIES + 1),
                released,
                "{kernel}"
            );
            let left = if released { 0 } else { 512 };
            assert_eq!(mm.zones[0].nr_reserved_highatomic, left, "{kernel}");
            // Nothing left to release: OOM.
            assert!(!mm.should_reclaim_retry(mt::UNMOVABLE, MAX_RECLAIM_RETRIES + 1));
        }
    }

    /// A direct compaction that finds its only zone deferred (`defer_shift` 6, nothing
    /// considered yet: `compaction_deferred()` says skip) is a `compact_stall` followed by a
    /// free-list attempt from v5.1, and nothing at all in v4.6 (seed S4's kernel), where
    /// `__alloc_pages_direct_compact()` returns at COMPACT_DEFERRED before counting.
    #[test]
    fn deferred_direct_compaction_is_a_stall_from_v5_1() {
        use crate::testutil::*;
        use crate::{BalanceKind, InstantIo};
        for (kernel, stalls) in [
            (KernelVersion::new(4, 6), 0),
            (KernelVersion::new(5, 0), 0),
            (KernelVersion::new(5, 1), 1),
            (KernelVersion::default(), 1),
        ] {
            let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
            cfg.kernel = kernel;
            let mut mm = Mm::new(cfg);
            let c = &mut mm.zones[0].compact;
            c.order_failed = 0;
            c.defer_shift = 6;
            c.considered = 0;
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            let (p, r) = mm.direct_compact(&mut ctx, 9, Gfp::KERNEL, CompactPriority::Async);
            assert_eq!(r, CompactResult::Deferred, "{kernel}");
            // The zone is all free: where the stall is counted, the free-list attempt after
            // it succeeds (compact_success); v4.6 never gets there.
            assert_eq!(p.is_some(), stalls == 1, "{kernel}");
            assert_eq!(mm.ev.get(Ev::CompactStall), stalls, "{kernel}");
            assert_eq!(mm.ev.get(Ev::CompactSuccess), stalls, "{kernel}");
            // compaction_deferred() counted the consideration (a success resets it).
            let considered = if stalls == 1 { 0 } else { 1 };
            assert_eq!(mm.zones[0].compact.considered, considered, "{kernel}");
        }
    }
}
