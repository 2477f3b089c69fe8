//! The CPU scheduler of the simulated machine: which runnable thread (task or kernel thread)
//! runs on which simulated CPU, and when a running thread gives its CPU up.
//!
//! # The idea (EEVDF, v6.6+)
//! Every thread of the model is a nice-0 `SCHED_NORMAL` thread, as tasks and kswapd are in the
//! kernel. EEVDF gives each runnable thread a request of one base slice
//! (`sysctl_sched_base_slice`, 0.75 ms × `1 + ilog2(min(ncpus, 8))`, the
//! `SCHED_TUNABLESCALING_LOG` factor of `get_update_sysctl_factor()`), and picks the eligible
//! thread with the earliest virtual deadline. A woken thread goes to an idle CPU if there is
//! one (`select_idle_sibling()`: its previous CPU when idle, else the next idle one after
//! it); else it waits on a run queue. The running thread keeps its
//! CPU for its whole slice (`RUN_TO_PARITY`: `protect_slice()`), and its deadline is only
//! found passed when `update_curr()` runs: at a scheduler tick (HZ = 250, Debian's
//! `CONFIG_HZ_250`) or when a thread wakes up onto its run queue
//! (`check_preempt_wakeup_fair()` calls `update_curr()` first). Once the deadline has passed,
//! `update_deadline()` gives it a new one a slice later and asks for a reschedule; the woken
//! thread, placed at the queue's average vruntime (deadline one slice after it), then has the
//! earlier (or an equal, and the tree's entry wins ties against `curr`) deadline and runs.
//! So a woken kswapd waits on a busy CPU at most until the next tick after the running
//! thread's slice ends: [`resched_at`].
//!
//! Kernel code runs with voluntary preemption (Debian's `PREEMPT_DYNAMIC` default): a
//! reschedule asked for while a thread is in the kernel takes effect at its next
//! `cond_resched()`. The model's preemption points are the ends of the simulator's steps (one
//! event of a task, one iteration of kswapd's per-priority loop in `balance_pgdat()`, one
//! flusher pass, one kcompactd run) and, inside a task's step, the `cond_resched()` points of
//! reclaim: `shrink_lruvec()` after each round of `SWAP_CLUSTER_MAX` batches,
//! `shrink_node_memcgs()` before each memcg, the multi-gen LRU's `try_to_shrink_lruvec()`
//! after each batch, `__perform_reclaim()` after `try_to_free_pages()`,
//! `shrink_folio_list()` before each folio, and `might_alloc()` before each folio
//! allocation of a readahead window (`refault_mm::Mm::cond_resched`). There, a kswapd
//! woken during the step (or whose nap ended during it) is put on the run queue when no
//! CPU is idle, and when the rules below give it the CPU ([`Sched::horizon`]) it runs its
//! `balance_pgdat()` iterations on the task's CPU until it sleeps or is itself
//! rescheduled; the task's clock moves on by the time it waited, which counts as its
//! run-queue wait (crates/sim/src/machine.rs, `InStep`).
//!
//! # Where we differ from the kernel
//! - One run queue for the whole machine (perfect load balancing) instead of one per CPU
//!   with the load balancer moving threads between them.
//! - Waiting threads are served in the order they became runnable (round robin). EEVDF orders
//!   them by virtual deadline; for nice-0 threads with equal slices placed at zero lag, that
//!   is the same order. Lag kept across a sleep (`PLACE_LAG`), eligibility and
//!   `DELAY_DEQUEUE` are not modelled: every woken thread is placed at zero lag. The kernel
//!   saves a sleeping thread's lag (`update_entity_lag()`: `avg_vruntime() - vruntime`,
//!   clamped to ± max(2 × slice, one tick)) and `place_entity()` gives it back at the
//!   wakeup. A kswapd that wakes owed CPU (positive lag) leaves the task not eligible, so
//!   `pick_eevdf()` returns kswapd and `check_preempt_wakeup_fair()` preempts at once,
//!   `RUN_TO_PARITY` notwithstanding; with negative lag it waits until the task has run
//!   twice that lag more. v6.6 keeps a negative lag across any sleep; v6.12's
//!   `DELAY_DEQUEUE` keeps a sleeper that is not eligible queued until it is picked, and
//!   `DELAY_ZERO` then leaves it zero lag. A prototype with the kernel's bookkeeping brings
//!   v02's direct reclaim to the EEVDF guests' order, but the model's uninterruptible steps
//!   (kswapd's `balance_pgdat()` iteration, a task's event outside reclaim) overrun the
//!   ticks that would preempt them, and the lag rule then charges that back as waits the
//!   kernel cannot have; it needs preemption points inside kswapd's step first
//!   (docs/fidelity.md, session 21).
//! - Outside reclaim and readahead a step cannot be interrupted: a CPU is busy until the
//!   CPU time of the step it runs is spent, so a thread woken during a step waits for its
//!   end. A thread a task's step wakes (`wakeup_kswapd()`, the flusher, kcompactd) is put
//!   on the run queue before the task sleeps on the IO the step started, so the task's
//!   `schedule()` can pick it (`try_to_wake_up()` ran inside the step). Inside a step the
//!   preemption points are also `might_alloc()` before each folio allocation of a readahead
//!   window (`might_sleep()` in the allocator under `PREEMPT_VOLUNTARY`; the window's folios
//!   are locked in the page cache as they are added) and the per-folio `cond_resched()` of
//!   `shrink_folio_list()`, with the batch isolated (session 21). Not modelled:
//!   compaction's.
//! - Inside a step only kswapd preempts: kcompactd and the flusher wait for the step's end.
//!   While kswapd holds the task's CPU no other task runs there, and when kswapd gives it up
//!   the task gets it back before any other waiting thread ([`Sched::hand_back`]): its step
//!   is still running.
//! - Outside the allocator's retries a task's event is one step even when its allocation
//!   retries direct reclaim several times.
//!
//! # Before EEVDF: CFS (`model.kernel` < 6.6)
//! Kernels before v6.6 ("sched/fair: Implement an EEVDF-like scheduling policy") schedule
//! with CFS, and a woken thread does not wait for `curr`'s slice. The model follows v6.1's
//! fair.c there ([`Sched::set_cfs`]): each thread has a `vruntime` (its CPU time: every
//! thread is nice 0) and the run queue a `min_vruntime` (`update_min_vruntime()`: never
//! decreasing, the smallest vruntime of the threads on a CPU or waiting). A woken thread is
//! placed at `max(its vruntime, min_vruntime - sched_latency / 2)` (`place_entity()` with
//! `GENTLE_FAIR_SLEEPERS`), so one that slept while others ran comes back half a latency
//! ahead. `check_preempt_wakeup()` preempts `curr` at once (at its next preemption point)
//! when curr's vruntime is more than `sysctl_sched_wakeup_granularity` ahead of the woken
//! thread's (`wakeup_preempt_entity()`). That sets `TIF_NEED_RESCHED` on that CPU's curr;
//! the switch it causes consumes it and picks the leftmost thread, which need not be the
//! one whose wakeup asked for it, and the others wait for the tick rule (or a new wakeup)
//! against the new curr. Otherwise `check_preempt_tick()` at each tick
//! reschedules once curr ran longer than its ideal slice without a break (`sched_slice()`:
//! `sched_latency`, or `nr_running` × `min_granularity` past `sched_nr_latency` = 8
//! threads, shared equally), or, after at least `min_granularity`, when its vruntime is more
//! than that slice ahead of the leftmost waiting thread's. The next thread is the waiting
//! one with the smallest vruntime (the rbtree's leftmost). Latency 6 ms, minimum granularity
//! 0.75 ms and wakeup granularity 1 ms, each × `1 + ilog2(min(ncpus, 8))`. Not modelled:
//! buddies (`next`/`last`/`skip`), `sched_child_runs_first`, the 2^63 ns sleep reset.
//!
//! # Kernel references
//! kernel/sched/fair.c `get_update_sysctl_factor()`, `update_deadline()`, `update_curr()`,
//! `place_entity()`, `pick_eevdf()`, `protect_slice()`, `check_preempt_wakeup_fair()`,
//! `task_tick_fair()`; kernel/sched/features.h `RUN_TO_PARITY`. v6.1: `place_entity()`,
//! `check_preempt_wakeup()`, `wakeup_preempt_entity()`, `check_preempt_tick()`,
//! `sched_slice()`, `__sched_period()`, `update_min_vruntime()`.

use serde::Serialize;

/// `sysctl_sched_base_slice` before scaling (`normalized_sysctl_sched_base_slice`).
pub const BASE_SLICE_NS: u64 = 750_000;
/// HZ of the kernel the model follows (Debian's `CONFIG_HZ_250`).
pub const HZ: u64 = 250;
/// One scheduler tick.
pub const TICK_NS: u64 = 1_000_000_000 / HZ;

/// `sysctl_sched_base_slice` on a machine with `ncpus` CPUs: the normalized value times
/// `get_update_sysctl_factor()` under `SCHED_TUNABLESCALING_LOG` (the default),
/// `1 + ilog2(min(ncpus, 8))`. Never more than 3 ms, less than a tick at HZ = 250.
pub fn base_slice_ns(ncpus: u32) -> u64 {
    let cpus = ncpus.clamp(1, 8);
    BASE_SLICE_NS * (1 + cpus.ilog2() as u64)
}

/// v6.1 CFS: `sysctl_sched_latency` before scaling.
pub const CFS_LATENCY_NS: u64 = 6_000_000;
/// v6.1 CFS: `sysctl_sched_min_granularity` before scaling.
pub const CFS_MIN_GRANULARITY_NS: u64 = 750_000;
/// v6.1 CFS: `sysctl_sched_wakeup_granularity` before scaling.
pub const CFS_WAKEUP_GRANULARITY_NS: u64 = 1_000_000;
/// v6.1 CFS: `sched_nr_latency`.
pub const CFS_NR_LATENCY: u64 = 8;

/// `get_update_sysctl_factor()` under `SCHED_TUNABLESCALING_LOG`: `1 + ilog2(min(ncpus, 8))`.
fn sysctl_factor(ncpus: u32) -> u64 {
    1 + ncpus.clamp(1, 8).ilog2() as u64
}

/// v6.1's `check_preempt_tick()` for a thread that got its CPU at `start` with vruntime
/// `v_start` and has run since without a break, against the leftmost waiting thread
/// (vruntime `left_v`, waiting since `arrival`), with `nr_running` threads on the run queue
/// (curr included): the first tick at or after `arrival` at which it is rescheduled.
pub fn cfs_tick_resched_at(
    start: u64,
    v_start: u64,
    left_v: u64,
    arrival: u64,
    nr_running: u64,
    factor: u64,
) -> u64 {
    let latency = CFS_LATENCY_NS * factor;
    let min_gran = CFS_MIN_GRANULARITY_NS * factor;
    let nr = nr_running.max(1);
    // __sched_period() / nr_running: equal weights.
    let period = if nr > CFS_NR_LATENCY {
        nr * min_gran
    } else {
        latency
    };
    let ideal = period / nr;
    let mut t = tick_at_or_after(arrival.max(start));
    loop {
        let delta_exec = t - start;
        if delta_exec > ideal {
            return t;
        }
        if delta_exec >= min_gran && (v_start + delta_exec).saturating_sub(left_v) > ideal {
            return t;
        }
        t += TICK_NS;
    }
}

/// The first tick at or after `t`.
fn tick_at_or_after(t: u64) -> u64 {
    t.div_ceil(TICK_NS) * TICK_NS
}

/// When a thread that has run without a break since `start`, with slices of `slice` ns, is
/// told to reschedule because a thread woke up onto its run queue at `arrival`.
///
/// Its first deadline is `start + slice`. `update_curr()` runs at every tick and at the
/// wakeup; each time it finds the deadline passed, `update_deadline()` sets the next one a
/// slice after that moment and asks for a reschedule. A reschedule asked for before the
/// wakeup found nobody else to run. So: if the deadline in force at `arrival` has passed, the
/// wakeup itself reschedules (at `arrival`); else the next tick at or after that deadline
/// does. Requires `slice <= TICK_NS` (true of [`base_slice_ns`] at HZ = 250): then each tick
/// after the first renewal renews again.
pub fn resched_at(start: u64, slice: u64, arrival: u64) -> u64 {
    debug_assert!(slice <= TICK_NS);
    let d0 = start + slice;
    if arrival < d0 {
        return tick_at_or_after(d0);
    }
    // The deadline in force at `arrival`: d0 until the first tick at or after it, then a
    // slice after the last tick at or before `arrival`.
    let first = tick_at_or_after(d0);
    let deadline = if arrival < first {
        d0
    } else {
        arrival / TICK_NS * TICK_NS + slice
    };
    if arrival >= deadline {
        arrival
    } else {
        tick_at_or_after(deadline)
    }
}

/// No thread.
pub const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Cpu {
    /// When the step running on it ends.
    free_at: u64,
    /// The thread that has it (running, continuing without a break, or reserved for a thread
    /// woken while the CPU's last step was still running); NONE = idle.
    curr: u32,
    /// When `curr` got it (the start of its slice).
    start: u64,
    /// CFS: curr's vruntime when it got the CPU.
    v_start: u64,
}

/// Per-thread scheduler statistics (`/proc/PID/schedstat`: time on a CPU, time waiting on a
/// run queue, and how often it waited).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ThreadStats {
    pub cpu_ns: u64,
    pub wait_ns: u64,
    /// Times it became runnable and found no CPU free (`nr_wakeups` that waited, plus
    /// preemptions).
    pub nr_waits: u64,
    /// Times it lost its CPU to a waiting thread while still runnable (involuntary context
    /// switches, `nr_involuntary_switches`).
    pub nr_preempted: u64,
    /// Longest single wait.
    pub max_wait_ns: u64,
    /// Spinning on a held `lru_lock` (part of `cpu_ns`; refault_mm::lrulock).
    pub lock_wait_ns: u64,
}

/// A thread on the run queue. Ordered by `key` (CFS: its vruntime; EEVDF: 0, first come
/// first served), then by `seq`, its place in queue order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Waiter {
    key: u64,
    seq: u64,
    th: u32,
    /// When it started waiting.
    arrival: u64,
}

/// The machine's CPUs and run queue.
pub struct Sched {
    cpus: Vec<Cpu>,
    /// Waiting threads, with the time each became runnable, as a min-heap in the order they
    /// get a CPU ([`Waiter`]): O(log n) to pick the next one among the dozens of threads of
    /// an oversubscribed machine.
    rq: std::collections::BinaryHeap<std::cmp::Reverse<Waiter>>,
    /// Waiters queued so far: each one's position in queue order.
    rq_seq: u64,
    /// CPU of each thread, or NONE.
    on_cpu: Vec<u32>,
    /// The CPU each thread last ran on (`task_cpu()`, kept across sleeps), or NONE before
    /// it first ran: `select_idle_sibling()`'s `prev`.
    prev_cpu: Vec<u32>,
    queued: Vec<bool>,
    pub stats: Vec<ThreadStats>,
    pub slice_ns: u64,
    /// v6.1's CFS instead of EEVDF ([`Sched::set_cfs`]).
    cfs: bool,
    /// CFS: each thread's vruntime (its CPU time, placed on wakeup).
    vruntime: Vec<u64>,
    /// CFS: the run queue's `min_vruntime`.
    min_vruntime: u64,
    /// CFS: the CPU whose `curr` the waiting thread preempts at its arrival
    /// (`check_preempt_wakeup()` set `TIF_NEED_RESCHED` there), or NONE. Consumed by the
    /// next switch on that CPU (`__schedule()` clears the flag and picks the leftmost
    /// thread, which need not be this one).
    wake_preempt: Vec<u32>,
    /// `get_update_sysctl_factor()`.
    factor: u64,
    /// Bumped whenever a CPU changes hands ([`Sched::generation`]).
    generation: u64,
    /// CPUs without a thread, kept as `curr` changes so that [`Sched::has_idle_cpu`], asked
    /// at every `cond_resched()` point of reclaim, need not scan the CPUs.
    nr_idle: usize,
}

impl Sched {
    pub fn new(ncpus: u32, nthreads: usize) -> Sched {
        let n = ncpus.max(1);
        Sched {
            cpus: vec![
                Cpu {
                    free_at: 0,
                    curr: NONE,
                    start: 0,
                    v_start: 0,
                };
                n as usize
            ],
            rq: Default::default(),
            rq_seq: 0,
            on_cpu: vec![NONE; nthreads],
            prev_cpu: vec![NONE; nthreads],
            queued: vec![false; nthreads],
            stats: vec![ThreadStats::default(); nthreads],
            slice_ns: base_slice_ns(n),
            cfs: false,
            vruntime: vec![0; nthreads],
            min_vruntime: 0,
            wake_preempt: vec![NONE; nthreads],
            factor: sysctl_factor(n),
            generation: 0,
            nr_idle: n as usize,
        }
    }

    /// Schedule as v6.1's CFS does (kernels before v6.6's EEVDF; `model.kernel`), see the
    /// module doc.
    pub fn set_cfs(&mut self, cfs: bool) {
        debug_assert!(
            self.rq.is_empty(),
            "the run queue's order is set before it fills"
        );
        self.cfs = cfs;
    }

    /// CFS `update_min_vruntime()`: the smallest vruntime of the threads on a CPU or
    /// waiting, never moving back.
    fn update_min_vruntime(&mut self) {
        let on_cpu = self.cpus.iter().filter(|c| c.curr != NONE).map(|c| c.curr);
        // The heap's first waiter has the smallest vruntime of those waiting.
        let waiting = self.next_waiter().map(|w| w.key);
        if let Some(m) = on_cpu
            .map(|th| self.vruntime[th as usize])
            .chain(waiting)
            .min()
        {
            self.min_vruntime = self.min_vruntime.max(m);
        }
    }

    /// The run queue entry that gets the next free CPU: the first (EEVDF, equal slices) or
    /// the smallest vruntime (CFS: the rbtree's leftmost; ties in queue order).
    #[inline]
    fn next_waiter(&self) -> Option<&Waiter> {
        self.rq.peek().map(|w| &w.0)
    }

    /// `th` waits on the run queue from `arrival`. A waiting thread's vruntime does not
    /// change until it gets a CPU, so its place in the heap holds.
    fn push_waiter(&mut self, th: u32, arrival: u64) {
        let key = if self.cfs {
            self.vruntime[th as usize]
        } else {
            0
        };
        self.rq.push(std::cmp::Reverse(Waiter {
            key,
            seq: self.rq_seq,
            th,
            arrival,
        }));
        self.rq_seq += 1;
    }

    fn pop_waiter(&mut self) -> Option<(u32, u64)> {
        let w = self.rq.pop()?.0;
        self.wake_preempt[w.th as usize] = NONE;
        Some((w.th, w.arrival))
    }

    /// Changes whenever a CPU gets a new thread or goes idle: the model's copy of the
    /// assignment ([`Sched::curr`]) is stale when it differs from the one it was taken at.
    #[inline]
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// The thread CPU `c` runs (or is reserved for), None when idle.
    #[inline]
    pub fn curr(&self, c: usize) -> Option<u32> {
        let th = self.cpus[c].curr;
        (th != NONE).then_some(th)
    }

    /// The CPU `th` holds, if any.
    #[inline]
    pub fn cpu_of(&self, th: u32) -> Option<usize> {
        let c = self.on_cpu[th as usize];
        (c != NONE).then_some(c as usize)
    }

    /// Neither on a CPU nor waiting for one: sleeping (or not started, or finished).
    #[inline]
    pub fn is_sleeping(&self, th: u32) -> bool {
        self.on_cpu[th as usize] == NONE && !self.queued[th as usize]
    }

    fn record_wait(&mut self, th: u32, ns: u64) {
        let s = &mut self.stats[th as usize];
        s.wait_ns += ns;
        s.max_wait_ns = s.max_wait_ns.max(ns);
        if ns > 0 {
            s.nr_waits += 1;
        }
    }

    fn give(&mut self, c: usize, th: u32, at: u64) {
        // The switch consumes the reschedule a wakeup asked of this CPU.
        for r in &self.rq {
            let w = r.0.th as usize;
            if self.wake_preempt[w] == c as u32 {
                self.wake_preempt[w] = NONE;
            }
        }
        if self.cpus[c].curr == NONE {
            self.nr_idle -= 1;
        }
        self.cpus[c].curr = th;
        self.generation += 1;
        self.cpus[c].start = at;
        self.cpus[c].v_start = self.vruntime[th as usize];
        self.on_cpu[th as usize] = c as u32;
        self.prev_cpu[th as usize] = c as u32;
    }

    /// `th` becomes runnable at `t` (`try_to_wake_up()`): it takes an idle CPU (its previous
    /// one if idle, [`Sched::select_idle_cpu`]; it waits there for the end of a step still
    /// running past `t`) and returns when
    /// it runs, or finds every CPU taken and waits on the run queue from `arrival` (>= `t`:
    /// the end of the step that woke it, when that ends after `t`) (None).
    pub fn wake(&mut self, th: u32, t: u64, arrival: u64) -> Option<u64> {
        debug_assert!(self.is_sleeping(th));
        if self.cfs {
            // place_entity() for a wakeup (GENTLE_FAIR_SLEEPERS).
            self.update_min_vruntime();
            let floor = self
                .min_vruntime
                .saturating_sub(CFS_LATENCY_NS * self.factor / 2);
            let v = &mut self.vruntime[th as usize];
            *v = (*v).max(floor);
        }
        let idle = self.select_idle_cpu(th, t);
        match idle {
            Some(c) => {
                let at = self.cpus[c].free_at.max(t);
                self.record_wait(th, at - t);
                self.give(c, th, at);
                Some(at)
            }
            None => {
                if self.cfs {
                    // check_preempt_wakeup(): wakeup_preempt_entity() against a curr (the
                    // one furthest ahead).
                    let v = self.vruntime[th as usize];
                    let gran = CFS_WAKEUP_GRANULARITY_NS * self.factor;
                    self.wake_preempt[th as usize] = (0..self.cpus.len())
                        .filter(|&c| self.vruntime[self.cpus[c].curr as usize] > v + gran)
                        .max_by_key(|&c| (self.vruntime[self.cpus[c].curr as usize], c))
                        .map_or(NONE, |c| c as u32);
                }
                self.queued[th as usize] = true;
                self.push_waiter(th, arrival);
                None
            }
        }
    }

    /// The idle CPU a thread woken at `t` takes (`select_task_rq_fair()` for a wakeup):
    /// its previous CPU if that is idle (`wake_affine_idle()` and `select_idle_sibling()`
    /// both return `prev` when `available_idle_cpu(prev)`), else the first idle CPU after it
    /// in CPU order, wrapping (`select_idle_cpu()`'s `for_each_cpu_wrap(cpu, cpus, target +
    /// 1)` over the last-level cache, which is the whole machine here). A CPU is idle at `t`
    /// when it has no thread and its last step has ended by `t`. When none is, the CPU that
    /// frees first (a step ending past `t`; the thread waits there for its end).
    ///
    /// Simplified: `target` is always `prev` (the kernel's `wake_affine()` may pick the
    /// waker's CPU instead when `prev` is busy: the model does not know the waker's CPU),
    /// `SIS_UTIL` does not cut the scan short, and `recent_used_cpu` is not kept. A thread
    /// that never ran starts the scan at CPU 0.
    fn select_idle_cpu(&self, th: u32, t: u64) -> Option<usize> {
        let n = self.cpus.len();
        let prev = self.prev_cpu[th as usize];
        let start = if prev == NONE { 0 } else { prev as usize };
        let idle_at = |c: usize| self.cpus[c].curr == NONE && self.cpus[c].free_at <= t;
        (0..n)
            .map(|i| (start + i) % n)
            .find(|&c| idle_at(c))
            .or_else(|| {
                (0..n)
                    .filter(|&c| self.cpus[c].curr == NONE)
                    .min_by_key(|&c| (self.cpus[c].free_at, c))
            })
    }

    /// Some thread waits for a CPU.
    #[inline]
    pub fn has_waiters(&self) -> bool {
        !self.rq.is_empty()
    }

    /// The waiting thread that gets the next CPU given up ([`Sched::horizon`] is its time).
    #[inline]
    pub fn first_waiter(&self) -> Option<u32> {
        self.next_waiter().map(|w| w.th)
    }

    /// Some CPU has no thread (a wakeup would take it rather than wait).
    #[inline]
    pub fn has_idle_cpu(&self) -> bool {
        debug_assert_eq!(
            self.nr_idle,
            self.cpus.iter().filter(|c| c.curr == NONE).count()
        );
        self.nr_idle > 0
    }

    /// The kernel thread on CPU `c`, which took it from `th` at a `cond_resched()` point
    /// inside `th`'s step, gives it up at `at` (to the run queue if still `runnable`, else
    /// asleep), and `th` gets it back whatever else waits: its step is still running
    /// (the module doc, "Where we differ").
    pub fn hand_back(&mut self, c: usize, th: u32, at: u64, runnable: bool) {
        let curr = self.cpus[c].curr;
        debug_assert!(curr != NONE && curr != th && self.queued[th as usize]);
        self.on_cpu[curr as usize] = NONE;
        self.cpus[c].free_at = self.cpus[c].free_at.max(at);
        if runnable {
            self.stats[curr as usize].nr_preempted += 1;
            self.queued[curr as usize] = true;
            self.push_waiter(curr, at);
        }
        let mut since = at;
        self.rq.retain(|w| {
            if w.0.th == th {
                since = w.0.arrival;
                false
            } else {
                true
            }
        });
        self.queued[th as usize] = false;
        self.wake_preempt[th as usize] = NONE;
        self.record_wait(th, at - since);
        self.give(c, th, at);
    }

    /// The thread on CPU `c` slept and woke at `t` without another thread running there in
    /// between: its slice starts again at `t` (`place_entity()` gives it a new deadline).
    pub fn restart_slice(&mut self, c: usize, t: u64) {
        self.cpus[c].start = t;
        self.cpus[c].v_start = self.vruntime[self.cpus[c].curr as usize];
    }

    /// Until when the thread on CPU `c` may run on without passing a preemption point that
    /// would give the CPU away (u64::MAX while nobody waits).
    #[inline]
    pub fn horizon(&self, c: usize) -> u64 {
        let Some(&Waiter { th, arrival, .. }) = self.next_waiter() else {
            return u64::MAX;
        };
        if !self.cfs {
            return resched_at(self.cpus[c].start, self.slice_ns, arrival);
        }
        if self.wake_preempt[th as usize] == c as u32 {
            return arrival;
        }
        let cpu = &self.cpus[c];
        cfs_tick_resched_at(
            cpu.start,
            cpu.v_start,
            self.vruntime[th as usize],
            arrival,
            1 + self.rq.len() as u64,
            self.factor,
        )
    }

    /// The thread on CPU `c`, at a preemption point at `t` and still runnable: if a waiting
    /// thread is due to run, `curr` goes to the back of the run queue and the first waiting
    /// thread gets the CPU at `t` (returned).
    pub fn preempt_point(&mut self, c: usize, t: u64) -> Option<u32> {
        self.preempt_point_or_horizon(c, t).err()
    }

    /// [`Sched::preempt_point`], returning instead [`Sched::horizon`] (computed once for
    /// both) when curr runs on: Ok(horizon), or Err(the thread that got the CPU).
    pub fn preempt_point_or_horizon(&mut self, c: usize, t: u64) -> Result<u64, u32> {
        let horizon = self.horizon(c);
        if t < horizon {
            return Ok(horizon);
        }
        let curr = self.cpus[c].curr;
        let (next, since) = self.pop_waiter().expect("a waiting thread");
        self.queued[next as usize] = false;
        self.on_cpu[curr as usize] = NONE;
        self.stats[curr as usize].nr_preempted += 1;
        self.queued[curr as usize] = true;
        self.push_waiter(curr, t);
        self.record_wait(next, t - since);
        self.give(c, next, t);
        Err(next)
    }

    /// The thread on CPU `c` ran a step until `end` that cost it `cpu_ns`.
    #[inline]
    pub fn ran(&mut self, c: usize, end: u64, cpu_ns: u64) {
        let th = self.cpus[c].curr;
        self.stats[th as usize].cpu_ns += cpu_ns;
        self.vruntime[th as usize] += cpu_ns;
        self.cpus[c].free_at = end;
    }

    /// The thread on CPU `c` blocks (or finishes) when its step ends: the first waiting
    /// thread, if any, gets the CPU then (returned with that time).
    pub fn block(&mut self, c: usize) -> Option<(u32, u64)> {
        let curr = self.cpus[c].curr;
        debug_assert!(curr != NONE, "CPU {c} blocks without a thread");
        self.on_cpu[curr as usize] = NONE;
        self.cpus[c].curr = NONE;
        self.nr_idle += 1;
        self.generation += 1;
        let at = self.cpus[c].free_at;
        let (next, since) = self.pop_waiter()?;
        self.queued[next as usize] = false;
        self.record_wait(next, at.saturating_sub(since));
        self.give(c, next, at);
        Some((next, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_slice_scales_with_log2_of_cpus_up_to_eight() {
        // 0.75 ms × (1 + ilog2(n)), n capped at 8.
        assert_eq!(base_slice_ns(1), 750_000);
        assert_eq!(base_slice_ns(2), 1_500_000);
        assert_eq!(base_slice_ns(3), 1_500_000);
        assert_eq!(base_slice_ns(4), 2_250_000);
        assert_eq!(base_slice_ns(7), 2_250_000);
        assert_eq!(base_slice_ns(8), 3_000_000);
        assert_eq!(base_slice_ns(64), 3_000_000);
        assert_eq!(base_slice_ns(0), 750_000);
    }

    #[test]
    fn wakeup_before_the_slice_ends_waits_for_the_tick_after_it() {
        // curr got the CPU at 1 ms; slice 0.75 ms: deadline 1.75 ms, first tick after it 4 ms.
        assert_eq!(resched_at(1_000_000, 750_000, 1_200_000), 4_000_000);
        // A slice ending exactly on a tick: that tick.
        assert_eq!(resched_at(3_250_000, 750_000, 3_500_000), 4_000_000);
    }

    #[test]
    fn wakeup_after_the_deadline_preempts_at_once() {
        // Deadline 1.75 ms passed, no tick since: the wakeup's update_curr() finds it.
        assert_eq!(resched_at(1_000_000, 750_000, 2_000_000), 2_000_000);
        // The 4 ms tick renewed the deadline to 4.75 ms; a wakeup at 5 ms is past it.
        assert_eq!(resched_at(1_000_000, 750_000, 5_000_000), 5_000_000);
    }

    #[test]
    fn wakeup_within_a_renewed_slice_waits_for_the_next_tick() {
        // Renewed at the 8 ms tick to 8.75 ms; a wakeup at 8.5 ms waits for the 12 ms tick.
        assert_eq!(resched_at(1_000_000, 750_000, 8_500_000), 12_000_000);
        // Two CPUs (1.5 ms slices): renewed at 4 ms to 5.5 ms; wakeup at 5 ms -> 8 ms tick.
        assert_eq!(resched_at(0, 1_500_000, 5_000_000), 8_000_000);
        assert_eq!(resched_at(0, 1_500_000, 5_600_000), 5_600_000);
    }

    #[test]
    fn woken_thread_takes_an_idle_cpu_else_waits_its_turn() {
        let mut s = Sched::new(1, 3);
        assert_eq!(s.wake(0, 0, 0), Some(0));
        assert_eq!(s.cpu_of(0), Some(0));
        s.ran(0, 100_000, 100_000);
        // Thread 1 wakes at 0.1 ms: no idle CPU.
        assert_eq!(s.wake(1, 100_000, 100_000), None);
        assert!(!s.is_sleeping(1));
        // Thread 0 keeps its slice: 0.75 ms ends at 0.75 ms, found at the 4 ms tick.
        assert_eq!(s.horizon(0), 4_000_000);
        assert_eq!(s.preempt_point(0, 3_999_999), None);
        assert_eq!(s.preempt_point(0, 4_000_000), Some(1));
        assert_eq!(s.cpu_of(1), Some(0));
        assert_eq!(s.cpu_of(0), None);
        assert_eq!(s.stats[1].wait_ns, 3_900_000);
        assert_eq!(s.stats[0].nr_preempted, 1);
        // Thread 1 blocks at 4.5 ms: thread 0 gets the CPU back then.
        s.ran(0, 4_500_000, 500_000);
        assert_eq!(s.block(0), Some((0, 4_500_000)));
        assert_eq!(s.stats[0].wait_ns, 500_000);
        // A wakeup onto the CPU still finishing a blocked thread's step waits for its end.
        s.ran(0, 5_000_000, 500_000);
        assert_eq!(s.block(0), None);
        assert_eq!(s.wake(2, 4_800_000, 4_800_000), Some(5_000_000));
        assert_eq!(s.stats[2].wait_ns, 200_000);
        assert_eq!(s.stats[1].cpu_ns, 500_000);
    }

    /// A woken thread takes its previous CPU when that is idle (`select_idle_sibling()`'s
    /// `prev`), else the first idle CPU after it, wrapping; not the CPU idle longest.
    #[test]
    fn woken_thread_takes_its_previous_cpu_when_idle() {
        let mut s = Sched::new(4, 4);
        // Threads 0, 1, 2 wake at 0 on CPUs 0, 1, 2 (never ran: the scan starts at CPU 0).
        assert_eq!(s.wake(0, 0, 0), Some(0));
        assert_eq!(s.wake(1, 0, 0), Some(0));
        assert_eq!(s.wake(2, 0, 0), Some(0));
        assert_eq!(
            (s.cpu_of(0), s.cpu_of(1), s.cpu_of(2)),
            (Some(0), Some(1), Some(2))
        );
        // Thread 2 sleeps at 1 ms; thread 0 at 2 ms. CPUs 0, 2 and 3 are idle, CPU 3 longest.
        s.ran(2, 1_000_000, 1_000_000);
        assert_eq!(s.block(2), None);
        s.ran(0, 2_000_000, 2_000_000);
        assert_eq!(s.block(0), None);
        // Thread 2 wakes at 3 ms: back on CPU 2, not CPU 3 (idle since 0) or CPU 0.
        assert_eq!(s.wake(2, 3_000_000, 3_000_000), Some(3_000_000));
        assert_eq!(s.cpu_of(2), Some(2));
        // Thread 3 never ran: the first idle CPU from CPU 0.
        assert_eq!(s.wake(3, 3_000_000, 3_000_000), Some(3_000_000));
        assert_eq!(s.cpu_of(3), Some(0));
        // Thread 0 wakes with its CPU taken: the first idle CPU after CPU 0 is CPU 3.
        assert_eq!(s.wake(0, 3_500_000, 3_500_000), Some(3_500_000));
        assert_eq!(s.cpu_of(0), Some(3));
    }

    /// A kernel thread that took a task's CPU at a `cond_resched()` point inside the task's
    /// step gives it back to that task, even when another thread waits first.
    #[test]
    fn kernel_thread_hands_the_cpu_back_to_the_task_it_preempted() {
        let mut s = Sched::new(1, 3);
        assert_eq!(s.wake(0, 0, 0), Some(0));
        s.ran(0, 5_000_000, 5_000_000);
        // Thread 1 (kswapd) woke at 1 ms, thread 2 at 2 ms; the 4 ms tick found thread 0's
        // slice used up: at its preemption point at 5 ms thread 1 takes the CPU.
        assert_eq!(s.wake(1, 1_000_000, 1_000_000), None);
        assert_eq!(s.wake(2, 2_000_000, 2_000_000), None);
        assert_eq!(s.first_waiter(), Some(1));
        assert!(!s.has_idle_cpu());
        assert_eq!(s.preempt_point(0, 5_000_000), Some(1));
        s.ran(0, 5_300_000, 300_000);
        // Thread 1 is preempted in turn at 5.3 ms: thread 0 runs again, not thread 2.
        s.hand_back(0, 0, 5_300_000, true);
        assert_eq!(s.cpu_of(0), Some(0));
        assert_eq!(s.cpu_of(1), None);
        assert!(!s.is_sleeping(1) && !s.is_sleeping(2));
        assert_eq!(s.stats[0].wait_ns, 300_000);
        assert_eq!(s.stats[1].wait_ns, 4_000_000);
        assert_eq!(s.stats[1].nr_preempted, 1);
        assert_eq!(s.stats[0].nr_preempted, 1);
        // Thread 2 is next, then thread 1.
        s.ran(0, 6_000_000, 700_000);
        assert_eq!(s.block(0), Some((2, 6_000_000)));
        // A kernel thread that sleeps when it hands back does not wait.
        let mut s = Sched::new(1, 2);
        assert_eq!(s.wake(0, 0, 0), Some(0));
        s.ran(0, 5_000_000, 5_000_000);
        assert_eq!(s.wake(1, 1_000_000, 1_000_000), None);
        assert_eq!(s.preempt_point(0, 5_000_000), Some(1));
        s.hand_back(0, 0, 5_100_000, false);
        assert!(s.is_sleeping(1));
        assert!(!s.has_waiters());
    }

    /// v6.1 `check_preempt_tick()` on one CPU (latency 6 ms, two threads: ideal slice 3 ms):
    /// curr is rescheduled at the first tick where it has run more than 3 ms without a
    /// break, or (after 0.75 ms) where its vruntime is more than 3 ms ahead of the waiter's.
    #[test]
    fn cfs_tick_reschedules_after_the_ideal_slice() {
        const MS: u64 = 1_000_000;
        // Equal vruntimes: 4 ms tick, ran 3 ms (not more): on; 8 ms tick, ran 7 ms: off.
        assert_eq!(
            cfs_tick_resched_at(MS, 10 * MS, 10 * MS, MS + MS / 5, 2, 1),
            8 * MS
        );
        // The waiter 2 ms behind: at the 4 ms tick curr is 3 + 2 = 5 ms ahead.
        assert_eq!(
            cfs_tick_resched_at(MS, 10 * MS, 8 * MS, MS + MS / 5, 2, 1),
            4 * MS
        );
        // Nine threads: period 9 × 0.75 ms, slice 0.75 ms: the first tick after 0.75 ms.
        assert_eq!(cfs_tick_resched_at(0, 0, 0, 0, 9, 1), 4 * MS);
        // Two CPUs scale latency and granularities by 2: ideal 6 ms, 8 ms tick.
        assert_eq!(cfs_tick_resched_at(0, 5 * MS, 5 * MS, MS, 2, 2), 8 * MS);
    }

    /// v6.1 CFS: the reschedule a wakeup asks of `curr` (`check_preempt_wakeup()`: its
    /// `TIF_NEED_RESCHED`) is consumed by the switch it causes, which picks the leftmost
    /// thread. kswapd (vruntime 7 ms) and a reader (7.5 ms) both wake while a hot task
    /// (10 ms) runs: both are more than the 1 ms granularity behind it, the switch gives the
    /// CPU to kswapd, and the reader does not preempt kswapd at once (it is ahead of kswapd);
    /// it waits for the tick rule. (The model kept the reader's wakeup preemption armed
    /// against whichever thread held the CPU next, and kswapd lost the CPU before its first
    /// step.)
    #[test]
    fn cfs_wakeup_reschedule_is_consumed_by_the_switch() {
        const MS: u64 = 1_000_000;
        let mut s = Sched::new(1, 3);
        s.set_cfs(true);
        assert_eq!(s.wake(0, 0, 0), Some(0));
        s.ran(0, 10 * MS, 10 * MS);
        assert_eq!(s.wake(1, 10 * MS, 10 * MS), None);
        assert_eq!(s.vruntime[1], 7 * MS);
        s.vruntime[2] = 7 * MS + MS / 2;
        assert_eq!(s.wake(2, 10 * MS, 10 * MS), None);
        assert_eq!(s.horizon(0), 10 * MS);
        assert_eq!(s.preempt_point(0, 10 * MS), Some(1));
        // kswapd, 0.5 ms behind the reader, runs on to the tick rule: at the 12 ms tick it
        // ran 2 ms (not more than the 2 ms ideal slice of three threads).
        assert_eq!(s.horizon(0), 16 * MS);
    }

    /// v6.1 CFS: a thread woken after sleeping while another ran is placed half a latency
    /// (3 ms) before `min_vruntime` and preempts curr at once (`check_preempt_wakeup()`),
    /// where EEVDF keeps curr to the tick after its slice; a thread that slept only briefly
    /// (vruntime within the 1 ms wakeup granularity of curr's) waits for the tick.
    #[test]
    fn cfs_wakeup_preempts_a_thread_that_ran_while_it_slept() {
        const MS: u64 = 1_000_000;
        let woken = |cfs: bool| {
            let mut s = Sched::new(1, 2);
            s.set_cfs(cfs);
            assert_eq!(s.wake(0, 0, 0), Some(0));
            s.ran(0, 10 * MS, 10 * MS);
            // Thread 0 slept on IO and woke at 9.8 ms within its step: a new slice.
            s.restart_slice(0, 9 * MS + 8 * MS / 10);
            assert_eq!(s.wake(1, 10 * MS, 10 * MS), None);
            s
        };
        let mut cfs = woken(true);
        assert_eq!(cfs.vruntime[1], 7 * MS, "min_vruntime 10 ms - latency / 2");
        assert_eq!(cfs.horizon(0), 10 * MS);
        assert_eq!(cfs.preempt_point(0, 10 * MS), Some(1));
        // EEVDF: deadline 10.55 ms, found at the 12 ms tick.
        assert_eq!(woken(false).horizon(0), 12 * MS);

        // Thread 1 ran 9.5 ms before thread 0 ran 0.5 ms: its vruntime is ahead, no
        // wakeup preemption; thread 0 is rescheduled at the 16 ms tick (ran 6.5 ms > 3 ms).
        let mut s = Sched::new(1, 2);
        s.set_cfs(true);
        assert_eq!(s.wake(1, 0, 0), Some(0));
        s.ran(0, 9 * MS + MS / 2, 9 * MS + MS / 2);
        assert_eq!(s.block(0), None);
        assert_eq!(
            s.wake(0, 9 * MS + MS / 2, 9 * MS + MS / 2),
            Some(9 * MS + MS / 2)
        );
        s.ran(0, 10 * MS, MS / 2);
        assert_eq!(s.wake(1, 10 * MS, 10 * MS), None);
        assert_eq!(s.vruntime[1], 9 * MS + MS / 2);
        assert_eq!(s.horizon(0), 16 * MS);
    }
}
