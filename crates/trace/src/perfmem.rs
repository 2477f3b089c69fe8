//! perf memory-access samples: `perf mem record` (or any `perf record -d` of an event with
//! data addresses) printed by `perf script` or `perf mem report -D`.
//!
//! ```text
//! $ perf script -F comm,tid,time,period,event,addr
//!             prog 21106 13254.852941:      10007 cpu/mem-loads,ldlat=30/P:     7ffd1234abc8
//!             prog 21106 13254.852990:       2003 cpu/mem-stores/P:             55fca85d7028
//! $ perf mem report -D
//! # PID, TID, IP, ADDR, LOCAL WEIGHT, DSRC, SYMBOL
//! 21106 21106 0x401136 0x7ffd1234abc8 35 0x68100142 prog:main
//! ```
//!
//! # perf script
//! The event name is the first field that ends with `:` and is not a number (the time is);
//! the data address is the field after it (hexadecimal, `0x` optional). A plain number just
//! before the event name is the sample's period: the sample stands for that many accesses
//! (its weight; 1 without a period). The time, when printed, cuts the samples into windows
//! of 100 ms. An event whose name contains `store` samples stores, any other loads. Lines
//! without an address (other events, headers, comments) are skipped. Print the period next
//! to the event (`-F ...,period,event,addr`): a `tid` there would be read as a period.
//!
//! # perf mem report -D
//! The header line names the columns (`ADDR`, `DSRC`); each sample weighs 1 (the dump has
//! no period; `LOCAL WEIGHT` is a latency, not a count) and is a store when the data
//! source's `mem_op` has the STORE bit (0x4). There is no time: one window.
//!
//! # Replay
//! - One task, `perf`. The sampled pages are grouped into anonymous objects as lackey's
//!   (a gap of more than 16 MiB starts a new object, `region-<hex start>`).
//! - Each window is replayed like a DAMON snapshot ([`regions`](crate::regions)): each
//!   sampled page is a one-page region whose access count out of 20 is its weight relative to
//!   the window's heaviest page (`ceil(20 * w / w_max)`, at least 1), touched in each of 20
//!   slices with probability count / 20, a store with the page's store share of its weight;
//!   `think` of 5 ms per slice (1/20 of the window), `end` per window. The first touch of
//!   each page is a store (the program wrote its memory before sampling saw it read).
//! - Windows without samples are skipped (time gaps collapse). Pages never sampled are never
//!   touched: sampling sees the hot memory, not the footprint.
//! - The file is read twice: the first pass finds the pages (memory grows with the sampled
//!   footprint); the second streams, holding one window's pages at a time.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};

use crate::regions::{group, PlayRegion, Player};
use crate::{Header, Kind, Object, Op, Pos, Record, RecordRead, TraceError};

const GAP: u64 = 4096;
const WINDOW_NS: u64 = 100_000_000;
const SLICES: u32 = 20;
const SEED: u64 = 0x5045_5246_4d45_4d00;

/// One sample.
struct Sample {
    page: u64,
    weight: u64,
    store: bool,
    time_ns: Option<u64>,
}

/// Column positions of a `perf mem report -D` dump.
#[derive(Clone, Copy)]
struct Dump {
    addr: usize,
    dsrc: Option<usize>,
}

struct Lines {
    src: BufReader<Box<dyn Read + Send>>,
    line: Vec<u8>,
    lineno: u64,
    dump: Option<Dump>,
}

impl Lines {
    fn new(src: Box<dyn Read + Send>) -> Self {
        Lines {
            src: BufReader::with_capacity(1 << 16, src),
            line: Vec::new(),
            lineno: 0,
            dump: None,
        }
    }

    /// The next sample, None at the end.
    fn next(&mut self, origin: &str) -> Result<Option<Sample>, TraceError> {
        loop {
            self.line.clear();
            let n = self.src.read_until(b'\n', &mut self.line).map_err(|e| {
                TraceError::new(
                    origin,
                    Pos::Line(self.lineno + 1),
                    format!("cannot read: {e}"),
                )
            })?;
            if n == 0 {
                return Ok(None);
            }
            self.lineno += 1;
            let e = |m: &str| TraceError::new(origin, Pos::Line(self.lineno), m.to_string());
            let line = std::str::from_utf8(&self.line).map_err(|_| e("the line is not UTF-8"))?;
            let t = line.trim();
            if let Some(h) = t.strip_prefix('#') {
                let cols: Vec<&str> = h.split(',').map(str::trim).collect();
                if let Some(addr) = cols.iter().position(|c| *c == "ADDR") {
                    self.dump = Some(Dump {
                        addr,
                        dsrc: cols.iter().position(|c| *c == "DSRC"),
                    });
                }
                continue;
            }
            if t.is_empty() {
                continue;
            }
            let f: Vec<&str> = t.split_whitespace().collect();
            if let Some(d) = self.dump {
                let addr = f
                    .get(d.addr)
                    .and_then(|a| hex(a))
                    .ok_or_else(|| e("the ADDR column is not a hexadecimal address"))?;
                let store = match d.dsrc {
                    Some(i) => {
                        let s = f
                            .get(i)
                            .and_then(|a| hex(a))
                            .ok_or_else(|| e("the DSRC column is not hexadecimal"))?;
                        s & 0x4 != 0
                    }
                    None => false,
                };
                return Ok(Some(Sample {
                    page: addr >> 12,
                    weight: 1,
                    store,
                    time_ns: None,
                }));
            }
            let is_num = |s: &str| s.parse::<f64>().is_ok();
            let Some(k) = f
                .iter()
                .position(|x| x.len() > 1 && x.ends_with(':') && !is_num(&x[..x.len() - 1]))
            else {
                continue;
            };
            let Some(addr) = f.get(k + 1) else {
                continue; // an event without an address field
            };
            let addr = hex(addr)
                .ok_or_else(|| e("the field after the event is not a hexadecimal address"))?;
            let mut weight = 1;
            let mut time_ns = None;
            let mut j = k;
            if j > 0 && f[j - 1].bytes().all(|b| b.is_ascii_digit()) {
                weight = f[j - 1]
                    .parse::<u64>()
                    .map_err(|_| e("the period is out of range"))?;
                j -= 1;
            }
            if j > 0 {
                if let Some(ts) = f[j - 1].strip_suffix(':') {
                    if let Ok(s) = ts.parse::<f64>() {
                        if !(0.0..1e10).contains(&s) {
                            return Err(e("the time is out of range"));
                        }
                        time_ns = Some((s * 1e9) as u64);
                    }
                }
            }
            let store = f[k].to_ascii_lowercase().contains("store");
            return Ok(Some(Sample {
                page: addr >> 12,
                weight,
                store,
                time_ns,
            }));
        }
    }
}

fn hex(s: &str) -> Option<u64> {
    let s = s.strip_prefix("0x").unwrap_or(s);
    if s.is_empty() {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

/// True if `prefix` looks like perf memory samples (for format detection).
pub fn sniff(prefix: &[u8]) -> bool {
    let t = String::from_utf8_lossy(prefix);
    t.lines().take(50).any(|l| {
        l.starts_with("# PID, TID, IP, ADDR")
            || l.contains("mem-loads")
            || l.contains("mem-stores")
            || l.contains("mem_load")
    })
}

/// Reads perf memory samples as refault records (see the module doc).
pub struct PerfMemReader {
    lines: Lines,
    origin: String,
    header: Header,
    starts: Vec<u64>,
    /// Sampled pages, ascending, and whether each was touched yet.
    pages: Vec<u64>,
    seen: Vec<bool>,
    /// The window being accumulated: page -> (weight, store weight); its number and start.
    window: BTreeMap<u64, (u64, u64)>,
    win_start: Option<u64>,
    nwin: u64,
    /// The first sample of the next window.
    pending: Option<Sample>,
    player: Option<Player>,
    eof: bool,
}

impl PerfMemReader {
    pub fn new(
        src: Box<dyn Read + Send>,
        origin: &str,
        reopen: &dyn Fn() -> Result<Box<dyn Read + Send>, TraceError>,
    ) -> Result<Self, TraceError> {
        let mut lines = Lines::new(src);
        let mut pages = Vec::new();
        let mut set = std::collections::BTreeSet::new();
        while let Some(s) = lines.next(origin)? {
            set.insert(s.page);
        }
        if set.is_empty() {
            return Err(TraceError::new(
                origin,
                Pos::None,
                "no samples with a data address (record with `perf mem record` or `perf record -d`, print with `perf script -F ...,period,event,addr`)",
            ));
        }
        pages.extend(set.iter().copied());
        let objs = group(set.into_iter().map(|p| (p, p)).collect(), GAP);
        let header = Header {
            tasks: vec!["perf".into()],
            objects: objs
                .iter()
                .map(|&(s, n)| Object {
                    name: format!("region-{:x}", s << 12),
                    kind: Kind::Anon,
                    pages: n,
                    exists: false,
                })
                .collect(),
        };
        crate::check_header(&header).map_err(|m| TraceError::new(origin, Pos::None, m))?;
        let n = pages.len();
        Ok(PerfMemReader {
            lines: Lines::new(reopen()?),
            origin: origin.to_string(),
            header,
            starts: objs.iter().map(|o| o.0).collect(),
            pages,
            seen: vec![false; n],
            window: BTreeMap::new(),
            win_start: None,
            nwin: 0,
            pending: None,
            player: None,
            eof: false,
        })
    }

    fn changed(&self) -> TraceError {
        TraceError::new(
            &self.origin,
            Pos::Line(self.lines.lineno),
            "the file changed between the two passes",
        )
    }

    fn add(&mut self, s: &Sample) {
        let e = self.window.entry(s.page).or_insert((0, 0));
        e.0 = e.0.saturating_add(s.weight);
        if s.store {
            e.1 = e.1.saturating_add(s.weight);
        }
    }

    /// Reads the next window into `self.window`; false at the end.
    fn fill(&mut self) -> Result<bool, TraceError> {
        self.window.clear();
        if let Some(s) = self.pending.take() {
            self.win_start = s.time_ns;
            self.add(&s);
        } else if self.eof {
            return Ok(false);
        }
        loop {
            let Some(s) = self.lines.next(&self.origin)? else {
                self.eof = true;
                break;
            };
            if self.window.is_empty() {
                self.win_start = s.time_ns;
            }
            let next_window = match (self.win_start, s.time_ns) {
                (Some(w), Some(t)) => t >= w.saturating_add(WINDOW_NS) || t < w,
                _ => false,
            };
            if next_window && !self.window.is_empty() {
                self.pending = Some(s);
                break;
            }
            self.add(&s);
        }
        Ok(!self.window.is_empty())
    }

    fn play_window(&mut self) -> Result<Player, TraceError> {
        let wmax = self.window.values().map(|w| w.0).max().unwrap_or(1).max(1);
        let mut regions = Vec::with_capacity(self.window.len());
        for (&page, &(w, st)) in &self.window {
            let o = self.starts.partition_point(|&x| x <= page);
            if o == 0 || page - self.starts[o - 1] >= self.header.objects[o - 1].pages {
                return Err(self.changed());
            }
            let nr = ((u128::from(w) * u128::from(SLICES)).div_ceil(u128::from(wmax)) as u32)
                .clamp(1, SLICES);
            let store = if w == 0 {
                0
            } else {
                ((u128::from(st) << 16) / u128::from(w)) as u32
            };
            regions.push(PlayRegion {
                obj: (o - 1) as u32,
                page: (page - self.starts[o - 1]) as u32,
                pages: 1,
                nr,
                store,
            });
        }
        let duration = if self.win_start.is_some() {
            WINDOW_NS
        } else {
            0
        };
        let key = SEED ^ self.nwin;
        self.nwin += 1;
        Ok(Player::new(regions, Vec::new(), SLICES, key, duration))
    }
}

impl RecordRead for PerfMemReader {
    fn header(&self) -> &Header {
        &self.header
    }

    fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        loop {
            if let Some(p) = self.player.as_mut() {
                if let Some(mut op) = p.next_op() {
                    if let Op::Touch { obj, page, write } = &mut op {
                        let abs = self.starts[*obj as usize] + u64::from(*page);
                        let i = self.pages.partition_point(|&x| x < abs);
                        if i < self.pages.len() && self.pages[i] == abs && !self.seen[i] {
                            self.seen[i] = true;
                            *write = true;
                        }
                    }
                    return Ok(Some(Record { task: 0, op }));
                }
                self.player = None;
            }
            if !self.fill()? {
                return Ok(None);
            }
            self.player = Some(self.play_window()?);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::read_all;

    fn reader(text: &str) -> Result<PerfMemReader, TraceError> {
        let b = text.as_bytes().to_vec();
        let b2 = b.clone();
        PerfMemReader::new(Box::new(std::io::Cursor::new(b)), "m.txt", &move || {
            Ok(Box::new(std::io::Cursor::new(b2.clone())) as Box<dyn Read + Send>)
        })
    }

    #[test]
    fn periods_weigh_pages_and_time_cuts_windows() {
        let mut t = String::new();
        // Window 1: page 0x1000 weighs 1000 (loads), page 0x2000 weighs 50 (stores).
        for i in 0..10 {
            t += &format!("prog 7 1.{:06}: 100 cpu/mem-loads,ldlat=30/P: 1008\n", i);
        }
        t += "prog 7 1.000500: 50 cpu/mem-stores/P: 0x2010\n";
        t += "prog 7 1.000600: page-faults: \n"; // no address: skipped
                                                 // Window 2 (300 ms later): only page 0x1000.
        t += "prog 7 1.300000: 7 cpu/mem-loads,ldlat=30/P: 1ff8\n";
        let mut r = reader(&t).unwrap();
        let h = r.header().clone();
        assert_eq!(h.objects.len(), 1);
        assert_eq!(
            (h.objects[0].name.as_str(), h.objects[0].pages),
            ("region-1000", 2)
        );
        let ops: Vec<Op> = read_all(&mut r).unwrap().iter().map(|r| r.op).collect();
        let ends: Vec<usize> = (0..ops.len()).filter(|&i| ops[i] == Op::OpEnd).collect();
        assert_eq!(ends.len(), 2);
        let w1 = &ops[..ends[0]];
        // Page 0 at 20/20: every slice; its first touch is a store, the others loads.
        let p0: Vec<bool> = w1
            .iter()
            .filter_map(|o| match o {
                Op::Touch { page: 0, write, .. } => Some(*write),
                _ => None,
            })
            .collect();
        assert_eq!(p0.len(), 20);
        assert!(p0[0] && p0[1..].iter().all(|w| !w));
        // Page 1: ceil(20 * 50 / 1000) = 1 of 20: rarely; always a store.
        assert!(w1.iter().all(|o| !matches!(
            o,
            Op::Touch {
                page: 1,
                write: false,
                ..
            }
        )));
        assert_eq!(
            w1.iter()
                .filter(|o| **o == Op::Think { ns: 5_000_000 })
                .count(),
            20
        );
        // Window 2: page 0 in every slice, page 1 never.
        let w2 = &ops[ends[0] + 1..ends[1]];
        assert_eq!(
            w2.iter()
                .filter(|o| matches!(o, Op::Touch { page: 0, .. }))
                .count(),
            20
        );
        assert_eq!(
            w2.iter()
                .filter(|o| matches!(o, Op::Touch { page: 1, .. }))
                .count(),
            0
        );
    }

    #[test]
    fn mem_report_dump_and_errors() {
        let t = "# PID, TID, IP, ADDR, LOCAL WEIGHT, DSRC, SYMBOL\n\
                 7 7 0x401136 0x7ffd1234a000 35 0x68100142 prog:main\n\
                 7 7 0x401136 0x7ffd1234b000 35 0x68100144 prog:main\n";
        let mut r = reader(t).unwrap();
        assert_eq!(r.header().objects[0].pages, 2);
        let ops: Vec<Op> = read_all(&mut r).unwrap().iter().map(|r| r.op).collect();
        // No time: no think; both pages weigh 1 (20 of 20).
        assert!(!ops.iter().any(|o| matches!(o, Op::Think { .. })));
        assert_eq!(
            ops.iter().filter(|o| matches!(o, Op::Touch { .. })).count(),
            40
        );
        let e = reader("# PID, TID, IP, ADDR, LOCAL WEIGHT, DSRC, SYMBOL\n7 7 0x1 zz 1 0x2 s\n")
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "m.txt:2: the ADDR column is not a hexadecimal address"
        );
        let e = reader("p 1 1.0: 5 cpu/mem-loads/P: 12g4\n").err().unwrap();
        assert_eq!(
            e.to_string(),
            "m.txt:1: the field after the event is not a hexadecimal address"
        );
        assert!(reader("nothing here\n")
            .err()
            .unwrap()
            .msg
            .starts_with("no samples"));
    }
}
