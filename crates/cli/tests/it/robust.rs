//! Robustness (issue 11): outputs that never clobber, runs that never hang, sizes that work or
//! are refused at load time, checks that observe without changing the result. Every command
//! runs as a subprocess under a hang guard (a timeout that kills it; never a speed assertion).
//!
//! `REFAULT_TEST_BIN=/path/to/refault` runs these tests against another binary (to see them
//! fail on an older one).

use crate::util::{root, scratch};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn refault() -> PathBuf {
    std::env::var_os("REFAULT_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(crate::util::bin)
}

/// What a guarded run did.
struct Ran {
    /// None: killed by a signal or by the hang guard.
    code: Option<i32>,
    timed_out: bool,
    stdout: String,
    stderr: String,
    /// Peak resident set of the child's own program (KiB): the highest `VmHWM` of
    /// /proc/PID/status seen while it ran, polled every 2 ms. (wait4()'s ru_maxrss is not
    /// used: a child spawned by vfork/exec inherits the spawning process's high-water mark,
    /// here the test binary's, which other tests' in-process simulations drive past 100 MB.)
    max_rss_kib: i64,
}

/// Runs `refault args...` with a hang guard of `limit`.
fn run_guarded(args: &[&str], limit: Duration) -> Ran {
    run_guarded_bin(&refault(), args, limit)
}

/// [`run_guarded`] with another binary of this tree (the release build of the test suite).
// The child is reaped by wait4(), which Clippy does not see.
#[allow(clippy::zombie_processes)]
fn run_guarded_bin(bin: &Path, args: &[&str], limit: Duration) -> Ran {
    let d = scratch(&format!(
        "robust-io-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let (out_p, err_p) = (d.join("stdout"), d.join("stderr"));
    let mut child = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_p).unwrap())
        .stderr(std::fs::File::create(&err_p).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let start = Instant::now();
    let mut timed_out = false;
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut max_rss_kib = 0i64;
    let status_path = format!("/proc/{pid}/status");
    loop {
        if let Ok(st) = std::fs::read_to_string(&status_path) {
            if let Some(kib) = st
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
            {
                max_rss_kib = max_rss_kib.max(kib);
            }
        }
        // SAFETY: polling our own child.
        if unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) } == pid {
            break;
        }
        if !timed_out && start.elapsed() > limit {
            timed_out = true;
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let code = (!timed_out && libc::WIFEXITED(status)).then(|| libc::WEXITSTATUS(status));
    Ran {
        code,
        timed_out,
        stdout: std::fs::read_to_string(&out_p).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_p).unwrap_or_default(),
        max_rss_kib,
    }
}

fn scenario(s: &str) -> String {
    root()
        .join(format!("scenarios/{s}.toml"))
        .to_string_lossy()
        .into_owned()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

// ---- 1. outputs ----

#[test]
fn out_to_a_device_node_writes_through_and_keeps_the_node() {
    if !is_root() {
        eprintln!("skipped: mknod needs root");
        return;
    }
    let d = scratch("robust-devnull");
    let null = d.join("null");
    let st = Command::new("mknod")
        .arg(&null)
        .args(["c", "1", "3"])
        .status()
        .unwrap();
    assert!(st.success());
    let r = run_guarded(
        &[
            "run",
            &scenario("quickstart"),
            "--out",
            null.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    use std::os::unix::fs::FileTypeExt;
    let ft = std::fs::symlink_metadata(&null).unwrap().file_type();
    assert!(ft.is_char_device(), "the device node was replaced: {ft:?}");
    let _ = std::fs::remove_file(&null);
}

#[test]
fn out_to_a_symlink_keeps_the_symlink() {
    let d = scratch("robust-symlink");
    let real = d.join("real.json");
    std::fs::write(&real, "old").unwrap();
    let link = d.join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let r = run_guarded(
        &[
            "run",
            &scenario("quickstart"),
            "--out",
            link.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&real).unwrap()).unwrap();
    assert_eq!(v["scenario"]["name"], "quickstart");
}

#[test]
fn out_dash_writes_the_json_to_stdout() {
    let d = scratch("robust-dash");
    let r = run_guarded(
        &["run", &scenario("quickstart"), "--out", "-"],
        Duration::from_secs(120),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("stdout is the JSON");
    assert_eq!(v["scenario"]["name"], "quickstart");
    assert!(!d.join("-").exists() && !Path::new("-").exists());
}

// ---- 2. temporary files ----

#[test]
fn stale_temp_files_of_dead_runs_are_removed_by_the_next_write() {
    let d = scratch("robust-stale");
    // pids above the kernel's maximum (2^22) cannot be alive.
    let stale = d.join(".r.json.tmp-999999999-0");
    std::fs::write(&stale, "partial").unwrap();
    let out = d.join("r.json");
    let r = run_guarded(
        &[
            "run",
            &scenario("quickstart"),
            "--out",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(out.exists());
    assert!(!stale.exists(), "the dead run's temp file is still there");
}

#[test]
fn a_signal_during_the_write_leaves_no_temp_file() {
    let d = scratch("robust-sigterm");
    let out = d.join("r.json");
    let mut caught = 0;
    // The temp file lives for the few milliseconds of the write: send SIGTERM as soon as it
    // shows up, a few times over.
    for _ in 0..6 {
        let _ = std::fs::remove_file(&out);
        let mut child = Command::new(refault())
            .args(["run", &scenario("thrash-cache")])
            .args(["--set", "run.duration=3s", "--set", "run.warmup=1s"])
            .args(["--out", out.to_str().unwrap()])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            let tmp = std::fs::read_dir(&d)
                .unwrap()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(".r.json.tmp-"));
            if tmp {
                // SAFETY: signalling our own child.
                unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
                caught += 1;
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(300), "hang guard");
        }
        let _ = child.wait();
        let left: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp-"))
            .collect();
        assert!(left.is_empty(), "temp files left behind: {left:?}");
    }
    eprintln!("SIGTERM sent while the temp file existed in {caught} of 6 runs");
}

// ---- 3. --out checked before simulating ----

#[test]
fn out_into_a_missing_directory_fails_before_simulating() {
    let d = scratch("robust-missing-dir");
    let out = d.join("no-such-dir").join("r.json");
    // s1-fio takes minutes in a test build: an error after simulating trips the guard.
    let r = run_guarded(
        &["run", &scenario("s1-fio"), "--out", out.to_str().unwrap()],
        Duration::from_secs(30),
    );
    assert!(!r.timed_out, "the error came only after simulating");
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("does not exist"), "{}", r.stderr);
}

// ---- 4-6. hangs ----

const SMALL: &str = "[machine]\nmemory = \"64M\"\n";

#[test]
fn a_scenario_without_tasks_or_duration_is_refused() {
    let d = scratch("robust-no-tasks");
    let s = write(&d, "s.toml", &format!("name = \"idle\"\n{SMALL}"));
    let r = run_guarded(&["run", &s], Duration::from_secs(30));
    assert!(!r.timed_out, "hangs");
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("no [[task]]"), "{}", r.stderr);
    // With a duration it is an idle machine, and ends.
    let r = run_guarded(
        &["run", &s, "--set", "run.duration=10s"],
        Duration::from_secs(30),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

const EMPTY_FILE: &str =
    "[[object]]\nname = \"f\"\nkind = \"file\"\nsize = \"1M\"\nexists = false\n";

#[test]
fn a_forever_loop_reading_a_file_that_never_exists_is_refused_at_load_time() {
    let d = scratch("robust-noexist");
    let s = write(
        &d,
        "s.toml",
        &format!(
            "[run]\nduration = \"1us\"\n{SMALL}{EMPTY_FILE}[[task]]\nname = \"r\"\nrepeat = 0\n\
             [[task.phase]]\naccess = \"read\"\nobject = \"f\"\n"
        ),
    );
    let r = run_guarded(&["run", &s], Duration::from_secs(30));
    assert!(!r.timed_out, "hangs");
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("s.toml:"), "no location: {}", r.stderr);
    assert!(r.stderr.contains("never advance"), "{}", r.stderr);
}

#[test]
fn a_zero_cost_loop_the_loader_cannot_see_ends_with_a_no_progress_error() {
    let d = scratch("robust-no-progress");
    // The file gets data only from a task starting at 10 s; the reader spins at time 0.
    let s = write(
        &d,
        "s.toml",
        &format!(
            "[run]\nduration = \"20s\"\n{SMALL}{EMPTY_FILE}[[task]]\nname = \"r\"\nrepeat = 0\n\
             [[task.phase]]\nname = \"spin\"\naccess = \"read\"\nobject = \"f\"\n\
             [[task]]\nname = \"w\"\nstart = \"10s\"\n[[task.phase]]\naccess = \"write\"\nobject = \"f\"\n"
        ),
    );
    let r = run_guarded(&["run", &s], Duration::from_secs(120));
    assert!(!r.timed_out, "hangs");
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    for want in ["no progress", "task `r`", "phase `spin`"] {
        assert!(r.stderr.contains(want), "missing {want:?}: {}", r.stderr);
    }
}

#[test]
fn dirty_ratio_zero_does_not_spin_the_flusher() {
    let d = scratch("robust-dirty0");
    let out = d.join("r.json");
    let r = run_guarded(
        &[
            "run",
            &scenario("s0-pgbench"),
            "--set",
            "run.duration=30s",
            "--set",
            "run.warmup=0s",
            "--set",
            "vm.dirty_ratio=0",
            "--out",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert!(!r.timed_out, "the flusher spins");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

// ---- 12 (load-time part): legacy balance with the multi-gen LRU ----

#[test]
fn legacy_balance_with_the_multigen_lru_is_refused_at_load_time() {
    let d = scratch("robust-legacy-mglru");
    let text = std::fs::read_to_string(scenario("quickstart")).unwrap()
        + "\n[policy]\nlru = \"mglru\"\nbalance = \"legacy\"\n";
    let s = write(&d, "s.toml", &text);
    let r = run_guarded(&["run", &s], Duration::from_secs(30));
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let line = text.lines().position(|l| l.starts_with("balance")).unwrap() + 1;
    assert!(
        r.stderr.contains(&format!("s.toml:{line}:")),
        "no location of policy.balance (line {line}): {}",
        r.stderr
    );
    assert!(!r.stderr.contains("simulating"), "{}", r.stderr);
}

// ---- 7. sizes ----

/// A machine or object size with a small workload: 1,000 pages touched.
fn small_workload(memory: &str, object: &str) -> String {
    format!(
        "[machine]\nmemory = \"{memory}\"\n[[object]]\nname = \"a\"\nkind = \"anon\"\n\
         size = \"{object}\"\n[[task]]\nname = \"t\"\n[[task.phase]]\naccess = \"touch-write\"\n\
         object = \"a\"\npattern = \"random\"\nops = 1000\n"
    )
}

#[test]
fn a_16_tib_machine_is_refused_at_load_time_with_a_location() {
    let d = scratch("robust-16t");
    let s = write(&d, "s.toml", &small_workload("16T", "4M"));
    let r = run_guarded(&["run", &s], Duration::from_secs(60));
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("s.toml:2:"), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

#[test]
fn a_large_machine_with_a_small_workload_uses_little_host_memory() {
    let d = scratch("robust-1t");
    // 128 GiB here (a 37-byte-per-frame table would be 1.2 GB resident): debug builds'
    // end-of-run invariant check walks every frame and allocates a byte per frame, which
    // takes minutes at 1 TiB. The release binary runs 1 TiB in 0.03 s and 4.7 MB.
    let s = write(&d, "s.toml", &small_workload("128G", "4M"));
    let r = run_guarded(&["run", &s, "--out", "-"], Duration::from_secs(120));
    assert!(!r.timed_out, "hangs");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        (1..96 * 1024).contains(&r.max_rss_kib),
        "peak RSS {} KiB for a 128 GiB machine touching 1,000 pages",
        r.max_rss_kib
    );
}

#[test]
fn a_huge_anon_object_with_a_small_workload_runs_in_little_memory() {
    let d = scratch("robust-16t-object");
    // 16 TiB itself is one page over the limit: refused at load time, with its location.
    let s = write(&d, "s.toml", &small_workload("1G", "16T"));
    let r = run_guarded(&["run", &s], Duration::from_secs(60));
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("s.toml:6:"), "{}", r.stderr);
    // A 2 TiB object: a 4 GiB page-table array, of which the workload touches a few pages.
    // (16 TiB - 1 MiB works too, but debug builds' end-of-run invariant check walks every
    // page-table entry, which takes minutes at that size.)
    let s = write(&d, "s.toml", &small_workload("1G", "2T"));
    let r = run_guarded(&["run", &s, "--out", "-"], Duration::from_secs(120));
    assert!(!r.timed_out, "hangs");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        (1..256 * 1024).contains(&r.max_rss_kib),
        "peak RSS {} KiB for a 16 TiB object touched at 1,000 pages",
        r.max_rss_kib
    );
}

// ---- 8. --check observes ----

/// Shorter runs of the big scenarios, so that a test build checks each in seconds.
fn short(name: &str) -> &'static [&'static str] {
    match name {
        "bench-16g" => &["run.duration=20ms"],
        "bench-hits" | "bench-mixed" => &["run.duration=10ms"],
        "s0-parallelio" => &["run.duration=2s", "run.warmup=1s"],
        "s0-pgbench" => &["run.duration=300s", "run.warmup=60s"],
        // Its clients start at 120 s, after the read of the database.
        "s0-pgbench-scaled" => &["run.duration=300s", "run.warmup=60s"],
        "s1-fio" => &["run.duration=100ms", "run.warmup=50ms"],
        "s1-memcached" => &["run.duration=3s", "run.warmup=1s"],
        "s2-vm-scalability" => &["run.duration=3s", "run.warmup=1s"],
        "s2-linpack" => &["run.duration=3s"],
        // The caches are dropped and vm.min_free_kbytes lowered before phase 3 at 33 s: in
        // the short run, at 8 s.
        "s4-highalloc" => &[
            "run.duration=10s",
            "run.warmup=2s",
            "run.drop_caches.33s.at=8s",
            "run.sysctl.33s.at=8s",
        ],
        "thrash-cache" => &["run.duration=4s", "run.warmup=1s"],
        "s3-slab-boost" => &[
            "run.duration=25s",
            "machine.memory=512M",
            "machine.dma32=192M",
        ],
        _ => &[],
    }
}

/// How often `--check` runs in the comparison: every 2,000 events where a check is cheap; the
/// 1 GiB swap scenarios (S2) and the fragmentation scenario (S4) walk every frame and every
/// pageblock per check and run millions of events even in their short forms, so they are
/// checked every 100,000–200,000 events (still 17–62 checks per run, each seeing reclaim in
/// progress); S1's fio (1.9 M events in its short form) every 50,000 (39 checks) and S3's
/// file stream (0.5 M events, slab and shrinker state besides the frames) every 20,000 (25
/// checks), which took 14 and 19 s of the test build's CPU at 2,000.
fn check_every(name: &str) -> u64 {
    if name.starts_with("s2-") {
        200_000
    } else if name.starts_with("s4-") {
        100_000
    } else if name.starts_with("s1-") {
        50_000
    } else if name.starts_with("s3-") {
        20_000
    } else {
        2000
    }
}

/// Every bundled scenario (in its short form) gives the same result with `--check` on this
/// test build (debug assertions on) as without it on the release build the suite runs the
/// reproductions with (`REFAULT_RELEASE_BIN`; this build when it is not set).
#[test]
fn check_does_not_change_any_bundled_scenario() {
    let d = scratch("robust-check");
    let mut names: Vec<String> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".toml").map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 9, "{names:?}");
    for name in &names {
        let every = check_every(name);
        let json = |check: bool| {
            let out = d.join(format!("{name}-{check}.json"));
            let mut args = vec!["run".to_string(), scenario(name)];
            for s in short(name) {
                args.extend(["--set".to_string(), s.to_string()]);
            }
            if check {
                args.extend(["--check".to_string(), every.to_string()]);
            }
            args.extend(["--out".to_string(), out.to_string_lossy().into_owned()]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            // The plain run on the release build, the checked one on this test build with
            // its debug assertions: equal results show that neither --check nor the debug
            // assertions change what is simulated (and the release run costs a fraction).
            let bin = if check {
                refault()
            } else {
                crate::util::results_bin()
            };
            let r = run_guarded_bin(&bin, &args, Duration::from_secs(300));
            assert_eq!(r.code, Some(0), "{name} (check {check}): {}", r.stderr);
            let mut v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
            v.as_object_mut().unwrap().remove("wall_seconds");
            let interval = v["scenario"]["model"]
                .as_object_mut()
                .unwrap()
                .remove("check_interval")
                .unwrap();
            (v, interval)
        };
        let (plain, _) = json(false);
        let (checked, interval) = json(true);
        assert_eq!(
            interval, every,
            "{name}: the check interval used is recorded"
        );
        assert!(plain["events"].as_u64().unwrap() > 0, "{name}");
        if plain != checked {
            let diff: Vec<String> = plain["vmstat"]
                .as_object()
                .unwrap()
                .iter()
                .filter(|(k, v)| checked["vmstat"][k.as_str()] != **v)
                .map(|(k, v)| format!("{k}: {v} -> {}", checked["vmstat"][k.as_str()]))
                .collect();
            panic!(
                "{name}: --check {every} on the test build changed the result (events {} -> {}; {diff:?})",
                plain["events"], checked["events"]
            );
        }
    }
}
