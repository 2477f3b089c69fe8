//! Zones, the buddy allocator's free lists, and watermarks.
//!
//! # The problem
//! Reclaim is driven by free memory falling below thresholds; where those thresholds sit and
//! how much of the node they cover decides when kswapd wakes, when allocations stall in
//! direct reclaim, and how much kswapd frees before it sleeps again.
//!
//! # In this model
//! One node with up to two zones (DMA32, Normal) as contiguous pfn ranges. Each zone has a
//! buddy allocator (orders 0..=MAX_PAGE_ORDER, naturally aligned blocks, split on allocation,
//! merged with the buddy on free) and min/low/high watermarks computed from
//! `vm.min_free_kbytes` and `vm.watermark_scale_factor` exactly as `__setup_per_zone_wmarks()`
//! does, plus `watermark_boost`.
//!
//! # Where we differ from the kernel (v6.18)
//! - No migratetypes or pageblocks yet: every free block is MOVABLE. Compaction and
//!   fallback stealing build on this table later.
//! - No per-CPU page lists: frees go straight back to the buddy lists.
//! - `lowmem_reserve` is not modelled (all our allocations are movable user pages that may
//!   use any zone, for which the reserve of the highest zone is 0).
//!
//! # Kernel references
//! mm/page_alloc.c: `__setup_per_zone_wmarks()`, `calculate_min_free_kbytes()`,
//! `__zone_watermark_ok()`, `expand()`, `__free_one_page()`; mm/khugepaged.c
//! `set_recommended_min_free_kbytes()`.

use crate::list::{Links, ListHead};
use crate::page::{pg, FrameTable};
use crate::types::*;

/// Kernel: `enum zone_watermarks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wmark {
    Min = 0,
    Low = 1,
    High = 2,
}

pub struct Zone {
    pub name: &'static str,
    pub start_pfn: Pfn,
    pub end_pfn: Pfn,
    /// `managed_pages`.
    pub managed: u64,
    /// NR_FREE_PAGES.
    pub free: u64,
    /// `_watermark[WMARK_MIN..=WMARK_HIGH]`.
    pub wmark: [u64; 3],
    pub watermark_boost: u64,
    /// `free_area[order].free_list` (one migratetype).
    pub free_area: [ListHead; NR_PAGE_ORDERS],
    /// Per-zone LRU sizes (`NR_ZONE_*`), indexed by `LruList`.
    pub nr_lru: [u64; NR_LRU_LISTS],
    /// Free max-order blocks `[deferred.0, deferred.1)` not yet linked on
    /// `free_area[MAX_PAGE_ORDER]` (counted in `free`): conceptually they follow the list's
    /// tail, highest pfn first. Like DEFERRED_STRUCT_PAGE_INIT, they are linked one at a
    /// time when the list runs empty, so frames the workload never uses are never written.
    pub deferred: (Pfn, Pfn),
}

impl Zone {
    pub fn new(name: &'static str, start_pfn: Pfn, end_pfn: Pfn) -> Self {
        Zone {
            name,
            start_pfn,
            end_pfn,
            managed: (end_pfn - start_pfn) as u64,
            free: 0,
            wmark: [0; 3],
            watermark_boost: 0,
            free_area: [ListHead::new(); NR_PAGE_ORDERS],
            nr_lru: [0; NR_LRU_LISTS],
            deferred: (start_pfn, start_pfn),
        }
    }

    /// Kernel: `wmark_pages()` — the watermark plus the current boost.
    #[inline]
    pub fn wmark_pages(&self, w: Wmark) -> u64 {
        self.wmark[w as usize] + self.watermark_boost
    }

    #[inline]
    pub fn contains(&self, pfn: Pfn) -> bool {
        pfn >= self.start_pfn && pfn < self.end_pfn
    }

    /// Kernel: `__zone_watermark_ok()` for our allocations (no reserves, no CMA): free pages
    /// must stay above `mark`, and for order > 0 a free block of at least `order` must exist.
    pub fn watermark_ok(&self, order: u32, mark: u64) -> bool {
        if self.free <= mark {
            return false;
        }
        if order == 0 {
            return true;
        }
        (order as usize..NR_PAGE_ORDERS).any(|o| !self.free_area[o].is_empty())
            || self.deferred.0 < self.deferred.1
    }

    /// Free blocks of `order`: on the list, plus the deferred ones at the maximum order.
    pub fn nr_free_blocks(&self, order: usize) -> u64 {
        let deferred = if order == MAX_PAGE_ORDER as usize {
            ((self.deferred.1 - self.deferred.0) >> MAX_PAGE_ORDER) as u64
        } else {
            0
        };
        self.free_area[order].len as u64 + deferred
    }

    /// Link the highest deferred max-order block on the (empty) max-order list: the block
    /// the list would have at its head had every block been linked at boot.
    fn grow_deferred(&mut self, pages: &mut FrameTable) {
        let (lo, hi) = self.deferred;
        if lo < hi && self.free_area[MAX_PAGE_ORDER as usize].is_empty() {
            let pfn = hi - (1 << MAX_PAGE_ORDER);
            self.deferred.1 = pfn;
            self.add_free_block(pages, pfn, MAX_PAGE_ORDER);
            self.free -= 1 << MAX_PAGE_ORDER;
        }
    }

    /// Hand every frame of the zone to the buddy allocator in the largest aligned blocks.
    /// Blocks of the maximum order (one contiguous run) are deferred (see `deferred`): the
    /// free lists come out as if each block had been added at the head in pfn order.
    pub fn init_free(&mut self, pages: &mut FrameTable) {
        let mut pfn = self.start_pfn;
        self.deferred = (pfn, pfn);
        while pfn < self.end_pfn {
            let mut order = MAX_PAGE_ORDER;
            while order > 0
                && (pfn & ((1 << order) - 1) != 0
                    || pfn as u64 + (1u64 << order) > self.end_pfn as u64)
            {
                order -= 1;
            }
            if order == MAX_PAGE_ORDER {
                if self.deferred.0 == self.deferred.1 {
                    self.deferred = (pfn, pfn);
                }
                debug_assert_eq!(self.deferred.1, pfn, "max-order blocks are contiguous");
                self.deferred.1 = pfn + (1 << order);
                self.free += 1 << order;
            } else {
                self.add_free_block(pages, pfn, order);
            }
            pfn += 1 << order;
        }
    }

    fn add_free_block(&mut self, pages: &mut FrameTable, pfn: Pfn, order: u32) {
        pages.flags[pfn as usize] = pg::BUDDY;
        pages.order[pfn as usize] = order as u8;
        let mut l = Links {
            prev: &mut pages.prev,
            next: &mut pages.next,
        };
        l.add_head(&mut self.free_area[order as usize], pfn);
        self.free += 1 << order;
    }

    fn del_free_block(&mut self, pages: &mut FrameTable, pfn: Pfn, order: u32) {
        let mut l = Links {
            prev: &mut pages.prev,
            next: &mut pages.next,
        };
        l.del(&mut self.free_area[order as usize], pfn);
        pages.flags[pfn as usize] = 0;
        self.free -= 1 << order;
    }

    /// Kernel: `__rmqueue_smallest()` + `expand()`: take the smallest free block of at least
    /// `order`, split it and return the lower halves' buddies to the free lists.
    pub fn rmqueue(&mut self, pages: &mut FrameTable, order: u32) -> Option<Pfn> {
        self.grow_deferred(pages);
        let mut cur = order;
        while cur <= MAX_PAGE_ORDER && self.free_area[cur as usize].is_empty() {
            cur += 1;
        }
        if cur > MAX_PAGE_ORDER {
            return None;
        }
        let pfn = self.free_area[cur as usize].head;
        self.del_free_block(pages, pfn, cur);
        while cur > order {
            cur -= 1;
            self.add_free_block(pages, pfn + (1 << cur), cur);
        }
        pages.order[pfn as usize] = order as u8;
        Some(pfn)
    }

    /// Kernel: `__free_one_page()`: merge with the buddy while it is free at the same order.
    pub fn free_block(&mut self, pages: &mut FrameTable, mut pfn: Pfn, mut order: u32) {
        while order < MAX_PAGE_ORDER {
            let buddy = pfn ^ (1 << order);
            if !self.contains(buddy)
                || (buddy as u64 + (1u64 << order)) > self.end_pfn as u64
                || !pages.test(buddy, pg::BUDDY)
                || pages.order[buddy as usize] as u32 != order
            {
                break;
            }
            self.del_free_block(pages, buddy, order);
            pfn = pfn.min(buddy);
            order += 1;
        }
        self.add_free_block(pages, pfn, order);
    }
}

/// Kernel: `calculate_min_free_kbytes()` followed by `set_recommended_min_free_kbytes()`
/// (THP enabled, as on distribution kernels): the larger of the two.
pub fn default_min_free_kbytes(lowmem_pages: u64, nr_zones: u64) -> u64 {
    let lowmem_kbytes = lowmem_pages * 4;
    let computed = int_sqrt(lowmem_kbytes * 16).clamp(128, 262_144);
    // set_recommended_min_free_kbytes(): pageblock_nr_pages * nr_zones * (2 + 3 * 3) pages,
    // capped at 5% of lowmem.
    let pageblock_nr_pages = 512u64;
    let mut recommended = pageblock_nr_pages * nr_zones * (2 + 3 * 3);
    recommended = recommended.min(lowmem_pages / 20);
    computed.max(recommended * 4)
}

/// Kernel: `__setup_per_zone_wmarks()`. Returns (min, low, high) for each zone.
pub fn setup_per_zone_wmarks(
    managed: &[u64],
    min_free_kbytes: u64,
    watermark_scale_factor: u64,
) -> Vec<[u64; 3]> {
    let pages_min = min_free_kbytes >> 2;
    let lowmem: u64 = managed.iter().sum::<u64>().max(1);
    managed
        .iter()
        .map(|&m| {
            let tmp = pages_min * m / lowmem;
            let wmin = tmp;
            let delta = (tmp >> 2).max(m * watermark_scale_factor / 10_000);
            [wmin, wmin + delta, wmin + 2 * delta]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watermarks_for_one_8g_zone() {
        // KERNEL-MODEL §7.1 worked example: 8 GiB zone, min_free ~ 11585 KiB
        // -> min 2896, delta = max(724, 2097152*10/10000 = 2097) -> low 4993, high 7090.
        let w = setup_per_zone_wmarks(&[2_097_152], 11_585, 10);
        assert_eq!(w[0], [2896, 4993, 7090]);
    }

    #[test]
    fn min_free_kbytes_computed_and_thp_recommended() {
        // 8 GiB lowmem: int_sqrt(8388608 * 16) = 11585 KiB; THP recommends
        // 512 * 1 * 11 = 5632 pages = 22528 KiB (< 5% of 2 Mi pages), which wins.
        assert_eq!(default_min_free_kbytes(2_097_152, 1), 22_528);
        // 64 MiB: computed sqrt(65536*16) = 1024 KiB; recommended capped at 5% = 819 pages
        // = 3276 KiB.
        assert_eq!(default_min_free_kbytes(16_384, 1), 3_276);
    }

    #[test]
    fn buddy_split_and_merge() {
        let mut pages = FrameTable::new(2048);
        let mut z = Zone::new("Normal", 0, 2048);
        z.init_free(&mut pages);
        assert_eq!(z.free, 2048);
        assert_eq!(z.nr_free_blocks(10), 2);
        let a = z.rmqueue(&mut pages, 0).unwrap();
        // One order-10 block split down: orders 0..=9 each get one buddy.
        assert_eq!(z.free, 2047);
        for o in 0..10 {
            assert_eq!(z.free_area[o].len, 1, "order {o}");
        }
        let b = z.rmqueue(&mut pages, 3).unwrap();
        assert_eq!(b % 8, 0);
        z.free_block(&mut pages, a, 0);
        z.free_block(&mut pages, b, 3);
        assert_eq!(z.free, 2048);
        assert_eq!(z.nr_free_blocks(10), 2);
    }

    #[test]
    fn watermark_ok_needs_a_block_of_the_order() {
        let mut pages = FrameTable::new(16);
        let mut z = Zone::new("Normal", 0, 16);
        z.init_free(&mut pages);
        assert!(z.watermark_ok(4, 0));
        let p = z.rmqueue(&mut pages, 0).unwrap();
        assert!(!z.watermark_ok(4, 0));
        assert!(z.watermark_ok(3, 0));
        z.free_block(&mut pages, p, 0);
        assert!(z.watermark_ok(4, 0));
    }

    /// Deferred linking gives the same allocations as linking every block at boot: the
    /// highest max-order block first, then on down, with freed blocks reused first.
    #[test]
    fn deferred_max_order_blocks_come_out_in_boot_order() {
        let n = 8 << MAX_PAGE_ORDER;
        let mut pages = FrameTable::new(n as usize + 5);
        // Start unaligned (5 frames of small blocks) like a Normal zone after DMA32.
        let mut z = Zone::new("Normal", 5, n + 5);
        z.init_free(&mut pages);
        assert_eq!(z.free, n as u64);
        assert_eq!(z.nr_free_blocks(MAX_PAGE_ORDER as usize), 7);
        assert_eq!(
            z.free_area[MAX_PAGE_ORDER as usize].len, 0,
            "nothing linked yet"
        );
        let max = |z: &mut Zone, pages: &mut FrameTable| z.rmqueue(pages, MAX_PAGE_ORDER).unwrap();
        let block = 1u32 << MAX_PAGE_ORDER;
        let a = max(&mut z, &mut pages);
        assert_eq!(
            a,
            7 * block,
            "the highest block first (the list head at boot)"
        );
        let b = max(&mut z, &mut pages);
        assert_eq!(b, 6 * block);
        z.free_block(&mut pages, a, MAX_PAGE_ORDER);
        assert_eq!(max(&mut z, &mut pages), a, "a freed block goes to the head");
        assert_eq!(max(&mut z, &mut pages), 5 * block);
        assert!(
            z.watermark_ok(MAX_PAGE_ORDER, 0),
            "deferred blocks count as free blocks"
        );
    }
}
