//! Dense per-page arrays whose host memory follows what the simulation touches.
//!
//! The frame table and the objects' page tables are indexed by pfn or page index and sized
//! by the configured machine or object, which can be far larger than what a workload touches
//! (a 1 TiB machine, a 16 TiB sparse object). [`ZeroedVec`] starts all-zero and takes its
//! memory from an anonymous private mapping made with `MAP_NORESERVE`: the kernel provides a
//! zeroed page the first time one is written, reading untouched parts costs nothing, and the
//! mapping is not charged against the overcommit heuristic up front. Access is a plain slice
//! (it dereferences to `[T]`), so the hot paths index it exactly like a `Vec`.
//!
//! Small arrays (and non-Unix hosts) use an ordinary zeroed allocation.
//!
//! The hot paths index these arrays at random (a page-cache entry, a PTE, a frame's flags
//! and list links per access), so with 4 KiB host pages nearly every access also misses the
//! host's TLB. Arrays of up to [`HUGE_MAX_BYTES`] are therefore aligned to 2 MiB and advised
//! `MADV_HUGEPAGE` (Linux): the host backs them with transparent huge pages where it can.
//! Larger arrays stay on base pages, so a sparse one (a 16 TiB object with a few pages
//! touched) still costs only what is touched; the bound caps the rounding a huge page can add
//! to a sparsely used array at that many bytes.

use std::ops::{Deref, DerefMut};

/// Types for which all-zero bytes are a valid value.
///
/// # Safety
/// Implementors must be plain integers (no padding, no invalid bit patterns).
pub unsafe trait Zeroable: Copy {}
// SAFETY: integers are valid for all-zero bytes.
unsafe impl Zeroable for u8 {}
// SAFETY: as above.
unsafe impl Zeroable for u16 {}
// SAFETY: as above.
unsafe impl Zeroable for u32 {}
// SAFETY: as above.
unsafe impl Zeroable for u64 {}

/// Arrays of at least this many bytes are mapped lazily (smaller ones are cheap anyway).
const MAP_MIN_BYTES: usize = 1 << 20;

/// The host's transparent huge page size (x86-64, arm64 with 4 KiB pages).
const HUGE_BYTES: usize = 2 << 20;

/// Mapped arrays up to this size are advised `MADV_HUGEPAGE` (see the module doc).
const HUGE_MAX_BYTES: usize = 256 << 20;

/// A fixed-length, zero-initialised array (see the module doc).
pub struct ZeroedVec<T: Zeroable> {
    ptr: *mut T,
    len: usize,
    /// Mapped with mmap (else a leaked boxed slice).
    mapped: bool,
    /// The whole mapping (it starts before `ptr` when `ptr` was aligned up to a huge page).
    map_base: *mut u8,
    map_len: usize,
}

// SAFETY: ZeroedVec owns its memory exclusively, like Vec.
unsafe impl<T: Zeroable + Send> Send for ZeroedVec<T> {}
// SAFETY: shared access is read-only, like Vec.
unsafe impl<T: Zeroable + Sync> Sync for ZeroedVec<T> {}

impl<T: Zeroable> ZeroedVec<T> {
    /// `len` zeroes.
    ///
    /// # Panics
    /// If the host cannot map the array (address space exhausted).
    pub fn new(len: usize) -> Self {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .expect("array size overflows");
        #[cfg(unix)]
        if bytes >= MAP_MIN_BYTES {
            let huge = cfg!(target_os = "linux") && bytes <= HUGE_MAX_BYTES;
            // A huge-page candidate is over-mapped by one huge page so that it can start on a
            // huge-page boundary.
            let map_len = if huge { bytes + HUGE_BYTES } else { bytes };
            // SAFETY: an anonymous private mapping; the kernel zero-fills it.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    map_len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            assert!(
                p != libc::MAP_FAILED,
                "cannot map {bytes} bytes of address space: {}",
                std::io::Error::last_os_error()
            );
            let base: *mut u8 = p.cast();
            let mut ptr = base;
            if huge {
                let off = (HUGE_BYTES - (base as usize) % HUGE_BYTES) % HUGE_BYTES;
                // SAFETY: off < HUGE_BYTES, so [ptr, ptr + bytes) lies inside the mapping.
                ptr = unsafe { base.add(off) };
                #[cfg(target_os = "linux")]
                // SAFETY: advice on part of our own mapping; it changes no contents (failure,
                // e.g. a host without THP, leaves base pages: ignored).
                unsafe {
                    libc::madvise(ptr.cast(), bytes, libc::MADV_HUGEPAGE);
                }
            }
            return ZeroedVec {
                ptr: ptr.cast(),
                len,
                mapped: true,
                map_base: base,
                map_len,
            };
        }
        let _ = bytes;
        // SAFETY: T is Zeroable, so zeroed memory is a valid [T].
        let b: Box<[T]> = unsafe { Box::new_zeroed_slice(len).assume_init() };
        ZeroedVec {
            ptr: Box::into_raw(b).cast(),
            len,
            mapped: false,
            map_base: std::ptr::null_mut(),
            map_len: 0,
        }
    }
}

impl<T: Zeroable> Drop for ZeroedVec<T> {
    fn drop(&mut self) {
        if self.mapped {
            #[cfg(unix)]
            // SAFETY: the mapping made in new(), of this size.
            unsafe {
                libc::munmap(self.map_base.cast(), self.map_len);
            }
        } else {
            // SAFETY: the boxed slice leaked in new().
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr, self.len)) });
        }
    }
}

impl<T: Zeroable> Deref for ZeroedVec<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: ptr is valid for len elements for as long as self lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Zeroable> DerefMut for ZeroedVec<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as above, and &mut self is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Zeroable> Default for ZeroedVec<T> {
    fn default() -> Self {
        Self::new(0)
    }
}

impl<T: Zeroable + std::fmt::Debug> std::fmt::Debug for ZeroedVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZeroedVec").field("len", &self.len).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_mapped_arrays_start_zero_and_hold_writes() {
        for len in [0usize, 5, MAP_MIN_BYTES / 8 + 3] {
            let mut v = ZeroedVec::<u64>::new(len);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&x| x == 0));
            if len > 0 {
                v[len - 1] = 7;
                v[0] = 9;
                assert_eq!((v[0], v[len - 1]), (9, 7));
            }
        }
    }

    /// 32 GiB of address space, more than many hosts have memory: mapping it is free and
    /// touching a few pages costs a few pages.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn a_huge_array_costs_only_what_is_touched() {
        let mut v = ZeroedVec::<u64>::new(1 << 32);
        v[(1 << 32) - 1] = 1;
        v[12345] = 2;
        assert_eq!(v[(1 << 32) - 1] + v[12345] + v[1 << 31], 3);
    }
}
