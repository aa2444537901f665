"""A sweep spec: a YAML file naming the function, its grid and fixed parameters, and where the
table goes; ``--grid key=v1,v2`` flags replace or add grid keys.

    function: truck            # a name of sweep.functions.FUNCTIONS
    grid:                      # every combination runs (a single value is a one-value list)
      scenario: [A, B, C]
      mode: [hifi, adfi-1, adfi-3-sleep]
      seed: [0, 1, 2, 3, 4, 5]
    params: {duration: 120}    # the same for every run
    out: truck.jsonl           # the table (relative to the spec's folder; default: SPEC.jsonl)
    workers: 2                 # optional: concurrent runs (default: one per core)
    address: 10.0.0.5:6379     # optional: a Ray cluster instead of a local instance

Every error names the file and the key.
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import SweepError
from .functions import SweepFunction, get

KEYS = ("function", "grid", "params", "out", "workers", "address")


@dataclass
class SweepSpec:
    """A parsed sweep: the function, the grid (key -> values, in order), fixed parameters."""

    path: Path
    function: SweepFunction
    grid: dict[str, list[Any]]
    params: dict[str, Any]
    out: Path
    workers: int | None = None
    address: str | None = None

    def runs(self) -> list[dict[str, Any]]:
        """Every combination of the grid with the fixed parameters and defaults, in grid order;
        a parameter or value the function does not take is an error naming the file."""
        keys = list(self.grid)
        out = []
        for values in itertools.product(*(self.grid[k] for k in keys)):
            given = {**self.params, **dict(zip(keys, values))}
            out.append(self.function.complete(given, f"{self.path}: grid/params"))
        return out


def run_key(function: str, params: dict[str, Any]) -> str:
    """The identity of one run in a table: function and parameters, canonical (1.0 == 1)."""
    def canonical(v: Any) -> Any:
        return int(v) if isinstance(v, float) and v.is_integer() else v
    return json.dumps({"function": function, **{k: canonical(v) for k, v in params.items()}},
                      sort_keys=True)


def parse_grid_flag(text: str) -> tuple[str, list[Any]]:
    """``key=v1,v2,...`` -> (key, values); each value read as YAML (numbers stay numbers)."""
    key, sep, values = text.partition("=")
    items = [v.strip() for v in values.split(",")]
    if not sep or not key.strip() or not all(items):
        raise SweepError(f"--grid {text!r}: expected key=value[,value...] with no empty value")
    return key.strip(), [yaml.safe_load(v) for v in items]


def _values(value: Any, where: str) -> list[Any]:
    if isinstance(value, dict):
        raise SweepError(f"{where}: expected a list of values, got a mapping")
    values = list(value) if isinstance(value, list) else [value]
    if not values:
        raise SweepError(f"{where}: the list of values is empty")
    return values


def load_spec(path: str | Path, grid_flags: list[str] = ()) -> SweepSpec:
    """Read and check the spec at ``path``; ``grid_flags`` (``key=v1,v2``) replace grid keys or
    move a fixed parameter into the grid."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as e:
        raise SweepError(f"sweep spec {path}: cannot read ({e.strerror})") from None
    except yaml.YAMLError as e:
        raise SweepError(f"sweep spec {path}: not YAML ({e})".replace("\n", " ")) from None
    if not isinstance(doc, dict):
        raise SweepError(f"{path}: expected a mapping with keys {', '.join(KEYS)}")
    unknown = sorted(set(doc) - set(KEYS))
    if unknown:
        raise SweepError(f"{path}: unknown key {', '.join(unknown)} (keys: {', '.join(KEYS)})")
    if "function" not in doc:
        raise SweepError(f"{path}: no 'function' (one of the sweep functions)")
    function = get(str(doc["function"]), f"{path}: function")
    grid_doc, params = doc.get("grid") or {}, doc.get("params") or {}
    for key, section in (("grid", grid_doc), ("params", params)):
        if not isinstance(section, dict):
            raise SweepError(f"{path}: '{key}' must be a mapping of parameter names")
    grid = {str(k): _values(v, f"{path}: grid.{k}") for k, v in grid_doc.items()}
    params = {str(k): v for k, v in params.items()}
    both = sorted(set(grid) & set(params))
    if both:
        raise SweepError(f"{path}: {', '.join(both)} in both grid and params")
    for flag in grid_flags:
        key, values = parse_grid_flag(flag)
        params.pop(key, None)
        grid[key] = values
    workers = doc.get("workers")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool)
                                or workers < 1):
        raise SweepError(f"{path}: workers must be a whole number >= 1, got {workers!r}")
    out = Path(str(doc.get("out") or path.with_suffix(".jsonl").name))
    spec = SweepSpec(path, function, grid, params, out if out.is_absolute() else path.parent / out,
                     workers, str(doc["address"]) if doc.get("address") else None)
    spec.runs()  # every combination checked now, before anything starts
    return spec
