//! Faults and page-table accesses (mm/memory.c): what a load or store to a mapping does.
//!
//! # Page-table entries
//! Anonymous and shmem regions keep one u64 per page:
//! - `0`: none (never touched);
//! - `PTE_ZERO`: mapped to the shared zero page (read of never-written private anon memory);
//! - `PTE_PRESENT | [PTE_YOUNG] | [PTE_DIRTY] | pfn`: mapped folio;
//! - `PTE_SWAP | area << 32 | slot`: swapped out.
//!
//! The young bit is set by every access, as the MMU does, and only observed (and cleared) by
//! reclaim's rmap walk. A mapped file keeps a byte per page: bit 0 present, bit 1 young.
//!
//! # Where we differ from the kernel (v6.18)
//! - Shmem regions are modelled as a shared anonymous mapping with one page table (all tasks
//!   share the PTEs): one mapping per folio for the rmap walk.
//! - A mapped file has one shared mapping (all tasks' VMAs collapsed into one).
//! - No fault-around for file mappings, no THP for anon, no COW between processes: every
//!   anon page is exclusive and mapped writable (`do_swap_page()` maps a swapped-in page
//!   writable even on a read fault), so no store takes a `do_wp_page()` fault and `pgreuse`
//!   stays 0 (the kernel counts a few, from paths the model lacks).
//!
//! # Kernel references
//! mm/memory.c `handle_mm_fault()`, `do_anonymous_page()`, `do_swap_page()`,
//! `should_try_to_free_swap()`, `filemap_fault()` (mm/filemap.c).

use crate::page::pg;
use crate::types::*;
use crate::vmstat::Ev;
use crate::{Ctx, Mm, ObjKind};

pub const PTE_PRESENT: u64 = 1 << 63;
pub const PTE_SWAP: u64 = 1 << 62;
pub const PTE_ZERO: u64 = 1 << 61;
pub const PTE_YOUNG: u64 = 1 << 40;
pub const PTE_DIRTY: u64 = 1 << 41;
/// Model-only: the folio needs a look on access (in the swap cache, or IO in flight); see
/// `Mm::update_pte_attn`.
pub const PTE_ATTN: u64 = 1 << 42;

#[inline]
pub fn pte_present(e: u64) -> bool {
    e & PTE_PRESENT != 0
}
#[inline]
pub fn pte_swap(e: u64) -> bool {
    e & PTE_SWAP != 0
}
#[inline]
pub fn pte_pfn(e: u64) -> Pfn {
    e as u32
}
#[inline]
pub fn swp_area(e: u64) -> u8 {
    (e >> 32) as u8
}
#[inline]
pub fn swp_slot(e: u64) -> u32 {
    e as u32
}
#[inline]
pub fn make_swap_pte(area: u8, slot: u32) -> u64 {
    PTE_SWAP | (area as u64) << 32 | slot as u64
}
#[inline]
pub fn make_present_pte(pfn: Pfn, write: bool) -> u64 {
    PTE_PRESENT | PTE_YOUNG | if write { PTE_DIRTY } else { 0 } | pfn as u64
}

impl Mm {
    /// A load or store to page `index` of object `obj` through its mapping.
    /// Kernel: the MMU sets the young bit; a missing translation enters `handle_mm_fault()`.
    pub fn touch(&mut self, ctx: &mut Ctx, obj: u32, index: u32, write: bool) {
        let kind = self.objects[obj as usize].kind;
        if kind == ObjKind::File {
            return self.touch_file(ctx, obj, index, write);
        }
        let e = self.objects[obj as usize].ent[index as usize];
        if pte_present(e) {
            // Fast path: present, set young (and dirty on a store).
            let o = &mut self.objects[obj as usize];
            o.ent[index as usize] = e | PTE_YOUNG | if write { PTE_DIRTY } else { 0 };
            ctx.cpu_ns += self.cfg.costs.touch_ns;
            if e & PTE_ATTN == 0 {
                return;
            }
            // A swap-cache folio's PTE is writable (do_swap_page() maps an exclusive page
            // writable even on a read fault): a store sets the dirty bit without a fault,
            // and the folio keeps its swap slot.
            let pfn = pte_pfn(e);
            let t = self.pages.wait_locked(pfn, ctx.now);
            ctx.wait(t);
            self.update_pte_attn(pfn);
            return;
        }
        self.ev.add(Ev::PgFault, 1);
        // __handle_mm_fault() allocates the missing page tables on the way down; a swap
        // entry lives in a PTE table that exists.
        if !pte_swap(e) && !self.pgtable_alloc(ctx, obj, index) {
            return;
        }
        // handle_mm_fault(): the task's mm joins its memcg's mm list (lru_gen_add_mm()), and
        // folios added during the fault are "in fault" for the multi-gen LRU.
        self.objects[obj as usize].join_mm_list(ctx.memcg);
        // lru_gen_enter_fault(): only VMAs with recency.
        let recency = self.objects[obj as usize].has_recency();
        if pte_swap(e) {
            self.in_lru_fault = recency;
            self.do_swap_page(ctx, obj, index, e, write);
            self.in_lru_fault = false;
            return;
        }
        if e & PTE_ZERO != 0 && !write {
            ctx.cpu_ns += self.cfg.costs.touch_ns;
            return;
        }
        if kind == ObjKind::Anon && !write {
            // Read fault of never-written private anon memory maps the zero page.
            self.objects[obj as usize].ent[index as usize] = PTE_ZERO;
            ctx.cpu_ns += self.cfg.costs.minor_fault_ns;
            return;
        }
        self.in_lru_fault = recency;
        self.do_anonymous_page(ctx, obj, index, write);
        self.in_lru_fault = false;
    }

    /// Kernel: `do_anonymous_page()` (and `shmem_fault()` allocation): allocate, zero, map
    /// young (+dirty), add to the inactive anon list (v5.9+; the active list under the legacy
    /// balance model, as before v5.9).
    fn do_anonymous_page(&mut self, ctx: &mut Ctx, obj: u32, index: u32, write: bool) {
        ctx.cpu_ns += self.cfg.costs.minor_fault_ns;
        let Some(pfn) = self.alloc_folio(ctx, 0, ctx.memcg) else {
            return;
        };
        let i = pfn as usize;
        self.pages.flags[i] |= pg::SWAPBACKED;
        self.pages.obj[i] = obj;
        self.pages.index[i] = index;
        let o = &mut self.objects[obj as usize];
        o.nr_resident += 1;
        // A shmem page is dirty from creation (it has no backing store but swap).
        let dirty = write || o.kind == ObjKind::Shmem;
        o.ent[index as usize] = make_present_pte(pfn, dirty);
        if self.balance.new_anon_active() {
            self.pages.set(pfn, pg::ACTIVE);
        }
        self.folio_add_lru(pfn);
    }

    /// A load or store through a shared file mapping: `filemap_fault()` on a missing PTE.
    fn touch_file(&mut self, ctx: &mut Ctx, obj: u32, index: u32, write: bool) {
        let o = &mut self.objects[obj as usize];
        if o.mapped.is_empty() {
            o.mapped = crate::zeroed::ZeroedVec::new(o.size_pages as usize);
        }
        let m = o.mapped[index as usize];
        if m & 1 != 0 {
            o.mapped[index as usize] = m | 2;
            ctx.cpu_ns += self.cfg.costs.touch_ns;
            if write {
                if let Some(pfn) = self.cache_lookup(obj, index) {
                    self.fault_dirty_shared_page(ctx, obj, pfn);
                }
            }
            return;
        }
        self.ev.add(Ev::PgFault, 1);
        if !self.pgtable_alloc(ctx, obj, index) {
            return;
        }
        let o = &mut self.objects[obj as usize];
        o.join_mm_list(ctx.memcg);
        // lru_gen_enter_fault(): only VMAs with recency.
        self.in_lru_fault = o.has_recency();
        self.touch_file_fault(ctx, obj, index, write);
        self.in_lru_fault = false;
    }

    fn touch_file_fault(&mut self, ctx: &mut Ctx, obj: u32, index: u32, write: bool) {
        let o = &mut self.objects[obj as usize];
        if o.file_pages <= index as u64 {
            // Mapping beyond EOF would SIGBUS; a mapped write extends the file first in our
            // workloads (they only touch within the object's size).
            o.file_pages = index as u64 + 1;
        }
        let pfn = match self.cache_lookup(obj, index) {
            Some(pfn) => {
                ctx.cpu_ns += self.cfg.costs.minor_fault_ns;
                if self.pages.test(pfn, pg::READAHEAD) {
                    self.page_cache_async_ra(ctx, obj, index, pfn);
                }
                pfn
            }
            None => {
                ctx.major = true;
                self.ev.add(Ev::PgMajFault, 1);
                ctx.cpu_ns += self.cfg.costs.major_fault_ns;
                self.do_sync_mmap_readahead(ctx, obj, index);
                match self.cache_lookup(obj, index) {
                    Some(p) => p,
                    None => return,
                }
            }
        };
        let t = self.pages.wait_locked(pfn, ctx.now);
        ctx.wait(t);
        self.objects[obj as usize].mapped[index as usize] = 3;
        if write {
            self.fault_dirty_shared_page(ctx, obj, pfn);
        }
    }

    /// Kernel: `fault_dirty_shared_page()`: a store through a shared file mapping dirties the
    /// folio; if that made it dirty, the task balances (`balance_dirty_pages_ratelimited()`).
    fn fault_dirty_shared_page(&mut self, ctx: &mut Ctx, obj: u32, pfn: Pfn) {
        if self.pages.test(pfn, pg::DIRTY) {
            return;
        }
        self.mark_dirty(ctx.now, obj, pfn);
        let nr = self.pages.nr_pages(pfn);
        self.balance_dirty_pages_ratelimited(ctx, nr);
    }
}
