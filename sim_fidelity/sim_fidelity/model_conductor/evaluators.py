"""Evaluators (paper 003, section 3.3.2): reusable named functions of trigger preconditions.

An evaluator is a callable ``f(context, *args, **kwargs)``; the context is the conductor's view of
the ensemble (:class:`Context`). It returns a boolean or any value a trigger binds to a variable
(``nearest_object('hand', 0.1)`` returns the object to hand over). Built-ins are in
:data:`BUILTIN`; plug-ins come from the entry-point group ``sim_fidelity.evaluators``. A config
can also name expressions as evaluators (see :mod:`~sim_fidelity.model_conductor.config`).
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any, Protocol

import numpy as np

from .errors import ConductorError, ExpressionError
from .model import POSE

ENTRY_POINT_GROUP = "sim_fidelity.evaluators"

Evaluator = Callable[..., Any]


class Context(Protocol):
    """What evaluators may ask of the ensemble (the :class:`Conductor` offers it)."""

    time: float

    def pose(self, entity: str) -> np.ndarray | None: ...

    def holder(self, entity: str, attribute: str) -> str | None: ...

    def entities(self) -> list[str]: ...

    def held(self, model: str) -> list[tuple[str, str]]: ...

    def initially_held(self, model: str) -> list[tuple[str, str]]: ...

    def output(self, model: str) -> Mapping[str, Any]: ...


def _pose(ctx: Context, entity: str) -> np.ndarray:
    pose = ctx.pose(str(entity))
    if pose is None:
        raise ExpressionError(f"no model knows the pose of '{entity}'")
    return pose


def _related(a: str, b: str) -> bool:
    """One entity is the other, or a scope of it (``arm`` and ``arm::hand``)."""
    return a == b or a.startswith(b + "::") or b.startswith(a + "::")


def nearest_object(ctx: Context, reference: str, max_distance: float = math.inf,
                   pattern: str | None = None) -> str | None:
    """The entity nearest to ``reference`` (an entity or link) among those whose pose some model
    holds, within ``max_distance`` metres, optionally only names matching the regex ``pattern``;
    None if there is none. The reference and what it belongs to are never candidates."""
    origin = _pose(ctx, reference)[:3]
    rx = re.compile(pattern) if pattern else None
    names = [e for e in ctx.entities() if ctx.holder(e, POSE) is not None
             and not _related(e, reference) and (rx is None or rx.search(e))]
    if not names:
        return None
    positions = np.array([_pose(ctx, e)[:3] for e in names])
    d = np.linalg.norm(positions - origin, axis=1)
    best = int(np.argmin(d))
    return names[best] if d[best] <= max_distance else None


def distance(ctx: Context, a: str, b: str) -> float:
    """Distance in metres between the origins of two entities (or links)."""
    return float(np.linalg.norm(_pose(ctx, a)[:3] - _pose(ctx, b)[:3]))


def holder(ctx: Context, entity: str, attribute: str = POSE) -> str | None:
    """The model holding ``attribute`` of ``entity`` (None if no model represents it)."""
    return ctx.holder(str(entity), str(attribute))


def is_free(ctx: Context, model: str) -> bool:
    """True when ``model`` holds the pose of no entity beyond those it held at the start (a hand
    that carries nothing)."""
    initial = set(ctx.initially_held(str(model)))
    return not any(a == POSE and (e, a) not in initial for e, a in ctx.held(str(model)))


BUILTIN: dict[str, Evaluator] = {"nearest_object": nearest_object, "distance": distance,
                                 "holder": holder, "is_free": is_free}


def plugin_names() -> list[str]:
    """Evaluators registered through the entry-point group (beyond the built-ins)."""
    return sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)
                  if ep.name not in BUILTIN)


def evaluator(name: str) -> Evaluator:
    """The evaluator registered under ``name``: a built-in, else an entry point."""
    if name in BUILTIN:
        return BUILTIN[name]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            fn = ep.load()
            if not callable(fn):
                raise ConductorError(f"evaluator entry point '{name}' ({ep.value}) is not "
                                     "callable")
            return fn
    raise ConductorError(f"unknown evaluator '{name}' (known: "
                         f"{', '.join(sorted(BUILTIN) + plugin_names())})")


def known() -> set[str]:
    """Every evaluator name: built-ins and plug-ins."""
    return set(BUILTIN) | set(plugin_names())
