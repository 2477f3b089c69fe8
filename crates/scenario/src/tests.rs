//! Whole-file tests: a full example resolved to exact values, one test per error class with
//! its exact one-line message, overrides, the generated files and the bundled scenarios.
//! Tests of one part live in that part's module (`size`, `sysctl`, `overrides`, ...).

use super::*;
use std::path::PathBuf;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sets(pairs: &[&str]) -> Vec<(String, String)> {
    pairs.iter().map(|s| parse_override(s).unwrap()).collect()
}

fn ok(text: &str) -> Scenario {
    parse(text, "t.toml", &[], None).unwrap_or_else(|e| panic!("{e}"))
}

fn ok_with(text: &str, overrides: &[&str]) -> Scenario {
    parse(text, "t.toml", &sets(overrides), None).unwrap_or_else(|e| panic!("{e}"))
}

/// The error's kind and its one-line rendering.
fn err(text: &str, overrides: &[&str]) -> (ErrorKind, String) {
    let e = parse(text, "t.toml", &sets(overrides), None).expect_err("should fail");
    (e.kind(), e.to_string())
}

const MINIMAL: &str = "[machine]\nmemory = \"1G\"\n";

const FULL: &str = r#"name = "full"
description = "every feature once"
seed = 7

[run]
duration = "60s"
warmup = "10s"
sample_interval = "500ms"

[machine]
memory = "8G"
cpus = 2

[sysctl]
"vm.swappiness" = 100
"vm.min_free_kbytes" = 65536
"vm.page-cluster" = 0
"vm.laptop_mode" = 5

[policy]
balance = "refault-cost"

[lru_gen]
enabled = true
min_ttl_ms = 1000

[[device]]
name = "zram0"
preset = "zram"

[[device]]
name = "ssd"
preset = "nvme"
read_bw = "1G/s"
latency = "25us"

[[device]]
name = "slow"
preset = "hdd"

[[swap.area]]
device = "zram0"
size = "2G"

[[swap.area]]
device = "slow"
size = "1.5G"
priority = 5

[fs]
device = "ssd"

[[cgroup]]
name = "workload"
"memory.max" = "2G"
"memory.swappiness" = 30

[[cgroup]]
name = "batch"

[[object]]
name = "db"
kind = "file"
size = "5G"

[[object]]
name = "heap"
kind = "anon"
size = "100M"

[[object]]
name = "shm"
kind = "shmem"
size = "256M"

[[object]]
name = "wal"
kind = "file"
size = "64M"
exists = false

[[object]]
name = "items"
kind = "anon"
size = "1G"

[[object]]
name = "copy"
kind = "file"
size = "5G"
exists = false

[[task]]
name = "scan"
cgroup = "batch"
instances = 2
start = "1s"
repeat = 0

[[task.phase]]
name = "read"
access = "read"
object = "db"
range = ["1G", "1.5G"]
pages_per_op = 32
think = "1us"

[[task.phase]]
access = "touch"
object = "heap"
pattern = "zipf"
scatter = true
write_fraction = 0.25

[[task.phase]]
access = "touch-write"
object = "heap"
pattern = "hot-cold"
hot_fraction = 0.1
ops = 1000
advice = "sequential"

[[task.phase]]
access = "write"
object = "wal"
pattern = "random"
range = [0, 10000]
fsync = true

[[task]]
name = "client"
cgroup = "workload"
instances = 8

[task.pgbench]
shared_buffers = "shm"
database = "db"
wal = "wal"
transactions = 100

[[task]]
name = "cache"
workload = "memcached"

[task.memcached]
items = "items"
requests = 5000
zipf_s = 0.9

[[task]]
name = "cp"

[task.copy]
src = "db"
dst = "copy"

[model]
readahead_kb = 512

[model.cost]
scan_per_page = "50ns"
"#;

fn default_costs() -> CostTable {
    CostTable {
        touch_ns: 5,
        minor_fault_ns: 500,
        major_fault_ns: 2_000,
        pagecache_hit_ns: 200,
        page_alloc_ns: 150,
        scan_per_page_ns: 40,
        rmap_per_call_ns: 150,
        rmap_per_mapping_ns: 237,
        unmap_per_mapping_ns: 560,
        tlb_flush_local_ns: 137,
        tlb_shootdown_ns: 5_070,
        tlb_shootdown_per_cpu_ns: 200,
        pt_walk_per_pte_ns: 10,
        reclaim_per_page_ns: 150,
        io_submit_ns: 2_000,
        compact_scan_per_page_ns: 10,
        migrate_per_page_ns: 1_000,
        lru_lock_ns: 100,
        lru_move_ns: 50,
    }
}

fn default_sysctl() -> Sysctl {
    Sysctl {
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
    }
}

fn sata_ssd(name: &str) -> DeviceSpec {
    DeviceSpec {
        name: name.into(),
        preset: "sata-ssd".into(),
        latency_ns: 80_000,
        seek_ns: 0,
        read_bytes_per_sec: 500_000_000,
        write_bytes_per_sec: 450_000_000,
        queue_depth: 32,
        rotational: false,
        synchronous: false,
        cpu_ns_per_page: 0,
        read_cpu_ns_per_page: None,
        wbt_lat_usec: None,
    }
}

fn phase(name: &str, access: Access, object: usize, pattern: Pattern, end: u64) -> PhaseSpec {
    PhaseSpec {
        name: name.into(),
        access,
        object,
        // The default advice: random for a non-sequential read()/write() of a file; the
        // touches below are all of anon objects, which default to normal.
        advice: if pattern == Pattern::Sequential
            || matches!(access, Access::Touch | Access::TouchWrite)
        {
            Advice::Normal
        } else {
            Advice::Random
        },
        pattern,
        start_page: 0,
        end_page: end,
        ops: end,
        pages_per_op: 1,
        write_fraction: 0.0,
        think_ns: 0,
        fsync: false,
        mix: Vec::new(),
    }
}

#[test]
fn full_example_resolves_to_exact_values() {
    const G: u64 = 1 << 30;
    const M: u64 = 1 << 20;
    let pages = |bytes: u64| bytes / PAGE_SIZE;
    let expected = Scenario {
        name: "full".into(),
        description: "every feature once".into(),
        seed: 7,
        run: RunSpec {
            duration_ns: 60_000_000_000,
            warmup_ns: 10_000_000_000,
            sample_interval_ns: 500_000_000,
            drop_caches: vec![],
            sysctl_writes: vec![],
        },
        machine: MachineSpec {
            memory_pages: pages(8 * G),
            cpus: 2,
            // The x86-64 layout: DMA, 3 GiB below 4 GiB, 5 GiB above.
            zones: x86_64(pages(8 * G)),
            from_zoneinfo: None,
        },
        sysctl: Sysctl {
            swappiness: 100,
            min_free_kbytes: Some(65536),
            page_cluster: 0,
            laptop_mode: true,
            ..default_sysctl()
        },
        policy: PolicySpec {
            lru: LruKind::Mglru,
            balance: BalanceKind::RefaultCost,
            // A swap area on a rotational device: swap_use_vma_readahead() is false.
            swap_readahead: SwapReadaheadKind::Cluster,
            lru_gen_min_ttl_ms: 1000,
            kswapd_compaction: KswapdCompactionKind::Kcompactd,
            boosted_reclaim_skips_slab: false,
            thp_enabled: ThpEnabledKind::Madvise,
            thp_defrag: ThpDefragKind::Madvise,
        },
        devices: vec![
            DeviceSpec {
                name: "zram0".into(),
                preset: "zram".into(),
                latency_ns: 0,
                seek_ns: 0,
                read_bytes_per_sec: 8_000_000_000,
                write_bytes_per_sec: 8_000_000_000,
                queue_depth: 1024,
                rotational: false,
                synchronous: true,
                cpu_ns_per_page: 3_000,
                read_cpu_ns_per_page: None,
                wbt_lat_usec: None,
            },
            DeviceSpec {
                name: "ssd".into(),
                preset: "nvme".into(),
                latency_ns: 25_000,
                seek_ns: 0,
                read_bytes_per_sec: G,
                write_bytes_per_sec: 2_000_000_000,
                queue_depth: 128,
                rotational: false,
                synchronous: false,
                cpu_ns_per_page: 0,
                read_cpu_ns_per_page: None,
                wbt_lat_usec: None,
            },
            DeviceSpec {
                name: "slow".into(),
                preset: "hdd".into(),
                latency_ns: 500_000,
                seek_ns: 8_000_000,
                read_bytes_per_sec: 150_000_000,
                write_bytes_per_sec: 150_000_000,
                queue_depth: 1,
                rotational: true,
                synchronous: false,
                cpu_ns_per_page: 0,
                read_cpu_ns_per_page: None,
                wbt_lat_usec: None,
            },
        ],
        fs_device: 1,
        // Highest priority first; the area without one got -2.
        swap: vec![
            SwapSpec {
                device: 2,
                size_pages: pages(3 * G / 2),
                priority: 5,
            },
            SwapSpec {
                device: 0,
                size_pages: pages(2 * G),
                priority: -2,
            },
        ],
        cgroups: vec![
            CgroupSpec {
                name: "workload".into(),
                memory_max_pages: Some(pages(2 * G)),
                swappiness: Some(30),
                swap_max_pages: None,
            },
            CgroupSpec {
                name: "batch".into(),
                memory_max_pages: None,
                swappiness: None,
                swap_max_pages: None,
            },
        ],
        objects: vec![
            ObjectSpec {
                name: "db".into(),
                kind: ObjectKind::File,
                size_pages: pages(5 * G),
                exists: true,
                file_pages: 0,
                madvise: HugepageAdviceKind::None,
                mlock: false,
            },
            ObjectSpec {
                name: "heap".into(),
                kind: ObjectKind::Anon,
                size_pages: pages(100 * M),
                exists: false,
                file_pages: 0,
                madvise: HugepageAdviceKind::None,
                mlock: false,
            },
            ObjectSpec {
                name: "shm".into(),
                kind: ObjectKind::Shmem,
                size_pages: pages(256 * M),
                exists: false,
                file_pages: 0,
                madvise: HugepageAdviceKind::None,
                mlock: false,
            },
            ObjectSpec {
                name: "wal".into(),
                kind: ObjectKind::File,
                size_pages: pages(64 * M),
                exists: false,
                file_pages: 0,
                madvise: HugepageAdviceKind::None,
                mlock: false,
            },
            ObjectSpec {
                name: "items".into(),
                kind: ObjectKind::Anon,
                size_pages: pages(G),
                exists: false,
                file_pages: 0,
                madvise: HugepageAdviceKind::None,
                mlock: false,
            },
            ObjectSpec {
                name: "copy".into(),
                kind: ObjectKind::File,
                size_pages: pages(5 * G),
                exists: false,
                file_pages: 0,
                madvise: HugepageAdviceKind::None,
                mlock: false,
            },
        ],
        tasks: vec![
            TaskSpec {
                name: "scan".into(),
                cgroup: Some(1),
                instances: 2,
                start_ns: 1_000_000_000,
                workload: Workload::Phases {
                    repeat: 0,
                    phases: vec![
                        // [1 GiB, 1.5 GiB) of db in 32-page reads: 131072 pages, 4096 ops.
                        PhaseSpec {
                            start_page: pages(G),
                            end_page: pages(3 * G / 2),
                            ops: 4096,
                            pages_per_op: 32,
                            think_ns: 1_000,
                            ..phase("read", Access::Read, 0, Pattern::Sequential, 0)
                        },
                        PhaseSpec {
                            write_fraction: 0.25,
                            ..phase(
                                "phase1",
                                Access::Touch,
                                1,
                                Pattern::Zipf {
                                    s: 0.99,
                                    scatter: true,
                                },
                                pages(100 * M),
                            )
                        },
                        PhaseSpec {
                            ops: 1000,
                            advice: Advice::Sequential,
                            ..phase(
                                "phase2",
                                Access::TouchWrite,
                                1,
                                Pattern::HotCold {
                                    hot_fraction: 0.1,
                                    hot_probability: 0.8,
                                },
                                pages(100 * M),
                            )
                        },
                        // 10000 bytes: the end rounds up to 3 pages.
                        PhaseSpec {
                            fsync: true,
                            ..phase("phase3", Access::Write, 3, Pattern::Random, 3)
                        },
                    ],
                },
            },
            TaskSpec {
                name: "client".into(),
                cgroup: Some(0),
                instances: 8,
                start_ns: 0,
                workload: Workload::Pgbench(PgbenchSpec {
                    shared_buffers: 2,
                    database: 0,
                    wal: 3,
                    transactions: 100,
                    zipf_s: 0.8,
                    think_ns: 100_000,
                }),
            },
            TaskSpec {
                name: "cache".into(),
                cgroup: None,
                instances: 1,
                start_ns: 0,
                workload: Workload::Memcached(MemcachedSpec {
                    items: 4,
                    fill: true,
                    requests: 5000,
                    set_fraction: 0.1,
                    zipf_s: 0.9,
                    pages_per_request: 1,
                    think_ns: 20_000,
                    item_size: 0,
                    hashtable: None,
                }),
            },
            TaskSpec {
                name: "cp".into(),
                cgroup: None,
                instances: 1,
                start_ns: 0,
                workload: Workload::Copy(CopySpec {
                    src: 0,
                    dst: 5,
                    chunk_pages: 32,
                    passes: 1,
                    fsync: true,
                    think_ns: 0,
                }),
            },
        ],
        costs: CostTable {
            scan_per_page_ns: 50,
            ..default_costs()
        },
        model: ModelKnobs {
            readahead_max_pages: 128,
            max_file_folio_order: 9,
            check_interval: 0,
            cgroup_version: 2,
            memcg_stats_flush_ns: 2_000_000_000,
            memcg_stats_first_flush_ns: 1_000_000_000,
            kernel: "6.18".into(),
        },
    };
    assert_eq!(ok(FULL), expected);
}

#[test]
fn minimal_scenario_gets_every_default() {
    let s = parse(MINIMAL, "dir/small.toml", &[], None).unwrap();
    let expected = Scenario {
        name: "small".into(),
        description: String::new(),
        seed: 1,
        run: RunSpec {
            duration_ns: 0,
            warmup_ns: 0,
            // "auto" without a duration: adaptive.
            sample_interval_ns: 0,
            drop_caches: vec![],
            sysctl_writes: vec![],
        },
        // 1 GiB: DMA and DMA32 only.
        machine: MachineSpec {
            memory_pages: 262_144,
            cpus: 4,
            zones: x86_64(262_144),
            from_zoneinfo: None,
        },
        sysctl: default_sysctl(),
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
        // No device at all: a default sata-ssd "disk" holds the files.
        devices: vec![sata_ssd("disk")],
        fs_device: 0,
        swap: vec![],
        cgroups: vec![],
        objects: vec![],
        tasks: vec![],
        costs: default_costs(),
        model: ModelKnobs {
            readahead_max_pages: 32,
            max_file_folio_order: 9,
            check_interval: 0,
            cgroup_version: 2,
            memcg_stats_flush_ns: 2_000_000_000,
            memcg_stats_first_flush_ns: 1_000_000_000,
            kernel: "6.18".into(),
        },
    };
    assert_eq!(s, expected);
}

/// The default zones of `ram` pages: the x86-64 layout with the default reservations.
fn x86_64(ram: u64) -> Vec<ZoneSpec> {
    crate::layout::x86_64_zones(ram)
        .into_iter()
        .map(|(k, p)| ZoneSpec {
            reserved: crate::layout::default_reserved(k, p),
            ..ZoneSpec::new(k, p)
        })
        .collect()
}

#[test]
fn zone_layout_and_explicit_dma32() {
    let zones = |text: &str| ok(text).machine.zones;
    // 16 GiB: DMA 3998 pages (158 reserved), DMA32 782336 pages (782336 * 120286 /
    // 6287360 = 14967 reserved), Normal 16 GiB - 3 GiB = 3407872 pages (65197 reserved).
    let z = zones("[machine]\nmemory = \"16G\"\n");
    assert_eq!(
        z.iter()
            .map(|z| (z.kind, z.pages, z.reserved, z.kernel))
            .collect::<Vec<_>>(),
        vec![
            (ZoneKind::Dma, 3998, 158, 0),
            (ZoneKind::Dma32, 782_336, 14_967, 0),
            (ZoneKind::Normal, 3_407_872, 65_197, 0),
        ]
    );
    // Explicit reservations are spread by size; kernel memory comes from the top zone.
    let z =
        zones("[machine]\nmemory = \"16G\"\nkernel_reserved = \"64M\"\nkernel_memory = \"100M\"\n");
    assert_eq!(z.iter().map(|z| z.reserved).sum::<u64>(), 16_384);
    // 16384 * 3998 / 4194206 = 15, 16384 * 782336 / 4194206 = 3056, the rest 13313.
    assert_eq!(
        z.iter().map(|z| z.reserved).collect::<Vec<_>>(),
        vec![15, 3056, 13_313]
    );
    assert_eq!(
        z.iter().map(|z| z.kernel).collect::<Vec<_>>(),
        vec![0, 0, 25_600]
    );
    assert_eq!(
        zones("[machine]\nmemory = \"512M\"\ndma32 = \"16M\"\nkernel_reserved = 0\n"),
        vec![
            ZoneSpec::new(ZoneKind::Dma32, 4096),
            ZoneSpec::new(ZoneKind::Normal, 126_976),
        ]
    );
    assert_eq!(zones("[machine]\nmemory = \"2G\"\ndma32 = 0\n").len(), 1);
    // Memory rounds down to whole pages; pfn 0 is not usable.
    let s = ok("[machine]\nmemory = 10000\n");
    assert_eq!(s.machine.memory_pages, 2);
    assert_eq!(s.machine.zones, vec![ZoneSpec::new(ZoneKind::Dma, 1)]);
}

#[test]
fn machine_from_zoneinfo_of_this_host() {
    // /proc/zoneinfo of the project's measurement host (6.18, 24 GiB, 2 CPUs), checked in.
    let s = ok("[machine]\nfrom_zoneinfo = \"../../docs/zoneinfo/host-6.18-24g.zoneinfo\"\n");
    let z = &s.machine.zones;
    assert_eq!(
        z.iter()
            .map(|z| (z.kind, z.pages, z.managed(), z.wmark, z.protection))
            .collect::<Vec<_>>(),
        vec![
            (
                ZoneKind::Dma,
                3998,
                3840,
                Some([10, 13, 16]),
                Some([0, 3018, 24090])
            ),
            (
                ZoneKind::Dma32,
                782_336,
                772_808,
                Some([2115, 2887, 3659]),
                Some([0, 0, 21071])
            ),
            (
                ZoneKind::Normal,
                5_505_024,
                5_394_266,
                Some([14769, 20163, 25557]),
                Some([0, 0, 0])
            ),
        ]
    );
    assert_eq!(s.machine.memory_pages, 3998 + 782_336 + 5_505_024);
    assert!(z.iter().all(|z| z.kernel < z.managed()));
}

#[test]
fn from_zoneinfo_errors() {
    let e = err("[machine]\nmemory = \"1G\"\nfrom_zoneinfo = \"x\"\n", &[]);
    assert_eq!(
        e.1,
        "t.toml:2:10: machine.memory does not combine with machine.from_zoneinfo (the \
         zoneinfo gives the zones)"
    );
    let (kind, msg) = err("[machine]\nfrom_zoneinfo = \"no-such.zoneinfo\"\n", &[]);
    assert_eq!(kind, ErrorKind::Io);
    assert!(
        msg.starts_with("t.toml:2:17: machine.from_zoneinfo: cannot read no-such.zoneinfo:"),
        "{msg}"
    );
}

#[test]
fn swap_readahead_follows_the_kernel_choice() {
    let ra = |extra: &str| ok(&format!("{MINIMAL}{extra}")).policy.swap_readahead;
    let ssd_swap = "[[device]]\nname = \"ssd\"\n[[swap.area]]\ndevice = \"ssd\"\nsize = \"1G\"\n";
    let hdd_swap =
        "[[device]]\nname = \"hdd\"\npreset = \"hdd\"\n[[swap.area]]\ndevice = \"hdd\"\nsize = \"1G\"\n";
    assert_eq!(ra(ssd_swap), SwapReadaheadKind::Vma);
    assert_eq!(ra(hdd_swap), SwapReadaheadKind::Cluster);
    assert_eq!(
        ra(&format!("{ssd_swap}[swap]\nvma_ra_enabled = false\n")),
        SwapReadaheadKind::Cluster
    );
    assert_eq!(
        ra(&format!("{hdd_swap}[swap]\nreadahead = \"vma\"\n")),
        SwapReadaheadKind::Vma
    );
    assert_eq!(
        err(
            &format!("{MINIMAL}[swap]\nvma_ra_enabled = false\nreadahead = \"vma\"\n"),
            &[]
        ),
        (
            ErrorKind::InvalidValue,
            "t.toml:5:13: swap.readahead = \"vma\" contradicts swap.vma_ra_enabled = false".into()
        )
    );
}

/// swap_use_vma_readahead() is false while any active swap area is on a rotational device
/// (nr_rotate_swap): a swap file on the file system's rotational disk turns the whole
/// machine, zram included, to cluster readahead; a rotational device without swap does not.
#[test]
fn a_rotational_swap_area_anywhere_selects_cluster_readahead() {
    let ra = |extra: &str| ok(&format!("{MINIMAL}{extra}")).policy.swap_readahead;
    let disk = |rot: bool| {
        format!(
            "[[device]]\nname = \"disk\"\npreset = \"nvme\"\nrotational = {rot}\n\
             [fs]\ndevice = \"disk\"\n"
        )
    };
    let zram = "[[device]]\nname = \"z\"\npreset = \"zram\"\n";
    let swap_on = |d: &str| format!("[[swap.area]]\ndevice = \"{d}\"\nsize = \"1G\"\n");
    // A swap file on the rotational disk.
    assert_eq!(
        ra(&format!("{}{}", disk(true), swap_on("disk"))),
        SwapReadaheadKind::Cluster
    );
    assert_eq!(
        ra(&format!("{}{}", disk(false), swap_on("disk"))),
        SwapReadaheadKind::Vma
    );
    // zram plus a swap file on the rotational disk: cluster for both.
    assert_eq!(
        ra(&format!(
            "{}{zram}{}{}",
            disk(true),
            swap_on("z"),
            swap_on("disk")
        )),
        SwapReadaheadKind::Cluster
    );
    // zram alone, the rotational disk holding only files: VMA.
    assert_eq!(
        ra(&format!("{}{zram}{}", disk(true), swap_on("z"))),
        SwapReadaheadKind::Vma
    );
}

#[test]
fn lru_gen_enabled_and_policy_lru_agree() {
    assert_eq!(
        ok(&format!("{MINIMAL}[lru_gen]\nenabled = true\n"))
            .policy
            .lru,
        LruKind::Mglru
    );
    assert_eq!(
        ok(&format!("{MINIMAL}[policy]\nlru = \"mglru\"\n"))
            .policy
            .lru,
        LruKind::Mglru
    );
    assert_eq!(
        err(
            &format!("{MINIMAL}[policy]\nlru = \"classic\"\n[lru_gen]\nenabled = true\n"),
            &[]
        ),
        (
            ErrorKind::InvalidValue,
            "t.toml:6:11: lru_gen.enabled = true contradicts policy.lru = \"classic\"".into()
        )
    );
}

#[test]
fn fs_device_defaults_to_the_first_non_zram_device() {
    let s = ok(&format!(
        "{MINIMAL}[[device]]\nname = \"z\"\npreset = \"zram\"\n[[device]]\nname = \"n\"\npreset = \"nvme\"\n"
    ));
    assert_eq!(s.fs_device, 1);
    // Only zram: a default disk is added for the files.
    let s = ok(&format!(
        "{MINIMAL}[[device]]\nname = \"z\"\npreset = \"zram\"\n"
    ));
    assert_eq!(s.devices[s.fs_device], sata_ssd("disk"));
}

#[test]
fn custom_devices_need_bandwidths() {
    let s = ok(&format!(
        "{MINIMAL}[[device]]\nname = \"d\"\npreset = \"custom\"\nread_bw = \"1G\"\nwrite_bw = 1000\n"
    ));
    assert_eq!(s.devices[0].read_bytes_per_sec, 1 << 30);
    assert_eq!(s.devices[0].queue_depth, 1);
    assert_eq!(
        err(
            &format!("{MINIMAL}[[device]]\nname = \"d\"\npreset = \"custom\"\nread_bw = \"1G\"\n"),
            &[]
        ),
        (
            ErrorKind::InvalidValue,
            "t.toml:3:1: device `d` has preset = \"custom\": write_bw is required".into()
        )
    );
}

// ---------------------------------------------------------------------------------------
// One test per error class, with the exact one-line message.

#[test]
fn missing_file_names_the_path() {
    let e = load(Path::new("/nonexistent/x.toml"), &[], None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert_eq!(e.io_error_kind(), Some(std::io::ErrorKind::NotFound));
    assert!(
        e.to_string()
            .starts_with("/nonexistent/x.toml: cannot read scenario: "),
        "{e}"
    );
    assert!(std::error::Error::source(&e).is_some());
}

#[test]
fn syntax_error_has_line_and_column() {
    assert_eq!(
        err("[machine\nmemory = \"1G\"\n", &[]),
        (
            ErrorKind::Syntax,
            "t.toml:1:9: invalid table header; expected `.`, `]`".into()
        )
    );
    let (kind, msg) = err("[machine]\nmemory = \n", &[]);
    assert_eq!(kind, ErrorKind::Syntax);
    assert!(msg.starts_with("t.toml:2:"), "{msg}");
}

#[test]
fn unknown_key_names_it_and_its_line() {
    assert_eq!(
        err("[machine]\nmemory = \"1G\"\nmemroy = \"2G\"\n", &[]),
        (
            ErrorKind::UnknownKey,
            "t.toml:3:1: unknown key `memroy` in [machine] (did you mean `memory`?); known keys: \
             memory, cpus, dma32, kernel_reserved, kernel_memory, from_zoneinfo"
                .into()
        )
    );
    let text = format!(
        "{MINIMAL}[[object]]\nname = \"a\"\nkind = \"anon\"\nsize = \"1M\"\n[[task]]\nname = \"t\"\n\
         [[task.phase]]\naccess = \"touch\"\nobject = \"a\"\npatern = \"random\"\n"
    );
    assert_eq!(
        err(&text, &[]),
        (
            ErrorKind::UnknownKey,
            "t.toml:12:1: unknown key `patern` in [[task.phase]] (did you mean `pattern`?); known \
             keys: name, access, object, pattern, zipf_s, scatter, hot_fraction, hot_probability, \
             range, ops, pages_per_op, write_fraction, think, advice, fsync, source, mix"
                .into()
        )
    );
    assert_eq!(err("[machin]\n", &[]).0, ErrorKind::UnknownKey);
}

#[test]
fn invalid_values_name_the_key() {
    assert_eq!(
        err("[machine]\nmemory = \"1G\"\ncpus = \"four\"\n", &[]),
        (
            ErrorKind::InvalidValue,
            "t.toml:3:8: machine.cpus: invalid type: string \"four\", expected u32".into()
        )
    );
    assert_eq!(
        err("[machine]\nmemory = \"4X\"\n", &[]),
        (
            ErrorKind::InvalidValue,
            "t.toml:2:10: machine.memory: invalid size `4X`: unknown unit `X` (use bytes or K, \
             M, G, T; KiB, MiB, GiB, TiB)"
                .into()
        )
    );
    assert_eq!(
        err(&format!("{MINIMAL}[policy]\nlru = \"lfu\"\n"), &[]),
        (
            ErrorKind::InvalidValue,
            "t.toml:4:7: policy.lru: unknown variant `lfu`, expected `classic` or `mglru`".into()
        )
    );
    assert_eq!(
        err(&format!("{MINIMAL}[run]\nduration = 60\n"), &[]),
        (
            ErrorKind::InvalidValue,
            "t.toml:4:12: run.duration: a duration needs a unit: write \"60ns\", \"60us\", \
             \"60ms\" or \"60s\""
                .into()
        )
    );
    assert_eq!(
        err("[machine]\ncpus = 2\n", &[]),
        (
            ErrorKind::InvalidValue,
            "t.toml:1:1: machine.memory is required".into()
        )
    );
    assert_eq!(
        err("", &[]),
        (
            ErrorKind::InvalidValue,
            "t.toml: machine.memory is required".into()
        )
    );
}

const OBJECTS: &str = "[machine]\nmemory = \"1G\"\n\
                       [[object]]\nname = \"heap\"\nkind = \"anon\"\nsize = \"64M\"\n\
                       [[object]]\nname = \"db\"\nkind = \"file\"\nsize = \"1G\"\n\
                       [[task]]\nname = \"t\"\n[[task.phase]]\n";

#[test]
fn impossible_machines_and_workloads() {
    assert_eq!(
        err("[machine]\nmemory = 0\n", &[]),
        (
            ErrorKind::Impossible,
            "t.toml:2:10: machine.memory is 0: a machine needs memory".into()
        )
    );
    assert_eq!(
        err("[machine]\nmemory = \"1G\"\ndma32 = \"2G\"\n", &[]),
        (
            ErrorKind::Impossible,
            "t.toml:3:9: machine.dma32 (2 GiB) must be smaller than machine.memory (1 GiB): the \
             Normal zone would be empty"
                .into()
        )
    );
    assert_eq!(
        err("[machine]\nmemory = \"1G\"\ncpus = 0\n", &[]).0,
        ErrorKind::Impossible
    );
    assert_eq!(
        err(
            &format!("{MINIMAL}[[cgroup]]\nname = \"a\"\n\"memory.max\" = \"2G\"\n"),
            &[]
        ),
        (
            ErrorKind::Impossible,
            "t.toml:5:16: cgroup `a`: memory.max (2 GiB) is larger than machine.memory (1 GiB)"
                .into()
        )
    );
    assert_eq!(
        err(
            &format!("{MINIMAL}[[object]]\nname = \"big\"\nkind = \"file\"\nsize = \"17T\"\n"),
            &[]
        ),
        (
            ErrorKind::Impossible,
            "t.toml:6:8: object `big` (17 TiB) is larger than 2^32 - 1 pages (16 TiB - 4 KiB): \
             page indices are 32-bit"
                .into()
        )
    );
    // Exactly 2^32 pages: one too many (indices are u32 and so are the workload's counts).
    assert_eq!(
        err(
            &format!("{MINIMAL}[[object]]\nname = \"big\"\nkind = \"file\"\nsize = \"16T\"\n"),
            &[]
        ),
        (
            ErrorKind::Impossible,
            "t.toml:6:8: object `big` (16 TiB) is larger than 2^32 - 1 pages (16 TiB - 4 KiB): \
             page indices are 32-bit"
                .into()
        )
    );
    assert_eq!(
        err(
            &format!("{OBJECTS}access = \"read\"\nobject = \"db\"\nrange = [\"512M\", \"2G\"]\n"),
            &[]
        ),
        (
            ErrorKind::Impossible,
            "t.toml:16:9: task `t` phase `phase0`: range [512 MiB, 2 GiB) is outside object `db` \
             (1 GiB)"
                .into()
        )
    );
    assert_eq!(
        err(
            &format!("{MINIMAL}[sysctl]\n\"vm.min_free_kbytes\" = 1048576\n"),
            &[]
        )
        .0,
        ErrorKind::Impossible
    );
    assert_eq!(
        err(
            &format!("{MINIMAL}[run]\nduration = \"1s\"\nwarmup = \"1s\"\n"),
            &[]
        ),
        (
            ErrorKind::Impossible,
            "t.toml:5:10: run.warmup (1s) is not shorter than run.duration (1s): nothing would \
             be measured"
                .into()
        )
    );
    // A phase list repeated forever needs a duration to end.
    assert_eq!(
        err(
            &format!("{OBJECTS}access = \"touch\"\nobject = \"heap\"\n")
                .replace("name = \"t\"\n", "name = \"t\"\nrepeat = 0\n"),
            &[]
        )
        .0,
        ErrorKind::Impossible
    );
}

#[test]
fn access_must_fit_the_object() {
    assert_eq!(
        err(
            &format!("{OBJECTS}access = \"read\"\nobject = \"heap\"\n"),
            &[]
        ),
        (
            ErrorKind::InvalidValue,
            "t.toml:14:10: task `t` phase `phase0`: access = \"read\" is read()/write() on a \
             file, but object `heap` is anon; use \"touch\" or \"touch-write\""
                .into()
        )
    );
    // Touching a file is an mmap access: allowed.
    ok(&format!("{OBJECTS}access = \"touch\"\nobject = \"db\"\n"));
    assert_eq!(
        err(
            &format!("{OBJECTS}access = \"read\"\nobject = \"db\"\nzipf_s = 1.2\n"),
            &[]
        ),
        (
            ErrorKind::InvalidValue,
            "t.toml:16:10: task `t` phase `phase0`: zipf_s applies to pattern = \"zipf\" only, \
             not \"sequential\""
                .into()
        )
    );
    assert_eq!(
        err(
            &format!("{OBJECTS}access = \"read\"\nobject = \"db\"\nwrite_fraction = 0.5\n"),
            &[]
        )
        .0,
        ErrorKind::InvalidValue
    );
    assert_eq!(
        err(
            &format!("{OBJECTS}access = \"touch\"\nobject = \"heap\"\nfsync = true\n"),
            &[]
        )
        .0,
        ErrorKind::InvalidValue
    );
}

/// `access = "create"`: a file object cut into files of pages_per_op pages, created in
/// order; anon objects, other patterns, unaligned ranges and two file sizes for one
/// directory are refused with the key named.
#[test]
fn create_phases_need_a_file_directory_in_order() {
    let scn = ok(&format!(
        "{OBJECTS}access = \"create\"\nobject = \"db\"\npages_per_op = 2\nfsync = true\n"
    ));
    let p = match &scn.tasks[0].workload {
        Workload::Phases { phases, .. } => phases[0].clone(),
        _ => unreachable!(),
    };
    assert_eq!(
        (p.access, p.pages_per_op, p.ops, p.fsync),
        (Access::Create, 2, 131072, true)
    );
    assert!(!scn.policy.boosted_reclaim_skips_slab);
    let with = ok_with(MINIMAL, &["policy.boosted_reclaim_skips_slab=true"]);
    assert!(with.policy.boosted_reclaim_skips_slab);
    assert_eq!(
        err(
            &format!("{OBJECTS}access = \"create\"\nobject = \"heap\"\n"),
            &[]
        )
        .0,
        ErrorKind::InvalidValue
    );
    assert_eq!(
        err(
            &format!("{OBJECTS}access = \"create\"\nobject = \"db\"\npattern = \"random\"\n"),
            &[]
        ),
        (
            ErrorKind::InvalidValue,
            "t.toml:16:11: task `t` phase `phase0`: access = \"create\" creates the files in \
             order; pattern must be \"sequential\""
                .into()
        )
    );
    assert_eq!(
        err(
            &format!(
                "{OBJECTS}access = \"create\"\nobject = \"db\"\npages_per_op = 4\n\
                 range = [\"8K\", \"1M\"]\n"
            ),
            &[]
        )
        .0,
        ErrorKind::Impossible
    );
    let (kind, msg) = err(
        &format!(
            "{OBJECTS}access = \"create\"\nobject = \"db\"\npages_per_op = 1\n\
             [[task.phase]]\naccess = \"create\"\nobject = \"db\"\npages_per_op = 2\n"
        ),
        &[],
    );
    assert_eq!(kind, ErrorKind::Impossible);
    assert!(msg.contains("directory of 1-page files"), "{msg}");
}

#[test]
fn unknown_references_are_named() {
    assert_eq!(
        err(
            &format!("{OBJECTS}access = \"touch\"\nobject = \"dbx\"\n"),
            &[]
        ),
        (
            ErrorKind::UnknownReference,
            "t.toml:15:10: task `t` phase `phase0`: unknown object `dbx` (objects: heap, db)"
                .into()
        )
    );
    assert_eq!(
        err(
            &format!("{OBJECTS}access = \"touch\"\nobject = \"heap\"\n")
                .replace("name = \"t\"\n", "name = \"t\"\ncgroup = \"web\"\n"),
            &[]
        ),
        (
            ErrorKind::UnknownReference,
            "t.toml:13:10: task `t`: unknown cgroup `web` (cgroups: none defined)".into()
        )
    );
    assert_eq!(
        err(
            &format!("{MINIMAL}[[swap.area]]\ndevice = \"zram0\"\nsize = \"1G\"\n"),
            &[]
        ),
        (
            ErrorKind::UnknownReference,
            "t.toml:4:10: swap area on device `zram0`, which is not a [[device]] (devices: disk)"
                .into()
        )
    );
    assert_eq!(
        err(&format!("{MINIMAL}[fs]\ndevice = \"nvme0\"\n"), &[]),
        (
            ErrorKind::UnknownReference,
            "t.toml:4:10: fs.device `nvme0` is not a [[device]] (devices: none defined)".into()
        )
    );
}

// ---------------------------------------------------------------------------------------
// Overrides.

#[test]
fn overrides_set_sysctls_policies_sizes_and_cgroups() {
    let base = format!("{MINIMAL}[[cgroup]]\nname = \"workload\"\n\"memory.max\" = \"512M\"\n");
    let s = ok_with(
        &base,
        &[
            "vm.swappiness=150",
            "policy.balance=legacy",
            "machine.memory=2G",
            "cgroup.workload.memory.max=1.5G",
            "model.cost.scan_per_page=50ns",
            "run.duration=10s",
        ],
    );
    assert_eq!(s.sysctl.swappiness, 150);
    assert_eq!(s.policy.balance, BalanceKind::Legacy);
    // (lru_gen.enabled=true with legacy is refused at load time: tested in the behaviour
    // tests of the CLI.)
    assert_eq!(s.policy.lru, LruKind::Classic);
    assert_eq!(s.machine.memory_pages, 524_288);
    assert_eq!(s.cgroups[0].memory_max_pages, Some(393_216));
    assert_eq!(s.costs.scan_per_page_ns, 50);
    assert_eq!(s.run.duration_ns, 10_000_000_000);
    // "max" lifts the limit.
    assert_eq!(
        ok_with(&base, &["cgroup.workload.memory.max=max"]).cgroups[0].memory_max_pages,
        None
    );
}

#[test]
fn overrides_select_tasks_and_phases_by_name() {
    let text = format!("{OBJECTS}name = \"scan\"\naccess = \"read\"\nobject = \"db\"\n");
    let s = ok_with(
        &text,
        &["task.t.instances=4", "task.t.phase.scan.ops=10", "seed=9"],
    );
    assert_eq!(s.tasks[0].instances, 4);
    let Workload::Phases { phases, .. } = &s.tasks[0].workload else {
        panic!()
    };
    assert_eq!(phases[0].ops, 10);
    assert_eq!(s.seed, 9);
    // The seed argument wins over the file and --set.
    let s = parse(&text, "t.toml", &sets(&["seed=9"]), Some(3)).unwrap();
    assert_eq!(s.seed, 3);
}

#[test]
fn unknown_override_keys_fail_naming_the_set() {
    assert_eq!(
        err(MINIMAL, &["machine.cpu=4"]),
        (
            ErrorKind::BadOverride,
            "t.toml: --set machine.cpu=4: unknown key `cpu` in [machine] (did you mean `cpus`?); \
             known keys: memory, cpus, dma32, kernel_reserved, kernel_memory, from_zoneinfo"
                .into()
        )
    );
    assert_eq!(
        err(MINIMAL, &["vm.swapiness=10"]).1,
        format!(
            "t.toml: --set vm.swapiness=10: unknown sysctl `vm.swapiness` (did you mean \
             `vm.swappiness`?); known: {}",
            sysctl::known_names()
        )
    );
    assert_eq!(
        err(MINIMAL, &["cgroup.web.memory.max=1G"]),
        (
            ErrorKind::BadOverride,
            "t.toml: --set cgroup.web.memory.max=1G: the file has no [[cgroup]] entries".into()
        )
    );
    assert_eq!(err(MINIMAL, &["nosuchtable.x=1"]).0, ErrorKind::BadOverride);
}

#[test]
fn bad_override_values_name_the_set() {
    assert_eq!(
        err(MINIMAL, &["vm.swappiness=300"]),
        (
            ErrorKind::InvalidValue,
            "t.toml: --set vm.swappiness=300: vm.swappiness = 300 is out of range (0..=200)".into()
        )
    );
    assert_eq!(
        err(MINIMAL, &["machine.cpus=2", "machine.cpus=four"]),
        (
            ErrorKind::InvalidValue,
            "t.toml: --set machine.cpus=four: invalid type: string \"four\", expected u32".into()
        )
    );
    assert_eq!(
        err(MINIMAL, &["policy.balance=fair"]),
        (
            ErrorKind::InvalidValue,
            "t.toml: --set policy.balance=fair: unknown variant `fair`, expected `refault-cost` \
             or `legacy`"
                .into()
        )
    );
    assert_eq!(
        err(MINIMAL, &["machine.memory=0"]),
        (
            ErrorKind::Impossible,
            "t.toml: --set machine.memory=0: machine.memory is 0: a machine needs memory".into()
        )
    );
}

// ---------------------------------------------------------------------------------------
// Serialisation, determinism, generated files, bundled scenarios.

#[test]
fn scenario_round_trips_through_json() {
    let s = ok(FULL);
    let json = serde_json::to_string(&s).unwrap();
    let back: Scenario = serde_json::from_str(&json).unwrap();
    assert_eq!(back, s);
    // Same input, same bytes.
    assert_eq!(serde_json::to_string(&ok(FULL)).unwrap(), json);
}

#[test]
fn reference_toml_parses_itself_back() {
    let s = parse(&reference_toml(), "reference.toml", &[], None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.name, "reference");
    assert_eq!(s.sysctl, default_sysctl());
    assert_eq!(s.costs, default_costs());
    assert_eq!(s.tasks.len(), 1);
}

/// The committed generated files equal the generator's output. `REFAULT_BLESS=1` rewrites
/// them.
#[test]
fn committed_reference_and_docs_match_generation() {
    let files = [
        (
            repo_root().join("scenarios/reference.toml"),
            reference_toml(),
        ),
        (repo_root().join("docs/sysctls.md"), sysctl_docs_markdown()),
    ];
    for (path, generated) in files {
        if std::env::var_os("REFAULT_BLESS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{} is stale: run `REFAULT_BLESS=1 cargo test -p refault-scenario`",
            path.display()
        );
    }
}

#[test]
fn every_bundled_scenario_parses() {
    let dir = repo_root().join("scenarios");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    assert!(paths.iter().any(|p| p.ends_with("quickstart.toml")));
    for path in paths {
        load(&path, &[], None).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn quickstart_is_what_it_says() {
    let s = load(&repo_root().join("scenarios/quickstart.toml"), &[], None).unwrap();
    assert_eq!(s.machine.memory_pages * PAGE_SIZE, 256 << 20);
    assert_eq!(s.swap.len(), 1);
    assert_eq!(s.devices[s.swap[0].device].preset, "zram");
    assert_eq!(s.run.duration_ns, 0);
    assert_eq!(s.tasks.len(), 2);
}

/// `mix = [...]`: the issue's syntax resolves into per-op entries; entry keys are refused at
/// phase level; entry errors point into the mix.
#[test]
fn per_op_mix_phases() {
    let s = ok(&format!(
        "{OBJECTS}ops = 1000\nmix = [{{object = \"heap\", weight = 0.5, pattern = \"zipf\", skew = 0.9, \
         access = \"touch-write\"}}, {{object = \"db\", weight = 0.5, pattern = \"zipf\", access = \"read\"}}]\n"
    ));
    let Workload::Phases { phases, .. } = &s.tasks[0].workload else {
        panic!()
    };
    let p = &phases[0];
    assert_eq!(
        (p.ops, p.advice, p.object, p.access),
        (1000, Advice::Normal, 0, Access::TouchWrite)
    );
    assert_eq!(p.mix.len(), 2);
    assert_eq!(
        p.mix[0],
        MixSpec {
            object: 0,
            access: Access::TouchWrite,
            pattern: Pattern::Zipf {
                s: 0.9,
                scatter: false
            },
            start_page: 0,
            end_page: 64 * 256,
            pages_per_op: 1,
            write_fraction: 0.0,
            weight: 0.5,
        }
    );
    assert_eq!((p.mix[1].object, p.mix[1].access), (1, Access::Read));
    // Default ops: one pass over every entry's range.
    let s = ok(&format!(
        "{OBJECTS}mix = [{{object = \"heap\", access = \"touch\"}}, {{object = \"db\", access = \"read\", pages_per_op = 32}}]\n"
    ));
    let Workload::Phases { phases, .. } = &s.tasks[0].workload else {
        panic!()
    };
    assert_eq!(phases[0].ops, 64 * 256 + 256 * 1024 / 32);
    // Errors.
    let (k, m) = err(
        &format!(
            "{OBJECTS}access = \"touch\"\nmix = [{{object = \"heap\", access = \"touch\"}}]\n"
        ),
        &[],
    );
    assert_eq!(k, ErrorKind::InvalidValue);
    assert!(
        m.contains("access goes in each entry of the phase's mix"),
        "{m}"
    );
    let (_, m) = err(
        &format!("{OBJECTS}mix = [{{object = \"heap\", access = \"touch\", weight = -1.0}}]\n"),
        &[],
    );
    assert!(m.contains("mix[0].weight = -1 must be positive"), "{m}");
    let (_, m) = err(
        &format!("{OBJECTS}mix = [{{object = \"heap\", access = \"touch\"}}, {{object = \"heap\", access = \"read\"}}]\n"),
        &[],
    );
    assert!(m.contains("use \"touch\" or \"touch-write\""), "{m}");
    assert!(m.starts_with("t.toml:"), "positioned: {m}");
    assert_eq!(
        err(&format!("{OBJECTS}mix = []\n"), &[]).0,
        ErrorKind::InvalidValue
    );
}

/// `model.kernel`: "MAJOR.MINOR" from 6.1 on, normalised; a release string is cut to its
/// version; anything else is refused at the key.
#[test]
fn file_folio_order_defaults_to_ext4s_by_kernel_version() {
    let order = |over: &[&str]| ok_with(MINIMAL, over).model.max_file_folio_order;
    // v6.18 (the default) and v6.16, the first with ext4's large folios: up to PMD order.
    assert_eq!(order(&[]), 9);
    assert_eq!(order(&["model.kernel=\"6.16\""]), 9);
    assert_eq!(order(&["model.kernel=\"7.2\""]), 9);
    // Before v6.16 ext4 reads into order-0 folios only (the VM twin's 6.1 and 6.12 guests).
    assert_eq!(order(&["model.kernel=\"6.15\""]), 0);
    assert_eq!(order(&["model.kernel=\"6.12\""]), 0);
    assert_eq!(order(&["model.kernel=\"6.1\""]), 0);
    // A value the scenario gives is kept whatever the kernel.
    assert_eq!(
        order(&["model.kernel=\"6.1\"", "model.max_file_folio_order=4"]),
        4
    );
    assert_eq!(
        order(&["model.kernel=\"6.18\"", "model.max_file_folio_order=0"]),
        0
    );
}

#[test]
fn model_kernel_version_is_parsed_and_checked() {
    assert_eq!(ok(MINIMAL).model.kernel, "6.18");
    let with = |v: &str| {
        ok_with(MINIMAL, &[&format!("model.kernel={v:?}")])
            .model
            .kernel
    };
    assert_eq!(with("6.1"), "6.1");
    assert_eq!(with("6.12"), "6.12");
    assert_eq!(with("7.2"), "7.2");
    assert_eq!(with("6.1.0-50-cloud-amd64"), "6.1");
    assert_eq!(
        parse_kernel_version("6.12.48+deb13-cloud-amd64"),
        Some("6.12".into())
    );
    assert_eq!(
        parse_kernel_version("7.2.1+deb14-cloud-amd64"),
        Some("7.2".into())
    );
    // Watermark boosting's kernels (5.0+) for the classic LRU (seed S3 ran 5.3)...
    assert_eq!(with("5.3"), "5.3");
    // ...but the multi-gen LRU came with 6.1.
    let (kind, msg) = err(MINIMAL, &["model.kernel=\"5.15\"", "policy.lru=\"mglru\""]);
    assert_eq!(kind, ErrorKind::InvalidValue);
    assert!(msg.contains("model.kernel") && msg.contains("6.1"), "{msg}");
    // Seed S4's kernel (4.6, kcompactd's first release) and, with kswapd compacting, v4.4.
    assert_eq!(with("4.6"), "4.6");
    assert_eq!(with("4.19"), "4.19");
    let v44 = ok_with(
        MINIMAL,
        &[
            "model.kernel=\"4.4\"",
            "policy.kswapd_compaction=\"kswapd\"",
        ],
    );
    assert_eq!(v44.model.kernel, "4.4");
    let (kind, msg) = err(MINIMAL, &["model.kernel=\"4.5\""]);
    assert_eq!(kind, ErrorKind::InvalidValue);
    assert!(msg.contains("kcompactd") && msg.contains("4.6"), "{msg}");
    let (kind, msg) = err(MINIMAL, &["model.kernel=\"4.19\"", "policy.lru=\"mglru\""]);
    assert_eq!(kind, ErrorKind::InvalidValue);
    assert!(msg.contains("6.1"), "{msg}");
    for bad in ["4.3", "3.10", "six", "6", "6.x"] {
        let (kind, msg) = err(MINIMAL, &[&format!("model.kernel={bad:?}")]);
        assert_eq!(kind, ErrorKind::InvalidValue, "{bad}");
        assert!(
            msg.contains("model.kernel") && msg.contains("4.4 or"),
            "{msg}"
        );
    }
}

#[test]
fn transparent_hugepage_keys_and_object_advice() {
    let s = ok(&format!(
        "{MINIMAL}[transparent_hugepage]\nenabled = \"always\"\ndefrag = \"defer+madvise\"\n\
         [[object]]\nname = \"heap\"\nkind = \"anon\"\nsize = \"4M\"\nmadvise = \"hugepage\"\n"
    ));
    assert_eq!(s.policy.thp_enabled, ThpEnabledKind::Always);
    assert_eq!(s.policy.thp_defrag, ThpDefragKind::DeferMadvise);
    assert_eq!(s.objects[0].madvise, HugepageAdviceKind::Hugepage);
    // Defaults: madvise / madvise, no advice.
    let d = ok(&format!(
        "{MINIMAL}[[object]]\nname = \"heap\"\nkind = \"anon\"\nsize = \"4M\"\n"
    ));
    assert_eq!(d.policy.thp_enabled, ThpEnabledKind::Madvise);
    assert_eq!(d.policy.thp_defrag, ThpDefragKind::Madvise);
    assert_eq!(d.objects[0].madvise, HugepageAdviceKind::None);
    // THP advice on a file is refused, naming the key.
    let (kind, msg) = err(
        &format!(
            "{MINIMAL}[[object]]\nname = \"f\"\nkind = \"file\"\nsize = \"4M\"\n\
             madvise = \"hugepage\"\n"
        ),
        &[],
    );
    assert_eq!(kind, ErrorKind::InvalidValue);
    assert!(msg.starts_with("t.toml:7:"), "{msg}");
    assert!(
        msg.contains("madvise applies to anon objects only"),
        "{msg}"
    );
    // An unknown mode is refused.
    let (_, msg) = err(
        &format!("{MINIMAL}[transparent_hugepage]\nenabled = \"sometimes\"\n"),
        &[],
    );
    assert!(
        msg.contains("sometimes") || msg.contains("unknown variant"),
        "{msg}"
    );
}

#[test]
fn mlock_applies_to_anon_and_shmem_objects() {
    let s = ok(&format!(
        "{MINIMAL}[[object]]\nname = \"a\"\nkind = \"anon\"\nsize = \"1M\"\nmlock = true\n"
    ));
    assert!(s.objects[0].mlock);
    assert_eq!(
        err(
            &format!(
                "{MINIMAL}[[object]]\nname = \"f\"\nkind = \"file\"\nsize = \"1M\"\nmlock = true\n"
            ),
            &[]
        ),
        (
            ErrorKind::InvalidValue,
            "t.toml:7:9: object `f`: mlock applies to anon and shmem objects".into()
        )
    );
}

/// `file_size` makes a file a tree of files: rounded up to pages (at most the file), and
/// refused for anon objects.
#[test]
fn file_size_makes_a_tree_of_files() {
    let s = ok(&format!(
        "{MINIMAL}[[object]]\nname = \"t\"\nkind = \"file\"\nsize = \"1M\"\nfile_size = \"18771\"\n"
    ));
    assert_eq!(s.objects[0].file_pages, 5);
    let s = ok(&format!(
        "{MINIMAL}[[object]]\nname = \"t\"\nkind = \"file\"\nsize = \"8K\"\nfile_size = \"1M\"\n"
    ));
    assert_eq!(s.objects[0].file_pages, 2);
    assert_eq!(
        err(
            &format!(
                "{MINIMAL}[[object]]\nname = \"a\"\nkind = \"anon\"\nsize = \"1M\"\nfile_size = \"4K\"\n"
            ),
            &[]
        ),
        (
            ErrorKind::InvalidValue,
            "t.toml:7:13: object `a`: file_size applies to files only".into()
        )
    );
}

/// Generated phases without `advice`: memory (anon, shmem) gets MADV_NORMAL whatever the
/// pattern, a file random (fio's fadvise_hint) unless the pattern is sequential; an explicit
/// `advice` wins.
#[test]
fn default_advice_is_normal_for_memory_and_random_for_random_file_io() {
    let text = r#"
[machine]
memory = "1G"

[[object]]
name = "heap"
kind = "anon"
size = "64M"

[[object]]
name = "shm"
kind = "shmem"
size = "64M"

[[object]]
name = "data"
kind = "file"
size = "64M"

[[task]]
name = "t"

[[task.phase]]
access = "touch"
object = "heap"
pattern = "random"

[[task.phase]]
access = "touch-write"
object = "heap"
pattern = "zipf"

[[task.phase]]
access = "touch"
object = "shm"
pattern = "hot-cold"

[[task.phase]]
access = "touch"
object = "heap"
pattern = "random"
advice = "random"

[[task.phase]]
access = "read"
object = "data"
pattern = "random"

[[task.phase]]
access = "touch"
object = "data"
pattern = "zipf"

[[task.phase]]
access = "read"
object = "data"

[[task.phase]]
access = "read"
object = "data"
pattern = "random"
advice = "normal"
"#;
    let s = ok(text);
    let Workload::Phases { phases, .. } = &s.tasks[0].workload else {
        panic!("phases")
    };
    let got: Vec<Advice> = phases.iter().map(|p| p.advice).collect();
    use Advice::*;
    assert_eq!(
        got,
        [Normal, Normal, Normal, Random, Random, Random, Normal, Normal]
    );
}

/// `[[run.drop_caches]]` entries resolve to nanoseconds in time order (file order at equal
/// times), `--set` selects an entry by its `at`, and a value outside the kernel's 1..=4 or a
/// time at or after run.duration is refused naming the key's line.
#[test]
fn drop_caches_entries_resolve_in_time_order() {
    let text = "[run]\nduration = \"10s\"\n[machine]\nmemory = \"1G\"\n\
                [[run.drop_caches]]\nat = \"5s\"\nvalue = 2\n\
                [[run.drop_caches]]\nat = \"1500ms\"\nvalue = 1\n";
    let s = ok(text);
    assert_eq!(
        s.run.drop_caches,
        vec![
            DropCachesSpec {
                at_ns: 1_500_000_000,
                value: 1
            },
            DropCachesSpec {
                at_ns: 5_000_000_000,
                value: 2
            },
        ]
    );
    let s = ok_with(text, &["run.drop_caches.5s.value=3"]);
    assert_eq!(s.run.drop_caches[1].value, 3);
    assert!(ok(MINIMAL).run.drop_caches.is_empty());
    let (kind, msg) = err(text, &["run.drop_caches.5s.value=0"]);
    assert_eq!(kind, ErrorKind::Impossible);
    assert!(msg.contains("run.drop_caches value 0"), "{msg}");
    let late = text.replace("\"5s\"", "\"10s\"");
    let (_, msg) = err(&late, &[]);
    assert!(msg.starts_with("t.toml:6:"), "{msg}");
    assert!(msg.contains("not before run.duration"), "{msg}");
}

/// `[[run.sysctl]]` writes resolve in time order with their kernel names; `--set` selects
/// one by its `at`; an unknown or non-runtime sysctl, a non-integer, a value outside the
/// sysctl's range, a vm.min_free_kbytes that reserves all memory, and a time at or after
/// run.duration are refused naming the key's line.
#[test]
fn sysctl_writes_resolve_in_time_order_and_bad_ones_are_refused() {
    let text = "[run]\nduration = \"45s\"\n[machine]\nmemory = \"512M\"\n\
                [[run.sysctl]]\nat = \"40s\"\nname = \"vm.min_free_kbytes\"\nvalue = 22528\n\
                [[run.sysctl]]\nat = \"33s\"\nname = \"vm.min_free_kbytes\"\nvalue = 1024\n";
    let s = ok(text);
    assert_eq!(
        s.run.sysctl_writes,
        vec![
            SysctlWriteSpec {
                at_ns: 33_000_000_000,
                name: RuntimeSysctl::MinFreeKbytes,
                value: 1024
            },
            SysctlWriteSpec {
                at_ns: 40_000_000_000,
                name: RuntimeSysctl::MinFreeKbytes,
                value: 22528
            },
        ]
    );
    assert!(ok(MINIMAL).run.sysctl_writes.is_empty());
    let s = ok_with(text, &["run.sysctl.33s.value=2048"]);
    assert_eq!(s.run.sysctl_writes[0].value, 2048);
    let s = ok(&text.replace("value = 1024", "value = 0"));
    assert_eq!(s.run.sysctl_writes[0].value, 0);
    let wsf = text.replace(
        "\"vm.min_free_kbytes\"\nvalue = 1024",
        "\"vm.watermark_scale_factor\"\nvalue = 200",
    );
    assert_eq!(
        ok(&wsf).run.sysctl_writes[0].name,
        RuntimeSysctl::WatermarkScaleFactor
    );
    for (bad, kind, says) in [
        (
            "\"vm.swappiness\"\nvalue = 1024",
            ErrorKind::InvalidValue,
            "the sysctls a run can change are vm.min_free_kbytes, vm.watermark_scale_factor",
        ),
        (
            "\"vm.min_free_kbytes\"\nvalue = \"1M\"",
            ErrorKind::InvalidValue,
            "must be an integer, not a string",
        ),
        (
            "\"vm.min_free_kbytes\"\nvalue = -1",
            ErrorKind::InvalidValue,
            "vm.min_free_kbytes = -1 is out of range (0 or more)",
        ),
        (
            "\"vm.watermark_scale_factor\"\nvalue = 0",
            ErrorKind::InvalidValue,
            "vm.watermark_scale_factor = 0 is out of range (1..=3000)",
        ),
        (
            "\"vm.min_free_kbytes\"\nvalue = 524288",
            ErrorKind::Impossible,
            "reserves all of machine.memory (512 MiB)",
        ),
    ] {
        let t = text.replace("\"vm.min_free_kbytes\"\nvalue = 1024", bad);
        let (k, msg) = err(&t, &[]);
        assert_eq!(k, kind, "{msg}");
        assert!(msg.contains(says), "{msg}");
        assert!(msg.starts_with("t.toml:"), "{msg}");
    }
    let (_, msg) = err(&text.replace("\"33s\"", "\"45s\""), &[]);
    assert!(
        msg.contains("run.sysctl at 45s is not before run.duration"),
        "{msg}"
    );
    let (_, msg) = err(
        &text.replace(
            "name = \"vm.min_free_kbytes\"\nvalue = 1024\n",
            "value = 1024\n",
        ),
        &[],
    );
    assert!(msg.contains("run.sysctl name"), "{msg}");
}

#[test]
fn memcached_item_size_resolves_and_excludes_pages_per_request() {
    let base = format!(
        "{MINIMAL}[[object]]\nname = \"items\"\nkind = \"anon\"\nsize = \"8M\"\n\n[[task]]\nname = \"mc\"\nworkload = \"memcached\"\n\n[task.memcached]\nitems = \"items\"\nrequests = 10\n"
    );
    let s = ok(&format!("{base}item_size = 2320\n"));
    let Workload::Memcached(m) = &s.tasks[0].workload else {
        panic!("{:?}", s.tasks[0].workload)
    };
    assert_eq!((m.item_size, m.pages_per_request), (2320, 1));
    let (kind, msg) = err(
        &format!("{base}item_size = 2320\npages_per_request = 2\n"),
        &[],
    );
    assert_eq!(kind, ErrorKind::InvalidValue);
    assert!(
        msg.contains("item_size and pages_per_request both given"),
        "{msg}"
    );
    let (kind, msg) = err(&format!("{base}item_size = 2000000\n"), &[]);
    assert_eq!(kind, ErrorKind::Impossible);
    assert!(msg.contains("at most 1 MiB"), "{msg}");
}

/// `workload = "process"`: the object is resolved and defaulted; each bad input names the
/// key (not an anon object, several instances, no stores, an object another task uses).
#[test]
fn process_workload_resolves_and_refuses_bad_input() {
    const HEAP: &str = "[machine]\nmemory = \"1G\"\n\
                        [[object]]\nname = \"heap\"\nkind = \"anon\"\nsize = \"64M\"\n\
                        [[object]]\nname = \"db\"\nkind = \"file\"\nsize = \"1G\"\n";
    let cc1 = |extra: &str| {
        format!("{HEAP}[[task]]\nname = \"cc1\"\nworkload = \"process\"\n{extra}[task.process]\nobject = \"heap\"\ncount = 3\n")
    };
    let s = ok(&cc1(""));
    assert_eq!(
        s.tasks[0].workload,
        Workload::Process(ProcessSpec {
            object: 0,
            count: 3,
            ops: 1000,
            think_ns: 0,
        })
    );
    let (kind, msg) = err(
        &cc1("").replace("object = \"heap\"", "object = \"db\""),
        &[],
    );
    assert_eq!(kind, ErrorKind::InvalidValue);
    assert!(msg.contains("task `cc1`: object must be a"), "{msg}");
    let (kind, msg) = err(&cc1("instances = 2\n"), &[]);
    assert_eq!(kind, ErrorKind::InvalidValue);
    assert!(
        msg.contains("instances = 2") && msg.contains("own address space"),
        "{msg}"
    );
    let (kind, msg) = err(&format!("{}ops = 0\n", cc1("")), &[]);
    assert_eq!(kind, ErrorKind::InvalidValue);
    assert!(msg.contains("ops must be at least 1"), "{msg}");
    let shared = format!(
        "{}[[task]]\nname = \"reader\"\n[[task.phase]]\naccess = \"touch\"\nobject = \"heap\"\n",
        cc1("")
    );
    let (kind, msg) = err(&shared, &[]);
    assert_eq!(kind, ErrorKind::InvalidValue);
    assert!(msg.contains("task `reader` uses it too"), "{msg}");
}

#[test]
fn memcached_hashtable_resolves_and_needs_the_bucket_array() {
    // 8 MiB of 2320-byte chunks: 8 x 451 = 3,608 items, 2^16 buckets (memcached's initial
    // table), 512 KiB of 8-byte pointers.
    let base = format!(
        "{MINIMAL}[[object]]\nname = \"items\"\nkind = \"anon\"\nsize = \"8M\"\n\n[[object]]\nname = \"hash\"\nkind = \"anon\"\nsize = \"{{}}\"\n\n[[task]]\nname = \"mc\"\nworkload = \"memcached\"\n\n[task.memcached]\nitems = \"items\"\nrequests = 10\nitem_size = 2320\nhashtable = \"hash\"\n"
    );
    let s = ok(&base.replace("{}", "512K"));
    let Workload::Memcached(m) = &s.tasks[0].workload else {
        panic!("{:?}", s.tasks[0].workload)
    };
    assert_eq!(m.hashtable, Some(1));
    let (kind, msg) = err(&base.replace("{}", "508K"), &[]);
    assert_eq!(kind, ErrorKind::Impossible);
    assert!(msg.contains("at least 512 KiB"), "{msg}");
    assert!(msg.contains("2^16 buckets for 3608 items"), "{msg}");
}
