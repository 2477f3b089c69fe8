//! valgrind lackey memory traces (`valgrind --tool=lackey --trace-mem=yes`).
//!
//! ```text
//!   ==4242== Lackey, an example Valgrind tool        banner and messages: skipped
//!   I  0401a2b0,3                                     instruction fetch (address, size)
//!    L 1ffefffd48,8                                   data load
//!    S 1ffefffd40,8                                   data store
//!    M 04222cac,4                                     modify (load then store)
//! ```
//!
//! # Replay
//! - One task, `main`. Each load is a touch of its page, each store or modify a store
//!   touch; an access that straddles a page boundary touches both pages.
//! - Instruction fetches are the clock: they are not replayed as touches (code pages are
//!   file-backed and shared; lackey cannot tell which file), but count as CPU time, one
//!   nanosecond per instruction, emitted as `think` before the next data access once at
//!   least 1000 instructions have accumulated.
//! - The data pages are grouped into anonymous regions: sorted, a gap of more than
//!   16 MiB without accesses starts a new region. The region that holds the highest
//!   address is named `stack`, the others `region-<hex start address>`. The heap, the
//!   data and bss of the program and its libraries, and mmap()ed areas all become
//!   anonymous memory: lackey does not say which addresses are file-backed.
//! - The file is read twice (the first pass finds the regions); the first pass keeps the set
//!   of distinct pages, which is the trace's footprint.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};

use crate::{Header, Kind, Object, Op, Pos, Record, RecordRead, TraceError};

/// Gap (in pages) that separates two regions: 16 MiB.
const REGION_GAP: u64 = 4096;
/// Instructions accumulated before a `think` is emitted.
const THINK_MIN_INSNS: u64 = 1000;

enum Access {
    Insn(u64),
    Data { addr: u64, size: u64, write: bool },
    Skip,
}

fn parse(line: &[u8], origin: &str, lineno: u64) -> Result<Access, TraceError> {
    let e = |m: &str| TraceError::new(origin, Pos::Line(lineno), m.to_string());
    let line = match line.last() {
        Some(b'\n') => &line[..line.len() - 1],
        _ => line,
    };
    if line.is_empty() || line.starts_with(b"==") || line.starts_with(b"--") {
        return Ok(Access::Skip);
    }
    if line.len() < 3 {
        return Err(e(
            "not a lackey record (expected `I  ADDR,SIZE` or ` L|S|M ADDR,SIZE`)",
        ));
    }
    let (kind, rest) = line.split_at(3);
    let what = match kind {
        b"I  " => 0,
        b" L " => 1,
        b" S " => 2,
        b" M " => 3,
        _ => {
            return Err(e(
                "not a lackey record (expected `I  ADDR,SIZE` or ` L|S|M ADDR,SIZE`)",
            ))
        }
    };
    let rest = std::str::from_utf8(rest).map_err(|_| e("the line is not UTF-8"))?;
    let (a, s) = rest
        .trim()
        .split_once(',')
        .ok_or_else(|| e("expected ADDR,SIZE"))?;
    let addr = u64::from_str_radix(a, 16).map_err(|_| e("the address is not hexadecimal"))?;
    let size: u64 = s.parse().map_err(|_| e("the size is not a number"))?;
    if size == 0 || size > 4096 {
        return Err(e("the access size must be 1 to 4096 bytes"));
    }
    if addr.checked_add(size - 1).is_none() {
        return Err(e("the access wraps around the address space"));
    }
    Ok(match what {
        0 => Access::Insn(1),
        1 => Access::Data {
            addr,
            size,
            write: false,
        },
        _ => Access::Data {
            addr,
            size,
            write: true,
        },
    })
}

struct Lines {
    src: BufReader<Box<dyn Read + Send>>,
    line: Vec<u8>,
    lineno: u64,
}

impl Lines {
    fn new(src: Box<dyn Read + Send>) -> Self {
        Lines {
            src: BufReader::with_capacity(1 << 16, src),
            line: Vec::with_capacity(64),
            lineno: 0,
        }
    }

    fn next(&mut self, origin: &str) -> Result<bool, TraceError> {
        self.line.clear();
        let n = self.src.read_until(b'\n', &mut self.line).map_err(|e| {
            TraceError::new(
                origin,
                Pos::Line(self.lineno + 1),
                format!("cannot read: {e}"),
            )
        })?;
        self.lineno += 1;
        Ok(n > 0)
    }
}

/// Reads a lackey trace (see the module doc).
pub struct LackeyReader {
    lines: Lines,
    origin: String,
    header: Header,
    /// First page of each region, ascending (objects in the same order).
    starts: Vec<u64>,
    insns: u64,
    /// Touches still to hand out (a straddling access touches two pages).
    queue: [Option<Op>; 2],
}

impl LackeyReader {
    pub fn new(
        src: Box<dyn Read + Send>,
        origin: &str,
        reopen: &dyn Fn() -> Result<Box<dyn Read + Send>, TraceError>,
    ) -> Result<Self, TraceError> {
        let mut lines = Lines::new(src);
        let mut pages = BTreeSet::new();
        let mut any = false;
        while lines.next(origin)? {
            if let Access::Data { addr, size, .. } = parse(&lines.line, origin, lines.lineno)? {
                pages.insert(addr >> 12);
                pages.insert((addr + size - 1) >> 12);
                any = true;
            }
        }
        if !any {
            return Err(TraceError::new(
                origin,
                Pos::None,
                "no data accesses (` L`, ` S`, ` M` lines): was it recorded with --trace-mem=yes?",
            ));
        }
        // Regions: runs of pages with gaps of at most REGION_GAP.
        let mut regions: Vec<(u64, u64)> = Vec::new();
        for p in pages {
            match regions.last_mut() {
                Some((_, end)) if p - *end <= REGION_GAP => *end = p,
                _ => regions.push((p, p)),
            }
        }
        let last = regions.len() - 1;
        let mut header = Header {
            tasks: vec!["main".into()],
            objects: Vec::new(),
        };
        for (i, &(s, e)) in regions.iter().enumerate() {
            if e - s >= 1 << 32 {
                return Err(TraceError::new(
                    origin,
                    Pos::None,
                    format!("region at {:#x} spans more than 2^32 pages", s << 12),
                ));
            }
            header.objects.push(Object {
                name: if i == last {
                    "stack".into()
                } else {
                    format!("region-{:x}", s << 12)
                },
                kind: Kind::Anon,
                pages: e - s + 1,
                exists: false,
            });
        }
        Ok(LackeyReader {
            lines: Lines::new(reopen()?),
            origin: origin.to_string(),
            header,
            starts: regions.iter().map(|r| r.0).collect(),
            insns: 0,
            queue: [None, None],
        })
    }

    fn touch(&self, page: u64, write: bool, lineno: u64) -> Result<Op, TraceError> {
        let i = self.starts.partition_point(|&s| s <= page);
        let changed = || {
            TraceError::new(
                &self.origin,
                Pos::Line(lineno),
                "the file changed between the two passes",
            )
        };
        if i == 0 {
            return Err(changed());
        }
        let off = page - self.starts[i - 1];
        if off >= self.header.objects[i - 1].pages {
            return Err(changed());
        }
        Ok(Op::Touch {
            obj: (i - 1) as u32,
            page: off as u32,
            write,
        })
    }
}

impl RecordRead for LackeyReader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        for q in 0..2 {
            if let Some(op) = self.queue[q].take() {
                return Ok(Some(Record { task: 0, op }));
            }
        }
        loop {
            if !self.lines.next(&self.origin)? {
                return Ok(None);
            }
            let lineno = self.lines.lineno;
            match parse(&self.lines.line, &self.origin, lineno)? {
                Access::Skip => {}
                Access::Insn(n) => self.insns += n,
                Access::Data { addr, size, write } => {
                    let (p0, p1) = (addr >> 12, (addr + size - 1) >> 12);
                    let first = self.touch(p0, write, lineno)?;
                    if p1 != p0 {
                        self.queue[1] = Some(self.touch(p1, write, lineno)?);
                    }
                    if self.insns >= THINK_MIN_INSNS {
                        let ns = self.insns.min(u64::from(u32::MAX)) as u32;
                        self.insns -= u64::from(ns);
                        self.queue[0] = Some(first);
                        return Ok(Some(Record {
                            task: 0,
                            op: Op::Think { ns },
                        }));
                    }
                    return Ok(Some(Record { task: 0, op: first }));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::read_all;

    fn read(text: &str) -> Result<(Header, Vec<Op>), TraceError> {
        let b = text.as_bytes().to_vec();
        let b2 = b.clone();
        let mut r = LackeyReader::new(Box::new(std::io::Cursor::new(b)), "l.txt", &move || {
            Ok(Box::new(std::io::Cursor::new(b2.clone())) as Box<dyn Read + Send>)
        })?;
        let ops = read_all(&mut r)?.iter().map(|r| r.op).collect();
        Ok((r.header().clone(), ops))
    }

    #[test]
    fn regions_straddles_and_instruction_clock() {
        let mut t = String::from("==1== Lackey, an example Valgrind tool\n");
        t += " L 0804a000,4\n";
        t += " S 0804bffe,4\n"; // straddles pages 0x804b and 0x804c
        for _ in 0..1500 {
            t += "I  04000000,3\n";
        }
        t += " M 7ff0001000,8\n";
        t += "==1== \n";
        let (h, ops) = read(&t).unwrap();
        assert_eq!(
            h.objects
                .iter()
                .map(|o| (o.name.as_str(), o.pages))
                .collect::<Vec<_>>(),
            [("region-804a000", 3), ("stack", 1)]
        );
        assert_eq!(
            ops,
            [
                Op::Touch {
                    obj: 0,
                    page: 0,
                    write: false
                },
                Op::Touch {
                    obj: 0,
                    page: 1,
                    write: true
                },
                Op::Touch {
                    obj: 0,
                    page: 2,
                    write: true
                },
                Op::Think { ns: 1500 },
                Op::Touch {
                    obj: 1,
                    page: 0,
                    write: true
                },
            ]
        );
    }

    #[test]
    fn malformed_lines_are_positioned() {
        let e = read(" L 1000,4\n X 1000,4\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "l.txt:2: not a lackey record (expected `I  ADDR,SIZE` or ` L|S|M ADDR,SIZE`)"
        );
        let e = read(" L zz,4\n").unwrap_err();
        assert_eq!(e.to_string(), "l.txt:1: the address is not hexadecimal");
        let e = read("I  1000,4\n").unwrap_err();
        assert!(e.msg.starts_with("no data accesses"), "{e}");
    }
}
