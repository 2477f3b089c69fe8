//! `lruvec->lru_lock` as a contended resource, and the per-CPU `folio_batch`es that amortise
//! it (mm/swap.c).
//!
//! # The lock
//! Every lruvec has one spinlock (`lruvec->lru_lock`) that serialises its list moves:
//! isolation batches (`isolate_lru_folios()`, the multi-gen LRU's `scan_folios()`), putback
//! (`move_folios_to_lru()`), and the drains of the per-CPU batches (`folio_batch_move_lru()`).
//! A thread that takes it at simulated time `t` for `hold` ns of work starts holding it at the
//! first moment at or after `t` when it is free for `hold` ns ([`LruLock::acquire`]); the
//! time in between it spins (queued spinlocks hand the lock over in arrival order), which
//! costs CPU: the wait is added to the thread's CPU time, to its per-thread lock wait, and,
//! for reclaim, to the `lock_wait` bucket of the reclaim CPU. Holding costs
//! `model.cost.lru_lock` (the lock's cache line and the irq-off/irq-on pair) plus the work
//! done under it (`model.cost.lru_move` per folio moved, or the scan cost of an isolation
//! batch).
//!
//! The simulator runs one thread's step at a time, and a step (a direct reclaim, say) may take
//! the lock at several moments ahead of the other threads' clocks. So the lock keeps a
//! calendar of the holds it has granted ([`HOLDS`] of them, adjacent holds merged) rather
//! than one "free at" time: a thread arriving later in the simulation but earlier in
//! simulated time fits into a gap between holds instead of waiting behind all of them, as it
//! would interleave with the batches of a long reclaim in the kernel (the lock is released
//! between `SWAP_CLUSTER_MAX` batches).
//!
//! # The batches
//! `folio_add_lru()`, `folio_activate()` (buffered reads' second access under the classic
//! LRU, through `folio_mark_accessed()`) and the multi-gen LRU's look-around activation put
//! the folio into the current CPU's `folio_batch` (PAGEVEC_SIZE = 31 slots, "31 pointers +
//! header align the folio_batch structure to a power of two", include/linux/pagevec.h); when
//! the batch is full (or the folio is large: `folio_batch_add_and_move()`), it is drained
//! under the lock, once for its 31 folios. Reclaim drains its own CPU's batches first
//! (`lru_add_drain()` in `shrink_inactive_list()`, `shrink_active_list()` and the multi-gen
//! LRU's `lru_gen_shrink_lruvec()`).
//!
//! # Where we differ from the kernel
//! - The list move itself takes effect at once; only its cost is batched. In the kernel a
//!   folio waiting in a batch is not yet on its new list (a new folio cannot be isolated, a
//!   pending activation leaves it on the inactive list) until the batch drains.
//! - A batch remembers the lruvec of its last folio and drains into that lruvec's lock; the
//!   kernel relocks per lruvec change inside the drain (`folio_lruvec_relock_irqsave()`).
//! - The rotation batch of writeback completion (`folio_rotate_reclaimable()`) and the
//!   deactivation batches (`deactivate_file_folio()`, MADV_COLD) are not charged:
//!   completions run outside any simulated thread, and nothing in the model deactivates
//!   through them.
//! - Only the latest [`HOLDS`] holds are remembered: a thread could slip into a gap that an
//!   older, forgotten hold covered. With adjacent holds merged this needs 32 disjoint holds
//!   ahead of the requester.
//! - Compaction's `folio_isolate_lru()` does not take the lock (compaction.rs is unchanged).
//!
//! # Kernel references
//! mm/swap.c `folio_batch_add_and_move()`, `folio_batch_move_lru()`, `folio_add_lru()`,
//! `folio_activate()`, `lru_add_drain()`; mm/vmscan.c `isolate_lru_folios()`,
//! `move_folios_to_lru()`, `shrink_inactive_list()`, `shrink_active_list()`,
//! `scan_folios()`, `evict_folios()`; include/linux/pagevec.h `PAGEVEC_SIZE`;
//! kernel/locking/qspinlock.c (FIFO hand-over).

use crate::{Ctx, Mm};

/// `PAGEVEC_SIZE`: folios per per-CPU `folio_batch`.
pub const PAGEVEC_SIZE: u32 = 31;

/// Holds an [`LruLock`] remembers.
pub const HOLDS: usize = 32;

/// Per-CPU batch kinds charged by the model (`cpu_fbatches`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchKind {
    /// `lru_add`: new folios (`folio_add_lru()`).
    Add = 0,
    /// `lru_activate`: `folio_activate()`.
    Activate = 1,
}
const NR_KINDS: usize = 2;

/// One lruvec's `lru_lock`: the holds granted, sorted by start and disjoint.
#[derive(Clone, Debug, Default)]
pub struct LruLock {
    holds: [(u64, u64); HOLDS],
    len: usize,
}

impl LruLock {
    /// A thread asks for the lock at `t` to hold it `hold` ns: returns when it gets it (the
    /// first moment at or after `t` from which the lock is free for `hold` ns). The hold is
    /// recorded.
    pub fn acquire(&mut self, t: u64, hold: u64) -> u64 {
        let mut start = t;
        let mut pos = 0;
        for i in 0..self.len {
            let (s, e) = self.holds[i];
            if e <= start {
                pos = i + 1;
                continue;
            }
            if s >= start + hold {
                break;
            }
            start = e;
            pos = i + 1;
        }
        let end = start + hold;
        // Merge with the neighbours it touches.
        let touches_prev = pos > 0 && self.holds[pos - 1].1 == start;
        let touches_next = pos < self.len && self.holds[pos].0 == end;
        match (touches_prev, touches_next) {
            (true, true) => {
                self.holds[pos - 1].1 = self.holds[pos].1;
                self.holds.copy_within(pos + 1..self.len, pos);
                self.len -= 1;
            }
            (true, false) => self.holds[pos - 1].1 = end,
            (false, true) => self.holds[pos].0 = start,
            (false, false) => {
                if self.len == HOLDS {
                    // Forget the oldest hold.
                    self.holds.copy_within(1..HOLDS, 0);
                    self.len -= 1;
                    pos = pos.saturating_sub(1);
                }
                self.holds.copy_within(pos..self.len, pos + 1);
                self.holds[pos] = (start, end);
                self.len += 1;
            }
        }
        start
    }
}

/// Totals over every lruvec's lock.
#[derive(Clone, Debug, Default)]
pub struct LruLockStats {
    /// Times a lock was taken.
    pub acquisitions: u64,
    /// Times the taker had to wait.
    pub contended: u64,
    /// Time spent spinning, all threads (ns).
    pub wait_ns: u64,
    /// Time the locks were held (ns).
    pub hold_ns: u64,
}

/// One CPU's batches: folios waiting, and the lruvec of the last one, per [`BatchKind`].
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBatches {
    nr: [u32; NR_KINDS],
    lv: [u16; NR_KINDS],
}

/// Batch additions of the current operation, not yet given to a CPU (the functions that add
/// have no [`Ctx`]); [`Mm::lru_settle`] hands them to the operation's CPU.
#[derive(Clone, Copy, Debug, Default)]
pub struct PendingBatches {
    nr: [u32; NR_KINDS],
    lv: [u16; NR_KINDS],
    /// A large folio was added: `folio_batch_add_and_move()` drains at once.
    large: [bool; NR_KINDS],
    any: bool,
}

impl Mm {
    /// Take lruvec `lv`'s `lru_lock` at the thread's current time and do `work_ns` of work
    /// under it: the thread's CPU grows by the wait, `model.cost.lru_lock` and `work_ns`.
    /// `reclaim`: the wait counts in the reclaim CPU's `lock_wait` bucket, the lock's own cost
    /// in its LRU scan bucket (the caller charges `work_ns` to the bucket it belongs to).
    pub(crate) fn lru_lock_hold(&mut self, ctx: &mut Ctx, lv: usize, work_ns: u64, reclaim: bool) {
        let lock_ns = self.cfg.costs.lru_lock_ns;
        let hold = lock_ns + work_ns;
        if hold == 0 {
            return;
        }
        let t = ctx.now + ctx.cpu_ns;
        let start = self.lru_locks[lv].acquire(t, hold);
        let wait = start - t;
        let st = &mut self.lru_lock_stats;
        st.acquisitions += 1;
        st.contended += (wait > 0) as u64;
        st.wait_ns += wait;
        st.hold_ns += hold;
        ctx.cpu_ns += wait + hold;
        ctx.lock_wait_ns += wait;
        if reclaim {
            self.reclaim_cpu.lock_wait_ns += wait;
            self.reclaim_cpu.scan_ns += lock_ns;
        }
    }

    /// A folio of lruvec `lv` enters the current CPU's batch `kind` (charged when the batch
    /// drains; see [`Mm::lru_settle`]).
    #[inline]
    pub(crate) fn lru_batch_add(&mut self, kind: BatchKind, lv: usize, large: bool) {
        let p = &mut self.lru_pending;
        let k = kind as usize;
        p.nr[k] += 1;
        p.lv[k] = lv as u16;
        p.large[k] |= large;
        p.any = true;
    }

    /// End of an operation on `ctx.cpu`: its batch additions join that CPU's batches, and
    /// every batch that filled up (or took a large folio) drains under its lruvec's lock, at
    /// the cost of `model.cost.lru_lock` plus `model.cost.lru_move` per folio.
    pub fn lru_settle(&mut self, ctx: &mut Ctx) {
        if !self.lru_pending.any {
            return;
        }
        let p = std::mem::take(&mut self.lru_pending);
        let cpu = ctx.cpu as usize;
        if self.cpu_batches.len() <= cpu {
            self.cpu_batches.resize(cpu + 1, CpuBatches::default());
        }
        for k in 0..NR_KINDS {
            if p.nr[k] == 0 {
                continue;
            }
            let b = &mut self.cpu_batches[cpu];
            b.nr[k] += p.nr[k];
            b.lv[k] = p.lv[k];
            while self.cpu_batches[cpu].nr[k] >= PAGEVEC_SIZE {
                self.cpu_batches[cpu].nr[k] -= PAGEVEC_SIZE;
                self.lru_batch_drain(ctx, p.lv[k] as usize, PAGEVEC_SIZE, false);
            }
            if p.large[k] && self.cpu_batches[cpu].nr[k] > 0 {
                let n = std::mem::take(&mut self.cpu_batches[cpu].nr[k]);
                self.lru_batch_drain(ctx, p.lv[k] as usize, n, false);
            }
        }
    }

    /// Kernel: `lru_add_drain()`: drain every batch of the current CPU (reclaim calls it
    /// before isolating).
    pub(crate) fn lru_add_drain(&mut self, ctx: &mut Ctx) {
        self.lru_settle(ctx);
        let cpu = ctx.cpu as usize;
        if cpu >= self.cpu_batches.len() {
            return;
        }
        for k in 0..NR_KINDS {
            let b = self.cpu_batches[cpu];
            if b.nr[k] > 0 {
                self.cpu_batches[cpu].nr[k] = 0;
                self.lru_batch_drain(ctx, b.lv[k] as usize, b.nr[k], true);
            }
        }
    }

    /// Kernel: `folio_batch_move_lru()`: `n` folios moved under `lv`'s lock.
    fn lru_batch_drain(&mut self, ctx: &mut Ctx, lv: usize, n: u32, reclaim: bool) {
        let work = n as u64 * self.cfg.costs.lru_move_ns;
        self.lru_lock_hold(ctx, lv, work, reclaim);
        if reclaim {
            self.reclaim_cpu.scan_ns += work;
        }
    }

    /// Folios waiting in CPU `cpu`'s batch `kind`.
    pub fn lru_batch_len(&self, cpu: usize, kind: BatchKind) -> u32 {
        self.cpu_batches.get(cpu).map_or(0, |b| b.nr[kind as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InstantIo;

    #[test]
    fn a_free_lock_is_taken_at_once() {
        let mut l = LruLock::default();
        assert_eq!(l.acquire(1_000, 100), 1_000);
        assert_eq!(l.acquire(2_000, 100), 2_000);
    }

    #[test]
    fn waiters_queue_in_arrival_order() {
        // Three threads ask at 0, 10 and 20 for 100 ns each: they hold [0,100), [100,200),
        // [200,300); the waits are 0, 90 and 180 ns.
        let mut l = LruLock::default();
        assert_eq!(l.acquire(0, 100), 0);
        assert_eq!(l.acquire(10, 100), 100);
        assert_eq!(l.acquire(20, 100), 200);
        // Adjacent holds merged into one.
        assert_eq!(l.len, 1);
        assert_eq!(l.holds[0], (0, 300));
    }

    #[test]
    fn a_later_step_fits_into_a_gap_between_future_holds() {
        // A long step took the lock at 1000 and at 3000 (batches of its reclaim); a thread
        // asking at 1500 for 500 ns fits between them; one asking at 1500 for 2000 ns does
        // not (the gap is 1900 ns) and waits for the end of the second hold.
        let mut l = LruLock::default();
        l.acquire(1_000, 100);
        l.acquire(3_000, 100);
        assert_eq!(l.acquire(1_500, 500), 1_500);
        assert_eq!(l.acquire(1_500, 2_000), 3_100);
        assert_eq!(
            l.holds[..l.len],
            [(1_000, 1_100), (1_500, 2_000), (3_000, 5_100)]
        );
    }

    #[test]
    fn the_calendar_forgets_the_oldest_hold() {
        let mut l = LruLock::default();
        for i in 0..HOLDS as u64 + 1 {
            l.acquire(i * 1_000, 10);
        }
        assert_eq!(l.len, HOLDS);
        assert_eq!(l.holds[0], (1_000, 1_010));
        // The forgotten hold at 0 no longer blocks.
        assert_eq!(l.acquire(0, 10), 0);
    }

    #[test]
    fn mm_batches_drain_once_per_31_folios() {
        use crate::testutil::tiny_config;
        let mut cfg = tiny_config(crate::BalanceKind::RefaultCost, 1024);
        cfg.costs.lru_lock_ns = 100;
        cfg.costs.lru_move_ns = 50;
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        let mut ctx = Ctx::new(0, &mut io, 0);
        ctx.cpu = 1;
        for _ in 0..30 {
            mm.lru_batch_add(BatchKind::Add, 0, false);
        }
        mm.lru_settle(&mut ctx);
        // 30 folios wait on CPU 1: no lock taken, nothing charged.
        assert_eq!(ctx.cpu_ns, 0);
        assert_eq!(mm.lru_batch_len(1, BatchKind::Add), 30);
        assert_eq!(mm.lru_lock_stats.acquisitions, 0);
        // The 31st fills the batch: one drain, 100 + 31 x 50 ns.
        mm.lru_batch_add(BatchKind::Add, 0, false);
        mm.lru_settle(&mut ctx);
        assert_eq!(ctx.cpu_ns, 100 + 31 * 50);
        assert_eq!(mm.lru_batch_len(1, BatchKind::Add), 0);
        assert_eq!(mm.lru_lock_stats.acquisitions, 1);
        // Three more and a reclaim on the same CPU: lru_add_drain() takes them now, and
        // charges the reclaim CPU.
        for _ in 0..3 {
            mm.lru_batch_add(BatchKind::Activate, 0, false);
        }
        let before = ctx.cpu_ns;
        mm.lru_add_drain(&mut ctx);
        assert_eq!(ctx.cpu_ns - before, 100 + 3 * 50);
        assert_eq!(mm.reclaim_cpu.scan_ns, 100 + 3 * 50);
        assert_eq!(mm.lru_batch_len(1, BatchKind::Activate), 0);
        // A large folio drains its batch at once.
        mm.lru_batch_add(BatchKind::Add, 0, false);
        mm.lru_batch_add(BatchKind::Add, 0, true);
        let before = ctx.cpu_ns;
        mm.lru_settle(&mut ctx);
        assert_eq!(ctx.cpu_ns - before, 100 + 2 * 50);
    }

    #[test]
    fn mm_a_contended_drain_spins_and_counts_the_wait() {
        use crate::testutil::tiny_config;
        let mut cfg = tiny_config(crate::BalanceKind::RefaultCost, 1024);
        cfg.costs.lru_lock_ns = 100;
        cfg.costs.lru_move_ns = 50;
        let mut mm = Mm::new(cfg);
        let mut io = InstantIo;
        // CPU 0 holds lruvec 0's lock over [0, 1650) (a full batch).
        let mut a = Ctx::new(0, &mut io, 0);
        for _ in 0..31 {
            mm.lru_batch_add(BatchKind::Add, 0, false);
        }
        mm.lru_settle(&mut a);
        assert_eq!(a.cpu_ns, 1_650);
        // CPU 1 fills its batch at 650 ns: it spins 1000 ns, then holds 1650 ns.
        let mut b = Ctx::new(600, &mut io, 0);
        b.cpu = 1;
        b.cpu_ns = 50;
        for _ in 0..31 {
            mm.lru_batch_add(BatchKind::Add, 0, false);
        }
        mm.lru_settle(&mut b);
        assert_eq!(b.lock_wait_ns, 1_000);
        assert_eq!(b.cpu_ns, 50 + 1_000 + 1_650);
        assert_eq!(mm.lru_lock_stats.contended, 1);
        assert_eq!(mm.lru_lock_stats.wait_ns, 1_000);
        // Not reclaim: the reclaim CPU's lock_wait bucket stays empty.
        assert_eq!(mm.reclaim_cpu.lock_wait_ns, 0);
    }
}
