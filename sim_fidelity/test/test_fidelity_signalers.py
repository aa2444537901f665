"""Signaler rules, fed with exact poses and twists (the real engine only resolves entity names)."""
from __future__ import annotations

import numpy as np
import pytest

from sim_fidelity.fidelity_manager import ConfigError, FidelityConfig, Level
from sim_fidelity.fidelity_manager.errors import UnknownNameError
from sim_fidelity.fidelity_manager.levels import LEVEL_DTYPE
from sim_fidelity.fidelity_manager.signalers import (
    BUILTIN,
    ActionSignaler,
    PacketSignaler,
    Signaler,
    signaler_class,
)
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.world_generators.sdf_text import box_model, ground_plane, world
from sim_fidelity.world_generators.stack_test import stack_sdf

H, M, L = Level.HIGH, Level.MEDIUM, Level.LOW
IDENTITY_Q = [0, 0, 0, 1]


@pytest.fixture(scope="module")
def sim():
    return MujocoEngine.from_string(stack_sdf(3, 1, 1))  # box_0_0_0, box_1_0_0, box_2_0_0 + robot


def make(sim, signaler: dict, preset: str = "on") -> Signaler:
    config = FidelityConfig.from_dict({
        "signalers": {"s": signaler},
        "trees": {"boxes": {"signaler": "s", "name": "{key}",
                            "objects": [{"type": "shape", "pattern": r"(box_\d_0_0)"}]}},
        "presets": {"on": {}}})
    trees = config.build_trees(sim)
    return config.build_signalers(sim, trees, preset)["s"]


# fed states at ticks, so stillness counted in ticks (the per-step rule: test_fidelity_still_steps)
PACKET = {"type": "packet", "robot": "robot", "robot_half_extents": [0.5, 0.5, 0.5],
          "half_extents": [0.1, 0.1, 0.1], "inflation": 0.5, "still_clock": "ticks"}


def states(robot_x: float, box_xs, box_q=None, speeds=None):
    """Robot at (robot_x, 0, 0), boxes at (x, 0, 0); box linear speeds along x."""
    n = len(box_xs)
    poses = np.zeros((n + 1, 7))
    poses[:, 6] = 1
    poses[0, 0] = robot_x
    poses[1:, 0] = box_xs
    if box_q is not None:
        poses[1:, 3:] = box_q
    twists = np.zeros((n + 1, 6))
    if speeds is not None:
        twists[1:, 0] = speeds
    return poses, twists


def run(sig, t, poses, twists, current):
    out = sig.update(t, poses, twists, np.asarray(current, np.int8))
    return [Level(int(x)) for x in out]


# Robot box [-0.5, 0.5] inflated by 0.5 -> [-1, 1] on x. Box half extent 0.1.
def test_partial_entry_raises_at_once(sim):
    sig = make(sim, PACKET)
    poses, twists = states(0.0, [1.05, 1.2, 3.0])  # box 0 overlaps by 5 cm, the others are outside
    assert run(sig, 0.0, poses, twists, [L, L, L]) == [H, M, M]
    assert run(sig, 0.0, *states(0.0, [1.0999, 1.2, 3.0]), [L, L, L])[0] == H  # 0.1 mm overlap
    assert run(sig, 0.0, *states(0.0, [1.1, 1.2, 3.0]), [L, L, L])[0] != H  # touching face only


def test_rotated_packet_uses_its_axis_aligned_bounding_box(sim):
    sig = make(sim, PACKET)
    yaw45 = [0, 0, np.sin(np.pi / 8), np.cos(np.pi / 8)]
    # at x = 1.12 an upright box is outside; turned 45 deg its AABB half width is 0.1414
    assert run(sig, 0.0, *states(0.0, [1.12, 3, 3]), [L, L, L])[0] == L
    assert run(sig, 0.0, *states(0.0, [1.12, 3, 3], box_q=yaw45), [L, L, L])[0] == H


def test_lowering_waits_for_two_consecutive_still_steps(sim):
    sig = make(sim, PACKET)
    cur = [H, H, H]
    still = states(0.0, [1.5, 2.0, 3.0])
    assert run(sig, 0.0, *still, cur) == [H, H, H]  # still once: not yet
    slow = states(0.0, [1.5, 2.0, 3.0], speeds=[0.0, 0.02, 0.0])  # box 1 moves at 2 cm/s
    # boxes 0, 2: still twice -> lowered, to MEDIUM since HIGH box 1 lies outside the robot box
    assert run(sig, 0.0, *slow, cur) == [M, H, M]
    assert run(sig, 0.0, *still, cur)[1] == H  # box 1: its count restarted
    assert run(sig, 0.0, *still, cur)[1] == M  # lowered; MEDIUM while the batch was HIGH
    assert run(sig, 0.0, *still, [M, M, M]) == [L, L, L]
    spin = states(0.0, [1.5, 2.0, 3.0])
    spin[1][1:, 5] = 0.1  # 0.1 rad/s about z, above the 0.05 rad/s threshold
    fresh = make(sim, PACKET)
    assert run(fresh, 0.0, *spin, cur) == [H, H, H]
    assert run(fresh, 0.0, *spin, cur) == [H, H, H]


def test_still_packet_inside_the_box_stays_high(sim):
    sig = make(sim, PACKET)
    cur = [H, H, H]
    for expect in ([H, H, H], [H, H, M], [H, H, L], [H, H, L]):  # box 2: lowered after 2 steps,
        cur = run(sig, 0.0, *states(0.0, [0.3, 0.9, 3.0]), cur)   # MEDIUM for the tick it was HIGH
        assert cur == expect


def test_medium_goes_low_only_when_all_high_packets_are_inside(sim):
    sig = make(sim, PACKET)
    # box 0 straddles the boundary (0.95 +- 0.1): HIGH but not entirely inside -> others MEDIUM
    assert run(sig, 0.0, *states(0.0, [0.95, 2.0, 3.0]), [H, L, L]) == [H, M, M]
    # box 0 entirely inside: nothing dynamic can reach outside -> others LOW
    assert run(sig, 0.0, *states(0.0, [0.85, 2.0, 3.0]), [H, M, M]) == [H, L, L]
    # a HIGH packet outside (still settling, moving) also keeps the others MEDIUM
    moving = states(0.0, [2.0, 2.5, 3.0], speeds=[0.5, 0, 0])
    assert run(make(sim, PACKET), 0.0, *moving, [H, L, L]) == [H, M, M]


def test_periodic_refresh_sets_all_high_for_the_settle_period(sim):
    sig = make(sim, {**PACKET, "refresh_interval": 1.0, "settle_period": 0.1})
    far = states(0.0, [2.0, 2.5, 3.0])
    assert run(sig, 0.5, *far, [H, H, H]) == [H, H, H]
    assert run(sig, 0.6, *far, [H, H, H]) == [M, M, M]
    assert run(sig, 0.7, *far, [M, M, M]) == [L, L, L]
    assert run(sig, 1.0, *far, [L, L, L]) == [H, H, H]  # refresh starts
    assert run(sig, 1.09, *far, [H, H, H]) == [H, H, H]  # still settling
    assert run(sig, 1.1, *far, [H, H, H]) == [M, M, M]  # settled and still: lowered again
    assert run(sig, 2.05, *far, [L, L, L]) == [H, H, H]  # next period, even if a tick lands late


def test_packet_presets_choose_the_inflation(sim):
    box = {n: make(sim, PACKET, n).boxes(states(0.0, [3, 3, 3])[0])[1][0] for n in
           ("adfi-1", "adfi-2", "adfi-3")}
    assert box == pytest.approx({"adfi-1": 1.5, "adfi-2": 1.0, "adfi-3": 0.51})


def test_action_signaler_follows_announced_actions(sim):
    sig = make(sim, {"type": "action"})
    assert isinstance(sig, ActionSignaler)
    poses, twists = np.zeros((0, 7)), np.zeros((0, 6))
    assert run(sig, 0, poses, twists, [H, H, H]) == [L, L, L]  # initial: not picking
    assert sig.announce("extend", r"box_[01]_0_0") == 2
    assert run(sig, 0, poses, twists, [L, L, L]) == [H, H, L]
    sig.announce("retract")
    assert run(sig, 0, poses, twists, [H, H, L]) == [L, L, L]
    with pytest.raises(UnknownNameError, match="unknown action 'wave'"):
        sig.announce("wave")
    custom = make(sim, {"type": "action", "actions": {"approach": "medium", "pick": "high"},
                        "initial": "high"})
    custom.announce("approach", "box_2_0_0")
    assert run(custom, 0, poses, twists, [H, H, H]) == [H, H, M]


def test_distance_signaler_with_hysteresis(sim):
    sig = make(sim, {"type": "distance", "references": "robot", "r_high": 1.0, "r_medium": 2.0,
                     "hysteresis": 0.2})
    cur = [L, L, L]
    for xs, expect in [([0.5, 1.5, 3.0], [H, M, L]),
                       ([1.1, 2.1, 3.0], [H, M, L]),  # within the hysteresis band: kept
                       ([1.3, 2.3, 2.1], [M, L, L]),  # beyond it: lowered; 2.1 from LOW stays LOW
                       ([1.1, 2.3, 1.9], [M, L, M])]:
        cur = run(sig, 0, *states(0.0, xs), cur)
        assert cur == expect
    with pytest.raises(ConfigError, match=r"signalers\.s\.r_medium: must be >= r_high \(2\.0\)"):
        make(sim, {"type": "distance", "references": "robot", "r_high": 2.0, "r_medium": 1.0})


def test_manual_and_schedule_signalers(sim):
    empty = (np.zeros((0, 7)), np.zeros((0, 6)))
    manual = make(sim, {"type": "manual", "initial": "medium"})
    assert run(manual, 0, *empty, [H, H, H]) == [M, M, M]
    manual.set("low", "box_1_0_0")
    assert run(manual, 0, *empty, [M, M, M]) == [M, L, M]
    sched = make(sim, {"type": "schedule", "table": [
        {"time": 1.0, "level": "low"}, {"time": 2.0, "level": "high", "trees": "box_0_0_0"}]})
    assert [run(sched, t, *empty, [H] * 3) for t in (0.5, 1.0, 2.5)] == [
        [H, H, H], [L, L, L], [H, L, L]]


def test_registry_and_unknown_type():
    assert signaler_class("packet") is PacketSignaler and set(BUILTIN) == {
        "packet", "action", "distance", "joint_command", "manual", "schedule"}
    with pytest.raises(UnknownNameError,
                       match="unknown signaler type 'nope' \\(known: action, distance"):
        signaler_class("nope")


# ---------------------------------------------------------------------- the robot box in 3-D
def placed(robot_rows, box_rows, twist_rows=None):
    """Poses (identity orientation) at the given centres: robot entities first, then boxes."""
    centres = np.asarray(list(robot_rows) + list(box_rows), float)
    poses = np.zeros((len(centres), 7))
    poses[:, :3], poses[:, 6] = centres, 1
    twists = np.zeros((len(centres), 6))
    if twist_rows is not None:
        twists[len(robot_rows):] = twist_rows
    return poses, twists


# Exactly representable sizes: robot box [-0.5, 0.5]^3 inflated by 0.5 -> [-1, 1]^3; packets 0.25.
EXACT = {**PACKET, "half_extents": [0.25, 0.25, 0.25]}
FAR = [5.0, 5.0, 5.0]


@pytest.mark.parametrize("axis", [0, 1, 2], ids=["x", "y", "z"])
def test_inflation_and_overlap_on_every_axis(sim, axis):
    def level_at(offset: float, sign: float = 1.0) -> Level:
        centre = np.zeros(3)
        centre[axis] = sign * offset
        return run(make(sim, EXACT), 0.0, *placed([[0, 0, 0]], [centre, FAR, FAR]),
                   [L, L, L])[0]
    for sign in (1.0, -1.0):
        assert level_at(1.2, sign) == H  # 5 cm into the inflated box
        assert level_at(1.25, sign) == L  # face on face: not touching
    # inflation 0.5 is what makes 1.2 touch: with none the box ends at 0.5
    bare = make(sim, {**EXACT, "inflation": 0.0})
    centre = np.zeros(3)
    centre[axis] = 0.8
    assert run(bare, 0.0, *placed([[0, 0, 0]], [centre, FAR, FAR]), [L, L, L])[0] == L


@pytest.mark.parametrize("axis", [0, 1, 2], ids=["x", "y", "z"])
def test_entirely_inside_is_judged_on_every_axis(sim, axis):
    """A HIGH packet flush with the box's lower or upper face is inside (the others go LOW);
    one reaching 5 cm out on this axis is not (the others stay MEDIUM)."""
    for centre_offset, inside in ((-0.75, True), (0.75, True), (0.8, False), (-0.8, False)):
        centre = np.zeros(3)
        centre[axis] = centre_offset
        out = run(make(sim, EXACT), 0.0, *placed([[0, 0, 0]], [centre, FAR, FAR]), [H, M, M])
        assert out == ([H, L, L] if inside else [H, M, M]), (centre_offset, out)


def test_speeds_on_every_axis_keep_a_packet_high(sim):
    """Linear speed along any axis, or turning about any axis, above its threshold is motion;
    below it (even just below) the packet is still."""
    params = {**PACKET, "linear_threshold": 0.5, "angular_threshold": 0.5}
    for axis in range(6):
        fast, slow = np.zeros((3, 6)), np.zeros((3, 6))
        fast[0, axis], slow[0, axis] = 0.5, 0.4  # at the threshold is not still
        sig = make(sim, params)
        for _ in range(3):
            assert run(sig, 0.0, *placed([[0, 0, 0]], [[3, 0, 0], FAR, FAR], fast),
                       [H, H, H])[0] == H, axis
        sig = make(sim, params)
        outs = [run(sig, 0.0, *placed([[0, 0, 0]], [[3, 0, 0], FAR, FAR], slow), [H, H, H])[0]
                for _ in range(2)]
        assert outs == [H, M], (axis, outs)
    # a turn below the angular threshold is no linear motion (the two are judged apart)
    sig = make(sim, PACKET)
    spin = np.zeros((3, 6))
    spin[:, 3] = 0.04  # rad/s about x; the linear threshold is 0.01 m/s
    assert [run(sig, 0.0, *placed([[0, 0, 0]], [[3, 0, 0], FAR, FAR], spin), [H, H, H])[0]
            for _ in range(2)] == [H, M]


def test_the_still_count_restarts_while_a_packet_touches_the_box(sim):
    """Still ticks inside the box do not count: a packet that leaves it still waits two ticks."""
    sig = make(sim, PACKET)
    inside, outside = placed([[0, 0, 0]], [[0.3, 0, 0], FAR, FAR]), placed(
        [[0, 0, 0]], [[3, 0, 0], FAR, FAR])
    for _ in range(4):
        assert run(sig, 0.0, *inside, [H, H, H])[0] == H
    assert run(sig, 0.0, *outside, [H, H, H])[0] == H  # first still tick outside
    assert run(sig, 0.0, *outside, [H, H, H])[0] == M  # second: lowered


def test_levels_come_as_the_level_dtype(sim):
    out = make(sim, PACKET).update(0.0, *states(0.0, [3, 3, 3]), np.full(3, H, np.int8))
    assert out.dtype == LEVEL_DTYPE


ARMED = world("armed", ground_plane(), box_model("robot", 0, 0, 0.3, 0.4, 10.0),
              box_model("robot_arm", 2, 0, 0.3, 0.4, 1.0),
              *(box_model(f"box_{i}_0_0", 4 + i, 0, 0.1, 0.2, 1.0) for i in range(3)))


@pytest.fixture(scope="module")
def armed():
    return MujocoEngine.from_string(ARMED)


def test_robot_box_spans_several_entities_with_their_own_half_extents(armed):
    """Robot ``robot`` at x=0 (half 0.5) and ``robot_arm`` at x=2 (half 0.2, first matching entry
    wins over ``robot.*``): one box from x=-1 to 2.7 (inflation 0.5), y and z from -1 to 1."""
    params = {**PACKET, "robot": ["robot", "robot_arm"],
              "robot_half_extents": {"robot_arm": [0.2, 0.2, 0.2], "robot.*": [0.5, 0.5, 0.5]}}
    sig = make(armed, params)
    assert sig.robot == ["robot", "robot_arm"]
    lo, hi, _, _ = sig.boxes(placed([[0, 0, 0], [2, 0, 0]], [FAR] * 3)[0])
    np.testing.assert_allclose(lo, [-1.0, -1.0, -1.0])
    np.testing.assert_allclose(hi, [2.7, 1.0, 1.0])
    # the arm moved: the box follows it, on every axis
    lo, hi, _, _ = sig.boxes(placed([[0, 0, 0], [0, -3, 4]], [FAR] * 3)[0])
    np.testing.assert_allclose(lo, [-1.0, -3.7, -1.0])
    np.testing.assert_allclose(hi, [1.0, 1.0, 4.7])
    robot_and_arm = [[0, 0, 0], [2, 0, 0]]
    for x, expect in ((2.75, H), (2.85, L), (1.5, H), (-1.05, H), (-1.15, L)):
        assert run(make(armed, params), 0.0, *placed(robot_and_arm, [[x, 0, 0], FAR, FAR]),
                   [L, L, L])[0] == expect, x


def test_packet_half_extents_per_tree_and_missing_entries(armed):
    params = {**PACKET, "half_extents": {"box_0_0_0": [0.4, 0.1, 0.1], "box_.*": [0.1] * 3}}
    _, _, lo, hi = make(armed, params).boxes(placed([[0, 0, 0]], [[3, 0, 0]] * 3)[0])
    np.testing.assert_allclose(hi - lo, [[0.8, 0.2, 0.2], [0.2, 0.2, 0.2], [0.2, 0.2, 0.2]])
    with pytest.raises(ConfigError, match=r"signalers\.s\.half_extents: no entry matches "
                                          r"tree\(s\) box_1_0_0, box_2_0_0"):
        make(armed, {**PACKET, "half_extents": {"box_0_.*": [0.1] * 3}})
    with pytest.raises(ConfigError, match=r"signalers\.s\.robot_half_extents: no entry matches "
                                          r"entity\(s\) robot_arm"):
        make(armed, {**PACKET, "robot": ["robot", "robot_arm"],
                     "robot_half_extents": {"robot": [0.5] * 3}})
    with pytest.raises(ConfigError, match=r"signalers\.s\.robot: 'crane' matches no model/link "
                                          r"entity"):
        make(armed, {**PACKET, "robot": "crane"})


def test_a_refresh_after_a_late_tick_keeps_the_period(sim):
    """A tick 1.5 periods late starts a refresh; the next one comes at the next whole period."""
    sig = make(sim, {**PACKET, "refresh_interval": 1.0, "settle_period": 0.1})
    far = states(0.0, [2.0, 2.5, 3.0])
    assert run(sig, 3.5, *far, [L, L, L]) == [H, H, H]  # the refresh due at 1.0, late
    assert run(sig, 3.7, *far, [H, H, H]) == [M, M, M]  # settled, still twice: lowered
    assert run(sig, 3.9, *far, [M, M, M]) == [L, L, L]
    assert run(sig, 3.99, *far, [L, L, L]) == [L, L, L]  # no refresh before 4.0
    assert run(sig, 4.0, *far, [L, L, L]) == [H, H, H]
