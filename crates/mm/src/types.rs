//! Constants, identifiers and small enums shared by the whole model.

/// A page frame number: index into the [`crate::page::FrameTable`].
pub type Pfn = u32;
/// "No pfn": the end of an intrusive list.
pub const NIL: u32 = u32::MAX;

/// Kernel: include/linux/swap.h `SWAP_CLUSTER_MAX` — the reclaim batch.
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// Kernel: mm/vmscan.c `DEF_PRIORITY` — scan `size >> priority` at the start of reclaim.
pub const DEF_PRIORITY: i32 = 12;
/// Kernel: include/linux/swap.h `MAX_RECLAIM_RETRIES`.
pub const MAX_RECLAIM_RETRIES: u32 = 16;
/// Kernel: `MAX_PAGE_ORDER` (default config): buddy orders 0..=10.
pub const MAX_PAGE_ORDER: u32 = 10;
pub const NR_PAGE_ORDERS: usize = MAX_PAGE_ORDER as usize + 1;
/// Kernel: `PAGE_ALLOC_COSTLY_ORDER`.
pub const PAGE_ALLOC_COSTLY_ORDER: u32 = 3;
/// Kernel: mm/vmscan.c `SWAP_CLUSTER_MAX_SKIPPED`.
pub const SWAP_CLUSTER_MAX_SKIPPED: u64 = SWAP_CLUSTER_MAX << 10;
/// Kernel: include/linux/memcontrol.h `MEMCG_CHARGE_BATCH`.
pub const MEMCG_CHARGE_BATCH: u64 = 64;
/// `HZ` jiffies, i.e. one second, in ns: the kernel writes its timeouts as fractions of HZ (HZ/10).
pub const HZ_NS: u64 = 1_000_000_000;

/// The five LRU lists, in the kernel's order (`enum lru_list`): the arithmetic
/// `inactive + LRU_ACTIVE`, `LRU_FILE * is_file` relies on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum LruList {
    InactiveAnon = 0,
    ActiveAnon = 1,
    InactiveFile = 2,
    ActiveFile = 3,
    Unevictable = 4,
}

pub const NR_LRU_LISTS: usize = 5;
pub const EVICTABLE_LRUS: [LruList; 4] = [
    LruList::InactiveAnon,
    LruList::ActiveAnon,
    LruList::InactiveFile,
    LruList::ActiveFile,
];

impl LruList {
    /// Kernel: `folio_lru_list()` arithmetic: base list of a type plus `LRU_ACTIVE`.
    pub fn of(file: bool, active: bool) -> LruList {
        match (file, active) {
            (false, false) => LruList::InactiveAnon,
            (false, true) => LruList::ActiveAnon,
            (true, false) => LruList::InactiveFile,
            (true, true) => LruList::ActiveFile,
        }
    }
    pub fn is_file(self) -> bool {
        matches!(self, LruList::InactiveFile | LruList::ActiveFile)
    }
    pub fn is_active(self) -> bool {
        matches!(self, LruList::ActiveAnon | LruList::ActiveFile)
    }
    pub fn idx(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            LruList::InactiveAnon => "inactive_anon",
            LruList::ActiveAnon => "active_anon",
            LruList::InactiveFile => "inactive_file",
            LruList::ActiveFile => "active_file",
            LruList::Unevictable => "unevictable",
        }
    }
}

/// `LRU_GEN_ANON`/`LRU_GEN_FILE` style type index: 0 = anon, 1 = file.
pub const ANON: usize = 0;
pub const FILE: usize = 1;

/// Zone index within the node (`enum zone_type` order: DMA32 below Normal).
pub type ZoneIdx = usize;

/// Integer square root (kernel `int_sqrt`): floor(sqrt(x)).
pub fn int_sqrt(x: u64) -> u64 {
    if x < 2 {
        return x;
    }
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

/// Kernel `ilog2` for non-zero values.
pub fn ilog2(x: u64) -> u32 {
    63 - x.max(1).leading_zeros()
}

/// Kernel `roundup_pow_of_two`.
pub fn roundup_pow_of_two(x: u64) -> u64 {
    x.max(1).next_power_of_two()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn int_sqrt_matches_floor_sqrt() {
        assert_eq!(int_sqrt(0), 0);
        assert_eq!(int_sqrt(10), 3);
        assert_eq!(int_sqrt(100), 10);
        assert_eq!(int_sqrt(1000), 31);
        assert_eq!(int_sqrt(10240), 101);
    }
    #[test]
    fn lru_list_arithmetic() {
        assert_eq!(LruList::of(true, false), LruList::InactiveFile);
        assert_eq!(LruList::of(false, true).idx(), 1);
        assert!(LruList::ActiveFile.is_file() && LruList::ActiveFile.is_active());
    }
}
