//! The event language: what a task asks of the kernel, one call at a time.
//!
//! Events carry page numbers within an object (an anonymous region or a file, by index into
//! `Scenario::objects`), never byte addresses. The simulator and the live-kernel executor
//! consume the same stream, so every event must be executable for real: a touch is one load or
//! store to a page of a mapping, a read is one pread() of `nr` whole pages, and so on.

/// Index of an object (anonymous region, shmem region or file) in `Scenario::objects`.
pub type ObjId = u32;

/// madvise()/posix_fadvise() hints a phase gives for the object it accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hint {
    /// MADV_NORMAL / POSIX_FADV_NORMAL.
    Normal,
    /// MADV_RANDOM / POSIX_FADV_RANDOM: no readahead, order-0 page-cache folios.
    Random,
    /// MADV_SEQUENTIAL / POSIX_FADV_SEQUENTIAL: doubled readahead window.
    Sequential,
}

/// One call a task makes. Small and `Copy` (16 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Load (or store if `write`) to page `page` of `obj` through its mapping: an anonymous
    /// region, a shmem region, or a shared mmap of a file.
    Touch { obj: ObjId, page: u32, write: bool },
    /// pread() of pages [page, page + nr) of file `obj`.
    Read { obj: ObjId, page: u32, nr: u32 },
    /// pwrite() of pages [page, page + nr) of file `obj` (extends the file if needed).
    Write { obj: ObjId, page: u32, nr: u32 },
    /// fsync() of file `obj`.
    Fsync { obj: ObjId },
    /// fdatasync() of file `obj`: its data and only the metadata a read needs (its size).
    /// Traces have no record for it: `refault trace record-scenario` writes `fsync`.
    Fdatasync { obj: ObjId },
    /// Create the file at pages [page, page + nr) of directory `obj` (a file object cut into
    /// files of `nr` pages): open(O_CREAT), write its `nr` pages, fsync it if `fsync`,
    /// close it.
    Create {
        obj: ObjId,
        page: u32,
        nr: u32,
        fsync: bool,
    },
    /// Access hint for `obj` from now on.
    Advise { obj: ObjId, hint: Hint },
    /// CPU work in user space between memory events.
    Think { ns: u32 },
    /// End of one workload operation (a transaction, a request, a read() of the benchmark):
    /// ops/s and latency percentiles count these.
    OpEnd,
    /// The task enters phase `idx` of its workload.
    Phase { idx: u16 },
    /// Allocate `1 << order` pages of kernel memory with gfp `gfp` ([`kgfp`] bits) into the
    /// task's slot `slot` (the kalloc workload). Simulation only: the live-kernel twin
    /// cannot make kernel allocations from user space.
    KernelAlloc { order: u8, gfp: u8, slot: u32 },
    /// Free the kernel memory in slot `slot` (nothing if its allocation failed).
    KernelFree { slot: u32 },
    /// fork(): the task becomes a new process whose address space is the (empty) anonymous
    /// object `obj`: its kernel stack and page-global directory are allocated. Simulation
    /// only (the process workload).
    Fork { obj: ObjId },
    /// exit(): the process of `Fork { obj }` ends; every page of `obj`, its swap slots and
    /// page tables, and the process's kernel pages are freed. Simulation only.
    Exit { obj: ObjId },
}

/// Bits of `Op::KernelAlloc::gfp`.
pub mod kgfp {
    /// `__GFP_DIRECT_RECLAIM`: may reclaim and compact directly (GFP_KERNEL); else
    /// GFP_NOWAIT, which only wakes kswapd.
    pub const DIRECT: u8 = 1 << 0;
    /// `__GFP_HIGH` (bit 3): the slow path may use part of the min watermark's reserve.
    pub const HIGH: u8 = 1 << 3;
    /// `__GFP_ATOMIC` (GFP_ATOMIC before v6.3): ALLOC_HARDER and the highatomic reserve.
    pub const ATOMIC: u8 = 1 << 4;
    /// Migratetype in bits 1..=2: 0 unmovable, 1 movable, 2 reclaimable (`enum migratetype`).
    pub const MT_SHIFT: u8 = 1;
    pub const MT_MASK: u8 = 3 << MT_SHIFT;
}

/// An event of a task (task = flattened instance index, see `TaskSource`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    pub task: u32,
    pub op: Op,
}

/// A lazily generated, deterministic stream of one task's operations.
pub trait EventSource {
    /// The next operation, or None when the task has finished.
    fn next_op(&mut self) -> Option<Op>;
    /// Total operations if known (for progress bars).
    fn len_hint(&self) -> Option<u64> {
        None
    }
}
