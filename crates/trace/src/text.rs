//! The text form: one declaration or event per line, for people to write and read.
//!
//! ```text
//!   refault-trace 1                    first line that is not blank or a comment
//!   task NAME                          declarations, before the first event
//!   object NAME anon|shmem|file PAGES [exists]
//!   @NAME                              the following events are task NAME's
//!   t OBJ PAGE                         touch: a load from page PAGE of OBJ's mapping
//!   w OBJ PAGE                         touch: a store
//!   read OBJ PAGE NR                   pread() of NR pages of file OBJ from PAGE
//!   write OBJ PAGE NR                  pwrite()
//!   fsync OBJ
//!   advise OBJ normal|random|sequential
//!   think NS                           CPU time in user space (ns, at most 2^32 - 1)
//!   end                                end of one operation (request, transaction)
//!   phase IDX                          the task enters phase IDX (0..65535)
//! ```
//!
//! `#` starts a comment, to the end of the line. Fields are separated by blanks. Names have
//! no blanks and no `#`. Without any `task` line, the trace has one task named `main`.
//! Events belong to the first declared task until an `@` line switches. The end of the
//! file is the end of the trace (text has no end record: a text trace cut at a line
//! boundary is a shorter valid trace; use the binary form to detect truncation).

use std::io::{BufRead, BufReader, BufWriter, Read, Write};

use crate::{check_header, check_op, Header, Hint, Kind, Object, Op, Pos, Record, RecordRead};
use crate::{RecordWrite, TraceError};

pub const FIRST_LINE: &str = "refault-trace 1";

/// Reads the text form.
pub struct TextReader {
    src: BufReader<Box<dyn Read + Send>>,
    origin: String,
    header: Header,
    line: Vec<u8>,
    lineno: u64,
    task: u32,
    /// The first event line, read while looking for the end of the declarations.
    first: Option<Record>,
    /// The first event has been read: declarations are over.
    started: bool,
    last_obj: u32,
}

fn err(origin: &str, line: u64, msg: impl Into<String>) -> TraceError {
    TraceError::new(origin, Pos::Line(line), msg)
}

enum Line {
    Blank,
    Task(String),
    Object(Object),
    Switch(String),
    Event(Op),
}

/// The line without its comment and trailing blanks / line end.
fn strip(l: &[u8]) -> &[u8] {
    let end = l.iter().position(|&b| b == b'#').unwrap_or(l.len());
    let l = &l[..end];
    let s = l
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(l.len());
    let e = l
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(s, |e| e + 1);
    &l[s..e]
}

impl TextReader {
    pub fn new(src: Box<dyn Read + Send>, origin: &str) -> Result<Self, TraceError> {
        let mut r = TextReader {
            src: BufReader::with_capacity(1 << 16, src),
            origin: origin.to_string(),
            header: Header::default(),
            line: Vec::with_capacity(128),
            lineno: 0,
            task: 0,
            first: None,
            started: false,
            last_obj: 0,
        };
        // The version line.
        loop {
            if !r.read_line()? {
                return Err(TraceError::new(
                    origin,
                    Pos::None,
                    "empty trace: no `refault-trace 1` line",
                ));
            }
            let l = strip(&r.line);
            if l.is_empty() {
                continue;
            }
            let l = String::from_utf8_lossy(l);
            let f: Vec<&str> = l.split_ascii_whitespace().collect();
            match f.as_slice() {
                ["refault-trace", "1"] => break,
                ["refault-trace", v] => {
                    return Err(r.err(format!(
                        "text trace version {v}; this refault reads version 1"
                    )))
                }
                _ => {
                    return Err(
                        r.err("not a refault text trace: the first line must be `refault-trace 1`")
                    )
                }
            }
        }
        // Declarations, up to the first event.
        let mut switch_to: Option<(String, u64)> = None;
        while r.read_line()? {
            match r.parse()? {
                Line::Blank => {}
                Line::Task(t) => {
                    if r.header.tasks.contains(&t) {
                        return Err(r.err(format!("task `{t}` is declared twice")));
                    }
                    r.header.tasks.push(t);
                }
                Line::Object(o) => {
                    r.header.objects.push(o);
                    check_header(&r.header).map_err(|m| r.err(m))?;
                }
                Line::Switch(t) => switch_to = Some((t, r.lineno)),
                Line::Event(op) => {
                    r.finish_header(switch_to)?;
                    check_op(&r.header, &op).map_err(|m| r.err(m))?;
                    r.first = Some(Record { task: r.task, op });
                    return Ok(r);
                }
            }
        }
        r.finish_header(switch_to)?;
        Ok(r)
    }

    fn err(&self, msg: impl Into<String>) -> TraceError {
        err(&self.origin, self.lineno, msg)
    }

    fn finish_header(&mut self, switch_to: Option<(String, u64)>) -> Result<(), TraceError> {
        self.started = true;
        if self.header.tasks.is_empty() {
            self.header.tasks.push("main".into());
        }
        check_header(&self.header).map_err(|m| self.err(m))?;
        if let Some((t, l)) = switch_to {
            self.switch(&t, l)?;
        }
        Ok(())
    }

    fn switch(&mut self, t: &str, line: u64) -> Result<(), TraceError> {
        match self.header.tasks.iter().position(|x| x == t) {
            Some(i) => {
                self.task = i as u32;
                Ok(())
            }
            None => Err(err(
                &self.origin,
                line,
                format!(
                    "@{t}: no such task (tasks: {})",
                    self.header.tasks.join(", ")
                ),
            )),
        }
    }

    /// Reads the next line into `self.line`; false at the end of the file.
    fn read_line(&mut self) -> Result<bool, TraceError> {
        self.line.clear();
        let n = self
            .src
            .read_until(b'\n', &mut self.line)
            .map_err(|e| err(&self.origin, self.lineno + 1, format!("cannot read: {e}")))?;
        if n == 0 {
            return Ok(false);
        }
        self.lineno += 1;
        Ok(true)
    }

    fn obj(&mut self, name: &str) -> Result<u32, TraceError> {
        let objs = &self.header.objects;
        if let Some(o) = objs.get(self.last_obj as usize) {
            if o.name == name {
                return Ok(self.last_obj);
            }
        }
        match objs.iter().position(|o| o.name == name) {
            Some(i) => {
                self.last_obj = i as u32;
                Ok(i as u32)
            }
            None => Err(self.err(format!("unknown object `{name}`"))),
        }
    }

    /// Parses `self.line`.
    fn parse(&mut self) -> Result<Line, TraceError> {
        let line = std::mem::take(&mut self.line);
        let res = self.parse_fields(&line);
        self.line = line;
        res
    }

    fn parse_fields(&mut self, raw: &[u8]) -> Result<Line, TraceError> {
        let l = strip(raw);
        if l.is_empty() {
            return Ok(Line::Blank);
        }
        let l = std::str::from_utf8(l).map_err(|_| self.err("the line is not UTF-8"))?;
        let mut fields = l.split_ascii_whitespace();
        let word = fields.next().unwrap_or("");
        let mut f = [""; 4];
        let mut nf = 0;
        for x in fields {
            if nf == f.len() {
                return Err(self.err(format!("`{word}`: unexpected `{x}`")));
            }
            f[nf] = x;
            nf += 1;
        }
        let arity = |want: usize, usage: &str| -> Result<(), TraceError> {
            if nf != want {
                return Err(self.err(format!("`{word}` takes {usage}")));
            }
            Ok(())
        };
        let num = |s: &str, what: &str, max: u64| -> Result<u64, TraceError> {
            let v: u64 = s
                .parse()
                .map_err(|_| self.err(format!("`{word}`: {what} `{s}` is not a number")))?;
            if v > max {
                return Err(self.err(format!("`{word}`: {what} {v} is above {max}")));
            }
            Ok(v)
        };
        let u32max = u64::from(u32::MAX);
        let decl_ok = |this: &Self| -> Result<(), TraceError> {
            if this.started {
                return Err(this.err(format!("`{word}` after the first event")));
            }
            Ok(())
        };
        let op = match word {
            "t" | "w" => {
                arity(2, "OBJ PAGE")?;
                let page = num(f[1], "page", u32max)? as u32;
                Op::Touch {
                    obj: self.obj(f[0])?,
                    page,
                    write: word == "w",
                }
            }
            "read" | "write" => {
                arity(3, "OBJ PAGE NR")?;
                let page = num(f[1], "page", u32max)? as u32;
                let nr = num(f[2], "page count", u32max)? as u32;
                let obj = self.obj(f[0])?;
                if word == "read" {
                    Op::Read { obj, page, nr }
                } else {
                    Op::Write { obj, page, nr }
                }
            }
            "fsync" => {
                arity(1, "OBJ")?;
                Op::Fsync {
                    obj: self.obj(f[0])?,
                }
            }
            "advise" => {
                arity(2, "OBJ normal|random|sequential")?;
                let hint = Hint::parse(f[1]).ok_or_else(|| {
                    self.err(format!(
                        "`advise`: unknown hint `{}` (normal, random, sequential)",
                        f[1]
                    ))
                })?;
                Op::Advise {
                    obj: self.obj(f[0])?,
                    hint,
                }
            }
            "think" => {
                arity(1, "NS")?;
                Op::Think {
                    ns: num(f[0], "nanoseconds", u32max)? as u32,
                }
            }
            "end" => {
                arity(0, "nothing")?;
                Op::OpEnd
            }
            "phase" => {
                arity(1, "IDX")?;
                Op::Phase {
                    idx: num(f[0], "phase index", u64::from(u16::MAX))? as u16,
                }
            }
            "task" => {
                arity(1, "NAME")?;
                decl_ok(self)?;
                return Ok(Line::Task(f[0].to_string()));
            }
            "object" => {
                decl_ok(self)?;
                let exists = match nf {
                    3 => false,
                    4 if f[3] == "exists" => true,
                    _ => return Err(self.err("`object` takes NAME anon|shmem|file PAGES [exists]")),
                };
                let kind = Kind::parse(f[1]).ok_or_else(|| {
                    self.err(format!(
                        "object `{}`: unknown kind `{}` (anon, shmem, file)",
                        f[0], f[1]
                    ))
                })?;
                let pages: u64 = f[2].parse().map_err(|_| {
                    self.err(format!(
                        "object `{}`: size `{}` is not a number of pages",
                        f[0], f[2]
                    ))
                })?;
                return Ok(Line::Object(Object {
                    name: f[0].to_string(),
                    kind,
                    pages,
                    exists,
                }));
            }
            w if w.starts_with('@') => {
                arity(0, "no arguments")?;
                return Ok(Line::Switch(w[1..].to_string()));
            }
            "refault-trace" => return Err(self.err("a second `refault-trace` line")),
            w => return Err(self.err(format!("unknown record `{w}`"))),
        };
        Ok(Line::Event(op))
    }
}

impl RecordRead for TextReader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        if let Some(r) = self.first.take() {
            return Ok(Some(r));
        }
        while self.read_line()? {
            match self.parse()? {
                Line::Blank => {}
                Line::Switch(t) => {
                    let l = self.lineno;
                    self.switch(&t, l)?;
                }
                Line::Event(op) => {
                    check_op(&self.header, &op).map_err(|m| self.err(m))?;
                    return Ok(Some(Record {
                        task: self.task,
                        op,
                    }));
                }
                Line::Task(_) | Line::Object(_) => unreachable!("rejected after the first event"),
            }
        }
        Ok(None)
    }
}

/// Writes the text form.
pub struct TextWriter {
    out: BufWriter<Box<dyn Write + Send>>,
    header: Header,
    task: u32,
}

impl TextWriter {
    pub fn new(out: Box<dyn Write + Send>, header: &Header) -> std::io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 16, out);
        writeln!(out, "{FIRST_LINE}")?;
        for t in &header.tasks {
            writeln!(out, "task {t}")?;
        }
        for o in &header.objects {
            write!(out, "object {} {} {}", o.name, o.kind.name(), o.pages)?;
            if o.exists {
                write!(out, " exists")?;
            }
            writeln!(out)?;
        }
        Ok(TextWriter {
            out,
            header: header.clone(),
            task: 0,
        })
    }
}

fn obj_name(h: &Header, obj: u32) -> std::io::Result<&str> {
    {
        h.objects
            .get(obj as usize)
            .map(|o| o.name.as_str())
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("record names undeclared object {obj}"),
                )
            })
    }
}

impl RecordWrite for TextWriter {
    fn write_record(&mut self, r: &Record) -> std::io::Result<()> {
        if r.task != self.task {
            let t = self.header.tasks.get(r.task as usize).ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("record of undeclared task {}", r.task),
                )
            })?;
            writeln!(self.out, "@{t}")?;
            self.task = r.task;
        }
        match r.op {
            Op::Touch { obj, page, write } => {
                let w = if write { "w" } else { "t" };
                let n = obj_name(&self.header, obj)?;
                writeln!(self.out, "{w} {n} {page}")
            }
            Op::Read { obj, page, nr } => {
                let n = obj_name(&self.header, obj)?;
                writeln!(self.out, "read {n} {page} {nr}")
            }
            Op::Write { obj, page, nr } => {
                let n = obj_name(&self.header, obj)?;
                writeln!(self.out, "write {n} {page} {nr}")
            }
            Op::Fsync { obj } => {
                let n = obj_name(&self.header, obj)?;
                writeln!(self.out, "fsync {n}")
            }
            Op::Advise { obj, hint } => {
                let n = obj_name(&self.header, obj)?;
                writeln!(self.out, "advise {n} {}", hint.name())
            }
            Op::Think { ns } => writeln!(self.out, "think {ns}"),
            Op::OpEnd => writeln!(self.out, "end"),
            Op::Phase { idx } => writeln!(self.out, "phase {idx}"),
        }
    }

    fn finish(mut self: Box<Self>) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{arbitrary_trace, read_all, Shared};
    use std::sync::{Arc, Mutex};

    fn encode(h: &Header, recs: &[Record]) -> String {
        let out = Arc::new(Mutex::new(Vec::new()));
        let mut w = Box::new(TextWriter::new(Box::new(Shared(out.clone())), h).unwrap());
        for r in recs {
            w.write_record(r).unwrap();
        }
        w.finish().unwrap();
        let v = out.lock().unwrap().clone();
        String::from_utf8(v).unwrap()
    }

    fn decode(text: &str) -> Result<(Header, Vec<Record>), TraceError> {
        let mut r = TextReader::new(
            Box::new(std::io::Cursor::new(text.to_string().into_bytes())),
            "t.txt",
        )?;
        let recs = read_all(&mut r)?;
        Ok((r.header().clone(), recs))
    }

    #[test]
    fn round_trip_is_lossless() {
        for seed in 0..300 {
            let (h, recs) = arbitrary_trace(seed);
            let text = encode(&h, &recs);
            let (h2, recs2) = decode(&text).unwrap();
            assert_eq!(h2, h, "seed {seed}");
            assert_eq!(recs2, recs, "seed {seed}:\n{text}");
            // And text -> binary -> text is the same text.
            assert_eq!(encode(&h2, &recs2), text);
        }
    }

    #[test]
    fn comments_blanks_switches_and_the_implicit_task() {
        let t = "# a trace\n\nrefault-trace 1   # version\nobject heap anon 16\nobject db file 100 exists\n\
                 t heap 3\n  w heap 4 # store\nread db 0 32\nend\nthink 1000\n";
        let (h, recs) = decode(t).unwrap();
        assert_eq!(h.tasks, ["main"]);
        assert!(h.objects[1].exists);
        assert_eq!(
            recs.iter().map(|r| r.op).collect::<Vec<_>>(),
            [
                Op::Touch {
                    obj: 0,
                    page: 3,
                    write: false
                },
                Op::Touch {
                    obj: 0,
                    page: 4,
                    write: true
                },
                Op::Read {
                    obj: 1,
                    page: 0,
                    nr: 32
                },
                Op::OpEnd,
                Op::Think { ns: 1000 },
            ]
        );
        let t = "refault-trace 1\ntask a\ntask b\nobject h anon 4\n@b\nt h 0\n@a\nt h 1\n";
        let (_, recs) = decode(t).unwrap();
        assert_eq!(recs.iter().map(|r| r.task).collect::<Vec<_>>(), [1, 0]);
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("", "t.txt: empty trace: no `refault-trace 1` line"),
            (
                "hello\n",
                "t.txt:1: not a refault text trace: the first line must be `refault-trace 1`",
            ),
            (
                "refault-trace 2\n",
                "t.txt:1: text trace version 2; this refault reads version 1",
            ),
            (
                "refault-trace 1\nobject h anon 4\nt h 4\n",
                "t.txt:3: page 4 is outside object `h` (4 pages)",
            ),
            (
                "refault-trace 1\nobject h anon 4\nt g 1\n",
                "t.txt:3: unknown object `g`",
            ),
            (
                "refault-trace 1\nobject h anon 4\nt h\n",
                "t.txt:3: `t` takes OBJ PAGE",
            ),
            (
                "refault-trace 1\nobject h anon 4\nt h x\n",
                "t.txt:3: `t`: page `x` is not a number",
            ),
            (
                "refault-trace 1\nobject h anon 4\nread h 0 1\n",
                "t.txt:3: read/write of object `h`, which is anon, not a file",
            ),
            (
                "refault-trace 1\nobject h anon 4\nt h 0\nobject g anon 1\n",
                "t.txt:4: `object` after the first event",
            ),
            (
                "refault-trace 1\nobject h anon 4\nobject h file 4\n",
                "t.txt:3: object `h` is declared twice",
            ),
            (
                "refault-trace 1\nobject h anon 0\n",
                "t.txt:2: object `h` has 0 pages: must be 1 to 2^32",
            ),
            (
                "refault-trace 1\nobject h anon 4\n\n@x\nt h 0\n",
                "t.txt:4: @x: no such task (tasks: main)",
            ),
            (
                "refault-trace 1\nobject h anon 4\nt h 0\nfrob\n",
                "t.txt:4: unknown record `frob`",
            ),
            (
                "refault-trace 1\nphase 65536\n",
                "t.txt:2: `phase`: phase index 65536 is above 65535",
            ),
            (
                "refault-trace 1\nobject h anon 4\nadvise h willneed\n",
                "t.txt:3: `advise`: unknown hint `willneed` (normal, random, sequential)",
            ),
        ];
        for (text, want) in cases {
            let e = decode(text).unwrap_err();
            assert_eq!(e.to_string(), want, "{text:?}");
        }
    }
}
