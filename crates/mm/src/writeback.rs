//! Dirty-page throttling: the dirty limits, `balance_dirty_pages()` and the write-bandwidth
//! estimate it runs on (mm/page-writeback.c, v6.18).
//!
//! # The problem
//! A task can dirty page cache far faster than a disk can write it. Left alone, dirty pages
//! would fill memory, and reclaim, which must not wait for IO, would find nothing clean to
//! free. The kernel therefore caps the dirty (and under-writeback) pages at a fraction of the
//! memory that could hold page cache, starts the flusher well below that cap, and slows every
//! writer down to the rate the device drains, so the dirty pool hovers at a set point instead
//! of bouncing off the cap.
//!
//! # The idea
//! *Dirtyable memory* (`global_dirtyable_memory()`) is free memory above the kernel's
//! reserves plus the file LRU. `vm.dirty_ratio` (or `vm.dirty_bytes`) of it is `thresh`,
//! `vm.dirty_background_ratio` (or `_bytes`) is `bg_thresh` (`domain_dirty_limits()`). A
//! writer that finds the dirty + writeback pages at or below the *freerun ceiling*
//! `(thresh + bg_thresh) / 2` is not throttled at all. Above it, the writer is paused after
//! every `nr_dirtied_pause` pages it dirties, long enough that it dirties at
//! `task_ratelimit = dirty_ratelimit * pos_ratio` pages per second:
//!
//! ```text
//!  pos_ratio  (wb_position_ratio(), global control line, 1.0 = 1 << RATELIMIT_CALC_SHIFT)
//!   2.0 *
//!       |   *
//!   1.0 +- - - - -*                        f(dirty) = 1 + ((setpoint - dirty) / (limit - setpoint))^3
//!       |         |      *
//!     0 +---------+--------------*---->    setpoint = (freerun + limit) / 2
//!    freerun  setpoint         limit       limit    = max(thresh, the domain's dirty_limit)
//! ```
//!
//! `dirty_ratelimit` is the wb's estimate of the rate one writer may dirty at
//! (`wb_update_dirty_ratelimit()`): every 200 ms it moves toward
//! `task_ratelimit * write_bw / dirty_rate`, which is the device's write bandwidth divided by
//! the number of writers; `write_bw` itself is estimated from the pages whose writeback
//! completed (`wb_update_write_bandwidth()`). The pause for `pages_dirtied` pages is
//! `HZ * pages_dirtied / task_ratelimit` jiffies, less the time since the previous pause,
//! clamped to `[min_pause, max_pause]` (`wb_min_pause()`, `wb_max_pause()`, at most 200 ms).
//! In equilibrium the writers together dirty exactly what the device writes, with the dirty
//! pool at the set point.
//!
//! # In this model
//! [`Wb`] is the filesystem device's `bdi_writeback` (its stamps, bandwidth and rate-limit
//! estimates, WB_DIRTIED / WB_WRITTEN / WB_WRITEBACK) together with the global
//! `wb_domain`'s `dirty_limit`; [`TaskDirty`] is the task's `nr_dirtied`,
//! `nr_dirtied_pause` and `dirty_paused_when`, plus the time it spent paused. Time is counted
//! in jiffies of [`HZ`] = 1000, as a `CONFIG_HZ=1000` kernel does; the integer arithmetic of
//! the kernel's functions (including its rounding) is kept so the formula tests below can
//! be checked by hand. A pause is the task's `wait_until` (the engine runs other threads
//! meanwhile); its length goes to [`TaskDirty::throttle_ns`].
//!
//! # Where we differ from the kernel (v6.18)
//! - One wb (the filesystem device) and one wb domain: its share of the limits
//!   (`__wb_calc_thresh()`, a floating proportion of writeback completions among wbs) is the
//!   whole limit once any writeback has completed, 0 before (the kernel's proportion with no
//!   events); `bdi min_ratio/max_ratio` are 0/100, no strictlimit, no `PF_LOCAL_THROTTLE`,
//!   no real-time tasks (their limits are not raised by a quarter).
//! - No cgroup writeback domains: the model has no per-memcg wb, so memcg dirty limits
//!   (`mdtc`, `mdtc_calc_avail()`) do not exist; every writer is throttled by the global
//!   domain only.
//! - `balance_dirty_pages_ratelimited()`: the per-CPU `bdp_ratelimits` safety net and the
//!   `dirty_throttle_leaks` of exited tasks are not modelled; a task enters
//!   `balance_dirty_pages()` when its own `nr_dirtied` reaches `nr_dirtied_pause` (8 when
//!   the wb's `dirty_exceeded` is set), checked once per write operation rather than once per
//!   page: a write op of many pages counts them all and pays one pause for all of them.
//! - The kernel loops in `balance_dirty_pages()` while `task_ratelimit` is 0 (dirty pages at
//!   or above the hard limit): it sleeps `max_pause` and looks again before dirtying more.
//!   Here the task sleeps `max_pause` and its next dirtying operation (`nr_dirtied_pause` is
//!   then 0, so it comes straight back) does the next check; a task above the limit thus
//!   dirties one more operation's worth of pages per `max_pause` instead of none.
//! - The bandwidth is updated from `balance_dirty_pages()` and from the flusher's writeback
//!   (`do_writepages()`, `wb_bandwidth_estimate_start()`); the delayed update the kernel
//!   queues when the last inode finishes writeback (`wb->bw_dwork`) is not modelled.
//! - `totalreserve_pages` is the sum over zones of the high watermark (capped at the zone's
//!   managed pages): the model has no `lowmem_reserve`; highmem does not exist.

use crate::types::*;
use crate::{Ctx, Mm};

/// Jiffies per second for `balance_dirty_pages()`'s arithmetic (`CONFIG_HZ=1000`).
pub const HZ: u64 = 1000;
/// Nanoseconds per jiffy.
pub const JIFFY_NS: u64 = HZ_NS / HZ;
/// Kernel: `MAX_PAUSE`, the longest sleep in one `balance_dirty_pages()` call (HZ/5).
pub const MAX_PAUSE: u64 = HZ / 5;
/// Kernel: `DIRTY_POLL_THRESH` (128 KiB in pages).
pub const DIRTY_POLL_THRESH: u64 = 128 >> (PAGE_SHIFT - 10);
/// Kernel: `BANDWIDTH_INTERVAL` (HZ/5): how often the bandwidth and rate limit are updated.
pub const BANDWIDTH_INTERVAL: u64 = HZ / 5;
/// Kernel: `RATELIMIT_CALC_SHIFT`: `pos_ratio` is a fixed-point number with this many bits.
pub const RATELIMIT_CALC_SHIFT: u32 = 10;
/// Kernel: `INIT_BW` (100 MB/s, in pages per second): the initial bandwidth and rate limit.
pub const INIT_BW: u64 = 100 << (20 - PAGE_SHIFT);
/// Kernel: `WB_BANDWIDTH_IDLE_JIF`: a wb idle this long restarts its bandwidth estimate.
pub const WB_BANDWIDTH_IDLE_JIF: u64 = HZ;
/// Kernel: the initial `current->nr_dirtied_pause` (`copy_process()`: 128 KiB in pages).
pub const INIT_NR_DIRTIED_PAUSE: u64 = 128 >> (PAGE_SHIFT - 10);
const PAGE_SHIFT: u32 = 12;
const PAGE_SIZE: u64 = 1 << PAGE_SHIFT;

/// Which form of a dirty limit the scenario set (`vm.dirty_ratio` / `vm.dirty_bytes`; the
/// kernel zeroes one when the other is written, and the bytes form wins when non-zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtyKnobs {
    /// `vm.dirty_ratio`, percent.
    pub ratio: u64,
    /// `vm.dirty_background_ratio`, percent.
    pub bg_ratio: u64,
    /// `vm.dirty_bytes` (0 = use the ratio).
    pub bytes: u64,
    /// `vm.dirty_background_bytes` (0 = use the ratio).
    pub bg_bytes: u64,
}

/// Kernel: `global_dirtyable_memory()`: free pages above `totalreserve_pages` plus the file
/// LRU, plus one so it is never 0.
pub fn global_dirtyable_memory(free: u64, totalreserve: u64, file_lru: u64) -> u64 {
    free - free.min(totalreserve) + file_lru + 1
}

/// Kernel: `domain_dirty_limits()` for the global domain and a task that is not real-time:
/// `(bg_thresh, thresh)` in pages. The ratios are first converted to parts per PAGE_SIZE
/// (`ratio * PAGE_SIZE / 100`, rounded down: 20 % is 819/4096), the byte forms are rounded
/// up to pages; `thresh` is capped at `u32::MAX` pages and a background threshold not below
/// `thresh` becomes `thresh / 2`.
pub fn domain_dirty_limits(avail: u64, k: DirtyKnobs) -> (u64, u64) {
    let ratio = k.ratio * PAGE_SIZE / 100;
    let bg_ratio = k.bg_ratio * PAGE_SIZE / 100;
    let mut thresh = if k.bytes > 0 {
        k.bytes.div_ceil(PAGE_SIZE)
    } else {
        ratio * avail / PAGE_SIZE
    };
    let mut bg_thresh = if k.bg_bytes > 0 {
        k.bg_bytes.div_ceil(PAGE_SIZE)
    } else {
        bg_ratio * avail / PAGE_SIZE
    };
    thresh = thresh.min(u32::MAX as u64);
    if bg_thresh >= thresh {
        bg_thresh = thresh / 2;
    }
    (bg_thresh, thresh)
}

/// Kernel: `dirty_freerun_ceiling()`: writers below this are not throttled.
pub fn dirty_freerun_ceiling(thresh: u64, bg_thresh: u64) -> u64 {
    (thresh + bg_thresh) / 2
}

/// Kernel: `pos_ratio_polynom()`: `1 + ((setpoint - dirty) / (limit - setpoint))^3` in
/// fixed point (1.0 = 1024), clamped to [0, 2.0].
pub fn pos_ratio_polynom(setpoint: u64, dirty: u64, limit: u64) -> i64 {
    let x = ((setpoint as i64 - dirty as i64) << RATELIMIT_CALC_SHIFT)
        / ((limit.wrapping_sub(setpoint)) | 1) as i64;
    let mut pos_ratio = x;
    pos_ratio = (pos_ratio * x) >> RATELIMIT_CALC_SHIFT;
    pos_ratio = (pos_ratio * x) >> RATELIMIT_CALC_SHIFT;
    pos_ratio += 1 << RATELIMIT_CALC_SHIFT;
    pos_ratio.clamp(0, 2 << RATELIMIT_CALC_SHIFT)
}

/// The inputs of one `wb_position_ratio()` call (the kernel's `dirty_throttle_control`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dtc {
    /// Global dirty + writeback pages.
    pub dirty: u64,
    pub thresh: u64,
    pub bg_thresh: u64,
    /// The wb's dirty + writeback pages and its share of `thresh`.
    pub wb_dirty: u64,
    pub wb_thresh: u64,
}

/// Kernel: `wb_position_ratio()` (not strictlimit): the global control line
/// ([`pos_ratio_polynom`] around `setpoint = (freerun + limit) / 2`), scaled by the wb control
/// line (linear, through 1.0 at the wb's set point with a span of 8 × its write bandwidth,
/// floored at 1/4) and boosted when the wb has less than half its threshold dirty (the
/// reserve area). `limit` is [`hard_dirty_limit`]. Returns 0 at or above the limit.
pub fn wb_position_ratio(dtc: &Dtc, limit: u64, write_bw: u64) -> u64 {
    if dtc.dirty >= limit {
        return 0;
    }
    let freerun = dirty_freerun_ceiling(dtc.thresh, dtc.bg_thresh);
    let setpoint = (freerun + limit) / 2;
    let mut pos_ratio = pos_ratio_polynom(setpoint, dtc.dirty, limit) as u64;
    let mut wb_thresh = dtc.wb_thresh.min(dtc.thresh);
    // An idle wb's tiny share must not block its occasional writer.
    wb_thresh = wb_thresh.max((limit - dtc.dirty) / 8);
    // wb_setpoint = setpoint * wb_thresh / thresh, in 16-bit fixed point.
    let x = (wb_thresh << 16) / (dtc.thresh | 1);
    let wb_setpoint = (setpoint * x) >> 16;
    // Unsigned arithmetic as the kernel's (a wb share above thresh wraps and comes back).
    let span = (dtc
        .thresh
        .wrapping_sub(wb_thresh)
        .wrapping_add(8 * write_bw)
        .wrapping_mul(x))
        >> 16;
    let x_intercept = wb_setpoint.wrapping_add(span);
    if dtc.wb_dirty < x_intercept.wrapping_sub(span / 4) {
        pos_ratio = pos_ratio.wrapping_mul(x_intercept - dtc.wb_dirty)
            / (x_intercept.wrapping_sub(wb_setpoint) | 1);
    } else {
        pos_ratio /= 4;
    }
    // The wb reserve area: push harder when the wb has less than half its share dirty.
    let x_intercept = wb_thresh / 2;
    if dtc.wb_dirty < x_intercept {
        if dtc.wb_dirty > x_intercept / 8 {
            pos_ratio = pos_ratio * x_intercept / dtc.wb_dirty;
        } else {
            pos_ratio *= 8;
        }
    }
    pos_ratio
}

/// Kernel: `hard_dirty_limit()`: the larger of `thresh` and the domain's slowly following
/// `dirty_limit`.
pub fn hard_dirty_limit(dom_dirty_limit: u64, thresh: u64) -> u64 {
    thresh.max(dom_dirty_limit)
}

/// Kernel: `dirty_poll_interval()`: pages a free-running task may dirty before it looks
/// again: `2^(ilog2(thresh - dirty) / 2)`, about the square root of the headroom.
pub fn dirty_poll_interval(dirty: u64, thresh: u64) -> u64 {
    if thresh > dirty {
        1 << (ilog2(thresh - dirty) >> 1)
    } else {
        1
    }
}

/// Kernel: `wb_max_pause()`: the longest pause (jiffies), so a small dirty pool is not
/// drained dry while the task sleeps: `wb_dirty / (1 + bw / roundup_pow_of_two(1 + HZ/8)) + 1`,
/// at most [`MAX_PAUSE`].
pub fn wb_max_pause(avg_write_bandwidth: u64, wb_dirty: u64) -> u64 {
    let t = wb_dirty / (1 + avg_write_bandwidth / (1 + HZ / 8).next_power_of_two()) + 1;
    t.min(MAX_PAUSE)
}

/// Kernel: `wb_min_pause()`: `(min_pause, nr_dirtied_pause)`: the shortest pause worth
/// sleeping (jiffies) and how many pages the task may dirty before the next
/// `balance_dirty_pages()`. Targets a 10 ms pause (plus 10 ms per doubling of writers, from
/// `ilog2(write_bw) - ilog2(dirty_ratelimit)`), at most `max_pause / 2 + 1`, and at least
/// [`DIRTY_POLL_THRESH`] pages between checks.
pub fn wb_min_pause(
    avg_write_bandwidth: u64,
    dirty_ratelimit: u64,
    max_pause: u64,
    task_ratelimit: u64,
) -> (u64, u64) {
    let hi = ilog2(avg_write_bandwidth) as i64;
    let lo = ilog2(dirty_ratelimit) as i64;
    let hz_pow2 = HZ.next_power_of_two();
    let mut t = (HZ / 100).max(1) as i64;
    if hi > lo {
        t += (hi - lo) * (10 * HZ as i64) / 1024;
    }
    t = t.min(1 + max_pause as i64 / 2);
    let mut pages = dirty_ratelimit as i64 * t / hz_pow2 as i64;
    if pages < DIRTY_POLL_THRESH as i64 {
        t = max_pause as i64;
        pages = dirty_ratelimit as i64 * t / hz_pow2 as i64;
        if pages > DIRTY_POLL_THRESH as i64 {
            pages = DIRTY_POLL_THRESH as i64;
            t = (HZ * DIRTY_POLL_THRESH / dirty_ratelimit.max(1)) as i64;
        }
    }
    let pause = HZ as i64 * pages / (task_ratelimit as i64 + 1);
    if pause > max_pause as i64 {
        t = max_pause as i64;
        pages = task_ratelimit as i64 * t / hz_pow2 as i64;
    }
    let min_pause = if pages >= DIRTY_POLL_THRESH as i64 {
        1 + t / 2
    } else {
        t
    };
    (min_pause as u64, pages as u64)
}

/// `ilog2()` with `ilog2(0) = 0` (the kernel's is undefined there; its callers never pass 0
/// because the bandwidth and rate limit are kept at 1 or more).
fn ilog2(x: u64) -> u32 {
    if x == 0 {
        0
    } else {
        63 - x.leading_zeros()
    }
}

/// The filesystem device's `struct bdi_writeback` and the global `wb_domain` (see the module
/// doc for what is left out).
#[derive(Clone, Debug)]
pub struct Wb {
    /// `avg_write_bandwidth`, `write_bandwidth`: pages per second.
    pub avg_write_bandwidth: u64,
    pub write_bandwidth: u64,
    /// `dirty_ratelimit`, `balanced_dirty_ratelimit`: pages per second.
    pub dirty_ratelimit: u64,
    pub balanced_dirty_ratelimit: u64,
    /// Jiffies of the last bandwidth update, and WB_DIRTIED / WB_WRITTEN then.
    pub bw_time_stamp: u64,
    pub dirtied_stamp: u64,
    pub written_stamp: u64,
    /// `dirty_exceeded`: the last throttled writer found the wb and the global limit exceeded.
    pub dirty_exceeded: bool,
    /// WB_DIRTIED, WB_WRITTEN (cumulative) and WB_WRITEBACK (gauge): file pages of the
    /// filesystem device dirtied, written back, and under writeback now.
    pub stat_dirtied: u64,
    pub stat_written: u64,
    pub stat_writeback: u64,
    /// `global_wb_domain.dirty_limit` and its update time (jiffies).
    pub dom_dirty_limit: u64,
    pub dom_dirty_limit_tstamp: u64,
    /// Pages of file writeback in flight from the flusher (`wb->writeback_inodes` stands for
    /// "writeback in progress" in `wb_bandwidth_estimate_start()`).
    pub inodes_under_writeback: u64,
}

impl Default for Wb {
    /// Kernel: `wb_init()`: both bandwidths and both rate limits start at [`INIT_BW`].
    fn default() -> Self {
        Wb {
            avg_write_bandwidth: INIT_BW,
            write_bandwidth: INIT_BW,
            dirty_ratelimit: INIT_BW,
            balanced_dirty_ratelimit: INIT_BW,
            bw_time_stamp: 0,
            dirtied_stamp: 0,
            written_stamp: 0,
            dirty_exceeded: false,
            stat_dirtied: 0,
            stat_written: 0,
            stat_writeback: 0,
            dom_dirty_limit: 0,
            dom_dirty_limit_tstamp: 0,
            inodes_under_writeback: 0,
        }
    }
}

impl Wb {
    /// Kernel: `wb_update_write_bandwidth()`: blend the bandwidth of the last `elapsed`
    /// jiffies into a 3-second (4096-jiffy) moving estimate, then smooth `avg` further.
    pub fn update_write_bandwidth(&mut self, elapsed: u64, written: u64) {
        let period = (3 * HZ).next_power_of_two();
        let mut avg = self.avg_write_bandwidth;
        let old = self.write_bandwidth;
        let mut bw = (written - written.min(self.written_stamp)) * HZ;
        if elapsed > period {
            bw /= elapsed;
            avg = bw;
        } else {
            bw += self.write_bandwidth * (period - elapsed);
            bw >>= ilog2(period);
            if avg > old && old >= bw {
                avg -= (avg - old) >> 3;
            }
            if avg < old && old <= bw {
                avg += (old - avg) >> 3;
            }
        }
        self.write_bandwidth = bw;
        self.avg_write_bandwidth = avg.max(1);
    }

    /// Kernel: `update_dirty_limit()` via `domain_update_dirty_limit()` (at most every
    /// BANDWIDTH_INTERVAL): the domain's `dirty_limit` follows `thresh` up at once and down by
    /// 1/32 of the gap per update, never below the dirty pages.
    pub fn domain_update_dirty_limit(&mut self, now: u64, thresh: u64, dirty: u64) {
        if now < self.dom_dirty_limit_tstamp + BANDWIDTH_INTERVAL {
            return;
        }
        let limit = self.dom_dirty_limit;
        if limit < thresh {
            self.dom_dirty_limit = thresh;
        } else {
            let target = thresh.max(dirty);
            if limit > target {
                self.dom_dirty_limit = limit - ((limit - target) >> 5);
            }
        }
        self.dom_dirty_limit_tstamp = now;
    }

    /// Kernel: `wb_update_dirty_ratelimit()` (not strictlimit): estimate the balanced rate
    /// `task_ratelimit * write_bw / dirty_rate` and step `dirty_ratelimit` toward it, only
    /// when that also moves the dirty pages toward the set point, by an eighth of the gap
    /// shrunk further as it closes.
    pub fn update_dirty_ratelimit(&mut self, dtc: &Dtc, pos_ratio: u64, elapsed: u64) {
        let freerun = dirty_freerun_ceiling(dtc.thresh, dtc.bg_thresh);
        let limit = hard_dirty_limit(self.dom_dirty_limit, dtc.thresh);
        let setpoint = (freerun + limit) / 2;
        let write_bw = self.avg_write_bandwidth;
        let mut dirty_ratelimit = self.dirty_ratelimit;
        let dirty_rate = (self.stat_dirtied - self.dirtied_stamp) * HZ / elapsed;
        // +1 helps the rate limit ramp up from tiny values.
        let task_ratelimit = ((dirty_ratelimit * pos_ratio) >> RATELIMIT_CALC_SHIFT) + 1;
        let balanced = (task_ratelimit * write_bw / (dirty_rate | 1)).min(write_bw);
        let mut step = 0;
        if dtc.dirty < setpoint {
            let x = self
                .balanced_dirty_ratelimit
                .min(balanced)
                .min(task_ratelimit);
            if dirty_ratelimit < x {
                step = x - dirty_ratelimit;
            }
        } else {
            let x = self
                .balanced_dirty_ratelimit
                .max(balanced)
                .max(task_ratelimit);
            if dirty_ratelimit > x {
                step = dirty_ratelimit - x;
            }
        }
        // Slow down near the target to avoid pointless tremors.
        let shift = dirty_ratelimit / (2 * step + 1);
        step = if shift < 64 {
            (step >> shift).div_ceil(8)
        } else {
            0
        };
        if dirty_ratelimit < balanced {
            dirty_ratelimit += step;
        } else {
            dirty_ratelimit -= step;
        }
        self.dirty_ratelimit = dirty_ratelimit.max(1);
        self.balanced_dirty_ratelimit = balanced;
    }

    /// Kernel: `__wb_update_bandwidth()`: update the rate limit (when called from
    /// `balance_dirty_pages()` with the global state in `dtc`) and the write bandwidth, then
    /// take new stamps.
    pub fn update_bandwidth(&mut self, now: u64, ratelimit: Option<(&Dtc, u64)>) {
        let elapsed = now.saturating_sub(self.bw_time_stamp).max(1);
        if let Some((dtc, pos_ratio)) = ratelimit {
            self.domain_update_dirty_limit(now, dtc.thresh, dtc.dirty);
            self.update_dirty_ratelimit(dtc, pos_ratio, elapsed);
        }
        self.update_write_bandwidth(elapsed, self.stat_written);
        self.dirtied_stamp = self.stat_dirtied;
        self.written_stamp = self.stat_written;
        self.bw_time_stamp = now;
    }

    /// Kernel: `wb_bandwidth_estimate_start()`: after more than a second without writeback,
    /// restart the bandwidth measurement now rather than average over the idle time.
    pub fn bandwidth_estimate_start(&mut self, now: u64) {
        if now.saturating_sub(self.bw_time_stamp) > WB_BANDWIDTH_IDLE_JIF
            && self.inodes_under_writeback == 0
        {
            self.dirtied_stamp = self.stat_dirtied;
            self.written_stamp = self.stat_written;
            self.bw_time_stamp = now;
        }
    }
}

/// A task's dirty-throttling state (`task_struct` fields) and what it cost the task.
#[derive(Clone, Debug)]
pub struct TaskDirty {
    /// Pages dirtied since the last `balance_dirty_pages()`.
    pub nr_dirtied: u64,
    /// Pages it may dirty before calling `balance_dirty_pages()` again.
    pub nr_dirtied_pause: u64,
    /// Jiffies: when its last pause ended (the "virtual time" pauses are counted from); 0 =
    /// never paused.
    pub dirty_paused_when: u64,
    /// Time spent paused by `balance_dirty_pages()`, ns.
    pub throttle_ns: u64,
    /// Number of pauses.
    pub pauses: u64,
}

impl Default for TaskDirty {
    fn default() -> Self {
        TaskDirty {
            nr_dirtied: 0,
            nr_dirtied_pause: INIT_NR_DIRTIED_PAUSE,
            dirty_paused_when: 0,
            throttle_ns: 0,
            pauses: 0,
        }
    }
}

/// What one `balance_dirty_pages()` call decided (returned for tests and traces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BdpOutcome {
    pub bg_thresh: u64,
    pub thresh: u64,
    pub dirty: u64,
    /// Under the freerun ceiling: no throttling.
    pub freerun: bool,
    pub pos_ratio: u64,
    pub task_ratelimit: u64,
    /// Jiffies slept (0 when the pause was below `min_pause`).
    pub pause: u64,
}

impl Mm {
    /// Kernel: `calculate_totalreserve_pages()` without lowmem_reserve: the high watermarks.
    pub fn totalreserve_pages(&self) -> u64 {
        self.zones
            .iter()
            .map(|z| z.wmark[crate::mmzone::Wmark::High as usize].min(z.managed))
            .sum()
    }

    /// Kernel: `global_dirtyable_memory()` of the node.
    pub fn dirtyable_memory(&self) -> u64 {
        global_dirtyable_memory(
            self.nr_free(),
            self.totalreserve_pages(),
            self.node_lru(LruList::InactiveFile) + self.node_lru(LruList::ActiveFile),
        )
    }

    /// The scenario's dirty-limit knobs.
    pub fn dirty_knobs(&self) -> DirtyKnobs {
        DirtyKnobs {
            ratio: self.cfg.dirty_ratio,
            bg_ratio: self.cfg.dirty_background_ratio,
            bytes: self.cfg.dirty_bytes,
            bg_bytes: self.cfg.dirty_background_bytes,
        }
    }

    /// `(background threshold, hard threshold)` in pages (`global_dirty_limits()`; vmstat's
    /// `nr_dirty_background_threshold` and `nr_dirty_threshold`).
    pub fn dirty_limits(&self) -> (u64, u64) {
        domain_dirty_limits(self.dirtyable_memory(), self.dirty_knobs())
    }

    /// The wb's share of a threshold (`wb_calc_thresh()`): all of it once the wb has
    /// completed any writeback, nothing before (see the module doc).
    fn wb_calc_thresh(&self, thresh: u64) -> u64 {
        if self.wb.stat_written > 0 {
            thresh
        } else {
            0
        }
    }

    /// Kernel: `wb_over_bg_thresh()`: should background writeback go on? Dirty pages (not
    /// writeback) above the background threshold, globally or for the wb's share of it.
    pub fn wb_over_bg_thresh(&self) -> bool {
        let (bg, _) = self.dirty_limits();
        self.node.nr_dirty > bg || self.node.nr_dirty > self.wb_calc_thresh(bg)
    }

    /// The dirtying task's state (`current`): tasks by their index, other contexts share slot 0.
    pub fn task_dirty(&mut self, task: u32) -> &mut TaskDirty {
        let i = if task == crate::NO_TASK {
            0
        } else {
            task as usize + 1
        };
        if self.task_dirty.len() <= i {
            self.task_dirty.resize(i + 1, TaskDirty::default());
        }
        &mut self.task_dirty[i]
    }

    /// Time task `task` has spent paused in `balance_dirty_pages()`, ns.
    pub fn task_throttle_ns(&self, task: u32) -> u64 {
        self.task_dirty
            .get(task as usize + 1)
            .map_or(0, |t| t.throttle_ns)
    }

    /// Kernel: `balance_dirty_pages_ratelimited()`: the task dirtied `nr` more pages; once it
    /// has dirtied `nr_dirtied_pause` (8 when the wb is over its limit) it balances.
    pub fn balance_dirty_pages_ratelimited(
        &mut self,
        ctx: &mut Ctx,
        nr: u64,
    ) -> Option<BdpOutcome> {
        let exceeded = self.wb.dirty_exceeded;
        let td = self.task_dirty(ctx.task);
        td.nr_dirtied += nr;
        let mut ratelimit = td.nr_dirtied_pause;
        if exceeded {
            ratelimit = ratelimit.min(32 >> (PAGE_SHIFT - 10));
        }
        if td.nr_dirtied >= ratelimit {
            let pages = td.nr_dirtied;
            Some(self.balance_dirty_pages(ctx, pages))
        } else {
            None
        }
    }

    /// Kernel: `balance_dirty_pages()` for the global domain (one pass of its loop; see the
    /// module doc). The current time is the start of the task's operation plus the CPU time
    /// it has used; a pause becomes the task's `wait_until`.
    pub fn balance_dirty_pages(&mut self, ctx: &mut Ctx, pages_dirtied: u64) -> BdpOutcome {
        let t_ns = ctx.now + ctx.cpu_ns;
        let mut now = t_ns / JIFFY_NS;
        let nr_reclaimable = self.node.nr_dirty;
        let dirty = nr_reclaimable + self.node.nr_writeback;
        let (bg_thresh, thresh) = self.dirty_limits();
        let mut out = BdpOutcome {
            bg_thresh,
            thresh,
            dirty,
            freerun: false,
            pos_ratio: 0,
            task_ratelimit: 0,
            pause: 0,
        };
        // wb_start_background_writeback() (laptop mode waits for the hard limit).
        if !self.cfg.laptop_mode && nr_reclaimable > bg_thresh {
            self.flusher_wanted = true;
        }
        if dirty <= dirty_freerun_ceiling(thresh, bg_thresh) {
            let td = self.task_dirty(ctx.task);
            td.dirty_paused_when = now;
            td.nr_dirtied = 0;
            td.nr_dirtied_pause = dirty_poll_interval(dirty, thresh);
            out.freerun = true;
            return out;
        }
        // Start writeback even in laptop mode.
        self.flusher_wanted = true;
        // wb_dirty_limits(): the wb's share and its dirty + writeback pages.
        let wb_thresh = self.wb_calc_thresh(thresh);
        let dtc = Dtc {
            dirty,
            thresh,
            bg_thresh,
            wb_dirty: nr_reclaimable + self.wb.stat_writeback,
            wb_thresh,
        };
        let dirty_exceeded = dtc.wb_dirty > dtc.wb_thresh && dtc.dirty > dtc.thresh;
        let limit = hard_dirty_limit(self.wb.dom_dirty_limit, thresh);
        let pos_ratio = wb_position_ratio(&dtc, limit, self.wb.avg_write_bandwidth);
        self.wb.dirty_exceeded = dirty_exceeded;
        if now > self.wb.bw_time_stamp + BANDWIDTH_INTERVAL {
            self.wb.update_bandwidth(now, Some((&dtc, pos_ratio)));
        }
        let dirty_ratelimit = self.wb.dirty_ratelimit;
        let task_ratelimit = (dirty_ratelimit * pos_ratio) >> RATELIMIT_CALC_SHIFT;
        let max_pause = wb_max_pause(self.wb.avg_write_bandwidth, dtc.wb_dirty);
        let (min_pause, nr_dirtied_pause) = wb_min_pause(
            self.wb.avg_write_bandwidth,
            dirty_ratelimit,
            max_pause,
            task_ratelimit,
        );
        out.pos_ratio = pos_ratio;
        out.task_ratelimit = task_ratelimit;
        let td = self.task_dirty(ctx.task);
        let pause: i64;
        if let Some(period) = (HZ * pages_dirtied).checked_div(task_ratelimit) {
            let mut p = period as i64;
            if td.dirty_paused_when != 0 {
                p -= now as i64 - td.dirty_paused_when as i64;
            }
            if p < min_pause as i64 {
                // Too short to sleep: carry the debt in the virtual time (for less than a
                // second of think time), or forget it.
                if p < -(HZ as i64) {
                    td.dirty_paused_when = now;
                    td.nr_dirtied = 0;
                } else if period > 0 {
                    td.dirty_paused_when += period;
                    td.nr_dirtied = 0;
                } else if td.nr_dirtied_pause <= pages_dirtied {
                    td.nr_dirtied_pause += pages_dirtied;
                }
                return out;
            }
            if p > max_pause as i64 {
                // Occasional dropped task_ratelimit: carry part of the excess.
                now += (p as u64 - max_pause).min(max_pause);
                p = max_pause as i64;
            }
            pause = p;
        } else {
            // At or above the hard limit: the longest pause.
            pause = max_pause as i64;
        }
        let pause = pause as u64;
        ctx.wait(t_ns + pause * JIFFY_NS);
        td.dirty_paused_when = now + pause;
        td.nr_dirtied = 0;
        td.nr_dirtied_pause = nr_dirtied_pause;
        td.throttle_ns += pause * JIFFY_NS;
        td.pauses += 1;
        out.pause = pause;
        out
    }

    /// Writeback of `nr` file pages of the filesystem device started (`folio_start_writeback()`
    /// → WB_WRITEBACK), by the flusher or by reclaim's `pageout()`.
    pub(crate) fn wb_writeback_start(&mut self, nr: u64) {
        self.wb.stat_writeback += nr;
    }

    /// Writeback of `nr` file pages ended (`__folio_end_writeback()` → WB_WRITEBACK,
    /// WB_WRITTEN).
    pub(crate) fn wb_writeback_end(&mut self, nr: u64) {
        self.wb.stat_writeback -= nr;
        self.wb.stat_written += nr;
    }

    /// The flusher is about to write (`wb_bandwidth_estimate_start()` on the first inode
    /// after an idle second, and `do_writepages()`'s bandwidth update every
    /// BANDWIDTH_INTERVAL).
    pub(crate) fn wb_writepages_tick(&mut self, t_ns: u64) {
        let now = t_ns / JIFFY_NS;
        self.wb.inodes_under_writeback = self.wb.stat_writeback;
        self.wb.bandwidth_estimate_start(now);
        if now > self.wb.bw_time_stamp + BANDWIDTH_INTERVAL {
            self.wb.update_bandwidth(now, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATIO: DirtyKnobs = DirtyKnobs {
        ratio: 20,
        bg_ratio: 10,
        bytes: 0,
        bg_bytes: 0,
    };

    /// A 4 GiB machine's numbers: 1048576 pages, 200000 free, 16384 of reserves, 600000 on
    /// the file LRU.
    #[test]
    fn dirty_limits_ratio_form() {
        let avail = global_dirtyable_memory(200_000, 16_384, 600_000);
        assert_eq!(avail, 200_000 - 16_384 + 600_000 + 1); // 783617
        let (bg, thresh) = domain_dirty_limits(avail, RATIO);
        // 20 % = 819/4096 and 10 % = 409/4096 (rounded down per page), not 20/100.
        // 819 * 783617 = 641782323, / 4096 = 156685 (20/100 would give 156723).
        assert_eq!(thresh, 819 * 783_617 / 4096);
        // 409 * 783617 = 320499353, / 4096 = 78246.
        assert_eq!(bg, 409 * 783_617 / 4096);
        assert_eq!((bg, thresh), (78_246, 156_685));
        assert_eq!(dirty_freerun_ceiling(thresh, bg), 117_465);
        // Reserves larger than the free pages count as all of them, never negative.
        assert_eq!(global_dirtyable_memory(1_000, 16_384, 5), 6);
    }

    #[test]
    fn dirty_limits_bytes_form() {
        let k = DirtyKnobs {
            ratio: 20,
            bg_ratio: 10,
            bytes: 100 << 20,
            bg_bytes: (50 << 20) + 1,
        };
        // Bytes win over ratios, rounded up to pages.
        assert_eq!(domain_dirty_limits(783_617, k), (12_801, 25_600));
        // A background threshold not below the hard one becomes half of it.
        let k = DirtyKnobs {
            bg_bytes: 200 << 20,
            ..k
        };
        assert_eq!(domain_dirty_limits(783_617, k), (12_800, 25_600));
        let k = DirtyKnobs {
            ratio: 10,
            bg_ratio: 10,
            bytes: 0,
            bg_bytes: 0,
        };
        // 10 % = 409/4096: 409 * 100000 / 4096 = 9985; bg = 9985 / 2.
        assert_eq!(domain_dirty_limits(100_000, k), (4_992, 9_985));
    }

    #[test]
    fn pos_ratio_polynom_hand_values() {
        // setpoint 1000, limit 2000: f(setpoint) = 1.0, f(limit) = 0, f(freerun = 0) = 2.0.
        assert_eq!(pos_ratio_polynom(1000, 1000, 2000), 1024);
        // (limit - setpoint) | 1 = 1001: x = (-1000 << 10) / 1001 = -1022 (truncated);
        // x^3 >> 20 = -1019 (arithmetic shifts round down), 1024 - 1019 = 5.
        assert_eq!(pos_ratio_polynom(1000, 2000, 2000), 5);
        // x = 1024000 / 1001 = 1022; 1022^2 >> 10 = 1020; 1020 * 1022 >> 10 = 1018.
        assert_eq!(pos_ratio_polynom(1000, 0, 2000), 2042);
        // Halfway above: x = (-500 << 10) / 1001 = -511; -511^2 >> 10 = 255; 255 * -511 >> 10
        // = -128 (floor of -127.25); 1024 - 128 = 896.
        assert_eq!(pos_ratio_polynom(1000, 1500, 2000), 896);
        // Far below the freerun: clamped at 2.0.
        assert_eq!(pos_ratio_polynom(1000, 0, 1200), 2048);
    }

    #[test]
    fn position_ratio_single_wb() {
        // thresh 10000, bg 5000: freerun 7500, limit 10000, setpoint 8750.
        // At the setpoint with the wb holding all dirty pages and 1000 pages/s of bandwidth:
        // global 1.0; wb_setpoint = 8750 * x >> 16 with x = (10000 << 16) / 10001 = 65529,
        // i.e. 8749; span = (0 + 8000) * 65529 >> 16 = 7999; x_intercept = 16748;
        // wb_dirty 8750 < 16748 - 1999: 1024 * (16748 - 8750) / (7999 | 1) = 1023.
        let dtc = Dtc {
            dirty: 8750,
            thresh: 10_000,
            bg_thresh: 5_000,
            wb_dirty: 8750,
            wb_thresh: 10_000,
        };
        assert_eq!(wb_position_ratio(&dtc, 10_000, 1000), 1023);
        // Over the limit: stop.
        let over = Dtc {
            dirty: 10_000,
            ..dtc
        };
        assert_eq!(wb_position_ratio(&over, 10_000, 1000), 0);
        // Just above the freerun ceiling the writer may go faster than the base rate:
        // global f(7600) = 1 + ((8750-7600)/1251)^3: x = 1177600/1251 = 941, 941^2>>10 = 864,
        // 864*941>>10 = 793: 1817; wb line: 1817 * (16748-7600) / 7999 = 16621916 / 7999
        // = 2077; wb_dirty is above wb_thresh / 2, no reserve-area boost.
        let low = Dtc {
            dirty: 7600,
            wb_dirty: 7600,
            ..dtc
        };
        assert_eq!(wb_position_ratio(&low, 10_000, 1000), 2077);
        // The reserve area: a wb with less than half its share dirty (the rest of the dirty
        // pages are another wb's): 1023-ish from the lines, then * 5000 / 4000.
        let reserve = Dtc {
            wb_dirty: 4000,
            ..dtc
        };
        // wb line: 1024 * (16748 - 4000) / 7999 = 1631; * 5000 / 4000 = 2038.
        assert_eq!(wb_position_ratio(&reserve, 10_000, 1000), 2038);
    }

    #[test]
    fn pauses_hand_values() {
        // wb_max_pause: 1000 pages dirty, 25600 pages/s: 1000 / (1 + 25600/128) + 1 = 5.
        assert_eq!(wb_max_pause(25_600, 1000), 5);
        assert_eq!(wb_max_pause(25_600, 1_000_000), MAX_PAUSE);
        // wb_min_pause with one writer at 25600 pages/s, max_pause 200: t = 10 jiffies,
        // pages = 25600 * 10 / 1024 = 250 (>= 32): min_pause 1 + 10/2 = 6.
        assert_eq!(wb_min_pause(25_600, 25_600, 200, 25_600), (6, 250));
        // A slow device (1000 pages/s): pages = 1000 * 10 / 1024 = 9 < 32, so t = max_pause:
        // 1000 * 200 / 1024 = 195 > 32 -> 32 pages, t = 1000 * 32 / 1000 = 32; pause for
        // 32 pages at 1000/s = 31 < 200; min_pause = 1 + 32/2 = 17.
        assert_eq!(wb_min_pause(1000, 1000, 200, 1000), (17, 32));
        // task_ratelimit 0: pages = 0, the full max_pause.
        assert_eq!(wb_min_pause(1000, 1000, 200, 0), (200, 0));
        // dirty_poll_interval: sqrt-ish of the headroom.
        assert_eq!(dirty_poll_interval(0, 10_000), 1 << 6); // ilog2(10000) = 13
        assert_eq!(dirty_poll_interval(10_000, 10_000), 1);
    }

    #[test]
    fn write_bandwidth_estimate() {
        let mut wb = Wb::default();
        // 200 jiffies, 5120 pages written (25600 pages/s): bw = 5120000 + 25600 * 3896, >> 12
        // = 25600 exactly; the average does not move.
        wb.update_write_bandwidth(200, 5120);
        assert_eq!(
            (wb.write_bandwidth, wb.avg_write_bandwidth),
            (25_600, 25_600)
        );
        // Then 200 jiffies at 10240 pages/s: bw = (2048 * 1000 + 25600 * 3896) >> 12 = 24850;
        // avg (25600) > old (25600)? no; avg < old? no: avg stays.
        wb.written_stamp = 5120;
        wb.update_write_bandwidth(200, 5120 + 2048);
        assert_eq!(wb.write_bandwidth, (2048 * 1000 + 25_600 * 3896) >> 12);
        assert_eq!(wb.avg_write_bandwidth, 25_600);
        // Once write_bandwidth has dropped below avg and keeps dropping, avg follows by 1/8.
        wb.written_stamp = 7168;
        wb.update_write_bandwidth(200, 7168 + 2048);
        let old = (2048 * 1000 + 25_600 * 3896) >> 12;
        assert_eq!(wb.avg_write_bandwidth, 25_600 - ((25_600 - old) >> 3));
        // An interval longer than the 4096-jiffy period replaces the estimate.
        wb.written_stamp = 0;
        wb.update_write_bandwidth(5000, 5000);
        assert_eq!((wb.write_bandwidth, wb.avg_write_bandwidth), (1000, 1000));
    }
}

/// Where a written page goes on the LRU, and when reclaim meets it still dirty (issue 14,
/// seed S3's `nr_vmscan_immediate_reclaim`), under v5.3's rules.
#[cfg(test)]
mod dirty_tail_tests {
    use crate::mmzone::{ZONE_DMA32, ZONE_NORMAL};
    use crate::page::pg;
    use crate::testutil::*;
    use crate::vmscan::ScanControl;
    use crate::vmstat::Ev;
    use crate::workingset::KernelVersion;
    use crate::*;

    fn mm_5_3(zones: Vec<(&'static str, u64)>) -> Mm {
        let mut cfg = tiny_config(BalanceKind::Legacy, 4096);
        cfg.zones = zones;
        cfg.kernel = KernelVersion::new(5, 3);
        cfg.readahead_max_pages = 0;
        cfg.swap_areas.clear();
        Mm::new(cfg)
    }

    /// One kswapd-like pass over the node, as `balance_pgdat()` calls `shrink_node()`.
    fn kswapd_pass(mm: &mut Mm, reclaim_idx: usize, nr: u64) -> u64 {
        let mut io = InstantIo;
        let mut ctx = Ctx::new(1_000_000, &mut io, 0);
        let mut sc = ScanControl::new(nr, 0);
        sc.kswapd = true;
        sc.may_swap = false;
        sc.priority = 0;
        sc.reclaim_idx = reclaim_idx;
        mm.shrink_node(&mut ctx, &mut sc)
    }

    fn inactive_tail(mm: &Mm) -> u32 {
        mm.lruvecs[0].lists[LruList::InactiveFile.idx()].tail
    }

    /// A page written once by write() is inactive and unreferenced: since v4.7 ("mm:
    /// filemap: only do access activations on reads") `grab_cache_page_write_begin()` asks
    /// `pagecache_get_page()` for FGP_LOCK | FGP_WRITE | FGP_CREAT without FGP_ACCESSED, and
    /// v5.3's XFS write path (`iomap_write_actor()` → `iomap_write_begin()`) marks nothing
    /// accessed either; a second write changes nothing, a read marks it referenced
    /// (`mark_page_accessed()`). Under v4.6's rules the new page starts referenced and the
    /// second write activates it.
    #[test]
    fn a_written_page_is_inactive_and_unreferenced() {
        let mut mm = mm_5_3(vec![("Normal", 4096)]);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.file_write(&mut ctx, 1, 0, 1);
        let pfn = mm.cache_lookup(1, 0).unwrap();
        assert!(mm.pages.test(pfn, pg::DIRTY) && mm.pages.test(pfn, pg::LRU));
        assert!(!mm.pages.test(pfn, pg::ACTIVE | pg::REFERENCED));
        mm.file_write(&mut ctx, 1, 0, 1);
        assert!(!mm.pages.test(pfn, pg::ACTIVE | pg::REFERENCED));
        mm.file_read(&mut ctx, 1, 0, 1);
        assert!(mm.pages.test(pfn, pg::REFERENCED) && !mm.pages.test(pfn, pg::ACTIVE));

        let mut mm = mm_5_3(vec![("Normal", 4096)]);
        mm.cfg.kernel = KernelVersion::new(4, 6);
        mm.file_write(&mut ctx, 1, 0, 1);
        let pfn = mm.cache_lookup(1, 0).unwrap();
        assert!(mm.pages.test(pfn, pg::REFERENCED) && !mm.pages.test(pfn, pg::ACTIVE));
        mm.file_write(&mut ctx, 1, 0, 1);
        assert!(mm.pages.test(pfn, pg::ACTIVE) && !mm.pages.test(pfn, pg::REFERENCED));
        assert_eq!(mm.node_lru(LruList::ActiveFile), 1);
    }

    /// The inactive list is FIFO for a write-once stream, and the flusher cleans in the
    /// same order, so reclaim meets a dirty page only once the list's clean part is gone.
    /// 40 clean pages older than 60 dirty ones: a 32-page pass takes clean ones and counts
    /// no immediate reclaim. The next pass frees the last 8 and reaches the dirty ones: each
    /// is counted in `nr_vmscan_immediate_reclaim` (v5.3's `shrink_page_list()`: a dirty
    /// file page that kswapd has not met before is left to the flusher, `SetPageReclaim()`,
    /// and activated). When its writeback completes, `end_page_writeback()` →
    /// `rotate_reclaimable_page()` moves it to the inactive tail, where the next pass frees
    /// it without counting it again.
    #[test]
    fn a_short_inactive_list_meets_dirty_pages_at_its_tail() {
        let mut mm = mm_5_3(vec![("Normal", 4096)]);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        mm.file_write(&mut ctx, 1, 0, 100);
        mm.objects[1].wb_index = 0;
        mm.writeback_file(&mut ctx, 1, 40, BioOp::Write);
        mm.run_completions(0);
        assert_eq!((mm.node.nr_dirty, mm.node.nr_writeback), (60, 0));
        assert_eq!(mm.node_lru(LruList::InactiveFile), 100);
        assert_eq!(kswapd_pass(&mut mm, ZONE_NORMAL, 32), 32);
        assert_eq!(mm.ev.get(Ev::NrVmscanImmediateReclaim), 0);
        // 8 clean pages are left at the tail, then the dirty ones.
        assert_eq!(kswapd_pass(&mut mm, ZONE_NORMAL, 32), 8);
        let immediate = mm.ev.get(Ev::NrVmscanImmediateReclaim);
        assert_eq!(immediate, 60);
        assert_eq!(mm.node_lru(LruList::ActiveFile), 60);
        let marked = mm.cache_lookup(1, 40).unwrap();
        for f in [pg::DIRTY, pg::RECLAIM, pg::ACTIVE] {
            assert!(mm.pages.test(marked, f));
        }
        // The flusher writes the dirty pages; completion rotates the marked ones.
        mm.objects[1].wb_index = 0;
        mm.writeback_file(&mut ctx, 1, 60, BioOp::WriteBackground);
        mm.run_completions(u64::MAX);
        assert_eq!(mm.ev.get(Ev::PgRotated), immediate);
        assert_eq!(mm.node_lru(LruList::ActiveFile), 0);
        assert_eq!(
            inactive_tail(&mm),
            mm.cache_lookup(1, 40 + immediate as u32 - 1).unwrap()
        );
        let before = mm.node_lru(LruList::InactiveFile);
        assert_eq!(kswapd_pass(&mut mm, ZONE_NORMAL, immediate), immediate);
        assert_eq!(mm.node_lru(LruList::InactiveFile), before - immediate);
        assert_eq!(mm.ev.get(Ev::NrVmscanImmediateReclaim), immediate);
    }

    /// 1,500 pages read into Normal (clean, the allocator fills the highest zone first),
    /// then 300 written, which land in DMA32 once Normal is at its low watermark.
    fn clean_normal_then_dirty_dma32() -> Mm {
        let mut mm = mm_5_3(vec![("DMA32", 2048), ("Normal", 2048)]);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        for p in 0..1500 {
            mm.file_read(&mut ctx, 1, p, 1);
        }
        mm.file_write(&mut ctx, 1, 2000, 300);
        mm
    }

    /// Zone-restricted reclaim breaks the FIFO: v5.3's `isolate_lru_pages()` for kswapd
    /// woken by a DMA32 boost (`reclaim_idx` = DMA32) skips every Normal page it meets (no
    /// cap before v6.13) and splices them back at the head, so the DMA32 pages it reaches
    /// can be the youngest, still dirty, although the inactive list is six times the dirty
    /// pool. Here every DMA32 file page is one of the 300 written last: an unrestricted
    /// pass frees clean Normal pages and meets no dirty page; a DMA32 pass frees nothing
    /// and counts each DMA32 page it takes in `nr_vmscan_immediate_reclaim`.
    #[test]
    fn dma32_reclaim_reaches_dirty_pages_past_the_clean_normal_tail() {
        let mut mm = clean_normal_then_dirty_dma32();
        let dma32_file = mm.zones[0].nr_lru[LruList::InactiveFile.idx()];
        let normal_file = mm.zones[1].nr_lru[LruList::InactiveFile.idx()];
        assert_eq!(normal_file + dma32_file, 1800);
        assert!(dma32_file >= 32, "{dma32_file} written pages in DMA32");
        assert_eq!(mm.node.nr_dirty, 300);
        assert_eq!(kswapd_pass(&mut mm, ZONE_NORMAL, 32), 32);
        assert_eq!(mm.ev.get(Ev::NrVmscanImmediateReclaim), 0);

        let mut mm = clean_normal_then_dirty_dma32();
        assert_eq!(kswapd_pass(&mut mm, ZONE_DMA32, 32), 0);
        let immediate = mm.ev.get(Ev::NrVmscanImmediateReclaim);
        assert_eq!(immediate, dma32_file);
        assert_eq!(mm.ev.get(Ev::PgSkipNormal), normal_file);
        assert_eq!(mm.node_lru(LruList::ActiveFile), immediate);
    }
}
