//! Hand-built scenario pieces for the unit tests (the TOML parser lives elsewhere).

use refault_scenario::*;

pub(crate) fn object(name: &str, kind: ObjectKind, pages: u64) -> ObjectSpec {
    ObjectSpec {
        name: name.into(),
        kind,
        size_pages: pages,
        exists: kind == ObjectKind::File,
        file_pages: 0,
        madvise: HugepageAdviceKind::None,
        mlock: false,
    }
}

pub(crate) fn anon(name: &str, pages: u64) -> ObjectSpec {
    object(name, ObjectKind::Anon, pages)
}

pub(crate) fn shmem(name: &str, pages: u64) -> ObjectSpec {
    object(name, ObjectKind::Shmem, pages)
}

pub(crate) fn file(name: &str, pages: u64) -> ObjectSpec {
    object(name, ObjectKind::File, pages)
}

/// A phase with the scenario defaults for everything not given.
pub(crate) fn phase(
    obj: usize,
    access: Access,
    pattern: Pattern,
    start: u64,
    end: u64,
    ops: u64,
) -> PhaseSpec {
    PhaseSpec {
        name: "p".into(),
        access,
        object: obj,
        pattern,
        start_page: start,
        end_page: end,
        ops,
        pages_per_op: 1,
        write_fraction: 0.0,
        think_ns: 0,
        advice: Advice::Normal,
        fsync: false,
        mix: Vec::new(),
    }
}

pub(crate) fn task(name: &str, instances: u32, workload: Workload) -> TaskSpec {
    TaskSpec {
        name: name.into(),
        cgroup: None,
        instances,
        start_ns: 0,
        workload,
    }
}

/// A scenario around `objects` and `tasks`; machine and policy values are placeholders the
/// workload crate never reads.
pub(crate) fn scenario(objects: Vec<ObjectSpec>, tasks: Vec<TaskSpec>) -> Scenario {
    Scenario {
        name: "test".into(),
        description: String::new(),
        seed: 1,
        run: RunSpec {
            duration_ns: 0,
            warmup_ns: 0,
            sample_interval_ns: 1_000_000_000,
            drop_caches: vec![],
            sysctl_writes: vec![],
        },
        machine: MachineSpec {
            memory_pages: 1 << 18,
            cpus: 2,
            zones: vec![ZoneSpec::new(ZoneKind::Normal, 1 << 18)],
            from_zoneinfo: None,
        },
        sysctl: Sysctl {
            swappiness: 60,
            min_free_kbytes: None,
            watermark_scale_factor: 10,
            watermark_boost_factor: 15000,
            extfrag_threshold: 500,
            compaction_proactiveness: 20,
            page_cluster: 3,
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            dirty_bytes: 0,
            dirty_background_bytes: 0,
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
            vfs_cache_pressure: 100,
            laptop_mode: false,
        },
        policy: PolicySpec {
            lru: LruKind::Classic,
            balance: BalanceKind::RefaultCost,
            swap_readahead: SwapReadaheadKind::Vma,
            lru_gen_min_ttl_ms: 0,
            kswapd_compaction: KswapdCompactionKind::Kcompactd,
            boosted_reclaim_skips_slab: false,
            thp_enabled: ThpEnabledKind::Madvise,
            thp_defrag: ThpDefragKind::Madvise,
        },
        devices: vec![],
        fs_device: 0,
        swap: vec![],
        cgroups: vec![CgroupSpec {
            name: "cg".into(),
            memory_max_pages: None,
            swappiness: None,
            swap_max_pages: None,
        }],
        objects,
        tasks,
        costs: CostTable {
            touch_ns: 1,
            minor_fault_ns: 1,
            major_fault_ns: 1,
            pagecache_hit_ns: 1,
            page_alloc_ns: 1,
            scan_per_page_ns: 1,
            rmap_per_call_ns: 1,
            rmap_per_mapping_ns: 1,
            unmap_per_mapping_ns: 1,
            tlb_flush_local_ns: 1,
            tlb_shootdown_ns: 1,
            tlb_shootdown_per_cpu_ns: 1,
            pt_walk_per_pte_ns: 1,
            reclaim_per_page_ns: 1,
            io_submit_ns: 1,
            compact_scan_per_page_ns: 10,
            migrate_per_page_ns: 1_000,
            lru_lock_ns: 100,
            lru_move_ns: 50,
        },
        model: ModelKnobs {
            readahead_max_pages: 32,
            max_file_folio_order: 0,
            check_interval: 0,
            cgroup_version: 2,
            memcg_stats_flush_ns: 2_000_000_000,
            memcg_stats_first_flush_ns: 1_000_000_000,
            kernel: "6.18".into(),
        },
    }
}
