//! The live-kernel twin's command: interrupted with SIGINT mid-run, it leaves nothing behind.

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

#[test]
fn twin_cleans_up_after_sigint() {
    if let Err(e) = refault_twin::host::preflight() {
        eprintln!("skipping: {e}");
        return;
    }
    let d = scratch("twin-sigint");
    let scn = d.join("long.toml");
    std::fs::write(&scn, LONG).unwrap();
    let swaps = refault_twin::host::active_swaps();
    let mut child = Command::new(bin())
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
    let pid = child.id();
    // Wait until the twin has set up its cgroups and started the workers.
    let prefix = format!("refault-twin-{pid}-");
    let root = std::path::Path::new("/sys/fs/cgroup/memory");
    let root = if root.exists() {
        root
    } else {
        std::path::Path::new("/sys/fs/cgroup")
    };
    let started = std::time::Instant::now();
    let ours = || -> Vec<String> {
        std::fs::read_dir(root)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&prefix))
            .collect()
    };
    while ours().is_empty() && started.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!ours().is_empty(), "the twin never created its cgroups");
    std::thread::sleep(std::time::Duration::from_millis(500));
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "interrupted twin should exit 2");
    assert_eq!(ours(), Vec::<String>::new(), "cgroups left behind");
    assert_eq!(
        refault_twin::host::active_swaps(),
        swaps,
        "swap not restored"
    );
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("refault-twin-"))
        .collect();
    assert!(left.is_empty(), "work files left behind: {left:?}");
}
