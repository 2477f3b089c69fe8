"""refault.run and refault.resolve: the same core as the CLI, scenarios in every form,
overrides, determinism, the GIL released."""

from __future__ import annotations

import json
import subprocess
import threading
import time
import tomllib
from pathlib import Path

import pandas as pd
import pytest

import refault
from refault._toml import dumps as toml_dumps


def _without_wall(doc: dict) -> dict:
    doc = dict(doc)
    doc.pop("wall_seconds")
    return doc


@pytest.mark.parametrize(
    "scenario, sets",
    [("quickstart.toml", []), ("thrash-cache.toml", [("vm.swappiness", "100"), ("machine.memory", "448M")])],
)
def test_python_and_cli_give_identical_results(
    root: Path, cli: Path, tmp_path: Path, scenario: str, sets: list[tuple[str, str]]
) -> None:
    """Same scenario, overrides and seed: the whole result JSON is identical through the CLI
    and through Python (counters, tasks, time series, resolved scenario), but wall_seconds."""
    path = root / "scenarios" / scenario
    out = tmp_path / "cli.json"
    args = [str(cli), "run", str(path), "--out", str(out)]
    for k, v in sets:
        args += ["--set", f"{k}={v}"]
    subprocess.run(args, check=True, capture_output=True)
    via_cli = json.loads(out.read_text())
    # "KEY=VALUE" strings are read exactly as --set reads them.
    via_py = refault.run(path, [f"{k}={v}" for k, v in sets])
    assert via_py.vmstat == via_cli["vmstat"]
    assert via_py.data["tasks"] == via_cli["tasks"]
    assert _without_wall(via_py.data) == _without_wall(via_cli)


def test_result_views(small: Path) -> None:
    r = refault.run(small)
    tasks = r.tasks
    assert isinstance(tasks, pd.DataFrame)
    assert list(tasks.index) == ["heap", "reader"]
    assert {"ops", "ops_per_sec", "latency_p99_us", "major_faults"} <= set(tasks.columns)
    assert tasks.loc["heap", "ops"] > 0
    ts = r.timeseries
    assert ts.index.name == "t_s" and len(ts) == 21
    assert {"nr_free_pages", "pswpout", "cgroup.box.usage_pages", "task.heap.ops"} <= set(ts.columns)
    assert ts["pgscan_file"].is_monotonic_increasing
    assert r.vmstat["pswpout"] > 0 and r.vmstat["workingset_refault_anon"] > 0
    assert json.loads(r.to_json()) == r.data
    assert r.name == "small" and r.events > 0 and r.sim_seconds == pytest.approx(2.0)


def test_lru_gen_view_only_under_the_multi_gen_lru(small: Path) -> None:
    assert refault.run(small).lru_gen is None
    r = refault.run(small, {"policy.lru": "mglru"})
    gens = r.lru_gen
    assert gens is not None
    assert list(gens.columns) == ["memcg", "seq", "age_ms", "nr_anon", "nr_file"]
    # One block per memcg (the root and "box"), each with 2..4 generations, oldest first.
    assert set(gens["memcg"]) == {"/", "box"}
    for _, g in gens.groupby("memcg"):
        assert 2 <= len(g) <= 4 and g["seq"].is_monotonic_increasing
    # The generations hold the memcgs' LRU pages (compatibility sizes of memory.stat).
    box = r.data["cgroups"][0]
    lru = box["inactive_anon"] + box["active_anon"] + box["inactive_file"] + box["active_file"]
    g = gens[gens["memcg"] == "box"]
    assert int(g["nr_anon"].sum() + g["nr_file"].sum()) == lru


def test_save_and_load_round_trip(small: Path, tmp_path: Path) -> None:
    r = refault.run(small)
    r.save(tmp_path / "r.json")
    back = refault.Result.load(tmp_path / "r.json")
    assert back.to_json() == r.to_json() and back.vmstat == r.vmstat
    assert not list(tmp_path.glob(".*"))


def test_scenario_as_path_text_and_dict_agree(small: Path) -> None:
    text = small.read_text()
    as_path = refault.run(small)
    as_str_path = refault.run(str(small))
    as_text = refault.run(text)
    as_dict = refault.run(tomllib.loads(text))
    assert as_path.vmstat == as_str_path.vmstat == as_text.vmstat == as_dict.vmstat
    assert as_path.data["tasks"] == as_text.data["tasks"] == as_dict.data["tasks"]


def test_dict_writer_round_trips_through_toml(small: Path) -> None:
    doc = tomllib.loads(small.read_text())
    doc["description"] = 'quotes " and \\ and unicode µs, and beyond the BMP 😀'
    doc["run"]["warmup"] = "0s"
    assert tomllib.loads(toml_dumps(doc)) == doc
    assert refault.resolve(doc)["description"] == doc["description"]


def test_overrides_as_pairs_and_strings_and_typed_lists(small: Path) -> None:
    as_dict = refault.resolve(small, {"vm.swappiness": 100, "machine.memory": "96M"})
    as_pairs = refault.resolve(small, [("vm.swappiness", 100), ("machine.memory", "96M")])
    as_text = refault.resolve(small, ["vm.swappiness=100", "machine.memory = 96M"])
    assert as_dict == as_pairs == as_text
    assert as_dict["sysctl"]["swappiness"] == 100
    with pytest.raises(TypeError):
        refault.resolve(small, "vm.swappiness=100")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        refault.resolve(small, [("vm.swappiness", 1, 2)])  # type: ignore[list-item]


def test_overrides_and_seed(small: Path) -> None:
    base = refault.run(small)
    assert base.scenario["sysctl"]["swappiness"] == 60
    r = refault.run(small, {"vm.swappiness": 200, "machine.memory": "96M", "cgroup.box.memory.max": "max"}, seed=3)
    assert r.scenario["sysctl"]["swappiness"] == 200
    assert r.scenario["machine"]["memory_pages"] == 96 * 256
    assert r.scenario["seed"] == 3
    assert r.vmstat != base.vmstat
    assert refault.resolve(small, {"policy.balance": "legacy"})["policy"]["balance"] == "legacy"
    assert refault.resolve(small, seed=9)["seed"] == 9


def test_runs_are_deterministic(small: Path) -> None:
    a = refault.run(small, seed=5).data
    b = refault.run(small, seed=5).data
    assert _without_wall(a) == _without_wall(b)


def test_progress_callback_reaches_100_percent(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[float] = []
    refault._refault.run(str(small), True, [], None, 0, None, seen.append)
    assert seen and seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    refault.run(small, progress=True)  # a bar on stderr, no error


def test_the_gil_is_released_during_a_run(root: Path) -> None:
    """A Python thread keeps running while runs go on in other threads: the longest pause
    between its ticks is a small part of a run (with the GIL held it would be all of it)."""
    scn = root / "scenarios" / "thrash-cache.toml"
    stamps: list[float] = []
    stop = threading.Event()

    def ticker() -> None:
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.001)

    results: list[refault.Result] = []
    runs = [threading.Thread(target=lambda: results.append(refault.run(scn))) for _ in range(2)]
    tick = threading.Thread(target=ticker)
    tick.start()
    t0 = time.perf_counter()
    for t in runs:
        t.start()
    for t in runs:
        t.join()
    elapsed = time.perf_counter() - t0
    stop.set()
    tick.join()
    assert len(results) == 2 and results[0].vmstat == results[1].vmstat
    longest_pause = max(b - a for a, b in zip(stamps, stamps[1:]))
    assert longest_pause < 0.25 * elapsed, (longest_pause, elapsed)
