//! From a resolved `Scenario` to one event source per task instance.
//!
//! # Flattening
//! `Scenario::tasks[t]` runs `instances` copies. [`task_sources`] returns them flattened in
//! task order, then instance order: the position in the returned vector is the task number
//! that `Event::task` carries. An instance is named `"<task>"` when its task has one
//! instance and `"<task>/<i>"` (i from 0) otherwise.
//!
//! # Seeds
//! Each instance draws from its own [`Rng`](crate::rng::Rng), seeded with
//!
//! ```text
//!   instance_seed(seed, t, i) = mix64(mix64(mix64(seed) + t) + i)      (wrapping adds)
//! ```
//!
//! where `mix64` is SplitMix64's output function (a bijection on u64, see `rng`). Adding a
//! task or an instance never changes the streams of the others, and the values are part of
//! the compatibility promise of `rng` (pinned by `tests::seed_derivation_is_stable`).
//!
//! Zipf scatter permutations are keyed by object, not by instance, so every task that
//! skews its accesses to an object agrees on which of its pages are hot (as clients of one
//! database agree on its hot rows):
//!
//! ```text
//!   object_scatter_key(seed, obj) = mix64(mix64(seed ^ SCATTER_DOMAIN) + obj)
//! ```
//!
//! # Dispatch
//! [`Source`] is an enum over the generator kinds: `next_op` is one match, which the
//! compiler can inline into each generator, instead of a virtual call per event.

use refault_scenario::{Scenario, Workload};

use crate::emul::copy::CopySource;
use crate::emul::kalloc::KallocSource;
use crate::emul::memcached::MemcachedSource;
use crate::emul::pgbench::PgbenchSource;
use crate::emul::process::ProcessSource;
use crate::error::{SourceError, SourceErrorKind};
use crate::event::{EventSource, ObjId, Op};
use crate::gen::PhaseSource;
use crate::rng::mix64;
use crate::trace::TraceSource;

/// Domain separator of scatter keys ("SCATTER" in ASCII), so that they never coincide with
/// an instance seed.
const SCATTER_DOMAIN: u64 = 0x0053_4341_5454_4552;

/// The seed of instance `instance` of task `task` (see the module doc).
pub fn instance_seed(scenario_seed: u64, task: usize, instance: u32) -> u64 {
    let t = mix64(mix64(scenario_seed).wrapping_add(task as u64));
    mix64(t.wrapping_add(u64::from(instance)))
}

/// The key of the scatter permutations over object `obj` (see the module doc).
pub fn object_scatter_key(scenario_seed: u64, obj: ObjId) -> u64 {
    mix64(mix64(scenario_seed ^ SCATTER_DOMAIN).wrapping_add(u64::from(obj)))
}

/// One generator, whichever kind. The pgbench client is boxed: its pending-transaction
/// buffer would otherwise make every variant ~650 bytes.
#[derive(Clone, Debug)]
pub enum Source {
    Phases(PhaseSource),
    Pgbench(Box<PgbenchSource>),
    Memcached(MemcachedSource),
    Copy(CopySource),
    Kalloc(KallocSource),
    Process(ProcessSource),
    Trace(Box<TraceSource>),
}

impl Source {
    /// Why the stream ended early (a replayed trace that turned out bad), if it did.
    pub fn error(&self) -> Option<&str> {
        match self {
            Source::Trace(s) => s.error(),
            _ => None,
        }
    }
}

impl EventSource for Source {
    #[inline]
    fn next_op(&mut self) -> Option<Op> {
        match self {
            Source::Phases(s) => s.next_op(),
            Source::Pgbench(s) => s.next_op(),
            Source::Memcached(s) => s.next_op(),
            Source::Copy(s) => s.next_op(),
            Source::Kalloc(s) => s.next_op(),
            Source::Process(s) => s.next_op(),
            Source::Trace(s) => s.next_op(),
        }
    }

    fn len_hint(&self) -> Option<u64> {
        match self {
            Source::Phases(s) => s.len_hint(),
            Source::Pgbench(s) => s.len_hint(),
            Source::Memcached(s) => s.len_hint(),
            Source::Copy(s) => s.len_hint(),
            Source::Kalloc(s) => s.len_hint(),
            Source::Process(s) => s.len_hint(),
            Source::Trace(s) => s.len_hint(),
        }
    }
}

/// One task instance: who it is, where it runs, when it starts, and its events.
#[derive(Clone, Debug)]
pub struct TaskSource {
    /// `"<task>"`, or `"<task>/<i>"` when the task has several instances.
    pub name: String,
    /// Index of the task in `Scenario::tasks`.
    pub task: usize,
    /// Instance number within the task (0-based).
    pub instance: u32,
    /// Memory cgroup (index into `Scenario::cgroups`); None = root.
    pub cgroup: Option<usize>,
    /// Start delay.
    pub start_ns: u64,
    /// The seed its generator was given (`instance_seed`).
    pub seed: u64,
    pub source: Source,
}

impl EventSource for TaskSource {
    #[inline]
    fn next_op(&mut self) -> Option<Op> {
        self.source.next_op()
    }

    fn len_hint(&self) -> Option<u64> {
        self.source.len_hint()
    }
}

/// One source per task instance, flattened in task order then instance order.
///
/// # Panics
/// If a task's workload cannot be generated (see [`try_task_sources`]); the scenario
/// resolver rejects such scenarios before they get here.
pub fn task_sources(scn: &Scenario) -> Vec<TaskSource> {
    try_task_sources(scn).unwrap_or_else(|e| panic!("{e}"))
}

/// [`task_sources`], reporting the first task whose workload cannot be generated (an
/// object index out of range or of the wrong kind, an empty page range, a probability
/// outside [0, 1], ...).
pub fn try_task_sources(scn: &Scenario) -> Result<Vec<TaskSource>, SourceError> {
    let total: usize = scn.tasks.iter().map(|t| t.instances as usize).sum();
    let mut out = Vec::with_capacity(total);
    for (t, task) in scn.tasks.iter().enumerate() {
        let err = |kind: SourceErrorKind| SourceError {
            task: t,
            task_name: task.name.clone(),
            kind,
        };
        for i in 0..task.instances {
            let seed = instance_seed(scn.seed, t, i);
            let source = match &task.workload {
                Workload::Phases { phases, repeat } => Source::Phases(
                    PhaseSource::new(phases, *repeat, &scn.objects, seed, scn.seed).map_err(err)?,
                ),
                Workload::Pgbench(spec) => {
                    // The task's clients are served by one server: its shared buffers, WAL
                    // and history (the previous instance's).
                    let prev = match out.last() {
                        Some(TaskSource {
                            task,
                            source: Source::Pgbench(p),
                            ..
                        }) if *task == t => Some(&**p),
                        _ => None,
                    };
                    Source::Pgbench(Box::new(
                        PgbenchSource::sharing(spec, &scn.objects, seed, prev).map_err(err)?,
                    ))
                }
                Workload::Memcached(spec) => {
                    // The task's instances share one hash table (the previous instance's).
                    let prev = match out.last() {
                        Some(TaskSource {
                            task,
                            source: Source::Memcached(m),
                            ..
                        }) if *task == t => Some(m),
                        _ => None,
                    };
                    Source::Memcached(
                        MemcachedSource::sharing(spec, &scn.objects, seed, scn.seed, prev)
                            .map_err(err)?,
                    )
                }
                Workload::Copy(spec) => {
                    Source::Copy(CopySource::new(spec, &scn.objects).map_err(err)?)
                }
                Workload::Kalloc(spec) => Source::Kalloc(KallocSource::new(spec)),
                Workload::Process(spec) => {
                    Source::Process(ProcessSource::new(spec, &scn.objects, seed))
                }
                Workload::Trace(spec) => {
                    Source::Trace(Box::new(TraceSource::new(spec, &scn.objects).map_err(err)?))
                }
            };
            let name = if task.instances > 1 {
                format!("{}/{i}", task.name)
            } else {
                task.name.clone()
            };
            out.push(TaskSource {
                name,
                task: t,
                instance: i,
                cgroup: task.cgroup,
                start_ns: task.start_ns,
                seed,
                source,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{anon, file, phase, scenario, shmem, task};
    use refault_scenario::{Access, CopySpec, MemcachedSpec, Pattern, PgbenchSpec};

    fn collect(src: &mut TaskSource, limit: usize) -> Vec<Op> {
        std::iter::from_fn(|| src.next_op()).take(limit).collect()
    }

    fn mixed_scenario() -> Scenario {
        let objects = vec![
            anon("heap", 4096),
            file("data", 4096),
            shmem("sb", 64),
            file("db", 1000),
            file("wal", 16),
            file("copy-dst", 4096),
        ];
        let p = phase(0, Access::Touch, Pattern::Random, 0, 4096, 100);
        let mut tasks = vec![
            task(
                "gen",
                3,
                Workload::Phases {
                    phases: vec![p],
                    repeat: 1,
                },
            ),
            task(
                "pg",
                2,
                Workload::Pgbench(PgbenchSpec {
                    shared_buffers: 2,
                    database: 3,
                    wal: 4,
                    transactions: 10,
                    zipf_s: 0.9,
                    think_ns: 0,
                }),
            ),
            task(
                "mc",
                1,
                Workload::Memcached(MemcachedSpec {
                    items: 0,
                    fill: false,
                    requests: 50,
                    set_fraction: 0.1,
                    zipf_s: 0.0,
                    pages_per_request: 1,
                    think_ns: 0,
                    item_size: 0,
                    hashtable: None,
                }),
            ),
            task(
                "cp",
                1,
                Workload::Copy(CopySpec {
                    src: 1,
                    dst: 5,
                    chunk_pages: 32,
                    passes: 1,
                    fsync: true,
                    think_ns: 0,
                }),
            ),
            task(
                "none",
                0,
                Workload::Phases {
                    phases: vec![],
                    repeat: 1,
                },
            ),
        ];
        tasks[1].cgroup = Some(0);
        tasks[1].start_ns = 5;
        scenario(objects, tasks)
    }

    #[test]
    fn flattened_in_task_then_instance_order() {
        let srcs = task_sources(&mixed_scenario());
        let names: Vec<&str> = srcs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["gen/0", "gen/1", "gen/2", "pg/0", "pg/1", "mc", "cp"]
        );
        let tasks: Vec<usize> = srcs.iter().map(|s| s.task).collect();
        assert_eq!(tasks, [0, 0, 0, 1, 1, 2, 3]);
        assert_eq!(srcs[3].cgroup, Some(0));
        assert_eq!(srcs[3].start_ns, 5);
        assert_eq!(srcs[0].cgroup, None);
        assert!(matches!(srcs[3].source, Source::Pgbench(_)));
        assert!(matches!(srcs[5].source, Source::Memcached(_)));
        assert!(matches!(srcs[6].source, Source::Copy(_)));
    }

    #[test]
    fn instances_differ_runs_repeat() {
        let scn = mixed_scenario();
        let mut a = task_sources(&scn);
        let mut b = task_sources(&scn);
        let streams_a: Vec<Vec<Op>> = a.iter_mut().map(|s| collect(s, 100_000)).collect();
        let streams_b: Vec<Vec<Op>> = b.iter_mut().map(|s| collect(s, 100_000)).collect();
        assert_eq!(streams_a, streams_b);
        assert_ne!(streams_a[0], streams_a[1]);
        assert_ne!(streams_a[1], streams_a[2]);
        assert_ne!(streams_a[3], streams_a[4]);
        for (s, ops) in a.iter().zip(&streams_a) {
            if let Some(n) = s.len_hint() {
                assert_eq!(n, ops.len() as u64, "{}", s.name);
            }
        }
        // A different scenario seed changes the streams.
        let mut scn2 = scn.clone();
        scn2.seed = 2;
        let mut c = task_sources(&scn2);
        assert_ne!(collect(&mut c[0], 100_000), streams_a[0]);
    }

    /// The derivation is part of the compatibility promise: these values never change.
    #[test]
    fn seed_derivation_is_stable() {
        assert_eq!(instance_seed(1, 0, 0), mix64(mix64(mix64(1))));
        assert_eq!(
            instance_seed(1, 2, 3),
            mix64(mix64(mix64(1).wrapping_add(2)).wrapping_add(3))
        );
        // Reference values from an independent (Python) implementation.
        assert_eq!(instance_seed(1, 0, 0), 0xb18a_02f4_6d8d_86c3);
        assert_eq!(instance_seed(1, 2, 3), 0x6ae5_15c1_c0ac_7e37);
        assert_eq!(instance_seed(42, 1, 0), 0x2ce0_2c4e_e4d2_ea09);
        assert_ne!(instance_seed(1, 0, 1), instance_seed(1, 1, 0));
        assert_ne!(object_scatter_key(1, 0), object_scatter_key(1, 1));
    }

    #[test]
    fn bad_task_is_reported_with_its_name() {
        let mut scn = mixed_scenario();
        if let Workload::Pgbench(spec) = &mut scn.tasks[1].workload {
            spec.database = 0; // anon, not a file
        }
        let e = try_task_sources(&scn).unwrap_err();
        assert_eq!(e.task, 1);
        assert_eq!(e.task_name, "pg");
        assert!(e
            .to_string()
            .starts_with("task 'pg' (tasks[1]): database: object 0 is Anon"));
    }
}
