"""One self-contained HTML file comparing results: an mmtests-style table (the baseline, each
change, the percent change) and the plots, embedded as PNG data, so the file opens in any
browser without network.

The table holds the same rows as ``refault compare``, in the same order: per task ``ops/s``,
``latency_mean_us`` and ``latency_p99_us``; ``sim_seconds``; then every vmstat counter that is
non-zero in some result, in report order (reclaim, workingset, swap and faults, the rest).
It is arithmetic on the results' figures (presentation), not model logic.
"""

from __future__ import annotations

import base64
import html
import io
import math
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import plot
from .result import Result, task_labels, write_atomic

ResultLike = Result | str | os.PathLike[str]

# Report order of counters: groups of patterns (a trailing `_` is a prefix), then the rest.
_COUNTER_GROUPS: tuple[tuple[str, ...], ...] = (
    ("pgscan_", "pgsteal_", "pgrefill", "pgactivate", "pgdeactivate", "pgrotated",
     "allocstall_"),
    ("workingset_",),
    ("pswpin", "pswpout", "pgmajfault", "pgfault"),
)


def counter_order(name: str) -> tuple[int, int, str]:
    """Sort key putting counters in report order (as ``refault compare`` lists them)."""
    for g, patterns in enumerate(_COUNTER_GROUPS):
        for i, p in enumerate(patterns):
            if (p.endswith("_") and name.startswith(p)) or name == p:
                return (g, i, name)
    return (len(_COUNTER_GROUPS), 0, name)


def percent_change(baseline: float, value: float) -> float:
    """Change of ``value`` against ``baseline`` in percent of the baseline's magnitude; 0
    when both are zero; NaN when the baseline is zero and the value is not, or either is
    missing."""
    if not (math.isfinite(baseline) and math.isfinite(value)):
        return math.nan
    if baseline == 0:
        return 0.0 if value == 0 else math.nan
    return (value - baseline) / abs(baseline) * 100.0


def format_value(v: float) -> str:
    """``1234``, ``80.65``, ``99.2``; ``-`` when missing."""
    if isinstance(v, float) and math.isnan(v):
        return "-"
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def format_percent(p: float) -> str:
    """``+30.18%``, ``-54.42%``, ``0.00%``, ``n/a``."""
    if math.isnan(p):
        return "n/a"
    p = round(p, 2)
    return "0.00%" if p == 0 else f"{p:+.2f}%"


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def compare_table(results: Sequence[tuple[str, Mapping[str, Any]]]) -> pd.DataFrame:
    """The comparison of ``(label, result document)`` pairs against the first.

    One row per figure (index ``figure``); a column of values per result (named by its
    label) and, for every result after the baseline, ``<label> change`` (percent, NaN for
    n/a).
    """
    labels = [name for name, _ in results]
    per_result = []
    for _, r in results:
        tasks = r.get("tasks", [])
        per_result.append(dict(zip(task_labels(tasks), tasks)))
    rows: list[tuple[str, list[float]]] = []
    seen: list[str] = []
    for tasks in per_result:
        for label in tasks:
            if label not in seen:
                seen.append(label)
    for label in seen:
        def figure(f: Any) -> list[float]:
            return [f(t[label]) if label in t else math.nan for t in per_result]
        rows.append((f"ops/s {label}", figure(lambda t: _num(t.get("ops_per_sec")))))
        rows.append((f"latency_mean_us {label}",
                     figure(lambda t: _num(t.get("latency_us", {}).get("mean")))))
        rows.append((f"latency_p99_us {label}",
                     figure(lambda t: _num(t.get("latency_us", {}).get("p99")))))
    rows.append(("sim_seconds", [_num(r.get("sim_seconds")) for _, r in results]))
    counters: list[str] = []
    for _, r in results:
        for name, v in r.get("vmstat", {}).items():
            if v != 0 and name not in counters:
                counters.append(name)
    counters.sort(key=counter_order)
    for name in counters:
        rows.append((name, [_num(r.get("vmstat", {}).get(name, 0)) for _, r in results]))

    data: dict[str, list[float]] = {}
    for i, label in enumerate(labels):
        data[label] = [vals[i] for _, vals in rows]
        if i > 0:
            data[f"{label} change"] = [percent_change(vals[0], vals[i]) for _, vals in rows]
    return pd.DataFrame(data, index=pd.Index([f for f, _ in rows], name="figure"))


def _labels(results: Sequence[ResultLike], loaded: Sequence[Result]) -> list[str]:
    """File stems for paths, scenario names for Result objects; made unique."""
    raw = [
        Path(r).stem if not isinstance(r, Result) else lr.name
        for r, lr in zip(results, loaded)
    ]
    out: list[str] = []
    for name in raw:
        label, k = name, 1
        while label in out:
            k += 1
            label = f"{name}#{k}"
        out.append(label)
    return out


def _png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def comparison_figure(results: Sequence[Result], labels: Sequence[str]) -> Figure:
    """One line per result: file and anon refault rates, swap-out rate and free memory."""
    fig = Figure(figsize=(9, 9), layout="constrained")
    axes = fig.subplots(4, 1, sharex=True)
    panels = (
        ("workingset_refault_file", "file refaults", "pages/s", True),
        ("workingset_refault_anon", "anon refaults", "pages/s", True),
        ("pswpout", "swap-out", "pages/s", True),
        ("nr_free_pages", "free memory", "MiB", False),
    )
    for ax, (col, title, unit, is_rate) in zip(axes, panels):
        for r, label in zip(results, labels):
            ts = r.timeseries
            if col not in ts:
                continue
            y = plot.rate(ts, col) if is_rate else ts[col] * 4096 / (1 << 20)
            ax.plot(ts.index, y, label=label, lw=1.2)
        ax.set_title(title)
        ax.set_ylabel(unit)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize="small", frameon=False)
    axes[-1].set_xlabel("simulated time (s)")
    return fig


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { padding: 0.2em 0.8em; border-bottom: 1px solid #ddd; }
th { text-align: left; background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.up { color: #0550ae; } td.down { color: #953800; }
img.plot { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
.meta td { border: none; padding: 0.1em 0.8em 0.1em 0; }
"""


def _meta_rows(r: Result) -> list[tuple[str, str]]:
    s = r.scenario
    sysctl = s.get("sysctl", {})
    policy = s.get("policy", {})
    mem = s.get("machine", {}).get("memory_pages")
    return [
        ("scenario", r.name + (f" — {s['description']}" if s.get("description") else "")),
        ("memory", f"{mem * 4096 / (1 << 20):.0f} MiB" if isinstance(mem, int) else "?"),
        ("vm.swappiness", str(sysctl.get("swappiness", "?"))),
        ("policy", f"lru={policy.get('lru', '?')}, balance={policy.get('balance', '?')}"),
        ("seed", str(s.get("seed", "?"))),
        ("simulated", f"{r.sim_seconds:.2f} s, {r.events} events"),
    ]


def render_html(results: Sequence[ResultLike], names: Sequence[str] | None = None,
                title: str | None = None, plots: bool = True) -> str:
    """The report as an HTML string (see the module documentation)."""
    if not results:
        raise ValueError("a report needs at least one result")
    loaded = [r if isinstance(r, Result) else Result.load(r) for r in results]
    labels = list(names) if names is not None else _labels(results, loaded)
    if len(labels) != len(loaded):
        raise ValueError("one name per result")
    table = compare_table([(lab, r.data) for lab, r in zip(labels, loaded)])
    esc = html.escape
    title = title or ("refault: " + " vs ".join(labels))

    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
           f"<h1>{esc(title)}</h1>"]
    out.append('<h2>Results</h2><table class="meta"><tr><th></th>')
    out.extend(f"<th>{esc(lab)}</th>" for lab in labels)
    out.append("</tr>")
    metas = [_meta_rows(r) for r in loaded]
    for i, (key, _) in enumerate(metas[0]):
        out.append(f"<tr><td>{esc(key)}</td>")
        out.extend(f"<td>{esc(m[i][1])}</td>" for m in metas)
        out.append("</tr>")
    out.append("</table>")

    out.append('<h2>Comparison</h2><table id="compare" class="compare"><thead><tr>'
               "<th>figure</th>")
    for i, lab in enumerate(labels):
        out.append(f"<th>{esc(lab)}</th>")
        if i > 0:
            out.append("<th>change</th>")
    out.append("</tr></thead><tbody>")
    for figure, row in table.iterrows():
        out.append(f'<tr class="row" data-figure="{esc(str(figure))}"><td>{esc(str(figure))}</td>')
        for i, lab in enumerate(labels):
            out.append(f'<td class="num">{format_value(row[lab])}</td>')
            if i > 0:
                p = row[f"{lab} change"]
                cls = "" if not np.isfinite(p) or round(p, 2) == 0 else (" up" if p > 0 else " down")
                out.append(f'<td class="num{cls}">{format_percent(p)}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")

    if plots:
        out.append("<h2>Plots</h2>")
        if len(loaded) > 1:
            fig = comparison_figure(loaded, labels)
            out.append(f'<img class="plot" alt="comparison" src="data:image/png;base64,{_png(fig)}">')
        for lab, r in zip(labels, loaded):
            out.append(f"<h3>{esc(lab)}</h3>")
            fig = plot.overview(r)
            out.append(f'<img class="plot" alt="{esc(lab)} overview" '
                       f'src="data:image/png;base64,{_png(fig)}">')
    out.append("<p><small>Written by refault's Python package; counters are /proc/vmstat names, "
               "changes are against the first result.</small></p></body></html>")
    return "\n".join(out)


def report(results: Sequence[ResultLike], path: str | os.PathLike[str] | None = None,
           names: Sequence[str] | None = None, title: str | None = None,
           plots: bool = True) -> str:
    """Build the HTML report of ``results`` (the first is the baseline) and, with ``path``,
    write it there atomically. Returns the HTML.

    ``results`` are :class:`~refault.Result` objects or result files; ``names`` label them
    (default: file stems, or scenario names).
    """
    text = render_html(results, names=names, title=title, plots=plots)
    if path is not None:
        write_atomic(path, text)
    return text
