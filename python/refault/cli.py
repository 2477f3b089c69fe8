"""The command line of the Python layer: ``python -m refault sweep|plot|report``, and the
``refault`` console script (:func:`entry`), which is the whole ``refault`` command: these
three subcommands here, every other one (``run``, ``compare``, ``reproduce``, ``bench``,
``twin``, ``fidelity``, ``--help``) by the Rust command line compiled into the extension,
run in this process.

The Rust ``refault`` binary hands its ``sweep``, ``plot`` and ``report`` subcommands to this
module with the same arguments, so ``refault sweep ...`` and ``python -m refault sweep ...``
are one command. Errors print one line, ``refault: error: ...``, and exit with status 2, as
the Rust command line does; Ctrl-C exits with 130, SIGTERM with 143 (SIGHUP 129), after
removing what was being written (runs under way in a sweep finish and land first).
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Sequence

_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][+-]?\d+)")

#: Counters a sweep prints besides the overrides and task throughput.
SWEEP_COLUMNS = (
    "pgscan_kswapd",
    "pgscan_direct",
    "workingset_refault_anon",
    "workingset_refault_file",
    "pswpin",
    "pswpout",
    "pgmajfault",
    "oom_kill",
)


def parse_value(text: str) -> Any:
    """A grid value: an int, float or boolean when it is one (``60``, ``0.5``, ``true``),
    else the string (``4G``, ``legacy``), as ``--set`` reads a value."""
    if text in ("true", "false"):
        return text == "true"
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def parse_grid(specs: Sequence[str]) -> dict[str, list[Any]]:
    """``["vm.swappiness=0,60,200", "machine.memory=4G,8G"]`` → the grid dict."""
    grid: dict[str, list[Any]] = {}
    for spec in specs:
        key, sep, values = spec.partition("=")
        key = key.strip()
        if not sep or not key or not values.strip():
            raise ValueError(f"--grid {spec!r}: expected KEY=V1,V2,... (e.g. vm.swappiness=0,60,200)")
        if key in grid:
            raise ValueError(f"--grid {key} given twice")
        grid[key] = [parse_value(v.strip()) for v in values.split(",") if v.strip()]
    return grid


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="refault",
        description="refault's Python layer: parameter sweeps, plots and HTML reports.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("sweep", help="run a scenario over a grid of overrides",
                       description="Run SCENARIO at every combination of the --grid values; "
                       "print the table and, with --out, keep each point's result JSON and "
                       "sweep.csv there (a rerun skips the points already done).")
    s.add_argument("scenario", help="scenario TOML file")
    s.add_argument("--grid", action="append", required=True, metavar="KEY=V1,V2,...",
                   help="an override key and its values (repeatable): vm.swappiness=0,60,200")
    s.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local threads on every core (default), or Ray tasks")
    s.add_argument("--address", help="Ray cluster address (ray://host:10001, auto); "
                   "default: a local Ray instance")
    s.add_argument("--out", type=Path, help="directory for the results and sweep.csv")
    s.add_argument("--seed", type=int, help="seed for every point (default: the scenario's)")
    s.add_argument("-j", "--jobs", type=int, help="parallel runs (default: every core)")
    s.add_argument("--check", type=int, default=0, metavar="N",
                   help="invariant checks every N events")
    s.add_argument("--columns", help="comma-separated columns to print "
                   "(default: overrides, task ops/s and the main reclaim counters)")
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal)")

    pl = sub.add_parser("plot", help="draw a result, or a sweep's table",
                        description="Draw a result JSON (memory composition, refault, scan "
                        "and swap rates), or a sweep (directory or sweep.csv): a heatmap with "
                        "--x and --y, lines with --x [--hue].")
    pl.add_argument("input", type=Path, help="result JSON, sweep directory or sweep.csv")
    pl.add_argument("more", nargs="*", type=Path,
                    help="more result JSON files: overlay them all on the same axes (A/B)")
    pl.add_argument("-o", "--out", type=Path, required=True, help="image file (.png, .svg, .pdf)")
    pl.add_argument("--kind", choices=("overview", "memory", "rates", "swap", "dirty", "slab",
                                       "tasks", "balance", "cgroups", "reclaimers", "generations"),
                    default="overview", help="for a result: which figure (default overview)")
    pl.add_argument("--x", help="for a sweep: the parameter across")
    pl.add_argument("--y", help="for a sweep: the parameter down (heatmap)")
    pl.add_argument("--hue", help="for a sweep: one line per value of this parameter")
    pl.add_argument("--value", default="workingset_refault_file",
                    help="for a sweep: the column drawn (default workingset_refault_file)")

    r = sub.add_parser("report", help="HTML report comparing results",
                       description="One self-contained HTML file: an mmtests-style table "
                       "(first result = baseline, each change, percent) and the plots.")
    r.add_argument("results", nargs="+", type=Path, help="result JSON files; the first is the baseline")
    r.add_argument("-o", "--out", type=Path, required=True, help="HTML file to write")
    r.add_argument("--name", action="append", help="label of each result, in order (repeatable)")
    r.add_argument("--title", help="page title")
    r.add_argument("--no-plots", action="store_true", help="the table only")
    return p


def _sweep(a: argparse.Namespace) -> int:
    from .sweep import sweep

    grid = parse_grid(a.grid)
    df = sweep(a.scenario, grid, engine=a.engine, address=a.address, out=a.out, seed=a.seed,
               workers=a.jobs, check_every=a.check, progress=a.progress)
    if a.columns:
        cols = [c.strip() for c in a.columns.split(",") if c.strip()]
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise ValueError(f"--columns: no column {', '.join(missing)} in the table")
    else:
        cols = list(grid)
        cols += [c for c in df.columns if c.endswith(".ops_per_sec")]
        cols += [c for c in SWEEP_COLUMNS if c in df.columns]
    print(df[cols].to_string(index=False))
    if a.out is not None:
        reused = int(df.attrs.get("reused", 0))
        again = f" ({reused} reused from an earlier run)" if reused else ""
        print(f"{len(df)} points{again}; results and sweep.csv in {a.out}", file=sys.stderr)
    return 0


def _plot(a: argparse.Namespace) -> int:
    from . import plot
    from .result import Result
    from .sweep import load_sweep

    if a.input.is_dir() or a.input.suffix == ".csv":
        df = load_sweep(a.input)
        if a.x is None:
            raise ValueError("plotting a sweep needs --x (and --y for a heatmap, or --hue)")
        for c in (a.x, a.y, a.hue, a.value):
            if c is not None and c not in df.columns:
                raise ValueError(f"no column {c!r} in the sweep table")
        if a.y is not None:
            fig = plot.sweep_heatmap(df, a.x, a.y, a.value)
        else:
            fig = plot.sweep_lines(df, a.x, a.value, hue=a.hue)
    elif a.more:
        paths = [a.input, *a.more]
        fig = plot.compare([Result.load(p) for p in paths], [p.stem for p in paths])
    else:
        fig = plot.draw(Result.load(a.input), a.kind)
    plot.save(fig, a.out)
    print(f"wrote {a.out}", file=sys.stderr)
    return 0


def _report(a: argparse.Namespace) -> int:
    from .report import report

    if a.name is not None and len(a.name) != len(a.results):
        raise ValueError("give one --name per result")
    report(a.results, a.out, names=a.name, title=a.title, plots=not a.no_plots)
    print(f"wrote {a.out}", file=sys.stderr)
    return 0


class Terminated(BaseException):
    """Raised in the main thread by SIGTERM (and SIGHUP), so that what is being written is
    cleaned up as for Ctrl-C instead of the process dying on the spot."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, _frame: Any) -> None:
    raise Terminated(signum)


def _install_termination_handlers() -> None:
    """SIGTERM and SIGHUP raise :class:`Terminated`, unless they are ignored (``nohup``) or
    handled already, or this is not the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _terminate)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0, 2 on error, 130 on Ctrl-C, 128 + N
    on SIGTERM or SIGHUP)."""
    a = _parser().parse_args(argv)
    from .errors import RefaultError

    _install_termination_handlers()
    try:
        return {"sweep": _sweep, "plot": _plot, "report": _report}[a.command](a)
    except KeyboardInterrupt:
        print("refault: interrupted", file=sys.stderr)
        return 130
    except Terminated as t:
        print(f"refault: terminated by {signal.Signals(t.signum).name}", file=sys.stderr)
        return 128 + t.signum
    except (RefaultError, OSError, ValueError, RuntimeError, ImportError) as e:
        print(f"refault: error: {e}", file=sys.stderr)
        return 2


#: The subcommands this module implements; the console script runs the others in Rust.
PYTHON_COMMANDS = ("sweep", "plot", "report")


def entry() -> None:
    """The ``refault`` console script: one command with every subcommand."""
    argv = sys.argv[1:]
    if argv and argv[0] in PYTHON_COMMANDS:
        sys.exit(main(argv))
    from . import _refault

    sys.stdout.flush()
    sys.stderr.flush()
    # The Rust command handles its own signals, as the `refault` binary does: Ctrl-C stops a
    # run at once instead of waiting for Python to look at a flag.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(_refault.cli_main(["refault", *argv]))
