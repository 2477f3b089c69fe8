"""``run`` and ``resolve``: arguments turned into what the extension takes, nothing more."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar, Union

from . import _progress, _refault, _toml
from .errors import ScenarioError, scenario_error
from .result import Result

T = TypeVar("T")

#: A scenario: a path (``str`` or :class:`os.PathLike`), TOML text, or a dict shaped like the
#: TOML document (serialised to TOML with tomli-w before it reaches the core).
ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]

#: Overrides as ``refault run --set`` takes them: a mapping ``{"vm.swappiness": 100,
#: "machine.memory": "4G", "policy.balance": "legacy"}`` whose values keep their Python type
#: (``"100"`` is a string, not an integer), or a sequence of ``(key, value)`` pairs, or of
#: ``"KEY=VALUE"`` strings read exactly as ``--set`` reads them.
Overrides = Union[Mapping[str, Any], Sequence[Union[str, tuple[str, Any]]]]

#: Origin of a dict scenario in messages.
DICT_ORIGIN = "<dict>"


def read_scenario(path: str) -> str:
    """A scenario file's text. OSError as :func:`open` raises it (FileNotFoundError,
    IsADirectoryError...); ScenarioError (kind ``io``, at the first bad byte) for a file
    that is not UTF-8."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        good = data[: e.start].decode("utf-8")
        line = good.count("\n") + 1
        column = len(good) - (good.rfind("\n") + 1) + 1
        raise scenario_error(
            "io", path, f"not UTF-8: invalid byte 0x{data[e.start]:02x}", line=line,
            column=column,
        ) from None


def scenario_arg(scenario: ScenarioLike) -> tuple[str, str]:
    """``(TOML text, origin)`` for the extension: a path is read here (its name is the
    origin, so messages and the default scenario name are those of the file).

    A ``str`` is TOML text when it has a newline, or when no file of that name exists and it
    looks like TOML (has ``=`` or ``[``); otherwise it is a path.
    """
    if isinstance(scenario, Mapping):
        return _toml.dumps(scenario), DICT_ORIGIN
    if isinstance(scenario, os.PathLike):
        path = os.fspath(scenario)
        return read_scenario(path), path
    if isinstance(scenario, str):
        if "\n" in scenario:
            return scenario, "<string>"
        if not Path(scenario).exists() and ("=" in scenario or "[" in scenario):
            return scenario, "<string>"
        return read_scenario(scenario), scenario
    raise TypeError(
        f"scenario must be a path, TOML text or a dict, not {type(scenario).__name__}"
    )


def scenario_text(scenario: ScenarioLike) -> tuple[str, str]:
    """``(TOML text, origin)``: the scenario read once, to ship to other threads or hosts."""
    return scenario_arg(scenario)


def format_value(v: Any) -> str:
    """An override value as ``--set`` spells it (``True`` is ``true``), for names and
    display."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def overrides_arg(overrides: Overrides | None) -> list[tuple[str, str]]:
    """Overrides as the ``(key, value text)`` pairs the core takes, in order. A typed value
    becomes its TOML literal (``"4G"`` → ``"\"4G\""``, ``100`` → ``100``), so the core
    checks it with its Python type; a ``"KEY=VALUE"`` string passes as ``--set`` text."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        items: list[Any] = list(overrides.items())
    elif isinstance(overrides, (str, bytes)):
        raise TypeError("overrides must be a mapping or a list, not a single string "
                        f"(write [{overrides!r}])")
    else:
        items = list(overrides)
    out: list[tuple[str, str]] = []
    for item in items:
        if isinstance(item, str):
            key, sep, text = item.partition("=")
            if not sep or not key.strip():
                raise scenario_error("bad-override", "--set",
                                     f"expected KEY=VALUE, got `{item}`", key=None)
            out.append((key.strip(), text.strip()))
            continue
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(
                f"an override must be a (key, value) pair or a 'KEY=VALUE' string, not {item!r}"
            )
        key, value = item
        if not isinstance(key, str):
            raise TypeError(f"an override key must be a string, not {key!r}")
        out.append((key, _toml.value_literal(value, key)))
    return out


def _call(fn: Callable[[], T], text: str, origin: str) -> T:
    """Calls into the core; a ScenarioError positioned in the TOML text generated from a
    dict is raised again naming the dict's key instead of the line."""
    try:
        return fn()
    except ScenarioError as e:
        if origin != DICT_ORIGIN or e.line is None:
            raise
        path = _toml.key_at(text, e.line, e.column or 1)
        if path is None:
            raise
        where = _toml.format_path(path)
        raise scenario_error(e.kind, DICT_ORIGIN, f"{where}: {e.message}", key=where) from None


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
    text, origin = scenario_arg(scenario)
    ov = overrides_arg(overrides)
    if not _progress.wanted(progress):
        return Result.from_json(
            _call(lambda: _refault.run(text, False, ov, seed, check_every, origin), text, origin)
        )
    label = Path(origin).stem if not origin.startswith("<") else "run"
    bar = _progress.bar(100, label, "%", True, delay=0.0 if progress else 1.0)
    done = 0

    def tick(fraction: float) -> None:
        nonlocal done
        pct = int(fraction * 100)
        if pct > done:
            bar.update(pct - done)
            done = pct

    try:
        js = _call(lambda: _refault.run(text, False, ov, seed, check_every, origin, tick),
                   text, origin)
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
    text, origin = scenario_arg(scenario)
    ov = overrides_arg(overrides)
    doc: dict[str, Any] = json.loads(
        _call(lambda: _refault.resolve(text, False, ov, seed, origin), text, origin)
    )
    return doc
