"""Paper 001's S_0 = States(P_sim) ∩ States(P_phy) on the Ackermann spec as shipped.

The paper's design simulation is a flat field; the ramp is met only in the field trial
(docs/ackermann.md, *Why no kernel lies over the ramp*). So ramp states (pitched) are seen on
the deployment side alone: they never start a roll-out and never become a kernel's region. The
divergence is found at the flat state before the ramp, the kernel sits there, and its transfer
gives the pitched state reality went to, which is how the kernel-managed design field meets
the ramp. Hand-made last legs (heading west along y = 15 m, 2 s apart) through the real spec.
"""
from __future__ import annotations

import numpy as np
import pytest

from sim_fidelity.reality_gap import History, generate, load_spec
from sim_fidelity.ugv.pipeline import SPEC

YAW = 3.1  # heading west
COMMAND = (1.0, 0.0)  # speed, steering
FLAT_X = (5.0, 3.4, 1.8)  # the leg from (5, 15) up to the ramp's foot
DESIGN_X = (0.2, -1.4, -3.0, -4.6)  # the design field goes on, flat
RAMP = ((1.0, -0.4), (0.2, 0.4))  # x, pitch on the deployment's ramp: up, then down
BEYOND_X = (-1.0, -2.6, -4.2)  # flat again past the ramp


def runs(states: list[tuple[float, float]], repeats: int, spec) -> History:
    """``repeats`` runs through the (x, pitch) states at y 15 m, heading west, one command."""
    s = np.array([[x, 15.0, YAW, pitch] for x, pitch in states])
    n = len(s) - 1
    u = np.tile(COMMAND, (n, 1))
    one = [History(s[:-1], u, spec.discretise(u), np.zeros(n), s[1:], np.arange(n) * 2.0,
                   np.full(n, i)) for i in range(repeats)]
    return History.concatenate(one)


@pytest.fixture(scope="module")
def generation():
    spec = load_spec(SPEC)
    design = runs([(x, 0.0) for x in FLAT_X + DESIGN_X], 10, spec)
    deploy = runs([(x, 0.0) for x in FLAT_X] + list(RAMP) + [(x, 0.0) for x in BEYOND_X], 10,
                  spec)
    return generate(design, deploy, spec, seed=0), spec


def test_ramp_states_are_never_common_so_no_roll_out_starts_on_the_ramp(generation) -> None:
    g, _ = generation
    pitch = g.nodes.centres[:, 3]
    assert (np.abs(pitch) > 0.3).sum() == 2  # the ramp's states are nodes of their own
    assert not g.tested[np.abs(pitch) > 0.1].any()  # but not in S_0
    assert g.summary.common_states == g.tested.sum() > 0
    assert g.summary.divergences > 0


def test_the_kernel_sits_at_the_flat_state_before_the_ramp_and_gives_the_pitch(generation):
    g, spec = generation
    (k,) = g.kernels
    np.testing.assert_allclose(k.centre, [FLAT_X[-1], 15.0, YAW, 0.0], atol=1e-9)
    assert np.abs(k.members[:, 3]).max() < 0.1  # no region node is pitched
    assert k.samples == 10  # every deployment transition from the ramp's foot
    x, y, _, pitch = k.predict(k.centre, np.array(COMMAND), spec.periodic)
    assert (x, y, pitch) == pytest.approx((RAMP[0][0], 15.0, RAMP[0][1]), abs=1e-6)
