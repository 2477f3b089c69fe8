//! Opening a trace file in any supported format, named or detected.
//!
//! Detection (`format = "auto"`) looks at the first bytes: `RFTRACE\0` is the binary form;
//! a zstd frame is decompressed and looked at again (a compressed text trace or lackey log);
//! a first meaningful line `refault-trace ...` is the text form; valgrind's `==PID==` banner
//! or lackey's ` L`/` S`/` M`/`I ` records are lackey; a name ending in `.oracleGeneral`
//! (optionally `.bin`, `.zst`) is libCacheSim's oracleGeneral; a zlib header, the
//! `damon_recfmt_ver` magic, `damon:damon_aggregated:` events or a JSON list of records with
//! `snapshots` is a DAMON recording; a `# PID, TID, IP, ADDR` header or `mem-loads` /
//! `mem-stores` events are perf memory samples. CSV block traces have no signature and are
//! always named (`format = "csv"`, with their column spec).

use std::fs::File;
use std::io::{Cursor, Read};
use std::path::Path;

use crate::binary::{BinaryReader, MAGIC};
use crate::csv::{CsvReader, CsvSpec};
use crate::damon::DamonReader;
use crate::lackey::LackeyReader;
use crate::oracle::OracleReader;
use crate::perfmem::PerfMemReader;
use crate::text::TextReader;
use crate::{Header, Pos, Record, RecordRead, TraceError};

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// A trace format (`format = ...` in scenarios, `--from` of `refault trace convert`).
#[derive(Clone, Debug, PartialEq)]
pub enum Format {
    /// Detect (see the module doc).
    Auto,
    /// refault binary form.
    Binary,
    /// refault text form (optionally zstd-compressed).
    Text,
    /// valgrind lackey output.
    Lackey,
    /// libCacheSim oracleGeneral (optionally zstd-compressed).
    OracleGeneral,
    /// CSV block trace.
    Csv(CsvSpec),
    /// DAMON recording (`damo record`, any of its forms).
    Damon,
    /// perf memory samples (`perf script`, `perf mem report -D`).
    PerfMem,
}

impl Format {
    /// Parses a format name; `csv` takes its columns from `csv_spec` (see [`CsvSpec::parse`]).
    pub fn parse(name: &str, csv_spec: Option<&str>) -> Result<Format, String> {
        Ok(match name {
            "auto" => Format::Auto,
            "binary" | "refault" => Format::Binary,
            "text" => Format::Text,
            "lackey" => Format::Lackey,
            "oracle-general" | "oracleGeneral" => Format::OracleGeneral,
            "csv" => Format::Csv(CsvSpec::parse(csv_spec.unwrap_or(""))?),
            "damon" | "damo" => Format::Damon,
            "perf-mem" | "perf" => Format::PerfMem,
            other => {
                return Err(format!(
                "unknown trace format `{other}` (auto, binary, text, lackey, oracle-general, csv, damon, perf-mem)"
            ))
            }
        })
    }
}

/// A trace being read, whatever its format. One match per record, no virtual call.
pub enum Reader {
    Binary(Box<BinaryReader>),
    Text(Box<TextReader>),
    Lackey(Box<LackeyReader>),
    Oracle(Box<OracleReader>),
    Csv(Box<CsvReader>),
    Damon(Box<DamonReader>),
    PerfMem(Box<PerfMemReader>),
}

impl RecordRead for Reader {
    fn header(&self) -> &Header {
        match self {
            Reader::Binary(r) => r.header(),
            Reader::Text(r) => r.header(),
            Reader::Lackey(r) => r.header(),
            Reader::Oracle(r) => r.header(),
            Reader::Csv(r) => r.header(),
            Reader::Damon(r) => r.header(),
            Reader::PerfMem(r) => r.header(),
        }
    }

    #[inline]
    fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        match self {
            Reader::Binary(r) => r.next_record(),
            Reader::Text(r) => r.next_record(),
            Reader::Lackey(r) => r.next_record(),
            Reader::Oracle(r) => r.next_record(),
            Reader::Csv(r) => r.next_record(),
            Reader::Damon(r) => r.next_record(),
            Reader::PerfMem(r) => r.next_record(),
        }
    }
}

/// Opens `path` (a plain file). Readers of foreign formats that need two passes reopen it.
pub fn open(path: &Path, format: &Format) -> Result<Reader, TraceError> {
    let origin = path.display().to_string();
    let file = || -> Result<Box<dyn Read + Send>, TraceError> {
        let f = File::open(path)
            .map_err(|e| TraceError::new(&origin, Pos::None, format!("cannot open: {e}")))?;
        Ok(Box::new(f))
    };
    let opener =
        |p: &Path| -> std::io::Result<Box<dyn Read + Send>> { Ok(Box::new(File::open(p)?)) };
    open_with(&origin, file()?, format, &|| opener(path))
}

/// [`open`] over any byte stream; `reopen` gives the stream again from its start (for
/// two-pass readers).
pub fn open_with(
    origin: &str,
    src: Box<dyn Read + Send>,
    format: &Format,
    reopen: &dyn Fn() -> std::io::Result<Box<dyn Read + Send>>,
) -> Result<Reader, TraceError> {
    let reopen_err =
        |e: std::io::Error| TraceError::new(origin, Pos::None, format!("cannot reopen: {e}"));
    let reopen_plain = || -> Result<Box<dyn Read + Send>, TraceError> {
        let mut r = reopen().map_err(reopen_err)?;
        let (prefix, rest) = sniff(&mut r, origin)?;
        maybe_unzstd(prefix, rest, origin).map(|(_, s)| s)
    };
    let fmt = match format {
        Format::Auto => None,
        f => Some(f.clone()),
    };
    let mut src = src;
    let (prefix, rest) = sniff(&mut src, origin)?;
    if prefix.starts_with(MAGIC) || fmt == Some(Format::Binary) {
        return Ok(Reader::Binary(Box::new(BinaryReader::new(
            chain(prefix, rest),
            origin,
        )?)));
    }
    let (prefix, body) = maybe_unzstd(prefix, rest, origin)?;
    let fmt = match fmt {
        Some(f) => f,
        None => detect(&prefix, origin)?,
    };
    Ok(match fmt {
        Format::Text => Reader::Text(Box::new(TextReader::new(body, origin)?)),
        Format::Lackey => Reader::Lackey(Box::new(LackeyReader::new(body, origin, &reopen_plain)?)),
        Format::OracleGeneral => {
            Reader::Oracle(Box::new(OracleReader::new(body, origin, &reopen_plain)?))
        }
        Format::Csv(spec) => {
            Reader::Csv(Box::new(CsvReader::new(body, origin, spec, &reopen_plain)?))
        }
        Format::Damon => Reader::Damon(Box::new(DamonReader::new(body, origin)?)),
        Format::PerfMem => {
            Reader::PerfMem(Box::new(PerfMemReader::new(body, origin, &reopen_plain)?))
        }
        Format::Auto | Format::Binary => unreachable!(),
    })
}

fn chain(prefix: Vec<u8>, rest: Box<dyn Read + Send>) -> Box<dyn Read + Send> {
    Box::new(Cursor::new(prefix).chain(rest))
}

/// Reads up to 4 KiB of `src` without losing them: (prefix, the rest).
fn sniff(
    src: &mut Box<dyn Read + Send>,
    origin: &str,
) -> Result<(Vec<u8>, Box<dyn Read + Send>), TraceError> {
    let mut prefix = vec![0u8; 4096];
    let mut got = 0;
    while got < prefix.len() {
        match src.read(&mut prefix[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(TraceError::new(
                    origin,
                    Pos::None,
                    format!("cannot read: {e}"),
                ))
            }
        }
    }
    prefix.truncate(got);
    let rest = std::mem::replace(src, Box::new(std::io::empty()));
    Ok((prefix, rest))
}

/// If the stream is a zstd frame, the decompressed stream (and its own prefix).
fn maybe_unzstd(
    prefix: Vec<u8>,
    rest: Box<dyn Read + Send>,
    origin: &str,
) -> Result<(Vec<u8>, Box<dyn Read + Send>), TraceError> {
    if !prefix.starts_with(&ZSTD_MAGIC) {
        return Ok((prefix.clone(), chain(prefix, rest)));
    }
    let dec = zstd::stream::read::Decoder::new(chain(prefix, rest))
        .map_err(|e| TraceError::new(origin, Pos::None, format!("cannot start zstd: {e}")))?;
    let mut body: Box<dyn Read + Send> = Box::new(dec);
    let (p, r) = sniff(&mut body, origin)?;
    Ok((p.clone(), chain(p, r)))
}

fn detect(prefix: &[u8], origin: &str) -> Result<Format, TraceError> {
    let lower = origin.to_ascii_lowercase();
    let stem = lower.trim_end_matches(".zst").trim_end_matches(".bin");
    if stem.ends_with(".oraclegeneral") {
        return Ok(Format::OracleGeneral);
    }
    if crate::damon::sniff(prefix) {
        return Ok(Format::Damon);
    }
    if crate::perfmem::sniff(prefix) {
        return Ok(Format::PerfMem);
    }
    let text = String::from_utf8_lossy(prefix);
    for line in text.lines() {
        let l = line.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        if l.starts_with("refault-trace") {
            return Ok(Format::Text);
        }
        if line.starts_with("==")
            || line.starts_with("I  ")
            || line.starts_with(" L ")
            || line.starts_with(" S ")
            || line.starts_with(" M ")
        {
            return Ok(Format::Lackey);
        }
        break;
    }
    Err(TraceError::new(
        origin,
        Pos::None,
        "cannot tell the trace format from its first bytes; name it (binary, text, lackey, oracle-general, csv, damon, perf-mem)",
    ))
}
