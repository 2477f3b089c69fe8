//! DAMON recordings, as `damo record` writes them.
//!
//! | form | how damo writes it | recognized by |
//! |---|---|---|
//! | JSON | `--output_type json`: a list of records (one per monitoring target) | first byte `[` or `{` |
//! | compressed JSON | `--output_type json_compressed` (damo's default): the JSON through `zlib.compress()` | a zlib header |
//! | perf script | `--output_type perf_script`, or `perf script` of a `perf record -e damon:damon_aggregated` | `damon:damon_aggregated:` lines |
//! | record (binary) | damo before 2023: `damon_recfmt_ver`, version, then snapshots | the `damon_recfmt_ver` magic |
//!
//! A record is one monitoring target: a list of snapshots (one per aggregation interval),
//! each a list of regions `[start, end)` of addresses with `nr_accesses` (in how many of the
//! aggregation interval's sampling intervals DAMON saw the region's sampled page accessed)
//! and `age` (for how many aggregation intervals the region's access rate has not changed).
//!
//! # Replay
//! - Each target is one task, `target-<id>`. Its address ranges (every region of every
//!   snapshot, in 4 KiB pages) are grouped into anonymous objects: sorted, a gap of more than
//!   16 MiB starts a new object, named `<task>-<hex start address>`. A virtual-address
//!   recording gives one object per cluster of mappings (heap, mmap area, stack); a
//!   physical-address recording, one object per range of RAM.
//! - Each snapshot is replayed by [`regions`](crate::regions): `max = aggr / sample`
//!   slices (from the record's intervals; 20, DAMON's default 100 ms / 5 ms, when the file
//!   does not carry them, raised to the largest `nr_accesses` if one is larger), each page of
//!   a region touched (a load) with probability `nr_accesses / max` per slice, `think` of the
//!   slice's recorded duration after each slice, `end` after each snapshot.
//! - Before its first snapshot each target writes every page of that snapshot's regions
//!   once, oldest `age` first: the pages DAMON saw accessed most recently start nearest the
//!   head of the LRU lists, and the memory exists (dirty anonymous pages) as it did in the
//!   recorded program.
//! - Snapshots of several targets are interleaved by snapshot number.
//!
//! # What DAMON cannot see, what the conversion assumes
//! - DAMON samples one page per region per sampling interval and checks its accessed bit:
//!   it does not see reads from writes (the replay loads), nor page cache read through
//!   `read()` (no page-table access) in virtual-address mode.
//! - A region's pages are assumed equally hot (DAMON's own assumption); regions include
//!   address ranges that were never populated, which the prologue populates.
//! - The whole recording is held in memory (about 40 bytes per region record); the
//!   generated touches are streamed.

use std::io::Read;

use serde_json::Value;

use crate::inflate::zlib_decompress;
use crate::regions::{group, PlayRegion, Player};
use crate::{Header, Kind, Object, Pos, Record, RecordRead, TraceError};

/// Gap (in pages) that separates two objects: 16 MiB.
const GAP: u64 = 4096;
/// DAMON's default sampling and aggregation intervals give at most 20 accesses.
const DEFAULT_MAX: u32 = 20;
/// Slices per snapshot are capped (an absurd interval ratio would make empty slices).
const MAX_SLICES: u32 = 10_000;
/// Decompressed size limit (4 GiB).
const INFLATE_LIMIT: usize = 1 << 32;
/// Seed of the page draws: fixed, so a recording always converts to the same trace.
const SEED: u64 = 0x4441_4d4f_4e00_0001;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub end: u64,
    pub nr: u32,
    pub age: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub duration_ns: u64,
    /// Accesses of a region accessed in every sampling interval (0: the recording's).
    pub max: u32,
    pub regions: Vec<Region>,
}

/// One monitoring target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub id: String,
    pub snapshots: Vec<Snapshot>,
}

/// A parsed recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recording {
    /// aggr / sample, if the file says.
    pub max: Option<u32>,
    pub targets: Vec<Target>,
}

fn err(origin: &str, pos: Pos, m: impl Into<String>) -> TraceError {
    TraceError::new(origin, pos, m)
}

/// Parses any form of a damo recording (see the module doc).
pub fn parse(bytes: &[u8], origin: &str) -> Result<Recording, TraceError> {
    if is_zlib(bytes) {
        let json = zlib_decompress(bytes, INFLATE_LIMIT).map_err(|e| {
            err(
                origin,
                Pos::Byte(e.at),
                format!("compressed damo recording: {}", e.msg),
            )
        })?;
        return parse_json(&json, origin);
    }
    if bytes.starts_with(b"damon_recfmt_ver") {
        return parse_binary(bytes, origin);
    }
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') | Some(b'{') => parse_json(bytes, origin),
        _ => {
            let head = &bytes[..bytes.len().min(1 << 16)];
            if head
                .windows(AGGREGATED.len())
                .any(|w| w == AGGREGATED.as_bytes())
            {
                parse_perf_script(bytes, origin)
            } else {
                // damo's oldest record files have no magic (version 0).
                parse_binary(bytes, origin)
            }
        }
    }
}

const AGGREGATED: &str = "damon:damon_aggregated:";

/// A zlib header as Python's `zlib.compress()` writes it (32 KiB window, any level).
fn is_zlib(b: &[u8]) -> bool {
    b.len() >= 2 && b[0] == 0x78 && matches!(b[1], 0x01 | 0x5e | 0x9c | 0xda)
}

/// True if `prefix` looks like a damo recording (for format detection).
pub fn sniff(prefix: &[u8]) -> bool {
    if is_zlib(prefix) {
        return true;
    }
    if prefix.starts_with(b"damon_recfmt_ver") {
        return true;
    }
    if prefix
        .windows(AGGREGATED.len())
        .any(|w| w == AGGREGATED.as_bytes())
    {
        return true;
    }
    // JSON: a list of records with snapshots, or damo's versioned object.
    let text = String::from_utf8_lossy(prefix);
    let t = text.trim_start();
    (t.starts_with('[') || t.starts_with('{'))
        && (t.contains("\"snapshots\"") || t.contains("\"damo_records\""))
}

// ---------------------------------------------------------------------------------------
// JSON

fn parse_json(bytes: &[u8], origin: &str) -> Result<Recording, TraceError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| {
        let s = e.to_string();
        let what = s.split(" at line ").next().unwrap_or(&s).to_string();
        err(
            origin,
            Pos::Line(e.line() as u64),
            format!("not valid JSON (column {}): {what}", e.column()),
        )
    })?;
    let list = match &v {
        Value::Array(a) => a,
        Value::Object(o) => o
            .get("damo_records")
            .and_then(|d| d.get("record_list"))
            .or_else(|| o.get("record_list"))
            .and_then(Value::as_array)
            .ok_or_else(|| {
                err(
                    origin,
                    Pos::None,
                    "a JSON damo recording is a list of records (or damo_records.record_list)",
                )
            })?,
        _ => {
            return Err(err(
                origin,
                Pos::None,
                "a JSON damo recording is a list of records",
            ))
        }
    };
    let mut rec = Recording {
        max: None,
        targets: Vec::new(),
    };
    for (ri, r) in list.iter().enumerate() {
        let at = |m: String| err(origin, Pos::None, format!("record {ri}: {m}"));
        let id = match r.get("target_id") {
            None | Some(Value::Null) => ri.to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(x) => x.to_string(),
        };
        let mut aggr_us = None;
        if let Some(iv) = r.get("intervals").filter(|x| !x.is_null()) {
            let sample = num(iv.get("sample_us"))
                .ok_or_else(|| at("intervals.sample_us is not a number".into()))?;
            let aggr = num(iv.get("aggr_us"))
                .ok_or_else(|| at("intervals.aggr_us is not a number".into()))?;
            if sample <= 0.0 || aggr < sample {
                return Err(at(format!(
                    "intervals: sample_us = {sample}, aggr_us = {aggr}: need 0 < sample <= aggr"
                )));
            }
            let m = (aggr / sample).round().min(f64::from(MAX_SLICES)) as u32;
            rec.max = Some(rec.max.map_or(m, |x: u32| x.max(m)));
            aggr_us = Some(aggr);
        }
        let snaps = r
            .get("snapshots")
            .and_then(Value::as_array)
            .ok_or_else(|| at("no `snapshots` list".into()))?;
        let mut t = Target {
            id,
            snapshots: Vec::with_capacity(snaps.len()),
        };
        for (si, s) in snaps.iter().enumerate() {
            let at = |m: String| {
                err(
                    origin,
                    Pos::None,
                    format!("record {ri}, snapshot {si}: {m}"),
                )
            };
            let start = num(s.get("start_time"));
            let end = num(s.get("end_time"));
            let duration_ns = match (start, end) {
                (Some(a), Some(b)) if b >= a => (b - a) as u64,
                (Some(_), Some(_)) => return Err(at("end_time is before start_time".into())),
                _ => aggr_us.map_or(100_000_000, |a| (a * 1000.0) as u64),
            };
            let mut max = 0;
            if let Some(sample) = num(s.get("sample_interval_us")).filter(|&x| x > 0.0) {
                max = ((duration_ns as f64 / 1000.0) / sample)
                    .round()
                    .clamp(1.0, f64::from(MAX_SLICES)) as u32;
            }
            let regs = s
                .get("regions")
                .and_then(Value::as_array)
                .ok_or_else(|| at("no `regions` list".into()))?;
            let mut regions = Vec::with_capacity(regs.len());
            for (gi, g) in regs.iter().enumerate() {
                let at = |m: &str| {
                    err(
                        origin,
                        Pos::None,
                        format!("record {ri}, snapshot {si}, region {gi}: {m}"),
                    )
                };
                let start = int(g.get("start")).ok_or_else(|| at("start is not an address"))?;
                let end = int(g.get("end")).ok_or_else(|| at("end is not an address"))?;
                if end <= start {
                    return Err(at("end is not above start"));
                }
                let nr_acc = g.get("nr_accesses");
                let nr = match nr_acc.and_then(|n| num(n.get("samples"))) {
                    Some(x) => x,
                    None => {
                        let pct = nr_acc
                            .and_then(|n| num(n.get("percent")))
                            .ok_or_else(|| at("nr_accesses has neither samples nor percent"))?;
                        pct * f64::from(rec.max.unwrap_or(DEFAULT_MAX)) / 100.0
                    }
                };
                if !(0.0..=1e9).contains(&nr) {
                    return Err(at("nr_accesses is negative or absurd"));
                }
                let age_v = g.get("age");
                let age = match age_v.and_then(|a| num(a.get("aggr_intervals"))) {
                    Some(a) => a,
                    None => match (age_v.and_then(|a| num(a.get("usec"))), aggr_us) {
                        (Some(us), Some(aggr)) => us / aggr,
                        _ => 0.0,
                    },
                };
                regions.push(Region {
                    start,
                    end,
                    nr: nr.round() as u32,
                    age: age.clamp(0.0, f64::from(u32::MAX)) as u32,
                });
            }
            t.snapshots.push(Snapshot {
                duration_ns,
                max,
                regions,
            });
        }
        rec.targets.push(t);
    }
    Ok(rec)
}

/// A number, or a string of one (damo writes raw numbers as strings, maybe with commas).
fn num(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64().filter(|x| x.is_finite()),
        Value::String(s) => {
            let s: String = s.chars().filter(|&c| c != ',').collect();
            s.trim().parse::<f64>().ok().filter(|x| x.is_finite())
        }
        _ => None,
    }
}

/// An exact unsigned integer (addresses do not fit f64).
fn int(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => {
            let s: String = s.chars().filter(|&c| c != ',').collect();
            s.trim().parse::<u64>().ok()
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// perf script

/// Parses `perf script` output of `damon:damon_aggregated` (other events are skipped):
///
/// ```text
/// kdamond.0  4452 [000] 82877.315633: damon:damon_aggregated: target_id=... nr_regions=17 140731667070976-140731668037632: 0 3
/// ```
fn parse_perf_script(bytes: &[u8], origin: &str) -> Result<Recording, TraceError> {
    let mut rec = Recording {
        max: None,
        targets: Vec::new(),
    };
    // Per target: end time of its last snapshot, regions still expected in it.
    let mut state: Vec<(f64, u64)> = Vec::new();
    let mut any = false;
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let lineno = i as u64 + 1;
        let e = |m: &str| err(origin, Pos::Line(lineno), m.to_string());
        let line = std::str::from_utf8(line).map_err(|_| e("the line is not UTF-8"))?;
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some(k) = f.iter().position(|x| *x == AGGREGATED) else {
            continue;
        };
        if k == 0 || f.len() < k + 5 || f.len() > k + 6 {
            return Err(e(
                "expected `TIME: damon:damon_aggregated: target_id=ID nr_regions=N START-END: NR_ACCESSES [AGE]`",
            ));
        }
        let time: f64 = f[k - 1]
            .trim_end_matches(':')
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite())
            .ok_or_else(|| e("the timestamp is not a number"))?;
        let id = f[k + 1]
            .strip_prefix("target_id=")
            .ok_or_else(|| e("expected target_id=ID"))?;
        let nr_regions: u64 = f[k + 2]
            .strip_prefix("nr_regions=")
            .and_then(|x| x.parse().ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| e("expected nr_regions=N (N > 0)"))?;
        let (s, en) = f[k + 3]
            .strip_suffix(':')
            .and_then(|r| r.split_once('-'))
            .ok_or_else(|| e("expected START-END:"))?;
        let start: u64 = s
            .parse()
            .map_err(|_| e("the region start is not a number"))?;
        let end: u64 = en
            .parse()
            .map_err(|_| e("the region end is not a number"))?;
        let nr: i64 = f[k + 4]
            .parse()
            .map_err(|_| e("nr_accesses is not a number"))?;
        let age: i64 = match f.get(k + 5) {
            Some(a) => a.parse().map_err(|_| e("age is not a number"))?,
            None => 0,
        };
        // damo's fake snapshot (start = end = 0, -1 -1) carries only a time.
        if start == 0 && end == 0 && nr == -1 {
            continue;
        }
        if end <= start {
            return Err(e("the region's end is not above its start"));
        }
        if !(0..=1_000_000_000).contains(&nr) || age < 0 {
            return Err(e("nr_accesses or age is negative or absurd"));
        }
        any = true;
        let t = match rec.targets.iter().position(|t| t.id == id) {
            Some(t) => t,
            None => {
                rec.targets.push(Target {
                    id: id.to_string(),
                    snapshots: Vec::new(),
                });
                state.push((f64::NAN, 0));
                rec.targets.len() - 1
            }
        };
        let (last_end, left) = &mut state[t];
        let target = &mut rec.targets[t];
        if *left == 0 {
            if *last_end > time {
                return Err(e("the snapshots are not in time order"));
            }
            let duration_ns = if last_end.is_nan() {
                0 // set below from the next snapshot
            } else {
                ((time - *last_end) * 1e9).round() as u64
            };
            target.snapshots.push(Snapshot {
                duration_ns,
                max: 0,
                regions: Vec::new(),
            });
            *left = nr_regions;
            *last_end = time;
        } else if time != *last_end {
            return Err(e(
                "a snapshot ends before all its nr_regions regions (truncated file?)",
            ));
        }
        *left -= 1;
        target
            .snapshots
            .last_mut()
            .expect("pushed")
            .regions
            .push(Region {
                start,
                end,
                nr: nr as u32,
                age: age.min(i64::from(u32::MAX)) as u32,
            });
    }
    if !any {
        return Err(err(origin, Pos::None, "no damon:damon_aggregated records"));
    }
    if let Some(t) = state.iter().position(|s| s.1 != 0) {
        return Err(err(
            origin,
            Pos::None,
            format!(
                "target {}: the last snapshot has fewer regions than its nr_regions (truncated file?)",
                rec.targets[t].id
            ),
        ));
    }
    // The first snapshot's duration is unknown: the mean of the others (as damo does), or
    // the default aggregation interval.
    for t in &mut rec.targets {
        let n = t.snapshots.len() as u64;
        let d = if n > 1 {
            t.snapshots[1..].iter().map(|s| s.duration_ns).sum::<u64>() / (n - 1)
        } else {
            100_000_000
        };
        t.snapshots[0].duration_ns = d;
    }
    Ok(rec)
}

// ---------------------------------------------------------------------------------------
// record (binary)

/// Parses damo's old binary record format: optional `damon_recfmt_ver` + i32 version, then
/// per snapshot: i64 seconds, i64 nanoseconds (end time), u32 number of targets, per target:
/// its id (i32 in version 1, u64 otherwise), u32 number of regions, per region u64 start,
/// u64 end, u32 nr_accesses. Little-endian (the x86 machines it was written on).
fn parse_binary(bytes: &[u8], origin: &str) -> Result<Recording, TraceError> {
    struct Cur<'a> {
        bytes: &'a [u8],
        pos: usize,
        origin: &'a str,
    }
    impl<'a> Cur<'a> {
        fn take(&mut self, n: usize, what: &str) -> Result<(usize, &'a [u8]), TraceError> {
            if self.bytes.len() - self.pos < n {
                return Err(err(
                    self.origin,
                    Pos::Byte(self.pos as u64),
                    format!("the file ends in the middle of {what} (truncated file?)"),
                ));
            }
            let at = self.pos;
            self.pos += n;
            Ok((at, &self.bytes[at..at + n]))
        }
    }
    let mut c = Cur {
        bytes,
        pos: 0,
        origin,
    };
    let u32_ = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
    let u64_ = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    let mut version = 0;
    if bytes.starts_with(b"damon_recfmt_ver") {
        c.take(16, "the magic")?;
        let (at, v) = c.take(4, "the version")?;
        version = u32_(v);
        if !(1..=2).contains(&version) {
            return Err(err(
                origin,
                Pos::Byte(at as u64),
                format!("record format version {version} is not 1 or 2"),
            ));
        }
    }
    let mut rec = Recording {
        max: None,
        targets: Vec::new(),
    };
    let mut last_end: Vec<u64> = Vec::new();
    while c.pos < bytes.len() {
        let (at, t) = c.take(16, "a snapshot's time")?;
        let (sec, nsec) = (u64_(&t[..8]), u64_(&t[8..]));
        let end = sec
            .checked_mul(1_000_000_000)
            .and_then(|x| x.checked_add(nsec))
            .ok_or_else(|| err(origin, Pos::Byte(at as u64), "the time is out of range"))?;
        let (_, n) = c.take(4, "the number of targets")?;
        let ntargets = u32_(n);
        for _ in 0..ntargets {
            let (at, id) = if version == 1 {
                let (a, b) = c.take(4, "a target id")?;
                (
                    a,
                    i64::from(i32::from_le_bytes(b.try_into().expect("4"))).to_string(),
                )
            } else {
                let (a, b) = c.take(8, "a target id")?;
                (a, u64_(b).to_string())
            };
            let (_, n) = c.take(4, "the number of regions")?;
            let nregions = u32_(n) as usize;
            if nregions.saturating_mul(20) > bytes.len() - c.pos {
                return Err(err(
                    origin,
                    Pos::Byte(c.pos as u64),
                    format!(
                        "{nregions} regions do not fit in the rest of the file (truncated file?)"
                    ),
                ));
            }
            let t = match rec.targets.iter().position(|t| t.id == id) {
                Some(t) => t,
                None => {
                    rec.targets.push(Target {
                        id,
                        snapshots: Vec::new(),
                    });
                    last_end.push(u64::MAX);
                    rec.targets.len() - 1
                }
            };
            let duration_ns = match last_end[t] {
                u64::MAX => 0,
                prev if prev > end => {
                    return Err(err(
                        origin,
                        Pos::Byte(at as u64),
                        "the snapshots are not in time order",
                    ))
                }
                prev => end - prev,
            };
            last_end[t] = end;
            let mut regions = Vec::with_capacity(nregions);
            for _ in 0..nregions {
                let (at, r) = c.take(20, "a region")?;
                let (start, rend, nr) = (u64_(&r[..8]), u64_(&r[8..16]), u32_(&r[16..]));
                if rend <= start {
                    return Err(err(
                        origin,
                        Pos::Byte(at as u64),
                        "the region's end is not above its start",
                    ));
                }
                regions.push(Region {
                    start,
                    end: rend,
                    nr,
                    age: 0,
                });
            }
            rec.targets[t].snapshots.push(Snapshot {
                duration_ns,
                max: 0,
                regions,
            });
        }
    }
    if rec.targets.is_empty() {
        return Err(err(origin, Pos::None, "no snapshots in the record file"));
    }
    for t in &mut rec.targets {
        let n = t.snapshots.len() as u64;
        t.snapshots[0].duration_ns = if n > 1 {
            t.snapshots[1..].iter().map(|s| s.duration_ns).sum::<u64>() / (n - 1)
        } else {
            100_000_000
        };
    }
    Ok(rec)
}

/// Writes `rec` in the binary record format, version 2 (tests and sample making).
pub fn encode_binary(rec: &Recording) -> Vec<u8> {
    let mut v = b"damon_recfmt_ver".to_vec();
    v.extend_from_slice(&2u32.to_le_bytes());
    let n = rec
        .targets
        .iter()
        .map(|t| t.snapshots.len())
        .max()
        .unwrap_or(0);
    let mut time = vec![1_000_000_000u64; rec.targets.len()];
    for k in 0..n {
        for (ti, t) in rec.targets.iter().enumerate() {
            let Some(s) = t.snapshots.get(k) else {
                continue;
            };
            time[ti] += s.duration_ns;
            v.extend_from_slice(&(time[ti] / 1_000_000_000).to_le_bytes());
            v.extend_from_slice(&(time[ti] % 1_000_000_000).to_le_bytes());
            v.extend_from_slice(&1u32.to_le_bytes());
            v.extend_from_slice(&t.id.parse::<u64>().unwrap_or(ti as u64).to_le_bytes());
            v.extend_from_slice(&(s.regions.len() as u32).to_le_bytes());
            for r in &s.regions {
                v.extend_from_slice(&r.start.to_le_bytes());
                v.extend_from_slice(&r.end.to_le_bytes());
                v.extend_from_slice(&r.nr.to_le_bytes());
            }
        }
    }
    v
}

// ---------------------------------------------------------------------------------------
// Reader

struct TargetPlay {
    /// First page of each of the target's objects, ascending.
    starts: Vec<u64>,
    /// Index of its first object in the header.
    base: u32,
}

/// Reads a damo recording as refault records (see the module doc).
pub struct DamonReader {
    origin: String,
    header: Header,
    rec: Recording,
    max: u32,
    plays: Vec<TargetPlay>,
    /// Next (snapshot number, target) to play.
    k: usize,
    t: usize,
    nsnap: usize,
    player: Option<(u32, Player)>,
}

impl DamonReader {
    pub fn new(mut src: Box<dyn Read + Send>, origin: &str) -> Result<Self, TraceError> {
        let mut bytes = Vec::new();
        src.read_to_end(&mut bytes)
            .map_err(|e| err(origin, Pos::None, format!("cannot read: {e}")))?;
        let rec = parse(&bytes, origin)?;
        drop(bytes);
        Self::from_recording(rec, origin)
    }

    pub fn from_recording(rec: Recording, origin: &str) -> Result<Self, TraceError> {
        let observed = rec
            .targets
            .iter()
            .flat_map(|t| &t.snapshots)
            .flat_map(|s| &s.regions)
            .map(|r| r.nr)
            .max()
            .unwrap_or(0);
        let max = rec.max.unwrap_or(DEFAULT_MAX.max(observed.min(MAX_SLICES)));
        let mut header = Header::default();
        let mut plays = Vec::new();
        for t in &rec.targets {
            let task = format!("target-{}", t.id);
            let ranges: Vec<(u64, u64)> = t
                .snapshots
                .iter()
                .flat_map(|s| &s.regions)
                .map(|r| (r.start >> 12, (r.end - 1) >> 12))
                .collect();
            let objs = group(ranges, GAP);
            let base = header.objects.len() as u32;
            for &(s, pages) in &objs {
                header.objects.push(Object {
                    name: format!("{task}-{:x}", s << 12),
                    kind: Kind::Anon,
                    pages,
                    exists: false,
                });
            }
            header.tasks.push(task);
            plays.push(TargetPlay {
                starts: objs.iter().map(|o| o.0).collect(),
                base,
            });
        }
        if header.tasks.is_empty() {
            return Err(err(origin, Pos::None, "the recording has no targets"));
        }
        crate::check_header(&header).map_err(|m| err(origin, Pos::None, m))?;
        let nsnap = rec
            .targets
            .iter()
            .map(|t| t.snapshots.len())
            .max()
            .unwrap_or(0);
        Ok(DamonReader {
            origin: origin.to_string(),
            header,
            rec,
            max,
            plays,
            k: 0,
            t: 0,
            nsnap,
            player: None,
        })
    }

    /// The player of snapshot `k` of target `t`.
    fn player(&self, t: usize, k: usize) -> Player {
        let s = &self.rec.targets[t].snapshots[k];
        let p = &self.plays[t];
        let regions: Vec<PlayRegion> = s
            .regions
            .iter()
            .map(|r| {
                let (first, last) = (r.start >> 12, (r.end - 1) >> 12);
                let o = p.starts.partition_point(|&x| x <= first) - 1;
                PlayRegion {
                    obj: p.base + o as u32,
                    page: (first - p.starts[o]) as u32,
                    pages: (last - first + 1) as u32,
                    nr: r.nr,
                    store: 0,
                }
            })
            .collect();
        let prologue = if k == 0 {
            let mut order: Vec<u32> = (0..regions.len() as u32).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(s.regions[i as usize].age));
            order
        } else {
            Vec::new()
        };
        let max = if s.max > 0 { s.max } else { self.max };
        let key = SEED ^ (t as u64) << 40 ^ k as u64;
        Player::new(regions, prologue, max, key, s.duration_ns)
    }
}

impl RecordRead for DamonReader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        loop {
            if let Some((task, p)) = self.player.as_mut() {
                if let Some(op) = p.next_op() {
                    if cfg!(debug_assertions) {
                        if let Err(m) = crate::check_op(&self.header, &op) {
                            return Err(err(&self.origin, Pos::None, m));
                        }
                    }
                    return Ok(Some(Record { task: *task, op }));
                }
                self.player = None;
            }
            if self.k >= self.nsnap {
                return Ok(None);
            }
            let (t, k) = (self.t, self.k);
            self.t += 1;
            if self.t >= self.rec.targets.len() {
                self.t = 0;
                self.k += 1;
            }
            if k < self.rec.targets[t].snapshots.len() {
                self.player = Some((t as u32, self.player(t, k)));
            }
        }
    }
}

/// Ops of a reader, for tests.
#[cfg(test)]
fn ops_of(r: &mut DamonReader) -> Vec<(u32, crate::Op)> {
    std::iter::from_fn(|| r.next_record().unwrap())
        .map(|r| (r.task, r.op))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Op;

    fn json_sample() -> String {
        // As damo 3.x writes it (`write_json`, raw numbers as strings).
        r#"[
    {
        "kdamond_idx": 0,
        "context_idx": 0,
        "intervals": {"sample_us": "5000", "aggr_us": "100000", "ops_update_us": "1000000"},
        "scheme_idx": null,
        "target_id": 0,
        "scheme_filters": [],
        "snapshots": [
            {
                "start_time": "1000000000",
                "end_time": "1100000000",
                "regions": [
                    {"start": "4194304", "end": "4206592", "nr_accesses": {"samples": 20, "percent": null}, "age": {"usec": null, "aggr_intervals": 1}},
                    {"start": "4206592", "end": "4227072", "nr_accesses": {"samples": 0, "percent": null}, "age": {"usec": null, "aggr_intervals": 7}}
                ],
                "total_bytes": "32768",
                "damos_stats": null,
                "sample_interval_us": null
            },
            {
                "start_time": "1100000000",
                "end_time": "1200000000",
                "regions": [
                    {"start": "4194304", "end": "4227072", "nr_accesses": {"samples": 5, "percent": null}, "age": {"usec": null, "aggr_intervals": 0}}
                ],
                "total_bytes": "32768",
                "damos_stats": null,
                "sample_interval_us": null
            }
        ],
        "data_source": "unknown"
    }
]"#
        .to_string()
    }

    fn reader(bytes: &[u8]) -> Result<DamonReader, TraceError> {
        DamonReader::new(Box::new(std::io::Cursor::new(bytes.to_vec())), "d.json")
    }

    #[test]
    fn json_snapshots_become_slices_with_an_age_ordered_prologue() {
        let mut r = reader(json_sample().as_bytes()).unwrap();
        let h = r.header().clone();
        assert_eq!(h.tasks, ["target-0"]);
        assert_eq!(h.objects.len(), 1);
        assert_eq!(
            (h.objects[0].name.as_str(), h.objects[0].pages),
            ("target-0-400000", 8)
        );
        let ops = ops_of(&mut r);
        let touch = |page, write| {
            (
                0,
                Op::Touch {
                    obj: 0,
                    page,
                    write,
                },
            )
        };
        // Prologue: the age-7 region (pages 3..8) first, then the age-1 region (0..3).
        let want: Vec<_> = (3..8).chain(0..3).map(|p| touch(p, true)).collect();
        assert_eq!(ops[..8], want[..]);
        // Snapshot 1: 20 slices of 5 ms; pages 0..3 in every slice, 3..8 never.
        let snap1 = &ops[8..ops.iter().position(|o| o.1 == Op::OpEnd).unwrap() + 1];
        assert_eq!(
            snap1
                .iter()
                .filter(|o| o.1 == Op::Think { ns: 5_000_000 })
                .count(),
            20
        );
        assert_eq!(
            snap1
                .iter()
                .filter(|o| matches!(o.1, Op::Touch { page, .. } if page < 3))
                .count(),
            60
        );
        assert_eq!(
            snap1
                .iter()
                .filter(|o| matches!(o.1, Op::Touch { page, .. } if page >= 3))
                .count(),
            0
        );
        // Snapshot 2: 8 pages at 5 of 20: about 40 loads, no prologue.
        let snap2 = &ops[8 + snap1.len()..];
        let n = snap2
            .iter()
            .filter(|o| matches!(o.1, Op::Touch { write: false, .. }))
            .count();
        assert!((20..=60).contains(&n), "{n}");
        assert_eq!(snap2.last().unwrap().1, Op::OpEnd);
        // Deterministic.
        assert_eq!(ops_of(&mut reader(json_sample().as_bytes()).unwrap()), ops);
    }

    #[test]
    fn all_forms_parse_to_the_same_regions() {
        let rec = parse(json_sample().as_bytes(), "x").unwrap();
        assert_eq!(rec.max, Some(20));
        // Binary record format: same regions (without ages), same durations.
        let bin = parse(&encode_binary(&rec), "x").unwrap();
        for (a, b) in rec.targets[0]
            .snapshots
            .iter()
            .zip(&bin.targets[0].snapshots)
        {
            assert_eq!(a.duration_ns, b.duration_ns);
            let strip: Vec<Region> = a.regions.iter().map(|r| Region { age: 0, ..*r }).collect();
            assert_eq!(strip, b.regions);
        }
        // perf script form, as damo's write_perf_script() prints it.
        let script = "kdamond.x xxxx xxxx 1.100000: damon:damon_aggregated: target_id=0 nr_regions=2 4194304-4206592: 20 1\n\
                      kdamond.x xxxx xxxx 1.100000: damon:damon_aggregated: target_id=0 nr_regions=2 4206592-4227072: 0 7\n\
                      kdamond.x xxxx xxxx 1.200000: damon:damon_aggregated: target_id=0 nr_regions=1 4194304-4227072: 5 0\n";
        let ps = parse(script.as_bytes(), "x").unwrap();
        assert_eq!(ps.targets[0].snapshots, rec.targets[0].snapshots);
    }

    #[test]
    fn malformed_recordings_are_positioned_errors() {
        let e = reader(b"[{\"snapshots\": [}]").err().unwrap();
        assert_eq!(e.pos, Pos::Line(1));
        assert!(e.msg.starts_with("not valid JSON"), "{e}");
        let bad = json_sample().replace("\"4206592\", \"nr", "\"4194304\", \"nr");
        let e = reader(bad.as_bytes()).err().unwrap();
        assert_eq!(
            e.to_string(),
            "d.json: record 0, snapshot 0, region 0: end is not above start"
        );
        let script = "k 1 [0] 1.1: damon:damon_aggregated: target_id=0 nr_regions=2 4096-8192: 3 1\n\
                      k 1 [0] 1.2: damon:damon_aggregated: target_id=0 nr_regions=2 4096-8192: x 1\n";
        let e = reader(script.as_bytes()).err().unwrap();
        assert_eq!(e.to_string(), "d.json:2: nr_accesses is not a number");
        let script =
            "k 1 [0] 1.1: damon:damon_aggregated: target_id=0 nr_regions=2 4096-8192: 3 1\n";
        let e = reader(script.as_bytes()).err().unwrap();
        assert!(e.msg.contains("truncated"), "{e}");
        let rec = parse(json_sample().as_bytes(), "x").unwrap();
        let mut bin = encode_binary(&rec);
        bin.truncate(bin.len() - 3);
        let e = reader(&bin).err().unwrap();
        assert!(
            matches!(e.pos, Pos::Byte(_)) && e.msg.contains("truncated"),
            "{e}"
        );
    }
}
