"""The step hook that counts still physics steps (``signalers/stillness.py``, paper 000's "still
for two simulation steps"): whose count a packet gets when it becomes a candidate, a recompile
that moves every address, speeds exactly at a threshold, the packets it cannot watch, and the
hook's own time that the truck bench subtracts (the survivors of the mutation run in
docs/testing.md). Real engine, no gravity: a packet keeps exactly the speed it is given."""
from __future__ import annotations

import time

import numpy as np
import pytest
from still_cases import HINGED, floating_world, levels, manager, zero_g

from sim_fidelity.fidelity_manager import Level
from sim_fidelity.fidelity_manager.signalers.stillness import StepStillness
from sim_fidelity.world_generators.sdf_text import box_model

H, M = Level.HIGH, Level.MEDIUM
LINEAR, ANGULAR = 0.01, 0.05  # the packet signaler's default thresholds
INSIDE = np.array([[0.3, 0, 0, 0, 0, 0, 1]])  # a pose in the robot box of floating_world


@pytest.mark.parametrize("back", [0, 1], ids=["box_0-back", "box_1-back"])
def test_a_packet_back_from_the_robot_box_counts_its_own_still_steps_from_zero(back):
    """One packet visits the robot box while the other, still, counts towards its 10 steps; back
    outside, the visitor is a candidate again and must be still for 10 steps of its own: when
    the other is lowered it is still HIGH, whichever row it has."""
    sim = floating_world()
    other = 1 - back
    home = sim.get_states([f"box_{back}"])[0]
    with manager(sim, still_steps=10) as m:
        m.tick()
        sim.set_states([f"box_{back}"], INSIDE)
        sim.step(6)
        m.tick()  # the visitor is in the box (HIGH, not watched); the other still for 6 steps
        assert levels(m) == [H, H] and m.signalers["packets"].steps.rows.tolist() == [other]
        sim.set_states([f"box_{back}"], home, np.zeros((1, 6)))  # at rest (the robot pushed it)
        sim.step(1)
        m.tick()  # back outside: a candidate again, still for 0 steps; the other for 7
        assert levels(m) == [H, H]
        sim.step(4)
        m.tick()  # the other still for 11 steps: lowered; the visitor for 4: HIGH
        expected = [H, H]
        expected[other] = M
        assert levels(m) == expected


def test_counting_follows_the_packets_when_a_recompile_moves_their_addresses():
    """Deleting the model before the packets recompiles the engine and shifts every packet's
    velocity address: the hook reads each packet's own speed afterwards (box_1 moving stays HIGH,
    box_0 still is lowered)."""
    sim = zero_g(box_model("robot", 0.0, 0.0, 0.0, 1.0, static=True),
                 box_model("crate", 0.0, 5.0, 0.0, 0.2),
                 box_model("box_0", 3.0, 0.0, 0.0, 0.2), box_model("box_1", 4.0, 0.0, 0.0, 0.2))
    with manager(sim, still_clock="steps") as m:
        m.tick()
        assert levels(m) == [H, H]
        sim.delete("crate")
        sim.set_states(["box_1"], twists=np.array([[2 * LINEAR, 0, 0, 0, 0, 0]]))
        sim.step(10)
        m.tick()
        assert levels(m) == [M, H]


@pytest.mark.parametrize("clock", ["steps", "ticks"])
@pytest.mark.parametrize("axis, speed", [(0, LINEAR), (5, ANGULAR)], ids=["vx", "wz"])
def test_a_packet_moving_exactly_at_a_threshold_is_not_still(clock, axis, speed):
    """The thresholds are speeds "below which a packet is still": at exactly the threshold it is
    moving, counted in steps or in ticks alike."""
    sim = floating_world()
    with manager(sim, still_clock=clock) as m:
        m.tick()
        twist = np.zeros((1, 6))
        twist[0, axis] = speed
        sim.set_states(["box_1"], twists=twist)
        for _ in range(3):
            sim.step(10)
            m.tick()
        assert levels(m)[1] == H
        assert sim.get_states(["box_1"])[1][0, axis] == speed  # no force: the speed is exact


def _free_packets(*packets: str) -> str:
    return "".join(packets) + box_model("robot", 0.0, 0.0, 0.0, 1.0, static=True)


OFFSET = """
    <model name="box_1">
      <pose>4 0 0 0 0 0</pose>
      <link name="link"><pose>0.05 0 0 0 0 0</pose><inertial><mass>1</mass></inertial>
        <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision>
      </link>
    </model>"""


@pytest.mark.parametrize("packet", [HINGED, OFFSET], ids=["hinged", "link-offset"])
def test_a_packet_the_hook_cannot_watch_makes_the_signaler_count_ticks_and_say_why(packet):
    """A packet on a hinge (not a free body) or whose link sits off its model's frame: its speed
    is not one free body's, so stillness is counted at ticks, and the signaler says why."""
    sim = zero_g(_free_packets(box_model("box_0", 3.0, 0.0, 0.0, 0.2), packet))
    with manager(sim, still_clock="steps") as m:
        packets = m.signalers["packets"]
        assert packets.still_clock == "ticks" and packets.steps is None
        assert packets.fallback == "not every entity is one free body without a frame offset"
        assert not sim.hooks  # no step hook left behind


def test_the_hook_time_is_counted_only_while_watching_and_is_part_of_the_steps():
    """``wall`` (what the truck bench subtracts from the stepping time): nothing while no packet
    is watched, more after every watched step, never more than the steps' own wall time."""
    sim = floating_world()
    hook = StepStillness(sim, ["box_0", "box_1"], LINEAR, ANGULAR)
    sim.step(5)
    assert hook.wall == 0.0
    hook.watch(np.array([True, True]))
    stepping, walls = 0.0, [0.0]
    for _ in range(20):
        start = time.perf_counter()
        sim.step(1)
        stepping += time.perf_counter() - start
        walls.append(hook.wall)
    assert all(b > a for a, b in zip(walls, walls[1:])), walls
    assert walls[-1] <= stepping
    assert hook.counts().tolist() == [20, 20]
    hook.close()
    assert not sim.hooks
