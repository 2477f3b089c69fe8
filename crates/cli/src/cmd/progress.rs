//! Progress of the long commands (`run`, `reproduce`, `bench`, `compare --seeds`,
//! `fidelity`, `twin`) on stderr: one line, redrawn in place,
//!
//! ```text
//! reproduce mglru [########............]  42%  ETA 1m03s
//! ```
//!
//! The fraction is the planned work done: each part (a simulation, a real run) reports the
//! share of its simulated time (or, for a scenario without a duration, of its expected
//! events) it has covered, and the line shows the mean over the parts. The ETA is the wall
//! time so far scaled by what is left. The simulation only calls the reporter; the wall
//! clock is read here, outside it, so progress never changes a result.
//!
//! A command that knows better than that extrapolation gives the ETA itself
//! ([`Progress::update`]: `twin` from the real runs done so far). Lines printed while the
//! progress line is up go through [`Progress::println`], which keeps them apart.
//!
//! Shown only when stderr is a terminal (`REFAULT_PROGRESS=1` forces it on, `=0` off):
//! a log, a pipe or CI gets no progress lines at all, and the line is erased when the work
//! is done so the summary that follows starts on a clean line.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Fractions are kept in millionths.
const SCALE: f64 = 1e6;
/// Redraw at most this often.
const REDRAW: Duration = Duration::from_millis(100);
/// Width of the bar in characters.
const BAR: usize = 20;

/// Whether progress is drawn: `REFAULT_PROGRESS=1`/`0` decides, else whether stderr is a
/// terminal.
pub fn enabled() -> bool {
    match std::env::var("REFAULT_PROGRESS").as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => std::io::stderr().is_terminal(),
    }
}

/// One progress line over several parts of work done in parallel or in turn.
pub struct Progress {
    label: Mutex<String>,
    parts: Vec<AtomicU64>,
    start: Instant,
    last: Mutex<Option<Instant>>,
    on: bool,
    drawn: AtomicBool,
    eta: Mutex<Eta>,
}

/// How the ETA is found.
#[derive(Clone, Copy)]
enum Eta {
    /// From the wall time so far and the fraction done.
    Extrapolated,
    /// Given: this many seconds from that instant.
    Given(Instant, f64),
    /// Not known yet: none shown.
    Unknown,
}

impl Progress {
    /// A progress line for `parts` parts of equal weight; silent unless [`enabled`].
    pub fn new(label: &str, parts: usize) -> Progress {
        Progress {
            label: Mutex::new(label.to_string()),
            parts: (0..parts.max(1)).map(|_| AtomicU64::new(0)).collect(),
            start: Instant::now(),
            last: Mutex::new(None),
            on: enabled(),
            drawn: AtomicBool::new(false),
            eta: Mutex::new(Eta::Extrapolated),
        }
    }

    /// Change the label (the part under way, say).
    pub fn set_label(&self, label: &str) {
        *self.label.lock().unwrap_or_else(|e| e.into_inner()) = label.to_string();
        self.draw(true);
    }

    /// Part `part` has done `fraction` (0..=1) of its work.
    pub fn set(&self, part: usize, fraction: f64) {
        if let Some(p) = self.parts.get(part) {
            p.fetch_max((fraction.clamp(0.0, 1.0) * SCALE) as u64, Ordering::Relaxed);
        }
        self.draw(false);
    }

    /// Set the whole state of a one-part line: `label`, `fraction` done (which may be less
    /// than before: the work planned grew) and, unless `None`, the time left (`Some(None)`:
    /// not known yet, no ETA shown) instead of the extrapolation from the fraction done.
    /// Drawn now when `force` (the work moved to a new step), else at most every 100 ms.
    pub fn update(&self, label: &str, fraction: f64, eta: Option<Option<f64>>, force: bool) {
        *self.label.lock().unwrap_or_else(|e| e.into_inner()) = label.to_string();
        self.parts[0].store((fraction.clamp(0.0, 1.0) * SCALE) as u64, Ordering::Relaxed);
        if let Some(secs) = eta {
            *self.eta.lock().unwrap_or_else(|e| e.into_inner()) = match secs {
                Some(s) => Eta::Given(Instant::now(), s.max(0.0)),
                None => Eta::Unknown,
            };
        }
        self.draw(force);
    }

    /// Print `line` on stderr above the progress line (which is drawn again below it).
    pub fn println(&self, line: &str) {
        let mut e = std::io::stderr().lock();
        if self.on && self.drawn.load(Ordering::Relaxed) {
            let _ = write!(e, "\r\x1b[2K");
        }
        let _ = writeln!(e, "{line}");
        drop(e);
        self.draw(true);
    }

    /// The mean fraction done over the parts.
    pub fn fraction(&self) -> f64 {
        let sum: u64 = self.parts.iter().map(|p| p.load(Ordering::Relaxed)).sum();
        sum as f64 / SCALE / self.parts.len() as f64
    }

    fn draw(&self, force: bool) {
        if !self.on {
            return;
        }
        let now = Instant::now();
        {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            if !force && last.is_some_and(|l| now.duration_since(l) < REDRAW) {
                return;
            }
            *last = Some(now);
        }
        let label = self.label.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let eta = *self.eta.lock().unwrap_or_else(|e| e.into_inner());
        let line = match eta {
            Eta::Extrapolated => render(&label, self.fraction(), now.duration_since(self.start)),
            Eta::Given(at, secs) => render_eta(
                &label,
                self.fraction(),
                Some((secs - now.duration_since(at).as_secs_f64()).max(0.0)),
            ),
            Eta::Unknown => render_eta(&label, self.fraction(), None),
        };
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r\x1b[2K{line}");
        let _ = e.flush();
        self.drawn.store(true, Ordering::Relaxed);
    }

    /// Erase the line (the work is done or failed).
    pub fn finish(&self) {
        if self.on && self.drawn.load(Ordering::Relaxed) {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\r\x1b[2K");
            let _ = e.flush();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
        self.drawn.store(false, Ordering::Relaxed);
    }
}

/// Run independent simulations on the host's cores with one progress line over all of
/// them (`reproduce`, `compare --seeds`); results in the order of `scns`.
pub fn run_all(
    label: &str,
    scns: &[refault_scenario::Scenario],
) -> Vec<anyhow::Result<refault_sim::SimResult>> {
    let progress = Progress::new(label, scns.len());
    let results = std::thread::scope(|s| {
        let hs: Vec<_> = scns
            .iter()
            .enumerate()
            .map(|(i, scn)| {
                let progress = &progress;
                s.spawn(move || {
                    let mut f = |x: f64| progress.set(i, x);
                    let opts = refault_sim::RunOptions {
                        progress: Some(&mut f),
                        ..Default::default()
                    };
                    refault_sim::run(scn, opts).map_err(anyhow::Error::from)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("simulation thread"))
            .collect()
    });
    progress.finish();
    results
}

/// `LABEL [####....]  42%  ETA 1m03s` for `fraction` done after `elapsed`; the ETA is
/// left out until 1% is done (no estimate yet).
pub fn render(label: &str, fraction: f64, elapsed: Duration) -> String {
    let f = fraction.clamp(0.0, 1.0);
    let left = (0.01..1.0)
        .contains(&f)
        .then(|| elapsed.as_secs_f64() * (1.0 - f) / f);
    render_eta(label, f, left)
}

/// `LABEL [####....]  42%  ETA 1m03s` for `fraction` done and `left` seconds to go (no
/// ETA when `None`, or at the end).
pub fn render_eta(label: &str, fraction: f64, left: Option<f64>) -> String {
    let f = fraction.clamp(0.0, 1.0);
    let filled = (f * BAR as f64).floor() as usize;
    let bar: String = "#".repeat(filled) + &".".repeat(BAR - filled);
    let pct = (f * 100.0).floor() as u32;
    let eta = match left {
        Some(s) if f < 1.0 => format!("  ETA {}", duration(s)),
        _ => String::new(),
    };
    format!("{label} [{bar}] {pct:3}%{eta}")
}

/// `7s`, `1m03s`, `2h05m`.
fn duration(s: f64) -> String {
    let s = s.round() as u64;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_shows_bar_percent_and_eta() {
        // 25% after 10 s: 30 s to go.
        assert_eq!(
            render("run x", 0.25, Duration::from_secs(10)),
            "run x [#####...............]  25%  ETA 30s"
        );
        // 10% after 7 s: 63 s to go.
        assert_eq!(
            render("r", 0.1, Duration::from_secs(7)),
            "r [##..................]  10%  ETA 1m03s"
        );
        assert_eq!(
            render("r", 0.5, Duration::from_secs(3750)),
            "r [##########..........]  50%  ETA 1h02m"
        );
        // No estimate before 1%, none at the end.
        assert_eq!(
            render("r", 0.0, Duration::from_secs(1)),
            "r [....................]   0%"
        );
        assert_eq!(
            render("r", 1.0, Duration::from_secs(1)),
            "r [####################] 100%"
        );
    }

    #[test]
    fn a_given_eta_replaces_the_extrapolation() {
        assert_eq!(
            render_eta("twin f01: run 2/3", 0.5, Some(75.0)),
            "twin f01: run 2/3 [##########..........]  50%  ETA 1m15s"
        );
        assert_eq!(
            render_eta("twin f01: simulating", 0.05, None),
            "twin f01: simulating [#...................]   5%"
        );
    }

    #[test]
    fn update_may_go_back() {
        let p = Progress::new("x", 1);
        p.update("x", 0.5, None, false);
        p.update("x", 0.25, Some(Some(3.0)), true);
        assert!((p.fraction() - 0.25).abs() < 1e-9);
    }

    #[test]
    fn fraction_is_the_mean_over_parts_and_never_goes_back() {
        let p = Progress::new("x", 4);
        p.set(0, 1.0);
        p.set(1, 0.5);
        p.set(1, 0.25);
        p.set(7, 1.0); // no such part: ignored
        assert!((p.fraction() - 0.375).abs() < 1e-9);
    }
}
