"""The result of a run, with pandas views of its tables."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd


class Result:
    """One simulation's result (the JSON ``refault run --out`` writes).

    Attributes: ``vmstat`` (counter name -> int), ``sim_seconds``, ``wall_seconds``,
    ``events``, ``scenario`` (the resolved scenario, a dict), and the DataFrames
    ``tasks`` and ``timeseries``.
    """

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    @classmethod
    def from_json(cls, text: str) -> "Result":
        """Parse a result JSON document."""
        return cls(json.loads(text))

    @classmethod
    def load(cls, path: str) -> "Result":
        """Read a result JSON file."""
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f))

    @property
    def data(self) -> dict[str, Any]:
        """The whole result as plain Python data."""
        return self._data

    @property
    def vmstat(self) -> dict[str, int]:
        """/proc/vmstat counters: events over the measured period, gauges at the end."""
        return dict(self._data["vmstat"])

    @property
    def scenario(self) -> dict[str, Any]:
        return self._data["scenario"]

    @property
    def sim_seconds(self) -> float:
        return float(self._data["sim_seconds"])

    @property
    def wall_seconds(self) -> float:
        return float(self._data["wall_seconds"])

    @property
    def events(self) -> int:
        return int(self._data["events"])

    @property
    def tasks(self) -> pd.DataFrame:
        """One row per task instance: ops, ops_per_sec, latency percentiles (µs), ..."""
        rows = []
        for t in self._data["tasks"]:
            row = {k: v for k, v in t.items() if k != "latency_us"}
            for k, v in t["latency_us"].items():
                row[f"latency_{k}_us"] = v
            rows.append(row)
        return pd.DataFrame(rows).set_index("name")

    @property
    def timeseries(self) -> pd.DataFrame:
        """Sampled series indexed by simulated time in seconds (``t_s``)."""
        ts = self._data["timeseries"]
        return pd.DataFrame(ts).set_index("t_s")

    def to_json(self) -> str:
        """The result JSON (same content as ``refault run --out``)."""
        return json.dumps(self._data, indent=2)

    def __repr__(self) -> str:
        name = self._data["scenario"].get("name", "?")
        return f"<refault.Result {name}: {self.events} events, {self.sim_seconds:.1f} s simulated>"
