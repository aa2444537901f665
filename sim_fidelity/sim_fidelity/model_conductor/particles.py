"""A particle simulation as a member of an ensemble, and what the Table 1 check reads from one.

:class:`ParticleSimulation` is a :class:`SimulatorModel` on a world of particles in a container
(a cup) whose pose another model holds: it represents the container's ``pose`` and ``twist``
(followed: the container is kinematic in this world, set to the holder's pose every step) but not
its ``collision``, since the container must collide with the particles here while the holder's
copy collides with the robot there. Everything else of its world it represents in full.

The followed container moves by a teleport to the holder's pose after each step (DYNAMICS lever
off: it is not integrated, and no velocity is given to it: with the lever's hold damping a set
velocity makes the contact solver throw the particles out of the cup); the particles feel the
walls through contact penetration, at most one main step of motion deep.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..simulator import poses as pose_math
from ..simulator.protocol import Simulator
from .model import POSE, TWIST, Stepping
from .simulation_model import SimulatorModel


class ParticleSimulation(SimulatorModel):
    """A simulator of particles whose ``containers`` follow the model that holds their pose."""

    def __init__(self, name: str, simulator: Simulator | None = None, *,
                 containers: Sequence[str] = ("cup",), stepping: Stepping = Stepping.SERVICE,
                 period: float | None = None, entities: str | None = None):
        super().__init__(name, simulator, stepping=stepping, period=period, entities=entities)
        self.containers = tuple(containers)

    def represents(self) -> Mapping[str, frozenset[str]]:
        out = dict(super().represents())
        for c in self.containers:
            if c in out:
                out[c] = frozenset((POSE, TWIST))
        return out


def in_frame(sim: Simulator, frame: str, names: Sequence[str]) -> np.ndarray:
    """Positions ``(n, 3)`` of the entities ``names`` in the frame of entity ``frame``."""
    poses = sim.get_states([frame, *names])[0]
    origin = poses[0]
    return pose_math.quat_rotate(pose_math.quat_conj(origin[3:]), poses[1:, :3] - origin[:3])


def inside_cup(positions: np.ndarray, inner_radius: float, height: float) -> np.ndarray:
    """Which particle centres (cup frame, origin at the floor's centre) lie within the cup."""
    radial = np.linalg.norm(positions[:, :2], axis=1)
    return (radial < inner_radius) & (positions[:, 2] > 0.0) & (positions[:, 2] < height)
