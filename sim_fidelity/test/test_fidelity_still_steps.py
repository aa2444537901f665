"""Paper 000's rules in process: stillness over physics steps, refresh before every decision.

A world without gravity (a static robot box, two floating boxes) lets a test set each box's speed
exactly, step by step, with the real engine and the real manager.
"""
from __future__ import annotations

import numpy as np
import pytest
from still_cases import floating_world, levels, manager

from sim_fidelity.fidelity_manager import Level
from sim_fidelity.fidelity_manager.errors import SettleError
from sim_fidelity.simulator.engine import MujocoEngine

H, M, L = Level.HIGH, Level.MEDIUM, Level.LOW


def move(sim: MujocoEngine, box: str, vx: float) -> None:
    sim.set_states([box], twists=np.array([[vx, 0, 0, 0, 0, 0]]))


@pytest.mark.parametrize("clock", ["steps", "ticks"])
def test_a_packet_still_for_one_step_only_is_not_lowered(clock):
    """box_1 moves at 2 cm/s (above the 1 cm/s threshold) for 9 of the 10 steps between two ticks
    and is still for the last one: counted in steps it stays HIGH until it has been still for two;
    counted in ticks (speeds sampled at ticks, both still) it is lowered at once."""
    sim = floating_world()
    with manager(sim, still_clock=clock) as m:
        assert m.signalers["packets"].still_clock == clock
        m.tick()
        assert levels(m) == [H, H]
        move(sim, "box_1", 0.02)
        sim.step(9)
        move(sim, "box_1", 0.0)
        sim.step(1)
        m.tick()
        if clock == "ticks":  # the approximation: still at both ticks, so lowered
            assert levels(m) == [M, M]
            return
        assert levels(m) == [M, H]  # box_0 still for 10 steps: lowered (MEDIUM: box_1 is HIGH)
        sim.step(1)  # box_1: still for two steps now: lowered, box_0 MEDIUM while it was HIGH
        m.tick()
        assert levels(m) == [M, M]
        m.tick()
        assert levels(m) == [L, L]


def test_the_step_hook_watches_candidates_only_and_leaves_with_the_manager():
    sim = floating_world()
    m = manager(sim, still_clock="steps")
    hook = m.signalers["packets"].steps
    assert hook.on_step in sim.hooks and hook.rows.size == 0  # nothing to watch before a tick
    m.tick()
    assert hook.rows.tolist() == [0, 1]  # both HIGH, outside the box: candidates
    sim.step(1)
    m.tick()
    assert levels(m) == [H, H] and hook.counts().tolist() == [1, 1]  # still for one step only
    sim.step(1)
    m.tick()
    # lowered now, HIGH until this tick: watched for one more tick (a tree HIGH now may be
    # held there by the user, and its release must find its count)
    assert levels(m) == [M, M] and hook.rows.tolist() == [0, 1]
    sim.set_states(["box_0"], np.array([[0.3, 0, 0, 0, 0, 0, 1]]))  # into the robot box
    m.tick()
    assert levels(m)[0] == H and hook.rows.size == 0  # HIGH inside the box: not a candidate
    m.close()
    assert hook.on_step not in sim.hooks


def test_a_decision_point_makes_every_packet_high_until_the_decision():
    """The controller's decision point (settle 0.1 s): all HIGH at once, still HIGH at the ticks
    of the settle, lowered again (once still for two steps) after it."""
    sim = floating_world()
    with manager(sim, still_clock="steps") as m:
        for _ in range(3):
            m.tick()
            sim.step(20)
        assert levels(m) == [L, L]
        report = m.decision_point(0.1)
        assert levels(m) == [H, H] and report.counts["high"] == 2
        for _ in range(2):  # ticks at 0.16 and 0.20 s, within the settle (until 0.22 s)
            sim.step(20)
            m.tick()
            assert levels(m) == [H, H], sim.time
        sim.step(20)
        m.tick()  # 0.24 s: the settle is over, both still: lowered
        assert levels(m) == [M, M], sim.time
        for bad in (-0.1, float("nan"), float("inf"), True):
            with pytest.raises(SettleError, match="settle must be a finite number"):
                m.decision_point(bad)
        m.decision_point(0.0)  # a decision point without a settle still refreshes once
        assert levels(m) == [H, H]

