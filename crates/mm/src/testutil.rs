//! Small machines for unit tests.

use crate::*;

pub fn tiny_config(balance: BalanceKind, pages: u64) -> MmConfig {
    MmConfig {
        zones: vec![("Normal", pages)],
        swappiness: 60,
        min_free_kbytes: Some(16),
        watermark_scale_factor: 10,
        page_cluster: 3,
        dirty_ratio: 20,
        dirty_background_ratio: 10,
        dirty_expire_ns: 30_000_000_000,
        laptop_mode: false,
        balance,
        swap_readahead: SwapRaKind::Vma,
        objects: vec![
            ObjectCfg {
                kind: ObjKind::Anon,
                size_pages: pages * 2,
                exists: true,
            },
            ObjectCfg {
                kind: ObjKind::File,
                size_pages: pages * 4,
                exists: true,
            },
        ],
        memcgs: vec![],
        swap_areas: vec![SwapAreaCfg {
            dev: 1,
            size_pages: pages * 4,
            priority: 0,
            synchronous: true,
            rotational: false,
        }],
        fs_dev: 0,
        readahead_max_pages: 32,
        max_file_folio_order: 9,
        costs: Costs::default(),
    }
}

pub fn tiny_mm(balance: BalanceKind, pages: u64) -> Mm {
    Mm::new(tiny_config(balance, pages))
}
