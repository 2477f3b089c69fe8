"""The ``refault`` command: the package's console script (:func:`entry`), ``python -m
refault`` and ``refault-py`` are all :func:`main`.

Every subcommand's arguments are parsed by the Rust command line compiled into the
extension (``_refault.cli_main``, in this process), so ``refault --help`` lists them all and
``refault sweep --help`` or a usage error (``error: ...``, the usage line, exit status 2)
looks the same for every subcommand. The Rust subcommands (``run``, ``compare``,
``reproduce``, ``bench``, ``twin``, ``fidelity`` ...) run there too; ``sweep``, ``plot`` and
``report`` come back parsed and are carried out here. The Rust ``refault`` binary hands
those three to ``python -m refault`` with the same arguments, so they are one command.

Errors print one line, ``refault: error: ...``, and exit with status 2, as the Rust command
line does; Ctrl-C exits with 130, SIGTERM with 143 (SIGHUP 129), after removing what was
being written (runs under way in a sweep finish and land first).
"""

from __future__ import annotations

import json
import re
import signal
import sys
import threading
from pathlib import Path
from types import SimpleNamespace
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


def _sweep(a: SimpleNamespace) -> int:
    from .sweep import sweep

    grid = parse_grid(a.grid)
    out = Path(a.out) if a.out is not None else None
    df = sweep(a.scenario, grid, engine=a.engine, address=a.address, out=out, seed=a.seed,
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
    print(df[cols].to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    if a.out is not None:
        reused = int(df.attrs.get("reused", 0))
        again = f" ({reused} reused from an earlier run)" if reused else ""
        print(f"{len(df)} points{again}; results and sweep.csv in {a.out}", file=sys.stderr)
    return 0


def _plot(a: SimpleNamespace) -> int:
    from . import plot
    from .result import Result
    from .sweep import load_sweep

    source = Path(a.input)
    if source.is_dir() or source.suffix == ".csv":
        df = load_sweep(source)
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
        paths = [source, *map(Path, a.more)]
        fig = plot.compare([Result.load(p) for p in paths], [p.stem for p in paths])
    else:
        fig = plot.draw(Result.load(source), a.kind)
    plot.save(fig, a.out)
    print(f"wrote {a.out}", file=sys.stderr)
    return 0


def _report(a: SimpleNamespace) -> int:
    from .report import report, with_seeds

    if a.name is not None and len(a.name) != len(a.results):
        raise ValueError("give one --name per result")
    sides: list[Any] = list(a.results)
    if a.seeds > 1:
        sides = with_seeds(sides, a.seeds)
    report(sides, a.out, names=a.name, title=a.title, plots=not a.no_plots,
           per_instance=a.per_instance)
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
    """Run the ``refault`` command line on ``argv`` (default: ``sys.argv[1:]``); returns the
    exit status (0, 2 on error or bad usage, 130 on Ctrl-C, 128 + N on SIGTERM or SIGHUP)."""
    from . import _refault

    args = list(sys.argv[1:] if argv is None else argv)
    sys.stdout.flush()
    sys.stderr.flush()
    # The Rust command handles its own signals, as the `refault` binary does: Ctrl-C stops a
    # run at once instead of waiting for Python to look at a flag.
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL) if in_main else None
    try:
        parsed = _refault.cli_main(["refault", *args])
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if isinstance(parsed, int):
        return parsed
    command, arguments = parsed
    return _run_python_command(command, SimpleNamespace(**json.loads(arguments)))


def _run_python_command(command: str, a: SimpleNamespace) -> int:
    """Carry out ``sweep``, ``plot`` or ``report`` with the arguments the Rust command line
    parsed."""
    from .errors import RefaultError

    _install_termination_handlers()
    try:
        return {"sweep": _sweep, "plot": _plot, "report": _report}[command](a)
    except KeyboardInterrupt:
        print("refault: interrupted", file=sys.stderr)
        return 130
    except Terminated as t:
        print(f"refault: terminated by {signal.Signals(t.signum).name}", file=sys.stderr)
        return 128 + t.signum
    except (RefaultError, OSError, ValueError, RuntimeError, ImportError) as e:
        print(f"refault: error: {e}", file=sys.stderr)
        return 2


def entry() -> None:
    """The ``refault`` console script: one command with every subcommand."""
    sys.exit(main())
