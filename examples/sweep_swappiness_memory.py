"""Swappiness × memory size on the bundled thrash-cache scenario, as two heatmaps.

thrash-cache reads a 640 MiB file at random in a loop beside a 128 MiB anonymous region
that is written once and never used again. Whether the kernel swaps that idle region out to
make room for the cache depends on vm.swappiness (how cheap anon reclaim is judged against
file reclaim) and on how much memory there is. The sweep runs every combination on all
local cores (or on Ray with ``--engine ray``) and draws the readers' throughput and pswpout.

    python examples/sweep_swappiness_memory.py                 # the image in a new temporary directory
    python examples/sweep_swappiness_memory.py --out sweeps/sm  # keeps each point's result and the image there
    python examples/sweep_swappiness_memory.py -o docs/img/sweep-heatmap.png   # the README's picture

Nothing is written into the repository unless asked for.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from matplotlib.figure import Figure

import refault
from refault import plot

ROOT = Path(__file__).resolve().parents[1]
GRID = {
    "vm.swappiness": [0, 30, 60, 100, 140, 200],
    "machine.memory": ["256M", "384M", "512M", "640M"],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", choices=("local", "ray"), default="local")
    ap.add_argument("--address", help="Ray cluster address (default: a local Ray instance)")
    ap.add_argument("--out", type=Path, help="keep each point's result JSON here (resumable)")
    ap.add_argument("-o", "--image", type=Path,
                    help="the image (default: sweep-heatmap.png in --out, or in a new "
                    "temporary directory)")
    a = ap.parse_args()
    if a.image is None:
        where = a.out if a.out is not None else Path(tempfile.mkdtemp(prefix="refault-sweep-"))
        a.image = where / "sweep-heatmap.png"

    df = refault.sweep(ROOT / "scenarios" / "thrash-cache.toml", GRID, engine=a.engine,
                       address=a.address, out=a.out, progress=True)
    # The four reader instances together.
    readers = [c for c in df.columns if c.startswith("reader/") and c.endswith(".ops_per_sec")]
    df["reader ops/s"] = df[readers].sum(axis=1)

    fig = Figure(figsize=(13, 4.8), layout="constrained")
    left, right = fig.subplots(1, 2)
    plot.sweep_heatmap(df, "vm.swappiness", "machine.memory", "reader ops/s", ax=left, log=True)
    plot.sweep_heatmap(df, "vm.swappiness", "machine.memory", "pswpout", ax=right, cmap="magma")
    left.set_title("readers' throughput (reads/s)")
    right.set_title("pswpout (pages swapped out)")
    fig.suptitle("thrash-cache: 640 MiB file read at random beside a 128 MiB idle anon region")
    plot.save(fig, a.image)
    cols = ["vm.swappiness", "machine.memory", "reader ops/s", "pswpout", "workingset_refault_file"]
    print(df[cols].to_string(index=False))
    print(f"wrote {a.image}")


if __name__ == "__main__":
    main()
