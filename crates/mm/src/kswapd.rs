//! kswapd: the per-node reclaim thread, as a resumable state machine.
//!
//! # The idea
//! Allocations that find a zone below its low watermark wake kswapd; it reclaims until some
//! eligible zone is above its high watermark (`pgdat_balanced()`), raising the scan priority
//! from DEF_PRIORITY when a pass does not scan enough, then naps for HZ/10 and sleeps.
//!
//! # In this model
//! `balance_pgdat()` is split into steps so the simulator can run kswapd as a thread that
//! shares the simulated CPUs with the tasks: `kswapd_step()` runs one iteration of
//! balance_pgdat's priority loop (`kswapd_age_node()` + `kswapd_shrink_node()`) and returns
//! what it cost. Between steps, tasks keep allocating, so a kswapd that reclaims slower than
//! the tasks allocate lets free memory fall to the min watermark and direct reclaim starts.
//!
//! # Where we differ from the kernel (v6.18)
//! - Boosted reclaim follows balance_pgdat(): while the node is balanced but a zone's
//!   watermark is boosted, kswapd reclaims `nr_boost_reclaim` pages without writeback or
//!   swap and without raising the priority below DEF_PRIORITY - 2, stops on a pass without
//!   progress, and drops the boost (restarting as normal reclaim) if the node is imbalanced;
//!   at the end the boosts it saw are subtracted and kcompactd is woken for pageblock order.
//! - `policy.boosted_reclaim_skips_slab = true` restores v5.0–v5.2's special case: boosted
//!   reclaim does not shrink slab (`may_shrinkslab`), removed in v5.3 by "mm, vmscan: do not
//!   special-case slab reclaim when watermarks are boosted".
//! - When kswapd goes to sleep (`kswapd_try_to_sleep()`) it clears the skip bits a direct
//!   compactor asked to flush and wakes kcompactd with the order it was woken for. Under
//!   `policy.kswapd_compaction = "kswapd"` it instead follows v4.4's balance_pgdat(): a zone
//!   where compaction is suitable is reclaimed only to its order-0 high watermark plus the
//!   balance gap (`testorder`), and kswapd calls `compact_pgdat()` after a pass only when
//!   that pass reclaimed more than it attempted and less than `2UL << order`
//!   ([`kswapd_v4_4_after_pass`]: never when the zone's high watermark is at least that, as
//!   in seed S4's test, where kswapd never compacted); v4.4 had
//!   no `kswapd_failures`, so passes that attempted no reclaim do not count as failures.
//! - `kswapd_failures` (kswapd giving up after MAX_RECLAIM_RETRIES runs without progress) is
//!   v4.12+ ("mm: vmscan: allow kswapd to give up"); under `model.kernel` before 4.12 no run
//!   counts as a failure, so kswapd (and the kcompactd it wakes when it sleeps) keeps being
//!   woken by allocations that find the zone unbalanced at their order.
//! - `model.kernel` before 4.8 (the seed S4 kernel, v4.6) with kcompactd: kswapd's balance
//!   test is the order-0 high watermark plus `1 << order` (`Mm::kswapd_balanced()`), not the
//!   high-order watermark; `wakeup_kswapd()` still tests the high-order one.
//! - `reclaim_throttle(WRITEBACK)` when kswapd meets folios it marked for immediate reclaim
//!   becomes a sleep until the next IO completion, at most HZ/10.
//!
//! # Cache-trim retry (v6.10+, `KernelVersion::kswapd_retries_without_cache_trim`)
//! When a whole priority loop (DEF_PRIORITY down to 1) reclaimed nothing and a
//! `shrink_node()` pass in it was in cache-trim mode and reclaimed nothing
//! (`cache_trim_mode_failed`), balance_pgdat() restarts the loop once with
//! `no_cache_trim_mode`, so the anon list gets scanned before kswapd counts a failure.
//!
//! # Kernel references
//! mm/vmscan.c `kswapd()`, `kswapd_try_to_sleep()`, `prepare_kswapd_sleep()`,
//! `balance_pgdat()`, `kswapd_shrink_node()`, `kswapd_age_node()`, `pgdat_balanced()`.

use crate::mmzone::Wmark;
use crate::types::*;
use crate::vmscan::ScanControl;
use crate::vmstat::Ev;
use crate::{Ctx, KswapdCompaction, Mm};

/// v4.4–v4.7 `KSWAPD_ZONE_BALANCE_GAP_RATIO`: kswapd_shrink_zone()'s balance gap is at
/// most 1% of the zone.
pub const KSWAPD_ZONE_BALANCE_GAP_RATIO: u64 = 100;

/// Where kswapd's reclaim went, boosted against normal passes of `balance_pgdat()` (whole
/// run, warm-up included). Not a kernel counter: the kernel's tracepoints
/// (`mm_vmscan_kswapd_wake`, `mm_vmscan_lru_shrink_inactive`, `mm_shrink_slab_end`) would
/// have to be joined to get it. Observes only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct KswapdBoostStats {
    /// balance_pgdat() runs.
    pub runs: u64,
    /// Runs that started with `nr_boost_reclaim > 0` (some zone up to the run's
    /// `highest_zoneidx` was boosted).
    pub boosted_runs: u64,
    /// Boosted runs that found the node imbalanced (`!pgdat_balanced()` with the boosted
    /// high watermark) and dropped the boost, restarting as normal reclaim.
    pub boost_dropped: u64,
    /// `kswapd_shrink_node()` passes made with `nr_boost_reclaim > 0`, and without.
    pub boosted_passes: u64,
    pub normal_passes: u64,
    /// Pages reclaimed (LRU and slab, `sc.nr_reclaimed`) in boosted passes, and in normal.
    pub reclaimed_boosted: u64,
    pub reclaimed_normal: u64,
    /// `slabs_scanned` added by boosted passes, and by normal ones.
    pub slabs_scanned_boosted: u64,
    pub slabs_scanned_normal: u64,
    /// `kswapd_inodesteal` added by boosted passes, and by normal ones.
    pub inodesteal_boosted: u64,
    pub inodesteal_normal: u64,
}

#[derive(Default)]
pub struct Kswapd {
    /// Boosted against normal reclaim (see [`KswapdBoostStats`]).
    pub boost_stats: KswapdBoostStats,
    /// An allocation asked kswapd to run (`wakeup_kswapd()`).
    pub wake_pending: bool,
    /// `pgdat->kswapd_order`.
    pub order: u32,
    /// `pgdat->kswapd_highest_zoneidx` (None: MAX_NR_ZONES, no request pending).
    pub highest_zoneidx: Option<usize>,
    /// The `highest_zoneidx` of the last balance_pgdat() run (kswapd() keeps it when no
    /// new request came).
    last_zoneidx: Option<usize>,
    /// A balance_pgdat() run is in progress.
    pub running: bool,
    sc: Option<ScanControl>,
    /// balance_pgdat()'s `nr_boost_reclaim`.
    nr_boost_reclaim: u64,
    /// `zone_boosts[]`: each zone's boost when the run started.
    zone_boosts: Vec<u64>,
    /// The order kswapd was woken for (`alloc_order`).
    alloc_order: u32,
    /// v4.4 `nr_attempted`: pages kswapd tried to reclaim in zones it did not skip.
    nr_attempted: u64,
    /// The run has not yet made a pass of balance_pgdat()'s loop (v4.6–v4.7 tests the
    /// high-order watermark before the first pass, `kswapd_v46_first_pass`).
    first_pass: bool,
}

/// What a kswapd step asks of the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KswapdNext {
    /// Run the next step right after this one's CPU time.
    Continue,
    /// Sleep (throttled) until this time, then continue.
    Throttle(u64),
    /// balance_pgdat() finished: nap, then sleep.
    Done,
}

/// v4.4/v4.5 balance_pgdat() after one pass of its loop that reclaimed `reclaimed` pages
/// and attempted `attempted` (the `sc->nr_to_reclaim` of each zone it did not skip):
/// "Fragmentation may mean that the system cannot be rebalanced for high-order
/// allocations": with `2UL << order` reclaimed kswapd goes on at order 0; then "Compact if
/// necessary and kswapd is reclaiming at least the high watermark number of pages as
/// requested" (`pgdat_needs_compaction && sc.nr_reclaimed > nr_attempted`), and
/// `compact_pgdat()` returns for order 0. Returns (the order kswapd goes on with, whether
/// it compacts). Since `nr_attempted` is at least the zone's high watermark, a zone whose
/// high watermark is at least `2UL << order` pages never gets kswapd compaction: the pass
/// that reclaims more than it attempted has dropped the order first (seed S4: "There was
/// no compaction attempt from kswapd during the whole test").
pub fn kswapd_v4_4_after_pass(
    order: u32,
    reclaimed: u64,
    attempted: u64,
    needs_compaction: bool,
) -> (u32, bool) {
    let order = if order > 0 && reclaimed >= 2u64 << order {
        0
    } else {
        order
    };
    (
        order,
        needs_compaction && reclaimed > attempted && order > 0,
    )
}

impl Mm {
    /// One iteration of `balance_pgdat()`'s loop.
    pub fn kswapd_step(&mut self, ctx: &mut Ctx) -> KswapdNext {
        ctx.kswapd = true;
        if !self.kswapd.running {
            self.kswapd.running = true;
            self.kswapd.wake_pending = false;
            self.ev.add(Ev::PageOutRun, 1);
            let mut sc = ScanControl::new(0, 0);
            sc.kswapd = true;
            sc.order = std::mem::take(&mut self.kswapd.order);
            // kswapd_highest_zoneidx(): the request, else the previous run's; balance_pgdat()
            // sets sc.reclaim_idx to it.
            let top = self.top_zone_idx();
            let idx = self
                .kswapd
                .highest_zoneidx
                .take()
                .or(self.kswapd.last_zoneidx)
                .unwrap_or(top);
            self.kswapd.last_zoneidx = Some(idx);
            sc.reclaim_idx = idx;
            sc.may_writepage = !self.cfg.laptop_mode;
            self.kswapd.alloc_order = sc.order;
            self.kswapd.nr_attempted = 0;
            self.kswapd.first_pass = true;
            // Only the boosts of zones up to highest_zoneidx are reclaimed for.
            self.kswapd.zone_boosts = self
                .zones
                .iter()
                .map(|z| {
                    if z.zone_type <= idx {
                        z.watermark_boost
                    } else {
                        0
                    }
                })
                .collect();
            self.kswapd.nr_boost_reclaim = self.kswapd.zone_boosts.iter().sum();
            // restart: set_reclaim_active(): ZONE_RECLAIM_ACTIVE on the zones up to
            // highest_zoneidx for the whole run (it caps their per-CPU lists, v5.14+).
            for z in &mut self.zones {
                z.reclaim_active = z.zone_type <= idx;
            }
            self.kswapd.boost_stats.runs += 1;
            if self.kswapd.nr_boost_reclaim > 0 {
                self.kswapd.boost_stats.boosted_runs += 1;
            }
            self.kswapd.sc = Some(sc);
        }
        let mut sc = self.kswapd.sc.take().expect("kswapd scan_control");
        let old_kswapd = self.cfg.kswapd_compaction == KswapdCompaction::Kswapd;
        // v4.6–v4.7 (accf62422b3a) with kcompactd: each pass of balance_pgdat()'s do-while
        // loop first looks for a zone that is not balanced at the true high-order watermark
        // (`zone_balanced(zone, order, true, 0, 0)`, the `end_zone` scan) and leaves when
        // there is none; only the loop's condition tests `pgdat_balanced()`, the order-0
        // watermark at `high + (1 << order)`. So a kswapd woken for an order-9 page that no
        // free block satisfies makes at least one pass even when order-0 memory is at
        // `high + (1 << order)`; each later start equals the previous pass's loop test.
        let v46 = !old_kswapd && !self.cfg.kernel.kswapd_balances_high_order();
        let first_pass = std::mem::take(&mut self.kswapd.first_pass);
        let balanced = if v46 && first_pass && sc.order > 0 {
            self.pgdat_balanced_idx(sc.order, sc.reclaim_idx)
        } else {
            self.kswapd_balanced_idx(sc.order, sc.reclaim_idx)
        };
        if !balanced && self.kswapd.nr_boost_reclaim > 0 {
            // Real pressure: ignore the boost and restart as normal reclaim.
            self.kswapd.nr_boost_reclaim = 0;
            sc.priority = DEF_PRIORITY;
            self.kswapd.boost_stats.boost_dropped += 1;
        }
        let boost = self.kswapd.nr_boost_reclaim;
        if boost == 0 && balanced {
            return self.kswapd_finish(ctx, sc);
        }
        let mut raise = !(boost > 0 && sc.priority == DEF_PRIORITY - 2);
        if boost > 0 {
            sc.may_writepage = false;
            sc.may_swap = false;
            // v5.0–v5.2: sc.may_shrinkslab = !nr_boost_reclaim.
            sc.may_shrinkslab = !self.cfg.fs.boosted_reclaim_skips_slab;
        } else {
            sc.may_shrinkslab = true;
            sc.may_swap = true;
            if sc.priority >= DEF_PRIORITY - 2 {
                sc.may_writepage = !self.cfg.laptop_mode;
            }
        }
        // v4.4/v4.5 kswapd_shrink_zone(): a zone where compaction_suitable() is not
        // COMPACT_SKIPPED is tested at order 0 (`testorder`), and skipped while
        // `zone_balanced(zone, testorder, balance_gap, ...)`: free pages above `high +
        // balance_gap` (balance_gap = min(low, 1% of the zone)). At the true order
        // zone_balanced() also requires compaction not to be SKIPPED, which it is there, so
        // such a zone is always reclaimed.
        let skip_reclaim = old_kswapd
            && sc.order > 0
            && boost == 0
            && (0..self.zones.len()).all(|zi| {
                let z = &self.zones[zi];
                self.compaction_suitable_v4_6(zi, sc.order)
                    && z.watermark_ok(0, z.wmark_pages(Wmark::High) + z.balance_gap())
            });
        // v4.4 balance_pgdat(): `pgdat_needs_compaction` starts true for order > 0 and is
        // cleared when a zone already meets the order's low watermark.
        let needs_compaction = old_kswapd
            && sc.order > 0
            && !self.zones.iter().any(|z| {
                z.watermark_ok(sc.order, z.wmark_pages(Wmark::Low) + (1u64 << sc.order) - 1)
            });
        // v4.6–v4.7 kswapd_shrink_zone(): a zone is not reclaimed while it is balanced with
        // the gap, `zone_balanced(zone, sc->order, false, balance_gap, ...)`: order-0 free
        // pages above `high + balance_gap + (1 << order)`, where balance_gap is
        // `min(low_wmark_pages(zone), DIV_ROUND_UP(managed, KSWAPD_ZONE_BALANCE_GAP_RATIO))`
        // (the gap and its ratio were removed in v4.8 with the zone-based balancing).
        let skip_reclaim = skip_reclaim
            || (v46
                && sc.order > 0
                && boost == 0
                && self.zones.iter().all(|z| {
                    let high = z.wmark_pages(Wmark::High);
                    z.watermark_ok(0, high + z.balance_gap() + (1u64 << sc.order))
                }));
        if skip_reclaim {
            // kswapd_shrink_zone() returned true for every zone: the priority is not raised
            // for a low scanning rate (it still drops when the pass reclaimed nothing).
            raise = false;
        }
        self.kswapd_age_node(ctx, &mut sc);
        if sc.priority < DEF_PRIORITY - 2 {
            sc.may_writepage = true;
        }
        sc.nr_scanned = 0;
        // kswapd_shrink_node()
        sc.nr_to_reclaim = self
            .zones
            .iter()
            .filter(|z| z.zone_type <= sc.reclaim_idx)
            .map(|z| z.wmark_pages(Wmark::High).max(SWAP_CLUSTER_MAX))
            .sum();
        let before = sc.nr_reclaimed;
        let mut attempted = 0;
        if !skip_reclaim {
            if old_kswapd {
                attempted = sc.nr_to_reclaim;
                self.kswapd.nr_attempted += sc.nr_to_reclaim;
            }
            let slabs = self.ev.get(Ev::SlabsScanned);
            let steals = self.ev.get(Ev::KswapdInodesteal);
            self.shrink_node(ctx, &mut sc);
            let st = &mut self.kswapd.boost_stats;
            let (slabs, steals) = (
                self.ev.get(Ev::SlabsScanned) - slabs,
                self.ev.get(Ev::KswapdInodesteal) - steals,
            );
            let got = sc.nr_reclaimed - before;
            if boost > 0 {
                st.boosted_passes += 1;
                st.reclaimed_boosted += got;
                st.slabs_scanned_boosted += slabs;
                st.inodesteal_boosted += steals;
            } else {
                st.normal_passes += 1;
                st.reclaimed_normal += got;
                st.slabs_scanned_normal += slabs;
                st.inodesteal_normal += steals;
            }
            if sc.nr_scanned.max(sc.nr_reclaimed - before) >= sc.nr_to_reclaim {
                raise = false;
            }
        }
        let progress = sc.nr_reclaimed - before;
        if old_kswapd {
            // v4.4 balance_pgdat(), per pass of its loop (sc.nr_reclaimed and nr_attempted
            // are reset at each pass): drop to order 0 after compact_gap(order), then
            // compact_pgdat() (which returns at once for order 0).
            let (order, compact) =
                kswapd_v4_4_after_pass(sc.order, progress, attempted, needs_compaction);
            sc.order = order;
            if compact {
                self.compact_pgdat(ctx, sc.order);
            }
        } else if sc.order > 0
            && sc.nr_reclaimed >= 2 << sc.order
            && self.cfg.kernel.kswapd_drops_order_after_compact_gap()
        {
            // kswapd_shrink_node() (v4.8+): after compact_gap(order) pages, recheck at
            // order 0. Not in v4.6–v4.7 with kcompactd.
            sc.order = 0;
        }
        self.kswapd.nr_boost_reclaim -= self.kswapd.nr_boost_reclaim.min(progress);
        if self.kswapd.nr_boost_reclaim > 0 && progress == 0 {
            return self.kswapd_finish(ctx, sc);
        }
        if raise || progress == 0 {
            sc.priority -= 1;
        }
        let throttle = sc.nr.immediate > 0;
        if sc.priority < 1 {
            // v6.10+: a full priority loop that reclaimed nothing while cache-trim mode
            // failed runs once more with cache-trim mode off.
            if sc.nr_reclaimed == 0
                && !sc.no_cache_trim_mode
                && sc.cache_trim_mode_failed
                && self.cfg.kernel.kswapd_retries_without_cache_trim()
            {
                sc.no_cache_trim_mode = true;
                sc.priority = DEF_PRIORITY;
                self.kswapd.sc = Some(sc);
                return KswapdNext::Continue;
            }
            return self.kswapd_finish(ctx, sc);
        }
        self.kswapd.sc = Some(sc);
        if throttle {
            // reclaim_throttle(pgdat, VMSCAN_THROTTLE_WRITEBACK)
            let until = self.reclaim_throttle_wake(ctx.now);
            return KswapdNext::Throttle(until);
        }
        KswapdNext::Continue
    }

    fn kswapd_finish(&mut self, ctx: &mut Ctx, sc: ScanControl) -> KswapdNext {
        let old_kswapd = self.cfg.kswapd_compaction == KswapdCompaction::Kswapd;
        // "mm: vmscan: allow kswapd to give up" (v4.12): before it no run counts as a failure
        // (`KernelVersion::kswapd_gives_up`).
        if sc.nr_reclaimed == 0
            && !(old_kswapd && self.kswapd.nr_attempted == 0)
            && self.cfg.kernel.kswapd_gives_up()
        {
            self.node.kswapd_failures += 1;
        }
        // out: drop the boosts this run saw; wake kcompactd to defragment for them.
        let boosts = std::mem::take(&mut self.kswapd.zone_boosts);
        if boosts.iter().any(|&b| b > 0) {
            for (z, b) in self.zones.iter_mut().zip(boosts) {
                z.watermark_boost -= z.watermark_boost.min(b);
            }
            if !old_kswapd {
                self.wakeup_kcompactd(crate::mmzone::PAGEBLOCK_ORDER);
            }
        }
        let _ = ctx;
        if self.node.kswapd_failures >= MAX_RECLAIM_RETRIES
            || self.kswapd_balanced_idx(sc.order, sc.reclaim_idx)
        {
            // kswapd_try_to_sleep(): reset_isolation_suitable() + (v4.5+) wakeup_kcompactd().
            // The reset of the skip bits a direct compaction asked for by scanning a whole
            // zone (compact_blockskip_flush) is as old as the skip bits (v3.7): the pre-v4.5
            // kswapd does it too, when it goes fully to sleep (after its HZ/10 nap, which
            // the model does not separate from the sleep).
            for zi in 0..self.zones.len() {
                if self.zones[zi].compact.blockskip_flush {
                    self.reset_isolation_suitable(zi);
                }
            }
            if !old_kswapd {
                self.wakeup_kcompactd(self.kswapd.alloc_order);
            }
        }
        if self.pgdat_balanced(0) {
            // clear_pgdat_congested()
            self.node.pgdat_writeback = false;
            self.node.pgdat_dirty = false;
            self.node.lruvec_node_congested = false;
        }
        let v = &mut self.lruvecs[0];
        v.refaults = v.workingset_activate;
        // out: clear_reclaim_active().
        for z in &mut self.zones {
            z.reclaim_active = false;
        }
        self.kswapd.running = false;
        KswapdNext::Done
    }

    /// Test hook: mark the running balance_pgdat()'s scan_control as having failed in
    /// cache-trim mode.
    #[cfg(test)]
    pub(crate) fn kswapd_mark_cache_trim_failed(&mut self) {
        if let Some(sc) = self.kswapd.sc.as_mut() {
            sc.cache_trim_mode_failed = true;
        }
    }

    /// Test hook: the running balance_pgdat()'s order and pages reclaimed so far.
    #[cfg(test)]
    pub(crate) fn kswapd_sc_order_reclaimed(&self) -> Option<(u32, u64)> {
        self.kswapd
            .sc
            .as_ref()
            .map(|sc| (sc.order, sc.nr_reclaimed))
    }

    /// `prepare_kswapd_sleep()`: may kswapd go to sleep?
    pub fn kswapd_may_sleep(&self) -> bool {
        let idx = self
            .kswapd
            .highest_zoneidx
            .or(self.kswapd.last_zoneidx)
            .unwrap_or(self.top_zone_idx());
        self.node.kswapd_failures >= MAX_RECLAIM_RETRIES
            || self.kswapd_balanced_idx(self.kswapd.order, idx)
    }
}

#[cfg(test)]
mod v4_4_tests {
    use super::kswapd_v4_4_after_pass;

    /// v4.4 balance_pgdat()'s order drop and compaction test, by hand, for order 9
    /// (compact_gap 1024) and seed S4's zone (high watermark 8,448 pages, so a pass that
    /// reclaims attempts 8,448).
    #[test]
    fn kswapd_v4_4_compacts_only_between_attempted_and_compact_gap() {
        // Reclaimed more than attempted, but >= 1024: order 0 first, no compaction.
        assert_eq!(kswapd_v4_4_after_pass(9, 9000, 8448, true), (0, false));
        // Reclaimed 1023 of 8448 attempted: order kept, 1023 > 8448 false.
        assert_eq!(kswapd_v4_4_after_pass(9, 1023, 8448, true), (9, false));
        // A small zone (high 500): 600 > 500 and < 1024: compact at order 9.
        assert_eq!(kswapd_v4_4_after_pass(9, 600, 500, true), (9, true));
        // ... unless a zone already meets the order's low watermark.
        assert_eq!(kswapd_v4_4_after_pass(9, 600, 500, false), (9, false));
        // Skipped pass (nothing attempted, nothing reclaimed): 0 > 0 is false (the seed's
        // instrumentation: ">= as the comment suggests").
        assert_eq!(kswapd_v4_4_after_pass(9, 0, 0, true), (9, false));
        // Order 0 never compacts.
        assert_eq!(kswapd_v4_4_after_pass(0, 600, 500, true), (0, false));
    }
}
