//! A large-file copy: parallelio's background I/O.
//!
//! # What it is for
//! mmtests `parallelio` (seed 000's backward-compatibility check) copies files of 0 to
//! 4.3 GiB while memcachetest runs. The copy is a used-once stream through the page cache:
//! every source page is read once per pass and every destination page written once, so the
//! LRU must let this cache go before the key-value server's anonymous working set. The
//! seed's figures are "memcache transactions unchanged" and "background IO duration
//! unchanged".
//!
//! # The stream
//! ```text
//!   Advise{src, Sequential}; Advise{dst, Sequential}        (cp's posix_fadvise)
//!   passes times (0 = forever):
//!     for each chunk of chunk_pages pages of src (the last one shorter):
//!       Read{src, page, nr}; Write{dst, page, nr}; Think{think_ns}; OpEnd
//!     Fsync{dst}                                             if fsync
//! ```
//!
//! # Simplified
//! - Later passes overwrite the destination in place: the event language has no truncate
//!   or unlink, so the old destination's cache is not dropped between passes.
//! - Read and write are one call each per chunk (cp's 128 KiB buffer), with no
//!   copy_file_range / splice short cut and no O_DIRECT.
//!
//! # Tests
//! `emul::copy::tests::*`.

use refault_scenario::{CopySpec, ObjectKind, ObjectSpec};

use crate::error::{check, SourceErrorKind};
use crate::event::{EventSource, Hint, ObjId, Op};
use crate::seq::{think_events, OpSeq};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    AdviseSrc,
    AdviseDst,
    Copy,
    Done,
}

/// A `cp src dst` loop (see the module doc). Uses no randomness.
#[derive(Clone, Debug)]
pub struct CopySource {
    src: ObjId,
    dst: ObjId,
    /// Pages of the source.
    pages: u64,
    chunk: u32,
    /// Passes to make; 0 = forever.
    passes: u64,
    fsync: bool,
    think_ns: u64,
    /// Completed passes.
    pass: u64,
    /// Next source page to copy.
    pos: u64,
    step: Step,
    seq: OpSeq<2>,
    total: Option<u64>,
}

impl CopySource {
    /// The copy of `spec.src` onto `spec.dst`.
    pub fn new(spec: &CopySpec, objects: &[ObjectSpec]) -> Result<Self, SourceErrorKind> {
        let kinds = &[ObjectKind::File];
        let src = check::object(objects, spec.src, &|| "src".into(), kinds, "a file")?;
        let dst = check::object(objects, spec.dst, &|| "dst".into(), kinds, "a file")?;
        check::positive(u64::from(spec.chunk_pages), &|| "chunk_pages".into())?;
        if dst.size_pages < src.size_pages {
            return Err(SourceErrorKind::CopyTooSmall {
                src_pages: src.size_pages,
                dst_pages: dst.size_pages,
            });
        }
        let pages = src.size_pages;
        let total = (spec.passes != 0).then(|| {
            let chunks = pages.div_ceil(u64::from(spec.chunk_pages));
            let per_pass = chunks * (3 + think_events(spec.think_ns)) + u64::from(spec.fsync);
            2u64.saturating_add(spec.passes.saturating_mul(per_pass))
        });
        Ok(CopySource {
            src: spec.src as ObjId,
            dst: spec.dst as ObjId,
            pages,
            chunk: spec.chunk_pages,
            passes: spec.passes,
            fsync: spec.fsync,
            think_ns: spec.think_ns,
            pass: 0,
            pos: 0,
            step: Step::AdviseSrc,
            seq: OpSeq::new(),
            total,
        })
    }
}

impl EventSource for CopySource {
    #[inline]
    fn next_op(&mut self) -> Option<Op> {
        loop {
            if let Some(op) = self.seq.pop() {
                return Some(op);
            }
            match self.step {
                Step::AdviseSrc => {
                    self.step = Step::AdviseDst;
                    return Some(Op::Advise {
                        obj: self.src,
                        hint: Hint::Sequential,
                    });
                }
                Step::AdviseDst => {
                    self.step = Step::Copy;
                    return Some(Op::Advise {
                        obj: self.dst,
                        hint: Hint::Sequential,
                    });
                }
                Step::Copy if self.pos < self.pages => {
                    let page = self.pos as u32;
                    let nr = (self.pages - self.pos).min(u64::from(self.chunk)) as u32;
                    self.pos += u64::from(nr);
                    self.seq.push(Op::Read {
                        obj: self.src,
                        page,
                        nr,
                    });
                    self.seq.push(Op::Write {
                        obj: self.dst,
                        page,
                        nr,
                    });
                    self.seq.finish(self.think_ns);
                }
                Step::Copy => {
                    // End of a pass (the source has at least one page, so every pass
                    // emits events and a forever copy never spins here).
                    self.pos = 0;
                    self.pass += 1;
                    if self.passes != 0 && self.pass >= self.passes {
                        self.step = Step::Done;
                    }
                    if self.fsync {
                        return Some(Op::Fsync { obj: self.dst });
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
    use crate::testutil::{anon, file};

    fn spec(passes: u64) -> CopySpec {
        CopySpec {
            src: 0,
            dst: 1,
            chunk_pages: 32,
            passes,
            fsync: true,
            think_ns: 0,
        }
    }

    #[test]
    fn reads_cover_src_exactly_once_per_pass() {
        let objs = [file("src", 1000), file("dst", 1000)];
        let mut src = CopySource::new(&spec(3), &objs).unwrap();
        let ops: Vec<Op> = std::iter::from_fn(|| src.next_op()).collect();
        assert_eq!(src.len_hint(), Some(ops.len() as u64));
        assert_eq!(
            ops[..2],
            [
                Op::Advise {
                    obj: 0,
                    hint: Hint::Sequential
                },
                Op::Advise {
                    obj: 1,
                    hint: Hint::Sequential
                }
            ]
        );
        let passes: Vec<&[Op]> = ops[2..]
            .split_inclusive(|o| *o == Op::Fsync { obj: 1 })
            .collect();
        assert_eq!(passes.len(), 3);
        for pass in passes {
            let mut covered = vec![0u8; 1000];
            let mut chunks = 0;
            for w in pass.windows(3) {
                if let [Op::Read { obj: 0, page, nr }, Op::Write {
                    obj: 1,
                    page: wp,
                    nr: wn,
                }, Op::OpEnd] = *w
                {
                    assert_eq!((page, nr), (wp, wn));
                    assert!(nr == 32 || page + nr == 1000);
                    for p in page..page + nr {
                        covered[p as usize] += 1;
                    }
                    chunks += 1;
                }
            }
            assert!(covered.iter().all(|&c| c == 1));
            // 1000 pages / 32 = 31 full chunks and one of 8; each chunk: read, write, end.
            assert_eq!(chunks, 32);
            assert_eq!(pass.len(), 32 * 3 + 1);
        }
    }

    #[test]
    fn forever_with_think_and_no_fsync() {
        let objs = [file("src", 10), file("dst", 20)];
        let mut s = spec(0);
        s.fsync = false;
        s.think_ns = 7;
        s.chunk_pages = 4;
        let mut src = CopySource::new(&s, &objs).unwrap();
        assert_eq!(src.len_hint(), None);
        let ops: Vec<Op> = std::iter::from_fn(|| src.next_op())
            .take(2 + 4 * 9)
            .collect();
        let reads: Vec<(u32, u32)> = ops
            .iter()
            .filter_map(|o| match *o {
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
        assert!(ops.contains(&Op::Think { ns: 7 }));
        assert!(!ops.iter().any(|o| matches!(o, Op::Fsync { .. })));
    }

    #[test]
    fn bad_copies_are_rejected() {
        let objs = [file("src", 10), file("dst", 5), anon("a", 10)];
        assert!(matches!(
            CopySource::new(&spec(1), &objs),
            Err(SourceErrorKind::CopyTooSmall {
                src_pages: 10,
                dst_pages: 5
            })
        ));
        let mut s = spec(1);
        s.dst = 2;
        assert!(matches!(
            CopySource::new(&s, &objs),
            Err(SourceErrorKind::WrongObjectKind { .. })
        ));
    }
}
