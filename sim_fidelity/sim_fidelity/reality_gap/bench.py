"""``simfid bench kernels``: precision and recall of the kernels on planted gaps (``planted.py``)
and the kernel manager's lookup time, today's against the previous one, side by side.

The previous lookup (kernels at one node centre, one affine fit per discrete action) is kept
here, verbatim in its arithmetic, as the baseline the new one is measured against.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from .kernel_set import KernelSet
from .kernels import Kernel
from .planted import Case, Score, run_case
from .spec import Spec

FULL = 20_000  # transitions per side: the 1-D example's data size (16,543 sim / 19,946 deploy)


def default_cases() -> list[Case]:
    """Every 1-D shape at three noise levels at full size; 1-D sizes; 2-D shapes."""
    cases = [Case(1, shape, noise, FULL) for shape in ("slow", "drift", "stuck", "none")
             for noise in (0.01, 0.03, 0.1)]
    cases += [Case(1, shape, 0.03, n) for shape in ("slow", "stuck") for n in (2_000, 5_000)]
    cases += [Case(2, shape, 0.03, FULL) for shape in ("slow", "drift", "stuck", "none")]
    cases += [Case(2, "slow", 0.1, FULL), Case(2, "slow", 0.03, 5_000)]
    return cases


def run_cases(cases: list[Case],
              bar: Callable[[Iterable], Iterable] = lambda it: it) -> list[Score]:
    """Score each case on its own bags (written to a temporary folder)."""
    scores = []
    with tempfile.TemporaryDirectory(prefix="simfid_planted_") as tmp:
        for i, case in enumerate(bar(cases)):
            scores.append(run_case(case, Path(tmp) / f"case_{i:03d}"))
    return scores


class BaselineLookup:
    """The previous ``KernelSet.lookup``: kernels at a node centre, fits per discrete action."""

    def __init__(self, centres: np.ndarray, sigma: float, threshold: float, weights: np.ndarray,
                 coef: np.ndarray, has_fit: np.ndarray):
        self.centres, self.weights, self.threshold = centres, weights, threshold
        self.sigma = np.full(len(centres), sigma)
        self.coef, self.has_fit = coef, has_fit

    def activation(self, state: np.ndarray) -> np.ndarray:
        c = np.abs(self.centres - np.asarray(state, float)) @ self.weights
        return np.exp(-0.5 * (c / self.sigma) ** 2)

    def lookup(self, state: np.ndarray, action: int) -> tuple[int, np.ndarray] | None:
        active = (self.activation(state) > self.threshold) & self.has_fit[:, action]
        if not active.any():
            return None
        k = int(active.argmax())
        return k, self.coef[k, action] @ np.append(np.asarray(state, float), 1.0)


def lookup_timing(spec: Spec, counts=(10, 100, 1000), members: int = 1, states: int = 4000,
                  seed: int = 0) -> list[dict]:
    """Mean time per state of the previous and today's lookup, same kernels, same states
    (x, y, pitch of the field test's size; kernels at random places; ~20 % of states hit)."""
    rng = np.random.default_rng(seed)
    d, m, n_actions = len(spec.state), len(spec.action), spec.n_actions
    lo, hi = np.array([-6.0, 0.0, 0.0]), np.array([6.0, 16.0, 0.2])
    probe = rng.uniform(lo, hi, size=(states, d))
    commands = spec.action_values()[rng.integers(n_actions, size=states)]
    ids = spec.discretise(commands)
    rows = []
    for k in counts:
        centres = rng.uniform(lo, hi, size=(k, d))
        coef = rng.normal(size=(k, n_actions, d, d + 1))
        old = BaselineLookup(centres, spec.sigma, spec.activation_threshold, spec.weights, coef,
                             np.ones((k, n_actions), dtype=bool))
        new = KernelSet([Kernel(c, c + rng.normal(0, 0.2, (members, d)) * [1, 1, 0], spec.sigma,
                                (0.5, 0.5), 1, rng.normal(size=(d, d + m + 1)), 4)
                         for c in centres], spec)
        times = {}
        for name, lookup, actions in (("previous", old.lookup, ids),
                                      ("today", new.lookup, commands)):
            started = time.perf_counter()
            hits = sum(lookup(probe[i], actions[i]) is not None for i in range(states))
            times[name] = (time.perf_counter() - started) / states * 1e6
            times[f"{name}_hits"] = hits / states
        rows.append({"kernels": k, "members_per_kernel": members,
                     "previous_us": round(times["previous"], 2),
                     "today_us": round(times["today"], 2),
                     "previous_hit_share": round(times["previous_hits"], 3),
                     "today_hit_share": round(times["today_hits"], 3)})
    return rows


_ODOM = {"topic": "/odom", "type": "nav_msgs/msg/Odometry"}
_DRIVE = {"topic": "/cmd", "type": "ackermann_msgs/msg/AckermannDriveStamped"}
FIELD_SPEC = {  # the field test's state (x, y, pitch) and actions (speed x steering, 15)
    "state": [{"name": "x", **_ODOM, "field": "pose.pose.position.x"},
              {"name": "y", **_ODOM, "field": "pose.pose.position.y"},
              {"name": "pitch", "topic": "/imu", "type": "sensor_msgs/msg/Imu",
               "field": "orientation", "convert": "pitch", "weight": 4.0}],
    "action": [{"name": "speed", **_DRIVE, "field": "drive.speed",
                "bins": [0.0, 0.5, 1.0, 1.5, 2.0, 3.0]},
               {"name": "steering", **_DRIVE, "field": "drive.steering_angle",
                "bins": [-0.6, -0.2, 0.2, 0.6]}],
    "distance": {"eps_c": 0.5},
}


def lookup_spec() -> Spec:
    """The field test's spec (:data:`FIELD_SPEC`), eps_c 0.5."""
    return Spec.from_dict(FIELD_SPEC)


def _percent(value: float | None) -> str:
    return "    -" if value is None else f"{100 * value:5.1f}"


def report(scores: list[Score], timing: list[dict]) -> str:
    """The precision/recall table and the lookup table as text."""
    lines = ["planted gaps (precision: share of kernel support on the gap; recall: share of the "
             "gap > eps_c/2 covered)", "",
             f"{'case':<42} {'kernels':>7} {'div/tested':>11} {'prec %':>6} {'recall %':>8} "
             f"{'support %':>9} {'s':>5}"]
    for s in scores:
        lines.append(f"{s.case:<42} {s.kernels:>7} {s.divergent_nodes:>5}/{s.tested_nodes:<5} "
                     f"{_percent(s.precision):>6} {_percent(s.recall):>8} "
                     f"{100 * s.support:>9.1f} {s.seconds:>5.1f}")
    lines += ["", "lookup per state (us), previous vs today, same kernels and states", "",
              f"{'kernels':>8} {'members':>7} {'previous':>9} {'today':>7}"]
    for row in timing:
        lines.append(f"{row['kernels']:>8} {row['members_per_kernel']:>7} "
                     f"{row['previous_us']:>9.1f} {row['today_us']:>7.1f}")
    return "\n".join(lines)
