//! Writeback throttling: the bound on buffered writes in flight to a request-based device
//! (block/blk-wbt.c over block/blk-rq-qos.c, v6.1 and v6.18 alike in what is modelled here).
//!
//! # The problem
//! A reclaimer that writes what it reclaims (swap-out, dirty file folios) hands the device
//! a request per folio and moves on. Without a bound, one reclaim pass can queue a second or
//! more of device time: every LRU folio ends up under writeback, reclaim finds nothing it
//! can free, and reads (swap-ins, refaults) queue behind the writes. The kernel bounds the
//! writes in flight per device with writeback throttling, an rq_qos policy on every blk-mq
//! (request-based) device unless the IO scheduler turns it off (BFQ) or the user does
//! (`queue/wbt_lat_usec = 0`). The submitter of a write over the limit sleeps in
//! `rq_qos_wait()` until inflight writes complete: for reclaim that is kswapd or the task in
//! direct reclaim.
//!
//! # The rules (each names the kernel function)
//! - **What is throttled** (`wbt_should_throttle()`, `bio_to_wbt_flags()`): every write that
//!   is not O_DIRECT (REQ_SYNC|REQ_IDLE; the model has none) and discards (the model has
//!   none). Reads are not throttled; their issue and completion times feed `close_io()` and
//!   the latency statistics. Writes from kswapd count on a queue of their own
//!   (`WBT_RWQ_KSWAPD`), the others on `WBT_RWQ_BG`.
//! - **The limit** (`get_limit()`): REQ_SYNC writes (fsync, journal) and kswapd get
//!   `max_depth`; REQ_BACKGROUND writes (the flusher's background and periodic writeback),
//!   and any write while a read was issued or completed within the last HZ/10
//!   (`close_io()`), get `wb_background`; others (reclaim's `pageout()`) get `wb_normal`.
//! - **The depths** (`rq_depth_calc_max_depth()`, `calc_wb_limits()`): `max_depth` is
//!   `min(RWB_DEF_DEPTH, queue_depth)` at scale step 0, `1 + ((depth - 1) >> step)` when
//!   scaled down, `1 + ((depth - 1) << -step)` capped at 3/4 of the queue depth when scaled
//!   up; a queue depth of 1 gives 2 (1 when scaled down). `wb_normal = (max + 1) / 2`,
//!   `wb_background = (max + 3) / 4` (both `max` and 1 when `max <= 2`).
//! - **Scaling** (`wb_timer_fn()`, `latency_exceeded()`): a window of `win_nsec` (100 ms;
//!   `100 / sqrt(step + 1)` ms when scaled down) armed by a throttled write, re-armed while
//!   writes are in flight or the step is not 0. At its end: the oldest outstanding read older
//!   than the window (or than `wbt_lat_usec` with no read completed) or a window whose fastest
//!   read took longer than `wbt_lat_usec` scales down (hard: a negative step snaps to 0); one
//!   read and 3 writes completed within target scale up; only writes (or writes in flight)
//!   scale up too; no data for `RWB_UNKNOWN_BUMP` windows moves the step back towards 0.
//! - **Where the submitter waits** (`rq_qos_wait()`, `wbt_rqw_done()`): a write that finds
//!   its queue at the limit sleeps. A completion wakes the sleepers only when the writes
//!   still in flight are none, or below `wb_normal` by at least `wb_background / 2`; a woken
//!   sleeper issues when its queue is below its own limit then. The model computes the
//!   wakeup from the completion times of the writes in flight (known at their submission).
//!
//! # Where the model simplifies
//! - **Plug merging.** Reclaim submits under a plug (`shrink_lruvec()`'s `blk_start_plug()`),
//!   so a bio that continues the previous request merges into it before `rq_qos_throttle()`
//!   and takes no token (`blk_mq_submit_bio()` tries the plug merge first). The model merges a
//!   write into the previous tracked write of the device when it is submitted at the same
//!   instant (one reclaim batch: `pageout()` does not move the reclaimer's clock on a
//!   request-based device), continues it, is of the same queue, and the merged request stays
//!   within `BLK_MAX_SEGMENTS` pages (one segment per single-page bio). The merged bio keeps
//!   its own completion time in the device model (which does not merge); the request's token
//!   is held until the last part completes.
//! - **The device's write cache** (QUEUE_FLAG_WC, which makes `wbt_rqw_done()` wake only at
//!   zero in flight unless a task was recently dirty-throttled) is taken to be off, and
//!   `wb_recent_wait()` (a task slept in `balance_dirty_pages()` within a second) false.
//! - **Wakeups at a scale-up** (`rwb_wake_all()`): a sleeper's wakeup is computed with the
//!   limits at the time it went to sleep.
//! - **Out-of-order submissions.** The simulation's threads submit at their own clocks, not
//!   in global time order; the policy's state (completions seen, timer windows) advances
//!   monotonically with the latest submission time, and a write counts against the limit
//!   every tracked write not yet completed at its submission time, including a sleeper's
//!   request booked for later (which keeps sleepers in arrival order, as the kernel's
//!   exclusive wait queue does).
//! - **The hardware queue's tags** (`nr_requests`) are not a second sleep: the device model's
//!   `queue_depth` channels queue a request that finds them all busy, and wbt keeps tracked
//!   writes at or below 3/4 of the queue depth (2 on a queue depth of 1).
//! - The policy's clock starts idle: no read has been issued within HZ/10 at time 0 (the
//!   kernel initialises `last_issue`/`last_comp` to the registration time, at boot).
//!
//! Bio-based devices without a request queue (zram, brd: the model's synchronous devices)
//! have no rq_qos and are never throttled.

use refault_mm::workingset::KernelVersion;
use refault_mm::BioOp;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// `RWB_DEF_DEPTH`: the write depth at scale step 0, before the queue depth caps it.
pub const RWB_DEF_DEPTH: u32 = 16;
/// `RWB_WINDOW_NSEC`: the monitoring window (100 ms).
pub const RWB_WINDOW_NSEC: u64 = 100_000_000;
/// `RWB_MIN_WRITE_SAMPLES`: write completions a window needs for a latency verdict.
const RWB_MIN_WRITE_SAMPLES: u64 = 3;
/// `RWB_UNKNOWN_BUMP`: windows without a verdict before the step returns towards 0.
const RWB_UNKNOWN_BUMP: u32 = 5;
/// `close_io()`: a read issued or completed within HZ/10 counts as competing IO.
const CLOSE_IO_NS: u64 = 100_000_000;
/// `BLK_MAX_SEGMENTS` (include/linux/blkdev.h): the default `max_segments` of a queue; a
/// plugged request grows by merging single-page bios up to this many.
pub const BLK_MAX_SEGMENTS: u64 = 128;

/// `wbt_default_latency_nsec()` in microseconds: 2 ms for non-rotational storage, 75 ms for
/// rotational (the default of `queue/wbt_lat_usec`).
pub fn default_lat_usec(rotational: bool) -> u64 {
    if rotational {
        75_000
    } else {
        2_000
    }
}

/// Whether the kernel `kernel` throttles writeback on a device of preset `preset` by
/// default. Writeback throttling arrived in v4.10 ("block: hook up writeback throttling",
/// on by default for blk-mq queues); NVMe and virtio-blk were blk-mq already. SCSI disks
/// (the `hdd` and `sata-ssd` presets) ran on the legacy request path, whose CFQ turned wbt
/// off, until v5.0 removed that path. Before those versions the device is unthrottled.
pub fn in_kernel(kernel: KernelVersion, preset: &str) -> bool {
    let scsi = matches!(preset, "hdd" | "sata-ssd");
    kernel
        >= if scsi {
            KernelVersion::new(5, 0)
        } else {
            KernelVersion::new(4, 10)
        }
}

/// `struct rq_depth` (block/blk-rq-qos.h): the scaled write depth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RqDepth {
    pub queue_depth: u32,
    pub default_depth: u32,
    pub scale_step: i32,
    pub scaled_max: bool,
    pub max_depth: u32,
}

impl RqDepth {
    /// At scale step 0 (`wbt_update_limits()`).
    pub fn new(queue_depth: u32) -> Self {
        let mut d = RqDepth {
            queue_depth: queue_depth.max(1),
            default_depth: RWB_DEF_DEPTH,
            scale_step: 0,
            scaled_max: false,
            max_depth: 0,
        };
        d.calc_max_depth();
        d
    }

    /// Kernel: `rq_depth_calc_max_depth()`. Returns true when the depth cannot grow further.
    pub fn calc_max_depth(&mut self) -> bool {
        if self.queue_depth == 1 {
            // One request ready when the one in flight completes: 2, or 1 when scaled down.
            if self.scale_step > 0 {
                self.max_depth = 1;
                return false;
            }
            self.max_depth = 2;
            return true;
        }
        let mut at_max = false;
        let mut depth = u64::from(self.default_depth.min(self.queue_depth));
        if self.scale_step > 0 {
            depth = 1 + ((depth - 1) >> self.scale_step.min(31));
        } else if self.scale_step < 0 {
            let maxd = 3 * u64::from(self.queue_depth) / 4;
            depth = 1 + ((depth - 1) << (-self.scale_step).min(40));
            if depth > maxd {
                depth = maxd;
                at_max = true;
            }
        }
        self.max_depth = depth as u32;
        at_max
    }

    /// Kernel: `rq_depth_scale_up()`. False if the depth was already at its maximum.
    pub fn scale_up(&mut self) -> bool {
        if self.scaled_max {
            return false;
        }
        self.scale_step -= 1;
        self.scaled_max = self.calc_max_depth();
        true
    }

    /// Kernel: `rq_depth_scale_down()`. A hard throttle (a latency violation) snaps a
    /// negative step back to 0. False at depth 1.
    pub fn scale_down(&mut self, hard_throttle: bool) -> bool {
        if self.max_depth == 1 {
            return false;
        }
        if self.scale_step < 0 && hard_throttle {
            self.scale_step = 0;
        } else {
            self.scale_step += 1;
        }
        self.scaled_max = false;
        self.calc_max_depth();
        true
    }
}

/// Kernel: `calc_wb_limits()`: (`wb_normal`, `wb_background`) for a max depth; both 0 when
/// throttling is off (`min_lat_nsec == 0`).
pub fn calc_wb_limits(min_lat_nsec: u64, max_depth: u32) -> (u32, u32) {
    if min_lat_nsec == 0 {
        (0, 0)
    } else if max_depth <= 2 {
        (max_depth, 1)
    } else {
        (max_depth.div_ceil(2), max_depth.div_ceil(4))
    }
}

/// Kernel: `rwb_arm_timer()`'s window: `win_nsec * 16 / int_sqrt((step + 1) * 256)` when
/// scaled down, `win_nsec` otherwise.
pub fn window_nsec(win_nsec: u64, scale_step: i32) -> u64 {
    if scale_step > 0 {
        let x = (u64::from(scale_step as u32) + 1) << 8;
        (win_nsec << 4) / x.isqrt()
    } else {
        win_nsec
    }
}

/// What writeback throttling did on one device during the run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WbtStats {
    /// Writes whose submitter slept in `rq_qos_wait()`.
    pub waits: u64,
    /// Total time submitters slept.
    pub wait_ns: u64,
    /// Bios merged into a plugged request (no token of their own).
    pub merged: u64,
    /// Most tracked write requests in flight at an issue, over both queues.
    pub max_inflight: u64,
    /// Scale steps taken down and up (`scale_down()`, `scale_up()` that changed the depth).
    pub scale_downs: u64,
    pub scale_ups: u64,
}

/// Latency verdict of a window (`latency_exceeded()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lat {
    Ok,
    Unknown,
    UnknownWrites,
    Exceeded,
}

/// The previous tracked write request, while a bio may still merge into it.
#[derive(Clone, Copy, Debug)]
struct Plugged {
    at: u64,
    next_sector: u64,
    queue: usize,
    pages: u64,
    done: u64,
}

/// When a write may be issued ([`Wbt::wait`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub issued: u64,
    /// Merged into the plugged request: holds no token of its own.
    pub merged: bool,
    queue: usize,
    sector: u64,
    nr_pages: u32,
}

/// `struct rq_wb`: one device's writeback throttling (see the module comment).
#[derive(Clone, Debug)]
pub struct Wbt {
    min_lat_nsec: u64,
    pub rqd: RqDepth,
    pub wb_normal: u32,
    pub wb_background: u32,
    unknown_cnt: u32,
    cur_win_nsec: u64,
    /// End of the current statistics window while its timer is armed.
    window_end: Option<u64>,
    win_reads: u64,
    win_read_min: u64,
    win_writes: u64,
    /// Completions not yet seen: (time, issue-to-completion latency, read).
    pending: BinaryHeap<Reverse<(u64, u64, bool)>>,
    /// The policy's time: completions and windows up to here are processed.
    clock: u64,
    /// Completion times of the tracked writes in flight, per queue (`WBT_RWQ_BG`,
    /// `WBT_RWQ_KSWAPD`).
    inflight: [Vec<u64>; 2],
    last_issue: Option<u64>,
    last_comp: Option<u64>,
    /// The oldest outstanding read (`sync_issue`, `sync_cookie`): (issue, completion).
    sync_issue: Option<(u64, u64)>,
    plugged: Option<Plugged>,
    pub stats: WbtStats,
}

impl Wbt {
    /// Kernel: `wbt_init()` for a device of `queue_depth` (`blk_queue_depth()`) with
    /// `wbt_lat_usec` (non-zero: zero means no throttling, and no `Wbt`).
    pub fn new(queue_depth: u32, lat_usec: u64) -> Self {
        let min_lat_nsec = lat_usec * 1_000;
        let rqd = RqDepth::new(queue_depth);
        let (wb_normal, wb_background) = calc_wb_limits(min_lat_nsec, rqd.max_depth);
        Wbt {
            min_lat_nsec,
            rqd,
            wb_normal,
            wb_background,
            unknown_cnt: 0,
            cur_win_nsec: RWB_WINDOW_NSEC,
            window_end: None,
            win_reads: 0,
            win_read_min: u64::MAX,
            win_writes: 0,
            pending: BinaryHeap::new(),
            clock: 0,
            inflight: [Vec::new(), Vec::new()],
            last_issue: None,
            last_comp: None,
            sync_issue: None,
            plugged: None,
            stats: WbtStats::default(),
        }
    }

    /// Process completions and window ends up to `now` in time order (a completion at a
    /// window's end belongs to that window). Never moves back.
    fn advance(&mut self, now: u64) {
        if now < self.clock {
            return;
        }
        loop {
            let comp = self.pending.peek().map(|r| r.0 .0).filter(|&t| t <= now);
            let timer = self.window_end.filter(|&t| t <= now);
            match (comp, timer) {
                (Some(c), t) if t.is_none_or(|t| c <= t) => {
                    let Reverse((t, lat, read)) = self.pending.pop().expect("peeked");
                    if read {
                        self.last_comp = Some(t);
                        if self.sync_issue.is_some_and(|(_, d)| d <= t) {
                            self.sync_issue = None;
                        }
                    }
                    if self.window_end.is_some() {
                        if read {
                            self.win_reads += 1;
                            self.win_read_min = self.win_read_min.min(lat);
                        } else {
                            self.win_writes += 1;
                        }
                    }
                }
                (_, Some(t)) => self.timer_fn(t),
                _ => break,
            }
        }
        self.clock = now;
        for q in &mut self.inflight {
            q.retain(|&d| d > now);
        }
    }

    fn inflight_at(&self, t: u64) -> u64 {
        self.inflight
            .iter()
            .map(|q| q.iter().filter(|&&d| d > t).count() as u64)
            .sum()
    }

    /// Kernel: `rwb_arm_timer()` at `t`: a new statistics window.
    fn arm_timer(&mut self, t: u64) {
        self.cur_win_nsec = window_nsec(RWB_WINDOW_NSEC, self.rqd.scale_step);
        self.window_end = Some(t + self.cur_win_nsec);
        self.win_reads = 0;
        self.win_read_min = u64::MAX;
        self.win_writes = 0;
    }

    /// Kernel: `latency_exceeded()` at the end of a window at `t`.
    fn latency_exceeded(&mut self, t: u64) -> Lat {
        let thislat = match self.sync_issue {
            Some((issue, done)) if done > t => t - issue,
            _ => 0,
        };
        if thislat > self.cur_win_nsec || (thislat > self.min_lat_nsec && self.win_reads == 0) {
            return Lat::Exceeded;
        }
        if !(self.win_reads >= 1 && self.win_writes >= RWB_MIN_WRITE_SAMPLES) {
            if self.win_writes > 0 || self.inflight_at(t) > 0 {
                return Lat::UnknownWrites;
            }
            return Lat::Unknown;
        }
        if self.win_read_min > self.min_lat_nsec {
            return Lat::Exceeded;
        }
        Lat::Ok
    }

    fn scale_up(&mut self) {
        if !self.rqd.scale_up() {
            return;
        }
        (self.wb_normal, self.wb_background) =
            calc_wb_limits(self.min_lat_nsec, self.rqd.max_depth);
        self.unknown_cnt = 0;
        self.stats.scale_ups += 1;
    }

    fn scale_down(&mut self, hard: bool) {
        if !self.rqd.scale_down(hard) {
            return;
        }
        (self.wb_normal, self.wb_background) =
            calc_wb_limits(self.min_lat_nsec, self.rqd.max_depth);
        self.unknown_cnt = 0;
        self.stats.scale_downs += 1;
    }

    /// Kernel: `wb_timer_fn()`: the window ending at `t`.
    fn timer_fn(&mut self, t: u64) {
        let inflight = self.inflight_at(t);
        match self.latency_exceeded(t) {
            Lat::Exceeded => self.scale_down(true),
            Lat::Ok | Lat::UnknownWrites => self.scale_up(),
            Lat::Unknown => {
                self.unknown_cnt += 1;
                if self.unknown_cnt >= RWB_UNKNOWN_BUMP {
                    if self.rqd.scale_step > 0 {
                        self.scale_up();
                    } else if self.rqd.scale_step < 0 {
                        self.scale_down(false);
                    }
                }
            }
        }
        if self.rqd.scale_step != 0 || inflight > 0 {
            self.arm_timer(t);
        } else {
            self.window_end = None;
        }
    }

    /// Kernel: `close_io()`.
    fn close_io(&self, t: u64) -> bool {
        let near = |x: Option<u64>| x.is_some_and(|x| x <= t && t < x + CLOSE_IO_NS);
        near(self.last_issue) || near(self.last_comp)
    }

    /// Kernel: `get_limit()` for a write of kind `op` at `t`.
    pub fn get_limit(&self, op: BioOp, kswapd: bool, t: u64) -> u32 {
        if op == BioOp::WriteSync || kswapd {
            self.rqd.max_depth
        } else if op == BioOp::WriteBackground || self.close_io(t) {
            self.wb_background
        } else {
            self.wb_normal
        }
    }

    /// Kernel: `wbt_wait()` → `rq_qos_wait()` for a write of `nr_pages` at `sector`
    /// submitted at `now`: when it may be issued (the submitter sleeps until then).
    pub fn wait(&mut self, now: u64, op: BioOp, kswapd: bool, sector: u64, nr_pages: u32) -> Token {
        self.advance(now);
        let queue = usize::from(kswapd);
        let tok = |issued, merged| Token {
            issued,
            merged,
            queue,
            sector,
            nr_pages,
        };
        if let Some(p) = self.plugged {
            if p.at == now
                && p.queue == queue
                && p.next_sector == sector
                && p.pages + u64::from(nr_pages) <= BLK_MAX_SEGMENTS
                && p.done > now
            {
                return tok(now, true);
            }
        }
        let limit = self.get_limit(op, kswapd, now);
        let mut ends: Vec<u64> = self.inflight[queue]
            .iter()
            .copied()
            .filter(|&d| d > now)
            .collect();
        if (ends.len() as u64) < u64::from(limit) {
            return tok(now, false);
        }
        ends.sort_unstable();
        // wbt_rqw_done() with no write cache: wake when the writes left are none, or below
        // wb_normal by wb_background / 2; the woken sleeper takes a token below its limit.
        let wake_limit = u64::from(self.wb_normal);
        let half_bg = u64::from(self.wb_background / 2);
        let mut issued = *ends.last().expect("at the limit: something in flight");
        for &t in &ends {
            let left = ends.iter().filter(|&&d| d > t).count() as u64;
            if left > 0 && left >= wake_limit {
                continue;
            }
            if left > 0 && wake_limit - left < half_bg {
                continue;
            }
            if left < u64::from(self.get_limit(op, kswapd, t)) {
                issued = t;
                break;
            }
        }
        self.stats.waits += 1;
        self.stats.wait_ns += issued - now;
        tok(issued, false)
    }

    /// The write of `tok` was issued and completes at `done` (`wbt_track()`; its
    /// `wbt_done()` is the completion).
    pub fn issued(&mut self, tok: Token, done: u64) {
        if tok.merged {
            let p = self
                .plugged
                .as_mut()
                .expect("merged into the plugged request");
            if done > p.done {
                if let Some(e) = self.inflight[p.queue].iter_mut().find(|e| **e == p.done) {
                    *e = done;
                }
                p.done = done;
            }
            p.pages += u64::from(tok.nr_pages);
            p.next_sector += u64::from(tok.nr_pages);
            self.stats.merged += 1;
            return;
        }
        self.advance(tok.issued);
        self.inflight[tok.queue].push(done);
        self.pending
            .push(Reverse((done, done.saturating_sub(tok.issued), false)));
        self.plugged = Some(Plugged {
            at: tok.issued,
            next_sector: tok.sector + u64::from(tok.nr_pages),
            queue: tok.queue,
            pages: u64::from(tok.nr_pages),
            done,
        });
        let n = self.inflight_at(tok.issued);
        self.stats.max_inflight = self.stats.max_inflight.max(n);
        if self.window_end.is_none() {
            self.arm_timer(tok.issued);
        }
    }

    /// A read issued at `now`, completing at `done` (`wbt_wait()` for an untracked read:
    /// `last_issue`; `wbt_issue()`: the oldest outstanding read).
    pub fn read(&mut self, now: u64, done: u64) {
        self.advance(now);
        self.last_issue = Some(self.last_issue.map_or(now, |t| t.max(now)));
        if self.sync_issue.is_none_or(|(_, d)| d <= now) {
            self.sync_issue = Some((now, done));
        }
        self.pending
            .push(Reverse((done, done.saturating_sub(now), true)));
    }

    /// Tracked writes in flight at `t`, over both queues.
    pub fn inflight(&self, t: u64) -> u64 {
        self.inflight_at(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rq_depth_calc_max_depth()` and `calc_wb_limits()` by hand: min(16, qd) at step 0,
    /// 1 + (15 >> step) scaled down, 1 + (15 << -step) up to 3/4 of the queue depth.
    #[test]
    fn limits_at_several_depths_and_steps() {
        let lat = 2_000_000;
        // NVMe preset, queue depth 128: 16 -> (8, 4).
        let mut d = RqDepth::new(128);
        assert_eq!(d.max_depth, 16);
        assert_eq!(calc_wb_limits(lat, d.max_depth), (8, 4));
        // Scale up: 1 + (15 << 1) = 31 -> (16, 8); 1 + (15 << 2) = 61 -> (31, 16);
        // 1 + (15 << 3) = 121 > 96 = 3 * 128 / 4 -> 96 (48, 24), and no further.
        assert!(d.scale_up());
        assert_eq!((d.scale_step, d.max_depth), (-1, 31));
        assert_eq!(calc_wb_limits(lat, d.max_depth), (16, 8));
        assert!(d.scale_up());
        assert_eq!(d.max_depth, 61);
        assert_eq!(calc_wb_limits(lat, d.max_depth), (31, 16));
        assert!(d.scale_up());
        assert_eq!((d.max_depth, d.scaled_max), (96, true));
        assert_eq!(calc_wb_limits(lat, d.max_depth), (48, 24));
        assert!(!d.scale_up());
        // A hard throttle snaps the negative step to 0 (16), then halves: 1 + (15 >> 1) = 8
        // -> (4, 2), 1 + (15 >> 2) = 4 -> (2, 1), 1 + (15 >> 3) = 2 -> (2, 1), 1 -> (1, 1).
        assert!(d.scale_down(true));
        assert_eq!((d.scale_step, d.max_depth), (0, 16));
        assert!(d.scale_down(true));
        assert_eq!(d.max_depth, 8);
        assert_eq!(calc_wb_limits(lat, d.max_depth), (4, 2));
        assert!(d.scale_down(true));
        assert_eq!(d.max_depth, 4);
        assert_eq!(calc_wb_limits(lat, d.max_depth), (2, 1));
        assert!(d.scale_down(true));
        assert_eq!(d.max_depth, 2);
        assert_eq!(calc_wb_limits(lat, d.max_depth), (2, 1));
        assert!(d.scale_down(true));
        assert_eq!(d.max_depth, 1);
        assert_eq!(calc_wb_limits(lat, d.max_depth), (1, 1));
        assert!(!d.scale_down(true), "depth 1 is the floor");

        // SATA SSD, queue depth 32: 16, scaled up to 1 + (15 << 1) = 31 > 24 -> 24 (12, 6).
        let mut s = RqDepth::new(32);
        assert_eq!(s.max_depth, 16);
        assert!(s.scale_up());
        assert_eq!((s.max_depth, s.scaled_max), (24, true));
        assert_eq!(calc_wb_limits(lat, s.max_depth), (12, 6));
        // Queue depth 4: min(16, 4) = 4 -> (2, 1).
        assert_eq!(RqDepth::new(4).max_depth, 4);
        // Queue depth 1 (HDD preset): 2 at step 0 (-> (2, 1)), 1 scaled down.
        // wbt_update_limits() leaves scaled_max false; the first scale-up finds it at max.
        let mut h = RqDepth::new(1);
        assert_eq!((h.max_depth, h.scaled_max), (2, false));
        assert!(h.scale_up());
        assert_eq!((h.scale_step, h.max_depth, h.scaled_max), (-1, 2, true));
        assert!(!h.scale_up());
        assert!(h.scale_down(true));
        assert_eq!((h.scale_step, h.max_depth), (0, 2));
        assert!(h.scale_down(true));
        assert_eq!((h.scale_step, h.max_depth), (1, 1));
        // Throttling off: no limits.
        assert_eq!(calc_wb_limits(0, 16), (0, 0));
    }

    /// Writeback throttling by kernel version: v4.10 for blk-mq devices, v5.0 for SCSI.
    #[test]
    fn wbt_arrives_with_blk_mq() {
        let k = KernelVersion::new;
        assert!(!in_kernel(k(4, 9), "nvme"));
        assert!(in_kernel(k(4, 10), "nvme"));
        assert!(!in_kernel(k(4, 20), "hdd"));
        assert!(in_kernel(k(5, 0), "sata-ssd"));
        assert!(in_kernel(k(6, 18), "hdd"));
    }

    /// `rwb_arm_timer()`: 100 ms, then 100 * 16 / int_sqrt(256 * (step + 1)) ms.
    #[test]
    fn window_shrinks_when_scaled_down() {
        assert_eq!(window_nsec(RWB_WINDOW_NSEC, 0), 100_000_000);
        assert_eq!(window_nsec(RWB_WINDOW_NSEC, -3), 100_000_000);
        // step 1: sqrt(512) = 22 -> 1.6e9 / 22
        assert_eq!(window_nsec(RWB_WINDOW_NSEC, 1), 72_727_272);
        // step 3: sqrt(1024) = 32 -> 50 ms
        assert_eq!(window_nsec(RWB_WINDOW_NSEC, 3), 50_000_000);
        assert_eq!(default_lat_usec(false), 2_000);
        assert_eq!(default_lat_usec(true), 75_000);
    }

    /// `get_limit()`: kswapd and REQ_SYNC get max_depth, REQ_BACKGROUND and writes within
    /// HZ/10 of a read get wb_background, other writes wb_normal.
    #[test]
    fn limit_by_writer_and_recent_reads() {
        let mut w = Wbt::new(128, 2_000);
        assert_eq!(w.get_limit(BioOp::Write, false, 0), 8);
        assert_eq!(w.get_limit(BioOp::Write, true, 0), 16);
        assert_eq!(w.get_limit(BioOp::WriteSync, false, 0), 16);
        assert_eq!(w.get_limit(BioOp::WriteBackground, false, 0), 4);
        w.read(1_000_000, 1_050_000);
        assert_eq!(w.get_limit(BioOp::Write, false, 50_000_000), 4);
        // The read's completion is seen when the policy's clock passes it.
        w.advance(2_000_000);
        assert_eq!(
            w.get_limit(BioOp::Write, false, 101_000_000),
            4,
            "completion + 100 ms"
        );
        assert_eq!(w.get_limit(BioOp::Write, false, 101_050_000), 8);
    }

    /// A direct reclaimer writing 1-page requests to non-adjacent sectors at wb_normal = 8:
    /// the ninth sleeps. With 8 in flight completing at 1..=8 ms, wbt_rqw_done() wakes it
    /// when the writes left are below 8 by wb_background / 2 = 2, i.e. at 6 left: the second
    /// completion (2 ms).
    #[test]
    fn ninth_write_sleeps_until_the_wakeup_rule_lets_it_in() {
        let mut w = Wbt::new(128, 2_000);
        for k in 0..8u64 {
            let t = w.wait(0, BioOp::Write, false, 10 * k, 1);
            assert_eq!(t.issued, 0);
            w.issued(t, (k + 1) * 1_000_000);
        }
        assert_eq!(w.inflight(0), 8);
        let t = w.wait(0, BioOp::Write, false, 1_000, 1);
        assert_eq!(t.issued, 2_000_000);
        assert_eq!((w.stats.waits, w.stats.wait_ns), (1, 2_000_000));
        // kswapd's writes have their own queue and max_depth: not throttled by these.
        let k = w.wait(0, BioOp::Write, true, 2_000, 1);
        assert_eq!(k.issued, 0);
    }

    /// Bios continuing the plugged request at the same instant merge and take no token, up
    /// to BLK_MAX_SEGMENTS pages; the request holds its token until the last part completes.
    #[test]
    fn plugged_bios_merge_up_to_max_segments() {
        let mut w = Wbt::new(128, 2_000);
        for s in 0..200u64 {
            let t = w.wait(0, BioOp::Write, false, s, 1);
            assert_eq!(t.issued, 0);
            w.issued(t, 1_000 + s);
        }
        // 128 pages in the first request, 72 in the second.
        assert_eq!(w.inflight(0), 2);
        assert_eq!(w.stats.merged, 198);
        // The first request completes with its last part (1_127).
        assert_eq!(w.inflight(1_127), 1);
        assert_eq!(w.inflight(1_199), 0);
    }
}
