//! XFS's own per-file metadata memory (fs/xfs, v5.3), next to the VFS dentry and the
//! `xfs_inode` that [`crate::fs`] models: the inode log item and the inode cluster buffers,
//! both UNMOVABLE kernel memory, the buffer cache's shrinker, and XFS's own reclaim of the
//! inodes the VFS evicted.
//!
//! # What creating one small file allocates (v5 superblock, 512-byte inodes, mkfs defaults)
//! - *Inode cluster buffers.* `xfs_dialloc()` takes a free inode from an allocated inode
//!   chunk (`XFS_INODES_PER_CHUNK` = 64 inodes); when none is left, `xfs_ialloc_ag_alloc()`
//!   allocates a new chunk and `xfs_ialloc_inode_init()` gets one buffer per inode cluster
//!   of it (`xfs_trans_get_buf()`), initialises and logs it (ordered, v5). The cluster size
//!   is `XFS_INODE_BIG_CLUSTER_SIZE` (8 KiB) scaled by `sb_inodesize / XFS_DINODE_MIN_SIZE`
//!   (512 / 256) on a v5 superblock when the inode alignment allows it (mkfs.xfs's
//!   `sb_inoalignmt` is that size, 4 blocks, or with sparse inodes the chunk, 8 blocks):
//!   16 KiB, 32 inodes, two clusters per chunk.
//!   `xfs_buf_allocate_memory()` takes a buffer of a page or more as order-0 pages, one
//!   `alloc_page(xb_to_gfp(flags))` each, GFP_NOFS for a non-readahead buffer:
//!   `gfp_migratetype()` UNMOVABLE. So every 64 files allocate 8 UNMOVABLE order-0 pages,
//!   1/8 page per file ([`CLUSTER_PAGES`], [`INODES_PER_CLUSTER`]).
//! - *The inode log item.* `xfs_trans_ijoin()` of the new inode (`xfs_ialloc()`) calls
//!   `xfs_inode_item_init()`, one object of the `xfs_ili` cache
//!   ([`crate::slab::XFS_ILI_CACHE`]: UNMOVABLE slab, 1/26 page per file). It is freed with
//!   the `xfs_inode` (`xfs_inode_free_callback()` → `xfs_inode_item_destroy()`).
//! - *The `xfs_inode`* (RECLAIMABLE, `KM_ZONE_RECLAIM`) and the dentry: [`crate::fs`].
//!
//! A v5 create does not read the cluster buffer (`xfs_iread()` with `XFS_IGET_CREATE` on a
//! CRC filesystem only draws a generation number); the buffer is needed again when the
//! inode is written in place (`xfs_iflush()` → `xfs_imap_to_bp()`, a read if it was freed).
//!
//! # When it is freed
//! An unused buffer sits on the buffer target's LRU (`xfs_buf_rele()`: `list_lru_add()` when
//! `b_lru_ref` is non-zero; a buffer already on the LRU keeps its place). Its only reclaim is
//! the buffer target's shrinker (`xfs_alloc_buftarg()`: `SHRINKER_NUMA_AWARE`, not memcg
//! aware, `DEFAULT_SEEKS`, default batch): `xfs_buftarg_shrink_count()` counts the buffers
//! on the LRU; `xfs_buftarg_shrink_scan()` walks from the head, `xfs_buftarg_isolate()`
//! rotating a buffer whose `b_lru_ref` is non-zero (decrementing it) and freeing one whose
//! count is zero (`xfs_buf_rele()` → `xfs_buf_free()` → `__free_page()` per page). A new
//! buffer starts with `b_lru_ref` 1 (`_xfs_buf_alloc()`); the inode paths of a v5 create
//! set no other count (`xfs_buf_set_ref(bp, XFS_INO_REF)` is in `xfs_iread()`'s read of an
//! existing inode), so a cluster buffer survives one pass of the shrinker over it. Its
//! scans count in `slabs_scanned` like any shrinker's (`do_shrink_slab()`). In v5.3 the
//! freed pages are not added to `reclaim_state->reclaimed_slab` (only slab pages are);
//! since v5.14's rework of buffer allocation (Dave Chinner; the version read from the two
//! forms of `xfs_buf_free_pages()`, not bisected) they are, so there they count as
//! reclaimed ([`BUF_FREE_COUNTS_AS_RECLAIMED`]).
//!
//! # XFS's inode reclaim
//! The VFS's eviction does not free an XFS inode. `prune_icache_sb()` → `evict()` →
//! `destroy_inode()` drops it from the VFS's count (`nr_inodes`), but
//! `xfs_fs_destroy_inode()` only tags it `XFS_ICI_RECLAIM_TAG` in its AG's inode radix tree
//! (`xfs_inode_set_reclaim_tag()`): the `xfs_inode` (with the VFS inode inside it,
//! [`crate::slab::INODE_CACHE`]) and its log item stay allocated and charged until XFS
//! frees them ([`XfsIcache`]). Two paths do (v5.3, fs/xfs/xfs_icache.c):
//! - *The superblock shrinker.* `super_cache_count()` adds `nr_cached_objects`
//!   (`xfs_fs_nr_cached_objects()` → `xfs_reclaim_inodes_count()`, the tagged inodes of
//!   every AG, whatever the memcg) to the dentry and inode LRU counts, and
//!   `super_cache_scan()` gives it its proportional share of each batch
//!   ([`crate::shrinker::super_cache_split`]), passed to `free_cached_objects`
//!   (`xfs_fs_free_cached_objects()` → `xfs_reclaim_inodes_nr()`) after the dentries and
//!   inodes. That queues the background worker, pushes the AIL, and walks the tagged
//!   inodes from the AG's reclaim cursor in gang lookups of 32 (`XFS_LOOKUP_BATCH`),
//!   charging 32 to its count per lookup, until the count is used up or the tree's end is
//!   reached (cursor back to 0). It returns 0, not the inodes freed.
//! - *The background worker* (`xfs_reclaim_worker()`), queued [`RECLAIM_WORK_DELAY_NS`]
//!   (`xfs_syncd_centisecs / 6`, 5 s) ahead when an AG gets its first reclaimable inode or
//!   the shrinker kicks it, and again after each pass while inodes stay tagged: one
//!   unlimited trylock walk from the cursor to the end of the tree.
//!
//! v5.3's shrinker path reclaims with `SYNC_TRYLOCK | SYNC_WAIT`: an inode being flushed is
//! waited for (`xfs_iflock()`), a pinned one unpinned by a log force (`xfs_iunpin_wait()`),
//! a dirty one flushed and its cluster buffer written synchronously (`xfs_iflush()`,
//! `xfs_bwrite()`), and a reclaimer finding an AG's reclaim lock taken waits for it on a
//! second pass. v5.9 made inode reclaim non-blocking (Dave Chinner's series "xfs: remove
//! SYNC_WAIT from xfs_reclaim_inodes()", "xfs: remove IO submission from
//! xfs_reclaim_inode()", "xfs: allow multiple reclaimers per AG": v5.9.1's
//! `xfs_reclaim_inode()` skips a locked, pinned or dirty inode and never flushes; read
//! from v5.3.0 and v5.9.1 sources). In this model those waits cannot arise: an inode is on
//! the VFS's LRU only once its data and journal record are written
//! ([`crate::fs`]), and the model writes the inode in place then too
//! ([`Mm::xfs_iflush`]), so every inode XFS reclaims is clean, unpinned and unlocked and
//! both versions free it alike. What the seed's kernel spends waiting there is therefore
//! not modelled; neither is the AIL push nor the contention of the worker with a
//! reclaimer for the AG's reclaim lock (the worker runs in no thread's time).
//!
//! # Where we differ from the kernel
//! - Inodes are numbered in file-id order: file `k` is in cluster `k / 32` of chunk
//!   `k / 64`, and a chunk's two buffers are allocated by the create of its first file.
//! - A chunk's buffers are held (dirty, ordered, in the AIL) until the first inode of their
//!   cluster is written by the model's metadata writeback ([`crate::fs`]: with its data),
//!   which stands for `xfs_iflush_cluster()` writing the cluster; they then go on the LRU.
//!   The in-place write of the cluster is not submitted as I/O (the journal record is); a
//!   flush that finds the buffer freed allocates its pages again (counted in
//!   [`XfsBufs::reread`]) without the read I/O.
//! - One AG holds every created inode (XFS places a directory's new inodes in its AG while
//!   it has room), so there is one reclaim cursor. The worker's slab frees are no
//!   reclaimer's; the `xfs_inode`'s RCU-delayed free happens at once. A reclaimable inode
//!   found again by a re-create is recycled (`xfs_iget_cache_hit()`).
//! - Not modelled: the `xfs_buf` structures themselves (one per 32 files), the
//!   directory's data, leaf and free-index block buffers (UNMOVABLE order-0 pages too:
//!   about 1/72 page per file of data block for 40-byte names, plus 8 bytes of leaf per
//!   entry), and the CIL's log vectors (`xlog_cil_alloc_shadow_bufs()`: kmalloc, UNMOVABLE,
//!   freed when the checkpoint commits, so their lifetime is set by the log size, which the
//!   seed does not give). The buffer pages' GFP_NOFS is modelled as GFP_KERNEL (the model's
//!   direct reclaim does not skip the filesystem shrinkers).
//!
//! # Kernel references (v5.3)
//! fs/xfs/libxfs/xfs_ialloc.c `xfs_dialloc()`, `xfs_ialloc_ag_alloc()`,
//! `xfs_ialloc_inode_init()`, `xfs_ialloc_setup_geometry()`; fs/xfs/xfs_buf.c
//! `xfs_buf_allocate_memory()`, `xb_to_gfp()`, `_xfs_buf_alloc()`, `xfs_buf_rele()`,
//! `xfs_buftarg_isolate()`, `xfs_buftarg_shrink_scan()`, `xfs_buftarg_shrink_count()`,
//! `xfs_alloc_buftarg()`; fs/xfs/xfs_inode_item.c `xfs_inode_item_init()`,
//! `xfs_inode_item_destroy()`; fs/xfs/xfs_super.c `xfs_init_zones()`,
//! `xfs_fs_destroy_inode()`, `xfs_fs_nr_cached_objects()`, `xfs_fs_free_cached_objects()`;
//! fs/xfs/xfs_icache.c `xfs_inode_set_reclaim_tag()`, `xfs_perag_set_reclaim_tag()`,
//! `xfs_reclaim_work_queue()`, `xfs_reclaim_worker()`, `xfs_reclaim_inodes_ag()`,
//! `xfs_reclaim_inode()`, `xfs_reclaim_inodes_nr()`, `xfs_reclaim_inodes_count()`,
//! `xfs_iget_cache_hit()`; fs/xfs/xfs_globals.c `xfs_params`; fs/super.c
//! `super_cache_count()`, `super_cache_scan()`.

use crate::alloc::Gfp;
use crate::fs::ListLru;
use crate::shrinker::{do_shrink_slab_as, ScanResult, DEFAULT_SEEKS, SHRINK_BATCH};
use crate::slab::XFS_ILI;
use crate::types::*;
use crate::workingset::KernelVersion;
use crate::{Ctx, Mm};

/// `XFS_INODES_PER_CHUNK`.
pub const INODES_PER_CHUNK: u32 = 64;
/// Inodes per cluster buffer: `XFS_INODE_BIG_CLUSTER_SIZE` (8192) × 512 / 256 = 16 KiB of
/// 512-byte inodes (`xfs_ialloc_setup_geometry()`, v5 superblock, mkfs defaults).
pub const INODES_PER_CLUSTER: u32 = 32;
/// Order-0 pages per cluster buffer: 16 KiB (`xfs_buf_allocate_memory()`).
pub const CLUSTER_PAGES: u32 = 4;
/// `b_lru_ref` of a new buffer (`_xfs_buf_alloc()`): one rotation on the LRU before it is
/// freed.
pub const NEW_BUF_LRU_REF: u8 = 1;
/// The first kernel whose `xfs_buf_free_pages()` adds the freed pages to
/// `reclaim_state->reclaimed_slab` (see the module doc; v5.3's `xfs_buf_free()` does not).
pub const BUF_FREE_COUNTS_AS_RECLAIMED: KernelVersion = KernelVersion::new(5, 14);

/// The reclaim worker's delay (`xfs_reclaim_work_queue()`: `xfs_syncd_centisecs / 6 * 10`
/// ms, with `fs.xfs.xfssyncd_centisecs` at its default of 3000, `xfs_params.syncd_timer` in
/// v5.3's xfs_globals.c): 5 s, in ns.
pub const RECLAIM_WORK_DELAY_NS: u64 = 3000 / 6 * 10 * 1_000_000;
/// `XFS_LOOKUP_BATCH`: inodes per radix-tree gang lookup of the reclaim walk; the shrinker's
/// scan count is charged one batch per lookup, however many it found.
pub const LOOKUP_BATCH: i64 = 32;

/// XFS's reclaimable inodes (v5.3 fs/xfs/xfs_icache.c): `xfs_inode`s the VFS evicted that
/// stay in the `xfs_inode` slab, tagged `XFS_ICI_RECLAIM_TAG`, until the superblock
/// shrinker's `free_cached_objects` or the background reclaim worker frees them. See the
/// module doc, "XFS's inode reclaim".
#[derive(Clone, Debug)]
pub struct XfsIcache {
    /// Inodes tagged `XFS_ICI_RECLAIM_TAG` in the AG's inode radix tree, by inode number
    /// (the file id: one AG, inodes numbered in file-id order). Their count is the AG's
    /// `pag_ici_reclaimable`.
    reclaimable: TagBitmap,
    /// `pag_ici_reclaim_cursor`: where the next trylock walk starts.
    pub cursor: u32,
    /// When the queued `m_reclaim_work` runs (u64::MAX: not queued).
    pub work_due: u64,
    /// The time [`Mm::run_background`] last saw: `queue_delayed_work()` from reclaim, which
    /// has no clock of its own in the model, delays from it.
    pub clock: u64,
    /// Inodes freed by `xfs_reclaim_inodes_nr()` (the shrinker) and by the worker.
    pub reclaimed_shrinker: u64,
    pub reclaimed_worker: u64,
    /// Worker passes run.
    pub worker_runs: u64,
    /// The most reclaimable inodes at once.
    pub max_reclaimable: u64,
}

impl Default for XfsIcache {
    fn default() -> Self {
        XfsIcache {
            reclaimable: Default::default(),
            cursor: 0,
            work_due: u64::MAX,
            clock: 0,
            reclaimed_shrinker: 0,
            reclaimed_worker: 0,
            worker_runs: 0,
            max_reclaimable: 0,
        }
    }
}

impl XfsIcache {
    /// For `nr_files` files' inodes.
    pub fn new(nr_files: usize) -> Self {
        XfsIcache {
            reclaimable: TagBitmap::new(nr_files),
            ..Default::default()
        }
    }

    /// `xfs_reclaim_inodes_count()`: the reclaimable inodes (`nr_cached_objects`).
    pub fn count(&self) -> u64 {
        self.reclaimable.count
    }

    /// The reclaimable inodes in inode-number order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let mut next = self.reclaimable.next_from(0);
        std::iter::from_fn(move || {
            let fid = next?;
            next = self.reclaimable.next_from(fid + 1);
            Some(fid)
        })
    }

    /// Whether file `fid`'s inode is reclaimable (`XFS_IRECLAIMABLE`).
    pub fn is_reclaimable(&self, fid: u32) -> bool {
        self.reclaimable.contains(fid)
    }
}

/// The radix tree's reclaim tag over inode numbers: a bitmap with a summary bit per
/// non-empty word, so that a gang lookup from any index finds the next tagged inode in a
/// few word scans (`radix_tree_gang_lookup_tag()`'s job).
#[derive(Clone, Debug, Default)]
struct TagBitmap {
    words: Vec<u64>,
    /// Bit `w` set: `words[w]` is non-zero.
    summary: Vec<u64>,
    count: u64,
}

impl TagBitmap {
    fn new(n: usize) -> Self {
        let words = n.div_ceil(64);
        TagBitmap {
            words: vec![0; words],
            summary: vec![0; words.div_ceil(64)],
            count: 0,
        }
    }

    fn contains(&self, i: u32) -> bool {
        self.words
            .get(i as usize / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Set bit `i`; returns whether it was clear.
    fn insert(&mut self, i: u32) -> bool {
        let w = i as usize / 64;
        let bit = 1u64 << (i % 64);
        if self.words[w] & bit != 0 {
            return false;
        }
        self.words[w] |= bit;
        self.summary[w / 64] |= 1 << (w % 64);
        self.count += 1;
        true
    }

    /// Clear bit `i`; returns whether it was set.
    fn remove(&mut self, i: u32) -> bool {
        let w = i as usize / 64;
        let bit = 1u64 << (i % 64);
        if self.words.get(w).is_none_or(|&x| x & bit == 0) {
            return false;
        }
        self.words[w] &= !bit;
        if self.words[w] == 0 {
            self.summary[w / 64] &= !(1 << (w % 64));
        }
        self.count -= 1;
        true
    }

    /// The first set bit at or after `i`.
    fn next_from(&self, i: u32) -> Option<u32> {
        let mut w = i as usize / 64;
        if w >= self.words.len() {
            return None;
        }
        let here = self.words[w] & (!0u64 << (i % 64));
        if here != 0 {
            return Some((w * 64) as u32 + here.trailing_zeros());
        }
        w += 1;
        let mut s = w / 64;
        let mut mask = !0u64 << (w % 64);
        while s < self.summary.len() {
            let m = self.summary[s] & mask;
            if m != 0 {
                let w = s * 64 + m.trailing_zeros() as usize;
                return Some((w * 64) as u32 + self.words[w].trailing_zeros());
            }
            s += 1;
            mask = !0;
        }
        None
    }
}

/// Per-cluster buffer state bits.
mod bs {
    /// The buffer's pages are allocated.
    pub const PRESENT: u8 = 1 << 0;
    /// Held: dirty (the chunk's ordered initialisation) and not yet written.
    pub const HELD: u8 = 1 << 1;
    /// On the buffer target's LRU.
    pub const LRU: u8 = 1 << 2;
    /// The cluster's chunk has been allocated on disk.
    pub const CHUNK: u8 = 1 << 3;
}

/// The inode cluster buffers of every created file's cluster, the buffer target's LRU and
/// the created inodes' log items.
#[derive(Clone, Debug, Default)]
pub struct XfsBufs {
    /// Per cluster: [`bs`] bits.
    state: Vec<u8>,
    /// Per cluster: `b_lru_ref`.
    lru_ref: Vec<u8>,
    /// Per cluster: the pfns of its [`CLUSTER_PAGES`] pages (NIL when absent).
    pfns: Vec<Pfn>,
    /// The buffer target's LRU (`bt_lru`) over cluster ids: one list, the buffer cache's
    /// `list_lru` is not memcg aware.
    lru: ListLru,
    /// Per file: the slab id of its inode log item (NIL: none).
    pub ili_slab: Vec<u32>,
    /// The buffer shrinker's `nr_deferred`.
    pub nr_deferred: u64,
    /// Buffers in memory and the pages they hold.
    pub nr_bufs: u64,
    pub nr_pages: u64,
    /// Cluster buffers allocated by chunk allocation, read back by a flush after the
    /// shrinker freed them, and freed by the shrinker.
    pub allocated: u64,
    pub reread: u64,
    pub freed: u64,
}

impl XfsBufs {
    pub fn new(nr_files: usize) -> Self {
        let clusters = nr_files.div_ceil(INODES_PER_CLUSTER as usize);
        XfsBufs {
            state: vec![0; clusters],
            lru_ref: vec![0; clusters],
            pfns: vec![NIL; clusters * CLUSTER_PAGES as usize],
            lru: ListLru::new(1, clusters),
            ili_slab: vec![NIL; nr_files],
            ..Default::default()
        }
    }

    /// `xfs_buftarg_shrink_count()`: buffers on the LRU.
    pub fn lru_count(&self) -> u64 {
        self.lru.count(0)
    }

    fn lru_add(&mut self, c: u32) {
        self.lru.add(0, c);
        self.state[c as usize] |= bs::LRU;
    }

    fn lru_del(&mut self, c: u32) {
        self.lru.del(0, c);
        self.state[c as usize] &= !bs::LRU;
    }

    fn has(&self, c: u32, bit: u8) -> bool {
        self.state[c as usize] & bit != 0
    }
}

/// Pages per file that creating `files` files allocates by migratetype, as (RECLAIMABLE,
/// UNMOVABLE), counting whole slabs and chunks: the dentries (21 a page) and `xfs_inode`s
/// (34 per order-3 slab), and the `xfs_ili` objects (26 a page) and inode cluster buffers
/// (8 pages per chunk of 64). The formula the tests check the model against.
pub fn create_pages(files: u64) -> (u64, u64) {
    use crate::slab::{DENTRY_CACHE, INODE_CACHE, XFS_ILI_CACHE};
    let slabs =
        |spec: crate::slab::CacheSpec| files.div_ceil(spec.objs_per_slab() as u64) << spec.order;
    let chunks = files.div_ceil(INODES_PER_CHUNK as u64);
    let per_chunk = (INODES_PER_CHUNK / INODES_PER_CLUSTER * CLUSTER_PAGES) as u64;
    (
        slabs(DENTRY_CACHE) + slabs(INODE_CACHE),
        slabs(XFS_ILI_CACHE) + chunks * per_chunk,
    )
}

impl Mm {
    /// The XFS part of creating a new inode for file `fid` (`xfs_dir_ialloc()`): allocate
    /// the inode chunk's cluster buffers if its chunk is new (`xfs_ialloc_ag_alloc()`).
    /// Called before the `xfs_inode` is allocated, as `xfs_dialloc()` runs before
    /// `xfs_iget()`.
    pub(crate) fn xfs_ialloc(&mut self, ctx: &mut Ctx, fid: u32) {
        let chunk = fid / INODES_PER_CHUNK;
        let per = INODES_PER_CHUNK / INODES_PER_CLUSTER;
        let first = chunk * per;
        let nclusters = self.fs.xfs.state.len() as u32;
        if self.fs.xfs.has(first, bs::CHUNK) {
            return;
        }
        for c in first..(first + per).min(nclusters) {
            self.fs.xfs.state[c as usize] |= bs::CHUNK;
            if self.xfs_buf_alloc(ctx, c) {
                self.fs.xfs.state[c as usize] |= bs::HELD;
                self.fs.xfs.allocated += 1;
            }
        }
    }

    /// `xfs_trans_ijoin()` of the new inode → `xfs_inode_item_init()`: the inode log item.
    /// Returns false when the slab allocation failed.
    pub(crate) fn xfs_inode_item_init(&mut self, ctx: &mut Ctx, fid: u32) -> bool {
        if self.fs.xfs.ili_slab[fid as usize] != NIL {
            return true;
        }
        match self.slab_alloc(ctx, XFS_ILI, 0) {
            Some(id) => {
                self.fs.xfs.ili_slab[fid as usize] = id;
                true
            }
            None => false,
        }
    }

    /// `xfs_fs_destroy_inode()` → `xfs_inode_set_reclaim_tag()`: the VFS has evicted file
    /// `fid`'s inode (`evict()`); its `xfs_inode` and log item stay allocated, tagged for
    /// reclaim. The AG's first reclaimable inode queues the reclaim worker
    /// (`xfs_perag_set_reclaim_tag()`). `xfs_inactive()` does nothing here: the file is
    /// still linked and a one-page file has no post-EOF blocks.
    pub(crate) fn xfs_inode_set_reclaim_tag(&mut self, fid: u32) {
        let ic = &mut self.fs.icache;
        let first = ic.reclaimable.count == 0;
        ic.reclaimable.insert(fid);
        ic.max_reclaimable = ic.max_reclaimable.max(ic.reclaimable.count);
        if first {
            self.xfs_reclaim_work_queue();
        }
    }

    /// `xfs_reclaim_work_queue()`: queue the reclaim worker [`RECLAIM_WORK_DELAY_NS`] from
    /// now if an inode is tagged for reclaim (`queue_delayed_work()` leaves an already
    /// queued work alone).
    fn xfs_reclaim_work_queue(&mut self) {
        let ic = &mut self.fs.icache;
        if ic.reclaimable.count > 0 && ic.work_due == u64::MAX {
            ic.work_due = ic.clock + RECLAIM_WORK_DELAY_NS;
        }
    }

    /// `xfs_iget()` finding file `fid`'s inode reclaimable (`xfs_iget_cache_hit()` with
    /// `XFS_IRECLAIMABLE`): recycle it (`xfs_reinit_inode()`, the tag cleared) instead of
    /// allocating another. Returns false if it was not reclaimable.
    pub(crate) fn xfs_iget_recycle(&mut self, fid: u32) -> bool {
        self.fs.icache.reclaimable.remove(fid)
    }

    /// `xfs_reclaim_inode()` of a clean, unpinned inode: free its `xfs_inode`
    /// (`__xfs_inode_free()`; RCU-delayed in the kernel, at once here) and with it the log
    /// item (`xfs_inode_free_callback()` → `xfs_inode_item_destroy()`).
    fn xfs_reclaim_inode(&mut self, fid: u32) {
        self.fs.icache.reclaimable.remove(fid);
        let f = fid as usize;
        let id = std::mem::replace(&mut self.fs.inode_slab[f], NIL);
        self.slab_free(crate::slab::INODE, id, self.fs.memcg[f]);
        self.xfs_inode_item_destroy(fid);
    }

    /// `xfs_reclaim_inodes_ag()` over the one AG, trylock mode (both callers in v5.3 pass
    /// `SYNC_TRYLOCK`): from `pag_ici_reclaim_cursor`, gang-look-up up to
    /// [`LOOKUP_BATCH`] tagged inodes, reclaim them, and charge a whole batch to
    /// `nr_to_scan`, while the lookup finds some and `nr_to_scan` stays positive. A walk
    /// that reaches the end of the tree resets the cursor to 0; otherwise it saves where
    /// it stopped. Every inode the model tags is clean and unpinned (see the module doc),
    /// so each one found is freed: `SYNC_WAIT`'s flush and unpin waits have nothing to
    /// wait for. Returns the inodes freed.
    fn xfs_reclaim_inodes_ag(&mut self, mut nr_to_scan: i64) -> u64 {
        let mut first_index = self.fs.icache.cursor;
        let mut done = false;
        let mut freed = 0u64;
        let mut batch = Vec::with_capacity(LOOKUP_BATCH as usize);
        loop {
            batch.clear();
            let tags = &self.fs.icache.reclaimable;
            let mut at = tags.next_from(first_index);
            while let Some(fid) = at {
                batch.push(fid);
                if batch.len() == LOOKUP_BATCH as usize {
                    break;
                }
                at = tags.next_from(fid + 1);
            }
            let Some(&last) = batch.last() else {
                done = true;
                break;
            };
            for &fid in &batch {
                self.xfs_reclaim_inode(fid);
            }
            freed += batch.len() as u64;
            first_index = last + 1;
            nr_to_scan -= LOOKUP_BATCH;
            if nr_to_scan <= 0 {
                break;
            }
        }
        self.fs.icache.cursor = if done { 0 } else { first_index };
        freed
    }

    /// `xfs_fs_free_cached_objects()` → `xfs_reclaim_inodes_nr()`: the superblock
    /// shrinker's share for XFS's own objects. Kicks the background worker, then reclaims
    /// from the cursor, `nr_to_scan` charged by batch ([`Mm::xfs_reclaim_inodes_ag`]); the
    /// AIL push it also starts is not modelled (the model's tagged inodes are already
    /// written). Returns 0 as v5.3 does (`xfs_reclaim_inodes_ag()`'s error code): the
    /// inodes freed do not count in `super_cache_scan()`'s freed objects.
    pub(crate) fn xfs_reclaim_inodes_nr(&mut self, nr_to_scan: u64) -> u64 {
        self.xfs_reclaim_work_queue();
        let n = self.xfs_reclaim_inodes_ag(nr_to_scan.min(i32::MAX as u64) as i64);
        self.fs.icache.reclaimed_shrinker += n;
        0
    }

    /// The background reclaim worker (`xfs_reclaim_worker()`: `xfs_reclaim_inodes()` with
    /// `SYNC_TRYLOCK` and no scan limit, then `xfs_reclaim_work_queue()`), run by
    /// [`Mm::run_background`] when due at `now`. A kworker outside reclaim: the slab pages
    /// it frees are no reclaimer's (`reclaim_state` is left as it was); its CPU time is not
    /// modelled.
    pub(crate) fn xfs_reclaim_worker(&mut self, now: u64) {
        self.fs.icache.clock = now;
        if now < self.fs.icache.work_due {
            return;
        }
        self.fs.icache.work_due = u64::MAX;
        self.fs.icache.worker_runs += 1;
        let saved = self.slab.reclaimed;
        let n = self.xfs_reclaim_inodes_ag(i32::MAX as i64);
        self.slab.reclaimed = saved;
        self.fs.icache.reclaimed_worker += n;
        self.xfs_reclaim_work_queue();
    }

    /// `xfs_inode_item_destroy()`: the inode is freed, and its log item with it.
    pub(crate) fn xfs_inode_item_destroy(&mut self, fid: u32) {
        let id = std::mem::replace(&mut self.fs.xfs.ili_slab[fid as usize], NIL);
        if id != NIL {
            self.slab_free(XFS_ILI, id, 0);
        }
    }

    /// The model's metadata writeback wrote file `fid`'s inode: `xfs_iflush()` finds the
    /// cluster buffer (reading it back if the shrinker freed it), writes the cluster and
    /// releases the buffer to the LRU (`xfs_buf_rele()`; one already there keeps its place).
    pub(crate) fn xfs_iflush(&mut self, ctx: &mut Ctx, fid: u32) {
        let c = fid / INODES_PER_CLUSTER;
        let x = &mut self.fs.xfs;
        if !x.has(c, bs::PRESENT) {
            if !self.xfs_buf_alloc(ctx, c) {
                return;
            }
            self.fs.xfs.reread += 1;
        }
        let x = &mut self.fs.xfs;
        x.state[c as usize] &= !bs::HELD;
        if !x.has(c, bs::LRU) {
            x.lru_add(c);
        }
    }

    /// `xfs_buf_allocate_memory()` for cluster `c`: [`CLUSTER_PAGES`] order-0 GFP_NOFS
    /// (UNMOVABLE) pages; a new buffer's `b_lru_ref` is 1. Returns false (and frees what it
    /// got) when a page could not be allocated: the kernel retries such an allocation
    /// forever; the model leaves the buffer absent.
    fn xfs_buf_alloc(&mut self, ctx: &mut Ctx, c: u32) -> bool {
        let base = (c * CLUSTER_PAGES) as usize;
        for i in 0..CLUSTER_PAGES as usize {
            match self.alloc_kernel_pages(ctx, 0, Gfp::KERNEL) {
                Some(p) => self.fs.xfs.pfns[base + i] = p,
                None => {
                    for j in 0..i {
                        let p = std::mem::replace(&mut self.fs.xfs.pfns[base + j], NIL);
                        self.free_kernel_pages(p);
                    }
                    return false;
                }
            }
        }
        let x = &mut self.fs.xfs;
        x.state[c as usize] |= bs::PRESENT;
        x.lru_ref[c as usize] = NEW_BUF_LRU_REF;
        x.nr_bufs += 1;
        x.nr_pages += CLUSTER_PAGES as u64;
        true
    }

    /// `xfs_buftarg_shrink_scan()` over `nr_to_walk` buffers from the head of the LRU
    /// (`xfs_buftarg_isolate()`: a buffer with `b_lru_ref` left loses one and is rotated,
    /// one without is freed). Returns (walked, freed).
    pub fn xfs_buftarg_shrink_scan(&mut self, nr_to_walk: u64) -> (u64, u64) {
        let mut walked = 0;
        let mut freed = 0;
        let count_reclaimed = self.cfg.kernel >= BUF_FREE_COUNTS_AS_RECLAIMED;
        while walked < nr_to_walk {
            let c = self.fs.xfs.lru.head(0);
            if c == NIL {
                break;
            }
            walked += 1;
            let x = &mut self.fs.xfs;
            x.lru_del(c);
            if x.lru_ref[c as usize] > 0 {
                x.lru_ref[c as usize] -= 1;
                x.lru_add(c);
                continue;
            }
            x.state[c as usize] &= !bs::PRESENT;
            x.nr_bufs -= 1;
            x.nr_pages -= CLUSTER_PAGES as u64;
            x.freed += 1;
            let base = (c * CLUSTER_PAGES) as usize;
            for i in 0..CLUSTER_PAGES as usize {
                let p = std::mem::replace(&mut self.fs.xfs.pfns[base + i], NIL);
                self.free_kernel_pages(p);
            }
            if count_reclaimed {
                self.slab.reclaimed += CLUSTER_PAGES as u64;
            }
            freed += 1;
        }
        (walked, freed)
    }

    /// The buffer target's shrinker in `shrink_slab()` (root memcg only: it is not memcg
    /// aware): `do_shrink_slab()` with `DEFAULT_SEEKS` and the default batch
    /// (`SHRINK_BATCH`) over [`XfsBufs::lru_count`]. Returns (buffers freed, scanned).
    pub(crate) fn shrink_xfs_buftarg(&mut self, priority: i32) -> (u64, u64) {
        let freeable = self.fs.xfs.lru_count();
        if freeable == 0 {
            return (0, 0);
        }
        let mut deferred = self.fs.xfs.nr_deferred;
        let r = do_shrink_slab_as(
            self.cfg.kernel,
            freeable,
            &mut deferred,
            priority,
            DEFAULT_SEEKS,
            SHRINK_BATCH,
            |n| {
                let (scanned, freed) = self.xfs_buftarg_shrink_scan(n);
                ScanResult::Done { scanned, freed }
            },
        );
        self.fs.xfs.nr_deferred = deferred;
        r
    }

    /// Invariants of the cluster buffers: every present buffer's pages are order-0 kernel
    /// pages, counts add up, the LRU holds exactly the buffers marked on it, and a held
    /// buffer is not on it.
    pub fn check_xfs(&self) -> Result<(), String> {
        let x = &self.fs.xfs;
        let (mut bufs, mut on_lru) = (0u64, 0u64);
        for (c, &s) in x.state.iter().enumerate() {
            let base = c * CLUSTER_PAGES as usize;
            let pfns = &x.pfns[base..base + CLUSTER_PAGES as usize];
            if s & bs::PRESENT == 0 {
                if s & (bs::LRU | bs::HELD) != 0 || pfns.iter().any(|&p| p != NIL) {
                    return Err(format!("cluster {c}: absent buffer in state {s:#x}"));
                }
                continue;
            }
            bufs += 1;
            if s & bs::LRU != 0 {
                on_lru += 1;
                if s & bs::HELD != 0 {
                    return Err(format!("cluster {c}: held buffer on the LRU"));
                }
            }
            for &p in pfns {
                if p == NIL
                    || !self.pages.test(p, crate::page::pg::HEAD)
                    || self.pages.obj[p as usize] != NIL
                    || self.pages.hot[p as usize].order != 0
                {
                    return Err(format!(
                        "cluster {c}: page {p} is not an order-0 kernel page"
                    ));
                }
            }
        }
        if bufs != x.nr_bufs || bufs * CLUSTER_PAGES as u64 != x.nr_pages {
            return Err(format!(
                "{bufs} cluster buffers found, counted {} with {} pages",
                x.nr_bufs, x.nr_pages
            ));
        }
        if on_lru != x.lru_count() {
            return Err(format!(
                "{on_lru} buffers marked on the LRU of {}",
                x.lru_count()
            ));
        }
        // A tagged inode is one the VFS evicted (no I_NEW/in-use state left) and whose
        // xfs_inode is still allocated.
        let tags = &self.fs.icache.reclaimable;
        let mut at = tags.next_from(0);
        while let Some(fid) = at {
            let f = fid as usize;
            if self.fs.state[f] & crate::fs::fst::INODE != 0 || self.fs.inode_slab[f] == NIL {
                return Err(format!(
                    "file {fid} tagged reclaimable but in the VFS's use or without an xfs_inode"
                ));
            }
            at = tags.next_from(fid + 1);
        }
        let ili = x.ili_slab.iter().filter(|&&i| i != NIL).count() as u64;
        if ili != self.slab.caches[XFS_ILI].nr_objects {
            return Err(format!(
                "{ili} inode log items for {} xfs_ili objects",
                self.slab.caches[XFS_ILI].nr_objects
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{DirCfg, FsCfg};
    use crate::mmzone::mt;
    use crate::slab::{DENTRY, INODE};
    use crate::testutil::*;
    use crate::vmstat::Ev;
    use crate::*;

    /// A machine of `pages` pages under `kernel`'s rules whose object 1 is a directory of
    /// 1-page files.
    fn xfs_mm(pages: u64, kernel: KernelVersion) -> Mm {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, pages);
        cfg.objects[1].exists = false;
        cfg.fs = FsCfg {
            dirs: vec![DirCfg {
                obj: 1,
                file_pages: 1,
            }],
            ..Default::default()
        };
        cfg.kernel = kernel;
        Mm::new(cfg)
    }

    fn create(mm: &mut Mm, files: std::ops::Range<u32>, fsync: bool) {
        let mut io = InstantIo;
        for k in files {
            let mut ctx = Ctx::new(0, &mut io, 0);
            mm.fs_create(&mut ctx, 1, k, 1, fsync);
            assert!(!ctx.oom, "OOM creating file {k}");
        }
    }

    /// Per-file allocations, hand-computed for 640 files: dentries 640 / 21 -> 31 pages and
    /// xfs_inodes 640 / 32 -> 20 order-3 slabs, 160 pages (RECLAIMABLE); xfs_ili
    /// 640 / 26 -> 25 pages and 10 inode chunks of two 16 KiB cluster buffers, 80 pages
    /// (UNMOVABLE). The model allocates exactly that, and the UNMOVABLE slab is the log
    /// items', charged to no memcg.
    #[test]
    fn creating_files_allocates_log_items_and_cluster_buffers_per_chunk() {
        assert_eq!(create_pages(640), (31 + 160, 25 + 80));
        assert_eq!(create_pages(1), (1 + 8, 1 + 8));
        let mut mm = xfs_mm(16384, KernelVersion::default());
        let kernel0 = mm.node.nr_kernel_pages;
        create(&mut mm, 0..640, true);
        let c = &mm.slab.caches;
        assert_eq!(c[DENTRY].pages() + c[INODE].pages(), 191);
        assert_eq!((c[XFS_ILI].nr_objects, c[XFS_ILI].pages()), (640, 25));
        assert_eq!(
            mm.slab.node_pages().1,
            25,
            "nr_slab_unreclaimable: the log items"
        );
        assert_eq!((mm.fs.xfs.nr_bufs, mm.fs.xfs.nr_pages), (20, 80));
        assert_eq!(mm.fs.xfs.allocated, 20);
        // Each object charged: 640 dentries and inodes, not the log items.
        assert_eq!(mm.slab.memcg_bytes[0], [640 * (192 + 1024), 0]);
        let slab_pages = mm.slab.node_pages().0 + mm.slab.node_pages().1;
        assert_eq!(mm.node.nr_kernel_pages - kernel0, slab_pages + 80);
        // fsync wrote every inode: each cluster buffer is on the LRU.
        assert_eq!(mm.fs.xfs.lru_count(), 20);
        mm.check_invariants().unwrap();
    }

    /// The buffer target's shrinker: 20 cluster buffers (b_lru_ref 1) on the LRU. At
    /// priority 12, delta = (20 >> 12) * 4 / 2 = 0: nothing. At priority 0, delta = 40 =
    /// twice the count: one call of 40 walks every buffer twice, rotating it (b_lru_ref 1
    /// -> 0), then freeing it: 20 buffers, 80 pages, 40 objects in slabs_scanned. v5.3's
    /// xfs_buf_free() does not add the pages to reclaim_state; v5.14+ does.
    #[test]
    fn buftarg_shrinker_rotates_then_frees_cluster_buffers() {
        for (kernel, reclaimed) in [
            (KernelVersion::new(5, 3), 0),
            (KernelVersion::new(6, 18), 80),
        ] {
            let mut mm = xfs_mm(16384, kernel);
            create(&mut mm, 0..640, true);
            let kernel0 = mm.node.nr_kernel_pages;
            mm.slab.reclaimed = 0;
            assert_eq!(mm.shrink_xfs_buftarg(12), (0, 0));
            assert_eq!(mm.shrink_xfs_buftarg(0), (20, 40));
            assert_eq!((mm.fs.xfs.nr_bufs, mm.fs.xfs.freed), (0, 20));
            assert_eq!(kernel0 - mm.node.nr_kernel_pages, 80);
            assert_eq!(mm.slab.reclaimed, reclaimed, "{kernel:?}");
            // shrink_slab() runs it for the root memcg and counts its scans.
            let mut mm = xfs_mm(16384, kernel);
            create(&mut mm, 0..640, true);
            let scanned0 = mm.ev.get(Ev::SlabsScanned);
            mm.shrink_slab(0, 0, true);
            assert_eq!(mm.fs.xfs.nr_bufs, 0);
            assert!(mm.ev.get(Ev::SlabsScanned) - scanned0 >= 40);
            mm.check_invariants().unwrap();
        }
    }

    /// A flush of an inode whose cluster buffer the shrinker freed reads the buffer back
    /// (four new pages); a chunk's buffers stay held, off the LRU, until an inode of their
    /// cluster is written, and evicting an inode frees its log item.
    #[test]
    fn cluster_buffers_are_held_until_written_and_read_back_after_reclaim() {
        let mut mm = xfs_mm(16384, KernelVersion::new(5, 3));
        // 40 files: chunk 0's two buffers; cluster 1 holds files 32..40, none written.
        create(&mut mm, 0..40, false);
        assert_eq!((mm.fs.xfs.nr_bufs, mm.fs.xfs.lru_count()), (2, 0));
        assert_eq!(
            mm.shrink_xfs_buftarg(0),
            (0, 0),
            "held buffers are not on the LRU"
        );
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.writeback_file(&mut ctx, 1, u64::MAX, BioOp::WriteSync);
        assert_eq!(mm.fs.xfs.lru_count(), 2);
        assert_eq!(mm.shrink_xfs_buftarg(0), (2, 4));
        // File 40 is re-dirtied by a re-create of its data and written: its cluster buffer
        // is read back.
        create(&mut mm, 40..41, true);
        assert_eq!((mm.fs.xfs.reread, mm.fs.xfs.nr_bufs), (1, 1));
        // Dropping the dentries and inodes evicts every inode; XFS's reclaim worker then
        // frees what the shrinker's share left, and every log item with its inode.
        mm.drop_caches(2);
        assert_eq!(mm.fs.nr_inodes, 0);
        mm.run_background(RECLAIM_WORK_DELAY_NS);
        assert_eq!(mm.slab.caches[XFS_ILI].nr_objects, 0);
        mm.check_invariants().unwrap();
    }

    /// 640 written files whose dentries and inodes the VFS pruned, as `super_cache_scan()`
    /// would: evict their inodes. `prune_icache_sb()` -> `evict()` -> `xfs_fs_destroy_inode()`.
    fn create_and_evict(mm: &mut Mm, files: u32) {
        create(mm, 0..files, true);
        assert_eq!(mm.prune_dcache_sb(0, 10_000).1, files as u64);
        assert_eq!(mm.prune_icache_sb(0, 10_000, false).1, files as u64);
        assert_eq!(mm.fs.nr_inodes, 0);
    }

    /// An evicted inode's memory stays until XFS reclaims it: after the VFS evicted 640
    /// inodes their 640 xfs_inodes (160 pages of order-3 slabs) and 640 log items are still
    /// allocated and charged, tagged reclaimable; the worker, queued 5 s after the first
    /// tag (xfs_perag_set_reclaim_tag()), has not run a nanosecond before; at 5 s it frees
    /// them all, and the slab pages they emptied, without crediting any reclaimer. A
    /// re-create finding its inode still reclaimable recycles it instead of allocating one:
    /// file 7's inode and log item keep the first inode slab and log-item page, and the
    /// caches keep their current (last) slab and page though empty: 16 and 2 pages left.
    #[test]
    fn an_evicted_inode_keeps_its_memory_until_xfs_reclaims_it() {
        let mut mm = xfs_mm(16384, KernelVersion::new(5, 3));
        create_and_evict(&mut mm, 640);
        let c = &mm.slab.caches;
        assert_eq!((c[INODE].nr_objects, c[INODE].pages()), (640, 160));
        assert_eq!(c[XFS_ILI].nr_objects, 640);
        assert_eq!(
            mm.slab.memcg_bytes[0][0],
            640 * 1024,
            "the dentries are gone"
        );
        assert_eq!(mm.fs.icache.count(), 640);
        assert_eq!(mm.super_cache_count(0), 640, "nr_cached_objects");
        assert_eq!(mm.fs.icache.work_due, RECLAIM_WORK_DELAY_NS);
        mm.check_invariants().unwrap();
        // Re-creating file 7 recycles its xfs_inode: no new object.
        create(&mut mm, 7..8, true);
        assert_eq!(mm.slab.caches[INODE].nr_objects, 640);
        assert_eq!((mm.fs.nr_inodes, mm.fs.icache.count()), (1, 639));
        mm.check_invariants().unwrap();
        mm.run_background(RECLAIM_WORK_DELAY_NS - 1);
        assert_eq!(mm.fs.icache.count(), 639);
        let reclaimed0 = mm.slab.reclaimed;
        mm.run_background(RECLAIM_WORK_DELAY_NS);
        let c = &mm.slab.caches;
        assert_eq!((c[INODE].nr_objects, c[INODE].pages()), (1, 16));
        assert_eq!((c[XFS_ILI].nr_objects, c[XFS_ILI].pages()), (1, 2));
        assert_eq!(mm.slab.memcg_bytes[0][0], 192 + 1024);
        assert_eq!(
            mm.slab.reclaimed, reclaimed0,
            "the worker reclaims for nobody"
        );
        assert_eq!(
            (mm.fs.icache.reclaimed_worker, mm.fs.icache.worker_runs),
            (639, 1)
        );
        assert_eq!(
            mm.fs.icache.work_due,
            u64::MAX,
            "nothing tagged: not requeued"
        );
        mm.check_invariants().unwrap();
    }

    /// The reclaim tag's lookup across words (64 inodes) and summary words (4096).
    #[test]
    fn reclaim_tag_lookup_finds_the_next_tagged_inode() {
        let mut t = TagBitmap::new(10_000);
        for i in [3, 64, 4095, 4096, 9_999] {
            assert!(t.insert(i));
        }
        assert!(!t.insert(64));
        let next: Vec<_> = [0, 4, 65, 4096, 4097, 10_000]
            .iter()
            .map(|&i| t.next_from(i))
            .collect();
        assert_eq!(
            next,
            [Some(3), Some(64), Some(4095), Some(4096), Some(9_999), None]
        );
        assert!(t.remove(4095) && !t.remove(4095));
        assert_eq!((t.next_from(65), t.count), (Some(4096), 4));
        assert!(t.remove(4096) && t.remove(9_999));
        assert_eq!(t.next_from(65), None);
    }

    /// `xfs_reclaim_inodes_nr()` charges a whole lookup batch of 32 to its count and walks
    /// from the AG's cursor: with 100 reclaimable inodes, a count of 5 frees one batch (32,
    /// cursor 32); 40 frees two (64, cursor 96); 100 frees the last 4, finds nothing more
    /// and puts the cursor back to 0. Each call queues the worker; none reports what it
    /// freed. Through `shrink_slab()` (v5.3's do_shrink_slab(), priority 0): 640
    /// reclaimable inodes and empty LRUs count 640, delta = 640 * 4 / 2 = 1280, one batch
    /// of 1024 whose fs share is 1024 * 640 / 641 = 1022 (+ 1 = 1023: 32 lookups) frees all
    /// 640; 256 left is below both the batch and the count. slabs_scanned gains those 1024
    /// and the buffer shrinker's 40 (20 buffers, delta 40), and shrink_slab() returns 0
    /// freed objects.
    #[test]
    fn free_cached_objects_reclaims_by_lookup_batch_from_the_cursor() {
        let mut mm = xfs_mm(16384, KernelVersion::new(5, 3));
        create_and_evict(&mut mm, 100);
        mm.fs.icache.work_due = u64::MAX;
        assert_eq!(mm.xfs_reclaim_inodes_nr(5), 0);
        assert_eq!((mm.fs.icache.count(), mm.fs.icache.cursor), (68, 32));
        assert_eq!(mm.fs.icache.work_due, RECLAIM_WORK_DELAY_NS);
        assert_eq!(mm.xfs_reclaim_inodes_nr(40), 0);
        assert_eq!((mm.fs.icache.count(), mm.fs.icache.cursor), (4, 96));
        assert_eq!(mm.xfs_reclaim_inodes_nr(100), 0);
        assert_eq!((mm.fs.icache.count(), mm.fs.icache.cursor), (0, 0));
        assert_eq!(mm.fs.icache.reclaimed_shrinker, 100);
        mm.check_invariants().unwrap();

        let mut mm = xfs_mm(16384, KernelVersion::new(5, 3));
        create_and_evict(&mut mm, 640);
        let scanned0 = mm.ev.get(Ev::SlabsScanned);
        assert_eq!(
            mm.shrink_slab(0, 0, true),
            20,
            "only the 20 cluster buffers"
        );
        assert_eq!(mm.fs.icache.count(), 0);
        assert_eq!(mm.ev.get(Ev::SlabsScanned) - scanned0, 1024 + 40);
        assert_eq!(mm.shrinker.nr_deferred[0], 1280 - 1024);
        mm.check_invariants().unwrap();
    }

    /// Unmovable metadata among the page cache, v5.3's rules: memory is MOVABLE pageblocks
    /// with every other page free (order-0 holes between pages in use, as a page cache
    /// reclaimed out of order leaves them) and no free pageblock. Creating a file of a new
    /// chunk allocates its cluster buffers and log item as UNMOVABLE pages with no
    /// UNMOVABLE free page: they fall back below pageblock order (`mm_page_alloc_extfrag`
    /// fragmenting) and `steal_suitable_fallback()` boosts the watermark. With a whole free
    /// pageblock left, `__rmqueue_fallback()` takes that largest block for the first buffer
    /// page instead (`whole_pageblock`, no boost for it).
    #[test]
    fn unmovable_metadata_among_page_cache_falls_back_and_boosts_under_5_3() {
        for whole_block in [false, true] {
            let mut mm = xfs_mm(4096, KernelVersion::new(5, 3));
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            let movable = Gfp {
                mt: mt::MOVABLE,
                ..Gfp::NOWAIT
            };
            let mut got = Vec::new();
            while let Some(p) = mm.alloc_kernel_pages(&mut ctx, 0, movable) {
                got.push(p);
            }
            got.sort_unstable();
            // Pageblock 2 (pfns 1024..1536) is the one a whole free block may be left in.
            let block = 1024..1536;
            for &p in got.iter().step_by(2) {
                if !whole_block || !block.contains(&p) {
                    mm.free_kernel_pages(p);
                }
            }
            if whole_block {
                for &p in got.iter().filter(|&&p| block.contains(&p)) {
                    mm.free_kernel_pages(p);
                }
            }
            mm.zones[0].watermark_boost = 0;
            mm.zones[0].extfrag = Default::default();
            create(&mut mm, 0..1, false);
            let x = mm.zones[0].extfrag;
            let u = mt::UNMOVABLE as usize;
            if whole_block {
                // The first buffer page takes the largest free block, the whole pageblock.
                assert_eq!(x.whole_pageblock[u], 1, "{x:?}");
            } else {
                assert!(x.fragmenting[u] >= 1, "{x:?}");
                assert_eq!(x.whole_pageblock[u], 0, "{x:?}");
                assert!(x.boosts >= 1 && mm.zones[0].watermark_boost > 0, "{x:?}");
            }
            assert_eq!(mm.fs.xfs.nr_pages, 8);
            mm.check_invariants().unwrap();
        }
    }
}
