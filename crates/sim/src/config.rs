//! Scenario → model configuration.

use refault_mm::*;
use refault_scenario as sc;

/// The frames a zone's span has besides its present pages ([`ZoneBoot::holes`]): the x86-64
/// DMA zone's pfn 0 and BIOS hole, so that its first pageblock holds them as the kernel's
/// does; none elsewhere.
fn zone_holes(z: &sc::ZoneSpec) -> u64 {
    if z.kind == sc::ZoneKind::Dma {
        sc::layout::dma_holes(z.pages)
    } else {
        0
    }
}

/// Translate the resolved scenario into the model's configuration.
pub fn mm_config(s: &sc::Scenario) -> MmConfig {
    MmConfig {
        zones: s
            .machine
            .zones
            .iter()
            .map(|z| (z.kind.name(), z.pages + zone_holes(z)))
            .collect(),
        zone_boot: s
            .machine
            .zones
            .iter()
            .map(|z| ZoneBoot {
                holes: zone_holes(z),
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
        dirty_bytes: s.sysctl.dirty_bytes,
        dirty_background_bytes: s.sysctl.dirty_background_bytes,
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
                hugepage: match o.madvise {
                    sc::HugepageAdviceKind::None => HugepageAdvice::None,
                    sc::HugepageAdviceKind::Hugepage => HugepageAdvice::Hugepage,
                    sc::HugepageAdviceKind::Nohugepage => HugepageAdvice::NoHugepage,
                },
                mlock: o.mlock,
            })
            .collect(),
        memcgs: s
            .cgroups
            .iter()
            .map(|c| MemcgCfg {
                max_pages: c.memory_max_pages,
                swappiness: c.swappiness.map(|v| v as u64),
                swap_max_pages: c.swap_max_pages,
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
        thp_enabled: match s.policy.thp_enabled {
            sc::ThpEnabledKind::Always => ThpEnabled::Always,
            sc::ThpEnabledKind::Madvise => ThpEnabled::Madvise,
            sc::ThpEnabledKind::Never => ThpEnabled::Never,
        },
        thp_defrag: match s.policy.thp_defrag {
            sc::ThpDefragKind::Always => ThpDefrag::Always,
            sc::ThpDefragKind::Defer => ThpDefrag::Defer,
            sc::ThpDefragKind::DeferMadvise => ThpDefrag::DeferMadvise,
            sc::ThpDefragKind::Madvise => ThpDefrag::Madvise,
            sc::ThpDefragKind::Never => ThpDefrag::Never,
        },
        cgroup_v1: s.model.cgroup_version == 1,
        fs: fs_config(s),
        memcg_stats_flush_ns: s.model.memcg_stats_flush_ns,
        memcg_stats_first_flush_ns: s.model.memcg_stats_first_flush_ns,
        kernel: refault_mm::workingset::KernelVersion::parse(&s.model.kernel).unwrap_or_default(),
        nr_cpus: s.machine.cpus.max(1),
        costs: Costs {
            touch_ns: s.costs.touch_ns,
            minor_fault_ns: s.costs.minor_fault_ns,
            major_fault_ns: s.costs.major_fault_ns,
            pagecache_hit_ns: s.costs.pagecache_hit_ns,
            page_alloc_ns: s.costs.page_alloc_ns,
            scan_per_page_ns: s.costs.scan_per_page_ns,
            rmap_per_call_ns: s.costs.rmap_per_call_ns,
            rmap_per_mapping_ns: s.costs.rmap_per_mapping_ns,
            unmap_per_mapping_ns: s.costs.unmap_per_mapping_ns,
            tlb_flush_local_ns: s.costs.tlb_flush_local_ns,
            tlb_shootdown_ns: s.costs.tlb_shootdown_ns,
            tlb_shootdown_per_cpu_ns: s.costs.tlb_shootdown_per_cpu_ns,
            pt_walk_per_pte_ns: s.costs.pt_walk_per_pte_ns,
            reclaim_per_page_ns: s.costs.reclaim_per_page_ns,
            io_submit_ns: s.costs.io_submit_ns,
            compact_scan_per_page_ns: s.costs.compact_scan_per_page_ns,
            migrate_per_page_ns: s.costs.migrate_per_page_ns,
            lru_lock_ns: s.costs.lru_lock_ns,
            lru_move_ns: s.costs.lru_move_ns,
        },
    }
}

/// The directories: file objects declared as trees of files (`file_size`), then the objects
/// of the `create` phases (file size: the phase's `pages_per_op`); `vm.vfs_cache_pressure`
/// and the slab-reclaim policy.
fn fs_config(s: &sc::Scenario) -> fs::FsCfg {
    let mut dirs: Vec<fs::DirCfg> = Vec::new();
    for (i, o) in s.objects.iter().enumerate() {
        if o.file_pages > 0 {
            dirs.push(fs::DirCfg {
                obj: i as u32,
                file_pages: o.file_pages as u32,
            });
        }
    }
    for t in &s.tasks {
        if let sc::Workload::Phases { phases, .. } = &t.workload {
            for p in phases {
                if p.access == sc::Access::Create && !dirs.iter().any(|d| d.obj == p.object as u32)
                {
                    dirs.push(fs::DirCfg {
                        obj: p.object as u32,
                        file_pages: p.pages_per_op,
                    });
                }
            }
        }
    }
    fs::FsCfg {
        dirs,
        vfs_cache_pressure: s.sysctl.vfs_cache_pressure as u64,
        boosted_reclaim_skips_slab: s.policy.boosted_reclaim_skips_slab,
    }
}
