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
//! frees the slot after the read; otherwise `should_try_to_free_swap()` decides whether the
//! folio keeps its slot (see there): a page mapped by a read fault is writable, so a later
//! store does not fault, and the folio stays in the swap cache with its slot until reclaim
//! writes it to that slot again (or reactivates it with swap more than half full).
//!
//! # Where we differ from the kernel (v6.18)
//! - One cursor instead of per-CPU clusters; no discard; no swap priorities round-robin
//!   between equal priorities (the first area with free slots is used).
//! - Every swap entry is mapped once (no fork), so the swap count is 0 or 1.
//! - THP swap-out (`CONFIG_THP_SWAP`): a PMD-size anonymous folio gets a whole free cluster
//!   (512 aligned slots, as `cluster_alloc_swap_entry()` needs for that order on a block
//!   device; the model's areas are all block devices) or `shrink_folio_list()` splits it
//!   (`thp_swpout_fallback`). Free clusters are found by a per-cluster use count from the
//!   cursor on, not from the kernel's free-cluster list; order-0 slots are handed out by the
//!   cursor without preferring partly used clusters, so they may take free clusters the
//!   kernel would keep whole a little longer. A large folio still in the swap cache is mapped
//!   whole again by a fault on any of its entries (v6.18 `do_swap_page()` maps the whole
//!   folio when every PTE of its range holds its entries); a swap-in that reads from the
//!   device is always order 0, as the kernel's is for PMD-size (mTHP swap-in,
//!   `alloc_swap_folio()`, excludes PMD order).
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
use crate::{BioOp, Ctx, Mm, ObjKind, Submitted, SwapAreaCfg};

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
    /// Slots in use per cluster of SWAPFILE_CLUSTER slots (`swap_cluster_info.count`).
    pub cluster_used: crate::zeroed::ZeroedVec<u16>,
}

/// Kernel: `SWAPFILE_CLUSTER` (HPAGE_PMD_NR with THP swap).
pub const SWAPFILE_CLUSTER: u64 = crate::memory::HPAGE_PMD_NR as u64;

impl SwapArea {
    pub fn new(c: &SwapAreaCfg) -> SwapArea {
        // Slot 0 holds the swap header.
        let mut slots = crate::zeroed::ZeroedVec::new(c.size_pages as usize);
        let mut cluster_used =
            crate::zeroed::ZeroedVec::new(c.size_pages.div_ceil(SWAPFILE_CLUSTER) as usize);
        if let Some(s) = slots.first_mut() {
            *s = SLOT_USED;
            cluster_used[0] = 1;
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
            cluster_used,
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
                self.cluster_used[(off / SWAPFILE_CLUSTER) as usize] += 1;
                self.cursor = off + 1;
                return Some(off as u32);
            }
            off += 1;
        }
        None
    }

    pub(crate) fn free_slot(&mut self, slot: u32) {
        debug_assert!(self.slots[slot as usize] & SLOT_USED != 0);
        self.slots[slot as usize] = 0;
        self.nr_free += 1;
        self.cluster_used[(slot as u64 / SWAPFILE_CLUSTER) as usize] -= 1;
    }

    /// A whole free cluster for a PMD-size folio (`cluster_alloc_swap_entry()` at order 9,
    /// which only a free cluster can satisfy): the first free one from the cursor's cluster
    /// on, wrapping. Returns its first slot, the slots marked in use.
    fn alloc_cluster(&mut self) -> Option<u32> {
        let n = self.size_pages / SWAPFILE_CLUSTER;
        if self.nr_free < SWAPFILE_CLUSTER || n == 0 {
            return None;
        }
        let start = (self.cursor / SWAPFILE_CLUSTER) % n;
        let c = (0..n)
            .map(|k| (start + k) % n)
            .find(|&c| self.cluster_used[c as usize] == 0)?;
        let base = c * SWAPFILE_CLUSTER;
        for off in base..base + SWAPFILE_CLUSTER {
            self.slots[off as usize] = SLOT_USED;
        }
        self.cluster_used[c as usize] = SWAPFILE_CLUSTER as u16;
        self.nr_free -= SWAPFILE_CLUSTER;
        self.cursor = base + SWAPFILE_CLUSTER;
        Some(base as u32)
    }
}

/// Per-VMA readahead state (`vma->swap_readahead_info`): last fault page, window, hits.
/// `valid` is false until the first swap fault of the VMA stores an address (the kernel's
/// value is then 0 and `GET_SWAP_RA_VAL()` reads it as 4 hits, no window, address 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VmaRaInfo {
    pub prev_page: u64,
    pub win: u64,
    pub hits: u64,
    pub valid: bool,
}

/// `SWAP_RA_HITS_MAX`: the hit count has `PAGE_SHIFT / 2` = 6 bits.
pub const SWAP_RA_HITS_MAX: u64 = 63;

impl VmaRaInfo {
    /// Kernel: `swap_update_readahead()` with VMA readahead, on a swap-cache hit at page
    /// `addr`: the hit count grows by one if the folio was read ahead (PG_readahead
    /// test-and-cleared), and the VMA's state records `addr` with the window unchanged
    /// (`SWAP_RA_VAL(addr, win, hits)`), so that the next miss just after it is seen as
    /// sequential. Worked example: state (page 4, win 8, 3 hits), hit on read-ahead page 5
    /// → (page 5, win 8, 4 hits); a hit on a folio not read ahead → (page 5, win 8, 3 hits).
    pub fn on_hit(self, addr: u64, readahead: bool) -> VmaRaInfo {
        let hits = if readahead {
            (self.hits + 1).min(SWAP_RA_HITS_MAX)
        } else {
            self.hits
        };
        VmaRaInfo {
            prev_page: addr,
            win: self.win,
            hits,
            valid: true,
        }
    }

    /// Kernel: `swap_vma_ra_win()`: on a swap-cache miss at page `addr` of a VMA of
    /// `vma_pages` pages, the window size from `__swapin_nr_pages()` (previous fault page,
    /// hits, `max_win`, previous window), the state stored for the next fault (this page,
    /// the window, no hits) and the page range `[start, end)` to read: forward from `addr`
    /// when the previous fault was the page before, backward when it was the page after,
    /// else centred with `(win - 1) / 2` pages before `addr`; clamped to the VMA and to the
    /// PMD (512 pages) holding `addr`. The right edge is computed from the unclamped left
    /// edge, as the kernel does. Returns (new state, win, start, end); win 1 reads nothing
    /// but the faulting page.
    /// Worked example (max_win 8): fresh state (4 hits), fault at page 0 → win 8, centred:
    /// left -3, right 5 → pages [0, 5); state (0, 8, 0).
    pub fn window(self, addr: u64, max_win: u64, vma_pages: u64) -> (VmaRaInfo, u64, u64, u64) {
        let prev = if self.valid {
            self.prev_page
        } else {
            // The kernel's unset value reads as address 0; a VMA's pages are never at
            // address 0, so it is never adjacent to a fault.
            u64::MAX - 1
        };
        let win = swapin_nr_pages(prev, addr, self.hits, max_win, self.win);
        let next = VmaRaInfo {
            prev_page: addr,
            win,
            hits: 0,
            valid: true,
        };
        if win <= 1 {
            return (next, 1, addr, addr + 1);
        }
        let (a, w) = (addr as i64, win as i64);
        let left = if self.valid && addr == prev.wrapping_add(1) {
            a
        } else if self.valid && prev == addr + 1 {
            a - (w - 1)
        } else {
            a - (w - 1) / 2
        };
        let right = left + w;
        let pmd = addr & !511;
        let start = (left.max(0) as u64).max(pmd);
        let end = (right.max(0) as u64).min(vma_pages).min(pmd + 512);
        (next, win, start, end)
    }
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
    /// kernels): give an anon folio a slot (a THP: a whole cluster) and put it in the swap
    /// cache, dirty. False when no area has room (for a THP: no free cluster).
    pub(crate) fn add_to_swap(&mut self, pfn: Pfn) -> bool {
        let nr = self.pages.nr_pages(pfn);
        // mem_cgroup_try_charge_swap(): the memcg's memory.swap.max.
        if !self.try_charge_swap(self.pages.hot[pfn as usize].memcg as usize, nr) {
            return false;
        }
        for k in 0..self.swap_order.len() {
            let a = self.swap_order[k];
            let got = if nr == 1 {
                self.swap[a].alloc_slot()
            } else {
                self.swap[a].alloc_cluster()
            };
            if let Some(slot) = got {
                let i = pfn as usize;
                let (memcg, obj, index) = (
                    self.pages.hot[i].memcg,
                    self.pages.obj[i],
                    self.pages.index[i],
                );
                for k in 0..nr as u32 {
                    let s = (slot + k) as usize;
                    self.swap[a].slots[s] = SLOT_USED | SLOT_CACHE | pfn as u64;
                    self.swap[a].owner[s] = SlotOwner::pack(memcg, obj, index + k);
                }
                self.pages.hot[i].swap_area = a as u8;
                self.pages.swap_slot[i] = slot;
                self.pages.set(pfn, pg::SWAPCACHE | pg::DIRTY);
                self.node.nr_swapcached += nr;
                self.memcgs[memcg as usize].swap_usage += nr;
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
        let (a, slot) = (
            self.pages.hot[i].swap_area as usize,
            self.pages.swap_slot[i],
        );
        let nr = self.pages.nr_pages(pfn);
        for k in 0..nr as u32 {
            self.swap[a].free_slot(slot + k);
        }
        self.node.nr_swapcached -= nr;
        let m = self.pages.hot[i].memcg as usize;
        self.memcgs[m].swap_usage -= nr;
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
        let nr = self.pages.nr_pages(pfn) as u32;
        let attn = self.pages.test(pfn, pg::SWAPCACHE | pg::LOCKED);
        for k in 0..nr {
            let e = &mut self.objects[o.obj as usize].ent[(o.index + k) as usize];
            if pte_present(*e) && pte_pfn(*e) == pfn + k {
                if attn {
                    *e |= PTE_ATTN;
                } else {
                    *e &= !PTE_ATTN;
                }
            }
        }
    }

    /// Is the folio mapped by a page table (`folio_mapped()`)?
    pub(crate) fn folio_mapped(&self, pfn: Pfn) -> bool {
        let o = self.pages.owner(pfn);
        let obj = &self.objects[o.obj as usize];
        match obj.kind {
            ObjKind::Anon | ObjKind::Shmem => {
                let nr = self.pages.nr_pages(pfn) as u32;
                (0..nr).any(|k| {
                    let e = obj.ent[(o.index + k) as usize];
                    pte_present(e) && pte_pfn(e) == pfn + k
                })
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
    /// the folio); file PTEs are cleared. A PMD-mapped THP is unmapped with
    /// TTU_SPLIT_HUGE_PMD, as `shrink_folio_list()` asks: the PMD is split into PTEs
    /// (`thp_split_pmd`; the folio leaves NR_ANON_THPS) and each becomes a swap entry.
    pub(crate) fn try_to_unmap(&mut self, ctx: &mut Ctx, pfn: Pfn) {
        let o = self.pages.owner(pfn);
        let nr = self.pages.nr_pages(pfn);
        let i = pfn as usize;
        let rmap0 = self.reclaim_cpu.rmap_ns;
        self.charge_rmap_walk(ctx, self.cfg.costs.unmap_per_mapping_ns, 1);
        self.reclaim_cpu.unmap_ns += self.reclaim_cpu.rmap_ns - rmap0;
        let mut dirty = false;
        if self.pages.test_clear(pfn, pg::PMD_MAPPED) {
            self.ev.add(Ev::ThpSplitPmd, 1);
            self.node.nr_anon_thps -= 1;
        }
        let (area, slot) = (self.pages.hot[i].swap_area, self.pages.swap_slot[i]);
        let obj = &mut self.objects[o.obj as usize];
        match obj.kind {
            ObjKind::Anon | ObjKind::Shmem => {
                for k in 0..nr as u32 {
                    let x = (o.index + k) as usize;
                    let e = obj.ent[x];
                    if !pte_present(e) || pte_pfn(e) != pfn + k {
                        continue;
                    }
                    if e & PTE_DIRTY != 0 {
                        self.pages.set(pfn, pg::DIRTY);
                        dirty = true;
                    }
                    obj.ent[x] = make_swap_pte(area, slot + k);
                }
            }
            ObjKind::File => {
                for k in o.index as u64..o.index as u64 + nr {
                    obj.mapped[k as usize] = 0;
                }
                // The model's shared mapping keeps no dirty bit (a store through it dirties
                // the folio at its fault, fault_dirty_shared_page()): a dirty folio counts
                // as a dirty PTE, also when write() dirtied it.
                dirty = self.pages.test(pfn, pg::DIRTY);
            }
        }
        // The PTE is gone; its TLB entries are flushed now or batched (crate::tlb).
        self.unmap_tlb_flush(ctx, o.obj, dirty);
    }

    /// Kernel: `pageout()`: start writing a dirty folio (swap or file). Returns true when the
    /// write already completed (synchronous device), false when IO is in flight.
    pub(crate) fn pageout(&mut self, ctx: &mut Ctx, pfn: Pfn) -> bool {
        let i = pfn as usize;
        let nr = self.pages.nr_pages(pfn);
        let mut synchronous = false;
        let (dev, sector) = if self.pages.test(pfn, pg::SWAPCACHE) {
            let a = self.pages.hot[i].swap_area as usize;
            self.ev.add(Ev::PswpOut, nr);
            // count_swpout_vm_event()
            if nr >= crate::memory::HPAGE_PMD_NR as u64 {
                self.ev.add(Ev::ThpSwpout, 1);
            }
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
        // swap_writepage() / the file system's writepage with reclaim's WB_SYNC_NONE
        // writeback control: a write without REQ_SYNC, throttled by blk-wbt on a request-based
        // device. rq_qos_wait() sleeps the reclaimer (kswapd or the allocating task) until an
        // inflight write completes; its clock moves on to the issue. Completions that fall due
        // meanwhile run at the reclaimer's next step (the folios of this batch are isolated).
        let sub = ctx.submit_write(dev, BioOp::Write, sector, nr as u32);
        let (done, cpu) = (sub.done, sub.cpu_ns);
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
        let file = !self.pages.test(pfn, pg::SWAPCACHE);
        if synchronous || done <= ctx.now {
            self.ev.add(Ev::NrWritten, nr);
            if file {
                self.wb.stat_written += nr;
            }
            return true;
        }
        self.pages.set(pfn, pg::WRITEBACK | pg::RECLAIM);
        self.pages.io_done_ns[i] = done;
        self.node.nr_writeback += nr;
        if file {
            self.wb_writeback_start(nr);
        }
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
            let (a, slot) = (
                self.pages.hot[i].swap_area as usize,
                self.pages.swap_slot[i],
            );
            let entry = if self.balance.anon_shadows() {
                let sh = self.workingset_eviction(pfn, target_lv);
                SLOT_USED | SLOT_SHADOW | sh.0
            } else {
                SLOT_USED
            };
            // Every entry of the folio keeps the shadow (`swap_cache_del_folio()`). An entry
            // no page table holds any more (its process exited while the folio was under IO,
            // crate::exit) has swap count 0: `put_swap_folio()` frees the slot.
            let memcg = self.pages.hot[i].memcg as usize;
            for k in 0..nr as u32 {
                let held = self.objects[o.obj as usize].ent[(o.index + k) as usize]
                    == make_swap_pte(a as u8, slot + k);
                if held {
                    self.swap[a].slots[(slot + k) as usize] = entry;
                } else {
                    self.swap[a].free_slot(slot + k);
                    self.memcgs[memcg].swap_usage -= 1;
                }
            }
            self.pages.clear(pfn, pg::SWAPCACHE);
            self.node.nr_swapcached -= nr;
        } else {
            let sh = self.workingset_eviction(pfn, target_lv);
            let obj = &mut self.objects[o.obj as usize];
            for k in o.index as u64..o.index as u64 + nr {
                obj.ent[k as usize] = crate::filemap::CACHE_SHADOW | sh.0;
            }
            for k in o.index as u64..o.index as u64 + nr {
                self.xa_set_value(o.obj, k, true);
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
        // Is the folio still in a per-CPU lru_add batch (an extra reference)?
        let mut lru_batched = true;
        let pfn = if s & SLOT_CACHE != 0 {
            // Found in the swap cache: read earlier, by readahead (drained) or reclaim.
            lru_batched = false;
            // Swap-cache hit: minor fault; readahead-hit accounting.
            let pfn = (s & 0xffff_ffff) as Pfn;
            if self.pages.nr_pages(pfn) > 1 {
                return Some(self.do_swap_page_large(ctx, pfn, a, write));
            }
            // Kernel: swap_update_readahead().
            let readahead = self.pages.test_clear(pfn, pg::SWAP_RA);
            let vma_ra = self.vma_readahead(obj);
            if vma_ra {
                let ra = &mut self.objects[obj as usize].swap_ra;
                *ra = ra.on_hit(index as u64, readahead);
            }
            if readahead {
                self.ev.add(Ev::SwapRaHit, 1);
                if !vma_ra {
                    self.swap_ra_global.hits += 1;
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
            // The readahead paths end with lru_add_drain(); a folio read alone (no window,
            // or a synchronous device) stays in this CPU's lru_add batch, which holds a
            // reference to it.
            if !sync && self.swapin_readahead(ctx, obj, index, a, slot) {
                lru_batched = false;
            }
            let pfn = self.swapin_one(ctx, obj, index, a, slot, !sync)?;
            let t = self.pages.wait_locked(pfn, ctx.now);
            ctx.wait(t);
            pfn
        };
        // Map it: an exclusive anon page is mapped writable even on a read fault, so a later
        // store does not fault.
        let o = &mut self.objects[obj as usize];
        o.ent[index as usize] = make_present_pte(pfn, write);
        if self.pages.test(pfn, pg::SWAPCACHE)
            && !self.pages.test(pfn, pg::WRITEBACK)
            && self.should_try_to_free_swap(a, write, lru_batched)
        {
            self.folio_free_swap(pfn);
        }
        if write {
            self.pages.set(pfn, pg::DIRTY);
        }
        self.update_pte_attn(pfn);
        Some(pfn)
    }

    /// `do_swap_page()` finding a THP in the swap cache (its writeback not yet reclaimed, or
    /// reclaim kept it): every PTE of the folio's range still holds the folio's entries (the
    /// model never swaps part of a THP in while the folio is cached), so the whole folio is
    /// mapped again with PTEs (not a PMD: it stays out of NR_ANON_THPS); then the same
    /// `should_try_to_free_swap()` as for a base page.
    fn do_swap_page_large(&mut self, ctx: &mut Ctx, pfn: Pfn, a: usize, write: bool) -> Pfn {
        ctx.cpu_ns += self.cfg.costs.minor_fault_ns;
        self.pages.clear(pfn, pg::SWAP_RA);
        let t = self.pages.wait_locked(pfn, ctx.now);
        ctx.wait(t);
        let o = self.pages.owner(pfn);
        let nr = self.pages.nr_pages(pfn) as u32;
        let slot = self.pages.swap_slot[pfn as usize];
        let obj = &mut self.objects[o.obj as usize];
        for k in 0..nr {
            let x = (o.index + k) as usize;
            debug_assert_eq!(obj.ent[x], make_swap_pte(a as u8, slot + k));
            obj.ent[x] = make_present_pte(pfn + k, write);
        }
        if !self.pages.test(pfn, pg::WRITEBACK) && self.should_try_to_free_swap(a, write, false) {
            self.folio_free_swap(pfn);
        }
        if write {
            self.pages.set(pfn, pg::DIRTY);
        }
        self.update_pte_attn(pfn);
        pfn
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
        self.pages.hot[i].flags |= pg::SWAPBACKED;
        self.pages.obj[i] = obj;
        self.pages.index[i] = index;
        self.objects[obj as usize].nr_resident += 1;
        self.ev.add(Ev::PswpIn, 1);
        self.ev.add(Ev::PgpgIn, 4);
        let Submitted {
            done, cpu_ns: cpu, ..
        } = ctx.io.submit(
            self.swap[a].dev,
            ctx.now,
            BioOp::Read,
            ctx.kswapd,
            slot as u64,
            1,
        );
        ctx.cpu_ns += cpu + self.cfg.costs.io_submit_ns;
        self.pages.lock_for_io(pfn, done);
        if s & SLOT_SHADOW != 0 && s & SLOT_CACHE == 0 {
            self.workingset_refault(pfn, Shadow(s & SLOT_PAYLOAD));
        }
        // The seed's series as posted (refault-cost before 4.10): every swap-in is a
        // workingset refault of anon.
        self.balance
            .note_swapin(&mut self.lruvecs, memcg as usize, 1);
        if cache {
            self.swap[a].slots[slot as usize] = SLOT_USED | SLOT_CACHE | pfn as u64;
            self.pages.hot[i].swap_area = a as u8;
            self.pages.swap_slot[i] = slot;
            self.pages.set(pfn, pg::SWAPCACHE);
            self.node.nr_swapcached += 1;
        } else {
            self.swap[a].free_slot(slot);
            let m = self.pages.hot[i].memcg as usize;
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
    /// Returns whether a window was read (the kernel then drains the CPU's lru_add batch,
    /// `lru_add_drain()`, before reading the faulting entry on its own).
    fn swapin_readahead(
        &mut self,
        ctx: &mut Ctx,
        obj: u32,
        index: u32,
        a: usize,
        slot: u32,
    ) -> bool {
        if self.vma_readahead(obj) {
            self.swap_vma_readahead(ctx, obj, index)
        } else {
            self.swap_cluster_readahead(ctx, a, slot)
        }
    }

    /// Kernel: `should_try_to_free_swap()` (mm/memory.c, v6.18) after a swap fault mapped a
    /// swap-cache folio: free the slot on a synchronous device (zram: the swap cache saves
    /// nothing there), when swap is more than half full (`mem_cgroup_swap_full()`, which is
    /// `vm_swap_full()` without a memcg swap limit), or on a write fault when the fault holds
    /// the only reference besides the swap cache's (`folio_ref_count() == 1 + nr`). The
    /// model's reference test: a folio read alone by this fault still sits in the CPU's
    /// lru_add batch (`lru_batched`, a reference of its own) and keeps its slot; one found in
    /// the swap cache or read with a readahead window was drained. Otherwise the slot stays
    /// (a read fault maps an exclusive page writable anyway), so the next reclaim of the page,
    /// once written, writes it to the same slot again.
    pub(crate) fn should_try_to_free_swap(
        &self,
        area: usize,
        write: bool,
        lru_batched: bool,
    ) -> bool {
        self.swap[area].synchronous || self.vm_swap_full() || (write && !lru_batched)
    }

    /// Kernel: `swap_vma_readahead()`: the PTEs of the window `swap_vma_ra_win()` chose
    /// ([`VmaRaInfo::window`]) that hold swap entries are read into the swap cache.
    fn swap_vma_readahead(&mut self, ctx: &mut Ctx, obj: u32, index: u32) -> bool {
        let page_cluster = self.cfg.page_cluster;
        let max_win = 1u64 << page_cluster.min(5);
        if max_win <= 1 {
            return false;
        }
        let o = &mut self.objects[obj as usize];
        let addr = index as u64;
        let (next, win, start, end) = o.swap_ra.window(addr, max_win, o.size_pages);
        o.swap_ra = next;
        if win <= 1 {
            return false;
        }
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
        true
    }

    /// Kernel: `swap_cluster_readahead()`: the naturally aligned block of `swapin_nr_pages()`
    /// slots around the faulting slot, sized from the global hit count.
    fn swap_cluster_readahead(&mut self, ctx: &mut Ctx, a: usize, slot: u32) -> bool {
        let page_cluster = self.cfg.page_cluster;
        let max_pages = 1u64 << page_cluster;
        if max_pages <= 1 {
            return false;
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
            return false;
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
        true
    }

    /// Kernel: `swap_use_vma_readahead()` (the scenario resolves `vma_ra_enabled` and
    /// `nr_rotate_swap` into `cfg.swap_readahead`) for a fault through a page table. Shmem
    /// swap-in (`shmem_swapin_folio()`) always uses the cluster window
    /// (`shmem_swapin_cluster()`) and the global hit count (`swap_update_readahead(folio,
    /// NULL, 0)`).
    fn vma_readahead(&self, obj: u32) -> bool {
        self.cfg.swap_readahead == crate::SwapRaKind::Vma
            && self.objects[obj as usize].kind != ObjKind::Shmem
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

    /// swap_update_readahead() on a hit: the address is recorded, the window kept, the hit
    /// counted only for a read-ahead folio (and saturating at 63).
    #[test]
    fn vma_ra_hit_records_the_faulting_address() {
        let st = VmaRaInfo {
            prev_page: 4,
            win: 8,
            hits: 3,
            valid: true,
        };
        let h = st.on_hit(5, true);
        assert_eq!((h.prev_page, h.win, h.hits, h.valid), (5, 8, 4, true));
        let h = st.on_hit(5, false);
        assert_eq!((h.prev_page, h.win, h.hits), (5, 8, 3));
        let full = VmaRaInfo { hits: 63, ..st };
        assert_eq!(full.on_hit(9, true).hits, 63);
        // A hit before any miss: the kernel's unset value (4 hits, window 0).
        let h = VmaRaInfo::default().on_hit(7, true);
        assert_eq!((h.prev_page, h.hits, h.valid), (7, 5, true));
    }

    /// swap_vma_ra_win(): window size and placement, hand-computed (max_win 8).
    #[test]
    fn vma_ra_window_placement() {
        let fresh = VmaRaInfo::default();
        // Fresh VMA (4 hits → 6 → 8 pages), centred: left 0-3, right 5; clamped at 0.
        let (st, win, s, e) = fresh.window(0, 8, 1000);
        assert_eq!((win, s, e), (8, 0, 5));
        assert_eq!((st.prev_page, st.win, st.hits), (0, 8, 0));
        // Centred in the middle: [100-3, 100+5).
        assert_eq!(
            fresh.window(100, 8, 1000).1..=fresh.window(100, 8, 1000).3,
            8..=105
        );
        assert_eq!(fresh.window(100, 8, 1000).2, 97);
        let at = |prev, hits, win| VmaRaInfo {
            prev_page: prev,
            win,
            hits,
            valid: true,
        };
        // Ascending (previous fault on the page before), 4 hits: [200, 208).
        assert_eq!(
            at(199, 4, 8).window(200, 8, 1000),
            (at(200, 0, 8), 8, 200, 208)
        );
        // Descending (previous fault on the page after): [193, 201).
        assert_eq!(
            at(201, 4, 8).window(200, 8, 1000).2..at(201, 4, 8).window(200, 8, 1000).3,
            193..201
        );
        // No hits, not adjacent, previous window 8: never below half of it → 4 pages,
        // centred: [200-1, 200+3).
        let (_, win, s, e) = at(50, 0, 8).window(200, 8, 1000);
        assert_eq!((win, s, e), (4, 199, 203));
        // No hits, not adjacent, small previous window: 1 page, nothing read ahead.
        assert_eq!(at(50, 0, 1).window(200, 8, 1000).1, 1);
        // No hits but adjacent: 2 pages forward.
        assert_eq!(
            at(199, 0, 1).window(200, 8, 1000).1..at(199, 0, 1).window(200, 8, 1000).3,
            2..202
        );
        // Clamped to the PMD (pages 0..512) and to the VMA end.
        assert_eq!(at(509, 4, 8).window(510, 8, 1000).3, 512);
        assert_eq!(at(509, 4, 8).window(510, 8, 511).3, 511);
        assert_eq!(at(513, 4, 8).window(512, 8, 1000).2, 512);
    }

    /// A pure sequential swap-in with VMA readahead: each hit records its address, so the
    /// miss after a window is sequential and gets the next full window forward. Hand count
    /// (page_cluster 3, max window 8): the fault at page 0 reads [0, 5) (4 read ahead), the
    /// one at 5 reads [5, 13), then every 8th page a window of 8: 1 + 40 major faults and
    /// 4 + 40 * 7 = 284 pages read ahead for pages 0..325, every one of them hit.
    #[test]
    fn vma_readahead_gives_the_full_window_on_sequential_swapin() {
        let mut cfg = crate::testutil::tiny_config(crate::BalanceKind::RefaultCost, 1024);
        cfg.swap_areas[0].synchronous = false;
        let mut mm = Mm::new(cfg);
        let mut io = crate::InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..2048 {
            mm.touch(&mut ctx, 0, p, true);
        }
        assert!((0..325).all(|p| pte_swap(mm.objects[0].ent[p])));
        let (maj0, ra0, hit0) = (
            mm.ev.get(Ev::PgMajFault),
            mm.ev.get(Ev::SwapRa),
            mm.ev.get(Ev::SwapRaHit),
        );
        for p in 0..325 {
            mm.touch(&mut ctx, 0, p, false);
        }
        assert_eq!(mm.ev.get(Ev::PgMajFault) - maj0, 41);
        assert_eq!(mm.ev.get(Ev::SwapRa) - ra0, 284);
        assert_eq!(mm.ev.get(Ev::SwapRaHit) - hit0, 284);
    }

    /// A 1024-page machine with swap on a non-synchronous device, its anon object written
    /// in full (2048 pages), so the first few hundred pages are swapped out.
    fn swapped_out(page_cluster: u32) -> Mm {
        let mut cfg = crate::testutil::tiny_config(crate::BalanceKind::RefaultCost, 1024);
        cfg.swap_areas[0].synchronous = false;
        cfg.page_cluster = page_cluster;
        let mut mm = Mm::new(cfg);
        let mut io = crate::InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..2048 {
            mm.touch(&mut ctx, 0, p, true);
        }
        assert!((0..300).all(|p| pte_swap(mm.objects[0].ent[p])));
        assert!(!mm.vm_swap_full());
        mm
    }

    /// should_try_to_free_swap(), hand-checked cases.
    #[test]
    fn should_try_to_free_swap_cases() {
        let mut mm = swapped_out(3);
        // Read fault: keep. Write fault, folio drained from the lru_add batch: free; still
        // in the batch (read alone): keep.
        assert!(!mm.should_try_to_free_swap(0, false, false));
        assert!(mm.should_try_to_free_swap(0, true, false));
        assert!(!mm.should_try_to_free_swap(0, true, true));
        // A synchronous device (zram) always frees.
        mm.swap[0].synchronous = true;
        assert!(mm.should_try_to_free_swap(0, false, true));
        mm.swap[0].synchronous = false;
        // Swap more than half full: free.
        let total = mm.swap[0].nr_free + 1;
        mm.swap[0].nr_free = total / 2 - 1;
        assert!(mm.vm_swap_full());
        assert!(mm.should_try_to_free_swap(0, false, true));
    }

    /// A page swapped in by a read fault and then written keeps its slot: the store does not
    /// fault (the PTE is writable) and the folio stays in the swap cache, dirty in its PTE.
    #[test]
    fn swapped_in_then_written_keeps_its_slot() {
        let mut mm = swapped_out(0);
        let mut io = crate::InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let used = mm.memcgs[0].swap_usage;
        mm.touch(&mut ctx, 0, 10, false);
        let e = mm.objects[0].ent[10];
        assert!(pte_present(e));
        let pfn = pte_pfn(e);
        assert!(mm.pages.test(pfn, pg::SWAPCACHE));
        let faults = mm.ev.get(Ev::PgFault);
        mm.touch(&mut ctx, 0, 10, true);
        assert_eq!(mm.ev.get(Ev::PgFault), faults, "a store to a writable PTE");
        assert!(mm.pages.test(pfn, pg::SWAPCACHE));
        assert_ne!(mm.objects[0].ent[10] & PTE_DIRTY, 0);
        assert_eq!(mm.memcgs[0].swap_usage, used);
        // A write fault on a page read alone (page_cluster 0: no readahead): the folio is
        // still in the lru_add batch, so the slot stays too.
        mm.touch(&mut ctx, 0, 20, true);
        assert!(mm.pages.test(pte_pfn(mm.objects[0].ent[20]), pg::SWAPCACHE));
        assert_eq!(mm.memcgs[0].swap_usage, used);
    }

    /// A write fault with a readahead window (drained batch) frees the faulting page's slot;
    /// the pages read ahead keep theirs until they are touched.
    #[test]
    fn write_fault_after_readahead_frees_the_slot() {
        let mut mm = swapped_out(3);
        let mut io = crate::InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let used = mm.memcgs[0].swap_usage;
        // Fresh VMA state: a window of 8, pages [97, 105) around 100.
        mm.touch(&mut ctx, 0, 100, true);
        assert!(!mm
            .pages
            .test(pte_pfn(mm.objects[0].ent[100]), pg::SWAPCACHE));
        assert_eq!(mm.memcgs[0].swap_usage, used - 1);
        // A write fault on a read-ahead page (a swap-cache hit) frees its slot too.
        mm.touch(&mut ctx, 0, 101, true);
        assert!(!mm
            .pages
            .test(pte_pfn(mm.objects[0].ent[101]), pg::SWAPCACHE));
        // A read fault on one keeps it.
        mm.touch(&mut ctx, 0, 102, false);
        assert!(mm
            .pages
            .test(pte_pfn(mm.objects[0].ent[102]), pg::SWAPCACHE));
        assert_eq!(mm.memcgs[0].swap_usage, used - 2);
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
