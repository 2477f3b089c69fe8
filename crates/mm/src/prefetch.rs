//! Software prefetch of what an access will read, issued a few operations ahead.
//!
//! A hit is a chain of dependent host cache misses: the page-cache entry or PTE
//! (`objects[obj].ent[index]`), then the frame's flags (and list links when the folio moves
//! on its LRU). The simulator knows the workload's next operations before it runs them (the
//! generators do not depend on the model's state), so it asks for those lines early: the
//! entry some operations ahead ([`Mm::prefetch_entry`]), then, once the entry has had time to
//! arrive, the frame it names ([`Mm::prefetch_frame`]). Both only read; a prefetch changes no
//! state and no result, only when the host's memory is read.

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
        if let Some(f) = self.pages.flags.get(pfn) {
            prefetch(f);
            prefetch(&self.pages.prev[pfn]);
            prefetch(&self.pages.next[pfn]);
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
