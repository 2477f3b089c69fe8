//! Page-cache xarray nodes (lib/xarray.c): the `radix_tree_node` slab objects a file's
//! `mapping->i_pages` is built of, allocated as entries (folios and shadow entries) are
//! stored and freed as they are erased, and charged to the memory cgroup of the task that
//! stores them.
//!
//! # The idea
//! An xarray node (`struct xa_node`, 576 bytes in the `radix_tree_node` cache) has
//! `XA_CHUNK_SIZE` = 64 slots. A leaf node (shift 0) holds the entries of 64 consecutive
//! indices; a node of shift 6·l holds 64 nodes of the level below, so an index needs one
//! node per level of the tree. The tree is as tall as the largest index stored needs
//! (`xas_expand()`), except that a lone entry at index 0 lives in `xa_head` without a node;
//! when the entries that need the top node are erased, the tree shrinks again
//! (`xas_shrink()`), and a node whose last slot empties is freed (`xas_delete_node()`).
//! So a file cached at indices 0..n (n > 1) holds `ceil(n / 64)` leaves, `ceil(n / 4096)`
//! nodes above them, and so on up to one root: 1 GiB of order-0 page cache (262144 pages)
//! takes 4096 + 64 + 1 = 4161 nodes, 2.3 MiB of slab, 0.9% of the cached memory.
//!
//! A shadow entry left by reclaim occupies its slot like a folio, so nodes stay after
//! their pages are reclaimed; only `invalidate_mapping_pages()`-style removal (no shadow)
//! and truncation erase entries.
//!
//! `__address_space_init_once()` initialises `i_pages` with `XA_FLAGS_ACCOUNT`, so
//! `xas_alloc()` allocates nodes with `__GFP_ACCOUNT` from the memcg of the current task:
//! the node objects count in the memcg's `slab_reclaimable` (the cache is
//! `SLAB_RECLAIM_ACCOUNT`) and in its page counter (`memory.current`, against
//! `memory.max`) through the slab charge of [`crate::slab`]. `__filemap_add_folio()`
//! allocates the nodes before storing the folio (`xas_nomem()`); when that fails the folio
//! is not added ([`Mm::xa_store_new`] returns false and the caller frees the folio).
//!
//! ## Shadow nodes and their shrinker (mm/workingset.c)
//! A leaf whose occupied slots all hold shadow entries (`node->count == node->nr_values`)
//! is put on the `shadow_nodes` list_lru of the memcg its node object is charged to
//! (`workingset_update_node()`, at the tail) and counted in `workingset_nodes`; a folio
//! stored into it takes it off again. The shadow shrinker (`mm-shadow`,
//! `SHRINKER_MEMCG_AWARE`, `seeks = 0`) runs from `shrink_slab()` with the others:
//! `count_shadow_nodes()` allows one shadow node per 8 pages of the memcg (its LRU pages and
//! slab pages, `pages >> (XA_CHUNK_SHIFT - 3)`) and reports only the excess;
//! `do_shrink_slab()` with `seeks = 0` scans half of that; `shadow_lru_isolate()` takes
//! nodes from the head of the list (the oldest), erases their shadow entries and frees
//! them (and the nodes above that empty with them), counting `workingset_nodereclaim`.
//! Refaults whose shadows went that way are not recognised as refaults.
//!
//! # Where we differ from the kernel (v6.18)
//! - Entries are counted per index. The kernel stores a folio of order k ≥ 6 (and the
//!   shadow reclaim leaves for it) as a multi-index entry in `2^(k mod 6)` slots of a node
//!   of shift `6·floor(k / 6)`, with no leaves below it; the model counts such a folio's
//!   pages as ordinary entries, so a file read into order-9 folios holds 64 leaves per
//!   4096 pages where the kernel holds none (0.2% of the cached memory instead of 0.003%).
//! - Only regular files declared as objects have a tree. The files the `create` workload
//!   makes share one object per directory (each of the kernel's has its own `i_pages`);
//!   they are one page each in the bundled scenarios, which the kernel keeps in `xa_head`
//!   without a node, and they are not counted. Shmem's page cache (also an xarray in the
//!   kernel) is modelled as page-table entries and has no nodes either.
//!
//! # Kernel references
//! mm/workingset.c `workingset_update_node()`, `count_shadow_nodes()`,
//! `scan_shadow_nodes()`, `shadow_lru_isolate()`;
//! lib/xarray.c `xas_alloc()`, `xas_expand()`, `xas_shrink()`, `xas_delete_node()`,
//! `xas_nomem()`; mm/filemap.c `__filemap_add_folio()`, `page_cache_delete()`;
//! fs/inode.c `__address_space_init_once()`; lib/radix-tree.c `radix_tree_node_cachep`.

use crate::slab::RADIX_TREE_NODE;
use crate::zeroed::ZeroedVec;
use crate::{Ctx, Mm};

/// `XA_CHUNK_SHIFT`: log2 of the slots per node.
pub const XA_CHUNK_SHIFT: u32 = 6;

/// Node slot marking a node being allocated (reclaim inside the allocation may look at it).
const ALLOCATING: u64 = u64::MAX;

/// The nodes of one mapping's xarray, by level (0 = leaves) and position
/// (`index >> (6 · (level + 1))`).
pub struct XaTree {
    /// Occupied slots of each node position: entries for a leaf, child nodes above.
    count: Vec<ZeroedVec<u8>>,
    /// The node's slab object: `slab id + 1 | memcg << 32`; 0 = no node.
    node: Vec<ZeroedVec<u64>>,
    /// Per level: positions with an occupied slot, and those of them at position ≥ 1.
    busy: Vec<u64>,
    busy_high: Vec<u64>,
    /// Per leaf position: slots holding shadow entries (`node->nr_values`).
    values: ZeroedVec<u8>,
    /// Global id of this tree's leaf 0 in [`ShadowNodes`].
    leaf_base: u32,
    /// Is index 0 occupied (a lone entry there needs no node)?
    has0: bool,
    /// Nodes allocated.
    pub nr_nodes: u64,
}

/// Levels a tree over `size` indices can need (the height storing index `size - 1` takes).
pub fn levels_for(size: u64) -> usize {
    let mut l = 1;
    while l < 11 && (size - 1) >> (XA_CHUNK_SHIFT * l as u32) != 0 {
        l += 1;
    }
    l
}

/// Nodes the kernel's xarray holds for the occupied indices `idx` (ascending, distinct):
/// the reference the incremental count is checked against.
pub fn nodes_for(idx: impl IntoIterator<Item = u64>) -> u64 {
    const L: usize = 10;
    let mut last = [u64::MAX; L];
    let mut per = [0u64; L];
    let (mut max, mut any, mut only0) = (0, false, true);
    for i in idx {
        any = true;
        only0 &= i == 0;
        max = i;
        for l in 0..L {
            let g = i >> (XA_CHUNK_SHIFT * (l as u32 + 1));
            if g == last[l] {
                break;
            }
            last[l] = g;
            per[l] += 1;
        }
    }
    if !any || only0 {
        return 0;
    }
    let mut nodes = 0;
    for (l, n) in per.iter().enumerate() {
        nodes += n;
        if max >> (XA_CHUNK_SHIFT * (l as u32 + 1)) == 0 {
            break;
        }
    }
    nodes
}

impl XaTree {
    /// A tree over `size` indices whose leaves are numbered from `leaf_base` in
    /// [`ShadowNodes`].
    pub fn new(size: u64, leaf_base: u32) -> Self {
        let levels = levels_for(size.max(1));
        let mut count = Vec::with_capacity(levels);
        let mut node = Vec::with_capacity(levels);
        for l in 0..levels {
            let n = (size.max(1) - 1) >> (XA_CHUNK_SHIFT * (l as u32 + 1));
            count.push(ZeroedVec::new(n as usize + 1));
            node.push(ZeroedVec::new(n as usize + 1));
        }
        let leaves = count[0].len();
        XaTree {
            count,
            node,
            values: ZeroedVec::new(leaves),
            leaf_base,
            busy: vec![0; levels],
            busy_high: vec![0; levels],
            has0: false,
            nr_nodes: 0,
        }
    }

    fn levels(&self) -> usize {
        self.count.len()
    }

    /// Leaf positions (`ceil(size / 64)`), the ids this tree takes in [`ShadowNodes`].
    pub fn leaves(&self) -> u32 {
        self.count[0].len() as u32
    }

    /// Is leaf `pos` a node holding only shadow entries (`workingset_update_node()`)?
    fn shadow_only(&self, pos: u64) -> bool {
        let p = pos as usize;
        let v = self.node[0][p];
        v != 0 && v != ALLOCATING && self.count[0][p] > 0 && self.count[0][p] == self.values[p]
    }

    /// The tree's height: 0 with no entry or only index 0, else one level more than the
    /// highest level whose nodes above position 0 are in use.
    fn height(&self) -> usize {
        if self.busy[0] == 0 || (self.busy[0] == 1 && self.has0 && self.count[0][0] == 1) {
            return 0;
        }
        let mut h = 1;
        for l in 0..self.levels() {
            if self.busy_high[l] > 0 {
                h = l + 2;
            }
        }
        h
    }

    /// Slot `index` becomes occupied (`inc` true) or empty: update the counts up the tree.
    /// True when a node position's count crossed zero (a node may appear or go).
    fn account(&mut self, index: u64, inc: bool) -> bool {
        if index == 0 {
            self.has0 = inc;
        }
        let mut pos = index >> XA_CHUNK_SHIFT;
        for l in 0..self.levels() {
            let c = &mut self.count[l][pos as usize];
            let edge = if inc {
                *c += 1;
                *c == 1
            } else {
                *c -= 1;
                *c == 0
            };
            if !edge {
                return l > 0;
            }
            if inc {
                self.busy[l] += 1;
                self.busy_high[l] += (pos > 0) as u64;
            } else {
                self.busy[l] -= 1;
                self.busy_high[l] -= (pos > 0) as u64;
            }
            pos >>= XA_CHUNK_SHIFT;
        }
        true
    }

    /// Does position `pos` of level `l` need a node now?
    fn wanted(&self, l: usize, pos: u64) -> bool {
        l < self.height() && self.count[l][pos as usize] > 0
    }
}

/// The `shadow_nodes` list_lru: leaves holding only shadow entries, one list per memcg,
/// oldest at the head. Leaves are numbered globally (each tree's `leaf_base` + position).
#[derive(Default)]
pub struct ShadowNodes {
    /// (first leaf id, object) of each tree, ascending.
    trees: Vec<(u32, u32)>,
    /// Per leaf id: list links as id + 1 (0 = none), and the memcg + 1 of the list it is on
    /// (0 = on none).
    prev: ZeroedVec<u32>,
    next: ZeroedVec<u32>,
    on: ZeroedVec<u16>,
    /// Per memcg: list head and tail (id + 1), length, the shrinker's `nr_deferred`.
    head: Vec<u32>,
    tail: Vec<u32>,
    pub count: Vec<u64>,
    pub nr_deferred: Vec<u64>,
}

impl ShadowNodes {
    /// Lists for `nr_memcgs` memcgs over the trees `(first leaf id, object)` holding
    /// `leaves` leaves in all.
    pub fn new(trees: Vec<(u32, u32)>, leaves: usize, nr_memcgs: usize) -> Self {
        ShadowNodes {
            trees,
            prev: ZeroedVec::new(leaves),
            next: ZeroedVec::new(leaves),
            on: ZeroedVec::new(leaves),
            head: vec![0; nr_memcgs],
            tail: vec![0; nr_memcgs],
            count: vec![0; nr_memcgs],
            nr_deferred: vec![0; nr_memcgs],
        }
    }

    /// `workingset_nodes`: shadow-only leaves on every list.
    pub fn total(&self) -> u64 {
        self.count.iter().sum()
    }

    /// `list_lru_add()`: append leaf `id` to memcg `m`'s list.
    fn add(&mut self, m: u16, id: u32) {
        let mi = m as usize;
        let t = self.tail[mi];
        self.prev[id as usize] = t;
        self.next[id as usize] = 0;
        if t == 0 {
            self.head[mi] = id + 1;
        } else {
            self.next[t as usize - 1] = id + 1;
        }
        self.tail[mi] = id + 1;
        self.on[id as usize] = m + 1;
        self.count[mi] += 1;
    }

    /// `list_lru_del()`.
    fn del(&mut self, id: u32) {
        let m = self.on[id as usize] as usize - 1;
        let (p, n) = (self.prev[id as usize], self.next[id as usize]);
        if p == 0 {
            self.head[m] = n;
        } else {
            self.next[p as usize - 1] = n;
        }
        if n == 0 {
            self.tail[m] = p;
        } else {
            self.prev[n as usize - 1] = p;
        }
        self.on[id as usize] = 0;
        self.count[m] -= 1;
    }

    /// The object and leaf position of leaf `id`.
    fn leaf(&self, id: u32) -> (u32, u64) {
        let i = self.trees.partition_point(|&(b, _)| b <= id) - 1;
        let (base, obj) = self.trees[i];
        (obj, (id - base) as u64)
    }
}

impl Mm {
    /// Kernel: `workingset_update_node()` for leaf `pos` of `obj`'s tree: on its memcg's
    /// `shadow_nodes` list exactly while it holds only shadow entries.
    fn xa_leaf_update(&mut self, obj: u32, pos: u64) {
        let t = self.objects[obj as usize].xa.as_ref().unwrap();
        let want = t.shadow_only(pos);
        let id = t.leaf_base + pos as u32;
        let memcg = (t.node[0][pos as usize] >> 32) as u16;
        let on = self.shadow_nodes.on[id as usize] != 0;
        if want && !on {
            self.shadow_nodes.add(memcg, id);
        } else if !want && on {
            self.shadow_nodes.del(id);
        }
    }

    /// Slot `index` of `obj` changes between a folio and a shadow entry (`shadow` true: the
    /// folio was replaced by its shadow, `page_cache_delete()` under reclaim; false: a folio
    /// was stored over the shadow).
    pub(crate) fn xa_set_value(&mut self, obj: u32, index: u64, shadow: bool) {
        let Some(t) = self.objects[obj as usize].xa.as_mut() else {
            return;
        };
        let pos = index >> XA_CHUNK_SHIFT;
        let v = &mut t.values[pos as usize];
        if shadow {
            *v += 1;
        } else {
            *v -= 1;
        }
        self.xa_leaf_update(obj, pos);
    }

    /// Kernel: `count_shadow_nodes()` for memcg `m`: the shadow nodes beyond one per 8 of
    /// the memcg's pages (its LRU pages and slab pages). Since v7.1 the LRU pages are the
    /// memcg's `lru_zone_size`, which the multi-gen LRU never updates: none are counted under
    /// it ([`KernelVersion::shadow_shrinker_counts_memcg_lru_zone_size`](crate::workingset::KernelVersion::shadow_shrinker_counts_memcg_lru_zone_size)).
    fn count_shadow_nodes(&self, m: usize) -> u64 {
        let nodes = self.shadow_nodes.count[m];
        if nodes == 0 {
            return 0;
        }
        let lru: u64 = if self.cfg.lru == crate::LruKind::Mglru
            && self.cfg.kernel.shadow_shrinker_counts_memcg_lru_zone_size()
        {
            0
        } else {
            self.lruvecs[m].nr.iter().sum()
        };
        let slab = self.slab.memcg_bytes[m].iter().sum::<u64>() >> 12;
        let max_nodes = (lru + slab) >> (XA_CHUNK_SHIFT - 3);
        nodes.saturating_sub(max_nodes)
    }

    /// Kernel: the shadow shrinker's turn in `shrink_slab()` for memcg `m`
    /// (`do_shrink_slab()` with `seeks = 0`, `scan_shadow_nodes()`). Returns nodes freed.
    pub(crate) fn shrink_shadow_nodes(&mut self, m: usize, priority: i32) -> u64 {
        let freeable = self.count_shadow_nodes(m);
        if freeable == 0 {
            return 0;
        }
        let mut deferred = self.shadow_nodes.nr_deferred[m];
        let (freed, _) = crate::shrinker::do_shrink_slab_as(
            self.cfg.kernel,
            freeable,
            &mut deferred,
            priority,
            0,
            0,
            |n| {
                let mut done = 0;
                while done < n {
                    let head = self.shadow_nodes.head[m];
                    if head == 0 {
                        break;
                    }
                    self.shadow_lru_isolate(head - 1);
                    done += 1;
                }
                crate::shrinker::ScanResult::Done {
                    scanned: done,
                    freed: done,
                }
            },
        );
        self.shadow_nodes.nr_deferred[m] = deferred;
        freed
    }

    /// Kernel: `shadow_lru_isolate()`: take shadow-only leaf `id` off its list, erase its
    /// shadow entries (the node, and the nodes above that empty with it, are freed) and
    /// count `workingset_nodereclaim`.
    fn shadow_lru_isolate(&mut self, id: u32) {
        self.shadow_nodes.del(id);
        let (obj, pos) = self.shadow_nodes.leaf(id);
        let first = pos << XA_CHUNK_SHIFT;
        let end = (first + (1 << XA_CHUNK_SHIFT)).min(self.objects[obj as usize].size_pages);
        for k in first..end {
            let e = self.objects[obj as usize].ent[k as usize];
            if e == 0 {
                continue;
            }
            debug_assert!(e & crate::filemap::CACHE_SHADOW != 0);
            self.objects[obj as usize].ent[k as usize] = 0;
            self.xa_erase(obj, k, true);
        }
        self.ev.add(crate::vmstat::Ev::WorkingsetNodereclaim, 1);
    }

    /// The node positions a store or erase at `index` can change: its path and position 0
    /// of every level (where the tree grows and shrinks).
    fn xa_candidates(&self, obj: u32, index: u64) -> ([(u8, u64); 22], usize) {
        let t = self.objects[obj as usize].xa.as_ref().unwrap();
        let mut out = [(0u8, 0u64); 22];
        let mut n = 0;
        for l in 0..t.levels() {
            let pos = index >> (XA_CHUNK_SHIFT * (l as u32 + 1));
            out[n] = (l as u8, pos);
            n += 1;
            if pos != 0 {
                out[n] = (l as u8, 0);
                n += 1;
            }
        }
        (out, n)
    }

    /// Free the nodes of `obj`'s tree that are no longer wanted among the candidates of
    /// `index` (`xas_delete_node()`, `xas_shrink()`).
    fn xa_free_unwanted(&mut self, obj: u32, index: u64) {
        let (cand, n) = self.xa_candidates(obj, index);
        for &(l, pos) in &cand[..n] {
            let t = self.objects[obj as usize].xa.as_mut().unwrap();
            let v = t.node[l as usize][pos as usize];
            if v == 0 || v == ALLOCATING || t.wanted(l as usize, pos) {
                continue;
            }
            let id = t.leaf_base + pos as u32;
            t.node[l as usize][pos as usize] = 0;
            t.nr_nodes -= 1;
            if l == 0 && self.shadow_nodes.on[id as usize] != 0 {
                self.shadow_nodes.del(id);
            }
            self.slab_free(RADIX_TREE_NODE, (v as u32) - 1, (v >> 32) as u16);
        }
    }

    /// Kernel: `__filemap_add_folio()`'s `xas_nomem()` loop for a store into the empty slot
    /// `index` of `obj`: account the slot and allocate the nodes the tree now needs, charged
    /// to `ctx.memcg`. False (slot left empty, nothing allocated) when a node allocation
    /// failed. Objects without a tree need no node.
    pub(crate) fn xa_store_new(&mut self, ctx: &mut Ctx, obj: u32, index: u64) -> bool {
        let Some(t) = self.objects[obj as usize].xa.as_mut() else {
            return true;
        };
        let h = t.height();
        if !t.account(index, true) && t.height() == h {
            // A slot of an existing leaf, the tree's shape unchanged; a leaf of shadows
            // that now holds a folio leaves the shadow list.
            self.xa_leaf_update(obj, index >> XA_CHUNK_SHIFT);
            return true;
        }
        let (cand, n) = self.xa_candidates(obj, index);
        for &(l, pos) in &cand[..n] {
            let (l, p) = (l as usize, pos as usize);
            let t = self.objects[obj as usize].xa.as_mut().unwrap();
            if t.node[l][p] != 0 || !t.wanted(l, pos) {
                continue;
            }
            t.node[l][p] = ALLOCATING;
            let id = self.slab_alloc(ctx, RADIX_TREE_NODE, ctx.memcg);
            let t = self.objects[obj as usize].xa.as_mut().unwrap();
            match id {
                Some(id) => {
                    t.node[l][p] = (id as u64 + 1) | (ctx.memcg as u64) << 32;
                    t.nr_nodes += 1;
                    if !t.wanted(l, pos) {
                        // Reclaim inside the allocation emptied the position.
                        self.xa_free_unwanted(obj, index);
                    }
                }
                None => {
                    t.node[l][p] = 0;
                    t.account(index, false);
                    self.xa_free_unwanted(obj, index);
                    self.xa_leaf_update(obj, index >> XA_CHUNK_SHIFT);
                    return false;
                }
            }
        }
        self.xa_leaf_update(obj, index >> XA_CHUNK_SHIFT);
        true
    }

    /// Kernel: `xas_store(NULL)` on occupied slot `index` of `obj` (`page_cache_delete()`
    /// without a shadow, truncation, the shadow shrinker), which held a shadow entry if
    /// `shadow`: account it and free the nodes no longer needed.
    pub(crate) fn xa_erase(&mut self, obj: u32, index: u64, shadow: bool) {
        let Some(t) = self.objects[obj as usize].xa.as_mut() else {
            return;
        };
        let pos = index >> XA_CHUNK_SHIFT;
        if shadow {
            t.values[pos as usize] -= 1;
        }
        let h = t.height();
        if t.account(index, false) || t.height() != h {
            self.xa_free_unwanted(obj, index);
        }
        self.xa_leaf_update(obj, pos);
    }

    /// Xarray invariants: each tree's nodes are the ones its occupied page-cache entries
    /// need ([`nodes_for`]), each leaf's `nr_values` counts its shadow entries and it is on a
    /// shadow list exactly when it holds only shadows, and the `radix_tree_node` cache holds
    /// exactly the trees' nodes.
    pub fn check_xarray(&self) -> Result<(), String> {
        let mut total = 0;
        let mut shadow_total = 0;
        for (o, obj) in self.objects.iter().enumerate() {
            let Some(t) = obj.xa.as_ref() else { continue };
            // One pass over the entries: the occupied indices for the node count, the shadow
            // entries per leaf for nr_values.
            let mut shadows = vec![0u32; t.leaves() as usize];
            let want = nodes_for(
                (0..obj.size_pages)
                    .filter(|&k| obj.ent[k as usize] != 0)
                    .inspect(|&k| {
                        if obj.ent[k as usize] & crate::filemap::CACHE_SHADOW != 0 {
                            shadows[(k >> XA_CHUNK_SHIFT) as usize] += 1;
                        }
                    }),
            );
            if want != t.nr_nodes {
                return Err(format!(
                    "object {o}: {} xarray nodes allocated, its entries need {want}",
                    t.nr_nodes
                ));
            }
            let mut on_lists = 0;
            for pos in 0..t.leaves() as u64 {
                let n = shadows[pos as usize];
                if n != t.values[pos as usize] as u32 {
                    return Err(format!(
                        "object {o} leaf {pos}: {n} shadow entries, nr_values {}",
                        t.values[pos as usize]
                    ));
                }
                let on = self.shadow_nodes.on[(t.leaf_base as u64 + pos) as usize] != 0;
                if on != t.shadow_only(pos) {
                    return Err(format!(
                        "object {o} leaf {pos}: on the shadow list {on}, shadow-only {}",
                        t.shadow_only(pos)
                    ));
                }
                on_lists += on as u64;
            }
            shadow_total += on_lists;
            let mut live = 0;
            for l in 0..t.levels() {
                for p in 0..t.node[l].len() {
                    let v = t.node[l][p];
                    if v == ALLOCATING {
                        return Err(format!("object {o}: node {l}/{p} left allocating"));
                    }
                    live += (v != 0) as u64;
                }
            }
            if live != t.nr_nodes {
                return Err(format!(
                    "object {o}: {live} nodes recorded, nr_nodes {}",
                    t.nr_nodes
                ));
            }
            total += live;
        }
        if shadow_total != self.shadow_nodes.total() {
            return Err(format!(
                "{shadow_total} shadow-only leaves, the shadow lists count {}",
                self.shadow_nodes.total()
            ));
        }
        let objs = self.slab.caches[RADIX_TREE_NODE].nr_objects;
        if objs != total {
            return Err(format!(
                "radix_tree_node holds {objs} objects, the xarrays {total} nodes"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_the_largest_index() {
        assert_eq!(levels_for(1), 1);
        assert_eq!(levels_for(64), 1);
        assert_eq!(levels_for(65), 2);
        assert_eq!(levels_for(4096), 2);
        assert_eq!(levels_for(4097), 3);
        assert_eq!(levels_for(1 << 32), 6);
    }

    #[test]
    fn node_counts_by_hand() {
        // A lone entry at index 0 lives in xa_head.
        assert_eq!(nodes_for([0]), 0);
        // Any other lone index needs a leaf.
        assert_eq!(nodes_for([5]), 1);
        assert_eq!(nodes_for(0..64), 1);
        assert_eq!(nodes_for([]), 0);
        // Index 64 needs a second leaf and a root above both.
        assert_eq!(nodes_for([0, 64]), 3);
        // 1 GiB cached from index 0: 4096 leaves, 64 nodes of shift 6, one root.
        assert_eq!(nodes_for(0..262144), 4096 + 64 + 1);
        // One page at index 4096: leaf, its parent and the root at shift 12.
        assert_eq!(nodes_for([4096]), 3);
    }

    #[test]
    fn incremental_counts_match_the_reference_through_growth_and_shrinking() {
        let mut t = XaTree::new(300_000, 0);
        let mut set = std::collections::BTreeSet::new();
        let mut x = 12345u64;
        let check = |t: &mut XaTree, set: &std::collections::BTreeSet<u64>| {
            let h = t.height();
            let mut nodes = 0;
            for l in 0..t.levels() {
                for p in 0..t.count[l].len() {
                    nodes += (l < h && t.count[l][p] > 0) as u64;
                }
            }
            assert_eq!(nodes, nodes_for(set.iter().copied()), "{set:?}");
        };
        for step in 0..4000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Mostly small indices, so the tree grows and shrinks often.
            let i = match (x >> 60) % 4 {
                0 => (x >> 20) % 3,
                1 => (x >> 20) % 200,
                2 => (x >> 20) % 10_000,
                _ => (x >> 20) % 300_000,
            };
            if set.contains(&i) {
                set.remove(&i);
                t.account(i, false);
            } else {
                set.insert(i);
                t.account(i, true);
            }
            if step % 7 == 0 {
                check(&mut t, &set);
            }
        }
        for i in std::mem::take(&mut set) {
            t.account(i, false);
        }
        check(&mut t, &set);
        assert_eq!(t.height(), 0);
    }

    /// A 32768-page machine without large page-cache folios, its memcg 1 limited to
    /// `max_pages`.
    fn memcg_reader(max_pages: Option<u64>) -> Mm {
        use crate::testutil::*;
        use crate::{BalanceKind, MemcgCfg};
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 32768);
        cfg.max_file_folio_order = 0;
        cfg.memcgs = vec![MemcgCfg {
            max_pages,
            swappiness: None,
            swap_max_pages: None,
        }];
        Mm::new(cfg)
    }

    /// [`memcg_reader`] under the multi-gen LRU with `model.kernel = kernel`.
    fn mglru_memcg_reader(max_pages: u64, kernel: crate::workingset::KernelVersion) -> Mm {
        let mut mm = memcg_reader(Some(max_pages));
        let mut cfg = mm.cfg.clone();
        cfg.lru = crate::LruKind::Mglru;
        cfg.kernel = kernel;
        mm = Mm::new(cfg);
        mm
    }

    /// Since v7.1 `count_shadow_nodes()` reads the memcg's `lru_zone_size`, which the
    /// multi-gen LRU never updates: a memcg of 1024 pages streaming once through 32768 pages
    /// keeps shadow-only leaves only up to one per 8 of its slab pages (plus what
    /// `do_shrink_slab()`'s batches leave), far fewer than v6.18, which counts its LRU pages
    /// too, and frees more of them (`workingset_nodereclaim`). The classic LRU keeps v6.18's
    /// count on 7.1 (its `lru_zone_size` is exact).
    #[test]
    fn since_7_1_the_shadow_shrinker_counts_no_lru_pages_under_the_multi_gen_lru() {
        use crate::vmstat::Ev;
        use crate::workingset::KernelVersion;
        use crate::InstantIo;
        let run = |mut mm: Mm| {
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 1);
            mm.set_hint(1, crate::filemap::Hint::Random);
            for p in (0..32768).step_by(32) {
                mm.file_read(&mut ctx, 1, p, 32);
            }
            mm.check_xarray().unwrap();
            let leaves = mm.shadow_nodes.count[1];
            let lru: u64 = mm.lruvecs[1].nr.iter().sum();
            let slab = mm.slab.memcg_bytes[1].iter().sum::<u64>() >> 12;
            (leaves, lru, slab, mm.ev.get(Ev::WorkingsetNodereclaim))
        };
        let (old_leaves, old_lru, old_slab, old_reclaimed) =
            run(mglru_memcg_reader(1024, KernelVersion::new(6, 18)));
        let (new_leaves, _, new_slab, new_reclaimed) =
            run(mglru_memcg_reader(1024, KernelVersion::new(7, 1)));
        // v6.18: one node per 8 of the memcg's LRU and slab pages (~120 here), give or take
        // two SHRINK_BATCHes.
        assert!(old_lru > 900, "{old_lru} LRU pages");
        assert!(
            old_leaves + 2 * 128 >= (old_lru + old_slab) >> 3,
            "v6.18: {old_leaves} shadow leaves for {old_lru} + {old_slab} pages"
        );
        // v7.1: the slab pages alone set the limit.
        assert!(
            new_leaves < (new_slab >> 3) + 2 * 128,
            "v7.1: {new_leaves} shadow leaves for {new_slab} slab pages"
        );
        assert!(new_leaves < old_leaves, "{new_leaves} vs {old_leaves}");
        assert!(
            new_reclaimed > old_reclaimed,
            "workingset_nodereclaim {new_reclaimed} vs {old_reclaimed}"
        );
        // The classic LRU on 7.1 counts its LRU pages as before.
        let mut classic = memcg_reader(Some(1024));
        classic.cfg.kernel = KernelVersion::new(7, 1);
        let mut base = memcg_reader(Some(1024));
        base.cfg.kernel = KernelVersion::new(6, 18);
        assert_eq!(run(classic), run(base));
    }

    /// A memcg that reads 8192 pages of a file into order-0 folios holds 128 leaves, 2
    /// nodes of shift 6 and the root: 131 nodes, 75,456 bytes of `slab_reclaimable`,
    /// charged as 19 pages; the `radix_tree_node` cache holds them in 5 order-2 slabs
    /// (28 nodes each). Dropping the page cache erases every entry and frees every node and
    /// every slab but the CPU slab.
    #[test]
    fn a_memcg_reading_a_file_is_charged_its_xarray_nodes() {
        use crate::InstantIo;
        let mut mm = memcg_reader(None);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 1);
        // POSIX_FADV_RANDOM: no readahead past the reads.
        mm.set_hint(1, crate::filemap::Hint::Random);
        for p in (0..8192).step_by(32) {
            mm.file_read(&mut ctx, 1, p, 32);
        }
        assert_eq!(mm.objects[1].nr_resident, 8192);
        assert_eq!(mm.objects[1].xa.as_ref().unwrap().nr_nodes, 131);
        assert_eq!(mm.slab.memcg_bytes[1], [131 * 576, 0]);
        assert_eq!(mm.slab.memcg_pages[1], 19);
        assert_eq!(mm.memcgs[1].usage, 8192 + 19 + mm.memcg_stocked(1));
        let c = &mm.slab.caches[RADIX_TREE_NODE];
        assert_eq!((c.nr_objects, c.nr_slabs, c.pages()), (131, 5, 20));
        mm.check_xarray().unwrap();
        mm.drop_pagecache();
        assert_eq!(mm.objects[1].nr_resident, 0);
        assert_eq!(mm.objects[1].xa.as_ref().unwrap().nr_nodes, 0);
        assert_eq!(mm.slab.memcg_bytes[1], [0, 0]);
        // Only the CPU slab (kmem_cache_cpu->slab), empty, is kept.
        let c = &mm.slab.caches[RADIX_TREE_NODE];
        assert_eq!((c.nr_objects, c.nr_slabs), (0, 1));
        mm.check_xarray().unwrap();
    }

    /// Reclaim leaves shadow entries in the slots, so the nodes stay after the pages are
    /// gone (what the shadow-node shrinker exists for); the limit binds on the page cache
    /// plus the nodes.
    #[test]
    fn shadow_entries_keep_their_nodes_and_the_limit_counts_the_nodes() {
        use crate::InstantIo;
        let mut mm = memcg_reader(Some(4096));
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 1);
        mm.set_hint(1, crate::filemap::Hint::Random);
        for p in (0..16384).step_by(32) {
            mm.file_read(&mut ctx, 1, p, 32);
        }
        // 16384 indices, every one a folio or a shadow: 256 leaves, 4 nodes above, a root.
        let t = mm.objects[1].xa.as_ref().unwrap();
        assert_eq!(t.nr_nodes, 261);
        assert!(mm.objects[1].nr_resident < 4096);
        // 261 nodes are 150,336 bytes, 37 charged pages: the cache keeps the rest.
        assert_eq!(mm.slab.memcg_pages[1], 37);
        assert!(mm.memcgs[1].usage <= 4096);
        assert!(mm.objects[1].nr_resident + 37 <= 4096);
        mm.check_xarray().unwrap();
    }

    /// A memcg of 1024 pages streaming once through 32768 pages of a file leaves shadow
    /// entries behind in leaves of their own; the shadow shrinker (seeks = 0, run by every
    /// limit reclaim's shrink_slab()) holds the shadow-only leaves near one per 8 of the
    /// memcg's pages (here 241 for 977 pages, 256 reclaimed), counting
    /// workingset_nodereclaim, and a second pass recognises as refaults only the pages whose
    /// shadows survived.
    #[test]
    fn the_shadow_shrinker_holds_shadow_nodes_near_one_per_8_pages() {
        use crate::vmstat::Ev;
        use crate::InstantIo;
        let mut mm = memcg_reader(Some(1024));
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 1);
        mm.set_hint(1, crate::filemap::Hint::Random);
        for p in (0..32768).step_by(32) {
            mm.file_read(&mut ctx, 1, p, 32);
        }
        mm.check_xarray().unwrap();
        let lru: u64 = mm.lruvecs[1].nr.iter().sum();
        let slab = mm.slab.memcg_bytes[1].iter().sum::<u64>() >> 12;
        let shadow_leaves = mm.shadow_nodes.count[1];
        let reclaimed = mm.ev.get(Ev::WorkingsetNodereclaim);
        // Without the shrinker: (32768 - 1024) / 64 = 496 leaves of shadows.
        assert!(reclaimed > 0);
        assert!(
            shadow_leaves + reclaimed >= 490,
            "{shadow_leaves} + {reclaimed}"
        );
        // do_shrink_slab() scans in batches of SHRINK_BATCH (128) and, with seeks = 0 at
        // DEF_PRIORITY, asks for half the excess: the excess over one node per 8 pages stays
        // under two batches.
        assert!(
            shadow_leaves < ((lru + slab) >> 3) + 2 * 128,
            "{shadow_leaves} shadow leaves for {lru} + {slab} pages"
        );
        // The second pass refaults only where a shadow is left.
        let shadows = (0..32768u64)
            .filter(|&k| mm.objects[1].ent[k as usize] & crate::filemap::CACHE_SHADOW != 0)
            .count() as u64;
        let before = mm.ev.get(Ev::WorkingsetRefaultFile);
        for p in (0..32768).step_by(32) {
            mm.file_read(&mut ctx, 1, p, 32);
        }
        let refaults = mm.ev.get(Ev::WorkingsetRefaultFile) - before;
        assert!(
            refaults <= shadows,
            "{refaults} refaults, {shadows} shadows"
        );
        // Every reclaimed node took at least one shadow with it.
        assert!(shadows <= 32768 - 1024 - reclaimed, "{shadows} shadows");
        mm.check_xarray().unwrap();
    }
}
