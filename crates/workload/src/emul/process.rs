//! Short-lived processes, one after another: a build's compilers (`workload = "process"`).
//!
//! Each process is `Fork { obj }`, then `ops` stores to pages of the object drawn uniformly
//! at random (each followed by `think` CPU time), then `Exit { obj }` and `OpEnd` (ops/s
//! counts processes, and the latency histogram holds their lifetimes). The first store to a
//! page faults it in (a THP fault when the 2 MiB range around it is empty and THP is
//! allowed), so a process's resident memory grows over its life as a compiler's heap does,
//! and all of it goes at exit.
//!
//! What it leaves out: a compiler also reads its source and headers (the scenario's file
//! reads stand for them), maps its binary and libraries (shared page cache, not modelled
//! per process), and its heap's access pattern is not uniform.

use refault_scenario::{ObjectSpec, ProcessSpec};

use crate::event::{EventSource, ObjId, Op};
use crate::rng::Rng;

#[derive(Clone, Debug)]
pub struct ProcessSource {
    obj: ObjId,
    pages: u64,
    count: u64,
    ops: u64,
    think: u32,
    rng: Rng,
    /// Processes started so far.
    started: u64,
    /// Stores left in the current process; None between processes.
    left: Option<u64>,
    /// A Think to emit before the next store.
    think_pending: bool,
    /// Exit done, OpEnd to emit.
    end_pending: bool,
}

impl ProcessSource {
    pub fn new(spec: &ProcessSpec, objects: &[ObjectSpec], seed: u64) -> Self {
        ProcessSource {
            obj: spec.object as ObjId,
            pages: objects[spec.object].size_pages,
            count: spec.count,
            ops: spec.ops,
            think: spec.think_ns.min(u32::MAX as u64) as u32,
            rng: Rng::new(seed),
            started: 0,
            left: None,
            think_pending: false,
            end_pending: false,
        }
    }
}

impl EventSource for ProcessSource {
    fn next_op(&mut self) -> Option<Op> {
        if self.end_pending {
            self.end_pending = false;
            return Some(Op::OpEnd);
        }
        if self.think_pending {
            self.think_pending = false;
            return Some(Op::Think { ns: self.think });
        }
        match self.left {
            None => {
                if self.count > 0 && self.started >= self.count {
                    return None;
                }
                self.started += 1;
                self.left = Some(self.ops);
                Some(Op::Fork { obj: self.obj })
            }
            Some(0) => {
                self.left = None;
                self.end_pending = true;
                Some(Op::Exit { obj: self.obj })
            }
            Some(n) => {
                self.left = Some(n - 1);
                self.think_pending = self.think > 0;
                Some(Op::Touch {
                    obj: self.obj,
                    page: self.rng.below(self.pages) as u32,
                    write: true,
                })
            }
        }
    }

    fn len_hint(&self) -> Option<u64> {
        let per = 3 + self.ops * (1 + (self.think > 0) as u64);
        (self.count > 0).then_some(self.count * per)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::anon;

    /// Two processes of three stores each over a 4-page object: fork, three stores (each
    /// followed by its think time) to pages below 4, exit, OpEnd; then the stream ends.
    #[test]
    fn fork_stores_exit_per_process() {
        let spec = ProcessSpec {
            object: 0,
            count: 2,
            ops: 3,
            think_ns: 10_000,
        };
        let mut s = ProcessSource::new(&spec, &[anon("heap", 4)], 7);
        let ops: Vec<Op> = std::iter::from_fn(|| s.next_op()).collect();
        assert_eq!(ops.len() as u64, s.len_hint().unwrap());
        assert_eq!(ops.len(), 2 * (1 + 3 * 2 + 2));
        for life in ops.chunks(9) {
            assert_eq!(life[0], Op::Fork { obj: 0 });
            for k in 0..3 {
                match life[1 + 2 * k] {
                    Op::Touch {
                        obj: 0,
                        page,
                        write: true,
                    } => assert!(page < 4),
                    op => panic!("expected a store, got {op:?}"),
                }
                assert_eq!(life[2 + 2 * k], Op::Think { ns: 10_000 });
            }
            assert_eq!(life[7], Op::Exit { obj: 0 });
            assert_eq!(life[8], Op::OpEnd);
        }
    }
}
