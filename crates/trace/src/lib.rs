//! refault-trace: recorded workloads. refault's own trace format (a text form people write and
//! read, a compact zstd binary form for long traces) and readers of foreign formats, all
//! turned into one stream of [`Record`]s: the same calls the generators of refault-workload
//! produce (`Op` there mirrors [`Op`] here one to one).
//!
//! | module | what |
//! |---|---|
//! | [`text`] | the line-oriented text form: reader and writer |
//! | [`binary`] | the binary form: magic + version header, zstd body of varint/delta records |
//! | [`open`] | [`open()`]: a file in any supported format (detected or named) as a [`Reader`] |
//! | [`info`] | `refault trace info`: objects, events, footprint, reuse distances |
//! | [`lackey`] | valgrind `--tool=lackey --trace-mem=yes` output |
//! | [`oracle`] | libCacheSim's oracleGeneral binary block traces |
//! | [`csv`] | CSV block traces with configurable columns |
//! | [`damon`] | DAMON recordings (`damo record`: JSON, compressed JSON, perf script, binary) |
//! | [`perfmem`] | perf memory samples (`perf script`, `perf mem report -D`) |
//! | [`regions`] | region access patterns replayed as page touches (DAMON, perf mem) |
//!
//! The format itself is specified in `docs/traces.md`.
//!
//! # Streaming
//! Every reader holds a fixed-size input buffer and the trace's declarations (tasks and
//! objects); nothing grows with the number of events, so a trace of billions of events replays
//! in bounded memory. Readers that must know a trace's extent before its first event (lackey,
//! block traces: which objects to declare) read the file twice.
//!
//! # Errors
//! Every error is a [`TraceError`]: the file, the position (line for text, byte offset of
//! the decompressed body for binary) and what is wrong. A truncated or corrupt compressed body
//! is an error, never a silently short replay: a binary trace ends with an `end` record that
//! carries the number of events, checked by the reader.

pub mod binary;
pub mod csv;
pub mod damon;
mod error;
mod inflate;
pub mod info;
pub mod lackey;
pub mod open;
pub mod oracle;
pub mod perfmem;
mod regions;
pub mod text;

pub use error::{Pos, TraceError};
pub use open::{open, Format, Reader};

/// Kind of a declared object (the scenario's `ObjectKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Private anonymous memory.
    Anon,
    /// Shared anonymous memory (tmpfs, SysV shm).
    Shmem,
    /// A regular file.
    File,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Anon => "anon",
            Kind::Shmem => "shmem",
            Kind::File => "file",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "anon" => Some(Kind::Anon),
            "shmem" => Some(Kind::Shmem),
            "file" => Some(Kind::File),
            _ => None,
        }
    }
}

/// An object the trace's events access: an anonymous region, a shmem region or a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    pub name: String,
    pub kind: Kind,
    /// Size in 4 KiB pages: every page an event names is below it.
    pub pages: u64,
    /// Files only: the file exists with this size when the replay starts.
    pub exists: bool,
}

/// The declarations at the head of a trace: who issues events and what they access.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// Task names; `Record::task` indexes this list.
    pub tasks: Vec<String>,
    /// Objects; `obj` in an [`Op`] indexes this list.
    pub objects: Vec<Object>,
}

/// madvise()/posix_fadvise() hint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hint {
    Normal,
    Random,
    Sequential,
}

impl Hint {
    pub fn name(self) -> &'static str {
        match self {
            Hint::Normal => "normal",
            Hint::Random => "random",
            Hint::Sequential => "sequential",
        }
    }

    pub fn parse(s: &str) -> Option<Hint> {
        match s {
            "normal" => Some(Hint::Normal),
            "random" => Some(Hint::Random),
            "sequential" => Some(Hint::Sequential),
            _ => None,
        }
    }
}

/// One call of a task (refault-workload's `Op`, with object indices into [`Header::objects`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Load (store if `write`) to page `page` of `obj` through its mapping.
    Touch { obj: u32, page: u32, write: bool },
    /// pread() of pages [page, page + nr) of file `obj`.
    Read { obj: u32, page: u32, nr: u32 },
    /// pwrite() of pages [page, page + nr) of file `obj`.
    Write { obj: u32, page: u32, nr: u32 },
    /// fsync() of file `obj`.
    Fsync { obj: u32 },
    /// Access hint for `obj` from now on.
    Advise { obj: u32, hint: Hint },
    /// CPU time in user space.
    Think { ns: u32 },
    /// End of one workload operation (a request, a transaction).
    OpEnd,
    /// The task enters phase `idx`.
    Phase { idx: u16 },
}

/// One event: task `task` (index into [`Header::tasks`]) issues `op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    pub task: u32,
    pub op: Op,
}

/// Checks `op` against the declarations: object in range and of a kind the call applies
/// to, pages inside the object. `Err` is the message of a positioned error.
pub fn check_op(h: &Header, op: &Op) -> Result<(), String> {
    let obj_of = |obj: u32| -> Result<&Object, String> {
        h.objects
            .get(obj as usize)
            .ok_or_else(|| format!("object {obj} is not declared ({} objects)", h.objects.len()))
    };
    match *op {
        Op::Touch { obj, page, .. } => {
            let o = obj_of(obj)?;
            if u64::from(page) >= o.pages {
                return Err(format!(
                    "page {page} is outside object `{}` ({} pages)",
                    o.name, o.pages
                ));
            }
        }
        Op::Read { obj, page, nr } | Op::Write { obj, page, nr } => {
            let o = obj_of(obj)?;
            if o.kind != Kind::File {
                return Err(format!(
                    "read/write of object `{}`, which is {}, not a file",
                    o.name,
                    o.kind.name()
                ));
            }
            if nr == 0 {
                return Err("read/write of 0 pages".into());
            }
            if u64::from(page) + u64::from(nr) > o.pages {
                return Err(format!(
                    "pages [{page}, {}) are outside file `{}` ({} pages)",
                    u64::from(page) + u64::from(nr),
                    o.name,
                    o.pages
                ));
            }
        }
        Op::Fsync { obj } => {
            let o = obj_of(obj)?;
            if o.kind != Kind::File {
                return Err(format!("fsync of `{}`, which is not a file", o.name));
            }
        }
        Op::Advise { obj, .. } => {
            obj_of(obj)?;
        }
        Op::Think { .. } | Op::OpEnd | Op::Phase { .. } => {}
    }
    Ok(())
}

/// Checks the declarations themselves: names unique and without whitespace, sizes within
/// the u32 page numbers events carry.
pub fn check_header(h: &Header) -> Result<(), String> {
    let bad_name = |n: &str| n.is_empty() || n.chars().any(|c| c.is_whitespace() || c == '#');
    for (i, t) in h.tasks.iter().enumerate() {
        if bad_name(t) {
            return Err(format!("task name {t:?} is empty or has whitespace or '#'"));
        }
        if h.tasks[..i].contains(t) {
            return Err(format!("task `{t}` is declared twice"));
        }
    }
    for (i, o) in h.objects.iter().enumerate() {
        if bad_name(&o.name) {
            return Err(format!(
                "object name {:?} is empty or has whitespace or '#'",
                o.name
            ));
        }
        if h.objects[..i].iter().any(|p| p.name == o.name) {
            return Err(format!("object `{}` is declared twice", o.name));
        }
        if o.pages == 0 || o.pages > 1 << 32 {
            return Err(format!(
                "object `{}` has {} pages: must be 1 to 2^32",
                o.name, o.pages
            ));
        }
        if o.exists && o.kind != Kind::File {
            return Err(format!("object `{}`: only files can `exist`", o.name));
        }
    }
    if h.tasks.len() > u32::MAX as usize || h.objects.len() > u32::MAX as usize {
        return Err("too many tasks or objects".into());
    }
    Ok(())
}

/// A stream of records after a header: every reader of every format.
pub trait RecordRead {
    fn header(&self) -> &Header;
    /// The next record, `Ok(None)` at the (verified) end of the trace.
    fn next_record(&mut self) -> Result<Option<Record>, TraceError>;
}

/// A sink for records: the writers of both forms.
pub trait RecordWrite {
    fn write_record(&mut self, r: &Record) -> std::io::Result<()>;
    /// Writes the end of the trace and flushes.
    fn finish(self: Box<Self>) -> std::io::Result<()>;
}

/// Either writer, without a virtual call per record.
pub enum Writer {
    Binary(binary::BinaryWriter),
    Text(text::TextWriter),
}

impl RecordWrite for Writer {
    #[inline]
    fn write_record(&mut self, r: &Record) -> std::io::Result<()> {
        match self {
            Writer::Binary(w) => w.write_record(r),
            Writer::Text(w) => w.write_record(r),
        }
    }

    fn finish(self: Box<Self>) -> std::io::Result<()> {
        match *self {
            Writer::Binary(w) => Box::new(w).finish(),
            Writer::Text(w) => Box::new(w).finish(),
        }
    }
}

/// Copies every record of `r` into `w` (which was created with `r`'s header); returns the
/// number of records.
pub fn copy<R: RecordRead + ?Sized, W: RecordWrite>(
    r: &mut R,
    mut w: W,
) -> Result<u64, TraceError> {
    let mut n = 0u64;
    let io = |e: std::io::Error| TraceError::new("output", Pos::None, e.to_string());
    while let Some(rec) = r.next_record()? {
        w.write_record(&rec).map_err(io)?;
        n += 1;
    }
    Box::new(w).finish().map_err(io)?;
    Ok(n)
}

#[cfg(test)]
mod fuzz;
#[cfg(test)]
pub(crate) mod testutil;
