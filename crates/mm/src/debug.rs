//! Invariant checks: the model's `VM_BUG_ON`. Run in debug builds by the tests and by
//! `refault run --check` every `model.check_interval` events.
//!
//! Checked: every frame is in exactly one place (a buddy free block, kernel memory, or an
//! allocated folio on an LRU: nothing stays isolated between events);
//! free counts match the free lists, per order and migratetype, and each free block is on the
//! list of its pageblock's migratetype; pageblock types are valid; every folio is on the LRU list its flags name, in its
//! memcg's lruvec, and list sizes match the lists (per lruvec and per zone) — under the
//! multi-gen LRU, every folio on the generation list it is linked on with a live generation,
//! and the page counts per generation and the active/inactive sizes match; every page-table,
//! page-cache and swap-cache entry points at a folio that points back; memcg usage equals the
//! pages charged to it; free swap slots are counted right.

use crate::filemap::CACHE_PRESENT;
use crate::memory::*;
use crate::mmzone::{mt, MIGRATE_TYPES, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER, PB_MT_MASK};
use crate::page::pg;
use crate::swap::{SLOT_CACHE, SLOT_USED};
use crate::types::*;
use crate::{Mm, ObjKind};

/// A violated invariant, with the state of the folio involved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invariant(pub String);

impl std::fmt::Display for Invariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invariant violated: {}", self.0)
    }
}

impl Mm {
    /// `dump_folio()`: a one-line description of a folio's state.
    pub fn dump_folio(&self, pfn: Pfn) -> String {
        let i = pfn as usize;
        let f = self.pages.hot[i].flags;
        let names = [
            (pg::LRU, "lru"),
            (pg::ACTIVE, "active"),
            (pg::REFERENCED, "referenced"),
            (pg::WORKINGSET, "workingset"),
            (pg::SWAPBACKED, "swapbacked"),
            (pg::DIRTY, "dirty"),
            (pg::WRITEBACK, "writeback"),
            (pg::RECLAIM, "reclaim"),
            (pg::READAHEAD, "readahead"),
            (pg::SWAPCACHE, "swapcache"),
            (pg::HEAD, "head"),
            (pg::BUDDY, "buddy"),
            (pg::ISOLATED, "isolated"),
            (pg::LOCKED, "locked"),
        ];
        let fl: Vec<&str> = names
            .iter()
            .filter(|(b, _)| f & b != 0)
            .map(|(_, n)| *n)
            .collect();
        format!(
            "pfn {pfn}: order {} flags [{}] obj {} index {} memcg {} swap {}:{}",
            self.pages.hot[i].order,
            fl.join(","),
            self.pages.obj[i] as i64,
            self.pages.index[i],
            self.pages.hot[i].memcg,
            self.pages.hot[i].swap_area,
            self.pages.swap_slot[i]
        )
    }

    pub fn check_invariants(&self) -> Result<(), Invariant> {
        let bad = |msg: String| Err(Invariant(msg));
        let n = self.pages.len();
        // 1. Walk the buddy free lists.
        let mut owner = vec![0u8; n]; // 1 = free, 2 = folio
        for (zi, z) in self.zones.iter().enumerate() {
            let mut free = 0u64;
            for (order, lists) in z.free_area.iter().enumerate() {
                let mut nr_blocks = 0u64;
                for (t, l) in lists.iter().enumerate() {
                    let mut p = l.head;
                    let mut cnt = 0;
                    while p != NIL {
                        if !self.pages.test(p, pg::BUDDY)
                            || self.pages.hot[p as usize].order as usize != order
                            || !z.contains(p)
                        {
                            return bad(format!(
                                "free list {order}/{t} of zone {zi} holds {}",
                                self.dump_folio(p)
                            ));
                        }
                        if self.pages.free_mt[p as usize] as usize != t {
                            return bad(format!(
                                "free block {p} order {order} on the {} list of zone {zi} \
                                 records the {} list",
                                mt::NAMES[t],
                                mt::NAMES[self.pages.free_mt[p as usize] as usize]
                            ));
                        }
                        // Every free block is on the list of its pageblock's type, and a
                        // block spanning pageblocks has one type; before v6.10 a fallback
                        // moves free blocks to another type's lists without retyping.
                        let nb = if z.steal_moves_free_pages {
                            0
                        } else if order as u32 > PAGEBLOCK_ORDER {
                            1u32 << (order as u32 - PAGEBLOCK_ORDER)
                        } else {
                            1
                        };
                        for b in 0..nb {
                            let bt = z.pageblock_mt(p + (b << PAGEBLOCK_ORDER));
                            if bt as usize != t {
                                return bad(format!(
                                    "free block {p} order {order} on the {} list of zone {zi} \
                                     but its pageblock is {}",
                                    mt::NAMES[t],
                                    mt::NAMES[bt as usize]
                                ));
                            }
                        }
                        for k in p..p + (1 << order) {
                            if owner[k as usize] != 0 {
                                return bad(format!("pfn {k} free twice"));
                            }
                            owner[k as usize] = 1;
                        }
                        free += 1 << order;
                        cnt += 1;
                        p = self.pages.hot[p as usize].next;
                    }
                    if cnt != l.len {
                        return bad(format!(
                            "zone {zi} order {order} type {t}: list len {} != {cnt}",
                            l.len
                        ));
                    }
                    nr_blocks += cnt as u64;
                }
                if order == MAX_PAGE_ORDER as usize {
                    nr_blocks += ((z.deferred.1 - z.deferred.0) >> MAX_PAGE_ORDER) as u64;
                }
                if nr_blocks != z.nr_free[order] {
                    return bad(format!(
                        "zone {zi} order {order}: nr_free {} but the lists hold {nr_blocks}",
                        z.nr_free[order]
                    ));
                }
            }
            // The per-CPU lists: order-0 pages, neither PageBuddy nor folios, on the list of
            // a mobility type, counted per CPU and in `nr_pcp`, not in NR_FREE_PAGES.
            let mut nr_pcp = 0u64;
            for (c, pcp) in z.pcp.iter().enumerate() {
                let mut cnt = 0u32;
                for (t, l) in pcp.lists.iter().enumerate() {
                    let mut p = l.head;
                    let mut len = 0u32;
                    while p != NIL {
                        if self.pages.hot[p as usize].flags != 0
                            || self.pages.hot[p as usize].order != 0
                            || !z.contains(p)
                        {
                            return bad(format!(
                                "per-CPU list {t} of CPU {c} in zone {zi} holds {}",
                                self.dump_folio(p)
                            ));
                        }
                        if owner[p as usize] != 0 {
                            return bad(format!("pfn {p} on a per-CPU list and free"));
                        }
                        owner[p as usize] = 1;
                        len += 1;
                        p = self.pages.hot[p as usize].next;
                    }
                    if len != l.len {
                        return bad(format!(
                            "zone {zi} CPU {c} per-CPU list {t}: len {} != {len}",
                            l.len
                        ));
                    }
                    cnt += len;
                }
                if cnt != pcp.count {
                    return bad(format!(
                        "zone {zi} CPU {c}: per-CPU count {} but the lists hold {cnt}",
                        pcp.count
                    ));
                }
                nr_pcp += cnt as u64;
            }
            if nr_pcp != z.nr_pcp {
                return bad(format!(
                    "zone {zi}: nr_pcp {} but the per-CPU lists hold {nr_pcp}",
                    z.nr_pcp
                ));
            }
            let mut nr_pageblocks = [0u64; MIGRATE_TYPES];
            for (b, &f) in z.pageblock.iter().enumerate() {
                if (f & PB_MT_MASK) as usize >= MIGRATE_TYPES {
                    return bad(format!("zone {zi} pageblock {b}: bad migratetype {f:#x}"));
                }
                nr_pageblocks[(f & PB_MT_MASK) as usize] += 1;
            }
            if nr_pageblocks != z.nr_pageblocks {
                return bad(format!(
                    "zone {zi}: pageblocks by type {:?} but counted {nr_pageblocks:?}",
                    z.nr_pageblocks
                ));
            }
            // Deferred max-order blocks (not linked yet) are free MOVABLE blocks too, and
            // while any is deferred the MOVABLE max-order list is not empty.
            let (lo, hi) = z.deferred;
            if lo < hi && z.free_area[MAX_PAGE_ORDER as usize][mt::MOVABLE as usize].is_empty() {
                return bad(format!(
                    "zone {zi}: blocks deferred but the max-order MOVABLE list is empty"
                ));
            }
            for k in lo..hi {
                if owner[k as usize] != 0 {
                    return bad(format!("pfn {k} deferred and on a free list"));
                }
                if k & (PAGEBLOCK_NR_PAGES as u32 - 1) == 0 && z.pageblock_mt(k) != mt::MOVABLE {
                    return bad(format!("pfn {k} deferred in a non-MOVABLE pageblock"));
                }
                owner[k as usize] = 1;
            }
            free += (hi - lo) as u64;
            if free != z.free {
                return bad(format!(
                    "zone {zi}: free {} but free lists hold {free}",
                    z.free
                ));
            }
        }
        // 2. Walk the LRU lists.
        let mut lru_pages = vec![[0u64; NR_LRU_LISTS]; self.lruvecs.len()];
        let mut zone_pages = vec![[0u64; NR_LRU_LISTS]; self.zones.len()];
        // Unevictable folios are on no list, only counted: find them by their flags (only
        // mlocked objects make folios unevictable; without one the walk is skipped).
        let mut p = if self.objects.iter().any(|o| o.mlock) {
            0
        } else {
            self.pages.len()
        };
        while p < self.pages.len() {
            let pfn = p as Pfn;
            let f = self.pages.hot[p].flags;
            if f & pg::HEAD != 0 && f & pg::LRU != 0 && f & pg::UNEVICTABLE != 0 {
                let nr = self.pages.nr_pages(pfn);
                let u = LruList::Unevictable.idx();
                lru_pages[self.pages.hot[p].memcg as usize][u] += nr;
                zone_pages[self.zone_of(pfn)][u] += nr;
            }
            p += if f & pg::BUDDY != 0 {
                1 << self.pages.hot[p].order
            } else if f & pg::HEAD != 0 {
                self.pages.nr_pages(pfn) as usize
            } else {
                1
            };
        }
        if self.cfg.lru == crate::LruKind::Mglru {
            if let Err(e) = self.check_lru_gen(&mut lru_pages, &mut zone_pages) {
                return bad(e);
            }
            for (lv, v) in self.lruvecs.iter().enumerate() {
                if lru_pages[lv] != v.nr {
                    return bad(format!(
                        "lruvec {lv}: active/inactive sizes {:?} but generations hold {:?}",
                        v.nr, lru_pages[lv]
                    ));
                }
            }
        }
        for (lv, v) in self.lruvecs.iter().enumerate() {
            if self.cfg.lru == crate::LruKind::Mglru {
                break;
            }
            for lru in EVICTABLE_LRUS {
                let mut p = v.lists[lru.idx()].head;
                let mut cnt = 0;
                let mut prev = NIL;
                while p != NIL {
                    if self.pages.hot[p as usize].prev != prev {
                        return bad(format!("broken prev link at {}", self.dump_folio(p)));
                    }
                    if !self.pages.test(p, pg::LRU)
                        || self.folio_lru(p) != lru
                        || self.pages.hot[p as usize].memcg as usize != lv
                    {
                        return bad(format!(
                            "{} on lruvec {lv} list {}",
                            self.dump_folio(p),
                            lru.name()
                        ));
                    }
                    let nr = self.pages.nr_pages(p);
                    lru_pages[lv][lru.idx()] += nr;
                    zone_pages[self.zone_of(p)][lru.idx()] += nr;
                    cnt += 1;
                    prev = p;
                    p = self.pages.hot[p as usize].next;
                }
                if cnt != v.lists[lru.idx()].len {
                    return bad(format!(
                        "lruvec {lv} {}: len {} but {cnt} linked",
                        lru.name(),
                        v.lists[lru.idx()].len
                    ));
                }
                if lru_pages[lv][lru.idx()] != v.nr[lru.idx()] {
                    return bad(format!(
                        "lruvec {lv} {}: nr {} but {} pages linked",
                        lru.name(),
                        v.nr[lru.idx()],
                        lru_pages[lv][lru.idx()]
                    ));
                }
            }
        }
        for (zi, z) in self.zones.iter().enumerate() {
            if z.nr_lru != zone_pages[zi] {
                return bad(format!(
                    "zone {zi} LRU counts {:?} but lists hold {:?}",
                    z.nr_lru, zone_pages[zi]
                ));
            }
        }
        // 3. Every allocated folio: on an LRU, owned, charged.
        let mut charged = vec![0u64; self.memcgs.len()];
        let mut kernel = 0u64;
        let mut pgtables = 0u64;
        let mut pmd_mapped = 0u64;
        let mut p = 0usize;
        while p < n {
            if owner[p] == 1 {
                p += 1;
                continue;
            }
            let zi = self.zone_of(p as Pfn);
            if let Some(end) = self.zones[zi].boot_held_end(p as Pfn) {
                // Kernel memory since boot whose records are not written yet.
                for (k, o) in owner[p..end as usize].iter_mut().enumerate() {
                    if *o != 0 {
                        return bad(format!("pfn {} held since boot and free", p + k));
                    }
                    *o = 2;
                }
                kernel += end as u64 - p as u64;
                p = end as usize;
                continue;
            }
            let pfn = p as Pfn;
            if !self.pages.test(pfn, pg::HEAD) {
                return bad(format!(
                    "pfn {p} neither free nor a folio head: {}",
                    self.dump_folio(pfn)
                ));
            }
            let nr = self.pages.nr_pages(pfn) as usize;
            if self.pages.obj[p] == NIL && self.pages.hot[p].flags == pg::HEAD {
                // Kernel memory (alloc_kernel_pages()): off every LRU, owned by no mapping.
                for (k, o) in owner[p..p + nr].iter_mut().enumerate() {
                    if *o != 0 {
                        return bad(format!("pfn {} in kernel memory and free", p + k));
                    }
                    *o = 2;
                }
                if self.pages.index[p] == crate::memcontrol::PGTABLE_INDEX {
                    // A page-table page, charged to the faulting task's memcg.
                    pgtables += nr as u64;
                    charged[self.pages.hot[p].memcg as usize] += nr as u64;
                } else {
                    kernel += nr as u64;
                }
                p += nr;
                continue;
            }
            if !self.pages.test(pfn, pg::LRU) || self.pages.test(pfn, pg::ISOLATED) {
                return bad(format!("folio not on an LRU: {}", self.dump_folio(pfn)));
            }
            for (k, o) in owner[p..p + nr].iter_mut().enumerate() {
                if *o != 0 {
                    return bad(format!("pfn {} in a folio and free", p + k));
                }
                *o = 2;
            }
            charged[self.pages.hot[p].memcg as usize] += nr as u64;
            if self.pages.test(pfn, pg::PMD_MAPPED) {
                pmd_mapped += 1;
            }
            // Back-pointer from its mapping.
            let o = self.pages.owner(pfn);
            let obj = &self.objects[o.obj as usize];
            let ok = if self.pages.test(pfn, pg::SWAPCACHE) {
                let a = self.pages.hot[p].swap_area as usize;
                let s = self.swap[a].slots[self.pages.swap_slot[p] as usize];
                s & SLOT_CACHE != 0 && s as u32 == pfn
            } else {
                match obj.kind {
                    ObjKind::Anon | ObjKind::Shmem => {
                        let e = obj.ent[o.index as usize];
                        pte_present(e) && pte_pfn(e) == pfn
                    }
                    ObjKind::File => (o.index as usize..o.index as usize + nr).all(|k| {
                        obj.ent[k]
                            == crate::filemap::cache_entry(pfn, self.pages.hot[p].order as u32)
                    }),
                }
            };
            if !ok {
                return bad(format!(
                    "no mapping points back at {}",
                    self.dump_folio(pfn)
                ));
            }
            p += nr;
        }
        if pmd_mapped != self.node.nr_anon_thps {
            return bad(format!(
                "{pmd_mapped} PMD-mapped THPs but nr_anon_thps = {}",
                self.node.nr_anon_thps
            ));
        }
        if kernel != self.node.nr_kernel_pages + self.node.nr_reserved_pages {
            return bad(format!(
                "{kernel} pages of kernel memory but nr_kernel_pages = {} and {} reserved",
                self.node.nr_kernel_pages, self.node.nr_reserved_pages
            ));
        }
        if pgtables != self.node.nr_page_table_pages {
            return bad(format!(
                "{pgtables} page-table pages but nr_page_table_pages = {}",
                self.node.nr_page_table_pages
            ));
        }
        for (m, c) in charged.iter_mut().enumerate() {
            // Slab objects are charged by bytes, in whole pages (crate::slab); the page
            // counter includes the charge the per-CPU stocks hold.
            *c += self.slab.memcg_pages[m];
            let stocked = self.memcg_stocked(m);
            if *c + stocked != self.memcgs[m].usage {
                return bad(format!(
                    "memcg {m}: usage {} but {c} pages charged and {stocked} stocked",
                    self.memcgs[m].usage
                ));
            }
        }
        // Slab pages belong to exactly one slab; dentries pin inodes.
        if let Err(e) = self
            .check_slab()
            .and_then(|_| self.check_fs())
            .and_then(|_| self.check_xarray())
        {
            return bad(e);
        }
        // 4. Mapping entries point at folios that point back.
        for (oi, obj) in self.objects.iter().enumerate() {
            for (idx, &e) in obj.ent.iter().enumerate() {
                let pfn = match obj.kind {
                    ObjKind::File if e & CACHE_PRESENT != 0 => e as u32,
                    ObjKind::Anon | ObjKind::Shmem if pte_present(e) => {
                        // A THP's entry maps its subpage: the folio is at the head.
                        let head = self.pages.anon_folio_of(pte_pfn(e));
                        if pte_pfn(e) - head
                            != (idx as u32).wrapping_sub(self.pages.index[head as usize])
                        {
                            return bad(format!(
                                "object {oi} index {idx} maps subpage {} of {}",
                                pte_pfn(e) - head,
                                self.dump_folio(head)
                            ));
                        }
                        head
                    }
                    _ => continue,
                };
                if obj.kind != ObjKind::File
                    && self.pages.test(pfn, pg::SWAPCACHE | pg::LOCKED)
                    && e & PTE_ATTN == 0
                {
                    return bad(format!(
                        "PTE of object {oi} index {idx} lacks PTE_ATTN for {}",
                        self.dump_folio(pfn)
                    ));
                }
                let o = self.pages.owner(pfn);
                let nr = self.pages.nr_pages(pfn) as usize;
                if o.obj as usize != oi || idx < o.index as usize || idx >= o.index as usize + nr {
                    return bad(format!(
                        "object {oi} index {idx} points at {}",
                        self.dump_folio(pfn)
                    ));
                }
            }
        }
        // 5. Swap slots.
        for (a, area) in self.swap.iter().enumerate() {
            let used = area.slots.iter().filter(|&&s| s & SLOT_USED != 0).count() as u64;
            if area.size_pages - used != area.nr_free {
                return bad(format!(
                    "swap area {a}: nr_free {} but {} slots free",
                    area.nr_free,
                    area.size_pages - used
                ));
            }
            for (c, &u) in area.cluster_used.iter().enumerate() {
                let lo = c * crate::swap::SWAPFILE_CLUSTER as usize;
                let hi = (lo + crate::swap::SWAPFILE_CLUSTER as usize).min(area.slots.len());
                let n = area.slots[lo..hi]
                    .iter()
                    .filter(|&&s| s & SLOT_USED != 0)
                    .count();
                if n != u as usize {
                    return bad(format!(
                        "swap area {a} cluster {c}: {n} slots used but count {u}"
                    ));
                }
            }
        }
        Ok(())
    }
}
