"""The packet signaler's rule 3 with ``medium: near``: while a HIGH packet reaches out of the
robot box, only the packets it (or the robot) can reach by the next tick stay MEDIUM (the paper's
``all`` keeps every one MEDIUM); with none reaching out both rules give LOW."""
from __future__ import annotations

import numpy as np
import pytest
from still_cases import packet_signaler

from sim_fidelity.fidelity_manager import ConfigError, Level
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.world_generators.stack_test import stack_sdf

H, M, L = Level.HIGH, Level.MEDIUM, Level.LOW
# robot box [-0.5, 0.5]^3 inflated by 0.5 -> [-1, 1]; packets of half extent 0.1
BASE = {"type": "packet", "robot": "robot", "robot_half_extents": [0.5, 0.5, 0.5],
        "half_extents": [0.1, 0.1, 0.1], "inflation": 0.5, "still_clock": "ticks"}


@pytest.fixture(scope="module")
def sim():
    return MujocoEngine.from_string(stack_sdf(3, 1, 1))  # box_0_0_0, box_1_0_0, box_2_0_0 + robot


def signaler(sim, **params):
    return packet_signaler(sim, {**BASE, **params}, r"(box_\d_0_0)")


def levels(sig, t, box_xs, speeds=(0.0, 0.0, 0.0), current=(H, L, L), spins=(0.0, 0.0, 0.0)):
    poses = np.zeros((4, 7))
    poses[:, 6] = 1.0
    poses[1:, 0] = box_xs
    twists = np.zeros((4, 6))
    twists[1:, 0] = speeds
    twists[1:, 5] = spins  # angular speed about z
    out = sig.update(t, poses, twists, np.asarray(current, np.int8))
    return [Level(int(x)) for x in out]


def test_only_packets_near_one_reaching_out_stay_medium(sim):
    # box 0 straddles the box boundary (0.95 +- 0.1): HIGH, reaching out to x = 1.05
    near, far = signaler(sim, medium="near", near_margin=0.05), signaler(sim, medium="all")
    assert levels(far, 0.0, [0.95, 1.19, 3.0]) == [H, M, M]  # the paper's rule
    # box 1 starts at 1.09, within 0.05 of 1.05: MEDIUM; box 2 at 2.9 is LOW
    assert levels(near, 0.0, [0.95, 1.19, 3.0]) == [H, M, L]
    # box 1 starts at 1.11, beyond the margin: LOW
    assert levels(near, 0.04, [0.95, 1.21, 3.0]) == [H, L, L]


def test_packets_by_the_robot_box_stay_medium_while_one_reaches_out(sim):
    near = signaler(sim, medium="near", near_margin=0.05)
    # box 0 reaches out on the -x side; box 1 (from 1.02) lies within 5 cm of the box's +x face
    assert levels(near, 0.0, [-0.95, 1.12, 3.0]) == [H, M, L]
    # nothing reaches out: LOW by the box too, as under the paper's rule
    assert levels(near, 0.04, [-0.85, 1.12, 3.0], current=(H, M, L)) == [H, L, L]


def test_reach_grows_with_speed_over_a_tick(sim):
    near = signaler(sim, medium="near", near_margin=0.05)
    levels(near, 0.0, [0.95, 1.5, 3.0])  # the first update knows no tick yet
    # 40 ms later box 0 moves at 3 m/s: reach 0.05 + 2 * 0.12 = 0.29 beyond x = 1.05 -> 1.34;
    # box 1 (from 1.40) is out of reach at rest, in reach when box 0 moves
    assert levels(near, 0.04, [0.95, 1.5, 3.0]) == [H, L, L]
    assert levels(near, 0.08, [0.95, 1.5, 3.0], speeds=(3.0, 0.0, 0.0))[:2] == [H, L]
    assert levels(near, 0.12, [0.95, 1.38, 3.0], speeds=(3.0, 0.0, 0.0)) == [H, M, L]


def test_a_packet_spinning_in_place_reaches_its_half_diagonal_further(sim):
    near = signaler(sim, medium="near", near_margin=0.05)
    levels(near, 0.0, [0.95, 1.25, 3.0])
    # box 0 at rest straddles the box (reaching out to 1.05): box 1 (from 1.15) is beyond
    # 1.05 + 0.05 at rest; spinning at 5 rad/s without moving, box 0's corners (half-diagonal
    # 0.173 m) sweep 2 * 0.04 * 5 * 0.173 = 0.069 further in a tick: box 1 is near, box 2 not
    assert levels(near, 0.04, [0.95, 1.25, 3.0]) == [H, L, L]
    assert levels(near, 0.08, [0.95, 1.25, 3.0], spins=(5.0, 0.0, 0.0)) == [H, M, L]
    # a spin of box 1 itself (below HIGH, not dynamic) reaches nothing
    assert levels(near, 0.12, [0.95, 1.25, 3.0], spins=(0.0, 5.0, 0.0)) == [H, L, L]


def test_both_rules_lower_all_when_no_packet_reaches_out(sim):
    for medium in ("near", "all"):
        sig = signaler(sim, medium=medium)
        # box 0 entirely inside the box: nothing dynamic reaches out
        assert levels(sig, 0.0, [0.85, 1.15, 3.0], current=(H, M, M)) == [H, L, L]


def test_a_bad_rule_name_is_refused(sim):
    with pytest.raises(ConfigError, match=r"signalers\.s\.medium: expected one of all, near"):
        signaler(sim, medium="some")
