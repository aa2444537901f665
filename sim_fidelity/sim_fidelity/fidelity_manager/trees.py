"""Trees: named sets of objects toggled together, and the flat object table behind them.

A tree is what one helper toggles and one signaler decides about (paper 000, Sec. 3): one packet
(one shape), or one plunger (4 links, 4 joints, a sensor, a script). Trees are expanded from
entity-name regex patterns (full match) against the simulator's entities; a pattern with capture
groups makes one tree per distinct captured key, e.g. ``packet_(\\d+)`` makes ``packets/0``,
``packets/1``, ...

All objects of all trees live in one flat table (:class:`TreeSet`) ordered by tree, so the helper
bank and the signalers can work on index arrays instead of Python objects.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from .errors import TreeExpansionError
from .objects import ObjectType


@dataclass(frozen=True)
class ObjectSpec:
    """One line of a tree group: objects of ``type`` are the entities matching ``pattern``."""

    type: ObjectType
    pattern: re.Pattern


@dataclass(frozen=True)
class TreeGroupSpec:
    """A tree group as configured: object patterns, signaler, naming and anchor templates."""

    group: str
    objects: tuple[ObjectSpec, ...]
    signaler: str
    name: str = "{group}/{key}"  # template of tree names when patterns have capture groups
    anchor: str = ""  # template of the anchor entity ("{key}" is replaced); "" = first shape


@dataclass(frozen=True)
class Tree:
    """One tree: its name, its group, its signaler and the entity whose pose locates it."""

    name: str
    group: str
    signaler: str
    anchor: str  # a model or link; "" when the tree has no shape and no configured anchor
    objects: tuple[tuple[str, str], ...]  # (entity, object type name)


def expand_group(spec: TreeGroupSpec, entities_of: dict[str, list[str]],
                 optional: frozenset[str] = frozenset()) -> list[Tree]:
    """Trees of one group; ``entities_of`` maps an object type name to candidate entity names;
    a pattern of a type in ``optional`` may match nothing (a simulator that cannot toggle that
    type may not list its entities either)."""
    keyed = [s.pattern.groups > 0 for s in spec.objects]
    if any(keyed) and not all(keyed):
        i = keyed.index(False)
        raise TreeExpansionError(f"objects[{i}].pattern", "mixes patterns with and without capture "
                                 "groups; every pattern of a group needs one to assign trees")
    members: dict[str, list[tuple[str, str]]] = {}
    for i, obj in enumerate(spec.objects):
        matched = 0
        for entity in entities_of[obj.type.name]:
            m = obj.pattern.fullmatch(entity)
            if m is None:
                continue
            matched += 1
            key = "/".join(g or "" for g in m.groups()) if keyed[0] else ""
            members.setdefault(key, []).append((entity, obj.type.name))
        if matched == 0 and obj.type.name not in optional:
            raise TreeExpansionError(f"objects[{i}].pattern", f"'{obj.pattern.pattern}' matches no "
                                     f"entity of a kind fitting type '{obj.type.name}'")
    trees = []
    for key, objects in members.items():
        name = spec.name.format(group=spec.group, key=key) if keyed[0] else spec.group
        anchor = spec.anchor.format(key=key) if spec.anchor else next(
            (e for e, t in objects if t == "shape"), "")
        trees.append(Tree(name, spec.group, spec.signaler, anchor, tuple(objects)))
    return trees


class TreeSet:
    """All trees and the flat object table: entity names, owning tree and type index per object."""

    def __init__(self, trees: Sequence[Tree], types: Sequence[ObjectType]):
        names = [t.name for t in trees]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise TreeExpansionError("", f"duplicate tree names: {', '.join(dup[:5])}")
        self.trees = list(trees)
        self.types = list(types)
        self.index = {t.name: i for i, t in enumerate(self.trees)}
        type_index = {t.name: i for i, t in enumerate(self.types)}
        rows = [(e, i, type_index[t]) for i, tree in enumerate(self.trees) for e, t in tree.objects]
        self.entity = np.array([r[0] for r in rows], dtype=object)
        self.tree = np.array([r[1] for r in rows], dtype=np.intp)
        self.type = np.array([r[2] for r in rows], dtype=np.intp)
        self.names = np.array(names, dtype=object)

    def __len__(self) -> int:
        return len(self.trees)

    def select(self, patterns: str | Iterable[str]) -> np.ndarray:
        """Indices of the trees whose names fully match any of the regex ``patterns``."""
        if isinstance(patterns, str):
            patterns = [patterns]
        regexes = [re.compile(p) for p in patterns]
        return np.array([i for i, n in enumerate(self.names)
                         if any(r.fullmatch(n) for r in regexes)], dtype=np.intp)
