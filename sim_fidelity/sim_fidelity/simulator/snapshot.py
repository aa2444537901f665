"""Snapshots of a simulator's full dynamic state, restored exactly (``Simulator.snapshot`` and
``Simulator.restore``; ``Features.snapshots`` says whether a simulator has them).

:class:`EngineSnapshot` is the embedded engine's (taken and restored by :mod:`.engine_snapshot`):
it holds the state itself and can be restored on any engine whose entities are those of the save
(the same engine, or a second one loaded from the same world). :class:`ServerSnapshot` names one
that ``sim_server`` keeps (``~/save_snapshot``). Gazebo has none.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Snapshot:
    """A saved dynamic state; only ``restore`` of a simulator of the same world reads it."""

    time: float  # simulation time of the save
    world: str  # name of the world it was taken of


@dataclass(frozen=True, eq=False)
class EngineSnapshot(Snapshot):
    """The embedded engine's state (see :mod:`.engine_snapshot`)."""

    entities: tuple[str, ...] = ()  # every entity name, in index order
    core: Any = None  # undo.Snapshot: physics state, static bodies' poses, lever flags (copies)
    eq: tuple[np.ndarray, ...] = ()  # the weld targets scripts retarget (engine_snapshot.EQ_FIELDS)
    data: Any = None  # a copy of the MjData (contacts, solver and sleeping-island state)
    scripts: tuple[dict[str, Any], ...] = ()  # each script instance's attributes
    partition: tuple[frozenset[int], ...] = ()  # the island-parallel engine's parts (units)


@dataclass(frozen=True)
class ServerSnapshot(Snapshot):
    """A snapshot kept by ``sim_server`` under ``id``; ``server``: that server's node name."""

    id: int = 0
    server: str = ""
