"""The one interface every manager uses to talk to a simulator.

Two implementations exist: :class:`~sim_fidelity.simulator.engine.MujocoEngine` (in-process) and
:class:`~sim_fidelity.simulator.ros.client.RosSimulator` (a client of the ``simulation_interfaces``
services, served by Gazebo or by our ``sim_server``). Managers never import MuJoCo. Every
implementation passes one conformance suite (``test/test_simulator_conformance.py``); what one
lacks by design it declares in :meth:`Simulator.features`.

Conventions
-----------
* Entity names are scoped SDF names: ``model``, ``model::link``, ``model::joint``,
  ``model::link::sensor``, ``model::plugin``; nested models add levels (``outer::inner::link``).
* Poses are ``(n, 7)`` float arrays ``[x, y, z, qx, qy, qz, qw]`` (the ROS order) in the world
  frame.
* Twists are ``(n, 6)`` float arrays ``[vx, vy, vz, wx, wy, wz]`` in the world frame.
"""
from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from .errors import InvalidOperationError, UnsupportedFeatureError, UnsupportedLeverError
from .snapshot import Snapshot


class EntityKind(str, enum.Enum):
    MODEL = "model"
    LINK = "link"
    JOINT = "joint"
    SENSOR = "sensor"
    PLUGIN = "plugin"


class Lever(enum.IntEnum):
    """Fidelity levers; ``enabled=True`` is always the high-fidelity side.

    Values equal the ``LEVER_*`` constants of ``sim_fidelity_interfaces/srv/SetLever``.
    """

    DYNAMICS = 0  # off: the body is held kinematic where it is (no integration, zero velocity)
    COLLISION = 1  # off: the body's geometry takes part in no contact
    GRAVITY = 2  # off: gravity does not act on the body
    ACTUATION = 3  # off: the joint's actuators apply no force (the joint is passive)
    SENSOR = 4  # off: the sensor is not computed or published
    SCRIPT = 5  # off: the plugin/script is not called

    @classmethod
    def of(cls, value: "Lever | int") -> "Lever":
        """The lever of ``value``; UnsupportedLeverError for a value that names none."""
        try:
            return cls(value)
        except ValueError:
            levers = ", ".join(f"{lever.name}={lever.value}" for lever in cls)
            raise UnsupportedLeverError(value, why=f"no such lever; levers: {levers}") from None


class SimState(enum.IntEnum):
    """Values equal ``simulation_interfaces/msg/SimulationState``."""

    STOPPED = 0
    PLAYING = 1
    PAUSED = 2
    QUITTING = 3
    NO_WORLD = 4
    LOADING_WORLD = 5


@dataclass(frozen=True)
class EntityInfo:
    name: str
    kind: EntityKind
    parent: str = ""  # scoped name of the owning entity; "" for top-level models
    static: bool = False  # welded to the world (SDF <static>)
    type: str = ""  # joint/sensor type, plugin filename; "" otherwise


def select_entities(infos: Mapping[str, EntityInfo], kind: EntityKind | str | None,
                    pattern: str | None) -> list[str]:
    """The names in ``infos`` of ``kind`` (any when None) in which the regex ``pattern`` finds a
    match (all when empty): what :meth:`Simulator.entities` means by its filters, for every
    implementation. A kind that is none raises UnsupportedFeatureError, a pattern that is no
    regular expression InvalidOperationError."""
    try:
        kind = EntityKind(kind) if kind is not None else None
    except ValueError:
        raise UnsupportedFeatureError(f"no entity kind {kind!r}; kinds: "
                                      f"{', '.join(k.value for k in EntityKind)}") from None
    try:
        rx = re.compile(pattern) if pattern else None
    except re.error as e:
        raise InvalidOperationError(f"entity pattern {pattern!r} is not a regular "
                                    f"expression: {e}") from None
    return [n for n, info in infos.items()
            if (kind is None or info.kind == kind) and (rx is None or rx.search(n))]


@dataclass(frozen=True)
class Features:
    """What a simulator offers: the levers it has and the general capabilities."""

    levers: frozenset[Lever] = frozenset()
    spawning: bool = False
    deleting: bool = False
    stepping: bool = False
    state_setting: bool = False
    resetting: bool = False
    snapshots: bool = False  # snapshot() and restore() of the full dynamic state
    static_fallback: bool = False  # lowers fidelity by swapping a model for a static copy of itself
    free_running: bool = True  # PLAYING advances time on its own (a server's clock) and step() is
    # refused then; False: time moves only by step() (in-process), whatever the state
    spawn_formats: tuple[str, ...] = ("sdf",)
    extra: dict = field(default_factory=dict, compare=False)


@runtime_checkable
class Simulator(Protocol):
    """A simulated world that managers can read, drive and re-parameterise."""

    # --- the scene -------------------------------------------------------------------------
    def entities(self, kind: EntityKind | None = None, pattern: str | None = None) -> list[str]:
        """Scoped names of the entities, optionally of one kind and matching a regex (search)."""

    def entity_info(self, name: str) -> EntityInfo:
        """What the entity is. Raises UnknownEntityError."""

    def bounds(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners ``(n, 3)`` of the box around each model's or link's collision
        geometry, in the entity's own frame; NaN rows where it has none. Raises
        UnknownEntityError, and InvalidOperationError for other kinds of entity."""

    # --- state -----------------------------------------------------------------------------
    def get_states(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """World poses ``(n, 7)`` and twists ``(n, 6)`` of models or links, in one call."""

    def set_states(self, names: Sequence[str], poses: np.ndarray | None = None,
                   twists: np.ndarray | None = None) -> None:
        """Teleport models (or free links) and/or set their velocity. Raises InvalidPoseError."""

    # --- time ------------------------------------------------------------------------------
    def step(self, n: int = 1) -> None:
        """Advance exactly ``n`` physics steps (allowed while paused)."""

    @property
    def time(self) -> float:
        """Simulation time in seconds."""

    @property
    def step_size(self) -> float:
        """Physics step in seconds."""

    def sim_state(self) -> SimState: ...

    def set_sim_state(self, state: SimState) -> None:
        """PLAYING, PAUSED or STOPPED (stopped = paused and reset to the initial state)."""

    def reset(self) -> None:
        """Back to the initial state and time zero, every lever back to its original; spawned
        entities stay."""

    def snapshot(self) -> Snapshot:
        """Save the full dynamic state (time included, every lever); UnsupportedFeatureError
        where ``features().snapshots`` is False."""

    def restore(self, snapshot: Snapshot) -> None:
        """Put the state saved by :meth:`snapshot` back exactly: stepping on gives the same
        trajectory. InvalidOperationError, changing nothing, for a snapshot of another world or
        of other entities (a spawn or delete since)."""

    # --- scene edits -------------------------------------------------------------------------
    def spawn(self, name: str, sdf: str, pose: np.ndarray | None = None) -> str:
        """Add the model in SDF text under ``name``; returns the name used."""

    def delete(self, name: str) -> None: ...

    # --- fidelity levers ---------------------------------------------------------------------
    def set_lever(self, names: Sequence[str], lever: Lever, enabled: bool) -> None:
        """Apply one lever to many entities in one batch. Raises UnsupportedLeverError."""

    def get_lever(self, names: Sequence[str], lever: Lever, *,
                  original: bool = False) -> np.ndarray:
        """Boolean array: is the lever enabled (high-fidelity side) for each entity; with
        ``original``, as the world file (or the spawn) gave it, whatever was changed since.
        ``reset`` puts every lever back to its original."""

    def features(self) -> Features: ...
