"""`python -m refault sweep|plot|report`, the Rust `refault` handing those to it, and the
one help and usage-error style of every subcommand."""

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
    assert p.returncode == 0 and "\nUsage: refault plot [OPTIONS] --out <FILE> <INPUT>" in p.stdout

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


PYTHON_COMMANDS = ("sweep", "plot", "report")


def _layout(help_text: str) -> list[str]:
    """The section headings and the -h/--help entry of a clap help page."""
    lines = help_text.splitlines()
    heads = [ln for ln in lines if ln in ("Arguments:", "Options:") or ln.startswith("Usage: ")]
    i = next(k for k, ln in enumerate(lines) if ln.startswith("  -h, --help "))
    return [ln.split(" [")[0].split(" <")[0] if ln.startswith("Usage: ") else ln
            for ln in heads] + [" ".join(lines[i].split())]


@pytest.mark.parametrize("command", PYTHON_COMMANDS)
def test_python_subcommands_have_the_rust_commands_help(cli: Path, command: str) -> None:
    """`refault sweep --help` is laid out as `refault run --help` (clap's: Usage:,
    Arguments:, Options:, the same -h/--help entry), and is the same page whichever way the
    command is started: the Rust binary, `python -m refault`, the console script."""
    env = dict(os.environ, REFAULT_PYTHON=sys.executable)
    run_help = subprocess.run([str(cli), "run", "--help"], capture_output=True, text=True).stdout
    via_binary = subprocess.run([str(cli), command, "--help"], capture_output=True, text=True,
                                env=env)
    assert via_binary.returncode == 0, via_binary.stderr
    assert _layout(via_binary.stdout) == [
        f"Usage: refault {command}", "Arguments:", "Options:", "-h, --help Print help"]
    assert _layout(run_help) == [
        "Usage: refault run", "Arguments:", "Options:", "-h, --help Print help"]
    via_module = py(command, "--help")
    assert via_module.returncode == 0 and via_module.stdout == via_binary.stdout
    short = py(command, "-h")
    assert short.returncode == 0 and short.stdout == via_binary.stdout
    script = subprocess.run([str(_console_script()), command, "--help"], capture_output=True,
                            text=True)
    assert script.returncode == 0 and script.stdout == via_binary.stdout


def test_refault_help_lists_every_subcommand_with_a_line(cli: Path) -> None:
    for out in (subprocess.run([str(cli), "--help"], capture_output=True, text=True).stdout,
                py("--help").stdout,
                subprocess.run([str(_console_script()), "--help"], capture_output=True,
                               text=True).stdout):
        lines = out.splitlines()
        for sub in ("run", "compare", "reproduce", "bench", "twin", "fidelity", *PYTHON_COMMANDS):
            line = next((ln for ln in lines if ln.startswith(f"  {sub} ")), None)
            assert line is not None and len(line.split()) > 2, (sub, out)


@pytest.mark.parametrize(
    "args, message",
    [
        (["sweep", "{small}", "--bogus"], "error: unexpected argument '--bogus' found"),
        (["sweep", "{small}", "--grid", "vm.swappiness"],
         "error: invalid value 'vm.swappiness' for '--grid <KEY=V1,V2,...>': expected KEY=V1,V2"),
        (["sweep", "{small}"], "error: the following required arguments were not provided"),
        (["sweep", "{small}", "--grid", "x=1", "--engine", "spark"],
         "error: invalid value 'spark' for '--engine <ENGINE>'"),
        (["plot", "r.json", "-o", "x.png", "--kind", "pie"],
         "error: invalid value 'pie' for '--kind <KIND>'"),
        (["report", "a.json"], "error: the following required arguments were not provided"),
        (["report", "a.json", "-o", "r.html", "--seeds", "0"],
         "error: invalid value '0' for '--seeds <N>'"),
        (["run", "{small}", "--bogus"], "error: unexpected argument '--bogus' found"),
    ],
)
def test_bad_usage_is_claps_error_and_exit_2(cli: Path, small: Path, tmp_path: Path,
                                             args: list[str], message: str) -> None:
    """A usage error reads the same for a Python subcommand as for a Rust one: `error:
    ...`, the usage line, the hint, exit status 2; from `python -m refault`, the console
    script and the binary alike."""
    argv = [a.format(small=small) for a in args]
    env = dict(os.environ, REFAULT_PYTHON=sys.executable)
    runs = [py(*argv, cwd=tmp_path)]
    if "--bogus" in argv:
        # The same from the console script and the binary (checked once a command: each
        # start of Python costs a second).
        runs += [subprocess.run([str(_console_script()), *argv], capture_output=True,
                                text=True, cwd=tmp_path),
                 subprocess.run([str(cli), *argv], capture_output=True, text=True,
                                cwd=tmp_path, env=env)]
    for p in runs:
        assert p.returncode == 2, p.stderr
        assert p.stderr.startswith(message), p.stderr
        assert f"Usage: refault {argv[0]} " in p.stderr or "For more information" in p.stderr
        assert "Traceback" not in p.stderr and p.stdout == ""
    assert all(p.stderr == runs[0].stderr for p in runs)


def test_report_per_instance_and_seeds_from_the_command_line(small: Path, tmp_path: Path) -> None:
    """`refault report --per-instance` keeps a row set per task instance; `--seeds N` runs
    each result's scenario under N seeds and shows means, standard deviations and the
    seeds, as `refault compare --seeds N` does."""
    base = tmp_path / "base.json"
    swappy = tmp_path / "swappy.json"
    refault.run(small, {"task.reader.instances": 2}).save(base)
    refault.run(small, {"task.reader.instances": 2, "vm.swappiness": 200}).save(swappy)
    html = tmp_path / "r.html"
    p = py("report", str(base), str(swappy), "-o", str(html), "--no-plots")
    assert p.returncode == 0, p.stderr
    page = html.read_text()
    assert 'data-figure="ops/s reader"' in page and "reader/0" not in page
    p = py("report", str(base), str(swappy), "-o", str(html), "--no-plots", "--per-instance",
           "--seeds", "3")
    assert p.returncode == 0, p.stderr
    page = html.read_text()
    assert 'data-figure="ops/s reader/0"' in page and 'data-figure="ops/s reader/1"' in page
    assert "base (mean)" in page and "swappy stddev" in page and "<td>3 seeds</td>" in page
    # The same runs as `refault compare --seeds 3`'s (the same seeds after each file's own).
    from refault.report import compare_table, with_seeds

    sides = with_seeds([base, swappy], 3)
    assert [len(s) for s in sides] == [3, 3]
    seeds = [refault.Result.load(base).scenario["seed"] + k for k in range(3)]
    assert [r.scenario["seed"] for r in sides[0][1:]] == seeds[1:]
    again = refault.run(small, {"task.reader.instances": 2}, seed=seeds[2])
    assert sides[0][2].vmstat == again.vmstat
    table = compare_table([("base", [refault.Result.load(base).data,
                                     *(r.data for r in sides[0][1:])])])
    assert table.attrs["seeds"] == 3
