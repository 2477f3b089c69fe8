"""refault: a fast, deterministic simulator of Linux memory reclaim.

A thin layer over the Rust core (``refault._refault``): scenarios are resolved and simulated
in Rust; this package turns the result JSON into pandas DataFrames.

>>> import refault
>>> r = refault.run("scenarios/quickstart.toml", {"vm.swappiness": 100})
>>> r.vmstat["pswpout"]  # doctest: +SKIP
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Union

from . import _refault
from ._refault import RefaultError, ScenarioError, SimulationError
from ._toml import dumps as _toml_dumps
from .result import Result

__all__ = [
    "run",
    "resolve",
    "Result",
    "RefaultError",
    "ScenarioError",
    "SimulationError",
]
__version__: str = _refault.build_info["version"]

ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def _scenario_arg(scenario: ScenarioLike) -> tuple[str, bool]:
    """(text or path, is_path) for the extension."""
    if isinstance(scenario, Mapping):
        return _toml_dumps(scenario), False
    if isinstance(scenario, os.PathLike):
        return os.fspath(scenario), True
    if isinstance(scenario, str):
        # TOML text has a newline or a key assignment; a path has neither.
        if "\n" in scenario or ("=" in scenario and not Path(scenario).exists()):
            return scenario, False
        return scenario, True
    raise TypeError(f"scenario must be a path, TOML text or a dict, not {type(scenario).__name__}")


def _overrides_arg(overrides: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for k, v in (overrides or {}).items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        out.append((str(k), str(v)))
    return out


def run(
    scenario: ScenarioLike,
    overrides: Mapping[str, Any] | None = None,
    seed: int | None = None,
    check_every: int = 0,
) -> Result:
    """Simulate ``scenario`` and return its :class:`Result`.

    ``scenario`` is a path to a TOML file, TOML text, or a dict with the TOML structure.
    ``overrides`` maps keys as ``refault run --set`` takes them (``"vm.swappiness"``,
    ``"machine.memory"``, ``"policy.balance"``...) to values. ``seed`` replaces the scenario's
    seed. ``check_every`` runs the model's invariant checks every N events (0: never).
    The GIL is released while the simulation runs.

    Raises :class:`ScenarioError` (with ``path``, ``line``, ``column``, ``kind``,
    ``message``) for a bad scenario, :class:`FileNotFoundError` for a missing file, and
    :class:`SimulationError` when the simulation cannot run it.
    """
    text, is_path = _scenario_arg(scenario)
    js = _refault.run(text, is_path, _overrides_arg(overrides), seed, check_every)
    return Result.from_json(js)


def resolve(
    scenario: ScenarioLike,
    overrides: Mapping[str, Any] | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """The resolved scenario (every default filled in), as the result JSON's ``scenario``."""
    import json

    text, is_path = _scenario_arg(scenario)
    return json.loads(_refault.resolve(text, is_path, _overrides_arg(overrides), seed))
