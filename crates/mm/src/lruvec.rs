//! `struct lruvec`: the LRU lists of one memory cgroup on the node, with the state that
//! reclaim balancing and workingset detection keep per lruvec.
//!
//! Lruvec 0 belongs to the root memory cgroup; lruvec `i` to memcg `i`. The hierarchy is one
//! level deep (children of the root), so "every ancestor" in the kernel's loops is "this
//! lruvec and, if it is not the root, the root".

use crate::list::ListHead;
use crate::types::*;

#[derive(Clone, Debug, Default)]
pub struct Lruvec {
    /// The four evictable lists (`lists[LRU_UNEVICTABLE]` is not a real list since v5.18).
    pub lists: [ListHead; 4],
    /// Pages on each list of this lruvec alone (`mem_cgroup_get_zone_lru_size` summed).
    pub nr: [u64; NR_LRU_LISTS],
    /// Pages per zone per list (`lruvec_lru_size(lruvec, lru, zone_idx)` sums these).
    pub nr_zone: [[u64; NR_LRU_LISTS]; crate::mmzone::NR_ZONE_TYPES],
    /// Kernel: `lruvec->nonresident_age`, the workingset clock (hierarchical: children
    /// advance their ancestors' clocks too).
    pub nonresident_age: u64,
    /// Kernel: `lruvec->anon_cost`, `lruvec->file_cost` (hierarchical).
    pub anon_cost: u64,
    pub file_cost: u64,
    /// WORKINGSET_ACTIVATE_{ANON,FILE} of this lruvec and its descendants.
    pub workingset_activate: [u64; 2],
    /// Kernel: `lruvec->refaults[]`, the snapshot of `workingset_activate` taken at the end of
    /// the last reclaim cycle (`snapshot_refaults()`).
    pub refaults: [u64; 2],
    /// The lruvec statistics as of the last memcg stats flush (`lruvec_page_state()` reads
    /// these): the hierarchical sizes of the four evictable lists and
    /// WORKINGSET_ACTIVATE_{ANON,FILE}. Only used when `memcg_stats_flush_ns` > 0.
    pub flushed_lru: [u64; 4],
    pub flushed_activate: [u64; 2],
    /// Legacy balance (< v5.8): `reclaim_stat.recent_scanned[]` / `recent_rotated[]`.
    pub recent_scanned: [u64; 2],
    pub recent_rotated: [u64; 2],
    /// The multi-gen LRU's generations (`lruvec->lrugen`); unused by the classic LRU.
    pub lrugen: crate::mglru::LruGen,
}

impl Lruvec {
    /// Sum of the four evictable lists.
    pub fn evictable_pages(&self) -> u64 {
        self.nr[0] + self.nr[1] + self.nr[2] + self.nr[3]
    }
}

/// The lruvec and its ancestors, innermost first (`for lruvec up to root`).
#[inline]
pub fn ancestors(lv: usize) -> impl Iterator<Item = usize> {
    let root = if lv != 0 { Some(0) } else { None };
    std::iter::once(lv).chain(root)
}
