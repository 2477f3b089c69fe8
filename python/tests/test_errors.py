"""Errors from the core arrive as Python exceptions with the file, line and message."""

from __future__ import annotations

import tomllib
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


def test_mglru_with_legacy_balance_is_refused_at_load_with_its_line(
    small: Path, tmp_path: Path
) -> None:
    # The classic LRU's legacy balance has no meaning under the multi-gen LRU: refused when
    # the scenario is read (a ScenarioError at the key), not after it started simulating.
    # (The refusal itself is the scenario crate's; this checks Python carries its position.)
    p = tmp_path / "mglru.toml"
    p.write_text(small.read_text() + '\n[policy]\nlru = "mglru"\nbalance = "legacy"\n')
    line = p.read_text().splitlines().index('balance = "legacy"') + 1
    with pytest.raises(refault.ScenarioError) as e:
        refault.resolve(p)
    assert (e.value.path, e.value.line) == (str(p), line)
    assert "mglru" in str(e.value) and "legacy" in str(e.value)
    with pytest.raises(refault.ScenarioError) as e:
        refault.run(small, {"policy.lru": "mglru", "policy.balance": "legacy"})
    assert "policy.balance" in str(e.value)
    doc = tomllib.loads(small.read_text())
    doc["policy"] = {"lru": "mglru", "balance": "legacy"}
    with pytest.raises(refault.ScenarioError) as e:
        refault.resolve(doc)
    assert e.value.key == '["policy"]["balance"]'


def test_override_values_are_checked_with_their_python_type(small: Path) -> None:
    # A string is a string: "100" is not an integer, whatever it spells.
    with pytest.raises(refault.ScenarioError) as e:
        refault.resolve(small, {"vm.swappiness": "100"})
    assert "must be an integer, not a string" in str(e.value)
    with pytest.raises(refault.ScenarioError) as e:
        refault.resolve(small, {"vm.swappiness": 2**64})
    assert (e.value.path, e.value.key, e.value.kind) == ("--set", "vm.swappiness", "bad-override")
    assert "64-bit" in e.value.message and "string" not in e.value.message
    with pytest.raises(refault.ScenarioError) as e:
        refault.resolve(small, {"vm.swappiness": None})
    assert "None" in e.value.message and "string" not in e.value.message
    with pytest.raises(refault.ScenarioError) as e:
        refault.resolve(small, {"machine.memory": {"a": 1}})
    assert e.value.key == "machine.memory"
    # A string where a string belongs, and a number where a number belongs, work.
    assert refault.resolve(small, {"machine.memory": "96M", "vm.swappiness": 7})["sysctl"]["swappiness"] == 7


def test_dict_scenario_errors_name_the_dict_key(small: Path) -> None:
    doc = tomllib.loads(small.read_text())
    doc["task"][1]["phase"][0]["access"] = "reed"
    with pytest.raises(refault.ScenarioError) as e:
        refault.resolve(doc)
    err = e.value
    assert (err.path, err.line, err.column) == ("<dict>", None, None)
    assert err.key == '["task"][1]["phase"][0]["access"]'
    assert str(err).startswith('<dict>: ["task"][1]["phase"][0]["access"]: ')
    assert "reed" in err.message
    doc["task"][1]["phase"][0]["access"] = "read"
    doc["object"][0]["sizze"] = "1M"
    with pytest.raises(refault.ScenarioError) as e:
        refault.resolve(doc)
    assert e.value.key == '["object"][0]["sizze"]' and e.value.kind == "unknown-key"
    del doc["object"][0]["sizze"]
    doc["machine"]["cpus"] = None
    with pytest.raises(refault.ScenarioError) as e:
        refault.resolve(doc)
    assert e.value.key == '["machine"]["cpus"]' and "None" in e.value.message


def test_directory_and_non_utf8_files(tmp_path: Path) -> None:
    d = tmp_path / "dir.toml"
    d.mkdir()
    with pytest.raises(IsADirectoryError) as e:
        refault.run(d)
    assert e.value.filename == str(d)
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'name = "x"\ndescription = "caf\xe9"\n')
    with pytest.raises(refault.ScenarioError) as e:
        refault.resolve(bad)
    assert (e.value.path, e.value.line, e.value.column, e.value.kind) == (str(bad), 2, 19, "io")
    assert "UTF-8" in e.value.message
    with pytest.raises(refault.ScenarioError):
        refault.sweep(bad, {"vm.swappiness": [1]}, progress=False)


def test_exception_hierarchy() -> None:
    assert issubclass(refault.ScenarioError, refault.RefaultError)
    assert issubclass(refault.InvariantError, refault.SimulationError)
    assert issubclass(refault.SimulationError, refault.RefaultError)
    assert refault.ScenarioError.__module__ == "refault"
    assert refault.errors.ScenarioError is refault.ScenarioError


def test_bad_argument_types() -> None:
    with pytest.raises(TypeError):
        refault.run(42)  # type: ignore[arg-type]
