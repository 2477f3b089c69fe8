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

use crate::list::Links;
use crate::page::pg;
use crate::types::*;
use crate::vmstat::Ev;
use crate::Mm;

impl Mm {
    #[inline]
    pub(crate) fn folio_lru(&self, pfn: Pfn) -> LruList {
        LruList::of(
            self.pages.is_file_lru(pfn),
            self.pages.test(pfn, pg::ACTIVE),
        )
    }

    /// Kernel: `lruvec_add_folio()` / `lruvec_add_folio_tail()`: put the folio on the list its
    /// flags say, in the lruvec of its memcg, and account its pages.
    pub fn lru_add(&mut self, pfn: Pfn, tail: bool) {
        if self.cfg.lru == crate::LruKind::Mglru {
            return self.lru_gen_add_folio(pfn, tail);
        }
        let lru = self.folio_lru(pfn);
        let lv = self.pages.memcg[pfn as usize] as usize;
        let nr = self.pages.nr_pages(pfn);
        let zone = self.zone_of(pfn);
        let mut l = Links {
            prev: &mut self.pages.prev,
            next: &mut self.pages.next,
        };
        let list = &mut self.lruvecs[lv].lists[lru.idx()];
        if tail {
            l.add_tail(list, pfn);
        } else {
            l.add_head(list, pfn);
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
        if self.cfg.lru == crate::LruKind::Mglru {
            return self.lru_gen_del_folio(pfn, false);
        }
        let lru = self.folio_lru(pfn);
        let lv = self.pages.memcg[pfn as usize] as usize;
        let nr = self.pages.nr_pages(pfn);
        let zone = self.zone_of(pfn);
        let mut l = Links {
            prev: &mut self.pages.prev,
            next: &mut self.pages.next,
        };
        l.del(&mut self.lruvecs[lv].lists[lru.idx()], pfn);
        let v = &mut self.lruvecs[lv];
        v.nr[lru.idx()] -= nr;
        v.nr_zone[zone][lru.idx()] -= nr;
        self.zones[zone].nr_lru[lru.idx()] -= nr;
        self.pages.clear(pfn, pg::LRU);
    }

    /// Kernel: `folio_add_lru()`: a new folio lands at the head of the inactive list of its
    /// type, or the active list if PG_active was set (refault activation). Under the
    /// multi-gen LRU a folio added in a page fault (`lru_gen_in_fault()`) is made active, so
    /// it joins the second youngest generation.
    pub fn folio_add_lru(&mut self, pfn: Pfn) {
        if self.cfg.lru == crate::LruKind::Mglru
            && self.in_lru_fault
            && !self.pages.test(pfn, pg::UNEVICTABLE)
        {
            self.pages.set(pfn, pg::ACTIVE);
        }
        self.lru_add(pfn, false);
        let lv = self.pages.memcg[pfn as usize] as usize;
        let large = self.pages.nr_pages(pfn) > 1;
        self.lru_batch_add(crate::lrulock::BatchKind::Add, lv, large);
    }

    /// Kernel: `folio_mark_accessed()` (classic LRU): inactive,unreferenced →
    /// inactive,referenced → active,unreferenced → active,referenced.
    pub fn folio_mark_accessed(&mut self, pfn: Pfn) {
        if self.cfg.lru == crate::LruKind::Mglru {
            return self.lru_gen_inc_refs(pfn);
        }
        let f = self.pages.flags[pfn as usize];
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
            let lv = self.pages.memcg[pfn as usize] as usize;
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
        let lv = self.pages.memcg[pfn as usize] as usize;
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
            let f = self.pages.flags[pfn as usize];
            if f & pg::LRU != 0 && f & (pg::DIRTY | pg::UNEVICTABLE) == 0 {
                self.lru_del(pfn);
                self.pages.clear(pfn, pg::ACTIVE);
                self.lru_add(pfn, true);
                self.ev.add(Ev::PgRotated, nr);
            }
        }
    }
}
