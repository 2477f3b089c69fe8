"""Errors from the core arrive as Python exceptions with the file, line and message."""

from __future__ import annotations

from pathlib import Path

import pytest

import refault


def test_bad_scenario_raises_scenario_error_with_the_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.toml"
    p.write_text('[machine]\nmemory = "64M"\nmemroy = "1G"\n')
    with pytest.raises(refault.ScenarioError) as e:
        refault.run(p)
    err = e.value
    assert isinstance(err, refault.RefaultError)
    assert (err.path, err.line, err.column, err.kind) == (str(p), 3, 1, "unknown-key")
    assert "memroy" in err.message and "did you mean `memory`" in err.message
    assert str(err).startswith(f"{p}:3:1: unknown key")


def test_syntax_error_in_text_names_string_origin() -> None:
    with pytest.raises(refault.ScenarioError) as e:
        refault.run('[machine]\nmemory = "64M\n')
    assert e.value.path == "<string>" and e.value.line == 2 and e.value.kind == "syntax"


def test_invalid_value_and_bad_override(small: Path) -> None:
    with pytest.raises(refault.ScenarioError) as e:
        refault.run(small, {"vm.swappiness": 300})
    assert e.value.kind in ("invalid-value", "bad-override")
    with pytest.raises(refault.ScenarioError) as e:
        refault.run(small, {"vm.no_such_sysctl": 1})
    assert e.value.path == "--set" or e.value.kind in ("unknown-key", "bad-override")


def test_missing_file_is_file_not_found() -> None:
    with pytest.raises(FileNotFoundError) as e:
        refault.run(Path("/nonexistent/scenario.toml"))
    assert e.value.filename == "/nonexistent/scenario.toml"
    with pytest.raises(FileNotFoundError):
        refault.run("/nonexistent/scenario.toml")


def test_unsupported_model_raises_simulation_error(small: Path) -> None:
    # The classic LRU's legacy balance has no meaning under the multi-gen LRU: the simulator
    # refuses the combination (a SimulationError, not a ScenarioError: the file is valid).
    with pytest.raises(refault.SimulationError) as e:
        refault.run(small, {"policy.lru": "mglru", "policy.balance": "legacy"})
    assert "mglru" in str(e.value) and "policy.balance" in str(e.value)
    assert not isinstance(e.value, refault.InvariantError)


def test_exception_hierarchy() -> None:
    assert issubclass(refault.ScenarioError, refault.RefaultError)
    assert issubclass(refault.InvariantError, refault.SimulationError)
    assert issubclass(refault.SimulationError, refault.RefaultError)
    assert refault.ScenarioError.__module__ == "refault"
    assert refault.errors.ScenarioError is refault.ScenarioError


def test_bad_argument_types() -> None:
    with pytest.raises(TypeError):
        refault.run(42)  # type: ignore[arg-type]
