"""`python -m refault sweep|plot|report`, and the Rust `refault` handing those to it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import refault


def py(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "refault", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_sweep_plot_report_from_the_command_line(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "sw"
    p = py("sweep", str(small), "--grid", "vm.swappiness=0,60,200",
           "--grid", "cgroup.box.memory.max=40M,44M", "--out", str(out))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[0].split()[:2] == ["vm.swappiness", "cgroup.box.memory.max"]
    assert len(lines) == 7
    table = pd.read_csv(out / "sweep.csv")
    again = py("sweep", str(small), "--grid", "vm.swappiness=0,60,200",
               "--grid", "cgroup.box.memory.max=40M,44M", "--out", str(out))
    assert again.returncode == 0 and "6 points (6 reused from an earlier run)" in again.stderr
    api = refault.sweep(small, {"vm.swappiness": [0, 60, 200],
                                "cgroup.box.memory.max": ["40M", "44M"]}, progress=False)
    assert table["pswpout"].tolist() == api["pswpout"].tolist()

    heat = tmp_path / "heat.png"
    p = py("plot", str(out), "--x", "vm.swappiness", "--y", "cgroup.box.memory.max",
           "--value", "pswpout", "-o", str(heat))
    assert p.returncode == 0, p.stderr
    assert heat.stat().st_size > 5000

    first, second = sorted(out.glob("*.json"))[:2]
    mem = tmp_path / "memory.png"
    p = py("plot", str(first), "-o", str(mem), "--kind", "memory")
    assert p.returncode == 0, p.stderr
    assert mem.read_bytes()[:4] == b"\x89PNG"

    html = tmp_path / "report.html"
    p = py("report", str(first), str(second), "-o", str(html), "--name", "a", "--name", "b")
    assert p.returncode == 0, p.stderr
    assert "<th>a</th>" in html.read_text()


@pytest.mark.parametrize(
    "args, message",
    [
        (["sweep", "{small}", "--grid", "vm.swappiness"], "expected KEY=V1,V2"),
        (["sweep", "{small}", "--grid", "vm.swappiness=60,300"], "swappiness"),
        (["sweep", "/nonexistent.toml", "--grid", "vm.swappiness=60"], "No such file"),
        (["plot", "/nonexistent.json", "-o", "x.png"], "No such file"),
        (["report", "{small}", "-o", "x.html"], "refault: error:"),
    ],
)
def test_errors_are_one_line_and_exit_2(small: Path, tmp_path: Path, args: list[str],
                                        message: str) -> None:
    p = py(*[a.format(small=small) for a in args], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.startswith("refault: error: ") and message in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_grid_values_parse_to_numbers_where_they_are_numbers() -> None:
    from refault.cli import parse_grid

    grid = parse_grid(["vm.swappiness=0,60", "machine.memory=4G,8G", "x=0.5,1e3,-2"])
    assert grid == {"vm.swappiness": [0, 60], "machine.memory": ["4G", "8G"], "x": [0.5, 1000.0, -2]}


def test_rust_cli_delegates_with_the_same_arguments_and_exit_code(
    cli: Path, small: Path, tmp_path: Path
) -> None:
    # The interpreter running these tests (a virtualenv's, say) is the one that has refault.
    env = dict(os.environ, REFAULT_PYTHON=sys.executable)
    out = tmp_path / "sw"
    p = subprocess.run([str(cli), "sweep", str(small), "--grid", "vm.swappiness=60,100",
                        "--out", str(out), "--columns", "vm.swappiness,pswpout"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split()[:2] == ["vm.swappiness", "pswpout"]
    assert len(list(out.glob("*.json"))) == 2

    p = subprocess.run([str(cli), "plot", "--help"], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and "usage: refault plot" in p.stdout

    p = subprocess.run([str(cli), "report", "/nonexistent.json", "-o", str(tmp_path / "r.html")],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 2 and "No such file" in p.stderr


def test_rust_cli_says_how_to_install_when_the_package_is_missing(cli: Path, tmp_path: Path) -> None:
    # An interpreter without site-packages cannot import refault.
    bare = tmp_path / "bare-python"
    bare.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    bare.chmod(0o755)
    env = dict(os.environ, REFAULT_PYTHON=str(bare), PYTHONPATH="")
    p = subprocess.run([str(cli), "report", "a.json", "-o", "r.html"], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 2
    assert "not installed" in p.stderr and "pip install ." in p.stderr


def _console_script() -> Path:
    import sysconfig

    return Path(sysconfig.get_path("scripts")) / "refault"


def test_one_install_gives_the_whole_refault_command(small: Path, tmp_path: Path) -> None:
    """The package's `refault` console script: Rust subcommands run in-process from the
    extension (no separately built binary), Python ones here, one command."""
    exe = _console_script()
    assert exe.is_file(), f"no `refault` console script at {exe}: the package installs one"
    env = {**os.environ, "PATH": "/nonexistent"}  # nothing else called `refault` to run

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(exe), *args], capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=300)

    p = run("--help")
    assert p.returncode == 0, p.stderr
    for sub in ("run", "compare", "reproduce", "bench", "sweep", "plot", "report", "twin"):
        assert f"  {sub}" in p.stdout, (sub, p.stdout)
    assert run("--version").stdout.startswith("refault ")
    p = run("run", str(small), "--out", "r.json")
    assert p.returncode == 0, p.stderr
    via_script = refault.Result.load(tmp_path / "r.json")
    assert via_script.vmstat == refault.run(small).vmstat
    p = run("run", str(small), "--set", "vm.swappiness=300")
    assert p.returncode == 2 and "swappiness" in p.stderr and "Traceback" not in p.stderr
    p = run("no-such-command")
    assert p.returncode == 2
    p = run("sweep", str(small), "--grid", "vm.swappiness=0,200")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].split()[0] == "vm.swappiness"
