"""A particle simulation as a member of an ensemble, and what the Table 1 check reads from one.

:class:`ParticleSimulation` is a :class:`SimulatorModel` on a world of particles in a container
(a cup) whose pose another model holds: it represents the container's ``pose`` and ``twist`` but
not its ``collision``, since the container must collide with the particles here while the
holder's copy collides with the robot there. Everything else of its world it represents in full.

A followed container is not held still between teleports (the DYNAMICS lever, which gives the
walls no velocity: the particles would feel them only through penetration): it stays a dynamic
body without gravity, and before every step it is set to the holder's pose *and twist*, so the
contact solver sees the walls move as they do in the holder's world. Its motion is the holder's
to give, so the particles must not move it within a step: on an in-process engine its mass and
inertia are :data:`FOLLOWED_MASS_SCALE` times its own while it is followed. With its own mass
(0.2 kg) the particles' weight alone changed its velocity by about 4 mm/s a step: the walls gave
way under the particles, which sank into them 0.67 mm on average where the single simulation's
held cup lets them sink 0.46 mm, and the contact solver needed twice the iterations to settle the
particles and the yielding cup together (docs/conductor.md, "The followed cup is immovable").

That per-step setting is on the critical path of a split ensemble (the particle model is the slow
one), so on an in-process :class:`~sim_fidelity.simulator.engine.MujocoEngine` a container that is
one free body is written straight into ``qpos``/``qvel`` (the same values ``set_states`` writes,
without its checks of input the holder's own simulator produced: a fifth of the time);
any other simulator gets ``set_states``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from ..simulator import poses as pose_math
from ..simulator.engine import MujocoEngine
from ..simulator.protocol import Lever, Simulator
from .model import POSE, TWIST, Stepping
from .simulation_model import SimulatorModel

FOLLOWED_MASS_SCALE = 1e3  # a followed container's mass and inertia over its own: the particles'
# weight then changes its velocity by micrometres per second in a step (three decades below what
# its own mass allows), which the next step's setting undoes


@dataclass(frozen=True)
class _Weight:
    """A container body's own mass, inertia and inverse weights (restored when it is taken)."""

    model: mujoco.MjModel
    body: int
    dofs: slice
    mass: float
    inertia: np.ndarray
    body_invweight: np.ndarray
    dof_invweight: np.ndarray


class ParticleSimulation(SimulatorModel):
    """A simulator of particles whose ``containers`` follow the model that holds their pose."""

    def __init__(self, name: str, simulator: Simulator | None = None, *,
                 containers: Sequence[str] = ("cup",), stepping: Stepping = Stepping.SERVICE,
                 period: float | None = None, entities: str | None = None):
        super().__init__(name, simulator, stepping=stepping, period=period, entities=entities)
        self.containers = tuple(containers)
        self._weights: dict[str, _Weight] = {}  # followed containers made heavy, their own values

    def release(self, entity: str, attribute: str) -> None:
        super().release(entity, attribute)
        if entity in self.containers and attribute == POSE:
            self.sim.set_lever([entity], Lever.DYNAMICS, True)
            self._lowered.discard((entity, Lever.DYNAMICS))
            self._lowered.add((entity, Lever.GRAVITY))
            self.sim.set_lever([entity], Lever.GRAVITY, False)
            self._make_heavy(entity)
            self._read = None

    def take(self, entity: str, attribute: str, value: Any) -> None:
        if entity in self.containers and attribute == POSE:
            self._restore_weight(entity)
        super().take(entity, attribute, value)
        if entity in self.containers and attribute == POSE:
            self.sim.set_lever([entity], Lever.GRAVITY, True)
            self._lowered.discard((entity, Lever.GRAVITY))
            self._read = None

    def stop(self) -> None:
        """Containers get their own mass back, and every lever :meth:`release` lowered its
        position."""
        for entity in list(self._weights):
            self._restore_weight(entity)
        super().stop()

    def _make_heavy(self, entity: str) -> None:
        """Scale the container's mass and inertia by :data:`FOLLOWED_MASS_SCALE` (and its inverse
        weights, which scale the contact softness, by the inverse) where it is one free body
        without children of an in-process engine; any other simulator keeps its own mass."""
        sim = self.sim
        if not isinstance(sim, MujocoEngine) or entity in self._weights:
            return
        refs = sim.index.state_refs([entity])
        m = sim.model
        body = int(refs.bids[0])
        if not (refs.simple and len(refs.free) == 1 and not (m.body_parentid[1:] == body).any()):
            return
        dofs = slice(int(m.body_dofadr[body]), int(m.body_dofadr[body]) + 6)
        self._weights[entity] = _Weight(
            m, body, dofs, float(m.body_mass[body]), m.body_inertia[body].copy(),
            m.body_invweight0[body].copy(), m.dof_invweight0[dofs].copy())
        m.body_mass[body] *= FOLLOWED_MASS_SCALE
        m.body_inertia[body] *= FOLLOWED_MASS_SCALE
        m.body_invweight0[body] /= FOLLOWED_MASS_SCALE
        m.dof_invweight0[dofs] /= FOLLOWED_MASS_SCALE

    def _restore_weight(self, entity: str) -> None:
        own = self._weights.pop(entity, None)
        if own is None:
            return
        m = own.model
        m.body_mass[own.body] = own.mass
        m.body_inertia[own.body] = own.inertia
        m.body_invweight0[own.body] = own.body_invweight
        m.dof_invweight0[own.dofs] = own.dof_invweight

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
                for qa, da, pose, twist in zip(refs.qidx[:, 0].tolist(),
                                               refs.didx[:, 0].tolist(), poses.tolist(),
                                               twists.tolist()):
                    x, y, z, qx, qy, qz, qw = pose
                    qpos[qa:qa + 7] = (x, y, z, qw, qx, qy, qz)
                    qvel[da:da + 6] = (*twist[:3], *_to_body(twist[3:], qx, qy, qz, qw))
                return
        sim.set_states(names, poses, twists)

    def represents(self) -> Mapping[str, frozenset[str]]:
        out = dict(super().represents())
        for c in self.containers:
            if c in out:
                out[c] = frozenset((POSE, TWIST))
        return out


def _to_body(w: list[float], qx: float, qy: float, qz: float, qw: float) -> tuple[float, ...]:
    """World vector ``w`` in the frame of unit quaternion ``(qx, qy, qz, qw)`` (its conjugate's
    rotation, ``v + qw t + u x t`` with ``u = -(qx, qy, qz)``, ``t = 2 u x v``). Plain floats:
    unlike a MuJoCo call it keeps the GIL, which a woken worker would otherwise take in the
    middle of the slow model's write before its step."""
    vx, vy, vz = w
    ux, uy, uz = -qx, -qy, -qz
    tx, ty, tz = 2 * (uy * vz - uz * vy), 2 * (uz * vx - ux * vz), 2 * (ux * vy - uy * vx)
    return (vx + qw * tx + uy * tz - uz * ty, vy + qw * ty + uz * tx - ux * tz,
            vz + qw * tz + ux * ty - uy * tx)


def in_frame(sim: Simulator, frame: str, names: Sequence[str]) -> np.ndarray:
    """Positions ``(n, 3)`` of the entities ``names`` in the frame of entity ``frame``."""
    poses = sim.get_states([frame, *names])[0]
    origin = poses[0]
    return pose_math.quat_rotate(pose_math.quat_conj(origin[3:]), poses[1:, :3] - origin[:3])


def inside_cup(positions: np.ndarray, inner_radius: float, height: float) -> np.ndarray:
    """Which particle centres (cup frame, origin at the floor's centre) lie within the cup."""
    radial = np.linalg.norm(positions[:, :2], axis=1)
    return (radial < inner_radius) & (positions[:, 2] > 0.0) & (positions[:, 2] < height)
