//! `refault trace info`: what a trace holds. One streamed pass.
//!
//! Reports the declarations, events per task and per kind, the footprint (distinct pages
//! each object's events reach) and a reuse-distance summary: for each page access, the
//! number of distinct pages accessed since the previous access to the same page (LRU stack
//! distance; a first access is a cold miss). An LRU cache of C pages hits exactly the
//! accesses with distance < C, so the summary says how much memory the trace needs.
//!
//! Distances are exact (a Fenwick tree over access times, Bennett-Kruskal) for the first
//! [`REUSE_WINDOW`] page accesses, which bounds the memory of the pass; the footprint is
//! counted over the whole trace (one hash entry per distinct page).

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::{Op, RecordRead, TraceError};

/// Page accesses whose reuse distance is measured.
pub const REUSE_WINDOW: u64 = 1 << 24;

pub struct Info {
    pub header: crate::Header,
    pub events: u64,
    pub per_task: Vec<u64>,
    /// touch-load, touch-store, read, write, fsync, advise, think, end, phase
    pub per_kind: [u64; 9],
    pub distinct_pages: Vec<u64>,
    pub page_accesses: u64,
    pub cold: u64,
    /// hist[k] = accesses with distance in [2^k - 1, 2^(k+1) - 1) (k = 0: distance 0).
    pub hist: Vec<u64>,
    pub measured: u64,
}

struct Fenwick(Vec<u32>);
impl Fenwick {
    fn add(&mut self, mut i: usize, d: i32) {
        i += 1;
        while i <= self.0.len() {
            self.0[i - 1] = (self.0[i - 1] as i32 + d) as u32;
            i += i & i.wrapping_neg();
        }
    }
    fn prefix(&self, mut i: usize) -> u64 {
        let mut s = 0u64;
        while i > 0 {
            s += u64::from(self.0[i - 1]);
            i -= i & i.wrapping_neg();
        }
        s
    }
}

pub fn collect(r: &mut dyn RecordRead) -> Result<Info, TraceError> {
    let header = r.header().clone();
    let mut info = Info {
        events: 0,
        per_task: vec![0; header.tasks.len()],
        per_kind: [0; 9],
        distinct_pages: vec![0; header.objects.len()],
        page_accesses: 0,
        cold: 0,
        hist: vec![0; 34],
        measured: 0,
        header,
    };
    let mut last: HashMap<(u32, u32), u64> = HashMap::new();
    let mut fw = Fenwick(Vec::new());
    let mut access = |info: &mut Info, obj: u32, page: u32| {
        let t = info.page_accesses;
        info.page_accesses += 1;
        if t < REUSE_WINDOW && fw.0.len() <= t as usize {
            let n = (fw.0.len() * 2).max(1024).min(REUSE_WINDOW as usize);
            // Rebuild: a Fenwick tree cannot simply grow; re-add the live marks.
            let mut nf = Fenwick(vec![0; n]);
            for &v in last.values() {
                nf.add(v as usize, 1);
            }
            fw = nf;
        }
        let prev = last.insert((obj, page), t);
        if prev.is_none() {
            info.distinct_pages[obj as usize] += 1;
        }
        if t >= REUSE_WINDOW {
            return;
        }
        info.measured += 1;
        match prev {
            None => info.cold += 1,
            Some(p) if p < REUSE_WINDOW => {
                let d = fw.prefix(t as usize) - fw.prefix(p as usize + 1);
                let k = (64 - (d + 1).leading_zeros() - 1) as usize;
                info.hist[k.min(33)] += 1;
                fw.add(p as usize, -1);
            }
            Some(_) => {}
        }
        fw.add(t as usize, 1);
    };
    while let Some(rec) = r.next_record()? {
        info.events += 1;
        info.per_task[rec.task as usize] += 1;
        let k = match rec.op {
            Op::Touch { obj, page, write } => {
                access(&mut info, obj, page);
                usize::from(write)
            }
            Op::Read { obj, page, nr } | Op::Write { obj, page, nr } => {
                // u64: a read may end exactly at page 2^32.
                for p in u64::from(page)..u64::from(page) + u64::from(nr) {
                    access(&mut info, obj, p as u32);
                }
                if matches!(rec.op, Op::Read { .. }) {
                    2
                } else {
                    3
                }
            }
            Op::Fsync { .. } => 4,
            Op::Advise { .. } => 5,
            Op::Think { .. } => 6,
            Op::OpEnd => 7,
            Op::Phase { .. } => 8,
        };
        info.per_kind[k] += 1;
    }
    Ok(info)
}

fn mib(pages: u64) -> String {
    format!("{:.1} MiB", pages as f64 * 4096.0 / (1 << 20) as f64)
}

impl Info {
    pub fn render(&self) -> String {
        let mut s = String::new();
        let h = &self.header;
        let _ = writeln!(s, "tasks: {}", h.tasks.len());
        for (t, n) in h.tasks.iter().zip(&self.per_task) {
            let _ = writeln!(s, "  {t:<20} {n} events");
        }
        let _ = writeln!(s, "objects: {}", h.objects.len());
        let _ = writeln!(
            s,
            "  {:<20} {:<6} {:>12} {:>12}  footprint",
            "name", "kind", "pages", "size"
        );
        for (o, d) in h.objects.iter().zip(&self.distinct_pages) {
            let _ = writeln!(
                s,
                "  {:<20} {:<6} {:>12} {:>12}  {} pages ({}){}",
                o.name,
                o.kind.name(),
                o.pages,
                mib(o.pages),
                d,
                mib(*d),
                if o.exists { ", exists" } else { "" }
            );
        }
        let names = [
            "touch-load",
            "touch-store",
            "read",
            "write",
            "fsync",
            "advise",
            "think",
            "end",
            "phase",
        ];
        let _ = writeln!(s, "events: {}", self.events);
        for (n, c) in names.iter().zip(&self.per_kind) {
            if *c > 0 {
                let _ = writeln!(s, "  {n:<12} {c}");
            }
        }
        let total: u64 = self.distinct_pages.iter().sum();
        let _ = writeln!(s, "footprint: {total} pages ({})", mib(total));
        let _ = writeln!(
            s,
            "page accesses: {} (reuse distances over the first {}: {} cold)",
            self.page_accesses, self.measured, self.cold
        );
        let warm = self.measured - self.cold;
        if warm > 0 {
            let _ = writeln!(
                s,
                "  LRU hit ratio by cache size (of the measured accesses):"
            );
            let mut cum = 0u64;
            for (k, c) in self.hist.iter().enumerate() {
                cum += c;
                if *c > 0 || (cum > 0 && cum < warm) {
                    let size = (1u64 << (k + 1)) - 1;
                    let _ = writeln!(
                        s,
                        "    {:>12} pages ({:>10}): {:6.2}%",
                        size,
                        mib(size),
                        100.0 * cum as f64 / self.measured as f64
                    );
                }
                if cum == warm {
                    break;
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuse_distances_by_hand() {
        // a b c a b b d a : distances: a,b,c cold; a=2; b=2; b=0; d cold; a=2 (b,d... distinct
        // since previous a: b, b, d -> {b, d} = 2).
        let text = "refault-trace 1\nobject h anon 10\nt h 0\nt h 1\nt h 2\nt h 0\nt h 1\nt h 1\nt h 3\nt h 0\n";
        let mut r = crate::text::TextReader::new(
            Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
            "x",
        )
        .unwrap();
        let info = collect(&mut r).unwrap();
        assert_eq!(info.cold, 4);
        assert_eq!(info.page_accesses, 8);
        assert_eq!(info.distinct_pages, [4]);
        // distance 0 -> bucket 0; distance 2 -> bucket 1 ([1, 3)).
        assert_eq!(info.hist[0], 1);
        assert_eq!(info.hist[1], 3);
    }

    /// A loop over 600 pages, three times: 1800 accesses, past the tree's first growth
    /// (1024), each warm access at distance 599.
    #[test]
    fn loop_distances_survive_the_tree_growing() {
        let mut text = String::from("refault-trace 1\nobject h anon 1000\n");
        for _ in 0..3 {
            for p in 0..600 {
                text += &format!("t h {p}\n");
            }
        }
        let mut r =
            crate::text::TextReader::new(Box::new(std::io::Cursor::new(text.into_bytes())), "x")
                .unwrap();
        let info = collect(&mut r).unwrap();
        assert_eq!(info.cold, 600);
        // 599 is in [2^9 - 1, 2^10 - 1).
        assert_eq!(info.hist[9], 1200);
        assert_eq!(info.hist.iter().sum::<u64>(), 1200);
    }
}
