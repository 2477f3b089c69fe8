//! Shrinkers (mm/shrinker.c, before v6.7 in mm/vmscan.c): `shrink_slab()` called by reclaim
//! for every memcg it visits, `do_shrink_slab()`'s scan-count arithmetic, the superblock
//! shrinker (`super_cache_count()` / `super_cache_scan()`) that frees dentries and inodes, and
//! `vm.drop_caches`.
//!
//! # The idea
//! Slab objects are not on the LRU lists, so reclaim cannot age them with the pages; instead
//! every pass of `shrink_node()` asks each shrinker to scan a share of its objects matching
//! the pressure on the LRU: `(freeable >> priority) * 4 / seeks`. Small requests are not
//! lost: work below one batch is carried over in `nr_deferred` and drained by later calls
//! (at `nr_deferred >> priority` per call), so a cache is scanned in batches of
//! `batch_size` objects, at most twice its size per call.
//!
//! # In this model
//! One shrinker: the superblock's (memcg- and NUMA-aware, `seeks = DEFAULT_SEEKS`,
//! `batch = 1024`), with one `nr_deferred` per memcg. `shrink_slab(memcg)` for the root memcg
//! asks it about the root's lists; for a child memcg (`shrink_slab_memcg()`) about the
//! child's. The pages freed (empty slabs and inode page cache invalidated by
//! `prune_icache_sb()`) are returned through `reclaim_state` and added to
//! `sc.nr_reclaimed` for global reclaim only (`flush_reclaim_state()`, v6.4+).
//! XFS's buffer target shrinker (`xfs_buftarg_shrink_scan()`, [`crate::xfs`]: not memcg
//! aware, so only the root memcg's call runs it) frees unused inode cluster buffers; its
//! scans count in `slabs_scanned`.
//!
//! Kernels before v5.13 (the seed S3's v5.3) handled deferred work differently: a call took
//! the whole backlog (capped to half the cache while the call's own share is small) and left
//! the unscanned rest uncapped in `nr_deferred` ([`do_shrink_slab_windup`],
//! `KernelVersion::shrinker_deferred_by_priority`); both shrinkers follow the version.
//!
//! The superblock shrinker's count and scan include the filesystem's own objects
//! (`nr_cached_objects` / `free_cached_objects`): XFS's reclaimable inodes, which the VFS
//! evicted and XFS has not yet freed ([`crate::xfs`], "XFS's inode reclaim").
//!
//! # Where we differ from the kernel (v6.18)
//! - XFS's other private caches (dquots) are not modelled.
//! - `shrink_slab_memcg()`'s shrinker bitmap is implied: a memcg with empty lists counts 0
//!   (SHRINK_EMPTY) and is skipped.
//!
//! # Kernel references
//! mm/shrinker.c `shrink_slab()`, `shrink_slab_memcg()`, `do_shrink_slab()`;
//! fs/super.c `super_cache_count()`, `super_cache_scan()`; include/linux/dcache.h
//! `vfs_pressure_ratio()`; fs/drop_caches.c `drop_caches_sysctl_handler()`;
//! mm/vmscan.c `drop_slab()`, `flush_reclaim_state()`.

use crate::vmstat::Ev;
use crate::workingset::KernelVersion;
use crate::Mm;

/// `DEFAULT_SEEKS`.
pub const DEFAULT_SEEKS: u64 = 2;
/// `SHRINK_BATCH`: the default `batch_size`.
pub const SHRINK_BATCH: u64 = 128;
/// The superblock shrinker's `batch` (`s->s_shrink->batch = 1024`).
pub const SUPER_BATCH: u64 = 1024;

/// What one `scan_objects()` call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanResult {
    /// (objects scanned, objects freed).
    Done { scanned: u64, freed: u64 },
    /// `SHRINK_STOP`.
    Stop,
}

/// Kernel: `do_shrink_slab()`'s arithmetic around a `scan_objects` callback (see
/// KERNEL-MODEL.md §8.3). `freeable` is `count_objects()`'s answer, `deferred` the shrinker's
/// `nr_deferred` slot (taken and given back with the unscanned work). Returns (objects freed,
/// objects scanned).
pub fn do_shrink_slab(
    freeable: u64,
    deferred: &mut u64,
    priority: i32,
    seeks: u64,
    batch: u64,
    mut scan_objects: impl FnMut(u64) -> ScanResult,
) -> (u64, u64) {
    if freeable == 0 {
        return (0, 0);
    }
    let nr = std::mem::take(deferred);
    let delta = shrink_delta(freeable, priority, seeks);
    let mut total_scan = (nr >> priority) + delta;
    total_scan = total_scan.min(2 * freeable);
    let (freed, scanned) = scan_batches(freeable, total_scan, batch, &mut scan_objects);
    let next = (nr + delta).saturating_sub(scanned).min(2 * freeable);
    *deferred += next;
    (freed, scanned)
}

/// `do_shrink_slab()` under `kernel`'s deferred-work rule: [`do_shrink_slab`] since v5.13
/// ("mm: vmscan: shrink deferred objects proportional to priority"),
/// [`do_shrink_slab_windup`] before. Every shrinker the model has calls this one.
pub fn do_shrink_slab_as(
    kernel: KernelVersion,
    freeable: u64,
    deferred: &mut u64,
    priority: i32,
    seeks: u64,
    batch: u64,
    scan_objects: impl FnMut(u64) -> ScanResult,
) -> (u64, u64) {
    if kernel.shrinker_deferred_by_priority() {
        do_shrink_slab(freeable, deferred, priority, seeks, batch, scan_objects)
    } else {
        do_shrink_slab_windup(freeable, deferred, priority, seeks, batch, scan_objects)
    }
}

/// `do_shrink_slab()`'s `delta`: `(freeable >> priority) * 4 / seeks`; with `seeks == 0`
/// ("objects are cheap to recreate") `freeable / 2`.
fn shrink_delta(freeable: u64, priority: i32, seeks: u64) -> u64 {
    ((freeable >> priority) * 4)
        .checked_div(seeks)
        .unwrap_or(freeable / 2)
}

/// Kernel (v3.12–v5.12): `do_shrink_slab()` before "mm: vmscan: shrink deferred objects
/// proportional to priority" (v5.13), the rule of the seed's v5.3: the whole deferred work
/// is added to this call's (`total_scan = nr + delta`, `next_deferred = total_scan`), capped
/// to half the cache unless this call's own `delta` is at least a quarter of it (the
/// "excessive windup" guard) and to twice the cache; what was not scanned goes back to
/// `nr_deferred` uncapped (`next_deferred - scanned`). Light pressure thus defers work
/// until one call scans up to half the cache at once. Returns (objects freed, objects
/// scanned).
pub fn do_shrink_slab_windup(
    freeable: u64,
    deferred: &mut u64,
    priority: i32,
    seeks: u64,
    batch: u64,
    mut scan_objects: impl FnMut(u64) -> ScanResult,
) -> (u64, u64) {
    if freeable == 0 {
        return (0, 0);
    }
    let nr = std::mem::take(deferred);
    let delta = shrink_delta(freeable, priority, seeks);
    let mut total_scan = nr + delta;
    let next_deferred = total_scan;
    if delta < freeable / 4 {
        total_scan = total_scan.min(freeable / 2);
    }
    total_scan = total_scan.min(2 * freeable);
    let (freed, scanned) = scan_batches(freeable, total_scan, batch, &mut scan_objects);
    *deferred += next_deferred.saturating_sub(scanned);
    (freed, scanned)
}

/// `do_shrink_slab()`'s loop: `scan_objects()` in batches while `total_scan` holds a batch
/// (or the whole cache). Returns (freed, scanned).
fn scan_batches(
    freeable: u64,
    mut total_scan: u64,
    batch: u64,
    scan_objects: &mut impl FnMut(u64) -> ScanResult,
) -> (u64, u64) {
    let batch = if batch > 0 { batch } else { SHRINK_BATCH };
    let mut scanned = 0u64;
    let mut freed = 0u64;
    while total_scan >= batch || total_scan >= freeable {
        let nr_to_scan = batch.min(total_scan);
        match scan_objects(nr_to_scan) {
            ScanResult::Stop => break,
            ScanResult::Done {
                scanned: s,
                freed: f,
            } => {
                freed += f;
                total_scan -= s.min(total_scan);
                scanned += s;
                if s == 0 {
                    break;
                }
            }
        }
    }
    (freed, scanned)
}

/// Kernel: `vfs_pressure_ratio()`.
pub fn vfs_pressure_ratio(v: u64, pressure: u64) -> u64 {
    v * pressure / 100
}

/// Kernel: `super_cache_scan()`'s split of `nr_to_scan` between dentries, inodes and the
/// filesystem's own objects (`nr_cached_objects`: XFS's reclaimable inodes) in proportion
/// to their counts (`mult_frac(nr_to_scan, n, dentries + inodes + fs_objects + 1)`):
/// returns the budgets passed to `prune_dcache_sb()` (its share + 1), `prune_icache_sb()`
/// (likewise) and `free_cached_objects()` (its share + 1, or 0 when the share is 0 and it
/// is not called).
pub fn super_cache_split(
    nr_to_scan: u64,
    dentries: u64,
    inodes: u64,
    fs_objects: u64,
) -> (u64, u64, u64) {
    let total = dentries + inodes + fs_objects + 1;
    let fs = nr_to_scan * fs_objects / total;
    (
        nr_to_scan * dentries / total + 1,
        nr_to_scan * inodes / total + 1,
        if fs > 0 { fs + 1 } else { 0 },
    )
}

/// The superblock shrinker's state.
#[derive(Clone, Debug, Default)]
pub struct SuperShrinker {
    /// `nr_deferred` per memcg.
    pub nr_deferred: Vec<u64>,
}

impl Mm {
    /// Kernel: `super_cache_count()` for memcg `memcg`: the memcg's dentry and inode LRUs
    /// plus the filesystem's `nr_cached_objects` ([`Mm::sb_nr_cached_objects`]), scaled by
    /// `vfs_cache_pressure`.
    pub fn super_cache_count(&self, memcg: usize) -> u64 {
        let total = self.fs.dentry_lru.count(memcg)
            + self.fs.inode_lru.count(memcg)
            + self.sb_nr_cached_objects(memcg);
        vfs_pressure_ratio(total, self.cfg.fs.vfs_cache_pressure)
    }

    /// `sb->s_op->nr_cached_objects()` as the superblock shrinker sees it for `memcg`:
    /// `xfs_fs_nr_cached_objects()` → `xfs_reclaim_inodes_count()`, the whole filesystem's
    /// reclaimable inodes whatever the memcg (XFS's count is not memcg aware). A child memcg
    /// reaches the shrinker only while its bit in the memcg's shrinker map is set; the model
    /// takes that as its LRUs holding something, so a child with empty lists counts 0.
    fn sb_nr_cached_objects(&self, memcg: usize) -> u64 {
        if memcg != 0 && self.fs.dentry_lru.count(memcg) + self.fs.inode_lru.count(memcg) == 0 {
            return 0;
        }
        self.fs.icache.count()
    }

    /// Kernel: `super_cache_scan()`: split `nr_to_scan` between the dentry and inode LRUs
    /// of `memcg` and XFS's reclaimable inodes, and prune the dentries first (freeing them
    /// unpins inodes), then the inodes, then `free_cached_objects()`
    /// (`xfs_fs_free_cached_objects()` → [`Mm::xfs_reclaim_inodes_nr`], whose freed
    /// objects v5.3 does not report).
    fn super_cache_scan(&mut self, memcg: usize, nr_to_scan: u64, kswapd: bool) -> (u64, u64) {
        let d = self.fs.dentry_lru.count(memcg);
        let i = self.fs.inode_lru.count(memcg);
        let f = self.sb_nr_cached_objects(memcg);
        let (dentries, inodes, fs_objects) = super_cache_split(nr_to_scan, d, i, f);
        let (_, fd) = self.prune_dcache_sb(memcg, dentries);
        let (_, fi) = self.prune_icache_sb(memcg, inodes, kswapd);
        let ff = if fs_objects > 0 {
            self.xfs_reclaim_inodes_nr(fs_objects)
        } else {
            0
        };
        (nr_to_scan, fd + fi + ff)
    }

    /// Kernel: `shrink_slab(gfp, nid, memcg, priority)`: run every shrinker for `memcg` (the
    /// root memcg: the global lists; a child: `shrink_slab_memcg()`, memcg-aware shrinkers
    /// only). Returns the objects freed; the pages freed accumulate in `slab.reclaimed`.
    pub fn shrink_slab(&mut self, memcg: usize, priority: i32, kswapd: bool) -> u64 {
        // The shadow-node shrinker (`mm-shadow`, crate::xarray), then the superblock's,
        // then (root memcg only: not memcg aware) XFS's buffer target's (crate::xfs).
        let shadow = self.shrink_shadow_nodes(memcg, priority);
        let mut freed = shadow + self.shrink_super(memcg, priority, kswapd);
        if memcg == 0 {
            let (bufs, scanned) = self.shrink_xfs_buftarg(priority);
            self.ev.add(Ev::SlabsScanned, scanned);
            freed += bufs;
        }
        freed
    }

    /// The superblock shrinker's turn in [`Mm::shrink_slab`].
    fn shrink_super(&mut self, memcg: usize, priority: i32, kswapd: bool) -> u64 {
        if self.fs.state.is_empty() {
            return 0;
        }
        let freeable = self.super_cache_count(memcg);
        if freeable == 0 {
            return 0;
        }
        let mut deferred = self.shrinker.nr_deferred[memcg];
        let mut scanned_total = 0;
        let (freed, _) = do_shrink_slab_as(
            self.cfg.kernel,
            freeable,
            &mut deferred,
            priority,
            DEFAULT_SEEKS,
            SUPER_BATCH,
            |n| {
                let (s, f) = self.super_cache_scan(memcg, n, kswapd);
                scanned_total += s;
                ScanResult::Done {
                    scanned: s,
                    freed: f,
                }
            },
        );
        self.shrinker.nr_deferred[memcg] = deferred;
        self.ev.add(Ev::SlabsScanned, scanned_total);
        freed
    }

    /// The `shrink_slab()` call of `shrink_node_memcgs()` / `shrink_one()` for lruvec `lv`,
    /// followed by `flush_reclaim_state()`: pages the shrinkers freed count as reclaimed for
    /// global reclaim only. Skipped when `sc.may_shrinkslab` is false (v5.0–v5.2 boosted
    /// kswapd reclaim).
    pub(crate) fn shrink_slab_for(&mut self, lv: usize, sc: &mut crate::vmscan::ScanControl) {
        if !sc.may_shrinkslab {
            return;
        }
        self.shrink_slab(lv, sc.priority, sc.kswapd);
        let pages = std::mem::take(&mut self.slab.reclaimed);
        if !sc.cgroup_reclaim {
            sc.nr_reclaimed += pages;
        }
    }

    /// Kernel: `drop_slab()`: per memcg, shrink at priority 0 while the last round freed more
    /// than `1 << shift` (shift starting at 0, growing each round) objects.
    pub fn drop_slab(&mut self) {
        let mut shift = 0u32;
        loop {
            let mut freed = 0u64;
            for m in 0..self.lruvecs.len() {
                freed += self.shrink_slab(m, 0, false);
            }
            self.slab.reclaimed = 0;
            if (freed >> shift) <= 1 {
                break;
            }
            shift += 1;
            if shift >= 63 {
                break;
            }
        }
    }

    /// Kernel: `drop_pagecache_sb()` → `invalidate_mapping_pages()` over every file: free
    /// every clean, unmapped page-cache folio not under writeback.
    pub fn drop_pagecache(&mut self) {
        for obj in 0..self.objects.len() {
            if self.objects[obj].kind != crate::ObjKind::File {
                continue;
            }
            let n = self.objects[obj].ent.len();
            let mut k = 0usize;
            while k < n {
                let e = self.objects[obj].ent[k];
                if e & crate::filemap::CACHE_PRESENT == 0 {
                    k += 1;
                    continue;
                }
                let pfn = e as u32;
                let nr = self.pages.nr_pages(pfn) as usize;
                let first = self.pages.index[pfn as usize] as usize;
                let f = self.pages.hot[pfn as usize].flags;
                let busy = f
                    & (crate::page::pg::DIRTY
                        | crate::page::pg::WRITEBACK
                        | crate::page::pg::ISOLATED)
                    != 0
                    || f & crate::page::pg::LRU == 0
                    || self.folio_mapped(pfn);
                if !busy {
                    self.invalidate_folio(pfn);
                }
                k = first + nr;
            }
        }
    }

    /// `echo N > /proc/sys/vm/drop_caches`: 1 drops the page cache, 2 reclaimable slab
    /// (dentries and inodes), 3 both (the page cache first).
    pub fn drop_caches(&mut self, mode: u32) {
        if mode & 1 != 0 {
            self.drop_pagecache();
            self.ev.add(Ev::DropPagecache, 1);
        }
        if mode & 2 != 0 {
            self.drop_slab();
            self.ev.add(Ev::DropSlab, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scan callback that scans what it is asked and records the batches.
    fn run(freeable: u64, deferred: &mut u64, prio: i32, batch: u64) -> (u64, Vec<u64>) {
        let mut batches = Vec::new();
        let (_, scanned) = do_shrink_slab(freeable, deferred, prio, DEFAULT_SEEKS, batch, |n| {
            batches.push(n);
            ScanResult::Done {
                scanned: n,
                freed: 0,
            }
        });
        (scanned, batches)
    }

    /// v5.3's do_shrink_slab() (before v5.13): light pressure winds up nr_deferred, then
    /// one call takes the whole backlog, capped to half the cache. Hand-computed: 10 000
    /// objects, 8 000 deferred, priority 12: delta = (10000 >> 12) * 4 / 2 = 4,
    /// total_scan = 8 004 -> min(8 004, 10000 / 2) = 5 000 (delta < freeable / 4): four
    /// batches of 1 024 (4 096), 904 left below a batch; next_deferred = 8 004 - 4 096 =
    /// 3 908. The v5.13+ rule scans (8000 >> 12) + 4 = 5 < batch: nothing, and defers 8 004.
    #[test]
    fn windup_rule_drains_the_backlog_up_to_half_the_cache() {
        let scan = |n| ScanResult::Done {
            scanned: n,
            freed: 0,
        };
        let mut d = 8_000;
        let (_, scanned) = do_shrink_slab_windup(10_000, &mut d, 12, 2, 1024, scan);
        assert_eq!((scanned, d), (4_096, 3_908));
        let mut d = 8_000;
        let (_, scanned) = do_shrink_slab(10_000, &mut d, 12, 2, 1024, scan);
        assert_eq!((scanned, d), (0, 8_004));
        // A large delta (priority 1: (10000 >> 1) * 4 / 2 = 10 000 >= freeable / 4) lifts the
        // half-cache cap: total_scan = min(8 000 + 10 000, 2 * 10 000) = 18 000, 17
        // batches of 1 024 = 17 408 and 592 left; next_deferred = 18 000 - 17 408 = 592.
        let mut d = 8_000;
        let (_, scanned) = do_shrink_slab_windup(10_000, &mut d, 1, 2, 1024, scan);
        assert_eq!((scanned, d), (17_408, 592));
        // The deferred backlog is not capped to twice the cache under the old rule.
        let mut d = 0;
        let (_, scanned) = do_shrink_slab_windup(100, &mut d, 12, 2, 1024, scan);
        assert_eq!((scanned, d), (0, 0), "delta 0 at 100 objects");
    }

    /// KERNEL-MODEL.md §8.3 worked example: 10 000 objects at priority 12 give delta
    /// (10000 >> 12) * 4 / 2 = 4 < batch: nothing scanned, 4 deferred.
    #[test]
    fn light_pressure_is_deferred() {
        let mut d = 0;
        let (scanned, b) = run(10_000, &mut d, 12, 128);
        assert_eq!((scanned, b.len(), d), (0, 0, 4));
        // Deferred work only drains at nr >> priority: 4 >> 12 = 0, so a second call at
        // priority 12 adds another 4.
        let (scanned, _) = run(10_000, &mut d, 12, 128);
        assert_eq!((scanned, d), (0, 8));
    }

    /// Priority 6: delta = (10000 >> 6) * 4 / 2 = 156 * 2 = 312; with 8 deferred
    /// total_scan = (8 >> 6) + 312 = 312: two batches of 128 (256 scanned), and
    /// next_deferred = 8 + 312 - 256 = 64.
    #[test]
    fn medium_priority_scans_in_batches_and_defers_the_rest() {
        let mut d = 8;
        let (scanned, b) = run(10_000, &mut d, 6, 128);
        assert_eq!(b, vec![128, 128]);
        assert_eq!((scanned, d), (256, 64));
        // Carry-over at priority 2: delta = 2500 * 2 = 5000, total = (64 >> 2) + 5000 =
        // 5016 → 39 batches of 128 (4992); deferred = 64 + 5000 - 4992 = 72.
        let (scanned, b) = run(10_000, &mut d, 2, 128);
        assert_eq!(b.len(), 39);
        assert_eq!((scanned, d), (4992, 72));
    }

    /// Priority 0: delta = 2 * freeable, and total_scan is capped at 2 * freeable however
    /// much was deferred (here 300 objects, batch 128: four batches, the last 88 are below
    /// both the batch and the cache size); deferred is capped at 2 * freeable.
    #[test]
    fn priority_zero_walks_the_cache_up_to_twice() {
        let mut d = 1_000_000;
        let (scanned, b) = run(300, &mut d, 0, 128);
        assert_eq!(b, vec![128, 128, 128, 128]);
        assert_eq!(scanned, 512);
        // next = min(1_000_000 + 600 - 512, 600) = 600.
        assert_eq!(d, 600);
    }

    /// A cache smaller than a batch is scanned once total_scan reaches its size.
    #[test]
    fn small_cache_scanned_whole() {
        let mut d = 0;
        // freeable 50, priority 4: delta = (50 >> 4) * 2 = 6 < 50: deferred.
        let (scanned, _) = run(50, &mut d, 4, 128);
        assert_eq!((scanned, d), (0, 6));
        // priority 0: total = 6 + 100 = 106 → capped at 100 → one call of 100 (>= freeable
        // 50 and < batch), then 0 left.
        let (scanned, b) = run(50, &mut d, 0, 128);
        assert_eq!(b, vec![100]);
        assert_eq!((scanned, d), (100, 6));
    }

    /// SHRINK_STOP keeps the whole delta deferred.
    #[test]
    fn stop_defers_everything() {
        let mut d = 0;
        let (freed, scanned) = do_shrink_slab(4096, &mut d, 0, 2, 1024, |_| ScanResult::Stop);
        assert_eq!((freed, scanned, d), (0, 0, 8192));
    }

    /// super_cache_scan's proportional split: 1024 to scan over 3000 dentries and 1000
    /// inodes: 1024 * 3000 / 4001 = 767 (+1), 1024 * 1000 / 4001 = 255 (+1); no fs
    /// objects: free_cached_objects() is not called (0).
    #[test]
    fn super_shrinker_split() {
        assert_eq!(super_cache_split(1024, 3000, 1000, 0), (768, 256, 0));
        assert_eq!(super_cache_split(1024, 0, 500, 0), (1, 1022, 0));
        assert_eq!(super_cache_split(10, 0, 0, 0), (1, 1, 0));
        // vfs_cache_pressure scales the count: 0 hides the caches, 1000 multiplies by 10.
        assert_eq!(vfs_pressure_ratio(4000, 0), 0);
        assert_eq!(vfs_pressure_ratio(4000, 100), 4000);
        assert_eq!(vfs_pressure_ratio(4000, 1000), 40_000);
    }

    /// The split with XFS's reclaimable inodes as `nr_cached_objects`, hand-computed from
    /// `mult_frac(nr, n, d + i + f + 1)`: 1024 over 2000 dentries, 1000 inodes and 1000
    /// reclaimable inodes (total 4001): 1024 * 2000 / 4001 = 511, 1024 * 1000 / 4001 = 255,
    /// 255: budgets 512, 256 and 256. A share that rounds to 0 skips
    /// free_cached_objects(): 1024 * 3 / 100004 = 0 with 100 000 dentries and 3 fs objects;
    /// with 300 it is 1024 * 300 / 100301 = 3, a budget of 4.
    #[test]
    fn super_shrinker_split_with_fs_objects() {
        assert_eq!(super_cache_split(1024, 2000, 1000, 1000), (512, 256, 256));
        assert_eq!(super_cache_split(1024, 100_000, 0, 3), (1024, 1, 0));
        assert_eq!(super_cache_split(1024, 100_000, 0, 300), (1021, 1, 4));
        // Only fs objects: 1024 * 4000 / 4001 = 1023 + 1.
        assert_eq!(super_cache_split(1024, 0, 0, 4000), (1, 1, 1024));
    }
}
