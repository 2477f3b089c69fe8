"""Figures of a result and of a sweep, the views kernel developers draw from vmstat logs.

Of one result (:class:`~refault.Result`, or a result file's path):

- :func:`memory`: memory composition over time, stacked (free, anon inactive/active, file
  inactive/active, the rest), and per memory cgroup its LRU lists against its limit;
- :func:`rates`: refault and activation rates, and scan and steal rates, over time;
- :func:`swap`: swap-in and swap-out rates over time, with swap in use;
- :func:`tasks`: each task's throughput and mean latency over time;
- :func:`balance`: anon vs file scanning and refaults, and the refault ratio (refaults per
  operation): the balance swappiness moves;
- :func:`cgroups`: per memory cgroup, usage against ``memory.max`` and its limit reclaim
  (scanned, reclaimed, ``max`` hits) and refaults over time;
- :func:`reclaimers`: free memory against the watermarks, and kswapd runs against direct
  reclaim stalls;
- :func:`generations`: the multi-gen LRU's generations over time (``policy.lru=mglru``);
- :func:`overview`: memory, throughput, refaults, scanning and swap in one figure.

Of several results: :func:`compare` overlays them on the same axes (A/B).

The warm-up (not measured) is shaded; every line has its own colour and line style, so
equal series stay visible; panels and series that are zero throughout are left out.

Of a sweep's table (:func:`refault.sweep`): :func:`sweep_lines` (a line per value of one
parameter, e.g. the policy, over another) and :func:`sweep_heatmap` (a figure over two).

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot (safe in
threads and servers, shown inline in notebooks) and draws into ``ax`` when one is given.
Figures are unit conversions and differences of the core's samples, nothing more.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from ._output import write_output
from .result import PAGE_SIZE, Result

MIB = 1 << 20

#: Memory composition: (series, label, colour), bottom to top.
MEMORY_LAYERS = (
    ("nr_inactive_anon", "anon inactive", "#f4a6a6"),
    ("nr_active_anon", "anon active", "#c62828"),
    ("nr_inactive_file", "file inactive", "#9ecae1"),
    ("nr_active_file", "file active", "#1f5fa8"),
    ("nr_slab_reclaimable", "slab reclaimable", "#8bc34a"),
    ("nr_slab_unreclaimable", "slab unreclaimable", "#33691e"),
)

ResultLike = Result | str | os.PathLike[str]


def _result(r: ResultLike) -> Result:
    return r if isinstance(r, Result) else Result.load(r)


def _mib(pages: Any) -> Any:
    """Pages (a number, a Series or an array) in MiB."""
    return pages * PAGE_SIZE / MIB


def rate(ts: pd.DataFrame, column: str) -> pd.Series:
    """Per-second rate of a cumulative counter between consecutive samples (the first
    sample has no rate: 0)."""
    dt = ts.index.to_series().diff()
    r = ts[column].diff() / dt
    return r.fillna(0.0)


def _axes(ax: Axes | None, n: int = 1, height: float = 3.0) -> tuple[Figure, list[Axes]]:
    if ax is not None:
        fig = ax.get_figure()
        assert isinstance(fig, Figure)
        return fig, [ax]
    fig = Figure(figsize=(9, height * n), layout="constrained")
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    return fig, list(axes)


def cgroup_names(r: Result) -> list[str]:
    """Names of the memory cgroups that have series in the result."""
    names = []
    for col in r.data["timeseries"]:
        if col.startswith("cgroup.") and col.endswith(".usage_pages"):
            names.append(col[len("cgroup."):-len(".usage_pages")])
    return names


def _memory_axes(r: Result, ax: Axes) -> None:
    ts = r.timeseries
    total = r.scenario.get("machine", {}).get("memory_pages")
    layers = [(_mib(ts[c]), label, color) for c, label, color in MEMORY_LAYERS if c in ts]
    used = sum(ts[c] for c, _, _ in MEMORY_LAYERS if c in ts) + ts.get("nr_free_pages", 0)
    ys = [y for y, _, _ in layers]
    labels = [lab for _, lab, _ in layers]
    colors = [col for _, _, col in layers]
    if total is not None:
        # Slab, page tables, the kernel's reserve, pages off the LRU lists.
        ys.append(_mib((total - used).clip(lower=0)))
        labels.append("other")
        colors.append("#d9c8a9")
    if "nr_free_pages" in ts:
        ys.append(_mib(ts["nr_free_pages"]))
        labels.append("free")
        colors.append("#e8e8e8")
    ax.stackplot(ts.index, *ys, labels=labels, colors=colors, linewidth=0)
    ax.set_ylabel("MiB")
    ax.set_title(f"{r.name}: memory")
    ax.set_xlim(ts.index.min(), ts.index.max())
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)


def _cgroup_axes(r: Result, name: str, ax: Axes) -> None:
    ts = r.timeseries
    prefix = f"cgroup.{name}."
    ys, labels, colors = [], [], []
    for c, label, color in MEMORY_LAYERS:
        col = prefix + c
        if col in ts:
            ys.append(_mib(ts[col]))
            labels.append(label)
            colors.append(color)
    if ys:
        ax.stackplot(ts.index, *ys, labels=labels, colors=colors, linewidth=0)
    if prefix + "usage_pages" in ts:
        ax.plot(ts.index, _mib(ts[prefix + "usage_pages"]), color="black", lw=1, label="usage")
    for cg in r.scenario.get("cgroups", []):
        limit = cg.get("memory_max_pages") if isinstance(cg, dict) else None
        if cg.get("name") == name and isinstance(limit, (int, float)):
            ax.axhline(_mib(float(limit)), color="black", ls="--", lw=1, label="memory.max")
    ax.set_ylabel("MiB")
    ax.set_title(f"cgroup {name}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)


def memory(result: ResultLike, ax: Axes | None = None, per_cgroup: bool = True) -> Figure:
    """Memory composition over time, stacked, in MiB; below it, one panel per memory cgroup
    (its LRU lists, usage and ``memory.max``) unless ``per_cgroup`` is false or ``ax`` is
    given."""
    r = _result(result)
    groups = cgroup_names(r) if per_cgroup and ax is None else []
    fig, axes = _axes(ax, 1 + len(groups))
    _memory_axes(r, axes[0])
    for name, a in zip(groups, axes[1:]):
        _cgroup_axes(r, name, a)
    axes[-1].set_xlabel("simulated time (s)")
    return fig


#: Line styles cycled with the colours, so that equal series stay visible on top of each
#: other (a dashed line over a solid one).
LINE_STYLES = ("-", "--", ":", "-.")


def _style(i: int) -> dict[str, Any]:
    return {"ls": LINE_STYLES[i % len(LINE_STYLES)], "color": f"C{i % 10}", "lw": 1.3}


def warmup_seconds(r: Result) -> float:
    """The scenario's warm-up (``run.warmup``) in seconds; 0 without one."""
    ns = r.scenario.get("run", {}).get("warmup_ns", 0)
    return float(ns) / 1e9 if isinstance(ns, (int, float)) else 0.0


def shade_warmup(ax: Axes, r: Result) -> None:
    """Shade the warm-up (not measured: counters and task figures start after it)."""
    w = warmup_seconds(r)
    if w > 0:
        ax.axvspan(0, w, color="0.85", alpha=0.5, lw=0, label="_warm-up", zorder=0)


def _nonzero(y: Any) -> bool:
    arr = np.asarray(y, dtype=float)
    return bool(np.any(np.isfinite(arr) & (arr != 0)))


def _finish(ax: Axes, ts: pd.DataFrame, title: str, ylabel: str) -> None:
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_xlim(ts.index.min(), ts.index.max())
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)


def _lines(ax: Axes, ts: pd.DataFrame, columns: Sequence[str], title: str, ylabel: str) -> int:
    """Rates of the ``columns`` that are not zero throughout, each with its own colour and
    line style; returns how many were drawn."""
    n = 0
    for c in columns:
        if c in ts:
            y = rate(ts, c)
            if _nonzero(y):
                ax.plot(ts.index, y, label=c, **_style(n))
                n += 1
    _finish(ax, ts, title, ylabel)
    return n


def _has_rates(ts: pd.DataFrame, columns: Sequence[str]) -> bool:
    return any(c in ts and _nonzero(ts[c].diff().fillna(0)) for c in columns)


REFAULT_SERIES = (
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
)
SCAN_SERIES = ("pgscan_kswapd", "pgscan_direct", "pgsteal_anon", "pgsteal_file", "pgrefill")
SWAP_SERIES = ("pswpin", "pswpout")


def rates(result: ResultLike, ax: Axes | None = None) -> Figure:
    """Refault and activation rates (pages/s), and scan and steal rates (pages/s), over
    time; with ``ax``, only the refault panel."""
    r = _result(result)
    ts = r.timeseries
    fig, axes = _axes(ax, 1 if ax is not None else 2)
    _lines(axes[0], ts, REFAULT_SERIES, f"{r.name}: refaults", "pages/s")
    if len(axes) > 1:
        _lines(axes[1], ts, SCAN_SERIES, f"{r.name}: reclaim scanning", "pages/s")
    axes[-1].set_xlabel("simulated time (s)")
    return fig


def swap(result: ResultLike, ax: Axes | None = None) -> Figure:
    """Swap-in and swap-out rates (pages/s) over time, and swap in use (MiB, right axis)."""
    r = _result(result)
    ts = r.timeseries
    fig, axes = _axes(ax)
    a = axes[0]
    _lines(a, ts, SWAP_SERIES, f"{r.name}: swap", "pages/s")
    if "nr_swap_used" in ts:
        b = a.twinx()
        b.plot(ts.index, _mib(ts["nr_swap_used"]), color="gray", ls=":", label="swap used (MiB)")
        b.set_ylabel("swap used (MiB)")
        b.set_ylim(bottom=0)
        handles, labels = a.get_legend_handles_labels()
        h2, l2 = b.get_legend_handles_labels()
        a.legend(handles + h2, labels + l2, loc="upper left", bbox_to_anchor=(1.08, 1.0),
                 fontsize="small", frameon=False)
    a.set_xlabel("simulated time (s)")
    return fig


SHRINKER_SERIES = ("slabs_scanned", "kswapd_inodesteal", "pginodesteal")


def slab(result: ResultLike, ax: Axes | None = None) -> Figure:
    """Reclaimable slab against the page cache (MiB) with their ratio (right axis), and the
    shrinkers' work: objects scanned and page cache stolen with inodes (per second); with
    ``ax``, only the first panel."""
    r = _result(result)
    ts = r.timeseries
    fig, axes = _axes(ax, 1 if ax is not None else 2)
    a = axes[0]
    if "nr_slab_reclaimable" in ts and "nr_file_pages" in ts:
        a.plot(ts.index, _mib(ts["nr_slab_reclaimable"]), color="#8bc34a", label="slab reclaimable")
        a.plot(ts.index, _mib(ts["nr_file_pages"]), color="#1f5fa8", label="page cache")
        if "nr_dirty" in ts:
            a.plot(ts.index, _mib(ts["nr_dirty"]), color="#9ecae1", ls="--", label="dirty")
        b = a.twinx()
        ratio = ts["nr_slab_reclaimable"] / ts["nr_file_pages"].where(ts["nr_file_pages"] > 0)
        b.plot(ts.index, ratio, color="black", lw=1, ls=":", label="slab / page cache")
        b.set_ylabel("slab / page cache")
        b.set_ylim(bottom=0)
        handles, labels = a.get_legend_handles_labels()
        h2, l2 = b.get_legend_handles_labels()
        a.legend(handles + h2, labels + l2, loc="upper left", bbox_to_anchor=(1.08, 1.0),
                 fontsize="small", frameon=False)
    a.set_title(f"{r.name}: slab and page cache")
    a.set_ylabel("MiB")
    a.set_xlim(ts.index.min(), ts.index.max())
    if len(axes) > 1:
        _lines(axes[1], ts, SHRINKER_SERIES, f"{r.name}: shrinkers", "per second")
    axes[-1].set_xlabel("simulated time (s)")
    return fig


def overview(result: ResultLike) -> Figure:
    """Memory (and each cgroup), throughput, refaults, anon/file scanning, reclaim scanning
    and swap, stacked in one figure; panels with nothing but zeros are left out, and the
    warm-up is shaded."""
    r = _result(result)
    groups = cgroup_names(r)
    ts = r.timeseries
    panels: list[str] = ["memory"] + [f"cgroup:{g}" for g in groups]
    if task_names(r):
        panels.append("tasks")
    for key, cols in (("refaults", REFAULT_SERIES), ("balance", ("pgscan_anon", "pgscan_file")),
                      ("scan", SCAN_SERIES), ("swap", SWAP_SERIES)):
        if _has_rates(ts, cols):
            panels.append(key)
    fig, axes = _axes(None, len(panels), height=2.6)
    for a, key in zip(axes, panels):
        if key == "memory":
            _memory_axes(r, a)
        elif key.startswith("cgroup:"):
            _cgroup_axes(r, key[len("cgroup:"):], a)
        elif key == "tasks":
            tasks(r, ax=a)
            a.set_title("throughput")
        elif key == "refaults":
            _lines(a, ts, REFAULT_SERIES, "refaults", "pages/s")
        elif key == "balance":
            _lines(a, ts, ("pgscan_anon", "pgscan_file"), "scanned, anon vs file", "pages/s")
        elif key == "scan":
            _lines(a, ts, SCAN_SERIES, "reclaim scanning", "pages/s")
        elif key == "swap":
            swap(r, ax=a)
            a.set_title("swap")
        if key != "tasks":  # tasks() shades its own
            shade_warmup(a, r)
    axes[-1].set_xlabel("simulated time (s)")
    return fig


def task_names(r: Result) -> list[str]:
    """Tasks with a throughput series (``task.NAME.ops``), instances (``NAME/K``) included."""
    return [c[len("task."):-len(".ops")] for c in r.data["timeseries"]
            if c.startswith("task.") and c.endswith(".ops")]


def _task_groups(r: Result) -> dict[str, list[str]]:
    """Task series grouped by task: instances ``NAME/K`` under ``NAME``."""
    groups: dict[str, list[str]] = {}
    for t in task_names(r):
        base, _, k = t.rpartition("/")
        groups.setdefault(base if base and k.isdigit() else t, []).append(t)
    return groups


def task_throughput(r: Result) -> pd.DataFrame:
    """Operations per second of each task (instances summed) per sample interval."""
    ts = r.timeseries
    out = {}
    for name, members in _task_groups(r).items():
        out[name] = sum(rate(ts, f"task.{m}.ops") for m in members)
    return pd.DataFrame(out, index=ts.index)


def task_latency(r: Result) -> pd.DataFrame:
    """Mean latency (µs) of each task's operations that ended in each sample interval
    (instances together); NaN for an interval without operations."""
    ts = r.timeseries
    out = {}
    for name, members in _task_groups(r).items():
        cols = [f"task.{m}.latency_sum_us" for m in members]
        if not all(c in ts for c in cols):
            continue
        dsum = ts[cols].diff().sum(axis=1, min_count=1)
        dops = ts[[f"task.{m}.ops" for m in members]].diff().sum(axis=1, min_count=1)
        mean = dsum / dops.where(dops > 0)
        out[name] = mean.where(mean >= 0)
    return pd.DataFrame(out, index=ts.index)


def tasks(result: ResultLike, ax: Axes | None = None) -> Figure:
    """Each task's throughput (ops/s) and mean latency (µs) over time, instances of a task
    together; with ``ax``, only the throughput."""
    r = _result(result)
    ts = r.timeseries
    fig, axes = _axes(ax, 1 if ax is not None else 2)
    for i, (name, y) in enumerate(task_throughput(r).items()):
        axes[0].plot(ts.index, y, label=name, **_style(i))
    shade_warmup(axes[0], r)
    _finish(axes[0], ts, f"{r.name}: throughput", "ops/s")
    if len(axes) > 1:
        for i, (name, y) in enumerate(task_latency(r).items()):
            axes[1].plot(ts.index, y, label=name, **_style(i))
        shade_warmup(axes[1], r)
        _finish(axes[1], ts, f"{r.name}: mean latency per interval", "µs")
    axes[-1].set_xlabel("simulated time (s)")
    return fig


def refault_ratio(r: Result) -> pd.Series:
    """Refaults (anon and file) per task operation in each sample interval: how much of the
    work found its page evicted; NaN for an interval without operations."""
    ts = r.timeseries
    refaults = sum(rate(ts, c) for c in ("workingset_refault_anon", "workingset_refault_file")
                   if c in ts)
    ops = task_throughput(r).sum(axis=1)
    return (refaults / ops.where(ops > 0)).rename("refaults per op")


def balance(result: ResultLike, ax: Axes | None = None) -> Figure:
    """The anon/file balance swappiness moves: scanning of anon against file pages, and
    anon against file refaults (pages/s), and the refault ratio (refaults per operation);
    with ``ax``, only the scanning panel."""
    r = _result(result)
    ts = r.timeseries
    fig, axes = _axes(ax, 1 if ax is not None else 3)
    _lines(axes[0], ts, ("pgscan_anon", "pgscan_file"), f"{r.name}: scanned, anon vs file",
           "pages/s")
    if len(axes) > 1:
        _lines(axes[1], ts, ("workingset_refault_anon", "workingset_refault_file"),
               "refaults, anon vs file", "pages/s")
        axes[2].plot(ts.index, refault_ratio(r), color="black", lw=1.3, label="refaults per op")
        _finish(axes[2], ts, "refault ratio", "refaults / op")
    for a in axes:
        shade_warmup(a, r)
    axes[-1].set_xlabel("simulated time (s)")
    return fig


CGROUP_RATES = (
    ("pgscan", "scanned"),
    ("pgsteal", "reclaimed"),
    ("workingset_activate_anon", "anon refaults activated"),
    ("workingset_activate_file", "file refaults activated"),
    ("max_events", "memory.max hits"),
)


def cgroups(result: ResultLike) -> Figure:
    """Per memory cgroup: usage against ``memory.max`` (MiB), and its reclaim at the limit
    and refaults over time (per second: memory.stat ``pgscan``/``pgsteal``,
    ``workingset_activate_*``, memory.events ``max``). Empty panels are left out."""
    r = _result(result)
    ts = r.timeseries
    names = cgroup_names(r)
    panels: list[tuple[str, str]] = []
    for n in names:
        panels.append((n, "usage"))
        if _has_rates(ts, [f"cgroup.{n}.{c}" for c, _ in CGROUP_RATES]):
            panels.append((n, "rates"))
    fig, axes = _axes(None, max(1, len(panels)), height=2.6)
    for a, (n, what) in zip(axes, panels):
        prefix = f"cgroup.{n}."
        if what == "usage":
            a.plot(ts.index, _mib(ts[prefix + "usage_pages"]), color="black", lw=1.3,
                   label="usage")
            for cg in r.scenario.get("cgroups", []):
                limit = cg.get("memory_max_pages") if isinstance(cg, dict) else None
                if cg.get("name") == n and isinstance(limit, (int, float)):
                    a.axhline(_mib(float(limit)), color="C3", ls="--", lw=1, label="memory.max")
            _finish(a, ts, f"cgroup {n}: usage", "MiB")
        else:
            k = 0
            for c, label in CGROUP_RATES:
                if prefix + c in ts and _nonzero(rate(ts, prefix + c)):
                    a.plot(ts.index, rate(ts, prefix + c), label=label, **_style(k))
                    k += 1
            _finish(a, ts, f"cgroup {n}: reclaim and refaults", "per second")
        shade_warmup(a, r)
    axes[-1].set_xlabel("simulated time (s)")
    return fig


def reclaimers(result: ResultLike, ax: Axes | None = None) -> Figure:
    """Free memory against the zones' watermarks (min, low, high, summed over the zones),
    and who reclaims: kswapd's runs (``pageoutrun``, per second) against direct-reclaim
    stalls (``allocstall_*``) and the pages each scanned; with ``ax``, only the first
    panel."""
    r = _result(result)
    ts = r.timeseries
    fig, axes = _axes(ax, 1 if ax is not None else 2)
    a = axes[0]
    if "nr_free_pages" in ts:
        a.plot(ts.index, _mib(ts["nr_free_pages"]), color="black", lw=1.3, label="free")
    zones = r.data.get("watermarks") or []
    for k, (mark, ls) in enumerate((("min", ":"), ("low", "--"), ("high", "-."))):
        total = sum(z.get(mark, 0) for z in zones if isinstance(z, dict))
        if total:
            a.axhline(_mib(float(total)), color=f"C{k + 1}", ls=ls, lw=1, label=f"{mark} watermark")
    shade_warmup(a, r)
    _finish(a, ts, f"{r.name}: free memory and watermarks", "MiB")
    if len(axes) > 1:
        b = axes[1]
        k = 0
        for c, label in (("pageoutrun", "kswapd runs"),
                         ("allocstall_movable", "direct reclaim stalls (user and page-cache masks)"),
                         ("allocstall_normal", "direct reclaim stalls (kernel masks)")):
            if c in ts and _nonzero(rate(ts, c)):
                b.plot(ts.index, rate(ts, c), label=label, **_style(k))
                k += 1
        shade_warmup(b, r)
        _finish(b, ts, "kswapd and direct reclaim", "per second")
    axes[-1].set_xlabel("simulated time (s)")
    return fig


def generations(result: ResultLike, ax: Axes | None = None) -> Figure:
    """The multi-gen LRU's generations over time, stacked by age (youngest at the bottom;
    anon and file), in MiB, over every memcg; policy.lru=mglru results only."""
    r = _result(result)
    ts = r.timeseries
    cols = [c for c in ts.columns if c.startswith("lru_gen.gen")]
    if not cols:
        raise ValueError(f"{r.name}: no multi-gen LRU series (run with policy.lru=mglru)")
    fig, axes = _axes(ax)
    a = axes[0]
    ys, labels, colors = [], [], []
    ages = sorted({c.split(".")[1] for c in cols})
    for ty, cmap in (("anon", ("#c62828", "#e57373", "#ef9a9a", "#ffcdd2")),
                     ("file", ("#1f5fa8", "#64b5f6", "#90caf9", "#bbdefb"))):
        for k, age in enumerate(ages):
            col = f"lru_gen.{age}.{ty}"
            if col in ts and _nonzero(ts[col]):
                ys.append(_mib(ts[col]))
                labels.append(f"{ty} {'youngest' if k == 0 else f'{k} older'}")
                colors.append(cmap[k % len(cmap)])
    if ys:
        a.stackplot(ts.index, *ys, labels=labels, colors=colors, linewidth=0)
    shade_warmup(a, r)
    _finish(a, ts, f"{r.name}: multi-gen LRU generations", "MiB")
    a.set_xlabel("simulated time (s)")
    return fig


#: The panels :func:`compare` overlays: (title, unit, how to get a series of a result).
def _compare_panels() -> list[tuple[str, str, Any]]:
    def total_ops(r: Result) -> pd.Series:
        return task_throughput(r).sum(axis=1)

    def rate_of(col: str) -> Any:
        return lambda r: rate(r.timeseries, col) if col in r.timeseries else None

    return [
        ("throughput (all tasks)", "ops/s", total_ops),
        ("file refaults", "pages/s", rate_of("workingset_refault_file")),
        ("anon refaults", "pages/s", rate_of("workingset_refault_anon")),
        ("anon pages scanned", "pages/s", rate_of("pgscan_anon")),
        ("file pages scanned", "pages/s", rate_of("pgscan_file")),
        ("swap-out", "pages/s", rate_of("pswpout")),
        ("free memory", "MiB",
         lambda r: _mib(r.timeseries["nr_free_pages"]) if "nr_free_pages" in r.timeseries else None),
    ]


def compare(results: Sequence[ResultLike], labels: Sequence[str] | None = None) -> Figure:
    """A/B (or more): the results overlaid on the same axes, one colour and line style per
    result, for throughput, anon and file refaults and scanning, swap-out and free memory;
    panels where every result is zero are left out."""
    rs = [_result(x) for x in results]
    names = list(labels) if labels is not None else [r.name for r in rs]
    panels = []
    for title, unit, get in _compare_panels():
        series = [get(r) for r in rs]
        if any(y is not None and _nonzero(y) for y in series):
            panels.append((title, unit, series))
    fig, axes = _axes(None, max(1, len(panels)), height=2.4)
    for a, (title, unit, series) in zip(axes, panels):
        for i, (r, y, name) in enumerate(zip(rs, series, names)):
            if y is not None:
                a.plot(r.timeseries.index, y, label=name, **_style(i))
        shade_warmup(a, rs[0])
        a.set_title(title)
        a.set_ylabel(unit)
        a.grid(True, alpha=0.3)
    if panels:
        axes[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small",
                       frameon=False)
    axes[-1].set_xlabel("simulated time (s)")
    return fig


DIRTY_SERIES = (
    ("nr_dirty", "dirty", "-"),
    ("nr_writeback", "writeback", "-"),
    ("nr_dirty_threshold", "dirty limit", "--"),
    ("nr_dirty_background_threshold", "background threshold", ":"),
)


def dirty(result: ResultLike, ax: Axes | None = None) -> Figure:
    """Dirty and writeback pages (MiB) with the dirty limits over time; below it (unless
    ``ax`` is given), the share of each sample interval every task spent paused by dirty
    throttling (``balance_dirty_pages()``)."""
    r = _result(result)
    ts = r.timeseries
    throttle = [c for c in ts.columns if c.startswith("task.") and c.endswith(".dirty_throttle_s")]
    fig, axes = _axes(ax, 1 if ax is not None or not throttle else 2)
    a = axes[0]
    for c, label, ls in DIRTY_SERIES:
        if c in ts:
            a.plot(ts.index, _mib(ts[c]), label=label, ls=ls, lw=1.2)
    a.set_title(f"{r.name}: dirty pages")
    a.set_ylabel("MiB")
    a.set_xlim(ts.index.min(), ts.index.max())
    a.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    if len(axes) > 1:
        b = axes[1]
        for c in throttle:
            b.plot(ts.index, rate(ts, c), label=c[len("task."):-len(".dirty_throttle_s")], lw=1.2)
        b.set_title("time paused by dirty throttling")
        b.set_ylabel("share of time")
        b.set_xlim(ts.index.min(), ts.index.max())
        b.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    axes[-1].set_xlabel("simulated time (s)")
    return fig


KINDS = {"overview": overview, "memory": memory, "rates": rates, "swap": swap, "dirty": dirty,
         "slab": slab, "tasks": tasks, "balance": balance, "cgroups": cgroups,
         "reclaimers": reclaimers, "generations": generations}


def draw(result: ResultLike, kind: str = "overview", **kwargs: Any) -> Figure:
    """The figure of ``kind`` (one of :data:`KINDS`) for ``result``."""
    try:
        f = KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown plot kind {kind!r}; one of {', '.join(KINDS)}") from None
    return f(result, **kwargs)


def save(fig: Figure, path: str | os.PathLike[str], dpi: int = 110) -> None:
    """Save ``fig``; the format follows the extension (``.png``, ``.svg``, ``.pdf``; PNG
    without one). Written as every output is (:mod:`refault._output`): atomically over a
    file, through a device, never replacing it; ``-`` is standard output."""
    fmt = Path(path).suffix.lstrip(".").lower() if os.fspath(path) != "-" else ""
    if os.fspath(path) != "-":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt or "png", dpi=dpi)
    write_output(path, buf.getvalue())


def _order(values: pd.Series) -> list[Any]:
    """Distinct values in order of first appearance (the grid's order)."""
    return list(dict.fromkeys(values.tolist()))


def _numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
               for v in values)


def sweep_lines(df: pd.DataFrame, x: str, y: str, hue: str | None = None,
                ax: Axes | None = None) -> Figure:
    """``y`` over the swept parameter ``x``, one line per value of ``hue`` (a policy, say).

    A numeric ``x`` is drawn to scale; other values (``"4G"``) at even steps in grid order.
    Points that differ in other parameters are averaged.
    """
    fig, axes = _axes(ax, 1, height=4.0)
    a = axes[0]
    xs = _order(df[x])
    scale = _numeric(xs)
    groups = [(None, df)] if hue is None else [(h, df[df[hue] == h]) for h in _order(df[hue])]
    for h, g in groups:
        means = g.groupby(x, sort=False)[y].mean()
        pos = [v if scale else xs.index(v) for v in means.index]
        order = np.argsort(pos)
        a.plot(np.asarray(pos)[order], means.to_numpy()[order], marker="o",
               label=None if h is None else f"{hue}={h}")
    if not scale:
        a.set_xticks(range(len(xs)), [str(v) for v in xs])
    a.set_xlabel(x)
    a.set_ylabel(y)
    a.grid(True, alpha=0.3)
    if hue is not None:
        a.legend(fontsize="small", frameon=False)
    return fig


def sweep_heatmap(df: pd.DataFrame, x: str, y: str, value: str, ax: Axes | None = None,
                  annotate: bool = True, cmap: str = "viridis", log: bool = False) -> Figure:
    """``value`` over two swept parameters, ``x`` across and ``y`` up, each in grid order;
    cells are annotated with their value; ``log`` colours on a log scale (for figures that
    span decades, such as throughput when the cache starts to fit). Points that differ in
    other parameters are averaged."""
    fig, axes = _axes(ax, 1, height=4.5)
    a = axes[0]
    xs, ys = _order(df[x]), _order(df[y])
    table = df.groupby([y, x], sort=False)[value].mean().unstack(x).reindex(index=ys, columns=xs)
    data = table.to_numpy(dtype=float)
    norm = None
    if log:
        positive = data[np.isfinite(data) & (data > 0)]
        if positive.size:
            norm = LogNorm(vmin=positive.min(), vmax=positive.max())
    im = a.imshow(data, cmap=cmap, aspect="auto", origin="lower", norm=norm)
    a.set_xticks(range(len(xs)), [str(v) for v in xs])
    a.set_yticks(range(len(ys)), [str(v) for v in ys])
    a.set_xlabel(x)
    a.set_ylabel(y)
    a.set_title(value)
    fig.colorbar(im, ax=a)
    if annotate:
        for i in range(len(ys)):
            for j in range(len(xs)):
                v = data[i, j]
                if np.isfinite(v):
                    # Dark text on the light end of the colour map, light on the dark end.
                    level: Any = im.norm(v)
                    light = float(level) > 0.5 if not (log and v <= 0) else False
                    a.text(j, i, _short(v), ha="center", va="center", fontsize="small",
                           color="black" if light else "white")
    return fig


def _short(v: float) -> str:
    """A compact cell label: 1234567 → 1.23M, 0.5 → 0.5."""
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= div:
            return f"{v / div:.3g}{unit}"
    return f"{v:.3g}"
