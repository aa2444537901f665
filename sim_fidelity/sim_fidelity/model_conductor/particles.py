"""A particle simulation as a member of an ensemble, and what the Table 1 check reads from one.

:class:`ParticleSimulation` is a :class:`SimulatorModel` on a world of particles in a container
(a cup) whose pose another model holds: it represents the container's ``pose`` and ``twist`` but
not its ``collision``, since the container must collide with the particles here while the
holder's copy collides with the robot there. Everything else of its world it represents in full.

A followed container is not held still between teleports (the DYNAMICS lever, which gives the
walls no velocity: the particles would feel them only through penetration): it stays a dynamic
body without gravity, and before every step it is set to the holder's pose *and twist*, so the
contact solver sees the walls move as they do in the holder's world. Within one step the
particles' push changes its velocity by what their weight gives a body of the cup's mass in one
step (about 4 mm/s for 50 particles in a 0.2 kg cup at 1 ms), and the next step resets it.

That per-step setting is on the critical path of a split ensemble (the particle model is the slow
one), so on an in-process :class:`~sim_fidelity.simulator.engine.MujocoEngine` a container that is
one free body is written straight into ``qpos``/``qvel`` (the same values ``set_states`` writes,
without its checks of input the holder's own simulator produced: a fifth of the time);
any other simulator gets ``set_states``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mujoco
import numpy as np

from ..simulator import poses as pose_math
from ..simulator.engine import MujocoEngine
from ..simulator.protocol import Lever, Simulator
from .model import POSE, TWIST, Stepping
from .simulation_model import SimulatorModel


class ParticleSimulation(SimulatorModel):
    """A simulator of particles whose ``containers`` follow the model that holds their pose."""

    def __init__(self, name: str, simulator: Simulator | None = None, *,
                 containers: Sequence[str] = ("cup",), stepping: Stepping = Stepping.SERVICE,
                 period: float | None = None, entities: str | None = None):
        super().__init__(name, simulator, stepping=stepping, period=period, entities=entities)
        self.containers = tuple(containers)

    def release(self, entity: str, attribute: str) -> None:
        super().release(entity, attribute)
        if entity in self.containers and attribute == POSE:
            self.sim.set_lever([entity], Lever.DYNAMICS, True)
            self._lowered.discard((entity, Lever.DYNAMICS))
            self._lowered.add((entity, Lever.GRAVITY))
            self.sim.set_lever([entity], Lever.GRAVITY, False)
            self._read = None

    def take(self, entity: str, attribute: str, value: Any) -> None:
        super().take(entity, attribute, value)
        if entity in self.containers and attribute == POSE:
            self.sim.set_lever([entity], Lever.GRAVITY, True)
            self._lowered.discard((entity, Lever.GRAVITY))
            self._read = None

    def follow_all(self, values: Sequence[tuple[str, str, Any]]) -> None:
        """A container's followed pose and twist are kept for the next step (set there once);
        anything else as any simulator follows."""
        rest = []
        for entity, attribute, value in values:
            if entity not in self.containers:
                rest.append((entity, attribute, value))
            elif attribute == POSE:
                self._following[entity] = (self.sim.time, np.array(value, float))
            elif attribute == TWIST:
                self._twist[entity] = np.array(value, float)
                self._twist_followed.add(entity)
        if rest:
            super().follow_all(rest)

    def step(self, dt: float) -> None:
        """Set every followed container to the holder's pose and twist, then step."""
        moving = [c for c in self.containers if c in self._following]
        if moving:
            poses = np.array([self._following[c][1] for c in moving])
            twists = np.array([self._twist.get(c, np.zeros(6)) for c in moving])
            self._drive(moving, poses, twists)
        super().step(dt)

    def _drive(self, names: list[str], poses: np.ndarray, twists: np.ndarray) -> None:
        """Set the containers' poses and world twists (straight into MuJoCo's state where each
        is one free body of an in-process engine, else through ``set_states``)."""
        sim = self.sim
        if isinstance(sim, MujocoEngine):
            refs = sim.index.state_refs(names)
            if refs.simple and not refs.offset and len(refs.free) == len(names):
                qpos, qvel = sim.data.qpos, sim.data.qvel
                conj = np.empty(4)
                for qa, da, pose, twist in zip(refs.qidx[:, 0].tolist(),
                                               refs.didx[:, 0].tolist(), poses, twists):
                    x, y, z, qx, qy, qz, qw = pose.tolist()
                    qpos[qa:qa + 7] = (x, y, z, qw, qx, qy, qz)
                    qvel[da:da + 3] = twist[:3]
                    conj[:] = (qw, -qx, -qy, -qz)  # angular velocity in the body frame
                    mujoco.mju_rotVecQuat(qvel[da + 3:da + 6], twist[3:], conj)
                return
        sim.set_states(names, poses, twists)

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
