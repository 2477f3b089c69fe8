//! The live-kernel twin's command: interrupted with SIGINT or SIGHUP mid-run it leaves
//! nothing behind; killed with SIGKILL its workers die with it and what it left is removed by
//! `refault twin --cleanup` (and by the next run); `--workdir` creates at most its last
//! component; a SIGINT while simulating after real runs ends it at once.

use crate::util::{bin, scratch};
use std::process::Command;

const LONG: &str = r#"
[machine]
memory = "512M"
[[device]]
name = "zram0"
preset = "zram"
[[swap.area]]
device = "zram0"
size = "64M"
[[cgroup]]
name = "box"
"memory.max" = "64M"
[[object]]
name = "anon"
kind = "anon"
size = "32M"
[[task]]
name = "anon"
cgroup = "box"
[[task.phase]]
access = "touch-write"
object = "anon"
pattern = "random"
think = "50us"
ops = 400000
"#;

/// The twin tests compare the host's swap areas and cgroups before and after: one at a time.
static HOST: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn host_lock() -> std::sync::MutexGuard<'static, ()> {
    HOST.lock().unwrap_or_else(|e| e.into_inner())
}

fn cgroup_root() -> &'static std::path::Path {
    let root = std::path::Path::new("/sys/fs/cgroup/memory");
    if root.exists() {
        root
    } else {
        std::path::Path::new("/sys/fs/cgroup")
    }
}

/// The memory cgroups whose name starts with `prefix`.
fn cgroups_named(prefix: &str) -> Vec<String> {
    std::fs::read_dir(cgroup_root())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

fn work_left(d: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("refault-twin-"))
        .collect()
}

/// No cgroup named `prefix…`, the swap areas as they were (`swaps`), and no work file in `d`
/// are left behind.
fn assert_host_clean(d: &std::path::Path, prefix: &str, swaps: &[String]) {
    assert_eq!(
        cgroups_named(prefix),
        Vec::<String>::new(),
        "cgroups left behind"
    );
    assert_eq!(
        refault_twin::host::active_swaps(),
        swaps,
        "swap not restored"
    );
    assert!(
        work_left(d).is_empty(),
        "work files left behind: {:?}",
        work_left(d)
    );
}

/// Start `refault twin` on LONG and wait until its workers run in its cgroups.
fn start_long_twin(name: &str) -> (std::path::PathBuf, std::process::Child, String) {
    let d = scratch(name);
    let scn = d.join("long.toml");
    std::fs::write(&scn, LONG).unwrap();
    let child = Command::new(bin())
        .args([
            "twin",
            scn.to_str().unwrap(),
            "--runs",
            "1",
            "--workdir",
            d.to_str().unwrap(),
        ])
        .spawn()
        .unwrap();
    let prefix = format!("refault-twin-{}-", child.id());
    let started = std::time::Instant::now();
    while cgroups_named(&prefix).is_empty() && started.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        !cgroups_named(&prefix).is_empty(),
        "the twin never created its cgroups"
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    (d, child, prefix)
}

fn interrupted_twin_cleans_up(sig: i32, name: &str) {
    if let Err(e) = refault_twin::host::preflight() {
        eprintln!("skipping: {e}");
        return;
    }
    let _host = host_lock();
    let swaps = refault_twin::host::active_swaps();
    let (d, mut child, prefix) = start_long_twin(name);
    unsafe { libc::kill(child.id() as i32, sig) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "interrupted twin should exit 2");
    assert_host_clean(&d, &prefix, &swaps);
}

#[test]
fn twin_cleans_up_after_sigint() {
    interrupted_twin_cleans_up(libc::SIGINT, "twin-sigint");
}

/// The terminal going away (SIGHUP) is an interruption like Ctrl-C, not a kill.
#[test]
fn twin_cleans_up_after_sighup() {
    interrupted_twin_cleans_up(libc::SIGHUP, "twin-sighup");
}

/// SIGKILL cannot be caught: the workers die with the twin (PR_SET_PDEATHSIG) instead of
/// holding their memory forever, and `refault twin --cleanup` removes the cgroups, the
/// active zram swap device and the work directory the dead run left, saying so.
#[test]
fn twin_killed_leaves_nothing_cleanup_does_not_remove() {
    if let Err(e) = refault_twin::host::preflight() {
        eprintln!("skipping: {e}");
        return;
    }
    let _host = host_lock();
    let swaps = refault_twin::host::active_swaps();
    let (d, mut child, prefix) = start_long_twin("twin-sigkill");
    let cgs = cgroups_named(&prefix);
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    // The workers follow their parent within moments.
    let procs = || -> usize {
        cgs.iter()
            .map(|c| {
                std::fs::read_to_string(cgroup_root().join(c).join("cgroup.procs"))
                    .unwrap_or_default()
                    .lines()
                    .count()
            })
            .sum()
    };
    let t = std::time::Instant::now();
    while procs() > 0 && t.elapsed().as_secs() < 5 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(procs(), 0, "workers outlived the killed twin");
    let out = Command::new(bin())
        .args(["twin", "--cleanup", "--workdir", d.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "--cleanup failed: {err}");
    assert!(err.contains("memory cgroup"), "{err}");
    assert!(err.contains("swap area /dev/zram"), "{err}");
    assert!(err.contains("work directory"), "{err}");
    assert_host_clean(&d, &prefix, &swaps);
    // Nothing left: a second cleanup says so.
    let again = Command::new(bin())
        .args(["twin", "--cleanup", "--workdir", d.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("nothing left behind"), "{err}");
}

const TINY: &str = r#"
[machine]
memory = "256M"
[[object]]
name = "anon"
kind = "anon"
size = "1M"
[[task]]
name = "anon"
[[task.phase]]
access = "touch-write"
object = "anon"
pattern = "sequential"
"#;

/// `--workdir a/b/c` with a/b missing is refused before anything is created; with only c
/// missing, c is created and removed again at the end.
#[test]
fn twin_workdir_creates_only_its_last_component() {
    if let Err(e) = refault_twin::host::preflight() {
        eprintln!("skipping: {e}");
        return;
    }
    let _host = host_lock();
    let d = scratch("twin-workdir");
    let scn = d.join("tiny.toml");
    std::fs::write(&scn, TINY).unwrap();
    let deep = d.join("missing/dir");
    let out = Command::new(bin())
        .args(["twin", scn.to_str().unwrap(), "--runs", "1", "--workdir"])
        .arg(&deep)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert!(!d.join("missing").exists(), "created the missing parent");
    let last = d.join("new");
    let out = Command::new(bin())
        .args(["twin", scn.to_str().unwrap(), "--runs", "1", "--workdir"])
        .arg(&last)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!last.exists(), "the created --workdir was left behind");
}

/// `refault twin` on a terminal (`REFAULT_PROGRESS=1`) draws the progress line over its
/// simulations and real runs, the ETA from the real runs done, and prints each run's line
/// above it (the bar erased first); off a terminal, no progress line.
#[test]
fn twin_shows_progress_with_an_eta_from_the_runs_done() {
    if let Err(e) = refault_twin::host::preflight() {
        eprintln!("skipping: {e}");
        return;
    }
    let _host = host_lock();
    let d = scratch("twin-progress");
    let scn = d.join("tiny.toml");
    std::fs::write(&scn, TINY).unwrap();
    let twin = |progress: &str| {
        Command::new(bin())
            .args(["twin", scn.to_str().unwrap(), "--runs", "2"])
            .arg("--workdir")
            .arg(&d)
            .env("REFAULT_PROGRESS", progress)
            .output()
            .unwrap()
    };
    let o = twin("1");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("twin tiny: simulating ["), "{err}");
    assert!(err.contains("twin tiny: real run 1/"), "{err}");
    // After the first run, an ETA from it.
    assert!(err.contains("twin tiny: real run 2/"), "{err}");
    assert!(
        err.split('\r')
            .any(|l| l.contains("twin tiny: real run 2/2 [") && l.contains("ETA ")),
        "{err}"
    );
    // Each run's line is printed on a line of its own, the bar erased first.
    assert!(err.contains("\r\x1b[2Ktwin: tiny run 1 done in "), "{err}");
    let o = twin("0");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains('\r') && !err.contains('%'), "{err}");
    assert!(err.contains("twin: tiny run 1 done in "), "{err}");
}

/// A scenario that takes the debug build many seconds to simulate (over the flusher's
/// phases) and no time at all to run.
const SLOW_SIM: &str = r#"
[machine]
memory = "256M"
[[object]]
name = "anon"
kind = "anon"
size = "8M"
[[task]]
name = "anon"
[[task.phase]]
access = "touch"
object = "anon"
pattern = "random"
ops = 3000000
"#;

/// `refault fidelity` simulates each scenario after the previous one's real runs: a
/// Ctrl-C then ends it at once instead of after the simulation and the next setup.
#[test]
fn fidelity_sigint_while_simulating_after_real_runs_is_honoured() {
    use std::io::BufRead;
    if let Err(e) = refault_twin::host::preflight() {
        eprintln!("skipping: {e}");
        return;
    }
    let _host = host_lock();
    let d = scratch("twin-sigint-sim");
    let suite = d.join("suite");
    std::fs::create_dir(&suite).unwrap();
    std::fs::write(suite.join("a.toml"), TINY).unwrap();
    std::fs::write(suite.join("b.toml"), SLOW_SIM).unwrap();
    let mut child = Command::new(bin())
        .args(["fidelity", "--quick", "--suite"])
        .arg(&suite)
        .arg("--workdir")
        .arg(&d)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    for line in err.lines() {
        let line = line.unwrap();
        seen.push(line.clone());
        if line.starts_with("fidelity: b ") {
            break;
        }
    }
    assert!(
        seen.iter().any(|l| l.starts_with("fidelity: b ")),
        "never reached the second scenario: {seen:?}"
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let t = std::time::Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let secs = t.elapsed().as_secs_f64();
    assert!(
        secs < 3.0,
        "SIGINT while simulating took {secs:.1} s to end the run"
    );
    assert!(!status.success());
    assert!(
        work_left(&d).is_empty(),
        "work files left behind: {:?}",
        work_left(&d)
    );
}

/// The VM twin boots the smallest kernel (Debian's 6.1 cloud kernel, fetched by
/// scripts/vm-setup.sh, which scripts/test.sh runs first) with a tiny scenario and brings
/// the guest's counters and zone state back. Skipped, saying why, where QEMU or the kernel
/// is not there.
#[test]
fn vm_twin_boots_the_smallest_kernel_and_counters_come_back() {
    if let Err(e) = refault_twin::vm::qemu_available() {
        eprintln!("skipping the VM twin test: {e}");
        return;
    }
    let cache = refault_twin::vm::default_cache();
    if !cache.join("kernels/debian-6.1/vmlinuz").is_file() {
        eprintln!(
            "skipping the VM twin test: no debian-6.1 kernel in {} (scripts/vm-setup.sh fetches it)",
            cache.display()
        );
        return;
    }
    let d = scratch("twin-vm");
    let scn = d.join("tiny.toml");
    std::fs::write(&scn, VM_TINY).unwrap();
    let out = d.join("out.json");
    let t = std::time::Instant::now();
    let o = Command::new(bin())
        .args(["twin", "--vm", "--kernel", "debian-6.1", "--runs", "1"])
        .args(["--boot-timeout", "300", "--workdir"])
        .arg(&d)
        .arg("--out")
        .arg(&out)
        .arg(&scn)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "twin --vm failed: {err}");
    eprintln!("twin --vm took {:.1} s", t.elapsed().as_secs_f64());
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(
        j["kernel"].as_str().unwrap().starts_with("6.1."),
        "{}",
        j["kernel"]
    );
    // The reader's 32 MiB came from the virtio disk: 32768 KiB paged in, at least.
    let pgpgin = j["real"][0]["pgpgin"].as_u64().unwrap();
    assert!(pgpgin >= 32768, "pgpgin {pgpgin}");
    assert!(j["real"][0]["pgfault"].as_u64().unwrap() >= 4096);
    let z = j["vm"]["zoneinfo_before"].as_str().unwrap();
    assert!(z.contains("zone    DMA32") && z.contains("managed"), "{z}");
    assert!(j["vm"]["buddyinfo_after"][0]
        .as_str()
        .unwrap()
        .contains("DMA32"));
    // --accel auto resolved to one of the two, and says why.
    let accel = j["vm"]["accel"].as_str().unwrap();
    assert!(accel == "kvm" || accel == "tcg", "{accel}");
    assert!(
        j["vm"]["accel_reason"]
            .as_str()
            .unwrap()
            .starts_with("auto: "),
        "{}",
        j["vm"]["accel_reason"]
    );
    // The simulation followed the guest's kernel version.
    assert_eq!(j["vm"]["simulated_kernel"], "6.1");
    // The guest probed its disk: a positive latency and read rate.
    let p = &j["vm"]["disk_probe"];
    assert!(p["latency_ns"].as_u64().unwrap() > 0, "{p}");
    assert!(p["read_bytes_per_sec"].as_u64().unwrap() > 0, "{p}");
    // ... and its CPU costs (no swap here: no anon reclaim, swap-in or zram stage), which
    // the simulation used.
    let c = &j["vm"]["guest_runs"][0]["cpu_costs"];
    assert_eq!(c["faults"], 4096, "{c}");
    assert!(c["fault_ns"].as_u64().unwrap() > 0, "{c}");
    assert!(c["file_reclaimed"].as_u64().unwrap() > 0, "{c}");
    assert_eq!(c["anon_reclaimed"], 0, "{c}");
    let costs = &j["vm"]["cost_profile"]["costs"];
    assert!(costs["minor_fault_ns"].as_u64().unwrap() > 0, "{costs}");
    assert!(
        work_left(&d).is_empty(),
        "work files left behind: {:?}",
        work_left(&d)
    );
}

const VM_TINY: &str = r#"
[machine]
memory = "256M"
[[device]]
name = "disk"
preset = "nvme"
[fs]
device = "disk"
[[object]]
name = "data"
kind = "file"
size = "32M"
[[object]]
name = "anon"
kind = "anon"
size = "16M"
[[task]]
name = "reader"
[[task.phase]]
access = "read"
object = "data"
pattern = "sequential"
pages_per_op = 8
[[task]]
name = "anon"
[[task.phase]]
access = "touch-write"
object = "anon"
pattern = "sequential"
"#;

/// A scratch directory `name` holding a suite of one scenario, `tiny` ([`VM_TINY`]), and a
/// guest run of it as `fidelity --vm --out` saves one: a 6.1 guest with one DMA32 zone of
/// 50000 pages, 40000 free, that scanned and reclaimed 9000 file pages.
fn replay_fixture(name: &str) -> (std::path::PathBuf, std::path::PathBuf, serde_json::Value) {
    let d = scratch(name);
    let suite = d.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::write(
        suite.join("tiny.toml"),
        format!("name = \"tiny\"\n{VM_TINY}"),
    )
    .unwrap();
    let zoneinfo = "Node 0, zone    DMA32\n  per-node stats\n      nr_inactive_file 300\n      nr_active_file 20\n  pages free     40000\n        min      400\n        low      500\n        high     600\n        spanned  50000\n        present  50000\n        managed  50000\n        protection: (0, 0, 0, 0, 0)\n";
    let run = serde_json::json!({
        "kernel": "6.1.0-50-cloud-amd64",
        "vmstat": {"pgscan_file": 9000, "pgsteal_file": 9000, "pgpgin": 32768},
        "zoneinfo_before": zoneinfo, "zoneinfo_after": zoneinfo,
        "buddyinfo_before": "", "buddyinfo_after": "", "lru_gen": "",
        "task_seconds": [["reader", 0.5]], "memcg_stat": {}
    });
    (d, suite, run)
}

/// `fidelity --vm --replay FILE` boots nothing: it simulates each scenario again on the
/// guest machine the saved runs describe (the guest's free pages, its page cache, its
/// kernel version) and compares with the saved counters. A file without the scenario's runs
/// is an error that names it.
#[test]
fn fidelity_vm_replay_resimulates_saved_guest_runs() {
    let (d, suite, run) = replay_fixture("fidelity-replay");
    let saved = d.join("saved.json");
    let doc = serde_json::json!({"scenarios": [{"scenario": "tiny",
        "vm": {"accel": "tcg", "accel_reason": "asked for", "guest_runs": [run.clone(), run]}}]});
    std::fs::write(&saved, doc.to_string()).unwrap();
    // `fidelity --vm --replay saved.json --suite suite`, with what each case adds.
    let replay = || {
        let mut c = Command::new(bin());
        c.args(["fidelity", "--vm", "--replay"])
            .arg(&saved)
            .arg("--suite")
            .arg(&suite);
        c
    };
    let out = d.join("out.json");
    let o = replay().arg("--out").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "fidelity --replay failed: {err}");
    assert!(err.contains("replaying the guest runs saved in"), "{err}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let s = &j["scenarios"][0];
    assert_eq!(s["runs"], 2);
    assert_eq!(s["vm"]["simulated_kernel"], "6.1");
    // The guest's zone as its zoneinfo gives it: 50000 present pages, 40000 of them free
    // (its 320 page-cache pages among the 10000 in use are faulted in by their own task).
    assert_eq!(s["vm"]["simulated_zones"][0][1], 50000);
    let row = s["counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["counter"] == "pgscan_file")
        .unwrap()
        .clone();
    assert_eq!(row["real_mean"], 9000.0);
    assert!(s["simulated_task_seconds"]
        .to_string()
        .contains("guest-page-cache"));
    // The saved runs are written again, so a replay's output can be replayed.
    assert_eq!(s["vm"]["guest_runs"].as_array().unwrap().len(), 2);
    // On a terminal (forced), the progress line over the suite while it simulates; the
    // scenario's line and the notes above it, the table on standard output untouched.
    let o = replay().env("REFAULT_PROGRESS", "1").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("fidelity 1/1 tiny: simulating ["), "{err}");
    assert!(
        err.contains("\r\x1b[2Ktwin --vm: simulating with model.kernel"),
        "{err}"
    );
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        !table.contains('\r') && table.contains("pgscan_file"),
        "{table}"
    );
    // A file saved by a `--only` run: the suite's other scenarios are not replayed, and
    // the table says so (it had failed on the first of them).
    std::fs::write(suite.join("zz.toml"), format!("name = \"zz\"\n{VM_TINY}")).unwrap();
    let o = replay().output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("has no saved runs of zz: not replayed"),
        "{err}"
    );
    // A file without this scenario's runs.
    std::fs::write(&saved, r#"{"scenarios": []}"#).unwrap();
    let o = replay().output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("saved.json") && err.contains("no saved runs of tiny"),
        "{err}"
    );
}

/// `fidelity --vm --replay` of runs that recorded the guest's CPU cost probe simulates with
/// the measured costs (printed, and saved as `vm.cost_profile`); `--scenario-costs` and runs
/// saved without the probe simulate with the scenario's `model.cost`, the same counters.
#[test]
fn fidelity_vm_replay_applies_the_guest_cpu_costs() {
    let (d, suite, run) = replay_fixture("fidelity-costs");
    // 20 us per fault (kf = 20000 / 650), 19 us per file page reclaimed (kr = 100), 30 us
    // per cached read.
    let mut probed = run.clone();
    probed["cpu_costs"] = serde_json::json!({
        "fault_ns": 20_480_000, "faults": 1024, "touch_ns": 204_800, "touches": 1024,
        "read_ns": 30_720_000, "reads": 1024, "file_reclaim_ns": 19_456_000,
        "file_scanned": 1024, "file_reclaimed": 1024, "anon_reclaim_ns": 0,
        "anon_scanned": 0, "anon_reclaimed": 0, "anon_refill": 0, "pswpout": 0,
        "swapin_ns": 0, "pswpin": 0
    });
    let replay = |runs: serde_json::Value, name: &str, extra: &[&str]| {
        let saved = d.join(format!("{name}.json"));
        let doc = serde_json::json!({"scenarios": [{"scenario": "tiny",
            "vm": {"accel": "tcg", "accel_reason": "asked for", "guest_runs": runs}}]});
        std::fs::write(&saved, doc.to_string()).unwrap();
        let out = d.join(format!("{name}-out.json"));
        let o = Command::new(bin())
            .args(["fidelity", "--vm", "--replay"])
            .arg(&saved)
            .arg("--suite")
            .arg(&suite)
            .arg("--out")
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert!(o.status.success(), "fidelity --replay failed: {err}");
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        (j["scenarios"][0].clone(), err)
    };
    let (old, err) = replay(serde_json::json!([run.clone(), run.clone()]), "old", &[]);
    assert!(old["vm"]["cost_profile"].is_null());
    assert!(!err.contains("the guest's CPU costs"), "{err}");
    let (measured, err) = replay(
        serde_json::json!([probed.clone(), probed.clone()]),
        "probed",
        &[],
    );
    assert!(
        err.contains("the guest's CPU costs (2 probe(s), us): anon fault 20.0"),
        "{err}"
    );
    let p = &measured["vm"]["cost_profile"];
    assert_eq!(p["costs"]["pagecache_hit_ns"], 30_000);
    assert_eq!(p["costs"]["scan_per_page_ns"], 4_000);
    assert_eq!(p["costs"]["reclaim_per_page_ns"], 15_000);
    // 500 * 20000 / 650 = 15384.6
    assert_eq!(p["costs"]["minor_fault_ns"], 15_385);
    // The guest's CPU is the simulated machine's: the reader's 8192 cached-page reads
    // alone take 8192 * 30 us.
    let seconds = |s: &serde_json::Value| -> f64 {
        s["simulated_task_seconds"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t[0] == "reader")
            .unwrap()[1]
            .as_f64()
            .unwrap()
    };
    assert!(seconds(&measured) > 0.24, "{measured}");
    assert!(seconds(&old) < 0.2, "{old}");
    let (scenario_costs, _) = replay(
        serde_json::json!([probed.clone(), probed]),
        "scenario-costs",
        &["--scenario-costs"],
    );
    assert!(scenario_costs["vm"]["cost_profile"].is_null());
    assert_eq!(scenario_costs["counters"], old["counters"]);
    assert_eq!(
        scenario_costs["simulated_task_seconds"],
        old["simulated_task_seconds"]
    );
}
