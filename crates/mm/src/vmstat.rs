//! Event counters under their /proc/vmstat names (the model's `vmstat_text[]`).
//!
//! Gauges (`nr_free_pages`, `nr_inactive_file`, ...) are computed from the model's state when
//! a snapshot is taken (`Mm::vmstat_snapshot`); the event counters below are incremented where
//! the kernel increments them, and the doc of each place names the kernel function.

macro_rules! vm_events {
    ($($variant:ident => $name:literal,)*) => {
        /// One /proc/vmstat event counter.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[allow(non_camel_case_types)]
        pub enum Ev { $($variant,)* }
        pub const NR_EVENTS: usize = [$($name,)*].len();
        /// /proc/vmstat names, indexed by `Ev as usize`.
        pub const EVENT_NAMES: [&str; NR_EVENTS] = [$($name,)*];
    };
}

vm_events! {
    PgpgIn => "pgpgin",
    PgpgOut => "pgpgout",
    PswpIn => "pswpin",
    PswpOut => "pswpout",
    PgallocDma => "pgalloc_dma",
    PgallocDma32 => "pgalloc_dma32",
    PgallocNormal => "pgalloc_normal",
    PgFree => "pgfree",
    PgActivate => "pgactivate",
    PgDeactivate => "pgdeactivate",
    PgFault => "pgfault",
    PgMajFault => "pgmajfault",
    PgRefill => "pgrefill",
    PgReuse => "pgreuse",
    PgStealKswapd => "pgsteal_kswapd",
    PgStealDirect => "pgsteal_direct",
    PgScanKswapd => "pgscan_kswapd",
    PgScanDirect => "pgscan_direct",
    PgScanDirectThrottle => "pgscan_direct_throttle",
    PgScanAnon => "pgscan_anon",
    PgScanFile => "pgscan_file",
    PgStealAnon => "pgsteal_anon",
    PgStealFile => "pgsteal_file",
    PgSkipDma32 => "pgskip_dma32",
    PgSkipNormal => "pgskip_normal",
    PgRotated => "pgrotated",
    UnevictablePgsCulled => "unevictable_pgs_culled",
    UnevictablePgsScanned => "unevictable_pgs_scanned",
    UnevictablePgsRescued => "unevictable_pgs_rescued",
    UnevictablePgsMlocked => "unevictable_pgs_mlocked",
    UnevictablePgsMunlocked => "unevictable_pgs_munlocked",
    UnevictablePgsCleared => "unevictable_pgs_cleared",
    UnevictablePgsStranded => "unevictable_pgs_stranded",
    PageOutRun => "pageoutrun",
    KswapdLowWmarkHitQuickly => "kswapd_low_wmark_hit_quickly",
    KswapdHighWmarkHitQuickly => "kswapd_high_wmark_hit_quickly",
    AllocStallDma => "allocstall_dma",
    AllocStallDma32 => "allocstall_dma32",
    AllocStallNormal => "allocstall_normal",
    AllocStallMovable => "allocstall_movable",
    WorkingsetRefaultAnon => "workingset_refault_anon",
    WorkingsetRefaultFile => "workingset_refault_file",
    WorkingsetActivateAnon => "workingset_activate_anon",
    WorkingsetActivateFile => "workingset_activate_file",
    WorkingsetRestoreAnon => "workingset_restore_anon",
    WorkingsetRestoreFile => "workingset_restore_file",
    NrVmscanWrite => "nr_vmscan_write",
    NrVmscanImmediateReclaim => "nr_vmscan_immediate_reclaim",
    NrDirtied => "nr_dirtied",
    NrWritten => "nr_written",
    NrThrottledWritten => "nr_throttled_written",
    SwapRa => "swap_ra",
    SwapRaHit => "swap_ra_hit",
    OomKill => "oom_kill",
    ThpFileAlloc => "thp_file_alloc",
    PgmigrateSuccess => "pgmigrate_success",
    PgmigrateFail => "pgmigrate_fail",
    CompactMigrateScanned => "compact_migrate_scanned",
    CompactFreeScanned => "compact_free_scanned",
    CompactIsolated => "compact_isolated",
    CompactStall => "compact_stall",
    CompactFail => "compact_fail",
    CompactSuccess => "compact_success",
    KcompactdWake => "compact_daemon_wake",
    KcompactdMigrateScanned => "compact_daemon_migrate_scanned",
    KcompactdFreeScanned => "compact_daemon_free_scanned",
    SlabsScanned => "slabs_scanned",
    WorkingsetNodereclaim => "workingset_nodereclaim",
    KswapdInodesteal => "kswapd_inodesteal",
    PgInodesteal => "pginodesteal",
    DropPagecache => "drop_pagecache",
    DropSlab => "drop_slab",
    ThpFaultAlloc => "thp_fault_alloc",
    ThpFaultFallback => "thp_fault_fallback",
    ThpFaultFallbackCharge => "thp_fault_fallback_charge",
    ThpSplitPage => "thp_split_page",
    ThpSplitPmd => "thp_split_pmd",
    ThpSwpout => "thp_swpout",
    ThpSwpoutFallback => "thp_swpout_fallback",
    // Not in /proc/vmstat: the `mm_page_alloc_extfrag` tracepoint (one fallback to another
    // migratetype's free list) counted.
    ExtfragFallback => "mm_page_alloc_extfrag",
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmEvents(pub [u64; NR_EVENTS]);

impl Default for VmEvents {
    fn default() -> Self {
        VmEvents([0; NR_EVENTS])
    }
}

impl VmEvents {
    #[inline]
    pub fn add(&mut self, e: Ev, n: u64) {
        self.0[e as usize] += n;
    }
    #[inline]
    pub fn get(&self, e: Ev) -> u64 {
        self.0[e as usize]
    }
}

/// Per-memcg counters (`memory.stat` names) that limit reclaim updates instead of the global
/// pgscan/pgsteal_{kswapd,direct}.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemcgEvents {
    pub pgscan: u64,
    pub pgsteal: u64,
    pub pgrefill: u64,
    pub max_events: u64,
    pub oom_kill: u64,
    /// `swap_max` of memory.events: a swap-out failed at memory.swap.max.
    pub swap_max_events: u64,
}

/// The kernel's cumulative `nr_*` items that the model does not count (node_stat_item
/// entries that only ever grow, like the event counters): never gauges.
const CUMULATIVE_NR_NOT_MODELLED: [&str; 2] = ["nr_foll_pin_acquired", "nr_foll_pin_released"];

/// Whether the /proc/vmstat item `name` is a gauge (a level, like `nr_free_pages`: reported
/// as its value at the end of the run) rather than a counter (events since boot, reported
/// as the difference over the measured interval). The kernel's rule, by construction of
/// `vmstat_text[]`: the zone and node stat items (`nr_*`, and `workingset_nodes`) are
/// levels, except the ones that only grow (`nr_dirtied`, `nr_written`, `nr_throttled_written`, `nr_vmscan_write`,
/// `nr_vmscan_immediate_reclaim`, `nr_foll_pin_*`), and the vm_event_item entries are
/// counters. The one home of the rule: the simulator subtracts the warm-up by it, the
/// reports and the mmtests export split gauges from counters by it.
pub fn is_gauge(name: &str) -> bool {
    (name.starts_with("nr_")
        && !EVENT_NAMES.contains(&name)
        && !CUMULATIVE_NR_NOT_MODELLED.contains(&name))
        || NODE_STAT_LEVELS_NOT_NR.contains(&name)
}

/// Node stat items (levels) whose names do not start with `nr_`.
const NODE_STAT_LEVELS_NOT_NR: [&str; 1] = ["workingset_nodes"];

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn names_are_unique_and_kernel_spelled() {
        let mut v: Vec<&str> = EVENT_NAMES.to_vec();
        v.sort();
        v.dedup();
        assert_eq!(v.len(), NR_EVENTS);
        assert_eq!(
            EVENT_NAMES[Ev::WorkingsetRefaultFile as usize],
            "workingset_refault_file"
        );
        assert_eq!(EVENT_NAMES[Ev::PgScanKswapd as usize], "pgscan_kswapd");
    }

    #[test]
    fn gauges_are_the_levels_among_nr_items() {
        for g in [
            "nr_free_pages",
            "nr_inactive_file",
            "nr_dirty",
            "nr_slab_reclaimable",
        ] {
            assert!(is_gauge(g), "{g}");
        }
        for c in [
            "pgscan_kswapd",
            "nr_dirtied",
            "nr_written",
            "nr_throttled_written",
            "nr_vmscan_write",
            "nr_vmscan_immediate_reclaim",
            "nr_foll_pin_acquired",
            "workingset_refault_file",
        ] {
            assert!(!is_gauge(c), "{c}");
        }
    }
}
