//! Software prefetch of what an access will read, issued a few operations ahead.
//!
//! A hit is a chain of dependent host cache misses: the page-cache entry or PTE
//! (`objects[obj].ent[index]`), then the frame's flags (and list links when the folio moves
//! on its LRU). The simulator knows the workload's next operations before it runs them (the
//! generators do not depend on the model's state), so it asks for those lines early: the
//! entry some operations ahead ([`Mm::prefetch_entry`]), then, once the entry has had time to
//! arrive, the frame it names ([`Mm::prefetch_frame`]). Both only read; a prefetch changes no
//! state and no result, only when the host's memory is read.
//!
//! Reclaim walks lists of isolated folios (`shrink_folio_list()`, `shrink_active_list()`)
//! and for each reads the folio's owner and then its PTE or page-cache entry (the rmap
//! walk): [`Mm::prefetch_isolated`] asks for the owner of a folio [`OWNER_AHEAD`] places
//! ahead and the entry of the one [`ENTRY_AHEAD`] ahead.

use crate::Mm;

/// Ask the host CPU to bring the cache line at `p` into its caches (no fault, no effect on
/// the program's results). A no-op where there is no stable prefetch instruction.
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it never faults and reads nothing into the program.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

impl Mm {
    /// Prefetch the page-cache entry or PTE of page `index` of object `obj` (nothing when
    /// out of range).
    #[inline]
    pub fn prefetch_entry(&self, obj: u32, index: u32) {
        if let Some(o) = self.objects.get(obj as usize) {
            if let Some(e) = o.ent.get(index as usize) {
                prefetch(e);
            }
        }
    }

    /// Prefetch the frame that page `index` of object `obj` maps, if resident: its flags and
    /// LRU links. Page-cache entries and PTEs both keep "present" in bit 63 and the pfn in
    /// the low 32 bits.
    #[inline]
    pub fn prefetch_frame(&self, obj: u32, index: u32) {
        let Some(o) = self.objects.get(obj as usize) else {
            return;
        };
        let Some(&e) = o.ent.get(index as usize) else {
            return;
        };
        if e & (1 << 63) == 0 {
            return;
        }
        let pfn = e as u32 as usize;
        if let Some(f) = self.pages.hot.get(pfn) {
            // Flags and LRU links: one record ([`crate::page::Frame`]).
            prefetch(f);
        }
    }
}

/// How many PTEs ahead a page-table walk (the multi-gen LRU's `walk_pte_range()` and
/// look-around) prefetches the frame a present entry maps: the walk reads the entries in
/// order (the hardware prefetcher follows them) but their frames at random, each a host cache
/// miss otherwise. Eight entries are one 64-byte line of entries; the speed gain was
/// measured side by side (README, "## Speed").
pub(crate) const WALK_AHEAD: u64 = 8;

/// How far ahead in a list of isolated folios their owner (`obj`, `index`) is prefetched.
const OWNER_AHEAD: usize = 8;
/// How far ahead their entry (PTE or page-cache entry) is prefetched; the owner was asked for
/// `OWNER_AHEAD - ENTRY_AHEAD` folios earlier.
const ENTRY_AHEAD: usize = 4;

impl Mm {
    /// Walking `list` (isolated folios) at position `i`: prefetch the owner of `list[i +
    /// OWNER_AHEAD]` and the entry of `list[i + ENTRY_AHEAD]`.
    #[inline]
    pub(crate) fn prefetch_isolated(&self, list: &[u32], i: usize) {
        if let Some(&pfn) = list.get(i + OWNER_AHEAD) {
            if let Some(o) = self.pages.obj.get(pfn as usize) {
                prefetch(o);
                prefetch(&self.pages.index[pfn as usize]);
            }
        }
        if let Some(&pfn) = list.get(i + ENTRY_AHEAD) {
            if (pfn as usize) < self.pages.len() {
                let o = self.pages.owner(pfn);
                self.prefetch_entry(o.obj, o.index);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::filemap::CACHE_PRESENT;
    use crate::memory::PTE_PRESENT;

    /// prefetch_frame() reads "present" and the pfn the way both entry kinds store them.
    #[test]
    fn entry_kinds_share_present_bit_and_pfn() {
        assert_eq!(CACHE_PRESENT, 1 << 63);
        assert_eq!(PTE_PRESENT, 1 << 63);
        let e = crate::filemap::cache_entry(12345, 3);
        assert_eq!(e as u32, 12345);
        assert_eq!(crate::memory::pte_pfn(PTE_PRESENT | 777), 777);
    }
}
