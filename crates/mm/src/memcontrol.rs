//! Memory cgroups as reclaim sees them: charging folios against `memory.max` and reclaiming
//! the cgroup when a charge would exceed it.
//!
//! # In this model
//! Memcg 0 is the root (unlimited); children 1.. are its direct children, each with its own
//! lruvec. A new folio is charged to the memcg of the task that faults it in, as the kernel
//! charges the first toucher. Over the limit, `try_charge_memcg()` runs limit reclaim
//! (`try_to_free_mem_cgroup_pages()`) and retries, up to `MAX_RECLAIM_RETRIES` times without
//! progress, then declares a memcg OOM.
//!
//! ## Statistics are read as of the last flush
//! The memcg statistics are per-CPU deltas that rstat folds into the readable counters only
//! when flushed. `lruvec_page_state()` on a memcg lruvec returns the flushed value. The
//! periodic flusher (`flush_memcg_stats_dwork()`) flushes every FLUSH_TIME (2 s); the reclaim
//! and refault paths only call `mem_cgroup_flush_stats_ratelimited()`, which flushes when the
//! periodic flusher is a full cycle late (never, on a machine whose workqueues run). So what
//! `prepare_scan_control()` (`WORKINGSET_ACTIVATE_*` against `lruvec->refaults[]`,
//! `inactive_is_low()`, the inactive file size of cache-trim mode), `snapshot_refaults()`,
//! `shrink_lruvec()`'s anon aging and `workingset_test_recent()` (the workingset size) see
//! can be up to 2 s old. With `memcg_stats_flush_ns` > 0 the model keeps that flushed copy
//! per lruvec ([`Mm::memcg_flush_stats`]) and those readers use it
//! ([`Mm::lruvec_page_state`], [`Mm::lruvec_activate_state`]); the list sizes
//! `get_scan_count()` scans by stay exact, as the kernel's `mem_cgroup_get_zone_lru_size()`.
//! The kernel's flusher runs at a phase unrelated to the workload; the model puts the first
//! flush at `memcg_stats_first_flush_ns` (by default half a period: the expected delay to a
//! uniformly placed flush) and then one every period. The outcome is not linear in the phase
//! (a flush just before or just after limit reclaim starts decides whether cache-trim mode
//! or the inactive:active test sees zeros for up to 2 s), so `refault twin` compares the
//! kernel's mean over runs with the simulation's mean over phases spread across the period.
//!
//! # Where we differ from the kernel (v6.18)
//! - No per-CPU charge stock (`MEMCG_CHARGE_BATCH`): charges are exact, so limit reclaim
//!   starts exactly at `memory.max` rather than up to 64 pages per CPU earlier.
//! - No memory.high, memory.low/min protection, or memsw (swap) limit.
//! - A memcg OOM kills the charging task only (no victim selection among the cgroup's tasks).
//!
//! # Kernel references
//! mm/memcontrol.c `try_charge_memcg()`, `mem_cgroup_swappiness()`, `flush_memcg_stats_dwork()`,
//! `mem_cgroup_flush_stats_ratelimited()`, `lruvec_page_state()`;
//! mm/vmscan.c `try_to_free_mem_cgroup_pages()`.

use crate::types::*;
use crate::{Ctx, Mm};

/// Time of the first periodic memcg stats flush for a flush period (u64::MAX when off).
pub fn first_stats_flush(period_ns: u64, first_ns: u64) -> u64 {
    if period_ns == 0 {
        u64::MAX
    } else {
        first_ns
    }
}

impl Mm {
    /// Kernel: `try_charge_memcg()`. Returns false when the memcg is OOM.
    pub fn try_charge(&mut self, ctx: &mut Ctx, memcg: u16, nr: u64) -> bool {
        let m = memcg as usize;
        if m == 0 {
            self.memcgs[0].usage += nr;
            return true;
        }
        let mut retries = MAX_RECLAIM_RETRIES;
        loop {
            let mc = &mut self.memcgs[m];
            if mc.usage + nr <= mc.max_pages {
                mc.usage += nr;
                return true;
            }
            mc.events.max_events += 1;
            let reclaimed = self.try_to_free_mem_cgroup_pages(ctx, m, nr);
            if reclaimed == 0 {
                // Nothing freeable right now but folios under writeback: wait for the next
                // completion, as reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK) does.
                self.reclaim_throttle_writeback(ctx);
            }
            let mc = &self.memcgs[m];
            if mc.usage + nr <= mc.max_pages {
                continue;
            }
            // Small charges keep trying while reclaim makes progress.
            if reclaimed > 0 && nr <= 1 << PAGE_ALLOC_COSTLY_ORDER {
                continue;
            }
            retries -= 1;
            if retries == 0 {
                self.memcgs[m].events.oom_kill += 1;
                self.ev.add(crate::vmstat::Ev::OomKill, 1);
                return false;
            }
        }
    }

    /// Kernel: `reclaim_throttle(pgdat, VMSCAN_THROTTLE_WRITEBACK)`: a reclaimer that could not
    /// make progress because folios are under writeback sleeps until writeback of
    /// `SWAP_CLUSTER_MAX` pages per throttled reclaimer has completed, at most HZ/10
    /// ([`Mm::reclaim_throttle_wake`]). The caller's clock moves to that time and the
    /// completions run. With no writeback in flight it does not sleep: the kernel's throttles
    /// of a reclaimer without progress (`consider_reclaim_throttle()`) skip the sleep when
    /// few pages are write-pending (`skip_throttle_noprogress()`), and nothing in the model
    /// could change while it slept.
    pub(crate) fn reclaim_throttle_writeback(&mut self, ctx: &mut Ctx) {
        if self.next_completion().is_some() {
            let until = self.reclaim_throttle_wake(ctx.now);
            ctx.wait(until);
            ctx.now = until;
            self.run_completions(until);
        }
    }

    pub fn uncharge(&mut self, memcg: u16, nr: u64) {
        self.memcgs[memcg as usize].usage -= nr;
    }

    /// Kernel: `flush_memcg_stats_dwork()`: if the periodic flush is due at `now`, copy the
    /// current hierarchical list sizes and activation counts of every lruvec into their
    /// flushed copies. The engine calls it before every step (and ends a task's run of events
    /// at the due time, [`Mm::memcg_stats_flush_due`]).
    pub fn memcg_flush_stats(&mut self, now: u64) {
        if now < self.memcg_stats_next_flush {
            return;
        }
        for lv in 0..self.lruvecs.len() {
            let mut lru = [0; 4];
            for (i, l) in EVICTABLE_LRUS.iter().enumerate() {
                lru[i] = self.lruvec_hier(lv, *l);
            }
            let v = &mut self.lruvecs[lv];
            v.flushed_lru = lru;
            v.flushed_activate = v.workingset_activate;
        }
        let p = self.cfg.memcg_stats_flush_ns;
        let first = first_stats_flush(p, self.cfg.memcg_stats_first_flush_ns);
        self.memcg_stats_next_flush = first + ((now - first) / p + 1) * p;
    }

    /// When the next periodic memcg stats flush is due (u64::MAX when off).
    pub fn memcg_stats_flush_due(&self) -> u64 {
        self.memcg_stats_next_flush
    }

    /// Kernel: `lruvec_page_state(lruvec, NR_LRU_BASE + lru)` for an evictable list: the
    /// hierarchical size as of the last flush (the exact size when flushing is not modelled).
    pub fn lruvec_page_state(&self, lv: usize, lru: LruList) -> u64 {
        if self.cfg.memcg_stats_flush_ns == 0 {
            self.lruvec_hier(lv, lru)
        } else {
            self.lruvecs[lv].flushed_lru[lru.idx()]
        }
    }

    /// Kernel: `lruvec_page_state(lruvec, WORKINGSET_ACTIVATE_BASE + type)`, as of the last
    /// flush (exact when flushing is not modelled).
    pub fn lruvec_activate_state(&self, lv: usize, file: bool) -> u64 {
        let v = &self.lruvecs[lv];
        if self.cfg.memcg_stats_flush_ns == 0 {
            v.workingset_activate[file as usize]
        } else {
            v.flushed_activate[file as usize]
        }
    }

    /// Kernel: `mem_cgroup_swappiness()`: on cgroup v1 the memcg's own memory.swappiness if
    /// set, else vm.swappiness (always vm.swappiness for the root); on the default hierarchy
    /// (v2) always vm.swappiness.
    pub fn memcg_swappiness(&self, memcg: usize) -> u64 {
        if memcg == 0 || !self.cfg.cgroup_v1 {
            return self.cfg.swappiness;
        }
        self.memcgs[memcg].swappiness.unwrap_or(self.cfg.swappiness)
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::*;
    use crate::*;

    /// The flushed copy changes only at the flush times: half a period in, then every period.
    #[test]
    fn lruvec_stats_are_read_as_of_the_last_flush() {
        let mut cfg = tiny_config(BalanceKind::RefaultCost, 1024);
        cfg.memcg_stats_flush_ns = 2_000;
        cfg.memcg_stats_first_flush_ns = 1_000;
        cfg.readahead_max_pages = 0; // one order-0 folio per read
        let mut mm = Mm::new(cfg);
        assert_eq!(mm.memcg_stats_flush_due(), 1_000);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..3 {
            mm.file_read(&mut ctx, 1, p, 1);
        }
        let exact = mm.lruvec_hier(0, LruList::InactiveFile);
        assert_eq!(exact, 3);
        // Before the first flush the statistics are those of the empty lruvec.
        mm.memcg_flush_stats(999);
        assert_eq!(mm.lruvec_page_state(0, LruList::InactiveFile), 0);
        mm.memcg_flush_stats(1_000);
        assert_eq!(mm.lruvec_page_state(0, LruList::InactiveFile), 3);
        assert_eq!(mm.memcg_stats_flush_due(), 3_000);
        mm.file_read(&mut ctx, 1, 3, 1);
        mm.memcg_flush_stats(2_999);
        assert_eq!(mm.lruvec_page_state(0, LruList::InactiveFile), 3);
        // A late caller catches up to the next point of the period grid.
        mm.memcg_flush_stats(7_500);
        assert_eq!(mm.lruvec_page_state(0, LruList::InactiveFile), 4);
        assert_eq!(mm.memcg_stats_flush_due(), 9_000);
    }
}
