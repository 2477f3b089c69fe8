"""Parameter sweeps: one run per point of a grid of overrides, on local cores or on Ray.

Every point is an ordinary run of the core with ``--set`` style overrides; this module only
schedules the runs, stores their result files and tabulates them.

With ``out``, each point's result JSON is written atomically to ``out/<point>.json`` as soon
as the point finishes (``<point>`` is built from the overrides, e.g.
``vm.swappiness-60__machine.memory-4G.3f2a9c1e0b.json``), and the table to
``out/sweep.csv`` at the end. Running the same sweep again skips every point whose file is
already there, so an interrupted sweep (Ctrl-C, a crash, a lost node) resumes where it
stopped. A file is only reused when the scenario it records is the one the point resolves
to now; a file from a different scenario is an error, not a silent mix.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import re
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from . import _progress, _refault
from ._api import ScenarioLike, _call, format_value, overrides_arg, scenario_text
from .result import task_labels, write_atomic

#: The task figures a sweep table carries, as ``<task>.<figure>`` columns.
TASK_FIGURES = ("ops", "ops_per_sec", "latency_mean_us", "latency_p99_us", "major_faults")

#: Name of the table a sweep writes next to its points.
TABLE_NAME = "sweep.csv"


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the grid's values, the first key varying slowest."""
    keys = list(grid)
    for k in keys:
        if isinstance(grid[k], (str, bytes)) or not isinstance(grid[k], Iterable):
            raise TypeError(f"grid[{k!r}] must be a list of values, not {grid[k]!r}")
        if len(grid[k]) == 0:
            raise ValueError(f"grid[{k!r}] has no values")
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def point_name(overrides: Mapping[str, Any], seed: int | None = None) -> str:
    """The file name (without ``.json``) of a point: readable from the overrides, made
    unique by a hash of the exact override strings and the seed."""
    pairs = [(str(k), format_value(v)) for k, v in overrides.items()]
    slug = "__".join(f"{k}-{v}" for k, v in pairs) or "base"
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", slug)[:120]
    digest = hashlib.sha1(json.dumps([pairs, seed]).encode()).hexdigest()[:10]
    return f"{slug}.{digest}"


def row_of(overrides: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """One table row: the overrides, ``sim_seconds``, ``events``, ``<task>.<figure>`` for
    each task and figure of :data:`TASK_FIGURES`, then every vmstat counter."""
    row: dict[str, Any] = dict(overrides)
    row["sim_seconds"] = result["sim_seconds"]
    row["events"] = result["events"]
    tasks = result["tasks"]
    for label, t in zip(task_labels(tasks), tasks):
        lat = t.get("latency_us", {})
        figures = {
            "ops": t.get("ops"),
            "ops_per_sec": t.get("ops_per_sec"),
            "latency_mean_us": lat.get("mean"),
            "latency_p99_us": lat.get("p99"),
            "major_faults": t.get("major_faults"),
        }
        for f in TASK_FIGURES:
            row[f"{label}.{f}"] = figures[f]
    row.update(result["vmstat"])
    return row


def _simulate(text: str, origin: str, overrides: list[tuple[str, str]], seed: int | None,
              check_every: int) -> str:
    """One point: the result JSON. Runs in a worker thread or a Ray worker process."""
    return _refault.run(text, False, overrides, seed, check_every, origin)


class _Point:
    """One grid point: its overrides, file, resolved scenario, and row once known."""

    def __init__(self, index: int, overrides: dict[str, Any], seed: int | None) -> None:
        self.index = index
        self.overrides = overrides
        self.pairs = overrides_arg(overrides)
        self.name = point_name(overrides, seed)
        self.resolved: Any = None
        self.row: dict[str, Any] | None = None


def _clean_temporaries(out: Path) -> None:
    """Remove the temporary files an interrupted sweep left (never a finished point)."""
    for p in out.glob(".*.json.*.tmp"):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def _reuse(point: _Point, path: Path) -> bool:
    """Whether ``path`` holds this point's finished result; fills ``point.row`` if so."""
    if not path.exists():
        return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RuntimeError(f"{path}: unreadable result in the sweep directory: {e}") from e
    if data.get("scenario") != point.resolved:
        raise RuntimeError(
            f"{path} holds the result of a different scenario than this sweep's point "
            f"{point.overrides}; use another output directory, or remove the old results"
        )
    point.row = row_of(point.overrides, data)
    return True


def sweep(
    scenario: ScenarioLike,
    grid: Mapping[str, Sequence[Any]],
    engine: str = "local",
    address: str | None = None,
    out: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    *,
    workers: int | None = None,
    check_every: int = 0,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Run ``scenario`` at every point of ``grid`` and tabulate the results.

    Args:
        scenario: a path, TOML text or dict, as for :func:`refault.run`.
        grid: override key → list of values, e.g. ``{"vm.swappiness": [0, 60, 200],
            "machine.memory": ["4G", "8G"]}``; every combination is run.
        engine: ``"local"`` runs the points in threads on this machine (the GIL is released
            during a run, so they use every core); ``"ray"`` runs each point as a Ray task.
        address: for ``engine="ray"``, the cluster to join (``ray.init(address=...)``, e.g.
            ``"ray://head:10001"`` or ``"auto"``); ``None`` starts a local Ray instance. Ray
            workers need the ``refault`` package installed. Ignored when Ray is already
            initialised.
        out: a directory for the per-point result files and ``sweep.csv``; a rerun skips
            the points already there (see the module documentation).
        seed: replaces the scenario's seed at every point.
        workers: parallel runs (local threads, or CPUs of a local Ray instance); default
            ``os.cpu_count()``.
        check_every: invariant checks every N events, as for :func:`refault.run`.
        progress: show a progress bar (``None``: in a terminal or a notebook).

    Returns:
        One row per grid point, in grid order (the first key varying slowest): the override
        columns (values as given), ``sim_seconds``, ``events``, ``<task>.<figure>`` for the
        figures in :data:`TASK_FIGURES`, and every vmstat counter; with ``out``, also
        ``result_file`` (the point's file name in ``out``). ``df.attrs["reused"]`` is the
        number of points taken from ``out`` instead of run (said on stderr at the start when
        progress is shown).

    Raises:
        ScenarioError: the scenario or one of the grid's points is invalid (checked for
            every point before anything runs).
        SimulationError: a point failed to run; points already finished stay in ``out``.
    """
    if engine not in ("local", "ray"):
        raise ValueError(f"engine must be 'local' or 'ray', not {engine!r}")
    text, origin = scenario_text(scenario)
    points = [_Point(i, ov, seed) for i, ov in enumerate(grid_points(grid))]
    names = [p.name for p in points]
    if len(set(names)) != len(names):
        raise ValueError("the grid has repeated points")
    # Resolve every point first: a bad value fails now, not after hours of runs.
    for p in points:
        pairs = p.pairs
        p.resolved = json.loads(
            _call(lambda: _refault.resolve(text, False, pairs, seed, origin), text, origin)
        )

    out_dir = Path(out) if out is not None else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        _clean_temporaries(out_dir)
    todo = [p for p in points if out_dir is None or not _reuse(p, out_dir / f"{p.name}.json")]

    workers = workers or os.cpu_count() or 1
    reused = len(points) - len(todo)
    if reused and _progress.wanted(progress):
        print(f"sweep: resuming: {reused} of {len(points)} points already done in {out_dir}, "
              "reused", file=sys.stderr)
    bar = _progress.bar(len(points), "sweep", "points", progress, reused)

    def finish(point: _Point, js: str) -> None:
        if out_dir is not None:
            write_atomic(out_dir / f"{point.name}.json", js)
        point.row = row_of(point.overrides, json.loads(js))
        bar.update(1)

    try:
        if engine == "local":
            _run_local(text, origin, seed, check_every, todo, workers, finish)
        else:
            _run_ray(text, origin, seed, check_every, todo, workers, address, finish)
    finally:
        bar.close()

    rows = []
    for p in points:
        assert p.row is not None
        row = dict(p.row)
        if out_dir is not None:
            row["result_file"] = f"{p.name}.json"
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs["reused"] = reused
    if out_dir is not None:
        write_atomic(out_dir / TABLE_NAME, df.to_csv(index=False))
    return df


def _run_local(text: str, origin: str, seed: int | None, check_every: int,
               todo: list[_Point], workers: int, finish: Callable[[_Point, str], None]) -> None:
    """Points in a thread pool. A point is written by the thread that ran it, so on Ctrl-C
    the runs under way still finish and land on disk; the others are cancelled."""

    def one(p: _Point) -> None:
        finish(p, _simulate(text, origin, p.pairs, seed, check_every))

    ex = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="refault-sweep")
    futures: list[Future[None]] = []
    try:
        futures = [ex.submit(one, p) for p in todo]
        for f in futures:
            f.result()
    except BaseException:
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)


def _run_ray(text: str, origin: str, seed: int | None, check_every: int,
             todo: list[_Point], workers: int, address: str | None,
             finish: Callable[[_Point, str], None]) -> None:
    """Each point a Ray task; results are written here, on the driver, as they arrive."""
    try:
        import ray
    except ImportError as e:
        raise ImportError(
            "engine='ray' needs Ray: pip install 'refault[ray]' (or pip install ray)"
        ) from e
    started = False
    if not ray.is_initialized():
        if address is None:
            ray.init(num_cpus=workers, include_dashboard=False, logging_level=logging.ERROR,
                     log_to_driver=False)
        else:
            connect_ray(ray, address)
        started = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=2)(_simulate)
        text_ref = ray.put(text)
        pending = {remote.remote(text_ref, origin, p.pairs, seed, check_every): p for p in todo}
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    point = pending.pop(ref)
                    try:
                        js = ray.get(ref)
                    except ray.exceptions.RayTaskError as e:
                        raise e.as_instanceof_cause() from None  # type: ignore[no-untyped-call,unused-ignore]
                    finish(point, js)
        except BaseException:
            for ref in pending:
                ray.cancel(ref)
            raise
    finally:
        if started:
            ray.shutdown()


#: Seconds to wait for a Ray cluster to answer (``$REFAULT_RAY_TIMEOUT`` overrides it).
RAY_CONNECT_TIMEOUT = 30.0


class RayConnectError(ConnectionError):
    """The Ray cluster named by ``address`` cannot be reached or did not answer in time."""


def _ray_endpoint(address: str) -> tuple[str, int] | None:
    """The host and port ``address`` names (``ray://HOST:PORT``, ``HOST:PORT``), or None
    for ``"auto"`` and other forms Ray resolves itself."""
    rest = address[len("ray://"):] if address.startswith("ray://") else address
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def connect_ray(ray: Any, address: str, timeout: float | None = None) -> None:
    """``ray.init(address=address)``, bounded: the cluster's port is tried first (a refused
    or unreachable address fails at once, naming it), then ``ray.init`` runs in a helper
    thread while this one waits, so a cluster that accepts connections but never answers
    fails after ``timeout`` seconds and SIGINT/SIGTERM still reach the main thread.

    Raises:
        RayConnectError: the address cannot be reached, refused the connection, Ray
            refused it (authentication, version mismatch: Ray's message is kept), or no
            answer came within ``timeout``.
    """
    import socket
    import threading

    if timeout is None:
        timeout = float(os.environ.get("REFAULT_RAY_TIMEOUT", RAY_CONNECT_TIMEOUT))
    hint = ("is the cluster up (`ray status` on the head node) and the port open? "
            "ray://HOST:10001 is the Ray Client server (pip install 'refault[ray]' brings "
            "ray[client]), HOST:6379 the GCS, \"auto\" a cluster started on this machine")
    ep = _ray_endpoint(address)
    if ep is not None:
        try:
            socket.create_connection(ep, timeout=timeout).close()
        except OSError as e:
            reason = "no answer" if isinstance(e, TimeoutError) else (e.strerror or str(e))
            raise RayConnectError(
                f"Ray cluster {address}: cannot connect to {ep[0]}:{ep[1]} ({reason}); {hint}"
            ) from None
    # Ray's C++ core logs every failed reconnection attempt to stderr: keep only its errors
    # (the failure itself is reported here, once).
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "error")
    outcome: list[BaseException | None] = []

    def init() -> None:
        try:
            ray.init(address=address, logging_level=logging.ERROR)
            outcome.append(None)
        except BaseException as e:  # noqa: BLE001 - handed to the waiting thread
            outcome.append(e)

    t = threading.Thread(target=init, name="refault-ray-init", daemon=True)
    t.start()
    t.join(timeout)
    if not outcome:
        raise RayConnectError(
            f"Ray cluster {address}: no answer from ray.init within {timeout:g} s "
            f"($REFAULT_RAY_TIMEOUT changes the limit); {hint}"
        )
    err = outcome[0]
    if err is not None:
        msg = str(err).strip().splitlines()
        first = msg[0] if msg else type(err).__name__
        auth = ""
        if "auth" in str(err).lower() or "token" in str(err).lower():
            auth = (" (a cluster with token authentication needs its token here: "
                    "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH, "
                    "see docs/python.md)")
        if "pip install" in first:  # Ray says what is missing (ray[client]): say only that
            raise RayConnectError(f"Ray cluster {address}: {first}") from err
        raise RayConnectError(f"Ray cluster {address}: {first}{auth}; {hint}") from err


def load_sweep(out: str | os.PathLike[str]) -> pd.DataFrame:
    """The table of a sweep directory (its ``sweep.csv``)."""
    path = Path(out)
    if path.is_dir():
        path = path / TABLE_NAME
    if not path.exists():
        raise FileNotFoundError(f"{path}: no sweep table (has the sweep finished?)")
    return pd.read_csv(path)

