"""Plots of a result and of a sweep are written as real images."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

import refault

plot = importlib.import_module("refault.plot")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _is_png(path: Path) -> bool:
    return path.exists() and path.stat().st_size > 5000 and path.read_bytes()[:8] == PNG_MAGIC


@pytest.fixture(scope="module")
def result(small: Path) -> refault.Result:
    return refault.run(small)


@pytest.mark.parametrize("kind", ["overview", "memory", "rates", "swap", "dirty", "slab", "tasks",
                                  "balance", "cgroups", "reclaimers"])
def test_result_plots_write_pngs(result: refault.Result, tmp_path: Path, kind: str) -> None:
    out = tmp_path / f"{kind}.png"
    fig = result.plot(kind, out)
    assert isinstance(fig, Figure)
    assert _is_png(out)


def test_memory_plot_has_a_panel_per_cgroup(result: refault.Result) -> None:
    assert plot.cgroup_names(result) == ["box"]
    assert len(plot.memory(result).axes) == 2
    assert len(plot.memory(result, per_cgroup=False).axes) == 1


def test_rates_are_differences_of_the_cumulative_samples(result: refault.Result) -> None:
    ts = result.timeseries
    r = plot.rate(ts, "pswpout")
    dt = ts.index[5] - ts.index[4]
    assert r.iloc[5] == pytest.approx((ts["pswpout"].iloc[5] - ts["pswpout"].iloc[4]) / dt)
    assert r.iloc[0] == 0


def test_unknown_kind(result: refault.Result) -> None:
    with pytest.raises(ValueError, match="unknown plot kind"):
        result.plot("pie")


def test_sweep_plots(small: Path, tmp_path: Path) -> None:
    df = refault.sweep(small, {"vm.swappiness": [0, 60, 200], "cgroup.box.memory.max": ["40M", "44M"]},
                       progress=False)
    heat = plot.sweep_heatmap(df, "vm.swappiness", "cgroup.box.memory.max", "pswpout")
    plot.save(heat, tmp_path / "heat.png")
    assert _is_png(tmp_path / "heat.png")
    lines = plot.sweep_lines(df, "vm.swappiness", "pswpout", hue="cgroup.box.memory.max")
    plot.save(lines, tmp_path / "lines.png")
    assert _is_png(tmp_path / "lines.png")
    assert len(lines.axes[0].get_lines()) == 2


def test_result_renders_in_a_notebook(small: Path) -> None:
    import base64
    import re

    r = refault.run(small)
    page = r._repr_html_()
    assert "<b>small</b>" in page and "heap" in page and "reader" in page
    assert f"{r.vmstat['pswpout']:,}" in page
    png = re.search(r'src="data:image/png;base64,([^"]+)"', page)
    assert png and base64.b64decode(png.group(1)).startswith(b"\x89PNG")


def test_slab_plot_of_a_file_creation_stream(tmp_path: Path) -> None:
    scn = Path(__file__).resolve().parents[2] / "scenarios" / "s3-slab-boost.toml"
    r = refault.run(scn, {"machine.memory": "64M", "machine.dma32": "24M",
                          "object.dir.size": "128M"})
    assert r.timeseries["nr_slab_reclaimable"].max() > 0
    fig = plot.slab(r)
    assert len(fig.axes) == 3  # two panels and the ratio's twin axis
    plot.save(fig, tmp_path / "slab.png")
    assert _is_png(tmp_path / "slab.png")


def _lines_of(ax: object) -> dict[str, object]:
    return {ln.get_label(): ln for ln in ax.get_lines()}  # type: ignore[attr-defined]


def test_task_throughput_and_latency_over_time(result: refault.Result) -> None:
    ts = result.timeseries
    fig = plot.tasks(result)
    thr, lat = fig.axes[0], fig.axes[1]
    assert set(_lines_of(thr)) == {"heap", "reader"}
    # Throughput is the rate of the cumulative ops; latency the interval's mean.
    y = np.asarray(_lines_of(thr)["reader"].get_ydata())  # type: ignore[attr-defined]
    assert y[5] == pytest.approx((ts["task.reader.ops"].iloc[5] - ts["task.reader.ops"].iloc[4])
                                 / (ts.index[5] - ts.index[4]))
    ly = np.asarray(_lines_of(lat)["heap"].get_ydata())  # type: ignore[attr-defined]
    d_lat = ts["task.heap.latency_sum_us"].iloc[5] - ts["task.heap.latency_sum_us"].iloc[4]
    d_ops = ts["task.heap.ops"].iloc[5] - ts["task.heap.ops"].iloc[4]
    assert ly[5] == pytest.approx(d_lat / d_ops)
    # The end of the series agrees with the task table's mean latency.
    total = ts["task.heap.latency_sum_us"].iloc[-1] / ts["task.heap.ops"].iloc[-1]
    assert total == pytest.approx(result.tasks.loc["heap", "latency_mean_us"], rel=1e-3)


def test_balance_panels_and_refault_ratio(result: refault.Result) -> None:
    fig = plot.balance(result)
    assert [a.get_title() for a in fig.axes] == [
        "small: scanned, anon vs file", "refaults, anon vs file", "refault ratio"]
    scanned = _lines_of(fig.axes[0])
    assert set(scanned) <= {"pgscan_anon", "pgscan_file"} and scanned
    # Distinct line styles for the lines of a panel.
    styles = [ln.get_linestyle() for ln in fig.axes[0].get_lines()]
    assert len(set(styles)) == len(styles)
    ratio = plot.refault_ratio(result)
    ts = result.timeseries
    i = 5
    ops = sum(ts[c].iloc[i] - ts[c].iloc[i - 1] for c in ts.columns
              if c.startswith("task.") and c.endswith(".ops"))
    ref = sum(ts[c].iloc[i] - ts[c].iloc[i - 1]
              for c in ("workingset_refault_anon", "workingset_refault_file"))
    assert ratio.iloc[i] == pytest.approx(ref / ops)


def test_cgroup_counters_over_time(result: refault.Result) -> None:
    ts = result.timeseries
    for c in ("pgscan", "pgsteal", "max_events", "workingset_activate_anon"):
        col = f"cgroup.box.{c}"
        assert col in ts
        assert ts[col].is_monotonic_increasing
    # The last sample is the end-of-run memory.stat / memory.events figure.
    cg = next(c for c in result.data["cgroups"] if c["name"] == "box")
    assert ts["cgroup.box.pgscan"].iloc[-1] == cg["pgscan"]
    assert ts["cgroup.box.max_events"].iloc[-1] == cg["max_events"]
    fig = plot.cgroups(result)
    titles = [a.get_title() for a in fig.axes]
    assert titles == ["cgroup box: usage", "cgroup box: reclaim and refaults"]
    assert "memory.max" in _lines_of(fig.axes[0])
    assert "scanned" in _lines_of(fig.axes[1])


def test_watermarks_and_reclaimers(result: refault.Result) -> None:
    fig = plot.reclaimers(result)
    lines = _lines_of(fig.axes[0])
    high = sum(z["high"] for z in result.data["watermarks"])
    assert np.asarray(lines["high watermark"].get_ydata())[0] == pytest.approx(  # type: ignore[attr-defined]
        high * 4096 / (1 << 20))
    assert {"free", "min watermark", "low watermark"} <= set(lines)


def test_no_all_zero_panels_or_lines(result: refault.Result) -> None:
    # small.toml never scans directly nor writes back dirty pages from reclaim: those
    # series are zero and must not be drawn.
    fig = plot.overview(result)
    for a in fig.axes:
        for ln in a.get_lines():
            y = np.asarray(ln.get_ydata(), dtype=float)
            if ln.get_label().startswith("_"):
                continue
            assert any(v != 0 for v in y if v == v), f"{a.get_title()}: {ln.get_label()} all zero"
    titles = [a.get_title() for a in fig.axes]
    assert "throughput" in titles and "scanned, anon vs file" in titles


def test_warmup_is_shaded(small: Path) -> None:
    r = refault.run(small, {"run.warmup": "500ms"})
    fig = plot.tasks(r)
    spans = [p for p in fig.axes[0].patches if p.get_label() == "_warm-up"]
    assert len(spans) == 1
    x0, x1 = spans[0].get_x(), spans[0].get_x() + spans[0].get_width()
    assert (x0, x1) == pytest.approx((0.0, 0.5))
    assert not [p for p in plot.tasks(refault.run(small)).axes[0].patches
                if p.get_label() == "_warm-up"]


def test_generations_over_time(small: Path) -> None:
    r = refault.run(small, {"policy.lru": "mglru"})
    ts = r.timeseries
    cols = [c for c in ts.columns if c.startswith("lru_gen.gen")]
    assert "lru_gen.gen0.anon" in cols and "lru_gen.gen3.file" in cols
    # Every sample's generations hold the LRU pages (anon + file), over every lruvec.
    lru = ts[["nr_inactive_anon", "nr_active_anon", "nr_inactive_file", "nr_active_file"]].sum(axis=1)
    gens = ts[cols].sum(axis=1)
    assert (gens.iloc[1:] == lru.iloc[1:]).all()
    assert ts["lru_gen.max_seq"].is_monotonic_increasing
    fig = plot.generations(r)
    assert fig.axes[0].collections  # the stacked areas
    with pytest.raises(ValueError, match="mglru"):
        plot.generations(refault.run(small))


def test_compare_overlays_two_results_on_the_same_axes(small: Path) -> None:
    a = refault.run(small)
    b = refault.run(small, {"vm.swappiness": 200})
    fig = plot.compare([a, b], ["base", "swappy"])
    assert fig.axes[0].get_title() == "throughput (all tasks)"
    for ax in fig.axes:
        labels = [ln.get_label() for ln in ax.get_lines()]
        assert labels == ["base", "swappy"]
        a_ls, b_ls = (ln.get_linestyle() for ln in ax.get_lines())
        assert a_ls != b_ls
