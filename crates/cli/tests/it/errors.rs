//! Bad input: one clear line naming the place, exit code 2, no output file.

use crate::util::{bin, scratch};
use std::process::Command;

fn run_bad(name: &str, toml: Option<&str>, extra: &[&str]) -> String {
    let d = scratch(&format!("errors-{name}"));
    let path = d.join("s.toml");
    if let Some(t) = toml {
        std::fs::write(&path, t).unwrap();
    }
    let out = d.join("out.json");
    let o = Command::new(bin())
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{name}: exit code");
    assert!(!out.exists(), "{name}: an output file was written");
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{name}: not one line: {err}"
    );
    assert!(err.starts_with("refault: error: "), "{err}");
    err.replace(d.to_str().unwrap(), "DIR")
}

const OK: &str = "[machine]\nmemory = \"64M\"\n[[object]]\nname = \"a\"\nkind = \"anon\"\nsize = \"8M\"\n[[task]]\nname = \"t\"\n[[task.phase]]\naccess = \"touch-write\"\nobject = \"a\"\npattern = \"sequential\"\n";

#[test]
fn malformed_toml_names_the_line() {
    let e = run_bad("syntax", Some("[machine]\nmemory = \n"), &[]);
    assert!(e.contains("DIR/s.toml:2:"), "{e}");
}

#[test]
fn unknown_key_names_the_key_and_line() {
    let e = run_bad("unknown", Some("[machine]\nmemroy = \"1G\"\n"), &[]);
    assert!(e.contains("DIR/s.toml:2:") && e.contains("memroy"), "{e}");
}

#[test]
fn zero_memory_is_impossible() {
    let e = run_bad("zero", Some(&OK.replace("\"64M\"", "\"0\"")), &[]);
    assert!(e.contains("DIR/s.toml:2:") && e.contains("memory"), "{e}");
}

#[test]
fn cgroup_larger_than_memory_is_impossible() {
    let t = format!("{OK}[[cgroup]]\nname = \"c\"\n\"memory.max\" = \"1G\"\n");
    let e = run_bad("cgroup", Some(&t), &[]);
    assert!(e.contains("memory.max"), "{e}");
}

#[test]
fn workload_larger_than_address_space_is_impossible() {
    let e = run_bad("huge", Some(&OK.replace("\"8M\"", "\"32T\"")), &[]);
    assert!(e.contains("DIR/s.toml:") && e.contains("pages"), "{e}");
}

#[test]
fn missing_scenario_file_names_the_path() {
    let e = run_bad("missing", None, &[]);
    assert!(e.contains("DIR/s.toml"), "{e}");
}

#[test]
fn unknown_override_key_is_rejected() {
    let e = run_bad("override", Some(OK), &["--set", "vm.swapiness=10"]);
    assert!(e.contains("vm.swapiness"), "{e}");
}

#[test]
fn bad_result_file_in_compare_names_it() {
    let d = scratch("errors-compare");
    let p = d.join("x.json");
    std::fs::write(&p, "{not json").unwrap();
    let o = Command::new(bin())
        .arg("compare")
        .arg(&p)
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8(o.stderr).unwrap().contains("x.json"));
}
