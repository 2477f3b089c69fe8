//! Replay of a recorded trace: the event stream of a `Workload::Trace` task.
//!
//! [`TraceSource`] streams one task's records out of a trace file (refault-trace reads
//! every format), maps the trace's object numbers to the scenario's, and hands them out as
//! [`Op`]s, so the simulator and the live-kernel twin replay a trace exactly as they run a
//! generated stream. A trace recorded from a generated scenario (`refault trace
//! record-scenario`) replays into the same events, hence the same result.
//!
//! # Streaming and errors
//! The reader keeps a fixed buffer; memory does not grow with the trace. A record that
//! turns out bad in the middle of a replay (a truncated binary file, a malformed line)
//! ends this task's stream and is kept in [`TraceSource::error`]; the simulator reports it
//! as the run's error instead of returning a result of a silently shorter replay.
//!
//! # Simplifies
//! - A trace with several tasks is read once per replaying task (each skips the others'
//!   records).
//! - `Clone` reopens the file and skips the records already consumed.

use std::path::PathBuf;

use refault_scenario::{ObjectSpec, TraceSpec};
use refault_trace::{Format, Reader, RecordRead};

use crate::error::SourceErrorKind;
use crate::event::{EventSource, Hint, Op};

pub struct TraceSource {
    path: PathBuf,
    format: Format,
    reader: Option<Reader>,
    task: u32,
    /// Trace object index -> scenario object index.
    map: Box<[u32]>,
    /// Passes over the trace; 0 = forever.
    repeat: u64,
    pass: u64,
    /// Records of this pass read, any task's (to clone mid-stream).
    consumed: u64,
    /// Records of this task in this pass (a pass without any ends a forever replay).
    own: u64,
    error: Option<String>,
}

impl std::fmt::Debug for TraceSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceSource")
            .field("path", &self.path)
            .field("task", &self.task)
            .field("pass", &self.pass)
            .field("consumed", &self.consumed)
            .finish()
    }
}

impl TraceSource {
    /// Opens the trace of `spec`; checks that its objects map onto `objects` with room for
    /// every page the trace declares.
    pub fn new(spec: &TraceSpec, objects: &[ObjectSpec]) -> Result<Self, SourceErrorKind> {
        let format =
            Format::parse(&spec.format, spec.columns.as_deref()).map_err(SourceErrorKind::Trace)?;
        let reader = refault_trace::open(&spec.path, &format)
            .map_err(|e| SourceErrorKind::Trace(e.to_string()))?;
        let h = reader.header();
        if h.objects.len() != spec.objects.len() {
            return Err(SourceErrorKind::Trace(format!(
                "{}: the trace declares {} objects, the scenario mapped {} (the file changed?)",
                spec.path.display(),
                h.objects.len(),
                spec.objects.len()
            )));
        }
        for (o, &k) in h.objects.iter().zip(&spec.objects) {
            let fits = objects.get(k).is_some_and(|x| x.size_pages >= o.pages);
            if !fits {
                return Err(SourceErrorKind::Trace(format!(
                    "{}: the trace's object `{}` ({} pages) does not fit scenario object {k}",
                    spec.path.display(),
                    o.name,
                    o.pages
                )));
            }
        }
        if spec.trace_task as usize >= h.tasks.len() {
            return Err(SourceErrorKind::Trace(format!(
                "{}: no task {} in the trace",
                spec.path.display(),
                spec.trace_task
            )));
        }
        Ok(TraceSource {
            path: spec.path.clone(),
            format,
            reader: Some(reader),
            task: spec.trace_task,
            map: spec.objects.iter().map(|&k| k as u32).collect(),
            repeat: spec.repeat,
            pass: 0,
            consumed: 0,
            own: 0,
            error: None,
        })
    }

    /// The error that ended the replay early, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    fn fail(&mut self, msg: String) -> Option<Op> {
        self.error = Some(msg);
        self.reader = None;
        None
    }

    #[inline]
    fn map(&self, op: refault_trace::Op) -> Op {
        use refault_trace::Op as T;
        let m = |o: u32| self.map[o as usize];
        match op {
            T::Touch { obj, page, write } => Op::Touch {
                obj: m(obj),
                page,
                write,
            },
            T::Read { obj, page, nr } => Op::Read {
                obj: m(obj),
                page,
                nr,
            },
            T::Write { obj, page, nr } => Op::Write {
                obj: m(obj),
                page,
                nr,
            },
            T::Fsync { obj } => Op::Fsync { obj: m(obj) },
            T::Advise { obj, hint } => Op::Advise {
                obj: m(obj),
                hint: match hint {
                    refault_trace::Hint::Normal => Hint::Normal,
                    refault_trace::Hint::Random => Hint::Random,
                    refault_trace::Hint::Sequential => Hint::Sequential,
                },
            },
            T::Think { ns } => Op::Think { ns },
            T::OpEnd => Op::OpEnd,
            T::Phase { idx } => Op::Phase { idx },
        }
    }
}

impl Clone for TraceSource {
    fn clone(&self) -> Self {
        let mut c = TraceSource {
            path: self.path.clone(),
            format: self.format.clone(),
            reader: None,
            task: self.task,
            map: self.map.clone(),
            repeat: self.repeat,
            pass: self.pass,
            consumed: 0,
            own: 0,
            error: self.error.clone(),
        };
        if self.reader.is_some() {
            match refault_trace::open(&self.path, &self.format) {
                Ok(r) => {
                    c.reader = Some(r);
                    for _ in 0..self.consumed {
                        if c.next_own().is_none() {
                            break;
                        }
                    }
                }
                Err(e) => c.error = Some(e.to_string()),
            }
        }
        c
    }
}

impl TraceSource {
    /// The next record of this task in the current pass.
    #[inline]
    fn next_own(&mut self) -> Option<Op> {
        let reader = self.reader.as_mut()?;
        loop {
            match reader.next_record() {
                Ok(Some(r)) if r.task == self.task => {
                    self.consumed += 1;
                    self.own += 1;
                    return Some(self.map(r.op));
                }
                Ok(Some(_)) => self.consumed += 1,
                Ok(None) => return None,
                Err(e) => return self.fail(e.to_string()),
            }
        }
    }
}

impl EventSource for TraceSource {
    #[inline]
    fn next_op(&mut self) -> Option<Op> {
        loop {
            if let Some(op) = self.next_own() {
                return Some(op);
            }
            // A failed or finished replay has no reader left.
            self.reader.as_ref()?;
            // End of a pass.
            let events = self.own;
            self.pass += 1;
            if (self.repeat != 0 && self.pass >= self.repeat) || events == 0 {
                self.reader = None;
                return None;
            }
            match refault_trace::open(&self.path, &self.format) {
                Ok(r) => {
                    self.reader = Some(r);
                    self.consumed = 0;
                    self.own = 0;
                }
                Err(e) => return self.fail(e.to_string()),
            }
        }
    }
}
