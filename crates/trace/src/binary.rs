//! The binary form: for traces of billions of events.
//!
//! ```text
//!   file    = magic "RFTRACE\0" | version u16 LE (1) | flags u16 LE | body
//!   flags   = bit 0: body is zstd-compressed (one or more frames); other bits 0
//!   body    = varint ntasks   { string name }
//!             varint nobjects { string name | u8 kind (0 anon, 1 shmem, 2 file)
//!                               | varint pages | u8 exists }
//!             { record } end
//!   string  = varint length | UTF-8 bytes
//!   record  = tag u8 | operands          (tag: low 4 bits = opcode, high 4 bits = flags)
//! ```
//!
//! | opcode | record | operands | flags |
//! |---|---|---|---|
//! | 0 | touch | [obj] page | 0x10 store, 0x20 same object, 0x40 an `end` follows |
//! | 1 | read | [obj] page nr | 0x20 same object |
//! | 2 | write | [obj] page nr | 0x20 same object |
//! | 3 | fsync | [obj] | 0x20 same object |
//! | 4 | advise | [obj] u8 hint (0 normal, 1 random, 2 sequential) | 0x20 same object |
//! | 5 | think | ns | |
//! | 6 | end of operation | | |
//! | 7 | phase | idx | |
//! | 8 | task switch | task | |
//! | 15 | end of trace | number of events | |
//!
//! All integers are LEB128 varints. `obj` is omitted when flag 0x20 says the record is about
//! the object of the previous record that named one. `page` is a zigzag-encoded delta from
//! the last page (first page of a read/write) of the same object, initially 0. Records
//! belong to the current task, initially task 0, changed by a task switch. The "end of
//! trace" record carries the number of events before it (task switches excluded, a touch with
//! flag 0x40 counting as two) and must be the last byte of the body: a truncated file is
//! an error, never a short replay. Unknown flags, opcodes or versions are errors.
//!
//! Positions in errors are byte offsets in the decompressed body.

use std::io::{Read, Write};

use crate::{check_header, check_op, Header, Hint, Kind, Object, Op, Pos, Record, RecordRead};
use crate::{RecordWrite, TraceError};

pub const MAGIC: &[u8; 8] = b"RFTRACE\0";
pub const VERSION: u16 = 1;
const FLAG_ZSTD: u16 = 1;

const OP_TOUCH: u8 = 0;
const OP_READ: u8 = 1;
const OP_WRITE: u8 = 2;
const OP_FSYNC: u8 = 3;
const OP_ADVISE: u8 = 4;
const OP_THINK: u8 = 5;
const OP_END: u8 = 6;
const OP_PHASE: u8 = 7;
const OP_TASK: u8 = 8;
const OP_EOT: u8 = 15;
const F_STORE: u8 = 0x10;
const F_SAME: u8 = 0x20;
const F_OPEND: u8 = 0x40;

const BUF: usize = 1 << 16;

#[inline]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn hint_code(h: Hint) -> u8 {
    match h {
        Hint::Normal => 0,
        Hint::Random => 1,
        Hint::Sequential => 2,
    }
}

fn kind_code(k: Kind) -> u8 {
    match k {
        Kind::Anon => 0,
        Kind::Shmem => 1,
        Kind::File => 2,
    }
}

// ---------------------------------------------------------------------------------------------
// Writer

enum Sink {
    Zstd(zstd::stream::write::Encoder<'static, Box<dyn Write + Send>>),
    Raw(Box<dyn Write + Send>),
}

/// Writes the binary form. Create it with the trace's header, feed it records, `finish`.
pub struct BinaryWriter {
    sink: Sink,
    /// Encoded records not yet handed to the sink: `buf[..len]`. A record (with a task switch
    /// and a held-back touch before it) is at most [`MAX_RECORD`] bytes, and the buffer is
    /// flushed once `len` reaches [`BUF`], so writing a record never checks for room byte by
    /// byte.
    buf: Box<[u8]>,
    len: usize,
    nobjects: u32,
    last_page: Vec<u32>,
    last_obj: Option<u32>,
    task: u32,
    /// A touch held back to fuse with an `end` that follows it.
    pending: Option<Op>,
    events: u64,
}

fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Task switch (1 + 5), a held-back touch (1 + 5 + 5) and the record (at most 1 + 5 + 5 + 5),
/// rounded up.
const MAX_RECORD: usize = 64;

fn put_str(buf: &mut Vec<u8>, s: &str) {
    put_varint(buf, s.len() as u64);
    buf.extend_from_slice(s.as_bytes());
}

impl BinaryWriter {
    /// A writer to `out`; `level` = Some(zstd level) compresses the body, None stores it raw.
    pub fn new(
        mut out: Box<dyn Write + Send>,
        header: &Header,
        level: Option<i32>,
    ) -> std::io::Result<Self> {
        out.write_all(MAGIC)?;
        out.write_all(&VERSION.to_le_bytes())?;
        let flags = if level.is_some() { FLAG_ZSTD } else { 0 };
        out.write_all(&flags.to_le_bytes())?;
        let sink = match level {
            Some(l) => Sink::Zstd(zstd::stream::write::Encoder::new(out, l)?),
            None => Sink::Raw(out),
        };
        let mut buf = Vec::new();
        put_varint(&mut buf, header.tasks.len() as u64);
        for t in &header.tasks {
            put_str(&mut buf, t);
        }
        put_varint(&mut buf, header.objects.len() as u64);
        for o in &header.objects {
            put_str(&mut buf, &o.name);
            buf.push(kind_code(o.kind));
            put_varint(&mut buf, o.pages);
            buf.push(u8::from(o.exists));
        }
        let mut w = BinaryWriter {
            sink,
            buf: vec![0u8; BUF + MAX_RECORD].into_boxed_slice(),
            len: 0,
            nobjects: header.objects.len() as u32,
            last_page: vec![0; header.objects.len()],
            last_obj: None,
            task: 0,
            pending: None,
            events: 0,
        };
        w.sink_write(&buf)?;
        Ok(w)
    }

    fn sink_write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match &mut self.sink {
            Sink::Zstd(e) => e.write_all(bytes),
            Sink::Raw(w) => w.write_all(bytes),
        }
    }

    #[cold]
    fn flush_buf(&mut self) -> std::io::Result<()> {
        let buf = std::mem::take(&mut self.buf);
        let r = self.sink_write(&buf[..self.len]);
        self.buf = buf;
        self.len = 0;
        r
    }

    #[inline]
    fn push(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    /// LEB128 of a value below 2^35 (every record operand is a u32 or a zigzag-encoded
    /// difference of two u32s).
    #[inline]
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.push(v as u8);
    }

    #[inline]
    fn obj_tag(&mut self, tag: u8, obj: u32) {
        if self.last_obj == Some(obj) {
            self.push(tag | F_SAME);
        } else {
            self.push(tag);
            self.varint(u64::from(obj));
            self.last_obj = Some(obj);
        }
    }

    #[inline]
    fn page(&mut self, obj: u32, page: u32) {
        let slot = &mut self.last_page[obj as usize];
        let d = i64::from(page) - i64::from(*slot);
        *slot = page;
        self.varint(zigzag(d));
    }

    #[inline]
    fn emit(&mut self, op: &Op, fused_end: bool) {
        match *op {
            Op::Touch { obj, page, write } => {
                let mut tag = OP_TOUCH;
                if write {
                    tag |= F_STORE;
                }
                if fused_end {
                    tag |= F_OPEND;
                }
                self.obj_tag(tag, obj);
                self.page(obj, page);
            }
            Op::Read { obj, page, nr } | Op::Write { obj, page, nr } => {
                let tag = if matches!(op, Op::Read { .. }) {
                    OP_READ
                } else {
                    OP_WRITE
                };
                self.obj_tag(tag, obj);
                self.page(obj, page);
                self.varint(u64::from(nr));
            }
            Op::Fsync { obj } => self.obj_tag(OP_FSYNC, obj),
            Op::Advise { obj, hint } => {
                self.obj_tag(OP_ADVISE, obj);
                self.push(hint_code(hint));
            }
            Op::Think { ns } => {
                self.push(OP_THINK);
                self.varint(u64::from(ns));
            }
            Op::OpEnd => self.push(OP_END),
            Op::Phase { idx } => {
                self.push(OP_PHASE);
                self.varint(u64::from(idx));
            }
        }
    }

    #[inline]
    fn flush_pending(&mut self) {
        if let Some(p) = self.pending.take() {
            self.emit(&p, false);
        }
    }
}

impl RecordWrite for BinaryWriter {
    /// Writes `r`. Records are expected to be valid for the header (the readers check them);
    /// an object index beyond the header is an `InvalidInput` error.
    #[inline]
    fn write_record(&mut self, r: &Record) -> std::io::Result<()> {
        if let Op::Touch { obj, .. }
        | Op::Read { obj, .. }
        | Op::Write { obj, .. }
        | Op::Fsync { obj }
        | Op::Advise { obj, .. } = r.op
        {
            if obj >= self.nobjects {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "record names object {obj}, but the header declares {}",
                        self.nobjects
                    ),
                ));
            }
        }
        self.events += 1;
        if r.task != self.task {
            self.flush_pending();
            self.push(OP_TASK);
            self.varint(u64::from(r.task));
            self.task = r.task;
        }
        match r.op {
            Op::OpEnd if self.pending.is_some() => {
                let p = self.pending.take().unwrap();
                self.emit(&p, true);
            }
            Op::Touch { .. } => {
                self.flush_pending();
                self.pending = Some(r.op);
            }
            op => {
                self.flush_pending();
                self.emit(&op, false);
            }
        }
        if self.len >= BUF {
            self.flush_buf()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> std::io::Result<()> {
        self.flush_pending();
        self.push(OP_EOT);
        let n = self.events;
        self.varint(n);
        self.flush_buf()?;
        match self.sink {
            Sink::Zstd(e) => e.finish()?.flush(),
            Sink::Raw(mut w) => w.flush(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reader

/// A buffered byte source that knows its offset (for error positions).
struct In {
    src: Box<dyn Read + Send>,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    /// Offset of `buf[0]` in the stream.
    base: u64,
    origin: String,
}

impl In {
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn err(&self, at: u64, msg: impl Into<String>) -> TraceError {
        TraceError::new(&self.origin, Pos::Byte(at), msg)
    }

    /// Refills; false at the end of input.
    #[cold]
    fn refill(&mut self) -> Result<bool, TraceError> {
        let keep = self.len - self.pos;
        self.buf.copy_within(self.pos..self.len, 0);
        self.base += self.pos as u64;
        self.pos = 0;
        self.len = keep;
        loop {
            match self.src.read(&mut self.buf[self.len..]) {
                Ok(0) => return Ok(self.len > keep),
                Ok(n) => {
                    self.len += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let at = self.base + self.len as u64;
                    return Err(self.err(at, format!("cannot read the body: {e}")));
                }
            }
        }
    }

    /// The next byte, or None at the end of input.
    #[inline]
    fn byte_opt(&mut self) -> Result<Option<u8>, TraceError> {
        if self.pos == self.len && !self.refill()? {
            return Ok(None);
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(Some(b))
    }

    #[inline]
    fn byte(&mut self, what: &str) -> Result<u8, TraceError> {
        match self.byte_opt()? {
            Some(b) => Ok(b),
            None => Err(self.truncated(what)),
        }
    }

    #[cold]
    fn truncated(&self, what: &str) -> TraceError {
        self.err(
            self.offset(),
            format!("the trace ends in the middle of {what} (truncated file?)"),
        )
    }

    #[inline]
    fn varint(&mut self, what: &str) -> Result<u64, TraceError> {
        let start = self.offset();
        // Fast path: the whole varint is in the buffer.
        if self.len - self.pos >= 10 {
            let mut v = 0u64;
            for i in 0..10 {
                let b = self.buf[self.pos + i];
                if i == 9 && b > 1 {
                    return Err(self.err(start, format!("{what}: varint overflows 64 bits")));
                }
                v |= u64::from(b & 0x7f) << (7 * i);
                if b < 0x80 {
                    self.pos += i + 1;
                    return Ok(v);
                }
            }
            return Err(self.err(start, format!("{what}: varint longer than 10 bytes")));
        }
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.byte(what)?;
            if i == 9 && b > 1 {
                return Err(self.err(start, format!("{what}: varint overflows 64 bits")));
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(self.err(start, format!("{what}: varint longer than 10 bytes")))
    }

    fn u32(&mut self, what: &str) -> Result<u32, TraceError> {
        let at = self.offset();
        let v = self.varint(what)?;
        u32::try_from(v).map_err(|_| self.err(at, format!("{what} = {v} does not fit in 32 bits")))
    }

    fn string(&mut self, what: &str) -> Result<String, TraceError> {
        let at = self.offset();
        let n = self.varint(what)?;
        if n > 4096 {
            return Err(self.err(at, format!("{what}: name of {n} bytes (at most 4096)")));
        }
        let mut v = Vec::with_capacity(n as usize);
        for _ in 0..n {
            v.push(self.byte(what)?);
        }
        String::from_utf8(v).map_err(|_| self.err(at, format!("{what} is not UTF-8")))
    }
}

/// Reads the binary form (after its 12-byte file header, which [`crate::open()`] checks).
pub struct BinaryReader {
    inp: In,
    header: Header,
    task: u32,
    last_obj: Option<u32>,
    last_page: Vec<u32>,
    /// An `end` of operation fused into the previous touch, still to hand out.
    pending_end: bool,
    events: u64,
    done: bool,
    /// Per object: its size in pages (dense, for the per-record range check; [`check_op`]
    /// gives the message when it fails).
    pages: Vec<u64>,
}

/// Reads and checks the 12-byte file header from `r`: Ok(compressed).
pub fn read_file_header(r: &mut dyn Read, origin: &str) -> Result<bool, TraceError> {
    let mut h = [0u8; 12];
    let mut got = 0;
    while got < 12 {
        match r.read(&mut h[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(TraceError::new(origin, Pos::None, e.to_string())),
        }
    }
    if got < 12 || &h[..8] != MAGIC {
        return Err(TraceError::new(
            origin,
            Pos::Byte(0),
            "not a binary refault trace (no RFTRACE header)",
        ));
    }
    let version = u16::from_le_bytes([h[8], h[9]]);
    if version != VERSION {
        return Err(TraceError::new(
            origin,
            Pos::Byte(8),
            format!("binary trace version {version}; this refault reads version {VERSION}"),
        ));
    }
    let flags = u16::from_le_bytes([h[10], h[11]]);
    if flags & !FLAG_ZSTD != 0 {
        return Err(TraceError::new(
            origin,
            Pos::Byte(10),
            format!("unknown flags {flags:#x}"),
        ));
    }
    Ok(flags & FLAG_ZSTD != 0)
}

impl BinaryReader {
    /// Reads a binary trace from `r`, positioned at the start of the file.
    pub fn new(mut r: Box<dyn Read + Send>, origin: &str) -> Result<Self, TraceError> {
        let compressed = read_file_header(&mut r, origin)?;
        let body: Box<dyn Read + Send> = if compressed {
            Box::new(zstd::stream::read::Decoder::new(r).map_err(|e| {
                TraceError::new(origin, Pos::None, format!("cannot start zstd: {e}"))
            })?)
        } else {
            r
        };
        Self::from_body(body, origin)
    }

    fn from_body(body: Box<dyn Read + Send>, origin: &str) -> Result<Self, TraceError> {
        let mut inp = In {
            src: body,
            buf: vec![0u8; BUF].into_boxed_slice(),
            pos: 0,
            len: 0,
            base: 0,
            origin: origin.to_string(),
        };
        let mut header = Header::default();
        let at = inp.offset();
        let ntasks = inp.varint("the task count")?;
        if ntasks > 1 << 20 {
            return Err(inp.err(at, format!("{ntasks} tasks (at most 2^20)")));
        }
        for _ in 0..ntasks {
            header.tasks.push(inp.string("a task name")?);
        }
        let at = inp.offset();
        let nobj = inp.varint("the object count")?;
        if nobj > 1 << 20 {
            return Err(inp.err(at, format!("{nobj} objects (at most 2^20)")));
        }
        for _ in 0..nobj {
            let name = inp.string("an object name")?;
            let at = inp.offset();
            let kind = match inp.byte("an object kind")? {
                0 => Kind::Anon,
                1 => Kind::Shmem,
                2 => Kind::File,
                k => return Err(inp.err(at, format!("object `{name}`: unknown kind {k}"))),
            };
            let pages = inp.varint("an object size")?;
            let at = inp.offset();
            let exists = match inp.byte("an object's exists flag")? {
                0 => false,
                1 => true,
                b => return Err(inp.err(at, format!("object `{name}`: exists flag {b}"))),
            };
            header.objects.push(Object {
                name,
                kind,
                pages,
                exists,
            });
        }
        check_header(&header).map_err(|m| inp.err(0, m))?;
        if header.tasks.is_empty() {
            return Err(inp.err(0, "no task is declared"));
        }
        Ok(BinaryReader {
            last_page: vec![0; header.objects.len()],
            pages: header.objects.iter().map(|o| o.pages).collect(),
            inp,
            header,
            task: 0,
            last_obj: None,
            pending_end: false,
            events: 0,
            done: false,
        })
    }

    #[inline]
    fn obj(&mut self, tag: u8, at: u64) -> Result<u32, TraceError> {
        if tag & F_SAME != 0 {
            self.last_obj.ok_or_else(|| {
                self.inp
                    .err(at, "`same object` flag before any object was named")
            })
        } else {
            let o = self.inp.u32("an object index")?;
            if o as usize >= self.header.objects.len() {
                return Err(self.inp.err(
                    at,
                    format!(
                        "object {o} is not declared ({} objects)",
                        self.header.objects.len()
                    ),
                ));
            }
            self.last_obj = Some(o);
            Ok(o)
        }
    }

    #[inline]
    fn page(&mut self, obj: u32, at: u64) -> Result<u32, TraceError> {
        let d = unzigzag(self.inp.varint("a page delta")?);
        let slot = &mut self.last_page[obj as usize];
        let p = i64::from(*slot) + d;
        match u32::try_from(p) {
            Ok(p) => {
                *slot = p;
                Ok(p)
            }
            Err(_) => Err(self.inp.err(at, format!("page {p} is out of range"))),
        }
    }

    #[inline]
    fn flags_ok(&self, tag: u8, allowed: u8, at: u64) -> Result<(), TraceError> {
        if tag & 0xf0 & !allowed != 0 {
            return Err(self.bad_flags(tag, at));
        }
        Ok(())
    }

    #[cold]
    fn bad_flags(&self, tag: u8, at: u64) -> TraceError {
        self.inp.err(
            at,
            format!("record tag {tag:#04x}: unknown flags for its opcode"),
        )
    }

    #[cold]
    fn bad_op(&self, op: &Op, at: u64) -> TraceError {
        match check_op(&self.header, op) {
            Err(m) => self.inp.err(at, m),
            Ok(()) => self.inp.err(at, "invalid record"),
        }
    }
}

impl RecordRead for BinaryReader {
    fn header(&self) -> &Header {
        &self.header
    }

    #[inline]
    fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        if self.pending_end {
            self.pending_end = false;
            self.events += 1;
            return Ok(Some(Record {
                task: self.task,
                op: Op::OpEnd,
            }));
        }
        if self.done {
            return Ok(None);
        }
        loop {
            let at = self.inp.offset();
            let tag = match self.inp.byte_opt()? {
                Some(t) => t,
                None => {
                    return Err(self.inp.err(
                        at,
                        "the trace ends without its end record (truncated file?)",
                    ))
                }
            };
            let op = match tag & 0x0f {
                OP_TOUCH => {
                    self.flags_ok(tag, F_STORE | F_SAME | F_OPEND, at)?;
                    let obj = self.obj(tag, at)?;
                    let page = self.page(obj, at)?;
                    let op = Op::Touch {
                        obj,
                        page,
                        write: tag & F_STORE != 0,
                    };
                    // check_op() of a touch, inline: the page lies inside the object (`obj`
                    // was checked against the header when it was named).
                    if u64::from(page) >= self.pages[obj as usize] {
                        return Err(self.bad_op(&op, at));
                    }
                    self.pending_end = tag & F_OPEND != 0;
                    self.events += 1;
                    return Ok(Some(Record {
                        task: self.task,
                        op,
                    }));
                }
                OP_READ | OP_WRITE => {
                    self.flags_ok(tag, F_SAME, at)?;
                    let obj = self.obj(tag, at)?;
                    let page = self.page(obj, at)?;
                    let nr = self.inp.u32("a page count")?;
                    if tag & 0x0f == OP_READ {
                        Op::Read { obj, page, nr }
                    } else {
                        Op::Write { obj, page, nr }
                    }
                }
                OP_FSYNC => {
                    self.flags_ok(tag, F_SAME, at)?;
                    Op::Fsync {
                        obj: self.obj(tag, at)?,
                    }
                }
                OP_ADVISE => {
                    self.flags_ok(tag, F_SAME, at)?;
                    let obj = self.obj(tag, at)?;
                    let hat = self.inp.offset();
                    let hint = match self.inp.byte("a hint")? {
                        0 => Hint::Normal,
                        1 => Hint::Random,
                        2 => Hint::Sequential,
                        h => return Err(self.inp.err(hat, format!("unknown hint {h}"))),
                    };
                    Op::Advise { obj, hint }
                }
                OP_THINK => {
                    self.flags_ok(tag, 0, at)?;
                    Op::Think {
                        ns: self.inp.u32("a think time")?,
                    }
                }
                OP_END => {
                    self.flags_ok(tag, 0, at)?;
                    Op::OpEnd
                }
                OP_PHASE => {
                    self.flags_ok(tag, 0, at)?;
                    let v = self.inp.varint("a phase index")?;
                    let idx = u16::try_from(v)
                        .map_err(|_| self.inp.err(at, format!("phase index {v} above 65535")))?;
                    Op::Phase { idx }
                }
                OP_TASK => {
                    self.flags_ok(tag, 0, at)?;
                    let t = self.inp.u32("a task index")?;
                    if t as usize >= self.header.tasks.len() {
                        return Err(self.inp.err(
                            at,
                            format!(
                                "task {t} is not declared ({} tasks)",
                                self.header.tasks.len()
                            ),
                        ));
                    }
                    self.task = t;
                    continue;
                }
                OP_EOT => {
                    self.flags_ok(tag, 0, at)?;
                    let n = self.inp.varint("the event count")?;
                    if n != self.events {
                        return Err(self.inp.err(
                            at,
                            format!(
                                "the end record counts {n} events but {} were read",
                                self.events
                            ),
                        ));
                    }
                    let after = self.inp.offset();
                    if self.inp.byte_opt()?.is_some() {
                        return Err(self.inp.err(after, "bytes after the end record"));
                    }
                    self.done = true;
                    return Ok(None);
                }
                other => {
                    return Err(self.inp.err(at, format!("unknown opcode {other}")));
                }
            };
            if check_op(&self.header, &op).is_err() {
                return Err(self.bad_op(&op, at));
            }
            self.events += 1;
            return Ok(Some(Record {
                task: self.task,
                op,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{arbitrary_trace, read_all};

    fn encode(h: &Header, recs: &[Record], level: Option<i32>) -> Vec<u8> {
        let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut w = Box::new(
            BinaryWriter::new(Box::new(crate::testutil::Shared(out.clone())), h, level).unwrap(),
        );
        for r in recs {
            w.write_record(r).unwrap();
        }
        w.finish().unwrap();
        let v = out.lock().unwrap().clone();
        v
    }

    fn decode(bytes: Vec<u8>) -> Result<(Header, Vec<Record>), TraceError> {
        let mut r = BinaryReader::new(Box::new(std::io::Cursor::new(bytes)), "t.rft")?;
        let recs = read_all(&mut r)?;
        Ok((r.header().clone(), recs))
    }

    fn text_of(h: &Header, recs: &[Record]) -> Vec<u8> {
        let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let shared = Box::new(crate::testutil::Shared(out.clone()));
        let mut w = Box::new(crate::text::TextWriter::new(shared, h).unwrap());
        for r in recs {
            w.write_record(r).unwrap();
        }
        w.finish().unwrap();
        let v = out.lock().unwrap().clone();
        v
    }

    /// Property: text -> binary -> text gives the same text, and binary -> text -> binary
    /// the same bytes, for arbitrary traces (every opcode and flag, several tasks, objects of
    /// 1 to 2^32 pages).
    #[test]
    fn text_and_binary_convert_losslessly_both_ways() {
        for seed in 0..300 {
            let (h, recs) = arbitrary_trace(seed);
            let text = text_of(&h, &recs);
            let mut tr =
                crate::text::TextReader::new(Box::new(std::io::Cursor::new(text.clone())), "t.txt")
                    .unwrap();
            let trecs = read_all(&mut tr).unwrap();
            let bin = encode(tr.header(), &trecs, Some(1));
            let (h2, recs2) = decode(bin.clone()).unwrap();
            assert_eq!(text_of(&h2, &recs2), text, "seed {seed}");
            let again = decode(encode(&h2, &recs2, Some(1))).unwrap();
            assert_eq!(encode(&again.0, &again.1, Some(1)), bin, "seed {seed}");
        }
    }

    /// Traces much longer than the writer's buffer (so it is flushed mid-record stream many
    /// times) with far-apart pages (5-byte deltas) and task switches read back exactly.
    #[test]
    fn long_traces_cross_the_buffer_intact() {
        let h = Header {
            tasks: vec!["a".into(), "b".into()],
            objects: vec![Object {
                name: "heap".into(),
                kind: Kind::Anon,
                pages: 1 << 32,
                exists: false,
            }],
        };
        let mut m = crate::testutil::Mix(99);
        let recs: Vec<Record> = (0..60_000u32)
            .map(|i| Record {
                task: u32::from(m.below(7) == 0),
                op: if i % 3 == 2 {
                    Op::OpEnd
                } else {
                    Op::Touch {
                        obj: 0,
                        page: m.below(1 << 32) as u32,
                        write: i % 2 == 0,
                    }
                },
            })
            .collect();
        for level in [None, Some(1)] {
            let bytes = encode(&h, &recs, level);
            if level.is_none() {
                assert!(bytes.len() > 4 * BUF, "{} bytes", bytes.len());
            }
            let (h2, recs2) = decode(bytes).unwrap();
            assert_eq!((h2, recs2), (h.clone(), recs.clone()));
        }
    }

    #[test]
    fn round_trip_is_lossless_compressed_and_raw() {
        for seed in 0..200 {
            let (h, recs) = arbitrary_trace(seed);
            for level in [None, Some(1), Some(3)] {
                let (h2, recs2) = decode(encode(&h, &recs, level)).unwrap();
                assert_eq!(h2, h, "seed {seed}");
                assert_eq!(recs2, recs, "seed {seed} level {level:?}");
            }
        }
    }

    #[test]
    fn truncation_anywhere_is_an_error() {
        let (h, recs) = arbitrary_trace(7);
        for level in [None, Some(3)] {
            let bytes = encode(&h, &recs, level);
            for cut in (0..bytes.len()).step_by(bytes.len() / 97 + 1) {
                let r = decode(bytes[..cut].to_vec());
                assert!(
                    r.is_err(),
                    "cut at {cut} of {} (level {level:?})",
                    bytes.len()
                );
            }
            assert!(decode(bytes).is_ok());
        }
    }

    #[test]
    fn positioned_errors() {
        let h = Header {
            tasks: vec!["a".into()],
            objects: vec![Object {
                name: "heap".into(),
                kind: Kind::Anon,
                pages: 10,
                exists: false,
            }],
        };
        let rec = |page| Record {
            task: 0,
            op: Op::Touch {
                obj: 0,
                page,
                write: false,
            },
        };
        // Page 12 of a 10-page object: the record at body offset 11 (header 11 bytes:
        // 1 + 2 task, 1 + 5 name + kind + size + exists... computed below).
        let bytes = encode(&h, &[rec(3), rec(12)], None);
        let e = decode(bytes).unwrap_err();
        assert_eq!(e.msg, "page 12 is outside object `heap` (10 pages)");
        // Body: ntasks(1) "a"(2) nobj(1) "heap"(5) kind(1) pages(1) exists(1) = 12 bytes,
        // then touch #1 at 12 (tag, obj, delta = 3 bytes), touch #2 at 15.
        assert_eq!(e.pos, Pos::Byte(15));
        assert_eq!(
            e.to_string(),
            "t.rft: byte 15: page 12 is outside object `heap` (10 pages)"
        );
        // An unknown opcode.
        let mut bytes = encode(&h, &[rec(3)], None);
        bytes[12 + 12] = 0x09;
        let e = decode(bytes).unwrap_err();
        assert_eq!((e.pos, e.msg.as_str()), (Pos::Byte(12), "unknown opcode 9"));
        // Wrong event count in the end record.
        let mut bytes = encode(&h, &[rec(3)], None);
        let n = bytes.len();
        bytes[n - 1] = 5;
        let e = decode(bytes).unwrap_err();
        assert!(
            e.msg.starts_with("the end record counts 5 events but 1"),
            "{e}"
        );
        // Bad magic and version.
        let e = decode(b"RFTRACX\0\x01\x00\x01\x00".to_vec()).unwrap_err();
        assert_eq!(e.pos, Pos::Byte(0));
        let e = decode(b"RFTRACE\0\x02\x00\x01\x00".to_vec()).unwrap_err();
        assert!(e.msg.contains("version 2"), "{e}");
    }

    #[test]
    fn deltas_and_fusing_keep_records_small() {
        let h = Header {
            tasks: vec!["a".into()],
            objects: vec![Object {
                name: "heap".into(),
                kind: Kind::Anon,
                pages: 1 << 20,
                exists: false,
            }],
        };
        let mut recs = Vec::new();
        for p in 0..10_000u32 {
            recs.push(Record {
                task: 0,
                op: Op::Touch {
                    obj: 0,
                    page: 1000 + p,
                    write: p % 2 == 0,
                },
            });
            recs.push(Record {
                task: 0,
                op: Op::OpEnd,
            });
        }
        let raw = encode(&h, &recs, None);
        // Two bytes per touch + end pair (tag with same-object and end flags, delta 1).
        assert!(raw.len() < 12 + 20 + 2 * 10_000 + 10, "{}", raw.len());
        let z = encode(&h, &recs, Some(3));
        assert!(z.len() < 1000, "{}", z.len());
        assert_eq!(decode(z).unwrap().1, recs);
    }
}
