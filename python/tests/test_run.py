"""refault.run: the same core as the CLI, results as DataFrames, errors as exceptions."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pandas as pd
import pytest

import refault

SMALL = """
[run]
duration = "2s"
sample_interval = "200ms"
[machine]
memory = "64M"
cpus = 2
[[device]]
name = "zram0"
preset = "zram"
[[swap.area]]
device = "zram0"
size = "64M"
[[object]]
name = "heap"
kind = "anon"
size = "48M"
[[object]]
name = "data"
kind = "file"
size = "64M"
[[task]]
name = "heap"
repeat = 0
[[task.phase]]
access = "touch-write"
object = "heap"
pattern = "random"
think = "1us"
[[task]]
name = "reader"
repeat = 0
[[task.phase]]
access = "read"
object = "data"
pattern = "sequential"
pages_per_op = 8
"""


def test_python_and_cli_give_identical_counters(root: Path, cli: Path, tmp_path: Path) -> None:
    scn = root / "scenarios" / "thrash-cache.toml"
    out = tmp_path / "cli.json"
    subprocess.run(
        [str(cli), "run", str(scn), "--set", "vm.swappiness=100", "--out", str(out)],
        check=True,
        capture_output=True,
    )
    via_cli = json.loads(out.read_text())
    via_py = refault.run(scn, {"vm.swappiness": 100})
    assert via_py.vmstat == via_cli["vmstat"]
    assert via_py.data["tasks"] == via_cli["tasks"]
    assert via_py.data["timeseries"] == via_cli["timeseries"]
    assert via_py.events == via_cli["events"]


def test_result_dataframes() -> None:
    r = refault.run(SMALL)
    assert isinstance(r.tasks, pd.DataFrame)
    assert set(["ops", "ops_per_sec", "latency_p99_us"]) <= set(r.tasks.columns)
    assert list(r.tasks.index) == ["heap", "reader"]
    ts = r.timeseries
    assert ts.index.name == "t_s"
    assert "nr_free_pages" in ts.columns and len(ts) >= 10
    assert ts["pgscan_file"].is_monotonic_increasing
    assert json.loads(r.to_json())["vmstat"] == r.vmstat


def test_scenario_as_path_text_and_dict_agree(tmp_path: Path) -> None:
    import tomllib

    p = tmp_path / "s.toml"
    p.write_text(SMALL)
    as_dict = tomllib.loads(SMALL)
    a = refault.run(p)
    b = refault.run(SMALL)
    c = refault.run(as_dict)
    d = refault.run(str(p))
    assert a.vmstat == b.vmstat == c.vmstat == d.vmstat


def test_overrides_and_seed() -> None:
    base = refault.run(SMALL)
    assert base.scenario["sysctl"]["swappiness"] == 60
    r = refault.run(SMALL, {"vm.swappiness": 200, "machine.memory": "96M"}, seed=3)
    assert r.scenario["sysctl"]["swappiness"] == 200
    assert r.scenario["machine"]["memory_pages"] == 96 * 256
    assert r.scenario["seed"] == 3
    assert refault.resolve(SMALL, {"policy.balance": "legacy"})["policy"]["balance"] == "legacy"


def test_runs_are_deterministic() -> None:
    a = refault.run(SMALL).data
    b = refault.run(SMALL).data
    a.pop("wall_seconds")
    b.pop("wall_seconds")
    assert a == b


def test_bad_scenario_raises_scenario_error_with_the_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.toml"
    p.write_text('[machine]\nmemory = "64M"\nmemroy = "1G"\n')
    with pytest.raises(refault.ScenarioError) as e:
        refault.run(p)
    assert e.value.line == 3
    assert e.value.path.endswith("bad.toml")
    assert "memroy" in e.value.message
    assert isinstance(e.value, refault.RefaultError)


def test_bad_override_and_missing_file() -> None:
    with pytest.raises(refault.ScenarioError):
        refault.run(SMALL, {"vm.swappiness": 300})
    with pytest.raises(FileNotFoundError):
        refault.run(Path("/nonexistent/scenario.toml"))


def test_unsupported_model_raises_simulation_error() -> None:
    with pytest.raises(refault.SimulationError):
        refault.run(SMALL, {"policy.lru": "mglru"})


def test_gil_is_released_during_a_run() -> None:
    """Two runs in threads finish, and a Python thread keeps running meanwhile."""
    ticks = 0
    stop = threading.Event()

    def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    t = threading.Thread(target=ticker)
    t.start()
    results: list[refault.Result] = []
    runs = [threading.Thread(target=lambda: results.append(refault.run(SMALL))) for _ in range(2)]
    for r in runs:
        r.start()
    for r in runs:
        r.join()
    stop.set()
    t.join()
    assert len(results) == 2 and results[0].vmstat == results[1].vmstat
    assert ticks > 1000
