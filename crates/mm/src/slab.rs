//! Slab caches (mm/slub.c) as the page allocator and reclaim see them: objects packed into
//! slabs of `1 << order` pages taken from the buddy allocator with the cache's migratetype
//! (RECLAIMABLE for `SLAB_RECLAIM_ACCOUNT` caches such as the dentry and inode caches,
//! UNMOVABLE otherwise), so slab allocations steal pageblocks, count as fragmentation events
//! and boost the watermarks like any other kernel allocation.
//!
//! # The idea
//! A cache fills its current slab (`kmem_cache_cpu->slab`), then takes a partially used slab
//! from the node's partial list (`get_partial_node()`: from the head), and only then
//! allocates a new slab (`allocate_slab()`). Freeing an object into a full slab puts it on
//! the tail of the partial list (`__slab_free()`, `add_partial(.., DEACTIVATE_TO_TAIL)`); a
//! slab whose last object is freed goes back to the page allocator (`discard_slab()`). So
//! freeing objects frees memory only when whole slabs empty: reclaiming half the dentries
//! scattered over many slabs may free no page at all.
//!
//! `nr_slab_reclaimable` / `nr_slab_unreclaimable` count slab pages (`NR_SLAB_*_B` / 4096).
//! Objects are charged to the memory cgroup of the allocating task per object
//! (`obj_cgroup_charge()`, v5.9+): the memcg's byte count (memory.stat `slab_reclaimable`,
//! `slab_unreclaimable`) is charged to its page counter in whole pages, rounding up
//! (the per-CPU `obj_stock` keeps the remainder).
//!
//! # Where we differ from the kernel (v6.18)
//! - One CPU slab per cache (no per-CPU slabs, no per-CPU partial lists) and no
//!   `min_partial`: an empty slab that is not the current slab is freed at once.
//! - Slab pages are allocated as `allocate_slab()` does: a cache whose order is above the
//!   minimum for one object (`s->min`: the inode and xarray-node caches, orders 3 and 2)
//!   first tries its order without reclaim and without waking kswapd (`& ~__GFP_RECLAIM`,
//!   v4.6+; v4.4 kept the kswapd wakeup), then the minimum order with GFP_KERNEL, which may
//!   reclaim directly; a failed allocation fails the object allocation.
//! - Objects are identified by their slab only (no freelist inside the slab).
//! - Pages freed by the slab allocator while shrinkers run are added to the reclaimer's
//!   `reclaim_state` ([`SlabState::reclaimed`]), as `mm_account_reclaimed_pages()` does.
//!
//! # Kernel references
//! mm/slub.c `___slab_alloc()`, `get_partial_node()`, `allocate_slab()`, `__slab_free()`,
//! `discard_slab()`, `calculate_order()`; mm/memcontrol.c `obj_cgroup_charge()`,
//! `mod_objcg_state()`.

use crate::alloc::Gfp;
use crate::mmzone::mt;
use crate::types::*;
use crate::{Ctx, Mm};
use std::collections::VecDeque;

/// What one cache is (`struct kmem_cache`'s size, order and flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheSpec {
    pub name: &'static str,
    /// `s->size` in bytes (object plus metadata and alignment).
    pub object_size: u32,
    /// Slab order (`oo_order(s->oo)`).
    pub order: u32,
    /// `SLAB_RECLAIM_ACCOUNT`: pages are RECLAIMABLE and counted in `nr_slab_reclaimable`.
    pub reclaimable: bool,
    /// `SLAB_ACCOUNT` (or `__GFP_ACCOUNT` at every allocation): objects are charged to the
    /// allocating task's memcg. XFS's `xfs_ili` cache is created without it (no
    /// `KM_ZONE_ACCOUNT`), so its objects are charged to nobody.
    pub account: bool,
}

impl CacheSpec {
    /// `oo_objects(s->oo)`: objects in one slab.
    pub fn objs_per_slab(&self) -> u32 {
        self.objs_at(self.order)
    }

    /// Objects in a slab of `order`.
    pub fn objs_at(&self, order: u32) -> u32 {
        ((PAGE_SIZE << order) / self.object_size as u64) as u32
    }

    /// `oo_order(s->min)`: the smallest order that holds one object (`get_order(size)`),
    /// what `allocate_slab()` falls back to when the cache's order is not available.
    pub fn min_order(&self) -> u32 {
        let mut o = 0;
        while (PAGE_SIZE << o) < self.object_size as u64 {
            o += 1;
        }
        o
    }
}

/// The dentry cache (`dentry_cache`: 192-byte objects, 21 per order-0 slab on x86-64).
pub const DENTRY_CACHE: CacheSpec = CacheSpec {
    name: "dentry",
    object_size: 192,
    order: 0,
    reclaimable: true,
    account: true,
};

/// The filesystem's inode cache (`xfs_inode`: `sizeof(struct xfs_inode)` with the VFS inode
/// inside, rounded to cache lines by `KM_ZONE_HWALIGN`: 1024-byte objects, 32 per order-3
/// slab). The figure is /proc/slabinfo's object size on Ubuntu 18.04's x86-64 v5.4.0 kernel,
/// one release after the seed's v5.3, quoted by Amir Goldstein on linux-fsdevel ("Re:
/// [PATCH v2] inotify: Increase default inotify.max_user_watches limit", 29 Oct 2020); a
/// 2018 slabinfo of an older x86-64 kernel shows 960 bytes, which the model used before.
/// Not measured on v5.3 itself.
pub const INODE_CACHE: CacheSpec = CacheSpec {
    name: "xfs_inode",
    object_size: 1024,
    order: 3,
    reclaimable: true,
    account: true,
};

/// The xarray node cache (`radix_tree_node`: `struct xa_node`, 576-byte objects in order-2
/// slabs of 28, as /proc/slabinfo shows it on x86-64; `SLAB_RECLAIM_ACCOUNT`), which every
/// page cache's `i_pages` allocates its nodes from ([`crate::xarray`]).
pub const RADIX_TREE_NODE_CACHE: CacheSpec = CacheSpec {
    name: "radix_tree_node",
    object_size: 576,
    order: 2,
    reclaimable: true,
    account: true,
};

/// XFS's inode log item cache (`xfs_ili`: `struct xfs_inode_log_item`, 152-byte objects,
/// 26 per order-0 slab, as a /proc/slabinfo of an x86-64 XFS system shows it next to
/// `xfs_inode` at 960 bytes and 34 per order-3 slab; [`INODE_CACHE`] now uses v5.4's 1024).
/// v5.3's `xfs_init_zones()` creates it with `KM_ZONE_SPREAD` only: neither
/// `KM_ZONE_RECLAIM` (`SLAB_RECLAIM_ACCOUNT`) nor `KM_ZONE_ACCOUNT`, so its slabs are
/// UNMOVABLE, counted in `nr_slab_unreclaimable`, and charged to no memcg
/// ([`crate::xfs`]).
pub const XFS_ILI_CACHE: CacheSpec = CacheSpec {
    name: "xfs_ili",
    object_size: 152,
    order: 0,
    reclaimable: false,
    account: false,
};

/// Index of the dentry, inode, xarray node and inode log item caches in
/// [`SlabState::caches`].
pub const DENTRY: usize = 0;
pub const INODE: usize = 1;
pub const RADIX_TREE_NODE: usize = 2;
pub const XFS_ILI: usize = 3;

/// Bytes per page.
const PAGE_SIZE: u64 = 4096;

#[derive(Clone, Copy, Debug)]
struct Slab {
    /// Head pfn of the slab's pages; NIL for a free slab id.
    pfn: Pfn,
    /// Objects in use.
    inuse: u32,
    /// On the partial list.
    partial: bool,
    /// Slab order: the cache's, or its minimum after `allocate_slab()`'s fallback.
    order: u8,
}

/// One cache's slabs (`struct kmem_cache` + its `kmem_cache_node`).
#[derive(Clone, Debug)]
pub struct SlabCache {
    pub spec: CacheSpec,
    slabs: Vec<Slab>,
    free_ids: Vec<u32>,
    /// Partially used slabs, allocated from at the front.
    partial: VecDeque<u32>,
    /// The current (CPU) slab, NIL if none.
    cur: u32,
    /// Slabs allocated (`nr_slabs`).
    pub nr_slabs: u64,
    /// Pages held by those slabs (they may be of two orders).
    nr_pages: u64,
    /// Slabs allocated at the minimum order because the cache's order was not available
    /// without reclaim (`ORDER_FALLBACK` in /sys/kernel/slab/*/order_fallback).
    pub order_fallback: u64,
    /// Objects in use (`active_objs`).
    pub nr_objects: u64,
}

impl SlabCache {
    pub fn new(spec: CacheSpec) -> Self {
        SlabCache {
            spec,
            slabs: Vec::new(),
            free_ids: Vec::new(),
            partial: VecDeque::new(),
            cur: NIL,
            nr_slabs: 0,
            nr_pages: 0,
            order_fallback: 0,
            nr_objects: 0,
        }
    }

    /// Pages held by the cache's slabs.
    pub fn pages(&self) -> u64 {
        self.nr_pages
    }

    /// Objects slab `id` holds (`slab->objects`).
    fn capacity(&self, id: u32) -> u32 {
        self.spec.objs_at(self.slabs[id as usize].order as u32)
    }

    /// A slab with a free object, without allocating: the current slab, else the first
    /// partial slab with room (which becomes the current slab).
    fn slab_with_room(&mut self) -> Option<u32> {
        if self.cur != NIL && self.slabs[self.cur as usize].inuse < self.capacity(self.cur) {
            return Some(self.cur);
        }
        while let Some(id) = self.partial.pop_front() {
            let cap = self.capacity(id);
            let s = &mut self.slabs[id as usize];
            s.partial = false;
            if s.pfn != NIL && s.inuse < cap {
                self.cur = id;
                return Some(id);
            }
        }
        None
    }

    /// The head pfn of every slab (invariant checks).
    pub fn slab_pfns(&self) -> impl Iterator<Item = (Pfn, u32, u32)> + '_ {
        self.slabs
            .iter()
            .filter(|s| s.pfn != NIL)
            .map(|s| (s.pfn, s.inuse, s.order as u32))
    }
}

/// Every slab cache of the node, with the per-memcg object accounting.
#[derive(Clone, Debug)]
pub struct SlabState {
    pub caches: Vec<SlabCache>,
    /// Per memcg: bytes of reclaimable / unreclaimable objects charged (memory.stat).
    pub memcg_bytes: Vec<[u64; 2]>,
    /// Per memcg: pages charged to its page counter for those bytes.
    pub memcg_pages: Vec<u64>,
    /// `reclaim_state->reclaimed`: pages freed by the slab allocator (and by inode pruning)
    /// since the reclaimer last took them.
    pub reclaimed: u64,
}

impl SlabState {
    pub fn new(nr_memcgs: usize) -> Self {
        SlabState {
            caches: vec![
                SlabCache::new(DENTRY_CACHE),
                SlabCache::new(INODE_CACHE),
                SlabCache::new(RADIX_TREE_NODE_CACHE),
                SlabCache::new(XFS_ILI_CACHE),
            ],
            memcg_bytes: vec![[0; 2]; nr_memcgs],
            memcg_pages: vec![0; nr_memcgs],
            reclaimed: 0,
        }
    }

    /// `nr_slab_reclaimable` and `nr_slab_unreclaimable`, in pages.
    pub fn node_pages(&self) -> (u64, u64) {
        let mut r = (0, 0);
        for c in &self.caches {
            if c.spec.reclaimable {
                r.0 += c.pages();
            } else {
                r.1 += c.pages();
            }
        }
        r
    }
}

impl Mm {
    /// Kernel: `kmem_cache_alloc()` of one object of cache `cache` for memcg `memcg`
    /// (charged there if the cache is accounted, [`CacheSpec::account`]). Returns the object's slab id, or None when the memcg charge or the
    /// slab page allocation failed (`ctx.oom` tells which reached OOM).
    pub fn slab_alloc(&mut self, ctx: &mut Ctx, cache: usize, memcg: u16) -> Option<u32> {
        // obj_cgroup_charge(): charge whole pages as the byte count crosses page boundaries.
        let spec = self.slab.caches[cache].spec;
        if spec.account {
            self.slab_charge(ctx, spec, memcg)?;
        }
        self.slab_alloc_object(ctx, cache, memcg)
    }

    /// `obj_cgroup_charge()` of one object of `spec` to `memcg`: None when the charge failed.
    fn slab_charge(&mut self, ctx: &mut Ctx, spec: CacheSpec, memcg: u16) -> Option<()> {
        let m = memcg as usize;
        let kind = (!spec.reclaimable) as usize;
        let bytes: u64 = self.slab.memcg_bytes[m].iter().sum::<u64>() + spec.object_size as u64;
        let need = bytes.div_ceil(PAGE_SIZE);
        let have = self.slab.memcg_pages[m];
        if need > have {
            if !self.try_charge(ctx, memcg, need - have) {
                return None;
            }
            // Limit reclaim inside the charge may have freed this memcg's objects (and
            // uncharged their pages): count what was charged on top of what is left.
            self.slab.memcg_pages[m] += need - have;
        }
        self.slab.memcg_bytes[m][kind] += spec.object_size as u64;
        let need = self.slab.memcg_bytes[m]
            .iter()
            .sum::<u64>()
            .div_ceil(PAGE_SIZE);
        let have = self.slab.memcg_pages[m];
        if have > need {
            self.uncharge(memcg, have - need);
            self.slab.memcg_pages[m] = need;
        }
        Some(())
    }

    /// The object allocation of [`Mm::slab_alloc`], after the charge.
    fn slab_alloc_object(&mut self, ctx: &mut Ctx, cache: usize, memcg: u16) -> Option<u32> {
        let spec = self.slab.caches[cache].spec;
        let id = match self.slab.caches[cache].slab_with_room() {
            Some(id) => id,
            None => {
                // allocate_slab(): GFP_KERNEL with the cache's migratetype. A cache whose
                // order is above its minimum first tries that order opportunistically:
                // `__GFP_NORETRY | __GFP_NOMEMALLOC` without `__GFP_DIRECT_RECLAIM` (and,
                // v4.6+, without `__GFP_KSWAPD_RECLAIM`: `& ~__GFP_RECLAIM`), so it neither
                // reclaims nor wakes kswapd (a fallback it makes still boosts the
                // watermark, but sets no ZONE_BOOSTED_WATERMARK); if that fails the slab is
                // allocated at the minimum order with the full mask (ORDER_FALLBACK).
                let gfp = Gfp {
                    mt: if spec.reclaimable {
                        mt::RECLAIMABLE
                    } else {
                        mt::UNMOVABLE
                    },
                    ..Gfp::KERNEL
                };
                let min = spec.min_order();
                let mut order = spec.order;
                let mut pfn = None;
                if spec.order > min {
                    let first = Gfp {
                        direct_reclaim: false,
                        kswapd_reclaim: !self.cfg.kernel.slab_first_try_skips_kswapd(),
                        noretry: true,
                        ..gfp
                    };
                    pfn = self.alloc_kernel_pages(ctx, spec.order, first);
                    if pfn.is_none() {
                        order = min;
                    }
                }
                if pfn.is_none() {
                    pfn = self.alloc_kernel_pages(ctx, order, gfp);
                    if pfn.is_some() && order < spec.order {
                        self.slab.caches[cache].order_fallback += 1;
                    }
                }
                // Reclaim inside the allocation may have freed objects and made room.
                if let Some(id) = self.slab.caches[cache].slab_with_room() {
                    if let Some(p) = pfn {
                        self.free_kernel_pages(p);
                    }
                    id
                } else {
                    let Some(pfn) = pfn else {
                        self.slab_uncharge(memcg, spec);
                        return None;
                    };
                    let c = &mut self.slab.caches[cache];
                    let s = Slab {
                        pfn,
                        inuse: 0,
                        partial: false,
                        order: order as u8,
                    };
                    let id = match c.free_ids.pop() {
                        Some(id) => {
                            c.slabs[id as usize] = s;
                            id
                        }
                        None => {
                            c.slabs.push(s);
                            c.slabs.len() as u32 - 1
                        }
                    };
                    c.nr_slabs += 1;
                    c.nr_pages += 1 << order;
                    // The previous current slab is full: it leaves the CPU (full slabs are on
                    // no list in SLUB).
                    c.cur = id;
                    id
                }
            }
        };
        let c = &mut self.slab.caches[cache];
        c.slabs[id as usize].inuse += 1;
        c.nr_objects += 1;
        Some(id)
    }

    /// Kernel: `kmem_cache_free()` of an object in slab `id` charged to `memcg`. Frees the
    /// slab's pages when it empties (not the current slab).
    pub fn slab_free(&mut self, cache: usize, id: u32, memcg: u16) {
        let spec = self.slab.caches[cache].spec;
        self.slab_uncharge(memcg, spec);
        let c = &mut self.slab.caches[cache];
        c.nr_objects -= 1;
        let per = c.capacity(id);
        let s = &mut c.slabs[id as usize];
        let was_full = s.inuse == per;
        s.inuse -= 1;
        if id == c.cur {
            return;
        }
        if s.inuse == 0 {
            // discard_slab(); a stale partial-list entry is skipped by slab_with_room().
            let pfn = s.pfn;
            let nr = 1u64 << s.order;
            s.pfn = NIL;
            s.partial = false;
            c.free_ids.push(id);
            c.nr_slabs -= 1;
            c.nr_pages -= nr;
            self.free_kernel_pages(pfn);
            self.slab.reclaimed += nr;
        } else if was_full && !s.partial {
            s.partial = true;
            c.partial.push_back(id);
        }
    }

    /// Drop an object's bytes from its memcg, uncharging whole pages no longer needed.
    fn slab_uncharge(&mut self, memcg: u16, spec: CacheSpec) {
        if !spec.account {
            return;
        }
        let m = memcg as usize;
        let kind = (!spec.reclaimable) as usize;
        self.slab.memcg_bytes[m][kind] -= spec.object_size as u64;
        let bytes: u64 = self.slab.memcg_bytes[m].iter().sum();
        let need = bytes.div_ceil(PAGE_SIZE);
        let have = self.slab.memcg_pages[m];
        if have > need {
            self.uncharge(memcg, have - need);
            self.slab.memcg_pages[m] = need;
        }
    }

    /// Slab invariants: every slab page is a kernel allocation owned by exactly one slab of
    /// one cache, object counts add up, and per-memcg charges cover the charged bytes.
    pub fn check_slab(&self) -> Result<(), String> {
        let mut seen = std::collections::BTreeSet::new();
        for c in &self.slab.caches {
            let mut slabs = 0u64;
            let mut objs = 0u64;
            let mut nr_pages = 0u64;
            for (pfn, inuse, order) in c.slab_pfns() {
                if !seen.insert(pfn) {
                    return Err(format!("slab page {pfn} in two slabs"));
                }
                if !self.pages.test(pfn, crate::page::pg::HEAD)
                    || self.pages.obj[pfn as usize] != NIL
                    || self.pages.hot[pfn as usize].order as u32 != order
                    || (order != c.spec.order && order != c.spec.min_order())
                {
                    return Err(format!(
                        "slab page {pfn} of {} is not a kernel allocation of order {order}",
                        c.spec.name
                    ));
                }
                if inuse > c.spec.objs_at(order) {
                    return Err(format!("slab of {} holds {inuse} objects", c.spec.name));
                }
                nr_pages += 1 << order;
                slabs += 1;
                objs += inuse as u64;
            }
            if slabs != c.nr_slabs || objs != c.nr_objects || nr_pages != c.nr_pages {
                return Err(format!(
                    "{}: {slabs} slabs / {objs} objects found, counted {} / {}",
                    c.spec.name, c.nr_slabs, c.nr_objects
                ));
            }
        }
        for (m, b) in self.slab.memcg_bytes.iter().enumerate() {
            let need = (b[0] + b[1]).div_ceil(PAGE_SIZE);
            if self.slab.memcg_pages[m] != need {
                return Err(format!(
                    "memcg {m}: {} slab pages charged for {} bytes",
                    self.slab.memcg_pages[m],
                    b[0] + b[1]
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use crate::vmstat::Ev;
    use crate::*;

    #[test]
    fn objects_per_slab_follow_size_and_order() {
        assert_eq!(DENTRY_CACHE.objs_per_slab(), 21);
        assert_eq!(INODE_CACHE.objs_per_slab(), 32);
        // s->min: get_order(size), the order-0 slab of 4 inodes or 7 xarray nodes.
        assert_eq!(INODE_CACHE.min_order(), 0);
        assert_eq!(INODE_CACHE.objs_at(0), 4);
        assert_eq!(RADIX_TREE_NODE_CACHE.min_order(), 0);
        assert_eq!(RADIX_TREE_NODE_CACHE.objs_at(0), 7);
        assert_eq!(
            CacheSpec {
                object_size: 5000,
                ..INODE_CACHE
            }
            .min_order(),
            1
        );
    }

    /// allocate_slab(): with no free block of the inode cache's order 3, the first attempt
    /// (no reclaim, no compaction) fails and the slab is an order-0 one of 4 inodes
    /// (ORDER_FALLBACK); nothing stalls in direct reclaim or compaction for it. Before,
    /// the order-3 GFP_KERNEL allocation went to the slow path.
    #[test]
    fn a_slab_falls_back_to_the_minimum_order_without_reclaim() {
        let mut mm = tiny_mm(BalanceKind::RefaultCost, 4096);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let mut got = Vec::new();
        while let Some(p) = mm.alloc_kernel_pages(&mut ctx, 0, Gfp::NOWAIT) {
            got.push(p);
        }
        for &p in got.iter().step_by(2) {
            mm.free_kernel_pages(p);
        }
        assert!(!mm.zones[0].watermark_ok(3, 0), "no free order-3 block");
        let ids: Vec<u32> = (0..5)
            .map(|_| mm.slab_alloc(&mut ctx, INODE, 0).unwrap())
            .collect();
        let c = &mm.slab.caches[INODE];
        assert_eq!((c.nr_slabs, c.pages(), c.order_fallback), (2, 2, 2));
        assert!(ids[..4].iter().all(|&i| i == ids[0]) && ids[4] != ids[0]);
        assert_eq!(mm.ev.get(Ev::AllocStallNormal), 0);
        assert_eq!(mm.ev.get(Ev::CompactStall), 0);
        mm.check_slab().unwrap();
        // An order-0 slab empties and frees its one page.
        for &i in &ids[..4] {
            mm.slab_free(INODE, i, 0);
        }
        let c = &mm.slab.caches[INODE];
        assert_eq!((c.nr_slabs, c.pages()), (1, 1));
        mm.check_slab().unwrap();
    }

    /// Slabs fill before a new one is allocated; a slab is freed only when it empties; the
    /// pages are RECLAIMABLE kernel memory and counted in nr_slab_reclaimable.
    #[test]
    fn slab_pages_are_freed_only_when_empty() {
        let mut mm = tiny_mm(BalanceKind::RefaultCost, 4096);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let ids: Vec<u32> = (0..42)
            .map(|_| mm.slab_alloc(&mut ctx, DENTRY, 0).unwrap())
            .collect();
        assert_eq!(mm.slab.caches[DENTRY].nr_slabs, 2);
        assert_eq!(mm.slab.node_pages(), (2, 0));
        let first = ids[0];
        assert!(ids[..21].iter().all(|&i| i == first));
        // 42 * 192 bytes = 8064 -> 2 pages charged to the root memcg.
        assert_eq!(mm.slab.memcg_pages[0], 2);
        // Free 20 of the first slab's objects: no page comes back.
        for &i in &ids[..20] {
            mm.slab_free(DENTRY, i, 0);
        }
        assert_eq!(mm.slab.caches[DENTRY].nr_slabs, 2);
        mm.slab_free(DENTRY, ids[20], 0);
        assert_eq!(mm.slab.caches[DENTRY].nr_slabs, 1);
        assert_eq!(mm.slab.reclaimed, 1);
        mm.check_slab().unwrap();
        // A freed object in the remaining (current) slab is reused before a new slab.
        mm.slab_free(DENTRY, ids[30], 0);
        let again = mm.slab_alloc(&mut ctx, DENTRY, 0).unwrap();
        assert_eq!(again, ids[30]);
        assert_eq!(mm.slab.caches[DENTRY].nr_slabs, 1);
    }
}
