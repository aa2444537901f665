"""The rules of the reality-gap core in small, hand-made cases (paper 001): node matching at its
boundaries, transition statistics, paired roll-outs step by step, divergent regions, the
regularised fit, the kernel set's lookup and the kernel runner's writes into a MuJoCo world."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from reality_gap_cases import TO, engine_with_value, kernel, spec

from sim_fidelity.reality_gap import Kernel, KernelRunner, KernelSet, TransitionModel
from sim_fidelity.reality_gap.errors import RealityGapError
from sim_fidelity.reality_gap.kernels import divergent_regions, fit_transfer
from sim_fidelity.reality_gap.rollouts import Divergence, paired_rollouts
from sim_fidelity.reality_gap.transitions import Nodes, match_nodes
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.poses import quat_to_rpy
from sim_fidelity.simulator.sensor_values import SensorValues
from sim_fidelity.world_generators.one_d_track import ROBOT, TERRAIN


def model(edges: list[tuple[int, int, int, int]], n_nodes: int, n_actions: int = 2
          ) -> TransitionModel:
    """A transition model from (source, action, destination, count) edges."""
    s, a, d = (np.repeat([e[i] for e in edges], [e[3] for e in edges]) for i in range(3))
    return TransitionModel.estimate(s, a, d, n_nodes, n_actions)


def line(*xs: float, eps: float = 0.5) -> Nodes:
    """Nodes on a line at ``xs`` (one state component, weight 1)."""
    return Nodes(np.array(xs, float)[:, None], np.ones(1), eps)


# --- node matching --------------------------------------------------------------------------
def test_a_state_exactly_eps_c_from_a_leader_founds_a_node():
    nodes, ids = match_nodes(np.array([[0.0], [1.0], [0.5]]), np.ones(1), 1.0)
    assert len(nodes) == 2 and ids.tolist() == [0, 1, 0]
    np.testing.assert_allclose(nodes.centres, [[0.25], [1.0]])
    assert nodes.eps_c == 1.0 and nodes.weights.tolist() == [1.0]


def test_states_far_apart_keep_their_own_nodes_in_one_block():
    nodes, ids = match_nodes(np.array([[0.0, 0.0], [0.5, 0.0], [3.0, 0.0]]), np.ones(2), 1.0)
    assert ids.tolist() == [0, 0, 1]
    np.testing.assert_allclose(nodes.centres, [[0.25, 0.0], [3.0, 0.0]])


def test_leaders_follow_the_axis_of_widest_spread():
    """Sorted along y (the widest axis) the leaders are y = 0 and y = 1.2; sorted along x the
    middle state would lead and take both others."""
    states = np.array([[0.02, 0.0], [0.0, 0.6], [0.01, 1.2]])
    nodes, ids = match_nodes(states, np.ones(2), 1.0)
    assert len(nodes) == 2 and ids[0] != ids[2]


def test_a_state_eps_c_from_a_leader_of_an_earlier_block_founds_a_node():
    """4096 states make the first block (one node at 0); the 4097th, exactly eps_c away, is
    compared with that block's leaders only."""
    states = np.r_[np.linspace(0.0, 0.4, 4096), 1.0][:, None]
    nodes, ids = match_nodes(states, np.ones(1), 1.0)
    assert len(nodes) == 2 and ids[-1] == 1 and (ids[:-1] == 0).all()


# --- transition statistics ------------------------------------------------------------------
def test_branching_counts_distinct_successors_per_node_with_transitions():
    m = model([(0, 0, 1, 2), (0, 1, 1, 1), (0, 0, 2, 1), (1, 0, 2, 1), (2, 0, 0, 1),
               (2, 1, 1, 1), (2, 0, 0, 3)], 4)
    assert m.branching() == 1.667  # (2 + 1 + 2) / 3, rounded to 3 places
    assert len(m.offsets) == 5 and m.states().tolist() == [0, 1, 2]
    assert model([], 3).branching() == 0.0


def test_sampling_a_node_whose_edges_do_not_start_the_table_follows_its_probabilities():
    m = model([(0, 0, 0, 1), (1, 0, 0, 1), (1, 0, 2, 3), (2, 0, 1, 1)], 3)
    draws = m.dst[m.sample(np.ones(20000, dtype=int), np.random.default_rng(0))]
    assert abs((draws == 2).mean() - 0.75) < 0.02 and set(draws.tolist()) == {0, 2}


def test_sampling_node_zero_without_edges_ends_there():
    m = model([(1, 0, 0, 1)], 2)
    assert m.sample(np.array([0, 1]), np.random.default_rng(0)).tolist() == [-1, 0]


# --- paired roll-outs -----------------------------------------------------------------------
# node:   0     1     2     3     4
# x:      1     0     2     3     10
NODES = line(1.0, 0.0, 2.0, 3.0, 10.0)
SIM = model([(1, 0, 0, 1), (0, 1, 2, 1)], 5)
PHY = model([(1, 0, 0, 1), (0, 1, 4, 3), (0, 1, 3, 1), (4, 0, 1, 1), (3, 0, 1, 1)], 5)


def test_each_pair_is_compared_up_to_its_first_divergence_and_records_it():
    """From node 1 both go to node 0 (through node 0, so a state 0 is no end); there the
    simulation goes to 2 and reality to 4 or 3: a divergence at step 2 after node 0."""
    divergent = np.array([True, False, False, False, False])
    real, found = paired_rollouts(SIM, PHY, NODES, np.ones(12, dtype=int), 4, divergent,
                                  np.random.default_rng(3))
    assert real.nodes.shape == (12, 5) and real.actions.shape == real.probs.shape == (12, 4)
    p = {4: 0.75, 3: 0.25}
    assert found == [Divergence(i, 2, 0, 1, 1.0, p[int(real.nodes[i, 2])]) for i in range(12)]
    assert {int(x) for x in real.nodes[:, 2]} == {3, 4}
    for i in range(12):
        x = int(real.nodes[i, 2])
        assert real.nodes[i].tolist() == [1, 0, x, -1, -1]
        assert real.actions[i].tolist() == [0, 1, -1, -1]
        assert real.probs[i].tolist() == [1.0, p[x], 0.0, 0.0]
    _, (one,) = paired_rollouts(SIM, PHY, NODES, np.ones(1, dtype=int), 4, divergent,
                                np.random.default_rng(3))
    assert (one.rollout, one.step, one.node) == (0, 2, 0)


def test_states_exactly_eps_c_apart_do_not_differ():
    nodes = Nodes(np.array([[0.0], [1.0], [5.0]]), np.ones(1), 1.0)
    sim, phy = model([(2, 0, 0, 1)], 3), model([(2, 0, 1, 1)], 3)
    _, found = paired_rollouts(sim, phy, nodes, np.array([2, 2]), 2, np.ones(3, bool),
                               np.random.default_rng(0))
    assert found == []


def test_a_comparison_ends_where_the_simulation_has_no_transitions():
    """Reality branches to 1 or 2, the simulation always goes to 1 and knows nothing after
    either. A pair that agreed follows reality one step more (its simulation ends only when
    asked for a step); one that parted on this shared branch cannot be coupled and ends at
    once. Node 1 is divergent, but a simulation without transitions there never diverges;
    reality could go on from 3, but its comparison has ended."""
    nodes = line(0.0, 1.0, 2.0, 3.0)
    sim = model([(0, 0, 1, 1)], 4)
    phy = model([(0, 0, 1, 1), (0, 0, 2, 1), (1, 0, 3, 1), (2, 0, 3, 1), (3, 0, 0, 1)], 4)
    real, found = paired_rollouts(sim, phy, nodes, np.zeros(40, dtype=int), 3,
                                  np.array([False, True, False, False]),
                                  np.random.default_rng(1))
    assert found == []
    assert set(real.nodes[:, 1].tolist()) == {1, 2}
    for row in real.nodes.tolist():
        assert row == ([0, 1, 3, -1] if row[1] == 1 else [0, 2, -1, -1])


# --- kernels: regions and the fit -----------------------------------------------------------
def test_divergent_regions_link_nodes_within_twice_eps_c_in_chains():
    nodes = line(0.0, 1.9, 3.8, 5.7, 9.0, 20.0, eps=1.0)
    divergent = np.array([True, True, True, True, True, False])
    assert divergent_regions(nodes, divergent).tolist() == [0, 0, 0, 0, 1, -1]
    assert divergent_regions(nodes, np.zeros(6, bool)).tolist() == [-1] * 6


def test_divergent_regions_over_several_distance_blocks():
    """More than 2048 divergent nodes: the links are found in blocks of rows."""
    xs = np.r_[np.arange(1500) * 1.5, 5000.0 + np.arange(700) * 1.5]
    label = divergent_regions(line(*xs, eps=1.0), np.ones(len(xs), bool))
    assert (label[:1500] == 0).all() and (label[1500:] == 1).all()


def test_fit_transfer_is_the_ridge_solution_about_the_mean():
    """One input: slope = (Sxy + r s^2 b0) / (Sxx + r s^2), through the data's mean."""
    x = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = 2.0 * x + 1.0
    prior = np.array([[0.5, 0.0]])
    np.testing.assert_allclose(fit_transfer(x, y, prior, 0.0, np.ones(1)), [[2.0, 1.0]])
    sxx, sxy, r, s = 5.0, 10.0, 2.0, 3.0  # about the mean 1.5
    slope = (sxy + r * s * s * 0.5) / (sxx + r * s * s)
    np.testing.assert_allclose(fit_transfer(x, y, prior, r, np.array([s])),
                               [[slope, 4.0 - slope * 1.5]])


def test_a_kernel_predicts_rows_of_states():
    k = Kernel(np.zeros(2), np.zeros((1, 2)), 0.1, (0.5, 0.5), 1,
               np.c_[np.eye(2), [1.0, 0.0], [0.0, 2.0]], 2)
    np.testing.assert_allclose(k.predict(np.array([1.0, 1.0]), np.array([3.0])), [4.0, 3.0])
    np.testing.assert_allclose(k.predict(np.array([[1.0, 1.0], [0.0, 0.0]]),
                                         np.array([[3.0], [1.0]])), [[4.0, 3.0], [1.0, 2.0]])


# --- kernel set and runner ------------------------------------------------------------------
def test_an_empty_kernel_set_finds_nothing():
    ks = KernelSet([], spec("pose.x", "pose.y"))
    assert len(ks) == 0 and ks.lookup(np.zeros(2), np.zeros(1)) is None
    assert ks.activation(np.zeros(2)).shape == (0,) and ks.active(np.zeros((3, 2))).tolist() \
        == [-1, -1, -1]


def test_lookup_with_unequal_weights_agrees_with_the_full_comparison():
    ks = KernelSet([kernel([[0.0, 0.0]], TO, sigma=0.5), kernel([[3.0, 0.0]], TO),
                    kernel([[8.0, 0.0]], TO, sigma=2.0)],  # reaching over several cells
                   spec("pose.x", "pose.y", weights=(4.0, 0.5)))
    rng = np.random.default_rng(0)
    states = np.r_[rng.uniform([-1, -2], [4, 2], size=(400, 2)),
                   rng.uniform([4, -2], [12, 2], size=(200, 2))]
    looked = [hit[0] if (hit := ks.lookup(s, np.zeros(1))) else -1 for s in states]
    assert looked == ks.active(states).tolist() and {0, 1, 2, -1} <= set(looked)


class CountedValues(SensorValues):
    """The engine's sensor-value table, counting the writes it receives."""

    writes = 0

    def set_sensor_values(self, names, values) -> None:
        self.writes += 1
        super().set_sensor_values(names, values)


def test_sensor_values_are_overridden_while_a_kernel_is_active_and_released_once():
    engine = engine_with_value()
    table = CountedValues(engine)
    runner = KernelRunner(engine, KernelSet([kernel([[0.0, 0.0]], TO)],
                                            spec("pose.z", "value")), sensors=table)
    hit = runner.apply(np.zeros(2), np.zeros(1))
    assert hit is not None and table.value(TERRAIN) == pytest.approx(0.3)
    assert engine.get_states([ROBOT])[0][0, 2] == pytest.approx(0.4)  # pose.z alone
    assert engine.get_states([ROBOT])[0][0, 0] == pytest.approx(1.0)
    assert runner.apply(np.array([5.0, 5.0]), np.zeros(1)) is None
    assert table.value(TERRAIN) == 0.25 and table.writes == 2
    assert runner.apply(np.array([5.0, 5.0]), np.zeros(1)) is None
    assert table.writes == 2  # nothing to release a second time


def test_expire_ends_a_period_hold_once_and_leaves_a_while_active_one():
    engine = engine_with_value()
    while_active = spec("pose.z", "value")
    period = dataclasses.replace(while_active, apply=tuple(
        dataclasses.replace(t, hold="period") if t.component == "value" else t
        for t in while_active.apply))
    for held, expires in ((period, True), (while_active, False)):
        table = CountedValues(engine)
        runner = KernelRunner(engine, KernelSet([kernel([[0.0, 0.0]], TO)], held),
                              sensors=table)
        runner.expire()
        assert table.writes == 0  # nothing held yet
        runner.apply(np.zeros(2), np.zeros(1))
        assert table.value(TERRAIN) == pytest.approx(0.3) and table.writes == 1
        runner.expire()
        assert table.value(TERRAIN) == (0.25 if expires else pytest.approx(0.3))
        assert table.writes == (2 if expires else 1)
        runner.expire()
        runner.release()
        assert table.value(TERRAIN) == 0.25 and table.writes == 2  # each released once


def test_a_sensor_spec_needs_a_table_unless_the_simulator_has_one():
    kernels = KernelSet([kernel([[0.0, 0.0]], TO)], spec("pose.z", "value"))
    with pytest.raises(RealityGapError) as e:
        KernelRunner(engine_with_value(), kernels)
    assert str(e.value) == (f"the spec sets sensor values ['{TERRAIN}']: give a sensors= "
                            "table (the simulator has no set_sensor_values)")

    class EngineWithValues(MujocoEngine):
        """A MuJoCo engine that also overrides its sensor values (as RosSimulator does)."""

        def set_sensor_values(self, names, values) -> None:
            self.table.set_sensor_values(names, values)

    engine = engine_with_value(cls=EngineWithValues)
    engine.table = SensorValues(engine)
    KernelRunner(engine, kernels).apply(np.zeros(2), np.zeros(1))
    assert engine.table.value(TERRAIN) == pytest.approx(0.3)


def test_a_yaw_only_spec_turns_the_robot_about_z_and_keeps_its_place():
    engine = engine_with_value(x=2.0)
    runner = KernelRunner(engine, KernelSet([kernel([[0.0, 0.0]], TO)],
                                            spec("pose.yaw", "twist.vx")))
    runner.apply(np.zeros(2), np.zeros(1))
    pose, twist = engine.get_states([ROBOT])
    np.testing.assert_allclose(pose[0, :3], [2.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(quat_to_rpy(pose[:, 3:])[0], [0.0, 0.0, 0.4], atol=1e-12)
    np.testing.assert_allclose(twist[0], [0.3, 0, 0, 0, 0, 0], atol=1e-12)


def test_roll_and_pitch_are_written_each_to_its_own_angle():
    engine = engine_with_value()
    runner = KernelRunner(engine, KernelSet([kernel([[0.0, 0.0]], TO)],
                                            spec("pose.roll", "pose.pitch")))
    runner.apply(np.zeros(2), np.zeros(1))
    np.testing.assert_allclose(quat_to_rpy(engine.get_states([ROBOT])[0][:, 3:])[0],
                               [0.4, 0.3, 0.0], atol=1e-12)


def test_a_spec_of_sensor_values_only_leaves_the_robot_where_it_is():
    engine = engine_with_value(x=3.0)
    table = SensorValues(engine)
    runner = KernelRunner(engine, KernelSet([kernel([[0.0, 0.0]], TO)], spec("value")),
                          sensors=table)
    assert runner.apply(np.zeros(2), np.zeros(1))[0] == 0
    assert table.value(TERRAIN) == pytest.approx(0.4)
    np.testing.assert_allclose(engine.get_states([ROBOT])[0][0], [3, 0, 0, 0, 0, 0, 1])


def test_pose_y_and_an_angular_rate_are_written_as_such():
    engine = engine_with_value(x=2.0)
    runner = KernelRunner(engine, KernelSet([kernel([[0.0, 0.0]], TO)],
                                            spec("pose.y", "twist.wz")))
    runner.apply(np.zeros(2), np.zeros(1))
    pose, twist = engine.get_states([ROBOT])
    np.testing.assert_allclose(pose[0], [2.0, 0.4, 0.0, 0, 0, 0, 1.0], atol=1e-12)
    np.testing.assert_allclose(twist[0], [0, 0, 0, 0, 0, 0.3], atol=1e-12)
