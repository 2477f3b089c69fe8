//! Why a task's workload cannot be generated.
//!
//! The scenario resolver should reject all of these first; the generators check again
//! because they are a public API of their own and a bad value here would otherwise become a
//! panic or an endless loop deep inside a run.

use std::fmt;

use refault_scenario::ObjectKind;

/// A task whose workload cannot be generated: which task, and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceError {
    /// Index of the task in `Scenario::tasks`.
    pub task: usize,
    /// Its name.
    pub task_name: String,
    pub kind: SourceErrorKind,
}

/// What is wrong. `field` strings name the scenario field (`phases[2].object`, `wal`, ...).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SourceErrorKind {
    /// `field` is an object index past the end of `Scenario::objects`.
    NoSuchObject { field: String, object: usize },
    /// The object cannot be accessed as `field` needs: read()/write() of anonymous memory,
    /// a copy or a database that is not a file.
    WrongObjectKind {
        field: String,
        object: usize,
        kind: ObjectKind,
        expected: &'static str,
    },
    /// The object has more pages than a `u32` page number can address (`u32::MAX`), or
    /// has no pages where some are needed.
    BadObjectSize {
        field: String,
        object: usize,
        pages: u64,
    },
    /// A phase's page range is empty or extends past its object.
    BadRange {
        phase: usize,
        start: u64,
        end: u64,
        object_pages: u64,
    },
    /// A parameter outside its domain (a probability outside [0, 1], a negative or
    /// non-finite Zipf exponent, zero pages per operation).
    BadValue {
        field: String,
        value: f64,
        expected: &'static str,
    },
    /// More phases than `Op::Phase { idx: u16 }` can number.
    TooManyPhases { count: usize },
    /// The copy's destination is smaller than its source.
    CopyTooSmall { src_pages: u64, dst_pages: u64 },
    /// A replayed trace cannot be opened or read, or does not fit the scenario (one line:
    /// file, position, problem).
    Trace(String),
}

impl fmt::Display for SourceErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceErrorKind::Trace(m) => write!(f, "{m}"),
            SourceErrorKind::NoSuchObject { field, object } => {
                write!(f, "{field}: object index {object} does not exist")
            }
            SourceErrorKind::WrongObjectKind {
                field,
                object,
                kind,
                expected,
            } => write!(
                f,
                "{field}: object {object} is {kind:?}, expected {expected}"
            ),
            SourceErrorKind::BadObjectSize {
                field,
                object,
                pages,
            } => write!(
                f,
                "{field}: object {object} has {pages} pages, expected 1..={}",
                u32::MAX
            ),
            SourceErrorKind::BadRange {
                phase,
                start,
                end,
                object_pages,
            } => write!(
                f,
                "phases[{phase}]: page range {start}..{end} is empty or outside the object \
                 ({object_pages} pages)"
            ),
            SourceErrorKind::BadValue {
                field,
                value,
                expected,
            } => write!(f, "{field} = {value}: expected {expected}"),
            SourceErrorKind::TooManyPhases { count } => {
                write!(
                    f,
                    "{count} phases: at most {} are supported",
                    u32::from(u16::MAX) + 1
                )
            }
            SourceErrorKind::CopyTooSmall {
                src_pages,
                dst_pages,
            } => write!(
                f,
                "copy destination has {dst_pages} pages, smaller than the source ({src_pages})"
            ),
        }
    }
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "task '{}' (tasks[{}]): {}",
            self.task_name, self.task, self.kind
        )
    }
}

impl std::error::Error for SourceError {}

/// Checks shared by the generators.
pub(crate) mod check {
    use super::SourceErrorKind;
    use refault_scenario::{ObjectKind, ObjectSpec};

    /// The object `idx` exists, has 1..=u32::MAX pages, and (if `kinds` is not empty) is of
    /// one of `kinds`. Returns its spec.
    pub(crate) fn object<'a>(
        objects: &'a [ObjectSpec],
        idx: usize,
        field: &dyn Fn() -> String,
        kinds: &[ObjectKind],
        expected: &'static str,
    ) -> Result<&'a ObjectSpec, SourceErrorKind> {
        let Some(o) = objects.get(idx) else {
            return Err(SourceErrorKind::NoSuchObject {
                field: field(),
                object: idx,
            });
        };
        if !kinds.is_empty() && !kinds.contains(&o.kind) {
            return Err(SourceErrorKind::WrongObjectKind {
                field: field(),
                object: idx,
                kind: o.kind,
                expected,
            });
        }
        if o.size_pages == 0 || o.size_pages > u64::from(u32::MAX) {
            return Err(SourceErrorKind::BadObjectSize {
                field: field(),
                object: idx,
                pages: o.size_pages,
            });
        }
        Ok(o)
    }

    /// `v` is a probability.
    pub(crate) fn probability(v: f64, field: &dyn Fn() -> String) -> Result<(), SourceErrorKind> {
        if (0.0..=1.0).contains(&v) {
            Ok(())
        } else {
            Err(SourceErrorKind::BadValue {
                field: field(),
                value: v,
                expected: "a fraction in [0, 1]",
            })
        }
    }

    /// `s` is a usable Zipf exponent.
    pub(crate) fn exponent(s: f64, field: &dyn Fn() -> String) -> Result<(), SourceErrorKind> {
        if s.is_finite() && s >= 0.0 {
            Ok(())
        } else {
            Err(SourceErrorKind::BadValue {
                field: field(),
                value: s,
                expected: "a finite exponent >= 0",
            })
        }
    }

    /// `n` is at least 1.
    pub(crate) fn positive(n: u64, field: &dyn Fn() -> String) -> Result<(), SourceErrorKind> {
        if n > 0 {
            Ok(())
        } else {
            Err(SourceErrorKind::BadValue {
                field: field(),
                value: 0.0,
                expected: "at least 1",
            })
        }
    }
}
