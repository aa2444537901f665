"""Stillness over physics steps along every axis (issue 18's step hook, paper 000): a packet
moving along any one linear or angular component, above its threshold, is not still, one below
both thresholds is (the surviving mutants of stillness.py in docs/testing.md)."""
from __future__ import annotations

import numpy as np
import pytest
from still_cases import floating_world, levels, manager

from sim_fidelity.fidelity_manager import Level

H, M = Level.HIGH, Level.MEDIUM
LINEAR, ANGULAR = 0.01, 0.05  # the packet signaler's default thresholds


@pytest.mark.parametrize("axis, speed, still", [
    (0, 2 * LINEAR, False), (1, 2 * LINEAR, False), (2, 2 * LINEAR, False),
    (3, 2 * ANGULAR, False), (4, 2 * ANGULAR, False), (5, 2 * ANGULAR, False),
    (2, LINEAR / 2, True), (5, ANGULAR / 2, True),
], ids=["vx", "vy", "vz", "wx", "wy", "wz", "slow-vz", "slow-wz"])
def test_motion_along_any_one_component_keeps_a_packet_high(axis, speed, still):
    sim = floating_world()  # no gravity: a packet keeps the twist it is given
    with manager(sim, still_clock="steps") as m:
        m.tick()
        twist = np.zeros((1, 6))
        twist[0, axis] = speed
        sim.set_states(["box_1"], twists=twist)
        sim.step(10)
        m.tick()
        assert levels(m) == [M, M if still else H]
