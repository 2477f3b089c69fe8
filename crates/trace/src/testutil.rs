//! Test helpers: arbitrary valid traces, a shared in-memory sink.

use crate::{Header, Hint, Kind, Object, Op, Record, RecordRead, TraceError};
use std::sync::{Arc, Mutex};

/// A `Write` into a shared buffer (writers take ownership of their sink).
pub(crate) struct Shared(pub Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub(crate) fn read_all(r: &mut dyn RecordRead) -> Result<Vec<Record>, TraceError> {
    let mut v = Vec::new();
    while let Some(rec) = r.next_record()? {
        v.push(rec);
    }
    Ok(v)
}

/// SplitMix64, enough for test data.
pub(crate) struct Mix(pub u64);
impl Mix {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A valid trace from `seed`: 1-3 tasks, 1-4 objects of every kind (sizes up to 2^32
/// pages, so page deltas span the whole range), every op kind, runs of touches.
pub(crate) fn arbitrary_trace(seed: u64) -> (Header, Vec<Record>) {
    let mut m = Mix(seed);
    let ntasks = 1 + m.below(3) as usize;
    let nobj = 1 + m.below(4) as usize;
    let mut h = Header::default();
    for t in 0..ntasks {
        h.tasks.push(format!("task-{t}"));
    }
    for o in 0..nobj {
        let kind = [Kind::Anon, Kind::Shmem, Kind::File][m.below(3) as usize];
        let pages = match m.below(3) {
            0 => 1,
            1 => 1 + m.below(1000),
            _ => 1 << 32,
        };
        h.objects.push(Object {
            name: format!("obj{o}"),
            kind,
            pages,
            exists: kind == Kind::File && m.below(2) == 0,
        });
    }
    let files: Vec<u32> = (0..nobj as u32)
        .filter(|&o| h.objects[o as usize].kind == Kind::File)
        .collect();
    let n = m.below(300) as usize;
    let mut recs = Vec::with_capacity(n);
    for _ in 0..n {
        let task = m.below(ntasks as u64) as u32;
        let obj = m.below(nobj as u64) as u32;
        let pages = h.objects[obj as usize].pages;
        let page = m.below(pages) as u32;
        let op = match m.below(10) {
            0..=3 => Op::Touch {
                obj,
                page,
                write: m.below(2) == 1,
            },
            4 | 5 if !files.is_empty() => {
                let f = files[m.below(files.len() as u64) as usize];
                let fp = h.objects[f as usize].pages;
                let page = m.below(fp) as u32;
                let nr = 1 + m.below((fp - u64::from(page)).min(64)) as u32;
                if m.below(2) == 0 {
                    Op::Read { obj: f, page, nr }
                } else {
                    Op::Write { obj: f, page, nr }
                }
            }
            6 if !files.is_empty() => Op::Fsync {
                obj: files[m.below(files.len() as u64) as usize],
            },
            7 => Op::Advise {
                obj,
                hint: [Hint::Normal, Hint::Random, Hint::Sequential][m.below(3) as usize],
            },
            8 => match m.below(3) {
                0 => Op::Think {
                    ns: m.next() as u32,
                },
                1 => Op::Phase {
                    idx: m.next() as u16,
                },
                _ => Op::OpEnd,
            },
            _ => Op::OpEnd,
        };
        recs.push(Record { task, op });
    }
    (h, recs)
}
