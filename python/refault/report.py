"""One self-contained HTML file comparing results: an mmtests-style table (the baseline, each
change, the percent change) and the plots, embedded as PNG data, so the file opens in any
browser without network.

The table is ``refault compare``'s, computed by the same code in the core
(``_refault.compare``): per task (instances aggregated) ``ops/s``, ``latency_mean_us`` and
``latency_p99_us``; ``sim_seconds``; the vmstat counters, then the end-of-run gauges in a
section of their own; rows zero everywhere left out; one precision per row; changes coloured
green when better and red when worse (throughput up, latency, stalls, refaults and swapping
down). A side with several runs (seeds) shows its mean and standard deviation, and marks a
change significant by Welch's t-test with ``*``.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import _refault, plot
from .result import Result, write_atomic

ResultLike = Result | str | os.PathLike[str]

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


def format_cell(v: float, decimals: int) -> str:
    """A table cell with the row's precision (``refault compare``'s): ``6579``, ``99.20``;
    ``-`` when missing."""
    if isinstance(v, float) and math.isnan(v):
        return "-"
    s = f"{v:.{decimals}f}"
    return s.lstrip("-") if set(s.lstrip("-")) <= {"0", "."} else s


Side = ResultLike | Sequence[ResultLike]


def compare_table(results: Sequence[tuple[str, Mapping[str, Any] | Sequence[Mapping[str, Any]]]],
                  per_instance: bool = False) -> pd.DataFrame:
    """The comparison of ``(label, result document)`` pairs against the first, computed by
    the core (the table ``refault compare`` prints: one implementation). A side may be a
    list of documents (the same scenario under several seeds).

    One row per figure (index ``figure``); a column of values per side (named by its label;
    the mean over its runs) and, for every side after the baseline, ``<label> change``
    (percent, NaN for n/a); ``kind`` (task, run, counter, gauge), ``better`` (higher,
    lower or None), ``decimals``; with several runs per side also ``<label> stddev``,
    ``<label> coeffvar``, ``<label> min``, ``<label> max``, ``<label> hmean`` and, after the
    baseline, ``<label> p`` (Welch's t-test against the baseline).
    """
    sides = []
    for label, docs in results:
        runs = list(docs) if isinstance(docs, (list, tuple)) else [docs]
        sides.append([label, runs])
    table = json.loads(_refault.compare(json.dumps(sides), per_instance))
    labels = table["names"]
    data: dict[str, list[Any]] = {"kind": [], "better": [], "decimals": []}
    for i, label in enumerate(labels):
        data[label] = []
        if i > 0:
            data[f"{label} change"] = []
    several = table["seeds"] > 1
    stat_names = ("hmean", "stddev", "coeffvar", "min", "max")
    if several:
        for i, label in enumerate(labels):
            for st in stat_names:
                data[f"{label} {st}"] = []
            if i > 0:
                data[f"{label} p"] = []
    nan = math.nan
    for row in table["rows"]:
        data["kind"].append(row["kind"])
        data["better"].append(row["better"])
        data["decimals"].append(row["decimals"])
        for i, label in enumerate(labels):
            v = row["values"][i]
            data[label].append(nan if v is None else float(v))
            if i > 0:
                p = row["percent"][i]
                data[f"{label} change"].append(nan if p is None else float(p))
            if several:
                stats: dict[str, Any] = (row.get("stats") or [None] * len(labels))[i] or {}
                for stat in stat_names:
                    data[f"{label} {stat}"].append(float(stats.get(stat, nan)))
                if i > 0:
                    pv = (row.get("p_value") or [None] * len(labels))[i]
                    data[f"{label} p"].append(nan if pv is None else float(pv))
    df = pd.DataFrame(data, index=pd.Index([r["figure"] for r in table["rows"]], name="figure"))
    df.attrs["seeds"] = table["seeds"]
    return df


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
    """The results overlaid on the same axes (:func:`refault.plot.compare`)."""
    return plot.compare(results, labels)


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { padding: 0.2em 0.8em; border-bottom: 1px solid #ddd; }
th { text-align: left; background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.better { color: #1a7f37; font-weight: 600; } td.worse { color: #cf222e; font-weight: 600; }
tr.section td { font-weight: 600; background: #fafafa; padding-top: 0.8em; }
td.sig { color: #222; }
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


def _side_items(r: Side) -> list[ResultLike]:
    """The results of one side: a list of them, or one."""
    if isinstance(r, (list, tuple)):
        if not r:
            raise ValueError("a side of the report has no results")
        return list(r)
    assert isinstance(r, (Result, str, os.PathLike))
    return [r]


def _side(r: Side) -> list[Result]:
    return [x if isinstance(x, Result) else Result.load(x) for x in _side_items(r)]


def with_seeds(results: Sequence[ResultLike], seeds: int) -> list[list[ResultLike]]:
    """Each result followed by its recorded scenario (resolved, as the result holds it) run
    under the ``seeds - 1`` seeds after its own: the sides ``refault compare --seeds N``
    compares, for :func:`report` (``refault report --seeds N``). The runs go on the host's
    cores, with a progress line on a terminal."""
    if seeds < 1:
        raise ValueError(f"seeds must be at least 1, not {seeds}")
    loaded = [r if isinstance(r, Result) else Result.load(r) for r in results]
    names = [r.name if isinstance(r, Result) else str(r) for r in results]
    more = json.loads(_refault.seed_runs(json.dumps([r.data for r in loaded]), names, seeds))
    return [[first, *(Result(doc) for doc in runs)] for first, runs in zip(results, more)]


def render_html(results: Sequence[Side], names: Sequence[str] | None = None,
                title: str | None = None, plots: bool = True,
                per_instance: bool = False) -> str:
    """The report as an HTML string (see the module documentation)."""
    if not results:
        raise ValueError("a report needs at least one result")
    sides = [_side(r) for r in results]
    loaded = [runs[0] for runs in sides]
    firsts = [_side_items(r)[0] for r in results]
    labels = list(names) if names is not None else _labels(firsts, loaded)
    if len(labels) != len(loaded):
        raise ValueError("one name per result")
    table = compare_table([(lab, [r.data for r in runs]) for lab, runs in zip(labels, sides)],
                          per_instance=per_instance)
    several = table.attrs["seeds"] > 1
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
    if several:
        out.append("<tr><td>runs</td>")
        out.extend(f"<td>{len(runs)} seeds</td>" for runs in sides)
        out.append("</tr>")
    out.append("</table>")

    out.append('<h2>Comparison</h2><table id="compare" class="compare"><thead><tr>'
               "<th>figure</th>")
    for i, lab in enumerate(labels):
        out.append(f"<th>{esc(lab)}{' (mean)' if several else ''}</th>")
        if several:
            out.append(f"<th>{esc(lab)} stddev</th>")
        if i > 0:
            out.append("<th>change</th>")
    out.append("</tr></thead><tbody>")
    ncols = 1 + len(labels) * (2 if several else 1) + len(labels) - 1
    gauges = False
    for figure, row in table.iterrows():
        if row["kind"] == "gauge" and not gauges:
            gauges = True
            out.append(f'<tr class="section"><td colspan="{ncols}">end-of-run gauges</td></tr>')
        d = int(row["decimals"]) if not several else max(2, int(row["decimals"]))
        out.append(f'<tr class="row {row["kind"]}" data-figure="{esc(str(figure))}">'
                   f"<td>{esc(str(figure))}</td>")
        for i, lab in enumerate(labels):
            out.append(f'<td class="num">{format_cell(row[lab], d)}</td>')
            if several:
                out.append(f'<td class="num">{format_cell(row[f"{lab} stddev"], d)}</td>')
            if i > 0:
                p = row[f"{lab} change"]
                cls = ""
                if np.isfinite(p) and round(p, 2) != 0 and row["better"] in ("higher", "lower"):
                    up_is_better = row["better"] == "higher"
                    cls = " better" if (p > 0) == up_is_better else " worse"
                mark = ""
                if several and np.isfinite(row[f"{lab} p"]) and row[f"{lab} p"] < 0.05:
                    mark = f' <span class="sig" title="Welch p = {row[f"{lab} p"]:.3g}">*</span>'
                out.append(f'<td class="num{cls}">{format_percent(p)}{mark}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    if several:
        out.append("<p><small>Values are means over each side's runs; * marks a change whose "
                   "Welch t-test against the baseline has p &lt; 0.05.</small></p>")

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
               "changes are against the first result (green: better, red: worse).</small></p>"
               "</body></html>")
    return "\n".join(out)


def report(results: Sequence[Side], path: str | os.PathLike[str] | None = None,
           names: Sequence[str] | None = None, title: str | None = None,
           plots: bool = True, per_instance: bool = False) -> str:
    """Build the HTML report of ``results`` (the first is the baseline) and, with ``path``,
    write it there atomically. Returns the HTML.

    ``results`` are :class:`~refault.Result` objects or result files, or lists of them (one
    side run under several seeds: means, standard deviations and Welch's significance);
    ``names`` label them (default: file stems, or scenario names). ``per_instance`` keeps a
    row set per task instance.
    """
    text = render_html(results, names=names, title=title, plots=plots,
                       per_instance=per_instance)
    if path is not None:
        write_atomic(path, text)
    return text
