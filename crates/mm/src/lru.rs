//! LRU bookkeeping (the LRU half of the kernel's mm/swap.c and include/linux/mm_inline.h):
//! adding folios to their lruvec, moving them between lists, `folio_mark_accessed()`, and the
//! writeback-completion rotation.
//!
//! # Where we differ from the kernel (v6.18)
//! - Under the multi-gen LRU (`cfg.lru`), adding and removing folios, `folio_mark_accessed()`
//!   and the placement of fault-time folios go to [`crate::mglru`]; rotation and activation
//!   keep their kernel form (`lru_move_tail()`, `lru_activate()`), which `lru_gen_add_folio()`
//!   turns into generations.
//! - The per-CPU `folio_batch`es of `folio_add_lru()` and `folio_activate()` batch only the
//!   cost of the `lru_lock` ([`crate::lrulock`]): every LRU operation takes effect
//!   immediately, so a new folio is on its list at once and `folio_mark_accessed()` on it
//!   activates it through the list rather than by setting PG_active inside a pending batch.

use crate::list::LinkStore;
use crate::page::pg;
use crate::types::*;
use crate::vmstat::Ev;
use crate::Mm;

impl Mm {
    /// Kernel: `folio_lru_list()`: the unevictable list for PG_unevictable folios.
    #[inline]
    pub(crate) fn folio_lru(&self, pfn: Pfn) -> LruList {
        if self.pages.test(pfn, pg::UNEVICTABLE) {
            return LruList::Unevictable;
        }
        LruList::of(
            self.pages.is_file_lru(pfn),
            self.pages.test(pfn, pg::ACTIVE),
        )
    }

    /// Kernel: `lruvec_add_folio()` / `lruvec_add_folio_tail()`: put the folio on the list its
    /// flags say, in the lruvec of its memcg, and account its pages.
    pub fn lru_add(&mut self, pfn: Pfn, tail: bool) {
        // lru_gen_add_folio() declines unevictable folios: they use the classic list.
        if self.cfg.lru == crate::LruKind::Mglru && !self.pages.test(pfn, pg::UNEVICTABLE) {
            return self.lru_gen_add_folio(pfn, tail);
        }
        let lru = self.folio_lru(pfn);
        let lv = self.pages.hot[pfn as usize].memcg as usize;
        let nr = self.pages.nr_pages(pfn);
        let zone = self.zone_of(pfn);
        // Unevictable folios are only counted (no list since v5.18).
        if lru != LruList::Unevictable {
            let l: &mut [crate::page::Frame] = &mut self.pages.hot;
            let list = &mut self.lruvecs[lv].lists[lru.idx()];
            if tail {
                l.add_tail(list, pfn);
            } else {
                l.add_head(list, pfn);
            }
        }
        let v = &mut self.lruvecs[lv];
        v.nr[lru.idx()] += nr;
        v.nr_zone[zone][lru.idx()] += nr;
        self.zones[zone].nr_lru[lru.idx()] += nr;
        self.pages.set(pfn, pg::LRU);
    }

    /// Kernel: `lruvec_del_folio()`.
    pub fn lru_del(&mut self, pfn: Pfn) {
        debug_assert!(
            self.pages.test(pfn, pg::LRU),
            "lru_del of pfn {pfn} not on an LRU"
        );
        if self.cfg.lru == crate::LruKind::Mglru && !self.pages.test(pfn, pg::UNEVICTABLE) {
            return self.lru_gen_del_folio(pfn, false);
        }
        let lru = self.folio_lru(pfn);
        let lv = self.pages.hot[pfn as usize].memcg as usize;
        let nr = self.pages.nr_pages(pfn);
        let zone = self.zone_of(pfn);
        if lru != LruList::Unevictable {
            let l: &mut [crate::page::Frame] = &mut self.pages.hot;
            l.del(&mut self.lruvecs[lv].lists[lru.idx()], pfn);
        }
        let v = &mut self.lruvecs[lv];
        v.nr[lru.idx()] -= nr;
        v.nr_zone[zone][lru.idx()] -= nr;
        self.zones[zone].nr_lru[lru.idx()] -= nr;
        self.pages.clear(pfn, pg::LRU);
    }

    /// Kernel: `folio_add_lru()`: a new folio lands at the head of the inactive list of its
    /// type, or the active list if PG_active was set (refault activation). Under the
    /// multi-gen LRU a folio added in a page fault (`lru_gen_in_fault()`) is made active, so
    /// `lru_gen_add_folio()` puts it in the youngest generation (`max_seq`) before v6.14
    /// (6.1, 6.12) and in the second youngest (`max_seq - 1`, or `max_seq` with
    /// PG_workingset) from v6.14 ([`crate::mglru::LruGen::folio_seq`]).
    ///
    /// A new folio of an mlocked mapping (`mlock_new_folio()`, from `folio_add_lru_vma()`)
    /// is PG_mlocked and PG_unevictable and goes to the unevictable list
    /// (UNEVICTABLE_PGMLOCKED, UNEVICTABLE_PGCULLED); reclaim never sees it.
    pub fn folio_add_lru(&mut self, pfn: Pfn) {
        let obj = self.pages.obj[pfn as usize];
        if obj != NIL
            && self.objects[obj as usize].mlock
            && !self.pages.test(pfn, pg::UNEVICTABLE)
            && !self.pages.is_file_lru(pfn)
        {
            let nr = self.pages.nr_pages(pfn);
            self.pages.set(pfn, pg::UNEVICTABLE);
            self.pages.clear(pfn, pg::ACTIVE);
            self.ev.add(Ev::UnevictablePgsMlocked, nr);
            self.ev.add(Ev::UnevictablePgsCulled, nr);
        }
        if self.cfg.lru == crate::LruKind::Mglru
            && self.in_lru_fault
            && !self.pages.test(pfn, pg::UNEVICTABLE)
        {
            self.pages.set(pfn, pg::ACTIVE);
        }
        self.lru_add(pfn, false);
        let lv = self.pages.hot[pfn as usize].memcg as usize;
        let nr = self.pages.nr_pages(pfn);
        if self.cfg.lru == crate::LruKind::Classic && !self.pages.test(pfn, pg::UNEVICTABLE) {
            let file = self.pages.is_file_lru(pfn);
            let active = self.pages.test(pfn, pg::ACTIVE);
            self.balance
                .note_lru_add(&mut self.lruvecs, lv, file, active, nr);
        }
        self.lru_batch_add(crate::lrulock::BatchKind::Add, lv, nr > 1);
    }

    /// Kernel: `folio_mark_accessed()` (classic LRU): inactive,unreferenced →
    /// inactive,referenced → active,unreferenced → active,referenced.
    pub fn folio_mark_accessed(&mut self, pfn: Pfn) {
        if self.cfg.lru == crate::LruKind::Mglru {
            return self.lru_gen_inc_refs(pfn);
        }
        let f = self.pages.hot[pfn as usize].flags;
        if f & pg::REFERENCED == 0 {
            self.pages.set(pfn, pg::REFERENCED);
        } else if f & pg::UNEVICTABLE != 0 {
        } else if f & pg::ACTIVE == 0 {
            if f & pg::LRU != 0 {
                self.folio_activate(pfn);
            } else {
                self.pages.set(pfn, pg::ACTIVE);
            }
            self.pages.clear(pfn, pg::REFERENCED);
            // workingset_activation(): the activation ages the non-resident clock.
            let nr = self.pages.nr_pages(pfn);
            let lv = self.pages.hot[pfn as usize].memcg as usize;
            self.workingset_age_nonresident(lv, nr);
        }
    }

    /// Kernel: `folio_activate()` → `lru_activate()`: move to the active head, PGACTIVATE.
    pub fn folio_activate(&mut self, pfn: Pfn) {
        if self.pages.test(pfn, pg::ACTIVE | pg::UNEVICTABLE) || !self.pages.test(pfn, pg::LRU) {
            return;
        }
        let nr = self.pages.nr_pages(pfn);
        let file = self.pages.is_file_lru(pfn);
        let lv = self.pages.hot[pfn as usize].memcg as usize;
        self.lru_del(pfn);
        self.pages.set(pfn, pg::ACTIVE);
        self.lru_add(pfn, false);
        self.ev.add(Ev::PgActivate, nr);
        self.lru_batch_add(crate::lrulock::BatchKind::Activate, lv, nr > 1);
        self.balance
            .note_access_activate(&mut self.lruvecs, lv, file, nr);
    }

    /// Kernel: `folio_end_writeback()` → `folio_rotate_reclaimable()`: a folio reclaim asked
    /// to be written (PG_reclaim) goes to the tail of the inactive list once clean, so the
    /// next scan frees it (PGROTATED).
    pub(crate) fn end_writeback(&mut self, pfn: Pfn) {
        if !self.pages.test_clear(pfn, pg::WRITEBACK) {
            return;
        }
        let nr = self.pages.nr_pages(pfn);
        self.node.nr_writeback -= nr;
        self.ev.add(crate::vmstat::Ev::NrWritten, nr);
        if !self.pages.test(pfn, pg::SWAPCACHE) {
            // A page-cache folio of the filesystem device: WB_WRITEBACK, WB_WRITTEN.
            self.wb_writeback_end(nr);
        }
        if self.pages.test_clear(pfn, pg::RECLAIM) {
            let f = self.pages.hot[pfn as usize].flags;
            if f & pg::LRU != 0 && f & (pg::DIRTY | pg::UNEVICTABLE) == 0 {
                self.lru_del(pfn);
                self.pages.clear(pfn, pg::ACTIVE);
                self.lru_add(pfn, true);
                self.ev.add(Ev::PgRotated, nr);
            }
        }
    }
}

#[cfg(test)]
mod mlock_tests {
    use crate::testutil::tiny_config;
    use crate::vmstat::Ev;
    use crate::*;

    /// Pages of an mlocked anon object go to the unevictable list and are never scanned,
    /// while streaming a file four times the size of memory forces reclaim (swap is
    /// available, so evictable anon pages would be scanned).
    fn mlocked_pages_are_never_scanned(lru: LruKind) {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 2048);
        cfg.lru = lru;
        cfg.objects[0].mlock = true;
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for i in 0..800 {
            mm.touch(&mut ctx, 0, i, true);
        }
        for i in 0..4 * 2048 {
            mm.file_read(&mut ctx, 1, i, 1);
            // Touch the locked pages again, so the multi-gen LRU's aging sees them young.
            mm.touch(&mut ctx, 0, i % 800, false);
            ctx.now += 10_000;
        }
        let ev = |e: Ev| mm.ev.0[e as usize];
        assert!(
            ev(Ev::PgStealDirect) + ev(Ev::PgStealKswapd) > 1000,
            "reclaim ran"
        );
        assert_eq!(ev(Ev::PgScanAnon), 0, "{lru:?}: no anon page was scanned");
        assert_eq!(mm.objects[0].nr_resident, 800);
        assert_eq!(mm.node_lru(LruList::Unevictable), 800);
        assert_eq!(ev(Ev::UnevictablePgsMlocked), 800);
        assert_eq!(ev(Ev::UnevictablePgsCulled), 800);
        let snap = mm.vmstat_snapshot();
        let get = |n: &str| snap.iter().find(|(k, _)| *k == n).unwrap().1;
        assert_eq!((get("nr_mlock"), get("nr_unevictable")), (800, 800));
        mm.check_invariants().unwrap();
    }

    #[test]
    fn mlocked_pages_are_never_scanned_classic() {
        mlocked_pages_are_never_scanned(LruKind::Classic);
    }

    #[test]
    fn mlocked_pages_are_never_scanned_mglru() {
        mlocked_pages_are_never_scanned(LruKind::Mglru);
    }
}
