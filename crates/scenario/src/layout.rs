//! The zones an x86-64 kernel lays out for a machine of a given RAM size, and the memory the
//! kernel keeps for itself from boot.
//!
//! # Zone layout
//! `zone_sizes_init()` on x86-64 puts ZONE_DMA below 16 MiB (`MAX_DMA_PFN`), ZONE_DMA32
//! below 4 GiB (`MAX_DMA32_PFN`) and ZONE_NORMAL above. Which pfns hold RAM is the
//! firmware's e820 map; the model takes the map QEMU's default `pc` machine (the VM twin's)
//! and Firecracker give a guest, which this project's measurement host shows too:
//! - pfn 0 is reserved by the kernel (`e820: update [mem 0x0-0xfff] usable ==> reserved`)
//!   and pfns 0x9f..0xff are the EBDA and the legacy VGA/BIOS hole (640 KiB..1 MiB): the DMA
//!   zone spans pfns 1..4096 and has 4095 - 97 = 3998 present pages;
//! - RAM below 4 GiB ends at 3 GiB when the machine has 3.5 GiB or more (QEMU `pc`:
//!   `max-ram-below-4g`, rounded to a gigabyte; the PCI hole takes 3..4 GiB) and the rest is
//!   mapped above 4 GiB into ZONE_NORMAL; smaller machines have all their RAM below 4 GiB
//!   and no Normal zone.
//!
//! Holes take no frames in the model: a zone is its present pages.
//!
//! # Reserved memory (present - managed)
//! memblock reservations never reach the buddy allocator. Measured on this project's host
//! (kernel 6.18, 24 GiB, 2 CPUs; /proc/zoneinfo and the boot log): DMA 158 of 3998 pages,
//! DMA32 9528 of 782336, Normal 110758 of 5505024. The boot log explains them: the memmap
//! (64-byte `struct page` per 4 KiB: 1/64 of memory, 98304 pages), the dentry and inode hash
//! tables (48 MiB, sized by `alloc_large_system_hash()` from memory), the kernel image
//! (29 MiB after init memory is freed), per-CPU areas and firmware tables. All but the
//! fixed DMA part scale with memory, so the default reserves DMA's 158 pages and the same
//! fraction of every other zone as the host: 120286 of 6287360 present pages (1.913 %).
//! Scenarios are often scaled-down machines; the proportion keeps their managed memory in
//! the same relation to their size. `machine.kernel_reserved` sets the total instead and
//! `machine.from_zoneinfo` takes each zone's from a real machine.

use crate::model::{ZoneKind, ZoneSpec};

/// Pages of the DMA zone's span: pfns below 16 MiB (`MAX_DMA_PFN`).
pub const DMA_PFNS: u64 = 4096;
/// Pages of the 4 GiB boundary (`MAX_DMA32_PFN`).
pub const DMA32_PFNS: u64 = 1 << 20;
/// Present pages of a full DMA zone: pfns 1..4096 less the 97 pfns 0x9f..0xff.
pub const DMA_PRESENT: u64 = 3998;
/// Reserved pages of the DMA zone measured on real boots (3998 present, 3840 managed on the
/// project's host and in the VM twin's QEMU guests).
pub const DMA_RESERVED: u64 = 158;
/// The measured reservation outside DMA: reserved pages / present pages.
pub const RESERVED_NUM: u64 = 120_286;
pub const RESERVED_DEN: u64 = 6_287_360;

/// The present pages of each populated zone for `ram_pages` of RAM, in pfn order.
pub fn x86_64_zones(ram_pages: u64) -> Vec<(ZoneKind, u64)> {
    let below_4g = if ram_pages >= (3584 << 8) {
        // 3.5 GiB or more: RAM below 4 GiB ends at 3 GiB.
        3 << 18
    } else {
        ram_pages
    };
    let above_4g = ram_pages - below_4g;
    // The present pfns of [1, min(below_4g, 4096)) outside the hole [0x9f, 0x100).
    let dma_end = below_4g.min(DMA_PFNS);
    let hole = dma_end.clamp(0x9f, 0x100) - 0x9f;
    let dma = dma_end.saturating_sub(1) - hole;
    let dma32 = below_4g.saturating_sub(DMA_PFNS);
    [
        (ZoneKind::Dma, dma),
        (ZoneKind::Dma32, dma32),
        (ZoneKind::Normal, above_4g),
    ]
    .into_iter()
    .filter(|z| z.1 > 0)
    .collect()
}

/// The frames of the DMA zone's span below 16 MiB that are no RAM, for a DMA zone of
/// `present` pages: pfn 0 (reserved by the kernel, outside the zone, which starts at pfn 1)
/// and, once the zone reaches past them, the 97 pfns 0x9f..0xff of the BIOS hole. The model
/// gives them frames so that the zone's pageblocks line up with the kernel's (the zone
/// spans pfns 0..`present` + holes).
pub fn dma_holes(present: u64) -> u64 {
    let bios_hole = 0x100 - 0x9f;
    if present + 1 + bios_hole >= 0x100 {
        1 + bios_hole
    } else {
        1
    }
}

/// The default reservation of a zone of `present` pages (module doc).
pub fn default_reserved(kind: ZoneKind, present: u64) -> u64 {
    if kind == ZoneKind::Dma && present == DMA_PRESENT {
        DMA_RESERVED
    } else {
        present * RESERVED_NUM / RESERVED_DEN
    }
}

/// Spread `total` reserved pages over `zones` in proportion to their present pages (the
/// last zone takes the rounding remainder). Returns false when it does not fit.
pub fn spread_reserved(zones: &mut [ZoneSpec], total: u64) -> bool {
    let present: u64 = zones.iter().map(|z| z.pages).sum();
    if total >= present {
        return false;
    }
    let mut left = total;
    let n = zones.len();
    for (i, z) in zones.iter_mut().enumerate() {
        let r = if i + 1 == n {
            left
        } else {
            total * z.pages / present
        };
        z.reserved = r.min(z.pages - 1);
        left -= z.reserved;
    }
    left == 0
}

/// Hold `total` managed pages for the kernel, from the highest zone down (the zonelist
/// order boot-time allocations follow), each zone keeping at least one free page. Returns
/// false when they do not fit.
pub fn place_kernel_memory(zones: &mut [ZoneSpec], total: u64) -> bool {
    let mut left = total;
    for z in zones.iter_mut().rev() {
        let take = left.min(z.managed().saturating_sub(z.kernel + 1));
        z.kernel += take;
        left -= take;
    }
    left == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_of_256m_4g_and_64g_machines() {
        // 256 MiB = 65536 pages, all below 4 GiB: DMA 4095 - 97 = 3998 present pages,
        // DMA32 pfns 4096..65536 = 61440, no Normal zone.
        assert_eq!(
            x86_64_zones(65_536),
            vec![(ZoneKind::Dma, 3998), (ZoneKind::Dma32, 61_440)]
        );
        // 4 GiB = 1048576 pages >= 3.5 GiB: 3 GiB below 4 GiB (786432 pages, DMA32 =
        // 786432 - 4096 = 782336, as on the host), 1 GiB above (262144 pages).
        assert_eq!(
            x86_64_zones(1 << 20),
            vec![
                (ZoneKind::Dma, 3998),
                (ZoneKind::Dma32, 782_336),
                (ZoneKind::Normal, 262_144)
            ]
        );
        // 64 GiB = 16777216 pages: Normal = 16777216 - 786432 = 15990784.
        assert_eq!(
            x86_64_zones(16 << 20),
            vec![
                (ZoneKind::Dma, 3998),
                (ZoneKind::Dma32, 782_336),
                (ZoneKind::Normal, 15_990_784)
            ]
        );
        // 3 GiB < 3.5 GiB: everything below 4 GiB.
        assert_eq!(
            x86_64_zones(3 << 18)[1],
            (ZoneKind::Dma32, (3 << 18) - 4096)
        );
        // Tiny machines: 8 MiB = 2048 pfns, pfn 0 and the 97-page hole missing.
        assert_eq!(x86_64_zones(2048), vec![(ZoneKind::Dma, 2047 - 97)]);
        assert_eq!(x86_64_zones(100), vec![(ZoneKind::Dma, 99)]);
        assert!(x86_64_zones(1).is_empty());
    }

    /// The DMA zone's present pages plus its holes give back the span from pfn 0: 4096
    /// for a full zone (pfn 0 and 0x9f..0xff), 2048 for 8 MiB, 100 below the BIOS hole.
    #[test]
    fn dma_holes_restore_the_span_from_pfn_0() {
        for ram in [65_536u64, 1 << 20, 2048, 100] {
            let dma = x86_64_zones(ram)[0].1;
            assert_eq!(dma + dma_holes(dma), ram.min(DMA_PFNS), "ram {ram}");
        }
        assert_eq!(dma_holes(DMA_PRESENT), 98);
    }

    #[test]
    fn default_reservation_is_the_hosts() {
        // The host's 24 GiB layout reproduces its measured reservations: DMA 158, and
        // 782336 * 120286 / 6287360 = 14966 + 5505024 * 120286 / 6287360 = 105319 = 120285
        // (measured 9528 + 110758 = 120286; the split between the zones is proportional,
        // the kernel's puts the memmap and hash tables in Normal).
        assert_eq!(default_reserved(ZoneKind::Dma, 3998), 158);
        let z = x86_64_zones(6 << 20);
        assert_eq!(z[1].1 + z[2].1, 6_287_360);
        let r: u64 = z[1..].iter().map(|&(k, p)| default_reserved(k, p)).sum();
        assert_eq!(r, 120_285);
    }
}
