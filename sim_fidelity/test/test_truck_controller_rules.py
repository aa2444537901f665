"""The unloading controller's decisions: stall levels, what is picked or swept at each, the base
backing off so its raised nose clears the lane, and giving up on a packet after two failed grips.

The robot here is a stand-in that holds its joints exactly where commanded and packets that stay
where they are put (nothing is ever gripped): the decisions are a function of the packets'
poses, the joints and the time since the last unload, and a physical run (test_truck_controller)
takes minutes to reach a stall. The controller itself is the real one.
"""
from __future__ import annotations

import pytest
from stand_in_robot import StandInRobot, scene, targets

from sim_fidelity.truck.controller import (
    CONTROL_PERIOD,
    NOSE_REACH_MAX,
    NOSE_TIP,
    STALL,
    UnloadingController,
)


def plan_at(robot: StandInRobot, idle: float, seed: int = 0) -> UnloadingController:
    """A controller whose last unload was ``idle`` seconds ago, after its first decision."""
    controller = UnloadingController(robot, seed=seed)
    robot.time += idle
    controller.tick()
    return controller


def test_stall_level_rises_without_unloads_and_drops_on_one():
    robot = scene(2.3, 4.0)
    controller = UnloadingController(robot)
    levels = []
    for t in (0.0, STALL[0] - 0.1, STALL[0] + 0.1, STALL[1] - 0.1, STALL[1] + 0.1):
        robot.time = t
        levels.append(controller.stall_level())
    assert levels == [0, 0, 1, 1, 2]
    robot.unloaded = 1
    controller.tick()  # sees the unload
    assert controller.stall_level() == 0


def test_a_reachable_wall_is_picked_with_the_base_backed_off_from_the_lane():
    """The low packet lies where the raised nose would reach: the base backs off until the nose
    (at its longest) stays 5 cm short of it, and the arm reaches over to the wall."""
    block = 2.3
    robot = scene(block, 2.6, drive=0.5)
    controller = plan_at(robot, 0.0)
    assert controller.move.phase == "approach" and controller.stats.picks == 1
    approach = targets(controller, "approach")
    assert approach["drive"] == pytest.approx(block - NOSE_REACH_MAX - 0.05)
    assert approach["drive"] < 0.5  # backing off
    assert approach["arm_shift"] == pytest.approx(0.5, abs=0.031)  # the wall packet, at y = 0.5


def test_low_packets_are_swept_until_the_sweeping_stalls_then_picked():
    robot = scene(2.3, 4.0)  # the wall is out of reach behind the low packet
    calm = plan_at(robot, 0.0)
    assert calm.move.phase == "to_sweep" and calm.stats.picks == 0
    stalled = plan_at(scene(2.3, 4.0), STALL[0] + 1.0)
    assert stalled.move.phase == "approach"
    assert targets(stalled, "approach")["arm_shift"] == pytest.approx(0.0, abs=0.031)  # the low one


def test_a_long_stall_alternates_digging_into_the_wall_and_picking():
    """At level 2 every other decision sweeps with the nose tip past the standing wall's face
    (at levels 0 and 1 it stops 10 cm short of it), the others pick."""
    wall = 2.9
    calm = plan_at(scene(2.3, wall), 0.0)
    tip = {}
    for name, c in (("calm", calm), ("stalled", plan_at(scene(2.3, wall), STALL[1] + 1.0))):
        assert c.move.phase == "to_sweep", name
        sweep = targets(c, "sweep")
        tip[name] = c.drive_offset + sweep["drive"] + NOSE_TIP + sweep["nose_reach"]
    assert tip["calm"] < wall - 0.05 and tip["stalled"] > wall
    robot = scene(2.3, wall)
    controller = plan_at(robot, STALL[1] + 1.0)
    phases = run_until_next_plan(controller, robot)
    assert phases[0] == "to_sweep" and "approach" in phases  # sweep, then a pick


def run_until_next_plan(controller: UnloadingController, robot: StandInRobot,
                        seconds: float = 120.0) -> list[str]:
    """Tick (robot time advancing) until the controller starts its next plan; the phases run."""
    left = len(controller.queue)  # moves of this plan still to start
    start = len(controller.stats.phases)
    for _ in range(int(seconds / CONTROL_PERIOD)):
        robot.time += CONTROL_PERIOD
        controller.tick()
        if len(controller.stats.phases) - start > left:
            break
    else:
        pytest.fail(f"no new plan within {seconds} s of sim time: {controller.stats.phases[-3:]}")
    return [p for _, p in controller.stats.phases[start - 1:]]


def test_a_packet_that_failed_twice_is_swept_then_tried_again():
    robot = scene(2.3, 2.6, drive=0.5)
    controller = plan_at(robot, 0.0)
    wall_row = 1
    assert controller.move.phase == "approach"
    phases = run_until_next_plan(controller, robot)  # first pick: nothing gripped
    assert phases[:3] == ["approach", "approach", "extend"] and robot.suction is False
    assert controller.failed[wall_row] == 1 and controller.move.phase == "approach"
    run_until_next_plan(controller, robot)  # the second pick fails too
    assert controller.move.phase == "to_sweep"  # given up: sweep instead ...
    assert controller.failed.tolist() == [0, 0]  # ... and the count starts over
    assert controller.stats.picks == 2 and controller.stats.sweeps == 1
