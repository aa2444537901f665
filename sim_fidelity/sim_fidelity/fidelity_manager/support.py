"""Which trees a simulator can lower, and why the others stay HIGH.

A tree is lowered whole or not at all: a tree with one object the simulator cannot toggle stays
HIGH (its signaler still runs; its level is held at HIGH), and the manager says why. Reasons:

* the simulator has no lever an object type of the tree's group needs (Gazebo classic has no
  ACTUATION, SENSOR, SCRIPT; gz-sim only DYNAMICS and COLLISION): every tree of the group stays
  HIGH, whether or not its own key matched such an object (Gazebo classic does not even list
  sensors and plugins, so their patterns match nothing there);
* the simulator lowers DYNAMICS and COLLISION by static copies (``Features.static_fallback``),
  which swap whole top-level models: a tree with such a lever on a link, a joint or a nested
  model stays HIGH.
"""
from __future__ import annotations

import numpy as np

from ..simulator.protocol import EntityInfo, EntityKind, Lever, Simulator
from .config import FidelityConfig
from .objects import ObjectType
from .trees import TreeSet

STATIC_COPY_LEVERS = frozenset({Lever.DYNAMICS, Lever.COLLISION})  # what a static copy lowers
NAMES_SHOWN = 5  # trees named per line of :func:`describe`


def missing_levers(object_type: ObjectType, have: frozenset[Lever]) -> list[str]:
    """Names of the levers ``object_type`` needs that are not in ``have``, sorted."""
    return sorted(lever.name for lever in object_type.levers - have)


def unsupported_trees(sim: Simulator, config: FidelityConfig,
                      trees: TreeSet) -> dict[str, list[str]]:
    """Reason -> names of the trees that stay HIGH for it (empty when every tree can be
    lowered). One reason per tree, naming every missing feature."""
    features = sim.features()
    missing_of_group = {
        spec.group: sorted({m for obj in spec.objects for m in missing_levers(obj.type,
                                                                              features.levers)})
        for spec in config.groups}
    by_copy = {t.name: bool(t.levers & STATIC_COPY_LEVERS) for t in trees.types}
    info: dict[str, EntityInfo] = {}  # each entity read once
    by_reason: dict[str, list[str]] = {}
    for i, tree in enumerate(trees.trees):
        parts = []
        if missing_of_group[tree.group]:
            parts.append(f"the simulator has no lever {', '.join(missing_of_group[tree.group])}")
        if features.static_fallback:
            for e, t in tree.objects:
                if by_copy[t] and e not in info:
                    info[e] = sim.entity_info(e)
            kinds = sorted({info[e].kind.value for e, t in tree.objects
                            if by_copy[t] and not _top_level(info[e])})
            if kinds:
                parts.append("DYNAMICS and COLLISION come by static copies of whole top-level "
                             f"models, not of a {' or '.join(kinds)}")
        if parts:
            by_reason.setdefault("; ".join(parts), []).append(trees.names[i])
    return by_reason


def _top_level(info: EntityInfo) -> bool:
    return info.kind == EntityKind.MODEL and not info.parent


def unsupported_mask(trees: TreeSet, by_reason: dict[str, list[str]]) -> np.ndarray:
    """Boolean per tree: does it stay HIGH for one of ``by_reason``'s reasons."""
    mask = np.zeros(len(trees), bool)
    for names in by_reason.values():
        mask[[trees.index[n] for n in names]] = True
    return mask


def describe(by_reason: dict[str, list[str]]) -> list[str]:
    """One line per reason: how many trees stay HIGH, the first few by name, and why."""
    lines = []
    for reason, names in by_reason.items():
        shown = ", ".join(names[:NAMES_SHOWN]) + (
            f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else "")
        lines.append(f"{len(names)} trees stay HIGH ({shown}): {reason}")
    return lines
