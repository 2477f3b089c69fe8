"""``run`` and ``resolve``: arguments turned into what the extension takes, nothing more."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Union

from . import _progress, _refault
from ._toml import dumps as _toml_dumps
from .result import Result

#: A scenario: a path (``str`` or :class:`os.PathLike`), TOML text, or a dict shaped like the
#: TOML document (serialised to TOML before it reaches the core).
ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]

#: Overrides as ``refault run --set`` takes them: ``{"vm.swappiness": 100,
#: "machine.memory": "4G", "policy.balance": "legacy"}``.
Overrides = Mapping[str, Any]


def scenario_arg(scenario: ScenarioLike) -> tuple[str, bool, str | None]:
    """``(path or text, is_path, origin)`` for the extension.

    A ``str`` is TOML text when it has a newline, or when no file of that name exists and it
    looks like TOML (has ``=`` or ``[``); otherwise it is a path.
    """
    if isinstance(scenario, Mapping):
        return _toml_dumps(scenario), False, "<dict>"
    if isinstance(scenario, os.PathLike):
        return os.fspath(scenario), True, None
    if isinstance(scenario, str):
        if "\n" in scenario:
            return scenario, False, "<string>"
        if not Path(scenario).exists() and ("=" in scenario or "[" in scenario):
            return scenario, False, "<string>"
        return scenario, True, None
    raise TypeError(
        f"scenario must be a path, TOML text or a dict, not {type(scenario).__name__}"
    )


def scenario_text(scenario: ScenarioLike) -> tuple[str, str]:
    """``(TOML text, origin)``: the scenario read once, to ship to other threads or hosts.

    A path keeps its name as the origin, so messages and the default scenario name are those
    of the file.
    """
    text, is_path, origin = scenario_arg(scenario)
    if is_path:
        with open(text, encoding="utf-8") as f:
            return f.read(), text
    return text, origin or "<string>"


def format_value(v: Any) -> str:
    """An override value as ``--set`` spells it (``True`` is ``true``)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def overrides_arg(overrides: Overrides | None) -> list[tuple[str, str]]:
    """Overrides as ``(key, value)`` string pairs, in the mapping's order."""
    return [(str(k), format_value(v)) for k, v in (overrides or {}).items()]


def run(
    scenario: ScenarioLike,
    overrides: Overrides | None = None,
    seed: int | None = None,
    *,
    check_every: int = 0,
    progress: bool | None = None,
) -> Result:
    """Simulate ``scenario`` and return its :class:`~refault.Result`.

    Args:
        scenario: a path to a TOML file, TOML text, or a dict with the TOML document's shape.
        overrides: keys as ``refault run --set`` takes them (``"vm.swappiness"``,
            ``"machine.memory"``, ``"policy.balance"``, ``"cgroup.box.memory.max"`` ...)
            mapped to values; applied in order.
        seed: replaces the scenario's seed.
        check_every: run the model's invariant checks every N events (0: the scenario's
            ``model.check_interval``).
        progress: show a progress bar: ``True``, ``False``, or ``None`` for one that
            appears after a second in a terminal or a notebook.

    The GIL is released while the simulation runs, so runs in several threads use several
    cores. The result is identical to ``refault run --out`` for the same scenario, overrides
    and seed (except ``wall_seconds``).

    Raises:
        ScenarioError: the scenario or an override is invalid (``path``, ``line``,
            ``column``, ``kind``, ``message``).
        FileNotFoundError: the scenario file does not exist.
        SimulationError: the simulation cannot run it (``InvariantError`` for a failed
            invariant check).
    """
    text, is_path, origin = scenario_arg(scenario)
    ov = overrides_arg(overrides)
    if not _progress.wanted(progress):
        return Result.from_json(_refault.run(text, is_path, ov, seed, check_every, origin))
    label = Path(text).stem if is_path else "run"
    bar = _progress.bar(100, label, "%", True, delay=0.0 if progress else 1.0)
    done = 0

    def tick(fraction: float) -> None:
        nonlocal done
        pct = int(fraction * 100)
        if pct > done:
            bar.update(pct - done)
            done = pct

    try:
        js = _refault.run(text, is_path, ov, seed, check_every, origin, tick)
    finally:
        bar.close()
    return Result.from_json(js)


def resolve(
    scenario: ScenarioLike,
    overrides: Overrides | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """The resolved scenario, every default filled in: the result JSON's ``scenario``.

    Cheap (nothing is simulated); useful to check a scenario or an override. Arguments and
    errors as for :func:`run`.
    """
    text, is_path, origin = scenario_arg(scenario)
    doc: dict[str, Any] = json.loads(
        _refault.resolve(text, is_path, overrides_arg(overrides), seed, origin)
    )
    return doc
