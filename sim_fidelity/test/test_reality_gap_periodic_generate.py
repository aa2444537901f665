"""The simulation's fits in ``generate`` across the wrap of a periodic state component
(reality_gap/kernels.py; the surviving mutants in docs/testing.md's mutation section). A heading
turns 0.3 u per step (u in {0.5, 1}); reality, driven with u = 1 only, is pulled back towards pi
within 0.6 rad of it. Reality's data leave the kernel's slope along the command to its prior, the
simulation's fit in the region (whose own slope along it, where the simulation also gave one
command only there, is the fit over all its data): both fits must see the turn unwrapped about
the state, 0.3 per unit of command, not a jump of a whole turn at +-pi. And a kernel whose
prediction differs from its prior's by whole turns and a little is immaterial: the difference is
taken the short way round."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sim_fidelity.reality_gap import History, Spec, generate
from sim_fidelity.reality_gap.transitions import wrap_angle

PI = math.pi
VALUES = (0.5, 1.0)


def heading_spec(values=VALUES) -> Spec:
    odom = {"topic": "/odom", "type": "nav_msgs/msg/Odometry"}
    return Spec.from_dict({
        "state": [{"name": "h", **odom, "field": "pose.pose.orientation.z", "periodic": True}],
        "action": [{"name": "v", "topic": "/cmd", "type": "geometry_msgs/msg/Twist",
                    "field": "linear.x", "values": list(values)}],
        "distance": {"eps_c": 0.15}, "rollouts": {"count": 300, "max_steps": 30},
        "kernels": {"sigma": 0.15}})


def near_pi(h: float, reach: float) -> bool:
    return abs(wrap_angle(h - PI)) < reach


def runs(real: bool, one_command_near_pi: bool, n: int, rng: np.random.Generator) -> History:
    """``n`` runs of 20 steps from random headings. The simulation turns 0.3 u under a random
    command (u = 1 only within 1 rad of pi if ``one_command_near_pi``); reality is driven with
    u = 1 only and, within 0.6 rad of pi, thrown back to h' = pi - (h - pi) / 2."""
    parts = []
    for i in range(n):
        h, us = [rng.uniform(-PI, PI)], []
        for _ in range(20):
            one = real or (one_command_near_pi and near_pi(h[-1], 1.0))
            u = 1.0 if one else float(rng.choice(VALUES))
            pulled = real and near_pi(h[-1], 0.6)
            h.append(float(wrap_angle(PI - wrap_angle(h[-1] - PI) / 2 if pulled
                                      else h[-1] + 0.3 * u)))
            us.append(u)
        s, u = np.array(h)[:, None], np.array(us)
        parts.append(History(s[:-1], u[:, None], (u == 1.0).astype(np.int64), np.zeros(20),
                             s[1:], np.arange(20) * 2.0, np.full(20, i)))
    return History.concatenate(parts)


@pytest.mark.parametrize("one_command_near_pi", [False, True],
                         ids=["region-fit", "overall-fit"])
def test_the_kernels_slope_along_a_command_reality_never_varied_is_the_simulations(
        one_command_near_pi):
    rng = np.random.default_rng(1)
    sim = runs(False, one_command_near_pi, 150, rng)
    real = runs(True, False, 150, rng)
    spec = heading_spec()
    gen = generate(sim, real, spec, seed=0)
    (k,) = gen.kernels
    assert k.members.min() < -PI + 0.3 and k.members.max() > PI - 0.3  # across the wrap
    assert k.transfer[0, 1] == pytest.approx(0.3, abs=1e-3)
    for off in (-0.2, 0.0, 0.2):
        h = np.array([wrap_angle(PI + off)])
        full, half = (k.predict(h, np.array([u]), spec.periodic)[0] for u in (1.0, 0.5))
        assert wrap_angle(full - half) == pytest.approx(0.15, abs=1e-3), off


def half_turns(turn: float, n: int, rng: np.random.Generator) -> History:
    """``n`` runs of 20 steps from random headings, one command: a turn of 0.3 per step, but of
    ``turn`` within 0.6 rad of 0."""
    parts = []
    for i in range(n):
        h = [rng.uniform(-PI, PI)]
        for _ in range(20):
            h.append(float(wrap_angle(h[-1] + (turn if abs(h[-1]) < 0.6 else 0.3))))
        s = np.array(h)[:, None]
        parts.append(History(s[:-1], np.ones((20, 1)), np.zeros(20, dtype=np.int64),
                             np.zeros(20), s[1:], np.arange(20) * 2.0, np.full(20, i)))
    return History.concatenate(parts)


def test_a_kernel_half_a_turn_the_other_way_round_within_eps_c_is_immaterial():
    """Near 0 the simulation turns by +3.11, reality by -3.11: 6.22 apart as numbers, 0.063 the
    short way round, below eps_c / 2 = 0.075. The divergence found there gives a candidate, and
    its kernel moves the prediction by less than eps_c / 2: immaterial, no kernel."""
    rng = np.random.default_rng(1)
    sim, real = half_turns(3.11, 150, rng), half_turns(-3.11, 150, rng)
    gen = generate(sim, real, heading_spec((1.0,)), seed=0)
    assert gen.summary.divergent_nodes > 0 and gen.summary.candidates == 1
    assert gen.kernels == [] and gen.summary.immaterial == 1
