"""refault.sweep: the table, the per-point files, resume after a kill, Ray == local."""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import refault

# `refault.sweep` is the function; the module is reached through importlib.
sweep_mod = importlib.import_module("refault.sweep")

GRID = {"vm.swappiness": [0, 100, 200], "cgroup.box.memory.max": ["40M", "max"]}


def _points(out: Path) -> list[Path]:
    return sorted(p for p in out.glob("*.json"))


def test_sweep_table_matches_single_runs(small: Path) -> None:
    df = refault.sweep(small, GRID, progress=False)
    assert len(df) == 6
    assert list(df.columns[:2]) == ["vm.swappiness", "cgroup.box.memory.max"]
    # Grid order: the first key varies slowest.
    assert df["vm.swappiness"].tolist() == [0, 0, 100, 100, 200, 200]
    assert df["cgroup.box.memory.max"].tolist() == ["40M", "max"] * 3
    assert {"sim_seconds", "events", "heap.ops_per_sec", "reader.latency_p99_us", "pswpout"} <= set(df.columns)
    assert "wall_seconds" not in df.columns
    for _, row in df.iterrows():
        one = refault.run(small, {"vm.swappiness": row["vm.swappiness"],
                                  "cgroup.box.memory.max": row["cgroup.box.memory.max"]})
        assert row["pswpout"] == one.vmstat["pswpout"]
        assert row["workingset_refault_file"] == one.vmstat["workingset_refault_file"]
        assert row["heap.ops"] == one.tasks.loc["heap", "ops"]


def test_sweep_writes_points_and_table(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "sw"
    df = refault.sweep(small, GRID, out=out, seed=2, progress=False)
    files = _points(out)
    assert len(files) == 6 and (out / "sweep.csv").exists()
    assert sorted(df["result_file"]) == sorted(p.name for p in files)
    assert files[0].name.startswith("vm.swappiness-")
    r = refault.Result.load(out / df.loc[3, "result_file"])
    assert r.scenario["seed"] == 2
    assert r.vmstat["pswpout"] == df.loc[3, "pswpout"]
    table = refault.load_sweep(out)
    assert table["pswpout"].tolist() == df["pswpout"].tolist()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_a_bad_point_fails_before_anything_runs(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "sw"
    with pytest.raises(refault.ScenarioError) as e:
        refault.sweep(small, {"vm.swappiness": [60, 300]}, out=out, progress=False)
    assert e.value.kind in ("invalid-value", "bad-override")
    assert _points(out) == []


def test_an_out_dir_of_another_scenario_is_refused(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "sw"
    refault.sweep(small, {"vm.swappiness": [60]}, out=out, progress=False)
    with pytest.raises(RuntimeError, match="different scenario"):
        refault.sweep(small.read_text().replace('"2s"', '"1s"'), {"vm.swappiness": [60]},
                      out=out, progress=False)


def _default_signals() -> None:
    """In the child before exec: SIGINT and SIGQUIT as on a terminal. A shell without job
    control starts background jobs (`pytest ... &`, CI runners) with SIGINT ignored, and a
    Python started with SIGINT ignored keeps ignoring it (it installs KeyboardInterrupt only
    over the default disposition): the sweep then ran to its end and exited 0. That, not a
    timing race inside the sweep, made the SIGINT case fail now and then."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM],
                         ids=["SIGKILL", "SIGINT", "SIGTERM"])
def test_killed_sweep_resumes_without_recomputing(
    small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals
) -> None:
    """Kill a sweep midway (one point at a time, ~0.3 s each), rerun it: the finished points
    are kept as they are (same inode and mtime, not recomputed), every file is whole, no
    temporary file is left, and the table equals an uninterrupted sweep's."""
    out = tmp_path / "sw"
    grid = ["--grid", "run.duration=10s", "--grid", "vm.swappiness=0,30,60,90,120,150,180,200"]
    cmd = [sys.executable, "-m", "refault", "sweep", str(small), *grid, "--out", str(out),
           "--jobs", "1", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=_default_signals)
    deadline = time.monotonic() + 60
    while len(_points(out) if out.exists() else []) < 3:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert time.monotonic() < deadline, "the sweep made no progress"
        time.sleep(0.02)
    # Popen.send_signal does nothing to a process that has exited: say so, not "exit 0".
    assert proc.poll() is None, "the sweep finished before it could be interrupted"
    proc.send_signal(sig)
    code = proc.wait(timeout=60)
    expected = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGKILL: -signal.SIGKILL}
    assert code == expected[sig], proc.stderr.read().decode() if proc.stderr else ""

    done = _points(out)
    assert 3 <= len(done) < 8, "the sweep was not interrupted midway"
    if sig != signal.SIGKILL:  # cleaned up by the sweep itself, not by the next run
        assert not [p for p in out.iterdir() if p.name.startswith(".")], "temporary files left"
    for p in done:
        assert json.loads(p.read_text())["vmstat"]  # whole, parseable results only
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in done}

    calls: list[list[tuple[str, str]]] = []
    real = sweep_mod._simulate

    def counting(text: str, origin: str, overrides: list[tuple[str, str]], seed: int | None,
                 check_every: int) -> str:
        calls.append(overrides)
        return real(text, origin, overrides, seed, check_every)

    monkeypatch.setattr(sweep_mod, "_simulate", counting)
    grid_dict = {"run.duration": ["10s"], "vm.swappiness": [0, 30, 60, 90, 120, 150, 180, 200]}
    df = refault.sweep(small, grid_dict, out=out, progress=False)

    assert len(calls) == 8 - len(done)
    assert df.attrs["reused"] == len(done)
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in _points(out)}
    assert len(after) == 8
    for name, st in before.items():
        assert after[name] == st, f"{name} was rewritten"
    assert not [p for p in out.iterdir() if p.name.startswith(".")], "temporary files left"
    fresh = refault.sweep(small, grid_dict, out=tmp_path / "fresh", progress=False)
    pd.testing.assert_frame_equal(df, fresh)


def test_ray_sweep_gives_the_same_table_as_local(small: Path, tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (pip install ray; scripts/python-setup.sh does)")
    local = refault.sweep(small, GRID, engine="local", out=tmp_path / "local", progress=False)
    on_ray = refault.sweep(small, GRID, engine="ray", out=tmp_path / "ray", workers=2,
                           progress=False)
    pd.testing.assert_frame_equal(local, on_ray)
    for name in local["result_file"]:
        a = json.loads((tmp_path / "local" / name).read_text())
        b = json.loads((tmp_path / "ray" / name).read_text())
        a.pop("wall_seconds"), b.pop("wall_seconds")
        assert a == b


def test_grid_checks() -> None:
    with pytest.raises(TypeError):
        sweep_mod.grid_points({"vm.swappiness": "60"})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        sweep_mod.grid_points({"vm.swappiness": []})
    assert sweep_mod.point_name({"a.b": "x/y"}) != sweep_mod.point_name({"a.b": "x_y"})
    assert sweep_mod.point_name({"k": 1}, seed=1) != sweep_mod.point_name({"k": 1}, seed=2)
    assert "/" not in sweep_mod.point_name({"a": "../../etc"})
    with pytest.raises(ValueError):
        refault.sweep("x.toml", {"k": [1]}, engine="spark")
