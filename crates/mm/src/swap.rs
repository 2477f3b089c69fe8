//! Swap: areas and slots, the swap cache, swap-out from reclaim, swap-in with readahead.
//!
//! # In this model
//! A swap area is an array of slot entries (u64): free (0), or in use with either a swap-cache
//! folio (`SLOT_CACHE | pfn`) or a shadow entry left at eviction (`SLOT_SHADOW | shadow`), or
//! neither. Slots are handed out in increasing offset order from a cursor (the cluster
//! allocator's per-CPU sequential allocation collapsed to one cursor), so swap order follows
//! reclaim order, which is what makes physical-offset (cluster) readahead work.
//!
//! Swap-in (`do_swap_page`): a swap-cache hit is a minor fault; otherwise a major fault reads
//! the slot (and, on a non-synchronous device, the readahead window: `swap_vma_readahead()` or
//! `swap_cluster_readahead()`), checks the shadow (`workingset_refault()`), and maps the
//! folio. A synchronous device (zram) with a single-mapped slot bypasses the swap cache and
//! frees the slot after the read; otherwise the folio stays in the swap cache, clean, until
//! written to (which frees the slot, as `do_wp_page()` reuse does) or until swap is more than
//! half full (`should_try_to_free_swap()`).
//!
//! # Where we differ from the kernel (v6.18)
//! - One cursor instead of per-CPU clusters; no discard; no swap priorities round-robin
//!   between equal priorities (the first area with free slots is used).
//! - Every swap entry is mapped once (no fork), so the swap count is 0 or 1.
//!
//! # Kernel references
//! mm/swapfile.c `folio_alloc_swap()`, `folio_free_swap()`; mm/swap_state.c
//! `swap_cluster_readahead()`, `swap_vma_readahead()`, `__swapin_nr_pages()`,
//! `swap_update_readahead()`; mm/memory.c `do_swap_page()`; mm/vmscan.c `pageout()`,
//! `__remove_mapping()`.

use crate::memory::*;
use crate::page::pg;
use crate::types::*;
use crate::vmstat::Ev;
use crate::workingset::Shadow;
use crate::{Ctx, Mm, ObjKind, SwapAreaCfg};

pub const SLOT_USED: u64 = 1 << 63;
pub const SLOT_CACHE: u64 = 1 << 62;
pub const SLOT_SHADOW: u64 = 1 << 59;
const SLOT_PAYLOAD: u64 = (1 << 59) - 1;

/// What a swap slot remembers of the page it holds: the (object, page index) of the PTE that
/// holds it (the swap cache's `folio->mapping`/`index` for a folio read by cluster readahead)
/// and its memcg (the `swap_cgroup` record the swapped-in folio is charged to), packed as
/// memcg << 48 | object << 32 | index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotOwner(pub u64);

impl SlotOwner {
    pub fn pack(memcg: u16, obj: u32, index: u32) -> u64 {
        debug_assert!(
            obj <= u16::MAX as u32,
            "object id {obj} does not fit the slot owner"
        );
        (memcg as u64) << 48 | (obj as u64) << 32 | index as u64
    }
    pub fn memcg(self) -> u16 {
        (self.0 >> 48) as u16
    }
    pub fn obj(self) -> u32 {
        (self.0 >> 32) as u16 as u32
    }
    pub fn index(self) -> u32 {
        self.0 as u32
    }
}

pub struct SwapArea {
    pub dev: u32,
    pub size_pages: u64,
    pub priority: i32,
    pub synchronous: bool,
    pub rotational: bool,
    /// Host memory only where slots are used (see [`crate::zeroed`]).
    pub slots: crate::zeroed::ZeroedVec<u64>,
    /// Reverse map of each used slot, a packed [`SlotOwner`].
    pub owner: crate::zeroed::ZeroedVec<u64>,
    pub nr_free: u64,
    pub cursor: u64,
}

impl SwapArea {
    pub fn new(c: &SwapAreaCfg) -> SwapArea {
        // Slot 0 holds the swap header.
        let mut slots = crate::zeroed::ZeroedVec::new(c.size_pages as usize);
        if let Some(s) = slots.first_mut() {
            *s = SLOT_USED;
        }
        SwapArea {
            dev: c.dev,
            size_pages: c.size_pages,
            priority: c.priority,
            synchronous: c.synchronous,
            rotational: c.rotational,
            owner: crate::zeroed::ZeroedVec::new(c.size_pages as usize),
            slots,
            nr_free: c.size_pages.saturating_sub(1),
            cursor: 1,
        }
    }

    /// Allocate the next free slot at or after the cursor (wrapping).
    fn alloc_slot(&mut self) -> Option<u32> {
        if self.nr_free == 0 {
            return None;
        }
        let n = self.size_pages;
        let mut off = self.cursor;
        for _ in 0..n {
            if off >= n {
                off = 1;
            }
            if self.slots[off as usize] & SLOT_USED == 0 {
                self.slots[off as usize] = SLOT_USED;
                self.nr_free -= 1;
                self.cursor = off + 1;
                return Some(off as u32);
            }
            off += 1;
        }
        None
    }

    fn free_slot(&mut self, slot: u32) {
        debug_assert!(self.slots[slot as usize] & SLOT_USED != 0);
        self.slots[slot as usize] = 0;
        self.nr_free += 1;
    }
}

/// Per-VMA readahead state (`vma->swap_readahead_info`): last fault page, window, hits.
#[derive(Clone, Copy, Debug)]
pub struct VmaRaInfo {
    pub prev_page: u64,
    pub win: u64,
    pub hits: u64,
    pub valid: bool,
}

impl Default for VmaRaInfo {
    fn default() -> Self {
        VmaRaInfo {
            prev_page: 0,
            win: 1,
            hits: 4,
            valid: false,
        }
    }
}

/// Global cluster readahead state (`swapin_readahead_hits`, `prev_offset`,
/// `last_readahead_pages`).
#[derive(Clone, Copy, Debug)]
pub struct ClusterRaState {
    pub hits: u64,
    pub prev_offset: u64,
    pub last_pages: u64,
}

impl Default for ClusterRaState {
    fn default() -> Self {
        ClusterRaState {
            hits: 4,
            prev_offset: 0,
            last_pages: 1,
        }
    }
}

/// Kernel: `__swapin_nr_pages()`: the readahead window from the hit history. Worked example:
/// 2 hits → pages 4; 5 hits → 7 rounded up to 8; no hits and a non-adjacent fault → 1; never
/// below half the previous window.
pub fn swapin_nr_pages(prev_off: u64, off: u64, hits: u64, max_pages: u64, prev_win: u64) -> u64 {
    let mut pages = hits + 2;
    if pages == 2 {
        if off != prev_off + 1 && off + 1 != prev_off {
            pages = 1;
        }
    } else {
        let mut r = 4;
        while r < pages {
            r <<= 1;
        }
        pages = r;
    }
    pages = pages.min(max_pages);
    pages.max(prev_win / 2)
}

impl Mm {
    /// Kernel: `folio_alloc_swap()` + `add_to_swap_cache()` (`add_to_swap()` in older
    /// kernels): give an anon folio a slot and put it in the swap cache, dirty.
    pub(crate) fn add_to_swap(&mut self, pfn: Pfn) -> bool {
        for k in 0..self.swap_order.len() {
            let a = self.swap_order[k];
            if let Some(slot) = self.swap[a].alloc_slot() {
                self.swap[a].slots[slot as usize] = SLOT_USED | SLOT_CACHE | pfn as u64;
                let i = pfn as usize;
                self.swap[a].owner[slot as usize] =
                    SlotOwner::pack(self.pages.memcg[i], self.pages.obj[i], self.pages.index[i]);
                self.pages.swap_area[i] = a as u8;
                self.pages.swap_slot[i] = slot;
                self.pages.set(pfn, pg::SWAPCACHE | pg::DIRTY);
                self.node.nr_swapcached += 1;
                let m = self.pages.memcg[i] as usize;
                self.memcgs[m].swap_usage += 1;
                self.update_pte_attn(pfn);
                return true;
            }
        }
        false
    }

    /// Kernel: `folio_free_swap()`: drop the folio's slot; the folio stays as plain anon.
    pub(crate) fn folio_free_swap(&mut self, pfn: Pfn) {
        let i = pfn as usize;
        if !self.pages.test_clear(pfn, pg::SWAPCACHE) {
            return;
        }
        let (a, slot) = (self.pages.swap_area[i] as usize, self.pages.swap_slot[i]);
        self.swap[a].free_slot(slot);
        self.node.nr_swapcached -= 1;
        let m = self.pages.memcg[i] as usize;
        self.memcgs[m].swap_usage -= 1;
        // The data only lives in memory now: it must be written again if reclaimed.
        self.pages.set(pfn, pg::DIRTY);
        self.update_pte_attn(pfn);
    }

    /// Keep the PTE's `PTE_ATTN` bit in step with the folio: set while the folio is in the
    /// swap cache or a read into it may be in flight, so the page-table fast path needs to
    /// look at nothing but the PTE (a model-only shortcut; the MMU has no such bit).
    pub(crate) fn update_pte_attn(&mut self, pfn: Pfn) {
        if self.pages.is_file_lru(pfn) {
            return;
        }
        let o = self.pages.owner(pfn);
        let attn = self.pages.test(pfn, pg::SWAPCACHE | pg::LOCKED);
        let e = &mut self.objects[o.obj as usize].ent[o.index as usize];
        if pte_present(*e) && pte_pfn(*e) == pfn {
            if attn {
                *e |= PTE_ATTN;
            } else {
                *e &= !PTE_ATTN;
            }
        }
    }

    /// Is the folio mapped by a page table (`folio_mapped()`)?
    pub(crate) fn folio_mapped(&self, pfn: Pfn) -> bool {
        let o = self.pages.owner(pfn);
        let obj = &self.objects[o.obj as usize];
        match obj.kind {
            ObjKind::Anon | ObjKind::Shmem => {
                let e = obj.ent[o.index as usize];
                pte_present(e) && pte_pfn(e) == pfn
            }
            ObjKind::File => {
                if obj.mapped.is_empty() {
                    return false;
                }
                let nr = self.pages.nr_pages(pfn);
                (o.index as u64..o.index as u64 + nr).any(|i| obj.mapped[i as usize] & 1 != 0)
            }
        }
    }

    /// Kernel: `try_to_unmap()`: anon PTEs become swap entries (moving the PTE dirty bit to
    /// the folio); file PTEs are cleared.
    pub(crate) fn try_to_unmap(&mut self, ctx: &mut Ctx, pfn: Pfn) {
        let o = self.pages.owner(pfn);
        let nr = self.pages.nr_pages(pfn);
        let i = pfn as usize;
        self.charge_rmap_step(ctx);
        let (area, slot) = (self.pages.swap_area[i], self.pages.swap_slot[i]);
        let obj = &mut self.objects[o.obj as usize];
        match obj.kind {
            ObjKind::Anon | ObjKind::Shmem => {
                let e = obj.ent[o.index as usize];
                if e & PTE_DIRTY != 0 {
                    self.pages.set(pfn, pg::DIRTY);
                }
                obj.ent[o.index as usize] = make_swap_pte(area, slot);
            }
            ObjKind::File => {
                for k in o.index as u64..o.index as u64 + nr {
                    obj.mapped[k as usize] = 0;
                }
            }
        }
    }

    /// Kernel: `pageout()`: start writing a dirty folio (swap or file). Returns true when the
    /// write already completed (synchronous device), false when IO is in flight.
    pub(crate) fn pageout(&mut self, ctx: &mut Ctx, pfn: Pfn) -> bool {
        let i = pfn as usize;
        let nr = self.pages.nr_pages(pfn);
        let mut synchronous = false;
        let (dev, sector) = if self.pages.test(pfn, pg::SWAPCACHE) {
            let a = self.pages.swap_area[i] as usize;
            self.ev.add(Ev::PswpOut, nr);
            synchronous = self.swap[a].synchronous;
            (self.swap[a].dev, self.pages.swap_slot[i] as u64)
        } else {
            let o = self.pages.owner(pfn);
            let obj = &mut self.objects[o.obj as usize];
            obj.nr_dirty -= nr;
            self.node.nr_dirty -= nr;
            (self.cfg.fs_dev, obj.dev_base + o.index as u64)
        };
        self.ev.add(Ev::NrVmscanWrite, nr);
        self.ev.add(Ev::PgpgOut, nr * 4);
        self.pages.clear(pfn, pg::DIRTY);
        let (done, cpu) = ctx.io.submit(dev, ctx.now, true, sector, nr as u32);
        let mut c = cpu + self.cfg.costs.io_submit_ns;
        if synchronous {
            // SWP_SYNCHRONOUS_IO (zram): the write completes in the reclaimer's context, which
            // spends the device time on it; the folio is clean when pageout() returns. The
            // reclaimer's clock moves past it, so the next write of the same batch is
            // submitted then and is charged only its own time.
            c += done.saturating_sub(ctx.now);
            ctx.now = ctx.now.max(done);
        }
        ctx.cpu_ns += c;
        self.reclaim_cpu.io_ns += c;
        if synchronous || done <= ctx.now {
            self.ev.add(Ev::NrWritten, nr);
            return true;
        }
        self.pages.set(pfn, pg::WRITEBACK | pg::RECLAIM);
        self.pages.io_done_ns[i] = done;
        self.node.nr_writeback += nr;
        self.completions.push(std::cmp::Reverse((done, pfn)));
        false
    }

    /// Kernel: `__remove_mapping(..., reclaimed = true)`: take the folio out of the swap cache
    /// or page cache, leaving a shadow entry.
    pub(crate) fn remove_mapping(&mut self, pfn: Pfn, target_lv: usize) {
        let i = pfn as usize;
        let o = self.pages.owner(pfn);
        let nr = self.pages.nr_pages(pfn);
        if self.pages.test(pfn, pg::SWAPCACHE) {
            let (a, slot) = (self.pages.swap_area[i] as usize, self.pages.swap_slot[i]);
            let entry = if self.balance.anon_shadows() {
                let sh = self.workingset_eviction(pfn, target_lv);
                SLOT_USED | SLOT_SHADOW | sh.0
            } else {
                SLOT_USED
            };
            self.swap[a].slots[slot as usize] = entry;
            self.pages.clear(pfn, pg::SWAPCACHE);
            self.node.nr_swapcached -= 1;
        } else {
            let sh = self.workingset_eviction(pfn, target_lv);
            let obj = &mut self.objects[o.obj as usize];
            for k in o.index as u64..o.index as u64 + nr {
                obj.ent[k as usize] = crate::filemap::CACHE_SHADOW | sh.0;
            }
        }
        self.objects[o.obj as usize].nr_resident -= nr;
    }

    /// Swap-in of the PTE at (`obj`, `index`) holding swap entry `e` (`do_swap_page()`).
    /// Returns the mapped folio.
    pub(crate) fn do_swap_page(
        &mut self,
        ctx: &mut Ctx,
        obj: u32,
        index: u32,
        e: u64,
        write: bool,
    ) -> Option<Pfn> {
        let (a, slot) = (swp_area(e) as usize, swp_slot(e));
        let s = self.swap[a].slots[slot as usize];
        let pfn = if s & SLOT_CACHE != 0 {
            // Swap-cache hit: minor fault; readahead-hit accounting.
            let pfn = (s & 0xffff_ffff) as Pfn;
            if self.pages.test_clear(pfn, pg::SWAP_RA) {
                self.ev.add(Ev::SwapRaHit, 1);
                match self.cfg.swap_readahead {
                    crate::SwapRaKind::Vma => {
                        let ra = &mut self.objects[obj as usize].swap_ra;
                        ra.hits = (ra.hits + 1).min(63);
                    }
                    crate::SwapRaKind::Cluster => self.swap_ra_global.hits += 1,
                }
            }
            ctx.cpu_ns += self.cfg.costs.minor_fault_ns;
            let t = self.pages.wait_locked(pfn, ctx.now);
            ctx.wait(t);
            pfn
        } else {
            ctx.major = true;
            self.ev.add(Ev::PgMajFault, 1);
            ctx.cpu_ns += self.cfg.costs.major_fault_ns;
            let sync = self.swap[a].synchronous;
            if !sync {
                self.swapin_readahead(ctx, obj, index, a, slot);
            }
            let pfn = self.swapin_one(ctx, obj, index, a, slot, !sync)?;
            let t = self.pages.wait_locked(pfn, ctx.now);
            ctx.wait(t);
            pfn
        };
        // Map it.
        let o = &mut self.objects[obj as usize];
        o.ent[index as usize] = make_present_pte(pfn, write);
        if self.pages.test(pfn, pg::SWAPCACHE)
            && (write || self.vm_swap_full())
            && !self.pages.test(pfn, pg::WRITEBACK)
        {
            self.folio_free_swap(pfn);
        }
        if write {
            self.pages.set(pfn, pg::DIRTY);
        }
        self.update_pte_attn(pfn);
        Some(pfn)
    }

    /// Read one slot into a new folio (`swap_read_folio()`), with refault detection. When
    /// `cache` is false (synchronous device) the folio bypasses the swap cache and the slot is
    /// freed.
    fn swapin_one(
        &mut self,
        ctx: &mut Ctx,
        obj: u32,
        index: u32,
        a: usize,
        slot: u32,
        cache: bool,
    ) -> Option<Pfn> {
        let s = self.swap[a].slots[slot as usize];
        // The folio is charged to the memcg that owned the swapped-out page (swap_cgroup).
        let memcg = SlotOwner(self.swap[a].owner[slot as usize]).memcg();
        let pfn = self.alloc_folio(ctx, 0, memcg)?;
        let i = pfn as usize;
        self.pages.flags[i] |= pg::SWAPBACKED;
        self.pages.obj[i] = obj;
        self.pages.index[i] = index;
        self.objects[obj as usize].nr_resident += 1;
        self.ev.add(Ev::PswpIn, 1);
        self.ev.add(Ev::PgpgIn, 4);
        let (done, cpu) = ctx
            .io
            .submit(self.swap[a].dev, ctx.now, false, slot as u64, 1);
        ctx.cpu_ns += cpu + self.cfg.costs.io_submit_ns;
        self.pages.lock_for_io(pfn, done);
        if s & SLOT_SHADOW != 0 && s & SLOT_CACHE == 0 {
            self.workingset_refault(pfn, Shadow(s & SLOT_PAYLOAD));
        }
        if cache {
            self.swap[a].slots[slot as usize] = SLOT_USED | SLOT_CACHE | pfn as u64;
            self.pages.swap_area[i] = a as u8;
            self.pages.swap_slot[i] = slot;
            self.pages.set(pfn, pg::SWAPCACHE);
            self.node.nr_swapcached += 1;
        } else {
            self.swap[a].free_slot(slot);
            let m = self.pages.memcg[i] as usize;
            self.memcgs[m].swap_usage = self.memcgs[m].swap_usage.saturating_sub(1);
            // Not in the swap cache: the only copy is in memory now.
            self.pages.set(pfn, pg::DIRTY);
        }
        self.folio_add_lru(pfn);
        Some(pfn)
    }

    /// Kernel: `swapin_readahead()` → `swap_vma_readahead()` or `swap_cluster_readahead()`:
    /// read the window around the faulting entry into the swap cache, marking the extra
    /// folios for readahead-hit accounting.
    fn swapin_readahead(&mut self, ctx: &mut Ctx, obj: u32, index: u32, a: usize, slot: u32) {
        let page_cluster = self.cfg.page_cluster;
        match self.cfg.swap_readahead {
            crate::SwapRaKind::Vma => {
                let max_win = 1u64 << page_cluster.min(5);
                if max_win <= 1 {
                    return;
                }
                let ra = self.objects[obj as usize].swap_ra;
                let addr = index as u64;
                let prev = if ra.valid { ra.prev_page } else { u64::MAX - 1 };
                let win = swapin_nr_pages(prev, addr, ra.hits, max_win, ra.win);
                self.objects[obj as usize].swap_ra = VmaRaInfo {
                    prev_page: addr,
                    win,
                    hits: 0,
                    valid: true,
                };
                if win <= 1 {
                    return;
                }
                let left = if ra.valid && addr == prev + 1 {
                    addr
                } else if ra.valid && prev == addr + 1 {
                    addr.saturating_sub(win - 1)
                } else {
                    addr.saturating_sub((win - 1) / 2)
                };
                let right = left + win;
                // Clamp to the VMA and to the PMD (512 pages) containing the fault.
                let pmd = addr & !511;
                let size = self.objects[obj as usize].size_pages;
                let start = left.max(pmd);
                let end = right.min(size).min(pmd + 512);
                for p in start..end {
                    if p == addr {
                        continue;
                    }
                    let e = self.objects[obj as usize].ent[p as usize];
                    if !pte_swap(e) {
                        continue;
                    }
                    self.readahead_swap_slot(ctx, obj, p as u32, swp_area(e) as usize, swp_slot(e));
                }
            }
            crate::SwapRaKind::Cluster => {
                let max_pages = 1u64 << page_cluster;
                if max_pages <= 1 {
                    return;
                }
                let g = self.swap_ra_global;
                let off = slot as u64;
                let hits = g.hits;
                self.swap_ra_global.hits = 0;
                let pages = swapin_nr_pages(g.prev_offset, off, hits, max_pages, g.last_pages);
                if hits == 0 {
                    self.swap_ra_global.prev_offset = off;
                }
                self.swap_ra_global.last_pages = pages;
                let mask = pages - 1;
                if mask == 0 {
                    return;
                }
                let size = self.swap[a].size_pages;
                let start = (off & !mask).max(1);
                let end = (off | mask).min(size - 1);
                for o in start..=end {
                    if o == off {
                        continue;
                    }
                    let s = self.swap[a].slots[o as usize];
                    if s & SLOT_USED == 0 || s & SLOT_CACHE != 0 {
                        continue;
                    }
                    // Physical readahead reads slots without knowing their page tables; the
                    // folio's (object, index) comes from the slot's reverse map.
                    let ow = SlotOwner(self.swap[a].owner[o as usize]);
                    self.readahead_swap_slot(ctx, ow.obj(), ow.index(), a, o as u32);
                }
            }
        }
    }

    fn readahead_swap_slot(&mut self, ctx: &mut Ctx, obj: u32, index: u32, a: usize, slot: u32) {
        let s = self.swap[a].slots[slot as usize];
        if s & SLOT_USED == 0 || s & SLOT_CACHE != 0 {
            return;
        }
        let mut c2 = Ctx::new(ctx.now, ctx.io, ctx.memcg);
        if let Some(pfn) = self.swapin_one(&mut c2, obj, index, a, slot, true) {
            self.pages.set(pfn, pg::SWAP_RA);
            self.ev.add(Ev::SwapRa, 1);
        }
        ctx.cpu_ns += c2.cpu_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn slot_owner_packs_and_unpacks() {
        let ow = SlotOwner(SlotOwner::pack(7, 65_535, 4_000_000_000));
        assert_eq!(
            (ow.memcg(), ow.obj(), ow.index()),
            (7, 65_535, 4_000_000_000)
        );
    }

    #[test]
    fn swapin_window_heuristic() {
        // no hits, adjacent fault: 2 pages
        assert_eq!(swapin_nr_pages(10, 11, 0, 8, 1), 2);
        // no hits, random fault: 1 page
        assert_eq!(swapin_nr_pages(10, 50, 0, 8, 1), 1);
        // 2 hits: 4 pages; 5 hits: 8 (capped by max 8)
        assert_eq!(swapin_nr_pages(0, 50, 2, 8, 1), 4);
        assert_eq!(swapin_nr_pages(0, 50, 5, 8, 1), 8);
        assert_eq!(swapin_nr_pages(0, 50, 30, 8, 1), 8);
        // never shrink below half the previous window
        assert_eq!(swapin_nr_pages(10, 50, 0, 8, 8), 4);
    }
}
