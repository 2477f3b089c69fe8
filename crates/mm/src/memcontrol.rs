//! Memory cgroups as reclaim sees them: charging folios against `memory.max` and reclaiming
//! the cgroup when a charge would exceed it.
//!
//! # In this model
//! Memcg 0 is the root (unlimited); children 1.. are its direct children, each with its own
//! lruvec. A new folio is charged to the memcg of the task that faults it in, as the kernel
//! charges the first toucher. Over the limit, `try_charge_memcg()` runs limit reclaim
//! (`try_to_free_mem_cgroup_pages()`) and retries, up to `MAX_RECLAIM_RETRIES` times without
//! progress, then declares a memcg OOM.
//!
//! ## The per-CPU charge stock
//! `try_charge_memcg()` does not charge the page counter page by page: it first tries
//! `consume_stock()`, the charge this CPU already holds for the memcg; failing that it
//! charges a batch of `max(MEMCG_CHARGE_BATCH, nr)` (64 pages) and puts the surplus in the
//! stock (`refill_stock()`). Only when the batch does not fit under `memory.max` does it
//! retry with the exact `nr`, and only when that fails too does limit reclaim run. So
//! `memory.current` (the page counter, [`crate::Memcg::usage`]) runs ahead of the pages in use
//! by what the stocks hold, and limit reclaim starts while up to 64 pages per CPU that held
//! the memcg's stock are still unused. After a reclaim that leaves less than `nr` of margin,
//! the charge drains every CPU's stock that holds a charge of the memcg (`drain_all_stock()`)
//! once and retries. Since v6.16 a CPU's stock caches up to `NR_MEMCG_STOCK` (7) memcgs;
//! a full stock evicts (drains) one slot to make room; `refill_stock()` drains a slot that
//! grows past 64 pages. Uncharging a user folio goes to the page counter directly
//! (`uncharge_batch()`), not through the stock. The model keeps the kernel's stock per
//! simulated CPU ([`crate::Ctx::cpu`], the CPU the simulator ran the task on for the step).
//!
//! ## Page tables
//! The kernel allocates user page tables with `GFP_PGTABLE_USER` (GFP_KERNEL | __GFP_ACCOUNT
//! | __GFP_ZERO): each page-table page is a physical page charged to the memcg of the faulting
//! task (`__memcg_kmem_charge_page()`), counted in the node's `NR_PAGETABLE`
//! (`nr_page_table_pages` in /proc/vmstat) and the memcg's `pagetables` (part of `kernel` in
//! cgroup v2's memory.stat). A fault that installs an entry into a range without a table
//! allocates it: a PTE table maps 512 pages (2 MiB) and is allocated by `__pte_alloc()`; a PMD
//! table maps 512 PTE tables (1 GiB) and is allocated by `__pmd_alloc()` on the way down in
//! `__handle_mm_fault()`. The model gives each object's mapping its own tables, its first page
//! at a 1 GiB-aligned address, so a region of `n` pages touched everywhere costs
//! `ceil(n / 512)` PTE pages plus `ceil(n / 262144)` PMD pages ([`pgtable_pages`]): a 1 GiB
//! anonymous region, 262144 pages, costs 512 + 1 = 513 pages (2052 KiB). Faults of every kind
//! allocate them: a read fault that maps the zero page, an anonymous or shmem write fault, a
//! file mapping's fault (a swap-in finds its table in place, the swap entry lives in it).
//! Tables stay until the process whose address space the object is exits
//! ([`crate::exit`]: `free_pgtables()`), or until the end of the run (the model has no
//! munmap; the kernel does not free page tables on reclaim).
//!
//! ## Statistics are read as of the last flush
//! The memcg statistics are per-CPU deltas that rstat folds into the readable counters only
//! when flushed. `lruvec_page_state()` on a memcg lruvec returns the flushed value. The
//! periodic flusher (`flush_memcg_stats_dwork()`) flushes every FLUSH_TIME (2 s); the reclaim
//! and refault paths only call `mem_cgroup_flush_stats_ratelimited()`, which flushes when the
//! periodic flusher is a full cycle late (never, on a machine whose workqueues run). So what
//! `prepare_scan_control()` (`WORKINGSET_ACTIVATE_*` against `lruvec->refaults[]`,
//! `inactive_is_low()`, the inactive file size of cache-trim mode), `snapshot_refaults()`,
//! `shrink_lruvec()`'s anon aging and `workingset_test_recent()` (the workingset size) see
//! can be up to 2 s old. With `memcg_stats_flush_ns` > 0 the model keeps that flushed copy
//! per lruvec ([`Mm::memcg_flush_stats`]) and those readers use it
//! ([`Mm::lruvec_page_state`], [`Mm::lruvec_activate_state`]); the list sizes
//! `get_scan_count()` scans by stay exact, as the kernel's `mem_cgroup_get_zone_lru_size()`.
//! The kernel's flusher runs at a phase unrelated to the workload; the model puts the first
//! flush at `memcg_stats_first_flush_ns` (by default half a period: the expected delay to a
//! uniformly placed flush) and then one every period. The outcome is not linear in the phase
//! (a flush just before or just after limit reclaim starts decides whether cache-trim mode
//! or the inactive:active test sees zeros for up to 2 s), so `refault twin` compares the
//! kernel's mean over runs with the simulation's mean over phases spread across the period.
//! The legacy balance model (kernels before v5.8, where `inactive_list_is_low()` read the
//! exact per-zone LRU sizes with `lruvec_lru_size()`) reads exact sizes in
//! `inactive_is_low()` ([`Mm::inactive_is_low`]).
//!
//! ## Swap limit
//! `memory.swap.max` (cgroup v2) bounds the swap entries charged to the memcg
//! ([`crate::Memcg::swap_usage`]): `folio_alloc_swap()` fails at the limit
//! (`mem_cgroup_try_charge_swap()`, a `swap_max` event) and reclaim activates the folio.
//! `mem_cgroup_get_nr_swap_pages()` ([`Mm::memcg_nr_swap_pages`]) is the swap the memcg may
//! still use, the global free swap bounded by the limit; `get_scan_count()`'s
//! `can_reclaim_anon_pages()`, the workingset size of `workingset_test_recent()` and the
//! multi-gen LRU's `get_swappiness()` use it. Under cgroup v1 (memsw accounting) it is the
//! global free swap, and the model has no memsw limit.
//!
//! # Where we differ from the kernel (v6.18)
//! - The stock's victim slot when all 7 are taken is the next in turn (the kernel picks one
//!   at random); a remote CPU's stock drains at once (the kernel queues a work item on it).
//! - No `obj_stock`: slab objects (dentries, inodes, page-cache xarray nodes,
//!   [`crate::xarray`]) are charged by bytes rounded up to whole pages per memcg
//!   ([`crate::slab`]), which is what the kernel's per-CPU `obj_stock` amounts to on one
//!   CPU.
//! - Upper page-table levels (PUD, P4D, PGD: a few pages per process, allocated at fork and
//!   exec) are not modelled: the model has objects, not processes.
//! - No memory.high, memory.low/min protection, or memsw (v1 swap) limit.
//! - A memcg OOM kills the charging task only (no victim selection among the cgroup's tasks).
//!
//! # Kernel references
//! mm/memcontrol.c `try_charge_memcg()`, `consume_stock()`, `refill_stock()`,
//! `drain_stock()`, `drain_all_stock()`, `mem_cgroup_try_charge_swap()`,
//! `mem_cgroup_get_nr_swap_pages()`, `mem_cgroup_swappiness()`, `flush_memcg_stats_dwork()`,
//! `mem_cgroup_flush_stats_ratelimited()`, `lruvec_page_state()`, `memory_stat_format()`;
//! mm/memory.c `__handle_mm_fault()`, `__pte_alloc()`, `__pmd_alloc()`;
//! include/asm-generic/pgalloc.h `GFP_PGTABLE_USER`; lib/xarray.c `xas_alloc()`;
//! mm/vmscan.c `try_to_free_mem_cgroup_pages()`.

use crate::types::*;
use crate::{Ctx, Mm};

/// Kernel: `NR_MEMCG_STOCK`: memcgs a CPU's charge stock caches (v6.16+).
pub const NR_MEMCG_STOCK: usize = 7;
/// Pages mapped by one PTE table (`PTRS_PER_PTE` on x86-64).
pub const PTRS_PER_PTE: u64 = 512;
/// Pages mapped by one PMD table (`PTRS_PER_PMD` PTE tables).
pub const PAGES_PER_PMD_TABLE: u64 = PTRS_PER_PTE * 512;
/// `page->index` of a page-table page: marks it apart from other kernel pages.
pub const PGTABLE_INDEX: u32 = u32::MAX - 1;

/// Kernel: `struct memcg_stock_pcp` (v6.16+): one CPU's pre-charged pages for up to
/// NR_MEMCG_STOCK memcgs. Memcg id 0 (the root, never stocked) marks an empty slot.
#[derive(Clone, Debug, Default)]
pub struct MemcgStock {
    pub cached: [u16; NR_MEMCG_STOCK],
    pub nr_pages: [u8; NR_MEMCG_STOCK],
    /// Next victim when every slot is taken (the kernel draws one at random).
    pub drain_idx: u8,
}

impl MemcgStock {
    fn slot_of(&self, memcg: u16) -> Option<usize> {
        if memcg == 0 {
            return None;
        }
        self.cached.iter().position(|&c| c == memcg)
    }
}

/// The page tables of one object's mapping: which PTE tables (one per 512 pages) and PMD
/// tables (one per 1 GiB) exist, and the frames that hold them (for `free_pgtables()` at
/// exit, [`crate::exit`]). Empty until the first fault.
#[derive(Clone, Debug, Default)]
pub struct PgTables {
    pte: Vec<u64>,
    pmd: Vec<u64>,
    /// The page-table pages, in allocation order.
    pfns: Vec<Pfn>,
}

impl PgTables {
    fn has(bits: &[u64], i: u64) -> bool {
        bits.get((i / 64) as usize)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Set bit `i` of a bitmap of `tables` bits (sized at the first use).
    fn set(bits: &mut Vec<u64>, i: u64, tables: u64) {
        if bits.is_empty() {
            bits.resize(tables.div_ceil(64) as usize, 0);
        }
        bits[(i / 64) as usize] |= 1 << (i % 64);
    }

    /// How many tables a fault at `index` must allocate (0, 1 or 2).
    fn missing(&self, index: u64) -> u32 {
        let pmd = !Self::has(&self.pmd, index / PAGES_PER_PMD_TABLE) as u32;
        let pte = !Self::has(&self.pte, index / PTRS_PER_PTE) as u32;
        pmd + pte
    }

    /// Record the next missing table for `index`, held in frame `pfn`: the PMD table first,
    /// as the walk down allocates it.
    fn add_next(&mut self, size_pages: u64, index: u64, pfn: Pfn) {
        self.pfns.push(pfn);
        let (pmd, pte) = (index / PAGES_PER_PMD_TABLE, index / PTRS_PER_PTE);
        if !Self::has(&self.pmd, pmd) {
            Self::set(&mut self.pmd, pmd, size_pages.div_ceil(PAGES_PER_PMD_TABLE));
        } else {
            Self::set(&mut self.pte, pte, size_pages.div_ceil(PTRS_PER_PTE));
        }
    }

    /// Page-table pages allocated so far.
    pub fn pages(&self) -> u64 {
        let ones = |b: &Vec<u64>| b.iter().map(|w| w.count_ones() as u64).sum::<u64>();
        ones(&self.pte) + ones(&self.pmd)
    }

    /// The frames holding the tables, in allocation order.
    pub fn pfns(&self) -> &[Pfn] {
        &self.pfns
    }

    /// Forget every table (the mapping is gone) and hand back the frames that held them.
    pub(crate) fn take(&mut self) -> Vec<Pfn> {
        self.pte.clear();
        self.pmd.clear();
        std::mem::take(&mut self.pfns)
    }
}

/// Page-table pages (PTE + PMD tables) of a mapping of `pages` pages, every page touched,
/// its start aligned to 1 GiB: `ceil(pages / 512) + ceil(pages / 262144)`.
pub fn pgtable_pages(pages: u64) -> u64 {
    pages.div_ceil(PTRS_PER_PTE) + pages.div_ceil(PAGES_PER_PMD_TABLE)
}

/// Time of the first periodic memcg stats flush for a flush period (u64::MAX when off).
pub fn first_stats_flush(period_ns: u64, first_ns: u64) -> u64 {
    if period_ns == 0 {
        u64::MAX
    } else {
        first_ns
    }
}

impl Mm {
    /// Kernel: `try_charge_memcg()`. Returns false when the memcg is OOM. The charge comes
    /// from the stock of the task's CPU when it holds enough; else a batch of
    /// `max(MEMCG_CHARGE_BATCH, nr)` is charged and the surplus stocked; at the limit the
    /// exact `nr`, then limit reclaim, one drain of every CPU's stock, and retries.
    pub fn try_charge(&mut self, ctx: &mut Ctx, memcg: u16, nr: u64) -> bool {
        let m = memcg as usize;
        if m == 0 {
            self.memcgs[0].usage += nr;
            return true;
        }
        let cpu = ctx.cpu as usize;
        let mut batch = nr.max(MEMCG_CHARGE_BATCH);
        let mut drained = false;
        let mut retries = MAX_RECLAIM_RETRIES;
        loop {
            if self.consume_stock(cpu, memcg, nr) {
                return true;
            }
            let mc = &mut self.memcgs[m];
            if mc.usage + batch <= mc.max_pages {
                mc.usage += batch;
                if batch > nr {
                    self.refill_stock(cpu, memcg, batch - nr);
                }
                return true;
            }
            if batch > nr {
                batch = nr;
                continue;
            }
            mc.events.max_events += 1;
            let reclaimed = self.try_to_free_mem_cgroup_pages(ctx, m, nr);
            if reclaimed == 0 {
                // Nothing freeable right now but folios under writeback: wait for the next
                // completion, as reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK) does.
                self.reclaim_throttle_writeback(ctx);
            }
            let mc = &self.memcgs[m];
            if mc.usage + nr <= mc.max_pages {
                continue;
            }
            if !drained {
                self.drain_all_stock(memcg);
                drained = true;
                continue;
            }
            // Small charges keep trying while reclaim makes progress.
            if reclaimed > 0 && nr <= 1 << PAGE_ALLOC_COSTLY_ORDER {
                continue;
            }
            retries -= 1;
            if retries == 0 {
                self.memcgs[m].events.oom_kill += 1;
                self.ev.add(crate::vmstat::Ev::OomKill, 1);
                return false;
            }
        }
    }

    /// Kernel: `consume_stock()`: take `nr` pages of charge from the stock of `cpu` if it holds
    /// at least that much for `memcg` (never for more than a batch).
    pub(crate) fn consume_stock(&mut self, cpu: usize, memcg: u16, nr: u64) -> bool {
        if nr > MEMCG_CHARGE_BATCH {
            return false;
        }
        let Some(st) = self.memcg_stock.get_mut(cpu) else {
            return false;
        };
        match st.slot_of(memcg) {
            Some(i) if st.nr_pages[i] as u64 >= nr => {
                st.nr_pages[i] -= nr as u8;
                true
            }
            _ => false,
        }
    }

    /// Kernel: `refill_stock()`: put `nr` pages of charge (already on the page counter) into
    /// the stock of `cpu`; a slot over MEMCG_CHARGE_BATCH is drained, and a full stock evicts
    /// one memcg first.
    pub(crate) fn refill_stock(&mut self, cpu: usize, memcg: u16, nr: u64) {
        if nr > MEMCG_CHARGE_BATCH {
            self.memcgs[memcg as usize].usage -= nr;
            return;
        }
        if self.memcg_stock.len() <= cpu {
            self.memcg_stock.resize(cpu + 1, MemcgStock::default());
        }
        let st = &mut self.memcg_stock[cpu];
        if let Some(i) = st.slot_of(memcg) {
            let total = st.nr_pages[i] as u64 + nr;
            st.nr_pages[i] = total as u8;
            if total > MEMCG_CHARGE_BATCH {
                self.drain_stock(cpu, i);
            }
            return;
        }
        let i = match st.cached.iter().position(|&c| c == 0) {
            Some(i) => i,
            None => {
                // Kernel: a random victim; here the next in turn.
                let i = st.drain_idx as usize % NR_MEMCG_STOCK;
                st.drain_idx = st.drain_idx.wrapping_add(1);
                self.drain_stock(cpu, i);
                i
            }
        };
        let st = &mut self.memcg_stock[cpu];
        st.cached[i] = memcg;
        st.nr_pages[i] = nr as u8;
    }

    /// Kernel: `drain_stock()`: return slot `i` of `cpu`'s stock to its memcg's page counter.
    fn drain_stock(&mut self, cpu: usize, i: usize) {
        let st = &mut self.memcg_stock[cpu];
        let (m, n) = (st.cached[i], st.nr_pages[i] as u64);
        st.cached[i] = 0;
        st.nr_pages[i] = 0;
        if m != 0 {
            self.memcgs[m as usize].usage -= n;
        }
    }

    /// Kernel: `drain_all_stock()`: every CPU whose stock holds a charge of `memcg` drains
    /// its whole stock (every slot).
    pub(crate) fn drain_all_stock(&mut self, memcg: u16) {
        for cpu in 0..self.memcg_stock.len() {
            let st = &self.memcg_stock[cpu];
            if st.slot_of(memcg).is_some_and(|i| st.nr_pages[i] > 0) {
                for i in 0..NR_MEMCG_STOCK {
                    self.drain_stock(cpu, i);
                }
            }
        }
    }

    /// Pages of charge the per-CPU stocks hold for `memcg` (part of its `usage`).
    pub fn memcg_stocked(&self, memcg: usize) -> u64 {
        self.memcg_stock
            .iter()
            .filter_map(|st| st.slot_of(memcg as u16).map(|i| st.nr_pages[i] as u64))
            .sum()
    }

    /// Kernel: `mem_cgroup_get_nr_swap_pages()`: the swap `memcg` may still use: the free
    /// swap, bounded by memory.swap.max minus memory.swap.current (cgroup v2; the root and
    /// cgroup v1, whose memsw limit the model lacks, see the free swap).
    pub fn memcg_nr_swap_pages(&self, memcg: usize) -> u64 {
        let free = self.nr_swap_free();
        if memcg == 0 || self.cfg.cgroup_v1 {
            return free;
        }
        let mc = &self.memcgs[memcg];
        free.min(mc.swap_max.saturating_sub(mc.swap_usage))
    }

    /// Kernel: `mem_cgroup_try_charge_swap()`: may a folio of `memcg` of `nr` pages (a THP:
    /// 512) take its swap entries (`page_counter_try_charge(&memcg->swap, nr_pages)`)?
    /// False at memory.swap.max (counted as a `swap_max` event).
    pub(crate) fn try_charge_swap(&mut self, memcg: usize, nr: u64) -> bool {
        if memcg == 0 || self.cfg.cgroup_v1 {
            return true;
        }
        let mc = &mut self.memcgs[memcg];
        if mc.swap_usage + nr <= mc.swap_max {
            return true;
        }
        mc.events.swap_max_events += 1;
        false
    }

    /// The page-table pages a fault at `index` of object `obj` allocates (`__pmd_alloc()`,
    /// `__pte_alloc()`), charged to the faulting task's memcg as `GFP_PGTABLE_USER`
    /// (`__GFP_ACCOUNT`) pages. False when the charge or the allocation fails (VM_FAULT_OOM).
    pub(crate) fn pgtable_alloc(&mut self, ctx: &mut Ctx, obj: u32, index: u32) -> bool {
        let need = self.objects[obj as usize].pgtables.missing(index as u64);
        for _ in 0..need {
            let Some(pfn) = self.alloc_pgtable_page(ctx) else {
                return false;
            };
            let o = &mut self.objects[obj as usize];
            o.pgtables.add_next(o.size_pages, index as u64, pfn);
        }
        true
    }

    /// One page-table page for the task of `ctx`: charge, allocate (GFP_KERNEL), account.
    pub(crate) fn alloc_pgtable_page(&mut self, ctx: &mut Ctx) -> Option<Pfn> {
        let memcg = ctx.memcg;
        if !self.try_charge(ctx, memcg, 1) {
            ctx.oom = true;
            return None;
        }
        ctx.cpu_ns += self.cfg.costs.page_alloc_ns;
        let Some(pfn) = self.alloc_pages(ctx, 0, crate::alloc::Gfp::KERNEL) else {
            self.uncharge(memcg, 1);
            return None;
        };
        let i = pfn as usize;
        self.pages.hot[i].flags = crate::page::pg::HEAD;
        self.pages.hot[i].order = 0;
        self.pages.hot[i].memcg = memcg;
        self.pages.obj[i] = NIL;
        self.pages.index[i] = PGTABLE_INDEX;
        self.pages.io_done_ns[i] = 0;
        self.node.nr_page_table_pages += 1;
        self.memcgs[memcg as usize].pagetables += 1;
        Some(pfn)
    }

    /// Kernel: `pagetable_free()` of a user page table (`pte_free()`, `pmd_free()`, and
    /// `pgd_free()` at exit): uncharge, unaccount, back to the buddy allocator.
    pub(crate) fn free_pgtable_page(&mut self, pfn: Pfn) {
        let i = pfn as usize;
        debug_assert_eq!(self.pages.index[i], PGTABLE_INDEX);
        let memcg = self.pages.hot[i].memcg;
        self.uncharge(memcg, 1);
        self.node.nr_page_table_pages -= 1;
        self.memcgs[memcg as usize].pagetables -= 1;
        self.pages.hot[i].flags = 0;
        self.pages.index[i] = 0;
        self.ev.add(crate::vmstat::Ev::PgFree, 1);
        self.free_pages(pfn, 0);
    }

    /// Kernel: `reclaim_throttle(pgdat, VMSCAN_THROTTLE_WRITEBACK)`: a reclaimer that could not
    /// make progress because folios are under writeback sleeps until writeback of
    /// `SWAP_CLUSTER_MAX` pages per throttled reclaimer has completed, at most HZ/10
    /// ([`Mm::reclaim_throttle_wake`]). The caller's clock moves to that time and the
    /// completions run. With no writeback in flight it does not sleep: the kernel's throttles
    /// of a reclaimer without progress (`consider_reclaim_throttle()`) skip the sleep when
    /// few pages are write-pending (`skip_throttle_noprogress()`), and nothing in the model
    /// could change while it slept.
    pub(crate) fn reclaim_throttle_writeback(&mut self, ctx: &mut Ctx) {
        if self.next_completion().is_some() {
            let until = self.reclaim_throttle_wake(ctx.now);
            ctx.wait(until);
            ctx.now = until;
            self.run_completions(until);
        }
    }

    pub fn uncharge(&mut self, memcg: u16, nr: u64) {
        self.memcgs[memcg as usize].usage -= nr;
    }

    /// Kernel: `flush_memcg_stats_dwork()`: if the periodic flush is due at `now`, copy the
    /// current hierarchical list sizes and activation counts of every lruvec into their
    /// flushed copies. The engine calls it before every step (and ends a task's run of events
    /// at the due time, [`Mm::memcg_stats_flush_due`]).
    pub fn memcg_flush_stats(&mut self, now: u64) {
        if now < self.memcg_stats_next_flush {
            return;
        }
        self.memcg_flush_stats_now();
        let p = self.cfg.memcg_stats_flush_ns;
        let first = first_stats_flush(p, self.cfg.memcg_stats_first_flush_ns);
        self.memcg_stats_next_flush = first + ((now - first) / p + 1) * p;
    }

    /// Kernel (6.1–6.11): `mem_cgroup_flush_stats()` from `prepare_scan_count()`: copy the
    /// current hierarchical list sizes and activation counts of every lruvec into their
    /// flushed copies now, leaving the periodic flusher's schedule alone
    /// ([`crate::workingset::KernelVersion::reclaim_reads_ratelimited_stats`]).
    pub fn memcg_flush_stats_now(&mut self) {
        if self.cfg.memcg_stats_flush_ns == 0 {
            return;
        }
        for lv in 0..self.lruvecs.len() {
            let mut lru = [0; 4];
            for (i, l) in EVICTABLE_LRUS.iter().enumerate() {
                lru[i] = self.lruvec_hier(lv, *l);
            }
            let v = &mut self.lruvecs[lv];
            v.flushed_lru = lru;
            v.flushed_activate = v.workingset_activate;
        }
    }

    /// When the next periodic memcg stats flush is due (u64::MAX when off).
    pub fn memcg_stats_flush_due(&self) -> u64 {
        self.memcg_stats_next_flush
    }

    /// Kernel: `lruvec_page_state(lruvec, NR_LRU_BASE + lru)` for an evictable list: the
    /// hierarchical size as of the last flush (the exact size when flushing is not modelled).
    pub fn lruvec_page_state(&self, lv: usize, lru: LruList) -> u64 {
        if self.cfg.memcg_stats_flush_ns == 0 {
            self.lruvec_hier(lv, lru)
        } else {
            self.lruvecs[lv].flushed_lru[lru.idx()]
        }
    }

    /// Kernel: `lruvec_page_state(lruvec, WORKINGSET_ACTIVATE_BASE + type)`, as of the last
    /// flush (exact when flushing is not modelled).
    pub fn lruvec_activate_state(&self, lv: usize, file: bool) -> u64 {
        let v = &self.lruvecs[lv];
        if self.cfg.memcg_stats_flush_ns == 0 {
            v.workingset_activate[file as usize]
        } else {
            v.flushed_activate[file as usize]
        }
    }

    /// Kernel: `mem_cgroup_swappiness()`: on cgroup v1 the memcg's own memory.swappiness if
    /// set, else vm.swappiness (always vm.swappiness for the root); on the default hierarchy
    /// (v2) always vm.swappiness.
    pub fn memcg_swappiness(&self, memcg: usize) -> u64 {
        if memcg == 0 || !self.cfg.cgroup_v1 {
            return self.cfg.swappiness;
        }
        self.memcgs[memcg].swappiness.unwrap_or(self.cfg.swappiness)
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::*;
    use crate::*;

    /// The flushed copy changes only at the flush times: half a period in, then every period.
    #[test]
    fn lruvec_stats_are_read_as_of_the_last_flush() {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 1024);
        cfg.memcg_stats_flush_ns = 2_000;
        cfg.memcg_stats_first_flush_ns = 1_000;
        cfg.readahead_max_pages = 0; // one order-0 folio per read
        let mut mm = Mm::new(cfg);
        assert_eq!(mm.memcg_stats_flush_due(), 1_000);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..3 {
            mm.file_read(&mut ctx, 1, p, 1);
        }
        let exact = mm.lruvec_hier(0, LruList::InactiveFile);
        assert_eq!(exact, 3);
        // Before the first flush the statistics are those of the empty lruvec.
        mm.memcg_flush_stats(999);
        assert_eq!(mm.lruvec_page_state(0, LruList::InactiveFile), 0);
        mm.memcg_flush_stats(1_000);
        assert_eq!(mm.lruvec_page_state(0, LruList::InactiveFile), 3);
        assert_eq!(mm.memcg_stats_flush_due(), 3_000);
        mm.file_read(&mut ctx, 1, 3, 1);
        mm.memcg_flush_stats(2_999);
        assert_eq!(mm.lruvec_page_state(0, LruList::InactiveFile), 3);
        // A late caller catches up to the next point of the period grid.
        mm.memcg_flush_stats(7_500);
        assert_eq!(mm.lruvec_page_state(0, LruList::InactiveFile), 4);
        assert_eq!(mm.memcg_stats_flush_due(), 9_000);
    }

    fn one_memcg(pages: u64, max: u64, swap_max: Option<u64>) -> Mm {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, pages);
        cfg.readahead_max_pages = 0;
        cfg.memcgs = vec![MemcgCfg {
            max_pages: Some(max),
            swappiness: None,
            swap_max_pages: swap_max,
        }];
        Mm::new(cfg)
    }

    /// Hand-computed: a 1 GiB region (262144 pages) costs 512 PTE tables + 1 PMD table.
    #[test]
    fn page_tables_of_a_1gib_region() {
        assert_eq!(memcontrol::pgtable_pages(262_144), 513);
        assert_eq!(memcontrol::pgtable_pages(1), 2);
        assert_eq!(memcontrol::pgtable_pages(513), 3);
        // One page past 1 GiB: a 513th PTE table and a second PMD table.
        assert_eq!(memcontrol::pgtable_pages(262_145), 515);
        // tiny_config's anon object is twice the memory: 131072 pages of RAM, 1 GiB region.
        let mut mm = Mm::new(tiny_config(BalanceKind::RefaultCost, 131_072));
        assert_eq!(mm.objects[0].size_pages, 262_144);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        // One page in every 2 MiB range allocates its PTE table; the first also the PMD table.
        for k in 0..512u32 {
            mm.touch(&mut ctx, 0, k * 512 + 7, true);
        }
        assert_eq!(mm.node.nr_page_table_pages, 513);
        assert_eq!(mm.memcgs[0].pagetables, 513);
        // More faults in those ranges (a read mapping the zero page too) allocate nothing.
        mm.touch(&mut ctx, 0, 8, true);
        mm.touch(&mut ctx, 0, 9, false);
        assert_eq!(mm.objects[0].pgtables.pages(), 513);
        let v = mm.vmstat_snapshot();
        let get = |k: &str| v.iter().find(|e| e.0 == k).unwrap().1;
        assert_eq!(get("nr_page_table_pages"), 513);
        // Charged to the root (the task's memcg): 513 data pages + 513 tables.
        assert_eq!(mm.memcgs[0].usage, 513 + 513);
        mm.check_invariants().unwrap();
    }

    /// The stock of another CPU makes limit reclaim start earlier by what it holds.
    /// memory.max 1000: CPU 1 charges 1 page (a batch of 64: 63 stay in its stock). CPU 0
    /// then charges page by page in batches of 64 up to 960, then exactly: its 936th page
    /// brings the counter to 1000, and its 937th hits the limit, with 938 pages in use (not
    /// 1001, as with exact charging). With nothing to reclaim, the charge drains the stocks
    /// and succeeds.
    #[test]
    fn charge_stock_makes_limit_reclaim_start_earlier() {
        let mut mm = one_memcg(4096, 1000, None);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 1);
        ctx.cpu = 1;
        assert!(mm.try_charge(&mut ctx, 1, 1));
        assert_eq!(mm.memcgs[1].usage, 64);
        assert_eq!(mm.memcg_stocked(1), 63);
        ctx.cpu = 0;
        for n in 1..=936u64 {
            assert!(mm.try_charge(&mut ctx, 1, 1));
            let expect = if n <= 896 {
                64 + n.div_ceil(64) * 64
            } else {
                64 + n
            };
            assert_eq!(mm.memcgs[1].usage, expect, "page {n}");
        }
        assert_eq!(mm.memcgs[1].events.max_events, 0);
        assert!(mm.try_charge(&mut ctx, 1, 1));
        assert_eq!(mm.memcgs[1].events.max_events, 1);
        // drain_all_stock() returned CPU 1's 63 pages; the counter now equals the pages used.
        assert_eq!(mm.memcg_stocked(1), 0);
        assert_eq!(mm.memcgs[1].usage, 938);
    }

    /// consume_stock()/refill_stock(): a slot over MEMCG_CHARGE_BATCH drains; an eighth memcg
    /// on a CPU evicts one of the seven cached.
    #[test]
    fn stock_slots_drain_and_evict() {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 4096);
        cfg.memcgs = (0..8)
            .map(|_| MemcgCfg {
                max_pages: None,
                swappiness: None,
                swap_max_pages: None,
            })
            .collect();
        let mut mm = Mm::new(cfg);
        for m in 1..=7u16 {
            mm.memcgs[m as usize].usage += 10;
            mm.refill_stock(0, m, 10);
        }
        assert!(mm.consume_stock(0, 3, 10));
        assert!(!mm.consume_stock(0, 3, 1));
        // 60 + 10 > 64: the slot drains back to the page counter.
        mm.memcgs[1].usage += 60;
        mm.refill_stock(0, 1, 60);
        assert_eq!(mm.memcg_stocked(1), 0);
        assert_eq!(mm.memcgs[1].usage, 0);
        // Slot of memcg 1 is free again; fill it, then an eighth memcg evicts slot 0.
        mm.memcgs[1].usage += 5;
        mm.refill_stock(0, 1, 5);
        mm.memcgs[8].usage += 5;
        mm.refill_stock(0, 8, 5);
        assert_eq!(mm.memcg_stocked(1), 0);
        assert_eq!(mm.memcgs[1].usage, 0);
        assert_eq!(mm.memcg_stocked(8), 5);
    }

    /// A memcg at its limit reclaims earlier by the page tables charged to it. memory.max 2000,
    /// one task on one CPU faulting in pages 0, 1, 2, ... of an anon region: before the data
    /// page at index k is charged, the memcg holds k data pages and 1 PMD + ceil((k+1)/512) PTE
    /// tables. At k = 1995 that is 1995 + 5 = 2000, so the fault of index 1995 is the first to
    /// hit memory.max (without page tables it would be index 2000).
    #[test]
    fn page_tables_bring_limit_reclaim_forward() {
        let mut mm = one_memcg(8192, 2000, None);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 1);
        for k in 0..1995 {
            mm.touch(&mut ctx, 0, k, true);
        }
        assert_eq!(mm.memcgs[1].events.max_events, 0);
        assert_eq!(mm.memcgs[1].pagetables, 5);
        assert_eq!(mm.memcgs[1].usage, 2000);
        mm.touch(&mut ctx, 0, 1995, true);
        assert!(mm.memcgs[1].events.max_events > 0);
        assert!(mm.memcgs[1].events.pgsteal > 0);
        assert!(mm.memcgs[1].usage <= 2000);
        mm.check_invariants().unwrap();
    }

    /// mem_cgroup_get_nr_swap_pages(): free swap bounded by memory.swap.max - swap.current;
    /// the root and cgroup v1 see the free swap.
    #[test]
    fn memcg_available_swap() {
        let mut mm = one_memcg(1024, 1000, Some(100));
        let free = mm.nr_swap_free();
        assert!(free > 100);
        assert_eq!(mm.memcg_nr_swap_pages(0), free);
        assert_eq!(mm.memcg_nr_swap_pages(1), 100);
        mm.memcgs[1].swap_usage = 30;
        assert_eq!(mm.memcg_nr_swap_pages(1), 70);
        mm.memcgs[1].swap_usage = 100;
        assert_eq!(mm.memcg_nr_swap_pages(1), 0);
        assert!(!mm.try_charge_swap(1, 1));
        assert_eq!(mm.memcgs[1].events.swap_max_events, 1);
        mm.cfg.cgroup_v1 = true;
        assert_eq!(mm.memcg_nr_swap_pages(1), free);
        assert!(mm.try_charge_swap(1, 1));
    }

    /// get_scan_count() at priority 0 scans anon and file equally (SCAN_EQUAL) while the
    /// memcg may swap, and only file (SCAN_FILE) at memory.swap.max, however much swap is free;
    /// limit reclaim then swaps nothing out.
    #[test]
    fn swap_max_turns_memcg_reclaim_to_file() {
        for (swap_max, anon_scanned) in [(None, true), (Some(0), false)] {
            let mut mm = one_memcg(4096, 600, swap_max);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 1);
            for k in 0..300 {
                mm.touch(&mut ctx, 0, k, true);
            }
            for p in 0..200 {
                mm.file_read(&mut ctx, 1, p, 1);
            }
            let mut sc = vmscan::ScanControl::new(32, 1);
            sc.cgroup_reclaim = true;
            sc.priority = 0;
            let nr = mm.get_scan_count(1, &sc);
            assert_eq!(nr[0] > 0, anon_scanned, "swap.max {swap_max:?}: {nr:?}");
            assert!(nr[2] > 0);
            for k in 300..900 {
                mm.touch(&mut ctx, 0, k, true);
            }
            assert_eq!(mm.memcgs[1].swap_usage > 0, anon_scanned);
            mm.check_invariants().unwrap();
        }
    }
}
