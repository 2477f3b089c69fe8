//! The schema of a scenario file: every table, every key, its default and its doc.
//!
//! One table drives four things, so they cannot disagree:
//! - the defaults the resolver fills in ([`default`]),
//! - the unknown-key check with its "did you mean" message ([`SectionDef::check_keys`]),
//! - where a `--set` path lands (`crate::overrides`),
//! - `scenarios/reference.toml` ([`reference_toml`]), the commented list of every key.
//!
//! The raw serde structs (`crate::raw`) mirror this table; a test compares their field lists
//! with it.

use crate::error::ErrorKind;
use crate::presets;
use crate::spans::{Located, Node, Seg};
use crate::sysctl::{SysctlDefault, SYSCTLS};
use serde::de::DeserializeOwned;
use std::ops::Range;

/// How a key gets its value when the file does not give one.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Dflt {
    /// This TOML literal. The reference file shows it as a live line.
    Value(&'static str),
    /// This TOML literal, but only where the key applies (for example `zipf_s` only with
    /// `pattern = "zipf"`). The reference shows it commented out.
    IfUsed(&'static str),
    /// Computed from other keys; the doc says how. The reference shows the example
    /// commented out.
    Computed(&'static str),
    /// Must be given. The reference shows the example as a live line.
    Required(&'static str),
}

#[derive(Debug)]
pub(crate) struct KeyDef {
    pub key: &'static str,
    pub dflt: Dflt,
    pub doc: &'static str,
}

#[derive(Debug)]
pub(crate) struct SectionDef {
    /// Dotted path from the root, "" for the root.
    pub path: &'static str,
    /// An array of tables (`[[task]]`), whose elements `--set` selects by `select_by`.
    pub array: bool,
    pub select_by: &'static str,
    /// The keys are the sysctls of [`SYSCTLS`] (the `[sysctl]` table).
    pub sysctl: bool,
    /// Written commented out in the reference (alternatives such as `[task.pgbench]`).
    pub commented: bool,
    pub doc: &'static str,
    pub keys: &'static [KeyDef],
    pub children: &'static [&'static SectionDef],
}

macro_rules! k {
    ($key:expr, $dflt:ident($lit:expr), $doc:expr) => {
        KeyDef {
            key: $key,
            dflt: Dflt::$dflt($lit),
            doc: $doc,
        }
    };
}

const fn section(path: &'static str, doc: &'static str, keys: &'static [KeyDef]) -> SectionDef {
    SectionDef {
        path,
        array: false,
        select_by: "",
        sysctl: false,
        commented: false,
        doc,
        keys,
        children: &[],
    }
}

const fn array(path: &'static str, doc: &'static str, keys: &'static [KeyDef]) -> SectionDef {
    SectionDef {
        array: true,
        select_by: "name",
        ..section(path, doc, keys)
    }
}

pub(crate) static ROOT: SectionDef =
    SectionDef {
        children: &[
            &RUN, &MACHINE, &SYSCTL, &POLICY, &LRU_GEN, &THP, &SWAP, &FS, &DEVICE, &CGROUP,
            &OBJECT, &TASK, &MODEL,
        ],
        ..section(
            "",
            "",
            &[
                k!("name", Computed("\"my-scenario\""),
               "Scenario name, shown in reports. Default: the file name without its extension."),
                k!(
                    "description",
                    Value("\"\""),
                    "Free text: what the scenario models and how it was scaled."
                ),
                k!(
                    "seed",
                    Value("1"),
                    "Seed of every random generator of the run (`--seed` overrides it). Never the \
                clock: the same scenario and seed give the same result."
                ),
            ],
        )
    };

static RUN: SectionDef = SectionDef {
    children: &[&DROP_CACHES, &SYSCTL_WRITES],
    ..section(
        "run",
        "How long to simulate and how to sample. Durations take a unit: ns, us, ms, s, m, h.",
        &[
            k!(
                "duration",
                Value("\"0s\""),
                "Stop at this simulated time; 0 = run until every task has finished."
            ),
            k!(
                "warmup",
                Value("\"0s\""),
                "Statistics are reset at this time, so the warm-up is left out of the results; \
            must be shorter than the duration."
            ),
            k!(
            "sample_interval",
            Value("\"auto\""),
            "Interval of the time-series samples: a duration, or \"auto\" = the duration / 200 \
            (a run without a duration starts at 10ms and doubles the interval whenever the \
            series passes 400 samples, ending with 200-400)."
        ),
        ],
    )
};

static DROP_CACHES: SectionDef = SectionDef {
    commented: true,
    select_by: "at",
    ..array(
        "run.drop_caches",
        "`echo value > /proc/sys/vm/drop_caches` at a simulated time (drop_caches_sysctl_handler()): \
         1 frees the clean, unmapped page cache, 2 the dentries and inodes nothing pins (the \
         reclaimable slab), 3 both. It takes effect at the first event of the run at or after \
         `at` (a run whose tasks have all ended by then never reaches it), costs no task any \
         time, and counts drop_pagecache / drop_slab. `--set` selects an entry by its `at`.",
        &[
            k!(
                "at",
                Required("\"30s\""),
                "Simulated time of the write; shorter than run.duration when that is set. \
                 Required."
            ),
            k!(
                "value",
                Required("3"),
                "The value written: 1, 2, 3 or 4 (the kernel's range; 4 only silences its message). \
                 Required."
            ),
        ],
    )
};

static SYSCTL_WRITES: SectionDef = SectionDef {
    commented: true,
    select_by: "at",
    ..array(
        "run.sysctl",
        "`echo value > /proc/sys/<name>` at a simulated time, for the sysctls the kernel applies \
         at once: vm.min_free_kbytes (min_free_kbytes_sysctl_handler()) and \
         vm.watermark_scale_factor (watermark_scale_factor_sysctl_handler()). Both recompute \
         every zone's min, low and high watermarks as __setup_per_zone_wmarks() does (v5.0+ \
         also clears a watermark boost); lowmem_reserve is not recomputed (it depends on the \
         zones' sizes and vm.lowmem_reserve_ratio only, and neither handler calls \
         setup_per_zone_lowmem_reserve()). Nothing else happens at the write: kswapd wakes at \
         the next allocation that finds a zone below its new low watermark. The value is \
         checked as [sysctl] checks it. A write takes effect at the first event at or after \
         `at`, after any [[run.drop_caches]] due at the same time; writes at the same time \
         happen in file order. `--set` selects an entry by its `at`.",
        &[
            k!(
                "at",
                Required("\"33s\""),
                "Simulated time of the write; shorter than run.duration when that is set. \
                 Required."
            ),
            k!(
                "name",
                Required("\"vm.min_free_kbytes\""),
                "The sysctl: \"vm.min_free_kbytes\" or \"vm.watermark_scale_factor\". Required."
            ),
            k!(
                "value",
                Required("1024"),
                "The value written, an integer in the sysctl's range (vm.min_free_kbytes: 0 or \
                 more and below machine.memory; vm.watermark_scale_factor: 1..=3000). Required."
            ),
        ],
    )
};

static MACHINE: SectionDef = section(
    "machine",
    "The simulated machine: one NUMA node. Sizes are bytes or take a 1024-based unit: \
     K, M, G, T (or KiB, MiB, GiB, TiB); \"1.5G\" is allowed.",
    &[
        k!(
            "memory",
            Required("\"1G\""),
            "Total memory (RAM), rounded down to 4 KiB pages; at most 2^32 - 2 pages (16 TiB - \
             8 KiB). Host memory follows what the workload touches, not this size. Required \
             unless from_zoneinfo is given."
        ),
        k!(
            "cpus",
            Value("4"),
            "Simulated CPUs shared by the tasks and kernel threads."
        ),
        k!(
            "dma32",
            Computed("\"256M\""),
            "Size of the DMA32 zone in a flat layout: DMA32 first in pfn order, the Normal \
            zone holds the rest and must not be empty, no DMA zone and no holes. \"0\" = one \
            Normal zone. Default: the x86-64 layout of machine.memory: DMA (pfns 1..4096 less \
            the 640 KiB..1 MiB hole: 3998 pages), DMA32 up to 4 GiB, and from 3.5 GiB of \
            memory 3 GiB below 4 GiB and the rest in Normal (QEMU's pc machine). See \
            docs/zones.md."
        ),
        k!(
            "kernel_reserved",
            Computed("\"20M\""),
            "Memory reserved at boot that the page allocator never manages (the memmap, the \
            kernel image, boot hash tables): present minus managed pages, spread over the \
            zones by size. Default: measured on a real boot: 158 pages of the DMA zone and \
            1.913 % of the others. See docs/zones.md."
        ),
        k!(
            "kernel_memory",
            Value("\"0\""),
            "Managed memory the kernel holds when the workload starts (unreclaimable slab, \
            kernel stacks, page tables, the rootfs), taken from the highest zone down; never \
            reclaimed. Default 0: a booted machine's figure comes from machine.from_zoneinfo."
        ),
        k!(
            "from_zoneinfo",
            Computed("\"host.zoneinfo\""),
            "A /proc/zoneinfo (path relative to the scenario) to build the machine from: \
            each populated DMA, DMA32 and Normal zone with the kernel's present, managed and \
            free pages, watermarks and protection. Replaces memory, dma32, kernel_reserved \
            and kernel_memory. See docs/zones.md."
        ),
    ],
);

static SYSCTL: SectionDef = SectionDef {
    sysctl: true,
    ..section(
        "sysctl",
        "vm.* sysctls under their /proc/sys names; values are integers, as the kernel \
         writes them. `--set vm.NAME=VALUE` sets them from the command line. See \
         docs/sysctls.md.",
        &[],
    )
};

static POLICY: SectionDef = section(
    "policy",
    "Reclaim policies: the model's swappable parts.",
    &[
        k!(
            "lru",
            Computed("\"classic\""),
            "LRU implementation: \"classic\" (active/inactive lists) or \"mglru\" (multi-gen \
            LRU). Default: classic, or mglru when lru_gen.enabled = true."
        ),
        k!(
            "balance",
            Value("\"refault-cost\""),
            "Anon/file scan balance: \"refault-cost\" (lru_note_cost(): rotations are CPU \
            cost, refaults and writes IO cost; v5.8 and later) or \"legacy\" \
            (recent_scanned/recent_rotated; before v5.8). The active/inactive LRU's \
            balance: the multi-gen LRU balances with its own refault controller (legacy \
            with mglru is refused)."
        ),
        k!(
            "kswapd_compaction",
            Value("\"kcompactd\""),
            "Who compacts for high-order wakeups of kswapd: \"kcompactd\" (v4.5 and later: \
            kswapd reclaims to the order-0 high watermark and wakes kcompactd with its order \
            when it goes to sleep; kcompactd also compacts proactively, \
            vm.compaction_proactiveness) or \"kswapd\" (before v4.5: kswapd calls \
            compact_pgdat() itself after a pass that reclaimed more than it attempted; no \
            kcompactd)."
        ),
        k!(
            "boosted_reclaim_skips_slab",
            Value("false"),
            "v5.0–v5.2 behaviour: kswapd reclaiming for a boosted watermark does not shrink \
            slab caches (may_shrinkslab). false: slab is shrunk under boost too (v5.3 and \
            later, \"mm, vmscan: do not special-case slab reclaim when watermarks are \
            boosted\")."
        ),
    ],
);

static LRU_GEN: SectionDef = section(
    "lru_gen",
    "Multi-gen LRU knobs (/sys/kernel/mm/lru_gen/).",
    &[
        k!(
            "enabled",
            Computed("false"),
            "true selects the multi-gen LRU, like policy.lru = \"mglru\"; contradicting \
            policy.lru is an error. Default: whether policy.lru is \"mglru\"."
        ),
        k!(
            "min_ttl_ms",
            Value("0"),
            "Protect generations younger than this many milliseconds from eviction (0 = off). \
            Used by the multi-gen LRU only."
        ),
    ],
);

static THP: SectionDef = section(
    "transparent_hugepage",
    "Transparent huge pages for anonymous memory (/sys/kernel/mm/transparent_hugepage/): \
     a write fault in an empty 2 MiB-aligned range of an eligible anon object allocates one \
     order-9 folio (do_huge_pmd_anonymous_page()), falling back to base pages \
     (thp_fault_fallback). No khugepaged, no mTHP sizes, no shmem THP.",
    &[
        k!(
            "enabled",
            Value("\"madvise\""),
            "\"always\" (every anon object not advised \"nohugepage\"), \"madvise\" (only \
            objects with madvise = \"hugepage\") or \"never\". The kernel's Kconfig default \
            is always; distributions differ. The default here keeps unadvised objects on base \
            pages."
        ),
        k!(
            "defrag",
            Value("\"madvise\""),
            "What a THP fault's allocation may do without a free 2 MiB block \
            (vma_thp_gfp_mask()): \"always\" (direct reclaim and compaction; __GFP_NORETRY \
            for unadvised objects), \"defer\" (wake kswapd and kcompactd, fail at once), \
            \"defer+madvise\" (direct for advised objects, defer for the rest), \"madvise\" \
            (direct for advised objects, nothing for the rest) or \"never\" (free lists \
            only)."
        ),
    ],
);

static SWAP: SectionDef = SectionDef {
    children: &[&SWAP_AREA],
    ..section(
        "swap",
        "Swap-in readahead. The swap areas themselves are the [[swap.area]] entries; \
         without any, there is no swap.",
        &[
            k!(
                "vma_ra_enabled",
                Value("true"),
                "/sys/kernel/mm/swap/vma_ra_enabled: allow VMA-based swap readahead."
            ),
            k!(
                "readahead",
                Computed("\"vma\""),
                "\"cluster\" (swap_cluster_readahead(), physical-offset window) or \"vma\" \
                (swap_vma_readahead(), virtual-address window). Default: the kernel's choice, \
                vma unless vma_ra_enabled = false or a swap area is on a rotational device. \
                \"vma\" with vma_ra_enabled = false is an error."
            ),
        ],
    )
};

static SWAP_AREA: SectionDef = SectionDef {
    select_by: "device",
    ..array(
        "swap.area",
        "A swap area (swapon) on a [[device]]; one per device. `--set` selects it by device \
         name: swap.area.zram0.size=\"1G\".",
        &[
            k!(
                "device",
                Required("\"disk\""),
                "Name of the [[device]] holding it. Required."
            ),
            k!(
                "size",
                Required("\"512M\""),
                "Size, rounded down to pages. Required."
            ),
            k!(
                "priority",
                Computed("-2"),
                "swapon -p priority, 0..=32767; higher is used first. Default: -2, -3, ... in \
                file order, as swapon without -p assigns them."
            ),
        ],
    )
};

static FS: SectionDef = section(
    "fs",
    "The file system that holds every file object.",
    &[k!(
        "device",
        Computed("\"disk\""),
        "Name of its [[device]]. Default: the first device that is not zram; when there is \
          none, a device \"disk\" with preset \"sata-ssd\" is added."
    )],
);

static DEVICE: SectionDef =
    array(
        "device",
        "A block device for files or swap. The preset gives every figure; any key below \
     overrides it. Bandwidths are bytes per second, written as sizes (\"500M\", \
     \"500M/s\") or integers.",
        &[
            k!(
                "name",
                Required("\"disk\""),
                "Unique device name. Required."
            ),
            k!(
                "preset",
                Value("\"sata-ssd\""),
                "One of hdd, sata-ssd, nvme, zram, ramdisk, or \"custom\" (then read_bw and \
            write_bw are required; the rest defaults to 0/false and queue depth 1)."
            ),
            k!(
                "latency",
                Computed("\"80us\""),
                "Fixed per-request latency. Default: the preset's."
            ),
            k!(
                "seek",
                Computed("\"0s\""),
                "Extra latency when a request does not continue where the previous one ended \
            (HDD seek). Default: the preset's."
            ),
            k!(
                "read_bw",
                Computed("500000000"),
                "Read transfer rate. Default: the preset's."
            ),
            k!(
                "write_bw",
                Computed("450000000"),
                "Write transfer rate. Default: the preset's."
            ),
            k!(
                "queue_depth",
                Computed("32"),
                "Requests served in parallel (1 for an HDD). Default: the preset's."
            ),
            k!("rotational", Computed("false"),
           "Rotational device: makes swap readahead default to cluster. Default: the preset's."),
            k!(
                "synchronous",
                Computed("false"),
                "Synchronous device (SWP_SYNCHRONOUS_IO, zram): swap-in bypasses the swap cache. \
            Default: the preset's."
            ),
            k!(
                "cpu_per_page",
                Computed("\"0s\""),
                "CPU time the submitting task spends per page (zram compression). Default: the \
            preset's."
            ),
            k!(
                "wbt_lat_usec",
                Computed("2000"),
                "queue/wbt_lat_usec: writeback throttling's latency target in microseconds; 0 \
            turns it off (as BFQ does). Default: the kernel's, 2000 non-rotational, 75000 \
            rotational. Only request-based devices are throttled: not zram or a ram disk."
            ),
        ],
    );

static CGROUP: SectionDef = array(
    "cgroup",
    "A memory cgroup below the root. Tasks without a cgroup run in the root cgroup.",
    &[
        k!(
            "name",
            Required("\"workload\""),
            "Unique cgroup name. Required."
        ),
        k!(
            "memory.max",
            Value("\"max\""),
            "Hard limit (memory.max in v2, memory.limit_in_bytes in v1), or \"max\" for none; \
            rounded down to pages, at most machine.memory."
        ),
        k!(
            "memory.swap.max",
            Value("\"max\""),
            "Swap limit (memory.swap.max, cgroup v2), or \"max\" for none; rounded down to \
            pages. Swap-out of the cgroup's pages fails at the limit, and reclaim counts only \
            the swap the cgroup may still use (mem_cgroup_get_nr_swap_pages()). Ignored under \
            cgroup v1, whose memsw limit the model lacks."
        ),
        k!(
            "memory.swappiness",
            Computed("60"),
            "Per-cgroup swappiness (cgroup v1), 0..=200. Default: vm.swappiness."
        ),
    ],
);

static OBJECT: SectionDef = array(
    "object",
    "Memory the tasks access: an anonymous region, a shared-memory region or a file.",
    &[
        k!(
            "name",
            Required("\"data\""),
            "Unique object name. Required."
        ),
        k!(
            "kind",
            Required("\"file\""),
            "\"anon\" (private anonymous memory), \"shmem\" (tmpfs / shared anonymous: \
            swap-backed) or \"file\" (a file on the [fs] device). Required."
        ),
        k!(
            "size",
            Required("\"512M\""),
            "Size, rounded up to pages; at most 2^32 - 1 pages (16 TiB - 4 KiB). Required."
        ),
        k!(
            "exists",
            Computed("true"),
            "Files only: the file exists with this size when the run starts (not cached); \
            false = it starts empty and grows by writes up to size. Default: true for files."
        ),
        k!(
            "file_size",
            IfUsed("\"20K\""),
            "Files only: the object is a tree of files of this size each (rounded up to \
            pages; file k holds pages [k * n, (k + 1) * n)). A read of a file whose dentry is \
            not cached looks it up: a dentry and an inode from their slab caches (RECLAIMABLE \
            pages), kept on the superblock's LRUs after the read until the shrinker frees \
            them. A create phase on the object makes files of this size. Default: one file."
        ),
        k!(
            "madvise",
            Value("\"none\""),
            "Anon only: THP advice over the whole object, \"hugepage\" (MADV_HUGEPAGE: THP \
            even with transparent_hugepage.enabled = \"madvise\", direct compaction under \
            defrag = \"madvise\" or \"defer+madvise\"), \"nohugepage\" (MADV_NOHUGEPAGE: \
            never THP) or \"none\"."
        ),
        k!(
            "mlock",
            IfUsed("false"),
            "Anon and shmem only: the mapping is mlocked (mlock(), MAP_LOCKED): every page \
            faulted in goes to the unevictable list (nr_unevictable, nr_mlock, \
            unevictable_pgs_mlocked) and reclaim never scans it."
        ),
    ],
);

static TASK: SectionDef = SectionDef {
    children: &[&PHASE, &PGBENCH, &MEMCACHED, &COPY, &KALLOC, &PROCESS],
    ..array(
        "task",
        "A group of identical tasks. The workload is a list of [[task.phase]] entries, or \
         one of the emulations, configured by its own table ([task.pgbench], \
         [task.memcached], [task.copy]).",
        &[
            k!(
                "name",
                Required("\"reader\""),
                "Unique task name. Required."
            ),
            k!(
                "cgroup",
                Computed("\"workload\""),
                "Name of the [[cgroup]] the tasks run in. Default: the root cgroup."
            ),
            k!(
                "instances",
                Value("1"),
                "Copies of this task, each with its own random stream."
            ),
            k!("start", Value("\"0s\""), "Start delay."),
            k!(
                "workload",
                Computed("\"phases\""),
                "\"phases\", \"pgbench\", \"memcached\", \"copy\", \"kalloc\" or \"process\". Default: \
                the emulation whose table is present, else phases."
            ),
            k!(
                "repeat",
                Value("1"),
                "phases only: run the phase list this many times; 0 = until the run's \
                duration."
            ),
        ],
    )
};

static PHASE: SectionDef = SectionDef {
    children: &[&SOURCE, &MIX],
    ..array(
        "task.phase",
        "One phase of a phases workload; phases run in order. A phase with a `source` replays a \
     recorded trace instead (docs/traces.md).",
        &[
            k!(
                "name",
                Computed("\"phase0\""),
                "Phase name in reports. Default: phase<N>, N counted from 0."
            ),
            k!(
                "access",
                Required("\"read\""),
                "\"touch\" / \"touch-write\" (page-table access through a mapping: anon, shmem or \
            mmap of a file), \"read\" / \"write\" (read()/write() on a file), \"create\" (the \
            file object is a directory of files of pages_per_op pages each: every operation \
            creates the next file, writes it, fsyncs it if fsync = true, and closes it: a \
            dentry, an inode and pages_per_op dirty pages). Required."
            ),
            k!(
                "object",
                Required("\"data\""),
                "Name of the [[object]] accessed. Required."
            ),
            k!(
                "pattern",
                Value("\"sequential\""),
                "\"sequential\" (the range in order), \"random\" (uniform), \"zipf\" or \
            \"hot-cold\"."
            ),
            k!(
                "zipf_s",
                IfUsed("0.99"),
                "zipf only: the Zipf exponent, 0 or more."
            ),
            k!(
                "scatter",
                IfUsed("false"),
                "zipf only: spread the popular pages over the range (a fixed permutation) \
            instead of putting them at its start."
            ),
            k!(
                "hot_fraction",
                IfUsed("0.2"),
                "hot-cold only: the fraction of the range (at its start) that is hot, in (0, 1)."
            ),
            k!(
                "hot_probability",
                IfUsed("0.8"),
                "hot-cold only: the fraction of accesses that go to the hot part, in [0, 1]."
            ),
            k!(
                "range",
                Computed("[\"0\", \"512M\"]"),
                "Byte range [start, end) within the object, as two sizes; start rounds down and \
            end rounds up to pages. Default: the whole object."
            ),
            k!(
                "ops",
                Computed("131072"),
                "Operations in the phase. Default: one pass, the range's pages / pages_per_op \
            (rounded up)."
            ),
            k!(
                "pages_per_op",
                Value("1"),
                "Consecutive pages per operation (one read() of several pages, or touches of \
            consecutive pages); for access = \"create\", the size of each file."
            ),
            k!(
                "write_fraction",
                IfUsed("0.0"),
                "touch only: fraction of the accesses that are writes, in [0, 1]."
            ),
            k!("think", Value("\"0s\""), "CPU time between operations."),
            k!(
                "advice",
                Computed("\"normal\""),
                "fadvise/madvise hint for the phase: \"normal\", \"random\" or \"sequential\". \
            Default: normal (MADV_NORMAL, the kernel's default) for anon and shmem objects; \
            for a file, random for the random, zipf and hot-cold patterns (what fio does) and \
            normal for sequential. Random and sequential make reclaim ignore the mapping's \
            page-table references and turn off readahead (random) or double it (sequential)."
            ),
            k!(
                "fsync",
                Value("false"),
                "fsync the file at the end of the phase (files only); for access = \"create\", \
            fsync every file before closing it."
            ),
        ],
    )
};

static MIX: SectionDef = SectionDef {
    commented: true,
    array: true,
    ..section(
        "task.phase.mix",
        "Per-op mix (`mix = [{...}, ...]`): each operation of the phase picks one entry with \
         probability weight / total weight, from the phase's one random stream, and does what \
         the entry says. The entry takes the keys of a one-object phase below; the phase keeps \
         name, ops (default: one pass over every entry's range), think and advice (default \
         \"normal\", for every object of the mix) and takes none of the entry keys.",
        &[
            k!(
                "object",
                Required("\"heap\""),
                "Object of this entry. Required."
            ),
            k!(
                "weight",
                Value("1.0"),
                "Relative share of the operations (> 0)."
            ),
            k!(
                "access",
                Required("\"touch-write\""),
                "As a phase's access. Required."
            ),
            k!("pattern", Value("\"random\""), "As a phase's pattern."),
            k!("zipf_s", IfUsed("0.9"), "zipf only: the exponent."),
            k!("skew", IfUsed("0.9"), "zipf only: another name for zipf_s."),
            k!(
                "scatter",
                IfUsed("true"),
                "zipf only: as a phase's scatter."
            ),
            k!("hot_fraction", IfUsed("0.2"), "hot-cold only."),
            k!("hot_probability", IfUsed("0.8"), "hot-cold only."),
            k!(
                "range",
                Computed("[\"0\", \"96M\"]"),
                "Byte range within the object. Default: the whole object."
            ),
            k!(
                "pages_per_op",
                Value("1"),
                "Consecutive pages per operation."
            ),
            k!(
                "write_fraction",
                IfUsed("0.0"),
                "touch only: fraction of operations that store."
            ),
        ],
    )
};

static SOURCE: SectionDef = SectionDef {
    commented: true,
    ..section(
        "task.phase.source",
        "Replay a recorded trace (docs/traces.md): the phase's only key besides `name`, and \
         the task's only phase. Objects the trace declares are created unless an [[object]] \
         of the same name (and kind, at least as large) is declared.",
        &[
            k!(
                "trace",
                Required("\"app.rft\""),
                "Path of the trace, relative to the scenario file. Required."
            ),
            k!(
                "format",
                Value("\"auto\""),
                "\"auto\", \"binary\", \"text\", \"lackey\", \"oracle-general\", \"csv\", \"damon\" \
                 or \"perf-mem\"."
            ),
            k!(
                "task",
                Computed("\"main\""),
                "The trace's task to replay. Default: the trace's only task."
            ),
            k!(
                "columns",
                IfUsed("\"offset=4,size=5,op=3,volume=2,skip=1\""),
                "csv only: where the fields are (docs/traces.md)."
            ),
        ],
    )
};

static PGBENCH: SectionDef = SectionDef {
    commented: true,
    ..section(
        "task.pgbench",
        "pgbench TPC-B-like client (workload = \"pgbench\").",
        &[
            k!(
                "shared_buffers",
                Required("\"shared_buffers\""),
                "The shared buffers: a shmem [[object]]. Required."
            ),
            k!(
                "database",
                Required("\"database\""),
                "The database: a file [[object]]. Required."
            ),
            k!(
                "wal",
                Required("\"wal\""),
                "The write-ahead log: a file [[object]], written sequentially with an fsync \
                per transaction. Required."
            ),
            k!(
                "transactions",
                Value("0"),
                "Transactions per client; 0 = until the run's duration."
            ),
            k!(
                "zipf_s",
                Value("0.8"),
                "Zipf exponent of page popularity in the database."
            ),
            k!(
                "think",
                Value("\"100us\""),
                "Client think time between transactions (network round trip, parsing)."
            ),
        ],
    )
};

static MEMCACHED: SectionDef = SectionDef {
    commented: true,
    ..section(
        "task.memcached",
        "memcached-like key-value server (workload = \"memcached\").",
        &[
            k!(
                "items",
                Required("\"items\""),
                "The item memory: an anon [[object]]. Required."
            ),
            k!(
                "fill",
                Value("true"),
                "Fill the item memory sequentially before serving."
            ),
            k!(
                "requests",
                Value("0"),
                "Requests per instance after the fill; 0 = until the run's duration."
            ),
            k!(
                "set_fraction",
                Value("0.1"),
                "Fraction of requests that are sets, in [0, 1]."
            ),
            k!(
                "zipf_s",
                Value("0.0"),
                "Key popularity: 0 = uniform, else the Zipf exponent."
            ),
            k!(
                "pages_per_request",
                Value("1"),
                "Pages touched per request."
            ),
            k!(
                "item_size",
                Value("0"),
                "memcached's slab chunk size in bytes (e.g. 2320: a 2000-byte value with its key and item header, rounded up to its slab class); items are packed into 1 MiB slab pages and a request touches every 4 KiB page its chunk spans. 0 = aligned slots of pages_per_request pages; set one or the other."
            ),
            k!(
                "hashtable",
                IfUsed("\"hashtable\""),
                "memcached's hash bucket array: an anon [[object]] of at least 8 bytes per bucket, the bucket count being what memcached grows to for the item slots (2^16, doubled while the items exceed 1.5 per bucket). A request first reads its key's bucket and the header of every item ahead of its own in the bucket's chain (assoc_find()). Unset = a request touches only its item."
            ),
            k!("think", Value("\"20us\""), "CPU time between requests."),
        ],
    )
};

static COPY: SectionDef = SectionDef {
    commented: true,
    ..section(
        "task.copy",
        "Large-file copy, the background IO load of parallel-IO tests (workload = \"copy\").",
        &[
            k!(
                "src",
                Required("\"data\""),
                "The file [[object]] read. Required."
            ),
            k!(
                "dst",
                Required("\"copy\""),
                "The file [[object]] written; at least as large as src. Required."
            ),
            k!(
                "chunk_pages",
                Value("32"),
                "Pages per read()/write() (cp uses 128 KiB)."
            ),
            k!(
                "passes",
                Value("1"),
                "Copies of the whole file; 0 = until the run's duration."
            ),
            k!(
                "fsync",
                Value("true"),
                "fsync the destination at the end of each pass."
            ),
            k!("think", Value("\"0s\""), "CPU time between chunks."),
        ],
    )
};

static KALLOC: SectionDef = SectionDef {
    commented: true,
    ..section(
        "task.kalloc",
        "Kernel allocations of order N (workload = \"kalloc\"): the stress-highalloc pattern \
         (order-9 allocations held until the task ends), or slab / page-table / kernel-stack \
         churn of short-lived processes (small orders, few live at once). Kernel memory is \
         not on an LRU and not charged to a cgroup; it cannot be reclaimed or migrated.",
        &[
            k!("order", Value("9"), "Allocation order, 0..=10."),
            k!(
                "count",
                Value("0"),
                "Allocations per instance; 0 = until the run's duration."
            ),
            k!(
                "gfp",
                Value("\"kernel\""),
                "\"nowait\" (GFP_NOWAIT | __GFP_HIGH: only wakes kswapd, never reclaims or \
                compacts itself; the slow path's min watermark is halved, and cut by a further \
                quarter from v6.3) or \"kernel\" (GFP_KERNEL: direct reclaim and direct \
                compaction in the allocator slow path) or \"kernel-high\" (GFP_KERNEL | \
                __GFP_HIGH: as \"kernel\" with the min watermark halved) or \"atomic\" \
                (GFP_ATOMIC: as \"nowait\", and before v6.3 __GFP_ATOMIC's ALLOC_HARDER: \
                a further quarter of the min watermark and the highatomic reserve, which \
                from v6.3 a non-blocking __GFP_HIGH allocation of order > 0 gets too)."
            ),
            k!(
                "migratetype",
                Value("\"unmovable\""),
                "\"unmovable\" (page tables, kernel stacks, network buffers), \"reclaimable\" \
                (reclaimable slab: dentries, inodes) or \"movable\"."
            ),
            k!(
                "live",
                Value("0"),
                "Allocations held at once: 0 = every allocation is kept until the task ends \
                (then all are freed); N = the oldest is freed when the (N+1)-th is made."
            ),
            k!("think", Value("\"0s\""), "CPU time between allocations."),
        ],
    )
};

static PROCESS: SectionDef = SectionDef {
    commented: true,
    ..section(
        "task.process",
        "Short-lived processes (workload = \"process\"), one after another, as a build's \
         compilers: each forks (copy_process(): an order-2 kernel stack and the PGD, \
         GFP_KERNEL, unmovable), stores to random pages of its anonymous object (faulting \
         it in: page tables, THP as transparent_hugepage allows), and exits (exit_mmap(): \
         every page, swap slot and page table freed, then the stack). The object is the \
         process's address space: one task with instances = 1 uses it, and no other task.",
        &[
            k!(
                "object",
                Required("\"cc1\""),
                "The anonymous [[object]] each process faults. Required."
            ),
            k!(
                "count",
                Value("0"),
                "Processes per instance, one after another; 0 = until the run's duration."
            ),
            k!(
                "ops",
                Value("1000"),
                "Stores to random pages of the object per process (at least 1)."
            ),
            k!("think", Value("\"0s\""), "CPU time after each store."),
        ],
    )
};

static MODEL: SectionDef = SectionDef {
    children: &[&COST],
    ..section(
        "model",
        "Model-only knobs: things the kernel fixes or the hardware decides.",
        &[
            k!(
                "readahead_kb",
                Value("128"),
                "read_ahead_kb of the file-system device: largest file readahead window, in \
                KiB (rounded down to pages)."
            ),
            k!(
                "max_file_folio_order",
                Computed("9"),
                "Largest page-cache folio order readahead may build; 0 = order-0 pages only. \
                At most 10. Default: 9 (2 MiB, ext4's large folios) with model.kernel 6.16 or \
                later, 0 before (ext4 had no large folios before v6.16)."
            ),
            k!(
                "check_interval",
                Value("0"),
                "Run the invariant checks every N events; 0 = never (`refault run --check N` \
                 sets N; debug builds check every 100,000 when neither asks). The checks \
                 observe and never change the result; the result JSON records the interval \
                 used."
            ),
            k!(
                "cgroup_version",
                Value("2"),
                "Memory-cgroup semantics: 1 = cgroup v1 (per-cgroup memory.swappiness; limit \
                reclaim waits for writeback of folios it marked PG_reclaim), 2 = the default \
                hierarchy (vm.swappiness everywhere, no such wait)."
            ),
            k!(
                "memcg_stats_flush_ms",
                Value("2000"),
                "Period of the kernel's memcg statistics flusher (FLUSH_TIME): reclaim's \
                heuristics and refault detection read the lruvec statistics as of the last \
                flush, the first half a period after the start. 0 = they read exact counts."
            ),
            k!(
                "memcg_stats_first_flush_ms",
                Computed("1000"),
                "When the first memcg statistics flush lands after the start (then one every \
                memcg_stats_flush_ms): the kernel's flusher runs at a phase unrelated to the \
                workload. Default: half the period. `refault twin` averages the simulation \
                over four phases spread evenly across the period."
            ),
            k!(
                "kernel",
                Value("\"6.18\""),
                "The kernel version (\"MAJOR.MINOR\", 4.4 or later; 4.6 or later with \
                kcompactd, 6.1 or later with the multi-gen LRU) whose rules the model follows \
                where they changed between versions: the multi-gen LRU's refault accounting, \
                refault recency and placement of new folios, whether every fallback below \
                pageblock order boosts the watermark (before 6.15), no watermark boosting \
                (before 5.0), no proactive compaction (before 5.9), kswapd's order-0 balance \
                check under kcompactd (before 4.8) (docs/fidelity.md, \"Kernel versions\"). The model \
                follows 6.18; later versions get 6.18's rules. \
                `refault twin --vm` sets it to the booted kernel's version."
            ),
        ],
    )
};

static COST: SectionDef = section(
    "model.cost",
    "CPU cost of kernel work, as durations: order-of-magnitude figures for a current x86-64 \
     server core.",
    &[
        k!(
            "touch",
            Value("\"5ns\""),
            "A page-table access that hits a present page (TLB miss amortised)."
        ),
        k!(
            "minor_fault",
            Value("\"500ns\""),
            "Minor fault: anon zero-fill or page-cache hit through a mapping."
        ),
        k!(
            "major_fault",
            Value("\"2us\""),
            "Major fault bookkeeping, excluding the IO wait."
        ),
        k!(
            "pagecache_hit",
            Value("\"200ns\""),
            "read()/write() of one cached page."
        ),
        k!(
            "page_alloc",
            Value("\"150ns\""),
            "Allocating a page (buddy, zeroing for anon)."
        ),
        k!(
            "scan_per_page",
            Value("\"40ns\""),
            "Isolating and examining one folio on an LRU list."
        ),
        k!(
            "rmap_per_call",
            Value("\"150ns\""),
            "The part of one rmap walk (folio_referenced(), try_to_unmap()) that does not \
             depend on how many mappings the folio has: taking the anon_vma (or i_mmap) lock \
             for read (folio_lock_anon_vma_read()) and setting up the interval-tree walk. \
             Measured (README.md, Seed S1, \"Session 17: measured on this host\"): \
             folio_referenced() 387 ns per call minus folio_referenced_one() 237 ns, one \
             thread of one mm, Linux 6.18 in a 2-vCPU VM, perf cpu-clock sampling (counts \
             time the vCPU was preempted by the host; about +-3%). With 8 threads on 2 CPUs it \
             was 212 ns (491 - 279): contention on the anon_vma lock's cache line, which the \
             model does not simulate."
        ),
        k!(
            "rmap_per_mapping",
            Value("\"237ns\""),
            "One mapping visited by folio_referenced(): folio_referenced_one(), the \
             page_vma_mapped_walk() to the PTE and the young-bit test-and-clear. Measured \
             (README.md, Seed S1, \"Session 17: measured on this host\"): 237 ns per call \
             with one mapping, one thread, Linux 6.18 in a 2-vCPU VM, perf cpu-clock \
             sampling; 279 ns with 8 threads on 2 CPUs. The page tables of that 384 MiB \
             mapping stayed in cache: a larger mm would pay page-table cache misses on top."
        ),
        k!(
            "unmap_per_mapping",
            Value("\"560ns\""),
            "One mapping unmapped by try_to_unmap(): try_to_unmap_one() clearing the PTE \
             (a swap entry for anon), the rmap and mapcount updates, without any TLB flush \
             (tlb_flush_local, tlb_shootdown). Measured (README.md, Seed S1, \"Session 17: \
             measured on this host\"): try_to_unmap() 847 ns per call with one mapping, one \
             thread, of which 137 ns a local flush_tlb_mm_range(); minus rmap_per_call \
             (150 ns) for the lock and walk setup: 560 ns. Linux 6.18 in a 2-vCPU VM, perf \
             cpu-clock sampling (about +-4%)."
        ),
        k!(
            "tlb_flush_local",
            Value("\"137ns\""),
            "try_to_unmap() flushing the unmapped PTE from the local TLB at once \
             (ptep_clear_flush() -> flush_tlb_mm_range()), when no other CPU has the mm in \
             mm_cpumask() so the flush is not deferred (should_defer_flush()). Measured \
             (README.md, Seed S1, \"Session 17: measured on this host\"): 137 ns per \
             try_to_unmap() call, one thread, Linux 6.18 in a 2-vCPU VM, perf cpu-clock."
        ),
        k!(
            "tlb_shootdown",
            Value("\"5070ns\""),
            "One batched TLB flush that reaches other CPUs (try_to_unmap_flush() -> \
             arch_tlbbatch_flush() -> flush_tlb_multi()), per flush, besides \
             tlb_shootdown_per_cpu per CPU it interrupts: the local full flush, the IPI \
             round trip and the wait for the slowest target's acknowledgement (the targets \
             flush in parallel). Derived from a measurement (README.md, Seed S1, \"Session \
             17: measured on this host\"): 8 threads of one mm on 2 vCPUs spent 5.27 us in \
             arch_tlbbatch_flush() per reclaimed folio (30.5 us per shrink_folio_list() \
             call); every reclaimed folio's PTE was dirty (the workload wrote every page it \
             faulted), so try_to_unmap_flush_dirty() flushed once per reclaimed folio, to the \
             one other CPU: 5.27 us = tlb_shootdown + 1 x tlb_shootdown_per_cpu, so 5,270 - \
             200 = 5,070 ns. A guest's cpu-clock counts the wait for a preempted target vCPU: \
             on bare metal an IPI round trip is likely shorter."
        ),
        k!(
            "tlb_shootdown_per_cpu",
            Value("\"200ns\""),
            "Per CPU a batched TLB flush interrupts (smp_call_function_many_cond() for \
             flush_tlb_multi()): queueing the call on the target's call_single_queue and \
             waiting on its csd for the acknowledgement, two core-to-core cache-line \
             transfers at the 100 ns of lru_lock (60-100 ns within a Skylake-SP socket in \
             published core-to-core latency measurements). The x2APIC ICR write per target \
             is not counted (no figure). Only one target could be measured on the 2-vCPU \
             host, so the split of the 5.27 us per flush between this and tlb_shootdown \
             rests on this estimate."
        ),
        k!(
            "pt_walk_per_pte",
            Value("\"10ns\""),
            "Multi-gen LRU aging and look-around: visiting one PTE (or PMD entry) in a page-table walk."
        ),
        k!(
            "reclaim_per_page",
            Value("\"150ns\""),
            "Removing one reclaimed folio from the swap cache or page cache \
             (__remove_mapping(), storing its shadow entry) and freeing it. The unmap is \
             unmap_per_mapping (and the TLB flush tlb_flush_local or tlb_shootdown)."
        ),
        k!("io_submit", Value("\"2us\""), "Submitting one IO request."),
        k!(
            "compact_scan_per_page",
            Value("\"10ns\""),
            "Compaction: one page visited by the migrate or free scanner."
        ),
        k!(
            "migrate_per_page",
            Value("\"1us\""),
            "Migrating one page during compaction (unmap, copy 4 KiB, remap)."
        ),
        k!(
            "lru_lock",
            Value("\"100ns\""),
            "Taking and releasing an lruvec's lru_lock (spin_lock_irq/spin_unlock_irq) whose cache \
             line another CPU wrote last: one core-to-core cache-line transfer, 60-100 ns within a \
             Skylake-SP socket (the seed S1 machine's Xeon 6154) in published core-to-core \
             latency measurements, plus the irq-off/irq-on pair. Waiting for a held lock is \
             simulated, not part of this figure."
        ),
        k!(
            "lru_move",
            Value("\"50ns\""),
            "Moving one folio onto or off an LRU list under the lru_lock (lru_add(), \
             lru_activate(), list_del()/list_add() of isolation and putback): about one cache \
             miss on a list neighbour's struct page last written by another CPU (20-100 ns: L3 \
             hit to core-to-core transfer) plus the per-CPU lruvec statistics update."
        ),
    ],
);

impl SectionDef {
    /// Name relative to the parent (`phase` for `task.phase`).
    pub fn name(&self) -> &'static str {
        self.path.rsplit('.').next().unwrap_or("")
    }

    pub fn key(&self, key: &str) -> Option<&'static KeyDef>
    where
        Self: 'static,
    {
        self.keys.iter().find(|k| k.key == key)
    }

    pub fn child(&self, name: &str) -> Option<&'static SectionDef> {
        self.children.iter().copied().find(|c| c.name() == name)
    }

    /// `[machine]`, `[[task.phase]]`, or "the top level".
    pub fn header(&self) -> String {
        match (self.path, self.array) {
            ("", _) => "the top-level table".to_string(),
            (p, true) => format!("[[{p}]]"),
            (p, false) => format!("[{p}]"),
        }
    }

    /// Every name allowed in this table: keys, then sub-tables.
    pub fn known(&self) -> Vec<&'static str>
    where
        Self: 'static,
    {
        if self.sysctl {
            return SYSCTLS.iter().map(|d| d.name).collect();
        }
        self.keys
            .iter()
            .map(|k| k.key)
            .chain(self.children.iter().map(|c| c.name()))
            .collect()
    }

    /// Checks every key of `table` (and below) against the schema. Returns the first
    /// unknown key in document order: its path, span and message.
    pub fn check_keys(
        &'static self,
        table: &Located,
        path: &mut Vec<Seg>,
    ) -> Result<(), (ErrorKind, Option<Range<usize>>, String)> {
        for entry in table.entries() {
            path.push(Seg::Key(entry.key.clone()));
            if let Some(child) = (!self.sysctl).then(|| self.child(&entry.key)).flatten() {
                match (&entry.value.node, child.array) {
                    (Node::Array(items), true) => {
                        for (i, item) in items.iter().enumerate() {
                            path.push(Seg::Index(i));
                            child.check_keys(item, path)?;
                            path.pop();
                        }
                    }
                    (Node::Table(_), false) => child.check_keys(&entry.value, path)?,
                    (Node::Table(_), true) => {
                        return Err((
                            ErrorKind::InvalidValue,
                            entry.key_span.clone(),
                            format!(
                                "`{}` is a list of tables: write [[{}]] for each entry",
                                entry.key, child.path
                            ),
                        ))
                    }
                    // Other wrong shapes are type errors: serde reports them with their
                    // position.
                    _ => {}
                }
            } else if self.sysctl && crate::sysctl::lookup(&entry.key).is_none() {
                return Err((
                    ErrorKind::UnknownKey,
                    entry.key_span.clone(),
                    unknown_sysctl_message(&entry.key),
                ));
            } else if !self.sysctl && self.key(&entry.key).is_none() {
                return Err((
                    ErrorKind::UnknownKey,
                    entry.key_span.clone(),
                    self.unknown_key_message(&entry.key),
                ));
            }
            path.pop();
        }
        Ok(())
    }

    pub fn unknown_key_message(&'static self, key: &str) -> String {
        let known = self.known();
        let hint = did_you_mean(key, &known)
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default();
        format!(
            "unknown key `{key}` in {}{hint}; known keys: {}",
            self.header(),
            known.join(", ")
        )
    }
}

pub(crate) fn unknown_sysctl_message(name: &str) -> String {
    let known: Vec<&str> = SYSCTLS.iter().map(|d| d.name).collect();
    let hint = did_you_mean(name, &known)
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    format!(
        "unknown sysctl `{name}`{hint}; known: {}",
        crate::sysctl::known_names()
    )
}

/// The closest known name that looks like a typo of `word` (at most 2 edits, and at most a
/// third of the longer word), if any.
pub(crate) fn did_you_mean<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (edit_distance(word, k), *k))
        .filter(|&(d, k)| d <= 2 && d * 3 <= word.chars().count().max(k.chars().count()))
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The section at a dotted path ("task.phase").
pub(crate) fn section_at(path: &str) -> Option<&'static SectionDef> {
    if path.is_empty() {
        return Some(&ROOT);
    }
    let mut here: &'static SectionDef = &ROOT;
    let mut prefix = String::new();
    for part in path.split('.') {
        if !prefix.is_empty() {
            prefix.push('.');
        }
        prefix.push_str(part);
        here = here.children.iter().copied().find(|c| c.path == prefix)?;
    }
    Some(here)
}

/// The default of `key` in section `path`, deserialised from its literal. Panics when the
/// key has no literal default: that is a bug in this table or its caller, and the tests
/// exercise every default.
pub(crate) fn default<T: DeserializeOwned>(path: &str, key: &str) -> T {
    let def = section_at(path)
        .and_then(|s| s.keys.iter().find(|k| k.key == key))
        .unwrap_or_else(|| panic!("no key {key} in section [{path}]"));
    let lit = match def.dflt {
        Dflt::Value(lit) | Dflt::IfUsed(lit) => lit,
        other => panic!("{path}.{key} has no literal default: {other:?}"),
    };
    let table: toml::Table = toml::from_str(&format!("v = {lit}"))
        .unwrap_or_else(|e| panic!("default of {path}.{key} is not TOML: {e}"));
    let value = table.get("v").cloned().expect("the literal parsed");
    value
        .try_into()
        .unwrap_or_else(|e| panic!("default of {path}.{key} has the wrong type: {e}"))
}

// ---------------------------------------------------------------------------------------
// The reference file.

const WIDTH: usize = 92;

fn wrap(out: &mut String, prefix: &str, text: &str) {
    let mut line = String::from(prefix);
    for word in text.split_whitespace() {
        if line.len() > prefix.len() && line.len() + 1 + word.len() > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = String::from(prefix);
        }
        if line.len() > prefix.len() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if line.len() > prefix.len() {
        out.push_str(&line);
        out.push('\n');
    }
}

fn toml_key(key: &str) -> String {
    if key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        key.to_string()
    } else {
        format!("\"{key}\"")
    }
}

fn write_section(out: &mut String, s: &'static SectionDef, commented: bool) {
    let commented = commented || s.commented;
    let c = if commented { "# " } else { "" };
    if !s.path.is_empty() {
        out.push('\n');
        wrap(out, "# ", s.doc);
        if s.array {
            out.push_str(&format!("{c}[[{}]]\n", s.path));
        } else {
            out.push_str(&format!("{c}[{}]\n", s.path));
        }
    }
    if s.sysctl {
        for def in SYSCTLS {
            let (dflt, live) = match def.default {
                SysctlDefault::Value(v) => (v, true),
                SysctlDefault::Computed { example, .. } => (example, false),
            };
            let range = format!("Range {}{}.", def.range_text(), unit_suffix(def.unit));
            let default = match def.default {
                SysctlDefault::Value(_) => String::new(),
                SysctlDefault::Computed { how, .. } => format!(" Default: {how}."),
            };
            wrap(out, "# ", &format!("{} {range}{default}", def.doc));
            let lc = if live && !commented { "" } else { "# " };
            out.push_str(&format!("{lc}\"{}\" = {dflt}\n", def.name));
        }
    }
    for key in s.keys {
        wrap(out, &format!("{c}# "), key.doc);
        let (lit, live) = match key.dflt {
            Dflt::Value(l) | Dflt::Required(l) => (l, true),
            Dflt::IfUsed(l) | Dflt::Computed(l) => (l, false),
        };
        let lc = if live && !commented { "" } else { "# " };
        out.push_str(&format!("{lc}{} = {lit}\n", toml_key(key.key)));
    }
    for child in s.children {
        write_section(out, child, commented);
    }
}

fn unit_suffix(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" ({unit})")
    }
}

/// `scenarios/reference.toml`: every key with its default and doc.
pub fn reference_toml() -> String {
    let mut out = String::new();
    out.push_str(
        "# refault scenario reference: every key, its default and what it means.\n\
         #\n\
         # Generated from crates/scenario/src/{defs,sysctl}.rs by\n\
         # `REFAULT_BLESS=1 cargo test -p refault-scenario`; do not edit.\n\
         #\n\
         # Live lines show defaults (or, for required keys, an example); commented-out lines\n\
         # are keys whose default is computed from other keys or that apply only in some\n\
         # cases. Unknown keys are errors. Any key can be set from the command line with\n\
         # `--set KEY=VALUE`: dotted paths such as machine.memory=2G or\n\
         # model.cost.scan_per_page=50ns, vm.* for sysctls, and the element of an array of\n\
         # tables by its name: cgroup.workload.memory.max=1G, task.reader.phase.phase0.ops=10.\n\
         #\n",
    );
    out.push_str(&format!(
        "# Device presets: {}.\n",
        presets::PRESETS
            .iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for p in presets::PRESETS {
        wrap(&mut out, "#   ", &format!("{}: {}.", p.name, p.doc));
    }
    out.push_str("#\n");
    write_section(&mut out, &ROOT, false);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_finds_typos() {
        assert_eq!(edit_distance("memroy", "memory"), 2);
        assert_eq!(edit_distance("cpu", "cpus"), 1);
        assert_eq!(did_you_mean("memroy", &["memory", "cpus"]), Some("memory"));
        assert_eq!(did_you_mean("zzzzzz", &["memory", "cpus"]), None);
        assert_eq!(did_you_mean("x", &["fs", "run"]), None);
    }

    #[test]
    fn every_literal_default_is_toml() {
        fn walk(s: &'static SectionDef) {
            for k in s.keys {
                let (Dflt::Value(l) | Dflt::IfUsed(l) | Dflt::Computed(l) | Dflt::Required(l)) =
                    k.dflt;
                let parsed: Result<toml::Table, _> = toml::from_str(&format!("v = {l}"));
                assert!(parsed.is_ok(), "{}.{}: {l}", s.path, k.key);
            }
            for c in s.children {
                assert!(c.path.starts_with(s.path), "{} under {}", c.path, s.path);
                walk(c);
            }
        }
        walk(&ROOT);
    }

    #[test]
    fn sections_are_found_by_path() {
        assert_eq!(section_at("task.phase").unwrap().path, "task.phase");
        assert_eq!(section_at("model.cost").unwrap().path, "model.cost");
        assert!(section_at("task.nope").is_none());
        let d: u32 = default("machine", "cpus");
        assert_eq!(d, 4);
    }
}
