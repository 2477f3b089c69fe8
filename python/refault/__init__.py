"""refault: a fast, deterministic simulator of Linux memory reclaim, from Python.

A thin layer over the Rust core (the extension module ``refault._refault``): scenarios are
resolved and simulated in Rust, exactly as by the ``refault`` command line; this package
turns results into pandas DataFrames, runs parameter sweeps on local cores or a Ray cluster,
and draws plots and HTML reports. It holds no model logic.

>>> import refault
>>> r = refault.run("scenarios/quickstart.toml", {"vm.swappiness": 100})
>>> r.vmstat["pswpout"]                                        # doctest: +SKIP
>>> df = refault.sweep("scenarios/thrash-cache.toml",
...                    {"vm.swappiness": [0, 60, 200], "machine.memory": ["384M", "512M"]},
...                    out="sweeps/run1")                      # doctest: +SKIP

Modules: :mod:`refault.plot` (figures of a result or a sweep), :mod:`refault.report` (a
self-contained HTML report comparing results), :mod:`refault.errors` (the exceptions).
"""

from __future__ import annotations

from . import errors
from ._api import Overrides, ScenarioLike, resolve, run
from ._refault import build_info as _build_info
from .errors import InvariantError, RefaultError, ScenarioError, SimulationError
from .result import Result
from .sweep import load_sweep, sweep

__version__: str = str(_build_info["version"])

__all__ = [
    "run",
    "resolve",
    "sweep",
    "load_sweep",
    "Result",
    "ScenarioLike",
    "Overrides",
    "errors",
    "RefaultError",
    "ScenarioError",
    "SimulationError",
    "InvariantError",
    "__version__",
]
