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
//! # Where we differ from the kernel (v6.18)
//! - No per-CPU charge stock (`MEMCG_CHARGE_BATCH`): charges are exact, so limit reclaim
//!   starts exactly at `memory.max` rather than up to 64 pages per CPU earlier.
//! - No memory.high, memory.low/min protection, or memsw (swap) limit.
//! - A memcg OOM kills the charging task only (no victim selection among the cgroup's tasks).
//!
//! # Kernel references
//! mm/memcontrol.c `try_charge_memcg()`, `mem_cgroup_swappiness()`;
//! mm/vmscan.c `try_to_free_mem_cgroup_pages()`.

use crate::types::*;
use crate::{Ctx, Mm};

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
    /// make progress because folios are under writeback sleeps until writeback completes
    /// (at most HZ/10). The caller's clock moves to that time and the completions run.
    pub(crate) fn reclaim_throttle_writeback(&mut self, ctx: &mut Ctx) {
        if let Some(t) = self.next_completion() {
            let until = t.min(ctx.now + HZ_NS / 10).max(ctx.now);
            ctx.wait(until);
            ctx.now = until;
            self.run_completions(until);
        }
    }

    pub fn uncharge(&mut self, memcg: u16, nr: u64) {
        self.memcgs[memcg as usize].usage -= nr;
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
