//! Generated phases: the event stream of a `Workload::Phases` task.
//!
//! # The stream
//! A task runs its phases in order, the whole list `repeat` times (0 = until the run's
//! duration ends it). One phase is:
//!
//! ```text
//!   Phase{idx}
//!   Advise{obj, hint}                 only if the phase's advice differs from the hint this
//!                                     task last gave obj (initially Normal)
//!   ops × ( access events             touch:       ppo × Touch (consecutive pages; one
//!                                                  load/store choice per operation,
//!                                                  stores with probability write_fraction)
//!                                     touch-write: ppo × Touch{write}
//!                                     read/write:  one Read/Write{nr = ppo}
//!                                     create:      one Create{nr = ppo, fsync} (the
//!                                                  next file of the directory)
//!           Think{ns} …               if think_ns > 0, in chunks of at most u32::MAX ns
//!           OpEnd )
//!   Fsync{obj}                        if the phase asks for it (not create phases,
//!                                     whose files are fsynced one by one)
//! ```
//!
//! A phase with a per-op mix (`PhaseSpec::mix`) draws, for each operation, one entry with
//! probability weight / total weight (one `next_f64` from the task's stream), then the
//! entry's slot and store choice as a one-object phase would; its `Advise` events (one per
//! object of the mix whose hint changes, in entry order) follow `Phase{idx}`. Each entry
//! keeps its own sequential cursor.
//!
//! Where the operations land is `pattern.rs`'s job: sequential walks from `start` to `end`
//! and wrap, the others pick aligned slots of `ppo` pages. A sequential cursor restarts at
//! `start` with every phase (each pass of the list reads the file again from the start).
//!
//! # In this model
//! [`PhaseSource`] is a small state machine (`Step`) around the pending events of the
//! current operation (`OpSeq`): one call of `next_op` is one match on the step and one pop,
//! with no allocation and no hashing. The state is O(phases).
//!
//! # Simplifies
//! - One load/store decision per operation, not per page: a multi-page touch operation is
//!   one `memcpy`-like access to consecutive pages.
//! - The advice hint is tracked per task: a phase that repeats its object's current hint
//!   emits nothing, as a real process would not call madvise() again.
//!
//! # Tests
//! `gen::tests::*`.

pub(crate) mod pattern;

#[cfg(test)]
use refault_scenario::MixSpec;
use refault_scenario::{Access, Advice, ObjectKind, ObjectSpec, Pattern, PhaseSpec};

use crate::error::{check, SourceErrorKind};
use crate::event::{EventSource, Hint, ObjId, Op};
use crate::rng::Rng;
use crate::seq::{think_events, OpSeq};
use crate::source::object_scatter_key;
use pattern::Sampler;

/// What one operation aims at: a phase's object and range, or a mix entry's.
#[derive(Clone, Debug)]
struct Target {
    obj: ObjId,
    access: Access,
    /// Probability that a touch operation stores (touch access only).
    write_fraction: f64,
    /// First page of the range.
    start: u32,
    /// Pages in the range.
    len: u64,
    /// Pages per operation, clamped to `len`.
    ppo: u32,
    /// Aligned operation slots in the range: `len / ppo`.
    slots: u64,
    sampler: Sampler,
}

/// One phase, resolved for generation.
#[derive(Clone, Debug)]
struct Phase {
    /// The phase's object and range (a mix phase's operations aim at its entries' instead).
    target: Target,
    ops: u64,
    think_ns: u64,
    hint: Hint,
    /// Index into `PhaseSource::hints` of this phase's object.
    hint_slot: usize,
    fsync: bool,
    /// Per-op mix entries (empty: the phase accesses its one object).
    mix: Box<[Part]>,
    /// Hint slots this phase advises, in order: its object's, or every mix object's.
    advise: Box<[usize]>,
}

/// One entry of a per-op mix, resolved for generation.
#[derive(Clone, Debug)]
struct Part {
    target: Target,
    /// Cumulative weight up to and including this entry, divided by the total.
    cum: f64,
}

impl Target {
    /// Events of one operation, if every operation has the same number.
    fn events_per_op(&self) -> Option<u128> {
        match self.access {
            Access::Read | Access::Write | Access::Create => Some(1),
            Access::Touch | Access::TouchWrite => {
                let seq = matches!(self.sampler, Sampler::Sequential);
                (!seq || self.len.is_multiple_of(u64::from(self.ppo)))
                    .then_some(u128::from(self.ppo))
            }
        }
    }

    /// Access events of `ops` operations.
    fn accesses(&self, ops: u64) -> u128 {
        let ops = u128::from(ops);
        let ppo = u128::from(self.ppo);
        match (self.access, &self.sampler) {
            (Access::Read | Access::Write | Access::Create, _) => ops,
            (Access::Touch | Access::TouchWrite, Sampler::Sequential) => {
                let len = u128::from(self.len);
                let per_pass = len.div_ceil(ppo);
                (ops / per_pass) * len + (ops % per_pass) * ppo
            }
            (Access::Touch | Access::TouchWrite, _) => ops * ppo,
        }
    }
}

impl Phase {
    /// Events of this phase, excluding its Advise (which depends on the previous phases);
    /// None for a mix whose entries' operations differ in events (a random total).
    fn events(&self) -> Option<u128> {
        let ops = u128::from(self.ops);
        let accesses = if self.mix.is_empty() {
            self.target.accesses(self.ops)
        } else {
            let per_op = self.mix[0].target.events_per_op()?;
            if self
                .mix
                .iter()
                .any(|p| p.target.events_per_op() != Some(per_op))
            {
                return None;
            }
            ops * per_op
        };
        Some(
            1 + accesses
                + ops * u128::from(1 + think_events(self.think_ns))
                + u128::from(self.fsync && self.target.access != Access::Create),
        )
    }
}

/// Where the state machine is within the current phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Emit `Phase{idx}` (or finish a pass of the list).
    Enter,
    /// Emit the phase's `Advise` if the hint changes.
    Advise,
    /// Emit operations.
    Ops,
    /// Emit the phase's `Fsync` if any, move to the next phase.
    Exit,
    /// The task has finished.
    Done,
}

/// The event stream of a `Workload::Phases` task (see the module doc).
#[derive(Clone, Debug)]
pub struct PhaseSource {
    phases: Box<[Phase]>,
    /// The hint this task last gave each object its phases access (initially Normal).
    hints: Box<[(ObjId, Hint)]>,
    /// Passes over the list; 0 = forever.
    repeat: u64,
    /// Completed passes.
    pass: u64,
    /// Current phase.
    idx: usize,
    step: Step,
    /// Operations issued in the current phase.
    done: u64,
    /// Sequential cursor: offset in the current phase's range.
    cursor: u64,
    /// Sequential cursors of the current phase's mix entries.
    mix_cursors: Box<[u64]>,
    /// Next entry of the current phase's `advise` list.
    adv: usize,
    rng: Rng,
    seq: OpSeq<1>,
    /// Total events, when finite.
    total: Option<u64>,
}

fn hint_of(a: Advice) -> Hint {
    match a {
        Advice::Normal => Hint::Normal,
        Advice::Random => Hint::Random,
        Advice::Sequential => Hint::Sequential,
    }
}

impl PhaseSource {
    /// The stream of `phases` repeated `repeat` times (0 = forever), drawing from
    /// `Rng::new(seed)`. `scenario_seed` keys the Zipf scatter permutations (per object, so
    /// every task agrees on which pages of an object are hot).
    pub fn new(
        phases: &[PhaseSpec],
        repeat: u64,
        objects: &[ObjectSpec],
        seed: u64,
        scenario_seed: u64,
    ) -> Result<Self, SourceErrorKind> {
        if phases.len() > usize::from(u16::MAX) + 1 {
            return Err(SourceErrorKind::TooManyPhases {
                count: phases.len(),
            });
        }
        let mut hints: Vec<(ObjId, Hint)> = Vec::new();
        let mut out = Vec::with_capacity(phases.len());
        for (i, p) in phases.iter().enumerate() {
            let phase = resolve_phase(i, p, objects, scenario_seed, &mut hints)?;
            out.push(phase);
        }
        let total = total_events(&out, hints.len(), repeat);
        let max_mix = out.iter().map(|p| p.mix.len()).max().unwrap_or(0);
        Ok(PhaseSource {
            phases: out.into_boxed_slice(),
            hints: hints.into_boxed_slice(),
            repeat,
            pass: 0,
            idx: 0,
            step: if phases.is_empty() {
                Step::Done
            } else {
                Step::Enter
            },
            done: 0,
            cursor: 0,
            mix_cursors: vec![0; max_mix].into_boxed_slice(),
            adv: 0,
            rng: Rng::new(seed),
            seq: OpSeq::new(),
            total,
        })
    }
}

fn resolve_phase(
    i: usize,
    p: &PhaseSpec,
    objects: &[ObjectSpec],
    scenario_seed: u64,
    hints: &mut Vec<(ObjId, Hint)>,
) -> Result<Phase, SourceErrorKind> {
    let field = |name: &str| format!("phases[{i}].{name}");
    let (kinds, expected): (&[ObjectKind], _) = match p.access {
        Access::Read | Access::Write => (&[ObjectKind::File], "a file for read()/write()"),
        Access::Create => (
            &[ObjectKind::File],
            "a file object (the directory) to create files in",
        ),
        Access::Touch | Access::TouchWrite => (&[], ""),
    };
    let obj = check::object(objects, p.object, &|| field("object"), kinds, expected)?;
    if p.fsync && obj.kind != ObjectKind::File {
        return Err(SourceErrorKind::WrongObjectKind {
            field: field("fsync"),
            object: p.object,
            kind: obj.kind,
            expected: "a file to fsync",
        });
    }
    if p.start_page >= p.end_page || p.end_page > obj.size_pages {
        return Err(SourceErrorKind::BadRange {
            phase: i,
            start: p.start_page,
            end: p.end_page,
            object_pages: obj.size_pages,
        });
    }
    check::positive(u64::from(p.pages_per_op), &|| field("pages_per_op"))?;
    if p.access == Access::Touch {
        check::probability(p.write_fraction, &|| field("write_fraction"))?;
    }
    match p.pattern {
        Pattern::Zipf { s, .. } => check::exponent(s, &|| field("pattern.s"))?,
        Pattern::HotCold {
            hot_fraction,
            hot_probability,
        } => {
            check::probability(hot_fraction, &|| field("pattern.hot_fraction"))?;
            check::probability(hot_probability, &|| field("pattern.hot_probability"))?;
        }
        Pattern::Sequential | Pattern::Random => {}
    }
    let obj_id = p.object as ObjId;
    let len = p.end_page - p.start_page;
    let ppo = u64::from(p.pages_per_op).min(len) as u32;
    let slots = len / u64::from(ppo);
    let hint_slot = match hints.iter().position(|&(o, _)| o == obj_id) {
        Some(h) => h,
        None => {
            hints.push((obj_id, Hint::Normal));
            hints.len() - 1
        }
    };
    let mut mix = Vec::with_capacity(p.mix.len());
    let mut advise = vec![hint_slot];
    let total: f64 = p.mix.iter().map(|m| m.weight).sum();
    let mut cum = 0.0;
    for (k, m) in p.mix.iter().enumerate() {
        let entry = PhaseSpec {
            object: m.object,
            access: m.access,
            pattern: m.pattern.clone(),
            start_page: m.start_page,
            end_page: m.end_page,
            pages_per_op: m.pages_per_op,
            write_fraction: m.write_fraction,
            fsync: false,
            mix: Vec::new(),
            ..p.clone()
        };
        if !(m.weight.is_finite() && m.weight > 0.0) {
            return Err(SourceErrorKind::BadValue {
                field: format!("phases[{i}].mix[{k}].weight"),
                value: m.weight,
                expected: "a positive weight",
            });
        }
        let part = resolve_phase(i, &entry, objects, scenario_seed, hints)?;
        cum += m.weight;
        if !advise.contains(&part.hint_slot) {
            advise.push(part.hint_slot);
        }
        mix.push(Part {
            target: part.target,
            cum: if k + 1 == p.mix.len() {
                1.0
            } else {
                cum / total
            },
        });
    }
    Ok(Phase {
        target: Target {
            obj: obj_id,
            access: p.access,
            write_fraction: p.write_fraction,
            start: p.start_page as u32,
            len,
            ppo,
            slots,
            sampler: Sampler::new(&p.pattern, slots, object_scatter_key(scenario_seed, obj_id)),
        },
        ops: p.ops,
        think_ns: p.think_ns,
        hint: hint_of(p.advice),
        hint_slot,
        fsync: p.fsync,
        mix: mix.into_boxed_slice(),
        advise: advise.into_boxed_slice(),
    })
}

/// Events of the whole stream, or None if infinite (or beyond u64). Advise events depend on
/// the hints left by earlier phases; after one full pass every object holds the hint of the
/// last phase that accessed it, so passes 2, 3, ... all emit the same Advise events.
fn total_events(phases: &[Phase], nr_hints: usize, repeat: u64) -> Option<u64> {
    if phases.is_empty() {
        return Some(0);
    }
    if repeat == 0 {
        return None;
    }
    let mut hints = vec![Hint::Normal; nr_hints];
    let mut pass = || {
        let mut n = 0u128;
        for p in phases {
            for &slot in p.advise.iter() {
                if hints[slot] != p.hint {
                    hints[slot] = p.hint;
                    n += 1;
                }
            }
            n += p.events()?;
        }
        Some(n)
    };
    let first = pass()?;
    let later = pass()?;
    u64::try_from(first + u128::from(repeat - 1) * later).ok()
}

/// Queues the events of the next operation of a mix phase: one entry by weight, then its
/// access (a mix entry's Create never fsyncs).
#[inline]
fn issue_mix(ph: &Phase, rng: &mut Rng, cursors: &mut [u64], seq: &mut OpSeq<1>) {
    let u = rng.next_f64();
    let k = ph
        .mix
        .iter()
        .position(|p| u < p.cum)
        .unwrap_or(ph.mix.len() - 1);
    issue_target(&ph.mix[k].target, false, rng, &mut cursors[k], seq);
}

/// Queues the access events of the next operation aimed at `t` (the caller ends the
/// operation); `fsync` is a Create's flag.
#[inline]
fn issue_target(t: &Target, fsync: bool, rng: &mut Rng, cursor: &mut u64, seq: &mut OpSeq<1>) {
    let (offset, nr) = if matches!(t.sampler, Sampler::Sequential) {
        let off = *cursor;
        let nr = (t.len - off).min(u64::from(t.ppo));
        *cursor = if off + nr == t.len { 0 } else { off + nr };
        (off, nr as u32)
    } else {
        (t.sampler.slot(t.slots, rng) * u64::from(t.ppo), t.ppo)
    };
    let page = t.start + offset as u32;
    match t.access {
        Access::Touch => {
            let write = rng.chance(t.write_fraction);
            seq.touch_run(t.obj, page, nr, write);
        }
        Access::TouchWrite => seq.touch_run(t.obj, page, nr, true),
        Access::Read => seq.push(Op::Read {
            obj: t.obj,
            page,
            nr,
        }),
        Access::Write => seq.push(Op::Write {
            obj: t.obj,
            page,
            nr,
        }),
        Access::Create => seq.push(Op::Create {
            obj: t.obj,
            page,
            nr,
            fsync,
        }),
    }
}

impl EventSource for PhaseSource {
    #[inline]
    fn next_op(&mut self) -> Option<Op> {
        loop {
            if let Some(op) = self.seq.pop() {
                return Some(op);
            }
            match self.step {
                Step::Ops => {
                    let ph = &self.phases[self.idx];
                    if self.done < ph.ops {
                        self.done += 1;
                        if ph.mix.is_empty() {
                            issue_target(
                                &ph.target,
                                ph.fsync,
                                &mut self.rng,
                                &mut self.cursor,
                                &mut self.seq,
                            );
                        } else {
                            issue_mix(ph, &mut self.rng, &mut self.mix_cursors, &mut self.seq);
                        }
                        self.seq.finish(ph.think_ns);
                    } else {
                        self.step = Step::Exit;
                    }
                }
                Step::Enter => {
                    if self.idx == self.phases.len() {
                        self.pass += 1;
                        if self.repeat != 0 && self.pass >= self.repeat {
                            self.step = Step::Done;
                            return None;
                        }
                        self.idx = 0;
                    }
                    self.done = 0;
                    self.cursor = 0;
                    self.mix_cursors.fill(0);
                    self.adv = 0;
                    self.step = Step::Advise;
                    return Some(Op::Phase {
                        idx: self.idx as u16,
                    });
                }
                Step::Advise => {
                    let ph = &self.phases[self.idx];
                    let Some(&slot) = ph.advise.get(self.adv) else {
                        self.step = Step::Ops;
                        continue;
                    };
                    self.adv += 1;
                    let (obj, cur) = &mut self.hints[slot];
                    if *cur != ph.hint {
                        *cur = ph.hint;
                        return Some(Op::Advise {
                            obj: *obj,
                            hint: ph.hint,
                        });
                    }
                }
                Step::Exit => {
                    let ph = &self.phases[self.idx];
                    self.idx += 1;
                    self.step = Step::Enter;
                    if ph.fsync && ph.target.access != Access::Create {
                        return Some(Op::Fsync { obj: ph.target.obj });
                    }
                }
                Step::Done => return None,
            }
        }
    }

    fn len_hint(&self) -> Option<u64> {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{anon, file, phase};

    fn collect(src: &mut PhaseSource, limit: usize) -> Vec<Op> {
        std::iter::from_fn(|| src.next_op()).take(limit).collect()
    }

    fn source(phases: &[PhaseSpec], repeat: u64, objects: &[ObjectSpec], seed: u64) -> PhaseSource {
        PhaseSource::new(phases, repeat, objects, seed, 1).unwrap()
    }

    /// A create phase: one Create per file, in order, with the phase's fsync flag and no
    /// phase-end Fsync; len_hint counts them.
    #[test]
    fn create_phase_creates_files_in_order() {
        let objs = [file("dir", 12)];
        let mut p = phase(0, Access::Create, Pattern::Sequential, 4, 12, 4);
        p.pages_per_op = 2;
        p.fsync = true;
        let mut src = source(&[p], 1, &objs, 1);
        assert_eq!(src.len_hint(), Some(1 + 4 * 2));
        let ops = collect(&mut src, 100);
        assert_eq!(ops.len(), 9);
        let created: Vec<u32> = ops
            .iter()
            .filter_map(|o| match *o {
                Op::Create {
                    obj: 0,
                    page,
                    nr: 2,
                    fsync: true,
                } => Some(page),
                _ => None,
            })
            .collect();
        assert_eq!(created, vec![4, 6, 8, 10]);
        assert!(!ops.iter().any(|o| matches!(o, Op::Fsync { .. })));
    }

    #[test]
    fn phase_structure_read_phase() {
        let objs = [file("f", 100)];
        let mut p = phase(0, Access::Read, Pattern::Random, 10, 50, 7);
        p.pages_per_op = 4;
        p.advice = Advice::Random;
        p.think_ns = 1000;
        p.fsync = true;
        let mut src = source(&[p], 1, &objs, 9);
        let ops = collect(&mut src, 1000);
        assert_eq!(ops[0], Op::Phase { idx: 0 });
        assert_eq!(
            ops[1],
            Op::Advise {
                obj: 0,
                hint: Hint::Random
            }
        );
        assert_eq!(*ops.last().unwrap(), Op::Fsync { obj: 0 });
        let body = &ops[2..ops.len() - 1];
        assert_eq!(body.len(), 7 * 3);
        for chunk in body.chunks(3) {
            let Op::Read {
                obj: 0,
                page,
                nr: 4,
            } = chunk[0]
            else {
                panic!("{chunk:?}")
            };
            // Aligned 4-page slots of [10, 50): 10, 14, ..., 46.
            assert!((10..=46).contains(&page) && (page - 10) % 4 == 0, "{page}");
            assert_eq!(chunk[1], Op::Think { ns: 1000 });
            assert_eq!(chunk[2], Op::OpEnd);
        }
        assert_eq!(src.len_hint(), Some(ops.len() as u64));
        assert_eq!(src.next_op(), None);
        assert_eq!(src.next_op(), None);
    }

    #[test]
    fn sequential_touch_wraps_and_truncates_at_the_end() {
        let objs = [anon("a", 10)];
        // Range [2, 9): 7 pages, 3 per op: ops cover 2-4, 5-7, 8, then wrap 2-4, 5-7.
        let mut p = phase(0, Access::TouchWrite, Pattern::Sequential, 2, 9, 5);
        p.pages_per_op = 3;
        let mut src = source(&[p], 1, &objs, 1);
        let ops = collect(&mut src, 1000);
        let pages: Vec<u32> = ops
            .iter()
            .filter_map(|op| match *op {
                Op::Touch {
                    page, write: true, ..
                } => Some(page),
                Op::Touch { .. } => panic!("touch-write must store"),
                _ => None,
            })
            .collect();
        assert_eq!(pages, [2, 3, 4, 5, 6, 7, 8, 2, 3, 4, 5, 6, 7]);
        let ends = ops.iter().filter(|o| **o == Op::OpEnd).count();
        assert_eq!(ends, 5);
        // Normal advice: no Advise event.
        assert!(!ops.iter().any(|o| matches!(o, Op::Advise { .. })));
        assert_eq!(src.len_hint(), Some(ops.len() as u64));
    }

    #[test]
    fn sequential_reads_loop_over_the_range() {
        let objs = [file("f", 64)];
        let mut p = phase(0, Access::Read, Pattern::Sequential, 0, 10, 9);
        p.pages_per_op = 4;
        let mut src = source(&[p], 1, &objs, 1);
        let reads: Vec<(u32, u32)> = collect(&mut src, 1000)
            .into_iter()
            .filter_map(|op| match op {
                Op::Read { page, nr, .. } => Some((page, nr)),
                _ => None,
            })
            .collect();
        assert_eq!(
            reads,
            [
                (0, 4),
                (4, 4),
                (8, 2),
                (0, 4),
                (4, 4),
                (8, 2),
                (0, 4),
                (4, 4),
                (8, 2)
            ]
        );
    }

    #[test]
    fn repeat_and_advice_changes() {
        let objs = [file("f", 100), anon("a", 100)];
        let mut a = phase(0, Access::Read, Pattern::Random, 0, 100, 3);
        a.advice = Advice::Random;
        let b = phase(1, Access::Touch, Pattern::Random, 0, 100, 2);
        let mut c = phase(0, Access::Write, Pattern::Sequential, 0, 100, 2);
        c.advice = Advice::Sequential;
        c.fsync = true;
        let mut src = source(&[a, b, c], 3, &objs, 4);
        let ops = collect(&mut src, 10_000);
        let marks: Vec<Op> = ops
            .iter()
            .copied()
            .filter(|o| matches!(o, Op::Phase { .. } | Op::Advise { .. } | Op::Fsync { .. }))
            .collect();
        // Every pass gives both hints again: the previous pass ended with Sequential.
        let pass = [
            Op::Phase { idx: 0 },
            Op::Advise {
                obj: 0,
                hint: Hint::Random,
            },
            Op::Phase { idx: 1 },
            Op::Phase { idx: 2 },
            Op::Advise {
                obj: 0,
                hint: Hint::Sequential,
            },
            Op::Fsync { obj: 0 },
        ];
        let want: Vec<Op> = [pass, pass, pass].concat();
        assert_eq!(marks, want);
        let ends = ops.iter().filter(|o| **o == Op::OpEnd).count();
        assert_eq!(ends, 3 * (3 + 2 + 2));
        assert_eq!(src.len_hint(), Some(ops.len() as u64));
    }

    #[test]
    fn same_advice_every_pass_is_given_once() {
        let objs = [file("f", 100)];
        let mut a = phase(0, Access::Read, Pattern::Random, 0, 100, 1);
        a.advice = Advice::Random;
        let mut src = source(&[a], 4, &objs, 4);
        let ops = collect(&mut src, 10_000);
        let advises = ops
            .iter()
            .filter(|o| matches!(o, Op::Advise { .. }))
            .count();
        assert_eq!(advises, 1);
        assert_eq!(src.len_hint(), Some(ops.len() as u64));
    }

    #[test]
    fn ranges_respected_by_every_pattern() {
        let objs = [anon("a", 5000)];
        let patterns = [
            Pattern::Sequential,
            Pattern::Random,
            Pattern::Zipf {
                s: 0.99,
                scatter: true,
            },
            Pattern::Zipf {
                s: 1.2,
                scatter: false,
            },
            Pattern::HotCold {
                hot_fraction: 0.1,
                hot_probability: 0.9,
            },
        ];
        for pat in patterns {
            let mut p = phase(0, Access::Touch, pat.clone(), 1000, 3003, 20_000);
            p.pages_per_op = 4;
            p.write_fraction = 0.3;
            let mut src = source(&[p], 1, &objs, 77);
            let mut writes = 0u32;
            let mut touches = 0u32;
            while let Some(op) = src.next_op() {
                if let Op::Touch { obj, page, write } = op {
                    assert_eq!(obj, 0);
                    assert!((1000..3003).contains(&page), "{pat:?}: page {page}");
                    touches += 1;
                    writes += u32::from(write);
                }
            }
            let frac = f64::from(writes) / f64::from(touches);
            assert!((frac - 0.3).abs() < 0.03, "{pat:?}: write fraction {frac}");
        }
    }

    #[test]
    fn zipf_phase_concentrates_on_scattered_hot_pages() {
        let objs = [anon("a", 1000)];
        let p = phase(
            0,
            Access::Touch,
            Pattern::Zipf {
                s: 0.99,
                scatter: true,
            },
            0,
            1000,
            200_000,
        );
        let mut src = source(&[p], 1, &objs, 5);
        let mut counts = vec![0u32; 1000];
        while let Some(op) = src.next_op() {
            if let Op::Touch { page, .. } = op {
                counts[page as usize] += 1;
            }
        }
        let z = crate::zipf::Zipf::new(1000, 0.99);
        let sc = crate::zipf::Scatter::new(1000, object_scatter_key(1, 0));
        for rank in 0..5 {
            let page = sc.apply(rank) as usize;
            let f = f64::from(counts[page]) / 200_000.0;
            let p = z.pmf_exact(rank);
            assert!(
                (f - p).abs() < 0.06 * p,
                "rank {rank} page {page}: {f} vs {p}"
            );
        }
        // Scattered: the five hottest pages are not simply 0..5.
        assert_ne!(
            (0..5).map(|r| sc.apply(r)).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4]
        );
    }

    #[test]
    fn hot_cold_phase_proportions() {
        let objs = [anon("a", 1000)];
        let pat = Pattern::HotCold {
            hot_fraction: 0.05,
            hot_probability: 0.95,
        };
        let p = phase(0, Access::Touch, pat, 0, 1000, 100_000);
        let mut src = source(&[p], 1, &objs, 5);
        let (mut hot, mut all) = (0u32, 0u32);
        while let Some(op) = src.next_op() {
            if let Op::Touch { page, .. } = op {
                all += 1;
                hot += u32::from(page < 50);
            }
        }
        assert!((f64::from(hot) / f64::from(all) - 0.95).abs() < 0.005);
    }

    #[test]
    fn determinism_and_seed_sensitivity() {
        let objs = [anon("a", 1 << 20)];
        let p = phase(0, Access::Touch, Pattern::Random, 0, 1 << 20, 1000);
        let a = collect(
            &mut source(std::slice::from_ref(&p), 1, &objs, 3),
            usize::MAX,
        );
        let b = collect(
            &mut source(std::slice::from_ref(&p), 1, &objs, 3),
            usize::MAX,
        );
        let c = collect(&mut source(&[p], 1, &objs, 4), usize::MAX);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn long_think_is_split() {
        let objs = [anon("a", 10)];
        let mut p = phase(0, Access::Touch, Pattern::Sequential, 0, 10, 1);
        p.think_ns = 3 * u64::from(u32::MAX) + 1;
        let mut src = source(&[p], 1, &objs, 3);
        let thinks: Vec<Op> = collect(&mut src, 100)
            .into_iter()
            .filter(|o| matches!(o, Op::Think { .. }))
            .collect();
        assert_eq!(
            thinks,
            [
                Op::Think { ns: u32::MAX },
                Op::Think { ns: u32::MAX },
                Op::Think { ns: u32::MAX },
                Op::Think { ns: 1 }
            ]
        );
        assert_eq!(src.len_hint(), Some(1 + 1 + 4 + 1));
    }

    #[test]
    fn forever_keeps_going_and_empty_list_ends() {
        let objs = [anon("a", 10)];
        let p = phase(0, Access::Touch, Pattern::Sequential, 0, 10, 0);
        let mut src = source(&[p], 0, &objs, 3);
        assert_eq!(src.len_hint(), None);
        // Zero-op phase repeated forever: a stream of Phase markers, never None.
        assert!(collect(&mut src, 50)
            .iter()
            .all(|o| *o == Op::Phase { idx: 0 }));
        let mut empty = source(&[], 0, &objs, 3);
        assert_eq!(empty.next_op(), None);
        assert_eq!(empty.len_hint(), Some(0));
    }

    #[test]
    fn bad_phases_are_rejected() {
        let objs = [anon("a", 10), file("f", 10)];
        let bad_range = phase(0, Access::Touch, Pattern::Random, 5, 11, 1);
        assert!(matches!(
            PhaseSource::new(&[bad_range], 1, &objs, 1, 1),
            Err(SourceErrorKind::BadRange { phase: 0, .. })
        ));
        let read_anon = phase(0, Access::Read, Pattern::Random, 0, 10, 1);
        assert!(matches!(
            PhaseSource::new(&[read_anon], 1, &objs, 1, 1),
            Err(SourceErrorKind::WrongObjectKind { .. })
        ));
        let no_obj = phase(7, Access::Touch, Pattern::Random, 0, 10, 1);
        assert!(matches!(
            PhaseSource::new(&[no_obj], 1, &objs, 1, 1),
            Err(SourceErrorKind::NoSuchObject { object: 7, .. })
        ));
        let mut bad_p = phase(1, Access::Touch, Pattern::Random, 0, 10, 1);
        bad_p.write_fraction = 1.5;
        let e = PhaseSource::new(&[bad_p], 1, &objs, 1, 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "phases[0].write_fraction = 1.5: expected a fraction in [0, 1]"
        );
        let neg = phase(
            1,
            Access::Touch,
            Pattern::Zipf {
                s: -1.0,
                scatter: false,
            },
            0,
            10,
            1,
        );
        assert!(PhaseSource::new(&[neg], 1, &objs, 1, 1).is_err());
    }

    /// The speed contract: 1M operations of a random phase, in debug builds too. No timing
    /// assertion (unit tests never time anything); this catches accidental O(n) per op.
    #[test]
    fn a_million_random_ops() {
        let objs = [anon("a", 1 << 24)];
        let mut p = phase(0, Access::Touch, Pattern::Random, 0, 1 << 24, 1_000_000);
        p.write_fraction = 0.5;
        let mut src = source(&[p], 1, &objs, 1);
        let mut n = 0u64;
        let mut sum = 0u64;
        while let Some(op) = src.next_op() {
            n += 1;
            if let Op::Touch { page, .. } = op {
                sum = sum.wrapping_add(u64::from(page));
            }
        }
        assert_eq!(Some(n), src.len_hint());
        assert_eq!(n, 1 + 2 * 1_000_000);
        assert!(sum > 0);
    }

    fn mix_phase(weights: [f64; 2], ppo: u32) -> PhaseSpec {
        let mut p = phase(0, Access::TouchWrite, Pattern::Random, 0, 100, 4000);
        p.advice = Advice::Random;
        p.think_ns = 10;
        p.mix = vec![
            MixSpec {
                object: 0,
                access: Access::TouchWrite,
                pattern: Pattern::Zipf {
                    s: 0.9,
                    scatter: false,
                },
                start_page: 0,
                end_page: 100,
                pages_per_op: 1,
                write_fraction: 0.0,
                weight: weights[0],
            },
            MixSpec {
                object: 1,
                access: Access::Read,
                pattern: Pattern::Sequential,
                start_page: 10,
                end_page: 20,
                pages_per_op: ppo,
                write_fraction: 0.0,
                weight: weights[1],
            },
        ];
        p
    }

    #[test]
    fn mix_draws_entries_by_weight_from_one_stream() {
        let objs = [anon("heap", 100), file("data", 50)];
        let mut src = source(&[mix_phase([3.0, 1.0], 1)], 1, &objs, 5);
        let ops = collect(&mut src, 100_000);
        // Phase, then one Advise per object of the mix.
        assert_eq!(ops[0], Op::Phase { idx: 0 });
        assert_eq!(
            ops[1..3],
            [
                Op::Advise {
                    obj: 0,
                    hint: Hint::Random
                },
                Op::Advise {
                    obj: 1,
                    hint: Hint::Random
                }
            ]
        );
        let touches = ops
            .iter()
            .filter(|o| {
                matches!(
                    o,
                    Op::Touch {
                        obj: 0,
                        write: true,
                        ..
                    }
                )
            })
            .count();
        let reads: Vec<u32> = ops
            .iter()
            .filter_map(|o| match *o {
                Op::Read {
                    obj: 1,
                    page,
                    nr: 1,
                } => Some(page),
                _ => None,
            })
            .collect();
        assert_eq!(touches + reads.len(), 4000);
        // 3:1 within a few standard deviations (sd = sqrt(4000 * 3/16) = 27).
        assert!((2880..3120).contains(&touches), "{touches}");
        // The read entry keeps its own sequential cursor over [10, 20).
        let want: Vec<u32> = (10..20).cycle().take(reads.len()).collect();
        assert_eq!(reads, want);
        // Every op: its access, Think, OpEnd; the total is exact.
        assert_eq!(ops.iter().filter(|o| **o == Op::OpEnd).count(), 4000);
        assert_eq!(src.len_hint(), Some(ops.len() as u64));
        // Deterministic per seed, different across seeds.
        assert_eq!(
            collect(
                &mut source(&[mix_phase([3.0, 1.0], 1)], 1, &objs, 5),
                100_000
            ),
            ops
        );
        assert_ne!(
            collect(
                &mut source(&[mix_phase([3.0, 1.0], 1)], 1, &objs, 6),
                100_000
            ),
            ops
        );
        // Entries whose operations differ in events: no exact total.
        let mut p = mix_phase([1.0, 1.0], 2);
        assert_eq!(source(&[p.clone()], 1, &objs, 5).len_hint(), Some(12003));
        p.mix[0].pages_per_op = 2;
        assert_eq!(source(&[p], 1, &objs, 5).len_hint(), None);
        // A bad weight is refused.
        let e = PhaseSource::new(&[mix_phase([1.0, 0.0], 1)], 1, &objs, 1, 1).unwrap_err();
        assert!(format!("{e:?}").contains("mix[1].weight"), "{e:?}");
    }
}
