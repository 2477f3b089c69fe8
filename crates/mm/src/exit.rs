//! Short-lived processes: fork, and the exit that gives every page back.
//!
//! # The problem
//! A kernel build runs thousands of compilers, each a process that lives a second or two. Each
//! fork allocates kernel memory that cannot move (a kernel stack, the page-global directory,
//! later the page tables of every range it faults); each exit frees all of it, and all of the
//! process's anonymous memory, back to the buddy allocator at once. Two things follow that a
//! long-lived process cannot show: the process's anonymous memory is faulted afresh, THP
//! fault by THP fault, all through the build (a THP fault under `defrag = always` compacts
//! directly); and the unmovable pages of one process land wherever the allocator finds
//! room, which under pressure is a MOVABLE pageblock taken over by fallback (`__rmqueue()`'s
//! steal), where they stay until that process exits, and the next process's stack may land
//! in another one.
//!
//! # In this model
//! A process is an anonymous object (its address space: the heap the compiler faults) and
//! its kernel pages ([`ProcessPages`]). [`Mm::fork`] allocates the kernel stack and the
//! PGD; the object's page tables come from its faults, as for every object ([`crate::memcontrol`],
//! `__pte_alloc()`); its anonymous memory from [`Mm::touch`] (with THP where the object's
//! advice and `transparent_hugepage/enabled` allow). [`Mm::exit`] is `exit_mmap()` then
//! the task's final put:
//!
//! ```text
//!   exit_mmap()        every PTE of the object (zap_pte_range()):
//!     present folio      unmapped; its swap slot freed (free_swap_cache()); off the LRU,
//!                        uncharged, back to the buddy allocator (a PMD-mapped THP whole,
//!                        zap_huge_pmd())
//!     swap entry         free_swap_and_cache(): the slot freed; a swap-cache folio left
//!                        unmapped is freed with it
//!     folio under IO     (writeback, or a read not yet complete) unmapped but left in the
//!                        swap cache: folio_free_swap() cannot take a folio under writeback
//!                        and the kernel's trylock fails on a locked one; reclaim frees it
//!                        later, and then its slot (swap count 0: put_swap_folio())
//!   free_pgtables()    every PTE and PMD table of the object
//!   pgd_free()         the PGD
//!   free_thread_stack() the kernel stack (order THREAD_SIZE_ORDER)
//! ```
//!
//! Afterwards the object is empty (no PTE, no table, off every mm list) and the next process
//! of the same task reuses it as its own, new address space.
//!
//! # Where we differ from the kernel (v6.18 and v4.6)
//! - The kernel stack is one order-2 allocation (`THREAD_SIZE_ORDER` on x86-64 without
//!   KASAN; v4.6's `alloc_thread_stack_node()` → `alloc_kmem_pages_node(THREADINFO_GFP)`).
//!   With `CONFIG_VMAP_STACK` (v4.9+, default on x86-64) it is four order-0 pages from
//!   vmalloc, and each CPU keeps two freed stacks for the next fork (`NR_CACHED_STACKS`);
//!   the model keeps the order-2 page for every version.
//! - The slab objects of a process (`task_struct`, `mm_struct`, `vm_area_struct`s, signal,
//!   files, cred: a few tens of KiB) are not allocated: their caches keep partial slabs,
//!   so one more or one fewer process rarely allocates or frees a slab page.
//! - Upper tables other than the PGD (a PUD per used 512 GiB), and the tables of the
//!   binary's text, data and stack mappings, are not allocated: the object is the only
//!   mapping.
//! - The exit's CPU time is one `touch_ns` per folio zapped (the cost table has no entry
//!   for `zap_pte_range()`); fork costs its allocations' `page_alloc_ns` only.
//! - A folio under IO at exit whose read completes into no swap cache (a synchronous
//!   device's swap-in) is freed at once; the kernel frees it when the read ends.
//!
//! # Kernel references
//! kernel/fork.c `copy_process()`, `dup_task_struct()`, `alloc_thread_stack_node()`,
//! `free_thread_stack()`, `mm_init()`; arch/x86/mm/pgtable.c `pgd_alloc()`, `pgd_free()`;
//! kernel/exit.c `do_exit()`, `exit_mm()`; mm/mmap.c `exit_mmap()`; mm/memory.c
//! `unmap_vmas()`, `zap_pte_range()`, `free_pgtables()`; mm/huge_memory.c `zap_huge_pmd()`;
//! mm/swapfile.c `free_swap_and_cache()`, `put_swap_folio()`; mm/swap_state.c
//! `free_swap_cache()`.
//!
//! # Tests
//! `exit::tests::*`: exit returns every page (free pages back to the start, invariants
//! hold); stacks and page tables of churned processes fall back into MOVABLE pageblocks
//! when the UNMOVABLE ones are full; THP faults under churn.

use crate::memory::*;
use crate::page::pg;
use crate::swap::SLOT_CACHE;
use crate::types::*;
use crate::{Ctx, Mm};

/// Kernel: `THREAD_SIZE_ORDER` on x86-64 (arch/x86/include/asm/page_64_types.h: 16 KiB
/// stacks since v3.15, order 3 with KASAN).
pub const THREAD_SIZE_ORDER: u32 = 2;

/// The kernel pages of a live process ([`Mm::fork`]), freed by [`Mm::exit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessPages {
    /// The kernel stack, order [`THREAD_SIZE_ORDER`].
    pub stack: Pfn,
    /// The page-global directory (`mm->pgd`), a page-table page.
    pub pgd: Pfn,
}

impl Mm {
    /// Kernel: `copy_process()`'s allocations that reach the buddy allocator:
    /// `dup_task_struct()` → `alloc_thread_stack_node()` (GFP_KERNEL, order
    /// [`THREAD_SIZE_ORDER`], UNMOVABLE) and `mm_init()` → `pgd_alloc()` (an order-0 page
    /// table, charged to the task's memcg). None when either fails (fork returns -ENOMEM);
    /// an OOM on the way sets `ctx.oom` as for any allocation.
    pub fn fork(&mut self, ctx: &mut Ctx) -> Option<ProcessPages> {
        let stack = self.alloc_kernel_pages(ctx, THREAD_SIZE_ORDER, crate::alloc::Gfp::KERNEL)?;
        let Some(pgd) = self.alloc_pgtable_page(ctx) else {
            self.free_kernel_pages(stack);
            return None;
        };
        Some(ProcessPages { stack, pgd })
    }

    /// Kernel: `do_exit()` of the process whose address space is anonymous object `obj`:
    /// `exit_mmap()` (every PTE zapped, `free_pgtables()`), `pgd_free()`, and at the final
    /// `put_task_struct()` `free_thread_stack()`. See the module comment for each case.
    pub fn exit(&mut self, ctx: &mut Ctx, obj: u32, proc: ProcessPages) {
        self.exit_mmap(ctx, obj);
        self.free_pgtable_page(proc.pgd);
        self.free_kernel_pages(proc.stack);
    }

    /// Kernel: `exit_mmap()`: zap every entry of object `obj`, free its page tables, and
    /// take it off the mm lists.
    pub fn exit_mmap(&mut self, ctx: &mut Ctx, obj: u32) {
        let n = self.objects[obj as usize].size_pages as usize;
        let mut i = 0usize;
        while i < n {
            let e = self.objects[obj as usize].ent[i];
            if pte_present(e) {
                let pfn = self.pages.anon_folio_of(pte_pfn(e));
                ctx.cpu_ns += self.cfg.costs.touch_ns;
                i += self.zap_folio(obj, pfn);
                continue;
            }
            if pte_swap(e) {
                self.zap_swap_entry(obj, i, e);
            } else {
                self.objects[obj as usize].ent[i] = 0;
            }
            i += 1;
        }
        for pfn in self.objects[obj as usize].pgtables.take() {
            self.free_pgtable_page(pfn);
        }
        let o = &mut self.objects[obj as usize];
        // lru_gen_del_mm(): off every memcg's mm list; no thread runs the mm any more.
        o.mm_memcgs = 0;
        o.mappers = Default::default();
        o.swap_ra = Default::default();
    }

    /// `zap_pte_range()` / `zap_huge_pmd()` of the folio at `pfn` mapped by `obj`: clear
    /// every entry that maps it, then free it, or leave it in the swap cache while IO is in
    /// flight. Returns the number of entries it covered from the first one.
    fn zap_folio(&mut self, obj: u32, pfn: Pfn) -> usize {
        let nr = self.pages.nr_pages(pfn) as usize;
        self.clear_folio_entries(obj, pfn);
        if self.pages.test_clear(pfn, pg::PMD_MAPPED) {
            self.node.nr_anon_thps -= 1;
        }
        self.release_anon_folio(pfn);
        nr
    }

    /// Clear the entries of `obj` that map the folio at `pfn` or hold its swap entries.
    fn clear_folio_entries(&mut self, obj: u32, pfn: Pfn) {
        let nr = self.pages.nr_pages(pfn) as u32;
        let index = self.pages.index[pfn as usize];
        let swap = self.pages.test(pfn, pg::SWAPCACHE).then(|| {
            (
                self.pages.hot[pfn as usize].swap_area,
                self.pages.swap_slot[pfn as usize],
            )
        });
        let o = &mut self.objects[obj as usize];
        for k in 0..nr {
            let x = (index + k) as usize;
            let e = o.ent[x];
            let mapped = pte_present(e) && pte_pfn(e) == pfn + k;
            let swapped = swap.is_some_and(|(a, slot)| e == make_swap_pte(a, slot + k));
            if mapped || swapped {
                o.ent[x] = 0;
            }
        }
    }

    /// `free_swap_and_cache()` of swap entry `e` at index `i` of `obj`: free the slot, and
    /// with it a swap-cache folio no page table maps.
    fn zap_swap_entry(&mut self, obj: u32, i: usize, e: u64) {
        let (a, slot) = (swp_area(e) as usize, swp_slot(e));
        let s = self.swap[a].slots[slot as usize];
        if s & SLOT_CACHE != 0 {
            // A swap-cache folio (written, or read by readahead) whose entries this object's
            // PTEs hold: every such entry goes, then the folio.
            let pfn = s as u32;
            self.clear_folio_entries(obj, pfn);
            debug_assert_eq!(self.objects[obj as usize].ent[i], 0);
            self.release_anon_folio(pfn);
            return;
        }
        let owner = crate::swap::SlotOwner(self.swap[a].owner[slot as usize]);
        self.swap[a].free_slot(slot);
        self.memcgs[owner.memcg() as usize].swap_usage -= 1;
        self.objects[obj as usize].ent[i] = 0;
    }

    /// An anonymous folio no page table maps any more: freed now (its swap slot first), or,
    /// under writeback or locked for a read, left in the swap cache on its LRU for reclaim
    /// to free (the slot with it, [`Mm::remove_mapping`]).
    fn release_anon_folio(&mut self, pfn: Pfn) {
        let busy = self.pages.test(pfn, pg::WRITEBACK | pg::LOCKED);
        if busy && self.pages.test(pfn, pg::SWAPCACHE) {
            // The PTE went; ATTN bits only live in PTEs.
            return;
        }
        self.folio_free_swap(pfn);
        let nr = self.pages.nr_pages(pfn);
        let owner = self.pages.owner(pfn);
        self.objects[owner.obj as usize].nr_resident -= nr;
        self.lru_del(pfn);
        self.free_folio(pfn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::Gfp;
    use crate::mmzone::mt;
    use crate::testutil::*;
    use crate::vmstat::Ev;
    use crate::*;

    /// A 4096-page machine (8 pageblocks) with three anonymous objects of `obj_pages` each
    /// beside tiny_config's two (objects 2, 3, 4: process address spaces).
    fn churn_mm(obj_pages: u64, thp: ThpEnabled, synchronous_swap: bool) -> Mm {
        churn_mm_lru(obj_pages, thp, synchronous_swap, LruKind::Classic)
    }

    fn churn_mm_lru(obj_pages: u64, thp: ThpEnabled, synchronous_swap: bool, lru: LruKind) -> Mm {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
        cfg.lru = lru;
        cfg.readahead_max_pages = 0;
        cfg.thp_enabled = thp;
        cfg.thp_defrag = ThpDefrag::Never;
        cfg.swap_areas[0].synchronous = synchronous_swap;
        // No watermark boost: reclaim starts at the (tiny) low watermark.
        cfg.watermark_boost_factor = 0;
        for _ in 0..3 {
            cfg.objects.push(ObjectCfg {
                kind: ObjKind::Anon,
                size_pages: obj_pages,
                exists: true,
                hugepage: HugepageAdvice::None,
                mlock: false,
            });
        }
        Mm::new(cfg)
    }

    fn swap_free(mm: &Mm) -> u64 {
        mm.swap.iter().map(|a| a.nr_free).sum()
    }

    /// A process that faults 6000 pages into a 4096-page machine (reclaim swaps most of
    /// them out, some come back in) gives back, at exit, every page: free pages, swap slots,
    /// kernel and page-table pages and the memcg charge return to where they started. While
    /// it lives it holds an order-2 stack (4 kernel pages), the PGD and its PTE/PMD tables.
    /// Under both LRUs (the multi-gen LRU keeps its folios on generation lists).
    #[test]
    fn exit_frees_every_page() {
        exit_frees_every_page_under(LruKind::Classic);
        exit_frees_every_page_under(LruKind::Mglru);
    }

    fn exit_frees_every_page_under(lru: LruKind) {
        let mut mm = churn_mm_lru(6000, ThpEnabled::Never, true, lru);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let (free0, swap0, kernel0) = (mm.nr_free(), swap_free(&mm), mm.node.nr_kernel_pages);
        let usage0 = mm.memcgs[0].usage;
        let p = mm.fork(&mut ctx).unwrap();
        assert_eq!(mm.node.nr_kernel_pages, kernel0 + 4);
        assert_eq!(mm.node.nr_page_table_pages, 1);
        for i in 0..6000 {
            mm.touch(&mut ctx, 2, i, true);
        }
        // Read some swapped pages back in.
        for i in (0..2000).step_by(7) {
            mm.touch(&mut ctx, 2, i, false);
        }
        mm.check_invariants().unwrap();
        assert!(mm.ev.get(Ev::PswpOut) > 1000 && mm.ev.get(Ev::PswpIn) > 0);
        assert!(swap_free(&mm) < swap0);
        // 6000 pages: ceil(6000 / 512) = 12 PTE tables, 1 PMD table, and the PGD.
        assert_eq!(mm.node.nr_page_table_pages, 12 + 1 + 1);
        mm.exit(&mut ctx, 2, p);
        mm.check_invariants().unwrap();
        assert_eq!(mm.nr_free(), free0);
        assert_eq!(swap_free(&mm), swap0);
        assert_eq!(mm.node.nr_kernel_pages, kernel0);
        assert_eq!(mm.node.nr_page_table_pages, 0);
        assert_eq!(mm.memcgs[0].usage, usage0);
        assert_eq!(mm.memcgs[0].swap_usage, 0);
        assert_eq!(mm.objects[2].nr_resident, 0);
        assert!(mm.objects[2].ent.iter().all(|&e| e == 0));
    }

    /// Folios under swap writeback when their process exits stay in the swap cache,
    /// unmapped, and reclaim frees them and their slots afterwards (swap count 0,
    /// `put_swap_folio()`): once the writes complete and reclaim has run, free pages and swap
    /// slots are back at the start. Two folios are put under writeback as
    /// `shrink_folio_list()` does (`add_to_swap()`, `pageout()`), one unmapped first (its PTE
    /// holds the swap entry), one still mapped (a fault mapped it again during the write).
    #[test]
    fn folios_under_writeback_at_exit_are_freed_by_reclaim() {
        let mut mm = churn_mm(1000, ThpEnabled::Never, false);
        let mut io = DelayIo(50_000_000);
        let mut ctx = Ctx::new(0, &mut io, 0);
        let (free0, swap0) = (mm.nr_free(), swap_free(&mm));
        let p = mm.fork(&mut ctx).unwrap();
        for i in 0..100 {
            mm.touch(&mut ctx, 2, i, true);
        }
        let (a, b) = (
            pte_pfn(mm.objects[2].ent[10]),
            pte_pfn(mm.objects[2].ent[20]),
        );
        for (pfn, unmap) in [(a, true), (b, false)] {
            assert!(mm.add_to_swap(pfn));
            if unmap {
                mm.try_to_unmap(&mut ctx, pfn);
            }
            assert!(!mm.pageout(&mut ctx, pfn));
        }
        assert_eq!(mm.node.nr_writeback, 2);
        assert!(pte_swap(mm.objects[2].ent[10]) && pte_present(mm.objects[2].ent[20]));
        mm.exit(&mut ctx, 2, p);
        mm.check_invariants().unwrap();
        // Exactly the two folios under writeback are left, each still holding its slot.
        assert_eq!(mm.nr_free(), free0 - 2);
        assert_eq!(swap_free(&mm), swap0 - 2);
        assert!(mm.pages.test(a, pg::SWAPCACHE | pg::WRITEBACK));
        mm.run_completions(u64::MAX);
        assert_eq!(mm.node.nr_writeback, 0);
        let mut rounds = 0;
        while mm.nr_free() < free0 && rounds < 100 {
            mm.try_to_free_pages(&mut ctx, 0, Gfp::KERNEL);
            rounds += 1;
        }
        mm.check_invariants().unwrap();
        assert_eq!(mm.nr_free(), free0);
        assert_eq!(swap_free(&mm), swap0);
        assert_eq!(mm.memcgs[0].swap_usage, 0);
    }

    /// The unmovable pages of churned processes land in MOVABLE pageblocks once the
    /// UNMOVABLE blocks are full. Two processes fault memory in turns, 16 and 48 pages at a
    /// time, until memory is nearly full, so each pageblock holds both; any free page left
    /// in an UNMOVABLE block is taken by kernel pages; the first process exits, leaving
    /// about a quarter of each block free in 16-page runs. A new process's stack (order 2),
    /// PGD and page tables can only come from the fallback (`__rmqueue_claim()` /
    /// `__rmqueue_steal()`), and with under half of a block free or unmovable
    /// (`try_to_claim_block()`) no block can be claimed: they stay in MOVABLE blocks.
    #[test]
    fn churned_stacks_and_page_tables_fall_back_into_movable_blocks() {
        let mut mm = churn_mm(4096, ThpEnabled::Never, true);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let a = mm.fork(&mut ctx).unwrap();
        let b = mm.fork(&mut ctx).unwrap();
        let (mut ia, mut ib) = (0u32, 0u32);
        while mm.nr_free() > 64 {
            for _ in 0..16 {
                mm.touch(&mut ctx, 2, ia, true);
                ia += 1;
            }
            for _ in 0..48 {
                mm.touch(&mut ctx, 3, ib, true);
                ib += 1;
            }
        }
        assert_eq!(mm.ev.get(Ev::PswpOut), 0, "the fill must not reclaim");
        let unmovable_free = |mm: &Mm| {
            (0..=10)
                .map(|o| mm.zones[0].nr_free_list(o, mt::UNMOVABLE as usize))
                .sum::<u64>()
        };
        let mut pins = vec![];
        while unmovable_free(&mm) > 0 {
            pins.push(mm.alloc_kernel_pages(&mut ctx, 0, Gfp::KERNEL).unwrap());
        }
        let movable_blocks = |mm: &Mm| {
            (0..8u32)
                .filter(|&b| mm.zones[0].pageblock_mt(b << 9) == mt::MOVABLE)
                .count()
        };
        let before = movable_blocks(&mm);
        mm.exit(&mut ctx, 2, a);
        assert_eq!(unmovable_free(&mm), 0);
        let extfrag0 = mm.ev.get(Ev::ExtfragFallback);
        let c = mm.fork(&mut ctx).unwrap();
        for i in 0..600 {
            mm.touch(&mut ctx, 4, i, true);
        }
        mm.check_invariants().unwrap();
        assert_eq!(mm.zones[0].pageblock_mt(c.stack), mt::MOVABLE);
        assert_eq!(mm.zones[0].pageblock_mt(c.pgd), mt::MOVABLE);
        let tables = mm.objects[4].pgtables.pfns().to_vec();
        assert_eq!(tables.len(), 2 + 1);
        for t in tables {
            assert_eq!(mm.zones[0].pageblock_mt(t), mt::MOVABLE, "table at pfn {t}");
        }
        assert_eq!(movable_blocks(&mm), before, "a MOVABLE block was claimed");
        // Each of the five fell back (mm_page_alloc_extfrag).
        assert!(mm.ev.get(Ev::ExtfragFallback) >= extfrag0 + 5);
        mm.exit(&mut ctx, 4, c);
        mm.exit(&mut ctx, 3, b);
        for p in pins {
            mm.free_kernel_pages(p);
        }
        mm.check_invariants().unwrap();
    }

    /// Under churn every process faults its memory afresh: with THP enabled, each life of a
    /// 4-range object maps 4 THPs (`thp_fault_alloc` 4 per life), exit unmaps them
    /// (`nr_anon_transparent_hugepages` back to 0) and gives the order-9 blocks back, so the
    /// next life finds them again. One long-lived process would fault them only once.
    #[test]
    fn thp_faults_repeat_with_every_process() {
        let mut mm = churn_mm(4 * 512, ThpEnabled::Always, true);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let free0 = mm.nr_free();
        for life in 1..=3u64 {
            let p = mm.fork(&mut ctx).unwrap();
            for i in (0..4 * 512).step_by(64) {
                mm.touch(&mut ctx, 2, i, true);
            }
            assert_eq!(mm.ev.get(Ev::ThpFaultAlloc), 4 * life);
            assert_eq!(mm.node.nr_anon_thps, 4);
            mm.exit(&mut ctx, 2, p);
            assert_eq!(mm.node.nr_anon_thps, 0);
            assert_eq!(mm.nr_free(), free0);
            mm.check_invariants().unwrap();
        }
        assert_eq!(mm.ev.get(Ev::ThpFaultFallback), 0);
    }
}
