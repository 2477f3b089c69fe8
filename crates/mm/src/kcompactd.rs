//! kcompactd: the per-node compaction thread (v4.5+), as a step the simulator schedules.
//!
//! # The idea
//! kswapd reclaims to the order-0 high watermark; making high-order blocks is kcompactd's
//! job. kswapd wakes it when it goes to sleep, with the order and zone it was woken for; an
//! allocation that cannot reclaim wakes it directly when only fragmentation stands in the
//! way; after boosted reclaim kswapd wakes it for pageblock order. Every 500 ms it also checks
//! the node's fragmentation score and compacts proactively (`vm.compaction_proactiveness`).
//!
//! # In this model
//! `wakeup_kcompactd()` records the order and sets `wake_pending` when some zone is suitable
//! (`kcompactd_node_suitable()`); the simulator runs `kcompactd_do_work()` as one step of the
//! kcompactd thread, charging it the compaction's CPU time, and calls
//! `kcompactd_proactive()` when the thread's 500 ms timer expires. Under
//! `policy.kswapd_compaction = "kswapd"` there is no kcompactd (v4.4): wakeups are ignored.
//!
//! # Where we differ from the kernel (v6.18)
//! - The zone index is not tracked (every zone of the node is eligible).
//! - No `drain_all_pages()` (no per-CPU lists in the model).
//!
//! # Kernel references
//! mm/compaction.c `wakeup_kcompactd()`, `kcompactd_node_suitable()`, `kcompactd()`,
//! `kcompactd_do_work()`, `should_proactive_compact_node()`, `proactive_compact_node()`.

use crate::compaction::{proactive_wmarks, CompactControl, CompactResult, Compactor, MigrateMode};
use crate::mmzone::Wmark;
use crate::vmstat::Ev;
use crate::{Ctx, KswapdCompaction, Mm};

#[derive(Default)]
pub struct Kcompactd {
    /// Someone woke kcompactd (`wake_up_interruptible(&pgdat->kcompactd_wait)`).
    pub wake_pending: bool,
    /// `pgdat->kcompactd_max_order`.
    pub max_order: u32,
}

/// Kernel: `HPAGE_FRAG_CHECK_INTERVAL_MSEC` in ns.
pub const FRAG_CHECK_INTERVAL_NS: u64 = 500_000_000;

impl Mm {
    /// Kernel: `wakeup_kcompactd()`.
    pub fn wakeup_kcompactd(&mut self, order: u32) {
        if order == 0 || self.cfg.kswapd_compaction == KswapdCompaction::Kswapd {
            return;
        }
        self.kcompactd.max_order = self.kcompactd.max_order.max(order);
        if self.kcompactd_node_suitable() {
            self.kcompactd.wake_pending = true;
        }
    }

    /// Test hook: `kcompactd_node_suitable()` for `order`.
    #[cfg(test)]
    pub(crate) fn kcompactd_node_suitable_for(&self, order: u32) -> bool {
        (0..self.zones.len()).any(|zi| {
            self.compaction_suit_allocation_order(zi, order, Wmark::Min) == CompactResult::Continue
        })
    }

    /// Kernel: `kcompactd_node_suitable()`.
    fn kcompactd_node_suitable(&self) -> bool {
        (0..self.zones.len()).any(|zi| {
            self.compaction_suit_allocation_order(zi, self.kcompactd.max_order, Wmark::Min)
                == CompactResult::Continue
        })
    }

    /// Kernel: `kcompactd_do_work()`: compact each suitable, non-deferred zone for the
    /// recorded order (sync-light, honouring skip bits).
    pub fn kcompactd_do_work(&mut self, ctx: &mut Ctx) {
        self.kcompactd.wake_pending = false;
        let order = std::mem::take(&mut self.kcompactd.max_order);
        self.ev.add(Ev::KcompactdWake, 1);
        if order == 0 {
            return;
        }
        for zi in 0..self.zones.len() {
            if self.zones[zi].compact.compaction_deferred(order) {
                continue;
            }
            if self.compaction_suit_allocation_order(zi, order, Wmark::Min)
                != CompactResult::Continue
            {
                continue;
            }
            let mut cc = CompactControl::new(
                zi,
                order as i32,
                MigrateMode::SyncLight,
                Compactor::Kcompactd,
            );
            // v4.6–v4.14 kcompactd ignored the skip bits (`KernelVersion::kcompactd_honours_skip_hint`).
            cc.ignore_skip_hint = !self.cfg.kernel.kcompactd_honours_skip_hint();
            let status = self.compact_zone(ctx, &mut cc);
            if status == CompactResult::Success {
                self.zones[zi].compact.defer_reset(order, false);
            } else if matches!(
                status,
                CompactResult::PartialSkipped | CompactResult::Complete
            ) {
                self.zones[zi].compact.defer_compaction(order);
            }
        }
    }

    /// Kernel: `should_proactive_compact_node()`.
    pub fn should_proactive_compact_node(&self) -> bool {
        let p = self.cfg.compaction_proactiveness;
        if p == 0
            || self.kswapd.running
            || self.cfg.kswapd_compaction == KswapdCompaction::Kswapd
            || !self.cfg.kernel.proactive_compaction()
        {
            return false;
        }
        self.fragmentation_score_node() > proactive_wmarks(p).1
    }

    /// The timer branch of `kcompactd()`: proactive compaction when the score is above the
    /// high mark. Returns the next timeout in ns (None = no timer, proactiveness 0).
    pub fn kcompactd_proactive(&mut self, ctx: &mut Ctx) -> Option<u64> {
        if self.cfg.compaction_proactiveness == 0
            || self.cfg.kswapd_compaction == KswapdCompaction::Kswapd
            || !self.cfg.kernel.proactive_compaction()
        {
            return None;
        }
        if !self.should_proactive_compact_node() {
            return Some(FRAG_CHECK_INTERVAL_NS);
        }
        let prev = self.fragmentation_score_node();
        self.compact_node(ctx, Compactor::Kcompactd, true);
        let score = self.fragmentation_score_node();
        Some(if score >= prev {
            FRAG_CHECK_INTERVAL_NS << crate::compaction::COMPACT_MAX_DEFER_SHIFT
        } else {
            FRAG_CHECK_INTERVAL_NS
        })
    }
}
