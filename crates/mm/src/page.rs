//! The page-frame table: the model's `struct page`/`struct folio` array, indexed by pfn.
//!
//! Structure-of-arrays, one entry per 4 KiB frame, so that the state of a simulated page
//! costs a few dozen bytes of host memory. A folio is a naturally aligned block of
//! `1 << order` frames; its state lives at the head pfn (as the kernel keeps folio state in
//! the head page). The LRU links double as buddy free-list links while a block is free, just
//! as the kernel reuses `page->lru` for `free_area` lists.

use crate::types::Pfn;
use crate::zeroed::ZeroedVec;

/// Folio flags (`enum pageflags` subset).
pub mod pg {
    pub const LRU: u32 = 1 << 0;
    pub const ACTIVE: u32 = 1 << 1;
    pub const REFERENCED: u32 = 1 << 2;
    pub const WORKINGSET: u32 = 1 << 3;
    /// Anon and shmem: reclaimed to swap, lives on the anon LRU.
    pub const SWAPBACKED: u32 = 1 << 4;
    pub const DIRTY: u32 = 1 << 5;
    pub const WRITEBACK: u32 = 1 << 6;
    /// Free me (rotate to the inactive tail) when writeback completes.
    pub const RECLAIM: u32 = 1 << 7;
    /// Marks the readahead trigger folio of a page-cache window (PG_readahead).
    pub const READAHEAD: u32 = 1 << 8;
    pub const SWAPCACHE: u32 = 1 << 9;
    pub const UNEVICTABLE: u32 = 1 << 10;
    /// Head page of an allocated folio (any order, including 0).
    pub const HEAD: u32 = 1 << 11;
    /// Free block head on a buddy free list (`PageBuddy`).
    pub const BUDDY: u32 = 1 << 12;
    /// Isolated from the LRU by a scanner (PG_lru clear, but owned by reclaim).
    pub const ISOLATED: u32 = 1 << 13;
    /// Swap cache folio read ahead and not yet hit (the swap-side use of PG_readahead).
    pub const SWAP_RA: u32 = 1 << 14;
    /// A read into the folio may still be in flight (`io_done_ns` is in the future as far as
    /// the last observer knew): the folio lock held during IO. Cleared lazily.
    pub const LOCKED: u32 = 1 << 15;
    /// Multi-gen LRU: the folio's generation + 1 (0 = not on a generation list), as the
    /// kernel's `LRU_GEN_MASK` field of `folio->flags`.
    pub const LRU_GEN_SHIFT: u32 = 16;
    pub const LRU_GEN_MASK: u32 = 7 << LRU_GEN_SHIFT;
    /// Multi-gen LRU: the refs counter of fd accesses beyond the first (`LRU_REFS_MASK`).
    pub const LRU_REFS_SHIFT: u32 = 19;
    pub const LRU_REFS_MASK: u32 = 3 << LRU_REFS_SHIFT;
    /// Multi-gen LRU, model-only: the generation list the folio is linked on (it differs from
    /// the generation after a page-table walk promoted the folio, until reclaim sorts it).
    pub const LRU_LIST_SHIFT: u32 = 21;
    pub const LRU_LIST_MASK: u32 = 3 << LRU_LIST_SHIFT;
    /// An anonymous THP mapped by its PMD (`folio_entire_mapcount() > 0`), counted in
    /// NR_ANON_THPS; cleared when the PMD is split (see [`crate::memory`]).
    pub const PMD_MAPPED: u32 = 1 << 23;
}

/// Who owns an allocated folio (the `mapping`/`index` pair of struct folio).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    /// Object (anon region, shmem region, file) index.
    pub obj: u32,
    /// Page index of the folio head within the object.
    pub index: u32,
}

/// The fields of a frame that the access path and the LRU read together (flags on every
/// hit; flags, links, memcg and order on every list operation), in one 16-byte record so that
/// they share a host cache line (four frames a line) instead of costing one line each.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    pub flags: u32,
    /// LRU links; buddy free-list links while the frame heads a free block.
    pub prev: u32,
    pub next: u32,
    /// Memory cgroup the folio is charged to.
    pub memcg: u16,
    /// Folio order at the head (for BUDDY heads: the free block's order).
    pub order: u8,
    /// Swap area of a SWAPCACHE folio's entry (the slot is in [`FrameTable::swap_slot`]).
    pub swap_area: u8,
}

// SAFETY: all fields are integers, valid for all-zero bytes.
unsafe impl crate::zeroed::Zeroable for Frame {}

impl crate::list::LinkStore for [Frame] {
    #[inline]
    fn prev(&self, i: usize) -> u32 {
        self[i].prev
    }
    #[inline]
    fn next(&self, i: usize) -> u32 {
        self[i].next
    }
    #[inline]
    fn set_prev(&mut self, i: usize, v: u32) {
        self[i].prev = v;
    }
    #[inline]
    fn set_next(&mut self, i: usize, v: u32) {
        self[i].next = v;
    }
}

pub struct FrameTable {
    /// Flags, LRU links, memcg, order and swap area ([`Frame`]).
    pub hot: ZeroedVec<Frame>,
    pub obj: ZeroedVec<u32>,
    pub index: ZeroedVec<u32>,
    /// Swap entry of a SWAPCACHE folio: (area << 32 | slot) compressed to area in
    /// [`Frame::swap_area`].
    pub swap_slot: ZeroedVec<u32>,
    /// Simulated time at which the folio's IO (read or writeback) completes; 0 = none.
    pub io_done_ns: ZeroedVec<u64>,
    /// For a BUDDY head: the migratetype of the free list the block is on. Before v6.10 a
    /// fallback moves free blocks to the stealing type's lists without retyping their
    /// pageblock (`steal_suitable_fallback()`), so the list is not always the pageblock's
    /// type; the kernel unlinks with `list_del()` and needs no record, the model's lists do.
    pub free_mt: ZeroedVec<u8>,
}

impl FrameTable {
    /// All frames zeroed: no flags, no links, no owner. The arrays take host memory only
    /// where frames are used (see [`crate::zeroed`]); the links and owner of a frame are
    /// meaningful only while it is on a list or allocated, and are written then.
    pub fn new(nr: usize) -> Self {
        FrameTable {
            hot: ZeroedVec::new(nr),
            obj: ZeroedVec::new(nr),
            index: ZeroedVec::new(nr),
            swap_slot: ZeroedVec::new(nr),
            io_done_ns: ZeroedVec::new(nr),
            free_mt: ZeroedVec::new(nr),
        }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.hot.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.hot.is_empty()
    }
    #[inline]
    pub fn test(&self, pfn: Pfn, f: u32) -> bool {
        self.hot[pfn as usize].flags & f != 0
    }
    #[inline]
    pub fn set(&mut self, pfn: Pfn, f: u32) {
        self.hot[pfn as usize].flags |= f;
    }
    #[inline]
    pub fn clear(&mut self, pfn: Pfn, f: u32) {
        self.hot[pfn as usize].flags &= !f;
    }
    /// Test and clear, returning the old state (`folio_test_clear_*`).
    #[inline]
    pub fn test_clear(&mut self, pfn: Pfn, f: u32) -> bool {
        let old = self.hot[pfn as usize].flags & f != 0;
        self.hot[pfn as usize].flags &= !f;
        old
    }
    /// `folio_nr_pages()`.
    #[inline]
    pub fn nr_pages(&self, pfn: Pfn) -> u64 {
        1u64 << self.hot[pfn as usize].order
    }
    #[inline]
    pub fn is_file_lru(&self, pfn: Pfn) -> bool {
        !self.test(pfn, pg::SWAPBACKED)
    }
    #[inline]
    pub fn owner(&self, pfn: Pfn) -> Owner {
        Owner {
            obj: self.obj[pfn as usize],
            index: self.index[pfn as usize],
        }
    }
    /// Wait for a read still in flight into `pfn` (`folio_wait_locked()`): returns the time
    /// the caller must wait until, clearing PG_locked once the IO is known to be done.
    #[inline]
    pub fn wait_locked(&mut self, pfn: Pfn, now: u64) -> u64 {
        if !self.test(pfn, pg::LOCKED) {
            return 0;
        }
        let t = self.io_done_ns[pfn as usize];
        if t <= now {
            self.clear(pfn, pg::LOCKED);
        }
        t
    }

    /// The head of the anonymous folio a present PTE's `pfn` belongs to: the pfn itself for a
    /// base page or a head, else the order-9-aligned head of the THP (anonymous large folios
    /// are all PMD-order and naturally aligned; a tail frame never carries `pg::HEAD`).
    #[inline]
    pub fn anon_folio_of(&self, pfn: Pfn) -> Pfn {
        if self.test(pfn, pg::HEAD) {
            pfn
        } else {
            pfn & !(crate::memory::HPAGE_PMD_NR - 1)
        }
    }

    /// Start a read into `pfn` completing at `done`.
    #[inline]
    pub fn lock_for_io(&mut self, pfn: Pfn, done: u64) {
        self.io_done_ns[pfn as usize] = done;
        self.set(pfn, pg::LOCKED);
    }

    /// Host bytes per simulated page used by this table.
    pub const BYTES_PER_PAGE: usize = std::mem::size_of::<Frame>() + 4 * 3 + 8;
}
