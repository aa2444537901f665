"""The 1-D example's simulation and missions (paper 001, section IV), on the embedded engine.

The robot is the free box of ``worlds/one_d_track.py``. A step hook is its drive: a velocity
servo, force ``K (v_cmd - v)``, with the ``-K v`` part as joint damping so MuJoCo integrates it
implicitly and a 50 ms physics step stays stable. Where the world's terrain sensor *computes* 1
(the difficult regions; an override by a kernel does not make mud) the damping grows by
``MUD_DRAG``, which cuts the speed to ``K / (K + MUD_DRAG)`` of the command.

A mission: start at x_0 ~ U(0, LENGTH), reach the farther waypoint within ``ACCURACY`` by
``DEADLINE``. The control software and the performance monitor run at 10 Hz. The monitor, as
the paper writes it: +10 for an on-time accurate arrival, 0 for any tick before the deadline,
-10 for any tick after the deadline. Arrival ends the mission (late or not); a mission not
arrived by ``GIVE_UP`` ends there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..reality_gap.kernel_set import KernelRunner
from ..simulator.engine import MujocoEngine
from ..simulator.sdf.records import FREE_JOINT_SUFFIX
from ..simulator.sensor_values import SensorValues
from ..world_generators.one_d_track import LENGTH, LINK, ROBOT, TERRAIN, track_world

K_DRIVE = 100.0  # N s/m, the drive's velocity gain (1 kg robot: 10 ms time constant)
MUD_DRAG = 200.0  # N s/m more in difficult terrain: a third of the commanded speed
PHYSICS_STEP = 0.05  # s
CONTROL_PERIOD = 0.1  # s (10 Hz)
WAYPOINTS = (1.0, 9.0)
ACCURACY = 0.1  # m
# Established from the design as the field test's was ("empirically established"): the
# original software's slowest design mission (x_0 = 0 to 9 m) takes 4.6 s; 10 % margin
DEADLINE = 5.1  # s
GIVE_UP = 2 * DEADLINE  # s: a mission ends here even without arrival
V_MAX = 2.0  # m/s, the original software's saturation
ARRIVED, LATE = 10.0, -10.0

Policy = Callable[[np.ndarray, float], float]  # (state [x, terrain], goal) -> velocity command


class Track:
    """One engine running missions back to back (the robot is re-placed, nothing recompiled)."""

    def __init__(self, regions: Sequence[tuple[float, float]] = ()):
        self.engine = MujocoEngine.from_string(track_world(regions, step=PHYSICS_STEP))
        self.sensors = SensorValues(self.engine)
        model = self.engine.model
        joint = model.joint(LINK + FREE_JOINT_SUFFIX).id
        self._q, self._dof = model.jnt_qposadr[joint], model.jnt_dofadr[joint]
        self._steps = int(round(CONTROL_PERIOD / PHYSICS_STEP))
        terrain = self.sensors.sensors[self.sensors.index(TERRAIN)]
        # the x intervals where the terrain flag computes 1 (each region spans the rail's y, z)
        self._mud = [(float(lo[0]), float(hi[0])) for lo, hi in zip(terrain.lo, terrain.hi)]
        self.command = 0.0
        self.engine.hooks.add(self._drive)

    def _position(self) -> np.ndarray:
        return self.engine.data.qpos[self._q:self._q + 3][None]

    def _drive(self, _engine: MujocoEngine | None = None) -> None:
        x = float(self.engine.data.qpos[self._q])
        mud = any(lo <= x <= hi for lo, hi in self._mud)  # what the flag computes, per step
        self.engine.model.dof_damping[self._dof] = K_DRIVE + MUD_DRAG * mud
        self.engine.data.qfrc_applied[self._dof] = K_DRIVE * self.command

    def place(self, x: float) -> None:
        """The robot at rest at ``x``, the command zero, no sensor overrides."""
        self.engine.set_states([ROBOT], np.array([[x, 0, 0, 0, 0, 0, 1.0]]), np.zeros((1, 6)))
        self.sensors.release_all()
        self.command = 0.0
        self._drive()

    def advance(self, v: float) -> None:
        """One control period with the velocity command ``v``."""
        self.command = float(v)
        self._drive()
        self.engine.step(self._steps)

    def state(self) -> np.ndarray:
        """What the control software observes: [x, terrain flag in force]."""
        pos = self._position()
        return np.array([pos[0, 0], self.sensors.values_at(pos)[0]])

    def kernel_runner(self, kernels) -> KernelRunner:
        """A kernel manager for this track: poses through the engine, the flag through the table."""
        return KernelRunner(self.engine, kernels, sensors=self.sensors)


@dataclass
class Mission:
    """One mission's log, laid out as ``write_run`` takes it."""

    times: np.ndarray  # (n,) s since the start
    states: np.ndarray  # (n, 2) [x, terrain]
    actions: np.ndarray  # (n, 1) velocity commands
    rewards: np.ndarray  # (n - 1,) reward of the transition k -> k + 1
    kernel_hits: int  # corrections made by the kernel manager

    @property
    def total(self) -> float:
        return float(self.rewards.sum())


def starts(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Start positions x_0 ~ U(0, LENGTH) and goals (the farther waypoint) of ``n`` missions."""
    x0 = np.random.default_rng(seed).uniform(0.0, LENGTH, n)
    goals = np.where(np.abs(x0 - WAYPOINTS[0]) > np.abs(x0 - WAYPOINTS[1]), *WAYPOINTS)
    return x0, goals


def run_mission(track: Track, policy: Policy, x0: float, goal: float,
                runner: KernelRunner | None = None, kernel_period: float = 0.5) -> Mission:
    """Fly one mission. With ``runner``, every ``kernel_period`` the kernel manager replaces the
    state the simulation reached from (s, a) one period earlier by f_k(s, a) (kernel_set.py).
    A policy with a ``feedback(reward, done)`` method hears each reward after choosing its
    next action (what SARSA needs)."""
    track.place(x0)
    every = int(round(kernel_period / CONTROL_PERIOD))
    feedback = getattr(policy, "feedback", None)
    states, actions, rewards, hits = [], [], [], 0
    k = 0
    while True:
        if k:
            track.advance(actions[-1])
            if runner is not None and k % every == 0:
                hits += runner.apply(states[k - every], np.array([actions[k - every]])) is not None
        s = track.state()
        t = k * CONTROL_PERIOD
        arrived = abs(s[0] - goal) < ACCURACY
        late = t > DEADLINE + 1e-9
        reward = LATE if late else ARRIVED if arrived else 0.0
        done = arrived or t >= GIVE_UP - 1e-9
        states.append(s)
        actions.append(float(policy(s, goal)))
        if k:
            rewards.append(reward)
            if feedback is not None:
                feedback(reward, done)
        if done:
            break
        k += 1
    if runner is not None:
        runner.release()
    return Mission(np.arange(len(states)) * CONTROL_PERIOD, np.array(states),
                   np.array(actions)[:, None], np.array(rewards), hits)


def spring_policy(gain: float = 5.0, v_max: float = V_MAX) -> Policy:
    """The original, hand-written control software: the paper's Fig. 3 ``vel = 5 * delta``
    towards the goal, saturated at ``v_max`` (as the field test's saturated spring)."""
    def policy(state: np.ndarray, goal: float) -> float:
        return float(np.clip(gain * (goal - state[0]), -v_max, v_max))
    return policy
