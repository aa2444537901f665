"""Object types and their common state per fidelity level, expressed as lever settings.

An object is one simulator entity whose fidelity can be toggled. All objects of one type share a
*common state* per level: the set of levers that are switched off at that level. A lever that is
not switched off keeps the object's own (cached) high-fidelity value, so intricate settings of an
object survive every toggle (paper 000, Sec. 3).

Built-in types (paper 000, Sec. 4.3):

========  =====================  ==========================  =========================
type      MEDIUM                 LOW                         entity kinds
========  =====================  ==========================  =========================
shape     not dynamic, colliding not dynamic, not colliding  model, link
joint     = HIGH                 passive (ACTUATION off)     joint
sensor    = HIGH                 SENSOR off                  sensor
script    = HIGH                 SCRIPT off                  plugin
========  =====================  ==========================  =========================

Joints, sensors and scripts have no intermediate state, so their MEDIUM is their HIGH state: a
tree of them at MEDIUM is fully simulated.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..simulator.protocol import EntityKind, Lever
from .levels import Level


@dataclass(frozen=True)
class ObjectType:
    """One object type: which levers are off at MEDIUM and at LOW, which entity kinds it fits."""

    name: str
    medium_off: frozenset[Lever]
    low_off: frozenset[Lever]
    kinds: tuple[EntityKind, ...]

    def off_at(self, level: Level) -> frozenset[Lever]:
        """Levers switched off at ``level`` (none at HIGH)."""
        return {Level.HIGH: frozenset(), Level.MEDIUM: self.medium_off,
                Level.LOW: self.low_off}[level]

    @property
    def levers(self) -> frozenset[Lever]:
        """Every lever this type ever touches."""
        return self.medium_off | self.low_off


BUILTIN_TYPES: dict[str, ObjectType] = {
    t.name: t for t in (
        ObjectType("shape", frozenset({Lever.DYNAMICS}),
                   frozenset({Lever.DYNAMICS, Lever.COLLISION}),
                   (EntityKind.MODEL, EntityKind.LINK)),
        ObjectType("joint", frozenset(), frozenset({Lever.ACTUATION}), (EntityKind.JOINT,)),
        ObjectType("sensor", frozenset(), frozenset({Lever.SENSOR}), (EntityKind.SENSOR,)),
        ObjectType("script", frozenset(), frozenset({Lever.SCRIPT}), (EntityKind.PLUGIN,)),
    )
}


def off_table(types: list[ObjectType]) -> np.ndarray:
    """Boolean ``(n_types, 3, n_levers)``: is lever ``l`` off for type ``t`` at level ``v``."""
    table = np.zeros((len(types), len(Level), len(Lever)), bool)
    for t, obj_type in enumerate(types):
        for level in Level:
            for lever in obj_type.off_at(level):
                table[t, level, lever] = True
    return table
