//! The page cache: lookups, readahead into (large) folios, read()/write() through a file
//! descriptor, dirty pages, writeback by the flusher, and fsync.
//!
//! # Page-cache entries
//! One u64 per page index of a file: `0` empty, `CACHE_PRESENT | order << 32 | head pfn` for
//! every index a
//! resident folio covers (large folios are index- and pfn-aligned, so the page's pfn is
//! `head + (index - folio index)`), or `CACHE_SHADOW | shadow` left by reclaim.
//!
//! # Readahead (mm/readahead.c, `page_cache_sync_ra()`, `page_cache_async_ra()`,
//! `page_cache_ra_order()`)
//! A miss at the start of a file or right after the previous read starts a window of
//! `get_init_ra_size(request, ra_pages)` pages (4x a tiny request, 2x a medium one, else the
//! maximum); the folio at `start + size - async_size` is marked PG_readahead, and a later hit
//! on it pushes the next window (`get_next_ra_size`: 4x, 2x, then the maximum) asynchronously.
//! Folio order (`ra->order`, v6.16+): 0 for the synchronous window, +2 per asynchronous
//! window, clamped to `min(model.max_file_folio_order, ilog2(window))` and stored back;
//! reduced at unaligned indices and at the window's end, and an asynchronous window's end is
//! rounded down to that order's alignment. A large folio that cannot be allocated ends the
//! window's large folios; the rest is read in order-0 folios (`do_page_cache_ra()`).
//! Worked example, checked against this host's
//! kernel (6.18, ext4, read_ahead_kb = 8192, 32-page reads from index 0, traced with
//! `mm_filemap_add_to_page_cache`): pages 0–127 order 0, 128–383 order 2, 384–895 order 4,
//! 896–1919 order 6, one order-7 folio at 1920, order 8 up to 4095, then order 9.
//! A miss elsewhere (`index - prev_index > 1` unsigned, so a backward jump too) looks at the
//! page cache just before it (context readahead, `page_cache_prev_miss()`): a run of more
//! resident pages than the request starts a window of `run + request` pages (the run doubled
//! when the file is resident from page 0), capped at ra_pages; otherwise the miss reads just
//! the request. `POSIX_FADV_RANDOM` disables readahead (order-0 folios of exactly the
//! request); `POSIX_FADV_SEQUENTIAL` doubles the window.
//! Page faults on a mapping read around the fault (`do_sync_mmap_readahead()`): a window of
//! ra_pages centred on the fault, unless the hint is random.
//!
//! # Dirty pages and writeback (mm/page-writeback.c, fs/fs-writeback.c)
//! write() dirties folios without marking them accessed (FGP_WRITEBEGIN has no FGP_ACCESSED),
//! then `balance_dirty_pages_ratelimited()` may pause the writer ([`crate::writeback`]: the
//! dirty limits and the kernel's position-ratio throttling). Above the background threshold
//! the flusher writes back (`wb_over_bg_thresh()`); it also writes inodes dirty for longer
//! than `vm.dirty_expire_centisecs`.
//! fsync() writes the file's dirty pages and waits for a journal commit; concurrent fsyncs
//! share commits (jbd2 group commit). fdatasync() commits only for a file extended since
//! its last commit (ext4's `i_datasync_tid`).
//!
//! # Where we differ from the kernel (v6.18)
//! - One readahead state per file (not per open file): interleaved readers of one file
//!   share `prev_index` and the window, where each of the kernel's has its own; context
//!   readahead then finds their history in the page cache. mmap `mmap_miss` accounting is
//!   not modelled.
//! - write() allocates order-0 folios.
//! - Writes go to the device at `dev_base + index` (files laid out contiguously).

use crate::alloc::Gfp;
use crate::page::pg;
use crate::types::*;
use crate::vmstat::Ev;
use crate::workingset::Shadow;
use crate::{BioOp, Submitted};
use crate::{Ctx, Mm, NO_TASK};

/// Readahead's allocation mask (`readahead_gfp_mask()`).
const RA: Gfp = Gfp::READAHEAD;

pub const CACHE_PRESENT: u64 = 1 << 63;

/// The page-cache entry of a resident folio: the head pfn and the folio order (so a lookup
/// knows the folio's extent without touching the frame table).
#[inline]
pub fn cache_entry(pfn: Pfn, order: u32) -> u64 {
    CACHE_PRESENT | (order as u64) << 32 | pfn as u64
}

/// The folio order stored in a resident page-cache entry.
#[inline]
pub fn cache_entry_order(e: u64) -> u32 {
    ((e >> 32) & 0xf) as u32
}
pub const CACHE_SHADOW: u64 = 1 << 62;
const CACHE_PAYLOAD: u64 = (1 << 62) - 1;
/// Device page offset of the journal (fsync commit records).
const JOURNAL_SECTOR: u64 = 1 << 40;
/// Kernel: `MAX_WRITEBACK_PAGES` — pages the flusher writes per inode per pass.
pub const MAX_WRITEBACK_PAGES: u64 = 1024;

/// The filesystem journal's commit state (jbd2): one commit runs at a time; fsyncs that
/// arrive while it runs share the next one (group commit), which starts when the running
/// commit completes. Kernel: fs/jbd2/commit.c, `jbd2_log_start_commit()`,
/// `jbd2_log_wait_commit()`. Simplifies: a commit is one 4 KiB write; data=ordered writeback
/// is the fsync caller's own `writeback_file()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Journal {
    /// Completion of the commit in flight.
    pub running_done: u64,
    /// Start and completion of the commit queued behind it.
    pub next_commit_start: u64,
    pub next_commit_done: u64,
}

/// Access hint of a file (`POSIX_FADV_*` / `MADV_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Hint {
    #[default]
    Normal,
    Random,
    Sequential,
}

/// Kernel: `struct file_ra_state`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RaState {
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    /// Index of the last page read (`prev_pos >> PAGE_SHIFT`), +1; 0 = none.
    pub prev_index: u64,
    /// Folio order of the next window (`ra->order`, v6.16+): 0 for a synchronous window
    /// or mmap read-around, +2 per asynchronous window, clamped by `page_cache_ra_order()`.
    pub order: u32,
}

/// Kernel: the per-open-file part of `struct file` that reads use: `f_ra` (the readahead
/// window and `prev_pos`). Every task opens each file it reads on its own (as separate
/// processes do: fio jobs, `cat`, two readers of one file), so two tasks streaming one
/// file each keep their own window, and each one's misses are judged sequential against
/// its own previous read (`page_cache_sync_ra()`), not the other's. mmap faults use the
/// faulting task's file too (`vmf->vma->vm_file->f_ra`). Simplification: a task keeps one
/// open file per object for its lifetime (no close/reopen between phases or repeats: a
/// read from index 0 starts the initial window either way).
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenFile {
    pub ra: RaState,
    /// Last read position (`f_ra.prev_pos`, in pages, +1; 0 = none): `filemap_read()`
    /// does not mark the folio the previous read ended in accessed again.
    pub prev_read_end: u64,
}

/// Kernel: `get_init_ra_size()`.
pub fn get_init_ra_size(size: u64, max: u64) -> u64 {
    let newsize = roundup_pow_of_two(size);
    if newsize <= max / 32 {
        newsize * 4
    } else if newsize <= max / 4 {
        newsize * 2
    } else {
        max
    }
}

/// Kernel: `get_next_ra_size()`.
pub fn get_next_ra_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

/// Kernel: the sequential-miss test of `page_cache_sync_ra()`, `index - prev_index <= 1` in
/// unsigned arithmetic: the miss is at the page the previous read ended on (an unaligned
/// continuation) or the one after it. A backward jump wraps to a huge difference and is
/// never sequential. `prev_end` is the model's `prev_index` (the page just past the
/// previous read, the kernel's `prev_pos >> PAGE_SHIFT`; 0 = no read yet, the kernel's
/// `prev_pos = -1`). Worked example: previous read ended at page 10 (pages 8-9 read):
/// misses at 10 and 11 are sequential, 12 and 9 are not.
pub fn sequential_miss(prev_end: u64, index: u64) -> bool {
    prev_end > 0 && index.wrapping_sub(prev_end) <= 1
}

/// Kernel: context readahead in `page_cache_sync_ra()` (v6.10+; `try_context_readahead()`
/// before): a miss at `index` of a `req`-page read that is not sequential for this file's
/// readahead state looks at the `contig` resident pages just before it (what
/// `page_cache_prev_miss()` finds, at most `max`). No more than the request → a random read
/// (None: read just the request). Otherwise a window of `min(contig + req, max)` pages from
/// `index` with `async_size` 1, the run doubled first when the file is resident from page 0
/// (`page_cache_prev_miss()` wrapped: `contig == index`, which needs `index <= max`).
/// Worked example (max 32): miss at 100 of a 1-page read with 6 resident pages before it →
/// 7 pages; with 1 resident page → None; miss at 10 with pages 0-9 resident → 2*10 + 1 = 21.
pub fn context_ra_window(index: u64, req: u64, max: u64, contig: u64) -> Option<u64> {
    if contig <= req {
        return None;
    }
    let contig = if contig == index { contig * 2 } else { contig };
    Some((contig + req).min(max))
}

impl Mm {
    /// Resident folio (head pfn) at `index`, if any.
    #[inline]
    pub fn cache_lookup(&self, obj: u32, index: u32) -> Option<Pfn> {
        let e = self.objects[obj as usize].ent[index as usize];
        if e & CACHE_PRESENT != 0 {
            Some(e as u32)
        } else {
            None
        }
    }

    /// The open file through which `task` reads `obj` ([`OpenFile`]), created on its first
    /// read; [`NO_TASK`] reads through the object's own. A task's files are a short list
    /// sorted by object (binary search; one insertion per file the task ever opens).
    #[inline]
    pub fn open_file(&mut self, task: u32, obj: u32) -> &mut OpenFile {
        if task == NO_TASK {
            return &mut self.objects[obj as usize].file;
        }
        let t = task as usize;
        if t >= self.open_files.len() {
            self.open_files.resize_with(t + 1, Vec::new);
        }
        let files = &mut self.open_files[t];
        let i = match files.binary_search_by_key(&obj, |f| f.0) {
            Ok(i) => i,
            Err(i) => {
                files.insert(i, (obj, OpenFile::default()));
                i
            }
        };
        &mut files[i].1
    }

    fn ra_pages(&self, obj: u32) -> u64 {
        let base = self.cfg.readahead_max_pages as u64;
        match self.objects[obj as usize].hint {
            Hint::Sequential => base * 2,
            _ => base,
        }
    }

    pub fn set_hint(&mut self, obj: u32, hint: Hint) {
        self.objects[obj as usize].hint = hint;
    }

    /// Kernel: `page_cache_sync_ra()` for a miss at `index` of a read of `req` pages.
    fn page_cache_sync_ra(&mut self, ctx: &mut Ctx, obj: u32, index: u64, req: u64) {
        let o = &self.objects[obj as usize];
        let eof = o.file_pages;
        if o.hint == Hint::Random || self.cfg.readahead_max_pages == 0 {
            // force_page_cache_ra(): exactly the request, order-0 folios.
            self.ra_read(ctx, obj, index, req.min(eof - index), u64::MAX, 0, true, RA);
            return;
        }
        let max = self.ra_pages(obj);
        let prev = self.open_file(ctx.task, obj).ra.prev_index;
        let (size, async_size) = if index == 0 || req > max || sequential_miss(prev, index) {
            // Start of file, oversized read or sequential miss: the initial window.
            let size = get_init_ra_size(req, max);
            (size, if size > req { size - req } else { size >> 1 })
        } else {
            // Context readahead: the cached history just before the miss.
            let contig = self.prev_cached_run(obj, index, max);
            match context_ra_window(index, req, max, contig) {
                Some(size) => (size, 1),
                None => {
                    // A standalone random read: just the request (do_page_cache_ra() of
                    // req_count), the readahead state untouched.
                    self.ra_read(ctx, obj, index, req.min(eof - index), u64::MAX, 0, true, RA);
                    return;
                }
            }
        };
        let ra = &mut self.open_file(ctx.task, obj).ra;
        ra.start = index;
        ra.size = size;
        ra.async_size = async_size;
        ra.order = 0;
        self.page_cache_ra_order(ctx, obj);
    }

    /// Kernel: `page_cache_prev_miss(mapping, index - 1, max)` as `page_cache_sync_ra()`
    /// uses it: the number of resident pages immediately before `index` (shadow entries and
    /// holes end the run), at most `max`.
    fn prev_cached_run(&self, obj: u32, index: u64, max: u64) -> u64 {
        let ent = &self.objects[obj as usize].ent;
        let lo = index.saturating_sub(max);
        (lo..index)
            .rev()
            .take_while(|&k| ent[k as usize] & CACHE_PRESENT != 0)
            .count() as u64
    }

    /// Kernel: `page_cache_async_ra()`: a hit on the PG_readahead folio `pfn` at `index`.
    /// The next window's folio order is the stored `ra->order` + 2 (v6.16+; before, the
    /// order of the folio that was hit + 2), and the window's end is rounded down to a
    /// multiple of `1 << min(order, ffs(ra_pages) - 1)` pages when that leaves a window.
    pub(crate) fn page_cache_async_ra(&mut self, ctx: &mut Ctx, obj: u32, index: u32, pfn: Pfn) {
        self.pages.clear(pfn, pg::READAHEAD);
        if self.objects[obj as usize].hint == Hint::Random {
            return;
        }
        let max = self.ra_pages(obj);
        let order = self.pages.hot[pfn as usize].order as u32;
        let folio_end = (index as u64 & !((1u64 << order) - 1)) + (1 << order);
        let ra = &mut self.open_file(ctx.task, obj).ra;
        let expected = ra.start + ra.size - ra.async_size;
        if expected >= index as u64 & !((1u64 << order) - 1) && expected < folio_end {
            ra.start += ra.size;
        } else {
            // Lost the window (interleaved readers, seeks): restart after this folio.
            ra.start = folio_end;
        }
        ra.size = get_next_ra_size(ra.size.max(1), max);
        ra.order += 2;
        let align = 1u64 << ra.order.min(max.trailing_zeros());
        let end = ra.start + ra.size;
        let aligned_end = end & !(align - 1);
        if aligned_end > ra.start {
            ra.size -= end - aligned_end;
        }
        ra.async_size = ra.size;
        self.page_cache_ra_order(ctx, obj);
    }

    /// Kernel: `page_cache_ra_order()`: read the window in `ra` into folios of order
    /// `ra->order`, clamped to the mapping's largest folio order and `ilog2(ra->size)`; the
    /// clamped order is stored back. A window under 4 pages (or no large folios) is order 0.
    fn page_cache_ra_order(&mut self, ctx: &mut Ctx, obj: u32) {
        let ra = self.open_file(ctx.task, obj).ra;
        let eof = self.objects[obj as usize].file_pages;
        if ra.start >= eof {
            return;
        }
        let size = ra.size.min(eof - ra.start);
        let mark = ra.start + ra.size - ra.async_size;
        let max_order = self.cfg.max_file_folio_order;
        let mut new_order = if ra.size < 4 || max_order == 0 {
            0
        } else {
            ra.order.min(max_order).min(ilog2(ra.size))
        };
        new_order = new_order.min(MAX_PAGE_ORDER);
        self.open_file(ctx.task, obj).ra.order = new_order;
        self.ra_read(ctx, obj, ra.start, size, mark, new_order, false, RA);
    }

    /// Allocate and read folios for the missing pages of [start, start + nr), with folio
    /// order up to `order`, marking the folio containing `mark` PG_readahead. Contiguous
    /// new folios are read with one request. Order-0 folios are allocated with `gfp0`:
    /// readahead's [`RA`] (`readahead_gfp_mask()`, `__GFP_NORETRY`: one direct reclaim
    /// attempt, then the window ends where the allocation failed, as
    /// `page_cache_ra_unbounded()` stops), or the full mask when one folio a read or fault
    /// needs is created (`filemap_create_folio()`, `__filemap_get_folio(FGP_CREAT)`).
    /// Large folios are allocated with [`RA`]; the first that fails ends the large-folio
    /// loop and the rest of the window is read in order-0 folios (`page_cache_ra_order()`
    /// breaks out and falls back to `do_page_cache_ra()`, since v5.18's "mm/readahead: Add
    /// large folio readahead", 793917d997df), so a failed window costs one large-folio
    /// slow path, not one per order below it.
    #[allow(clippy::too_many_arguments)]
    fn ra_read(
        &mut self,
        ctx: &mut Ctx,
        obj: u32,
        start: u64,
        nr: u64,
        mark: u64,
        order: u32,
        exact: bool,
        gfp0: Gfp,
    ) {
        let end = start + nr;
        let mut index = start;
        let mut run_start = u64::MAX;
        let mut run_pfns = std::mem::take(&mut self.io_buf);
        run_pfns.clear();
        let dev = self.cfg.fs_dev;
        let mut fallback = false;
        while index < end {
            if let Some(p) = self.cache_lookup(obj, index as u32) {
                self.submit_read_run(ctx, obj, run_start, &mut run_pfns, dev);
                run_start = u64::MAX;
                index = self.pages.index[p as usize] as u64 + self.pages.nr_pages(p);
                continue;
            }
            let mut o = if exact { 0 } else { order };
            if index & ((1 << o) - 1) != 0 {
                o = (index.trailing_zeros()).min(o);
            }
            while o > 0 && index + (1 << o) > end {
                o -= 1;
            }
            while o > 0
                && (index..index + (1 << o)).any(|k| self.cache_lookup(obj, k as u32).is_some())
            {
                o -= 1;
            }
            if fallback {
                o = 0;
            }
            // filemap_alloc_folio() → __alloc_pages() → might_alloc(): a blocking
            // allocation (readahead's mask allows direct reclaim) is a voluntary preemption
            // point (might_sleep() → __cond_resched() under PREEMPT_VOLUNTARY, Debian's
            // PREEMPT_DYNAMIC default), before each folio of the window. The folios of the
            // window added so far are locked in the page cache, not isolated.
            self.cond_resched(ctx);
            let pfn = match self.alloc_folio_gfp(ctx, o, ctx.memcg, if o == 0 { gfp0 } else { RA })
            {
                Some(p) => Some(p),
                None if o > 0 && !ctx.oom => {
                    // page_cache_ra_order(): the first large folio that cannot be
                    // allocated ends the large-folio loop; do_page_cache_ra() reads the
                    // rest of the window in order-0 folios, stopping at the first of
                    // those that fails too.
                    fallback = true;
                    o = 0;
                    self.alloc_folio_gfp(ctx, 0, ctx.memcg, gfp0)
                }
                None => None,
            };
            let Some(pfn) = pfn else { break };
            if !self.add_to_page_cache(ctx, obj, index, pfn, true) {
                // xas_nomem() failed: filemap_add_folio() frees the folio.
                self.free_folio(pfn);
                break;
            }
            if mark >= index && mark < index + (1 << o) {
                self.pages.set(pfn, pg::READAHEAD);
            }
            // filemap_add_folio() adds a readahead folio locked; it stays locked until its
            // read completes (submit_read_run() sets that time). Until the window's read is
            // submitted, a reclaim entered by a later allocation of the same window (or kswapd
            // at one of its preemption points) finds it locked and keeps it.
            self.pages.lock_for_io(pfn, u64::MAX);
            if run_start == u64::MAX {
                run_start = index;
            }
            run_pfns.push(pfn);
            index += 1 << o;
        }
        self.submit_read_run(ctx, obj, run_start, &mut run_pfns, dev);
        self.io_buf = run_pfns;
    }

    fn submit_read_run(
        &mut self,
        ctx: &mut Ctx,
        obj: u32,
        run_start: u64,
        pfns: &mut Vec<u32>,
        dev: u32,
    ) {
        if pfns.is_empty() {
            return;
        }
        let nr: u64 = pfns.iter().map(|&p| self.pages.nr_pages(p)).sum();
        let base = self.objects[obj as usize].dev_base;
        let Submitted {
            done, cpu_ns: cpu, ..
        } = ctx.io.submit(
            dev,
            ctx.now,
            BioOp::Read,
            ctx.kswapd,
            base + run_start,
            nr as u32,
        );
        ctx.cpu_ns += cpu + self.cfg.costs.io_submit_ns;
        self.ev.add(Ev::PgpgIn, nr * 4);
        for &p in pfns.iter() {
            self.pages.lock_for_io(p, done);
        }
        pfns.clear();
    }

    /// Kernel: `filemap_add_folio()`: allocate the xarray nodes the folio's slots need
    /// (`xas_nomem()`, charged to the task's memcg: [`crate::xarray`]), insert the folio,
    /// checking a shadow it replaces (`workingset_refault()`) unless `refault` is false (a
    /// write, `__GFP_WRITE`, overwrites it), then `folio_add_lru()`. False, with nothing
    /// inserted, when a node could not be allocated.
    fn add_to_page_cache(
        &mut self,
        ctx: &mut Ctx,
        obj: u32,
        index: u64,
        pfn: Pfn,
        refault: bool,
    ) -> bool {
        let nr = self.pages.nr_pages(pfn);
        for k in index..index + nr {
            if self.objects[obj as usize].ent[k as usize] == 0 && !self.xa_store_new(ctx, obj, k) {
                for j in index..k {
                    if self.objects[obj as usize].ent[j as usize] == 0 {
                        self.xa_erase(obj, j, false);
                    }
                }
                return false;
            }
        }
        for k in index..index + nr {
            if self.objects[obj as usize].ent[k as usize] & CACHE_SHADOW != 0 {
                self.xa_set_value(obj, k, false);
            }
        }
        let i = pfn as usize;
        self.pages.obj[i] = obj;
        self.pages.index[i] = index as u32;
        let entry = cache_entry(pfn, self.pages.hot[i].order as u32);
        let o = &mut self.objects[obj as usize];
        let mut shadow = None;
        for k in index..index + nr {
            let e = o.ent[k as usize];
            if refault && e & CACHE_SHADOW != 0 && shadow.is_none() {
                shadow = Some(Shadow(e & CACHE_PAYLOAD));
            }
            o.ent[k as usize] = entry;
        }
        // No thp_file_alloc here: the kernel counts THP_FILE_ALLOC only for shmem THPs
        // (`shmem_get_folio_gfp()`) and khugepaged collapses, never for the PMD-sized folios
        // readahead puts in a regular file's page cache (the twin reads 0 with order-9
        // readahead folios on ext4).
        o.nr_resident += nr;
        if let Some(s) = shadow {
            self.workingset_refault(pfn, s);
        }
        self.folio_add_lru(pfn);
        true
    }

    /// Kernel: `do_sync_mmap_readahead()`: read around a faulting index.
    pub(crate) fn do_sync_mmap_readahead(&mut self, ctx: &mut Ctx, obj: u32, index: u32) {
        let o = &self.objects[obj as usize];
        let eof = o.file_pages;
        let idx = index as u64;
        if o.hint == Hint::Random || self.cfg.readahead_max_pages == 0 {
            // No read-around: filemap_fault() reads the one folio with the fault's mask.
            self.ra_read(ctx, obj, idx, 1, u64::MAX, 0, true, Gfp::HIGHUSER_MOVABLE);
            return;
        }
        if o.hint == Hint::Sequential {
            self.page_cache_sync_ra(ctx, obj, idx, 1);
            return;
        }
        let ra_pages = self.ra_pages(obj);
        let start = idx.saturating_sub(ra_pages / 2);
        let size = ra_pages.min(eof - start);
        let ra = &mut self.open_file(ctx.task, obj).ra;
        ra.start = start;
        ra.size = size;
        ra.async_size = ra_pages / 4;
        // do_sync_mmap_readahead(): read-around is order 0 (`ra->order = 0`) unless the VMA
        // is VM_HUGEPAGE or VM_EXEC.
        ra.order = 0;
        self.page_cache_ra_order(ctx, obj);
        if self.cache_lookup(obj, index).is_none() {
            // The read-around failed to allocate it (readahead_gfp_mask(): __GFP_NORETRY):
            // filemap_fault() allocates it with the fault's mask (__filemap_get_folio()).
            self.ra_read(ctx, obj, idx, 1, u64::MAX, 0, true, Gfp::HIGHUSER_MOVABLE);
        }
    }

    /// read() of pages [page, page + nr) (`filemap_read()`).
    pub fn file_read(&mut self, ctx: &mut Ctx, obj: u32, page: u32, nr: u32) {
        // open(): the path walk of every file of a tree the read covers.
        self.fs_lookup(ctx, obj, page, nr);
        let eof = self.objects[obj as usize].file_pages;
        let start = page as u64;
        let end = (start + nr as u64).min(eof);
        let prev_end = self.open_file(ctx.task, obj).prev_read_end;
        let mut index = start;
        let mut first = true;
        while index < end {
            let mut e = self.objects[obj as usize].ent[index as usize];
            if e & CACHE_PRESENT == 0 {
                ctx.major = true;
                self.page_cache_sync_ra(ctx, obj, index, end - index);
                e = self.objects[obj as usize].ent[index as usize];
                if e & CACHE_PRESENT == 0 && !ctx.oom {
                    // Readahead could not allocate it (__GFP_NORETRY): filemap_get_pages()
                    // creates and reads this one folio with the mapping's full mask
                    // (filemap_create_folio()).
                    let gfp = Gfp::HIGHUSER_MOVABLE;
                    self.ra_read(ctx, obj, index, 1, u64::MAX, 0, true, gfp);
                    e = self.objects[obj as usize].ent[index as usize];
                }
                if e & CACHE_PRESENT == 0 {
                    return;
                }
            } else if self.pages.test(e as u32, pg::READAHEAD) {
                // The read holds its reference to the folio across the readahead.
                self.read_pinned = e as u32;
                self.page_cache_async_ra(ctx, obj, index as u32, e as u32);
                self.read_pinned = crate::types::NIL;
            }
            let pfn = e as u32;
            let t = self.pages.wait_locked(pfn, ctx.now);
            ctx.wait(t);
            let order = cache_entry_order(e);
            let fstart = index & !((1u64 << order) - 1);
            let fend = fstart + (1u64 << order);
            // filemap_read(): the folio the previous read ended in is not marked again.
            let same_as_prev = first && prev_end > fstart && prev_end <= fend;
            if !same_as_prev {
                self.folio_mark_accessed(pfn);
            }
            first = false;
            let upto = fend.min(end);
            ctx.cpu_ns += self.cfg.costs.pagecache_hit_ns * (upto - index);
            index = upto;
        }
        let f = self.open_file(ctx.task, obj);
        f.prev_read_end = end;
        f.ra.prev_index = end;
    }

    /// Mark a page-cache folio dirty (`folio_mark_dirty()` → `__folio_mark_dirty()`).
    pub(crate) fn mark_dirty(&mut self, now: u64, obj: u32, pfn: Pfn) {
        if self.pages.test(pfn, pg::DIRTY) {
            return;
        }
        let nr = self.pages.nr_pages(pfn);
        self.pages.set(pfn, pg::DIRTY);
        self.node.nr_dirty += nr;
        self.ev.add(Ev::NrDirtied, nr);
        // folio_account_dirtied(): WB_DIRTIED.
        self.wb.stat_dirtied += nr;
        let idx = self.pages.index[pfn as usize] as u64;
        let o = &mut self.objects[obj as usize];
        if o.nr_dirty == 0 {
            o.dirty_lo = idx;
            o.dirty_hi = idx + nr;
            if o.dirtied_when == 0 {
                o.dirtied_when = now.max(1);
            }
        } else {
            o.dirty_lo = o.dirty_lo.min(idx);
            o.dirty_hi = o.dirty_hi.max(idx + nr);
        }
        o.nr_dirty += nr;
    }

    /// write() of pages [page, page + nr) (`generic_perform_write()`), then
    /// `balance_dirty_pages_ratelimited()`. The pages are found or created by
    /// `grab_cache_page_write_begin()`, which marks them accessed only before v4.7
    /// ([`crate::workingset::KernelVersion::write_begin_marks_accessed`]): since then a page
    /// written once is inactive and unreferenced, and its LRU order is creation order.
    pub fn file_write(&mut self, ctx: &mut Ctx, obj: u32, page: u32, nr: u32) {
        let end = page as u64 + nr as u64;
        let mut dirtied = 0;
        let marks_accessed = self.cfg.kernel.write_begin_marks_accessed();
        for index in page as u64..end {
            let pfn = match self.cache_lookup(obj, index as u32) {
                Some(p) => {
                    // Before v4.7, pagecache_get_page(FGP_ACCESSED) on a cached page.
                    if marks_accessed {
                        self.folio_mark_accessed(p);
                    }
                    p
                }
                None => {
                    let Some(p) = self.alloc_folio(ctx, 0, ctx.memcg) else {
                        return;
                    };
                    // Before v4.7 a new page starts referenced (FGP_ACCESSED:
                    // __SetPageReferenced() before it is added to the LRU).
                    if marks_accessed {
                        self.pages.set(p, pg::REFERENCED);
                    }
                    // A write does not check the shadow (__GFP_WRITE): it is overwritten.
                    if !self.add_to_page_cache(ctx, obj, index, p, false) {
                        self.free_folio(p);
                        return;
                    }
                    p
                }
            };
            if !self.pages.test(pfn, pg::DIRTY) {
                dirtied += self.pages.nr_pages(pfn);
            }
            self.mark_dirty(ctx.now, obj, pfn);
            ctx.cpu_ns += self.cfg.costs.pagecache_hit_ns;
        }
        let o = &mut self.objects[obj as usize];
        if end > o.file_pages {
            // i_size and i_disksize grow and blocks are allocated: the inode's datasync
            // transaction moves (see `Object::datasync_meta`).
            o.datasync_meta = true;
            o.file_pages = end;
        }
        if dirtied > 0 {
            self.balance_dirty_pages_ratelimited(ctx, dirtied);
        }
    }

    /// Write back up to `max` dirty pages of `obj` from its writeback cursor
    /// (`writeback_single_inode()` → `write_cache_pages()`), as bios of kind `op` (the
    /// writeback control's flags: [`BioOp`]). Returns the latest completion.
    pub fn writeback_file(&mut self, ctx: &mut Ctx, obj: u32, max: u64, op: BioOp) -> u64 {
        let mut done_max = 0;
        if self.objects[obj as usize].nr_dirty == 0 {
            return 0;
        }
        self.wb_writepages_tick(ctx.now + ctx.cpu_ns);
        let dev = self.cfg.fs_dev;
        let (lo, hi) = {
            let o = &self.objects[obj as usize];
            (o.dirty_lo, o.dirty_hi)
        };
        let base = self.objects[obj as usize].dev_base;
        let mut written = 0u64;
        let mut index = self.objects[obj as usize].wb_index.clamp(lo, hi);
        let mut wrapped = false;
        let mut run_start = u64::MAX;
        let mut run_len = 0u64;
        let mut run_pfns = std::mem::take(&mut self.io_buf);
        run_pfns.clear();
        loop {
            if index >= hi {
                if wrapped || lo >= hi {
                    break;
                }
                wrapped = true;
                index = lo;
            }
            if written >= max || self.objects[obj as usize].nr_dirty == 0 {
                break;
            }
            let Some(pfn) = self.cache_lookup(obj, index as u32) else {
                if run_len > 0 {
                    done_max = done_max.max(self.submit_write_run(
                        ctx,
                        dev,
                        op,
                        base + run_start,
                        run_len,
                        &mut run_pfns,
                    ));
                    run_len = 0;
                }
                index += 1;
                continue;
            };
            let nr = self.pages.nr_pages(pfn);
            let fidx = self.pages.index[pfn as usize] as u64;
            if self.pages.test(pfn, pg::DIRTY) && !self.pages.test(pfn, pg::WRITEBACK) {
                if run_len > 0 && run_start + run_len != fidx {
                    done_max = done_max.max(self.submit_write_run(
                        ctx,
                        dev,
                        op,
                        base + run_start,
                        run_len,
                        &mut run_pfns,
                    ));
                    run_len = 0;
                }
                if run_len == 0 {
                    run_start = fidx;
                }
                self.pages.clear(pfn, pg::DIRTY);
                self.pages.set(pfn, pg::WRITEBACK);
                self.node.nr_dirty -= nr;
                self.node.nr_writeback += nr;
                self.wb_writeback_start(nr);
                self.objects[obj as usize].nr_dirty -= nr;
                run_pfns.push(pfn);
                run_len += nr;
                written += nr;
            } else if run_len > 0 {
                done_max = done_max.max(self.submit_write_run(
                    ctx,
                    dev,
                    op,
                    base + run_start,
                    run_len,
                    &mut run_pfns,
                ));
                run_len = 0;
            }
            index = fidx + nr;
        }
        if run_len > 0 {
            done_max = done_max.max(self.submit_write_run(
                ctx,
                dev,
                op,
                base + run_start,
                run_len,
                &mut run_pfns,
            ));
        }
        self.io_buf = run_pfns;
        let o = &mut self.objects[obj as usize];
        o.wb_index = index;
        if o.nr_dirty == 0 {
            o.dirtied_when = 0;
        }
        o.wb_done_max = o.wb_done_max.max(done_max);
        done_max
    }

    fn submit_write_run(
        &mut self,
        ctx: &mut Ctx,
        dev: u32,
        op: BioOp,
        sector: u64,
        nr: u64,
        pfns: &mut Vec<u32>,
    ) -> u64 {
        // blk-wbt may sleep the writer (rq_qos_wait()) before the request is issued.
        let sub = ctx.submit_write(dev, op, sector, nr as u32);
        let (done, cpu) = (sub.done, sub.cpu_ns);
        ctx.cpu_ns += cpu + self.cfg.costs.io_submit_ns;
        self.ev.add(Ev::PgpgOut, nr * 4);
        for &p in pfns.iter() {
            // A created file's inode is written with its data (crate::fs).
            let (o, i) = (self.pages.obj[p as usize], self.pages.index[p as usize]);
            self.fs_data_written(ctx, o, i as u64);
            if done <= ctx.now {
                self.end_writeback(p);
            } else {
                self.pages.io_done_ns[p as usize] = done;
                self.completions.push(std::cmp::Reverse((done, p)));
            }
        }
        pfns.clear();
        done
    }

    /// fsync(): write back every dirty page of the file, then wait for a journal commit
    /// that covers them (jbd2 group commit, see [`Journal`]).
    pub fn fsync(&mut self, ctx: &mut Ctx, obj: u32) {
        self.sync_file(ctx, obj, false);
    }

    /// fdatasync(): write back every dirty page of the file and wait for it; commit the
    /// journal only if the file was extended since its last commit
    /// ([`Object::datasync_meta`]). An overwrite of allocated blocks dirties only the
    /// inode's timestamps (I_DIRTY_SYNC, `i_sync_tid`), which a datasync does not wait for.
    /// Kernel: `ext4_sync_file()` waits for `i_datasync_tid` when `datasync`
    /// (v4.7: `jbd2_complete_transaction()`, which returns at once for a committed tid;
    /// v6.x: `ext4_fsync_journal()`), and, when that tid sends no barrier
    /// (`jbd2_trans_will_send_data_barrier()`), issues a cache flush
    /// (`blkdev_issue_flush()`). Simplifies: the flush costs nothing, as the device model
    /// has no volatile write cache (a write completes when it is on the medium,
    /// [`crate::Io`]). PostgreSQL flushes its WAL this way (`wal_sync_method = fdatasync`,
    /// the default on Linux, on preallocated segments).
    pub fn fdatasync(&mut self, ctx: &mut Ctx, obj: u32) {
        self.sync_file(ctx, obj, true);
    }

    /// `ext4_sync_file()`: [`Mm::fsync`] or, with `datasync`, [`Mm::fdatasync`].
    fn sync_file(&mut self, ctx: &mut Ctx, obj: u32, datasync: bool) {
        let o = &self.objects[obj as usize];
        let commit = if datasync {
            o.datasync_meta
        } else {
            o.nr_dirty > 0
        };
        let done = self.writeback_file(ctx, obj, u64::MAX, BioOp::WriteSync);
        let mut wait = done.max(self.objects[obj as usize].wb_done_max);
        if commit {
            self.objects[obj as usize].datasync_meta = false;
            let dev = self.cfg.fs_dev;
            let j = &mut self.journal;
            let commit_done = if j.next_commit_done > ctx.now && j.next_commit_start > ctx.now {
                // A commit is already queued behind the running one: ride along.
                j.next_commit_done
            } else {
                // Start a commit now, or right after the running one completes.
                let start = j.running_done.max(ctx.now).max(done);
                // The jbd2 commit block: REQ_SYNC.
                let Submitted {
                    done: d,
                    cpu_ns: cpu,
                    ..
                } = ctx
                    .io
                    .submit(dev, start, BioOp::WriteSync, ctx.kswapd, JOURNAL_SECTOR, 1);
                ctx.cpu_ns += cpu + self.cfg.costs.io_submit_ns;
                let j = &mut self.journal;
                if start > ctx.now {
                    j.next_commit_start = start;
                    j.next_commit_done = d;
                } else {
                    j.running_done = d;
                }
                d
            };
            let j = &mut self.journal;
            if j.next_commit_start <= ctx.now && j.next_commit_done > j.running_done {
                // The queued commit has started: it is the running one now.
                j.running_done = j.next_commit_done;
            }
            wait = wait.max(commit_done);
        }
        ctx.wait(wait);
    }
}

/// What one flusher pass did ([`Mm::flusher_run`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlusherPass {
    /// Dirty pages are still above the background threshold.
    pub more: bool,
    /// Pages the pass put under writeback.
    pub written: u64,
}

impl Mm {
    /// One pass of the flusher (`wb_workfn()`): background writeback while dirty pages exceed
    /// the background threshold (or reclaim asked for it), and expired inodes (kupdate).
    /// Says whether more work remains and how many pages the pass wrote.
    pub fn flusher_run(&mut self, ctx: &mut Ctx, expire_ns: u64) -> FlusherPass {
        let vmscan = std::mem::replace(&mut self.flusher_wanted, false);
        let mut budget = MAX_WRITEBACK_PAGES * 4;
        let mut written = 0;
        for obj in 0..self.objects.len() as u32 {
            if budget == 0 {
                break;
            }
            let o = &self.objects[obj as usize];
            if o.nr_dirty == 0 {
                continue;
            }
            let expired = o.dirtied_when > 0 && o.dirtied_when + expire_ns <= ctx.now;
            if vmscan || expired || self.wb_over_bg_thresh() {
                let before = self.objects[obj as usize].nr_dirty;
                // wb_check_background_flush() / wb_check_old_data_flush(): for_background
                // or for_kupdate, REQ_BACKGROUND; a pass reclaim asked for
                // (WB_REASON_VMSCAN) carries neither.
                let op = if vmscan {
                    BioOp::Write
                } else {
                    BioOp::WriteBackground
                };
                self.writeback_file(ctx, obj, MAX_WRITEBACK_PAGES.min(budget), op);
                written += before.saturating_sub(self.objects[obj as usize].nr_dirty);
                budget = budget.saturating_sub(MAX_WRITEBACK_PAGES);
            }
        }
        FlusherPass {
            more: self.wb_over_bg_thresh(),
            written,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel thread that, at its `turn`-th preemption point, counts the locked folios of
    /// the window [`WINDOW`] and runs a kswapd pass (priority 0) over everything.
    #[derive(Default)]
    struct Kthread {
        turn: u64,
        calls: u64,
        locked: u64,
        reclaimed: u64,
    }

    const WINDOW: std::ops::Range<u32> = 1000..1032;

    impl crate::CondResched for Kthread {
        fn cond_resched(
            &mut self,
            mm: &mut Mm,
            io: &mut dyn crate::Io,
            now: u64,
            _: u64,
        ) -> Option<u64> {
            self.calls += 1;
            if self.calls == self.turn {
                self.locked = WINDOW
                    .filter(|&i| {
                        mm.cache_lookup(1, i)
                            .is_some_and(|p| mm.pages.test(p, pg::LOCKED))
                    })
                    .count() as u64;
                self.reclaimed = crate::testutil::kswapd_pass_at(mm, io, now, 10_000);
            }
            None
        }
    }

    /// Each folio allocation of a readahead window is a preemption point (`might_alloc()`):
    /// a 32-page read() of a cold file region allocates its 32-page window folio by folio,
    /// and a kswapd that takes the CPU before the 16th finds the 15 already added locked in
    /// the page cache. Its pass at priority 0 reclaims every clean page read before (500 and
    /// the readahead past them) and keeps those 15; the read then completes its window.
    /// Order-0 folios, no swap, no memory pressure (the only points are readahead's). Debug
    /// build: milliseconds.
    #[test]
    fn readahead_allocations_are_preemption_points() {
        let mut cfg = crate::testutil::tiny_config(crate::BalanceKind::RefaultCost, 4096);
        cfg.swap_areas.clear();
        cfg.max_file_folio_order = 0;
        let mut mm = Mm::new(cfg);
        let mut io = crate::InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.file_read(&mut ctx, 1, 0, 500);
        // 500 pages and the readahead past them.
        let before = mm.lruvec_hier(0, LruList::InactiveFile);
        assert!(before >= 500);
        let mut k = Kthread {
            turn: 16,
            ..Default::default()
        };
        let mut ctx = Ctx::new(0, &mut io, 0);
        ctx.resched = Some(&mut k);
        mm.file_read(&mut ctx, 1, WINDOW.start, WINDOW.len() as u32);
        assert_eq!(
            k.calls,
            WINDOW.len() as u64,
            "one point per folio of the window"
        );
        assert_eq!(k.locked, 15);
        assert_eq!(k.reclaimed, before);
        assert!(WINDOW.clone().all(|i| mm.cache_lookup(1, i).is_some()));
        assert_eq!(mm.lruvec_hier(0, LruList::InactiveFile), 32);
        mm.check_invariants().unwrap();
    }

    /// A machine whose memory is all anon without swap: nothing can be reclaimed.
    fn full_of_unswappable_anon() -> Mm {
        let mut cfg = crate::testutil::tiny_config(crate::BalanceKind::RefaultCost, 4096);
        cfg.swap_areas.clear();
        let mut mm = Mm::new(cfg);
        let mut io = crate::InstantIo;
        for i in 0..8192 {
            let mut ctx = Ctx::new(0, &mut io, 0);
            mm.touch(&mut ctx, 0, i, true);
            if ctx.oom {
                break;
            }
        }
        mm
    }

    /// Issue 20 item 2: readahead allocates with readahead_gfp_mask() (__GFP_NORETRY): after
    /// one round of direct reclaim that frees nothing it fails without invoking OOM, where a
    /// page fault's GFP_HIGHUSER_MOVABLE allocation loops to OOM.
    #[test]
    fn readahead_allocation_gives_up_where_a_fault_would_oom() {
        let mut mm = full_of_unswappable_anon();
        let mut io = crate::InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        let stalls = mm.ev.get(Ev::AllocStallMovable);
        assert_eq!(mm.alloc_pages(&mut ctx, 0, RA), None);
        assert!(!ctx.oom, "a readahead allocation must not OOM");
        assert_eq!(
            mm.ev.get(Ev::AllocStallMovable),
            stalls + 1,
            "one round of reclaim"
        );
        assert_eq!(mm.alloc_pages(&mut ctx, 0, Gfp::HIGHUSER_MOVABLE), None);
        assert!(ctx.oom);
    }

    /// `do_try_to_free_pages()` counts a stall under `gfp_zone()` of the mask
    /// (`sc->reclaim_idx`), not under the machine's highest zone (this machine's only zone,
    /// Normal): GFP_HIGHUSER_MOVABLE stalls count as `allocstall_movable` though no Movable
    /// zone exists, GFP_KERNEL stalls as `allocstall_normal` (Debian 6.1 in a 256 MiB VM, DMA
    /// and DMA32 only: `allocstall_movable` 61–63 in anon-grow runs, every other zone 0).
    #[test]
    fn allocstall_counts_the_masks_zone_not_the_highest_zone() {
        let mut mm = full_of_unswappable_anon();
        let mut io = crate::InstantIo;
        let before = |mm: &Mm| {
            [
                mm.ev.get(Ev::AllocStallDma),
                mm.ev.get(Ev::AllocStallDma32),
                mm.ev.get(Ev::AllocStallNormal),
                mm.ev.get(Ev::AllocStallMovable),
            ]
        };
        let b = before(&mm);
        let mut ctx = Ctx::new(0, &mut io, 0);
        assert_eq!(mm.alloc_pages(&mut ctx, 0, RA), None);
        let a = before(&mm);
        assert_eq!(
            [a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]],
            [0, 0, 0, 1]
        );
        let mut ctx = Ctx::new(0, &mut io, 0);
        assert_eq!(mm.alloc_pages(&mut ctx, 0, Gfp::KERNEL), None);
        let c = before(&mm);
        assert_eq!([c[0] - a[0], c[1] - a[1], c[3] - a[3]], [0, 0, 0]);
        assert!(c[2] > a[2], "GFP_KERNEL stalls count as allocstall_normal");
    }

    /// When readahead cannot allocate, read() still creates the folio it needs with the
    /// mapping's full mask (filemap_create_folio()); here that reaches OOM, which the read
    /// reports instead of returning short without it.
    #[test]
    fn read_creates_the_needed_folio_when_readahead_fails() {
        let mut mm = full_of_unswappable_anon();
        let mut io = crate::InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.file_read(&mut ctx, 1, 0, 32);
        assert!(
            ctx.oom,
            "the read's own folio is allocated with the full mask"
        );
        assert!(mm.cache_lookup(1, 0).is_none());
    }
    /// Two tasks streaming the two halves of one file, one page per read() in turn, each
    /// read through its own open file (`struct file`'s `f_ra`): each keeps its own window,
    /// so after the first synchronous miss every window is started by an asynchronous hit
    /// on the PG_readahead folio and grows to the maximum. With one state shared by both
    /// (the model until session 16), each reader's hit found the other's window ("lost the
    /// window") and their misses were judged against the other's last read.
    #[test]
    fn each_task_reads_through_its_own_readahead_window() {
        let mut cfg = crate::testutil::tiny_config(crate::BalanceKind::RefaultCost, 16384);
        cfg.readahead_max_pages = 64;
        let mut mm = Mm::new(cfg);
        let mut io = crate::InstantIo;
        let half = 2048u32;
        let mut sync_misses = [0u32; 2];
        for p in 0..1024u32 {
            for task in 0..2u32 {
                let page = task * half + p;
                let resident = mm.cache_lookup(1, page).is_some();
                let mut ctx = Ctx::new(0, &mut io, 0);
                ctx.task = task;
                mm.file_read(&mut ctx, 1, page, 1);
                sync_misses[task as usize] += !resident as u32;
            }
        }
        // Task 0 starts at index 0 (the initial window); task 1's first read, in the
        // middle of the file with nothing cached before it, is a standalone random read,
        // and its second, now sequential to its own first, starts its window.
        assert_eq!(sync_misses, [1, 2], "synchronous misses per reader");
        for task in 0..2u32 {
            let ra = mm.open_file(task, 1).ra;
            assert_eq!(ra.size, 64, "task {task}'s window grew to read_ahead_kb");
            assert_eq!(ra.prev_index, (task * half + 1024) as u64);
            assert!(
                ra.start >= (task * half + 1024) as u64
                    && ra.start < (task * half + 1024 + 64) as u64
            );
        }
        assert_eq!(
            mm.objects[1].file.ra.size, 0,
            "no read went through the object's own state"
        );
    }

    /// page_cache_ra_order(): the first large folio that cannot be allocated ends the
    /// large-folio loop and do_page_cache_ra() reads the rest of the window in order-0
    /// folios. Free memory here is order-3 blocks only (every other one taken): the order-5
    /// window's first folio fails, and the window is read in order-0 folios, where the
    /// model used to walk down the orders and read order-3 folios.
    #[test]
    fn failed_large_readahead_folio_falls_back_to_order_zero() {
        let mut mm = file_mm();
        for zi in 0..mm.zones.len() {
            let mut taken = Vec::new();
            for t in 0..crate::mmzone::MIGRATE_TYPES as u8 {
                while let Some(p) = mm.zones[zi].rmqueue_smallest(&mut mm.pages, 3, t) {
                    taken.push(p);
                }
            }
            for p in taken.into_iter().filter(|p| (p >> 3) % 2 == 0) {
                mm.zones[zi].free_block(&mut mm.pages, p, 3);
            }
        }
        assert!(mm
            .zones
            .iter()
            .all(|z| z.nr_free[4..].iter().all(|&n| n == 0)));
        let mut io = crate::InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.ra_read(&mut ctx, 1, 0, 32, u64::MAX, 5, false, RA);
        for i in 0..32 {
            let p = mm.cache_lookup(1, i).expect("the window is read");
            assert_eq!(mm.pages.hot[p as usize].order, 0, "index {i}");
        }
    }

    /// The folio orders of a sequential 32-page-per-read stream with read_ahead_kb = 8192,
    /// as this host's 6.18 kernel allocated them (`mm_filemap_add_to_page_cache`).
    #[test]
    fn readahead_folio_orders_ramp_from_order_zero() {
        let mut cfg = crate::testutil::tiny_config(crate::BalanceKind::RefaultCost, 16384);
        cfg.readahead_max_pages = 2048;
        let mut mm = Mm::new(cfg);
        let mut io = crate::InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in (0..6144).step_by(32) {
            mm.file_read(&mut ctx, 1, p, 32);
        }
        let order_at = |i: u32| mm.pages.hot[mm.cache_lookup(1, i).unwrap() as usize].order;
        for (from, to, order) in [
            (0, 127, 0),
            (128, 383, 2),
            (384, 895, 4),
            (896, 1919, 6),
            (1920, 2047, 7),
            (2048, 4095, 8),
            (4096, 6143, 9),
        ] {
            for i in [from, to] {
                assert_eq!(order_at(i), order, "index {i}");
            }
        }
    }

    /// page_cache_sync_ra()'s sequential test, `index - prev_index <= 1` unsigned.
    #[test]
    fn sequential_miss_is_the_next_page_or_the_one_after() {
        assert!(sequential_miss(10, 10));
        assert!(sequential_miss(10, 11));
        assert!(!sequential_miss(10, 12));
        assert!(!sequential_miss(10, 9));
        assert!(!sequential_miss(10, 0));
        // No read yet (the kernel's prev_pos = -1).
        assert!(!sequential_miss(0, 0));
        assert!(!sequential_miss(0, 1));
    }

    /// Context readahead's window, hand-computed (max 32).
    #[test]
    fn context_readahead_window() {
        // 6 resident pages before a 1-page miss at 100: 6 + 1.
        assert_eq!(context_ra_window(100, 1, 32, 6), Some(7));
        // No more resident pages than the request: a random read.
        assert_eq!(context_ra_window(100, 1, 32, 1), None);
        assert_eq!(context_ra_window(100, 4, 32, 4), None);
        assert_eq!(context_ra_window(100, 4, 32, 5), Some(9));
        // Capped at max.
        assert_eq!(context_ra_window(100, 1, 32, 32), Some(32));
        // Resident from page 0: the run counts twice.
        assert_eq!(context_ra_window(10, 1, 32, 10), Some(21));
        assert_eq!(context_ra_window(10, 1, 32, 9), Some(10));
    }

    fn file_mm() -> Mm {
        let cfg = crate::testutil::tiny_config(crate::BalanceKind::RefaultCost, 4096);
        Mm::new(cfg)
    }

    fn resident(mm: &Mm, pages: std::ops::Range<u32>) -> Vec<u32> {
        pages.filter(|&i| mm.cache_lookup(1, i).is_some()).collect()
    }

    /// A backward jump after a read is not sequential: a random read() miss without
    /// POSIX_FADV_RANDOM reads just its page (the model used to start a 4-page window).
    #[test]
    fn backward_miss_reads_just_the_request() {
        let mut mm = file_mm();
        let mut io = crate::InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.file_read(&mut ctx, 1, 100, 1);
        mm.file_read(&mut ctx, 1, 50, 1);
        assert_eq!(resident(&mm, 0..200), vec![50, 100]);
        // A forward miss one page past the previous read is sequential: 4 pages.
        mm.file_read(&mut ctx, 1, 52, 1);
        assert_eq!(resident(&mm, 50..60), vec![50, 52, 53, 54, 55]);
    }

    /// Context readahead: a miss that is not sequential for the file's state but follows
    /// resident pages reads a window sized by them.
    #[test]
    fn context_readahead_follows_the_cached_history() {
        let mut mm = file_mm();
        let mut io = crate::InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        // Pages 90-99 and 0-9 resident, read exactly (POSIX_FADV_RANDOM), then a far read.
        mm.set_hint(1, Hint::Random);
        for p in (90..100).chain(0..10) {
            mm.file_read(&mut ctx, 1, p, 1);
        }
        mm.set_hint(1, Hint::Normal);
        mm.file_read(&mut ctx, 1, 500, 1);
        // Miss at 100: 10 resident before it → 11 pages, 100-110.
        mm.file_read(&mut ctx, 1, 100, 1);
        assert_eq!(resident(&mm, 100..120), (100..111).collect::<Vec<_>>());
        // Miss at 10 with 0-9 resident: from the file's start, 2 * 10 + 1 = 21 pages.
        mm.file_read(&mut ctx, 1, 700, 1);
        mm.file_read(&mut ctx, 1, 10, 1);
        assert_eq!(resident(&mm, 10..40), (10..31).collect::<Vec<_>>());
    }

    #[test]
    fn readahead_window_sizes() {
        // ra_pages 32: a 1-page request → 4 pages; 4 → 16 (<= max/4 → x2); 16 → 32.
        assert_eq!(get_init_ra_size(1, 32), 4);
        assert_eq!(get_init_ra_size(4, 32), 8);
        assert_eq!(get_init_ra_size(8, 32), 16);
        assert_eq!(get_init_ra_size(16, 32), 32);
        // next: 4 → 8 (4 >= 32/16 = 2, <= 16 → x2), 1 → 4 (1 < 2 → x4), 32 → 32.
        assert_eq!(get_next_ra_size(4, 32), 8);
        assert_eq!(get_next_ra_size(1, 32), 4);
        assert_eq!(get_next_ra_size(32, 32), 32);
    }

    /// An [`crate::Io`] that records each request's sector and length and completes it
    /// 1 ms after its submission.
    #[derive(Default)]
    struct RecordIo(Vec<(u64, u32)>);
    impl crate::Io for RecordIo {
        fn submit(&mut self, _: u32, now: u64, _: BioOp, _: bool, s: u64, n: u32) -> Submitted {
            self.0.push((s, n));
            Submitted {
                issued: now,
                done: now + 1_000_000,
                cpu_ns: 0,
            }
        }
    }

    /// `ext4_sync_file()`'s datasync: fdatasync() of an overwrite of a preallocated file
    /// (the file object exists at its full size: PostgreSQL's WAL segment) writes the two
    /// dirty pages and commits no journal transaction, so it waits 1 ms (one write); fsync()
    /// of the same overwrite also writes the jbd2 commit block at `JOURNAL_SECTOR` after the
    /// data (2 ms). fdatasync() of a file it extended commits too, and the commit clears the
    /// state: a later overwrite's fdatasync commits nothing. Debug build: milliseconds.
    #[test]
    fn fdatasync_commits_the_journal_only_after_the_file_grew() {
        let sync = |exists: bool, datasync: bool, pages: std::ops::Range<u32>| {
            let mut cfg = crate::testutil::tiny_config(crate::BalanceKind::RefaultCost, 1024);
            cfg.objects[1].exists = exists;
            let mut mm = Mm::new(cfg);
            let mut io = RecordIo::default();
            let mut waits = Vec::new();
            for (round, start) in pages.step_by(2).enumerate() {
                let now = round as u64 * 10_000_000;
                mm.run_completions(now);
                let mut ctx = Ctx::new(now, &mut io, 0);
                mm.file_write(&mut ctx, 1, start, 2);
                if datasync {
                    mm.fdatasync(&mut ctx, 1);
                } else {
                    mm.fsync(&mut ctx, 1);
                }
                waits.push(ctx.wait_until - now);
            }
            (io.0, waits)
        };
        // The file (object 1) starts at device page 0: object 0 is anon.
        // Overwrite of allocated blocks: data only.
        assert_eq!(sync(true, true, 4..6), (vec![(4, 2)], vec![1_000_000]));
        // fsync of the same overwrite: data, then the commit block.
        assert_eq!(
            sync(true, false, 4..6),
            (vec![(4, 2), (JOURNAL_SECTOR, 1)], vec![2_000_000])
        );
        // A new file: each write extends it (pages 0-1, then 2-3), so each fdatasync
        // commits; a rewrite of 0-1 after the commit does not (below).
        assert_eq!(
            sync(false, true, 0..4),
            (
                vec![(0, 2), (JOURNAL_SECTOR, 1), (2, 2), (JOURNAL_SECTOR, 1)],
                vec![2_000_000, 2_000_000]
            )
        );
        let mut cfg = crate::testutil::tiny_config(crate::BalanceKind::RefaultCost, 1024);
        cfg.objects[1].exists = false;
        let mut mm = Mm::new(cfg);
        let mut io = RecordIo::default();
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.file_write(&mut ctx, 1, 0, 2);
        mm.fdatasync(&mut ctx, 1);
        // The first writeback completed (the machine ends it at its completion time).
        mm.run_completions(10_000_000);
        let mut ctx = Ctx::new(10_000_000, &mut io, 0);
        mm.file_write(&mut ctx, 1, 0, 2);
        mm.fdatasync(&mut ctx, 1);
        assert_eq!(ctx.wait_until, 11_000_000);
        assert_eq!(io.0, vec![(0, 2), (JOURNAL_SECTOR, 1), (0, 2)]);
    }
}
