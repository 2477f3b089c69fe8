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
//! - No fault-around for file mappings, no COW between processes: every
//!   anon page is exclusive and mapped writable (`do_swap_page()` maps a swapped-in page
//!   writable even on a read fault), so no store takes a `do_wp_page()` fault and `pgreuse`
//!   stays 0 (the kernel counts a few, from paths the model lacks).
//!
//!
//! # Transparent huge pages (anonymous faults)
//! An anonymous object whose THP advice and `transparent_hugepage/enabled` allow it
//! (`thp_vma_allowable_order()`) takes a write fault in an empty, fully covered, 2 MiB-aligned
//! range of 512 pages through `do_huge_pmd_anonymous_page()`: one order-9 allocation with the
//! gfp mask `vma_thp_gfp_mask()` derives from `transparent_hugepage/defrag`, a memcg charge
//! that never OOM-kills, and on success one compound folio of 512 pages on the LRU, mapped by
//! a "PMD" (`thp_fault_alloc`, `nr_anon_transparent_hugepages`); on failure
//! `thp_fault_fallback` (and `thp_fault_fallback_charge`) and the order-0 fault. The PMD is
//! represented by the 512 per-page entries, each pointing at its subpage, with the folio's
//! `pg::PMD_MAPPED` flag standing for the PMD itself: the hot path of an access is the same
//! for a THP as for a base page, and reclaim ORs the young bits of the 512 entries as the
//! PMD's one young bit. Differences from the kernel, all in the model's favour of simplicity:
//! - The object's virtual start is taken as 2 MiB-aligned (the kernel aligns anonymous
//!   mappings of at least a PMD, `__thp_get_unmapped_area()`), so ranges are index / 512.
//! - A read fault maps the zero page per page instead of the huge zero page; a later write
//!   fault in a range holding only zero-page entries takes the THP path, as the kernel's
//!   `do_huge_zero_wp_pmd()` does.
//! - No khugepaged (ranges faulted with base pages are never collapsed), no mTHP orders
//!   (only PMD order, as with every `hugepages-*kB/enabled` at its default), no deferred
//!   split shrinker (the model never partially unmaps a THP), THP only for private anon
//!   (shmem's `shmem_enabled` is not modelled).
//! - Zeroing the 2 MiB (`folio_zero_user()`) costs one `minor_fault_ns`, like a base page:
//!   the cost table has no per-byte clearing cost.
//!
//! # Kernel references
//! mm/memory.c `handle_mm_fault()`, `do_anonymous_page()`, `do_swap_page()`,
//! `should_try_to_free_swap()`, `filemap_fault()` (mm/filemap.c); mm/huge_memory.c
//! `do_huge_pmd_anonymous_page()`, `vma_alloc_anon_folio_pmd()`, `vma_thp_gfp_mask()`,
//! `__thp_vma_allowable_orders()`.

use crate::alloc::Gfp;
use crate::mmzone::mt;
use crate::page::pg;
use crate::types::*;
use crate::vmstat::Ev;
use crate::{Ctx, HugepageAdvice, Mm, ObjKind, ThpDefrag, ThpEnabled};

/// Kernel: `HPAGE_PMD_ORDER` / `HPAGE_PMD_NR` on x86-64.
pub const HPAGE_PMD_ORDER: u32 = 9;
pub const HPAGE_PMD_NR: u32 = 1 << HPAGE_PMD_ORDER;

/// Kernel: the sysfs and VMA-flag part of `__thp_vma_allowable_orders()` for an anonymous
/// VMA: VM_NOHUGEPAGE forbids, `enabled = always` allows every VMA, `madvise` only VMAs with
/// VM_HUGEPAGE, `never` none.
pub fn thp_allowed(enabled: ThpEnabled, advice: HugepageAdvice) -> bool {
    match advice {
        HugepageAdvice::NoHugepage => false,
        HugepageAdvice::Hugepage => enabled != ThpEnabled::Never,
        HugepageAdvice::None => enabled == ThpEnabled::Always,
    }
}

/// Kernel: `vma_thp_gfp_mask()`: GFP_TRANSHUGE_LIGHT (no reclaim of any kind) plus, by
/// `defrag` mode and whether the VMA is advised MADV_HUGEPAGE:
///
/// | defrag        | advised                     | not advised                   |
/// |---------------|-----------------------------|-------------------------------|
/// | always        | direct reclaim/compaction   | direct, `__GFP_NORETRY`       |
/// | defer         | wake kswapd/kcompactd       | wake kswapd/kcompactd         |
/// | defer+madvise | direct reclaim/compaction   | wake kswapd/kcompactd         |
/// | madvise       | direct reclaim/compaction   | nothing                       |
/// | never         | nothing                     | nothing                       |
pub fn vma_thp_gfp_mask(defrag: ThpDefrag, madvised: bool) -> Gfp {
    let (direct_reclaim, kswapd_reclaim, noretry) = match defrag {
        ThpDefrag::Always => (true, false, !madvised),
        ThpDefrag::Defer => (false, true, false),
        ThpDefrag::DeferMadvise => (madvised, !madvised, false),
        ThpDefrag::Madvise => (madvised, false, false),
        ThpDefrag::Never => (false, false, false),
    };
    Gfp {
        mt: mt::MOVABLE,
        direct_reclaim,
        kswapd_reclaim,
        noretry,
        retry_mayfail: false,
        high: false,
        atomic: false,
    }
}

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
            let pfn = self.pages.anon_folio_of(pte_pfn(e));
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
        // The faulting task runs the mm whose TLBs an unmap flushes (crate::tlb).
        self.objects[obj as usize].mappers.insert(ctx.task);
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
        if !(self.objects[obj as usize].thp && self.do_huge_pmd_anonymous_page(ctx, obj, index)) {
            self.do_anonymous_page(ctx, obj, index, write);
        }
        self.in_lru_fault = false;
    }

    /// Kernel: `do_huge_pmd_anonymous_page()` (and `do_huge_zero_wp_pmd()`) for a write fault
    /// at `index` of a THP-eligible anonymous object. Returns false when the fault falls back
    /// to base pages (`VM_FAULT_FALLBACK`): the range is not fully inside the object or is not
    /// empty (`pmd_none()`: only none or zero-page entries), or the order-9 allocation or its
    /// memcg charge failed (`thp_fault_fallback`, `thp_fault_fallback_charge`).
    fn do_huge_pmd_anonymous_page(&mut self, ctx: &mut Ctx, obj: u32, index: u32) -> bool {
        let haddr = index & !(HPAGE_PMD_NR - 1);
        let o = &self.objects[obj as usize];
        if haddr as u64 + HPAGE_PMD_NR as u64 > o.size_pages {
            return false;
        }
        let range = haddr as usize..(haddr + HPAGE_PMD_NR) as usize;
        if o.ent[range.clone()]
            .iter()
            .any(|&e| e != 0 && e != PTE_ZERO)
        {
            return false;
        }
        // vma_alloc_anon_folio_pmd()
        let gfp = vma_thp_gfp_mask(self.cfg.thp_defrag, o.thp_madvised);
        ctx.cpu_ns += self.cfg.costs.page_alloc_ns;
        let Some(pfn) = self.alloc_pages(ctx, HPAGE_PMD_ORDER, gfp) else {
            self.ev.add(Ev::ThpFaultFallback, 1);
            return false;
        };
        let memcg = ctx.memcg;
        if !self.charge_thp(ctx, memcg, gfp) {
            self.ev.add(Ev::PgFree, HPAGE_PMD_NR as u64);
            let zi = self.zone_of(pfn);
            self.zones[zi].free_block(&mut self.pages, pfn, HPAGE_PMD_ORDER);
            self.ev.add(Ev::ThpFaultFallback, 1);
            self.ev.add(Ev::ThpFaultFallbackCharge, 1);
            return false;
        }
        self.ev.add(Ev::ThpFaultAlloc, 1);
        ctx.cpu_ns += self.cfg.costs.minor_fault_ns;
        let i = pfn as usize;
        self.pages.hot[i].flags = pg::HEAD | pg::SWAPBACKED | pg::PMD_MAPPED;
        self.pages.hot[i].order = HPAGE_PMD_ORDER as u8;
        self.pages.hot[i].memcg = memcg;
        self.pages.io_done_ns[i] = 0;
        self.pages.obj[i] = obj;
        self.pages.index[i] = haddr;
        // map_anon_folio_pmd(): a young, dirty, writable PMD.
        let o = &mut self.objects[obj as usize];
        for (k, e) in o.ent[range].iter_mut().enumerate() {
            *e = make_present_pte(pfn + k as u32, true);
        }
        o.nr_resident += HPAGE_PMD_NR as u64;
        self.node.nr_anon_thps += 1;
        if self.balance.new_anon_active() {
            self.pages.set(pfn, pg::ACTIVE);
        }
        self.folio_add_lru(pfn);
        true
    }

    /// Kernel: `mem_cgroup_charge()` of a THP (`try_charge_memcg()` with 512 pages): limit
    /// reclaim while the gfp mask may block, MAX_RECLAIM_RETRIES rounds (none with
    /// `__GFP_NORETRY`), and no OOM kill (`mem_cgroup_oom()` skips orders above
    /// PAGE_ALLOC_COSTLY_ORDER): the caller falls back to base pages.
    fn charge_thp(&mut self, ctx: &mut Ctx, memcg: u16, gfp: Gfp) -> bool {
        let m = memcg as usize;
        let nr = HPAGE_PMD_NR as u64;
        if m == 0 {
            self.memcgs[0].usage += nr;
            return true;
        }
        let mut retries = MAX_RECLAIM_RETRIES;
        loop {
            let mc = &mut self.memcgs[m];
            if mc.usage + nr <= mc.max_pages {
                mc.usage += nr;
                return true;
            }
            mc.events.max_events += 1;
            if !gfp.direct_reclaim {
                return false;
            }
            let reclaimed = self.try_to_free_mem_cgroup_pages(ctx, m, nr);
            if reclaimed == 0 {
                self.reclaim_throttle_writeback(ctx);
            }
            let mc = &self.memcgs[m];
            if mc.usage + nr <= mc.max_pages {
                continue;
            }
            if gfp.noretry || retries == 0 {
                return false;
            }
            retries -= 1;
        }
    }

    /// Kernel: `do_anonymous_page()` (and `shmem_fault()` allocation): allocate, zero, map
    /// young (+dirty), add to the inactive anon list (v5.9+; under the legacy balance model,
    /// as before v5.9, private anon goes to the active list and shmem to the inactive one).
    fn do_anonymous_page(&mut self, ctx: &mut Ctx, obj: u32, index: u32, write: bool) {
        ctx.cpu_ns += self.cfg.costs.minor_fault_ns;
        let Some(pfn) = self.alloc_folio(ctx, 0, ctx.memcg) else {
            return;
        };
        let i = pfn as usize;
        self.pages.hot[i].flags |= pg::SWAPBACKED;
        self.pages.obj[i] = obj;
        self.pages.index[i] = index;
        let o = &mut self.objects[obj as usize];
        o.nr_resident += 1;
        // A shmem page is dirty from creation (it has no backing store but swap).
        let dirty = write || o.kind == ObjKind::Shmem;
        o.ent[index as usize] = make_present_pte(pfn, dirty);
        // Before v5.9 only private anon started active (`lru_cache_add_active_or_unevictable()`);
        // shmem pages went to the inactive anon list (`shmem_getpage_gfp()` ->
        // `lru_cache_add_anon()`, which clears PG_active).
        let shmem = self.objects[obj as usize].kind == ObjKind::Shmem;
        if self.balance.new_anon_active() && !shmem {
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
        o.mappers.insert(ctx.task);
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
            o.datasync_meta = true;
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

/// Transparent huge pages on anonymous faults and under reclaim, on small machines.
#[cfg(test)]
mod thp_tests {
    use super::*;
    use crate::testutil::*;
    use crate::vmscan::ScanControl;
    use crate::*;

    /// Object 0 (anon, MADV_NOHUGEPAGE) fragments memory; object 2 (anon, `advice`, one
    /// page-table's worth more than the machine) is the THP candidate.
    fn thp_mm(pages: u64, enabled: ThpEnabled, defrag: ThpDefrag, advice: HugepageAdvice) -> Mm {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, pages);
        cfg.readahead_max_pages = 0;
        cfg.thp_enabled = enabled;
        cfg.thp_defrag = defrag;
        cfg.objects[0].hugepage = HugepageAdvice::NoHugepage;
        cfg.objects.push(ObjectCfg {
            kind: ObjKind::Anon,
            size_pages: pages + 100,
            exists: true,
            hugepage: advice,
            mlock: false,
        });
        Mm::new(cfg)
    }

    fn gauge(mm: &Mm, name: &str) -> u64 {
        mm.vmstat_snapshot()
            .into_iter()
            .find(|(n, _)| *n == name)
            .unwrap()
            .1
    }

    #[test]
    fn vma_thp_gfp_mask_by_defrag_mode() {
        // (direct reclaim, kswapd reclaim, noretry) for (advised, not advised).
        let cases = [
            (ThpDefrag::Always, (true, false, false), (true, false, true)),
            (ThpDefrag::Defer, (false, true, false), (false, true, false)),
            (
                ThpDefrag::DeferMadvise,
                (true, false, false),
                (false, true, false),
            ),
            (
                ThpDefrag::Madvise,
                (true, false, false),
                (false, false, false),
            ),
            (
                ThpDefrag::Never,
                (false, false, false),
                (false, false, false),
            ),
        ];
        for (d, adv, not) in cases {
            for (madvised, want) in [(true, adv), (false, not)] {
                let g = vma_thp_gfp_mask(d, madvised);
                assert_eq!(
                    (g.direct_reclaim, g.kswapd_reclaim, g.noretry),
                    want,
                    "{d:?} madvised={madvised}"
                );
                assert_eq!(g.mt, mt::MOVABLE);
            }
        }
    }

    #[test]
    fn thp_allowed_by_enabled_and_advice() {
        use HugepageAdvice::*;
        use ThpEnabled::*;
        let want = [
            (Always, None, true),
            (Always, Hugepage, true),
            (Always, NoHugepage, false),
            (Madvise, None, false),
            (Madvise, Hugepage, true),
            (Madvise, NoHugepage, false),
            (Never, None, false),
            (Never, Hugepage, false),
        ];
        for (e, a, w) in want {
            assert_eq!(thp_allowed(e, a), w, "{e:?} {a:?}");
        }
    }

    #[test]
    fn write_fault_maps_one_order9_folio() {
        let mut mm = thp_mm(
            4096,
            ThpEnabled::Always,
            ThpDefrag::Madvise,
            HugepageAdvice::None,
        );
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.touch(&mut ctx, 2, 700, true);
        assert_eq!(mm.ev.get(Ev::ThpFaultAlloc), 1);
        let head = pte_pfn(mm.objects[2].ent[512]);
        assert_eq!(head % HPAGE_PMD_NR, 0);
        assert_eq!(mm.pages.nr_pages(head), 512);
        assert_eq!(mm.pages.owner(head).index, 512);
        for k in 0..512u32 {
            let e = mm.objects[2].ent[(512 + k) as usize];
            assert!(pte_present(e) && e & PTE_DIRTY != 0);
            assert_eq!(pte_pfn(e), head + k);
            assert_eq!(mm.pages.anon_folio_of(head + k), head);
        }
        assert_eq!(mm.objects[2].ent[511], 0);
        assert_eq!(mm.node_lru(LruList::InactiveAnon), 512);
        assert_eq!(gauge(&mm, "nr_anon_transparent_hugepages"), 1);
        assert_eq!(gauge(&mm, "nr_anon_pages"), 512);
        // Another page of the THP: no fault.
        let faults = mm.ev.get(Ev::PgFault);
        mm.touch(&mut ctx, 2, 1000, true);
        assert_eq!(mm.ev.get(Ev::PgFault), faults);
        // A read fault maps the zero page; the write after it takes the THP path.
        mm.touch(&mut ctx, 2, 1500, false);
        assert_eq!(mm.objects[2].ent[1500], PTE_ZERO);
        mm.touch(&mut ctx, 2, 1500, true);
        assert_eq!(mm.ev.get(Ev::ThpFaultAlloc), 2);
        // The last range is not fully inside the object: a base page, no fallback counted.
        mm.touch(&mut ctx, 2, 4150, true);
        assert_eq!(mm.pages.nr_pages(pte_pfn(mm.objects[2].ent[4150])), 1);
        // A range that already has a page table: base pages too.
        mm.touch(&mut ctx, 2, 3000, false);
        mm.touch(&mut ctx, 2, 3001, true);
        assert_eq!(mm.ev.get(Ev::ThpFaultAlloc), 3, "zero-page entries only");
        mm.touch(&mut ctx, 2, 100, true);
        mm.touch(&mut ctx, 0, 0, true); // object 0 is MADV_NOHUGEPAGE
        assert_eq!(mm.ev.get(Ev::ThpFaultAlloc), 4);
        assert_eq!(mm.pages.nr_pages(pte_pfn(mm.objects[0].ent[0])), 1);
        assert_eq!(mm.ev.get(Ev::ThpFaultFallback), 0);
        assert_eq!(gauge(&mm, "nr_anon_transparent_hugepages"), 4);
        mm.check_invariants().unwrap();
    }

    /// THPs faulted in object 2 by a write to every page, for each `enabled` mode and advice.
    fn thps(enabled: ThpEnabled, advice: HugepageAdvice) -> u64 {
        let mut mm = thp_mm(4096, enabled, ThpDefrag::Madvise, advice);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for i in 0..2048 {
            mm.touch(&mut ctx, 2, i, true);
        }
        mm.check_invariants().unwrap();
        assert_eq!(
            gauge(&mm, "nr_anon_transparent_hugepages"),
            mm.ev.get(Ev::ThpFaultAlloc)
        );
        mm.ev.get(Ev::ThpFaultAlloc)
    }

    #[test]
    fn enabled_modes_and_madvise() {
        use HugepageAdvice::*;
        assert_eq!(thps(ThpEnabled::Always, None), 4);
        assert_eq!(thps(ThpEnabled::Always, NoHugepage), 0);
        assert_eq!(thps(ThpEnabled::Madvise, None), 0);
        assert_eq!(thps(ThpEnabled::Madvise, Hugepage), 4);
        assert_eq!(thps(ThpEnabled::Never, Hugepage), 0);
        assert_eq!(thps(ThpEnabled::Never, None), 0);
    }

    /// MADV_DONTNEED of one base page of object 0 (test helper).
    fn zap(mm: &mut Mm, index: u32) {
        let e = mm.objects[0].ent[index as usize];
        // Reclaim may have swapped the page out while the object was filled (its page
        // tables take frames too): only a present page is unmapped and freed here.
        if !pte_present(e) {
            return;
        }
        let pfn = pte_pfn(e);
        mm.lru_del(pfn);
        mm.objects[0].ent[index as usize] = 0;
        mm.objects[0].nr_resident -= 1;
        mm.free_folio(pfn);
    }

    /// A machine whose free memory is every other page of object 0: no free order-9 block.
    /// Then four THP write faults in object 2 under `defrag`.
    fn fault_fragmented(defrag: ThpDefrag) -> Mm {
        let mut mm = thp_mm(4096, ThpEnabled::Always, defrag, HugepageAdvice::None);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for i in 0..3900 {
            mm.touch(&mut ctx, 0, i, true);
        }
        for i in (0..3900).step_by(2) {
            zap(&mut mm, i);
        }
        assert!(!mm.zones[0].watermark_ok(9, 0));
        for r in 0..4 {
            mm.touch(&mut ctx, 2, r * 512, true);
        }
        mm.check_invariants().unwrap();
        mm
    }

    #[test]
    fn defrag_never_falls_back_where_always_compacts() {
        let never = fault_fragmented(ThpDefrag::Never);
        assert_eq!(never.ev.get(Ev::ThpFaultAlloc), 0);
        assert_eq!(never.ev.get(Ev::ThpFaultFallback), 4);
        assert_eq!(never.ev.get(Ev::CompactStall), 0);
        // The fallback faulted base pages.
        assert_eq!(never.objects[2].nr_resident, 4);
        let always = fault_fragmented(ThpDefrag::Always);
        // Of the machine's 8 pageblocks, the one holding object 0's page tables (9
        // unmovable pages) cannot be compacted into a free block: at least 2 of the 4
        // faults get a THP.
        assert!(
            always.ev.get(Ev::ThpFaultAlloc) >= 2,
            "direct compaction makes the blocks: {} THPs",
            always.ev.get(Ev::ThpFaultAlloc)
        );
        assert!(always.ev.get(Ev::CompactStall) > 0);
        assert!(always.ev.get(Ev::PgmigrateSuccess) > 0);
        assert!(always.ev.get(Ev::ThpFaultFallback) < 4);
        // defer: kswapd is woken (the node is balanced at order 0, so kcompactd), no stall.
        let defer = fault_fragmented(ThpDefrag::Defer);
        assert_eq!(defer.ev.get(Ev::ThpFaultAlloc), 0);
        assert_eq!(defer.ev.get(Ev::CompactStall), 0);
        assert!(defer.kswapd.wake_pending || defer.kcompactd.wake_pending);
    }

    /// One THP faulted, then reclaimed with classic reclaim at priority 0 until it is gone.
    fn reclaim_thp(swap_pages: u64) -> Mm {
        let mut mm = thp_mm(
            4096,
            ThpEnabled::Always,
            ThpDefrag::Madvise,
            HugepageAdvice::None,
        );
        mm.swap = vec![swap::SwapArea::new(&SwapAreaCfg {
            dev: 1,
            size_pages: swap_pages,
            priority: 0,
            synchronous: true,
            rotational: false,
        })];
        mm.swap_order = vec![0];
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.touch(&mut ctx, 2, 0, true);
        assert_eq!(mm.ev.get(Ev::ThpFaultAlloc), 1);
        // First pass: the PMD was young (kept, referenced); second: reclaimed.
        for _ in 0..2 {
            let mut sc = ScanControl::new(1024, 0);
            sc.priority = 0;
            mm.shrink_node(&mut ctx, &mut sc);
        }
        mm.check_invariants().unwrap();
        mm
    }

    #[test]
    fn thp_swaps_out_whole_into_a_free_cluster() {
        let mm = reclaim_thp(4096);
        assert_eq!(mm.ev.get(Ev::ThpSwpout), 1);
        assert_eq!(mm.ev.get(Ev::PswpOut), 512);
        assert_eq!(mm.ev.get(Ev::ThpSplitPmd), 1);
        assert_eq!(mm.ev.get(Ev::ThpSplitPage), 0);
        assert_eq!(mm.ev.get(Ev::ThpSwpoutFallback), 0);
        assert_eq!(mm.objects[2].nr_resident, 0);
        assert_eq!(gauge(&mm, "nr_anon_transparent_hugepages"), 0);
        // Entries 0..512 hold consecutive slots of one aligned cluster.
        let base = swp_slot(mm.objects[2].ent[0]);
        assert_eq!(base % 512, 0);
        for k in 0..512u32 {
            assert_eq!(mm.objects[2].ent[k as usize], make_swap_pte(0, base + k));
        }
        // The order-9 block is free again.
        assert!(mm.zones[0].watermark_ok(9, 0));
    }

    #[test]
    fn thp_is_split_when_no_swap_cluster_is_free() {
        // 600 slots: cluster 0 holds the header, cluster 1 is not whole.
        let mm = reclaim_thp(600);
        assert_eq!(mm.ev.get(Ev::ThpSwpout), 0);
        assert_eq!(mm.ev.get(Ev::ThpSplitPage), 1);
        assert_eq!(mm.ev.get(Ev::ThpSwpoutFallback), 1);
        assert_eq!(mm.ev.get(Ev::ThpSplitPmd), 1);
        assert_eq!(mm.ev.get(Ev::PswpOut), 512);
        assert_eq!(mm.objects[2].nr_resident, 0);
        assert!((0..512).all(|k| pte_swap(mm.objects[2].ent[k])));
    }

    #[test]
    fn swapped_thp_faults_back_as_base_pages() {
        let mut mm = reclaim_thp(4096);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.touch(&mut ctx, 2, 7, false);
        assert_eq!(mm.ev.get(Ev::PswpIn), 1);
        assert_eq!(mm.pages.nr_pages(pte_pfn(mm.objects[2].ent[7])), 1);
        assert_eq!(mm.ev.get(Ev::ThpFaultAlloc), 1);
        mm.check_invariants().unwrap();
    }

    /// Pin one unmovable kernel page in each of `k` pageblocks that hold none yet, through
    /// the allocator: allocate kernel pages (they fill the free space of the unmovable
    /// blocks first, then `__rmqueue_fallback()` claims a fresh block) until `k` new blocks
    /// hold one, keep the first page in each new block and free the rest.
    fn pin_unmovable_in_new_blocks(mm: &mut Mm, ctx: &mut Ctx, pinned: &mut Vec<u32>, k: usize) {
        let mut got: Vec<Pfn> = vec![];
        let mut new_blocks: Vec<u32> = vec![];
        while new_blocks.len() < k {
            let p = mm
                .alloc_kernel_pages(ctx, 0, Gfp::NOWAIT)
                .expect("free memory");
            let b = p >> crate::mmzone::PAGEBLOCK_ORDER;
            if !pinned.contains(&b) && !new_blocks.contains(&b) {
                new_blocks.push(b);
                pinned.push(b);
            } else {
                got.push(p);
            }
        }
        for p in got {
            mm.free_kernel_pages(p);
        }
    }

    /// As unmovable pins spread over more pageblocks, THP faults find fewer free order-9
    /// blocks: `thp_fault_alloc` per phase falls and `thp_fault_fallback` rises while the
    /// free memory would hold every THP asked for (fragmentation, not lack of memory).
    #[test]
    fn thp_fault_alloc_falls_as_unmovable_pins_spread() {
        // defrag = never: the faults take only what the free lists hold (no reclaim, which
        // could swap a THP out and free its block; compaction cannot move a pin anyway).
        let mut mm = thp_mm(
            16384,
            ThpEnabled::Always,
            ThpDefrag::Never,
            HugepageAdvice::None,
        );
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let mut pinned: Vec<u32> = vec![];
        let faults = 6u32;
        let mut per_phase = vec![];
        for (phase, pins) in [0usize, 8, 8].into_iter().enumerate() {
            pin_unmovable_in_new_blocks(&mut mm, &mut ctx, &mut pinned, pins);
            let free = mm.nr_free();
            let (a0, f0) = (
                mm.ev.get(Ev::ThpFaultAlloc),
                mm.ev.get(Ev::ThpFaultFallback),
            );
            for r in 0..faults {
                mm.touch(&mut ctx, 2, (phase as u32 * faults + r) * 512, true);
            }
            let alloc = mm.ev.get(Ev::ThpFaultAlloc) - a0;
            let fallback = mm.ev.get(Ev::ThpFaultFallback) - f0;
            assert_eq!(alloc + fallback, faults as u64);
            assert!(
                free > (faults as u64 + 1) * 512,
                "phase {phase}: {free} pages free"
            );
            per_phase.push((alloc, fallback));
        }
        mm.check_invariants().unwrap();
        eprintln!("(thp_fault_alloc, thp_fault_fallback) per phase: {per_phase:?}");
        assert!(
            per_phase
                .windows(2)
                .all(|w| w[1].0 <= w[0].0 && w[1].1 >= w[0].1),
            "{per_phase:?}"
        );
        let (first, last) = (per_phase[0], per_phase[per_phase.len() - 1]);
        assert_eq!(first, (faults as u64, 0), "{per_phase:?}");
        assert!(last.0 < first.0 && last.1 > 0, "{per_phase:?}");
    }
}
