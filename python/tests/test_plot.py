"""Plots of a result and of a sweep are written as real images."""

from __future__ import annotations

import importlib
from pathlib import Path

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


@pytest.mark.parametrize("kind", ["overview", "memory", "rates", "swap", "dirty", "slab"])
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
