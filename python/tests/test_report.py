"""The HTML report: the mmtests-style table agrees with `refault compare`, and the page
renders in a real headless browser (Chromium) with its table and plots, offline."""

from __future__ import annotations

import base64
import html
import importlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import refault

report = importlib.import_module("refault.report")


@pytest.fixture(scope="module")
def two_results(small: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    d = tmp_path_factory.mktemp("results")
    base = d / "base.json"
    change = d / "swappy.json"
    refault.run(small).save(base)
    refault.run(small, {"vm.swappiness": 200}).save(change)
    return [base, change]


def test_table_equals_refault_compare(cli: Path, two_results: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "table.json"
    subprocess.run([str(cli), "compare", *map(str, two_results), "--out", str(out)],
                   check=True, capture_output=True)
    rust = json.loads(out.read_text())
    docs = [(p.stem, json.loads(p.read_text())) for p in two_results]
    table = report.compare_table(docs)
    assert rust["names"] == ["base", "swappy"]
    assert list(table.index) == [r["figure"] for r in rust["rows"]]
    for r in rust["rows"]:
        row = table.loc[r["figure"]]
        assert [row["base"], row["swappy"]] == pytest.approx(r["values"])
        if r["percent"][1] is None:
            assert row["swappy change"] != row["swappy change"]  # NaN
        else:
            assert row["swappy change"] == pytest.approx(r["percent"][1])


def test_report_colours_sections_and_precision(two_results: list[Path]) -> None:
    docs = [(p.stem, json.loads(p.read_text())) for p in two_results]
    table = report.compare_table(docs)
    page = report.report(two_results)
    # Gauges after the counters, under their own heading.
    kinds = list(table["kind"])
    assert "gauge" in kinds and kinds.index("gauge") > max(i for i, k in enumerate(kinds) if k == "counter")
    assert page.index("end-of-run gauges") < page.index('data-figure="nr_free_pages"')
    assert page.index('data-figure="pswpout"') < page.index("end-of-run gauges")
    # No row is zero on both sides.
    assert ((table["base"] != 0) | (table["swappy"] != 0)).all()
    # Better/worse classes follow the row's direction.
    for fig, row in table.iterrows():
        p = row["swappy change"]
        m = re.search(rf'data-figure="{re.escape(str(fig))}">.*?</tr>', page, re.S)
        assert m
        cells = re.findall(r'<td class="num( better| worse)?">', m.group(0))
        change_cls = cells[-1].strip()
        if row["better"] not in ("higher", "lower") or not p == p or round(p, 2) == 0:
            assert change_cls == "", fig
        else:
            better = (p > 0) == (row["better"] == "higher")
            assert change_cls == ("better" if better else "worse"), fig
    # One precision per row: integers stay integers, other rows have two decimals (which
    # rows are integral depends on the model's figures, so both kinds are checked).
    for fig, row in table.iterrows():
        integral = all(float(row[n]).is_integer() for n in ("base", "swappy"))
        assert row["decimals"] == (0 if integral else 2), fig
    lat = table.loc["latency_mean_us heap"]
    assert lat["decimals"] == 2
    assert f'<td class="num">{lat["base"]:.2f}</td>' in page
    ints = table[table["decimals"] == 0]
    assert len(ints) > 0
    assert f'<td class="num">{ints.iloc[0]["base"]:.0f}</td>' in page


def test_report_with_several_seeds_per_side(small: Path, tmp_path: Path) -> None:
    sides = [[refault.run(small, seed=s) for s in (1, 2, 3)],
             [refault.run(small, {"vm.swappiness": 200}, seed=s) for s in (1, 2, 3)]]
    table = report.compare_table([("base", [r.data for r in sides[0]]),
                                  ("swappy", [r.data for r in sides[1]])])
    assert table.attrs["seeds"] == 3
    ops = table.loc["ops/s heap"]
    vals = [r.tasks.loc["heap", "ops_per_sec"] for r in sides[0]]
    assert ops["base"] == pytest.approx(sum(vals) / 3)
    assert ops["base min"] == pytest.approx(min(vals))
    assert 0 <= ops["swappy p"] <= 1
    page = report.report(sides, tmp_path / "seeds.html", names=["base", "swappy"], plots=False)
    assert "base (mean)" in page and "base stddev" in page and "3 seeds" in page


def test_formatting_matches_the_cli() -> None:
    assert report.format_value(6579.0) == "6579"
    assert report.format_value(80.65) == "80.65"
    assert report.format_value(float("nan")) == "-"
    assert report.format_percent(report.percent_change(80.65, 104.99)) == "+30.18%"
    assert report.format_percent(report.percent_change(0, 3)) == "n/a"
    assert report.format_percent(report.percent_change(0, 0)) == "0.00%"


def test_report_is_self_contained(two_results: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    page = report.report(two_results, out)
    assert out.read_text() == page
    assert not re.search(r'(src|href)="(https?:)?//', page), "the report must not fetch anything"
    imgs = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(imgs) == 3  # the comparison, and one overview per result
    for data in imgs:
        assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'data-figure="pswpout"' in page


# Appended to a copy of the report: after load, write what the browser rendered.
PROBE = """
<script>
window.addEventListener("load", () => {
  const imgs = [...document.querySelectorAll("img.plot")].map(
    i => ({w: i.naturalWidth, h: i.naturalHeight, shown: i.getBoundingClientRect().height}));
  const rows = [...document.querySelectorAll("#compare tbody tr")].map(
    tr => [...tr.cells].map(td => td.textContent));
  const colours = Object.fromEntries([...document.querySelectorAll("#compare tbody tr.row")].map(
    tr => [tr.dataset.figure, getComputedStyle(tr.cells[tr.cells.length - 1]).color]));
  const t = document.getElementById("compare").getBoundingClientRect();
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify({imgs, rows, colours, table: {w: t.width, h: t.height}});
  document.body.appendChild(pre);
});
</script>
"""


def test_report_renders_in_headless_chromium(
    chromium: str, two_results: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "report.html"
    report.report(two_results, out)
    probe_page = tmp_path / "probe.html"
    probe_page.write_text(out.read_text().replace("</body>", PROBE + "</body>"))
    base = ["--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
            "--disable-extensions", "--disable-background-networking",
            f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        [chromium, *base, "--virtual-time-budget=5000", "--dump-dom", probe_page.as_uri()],
        check=True, capture_output=True, text=True, timeout=120,
    ).stdout
    m = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert m, "the page did not load in Chromium:\n" + dom[:2000]
    seen = json.loads(html.unescape(m.group(1)))
    # The plots decoded to real images and are laid out on the page.
    assert len(seen["imgs"]) == 3
    for img in seen["imgs"]:
        assert img["w"] > 300 and img["h"] > 200 and img["shown"] > 100
    # The table is rendered with its rows: baseline, change and percent.
    assert seen["table"]["h"] > 200
    rows = {r[0]: r[1:] for r in seen["rows"]}
    docs = [json.loads(p.read_text()) for p in two_results]
    base_out, change_out = docs[0]["vmstat"]["pswpout"], docs[1]["vmstat"]["pswpout"]
    assert rows["pswpout"][:2] == [str(base_out), str(change_out)]
    assert rows["pswpout"][2] == report.format_percent(report.percent_change(base_out, change_out))
    assert "ops/s heap" in rows and "sim_seconds" in rows
    # Better is drawn green, worse red, the rest in the text colour.
    table = report.compare_table([(p.stem, d) for p, d in zip(two_results, docs)])
    green, red, text = "rgb(26, 127, 55)", "rgb(207, 34, 46)", "rgb(34, 34, 34)"
    for fig, row in table.iterrows():
        p = row["swappy change"]
        if row["better"] not in ("higher", "lower") or not p == p or round(p, 2) == 0:
            assert seen["colours"][fig] == text, fig
        else:
            better = (p > 0) == (row["better"] == "higher")
            assert seen["colours"][fig] == (green if better else red), fig

    shot = Path(os.environ.get("REFAULT_REPORT_SCREENSHOT", tmp_path / "shot.png"))
    subprocess.run([chromium, *base, "--window-size=1200,1600", f"--screenshot={shot}",
                    out.as_uri()], check=True, capture_output=True, timeout=120)
    assert shot.stat().st_size > 20_000
