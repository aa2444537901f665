"""Roll-outs and kernel fits across the wrap of a periodic state component (reality_gap/rollouts.py
and kernels.py; the surviving mutants in docs/testing.md's mutation section): states either side
of +-pi that are close the short way round do not differ, and a kernel whose region straddles the
wrap fits a response that is not a plain turn (a heading pulled back towards pi) on both sides."""
from __future__ import annotations

import math

import numpy as np
from reality_gap_cases import model

from sim_fidelity.reality_gap import History, Spec, generate
from sim_fidelity.reality_gap.rollouts import paired_rollouts
from sim_fidelity.reality_gap.transitions import Nodes, wrap_angle

PI = math.pi


def heading_line(periodic: bool) -> Nodes:
    """Nodes at headings 0, 3.1 and -3.1 (0.08 apart the short way round), eps_c 0.5."""
    return Nodes(np.array([[0.0], [3.1], [-3.1]]), np.ones(1), 0.5, np.array([periodic]))


def test_states_either_side_of_the_wrap_do_not_differ_in_roll_outs():
    """The simulation turns from 0 to 3.1, reality to -3.1, after a node declared divergent:
    on a periodic heading the states are 0.08 apart and the pairs go on coupled; on a plain one
    they are 6.2 apart and every pair diverges."""
    sim, phy = model({(0, 0, 1): 1}, n_nodes=3, n_actions=1), model({(0, 0, 2): 1}, n_nodes=3,
                                                                    n_actions=1)
    for periodic, expected in ((True, 0), (False, 10)):
        _, found = paired_rollouts(sim, phy, heading_line(periodic), np.zeros(10, dtype=int), 3,
                                   np.ones(3, bool), np.random.default_rng(0))
        assert len(found) == expected, periodic


def pulled_back(real: bool, runs: int, rng: np.random.Generator) -> History:
    """A heading that turns 0.3 rad per step from random starts; in reality, within 0.6 rad of
    +-pi, it is thrown back across pi to half its distance from it (h' = pi - (h - pi) / 2)."""
    parts = []
    for i in range(runs):
        h = [rng.uniform(-PI, PI)]
        for _ in range(20):
            off = wrap_angle(h[-1] - PI)
            h.append(float(wrap_angle(PI - off / 2 if real and abs(off) < 0.6 else h[-1] + 0.3)))
        s = np.c_[np.zeros(21), h]
        parts.append(History(s[:-1], np.ones((20, 1)), np.zeros(20, dtype=np.int64),
                             np.zeros(20), s[1:], np.arange(20) * 2.0, np.full(20, i)))
    return History.concatenate(parts)


def heading_spec() -> Spec:
    odom = {"topic": "/odom", "type": "nav_msgs/msg/Odometry"}
    return Spec.from_dict({
        "state": [{"name": "x", **odom, "field": "pose.pose.position.x"},
                  {"name": "h", **odom, "field": "pose.pose.orientation.z", "periodic": True}],
        "action": [{"name": "v", "topic": "/cmd", "type": "geometry_msgs/msg/Twist",
                    "field": "linear.x", "values": [1.0]}],
        "distance": {"eps_c": 0.15}, "rollouts": {"count": 300, "max_steps": 30},
        "kernels": {"sigma": 0.15}})


def test_a_kernel_across_the_wrap_fits_a_pull_back_on_both_sides():
    rng = np.random.default_rng(1)
    sim, real = pulled_back(False, 150, rng), pulled_back(True, 150, rng)
    spec = heading_spec()
    gen = generate(sim, real, spec, seed=0)
    across = [k for k in gen.kernels if np.any(np.abs(wrap_angle(k.members[:, 1] - PI)) < 0.3)]
    assert len(across) == 1, [k.centre for k in gen.kernels]
    (k,) = across
    assert k.members[:, 1].min() < -PI + 0.3 and k.members[:, 1].max() > PI - 0.3  # both sides
    # within 0.1 rad of reality's pull-back (the region's edge nodes also hold turns of 0.3,
    # and the fit is pulled towards the simulation's turn), on either side of pi
    for off in (-0.4, -0.2, 0.0, 0.2, 0.4):
        h = wrap_angle(PI + off)
        got = k.predict(np.array([0.0, h]), np.array([1.0]), spec.periodic)[1]
        assert abs(wrap_angle(got - (PI - off / 2))) < 0.1, (off, got)
