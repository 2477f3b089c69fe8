//! Scenario → model configuration.

use refault_mm::*;
use refault_scenario as sc;

/// Translate the resolved scenario into the model's configuration.
pub fn mm_config(s: &sc::Scenario) -> MmConfig {
    MmConfig {
        zones: s
            .machine
            .zones
            .iter()
            .map(|z| (z.kind.name(), z.pages))
            .collect(),
        zone_boot: s
            .machine
            .zones
            .iter()
            .map(|z| ZoneBoot {
                reserved: z.reserved,
                kernel: z.kernel,
                wmark: z.wmark,
                protection: z.protection,
            })
            .collect(),
        lowmem_reserve_ratio: mmzone::DEFAULT_LOWMEM_RESERVE_RATIO,
        swappiness: s.sysctl.swappiness as u64,
        min_free_kbytes: s.sysctl.min_free_kbytes,
        watermark_scale_factor: s.sysctl.watermark_scale_factor as u64,
        watermark_boost_factor: s.sysctl.watermark_boost_factor as u64,
        extfrag_threshold: s.sysctl.extfrag_threshold as u64,
        compaction_proactiveness: s.sysctl.compaction_proactiveness as u64,
        kswapd_compaction: match s.policy.kswapd_compaction {
            sc::KswapdCompactionKind::Kcompactd => KswapdCompaction::Kcompactd,
            sc::KswapdCompactionKind::Kswapd => KswapdCompaction::Kswapd,
        },
        page_cluster: s.sysctl.page_cluster,
        dirty_ratio: s.sysctl.dirty_ratio as u64,
        dirty_background_ratio: s.sysctl.dirty_background_ratio as u64,
        dirty_expire_ns: s.sysctl.dirty_expire_centisecs as u64 * 10_000_000,
        laptop_mode: s.sysctl.laptop_mode,
        balance: match s.policy.balance {
            sc::BalanceKind::RefaultCost => BalanceKind::RefaultCost,
            sc::BalanceKind::Legacy => BalanceKind::Legacy,
        },
        lru: match s.policy.lru {
            sc::LruKind::Classic => LruKind::Classic,
            sc::LruKind::Mglru => LruKind::Mglru,
        },
        lru_gen_min_ttl_ns: s.policy.lru_gen_min_ttl_ms * 1_000_000,
        swap_readahead: match s.policy.swap_readahead {
            sc::SwapReadaheadKind::Cluster => SwapRaKind::Cluster,
            sc::SwapReadaheadKind::Vma => SwapRaKind::Vma,
        },
        objects: s
            .objects
            .iter()
            .map(|o| ObjectCfg {
                kind: match o.kind {
                    sc::ObjectKind::Anon => ObjKind::Anon,
                    sc::ObjectKind::Shmem => ObjKind::Shmem,
                    sc::ObjectKind::File => ObjKind::File,
                },
                size_pages: o.size_pages,
                exists: o.exists,
                mlock: o.mlock,
            })
            .collect(),
        memcgs: s
            .cgroups
            .iter()
            .map(|c| MemcgCfg {
                max_pages: c.memory_max_pages,
                swappiness: c.swappiness.map(|v| v as u64),
            })
            .collect(),
        swap_areas: s
            .swap
            .iter()
            .map(|a| SwapAreaCfg {
                dev: a.device as u32,
                size_pages: a.size_pages,
                priority: a.priority,
                synchronous: s.devices[a.device].synchronous,
                rotational: s.devices[a.device].rotational,
            })
            .collect(),
        fs_dev: s.fs_device as u32,
        readahead_max_pages: s.model.readahead_max_pages,
        max_file_folio_order: s.model.max_file_folio_order,
        cgroup_v1: s.model.cgroup_version == 1,
        memcg_stats_flush_ns: s.model.memcg_stats_flush_ns,
        memcg_stats_first_flush_ns: s.model.memcg_stats_first_flush_ns,
        costs: Costs {
            touch_ns: s.costs.touch_ns,
            minor_fault_ns: s.costs.minor_fault_ns,
            major_fault_ns: s.costs.major_fault_ns,
            pagecache_hit_ns: s.costs.pagecache_hit_ns,
            page_alloc_ns: s.costs.page_alloc_ns,
            scan_per_page_ns: s.costs.scan_per_page_ns,
            rmap_per_mapping_ns: s.costs.rmap_per_mapping_ns,
            pt_walk_per_pte_ns: s.costs.pt_walk_per_pte_ns,
            reclaim_per_page_ns: s.costs.reclaim_per_page_ns,
            io_submit_ns: s.costs.io_submit_ns,
            compact_scan_per_page_ns: s.costs.compact_scan_per_page_ns,
            migrate_per_page_ns: s.costs.migrate_per_page_ns,
        },
    }
}
