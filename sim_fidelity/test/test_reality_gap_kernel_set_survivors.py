"""Kernel-set behaviour the d8aa5fe mutation run of ``kernel_set.py`` left unchecked: a plain
component's grid cells as wide as the reach, however far it reaches, and a kernel active only
strictly within its reach (its activation above the threshold, not at it)."""
from __future__ import annotations

import numpy as np
import pytest
from reality_gap_cases import TO, kernel, spec_2d

from sim_fidelity.reality_gap import KernelSet


def test_a_kernel_reaching_over_two_turns_along_a_plain_component_is_found_all_the_way():
    # kills KernelSet.__init__ 105 (`_turns >= 0`: a plain axis gets cells 2 pi wide, narrower
    # than this reach, so a state more than one such cell from the member finds no list of it)
    ks = KernelSet([kernel([[0.0, 0.0]], TO, sigma=20.0)], spec_2d())
    reach = 20.0 * np.sqrt(2 * np.log(2))  # threshold 0.5: about 23.5
    assert ks.reach.tolist() == pytest.approx([reach])
    xs = np.linspace(-30.0, 30.0, 61)
    states = np.c_[xs, np.zeros_like(xs)]
    expected = np.where(np.abs(xs) < reach, 0, -1)
    assert ks.active(states).tolist() == expected.tolist()
    for s, k in zip(states, expected):
        hit = ks.lookup(s, np.array([1.0]))
        assert (-1 if hit is None else hit[0]) == k, s
        if hit is not None:
            assert hit[1].tolist() == pytest.approx([0.4, 0.3])
    far = ks.lookup(np.array([15.0, 0.0]), np.array([1.0]))  # 2.4 turns out, within reach
    assert far is not None and far[0] == 0


def test_a_state_exactly_at_the_reach_is_outside_the_kernel():
    # kills KernelSet.lookup 34 and KernelSet.active 45 (`<= reach`: active at the reach)
    ks = KernelSet([kernel([[0.0, 0.0]], TO, sigma=0.1)], spec_2d())
    reach = float(ks.reach[0])
    at, inside = np.array([reach, 0.0]), np.array([np.nextafter(reach, 0.0), 0.0])
    # at the reach the activation is the threshold, and a kernel is active only above it
    assert ks.activation(at)[0] == pytest.approx(0.5)
    assert ks.lookup(at, np.array([1.0])) is None
    assert ks.active(at[None]).tolist() == [-1]
    hit = ks.lookup(inside, np.array([1.0]))
    assert hit is not None and hit[0] == 0
    assert ks.active(inside[None]).tolist() == [0]
    # the same along y, and below the member
    for s in (np.array([0.0, reach]), np.array([-reach, 0.0])):
        assert ks.lookup(s, np.array([0.0])) is None and ks.active(s[None]).tolist() == [-1]
