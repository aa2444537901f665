"""The controller's public options (:meth:`UnloadingController.options`) are the plan it executes:
the first pick option's packet and approach pose are the targets of its first moves, the sweep
option's geometry is where its sweep drives; the look-ahead's actions (``truck.actions.options``)
list the same. Stand-in robot of stand_in_robot.py (perfect joints, static packets)."""
from __future__ import annotations

import pytest
from stand_in_robot import LOW, TALL, StandInRobot, scene, targets

from sim_fidelity.truck.actions import SWEEP, Action, options
from sim_fidelity.truck.controller import NOSE_TIP, UnloadingController


def test_the_first_pick_option_is_the_pick_executed():
    robot = StandInRobot([[2.6, 0.5, 0.45], [2.6, -0.2, 0.30], [2.6, 0.0, 0.45]],
                         [TALL, LOW, TALL], drive=0.5)
    controller = UnloadingController(robot, seed=3)
    opts = controller.options()
    assert [p.packet for p in opts.picks] == [2, 0]  # the tall ones, the central first
    assert options(controller) == [Action("pick", 2), Action("pick", 0), SWEEP]
    best = opts.picks[0]
    controller.tick()  # plans
    assert controller.move.phase == "approach" and controller.stats.picks == 1
    approach = targets(controller, "approach")
    assert approach["drive"] == pytest.approx(best.model_x - controller.drive_offset)
    assert approach["arm_reach"] == pytest.approx(best.reach)
    assert approach["arm_shift"] == pytest.approx(best.y, abs=0.031)  # seeded jitter +-3 cm


def test_the_sweep_option_is_the_sweep_executed():
    robot = scene(2.3, 4.0)  # the wall is out of reach behind the low packet
    controller = UnloadingController(robot)
    opts = controller.options()
    assert opts.picks == [] and opts.sweep.block == pytest.approx(2.3)
    assert opts.sweep.stop == pytest.approx(opts.wall - 0.1)
    assert options(controller) == [SWEEP]
    controller.tick()
    assert controller.move.phase == "to_sweep"
    start = targets(controller, "to_sweep")["drive"] + controller.drive_offset
    raised_tip = start + NOSE_TIP + 0.0
    assert raised_tip < opts.sweep.block  # the nose goes down short of the block
    sweep = targets(controller, "sweep")
    assert controller.drive_offset + sweep["drive"] + NOSE_TIP + sweep["nose_reach"] \
        <= opts.sweep.stop + 1e-9


def test_nothing_ahead_no_options():
    robot = StandInRobot([[-3.0, 0.0, 0.25]], [LOW], drive=0.0)  # behind the base
    controller = UnloadingController(robot)
    assert controller.options().sweep is None and options(controller) == []
    controller.tick()
    assert controller.move.phase == "idle"
