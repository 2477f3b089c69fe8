//! The events of one workload operation, queued so `next_op` can hand them out one at a time.
//!
//! A generator decides a whole operation at once (which pages, read or write, the think
//! time) and stores it here; `pop` then drains it in a fixed order:
//!
//! ```text
//!   touch run (obj, page .. page+n)  →  queued ops (buf)  →  Think chunks  →  OpEnd
//! ```
//!
//! Long parts are kept as counters, not expanded: a touch run of n consecutive pages is
//! (page, n), and a think time of any length is split lazily into `Think` events of at most
//! `u32::MAX` ns. The buffer is a fixed array, so queuing never allocates.

use crate::event::{ObjId, Op};

/// Largest think time one `Think` event carries.
pub(crate) const THINK_CHUNK_NS: u64 = u32::MAX as u64;

/// Number of `Think` events a think time of `ns` becomes.
#[inline]
pub(crate) fn think_events(ns: u64) -> u64 {
    ns.div_ceil(THINK_CHUNK_NS)
}

/// The pending events of the current operation (`N`: capacity of the op buffer).
#[derive(Clone, Debug)]
pub(crate) struct OpSeq<const N: usize> {
    /// Object of the touch run.
    run_obj: ObjId,
    /// Next page of the touch run.
    run_page: u32,
    /// Touches left in the run.
    run_left: u32,
    /// The run's touches are stores.
    run_write: bool,
    /// The run's first touch is a store whatever `run_write` says.
    run_write_first: bool,
    /// Queued ops, drained from `head` to `len`.
    buf: [Op; N],
    head: u8,
    len: u8,
    /// Think time still to emit.
    think_left: u64,
    /// An `OpEnd` is still to emit.
    end: bool,
}

impl<const N: usize> OpSeq<N> {
    pub(crate) fn new() -> Self {
        assert!(N <= u8::MAX as usize);
        OpSeq {
            run_obj: 0,
            run_page: 0,
            run_left: 0,
            run_write: false,
            run_write_first: false,
            buf: [Op::OpEnd; N],
            head: 0,
            len: 0,
            think_left: 0,
            end: false,
        }
    }

    /// Queues `nr` touches of consecutive pages from `page` (one run per operation).
    #[inline]
    pub(crate) fn touch_run(&mut self, obj: ObjId, page: u32, nr: u32, write: bool) {
        debug_assert_eq!(self.run_left, 0);
        self.run_obj = obj;
        self.run_page = page;
        self.run_left = nr;
        self.run_write = write;
        self.run_write_first = false;
    }

    /// Queues `nr` touches of consecutive pages from `page` whose first is a store and the
    /// rest loads (a memcached get: the item header's refcount, then the value).
    #[inline]
    pub(crate) fn touch_run_write_first(&mut self, obj: ObjId, page: u32, nr: u32) {
        self.touch_run(obj, page, nr, false);
        self.run_write_first = nr > 0;
    }

    /// Queues one op after the touch run.
    #[inline]
    pub(crate) fn push(&mut self, op: Op) {
        if self.head == self.len {
            self.head = 0;
            self.len = 0;
        }
        assert!((self.len as usize) < N, "OpSeq overflow");
        self.buf[self.len as usize] = op;
        self.len += 1;
    }

    /// Queues `ns` of think time (nothing for 0) and then the `OpEnd`.
    #[inline]
    pub(crate) fn finish(&mut self, think_ns: u64) {
        self.think_left = think_ns;
        self.end = true;
    }

    /// The next pending event, or None when the operation is fully emitted.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<Op> {
        if self.run_left > 0 {
            let page = self.run_page;
            self.run_left -= 1;
            self.run_page = self.run_page.wrapping_add(1);
            let write = self.run_write | self.run_write_first;
            self.run_write_first = false;
            return Some(Op::Touch {
                obj: self.run_obj,
                page,
                write,
            });
        }
        if self.head < self.len {
            let op = self.buf[self.head as usize];
            self.head += 1;
            return Some(op);
        }
        if self.think_left > 0 {
            let ns = self.think_left.min(THINK_CHUNK_NS);
            self.think_left -= ns;
            return Some(Op::Think { ns: ns as u32 });
        }
        if self.end {
            self.end = false;
            return Some(Op::OpEnd);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drains_in_order_and_splits_think() {
        let mut s = OpSeq::<2>::new();
        s.touch_run(3, 10, 2, true);
        s.push(Op::Fsync { obj: 3 });
        s.finish(2 * THINK_CHUNK_NS + 5);
        let got: Vec<Op> = std::iter::from_fn(|| s.pop()).collect();
        assert_eq!(
            got,
            [
                Op::Touch {
                    obj: 3,
                    page: 10,
                    write: true
                },
                Op::Touch {
                    obj: 3,
                    page: 11,
                    write: true
                },
                Op::Fsync { obj: 3 },
                Op::Think { ns: u32::MAX },
                Op::Think { ns: u32::MAX },
                Op::Think { ns: 5 },
                Op::OpEnd,
            ]
        );
        assert_eq!(think_events(2 * THINK_CHUNK_NS + 5), 3);
        assert_eq!(think_events(0), 0);
        assert_eq!(think_events(THINK_CHUNK_NS), 1);
        // Reusable: the buffer restarts once drained.
        s.push(Op::OpEnd);
        s.push(Op::OpEnd);
        assert_eq!(s.pop(), Some(Op::OpEnd));
    }
}
