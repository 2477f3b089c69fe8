//! Progress on stderr: drawn on a terminal, absent otherwise, never changing the result;
//! `run --out --summary`; `compare --seeds`.

use crate::util::{bin, scratch};
use std::process::Command;

const QUICK: &str = "scenarios/quickstart.toml";

fn without_wall(path: &std::path::Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("wall_seconds");
    v
}

fn run_to(out: &std::path::Path, env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(bin());
    c.current_dir(crate::util::root())
        .args(["run", QUICK, "--out"])
        .arg(out)
        .env_remove("REFAULT_PROGRESS");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

#[test]
fn progress_only_on_a_terminal_and_the_result_is_the_same() {
    let d = scratch("progress");
    // Not a terminal: no progress line at all, only the closing line.
    let quiet = run_to(&d.join("quiet.json"), &[]);
    let err = String::from_utf8_lossy(&quiet.stderr);
    assert!(!err.contains('%') && !err.contains('\r'), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // Forced on (as on a terminal): the bar, then the line erased.
    let shown = run_to(&d.join("shown.json"), &[("REFAULT_PROGRESS", "1")]);
    let err = String::from_utf8_lossy(&shown.stderr);
    assert!(
        err.contains("quickstart [####################] 100%"),
        "{err}"
    );
    assert!(err.contains("\r\x1b[2K"), "{err}");
    assert_eq!(
        without_wall(&d.join("quiet.json")),
        without_wall(&d.join("shown.json"))
    );
    let bytes = |p: &str| {
        let mut v = without_wall(&d.join(p));
        v["wall_seconds"] = serde_json::json!(0);
        serde_json::to_string(&v).unwrap()
    };
    assert_eq!(bytes("quiet.json"), bytes("shown.json"));
}

/// The same through a real pseudo-terminal (util-linux `script`), where installed.
#[test]
fn progress_appears_on_a_pty() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no `script` (util-linux) to give the run a terminal");
        return;
    }
    let d = scratch("progress-pty");
    let out = d.join("pty.json");
    let cmd = format!("{} run {QUICK} --out {}", bin().display(), out.display());
    let o = Command::new("script")
        .current_dir(crate::util::root())
        .env_remove("REFAULT_PROGRESS")
        .args(["-qfec", &cmd, "/dev/null"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("quickstart [####################] 100%"),
        "{text}"
    );
    let plain = d.join("plain.json");
    run_to(&plain, &[]);
    assert_eq!(without_wall(&out), without_wall(&plain));
}

#[test]
fn out_and_summary_together() {
    let d = scratch("summary");
    let o = Command::new(bin())
        .current_dir(crate::util::root())
        .args(["run", QUICK, "--summary", "--out"])
        .arg(d.join("r.json"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.starts_with("scenario     quickstart"), "{stdout}");
    assert!(without_wall(&d.join("r.json"))["vmstat"].is_object());
    // With `--out -` the JSON owns stdout and the summary goes to stderr.
    let o = Command::new(bin())
        .current_dir(crate::util::root())
        .args(["run", QUICK, "--summary", "--out", "-"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["vmstat"].is_object());
    assert!(String::from_utf8_lossy(&o.stderr).contains("scenario     quickstart"));
    // --summary means nothing without --out.
    let o = Command::new(bin())
        .current_dir(crate::util::root())
        .args(["run", QUICK, "--summary"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn compare_with_seeds_reruns_each_side() {
    let d = scratch("compare-seeds");
    let a = d.join("a.json");
    let b = d.join("b.json");
    run_to(&a, &[]);
    let o = Command::new(bin())
        .current_dir(crate::util::root())
        .args(["run", QUICK, "--set", "vm.swappiness=200", "--out"])
        .arg(&b)
        .output()
        .unwrap();
    assert!(o.status.success());
    let table = d.join("t.json");
    let o = Command::new(bin())
        .args(["compare", "--seeds", "3", "--colour", "never", "--out"])
        .arg(&table)
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("stat  figure"), "{text}");
    assert!(text.contains("Amean     ops/s anon"), "{text}");
    assert!(text.contains("CoeffVar  ops/s anon"), "{text}");
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&table).unwrap()).unwrap();
    assert_eq!(t["seeds"], 3);
    let ops = &t["rows"][0];
    assert_eq!(ops["figure"], "ops/s anon");
    assert_eq!(ops["stats"][0]["n"], 3);
    // Three seeds differ where the seed matters: at swappiness 200 the anon set swaps and
    // its ops/s spread over the seeds (at 60 quickstart leaves the anon set alone, MADV_NORMAL,
    // and every seed gives the same figure); the first seed's run is the file itself.
    assert_eq!(ops["stats"][1]["n"], 3);
    assert!(ops["stats"][1]["stddev"].as_f64().unwrap() > 0.0);
    let first = without_wall(&a)["tasks"][0]["ops_per_sec"]
        .as_f64()
        .unwrap();
    let (min, max) = (
        ops["stats"][0]["min"].as_f64().unwrap(),
        ops["stats"][0]["max"].as_f64().unwrap(),
    );
    assert!(min <= first && first <= max);
    assert!(ops["p_value"][1].as_f64().is_some());
}
