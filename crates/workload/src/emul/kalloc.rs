//! Kernel allocations of order N: the stress-highalloc pattern (mmtests), or the slab,
//! page-table and kernel-stack churn of short-lived processes.
//!
//! Each instance makes `count` allocations (or runs until the run's duration), each followed
//! by `OpEnd` (ops/s counts attempts) and `think` CPU time. With `live = 0` every allocation
//! is held until the instance ends, then all are freed (stress-highalloc keeps its pages
//! until the phase ends); with `live = N` the oldest allocation is freed when the (N+1)-th is
//! made, so N allocations stay live (a ring of short-lived kernel objects).

use refault_scenario::{KallocGfp, KallocMigratetype, KallocSpec};

use crate::event::{kgfp, EventSource, Op};

#[derive(Clone, Debug)]
pub struct KallocSource {
    order: u8,
    gfp: u8,
    count: u64,
    live: u64,
    think: u32,
    /// Allocations made so far.
    made: u64,
    /// Next slot to free when draining at the end (live = 0) or in the ring.
    next_free: u64,
    /// Pending ops of the current allocation (emitted in reverse order).
    pending: Vec<Op>,
    draining: bool,
}

impl KallocSource {
    pub fn new(spec: &KallocSpec) -> Self {
        let mt = match spec.migratetype {
            KallocMigratetype::Unmovable => 0,
            KallocMigratetype::Movable => 1,
            KallocMigratetype::Reclaimable => 2,
        };
        let direct = match spec.gfp {
            KallocGfp::Kernel => kgfp::DIRECT,
            KallocGfp::KernelHigh => kgfp::DIRECT | kgfp::HIGH,
            KallocGfp::Nowait => kgfp::HIGH,
            KallocGfp::Atomic => kgfp::HIGH | kgfp::ATOMIC,
        };
        KallocSource {
            order: spec.order as u8,
            gfp: direct | (mt << kgfp::MT_SHIFT),
            count: spec.count,
            live: spec.live,
            think: spec.think_ns.min(u32::MAX as u64) as u32,
            made: 0,
            next_free: 0,
            pending: Vec::with_capacity(4),
            draining: false,
        }
    }
}

impl EventSource for KallocSource {
    fn next_op(&mut self) -> Option<Op> {
        if let Some(op) = self.pending.pop() {
            return Some(op);
        }
        if self.draining {
            if self.next_free < self.made {
                let slot = self.next_free as u32;
                self.next_free += 1;
                return Some(Op::KernelFree { slot });
            }
            return None;
        }
        if self.count > 0 && self.made >= self.count {
            self.draining = true;
            return self.next_op();
        }
        let slot = self.made as u32;
        self.made += 1;
        if self.think > 0 {
            self.pending.push(Op::Think { ns: self.think });
        }
        self.pending.push(Op::OpEnd);
        if self.live > 0 && self.made > self.live {
            let slot = self.next_free as u32;
            self.next_free += 1;
            self.pending.push(Op::KernelFree { slot });
        }
        Some(Op::KernelAlloc {
            order: self.order,
            gfp: self.gfp,
            slot,
        })
    }

    fn len_hint(&self) -> Option<u64> {
        (self.count > 0).then_some(self.count * 3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(count: u64, live: u64) -> KallocSpec {
        KallocSpec {
            order: 9,
            count,
            gfp: KallocGfp::Nowait,
            migratetype: KallocMigratetype::Unmovable,
            live,
            think_ns: 0,
        }
    }

    /// The gfp bits of each `gfp` value: "nowait" is GFP_NOWAIT | __GFP_HIGH, "kernel"
    /// GFP_KERNEL, "kernel-high" GFP_KERNEL | __GFP_HIGH, "atomic" GFP_ATOMIC (with
    /// `__GFP_ATOMIC`); the migratetype sits in bits 1-2.
    #[test]
    fn gfp_bits_of_each_kalloc_gfp() {
        for (gfp, bits) in [
            (KallocGfp::Nowait, kgfp::HIGH),
            (KallocGfp::Kernel, kgfp::DIRECT),
            (KallocGfp::KernelHigh, kgfp::DIRECT | kgfp::HIGH),
            (KallocGfp::Atomic, kgfp::HIGH | kgfp::ATOMIC),
        ] {
            let mut sp = spec(1, 0);
            sp.gfp = gfp;
            sp.migratetype = KallocMigratetype::Reclaimable;
            let mut s = KallocSource::new(&sp);
            assert_eq!(
                s.next_op(),
                Some(Op::KernelAlloc {
                    order: 9,
                    gfp: bits | (2 << kgfp::MT_SHIFT),
                    slot: 0
                }),
                "{gfp:?}"
            );
        }
    }

    #[test]
    fn held_until_the_end_then_freed() {
        let mut s = KallocSource::new(&spec(3, 0));
        let ops: Vec<Op> = std::iter::from_fn(|| s.next_op()).collect();
        let a = |slot| Op::KernelAlloc {
            order: 9,
            gfp: kgfp::HIGH,
            slot,
        };
        let f = |slot| Op::KernelFree { slot };
        assert_eq!(
            ops,
            vec![
                a(0),
                Op::OpEnd,
                a(1),
                Op::OpEnd,
                a(2),
                Op::OpEnd,
                f(0),
                f(1),
                f(2)
            ]
        );
    }

    #[test]
    fn ring_of_live_allocations() {
        let mut s = KallocSource::new(&spec(4, 2));
        let ops: Vec<Op> = std::iter::from_fn(|| s.next_op()).collect();
        let a = |slot| Op::KernelAlloc {
            order: 9,
            gfp: kgfp::HIGH,
            slot,
        };
        let f = |slot| Op::KernelFree { slot };
        assert_eq!(
            ops,
            vec![
                a(0),
                Op::OpEnd,
                a(1),
                Op::OpEnd,
                a(2),
                f(0),
                Op::OpEnd,
                a(3),
                f(1),
                Op::OpEnd,
                f(2),
                f(3)
            ]
        );
    }
}
