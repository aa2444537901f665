"""Cases the reality-gap tests build: a spec of a 2-D state, histories of given state chains,
kernels of given members and transfer, a robot on a line whose reality departs from the
simulation as a dynamics function says, transition models of hand-made counts, and a spec applying
its state to the 1-D track's robot or terrain sensor (with that track's engine)."""
from __future__ import annotations

from typing import Callable

import numpy as np

from sim_fidelity.reality_gap import History, Kernel, Spec, TransitionModel
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.world_generators.one_d_track import ROBOT, TERRAIN, track_world

COMMANDS = (-1.0, -0.5, 0.5, 1.0)  # the line robot's commands
SHIFT = np.c_[np.eye(2), [0.0, 0.0], [2.0, 0.0]]  # s' = s + (2, 0)
SCALE = np.c_[2 * np.eye(2), [0.0, 0.0], [0.0, 0.0]]  # s' = 2 s
PUSH = np.c_[np.eye(2), [1.0, 0.0], [0.0, 0.0]]  # s' = s + (u, 0)
TO = np.c_[np.zeros((2, 3)), [0.4, 0.3]]  # f(s, u) = (0.4, 0.3) wherever it is active
# (x, u, real) -> (the next x, the command actually driven)
LineDynamics = Callable[[float, float, bool], tuple[float, float]]


def pitch_everywhere(spec: Spec, pitch: float = 0.2) -> Kernel:
    """A kernel active everywhere on ``spec``'s state (a state component named ``pitch``) whose
    f_k keeps the state and sets its pitch to ``pitch``."""
    d, m = len(spec.state), len(spec.action)
    row = spec.state_names.index("pitch")
    transfer = np.hstack([np.eye(d), np.zeros((d, m + 1))])
    transfer[row] = 0.0
    transfer[row, -1] = pitch
    return Kernel(np.zeros(d), np.zeros((1, d)), 1e6, (0.5, 0.5), 1, transfer, 7)


def spec_2d(**sections) -> Spec:
    """State (x, y) from /odom, one action v in {0, 1}; ``sections`` update the spec's own."""
    raw = {
        "state": [{"name": n, "topic": "/odom", "type": "nav_msgs/msg/Odometry",
                   "field": f"pose.pose.position.{n}"} for n in ("x", "y")],
        "action": [{"name": "v", "topic": "/cmd", "type": "geometry_msgs/msg/Twist",
                    "field": "linear.x", "values": [0.0, 1.0]}],
        "distance": {"eps_c": 0.05}, "rollouts": {"count": 20, "max_steps": 30},
        "kernels": {"min_samples": 2},
        "apply": [{"state": "x", "entity": "robot", "component": "pose.x"},
                  {"state": "y", "entity": "robot", "component": "pose.yaw"}],
    }
    for key, value in sections.items():
        raw[key] = {**raw.get(key, {}), **value}
    return Spec.from_dict(raw)


def history(*runs: list, action: int = 1) -> History:
    """Transitions between consecutive states of each run, all with one action."""
    parts = []
    for i, run in enumerate(runs):
        s = np.asarray(run, float)
        n = len(s) - 1
        parts.append(History(s[:-1], np.full((n, 1), float(action)), np.full(n, action),
                             np.zeros(n), s[1:], np.arange(n) * 2.0, np.full(n, i)))
    return History.concatenate(parts)


def kernel(members, transfer, sigma: float = 0.1) -> Kernel:
    """A kernel centred on its first member, of divergence (0.5, 0.5)."""
    members = np.atleast_2d(np.asarray(members, float))
    return Kernel(members[0], members, sigma, (0.5, 0.5), 1, np.asarray(transfer, float), 2)


def line_histories(n_runs: int, seed: int, dynamics: LineDynamics,
                   steps: int = 40) -> tuple[History, History]:
    """A robot on a line (state x, y = 0) under random commands of ``COMMANDS``: ``n_runs`` runs
    a side of ``steps`` steps, each step from a random place in [0, 10] (the simulation's side
    first, then reality's, from one generator seeded ``seed``); ``dynamics`` moves it."""
    rng = np.random.default_rng(seed)
    sides = []
    for real in (False, True):
        parts = []
        for run in range(n_runs):
            x = rng.uniform(0, 10, steps + 1)
            u = rng.choice(COMMANDS, steps)
            for t in range(steps):
                x[t + 1], u[t] = dynamics(x[t], u[t], real)
            s = np.c_[x, np.zeros(steps + 1)]
            parts.append(History(s[:-1], u[:, None], (u > 0).astype(int), np.zeros(steps), s[1:],
                                 np.arange(steps) * 1.0, np.full(steps, run)))
        sides.append(History.concatenate(parts))
    return sides[0], sides[1]


def model(counts: dict[tuple[int, int, int], int], n_nodes: int = 4,
          n_actions: int = 2) -> TransitionModel:
    """A transition model from hand-made counts {(node, action, next node): count}."""
    rows = [key for key, n in counts.items() for _ in range(n)]
    s, a, s2 = (np.array(col, dtype=np.int64) for col in zip(*rows))
    return TransitionModel.estimate(s, a, s2, n_nodes, n_actions)


def spec(*components: str, weights=(1.0, 1.0)) -> Spec:
    """Two state components (a, b) applied to ``components`` of the robot (``value``: the
    terrain sensor)."""
    names = ("a", "b")
    return Spec.from_dict({
        "state": [{"name": n, "topic": "/odom", "type": "nav_msgs/msg/Odometry",
                   "field": f"pose.pose.position.{c}", "weight": w}
                  for n, c, w in zip(names, "xy", weights)],
        "action": [{"name": "v", "topic": "/cmd", "type": "geometry_msgs/msg/Twist",
                    "field": "linear.x", "values": [0.0, 1.0]}],
        "apply": [{"state": n, "entity": TERRAIN if c == "value" else ROBOT, "component": c}
                  for n, c in zip(names, components)]})


def engine_with_value(x: float = 1.0, cls: type[MujocoEngine] = MujocoEngine) -> MujocoEngine:
    """The 1-D track's robot at ``x`` with a double terrain sensor reading 0.25."""
    sdf = track_world().replace('type="bool" default="0"', 'type="double" default="0.25"')
    engine = cls.from_string(sdf)
    engine.set_states([ROBOT], np.array([[x, 0.0, 0.0, 0, 0, 0, 1.0]]))
    return engine
