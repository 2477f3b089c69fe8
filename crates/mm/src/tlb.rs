//! What reclaim's rmap walks and unmaps cost, and the TLB flushes of the unmaps
//! (mm/rmap.c, arch/x86/mm/tlb.c).
//!
//! # The rmap walk
//! `folio_referenced()` and `try_to_unmap()` walk the reverse map of a folio: they take the
//! anon_vma's rwsem for read (`folio_lock_anon_vma_read()`; the file's `i_mmap` lock for a
//! file folio), look the folio's offset up in the interval tree and visit each VMA that maps
//! it: `folio_referenced_one()` walks to the PTE (`page_vma_mapped_walk()`) and
//! tests-and-clears its young bit; `try_to_unmap_one()` replaces the PTE with a swap entry
//! (anon) or clears it (file). The model charges a walk `model.cost.rmap_per_call` once
//! plus, per mapping, `rmap_per_mapping` (referenced) or `unmap_per_mapping` (unmap)
//! ([`rmap_walk_ns`]). A model object has one mapping, so the walks the model makes visit one
//! mapping; a folio shared by N processes would cost N mappings.
//!
//! # The TLB flush of an unmap
//! An unmapped PTE may still be cached in the TLB of every CPU that runs the mm. Reclaim
//! calls `try_to_unmap()` with `TTU_BATCH_FLUSH` (`shrink_folio_list()`), and
//! `try_to_unmap_one()` asks `should_defer_flush()`: if a CPU other than the reclaimer's is
//! in `mm_cpumask(mm)`, the flush is deferred — `set_tlb_ubc_flush_pending()` adds the mm's
//! cpumask to the reclaimer's batch (`current->tlb_ubc`, `arch_tlbbatch_add_pending()`) and
//! remembers whether the PTE was dirty (`writable`). Otherwise `ptep_clear_flush()` flushes
//! the local TLB at once (`model.cost.tlb_flush_local`, when the mm is loaded on the
//! reclaimer's CPU). The batch is flushed by `try_to_unmap_flush_dirty()` before
//! `shrink_folio_list()` writes a dirty folio out (only if a batched PTE was dirty: a CPU
//! could still write through the stale entry while the IO runs) and by `try_to_unmap_flush()`
//! at the end of `shrink_folio_list()`: `arch_tlbbatch_flush()` → `flush_tlb_multi()`, one
//! IPI round to the CPUs of the batch's cpumask that are not in lazy TLB mode
//! (`tlb_is_not_lazy()` in 6.1, `should_flush_tlb()` in 6.14+: a CPU running a kernel
//! thread or idle keeps the mm loaded lazily and is not interrupted). The reclaimer waits for
//! every target's acknowledgement: `model.cost.tlb_shootdown` per flush plus
//! `tlb_shootdown_per_cpu` per target ([`shootdown_ns`]), charged to the reclaimer and to the
//! reclaim CPU's `tlb_flush` bucket. Both LRUs pay it: the multi-gen LRU's `evict_folios()`
//! frees through the same `shrink_folio_list()`.
//!
//! # Which CPUs run the mm
//! The model has no `mm_struct`: an object's page table (anon, shmem) or its one shared
//! mapping (file) stands for the mm, and the tasks that faulted into it ([`Object::mappers`],
//! joined at their first fault, as the object joins the memcg's mm list) are its threads.
//! The simulator tells the model which task each simulated CPU runs ([`Mm::set_cpu_task`]):
//! a CPU's loaded mm is its last task's, kept lazily while it runs a kernel thread or idles.
//! `mm_cpumask()` is then the CPUs whose loaded task maps the object, and the targets of a
//! flush those of them not lazy, other than the reclaimer's.
//!
//! # Where we differ from the kernel
//! - v6.14 ("x86/mm/tlb: Update mm_cpumask lazily") keeps a CPU in `mm_cpumask()` after it
//!   switches to another mm until a flush with `trim_cpumask` (at most once a second) clears
//!   it, and the batched flush (`info->mm == NULL`) interrupts such CPUs too. The model
//!   follows 6.1 for every version: a CPU is in the mask while its loaded task maps the
//!   object.
//! - Broadcast invalidation (AMD INVLPGB, v6.15+) is not modelled: every flush is IPIs.
//! - A task that only accesses pages other tasks faulted in, never faulting itself, is not
//!   counted as running the mm.
//! - The flush costs the reclaimer only; the targets' interrupt handling (a full TLB flush
//!   and the refills after it) is not charged to the threads they interrupt.
//! - `try_to_unmap()` outside reclaim (migration, compaction) is not modelled here
//!   (`migrate_per_page` covers compaction's unmap).
//!
//! # Kernel references
//! mm/rmap.c `folio_referenced()`, `folio_referenced_one()`, `try_to_unmap()`,
//! `try_to_unmap_one()`, `should_defer_flush()`, `set_tlb_ubc_flush_pending()`,
//! `try_to_unmap_flush()`, `try_to_unmap_flush_dirty()`; mm/vmscan.c `shrink_folio_list()`;
//! arch/x86/include/asm/tlbflush.h `arch_tlbbatch_add_pending()`,
//! `arch_tlbbatch_should_defer()`; arch/x86/mm/tlb.c `arch_tlbbatch_flush()`,
//! `native_flush_tlb_multi()`, `switch_mm_irqs_off()`, `enter_lazy_tlb()`.

use crate::{Ctx, Mm, Object, NO_TASK};

/// A set of tasks (by [`Ctx::task`]), one bit each.
#[derive(Clone, Debug, Default)]
pub struct TaskSet(Vec<u64>);

impl TaskSet {
    #[inline]
    pub fn insert(&mut self, task: u32) {
        if task == NO_TASK {
            return;
        }
        let w = task as usize / 64;
        if w >= self.0.len() {
            self.0.resize(w + 1, 0);
        }
        self.0[w] |= 1 << (task % 64);
    }

    #[inline]
    pub fn contains(&self, task: u32) -> bool {
        task != NO_TASK
            && self
                .0
                .get(task as usize / 64)
                .is_some_and(|w| w & (1 << (task % 64)) != 0)
    }
}

/// A simulated CPU's TLB state (`cpu_tlbstate`): the task whose mm is loaded (`loaded_mm`,
/// [`NO_TASK`] before any task ran there) and whether it is only loaded lazily
/// (`is_lazy`: a kernel thread or the idle task runs).
#[derive(Clone, Copy, Debug)]
pub struct CpuTlb {
    pub loaded: u32,
    pub lazy: bool,
}

impl Default for CpuTlb {
    fn default() -> Self {
        CpuTlb {
            loaded: NO_TASK,
            lazy: true,
        }
    }
}

/// The reclaimer's deferred flush (`struct tlbflush_unmap_batch`, `current->tlb_ubc`): the
/// objects (mms) whose unmaps wait for it, and whether a batched PTE was dirty.
#[derive(Clone, Debug, Default)]
pub struct TlbBatch {
    pub flush_required: bool,
    pub writable: bool,
    pub objs: Vec<u32>,
}

/// TLB flush counts of reclaim's unmaps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlbStats {
    /// Immediate local flushes (`ptep_clear_flush()`; the flush was not deferred).
    pub local: u64,
    /// Batched flushes that interrupted other CPUs (IPI rounds).
    pub shootdowns: u64,
    /// CPUs interrupted, summed over the IPI rounds.
    pub shootdown_cpus: u64,
}

/// CPU time of one rmap walk over `nr_mappings` mappings, each costing `per_mapping_ns`:
/// `rmap_per_call + nr_mappings × per_mapping`.
#[inline]
pub fn rmap_walk_ns(rmap_per_call_ns: u64, per_mapping_ns: u64, nr_mappings: u64) -> u64 {
    rmap_per_call_ns + nr_mappings * per_mapping_ns
}

/// CPU time of one IPI round to `targets` other CPUs: `tlb_shootdown + targets ×
/// tlb_shootdown_per_cpu`.
#[inline]
pub fn shootdown_ns(base_ns: u64, per_cpu_ns: u64, targets: u64) -> u64 {
    base_ns + targets * per_cpu_ns
}

impl Object {
    /// The object's mm is loaded on a CPU whose task is `task`.
    #[inline]
    fn mapped_by(&self, task: u32) -> bool {
        self.mappers.contains(task)
    }
}

impl Mm {
    /// The simulator: CPU `cpu` now runs `task` (its mm becomes the loaded one), or a kernel
    /// thread or nothing (None: the last task's mm stays loaded, lazily).
    pub fn set_cpu_task(&mut self, cpu: usize, task: Option<u32>) {
        if cpu >= self.tlb_cpus.len() {
            self.tlb_cpus.resize(cpu + 1, CpuTlb::default());
        }
        let c = &mut self.tlb_cpus[cpu];
        match task {
            Some(t) => {
                c.loaded = t;
                c.lazy = false;
            }
            None => c.lazy = true,
        }
    }

    /// Charge one rmap walk over `nr_mappings` mappings at `per_mapping_ns` each to the
    /// reclaimer and to `reclaim_cpu.rmap_ns`.
    pub(crate) fn charge_rmap_walk(
        &mut self,
        ctx: &mut Ctx,
        per_mapping_ns: u64,
        nr_mappings: u64,
    ) {
        let c = rmap_walk_ns(self.cfg.costs.rmap_per_call_ns, per_mapping_ns, nr_mappings);
        ctx.cpu_ns += c;
        self.reclaim_cpu.rmap_ns += c;
    }

    /// Kernel: the flush half of `try_to_unmap_one()` for a PTE of object `obj` that
    /// reclaim cleared (`TTU_BATCH_FLUSH`), `dirty` if it was dirty: deferred into the
    /// reclaimer's batch when another CPU has the mm (`should_defer_flush()`,
    /// `set_tlb_ubc_flush_pending()`), else flushed from the local TLB at once when the mm
    /// is loaded here (`ptep_clear_flush()`).
    pub(crate) fn unmap_tlb_flush(&mut self, ctx: &mut Ctx, obj: u32, dirty: bool) {
        let me = ctx.cpu as usize;
        let o = &self.objects[obj as usize];
        let defer = self
            .tlb_cpus
            .iter()
            .enumerate()
            .any(|(c, t)| c != me && o.mapped_by(t.loaded));
        if defer {
            let b = &mut self.tlb_ubc;
            if b.objs.last() != Some(&obj) && !b.objs.contains(&obj) {
                b.objs.push(obj);
            }
            b.flush_required = true;
            b.writable |= dirty;
            return;
        }
        if self.tlb_cpus.get(me).is_some_and(|t| o.mapped_by(t.loaded)) {
            let c = self.cfg.costs.tlb_flush_local_ns;
            ctx.cpu_ns += c;
            self.reclaim_cpu.tlb_flush_ns += c;
            self.tlb_stats.local += 1;
        }
    }

    /// Kernel: `try_to_unmap_flush_dirty()`: flush the batch if a batched PTE was dirty.
    pub(crate) fn try_to_unmap_flush_dirty(&mut self, ctx: &mut Ctx) {
        if self.tlb_ubc.writable {
            self.try_to_unmap_flush(ctx);
        }
    }

    /// Kernel: `try_to_unmap_flush()` → `arch_tlbbatch_flush()`: one IPI round to the CPUs
    /// other than the reclaimer's that run (not lazily) a task of a batched object; the local
    /// TLB alone when none does.
    pub(crate) fn try_to_unmap_flush(&mut self, ctx: &mut Ctx) {
        if !self.tlb_ubc.flush_required {
            return;
        }
        let me = ctx.cpu as usize;
        let objs = &self.tlb_ubc.objs;
        let objects = &self.objects;
        let in_batch = |t: u32| objs.iter().any(|&o| objects[o as usize].mapped_by(t));
        let targets = self
            .tlb_cpus
            .iter()
            .enumerate()
            .filter(|&(c, t)| c != me && !t.lazy && in_batch(t.loaded))
            .count() as u64;
        let local = self.tlb_cpus.get(me).is_some_and(|t| in_batch(t.loaded));
        let k = &self.cfg.costs;
        let c = if targets > 0 {
            self.tlb_stats.shootdowns += 1;
            self.tlb_stats.shootdown_cpus += targets;
            shootdown_ns(k.tlb_shootdown_ns, k.tlb_shootdown_per_cpu_ns, targets)
        } else if local {
            // Every other CPU of the mask went lazy since the unmap: flush_tlb_multi() sends
            // no IPI and flushes the local TLB.
            self.tlb_stats.local += 1;
            k.tlb_flush_local_ns
        } else {
            0
        };
        ctx.cpu_ns += c;
        self.reclaim_cpu.tlb_flush_ns += c;
        let b = &mut self.tlb_ubc;
        b.flush_required = false;
        b.writable = false;
        b.objs.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tiny_config;
    use crate::{BalanceKind, InstantIo, ReclaimCpu};

    #[test]
    fn a_walk_costs_its_call_once_and_each_mapping() {
        // The defaults: 150 ns per call, 237 per mapping referenced, 560 per mapping unmapped.
        assert_eq!(rmap_walk_ns(150, 237, 1), 387);
        assert_eq!(rmap_walk_ns(150, 237, 3), 150 + 3 * 237);
        assert_eq!(rmap_walk_ns(150, 560, 1), 710);
        assert_eq!(rmap_walk_ns(150, 237, 0), 150);
    }

    #[test]
    fn an_ipi_round_costs_its_base_and_each_target() {
        // One target: the 5.27 us measured per flush on 2 vCPUs.
        assert_eq!(shootdown_ns(5_070, 200, 1), 5_270);
        // 35 other CPUs of a 36-CPU machine running the mm.
        assert_eq!(shootdown_ns(5_070, 200, 35), 5_070 + 35 * 200);
    }

    #[test]
    fn a_bare_metal_ipi_round_follows_the_haswell_measurement() {
        // scenarios/s1-memcached.toml: 464 ns + 98 ns per target, from a bare-metal remote
        // flush of 562 ns with one target and 758 ns with three.
        assert_eq!(shootdown_ns(464, 98, 1), 562);
        assert_eq!(shootdown_ns(464, 98, 3), 758);
        // The seed's 36 CPUs, 35 of them running memcached's threads.
        assert_eq!(shootdown_ns(464, 98, 35), 3_894);
    }

    #[test]
    fn reclaim_cpu_keeps_the_unmap_walks_apart_and_subtracts() {
        let mut mm = mm_mapped_by(&[0]);
        mm.cfg.costs.rmap_per_call_ns = 150;
        mm.cfg.costs.rmap_per_mapping_ns = 237;
        mm.cfg.costs.unmap_per_mapping_ns = 560;
        mm.set_cpu_task(0, Some(0));
        let pfn = crate::memory::pte_pfn(mm.objects[0].ent[0]);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let before = mm.reclaim_cpu.clone();
        mm.folio_referenced(&mut ctx, pfn);
        mm.try_to_unmap(&mut ctx, pfn);
        let d = mm.reclaim_cpu.since(&before);
        // folio_referenced(): 150 + 237; try_to_unmap(): 150 + 560, then the local flush.
        assert_eq!(d.rmap_ns, 387 + 710);
        assert_eq!(d.unmap_ns, 710);
        assert_eq!(d.tlb_flush_ns, 137);
        assert_eq!(d.total_ns(), 387 + 710 + 137);
        assert_eq!(ctx.cpu_ns, d.total_ns());
        let mut sum = ReclaimCpu::default();
        sum.add(&d);
        sum.add(&d);
        assert_eq!((sum.rmap_ns, sum.unmap_ns), (2 * 1_097, 1_420));
        assert_eq!(sum.since(&d), d);
    }

    /// A machine whose anon object 0 tasks `tasks` have faulted into (one page each).
    fn mm_mapped_by(tasks: &[u32]) -> Mm {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 1024);
        cfg.costs.tlb_flush_local_ns = 137;
        cfg.costs.tlb_shootdown_ns = 5_070;
        cfg.costs.tlb_shootdown_per_cpu_ns = 200;
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        for (i, &t) in tasks.iter().enumerate() {
            let mut ctx = Ctx::new(0, &mut io, 0);
            ctx.task = t;
            mm.touch(&mut ctx, 0, i as u32, true);
        }
        mm
    }

    #[test]
    fn a_dirty_unmap_of_a_threaded_mm_is_deferred_and_flushed_by_ipi() {
        let mut mm = mm_mapped_by(&[0, 1, 2, 3]);
        // CPU 0 runs task 0 (it reclaims), CPUs 1-3 tasks 1-3, CPU 4 a task of another mm,
        // CPU 5 a kernel thread after task 2 (lazy).
        for (c, t) in [(0, 0), (1, 1), (2, 2), (3, 3), (4, 9), (5, 2)] {
            mm.set_cpu_task(c, Some(t));
        }
        mm.set_cpu_task(5, None);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        ctx.task = 0;
        mm.unmap_tlb_flush(&mut ctx, 0, true);
        // Deferred: nothing charged yet.
        assert_eq!(ctx.cpu_ns, 0);
        assert!(mm.tlb_ubc.flush_required && mm.tlb_ubc.writable);
        // Before the write-out: one IPI round to CPUs 1-3 (not 4: another mm; not 5: lazy).
        mm.try_to_unmap_flush_dirty(&mut ctx);
        assert_eq!(ctx.cpu_ns, 5_070 + 3 * 200);
        assert_eq!(mm.reclaim_cpu.tlb_flush_ns, 5_670);
        assert_eq!(
            (mm.tlb_stats.shootdowns, mm.tlb_stats.shootdown_cpus),
            (1, 3)
        );
        // The batch is empty: the end of shrink_folio_list() flushes nothing more.
        mm.try_to_unmap_flush(&mut ctx);
        assert_eq!(ctx.cpu_ns, 5_670);
    }

    #[test]
    fn clean_unmaps_wait_for_the_end_of_the_list_and_share_one_round() {
        let mut mm = mm_mapped_by(&[0, 1]);
        mm.set_cpu_task(0, Some(0));
        mm.set_cpu_task(1, Some(1));
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for _ in 0..5 {
            mm.unmap_tlb_flush(&mut ctx, 0, false);
        }
        // No batched PTE was dirty: try_to_unmap_flush_dirty() leaves the batch alone.
        mm.try_to_unmap_flush_dirty(&mut ctx);
        assert_eq!(ctx.cpu_ns, 0);
        mm.try_to_unmap_flush(&mut ctx);
        assert_eq!(ctx.cpu_ns, 5_070 + 200);
        assert_eq!(mm.tlb_stats.shootdowns, 1);
    }

    #[test]
    fn a_single_threaded_mm_flushes_only_the_local_tlb() {
        let mut mm = mm_mapped_by(&[0]);
        mm.set_cpu_task(0, Some(0));
        mm.set_cpu_task(1, Some(7));
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.unmap_tlb_flush(&mut ctx, 0, true);
        // No other CPU has the mm: ptep_clear_flush() at once, no batch.
        assert_eq!(ctx.cpu_ns, 137);
        assert!(!mm.tlb_ubc.flush_required);
        mm.try_to_unmap_flush(&mut ctx);
        assert_eq!(ctx.cpu_ns, 137);
        assert_eq!((mm.tlb_stats.local, mm.tlb_stats.shootdowns), (1, 0));
        // kswapd on CPU 1 (lazy, another mm loaded) while CPU 0 runs task 0: kswapd's
        // unmap is deferred and its flush interrupts CPU 0.
        let mut k = Ctx::new(0, &mut io, 0);
        k.cpu = 1;
        k.kswapd = true;
        mm.set_cpu_task(1, None);
        mm.unmap_tlb_flush(&mut k, 0, false);
        mm.try_to_unmap_flush(&mut k);
        assert_eq!(k.cpu_ns, 5_070 + 200);
    }

    #[test]
    fn targets_gone_lazy_leave_only_the_local_flush() {
        let mut mm = mm_mapped_by(&[0, 1]);
        mm.set_cpu_task(0, Some(0));
        mm.set_cpu_task(1, Some(1));
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.unmap_tlb_flush(&mut ctx, 0, false);
        // CPU 1 switches to a kernel thread before the flush: still in the mask, lazy, so
        // flush_tlb_multi() interrupts nobody.
        mm.set_cpu_task(1, None);
        mm.try_to_unmap_flush(&mut ctx);
        assert_eq!(ctx.cpu_ns, 137);
        assert_eq!(mm.tlb_stats.shootdowns, 0);
    }
}
