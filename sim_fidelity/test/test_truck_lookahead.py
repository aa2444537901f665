"""Looking ahead with snapshots on a small truck world: actions one at a time, the pick-or-sweep
classifier's labels and model (paper 000 Table 1), a planner decision (Fig. 8), and the
``simfid example truck-*`` commands' JSON. Actions are cut short (``max_action``) to keep it quick;
what is asserted is the machinery, not the unloading."""
from __future__ import annotations

import json

import numpy as np
import pytest

from sim_fidelity.cli import main
from sim_fidelity.fidelity_manager import FidelityConfig
from sim_fidelity.truck.actions import (
    SWEEP,
    Action,
    DirectedController,
    Outcome,
    Rollouts,
    options,
)
from sim_fidelity.truck.bench import CONFIG
from sim_fidelity.truck.classifier import (
    PICK,
    STALL_SAMPLES,
    SWEEP_LABEL,
    Collection,
    OneClass,
    collect,
    collect_worlds,
    label,
    train,
)
from sim_fidelity.truck.features import FEATURES, state_features
from sim_fidelity.truck.planner import Planner
from sim_fidelity.truck.robot import load_truck

CUT = 0.3  # s of sim time per action


@pytest.fixture(scope="module")
def config():
    return FidelityConfig.load(CONFIG)


def test_options_and_features_of_the_first_decision(small_wall):
    _, robot = load_truck(small_wall)
    controller = DirectedController(robot)
    opts = options(controller, max_picks=2)
    assert opts[-1] == SWEEP and len(opts) == 3
    assert all(a.kind == "pick" and robot.in_truck[a.packet] for a in opts[:2])
    x = state_features(controller)
    assert x.shape == (len(FEATURES),) and np.isfinite(x).all()
    counts = x[FEATURES.index("lane0_count"):FEATURES.index("lane4_count") + 1]
    assert counts.sum() == 8  # the whole wall stands within reach of the base


def _outcome(action: Action, removed: int, sim_time: float) -> Outcome:
    return Outcome(action, removed, 0, sim_time, 0.0)


def test_label_prefers_more_removed_then_the_quicker():
    pick = Action("pick", 3)
    assert label(_outcome(pick, 2, 9.0), _outcome(SWEEP, 1, 5.0)) == PICK
    assert label(_outcome(pick, 0, 5.0), _outcome(SWEEP, 1, 9.0)) == SWEEP_LABEL
    assert label(_outcome(pick, 1, 9.0), _outcome(SWEEP, 1, 5.0)) == SWEEP_LABEL
    assert label(_outcome(pick, 1, 4.0), _outcome(SWEEP, 1, 5.0)) == PICK


def test_collect_labels_a_decision_and_trains_a_model(small_wall, config):
    col = collect(small_wall, "adfi-1", config, budget=1e-3, max_samples=1, max_action=CUT)
    assert len(col.samples) == 1  # a decision begun is finished, whatever the budget
    s = col.samples[0]
    assert s.label in (PICK, SWEEP_LABEL) and s.features.shape == (len(FEATURES),)
    assert s.pick.action.kind == "pick" and s.sweep.action == SWEEP
    assert s.pick.sim_time == pytest.approx(CUT, abs=0.03)  # cut off
    assert col.sim_time == pytest.approx(s.pick.sim_time + s.sweep.sim_time)
    assert col.one_class == ("pick" if s.label == PICK else "sweep")
    with pytest.raises(OneClass, match="one class, no classifier"):
        train(col)
    mixed = Collection("adfi-1", "x", [s, s.__class__(s.features + 1.0, 1 - s.label, s.pick,
                                                       s.sweep, 0.0)], 1.0, 1.0)
    assert sorted(train(mixed).predict(mixed.x).tolist()) == [0, 1]  # logistic regression


def test_a_stuck_run_starts_afresh_and_worlds_share_the_budget(small_wall, config):
    """Actions cut off after CUT s remove nothing: after STALL_SAMPLES such decisions the run
    counts as stuck and a fresh run of the world goes on (the next controller seed), whatever
    budget is left; over two worlds, the samples of both in one collection, timed from the first
    world's start."""
    col = collect(small_wall, "hifi", config, budget=600.0, max_action=CUT,
                  max_samples=2 * STALL_SAMPLES)
    assert len(col.samples) == 2 * STALL_SAMPLES and col.stalled == 2
    assert all(s.idle and s.tie for s in col.samples)
    again = [s.features for s in col.samples[STALL_SAMPLES:]]  # the fresh run's first state is
    assert np.array_equal(again[0], col.samples[0].features)  # the world's first state again
    assert col.sim_time == pytest.approx(sum(s.pick.sim_time + s.sweep.sim_time
                                             for s in col.samples))  # both runs' time
    both = collect_worlds([small_wall, small_wall], "hifi", config, budget=600.0,
                          max_action=CUT, max_samples=1)
    assert len(both.samples) == 2  # one from each world (max_samples is per world)
    ready = [s.ready for s in both.samples]
    assert ready == sorted(ready) and ready[-1] <= both.wall
    assert both.world == f"{small_wall}, {small_wall}"
    assert both.sim_time == pytest.approx(sum(s.pick.sim_time + s.sweep.sim_time
                                              for s in both.samples))


def test_a_count_at_a_horizon_runs_on_with_the_controllers_own_choices(small_wall, config):
    engine, robot = load_truck(small_wall)
    rollouts = Rollouts(engine, robot, config, "hifi", max_action=CUT)
    controller = DirectedController(robot)
    out = rollouts.run_for(controller, SWEEP, horizon=0.5)
    assert out.action == SWEEP and out.sim_time == pytest.approx(CUT, abs=0.03)  # its own time
    assert engine.time == pytest.approx(0.5, abs=0.03)  # counted at the horizon
    assert rollouts.actions >= 2  # the sweep, then the controller's own choice


def test_planner_decision_with_a_tiny_budget(small_wall, config):
    engine, robot = load_truck(small_wall)
    controller = DirectedController(robot)
    planner = Planner(small_wall, "adfi-1", config, budget=0.0, depth=2, max_action=CUT)
    decision = planner.decide(engine.snapshot(), controller)
    assert decision.nodes >= 1 and decision.sequences >= 1
    assert decision.chosen in options(controller)
    assert decision.chosen == options(controller)[0]  # one node: the controller's own choice
    assert engine.time == 0.0  # the executed world is untouched


def test_example_commands_json(small_wall, capsys):
    assert main(["example", "truck-classifier", "--world", str(small_wall), "--test-world",
                 str(small_wall), "--budget", "0.001", "--max-action", str(CUT), "--modes",
                 "hifi", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    row = out["rows"]["hifi"]
    assert row["samples"] == 1 and out["test"]["samples"] == 1
    assert {"training_accuracy", "test_accuracy", "test_accuracy_decisive", "test_accuracy_at",
            "rtf"} <= set(row)
    assert out["test"]["decisive"] in (0, 1) and out["test_worlds"] == [str(small_wall)]
    # one label: reported as one class, no accuracy printed
    assert row["one_class"] in ("pick", "sweep") and out["test"]["one_class"] == row["one_class"]
    assert row["test_accuracy"] is None and set(row["test_accuracy_at"].values()) == {None}
    assert main(["example", "truck-classifier", "--world", str(small_wall), "--test-world",
                 str(small_wall), "--budget", "0.001", "--max-action", str(CUT), "--modes",
                 "adfi-1"]) == 0
    text = capsys.readouterr().out
    assert f"one class ('{row['one_class']}'): no classifier, no accuracy" in text
    assert main(["example", "truck-planner", "--world", str(small_wall), "--budget", "0",
                 "--duration", "0.2", "--depth", "1", "--max-action", str(CUT), "--modes",
                 "adfi-1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    row = out["rows"]["adfi-1"]
    assert row["decisions"] == 1 and row["nodes"] == 1 and row["sim_s"] >= 0.2
    assert row["wall_per_node_s"] > 0
    assert main(["example", "truck-planner", "--modes", "adfi-9"]) == 2
    assert "unknown mode(s) adfi-9" in capsys.readouterr().err


def _diverging(engine):
    """A snapshot of ``engine``'s state with the arm's lift joint moving at 1e12 m/s: the next
    step diverges (real MuJoCo physics; the engine undoes that step and raises)."""
    dof = engine.model.joint("unloader::arm_lift").dofadr[0]
    good = engine.snapshot()
    engine.data.qvel[dof] = 1e12
    bad = engine.snapshot()
    engine.restore(good)
    return bad


def test_an_action_whose_physics_diverges_ends_as_an_outcome(small_wall, config):
    engine, robot = load_truck(small_wall)
    rollouts = Rollouts(engine, robot, config, "adfi-1", max_action=CUT)
    good, bad = engine.snapshot(), _diverging(engine)
    out = rollouts.run(DirectedController(robot), SWEEP, bad)
    assert "diverged" in out.diverged and out.removed == 0
    assert engine.divergences == 1 and engine.time == 0.0  # the failed step undone
    fine = rollouts.run_for(DirectedController(robot), SWEEP, 0.5, good)  # the next look goes on
    assert not fine.diverged and engine.time == pytest.approx(0.5, abs=0.03)


def test_a_planner_whose_every_sequence_diverges_takes_the_controllers_choice(small_wall,
                                                                               config):
    engine, robot = load_truck(small_wall)
    controller = DirectedController(robot)
    planner = Planner(small_wall, "adfi-1", config, budget=0.0, depth=2, max_action=CUT)
    decision = planner.decide(_diverging(planner.rollouts.engine), controller)
    assert decision.diverged == decision.sequences == 1 and decision.nodes == 1  # not sequenced on
    assert decision.values == {} and decision.chosen == options(controller)[0]


def test_a_label_whose_branch_diverged_is_not_collected(small_wall, config, monkeypatch):
    """A pick whose physics diverged gives no label; the run goes on from the sweep."""
    import dataclasses

    real = Rollouts.run_for

    def pick_diverges(self, controller, action, horizon, start=None):
        out = real(self, controller, action, horizon, start)
        return dataclasses.replace(out, diverged="forced") if action.kind == "pick" else out
    monkeypatch.setattr(Rollouts, "run_for", pick_diverges)
    col = collect(small_wall, "hifi", config, budget=1e-3, max_action=CUT)
    assert col.samples == [] and col.diverged == 1
    assert col.sim_time == pytest.approx(2 * CUT, abs=0.06)  # both branches ran once


def test_ties_are_left_out_of_the_decisive_labels():
    """A tie (as many packets either way) only says which action was quicker."""
    from sim_fidelity.truck.classifier import Sample

    pick = Action("pick", 3)
    x = np.zeros(len(FEATURES))
    tie = Sample(x, SWEEP_LABEL, _outcome(pick, 1, 9.0), _outcome(SWEEP, 1, 5.0), 1.0)
    won = Sample(x + 1, PICK, _outcome(pick, 2, 9.0), _outcome(SWEEP, 0, 5.0), 2.0)
    col = Collection("hifi", "x", [tie, won, tie], 3.0, 42.0, diverged=1)
    assert tie.tie and not won.tie
    kept = col.decisive()
    assert kept.samples == [won] and kept.y.tolist() == [PICK]
    assert (kept.wall, kept.sim_time, kept.diverged) == (3.0, 42.0, 1)
