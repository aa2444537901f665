"""The packet signaler's rule 3 ``near`` and its packed-box helpers, where the mutation run of
2026-11-28 (docs/testing.md) found no test: a reach measured from the spinning packet's own
half-diagonal and twist (each axis of the spin, none of it counted as travel), from the right
packet's twist, none on the first update; both sides of a reaching packet and of the robot box;
faces that only touch; a candidate inside the union of the reaches but near none of them; more
than ``MAX_PAIRWISE`` reaching out (the union decides); the ``fallback`` reason only when steps
were asked for. The real engine only resolves names; poses and twists are fed."""
from __future__ import annotations

import numpy as np
import pytest
from still_cases import HINGED, manager, packet_signaler, zero_g

from sim_fidelity.fidelity_manager import Level
from sim_fidelity.fidelity_manager.signalers.packet import MAX_PAIRWISE
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.world_generators.sdf_text import box_model
from sim_fidelity.world_generators.stack_test import stack_sdf

H, M, L = Level.HIGH, Level.MEDIUM, Level.LOW
# robot box [-0.5, 0.5]^3 inflated by 0.5 -> [-1, 1]^3; packets of half extent 0.1 (half-diagonal
# 0.1 * sqrt(3) = 0.173); with margin 0.05 the robot's reach is [-1.05, 1.05]^3
NEAR = {"type": "packet", "robot": "robot", "robot_half_extents": [0.5, 0.5, 0.5],
        "half_extents": [0.1, 0.1, 0.1], "inflation": 0.5, "still_clock": "ticks",
        "medium": "near", "near_margin": 0.05}
N_MANY = MAX_PAIRWISE + 4  # packets of the world for the union rule


@pytest.fixture(scope="module")
def sim():
    return MujocoEngine.from_string(stack_sdf(3, 1, 1))  # box_0_0_0, box_1_0_0, box_2_0_0 + robot


@pytest.fixture(scope="module")
def many():
    return MujocoEngine.from_string(stack_sdf(N_MANY, 1, 1))


def signaler(sim, **params):
    return packet_signaler(sim, {**NEAR, **params}, r"(box_\d+_0_0)")


def levels(sig, t, xy, twists=None, current=None):
    """Levels of packets at (x, y, 0) (the robot at the origin); ``twists`` one row per packet."""
    n = len(xy)
    poses = np.zeros((n + 1, 7))
    poses[:, 6] = 1.0
    poses[1:, :2] = xy
    tw = np.zeros((n + 1, 6))
    if twists is not None:
        tw[1:] = twists
    cur = np.full(n, L, np.int8) if current is None else np.asarray(current, np.int8)
    return [Level(int(x)) for x in sig.update(t, poses, tw, cur)]


def spin(axis: int, rate: float, row: int, n: int = 3) -> np.ndarray:
    """Twists of ``n`` packets: packet ``row`` turning at ``rate`` rad/s about ``axis``."""
    tw = np.zeros((n, 6))
    tw[row, 3 + axis] = rate
    return tw


def test_a_spin_reaches_only_its_half_diagonal_further(sim):
    # box 0 straddles the +x face (reaching out to 1.05) and spins at 5 rad/s: in 40 ms its
    # corners sweep 2 * 0.04 * 5 * 0.173 = 0.069, so its reach ends at 1.05 + 0.05 + 0.069 = 1.169;
    # box 1 from 1.18 is beyond it (a reach of twice the edge, 0.775, would take it)
    sig = signaler(sim)
    levels(sig, 0.0, [(0.95, 0), (1.28, 0), (3.0, 0)])
    assert levels(sig, 0.04, [(0.95, 0), (1.28, 0), (3.0, 0)], spin(2, 5.0, 0)) == [H, L, L]


@pytest.mark.parametrize("axis", [0, 1, 2], ids=["wx", "wy", "wz"])
def test_a_spin_about_any_axis_sweeps_the_same_and_is_no_travel(sim, axis):
    # the reach to 1.169 takes box 1 (from 1.15) whichever axis the spin is about; counting the
    # spin's 5 rad/s as 5 m/s of travel too would take box 2 (from 1.35) as well
    sig = signaler(sim)
    levels(sig, 0.0, [(0.95, 0), (1.25, 0), (1.45, 0)])
    assert levels(sig, 0.04, [(0.95, 0), (1.25, 0), (1.45, 0)], spin(axis, 5.0, 0)) == [H, M, L]


def test_the_reach_grows_with_the_reaching_packets_own_speed(sim):
    # box 1 (the second packet) straddles the box and moves at 3 m/s: in 40 ms its reach ends
    # at 1.05 + 0.05 + 2 * 0.04 * 3 = 1.34, taking box 0 (from 1.28); the robot stands still
    sig = signaler(sim)
    levels(sig, 0.0, [(1.38, 0), (0.95, 0), (3.0, 0)])
    tw = np.zeros((3, 6))
    tw[1, 0] = 3.0
    assert levels(sig, 0.04, [(1.38, 0), (0.95, 0), (3.0, 0)], tw) == [M, H, L]


def test_the_first_update_knows_no_tick_whatever_the_speeds(sim):
    # no previous update: the reach is the margin alone, however fast box 0 moves
    sig = signaler(sim)
    tw = np.zeros((3, 6))
    tw[0, 0] = 3.0
    assert levels(sig, 0.5, [(0.95, 0), (1.5, 0), (3.0, 0)], tw) == [H, L, L]


def test_packets_beyond_a_packet_reaching_out_on_the_minus_side_stay_medium(sim):
    # box 0 reaches out of the -x face (to -1.05): box 1 from -1.06 to -1.26 is within its
    # reach (down to -1.10), not within the robot's (-1.05)
    sig = signaler(sim)
    assert levels(sig, 0.0, [(-0.95, 0), (-1.16, 0), (3.0, 0)]) == [H, M, L]


def test_packets_by_the_robot_box_minus_face_stay_medium_while_one_reaches_out(sim):
    # box 0 reaches out of the +x face; box 1 (up to -1.02) lies within 5 cm of the -x face
    sig = signaler(sim)
    assert levels(sig, 0.0, [(0.95, 0), (-1.12, 0), (3.0, 0)]) == [H, M, L]


def test_a_packet_inside_the_union_of_the_reaches_but_near_none_is_low(sim):
    # box 0 reaches out of the +x face at y = 0.9, box 1 out of the -y face at x = 0.9; box 2
    # (x 1.06-1.26, y -0.4 to -0.2) lies within the union of their reaches and the robot's, but
    # beyond each: box 0's is y >= 0.75, box 1's and the robot's end at x = 1.05
    sig = signaler(sim)
    assert levels(sig, 0.0, [(1.0, 0.9), (0.9, -1.0), (1.16, -0.3)]) == [H, H, L]


def test_faces_that_only_touch_a_reach_are_not_near(sim):
    # binary fractions, exact: box 0 (half 0.125) straddles the +x face up to 1.0625; its reach
    # ends at 1.0625 + 0.25 = 1.3125, where box 1 begins: touching, not overlapping. Box 2
    # reaches out further (to 1.375) at y 0.5-1.25, so box 1 is inside the union of the reaches
    sig = signaler(sim, half_extents=[0.125] * 3, near_margin=0.25)
    assert levels(sig, 0.0, [(0.9375, 0), (1.4375, 0), (1.0, 0.875)]) == [H, L, H]
    # from 1.3 box 1 overlaps box 0's reach
    assert levels(sig, 0.0, [(0.9375, 0), (1.425, 0), (1.0, 0.875)]) == [H, M, H]


@pytest.mark.parametrize("reaching", [MAX_PAIRWISE, MAX_PAIRWISE + 1])
def test_above_max_pairwise_reaching_packets_their_union_decides(many, reaching):
    """Up to MAX_PAIRWISE packets reaching out, each one's reach decides; above, the union of
    the reaches (a superset): a packet inside it but near none of them is MEDIUM, one that only
    touches its face or lies beyond it is LOW."""
    # binary fractions as above: the reaching packets straddle the +x face at y = 0 (reach
    # x <= 1.3125, |y| <= 0.375); the robot's reach is [-1.25, 1.25]^3
    sig = signaler(many, half_extents=[0.125] * 3, near_margin=0.25)
    xy = np.zeros((N_MANY, 2))
    xy[:, 0] = 5.0  # far away
    xy[:reaching, 0] = 0.9375
    inside_union, face, far = N_MANY - 3, N_MANY - 2, N_MANY - 1
    xy[inside_union] = (1.4, 1.0)  # x from 1.275, y 0.875-1.125: in the union, near none
    xy[face] = (1.4375, 0.0)  # x from 1.3125: touches the union's face and a reach's
    got = levels(sig, 0.0, xy)
    assert got[:reaching] == [H] * reaching
    assert set(got[reaching:inside_union]) <= {L}
    union = reaching > MAX_PAIRWISE
    assert [got[inside_union], got[face], got[far]] == [M if union else L, L, L]


def test_no_fallback_reason_when_ticks_were_asked_for():
    """``fallback`` says why ``steps`` fell back to ticks (the manager node logs it); a signaler
    asked to count ticks has no such reason, even where the step hook could not watch."""
    sim = zero_g(box_model("robot", 0.0, 0.0, 0.0, 1.0, static=True),
                 box_model("box_0", 3.0, 0.0, 0.0, 0.2), HINGED)
    with manager(sim, still_clock="ticks") as m:
        packets = m.signalers["packets"]
        assert packets.still_clock == "ticks" and packets.fallback == ""
    with manager(sim, still_clock="steps") as m:  # the same world asked for steps: the reason
        assert m.signalers["packets"].fallback.startswith("not every entity is one free body")
