//! The simulated machine: one clock, simulated CPUs shared by the tasks and the kernel threads
//! (kswapd, the flusher), block devices, and the model.
//!
//! # Scheduling
//! Every thread has a ready time. The loop repeatedly takes the thread with the earliest
//! ready time (ties: lowest thread id, so runs are deterministic) and runs one step: one
//! event of a task, one iteration of kswapd's balance_pgdat(), or one flusher pass. A step
//! costs CPU time (from the cost table and the model's reclaim work) and may block the thread
//! until an IO completes. Which thread has which CPU is `crate::sched`'s (EEVDF): a woken
//! thread takes an idle CPU or waits on the run queue; a thread still runnable after a step
//! keeps its CPU until its slice is found used up (at a tick, or at a wakeup) while another
//! waits, and a thread that blocks hands its CPU to the first waiting one. Step ends are the
//! preemption points (`cond_resched()`), and so are reclaim's `cond_resched()` points inside
//! a task's step, where a woken kswapd may take the task's CPU ([`InStep`]). A task keeps
//! running without a scheduler round trip while its next ready time stays before every other
//! thread's and before the end of its slice when a thread waits, which is what makes
//! hit-heavy streams cheap to simulate.
//!
//! Direct reclaim, direct compaction and memcg limit reclaim run inside the allocating task's
//! step, charging it their CPU time (and the time kswapd held its CPU there as run-queue
//! wait); kswapd runs as its own thread, woken by allocations below the low watermark, and
//! naps HZ/10 after balancing (`kswapd_try_to_sleep()`), counting
//! `kswapd_{low,high}_wmark_hit_quickly` when it is needed again within the nap. kcompactd is
//! a third kernel thread: woken by kswapd going to sleep (or by allocations that cannot
//! reclaim), it runs `kcompactd_do_work()` as one step; its 500 ms timer runs proactive
//! compaction. The time each is awake is measured from its wakeup to its sleep.

use crate::block::{BlockDevice, IoOrigin, ReqOp, Request};
use crate::hist::Histogram;
use crate::ready::Ready;
use crate::result::*;
use crate::sched::Sched;
use refault_mm::kswapd::KswapdNext;
use refault_mm::{BioOp, Ctx, Io, Mm, Submitted};
use refault_scenario::Scenario;
use refault_workload::{EventSource, Hint, Op, TaskSource};

/// The devices as the model's IO backend.
pub struct Devices {
    pub devs: Vec<BlockDevice>,
}

impl Io for Devices {
    fn submit(
        &mut self,
        dev: u32,
        now: u64,
        op: BioOp,
        kswapd: bool,
        sector: u64,
        nr_pages: u32,
    ) -> Submitted {
        let write = op.is_write();
        let rq = Request {
            op: if write { ReqOp::Write } else { ReqOp::Read },
            sector,
            nr_pages,
            sync: !write,
            origin: IoOrigin::File,
        };
        let d = &mut self.devs[dev as usize];
        let (issued, done) = d.submit_bio(now, &rq, op, kswapd);
        Submitted {
            issued,
            done,
            cpu_ns: d.submit_cpu_ns(&rq),
        }
    }
}

/// Options of one run.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Check the model's invariants every N events (0 = scenario's `model.check_interval`).
    pub check_every: u64,
    /// Called now and then with the fraction done (0..=1).
    pub progress: Option<&'a mut dyn FnMut(f64)>,
    /// Called with (task instance index, op) for every event the simulation consumes, in
    /// simulated-time order (the live-kernel twin's conformance test compares this with the
    /// executor's record).
    pub trace: Option<&'a mut dyn FnMut(u32, Op)>,
}

/// Why a run stopped early.
#[derive(Debug)]
pub enum SimError {
    Invariant {
        event: u64,
        time_ns: u64,
        msg: String,
    },
    Unsupported(String),
    /// A task's workload could not be generated or replayed (a trace file that cannot be
    /// opened, or a bad record found in the middle of a replay): one line naming the task,
    /// the file and the position.
    Workload(String),
    /// The run stopped advancing: a thread ran [`NO_PROGRESS_STEPS`] steps without simulated
    /// time moving on (a task), or without any task running an event (a kernel thread).
    NoProgress {
        time_ns: u64,
        thread: String,
        state: String,
    },
}

/// Bound on steps without progress before a run is declared stuck (see [`SimError`]).
pub const NO_PROGRESS_STEPS: u64 = 10_000_000;

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Invariant {
                event,
                time_ns,
                msg,
            } => write!(
                f,
                "model invariant violated after event {event} at {:.6} s: {msg}",
                *time_ns as f64 / 1e9
            ),
            SimError::Unsupported(m) => write!(f, "{m}"),
            SimError::Workload(m) => write!(f, "{m}"),
            SimError::NoProgress {
                time_ns,
                thread,
                state,
            } => write!(
                f,
                "no progress at {:.6} s: {thread} ran {NO_PROGRESS_STEPS} steps without \
                 simulated time advancing; it is {state}",
                *time_ns as f64 / 1e9
            ),
        }
    }
}
impl std::error::Error for SimError {}

struct Task {
    src: TaskSource,
    /// Kernel memory of a kalloc workload, by slot (NIL = the allocation failed).
    kslots: Vec<u32>,
    kalloc_attempts: u64,
    kalloc_success: u64,
    /// The live process of a process workload: its address space (object) and kernel pages.
    process: Option<(u32, refault_mm::exit::ProcessPages)>,
    memcg: u16,
    done: bool,
    oom_killed: bool,
    finished_at: u64,
    op_start: u64,
    ops: u64,
    hist: Histogram,
    cpu_ns: u64,
    /// CPU time after the warm-up.
    measured_cpu_ns: u64,
    major_faults: u64,
    /// The phase it is in (index into its phase list; phases workloads only).
    phase: u16,
    /// Its next operations, generated ahead of the model so that their memory can be
    /// prefetched ([`Ahead`]).
    ahead: Ahead,
}

/// How many operations of a task are generated ahead of the model: the page-cache entry or
/// PTE of an operation is prefetched when it enters this window, the frame it names
/// [`FRAME_AHEAD`] operations before it runs (see `refault_mm::prefetch`). A workload of
/// one-page operations has two operations per access (the access and its `OpEnd`).
const LOOKAHEAD: usize = 16;
const FRAME_AHEAD: usize = 6;

/// A ring of a task's next [`LOOKAHEAD`] operations (None from the end of its stream on).
/// Generating ahead changes nothing: a source's operations do not depend on the model.
struct Ahead {
    ring: [Option<Op>; LOOKAHEAD],
    pos: usize,
    /// The ring has been filled (on the task's first operation).
    filled: bool,
    /// The source has returned None; it is not asked again.
    ended: bool,
    /// No lookahead: a replayed trace can fail part-way (`Source::error`), and reading it
    /// ahead could report a failure past the point where the run stops.
    direct: bool,
}

impl Ahead {
    fn new(src: &TaskSource) -> Self {
        Ahead {
            ring: [None; LOOKAHEAD],
            pos: 0,
            filled: false,
            ended: false,
            direct: matches!(src.source, refault_workload::Source::Trace(_)),
        }
    }
}

/// Where an operation's first page is: (object, page index).
#[inline]
fn op_page(op: &Option<Op>) -> Option<(u32, u32)> {
    match *op {
        Some(Op::Touch { obj, page, .. })
        | Some(Op::Read { obj, page, .. })
        | Some(Op::Write { obj, page, .. }) => Some((obj, page)),
        _ => None,
    }
}

impl Task {
    /// The task's next operation, from its lookahead ring; the operation entering the ring
    /// gets its entry prefetched and the one [`FRAME_AHEAD`] from now its frame.
    #[inline]
    fn next_op(&mut self, mm: &Mm) -> Option<Op> {
        let a = &mut self.ahead;
        if a.direct {
            return self.src.next_op();
        }
        if !a.filled {
            a.filled = true;
            for i in 0..LOOKAHEAD {
                let op = if a.ended { None } else { self.src.next_op() };
                a.ended = op.is_none();
                a.ring[i] = op;
                if let Some((obj, page)) = op_page(&op) {
                    mm.prefetch_entry(obj, page);
                }
            }
        }
        let pos = a.pos;
        let op = a.ring[pos];
        let new = if a.ended { None } else { self.src.next_op() };
        a.ended = new.is_none();
        a.ring[pos] = new;
        if let Some((obj, page)) = op_page(&new) {
            mm.prefetch_entry(obj, page);
        }
        a.pos = (pos + 1) % LOOKAHEAD;
        if let Some((obj, page)) = op_page(&a.ring[(pos + FRAME_AHEAD) % LOOKAHEAD]) {
            mm.prefetch_frame(obj, page);
        }
        op
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum KState {
    Sleeping,
    Running,
    Napping,
}

const NAP_NS: u64 = 100_000_000; // HZ/10

/// The kernel threads' state that the machine's loop and a preemption inside a task's step
/// ([`InStep`]) share.
struct Kthreads {
    kswapd_id: u32,
    kcompactd_id: u32,
    kstate: KState,
    kswapd_woke_at: u64,
    kswapd_awake: u64,
    kswapd_cpu: u64,
    /// kswapd's measured CPU and its reclaim profile (result::KswapdCpuSeconds).
    kswapd_measured_ns: u64,
    kswapd_prof: refault_mm::ReclaimCpu,
    kswapd_ipis: u64,
    /// Past the warm-up: kswapd's profile counts.
    measuring: bool,
    /// When a sleeping thread was woken by another thread's step (which may end after the
    /// time the woken thread is made ready at): the time it starts waiting if no CPU is idle.
    woke_at: Vec<u64>,
}

/// What one turn of kswapd on a CPU did.
enum KswapdRan {
    /// Its nap ended with the node balanced: it went to sleep and gives the CPU up.
    Slept,
    /// It ran a step until `finish` and is runnable again at `at` (later: it sleeps).
    Ran { finish: u64, at: u64 },
}

impl Kthreads {
    /// `wakeup_kswapd()` raised by a task's step (`mm.kswapd.wake_pending`), taken at `now`:
    /// kswapd leaves its sleep or nap (a nap cut short counts
    /// `kswapd_low_wmark_hit_quickly`) and takes an idle CPU or waits on the run queue from
    /// `woken_at`.
    fn kswapd_wake(
        &mut self,
        mm: &mut Mm,
        sched: &mut Sched,
        ready: &mut Ready,
        now: u64,
        woken_at: u64,
    ) {
        let th = self.kswapd_id;
        let mut wake = || {
            if sched.is_sleeping(th) {
                ready.set(
                    th as usize,
                    sched.wake(th, now, woken_at).unwrap_or(u64::MAX),
                );
            }
        };
        match self.kstate {
            KState::Sleeping => {
                wake();
                self.kswapd_woke_at = now;
            }
            KState::Napping => {
                mm.ev
                    .add(refault_mm::vmstat::Ev::KswapdLowWmarkHitQuickly, 1);
                wake();
                self.kswapd_woke_at = now;
            }
            KState::Running => {}
        }
        self.kstate = KState::Running;
        mm.kswapd.wake_pending = false;
    }

    /// kswapd has CPU `c` at `now`: the end of its nap (back to sleep if the node is
    /// balanced), or one iteration of `balance_pgdat()`, charged to the CPU. Its ready time is
    /// set; the caller gives the CPU up when it sleeps.
    fn kswapd_run(
        &mut self,
        mm: &mut Mm,
        io: &mut dyn refault_mm::Io,
        sched: &mut Sched,
        ready: &mut Ready,
        c: usize,
        now: u64,
    ) -> KswapdRan {
        match self.kstate {
            KState::Napping => {
                // End of the HZ/10 nap (prepare_kswapd_sleep() again).
                if mm.kswapd_may_sleep() && !mm.kswapd.wake_pending {
                    self.kstate = KState::Sleeping;
                    // It got a CPU to check this and goes to sleep on it (schedule()): the
                    // CPU goes to the first waiting thread now. (Without this the CPU stayed
                    // kswapd's while it slept, and a task waiting for it — one that woke
                    // from IO while kswapd had taken the idle CPU — never ran again.)
                    sched.ran(c, now, 0);
                    return KswapdRan::Slept;
                }
                mm.ev
                    .add(refault_mm::vmstat::Ev::KswapdHighWmarkHitQuickly, 1);
                self.kstate = KState::Running;
                self.kswapd_woke_at = now;
            }
            KState::Sleeping => {
                self.kstate = KState::Running;
                self.kswapd_woke_at = now;
            }
            KState::Running => {}
        }
        let mut ctx = Ctx::new(now, io, 0);
        ctx.cpu = c as u16;
        mm.set_cpu(ctx.cpu);
        let (rc0, ipi0) = (mm.reclaim_cpu.clone(), mm.tlb_stats.shootdowns);
        let next = mm.kswapd_step(&mut ctx);
        mm.lru_settle(&mut ctx);
        let th = self.kswapd_id as usize;
        sched.stats[th].lock_wait_ns += ctx.lock_wait_ns;
        let finish = now + ctx.cpu_ns.max(1);
        self.kswapd_cpu += ctx.cpu_ns;
        if self.measuring {
            // Everything charged during this step is kswapd's (one thread steps at a time).
            self.kswapd_prof.add(&mm.reclaim_cpu.since(&rc0));
            self.kswapd_measured_ns += ctx.cpu_ns;
            self.kswapd_ipis += mm.tlb_stats.shootdowns - ipi0;
        }
        sched.ran(c, finish, ctx.cpu_ns);
        // kswapd may have slept within its step: writeback throttling (rq_qos_wait()) on a
        // swap-out or a dirty folio's write.
        let end = finish.max(ctx.wait_until);
        let at = match next {
            KswapdNext::Continue => end,
            KswapdNext::Throttle(u) => u.max(end),
            KswapdNext::Done => {
                self.kstate = KState::Napping;
                self.kswapd_awake += end - self.kswapd_woke_at;
                end + NAP_NS
            }
        };
        ready.set(th, at);
        let kc = self.kcompactd_id;
        if mm.kcompactd.wake_pending && sched.is_sleeping(kc) && ready.get(kc as usize) > finish {
            ready.set(kc as usize, finish);
            self.woke_at[kc as usize] = finish;
        }
        KswapdRan::Ran { finish, at }
    }
}

/// The scheduler at the `cond_resched()` points of one event of task `th` on CPU `c`
/// ([`refault_mm::CondResched`]).
///
/// A wakeup of kswapd the event raised (`wakeup_kswapd()`), or the end of kswapd's nap or
/// throttle passed during it, is taken at the point it is found when no CPU is idle (with an
/// idle CPU kswapd takes that one at the step's end, as before: nothing waits). If kswapd
/// is then the first waiting thread and the scheduler's rules give it the CPU
/// ([`Sched::horizon`]: CFS's wakeup preemption at once, else the tick after the slice),
/// the task is preempted there and kswapd runs its `balance_pgdat()` iterations on the
/// task's CPU until it sleeps or the tick rules hand the CPU back; the task then has it
/// again.
///
/// Where it differs from the kernel: only kswapd preempts inside a step (kcompactd and the
/// flusher wait for the step's end, as before); while kswapd holds the task's CPU no other
/// task runs, and the task gets it back before any other waiting task (its step is still
/// running). At `shrink_folio_list()`'s per-folio `cond_resched()` the reclaimer's isolated
/// batch and deferred TLB flush are set aside while kswapd runs
/// (`Mm::cond_resched_isolated`).
struct InStep<'s> {
    sched: &'s mut Sched,
    ready: &'s mut Ready,
    kt: &'s mut Kthreads,
    th: u32,
    c: usize,
    /// CPU time of the task's earlier events in this batch not yet charged to the scheduler.
    pending_cpu: u64,
    /// The part of this event's CPU time charged at its preemption points.
    charged: u64,
    /// The scheduler's state changed inside the event (the batch must end after it).
    touched: bool,
}

impl refault_mm::CondResched for InStep<'_> {
    fn cond_resched(
        &mut self,
        mm: &mut Mm,
        io: &mut dyn refault_mm::Io,
        now: u64,
        cpu_ns: u64,
    ) -> Option<u64> {
        let ks = self.kt.kswapd_id;
        let idle = self.sched.has_idle_cpu();
        let timer = self.sched.is_sleeping(ks) && self.ready.get(ks as usize) <= now;
        let wake = !idle && (mm.kswapd.wake_pending || timer);
        if !wake && self.sched.first_waiter() != Some(ks) {
            return None;
        }
        // The task's CPU so far, for the scheduler's rules (CFS: its vruntime).
        self.sched
            .ran(self.c, now, self.pending_cpu + cpu_ns - self.charged);
        self.pending_cpu = 0;
        self.charged = cpu_ns;
        self.touched = true;
        if wake {
            if mm.kswapd.wake_pending {
                self.kt.kswapd_wake(mm, self.sched, self.ready, now, now);
            } else if timer {
                // The end of its nap or throttle (a timer or IO wakeup) fell inside the step.
                let r = self.ready.get(ks as usize);
                let got = self.sched.wake(ks, r, r);
                debug_assert!(got.is_none(), "no CPU is idle");
                self.ready.set(ks as usize, u64::MAX);
            }
        }
        if self.sched.first_waiter() != Some(ks) || now < self.sched.horizon(self.c) {
            return None;
        }
        let next = self.sched.preempt_point(self.c, now);
        debug_assert_eq!(next, Some(ks));
        let mut t = now;
        loop {
            mm.run_background(t);
            let (back, runnable) = match self
                .kt
                .kswapd_run(mm, io, self.sched, self.ready, self.c, t)
            {
                KswapdRan::Slept => (t, false),
                KswapdRan::Ran { finish, at } if at > finish => (finish, false),
                KswapdRan::Ran { finish, .. } => {
                    if finish < self.sched.horizon(self.c) {
                        t = finish;
                        continue;
                    }
                    (finish, true)
                }
            };
            if runnable {
                self.ready.set(ks as usize, u64::MAX);
            }
            self.sched.hand_back(self.c, self.th, back, runnable);
            return Some(back);
        }
    }
}

/// Run a resolved scenario to completion.
pub fn run(scn: &Scenario, mut opts: RunOptions) -> Result<SimResult, SimError> {
    let wall = std::time::Instant::now();
    if scn.policy.lru == refault_scenario::LruKind::Mglru
        && scn.policy.balance == refault_scenario::BalanceKind::Legacy
    {
        return Err(SimError::Unsupported(
            "policy.balance = \"legacy\" is the active/inactive LRU's anon/file balance; the multi-gen LRU (policy.lru = \"mglru\") balances with its own refault controller".into(),
        ));
    }
    if scn.tasks.is_empty() && scn.run.duration_ns == 0 {
        // The run ends when every task has finished, which never happens without tasks:
        // only kswapd and the flusher would tick on. (Refused here, not by the loader: a
        // scenario without tasks is still a valid description of a machine.)
        return Err(SimError::Unsupported(
            "the scenario has no [[task]] and run.duration is 0 (until every task has \
             finished): the run would never end; add a task or set run.duration"
                .into(),
        ));
    }
    let mut mm = Mm::new(crate::config::mm_config(scn));
    let kernel =
        refault_mm::workingset::KernelVersion::parse(&scn.model.kernel).unwrap_or_default();
    let mut io = Devices {
        devs: scn
            .devices
            .iter()
            .map(|d| {
                let dev = BlockDevice::new(d);
                if crate::wbt::in_kernel(kernel, &d.preset) {
                    dev
                } else {
                    dev.without_wbt()
                }
            })
            .collect(),
    };
    let mut tasks: Vec<Task> = refault_workload::try_task_sources(scn)
        .map_err(|e| SimError::Workload(e.to_string()))?
        .into_iter()
        .map(|src| Task {
            ahead: Ahead::new(&src),
            memcg: src.cgroup.map(|c| c as u16 + 1).unwrap_or(0),
            op_start: src.start_ns,
            src,
            kslots: Vec::new(),
            kalloc_attempts: 0,
            kalloc_success: 0,
            process: None,
            done: false,
            oom_killed: false,
            finished_at: 0,
            ops: 0,
            hist: Histogram::default(),
            cpu_ns: 0,
            measured_cpu_ns: 0,
            major_faults: 0,
            phase: 0,
        })
        .collect();
    let nt = tasks.len() as u32;
    let kswapd_id = nt;
    let flusher_id = nt + 1;
    let kcompactd_id = nt + 2;
    // Ready time of every thread (tasks, then kswapd, the flusher, kcompactd); u64::MAX = not
    // runnable (crate::ready: a tournament tree, O(log n) per pick).
    let mut start: Vec<u64> = tasks.iter().map(|t| t.src.start_ns).collect();
    start.extend([u64::MAX, u64::MAX, u64::MAX]);
    let mut ready = Ready::new(&start);
    // kcompactd's proactive-compaction timer (none when proactiveness is 0 or there is no
    // kcompactd).
    let mut kcompactd_timer = if scn.sysctl.compaction_proactiveness > 0
        && scn.policy.kswapd_compaction == refault_scenario::KswapdCompactionKind::Kcompactd
    {
        refault_mm::kcompactd::FRAG_CHECK_INTERVAL_NS
    } else {
        u64::MAX
    };
    ready.set(kcompactd_id as usize, kcompactd_timer);
    let mut kcompactd_awake = 0u64;
    let writeback_interval = scn.sysctl.dirty_writeback_centisecs as u64 * 10_000_000;
    let expire_ns = scn.sysctl.dirty_expire_centisecs as u64 * 10_000_000;
    if writeback_interval > 0 {
        ready.set(flusher_id as usize, writeback_interval);
    }
    let mut flusher_cpu = 0u64;
    let mut sched = Sched::new(scn.machine.cpus, ready.len());
    sched.set_cfs(!mm.cfg.kernel.sched_eevdf());
    let mut kt = Kthreads {
        kswapd_id,
        kcompactd_id,
        kstate: KState::Sleeping,
        kswapd_woke_at: 0,
        kswapd_awake: 0,
        kswapd_cpu: 0,
        kswapd_measured_ns: 0,
        kswapd_prof: Default::default(),
        kswapd_ipis: 0,
        measuring: scn.run.warmup_ns == 0,
        woke_at: vec![0u64; ready.len()],
    };
    let duration = if scn.run.duration_ns == 0 {
        u64::MAX
    } else {
        scn.run.duration_ns
    };
    let mut sampler = Sampler::new(scn);
    let mut next_sample = 0u64;
    let warmup = scn.run.warmup_ns;
    let mut baseline: Option<Vec<(&'static str, u64)>> = None;
    // `echo N > /proc/sys/vm/drop_caches` ([[run.drop_caches]]), by the simulator at the
    // first event at or after its time (it runs in no task's time).
    let drops = &scn.run.drop_caches;
    let mut next_drop = 0usize;
    // `echo value > /proc/sys/<name>` ([[run.sysctl]]), likewise, after the drops due then.
    let writes = &scn.run.sysctl_writes;
    let mut next_write = 0usize;
    let mut baseline_cpu = refault_mm::ReclaimCpu::default();
    let mut baseline_lock = refault_mm::lrulock::LruLockStats::default();
    let mut baseline_tlb = refault_mm::tlb::TlbStats::default();
    // The scheduler's CPU assignment last given to the model (refault_mm::tlb): which task's
    // mm each CPU has loaded, for the TLB flushes of reclaim's unmaps.
    let mut synced_sched_gen = u64::MAX;
    // Debug builds check the invariants now and then even when not asked (VM_BUG_ON style).
    let check_every = if opts.check_every > 0 {
        opts.check_every
    } else if scn.model.check_interval > 0 {
        scn.model.check_interval
    } else if cfg!(debug_assertions) {
        100_000
    } else {
        0
    };
    let mut events: u64 = 0;
    // Page accesses: touches and the pages of read(), write() and file creation.
    let mut accesses: u64 = 0;
    // Progress guard: events of the running task at one simulated instant, and kernel-thread
    // steps since the last task event.
    let mut still_events: u64 = 0;
    let mut kthread_steps: u64 = 0;
    let mut now = 0u64;
    let total_hint: u64 = tasks.iter().filter_map(|t| t.src.len_hint()).sum();
    let mut live_tasks = tasks.len();
    let mut next_progress = 1u64 << 20;

    while let Some((t, th, horizon)) = ready.pick() {
        if live_tasks == 0 && duration == u64::MAX {
            // Nothing left that could end the run (no tasks at all): stop rather than let
            // the kernel threads tick on for ever.
            break;
        }
        if t >= duration {
            now = duration;
            break;
        }
        // The thread is not runnable while it runs a step. A task's ready time is written once,
        // when its step ends (or on the paths below that leave it waiting): its leaf still
        // holds the picked time meanwhile, which nothing reads (only other threads' times are
        // set or read until then), and the tree is a function of its leaves, so this saves
        // one update per step without changing any pick.
        if th >= kswapd_id {
            ready.set(th as usize, u64::MAX);
        }
        now = t;
        while next_sample <= now {
            // [[run.drop_caches]] due by this sample: written before it is taken.
            while next_drop < drops.len() && drops[next_drop].at_ns <= next_sample {
                mm.drop_caches(drops[next_drop].value);
                next_drop += 1;
            }
            while next_write < writes.len() && writes[next_write].at_ns <= next_sample {
                write_sysctl(&mut mm, &writes[next_write]);
                next_write += 1;
            }
            if warmup > 0 && baseline.is_none() && next_sample >= warmup {
                baseline = Some(mm.vmstat_snapshot());
                baseline_cpu = mm.reclaim_cpu.clone();
                baseline_lock = mm.lru_lock_stats.clone();
                baseline_tlb = mm.tlb_stats.clone();
            }
            mm.run_background(next_sample);
            sampler.sample(next_sample, &mm, &tasks_ops(&tasks));
            next_sample = sampler.next_after(next_sample);
        }
        if warmup > 0 && baseline.is_none() && now >= warmup {
            baseline = Some(mm.vmstat_snapshot());
            baseline_cpu = mm.reclaim_cpu.clone();
            baseline_lock = mm.lru_lock_stats.clone();
            baseline_tlb = mm.tlb_stats.clone();
        }
        while next_drop < drops.len() && drops[next_drop].at_ns <= now {
            mm.drop_caches(drops[next_drop].value);
            next_drop += 1;
        }
        while next_write < writes.len() && writes[next_write].at_ns <= now {
            write_sysctl(&mut mm, &writes[next_write]);
            next_write += 1;
        }
        mm.run_background(now);
        kt.measuring = baseline.is_some() || warmup == 0;
        // Get a CPU (crate::sched): a thread on one is at a preemption point; a woken one
        // takes an idle CPU or waits on the run queue. With the CPU comes its horizon
        // (`Sched::horizon`, found by the preemption check), which nothing changes before a
        // task's run of events below uses it.
        let (c, cpu_horizon) = match sched.cpu_of(th) {
            Some(c) => match sched.preempt_point_or_horizon(c, now) {
                Ok(h) => (c, h),
                Err(next) => {
                    ready.set(th as usize, u64::MAX);
                    ready.set(next as usize, now);
                    continue;
                }
            },
            None => match sched.wake(th, now, kt.woke_at[th as usize].max(now)) {
                Some(at) if at == now => {
                    let c = sched.cpu_of(th).expect("woken onto a CPU");
                    (c, sched.horizon(c))
                }
                Some(at) => {
                    ready.set(th as usize, at);
                    continue;
                }
                None => {
                    ready.set(th as usize, u64::MAX);
                    continue;
                }
            },
        };
        if sched.generation() != synced_sched_gen {
            // A task's thread (index below `nt`) loads its mm; a kernel thread or an idle CPU
            // keeps the last one lazily.
            for cpu in 0..sched.nr_cpus() {
                let t = sched.curr(cpu).filter(|&t| t < nt);
                mm.set_cpu_task(cpu, t);
            }
            synced_sched_gen = sched.generation();
        }

        if th >= kswapd_id {
            kthread_steps += 1;
            if kthread_steps > NO_PROGRESS_STEPS {
                let (thread, state) = if th == kswapd_id {
                    (
                        "kswapd",
                        format!(
                            "{} (balance_pgdat() for order {})",
                            match kt.kstate {
                                KState::Sleeping => "sleeping",
                                KState::Running => "running",
                                KState::Napping => "napping",
                            },
                            mm.kswapd.order
                        ),
                    )
                } else {
                    (
                        "the flusher",
                        format!(
                            "writing back with {} dirty and {} writeback pages",
                            mm.node.nr_dirty, mm.node.nr_writeback
                        ),
                    )
                };
                return Err(SimError::NoProgress {
                    time_ns: now,
                    thread: thread.into(),
                    state,
                });
            }
        }
        if th == kswapd_id {
            let gives_up = match kt.kswapd_run(&mut mm, &mut io, &mut sched, &mut ready, c, now) {
                KswapdRan::Slept => true,
                KswapdRan::Ran { finish, at } => at > finish,
            };
            if gives_up {
                if let Some((n, t)) = sched.block(c) {
                    ready.set(n as usize, t);
                }
            }
            continue;
        }
        if th == kcompactd_id {
            let mut ctx = Ctx::new(now, &mut io, 0);
            ctx.cpu = c as u16;
            mm.set_cpu(ctx.cpu);
            if mm.kcompactd.wake_pending {
                mm.kcompactd_do_work(&mut ctx);
                kcompactd_timer = if kcompactd_timer == u64::MAX {
                    u64::MAX
                } else {
                    refault_mm::kcompactd::FRAG_CHECK_INTERVAL_NS
                };
            } else if let Some(t) = mm.kcompactd_proactive(&mut ctx) {
                kcompactd_timer = t;
            }
            mm.lru_settle(&mut ctx);
            sched.stats[th as usize].lock_wait_ns += ctx.lock_wait_ns;
            let finish = now + ctx.cpu_ns.max(1);
            if ctx.cpu_ns > 0 {
                kcompactd_awake += ctx.cpu_ns;
            }
            sched.ran(c, finish, ctx.cpu_ns);
            let at = if mm.kcompactd.wake_pending {
                finish
            } else {
                if let Some((n, t)) = sched.block(c) {
                    ready.set(n as usize, t);
                }
                finish.saturating_add(kcompactd_timer)
            };
            ready.set(kcompactd_id as usize, at);
            continue;
        }
        if th == flusher_id {
            let mut ctx = Ctx::new(now, &mut io, 0);
            let pass = mm.flusher_run(&mut ctx, expire_ns);
            let finish = now + ctx.cpu_ns.max(1);
            flusher_cpu += ctx.cpu_ns;
            sched.ran(c, finish, ctx.cpu_ns);
            let periodic = now
                .checked_div(writeback_interval)
                .map_or(u64::MAX, |k| (k + 1) * writeback_interval);
            let at = if !(pass.more || mm.flusher_wanted) {
                periodic
            } else if pass.written > 0 {
                ctx.wait_until.max(finish)
            } else {
                // Work remains but nothing could be written (every dirty folio is under
                // writeback already): wb_writeback() sleeps until an inode's writeback ends
                // (inode_sleep_on_writeback()) instead of spinning. The next IO completion,
                // else the periodic wakeup; a task dirtying more wakes it earlier.
                mm.next_completion()
                    .map_or(periodic, |c| c.min(periodic))
                    .max(finish)
            };
            ready.set(flusher_id as usize, at);
            if at > finish {
                if let Some((n, t)) = sched.block(c) {
                    ready.set(n as usize, t);
                }
            }
            continue;
        }

        // A task: run events while it stays the earliest thread.
        let ti = th as usize;
        let mut t_now = now;
        // Run until the next other thread's time, or until a waiting thread is due to get
        // this CPU (the run queue does not change while this task runs alone).
        debug_assert_eq!(cpu_horizon, sched.horizon(c));
        let horizon = horizon.min(duration).min(cpu_horizon);
        let waiters = sched.has_waiters();
        let mut cpu_end;
        let mut batch_cpu = 0u64;
        let mut task_lock_wait = 0u64;
        // Set when the task slept on IO within this batch and woke at that time.
        let mut woke_in_batch = None;
        loop {
            let task = &mut tasks[ti];
            let Some(op) = task.next_op(&mm) else {
                task.done = true;
                task.finished_at = t_now;
                live_tasks -= 1;
                cpu_end = t_now;
                break;
            };
            events += 1;
            kthread_steps = 0;
            if let Some(tr) = opts.trace.as_mut() {
                tr(th, op);
            }
            // The event's cond_resched() points (refault_mm::Mm::cond_resched).
            let mut hook = InStep {
                sched: &mut sched,
                ready: &mut ready,
                kt: &mut kt,
                th,
                c,
                pending_cpu: batch_cpu,
                charged: 0,
                touched: false,
            };
            let mut ctx = Ctx::new(t_now, &mut io, task.memcg);
            ctx.cpu = c as u16;
            mm.set_cpu(ctx.cpu);
            ctx.task = th;
            ctx.resched = Some(&mut hook);
            match op {
                Op::Touch { obj, page, write } => {
                    accesses += 1;
                    mm.touch(&mut ctx, obj, page, write)
                }
                Op::Read { obj, page, nr } => {
                    accesses += nr as u64;
                    mm.file_read(&mut ctx, obj, page, nr)
                }
                Op::Write { obj, page, nr } => {
                    accesses += nr as u64;
                    mm.file_write(&mut ctx, obj, page, nr)
                }
                Op::Fsync { obj } => mm.fsync(&mut ctx, obj),
                Op::Fdatasync { obj } => mm.fdatasync(&mut ctx, obj),
                Op::Create {
                    obj,
                    page,
                    nr,
                    fsync,
                } => {
                    accesses += nr as u64;
                    mm.fs_create(&mut ctx, obj, page, nr, fsync)
                }
                Op::Advise { obj, hint } => mm.set_hint(
                    obj,
                    match hint {
                        Hint::Normal => refault_mm::filemap::Hint::Normal,
                        Hint::Random => refault_mm::filemap::Hint::Random,
                        Hint::Sequential => refault_mm::filemap::Hint::Sequential,
                    },
                ),
                Op::Think { ns } => ctx.cpu_ns += ns as u64,
                Op::OpEnd => {
                    if baseline.is_some() || warmup == 0 {
                        task.ops += 1;
                        task.hist.record(t_now - task.op_start);
                    }
                    task.op_start = t_now;
                }
                Op::Phase { idx } => task.phase = idx,
                Op::KernelAlloc { order, gfp, slot } => {
                    use refault_workload::event::kgfp;
                    let g = refault_mm::alloc::Gfp {
                        mt: (gfp & kgfp::MT_MASK) >> kgfp::MT_SHIFT,
                        direct_reclaim: gfp & kgfp::DIRECT != 0,
                        kswapd_reclaim: true,
                        noretry: false,
                        retry_mayfail: false,
                        high: gfp & kgfp::HIGH != 0,
                        atomic: gfp & kgfp::ATOMIC != 0,
                    };
                    let p = mm.alloc_kernel_pages(&mut ctx, order as u32, g);
                    if task.kslots.len() <= slot as usize {
                        task.kslots.resize(slot as usize + 1, u32::MAX);
                    }
                    task.kslots[slot as usize] = p.unwrap_or(u32::MAX);
                    if baseline.is_some() || warmup == 0 {
                        task.kalloc_attempts += 1;
                        task.kalloc_success += p.is_some() as u64;
                    }
                    // A failed small allocation that reached OOM does not kill the task:
                    // the kalloc workload counts failures.
                    ctx.oom = false;
                }
                Op::KernelFree { slot } => {
                    if let Some(p) = task.kslots.get_mut(slot as usize) {
                        if *p != u32::MAX {
                            mm.free_kernel_pages(*p);
                            *p = u32::MAX;
                        }
                    }
                }
                // A failed fork (-ENOMEM) ends the task, as make stops the build when it
                // cannot fork a compiler.
                Op::Fork { obj } => match mm.fork(&mut ctx) {
                    Some(p) => task.process = Some((obj, p)),
                    None => ctx.oom = true,
                },
                Op::Exit { .. } => {
                    if let Some((obj, p)) = task.process.take() {
                        mm.exit(&mut ctx, obj, p);
                    }
                }
            }
            // The operation's per-CPU batch additions; a full batch drains under the lock.
            mm.lru_settle(&mut ctx);
            let (ctx_now, cpu_ns, oom) = (ctx.now, ctx.cpu_ns, ctx.oom);
            task_lock_wait += ctx.lock_wait_ns;
            // Its CPU time ends later by the time it waited for the CPU, preempted inside it.
            let finish = t_now + cpu_ns + ctx.rq_wait_ns;
            task.cpu_ns += cpu_ns;
            if baseline.is_some() || warmup == 0 {
                task.measured_cpu_ns += cpu_ns;
            }
            if ctx.major {
                task.major_faults += 1;
            }
            cpu_end = finish;
            let next = finish.max(ctx.wait_until);
            // What the preemption points left uncharged.
            batch_cpu = hook.pending_cpu + cpu_ns - hook.charged;
            let preempted = hook.touched;
            if oom {
                // A killed process's memory goes back as at any exit.
                if let Some((obj, p)) = task.process.take() {
                    let mut ctx = Ctx::new(ctx_now, &mut io, task.memcg);
                    ctx.cpu = c as u16;
                    ctx.task = th;
                    mm.exit(&mut ctx, obj, p);
                }
                task.done = true;
                task.oom_killed = true;
                task.finished_at = next;
                live_tasks -= 1;
                break;
            }
            if next == t_now {
                still_events += 1;
                if still_events > NO_PROGRESS_STEPS {
                    return Err(SimError::NoProgress {
                        time_ns: t_now,
                        thread: format!("task `{}`", task.src.name),
                        state: task_state(scn, task, op),
                    });
                }
            } else {
                still_events = 0;
            }
            let slept = next > finish;
            if slept {
                woke_in_batch = Some(next);
            }
            t_now = next;
            // A check observes: it must not run IO completions or anything else early.
            if check_every > 0 && events.is_multiple_of(check_every) {
                if let Err(e) = mm.check_invariants() {
                    return Err(SimError::Invariant {
                        event: events,
                        time_ns: t_now,
                        msg: e.0,
                    });
                }
            }
            let wake = mm.kswapd.wake_pending || mm.flusher_wanted || mm.kcompactd.wake_pending;
            // A task that sleeps gives its CPU to a waiting thread; after a preemption point
            // changed the run queue the batch's horizon is stale.
            if wake
                || preempted
                || (slept && waiters)
                || t_now >= horizon
                || t_now >= next_sample
                || mm.background_due(t_now)
            {
                break;
            }
        }
        sched.ran(c, cpu_end, batch_cpu);
        sched.stats[ti].lock_wait_ns += task_lock_wait;
        ready.set(ti, if tasks[ti].done { u64::MAX } else { t_now });
        // Wakeups raised by this step (wakeup_kswapd(), the flusher's and kcompactd's), made
        // before the task gives its CPU up: `try_to_wake_up()` ran inside the step, so the
        // woken thread is on the run queue when the task's `schedule()` picks the next one,
        // and its wait starts at the end of the step's CPU time, not when the IO the task then
        // sleeps on completes.
        let woken_at = cpu_end.max(now);
        let wake_thread = |th: u32, sched: &mut Sched, ready: &mut Ready| {
            if sched.is_sleeping(th) {
                ready.set(
                    th as usize,
                    sched.wake(th, now, woken_at).unwrap_or(u64::MAX),
                );
            }
        };
        if mm.kswapd.wake_pending {
            kt.kswapd_wake(&mut mm, &mut sched, &mut ready, now, woken_at);
        }
        if mm.flusher_wanted
            && sched.is_sleeping(flusher_id)
            && ready.get(flusher_id as usize) > now
        {
            wake_thread(flusher_id, &mut sched, &mut ready);
        }
        if mm.kcompactd.wake_pending
            && sched.is_sleeping(kcompactd_id)
            && ready.get(kcompactd_id as usize) > now
        {
            wake_thread(kcompactd_id, &mut sched, &mut ready);
        }
        if tasks[ti].done || t_now > cpu_end {
            if let Some((n, t)) = sched.block(c) {
                ready.set(n as usize, t);
            }
        } else if let Some(w) = woke_in_batch {
            // It slept on IO and woke within the batch: a new slice from its wakeup.
            sched.restart_slice(c, w);
        }
        if live_tasks == 0 {
            break;
        }
        if events >= next_progress {
            next_progress += 1 << 20;
            if let Some(p) = opts.progress.as_mut() {
                let f = if duration != u64::MAX {
                    now as f64 / duration as f64
                } else if total_hint > 0 {
                    events as f64 / total_hint as f64
                } else {
                    0.0
                };
                p(f.min(1.0));
            }
        }
    }
    // Run to the end: finish outstanding IO so counters are complete at the end, which is
    // the last task's finish when every task finished before the scenario's duration (a
    // task runs events past the time it was picked at while it stays the earliest thread,
    // so `now` alone can lag far behind).
    let end = tasks
        .iter()
        .filter(|t| t.done)
        .map(|t| t.finished_at)
        .fold(now, u64::max)
        .min(duration);
    mm.run_completions(end);
    if let Some((t, e)) = tasks
        .iter()
        .find_map(|t| t.src.source.error().map(|e| (t, e)))
    {
        return Err(SimError::Workload(format!("task {}: {e}", t.src.name)));
    }
    if check_every > 0 {
        if let Err(e) = mm.check_invariants() {
            return Err(SimError::Invariant {
                event: events,
                time_ns: end,
                msg: e.0,
            });
        }
    }
    sampler.sample(end, &mm, &tasks_ops(&tasks));
    if let Some(p) = opts.progress.as_mut() {
        p(1.0);
    }
    let snap = mm.vmstat_snapshot();
    let vmstat = snap
        .iter()
        .map(|&(n, v)| {
            let base = baseline
                .as_ref()
                .and_then(|b| b.iter().find(|x| x.0 == n))
                .map(|x| x.1)
                .unwrap_or(0);
            let gauge = refault_mm::vmstat::is_gauge(n);
            (n.to_string(), if gauge { v } else { v - base })
        })
        .collect();
    let measured_from = if warmup > 0 { warmup } else { 0 };
    let task_results = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let start = t.src.start_ns.max(measured_from);
            let stop = if t.done { t.finished_at } else { end };
            let secs = stop.saturating_sub(start) as f64 / 1e9;
            TaskResult {
                name: t.src.name.clone(),
                ops: t.ops,
                ops_per_sec: if secs > 0.0 { t.ops as f64 / secs } else { 0.0 },
                seconds: secs,
                latency_us: LatencyUs::from_hist(&t.hist),
                cpu_seconds: t.cpu_ns as f64 / 1e9,
                measured_cpu_seconds: t.measured_cpu_ns as f64 / 1e9,
                major_faults: t.major_faults,
                finished: t.done && !t.oom_killed,
                oom_killed: t.oom_killed,
                kalloc_attempts: t.kalloc_attempts,
                kalloc_success: t.kalloc_success,
                dirty_throttle_seconds: mm.task_throttle_ns(i as u32) as f64 / 1e9,
            }
        })
        .collect();
    let rc = mm.reclaim_cpu.since(&baseline_cpu);
    let reclaim_cpu = ReclaimCpuSeconds {
        scan: rc.scan_ns as f64 / 1e9,
        rmap_walk: rc.rmap_ns as f64 / 1e9,
        page_table_walk: rc.pt_walk_ns as f64 / 1e9,
        reclaim: rc.reclaim_ns as f64 / 1e9,
        io_submit: rc.io_ns as f64 / 1e9,
        lock_wait: rc.lock_wait_ns as f64 / 1e9,
        tlb_flush: rc.tlb_flush_ns as f64 / 1e9,
        tlb_shootdowns: mm.tlb_stats.shootdowns - baseline_tlb.shootdowns,
        tlb_shootdown_cpus: mm.tlb_stats.shootdown_cpus - baseline_tlb.shootdown_cpus,
        kswapd_total: kt.kswapd_cpu as f64 / 1e9,
        flusher_total: flusher_cpu as f64 / 1e9,
    };
    let ls = &mm.lru_lock_stats;
    let lru_lock = LruLockResult {
        acquisitions: ls.acquisitions - baseline_lock.acquisitions,
        contended: ls.contended - baseline_lock.contended,
        wait_seconds: (ls.wait_ns - baseline_lock.wait_ns) as f64 / 1e9,
        hold_seconds: (ls.hold_ns - baseline_lock.hold_ns) as f64 / 1e9,
    };
    let cgroups = scn
        .cgroups
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let m = &mm.memcgs[i + 1];
            let lv = &mm.lruvecs[i + 1];
            let page = 4096u64;
            // MEMCG_KMEM: page tables and the whole pages the slab objects' bytes are
            // charged in (obj_cgroup_charge_pages()).
            let kernel = m.pagetables + mm.slab.memcg_pages[i + 1];
            let [slab_r, slab_u] = mm.slab.memcg_bytes[i + 1];
            let memory_stat = [
                ("kernel", kernel * page),
                ("pagetables", m.pagetables * page),
                ("slab", slab_r + slab_u),
                ("slab_reclaimable", slab_r),
                ("slab_unreclaimable", slab_u),
                ("inactive_anon", lv.nr[0] * page),
                ("active_anon", lv.nr[1] * page),
                ("inactive_file", lv.nr[2] * page),
                ("active_file", lv.nr[3] * page),
                ("pgscan", m.events.pgscan),
                ("pgsteal", m.events.pgsteal),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
            CgroupResult {
                name: c.name.clone(),
                usage_pages: m.usage,
                max_pages: c.memory_max_pages,
                swap_pages: m.swap_usage,
                swap_max_pages: c.swap_max_pages,
                swap_max_events: m.events.swap_max_events,
                pagetables_pages: m.pagetables,
                kernel_pages: kernel,
                stock_pages: mm.memcg_stocked(i + 1),
                memory_stat,
                pgscan: m.events.pgscan,
                pgsteal: m.events.pgsteal,
                max_events: m.events.max_events,
                oom_kill: m.events.oom_kill,
                inactive_anon: lv.nr[0],
                active_anon: lv.nr[1],
                inactive_file: lv.nr[2],
                active_file: lv.nr[3],
                slab_reclaimable: mm.slab.memcg_bytes[i + 1][0],
                slab_unreclaimable: mm.slab.memcg_bytes[i + 1][1],
            }
        })
        .collect();
    let devices = scn
        .devices
        .iter()
        .zip(io.devs.iter())
        .map(|(s, d)| DeviceResult {
            name: s.name.clone(),
            stats: d.stats(),
        })
        .collect();
    let (timeseries, buddyinfo) = sampler.finish();
    let ccpu = |i: usize| mm.compact_cpu_ns[i] as f64 / 1e9;
    let compaction = CompactionResult {
        direct_cpu_seconds: ccpu(0),
        kcompactd_cpu_seconds: ccpu(1),
        kswapd_cpu_seconds: ccpu(2),
        kcompactd_awake_seconds: kcompactd_awake as f64 / 1e9,
        kswapd_awake_seconds: kt.kswapd_awake as f64 / 1e9,
    };
    let sched = SchedResult {
        cpus: scn.machine.cpus.max(1),
        base_slice_ms: sched.slice_ns as f64 / 1e6,
        threads: tasks
            .iter()
            .map(|t| t.src.name.clone())
            .chain(["kswapd0".into(), "flusher".into(), "kcompactd0".into()])
            .zip(sched.stats.iter())
            .map(|(name, s)| ThreadSchedResult {
                name,
                cpu_seconds: s.cpu_ns as f64 / 1e9,
                runqueue_wait_seconds: s.wait_ns as f64 / 1e9,
                max_wait_ms: s.max_wait_ns as f64 / 1e6,
                nr_waits: s.nr_waits,
                nr_preempted: s.nr_preempted,
                lru_lock_wait_seconds: s.lock_wait_ns as f64 / 1e9,
            })
            .collect(),
    };
    // The result records the check interval actually used.
    let mut scenario = scn.clone();
    scenario.model.check_interval = check_every;
    Ok(SimResult {
        scenario,
        vmstat,
        tasks: task_results,
        timeseries,
        compaction,
        kswapd_boost: mm.kswapd.boost_stats,
        sched,
        lru_lock,
        buddyinfo,
        sim_seconds: end as f64 / 1e9,
        wall_seconds: wall.elapsed().as_secs_f64(),
        events,
        accesses,
        reclaim_cpu,
        kswapd_cpu: KswapdCpuSeconds::from_ns(
            &kt.kswapd_prof,
            kt.kswapd_measured_ns,
            kt.kswapd_ipis,
        ),
        cgroups,
        devices,
        watermarks: mm
            .zones
            .iter()
            .map(|z| ZoneResult {
                name: z.name.to_string(),
                managed_pages: z.managed,
                min: z.wmark[0],
                low: z.wmark[1],
                high: z.wmark[2],
                extfrag: z.extfrag,
            })
            .collect(),
        min_free_kbytes: mm.min_free_kbytes,
        lru_gen: (mm.cfg.lru == refault_mm::LruKind::Mglru).then(|| {
            let names: Vec<String> = scn.cgroups.iter().map(|c| c.name.clone()).collect();
            mm.lru_gen_view(end)
                .iter()
                .map(|v| crate::result::LruGenResult::from_view(v, &names))
                .collect()
        }),
    })
}

/// Per task, the operations counted so far and the sum of their latencies (µs): the
/// sampler's cumulative `task.NAME.ops` and `task.NAME.latency_sum_us`.
fn tasks_ops(tasks: &[Task]) -> Vec<(u64, f64)> {
    tasks
        .iter()
        .map(|t| (t.ops, t.hist.sum as f64 / 1e3))
        .collect()
}

/// What a stuck task was doing, for [`SimError::NoProgress`].
fn task_state(scn: &Scenario, task: &Task, op: Op) -> String {
    let spec = &scn.tasks[task.src.task];
    let phase = match &spec.workload {
        refault_scenario::Workload::Phases { phases, .. } => phases
            .get(task.phase as usize)
            .map(|p| format!("in phase `{}`, ", p.name))
            .unwrap_or_default(),
        _ => String::new(),
    };
    let what = match op {
        Op::Touch { obj, page, .. }
        | Op::Read { obj, page, .. }
        | Op::Write { obj, page, .. }
        | Op::Create { obj, page, .. } => {
            format!(
                "{op:?} of object `{}` page {page}",
                scn.objects[obj as usize].name
            )
        }
        _ => format!("{op:?}"),
    };
    format!("{phase}at {what} (every event costs no time)")
}

/// A `[[run.sysctl]]` write, as its kernel handler applies it.
fn write_sysctl(mm: &mut refault_mm::Mm, w: &refault_scenario::SysctlWriteSpec) {
    match w.name {
        refault_scenario::RuntimeSysctl::MinFreeKbytes => mm.sysctl_min_free_kbytes(w.value),
        refault_scenario::RuntimeSysctl::WatermarkScaleFactor => {
            mm.sysctl_watermark_scale_factor(w.value)
        }
    }
}
