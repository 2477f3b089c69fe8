"""Figures of a result and of a sweep, the views kernel developers draw from vmstat logs.

Of one result (:class:`~refault.Result`, or a result file's path):

- :func:`memory`: memory composition over time, stacked (free, anon inactive/active, file
  inactive/active, the rest), and per memory cgroup its LRU lists against its limit;
- :func:`rates`: refault and activation rates, and scan and steal rates, over time;
- :func:`swap`: swap-in and swap-out rates over time, with swap in use;
- :func:`overview`: all of the above in one figure.

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


def _lines(ax: Axes, ts: pd.DataFrame, columns: Sequence[str], title: str, ylabel: str) -> None:
    for c in columns:
        if c in ts:
            ax.plot(ts.index, rate(ts, c), label=c, lw=1.2)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_xlim(ts.index.min(), ts.index.max())
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)


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
    """Memory (and each cgroup), refaults, scanning and swap, stacked in one figure."""
    r = _result(result)
    groups = cgroup_names(r)
    fig, axes = _axes(None, 4 + len(groups), height=2.6)
    _memory_axes(r, axes[0])
    for name, a in zip(groups, axes[1:]):
        _cgroup_axes(r, name, a)
    rest = axes[1 + len(groups):]
    ts = r.timeseries
    _lines(rest[0], ts, REFAULT_SERIES, "refaults", "pages/s")
    _lines(rest[1], ts, SCAN_SERIES, "reclaim scanning", "pages/s")
    swap(r, ax=rest[2])
    rest[2].set_title("swap")
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


KINDS = {"overview": overview, "memory": memory, "rates": rates, "swap": swap, "dirty": dirty, "slab": slab}


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
