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
//! - Watermark boosting is inert (no fragmentation events yet), so boosted reclaim paths are
//!   not exercised; kcompactd is not woken.
//! - `reclaim_throttle(WRITEBACK)` when kswapd meets folios it marked for immediate reclaim
//!   becomes a sleep until the next IO completion, at most HZ/10.
//!
//! # Kernel references
//! mm/vmscan.c `kswapd()`, `kswapd_try_to_sleep()`, `prepare_kswapd_sleep()`,
//! `balance_pgdat()`, `kswapd_shrink_node()`, `kswapd_age_node()`, `pgdat_balanced()`.

use crate::mmzone::Wmark;
use crate::types::*;
use crate::vmscan::ScanControl;
use crate::vmstat::Ev;
use crate::{Ctx, Mm};

#[derive(Default)]
pub struct Kswapd {
    /// An allocation asked kswapd to run (`wakeup_kswapd()`).
    pub wake_pending: bool,
    /// `pgdat->kswapd_order`.
    pub order: u32,
    /// A balance_pgdat() run is in progress.
    pub running: bool,
    sc: Option<ScanControl>,
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
            sc.may_writepage = !self.cfg.laptop_mode;
            self.kswapd.sc = Some(sc);
        }
        let mut sc = self.kswapd.sc.take().expect("kswapd scan_control");
        if self.pgdat_balanced(sc.order) {
            return self.kswapd_finish(sc);
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
            .map(|z| z.wmark_pages(Wmark::High).max(SWAP_CLUSTER_MAX))
            .sum();
        let before = sc.nr_reclaimed;
        self.shrink_node(ctx, &mut sc);
        if sc.order > 0 && sc.nr_reclaimed >= 2 << sc.order {
            sc.order = 0;
        }
        let progress = sc.nr_reclaimed - before;
        let raise = sc.nr_scanned.max(progress) < sc.nr_to_reclaim;
        if raise || progress == 0 {
            sc.priority -= 1;
        }
        let throttle = sc.nr.immediate > 0;
        if sc.priority < 1 {
            return self.kswapd_finish(sc);
        }
        self.kswapd.sc = Some(sc);
        if throttle {
            let until = self
                .next_completion()
                .unwrap_or(ctx.now)
                .min(ctx.now + HZ_NS / 10);
            return KswapdNext::Throttle(until);
        }
        KswapdNext::Continue
    }

    fn kswapd_finish(&mut self, sc: ScanControl) -> KswapdNext {
        if sc.nr_reclaimed == 0 {
            self.node.kswapd_failures += 1;
        }
        if self.pgdat_balanced(0) {
            // clear_pgdat_congested()
            self.node.pgdat_writeback = false;
            self.node.pgdat_dirty = false;
        }
        let v = &mut self.lruvecs[0];
        v.refaults = v.workingset_activate;
        self.kswapd.running = false;
        KswapdNext::Done
    }

    /// `prepare_kswapd_sleep()`: may kswapd go to sleep?
    pub fn kswapd_may_sleep(&self) -> bool {
        self.node.kswapd_failures >= MAX_RECLAIM_RETRIES || self.pgdat_balanced(self.kswapd.order)
    }
}
