"""The result of one run: the result JSON, with pandas views of its tables."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import pandas as pd

from ._output import write_output

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Bytes per page in every count the result holds (``nr_*`` gauges, ``*_pages``).
PAGE_SIZE = 4096


def task_labels(tasks: list[dict[str, Any]]) -> list[str]:
    """One unique label per task: its ``name``, or ``name#k`` for the k-th task (k >= 2)
    of a name that occurs more than once (as ``refault compare`` labels them)."""
    labels: list[str] = []
    seen: dict[str, int] = {}
    for t in tasks:
        name = str(t.get("name", "?"))
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return labels


def write_atomic(path: str | os.PathLike[str], text: str | bytes) -> None:
    """Write ``text`` to ``path``: atomically over a regular file or a missing path, through
    a device or FIFO (never replacing it), to stdout for ``-`` (see :mod:`refault._output`)."""
    write_output(path, text)


class Result:
    """One simulation's result: what ``refault run --out`` writes, with pandas views.

    Build one with :func:`refault.run`, :meth:`Result.load` (a result file) or
    :meth:`Result.from_json`. The figures are the core's; this class only reshapes them.

    Attributes are read-only views of the JSON: :attr:`vmstat`, :attr:`tasks`,
    :attr:`timeseries`, :attr:`scenario`, :attr:`sim_seconds`, :attr:`events`...
    """

    def __init__(self, data: dict[str, Any], text: str | None = None) -> None:
        """Wrap a parsed result document (``text``: its JSON text, if known)."""
        self._data = data
        self._text = text

    @classmethod
    def from_json(cls, text: str) -> Result:
        """Parse a result JSON document."""
        return cls(json.loads(text), text)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Result:
        """Read a result JSON file (``refault run --out``, a sweep's point, :meth:`save`)."""
        text = Path(path).read_text(encoding="utf-8")
        data = json.loads(text)
        if not isinstance(data, dict) or "vmstat" not in data:
            raise ValueError(f"{path}: not a refault result (no `vmstat` key)")
        return cls(data, text)

    @property
    def data(self) -> dict[str, Any]:
        """The whole result as plain Python data (the parsed JSON; do not modify)."""
        return self._data

    @property
    def name(self) -> str:
        """The scenario's name."""
        return str(self._data.get("scenario", {}).get("name", "?"))

    @property
    def scenario(self) -> dict[str, Any]:
        """The resolved scenario: every default filled in, overrides and seed applied."""
        scn: dict[str, Any] = self._data["scenario"]
        return scn

    @property
    def vmstat(self) -> dict[str, int]:
        """/proc/vmstat counters: events counted over the measured period (after the
        warm-up), gauges (``nr_*``) at the end of the run."""
        return dict(self._data["vmstat"])

    @property
    def sim_seconds(self) -> float:
        """Simulated seconds."""
        return float(self._data["sim_seconds"])

    @property
    def wall_seconds(self) -> float:
        """Real seconds the simulation took (the only figure that varies between runs)."""
        return float(self._data["wall_seconds"])

    @property
    def events(self) -> int:
        """Workload events simulated."""
        return int(self._data["events"])

    @property
    def reclaim_cpu(self) -> dict[str, Any]:
        """CPU time spent in reclaim, by activity."""
        rc: dict[str, Any] = self._data.get("reclaim_cpu", {})
        return rc

    @property
    def sched(self) -> pd.DataFrame:
        """The CPU scheduler's view: one row per thread (each task, then ``kswapd0``,
        ``flusher``, ``kcompactd0``) with ``cpu_seconds``, ``runqueue_wait_seconds``,
        ``max_wait_ms``, ``nr_waits`` and ``nr_preempted``. Empty for results written
        before the scheduler."""
        cols = ["name", "cpu_seconds", "runqueue_wait_seconds", "max_wait_ms", "nr_waits",
                "nr_preempted"]
        threads = self._data.get("sched", {}).get("threads", [])
        return pd.DataFrame(threads, columns=cols)

    @property
    def lru_gen(self) -> pd.DataFrame | None:
        """Multi-gen LRU runs only (``policy.lru = "mglru"``), else None: one row per memcg
        and generation, oldest first, as ``/sys/kernel/debug/lru_gen`` lists them:
        ``memcg``, ``seq``, ``age_ms``, ``nr_anon``, ``nr_file``. The tiers and page-table
        walk statistics are in ``data["lru_gen"]``."""
        memcgs = self._data.get("lru_gen")
        if memcgs is None:
            return None
        rows = [
            {"memcg": m["memcg"], **g}
            for m in memcgs
            for g in m.get("generations", [])
        ]
        return pd.DataFrame(rows, columns=["memcg", "seq", "age_ms", "nr_anon", "nr_file"])

    @property
    def tasks(self) -> pd.DataFrame:
        """One row per task instance, indexed by its label (``reader/0``...): ``ops``,
        ``ops_per_sec``, ``latency_{mean,p50,p90,p99,p999,max}_us``, ``cpu_seconds``,
        ``major_faults``, ``finished``, ``oom_killed``."""
        tasks = self._data["tasks"]
        rows = []
        for t in tasks:
            row = {k: v for k, v in t.items() if k not in ("name", "latency_us")}
            for k, v in t.get("latency_us", {}).items():
                row[f"latency_{k}_us"] = v
            rows.append(row)
        df = pd.DataFrame(rows, index=pd.Index(task_labels(tasks), name="task"))
        return df

    @property
    def timeseries(self) -> pd.DataFrame:
        """The sampled series, indexed by simulated time in seconds (``t_s``).

        Gauges in pages (``nr_free_pages``, ``nr_{in,}active_{anon,file}``, ``nr_dirty``,
        ``nr_writeback``, ``nr_swapcached``, ``nr_swap_used``), cumulative counters
        (``pgscan_kswapd``, ``workingset_refault_file``, ``pswpout``...), per cgroup
        ``cgroup.<name>.usage_pages`` and its LRU sizes, per task ``task.<name>.ops``.
        Rates are ``df[col].diff() / df.index.to_series().diff()``.
        """
        ts = dict(self._data["timeseries"])
        t = ts.pop("t_s")
        return pd.DataFrame(ts, index=pd.Index(t, name="t_s"))

    def to_json(self) -> str:
        """The result JSON, as ``refault run --out`` writes it."""
        if self._text is None:
            self._text = json.dumps(self._data, indent=2)
        return self._text

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the result JSON to ``path`` atomically (never a half-written file); ``-``
        is standard output, and a device such as ``/dev/null`` is written through, never
        replaced."""
        write_atomic(path, self.to_json())

    def plot(self, kind: str = "overview", path: str | os.PathLike[str] | None = None,
             **kwargs: Any) -> Figure:
        """Draw the result; ``kind`` is ``overview`` (all panels), ``memory`` (composition
        over time, per cgroup too), ``rates`` (refault and scan rates), ``swap`` (swap-in
        and swap-out rates) or ``dirty`` (dirty and writeback pages, the dirty limits and
        the time tasks spent throttled). With ``path``, the figure is also saved there (PNG, SVG or PDF by
        extension). Extra arguments go to the function in :mod:`refault.plot`."""
        from . import plot

        fig = plot.draw(self, kind, **kwargs)
        if path is not None:
            plot.save(fig, path)
        return fig

    def _repr_html_(self) -> str:
        """How a notebook shows a result: the run, the tasks' throughput and latency, the
        main reclaim counters, and the overview plot."""
        import base64
        import html
        import io

        from . import plot

        def table(rows: Sequence[tuple[str, ...]], head: tuple[str, ...]) -> str:
            th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
            body = "".join(
                "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                for row in rows
            )
            return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"

        tasks = self.tasks
        task_rows = [
            (str(label), f"{t.get('ops', 0):,}", f"{t.get('ops_per_sec', 0.0):,.1f}",
             f"{t.get('latency_mean_us', float('nan')):,.1f}",
             f"{t.get('latency_p99_us', float('nan')):,.1f}", f"{t.get('major_faults', 0):,}")
            for label, t in tasks.iterrows()
        ]
        main = ("pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct",
                "workingset_refault_anon", "workingset_refault_file", "pswpin", "pswpout",
                "pgmajfault", "oom_kill")
        vm = self.vmstat
        counter_rows = [(k, f"{vm[k]:,}") for k in main if k in vm]
        fig = plot.draw(self, "overview")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=80)
        png = base64.b64encode(buf.getvalue()).decode("ascii")
        policy = self.scenario.get("policy", {})
        head = (f"<p><b>{html.escape(self.name)}</b>: {self.events:,} events, "
                f"{self.sim_seconds:.2f} s simulated, LRU {html.escape(str(policy.get('lru', '?')))}"
                f", seed {html.escape(str(self.scenario.get('seed', '?')))}</p>")
        return (
            "<div class=\"refault-result\">" + head
            + table(task_rows, ("task", "ops", "ops/s", "mean µs", "p99 µs", "major faults"))
            + table(counter_rows, ("counter", "value"))
            + f'<img alt="overview" src="data:image/png;base64,{png}">'
            + "</div>"
        )

    def __repr__(self) -> str:
        return (
            f"<refault.Result {self.name}: {self.events} events, "
            f"{self.sim_seconds:.1f} s simulated>"
        )
