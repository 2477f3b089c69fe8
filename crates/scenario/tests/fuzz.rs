//! A standing fuzz test of the scenario loader and of `--set` overrides (issue 11, item 14).
//!
//! Deterministic and bounded, so it runs under plain `cargo test`: a seeded generator
//! (xorshift64*) mutates a corpus built from the bundled scenarios (`scenarios/*.toml`) and
//! the inputs kept in `tests/fuzz-regressions/` — byte flips, inserts and deletes, lines
//! spliced from other seeds, lines dropped or doubled, values swapped between keys, values
//! replaced by extreme ones, overrides with random keys and values — and feeds each input to
//! [`refault_scenario::parse`]. The property, for every input:
//!
//! - it returns, within [`PER_INPUT`] (no hang);
//! - it does not panic (a panic is caught and reported with the input);
//! - `Ok`, or an error with a location: a line in the file, or `--set` and the override it
//!   blames, or a message that names the key (`machine.memory ...`).
//!
//! `REFAULT_FUZZ_N` sets the number of inputs (default 10,000: a few seconds in a dev build),
//! `REFAULT_FUZZ_SEED` the generator's seed. A failing input is written under
//! `target/fuzz-failures/`; once its bug is fixed, copy it into `tests/fuzz-regressions/`
//! (a `.toml` file, with an optional first line `# set: KEY=VALUE` per override), where every
//! file is checked on every run.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use refault_scenario::{parse, ScenarioError};

/// The longest one input may take to resolve (in a dev build, on a loaded machine).
const PER_INPUT: Duration = Duration::from_secs(5);

/// xorshift64*: small, fast, and the same sequence everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Values at the edges of what the reference allows, and beyond.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "1e309",
    "-0.0",
    "0.5",
    "nan",
    "inf",
    "-inf",
    "true",
    "false",
    "[]",
    "[1, 2]",
    "[\"a\"]",
    "{}",
    "{ a = 1 }",
    "\"\"",
    "\"x\"",
    "\"0\"",
    "\"0B\"",
    "\"1\"",
    "\"4k\"",
    "\"64M\"",
    "\"1T\"",
    "\"16T\"",
    "\"17179869184T\"",
    "\"1E\"",
    "\"99999999999999999999G\"",
    "\"-1G\"",
    "\"1.5G\"",
    "\"1e30G\"",
    "\"0s\"",
    "\"1ns\"",
    "\"1us\"",
    "\"1000000000000000000s\"",
    "\"18446744073709551615ns\"",
    "\"-1s\"",
    "\"1GB/s\"",
    "\"0B/s\"",
    "\"max\"",
    "\"0%\"",
    "\"100%\"",
    "\"200%\"",
    "\"mglru\"",
    "\"classic\"",
    "\"legacy\"",
    "\"random\"",
    "\"sequential\"",
    "\"zipf\"",
    "\"anon\"",
    "\"file\"",
    "\"shmem\"",
    "\"zram0\"",
    "\"nvme\"",
    "\"hdd\"",
];

/// Override keys: real ones (from the reference scenario) and some that are not.
fn override_keys(reference: &str) -> Vec<String> {
    let mut keys = vec![
        "vm.swappiness".to_string(),
        "vm.dirty_ratio".into(),
        "vm.min_free_kbytes".into(),
        "vm.watermark_scale_factor".into(),
        "vm.no_such".into(),
        "machine.memory".into(),
        "machine.cpus".into(),
        "policy.lru".into(),
        "policy.balance".into(),
        "run.duration".into(),
        "run.warmup".into(),
        "run.sample_interval".into(),
        "task.0.instances".into(),
        "task.0.repeat".into(),
        "task.0.phase.0.ops".into(),
        "task.0.phase.0.pattern".into(),
        "task.client.phase.scan.ops".into(),
        "task.99.instances".into(),
        "cgroup.0.memory.max".into(),
        "cgroup.workload.memory.high".into(),
        "object.0.size".into(),
        "swap.area.0.size".into(),
        "device.0.preset".into(),
        "model.check_interval".into(),
        "a..b".into(),
        ".".into(),
        "task".into(),
        "machine".into(),
    ];
    let mut section = String::new();
    for line in reference.lines() {
        let line = line.trim_start_matches('#').trim();
        if line.starts_with('[') && !line.starts_with("[[") {
            section = line.trim_matches(|c| c == '[' || c == ']').to_string();
        } else if let Some((k, _)) = line.split_once(" = ") {
            let k = k.trim().trim_matches('"');
            if !k.is_empty() && !k.contains(' ') && !section.is_empty() {
                keys.push(format!("{section}.{k}"));
            }
        }
    }
    keys
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn seeds() -> Vec<(String, String)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join("scenarios"))
        .expect("scenarios/ exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("bundled scenarios are UTF-8");
            (p.file_name().unwrap().to_string_lossy().into_owned(), text)
        })
        .collect()
}

/// Overrides as `--set` pairs.
type Sets = Vec<(String, String)>;

/// `(name, text, overrides)` of the files kept because they once found a bug.
fn regressions() -> Vec<(String, String, Sets)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let sets = text
                .lines()
                .take_while(|l| l.starts_with("# set: "))
                .map(|l| {
                    let kv = &l["# set: ".len()..];
                    let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                    (k.to_string(), v.to_string())
                })
                .collect();
            (p.display().to_string(), text, sets)
        })
        .collect()
}

fn lines_of(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// One mutation of `text`; `corpus` provides lines to splice in.
fn mutate(rng: &mut Rng, text: &str, corpus: &[(String, String)]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    match rng.below(9) {
        // Flip, insert or delete a few bytes.
        0 => {
            for _ in 0..=rng.below(4) {
                if bytes.is_empty() {
                    break;
                }
                let i = rng.below(bytes.len());
                bytes[i] ^= 1 << rng.below(8);
            }
        }
        1 => {
            let i = rng.below(bytes.len() + 1);
            let b = *rng.pick(b"=[]{}\"'.,#\n\\ 0129aZ-_\x00\xff\xc3");
            bytes.insert(i, b);
        }
        2 => {
            if !bytes.is_empty() {
                let i = rng.below(bytes.len());
                let n = rng.below(16).min(bytes.len() - i);
                bytes.drain(i..i + n);
            }
        }
        // Splice a line from another seed.
        3 => {
            let mut lines: Vec<String> = lines_of(text).iter().map(|s| s.to_string()).collect();
            let other = &rng.pick(corpus).1;
            let olines = lines_of(other);
            if !olines.is_empty() {
                let l = rng.pick(&olines).to_string();
                let at = rng.below(lines.len() + 1);
                lines.insert(at, l);
            }
            return lines.concat();
        }
        // Drop or double a line.
        4 | 5 => {
            let mut lines: Vec<String> = lines_of(text).iter().map(|s| s.to_string()).collect();
            if !lines.is_empty() {
                let i = rng.below(lines.len());
                if rng.below(2) == 0 {
                    lines.remove(i);
                } else {
                    let l = lines[i].clone();
                    lines.insert(i, l);
                }
            }
            return lines.concat();
        }
        // Swap the values of two `key = value` lines, or replace one by an extreme value.
        _ => {
            let mut lines: Vec<String> = lines_of(text).iter().map(|s| s.to_string()).collect();
            let kv: Vec<usize> = (0..lines.len())
                .filter(|&i| !lines[i].trim_start().starts_with('#') && lines[i].contains(" = "))
                .collect();
            if kv.is_empty() {
                return text.to_string();
            }
            let a = *rng.pick(&kv);
            let (ka, va) = {
                let (k, v) = lines[a].split_once(" = ").unwrap();
                (k.to_string(), v.to_string())
            };
            if rng.below(3) == 0 {
                let b = *rng.pick(&kv);
                let (kb, vb) = {
                    let (k, v) = lines[b].split_once(" = ").unwrap();
                    (k.to_string(), v.to_string())
                };
                lines[a] = format!("{ka} = {vb}");
                lines[b] = format!("{kb} = {va}");
            } else {
                lines[a] = format!("{ka} = {}\n", rng.pick(VALUES));
            }
            return lines.concat();
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Whether an error says where the problem is: a line of the file, or the `--set` it blames.
fn located(e: &ScenarioError) -> bool {
    e.line().is_some() || e.message().starts_with("--set ") || e.origin() == "--set"
}

enum Outcome {
    Resolved,
    /// An error with a location.
    Refused,
    Bad(String),
}

fn check(text: &str, origin: &str, sets: &[(String, String)]) -> Outcome {
    let start = Instant::now();
    let r = catch_unwind(AssertUnwindSafe(|| parse(text, origin, sets, None)));
    let took = start.elapsed();
    if took > PER_INPUT {
        return Outcome::Bad(format!("took {took:?} (bound {PER_INPUT:?})"));
    }
    match r {
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Outcome::Bad(format!("panicked: {msg}"))
        }
        Ok(Ok(_)) => Outcome::Resolved,
        Ok(Err(e)) if located(&e) => Outcome::Refused,
        Ok(Err(e)) => Outcome::Bad(format!("error without a location: {e}")),
    }
}

fn save_failure(i: usize, text: &str, sets: &[(String, String)], why: &str) -> PathBuf {
    let dir = root().join("target/fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("scenario-{i}.toml"));
    let mut out = String::new();
    for (k, v) in sets {
        out.push_str(&format!("# set: {k}={v}\n"));
    }
    out.push_str(text);
    let _ = std::fs::write(&path, out);
    let _ = std::fs::write(path.with_extension("why"), why);
    path
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn fuzz_regressions_stay_fixed() {
    let mut bad = Vec::new();
    for (name, text, sets) in regressions() {
        if let Outcome::Bad(why) = check(&text, &name, &sets) {
            bad.push(format!("{name}: {why}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn fuzz_scenario_loader_and_overrides() {
    // Keep the default panic hook from printing every caught panic.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let n = env_u64("REFAULT_FUZZ_N", 10_000) as usize;
    let mut rng = Rng(env_u64("REFAULT_FUZZ_SEED", 0x5eed_f022).max(1));
    let corpus = seeds();
    assert!(
        corpus.len() >= 5,
        "the bundled scenarios are the seed corpus"
    );
    let reference = corpus
        .iter()
        .find(|(n, _)| n == "reference.toml")
        .map(|(_, t)| t.clone())
        .unwrap_or_default();
    let keys = override_keys(&reference);
    let started = Instant::now();
    let mut failures = Vec::new();
    let (mut ok, mut errors) = (0usize, 0usize);
    for i in 0..n {
        let (name, seed) = rng.pick(&corpus).clone();
        let mut text = seed.clone();
        for _ in 0..=rng.below(3) {
            text = mutate(&mut rng, &text, &corpus);
        }
        // A third of the inputs: the seed or a mutant, with random overrides.
        let mut sets = Vec::new();
        if rng.below(3) == 0 {
            if rng.below(2) == 0 {
                text = seed;
            }
            for _ in 0..=rng.below(3) {
                let key = rng.pick(&keys).clone();
                let value = match rng.below(4) {
                    0 => rng.pick(VALUES).trim_matches('"').to_string(),
                    1 => rng.pick(VALUES).to_string(),
                    2 => rng.below(1 << 20).to_string(),
                    _ => {
                        let v = *rng.pick(VALUES);
                        let m = mutate(&mut rng, v, &corpus);
                        m.replace('\n', "")
                    }
                };
                sets.push((key, value));
            }
        }
        match check(&text, &name, &sets) {
            Outcome::Resolved => ok += 1,
            Outcome::Refused => errors += 1,
            Outcome::Bad(why) => {
                let path = save_failure(i, &text, &sets, &why);
                failures.push(format!(
                    "input {i} (from {name}, {}): {why}",
                    path.display()
                ));
            }
        }
    }
    std::panic::set_hook(hook);
    eprintln!(
        "fuzz: {n} inputs in {:.1?}: {ok} resolved, {errors} refused with a location, {} failures",
        started.elapsed(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {n} inputs failed:\n{}",
        failures.len(),
        failures
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
