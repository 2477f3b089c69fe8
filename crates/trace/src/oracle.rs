//! libCacheSim's oracleGeneral binary traces.
//!
//! A file is a sequence of 24-byte little-endian records: u32 timestamp (s), u64 object
//! id, u32 object size (bytes), i64 virtual time of the object's next access (-1: none).
//! libCacheSim ships its public block and key-value traces (MSR Cambridge, Alibaba,
//! CloudPhysics, Twitter...) in this format, often zstd-compressed (`.oracleGeneral.zst`,
//! decompressed on the fly here).
//!
//! # Replay
//! Every record becomes a `read()` of one file, `trace` (declared as existing: the data is
//! on disk before the replay starts), followed by `end`. Object ids are arbitrary 64-bit
//! numbers, so they are laid out in the file in order of first appearance: an object of
//! `size` bytes gets `ceil(size / 4096)` consecutive pages (at least one, also for size
//! 0) the first time it appears, and every access to it reads them all. Timestamps and next
//! access times are not replayed (the replay runs as fast as the simulated machine goes).
//!
//! # Simplifies
//! - Layout by first appearance loses the spatial locality of block traces (readahead sees
//!   no sequential runs between distinct objects). For a block trace with byte offsets, use
//!   the CSV reader, which keeps offsets.
//! - The reader reads the file twice (the first pass sizes the file) and keeps one map entry
//!   per distinct object: memory grows with the trace's footprint, not its length.

use std::collections::HashMap;
use std::io::Read;

use crate::{Header, Kind, Object, Op, Pos, Record, RecordRead, TraceError};

const REC: usize = 24;

/// One pass over the records: (object id, size) per record.
struct Pass {
    src: Box<dyn Read + Send>,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    /// Offset of `buf[0]` in the (decompressed) file.
    base: u64,
    origin: String,
}

impl Pass {
    fn new(src: Box<dyn Read + Send>, origin: &str) -> Self {
        Pass {
            src,
            buf: vec![0; REC * 4096],
            pos: 0,
            len: 0,
            base: 0,
            origin: origin.to_string(),
        }
    }

    /// The next record's (offset, id, size), None at the end.
    fn next(&mut self) -> Result<Option<(u64, u64, u32)>, TraceError> {
        if self.len - self.pos < REC {
            self.buf.copy_within(self.pos..self.len, 0);
            self.base += self.pos as u64;
            self.len -= self.pos;
            self.pos = 0;
            while self.len < REC {
                match self.src.read(&mut self.buf[self.len..]) {
                    Ok(0) => break,
                    Ok(n) => self.len += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(TraceError::new(
                            &self.origin,
                            Pos::Byte(self.base + self.len as u64),
                            format!("cannot read: {e}"),
                        ))
                    }
                }
            }
            if self.len == 0 {
                return Ok(None);
            }
            if self.len < REC {
                return Err(TraceError::new(
                    &self.origin,
                    Pos::Byte(self.base),
                    format!(
                        "a partial record of {} bytes at the end (oracleGeneral records are 24 bytes; truncated file?)",
                        self.len
                    ),
                ));
            }
        }
        let r = &self.buf[self.pos..self.pos + REC];
        let id = u64::from_le_bytes(r[4..12].try_into().unwrap());
        let size = u32::from_le_bytes(r[12..16].try_into().unwrap());
        let at = self.base + self.pos as u64;
        self.pos += REC;
        Ok(Some((at, id, size)))
    }
}

fn pages_of(size: u32) -> u32 {
    size.div_ceil(4096).max(1)
}

/// Reads an oracleGeneral trace as refault records (see the module doc).
pub struct OracleReader {
    pass: Pass,
    header: Header,
    /// Object id -> first page.
    layout: HashMap<u64, u32>,
    next_page: u64,
    /// An `end` is due after the last read.
    end_due: bool,
}

impl OracleReader {
    pub fn new(
        src: Box<dyn Read + Send>,
        origin: &str,
        reopen: &dyn Fn() -> Result<Box<dyn Read + Send>, TraceError>,
    ) -> Result<Self, TraceError> {
        // Pass 1: the file's size in pages.
        let mut first = Pass::new(src, origin);
        let mut seen: HashMap<u64, ()> = HashMap::new();
        let mut pages = 0u64;
        while let Some((at, id, size)) = first.next()? {
            if seen.insert(id, ()).is_none() {
                pages += u64::from(pages_of(size));
                if pages > u64::from(u32::MAX) {
                    return Err(TraceError::new(
                        origin,
                        Pos::Byte(at),
                        "the objects' total size exceeds 2^32 pages (16 TiB)",
                    ));
                }
            }
        }
        drop(seen);
        let header = Header {
            tasks: vec!["trace".into()],
            objects: vec![Object {
                name: "trace".into(),
                kind: Kind::File,
                pages: pages.max(1),
                exists: true,
            }],
        };
        Ok(OracleReader {
            pass: Pass::new(reopen()?, origin),
            header,
            layout: HashMap::new(),
            next_page: 0,
            end_due: false,
        })
    }
}

impl RecordRead for OracleReader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        if self.end_due {
            self.end_due = false;
            return Ok(Some(Record {
                task: 0,
                op: Op::OpEnd,
            }));
        }
        let Some((at, id, size)) = self.pass.next()? else {
            return Ok(None);
        };
        let nr = pages_of(size);
        let page = match self.layout.get(&id) {
            Some(&p) => p,
            None => {
                let p = self.next_page;
                if p + u64::from(nr) > self.header.objects[0].pages {
                    return Err(TraceError::new(
                        &self.pass.origin,
                        Pos::Byte(at),
                        "the file changed between the two passes",
                    ));
                }
                self.next_page += u64::from(nr);
                self.layout.insert(id, p as u32);
                p as u32
            }
        };
        // An object seen again with a larger size reads what it has, clamped to the file.
        let nr = nr.min((self.header.objects[0].pages - u64::from(page)) as u32);
        self.end_due = true;
        Ok(Some(Record {
            task: 0,
            op: Op::Read { obj: 0, page, nr },
        }))
    }
}

/// Encodes oracleGeneral records (for tests and sample making): (timestamp, id, size, next).
pub fn encode(records: &[(u32, u64, u32, i64)]) -> Vec<u8> {
    let mut v = Vec::with_capacity(records.len() * REC);
    for &(t, id, size, next) in records {
        v.extend_from_slice(&t.to_le_bytes());
        v.extend_from_slice(&id.to_le_bytes());
        v.extend_from_slice(&size.to_le_bytes());
        v.extend_from_slice(&next.to_le_bytes());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::read_all;

    fn reader(bytes: Vec<u8>) -> Result<OracleReader, TraceError> {
        let b2 = bytes.clone();
        OracleReader::new(
            Box::new(std::io::Cursor::new(bytes)),
            "x.oracleGeneral",
            &move || Ok(Box::new(std::io::Cursor::new(b2.clone())) as Box<dyn Read + Send>),
        )
    }

    #[test]
    fn objects_laid_out_by_first_appearance() {
        let bytes = encode(&[
            (1, 0xdead_beef, 8192, 2),
            (1, 7, 100, -1),
            (2, 0xdead_beef, 8192, -1),
            (3, 9, 0, -1),
        ]);
        let mut r = reader(bytes).unwrap();
        assert_eq!(r.header().objects[0].pages, 4);
        let ops: Vec<Op> = read_all(&mut r).unwrap().iter().map(|r| r.op).collect();
        assert_eq!(
            ops,
            [
                Op::Read {
                    obj: 0,
                    page: 0,
                    nr: 2
                },
                Op::OpEnd,
                Op::Read {
                    obj: 0,
                    page: 2,
                    nr: 1
                },
                Op::OpEnd,
                Op::Read {
                    obj: 0,
                    page: 0,
                    nr: 2
                },
                Op::OpEnd,
                Op::Read {
                    obj: 0,
                    page: 3,
                    nr: 1
                },
                Op::OpEnd,
            ]
        );
    }

    #[test]
    fn a_partial_record_is_an_error_with_its_offset() {
        let mut bytes = encode(&[(1, 1, 1, 1), (2, 2, 2, 2)]);
        bytes.truncate(40);
        let e = reader(bytes).err().unwrap();
        assert_eq!(e.pos, Pos::Byte(24));
        assert!(e.msg.contains("partial record of 16 bytes"), "{e}");
    }
}
