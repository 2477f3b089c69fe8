//! Dentries and inodes of created files (fs/dcache.c, fs/inode.c), the superblock's
//! `list_lru`s they are reclaimed from, and the metadata writeback that cleans new inodes.
//!
//! # The model
//! A *directory* is a file object whose page range is cut into files of `file_pages` pages
//! each (file `k` owns pages `[k * file_pages, (k + 1) * file_pages)`, so its page cache is
//! that range of the object and its data is laid out contiguously on the device). Creating
//! file `k` ([`Mm::fs_create`], the `create` phase's `Op::Create`) allocates an inode from the
//! inode cache and a dentry from the dentry cache (charged to the creator's memcg, see
//! [`crate::slab`]), dirties the inode (a new inode and its directory entry must reach the
//! journal before the inode may be freed), writes the file's pages through `file_write()`,
//! optionally fsyncs them, and closes the file: the dentry's last reference is dropped and it
//! goes on the tail of the superblock's dentry LRU (`dput()` → `retain_dentry()` →
//! `d_lru_add()`).
//!
//! The dentry holds a reference on its inode: an inode is on the inode LRU only once no
//! dentry points at it and it is clean (`iput_final()` → `inode_add_lru()`; a dirty inode is
//! added when writeback cleans it, `inode_sync_complete()`). Writeback of a created file's
//! data writes its inode with it ([`Mm::fs_data_written`], called for every page the
//! writeback submits): the inode becomes clean and its log record joins the journal, which is
//! written in 4 KiB blocks as records fill them.
//!
//! Reclaim goes through the superblock shrinker ([`crate::shrinker`]): `prune_dcache_sb()`
//! frees unused dentries from the head of the per-memcg dentry LRU (a referenced one is
//! rotated), which drops their inodes onto the inode LRU; `prune_icache_sb()` evicts unused
//! clean inodes, invalidating their clean page cache first (`inode_lru_isolate()`):
//! the pages invalidated are counted in `kswapd_inodesteal` / `pginodesteal` and reported as
//! reclaimed. An inode whose pages cannot all be invalidated (dirty, under writeback, mapped)
//! stays cached. An evicted inode's `xfs_inode` is freed later, by XFS's own inode reclaim
//! ([`crate::xfs`]).
//!
//! # Where we differ from the kernel
//! - v5.3's `inode_lru_isolate()` (the seed's kernel): any unused clean inode with page
//!   cache is invalidated and counted as an inode steal. Since v5.16 ("vfs: keep inodes
//!   with page cache off the inode shrinker LRU", `mapping_shrinkable()`), inodes with more
//!   page cache than the xarray head holds stay off the inode LRU until page reclaim empties
//!   them, and a one-page inode is freed with its page without counting a steal; the model
//!   keeps the v5.3 rule.
//! - `LRU_RETRY` after the invalidation is modelled as freeing the inode in the same step if
//!   its cache emptied, else rotating it to the LRU tail.
//! - The journal: one log record of [`INODE_LOG_BYTES`] per inode (inode core, directory
//!   entry and log-item overhead), written when its data is written; no log-space
//!   throttling. A file re-created after its inode was evicted gets a new inode.
//! - Negative dentries and directory inodes are not modelled. The filesystem is XFS: a new
//!   inode also allocates XFS's inode log item and, per inode chunk, its cluster buffers,
//!   the inode's write releases its cluster buffer to the buffer cache's LRU, and an
//!   evicted inode stays in memory until XFS's own inode reclaim frees it
//!   (`free_cached_objects` and the reclaim worker; [`crate::xfs`]).
//!
//! # Kernel references
//! fs/dcache.c `d_alloc()`, `dput()`, `retain_dentry()`, `d_lru_add()`, `dentry_lru_isolate()`,
//! `prune_dcache_sb()`; fs/inode.c `iput_final()`, `inode_add_lru()`, `inode_lru_isolate()`,
//! `prune_icache_sb()`, `evict()`; fs/fs-writeback.c `inode_sync_complete()`;
//! mm/truncate.c `invalidate_mapping_pages()`.

use crate::filemap::CACHE_PRESENT;
use crate::list::{LinkStore, Links, ListHead};
use crate::page::pg;
use crate::slab::{DENTRY, INODE};
use crate::types::*;
use crate::vmstat::Ev;
use crate::{BioOp, Ctx, Mm, Submitted};

/// Bytes of journal per created inode (see the module doc).
pub const INODE_LOG_BYTES: u64 = 512;
/// Device page offset of the metadata journal.
const LOG_SECTOR: u64 = 1 << 41;

/// One directory of created files (`MmConfig::fs.dirs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirCfg {
    /// The file object holding the files' page cache.
    pub obj: u32,
    /// Pages per file.
    pub file_pages: u32,
}

/// Filesystem and slab-reclaim configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsCfg {
    pub dirs: Vec<DirCfg>,
    /// `vm.vfs_cache_pressure` (default 100).
    pub vfs_cache_pressure: u64,
    /// v5.0–v5.2: kswapd does not shrink slab while it reclaims for a boosted watermark
    /// (`sc.may_shrinkslab = !nr_boost_reclaim`), removed by "mm, vmscan: do not
    /// special-case slab reclaim when watermarks are boosted" (v5.3).
    pub boosted_reclaim_skips_slab: bool,
}

impl Default for FsCfg {
    fn default() -> Self {
        FsCfg {
            dirs: Vec::new(),
            vfs_cache_pressure: 100,
            boosted_reclaim_skips_slab: false,
        }
    }
}

/// Per-file state bits.
pub mod fst {
    /// The dentry exists.
    pub const DENTRY: u8 = 1 << 0;
    /// The dentry is on the dentry LRU (`DCACHE_LRU_LIST`).
    pub const D_LRU: u8 = 1 << 1;
    /// `DCACHE_REFERENCED`.
    pub const D_REFERENCED: u8 = 1 << 2;
    /// The dentry is in use (open file, refcount > 0).
    pub const D_INUSE: u8 = 1 << 3;
    /// The inode exists (cached).
    pub const INODE: u8 = 1 << 4;
    /// On the inode LRU.
    pub const I_LRU: u8 = 1 << 5;
    /// `I_DIRTY`: not yet written to the journal.
    pub const I_DIRTY: u8 = 1 << 6;
    /// `I_REFERENCED`.
    pub const I_REFERENCED: u8 = 1 << 7;
}

/// A per-memcg `list_lru` over object ids (file ids for the dentry and inode LRUs; cluster
/// ids for XFS's buffer LRU, one list): entries are added at the tail and walked from the
/// head (`list_lru_add()`, `list_lru_walk_one()`).
#[derive(Clone, Debug, Default)]
pub struct ListLru {
    pub lists: Vec<ListHead>,
    prev: Vec<u32>,
    next: Vec<u32>,
}

impl ListLru {
    pub(crate) fn new(nr_memcgs: usize, nr_files: usize) -> Self {
        ListLru {
            lists: vec![ListHead::new(); nr_memcgs],
            prev: vec![NIL; nr_files],
            next: vec![NIL; nr_files],
        }
    }
    pub(crate) fn add(&mut self, memcg: usize, fid: u32) {
        Links {
            prev: &mut self.prev,
            next: &mut self.next,
        }
        .add_tail(&mut self.lists[memcg], fid);
    }
    pub(crate) fn del(&mut self, memcg: usize, fid: u32) {
        Links {
            prev: &mut self.prev,
            next: &mut self.next,
        }
        .del(&mut self.lists[memcg], fid);
    }
    /// `list_lru_shrink_count()` for one memcg.
    pub fn count(&self, memcg: usize) -> u64 {
        self.lists[memcg].len as u64
    }
    pub(crate) fn head(&self, memcg: usize) -> u32 {
        self.lists[memcg].head
    }
}

/// All dentries and inodes of the created files.
#[derive(Clone, Debug, Default)]
pub struct FsState {
    /// Directory index of each object (NIL: not a directory).
    pub dir_of_obj: Vec<u32>,
    /// Per directory: (object, first file id, files, pages per file).
    pub dirs: Vec<(u32, u32, u32, u32)>,
    /// Per file: [`fst`] bits.
    pub state: Vec<u8>,
    /// Per file: the memcg its dentry and inode are charged to.
    pub memcg: Vec<u16>,
    /// Per file: slab ids of its dentry and inode.
    pub dentry_slab: Vec<u32>,
    pub inode_slab: Vec<u32>,
    pub dentry_lru: ListLru,
    pub inode_lru: ListLru,
    /// Dentries and inodes allocated (`nr_dentry`, `nr_inodes`).
    pub nr_dentry: u64,
    pub nr_inodes: u64,
    /// Journal bytes logged but not yet written.
    pub log_pending: u64,
    /// Next journal block.
    pub log_block: u64,
    /// Files created (`Op::Create` handled).
    pub files_created: u64,
    /// XFS's inode cluster buffers and inode log items ([`crate::xfs`]).
    pub xfs: crate::xfs::XfsBufs,
    /// XFS's reclaimable inodes: evicted by the VFS, not yet freed ([`crate::xfs`]).
    pub icache: crate::xfs::XfsIcache,
}

impl FsState {
    pub fn new(dirs: &[DirCfg], objects: &[crate::ObjectCfg], nr_memcgs: usize) -> Self {
        let mut dir_of_obj = vec![NIL; objects.len()];
        let mut out = Vec::new();
        let mut next = 0u64;
        for (i, d) in dirs.iter().enumerate() {
            let pages = objects[d.obj as usize].size_pages;
            let files = pages / d.file_pages.max(1) as u64;
            dir_of_obj[d.obj as usize] = i as u32;
            out.push((d.obj, next as u32, files as u32, d.file_pages.max(1)));
            next += files;
        }
        assert!(next < NIL as u64, "more than 2^32 - 1 files");
        let n = next as usize;
        FsState {
            dir_of_obj,
            dirs: out,
            state: vec![0; n],
            memcg: vec![0; n],
            dentry_slab: vec![NIL; n],
            inode_slab: vec![NIL; n],
            dentry_lru: ListLru::new(nr_memcgs, n),
            inode_lru: ListLru::new(nr_memcgs, n),
            xfs: crate::xfs::XfsBufs::new(n),
            icache: crate::xfs::XfsIcache::new(n),
            ..Default::default()
        }
    }

    /// The file id of page `index` of directory object `obj`, if it is one.
    #[inline]
    pub fn file_of(&self, obj: u32, index: u64) -> Option<u32> {
        let d = *self.dir_of_obj.get(obj as usize)?;
        if d == NIL {
            return None;
        }
        let (_, base, files, fp) = self.dirs[d as usize];
        let k = index / fp as u64;
        (k < files as u64).then(|| base + k as u32)
    }

    /// (object, first page, pages) of file `fid`.
    pub fn file_range(&self, fid: u32) -> (u32, u64, u64) {
        let d = self
            .dirs
            .partition_point(|&(_, base, _, _)| base <= fid)
            .saturating_sub(1);
        let (obj, base, _, fp) = self.dirs[d];
        (obj, (fid - base) as u64 * fp as u64, fp as u64)
    }

    fn has(&self, fid: u32, bit: u8) -> bool {
        self.state[fid as usize] & bit != 0
    }
}

impl Mm {
    /// Kernel: the path walk of `open()` before a `read()` (`path_openat()` → `lookup_fast()`
    /// / `lookup_slow()`; v4.6 `d_alloc()`, the filesystem's `->lookup()` → `iget_locked()`
    /// / `alloc_inode()`) and the `dput()` after the read's `close()`, for every file of
    /// directory `obj` that pages `[page, page + nr)` cover. A file whose dentry is not
    /// cached gets an inode (unless its inode is still cached, on the inode LRU: taken off
    /// it, as `igrab()` does) and a dentry from their slab caches, charged to the reader's
    /// memcg; once the read is done the dentry has no user and stays cached on the tail of
    /// the dentry LRU (`retain_dentry()` → `d_lru_add()`), holding its inode. A dentry
    /// already on the LRU is marked referenced instead (`dput()`: `DCACHE_REFERENCED`), so
    /// `prune_dcache_sb()` rotates it once. Not modelled: the inode's read from disk on a
    /// cold lookup (an XFS inode cluster or ext4 inode table block), the directories'
    /// own dentries and inodes, and the CPU time of the walk. A file the read does not reach
    /// (past the directory's last whole file) is not looked up.
    pub fn fs_lookup(&mut self, ctx: &mut Ctx, obj: u32, page: u32, nr: u32) {
        let Some(first) = self.fs.file_of(obj, page as u64) else {
            return;
        };
        let last = self
            .fs
            .file_of(obj, page as u64 + nr.max(1) as u64 - 1)
            .unwrap_or(first);
        for fid in first..=last {
            let f = fid as usize;
            if self.fs.has(fid, fst::DENTRY) {
                if self.fs.has(fid, fst::D_LRU) {
                    self.fs.state[f] |= fst::D_REFERENCED;
                }
                continue;
            }
            if !self.fs.has(fid, fst::INODE) && self.fs_iget_reclaimable(fid) {
                // Recycled from XFS's reclaimable inodes, as a re-create does.
            } else if !self.fs.has(fid, fst::INODE) {
                if !self.fs_alloc_inode(ctx, fid) {
                    return;
                }
            } else if self.fs.has(fid, fst::I_LRU) {
                let m = self.fs.memcg[f] as usize;
                self.fs.inode_lru.del(m, fid);
                self.fs.state[f] &= !fst::I_LRU;
            }
            let m = self.fs.memcg[f];
            let Some(id) = self.slab_alloc(ctx, DENTRY, m) else {
                self.fs_inode_unused(fid);
                return;
            };
            self.fs.dentry_slab[f] = id;
            self.fs.state[f] |= fst::DENTRY | fst::D_LRU;
            self.fs.nr_dentry += 1;
            self.fs.dentry_lru.add(m as usize, fid);
        }
    }

    /// `alloc_inode()` for file `fid`: an inode from its slab cache, charged to the
    /// allocating task's memcg, in the VFS's use. Returns false if the slab allocation
    /// failed (the caller gives up). Shared by a lookup and a create.
    fn fs_alloc_inode(&mut self, ctx: &mut Ctx, fid: u32) -> bool {
        let Some(id) = self.slab_alloc(ctx, INODE, ctx.memcg) else {
            return false;
        };
        let f = fid as usize;
        self.fs.inode_slab[f] = id;
        self.fs.memcg[f] = ctx.memcg;
        self.fs.state[f] |= fst::INODE;
        self.fs.nr_inodes += 1;
        true
    }

    /// `xfs_iget()` for file `fid`, whose inode the VFS evicted: if it is still in XFS's
    /// cache, tagged reclaimable, `xfs_iget_cache_hit()` recycles it (its `xfs_inode`,
    /// memcg charge and log item are still there) and it is the VFS's inode again. Returns
    /// false if XFS has already reclaimed it (the caller allocates a new one). Both a
    /// lookup ([`Mm::fs_lookup`]) and a re-create ([`Mm::fs_create`]) go through it.
    fn fs_iget_reclaimable(&mut self, fid: u32) -> bool {
        if !self.xfs_iget_recycle(fid) {
            return false;
        }
        self.fs.state[fid as usize] |= fst::INODE;
        self.fs.nr_inodes += 1;
        true
    }

    /// `Op::Create`: create (or re-create) the file at page `page` of directory `obj`, write
    /// its `nr` pages, fsync it if asked, close it. See the module doc.
    pub fn fs_create(&mut self, ctx: &mut Ctx, obj: u32, page: u32, nr: u32, fsync: bool) {
        let Some(fid) = self.fs.file_of(obj, page as u64) else {
            // Not a directory: an ordinary write.
            self.file_write(ctx, obj, page, nr);
            return;
        };
        let f = fid as usize;
        if !self.fs.has(fid, fst::INODE) && self.fs_iget_reclaimable(fid) {
            // Recycled from XFS's reclaimable inodes.
        } else if !self.fs.has(fid, fst::INODE) {
            // xfs_dialloc(): a new inode chunk's cluster buffers, then xfs_iget()'s
            // xfs_inode (alloc_inode()) and xfs_trans_ijoin()'s inode log item.
            self.xfs_ialloc(ctx, fid);
            if !self.fs_alloc_inode(ctx, fid) {
                return;
            }
            if !self.xfs_inode_item_init(ctx, fid) {
                self.fs_inode_unused(fid);
                return;
            }
        } else if self.fs.has(fid, fst::I_LRU) {
            // igrab(): in use again.
            let m = self.fs.memcg[f] as usize;
            self.fs.inode_lru.del(m, fid);
            self.fs.state[f] &= !fst::I_LRU;
        }
        if !self.fs.has(fid, fst::DENTRY) {
            let m = self.fs.memcg[f];
            let Some(id) = self.slab_alloc(ctx, DENTRY, m) else {
                self.fs_inode_unused(fid);
                return;
            };
            self.fs.dentry_slab[f] = id;
            self.fs.state[f] |= fst::DENTRY;
            self.fs.nr_dentry += 1;
        } else if self.fs.has(fid, fst::D_LRU) {
            let m = self.fs.memcg[f] as usize;
            self.fs.dentry_lru.del(m, fid);
            self.fs.state[f] &= !fst::D_LRU;
        }
        self.fs.state[f] |= fst::D_INUSE | fst::I_DIRTY;
        self.fs.files_created += 1;
        self.file_write(ctx, obj, page, nr);
        if fsync {
            self.fs_fsync_file(ctx, fid);
        }
        // close() -> dput(): the last reference; the dentry is retained on the LRU tail.
        self.fs.state[f] &= !fst::D_INUSE;
        let m = self.fs.memcg[f] as usize;
        self.fs.dentry_lru.add(m, fid);
        self.fs.state[f] |= fst::D_LRU;
    }

    /// fsync() of one created file: write its dirty pages (and with them its inode), then
    /// write the journal up to its record and wait for both.
    fn fs_fsync_file(&mut self, ctx: &mut Ctx, fid: u32) {
        let (obj, start, nr) = self.fs.file_range(fid);
        let o = &mut self.objects[obj as usize];
        let saved = o.wb_index;
        o.wb_index = start;
        // writeback_file() writes from the cursor; the file's pages are contiguous.
        let lo = o.dirty_lo;
        let hi = o.dirty_hi;
        let mut done = 0;
        if (start..start + nr).any(|k| {
            let e = self.objects[obj as usize].ent[k as usize];
            e & CACHE_PRESENT != 0 && self.pages.test(e as u32, pg::DIRTY)
        }) && lo < start + nr
            && start < hi
        {
            done = self.writeback_file(ctx, obj, nr, BioOp::WriteSync);
        }
        self.objects[obj as usize].wb_index = saved;
        let log = self.fs_log_flush(ctx, true);
        ctx.wait(done.max(log));
    }

    /// The dentry of `fid` is gone: drop its reference on the inode (`iput()` →
    /// `iput_final()`): a clean unused inode goes on the inode LRU.
    fn fs_inode_unused(&mut self, fid: u32) {
        let f = fid as usize;
        if self.fs.state[f] & (fst::DENTRY | fst::I_DIRTY | fst::I_LRU) == 0
            && self.fs.has(fid, fst::INODE)
        {
            let m = self.fs.memcg[f] as usize;
            self.fs.inode_lru.add(m, fid);
            self.fs.state[f] |= fst::I_LRU;
        }
    }

    /// Writeback submitted page `index` of object `obj`: if it belongs to a created file
    /// whose inode is dirty, the inode is written with it (its log record joins the journal)
    /// and, if unused, it goes on the inode LRU (`inode_sync_complete()`).
    pub(crate) fn fs_data_written(&mut self, ctx: &mut Ctx, obj: u32, index: u64) {
        let Some(fid) = self.fs.file_of(obj, index) else {
            return;
        };
        if !self.fs.has(fid, fst::I_DIRTY) {
            return;
        }
        self.fs.state[fid as usize] &= !fst::I_DIRTY;
        self.fs.log_pending += INODE_LOG_BYTES;
        self.fs_log_flush(ctx, false);
        self.xfs_iflush(ctx, fid);
        self.fs_inode_unused(fid);
    }

    /// Write the journal's full blocks (all of it, a partial block included, if `force`).
    /// Returns the completion time of the write (0 if none).
    fn fs_log_flush(&mut self, ctx: &mut Ctx, force: bool) -> u64 {
        let blocks = if force {
            self.fs.log_pending.div_ceil(4096)
        } else {
            self.fs.log_pending / 4096
        };
        if blocks == 0 {
            return 0;
        }
        self.fs.log_pending -= self.fs.log_pending.min(blocks * 4096);
        let sector = LOG_SECTOR + self.fs.log_block;
        self.fs.log_block += blocks;
        // Journal (log) blocks are written REQ_SYNC.
        let Submitted {
            done, cpu_ns: cpu, ..
        } = ctx.io.submit(
            self.cfg.fs_dev,
            ctx.now,
            BioOp::WriteSync,
            ctx.kswapd,
            sector,
            blocks as u32,
        );
        ctx.cpu_ns += cpu + self.cfg.costs.io_submit_ns;
        self.ev.add(Ev::PgpgOut, blocks * 4);
        done
    }

    /// Kernel: `prune_dcache_sb()` for memcg `memcg`: walk up to `nr_to_walk` dentries from
    /// the head of its dentry LRU (`dentry_lru_isolate()`): a referenced one loses the flag
    /// and is rotated, an unused one is freed (`shrink_dentry_list()` → `__dentry_kill()`),
    /// dropping its inode reference. Returns (walked, freed).
    pub fn prune_dcache_sb(&mut self, memcg: usize, nr_to_walk: u64) -> (u64, u64) {
        let mut walked = 0;
        let mut freed = 0;
        while walked < nr_to_walk {
            let fid = self.fs.dentry_lru.head(memcg);
            if fid == NIL {
                break;
            }
            walked += 1;
            let f = fid as usize;
            self.fs.dentry_lru.del(memcg, fid);
            if self.fs.has(fid, fst::D_REFERENCED) {
                self.fs.state[f] &= !fst::D_REFERENCED;
                self.fs.dentry_lru.add(memcg, fid);
                continue;
            }
            self.fs.state[f] &= !(fst::D_LRU | fst::DENTRY);
            let id = std::mem::replace(&mut self.fs.dentry_slab[f], NIL);
            self.fs.nr_dentry -= 1;
            self.slab_free(DENTRY, id, self.fs.memcg[f]);
            self.fs_inode_unused(fid);
            freed += 1;
        }
        (walked, freed)
    }

    /// Kernel: `prune_icache_sb()` for memcg `memcg` (`inode_lru_isolate()`, v5.3 rules, see
    /// the module doc). Returns (walked, freed).
    pub fn prune_icache_sb(&mut self, memcg: usize, nr_to_walk: u64, kswapd: bool) -> (u64, u64) {
        let mut walked = 0;
        let mut freed = 0;
        while walked < nr_to_walk {
            let fid = self.fs.inode_lru.head(memcg);
            if fid == NIL {
                break;
            }
            walked += 1;
            let f = fid as usize;
            self.fs.inode_lru.del(memcg, fid);
            if self.fs.state[f] & (fst::DENTRY | fst::I_DIRTY) != 0 {
                // In use or dirty: LRU_REMOVED (re-added when unused and clean).
                self.fs.state[f] &= !fst::I_LRU;
                continue;
            }
            if self.fs.has(fid, fst::I_REFERENCED) {
                self.fs.state[f] &= !fst::I_REFERENCED;
                self.fs.inode_lru.add(memcg, fid);
                continue;
            }
            let (reaped, left) = self.invalidate_file_pages(fid);
            if reaped > 0 {
                let ev = if kswapd {
                    Ev::KswapdInodesteal
                } else {
                    Ev::PgInodesteal
                };
                self.ev.add(ev, reaped);
                self.slab.reclaimed += reaped;
            }
            if left > 0 {
                // LRU_RETRY that finds the cache still busy: keep it for a later walk.
                self.fs.inode_lru.add(memcg, fid);
                continue;
            }
            self.fs_evict_inode(fid);
            freed += 1;
        }
        (walked, freed)
    }

    /// `evict()`: drop the inode's shadow entries (its page cache is empty) and hand it to
    /// the filesystem (`destroy_inode()`): it leaves the VFS's count (`nr_inodes`), but
    /// XFS's `->destroy_inode` only tags it for XFS's own reclaim, which frees the
    /// `xfs_inode` later ([`Mm::xfs_inode_set_reclaim_tag`]).
    fn fs_evict_inode(&mut self, fid: u32) {
        let f = fid as usize;
        let (obj, start, nr) = self.fs.file_range(fid);
        let o = &mut self.objects[obj as usize];
        for k in start..start + nr {
            o.ent[k as usize] = 0;
        }
        self.fs.state[f] = 0;
        self.fs.nr_inodes -= 1;
        self.xfs_inode_set_reclaim_tag(fid);
    }

    /// Kernel: `invalidate_mapping_pages()` over a created file: drop its clean, unmapped,
    /// unlocked folios from the page cache and free them (no shadow entries). Returns
    /// (pages invalidated, pages left).
    fn invalidate_file_pages(&mut self, fid: u32) -> (u64, u64) {
        let (obj, start, nr) = self.fs.file_range(fid);
        let mut reaped = 0;
        let mut left = 0;
        let mut k = start;
        while k < start + nr {
            let e = self.objects[obj as usize].ent[k as usize];
            if e & CACHE_PRESENT == 0 {
                k += 1;
                continue;
            }
            let pfn = e as u32;
            let n = self.pages.nr_pages(pfn);
            let first = self.pages.index[pfn as usize] as u64;
            let busy = self.pages.hot[pfn as usize].flags
                & (pg::DIRTY | pg::WRITEBACK | pg::ISOLATED)
                != 0
                || !self.pages.test(pfn, pg::LRU)
                || self.folio_mapped(pfn)
                || first < start
                || first + n > start + nr;
            if busy {
                left += n;
            } else {
                self.invalidate_folio(pfn);
                reaped += n;
            }
            k = first + n;
        }
        (reaped, left)
    }

    /// Remove a clean, unmapped page-cache folio from its mapping and LRU and free it
    /// (`mapping_evict_folio()` + the final `folio_put()`).
    pub(crate) fn invalidate_folio(&mut self, pfn: Pfn) {
        let o = self.pages.owner(pfn);
        let nr = self.pages.nr_pages(pfn);
        let obj = &mut self.objects[o.obj as usize];
        for k in o.index as u64..o.index as u64 + nr {
            obj.ent[k as usize] = 0;
        }
        obj.nr_resident -= nr;
        for k in o.index as u64..o.index as u64 + nr {
            self.xa_erase(o.obj, k, false);
        }
        self.lru_del(pfn);
        self.free_folio(pfn);
    }

    /// Invariants of the dentry and inode caches: LRU membership matches the state bits, a
    /// dentry pins its inode, objects are counted once.
    pub fn check_fs(&self) -> Result<(), String> {
        let fs = &self.fs;
        let (mut d, mut i) = (0u64, 0u64);
        for (f, &s) in fs.state.iter().enumerate() {
            if s & fst::DENTRY != 0 {
                d += 1;
                if s & fst::INODE == 0 {
                    return Err(format!("file {f}: dentry without an inode"));
                }
                if s & fst::I_LRU != 0 {
                    return Err(format!("file {f}: inode pinned by a dentry is on the LRU"));
                }
            }
            if s & fst::INODE != 0 {
                i += 1;
            }
            if s & fst::I_LRU != 0 && s & fst::I_DIRTY != 0 {
                return Err(format!("file {f}: dirty inode on the LRU"));
            }
            if (s & fst::D_LRU != 0) != (s & fst::DENTRY != 0 && s & fst::D_INUSE == 0) {
                return Err(format!("file {f}: dentry LRU state {s:#x}"));
            }
        }
        let dl: u64 = (0..fs.dentry_lru.lists.len())
            .map(|m| fs.dentry_lru.count(m))
            .sum();
        let il: u64 = (0..fs.inode_lru.lists.len())
            .map(|m| fs.inode_lru.count(m))
            .sum();
        let dbits = fs.state.iter().filter(|&&s| s & fst::D_LRU != 0).count() as u64;
        let ibits = fs.state.iter().filter(|&&s| s & fst::I_LRU != 0).count() as u64;
        if d != fs.nr_dentry || i != fs.nr_inodes || dl != dbits || il != ibits {
            return Err(format!(
                "dentries {d}/{} inodes {i}/{} dentry LRU {dl}/{dbits} inode LRU {il}/{ibits}",
                fs.nr_dentry, fs.nr_inodes
            ));
        }
        // XFS's reclaimable inodes hold their xfs_inode with no VFS state left.
        for fid in fs.icache.iter() {
            let s = fs.state[fid as usize];
            if s != 0 || fs.inode_slab[fid as usize] == NIL {
                return Err(format!("file {fid}: reclaimable inode in state {s:#x}"));
            }
        }
        for (f, &s) in fs.state.iter().enumerate() {
            let has = s & fst::INODE != 0;
            if (fs.inode_slab[f] != NIL) != has && (has || !fs.icache.is_reclaimable(f as u32)) {
                return Err(format!("file {f}: inode slab object in state {s:#x}"));
            }
        }
        let reclaimable = fs.icache.count();
        let cache_objs = |c: usize| self.slab.caches[c].nr_objects;
        if cache_objs(DENTRY) != d || cache_objs(INODE) != i + reclaimable {
            return Err(format!(
                "slab objects dentry {} inode {} for {d} dentries, {i} inodes and \
                 {reclaimable} reclaimable xfs_inodes",
                cache_objs(DENTRY),
                cache_objs(INODE)
            ));
        }
        self.check_xfs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use crate::*;

    /// A machine of `pages` pages whose object 1 (a file) is a directory of 1-page files,
    /// with an extra memcg (id 1) limited to `memcg_max` pages.
    fn fs_mm(pages: u64, pressure: u64, memcg_max: Option<u64>) -> Mm {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, pages);
        cfg.objects[1].exists = false;
        cfg.fs = FsCfg {
            dirs: vec![DirCfg {
                obj: 1,
                file_pages: 1,
            }],
            vfs_cache_pressure: pressure,
            boosted_reclaim_skips_slab: false,
        };
        cfg.memcgs = vec![MemcgCfg {
            max_pages: memcg_max,
            swappiness: None,
            swap_max_pages: None,
        }];
        Mm::new(cfg)
    }

    /// Create files [from, to) with fsync (clean, written) from memcg `memcg`.
    fn create(mm: &mut Mm, memcg: u16, files: std::ops::Range<u32>, fsync: bool) {
        let mut io = InstantIo;
        for k in files {
            let mut ctx = Ctx::new(0, &mut io, memcg);
            mm.fs_create(&mut ctx, 1, k, 1, fsync);
            assert!(!ctx.oom, "OOM creating file {k}");
        }
    }

    /// An 8192-page machine whose object 1 is an existing tree of 2-page files.
    fn tree_mm() -> Mm {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 8192);
        cfg.objects[1].exists = true;
        cfg.fs.dirs = vec![DirCfg {
            obj: 1,
            file_pages: 2,
        }];
        Mm::new(cfg)
    }

    /// A read of a tree of files looks up every file it covers once: a dentry and an inode
    /// each, kept on the dentry LRU after the read; a second read marks the dentry
    /// referenced (pruning rotates it once); a file whose dentry was pruned gets a new
    /// dentry and takes its cached inode back off the inode LRU.
    #[test]
    fn reads_of_a_tree_look_up_each_file_once() {
        let mut mm = tree_mm();
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        // Pages 1..5: files 0 (pages 0-1), 1 (2-3) and 2 (4-5).
        mm.file_read(&mut ctx, 1, 1, 4);
        assert_eq!((mm.fs.nr_dentry, mm.fs.nr_inodes), (3, 3));
        assert_eq!(mm.fs.dentry_lru.count(0), 3);
        assert_eq!(mm.fs.inode_lru.count(0), 0);
        // One dentry slab page and one order-3 inode slab, both RECLAIMABLE.
        assert_eq!(mm.slab.node_pages(), (1 + 8, 0));
        mm.file_read(&mut ctx, 1, 2, 1);
        assert_eq!((mm.fs.nr_dentry, mm.fs.nr_inodes), (3, 3));
        assert!(mm.fs.has(1, fst::D_REFERENCED));
        // File 1 is rotated, files 0 and 2 lose their dentries; their clean inodes go on
        // the inode LRU.
        assert_eq!(mm.prune_dcache_sb(0, 3), (3, 2));
        assert_eq!((mm.fs.nr_dentry, mm.fs.nr_inodes), (1, 3));
        assert_eq!(mm.fs.inode_lru.count(0), 2);
        mm.file_read(&mut ctx, 1, 0, 1);
        assert_eq!((mm.fs.nr_dentry, mm.fs.nr_inodes), (2, 3));
        assert_eq!(mm.fs.inode_lru.count(0), 1);
        assert!(mm.fs.has(0, fst::D_LRU) && !mm.fs.has(0, fst::I_LRU));
        mm.check_invariants().unwrap();
    }

    /// A lookup of a file whose inode the VFS evicted but XFS still holds recycles that
    /// inode (`xfs_iget_cache_hit()`), as a re-create does: no second `xfs_inode`, and XFS's
    /// reclaim later frees the one object once it is evicted again. (Before, the lookup
    /// allocated a second object and left the first tagged, and XFS's reclaim freed the
    /// one in use.)
    #[test]
    fn a_lookup_recycles_an_inode_xfs_has_not_reclaimed() {
        let mut mm = tree_mm();
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let evict = |mm: &mut Mm| {
            assert_eq!(mm.prune_dcache_sb(0, 10), (1, 1));
            assert_eq!(mm.prune_icache_sb(0, 10, false), (1, 1));
        };
        mm.file_read(&mut ctx, 1, 0, 2);
        evict(&mut mm);
        assert_eq!((mm.fs.nr_inodes, mm.fs.icache.count()), (0, 1));
        assert_eq!(mm.slab.caches[INODE].nr_objects, 1);
        mm.file_read(&mut ctx, 1, 0, 1);
        assert_eq!((mm.fs.nr_inodes, mm.fs.icache.count()), (1, 0));
        assert_eq!(
            mm.slab.caches[INODE].nr_objects, 1,
            "recycled, not allocated"
        );
        mm.check_invariants().unwrap();
        evict(&mut mm);
        let due = mm.fs.icache.work_due;
        mm.run_background(due);
        assert_eq!(
            (mm.fs.icache.count(), mm.fs.icache.reclaimed_worker),
            (0, 1)
        );
        assert_eq!(mm.slab.caches[INODE].nr_objects, 0);
        mm.check_invariants().unwrap();
    }

    /// A created file has a dentry pinning its inode: the inode is on no LRU until the
    /// dentry is pruned, and then only once clean.
    #[test]
    fn dentries_pin_inodes_until_pruned_and_dirty_inodes_wait_for_writeback() {
        let mut mm = fs_mm(8192, 100, None);
        create(&mut mm, 0, 0..10, false);
        assert_eq!((mm.fs.nr_dentry, mm.fs.nr_inodes), (10, 10));
        assert_eq!(mm.fs.dentry_lru.count(0), 10);
        assert_eq!(mm.fs.inode_lru.count(0), 0);
        mm.check_invariants().unwrap();
        // Prune every dentry: the inodes are unpinned but dirty (never written): not on the
        // inode LRU, so the inode shrinker cannot free them.
        assert_eq!(mm.prune_dcache_sb(0, 100), (10, 10));
        assert_eq!(mm.fs.inode_lru.count(0), 0);
        assert_eq!(mm.prune_icache_sb(0, 100, false), (0, 0));
        assert_eq!(mm.fs.nr_inodes, 10);
        // Writeback writes each inode with its data and puts it on the inode LRU; pruning
        // then invalidates its (clean) page and frees it: 10 pages stolen.
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.writeback_file(&mut ctx, 1, u64::MAX, BioOp::WriteSync);
        assert_eq!(mm.fs.inode_lru.count(0), 10);
        assert_eq!(mm.fs.log_pending, 10 * INODE_LOG_BYTES % 4096);
        assert_eq!(mm.prune_icache_sb(0, 100, false), (10, 10));
        assert_eq!(mm.ev.get(Ev::PgInodesteal), 10);
        assert_eq!(mm.ev.get(Ev::KswapdInodesteal), 0);
        assert_eq!(mm.objects[1].nr_resident, 0);
        assert_eq!(mm.fs.nr_inodes, 0);
        mm.check_invariants().unwrap();
    }

    /// vm.vfs_cache_pressure = 0: the superblock shrinker counts nothing and never frees a
    /// dentry or inode, even at priority 0; 1000 frees more than 100 at the same priority.
    #[test]
    fn vfs_cache_pressure_scales_dentry_and_inode_reclaim() {
        let freed_at = |pressure: u64| {
            let mut mm = fs_mm(16384, pressure, None);
            create(&mut mm, 0, 0..3000, true);
            let before = mm.fs.nr_dentry + mm.fs.nr_inodes;
            mm.shrink_slab(0, if pressure == 0 { 0 } else { 4 }, true);
            if pressure == 0 {
                mm.drop_slab();
            }
            mm.check_invariants().unwrap();
            before - (mm.fs.nr_dentry + mm.fs.nr_inodes)
        };
        assert_eq!(freed_at(0), 0);
        // Priority 4, 3000 unused dentries (their inodes are pinned): delta =
        // (3000 >> 4) * 4 / 2 = 374, below the batch of 1024: deferred, nothing freed.
        assert_eq!(freed_at(100), 0);
        // Pressure 1000: count 30000, delta = 3750: three batches of 1024. The first frees
        // 1024 dentries (their clean inodes join the inode LRU) and evicts the one inode
        // its walk of 1 reaches; the second splits 675 + 350 between dentries and inodes
        // (the one evicted, reclaimable xfs_inode's share, 1024 * 1 / 3001, is 0); the
        // third 444 + 460, and free_cached_objects() gets 1024 * 351 / 3001 = 119 (+ 1) of
        // the 351 evicted inodes: 1025 + 1025 + 904 = 2954 dentries and VFS inodes.
        assert_eq!(freed_at(1000), 2954);
    }

    /// drop_caches = 2 frees every reclaimable dentry and inode that nothing pins (the
    /// dirty inodes stay until written back); 1 drops the clean page cache.
    #[test]
    fn drop_caches_empties_unpinned_reclaimable_slab() {
        let mut mm = fs_mm(16384, 100, None);
        create(&mut mm, 0, 0..500, true);
        create(&mut mm, 0, 500..600, false);
        let slab_before = mm.slab.node_pages().0;
        mm.drop_caches(2);
        assert_eq!(mm.fs.nr_dentry, 0);
        assert_eq!(mm.fs.nr_inodes, 100, "the dirty inodes are pinned");
        assert!(mm.slab.node_pages().0 < slab_before);
        assert_eq!(mm.ev.get(Ev::DropSlab), 1);
        // Write the rest back; drop everything.
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.writeback_file(&mut ctx, 1, u64::MAX, BioOp::WriteSync);
        mm.drop_caches(3);
        assert_eq!((mm.fs.nr_dentry, mm.fs.nr_inodes), (0, 0));
        // The evicted xfs_inodes the shrinker's share left go with XFS's reclaim worker.
        mm.run_background(crate::xfs::RECLAIM_WORK_DELAY_NS);
        assert_eq!(mm.fs.icache.count(), 0);
        // Only the caches' current (CPU) slabs remain: one dentry page, one inode slab.
        assert_eq!(mm.slab.node_pages().0, 1 + 8);
        assert_eq!(mm.objects[1].nr_resident, 0);
        assert_eq!(mm.ev.get(Ev::DropPagecache), 1);
        mm.check_invariants().unwrap();
    }

    /// A memcg at its limit reclaims its own dentries and inodes (shrink_slab() from limit
    /// reclaim), so a stream of file creations in it runs without OOM and its slab stays
    /// under the limit; the root's objects are untouched.
    #[test]
    fn memcg_limit_reclaim_shrinks_the_memcgs_slab() {
        let mut mm = fs_mm(32768, 100, Some(512));
        create(&mut mm, 0, 0..200, true);
        create(&mut mm, 1, 200..6000, true);
        assert!(mm.memcgs[1].usage <= 512);
        assert!(mm.ev.get(Ev::SlabsScanned) > 0);
        let bytes = mm.slab.memcg_bytes[1][0];
        assert!(bytes > 0 && bytes < 512 * 4096, "{bytes}");
        // The memcg kept far fewer than 5800 dentries; the root's 200 are all there.
        let live = |m: u16| {
            (0..6000usize)
                .filter(|&f| mm.fs.memcg[f] == m && mm.fs.state[f] & fst::DENTRY != 0)
                .count()
        };
        assert!(live(1) < 2000, "{}", live(1));
        assert_eq!(live(0), 200);
        mm.check_invariants().unwrap();
    }

    /// policy.boosted_reclaim_skips_slab: kswapd's boosted pass (node balanced, a zone's
    /// watermark boosted) leaves the shrinkers alone under the v5.0–v5.2 rule; after the
    /// fix the same pass runs shrink_slab() (at DEF_PRIORITY its work is deferred).
    #[test]
    fn boosted_kswapd_pass_skips_slab_only_under_the_old_rule() {
        let deferred_after_boosted_pass = |skip: bool| {
            let mut mm = fs_mm(65536, 100, None);
            mm.cfg.fs.boosted_reclaim_skips_slab = skip;
            create(&mut mm, 0, 0..20_000, true);
            mm.zones[0].watermark_boost = 512;
            assert!(mm.pgdat_balanced(0));
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            while mm.kswapd_step(&mut ctx) != kswapd::KswapdNext::Done {}
            assert_eq!(mm.zones[0].watermark_boost, 0);
            mm.shrinker.nr_deferred[0]
        };
        assert_eq!(deferred_after_boosted_pass(true), 0);
        // 20000 unused dentries at DEF_PRIORITY: delta = (20000 >> 12) * 4 / 2 = 8, below a
        // batch: deferred (and accumulated) by the boosted passes.
        let d = deferred_after_boosted_pass(false);
        assert!(d >= 8, "{d}");
    }

    /// kswapd's boosted/normal accounting (`Kswapd::boost_stats`): a boost on a balanced
    /// node gives a boosted run whose passes skip slab under the v5.0–v5.2 rule; a boost
    /// the node cannot meet (free below high + boost) is dropped at the first pass and the
    /// run reclaims as normal reclaim, shrinking slab under both rules.
    #[test]
    fn boost_stats_split_boosted_from_dropped_runs() {
        let run = |boost: u64| {
            let mut mm = fs_mm(65536, 100, None);
            mm.cfg.fs.boosted_reclaim_skips_slab = true;
            create(&mut mm, 0, 0..20_000, true);
            mm.zones[0].watermark_boost = boost;
            let balanced = mm.pgdat_balanced(0);
            let mut io = InstantIo;
            let mut ctx = Ctx::new(0, &mut io, 0);
            while mm.kswapd_step(&mut ctx) != kswapd::KswapdNext::Done {}
            (balanced, mm.kswapd.boost_stats)
        };
        let (balanced, st) = run(512);
        assert!(balanced);
        assert_eq!((st.runs, st.boosted_runs, st.boost_dropped), (1, 1, 0));
        assert!(st.boosted_passes >= 1 && st.reclaimed_boosted > 0, "{st:?}");
        assert_eq!((st.normal_passes, st.reclaimed_normal), (0, 0), "{st:?}");
        assert_eq!(
            st.slabs_scanned_boosted + st.inodesteal_boosted,
            0,
            "{st:?}"
        );
        // A boost larger than the machine: imbalanced, dropped, normal reclaim.
        let (balanced, st) = run(1 << 20);
        assert!(!balanced);
        assert_eq!((st.runs, st.boosted_runs, st.boost_dropped), (1, 1, 1));
        assert_eq!((st.boosted_passes, st.reclaimed_boosted), (0, 0), "{st:?}");
        assert!(st.normal_passes >= 1 && st.reclaimed_normal > 0, "{st:?}");
        assert!(st.slabs_scanned_normal > 0, "{st:?}");
    }

    /// `pgdat_balanced(pgdat, order, highest_zoneidx)` tests each zone with
    /// `zone_watermark_ok_safe(.., highest_zoneidx)`: for a kswapd run woken by a DMA32 boost
    /// (`rmqueue()`'s `wakeup_kswapd(zone, 0, 0, zone_idx(zone))`) DMA32 keeps back its
    /// `lowmem_reserve[ZONE_DMA32]` (0), not the reserve it holds against Normal allocations.
    /// Free pages above the boosted high watermark but below it plus
    /// `lowmem_reserve[ZONE_NORMAL]`: a balanced node, a boosted run that keeps its boost.
    #[test]
    fn dma32_boost_run_is_balanced_without_the_normal_reserve() {
        use crate::mmzone::{Wmark, ZONE_DMA32, ZONE_NORMAL};
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 0);
        cfg.zones = vec![("DMA32", 8192), ("Normal", 65536)];
        cfg.min_free_kbytes = Some(1024);
        cfg.objects[0].size_pages = 1024;
        cfg.objects[1].size_pages = 1024;
        cfg.swap_areas.clear();
        let mut mm = Mm::new(cfg);
        let z = &mm.zones[0];
        // lowmem_reserve[Normal] of DMA32: 65536 / 256.
        assert_eq!(z.lowmem_reserve[ZONE_NORMAL], 256);
        assert_eq!(z.lowmem_reserve[ZONE_DMA32], 0);
        let boost = z.free - z.wmark_pages(Wmark::High) - 128;
        mm.zones[0].watermark_boost = boost;
        assert!(mm.pgdat_balanced_idx(0, ZONE_DMA32));
        assert!(!mm.zones[0].watermark_ok(0, mm.zones[0].wmark_pages(Wmark::High)));
        mm.kswapd.highest_zoneidx = Some(ZONE_DMA32);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        while mm.kswapd_step(&mut ctx) != kswapd::KswapdNext::Done {}
        let st = mm.kswapd.boost_stats;
        assert_eq!(
            (st.runs, st.boosted_runs, st.boost_dropped),
            (1, 1, 0),
            "{st:?}"
        );
        assert_eq!(mm.zones[0].watermark_boost, 0);
    }
}
