//! CSV block traces with configurable columns (MSR Cambridge, Alibaba, CloudPhysics dumps,
//! or your own `blktrace`/`bpftrace` export).
//!
//! # Columns
//! A spec names the 0-based columns and how to read them, comma-separated `key=value`:
//!
//! | key | meaning | default |
//! |---|---|---|
//! | `offset` | column of the request's offset | required |
//! | `size` | column of the request's size (absent: one page per request) | none |
//! | `op` | column of the operation: `r…`/`R…` read, `w…`/`W…` write (absent: reads) | none |
//! | `volume` | column naming the device / volume (absent: one volume) | none |
//! | `unit` | bytes per offset and size unit (512 for sector numbers) | 1 |
//! | `sep` | field separator: `comma`, `tab`, `space`, `semicolon` | comma |
//! | `skip` | header lines to skip | 0 |
//!
//! MSR Cambridge (`Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`) is
//! `offset=4,size=5,op=3,volume=2`.
//!
//! # Replay
//! Each volume becomes one file, `vol-<name>`, that exists when the replay starts and
//! spans the highest page any request touches. A request of `size` bytes at byte `offset`
//! reads (writes) pages `offset >> 12` to `(offset + size - 1) >> 12`, so a request that
//! spans pages touches all of them, then ends one operation. Timestamps are not replayed.
//! The file is read twice: the first pass finds the volumes and their sizes.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};

use crate::{Header, Kind, Object, Op, Pos, Record, RecordRead, TraceError};

/// Where the fields of a CSV block trace are (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvSpec {
    pub offset: usize,
    pub size: Option<usize>,
    pub op: Option<usize>,
    pub volume: Option<usize>,
    pub unit: u64,
    pub sep: u8,
    pub skip: u64,
}

impl CsvSpec {
    /// Parses `offset=4,size=5,op=3,volume=2,unit=1,sep=comma,skip=0`.
    pub fn parse(s: &str) -> Result<CsvSpec, String> {
        let mut spec = CsvSpec {
            offset: usize::MAX,
            size: None,
            op: None,
            volume: None,
            unit: 1,
            sep: b',',
            skip: 0,
        };
        for kv in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("csv columns: `{kv}` is not key=value"))?;
            let num = |v: &str| -> Result<u64, String> {
                v.parse()
                    .map_err(|_| format!("csv columns: {k} = `{v}` is not a number"))
            };
            match k {
                "offset" => spec.offset = num(v)? as usize,
                "size" => spec.size = Some(num(v)? as usize),
                "op" => spec.op = Some(num(v)? as usize),
                "volume" => spec.volume = Some(num(v)? as usize),
                "unit" => {
                    spec.unit = num(v)?;
                    if spec.unit == 0 {
                        return Err("csv columns: unit = 0".into());
                    }
                }
                "skip" => spec.skip = num(v)?,
                "sep" => {
                    spec.sep = match v {
                        "comma" => b',',
                        "tab" => b'\t',
                        "space" => b' ',
                        "semicolon" => b';',
                        _ => {
                            return Err(format!(
                                "csv columns: sep = `{v}` (comma, tab, space, semicolon)"
                            ))
                        }
                    }
                }
                _ => {
                    return Err(format!(
                        "csv columns: unknown key `{k}` (offset, size, op, volume, unit, sep, skip)"
                    ))
                }
            }
        }
        if spec.offset == usize::MAX {
            return Err("csv columns: `offset=N` is required".into());
        }
        Ok(spec)
    }
}

struct Request<'a> {
    volume: &'a str,
    write: bool,
    first: u64,
    nr: u64,
}

struct Lines {
    src: BufReader<Box<dyn Read + Send>>,
    line: Vec<u8>,
    lineno: u64,
    origin: String,
}

impl Lines {
    fn next(&mut self) -> Result<bool, TraceError> {
        self.line.clear();
        let n = self.src.read_until(b'\n', &mut self.line).map_err(|e| {
            TraceError::new(
                &self.origin,
                Pos::Line(self.lineno + 1),
                format!("cannot read: {e}"),
            )
        })?;
        self.lineno += 1;
        Ok(n > 0)
    }
}

fn parse<'a>(
    spec: &CsvSpec,
    line: &'a [u8],
    origin: &str,
    lineno: u64,
) -> Result<Option<Request<'a>>, TraceError> {
    let e = |m: String| TraceError::new(origin, Pos::Line(lineno), m);
    let line = std::str::from_utf8(line).map_err(|_| e("the line is not UTF-8".into()))?;
    let line = line.trim_end_matches(['\n', '\r']);
    if line.trim().is_empty() {
        return Ok(None);
    }
    let field = |i: usize, what: &str| -> Result<&'a str, TraceError> {
        let mut it: Box<dyn Iterator<Item = &'a str>> = if spec.sep == b' ' {
            Box::new(line.split_ascii_whitespace())
        } else {
            Box::new(line.split(spec.sep as char))
        };
        it.nth(i)
            .map(str::trim)
            .ok_or_else(|| e(format!("no column {i} ({what})")))
    };
    let num = |i: usize, what: &str| -> Result<u64, TraceError> {
        let s = field(i, what)?;
        s.parse::<u64>().map_err(|_| {
            e(format!(
                "column {i} ({what}) `{s}` is not a non-negative integer"
            ))
        })
    };
    let offset = num(spec.offset, "offset")?
        .checked_mul(spec.unit)
        .ok_or_else(|| e("offset overflows".into()))?;
    let size = match spec.size {
        Some(c) => num(c, "size")?
            .checked_mul(spec.unit)
            .ok_or_else(|| e("size overflows".into()))?,
        None => 4096,
    };
    let write = match spec.op {
        None => false,
        Some(c) => {
            let s = field(c, "op")?;
            match s.as_bytes().first() {
                Some(b'r' | b'R') => false,
                Some(b'w' | b'W') => true,
                _ => {
                    return Err(e(format!(
                        "column {c} (op) `{s}` is neither read nor write"
                    )))
                }
            }
        }
    };
    let volume = match spec.volume {
        None => "0",
        Some(c) => field(c, "volume")?,
    };
    if volume.is_empty() || volume.contains(|c: char| c.is_whitespace() || c == '#') {
        return Err(e(format!(
            "volume `{volume}` is empty or has blanks or '#'"
        )));
    }
    let size = size.max(1);
    let first = offset >> 12;
    let last = offset
        .checked_add(size - 1)
        .ok_or_else(|| e("offset + size overflows".into()))?
        >> 12;
    if last >= 1 << 32 {
        return Err(e(format!("offset {offset} + size {size} is beyond 16 TiB")));
    }
    Ok(Some(Request {
        volume,
        write,
        first,
        nr: last - first + 1,
    }))
}

/// Reads a CSV block trace (see the module doc).
pub struct CsvReader {
    lines: Lines,
    spec: CsvSpec,
    header: Header,
    /// Volume name -> object index.
    volumes: BTreeMap<String, u32>,
    end_due: bool,
}

impl CsvReader {
    pub fn new(
        src: Box<dyn Read + Send>,
        origin: &str,
        spec: CsvSpec,
        reopen: &dyn Fn() -> Result<Box<dyn Read + Send>, TraceError>,
    ) -> Result<Self, TraceError> {
        let mk = |src| Lines {
            src: BufReader::with_capacity(1 << 16, src),
            line: Vec::new(),
            lineno: 0,
            origin: origin.to_string(),
        };
        let mut lines = mk(src);
        let mut sizes: BTreeMap<String, u64> = BTreeMap::new();
        while lines.next()? {
            if lines.lineno <= spec.skip {
                continue;
            }
            if let Some(r) = parse(&spec, &lines.line, origin, lines.lineno)? {
                let end = r.first + r.nr;
                match sizes.get_mut(r.volume) {
                    Some(s) => *s = (*s).max(end),
                    None => {
                        if sizes.len() >= 1 << 16 {
                            return Err(TraceError::new(
                                origin,
                                Pos::Line(lines.lineno),
                                "more than 65536 volumes",
                            ));
                        }
                        sizes.insert(r.volume.to_string(), end);
                    }
                }
            }
        }
        let mut header = Header {
            tasks: vec!["trace".into()],
            objects: Vec::new(),
        };
        let mut volumes = BTreeMap::new();
        for (i, (v, pages)) in sizes.into_iter().enumerate() {
            header.objects.push(Object {
                name: format!("vol-{v}"),
                kind: Kind::File,
                pages,
                exists: true,
            });
            volumes.insert(v, i as u32);
        }
        Ok(CsvReader {
            lines: mk(reopen()?),
            spec,
            header,
            volumes,
            end_due: false,
        })
    }
}

impl RecordRead for CsvReader {
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
        loop {
            if !self.lines.next()? {
                return Ok(None);
            }
            if self.lines.lineno <= self.spec.skip {
                continue;
            }
            let lineno = self.lines.lineno;
            let Some(r) = parse(&self.spec, &self.lines.line, &self.lines.origin, lineno)? else {
                continue;
            };
            let changed = || {
                TraceError::new(
                    &self.lines.origin,
                    Pos::Line(lineno),
                    "the file changed between the two passes",
                )
            };
            let obj = *self.volumes.get(r.volume).ok_or_else(changed)?;
            if r.first + r.nr > self.header.objects[obj as usize].pages {
                return Err(changed());
            }
            let (page, nr) = (r.first as u32, r.nr as u32);
            self.end_due = true;
            let op = if r.write {
                Op::Write { obj, page, nr }
            } else {
                Op::Read { obj, page, nr }
            };
            return Ok(Some(Record { task: 0, op }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::read_all;

    fn reader(text: &str, spec: &str) -> Result<(Header, Vec<Op>), TraceError> {
        let b = text.as_bytes().to_vec();
        let b2 = b.clone();
        let mut r = CsvReader::new(
            Box::new(std::io::Cursor::new(b)),
            "t.csv",
            CsvSpec::parse(spec).unwrap(),
            &move || Ok(Box::new(std::io::Cursor::new(b2.clone())) as Box<dyn Read + Send>),
        )?;
        let ops = read_all(&mut r)?.iter().map(|r| r.op).collect();
        Ok((r.header().clone(), ops))
    }

    /// MSR Cambridge's layout: requests spanning pages touch every page they cover.
    #[test]
    fn msr_layout_volumes_and_page_spans() {
        let t = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n\
                 128166372003061629,hm,0,Read,8192,4096,1\n\
                 128166372003061630,hm,1,Write,4000,200,1\n\
                 128166372003061631,hm,0,Read,12288,12289,1\n";
        let (h, ops) = reader(t, "offset=4,size=5,op=3,volume=2,skip=1").unwrap();
        assert_eq!(
            h.objects
                .iter()
                .map(|o| (o.name.as_str(), o.pages))
                .collect::<Vec<_>>(),
            [("vol-0", 7), ("vol-1", 2)]
        );
        assert_eq!(
            ops,
            [
                Op::Read {
                    obj: 0,
                    page: 2,
                    nr: 1
                },
                Op::OpEnd,
                Op::Write {
                    obj: 1,
                    page: 0,
                    nr: 2
                },
                Op::OpEnd,
                Op::Read {
                    obj: 0,
                    page: 3,
                    nr: 4
                },
                Op::OpEnd,
            ]
        );
    }

    #[test]
    fn sectors_and_errors() {
        let (h, ops) = reader("8 2\n", "offset=0,size=1,sep=space,unit=512").unwrap();
        // Sector 8 = byte 4096 = page 1; 1 KiB.
        assert_eq!(h.objects[0].pages, 2);
        assert_eq!(
            ops[0],
            Op::Read {
                obj: 0,
                page: 1,
                nr: 1
            }
        );
        let e = reader("1,2\nx,2\n", "offset=0,size=1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv:2: column 0 (offset) `x` is not a non-negative integer"
        );
        let e = reader("1,2\n", "offset=0,size=1,op=1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv:1: column 1 (op) `2` is neither read nor write"
        );
        let e = reader("1\n", "offset=0,size=3").unwrap_err();
        assert_eq!(e.to_string(), "t.csv:1: no column 3 (size)");
        assert!(CsvSpec::parse("size=1").is_err());
        assert!(CsvSpec::parse("offset=1,frob=2").is_err());
    }
}
