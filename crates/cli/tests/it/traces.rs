//! Trace replay end to end: record a scenario's events, replay them, compare; convert;
//! errors; a lackey recording of a real program.

use crate::util::{bin, root, scratch};
use std::path::Path;
use std::process::{Command, Output};

fn refault(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// quickstart.toml with its tasks replaced by replays of `trace`.
fn replay_scenario(dir: &Path, trace: &str) -> std::path::PathBuf {
    let s = std::fs::read_to_string(root().join("scenarios/quickstart.toml")).unwrap();
    let i = s.find("[[task]]").unwrap();
    let mut t = s[..i].to_string();
    for task in ["anon", "reader"] {
        t += &format!(
            "[[task]]\nname = \"{task}\"\n[[task.phase]]\nsource = {{ trace = \"{trace}\", task = \"{task}\" }}\n\n"
        );
    }
    let p = dir.join("replay.toml");
    std::fs::write(&p, t).unwrap();
    p
}

fn result_without_scenario(p: &Path) -> String {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("wall_seconds");
    o.remove("scenario");
    serde_json::to_string(&v).unwrap()
}

#[test]
fn a_recorded_scenario_replays_to_identical_results() {
    let d = scratch("trace-replay");
    let q = root().join("scenarios/quickstart.toml");
    let q = q.to_str().unwrap();
    let rft = d.join("q.rft");
    ok(&refault(&[
        "trace",
        "record-scenario",
        q,
        rft.to_str().unwrap(),
    ]));
    // Through the text form and back: the same bytes.
    let txt = d.join("q.txt");
    ok(&refault(&[
        "trace",
        "convert",
        rft.to_str().unwrap(),
        txt.to_str().unwrap(),
    ]));
    let rft2 = d.join("q2.rft");
    ok(&refault(&[
        "trace",
        "convert",
        txt.to_str().unwrap(),
        rft2.to_str().unwrap(),
    ]));
    assert_eq!(std::fs::read(&rft).unwrap(), std::fs::read(&rft2).unwrap());

    let replay = replay_scenario(&d, "q2.rft");
    for lru in ["policy.lru=classic", "policy.lru=mglru"] {
        let (a, b) = (d.join("a.json"), d.join("b.json"));
        ok(&refault(&[
            "run",
            q,
            "--set",
            lru,
            "--out",
            a.to_str().unwrap(),
        ]));
        ok(&refault(&[
            "run",
            replay.to_str().unwrap(),
            "--set",
            lru,
            "--out",
            b.to_str().unwrap(),
        ]));
        assert_eq!(
            result_without_scenario(&a),
            result_without_scenario(&b),
            "{lru}: the replay differs from the generated run"
        );
    }
}

#[test]
fn a_trace_truncated_mid_replay_fails_the_run() {
    let d = scratch("trace-truncated");
    let q = root().join("scenarios/quickstart.toml");
    let rft = d.join("q.rft");
    ok(&refault(&[
        "trace",
        "record-scenario",
        q.to_str().unwrap(),
        rft.to_str().unwrap(),
    ]));
    let bytes = std::fs::read(&rft).unwrap();
    std::fs::write(&rft, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let replay = replay_scenario(&d, "q.rft");
    let out = d.join("r.json");
    let o = refault(&[
        "run",
        replay.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("q.rft") && e.contains("byte"), "{e}");
    assert!(!out.exists(), "no result from a short replay");
    // And `trace info` says the same.
    let o = refault(&["trace", "info", rft.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn scenario_errors_name_the_trace_key() {
    let d = scratch("trace-scenario-errors");
    std::fs::write(
        d.join("t.txt"),
        "refault-trace 1\ntask a\ntask b\nobject heap file 10\nt heap 1\n",
    )
    .unwrap();
    let base = "[machine]\nmemory = \"64M\"\n[[object]]\nname = \"heap\"\nkind = \"anon\"\nsize = \"1M\"\n[[task]]\nname = \"x\"\n[[task.phase]]\n";
    let cases = [
        ("source = { trace = \"missing.rft\" }\n", "cannot open"),
        (
            "source = { trace = \"t.txt\" }\n",
            "the trace carries several tasks (a, b); name one with source.task",
        ),
        (
            "source = { trace = \"t.txt\", task = \"c\" }\n",
            "the trace has no task `c` (tasks: a, b)",
        ),
        (
            "source = { trace = \"t.txt\", task = \"a\" }\n",
            "the trace's object `heap` is file, but the scenario's is anon",
        ),
        (
            "source = { trace = \"t.txt\", task = \"a\" }\naccess = \"touch\"\n",
            "access does not apply to a trace phase",
        ),
        (
            "source = { trace = \"t.txt\", format = \"frob\" }\n",
            "unknown trace format `frob`",
        ),
    ];
    for (phase, want) in cases {
        let p = d.join("s.toml");
        std::fs::write(&p, format!("{base}{phase}")).unwrap();
        let o = refault(&["run", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{phase}");
        let e = stderr(&o);
        assert!(e.contains(want), "{phase}: {e}");
        assert!(e.contains("s.toml:"), "positioned: {e}");
    }
}

/// Objects the trace declares are created; a scenario object of the same name wins.
#[test]
fn trace_objects_are_created_unless_declared() {
    let d = scratch("trace-objects");
    std::fs::write(
        d.join("t.txt"),
        "refault-trace 1\nobject heap anon 256\nobject db file 64 exists\n\
         w heap 0\nw heap 255\nread db 0 32\nend\n",
    )
    .unwrap();
    let s = "[machine]\nmemory = \"64M\"\n[[object]]\nname = \"heap\"\nkind = \"anon\"\nsize = \"2M\"\n\
             [[task]]\nname = \"x\"\n[[task.phase]]\nsource = { trace = \"t.txt\" }\n";
    let p = d.join("s.toml");
    std::fs::write(&p, s).unwrap();
    let scn = refault_scenario::load(&p, &[], None).unwrap();
    let objs: Vec<(&str, u64, bool)> = scn
        .objects
        .iter()
        .map(|o| (o.name.as_str(), o.size_pages, o.exists))
        .collect();
    assert_eq!(objs, [("heap", 512, false), ("db", 64, true)]);
    let r = refault_sim::run(&scn, Default::default()).unwrap();
    assert_eq!(r.tasks[0].ops, 1);
    assert!(r.vmstat["pgfault"] >= 2, "{:?}", r.vmstat.get("pgfault"));
}

/// valgrind's lackey on a small C program: its heap pages show up as one region touched
/// once per page by the store loop.
#[test]
fn refault_record_traces_a_real_program() {
    if Command::new("valgrind").arg("--version").output().is_err() {
        eprintln!("SKIPPED refault_record_traces_a_real_program: valgrind is not installed");
        return;
    }
    let cc = ["cc", "gcc", "clang"]
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok());
    let Some(cc) = cc else {
        eprintln!("SKIPPED refault_record_traces_a_real_program: no C compiler");
        return;
    };
    let d = scratch("trace-record");
    let src = d.join("touch.c");
    std::fs::write(
        &src,
        "#include <stdlib.h>\nint main(void){ volatile char *p = malloc(64 << 20);\n\
         for (long i = 0; i < (64L << 20); i += 4096) p[i] = 1;\n\
         long s = 0; for (long i = 0; i < (64L << 20); i += 4096) s += p[i];\n return s == 0; }\n",
    )
    .unwrap();
    let exe = d.join("touch");
    let st = Command::new(cc)
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    let out = d.join("touch.rft");
    ok(&refault(&[
        "record",
        "-o",
        out.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
    ]));
    assert!(
        !d.join("touch.lackey").exists(),
        "the lackey log is removed"
    );
    let o = refault(&["trace", "info", out.to_str().unwrap()]);
    ok(&o);
    let info = String::from_utf8_lossy(&o.stdout);
    // The 64 MiB malloc: under valgrind it is mapped among the libraries, so it shares a
    // region with them; that region's footprint holds its 16384 pages.
    let footprint = |l: &str| -> u64 {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.get(5).and_then(|x| x.parse().ok()).unwrap_or(0)
    };
    let big = info
        .lines()
        .filter(|l| l.contains(" anon "))
        .map(footprint)
        .max()
        .unwrap_or(0);
    assert!((16384..16384 + 1024).contains(&big), "{info}");
    // One store and one load per page of it, at least.
    let count = |k: &str| -> u64 {
        info.lines()
            .find_map(|l| l.trim().strip_prefix(k))
            .and_then(|x| x.trim().parse().ok())
            .unwrap_or(0)
    };
    assert!(count("touch-store") >= 16384, "{info}");
    assert!(count("touch-load") >= 16384, "{info}");
}

fn info_count(info: &str, key: &str) -> u64 {
    info.lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .and_then(|x| x.split_whitespace().next())
        .and_then(|x| x.parse().ok())
        .unwrap_or(u64::MAX)
}

/// The DAMON sample (examples/traces, written by damo's own writers) in its three forms
/// converts to the same trace; its replay on a small machine swaps the cold heap.
#[test]
fn damon_recordings_replay_alike_in_every_form() {
    let d = scratch("trace-damon");
    let ex = root().join("examples/traces");
    let mut converted = Vec::new();
    for f in ["damon.data", "damon.json", "damon.perf-script.txt"] {
        let out = d.join(format!("{f}.rft"));
        ok(&refault(&[
            "trace",
            "convert",
            ex.join(f).to_str().unwrap(),
            out.to_str().unwrap(),
        ]));
        converted.push(std::fs::read(&out).unwrap());
    }
    assert_eq!(converted[0], converted[1], "json_compressed vs json");
    assert_eq!(converted[0], converted[2], "json vs perf script");
    let o = refault(&["trace", "info", ex.join("damon.data").to_str().unwrap()]);
    ok(&o);
    let info = String::from_utf8_lossy(&o.stdout);
    // Golden: 8225 pages written once in the prologue (32 MiB heap + 33-page stack), 10
    // snapshots of 20 slices.
    assert_eq!(info_count(&info, "touch-store"), 8225, "{info}");
    assert_eq!(info_count(&info, "think"), 200, "{info}");
    assert_eq!(info_count(&info, "end"), 10, "{info}");
    assert_eq!(info_count(&info, "events:"), 208_734, "{info}");
    let out = d.join("r.json");
    ok(&refault(&[
        "run",
        ex.join("damon-replay.toml").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["tasks"][0]["ops"], 10, "one op per aggregation interval");
    let vm = &v["vmstat"];
    assert!(
        vm["pswpout"].as_u64().unwrap() > 0,
        "the cold heap is swapped: {vm}"
    );
    assert!(vm["pgfault"].as_u64().unwrap() >= 8225, "{vm}");
}

/// perf mem samples (examples/traces/perf-mem.txt) replay through a scenario; malformed
/// DAMON and perf input fails with the file and position, exit 2.
#[test]
fn perf_mem_samples_replay_and_bad_recordings_are_positioned() {
    let d = scratch("trace-perf-mem");
    let ex = root().join("examples/traces");
    let s = std::fs::read_to_string(ex.join("damon-replay.toml"))
        .unwrap()
        .replace(
            "source = { trace = \"damon.data\", format = \"auto\" }",
            &format!(
                "source = {{ trace = \"{}\", format = \"perf-mem\" }}",
                ex.join("perf-mem.txt").display()
            ),
        );
    let p = d.join("perf.toml");
    std::fs::write(&p, s).unwrap();
    let out = d.join("r.json");
    ok(&refault(&[
        "run",
        p.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["tasks"][0]["ops"], 8, "one op per 100 ms window");
    // Auto-detected, and golden counts of the conversion.
    let o = refault(&["trace", "info", ex.join("perf-mem.txt").to_str().unwrap()]);
    ok(&o);
    let info = String::from_utf8_lossy(&o.stdout);
    assert_eq!(info_count(&info, "events:"), 4123, "{info}");
    assert_eq!(info_count(&info, "touch-store"), 558, "{info}");

    // Malformed inputs.
    let bytes = std::fs::read(ex.join("damon.data")).unwrap();
    let cut = d.join("cut.data");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let o = refault(&["trace", "info", cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("cut.data: byte ") && e.contains("truncated"),
        "{e}"
    );
    let bad = d.join("bad.txt");
    std::fs::write(
        &bad,
        "prog 1 1.0: 10 cpu/mem-loads/P: 7f0000001000\nprog 1 1.1: 10 cpu/mem-loads/P: 7f00zz\n",
    )
    .unwrap();
    let o = refault(&["trace", "info", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("bad.txt:2: the field after the event is not a hexadecimal address"),
        "{e}"
    );
}

/// Objects a trace declares start with MADV_NORMAL (the kernel's default): a replay without
/// advise records runs exactly as one that says `advise heap normal` first, and differently
/// from `advise heap random` (page-table references then do not count in reclaim).
#[test]
fn trace_objects_default_to_madv_normal() {
    let d = scratch("trace-advice");
    let mut body = String::new();
    for p in 0..8192 {
        body += &format!("w heap {p}\n");
    }
    for _ in 0..6 {
        for p in 0..1024 {
            body += &format!("t heap {p}\n");
        }
        for p in (1024..8192).step_by(7) {
            body += &format!("w heap {p}\n");
        }
    }
    let run = |name: &str, advice: &str| -> String {
        let t = d.join(format!("t-{name}.txt"));
        std::fs::write(
            &t,
            format!("refault-trace 1\nobject heap anon 8192\n{advice}{body}"),
        )
        .unwrap();
        let s = format!(
            "[machine]\nmemory = \"24M\"\n[[device]]\nname = \"zram0\"\npreset = \"zram\"\n\
             [[swap.area]]\ndevice = \"zram0\"\nsize = \"64M\"\n[[task]]\nname = \"x\"\n\
             [[task.phase]]\nsource = {{ trace = \"{}\" }}\n",
            t.file_name().unwrap().to_str().unwrap()
        );
        let p = d.join("s.toml");
        std::fs::write(&p, s).unwrap();
        let out = d.join("r.json");
        ok(&refault(&[
            "run",
            p.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]));
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        serde_json::to_string(&v["vmstat"]).unwrap()
    };
    let default = run("default", "");
    assert_eq!(default, run("normal", "advise heap normal\n"));
    assert_ne!(
        default,
        run("random", "advise heap random\n"),
        "the test must see advice"
    );
}

/// When the damo package is installed (`pip install damo`), recordings written by its
/// current writers (examples/traces/make-samples.py into a scratch directory) read as the
/// checked-in samples do. Skipped without damo (it is not a dependency).
#[test]
fn damo_package_recordings_read_like_the_samples() {
    let py = ["python3", "python"].into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import damo"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(py) = py else {
        eprintln!("SKIPPED damo_package_recordings_read_like_the_samples: no damo package");
        return;
    };
    let d = scratch("trace-damo-package");
    let ex = root().join("examples/traces");
    let st = Command::new(py)
        .arg(ex.join("make-samples.py"))
        .arg(&d)
        .status()
        .unwrap();
    assert!(st.success());
    for f in ["damon.data", "damon.json", "damon.perf-script.txt"] {
        let conv = |src: &Path, out: &str| -> Vec<u8> {
            let o = d.join(out);
            ok(&refault(&[
                "trace",
                "convert",
                src.to_str().unwrap(),
                o.to_str().unwrap(),
            ]));
            std::fs::read(o).unwrap()
        };
        assert_eq!(
            conv(&d.join(f), "new.rft"),
            conv(&ex.join(f), "old.rft"),
            "{f}: damo's writers and the checked-in sample differ"
        );
    }
}
