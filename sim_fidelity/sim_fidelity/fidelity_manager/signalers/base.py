"""The signaler interface and the typed parameters signalers declare.

A signaler decides the level of its trees (paper 000, Sec. 3); it knows the scene, the helper does
not. Each tick the manager reads, in one ``get_states`` call, the poses and twists of every entity
that any signaler lists in :meth:`Signaler.state_entities`, hands each signaler its rows, and gets
back one level per tree. Work inside ``update`` must be vectorised over trees.

Third-party signalers subclass :class:`Signaler`, declare ``PARAMS`` and register under the
entry-point group ``sim_fidelity.signalers``.
"""
from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from ...simulator.protocol import EntityKind, Simulator
from ..errors import ParamError
from ..levels import LEVEL_DTYPE, Level, parse_level
from ..trees import Tree

REQUIRED = object()


def _float(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"expected a number, got {v!r}")
    if not math.isfinite(v):
        raise ValueError(f"expected a finite number, got {v!r}")
    return float(v)


def _nonneg(v: Any) -> float:
    v = _float(v)
    if v < 0:
        raise ValueError(f"expected a number >= 0, got {v}")
    return v


def _int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"expected an integer, got {v!r}")
    return v


def _count(v: Any) -> int:
    v = _int(v)
    if v < 1:
        raise ValueError(f"expected an integer >= 1, got {v}")
    return v


def _name(v: Any) -> str:
    if not isinstance(v, str) or not v:
        raise ValueError(f"expected a non-empty name, got {v!r}")
    return v


def _vec3(v: Any) -> np.ndarray:
    if not isinstance(v, (list, tuple)) or len(v) != 3:
        raise ValueError(f"expected a list of 3 numbers, got {v!r}")
    return np.array([_nonneg(x) for x in v])


def _patterns(v: Any) -> list[str]:
    v = [v] if isinstance(v, str) else v
    if not isinstance(v, list) or not v or not all(isinstance(p, str) for p in v):
        raise ValueError(f"expected a regex or a non-empty list of regexes, got {v!r}")
    for p in v:
        try:
            re.compile(p)
        except re.error as e:
            raise ValueError(f"bad regex {p!r}: {e}") from None
    return v


def _level_map(v: Any) -> dict[str, Level]:
    if not isinstance(v, dict) or not v:
        raise ValueError(f"expected a mapping of names to levels, got {v!r}")
    return {str(k): parse_level(x) for k, x in v.items()}


def _vec3_or_map(v: Any) -> np.ndarray | dict[str, np.ndarray]:
    if isinstance(v, dict):
        return {str(_patterns(k)[0]): _vec3(x) for k, x in v.items()}
    return _vec3(v)


def _schedule(v: Any) -> list[tuple[float, Level, str]]:
    if not isinstance(v, list):
        raise ValueError(f"expected a list of {{time, level[, trees]}}, got {v!r}")
    rows = []
    for i, row in enumerate(v):
        if not isinstance(row, dict) or "time" not in row or "level" not in row:
            raise ValueError(f"entry [{i}] needs 'time' and 'level', got {row!r}")
        rows.append((_nonneg(row["time"]), parse_level(row["level"]),
                     _patterns(row.get("trees", ".*"))[0]))
    return sorted(rows, key=lambda r: r[0])


def _choice(*options: str) -> Callable[[Any], str]:
    def convert(v: Any) -> str:
        if v not in options:
            raise ValueError(f"expected one of {', '.join(options)}, got {v!r}")
        return v
    return convert


# kind -> converter; a converter raises ValueError saying what is wrong with the value, and
# check_params turns it into a ParamError naming the parameter
KINDS: dict[str, Callable[[Any], Any]] = {
    "float": _float, "nonneg": _nonneg, "int": _int, "count": _count, "level": parse_level,
    "name": _name,
    "vec3": _vec3, "patterns": _patterns, "level_map": _level_map, "vec3_or_map": _vec3_or_map,
    "schedule": _schedule, "clock": _choice("steps", "ticks"), "medium": _choice("all", "near"),
}


@dataclass(frozen=True)
class Param:
    """A declared parameter: its kind (a key of :data:`KINDS`), default and meaning."""

    kind: str
    default: Any = REQUIRED
    help: str = ""


def check_params(declared: dict[str, Param], given: dict) -> dict[str, Any]:
    """Converted parameters with defaults filled in; ParamError naming the key otherwise."""
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise ParamError(unknown[0], f"unknown parameter (known: {', '.join(sorted(declared))})")
    out = {}
    for key, param in declared.items():
        if key not in given:
            if param.default is REQUIRED:
                raise ParamError(key, f"missing required parameter ({param.help})")
            out[key] = param.default
            continue
        try:
            out[key] = KINDS[param.kind](given[key])
        except ValueError as e:  # a converter's message (LevelError is a ValueError too)
            raise ParamError(key, str(e)) from None
    return out


def match_entities(sim: Simulator, patterns: Sequence[str], key: str,
                   kinds: Sequence[EntityKind] = (EntityKind.MODEL, EntityKind.LINK)) -> list[str]:
    """Entities of ``kinds`` fully matching any pattern; ParamError when a pattern matches none."""
    candidates = [e for k in kinds for e in sim.entities(k)]
    found: list[str] = []
    for p in patterns:
        hits = [e for e in candidates if re.fullmatch(p, e)]
        if not hits:
            raise ParamError(key, f"'{p}' matches no {'/'.join(k.value for k in kinds)} entity")
        found += [e for e in hits if e not in found]
    return found


class Signaler(ABC):
    """Decides a level for each of its trees, every tick. Subclasses declare ``PARAMS``."""

    PARAMS: ClassVar[dict[str, Param]] = {}

    def __init__(self, trees: Sequence[Tree], params: dict[str, Any], sim: Simulator):
        self.trees = list(trees)
        self.tree_names = np.array([t.name for t in self.trees], dtype=object)
        self.params = params

    def state_entities(self) -> list[str]:
        """Entities whose poses and twists :meth:`update` needs, in the row order it expects."""
        return []

    @abstractmethod
    def update(self, t: float, poses: np.ndarray, twists: np.ndarray,
               current: np.ndarray) -> np.ndarray:
        """Levels (int8 array, one per tree) at sim time ``t``.

        ``poses``/``twists`` are the rows of :meth:`state_entities`; ``current`` is the level each
        tree is at now (which may differ from this signaler's last output where a level is held).
        All three may be views of the manager's arrays: read them during the call, copy what is
        kept, never write into them.
        """

    def refresh(self, t: float, settle: float) -> None:
        """A decision of the application is due at sim time ``t + settle``: signalers with a
        refresh rule (the packet signaler's all-HIGH) apply it from the next update until then.
        Others have nothing to refresh."""
        return None

    def close(self) -> None:
        """Release what the signaler holds in the simulator (step hooks); the manager calls it
        on close."""
        return None

    def _anchors(self) -> list[str]:
        """Anchor entity per tree; ParamError when a tree has none."""
        missing = [t.name for t in self.trees if not t.anchor]
        if missing:
            raise ParamError("", f"trees without a shape or 'anchor' cannot be located: "
                             f"{', '.join(missing[:3])}")
        return [t.anchor for t in self.trees]

    def _select(self, trees: str | Sequence[str] | None) -> np.ndarray:
        """Boolean mask of this signaler's trees fully matching the regex(es) ``trees``
        (all: None)."""
        if trees is None:
            return np.ones(len(self.trees), bool)
        regexes = [re.compile(p) for p in ([trees] if isinstance(trees, str) else trees)]
        return np.array([any(r.fullmatch(n) for r in regexes) for n in self.tree_names], bool)

    def _full(self, level: Level) -> np.ndarray:
        return np.full(len(self.trees), level, LEVEL_DTYPE)
