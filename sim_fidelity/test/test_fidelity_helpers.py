"""Helpers against the real engine: caching, exact restore per object type, batched lever calls."""
from __future__ import annotations

import numpy as np
import pytest

from sim_fidelity.fidelity_manager import FidelityConfig, FidelityManager, Level
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.protocol import EntityKind, Lever
from sim_fidelity.world_generators.sdf_text import box_model


def _link(name: str, z: float) -> str:
    return f"""
      <link name="{name}"><pose>0 0 {z} 0 0 0</pose>
        <inertial><mass>0.1</mass><inertia><ixx>1e-4</ixx><iyy>1e-4</iyy><izz>1e-4</izz>
          <ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>
        <collision name="c"><geometry><box><size>0.05 0.05 0.08</size></box></geometry></collision>
      </link>"""


def _joint(name: str, parent: str, child: str) -> str:
    return f"""
      <joint name="{name}" type="prismatic"><parent>{parent}</parent><child>{child}</child>
        <axis><xyz>0 0 1</xyz><limit><lower>-0.05</lower><upper>0.05</upper></limit>
          <dynamics><damping>2</damping></dynamics></axis></joint>"""


def plunger(i: int) -> str:
    """Paper 000's plunger: 4 links, 4 joints, a proximity sensor and a script (controller)."""
    links = "".join(_link(f"l{k}", -0.1 * k) for k in range(4))
    joints = _joint("j0", "world", "l0") + "".join(_joint(f"j{k}", f"l{k - 1}", f"l{k}")
                                                   for k in range(1, 4))
    return f"""
    <model name="plunger_{i}">
      <pose>{0.3 * i} 2 1.0 0 0 0</pose>{links}{joints}
      <link name="tip"><pose>0 0 -0.35 0 0 0</pose><inertial><mass>0.01</mass></inertial>
        <sensor name="prox" type="ray"><update_rate>30</update_rate></sensor></link>
      <joint name="tip_fix" type="fixed"><parent>l3</parent><child>tip</child></joint>
      <plugin filename="gz-sim-joint-position-controller-system"
              name="gz::sim::systems::JointPositionController">
        <joint_name>j0</joint_name><p_gain>50</p_gain><d_gain>5</d_gain>
        <initial_position>0.02</initial_position></plugin>
    </model>"""


WORLD = f"""<?xml version="1.0"?><sdf version="1.9"><world name="plungers">
  <physics name="p" type="mujoco"><max_step_size>0.002</max_step_size></physics>
  <model name="ground"><static>true</static><link name="link"><collision name="c"><geometry>
    <plane><normal>0 0 1</normal><size>10 10</size></plane></geometry></collision></link></model>
  {plunger(0)}{plunger(1)}{plunger(2)}
  {"".join(box_model(f"box_{i}", 0.3 * i, 0, 0.1, 0.2, 1.0) for i in range(6))}
</world></sdf>"""

CONFIG = {
    "signalers": {"plan": {"type": "action"}, "hand": {"type": "manual"}},
    "trees": {
        "plungers": {"signaler": "plan", "name": "{key}", "objects": [
            {"type": "shape", "pattern": r"(plunger_\d)::l\d"},
            {"type": "joint", "pattern": r"(plunger_\d)::j\d"},
            {"type": "sensor", "pattern": r"(plunger_\d)::tip::prox"},
            {"type": "script", "pattern": r"(plunger_\d)::.*JointPositionController"}]},
        "boxes": {"signaler": "hand", "name": "{key}",
                  "objects": [{"type": "shape", "pattern": r"(box_\d)"}]}},
    "presets": {"on": {}}, "default_preset": "on"}


class CountingEngine(MujocoEngine):
    """The real engine, recording every lever call (a spy: it changes nothing)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.calls: list[tuple[str, Lever, bool | None, int]] = []

    def set_lever(self, names, lever, enabled):
        self.calls.append(("set", Lever(lever), bool(enabled), len(names)))
        super().set_lever(names, lever, enabled)

    def set_levers(self, changes):
        changes = list(changes)
        self.calls.append(("batch", None, None, len(changes)))
        self.calls += [("set", Lever(lever), bool(on), len(names)) for names, lever, on in changes]
        super().set_levers(changes)

    def get_lever(self, names, lever, *, original=False):
        self.calls.append(("get", Lever(lever), None, len(names)))
        return super().get_lever(names, lever, original=original)


def lever_snapshot(sim: MujocoEngine) -> dict:
    """Every lever of every entity through the protocol, plus the engine's derived parameters."""
    snap = {}
    bodies = sim.entities(EntityKind.MODEL) + sim.entities(EntityKind.LINK)
    for lever in (Lever.DYNAMICS, Lever.COLLISION, Lever.GRAVITY):
        snap[lever] = sim.get_lever(bodies, lever).tolist()
    snap[Lever.ACTUATION] = sim.get_lever(sim.entities(EntityKind.JOINT), Lever.ACTUATION).tolist()
    snap[Lever.SENSOR] = sim.get_lever(sim.entities(EntityKind.SENSOR), Lever.SENSOR).tolist()
    snap[Lever.SCRIPT] = sim.get_lever(sim.entities(EntityKind.PLUGIN), Lever.SCRIPT).tolist()
    m = sim.model
    for field in ("geom_contype", "geom_conaffinity", "body_gravcomp", "dof_damping",
                  "actuator_gainprm", "actuator_biasprm"):
        snap[field] = getattr(m, field).copy().tolist()
    return snap


# intricate settings another client makes while the trees are HIGH: the manager must carry them
# through every toggle (paper 000); its start and end state is the world's original
INTRICATE = ((["plunger_1::l2"], Lever.COLLISION), (["plunger_2::tip::prox"], Lever.SENSOR),
             (["box_5"], Lever.COLLISION))


def make_intricate(engine) -> None:
    for names, lever in INTRICATE:
        engine.set_lever(names, lever, False)


@pytest.fixture()
def sim():
    engine = CountingEngine.from_string(WORLD)
    engine.original = lever_snapshot(engine)
    make_intricate(engine)  # also what a manager that died would leave behind
    engine.calls.clear()
    return engine


def manager(sim) -> FidelityManager:
    """A manager on ``sim``, then the intricate settings made again while every tree is HIGH."""
    m = FidelityManager(sim, FidelityConfig.from_dict(CONFIG, "helpers.yaml"))
    make_intricate(sim)
    sim.calls.clear()
    return m


def test_a_manager_starts_from_the_worlds_originals(sim):
    """What the simulator has at start (a dead manager's leftovers) is not taken for the start
    state: the manager writes the originals back and ends there."""
    m = FidelityManager(sim, FidelityConfig.from_dict(CONFIG, "helpers.yaml"))
    assert m.helpers.reverted == 3
    assert lever_snapshot(sim) == sim.original and m.mismatches() == []
    m.set_fidelity("box_.", Level.LOW)
    m.close()
    assert lever_snapshot(sim) == sim.original


def test_plunger_tree_holds_its_objects(sim):
    m = manager(sim)
    tree = m.trees.trees[m.trees.index["plunger_0"]]
    kinds = [t for _, t in tree.objects]
    assert (kinds.count("shape"), kinds.count("joint"), kinds.count("sensor"),
            kinds.count("script")) == (4, 4, 1, 1)


def test_low_state_per_object_type_and_exact_return(sim):
    start = lever_snapshot(sim)
    m = manager(sim)
    m.tick()  # the action signaler starts at LOW: plungers lowered
    assert m.get_fidelity("plunger_0")["plunger_0"] == (Level.LOW, False)
    links = [f"plunger_0::l{k}" for k in range(4)]
    assert not sim.get_lever(links, Lever.DYNAMICS).any()
    assert not sim.get_lever(links, Lever.COLLISION).any()
    assert not sim.get_lever(["plunger_0::j0"], Lever.ACTUATION)[0]  # the actuated joint: passive
    assert not sim.get_lever(["plunger_0::tip::prox"], Lever.SENSOR).any()
    assert not sim.script_enabled("plunger_0::gz::sim::systems::JointPositionController")
    assert np.all(sim.model.actuator_gainprm[:, 0] == 0)  # joints passive
    m.signalers["plan"].announce("extend")
    m.tick()
    assert lever_snapshot(sim) == start  # raising re-applies the cached high-fidelity state
    m.signalers["plan"].announce("retract", "plunger_[12]")
    m.tick()
    m.close()
    assert lever_snapshot(sim) == sim.original and m.mismatches() == []


def test_medium_is_high_for_joints_sensors_scripts_and_static_colliding_for_shapes(sim):
    m = manager(sim)
    m.set_fidelity("plunger_1|box_.", Level.MEDIUM, hold=True)
    m.tick()  # held: the action signaler's LOW does not apply to plunger_1
    assert m.get_fidelity("plunger_1")["plunger_1"] == (Level.MEDIUM, True)
    links = [f"plunger_1::l{k}" for k in range(4)]
    assert not sim.get_lever(links, Lever.DYNAMICS).any()
    assert sim.get_lever(links, Lever.COLLISION).tolist() == [True, True, False, True]  # cached
    assert sim.get_lever([f"plunger_1::j{k}" for k in range(4)], Lever.ACTUATION).all()
    assert sim.get_lever(["plunger_1::tip::prox"], Lever.SENSOR).all()
    assert sim.get_lever(["box_0", "box_5"], Lever.COLLISION).tolist() == [True, False]
    m.set_fidelity("box_.", Level.LOW)
    m.set_fidelity("box_.", Level.HIGH)
    m.close()
    assert lever_snapshot(sim) == sim.original


def test_many_trees_changing_in_one_tick_cost_one_batch_of_a_change_per_lever_and_side(sim):
    m = manager(sim)
    m.tick()
    sim.calls.clear()
    m.signalers["hand"].set("low")  # six boxes at once
    report = m.tick()
    assert sorted(report.changed) == [f"box_{i}" for i in range(6)]
    assert sorted(sim.calls) == [("batch", None, None, 2),
                                 ("get", Lever.DYNAMICS, None, 6),
                                 ("get", Lever.COLLISION, None, 6),
                                 ("set", Lever.DYNAMICS, False, 6),
                                 ("set", Lever.COLLISION, False, 5)]
    sim.calls.clear()
    m.signalers["hand"].set("high")
    m.tick()
    assert sorted(sim.calls) == [("batch", None, None, 2),
                                 ("set", Lever.DYNAMICS, True, 6),
                                 ("set", Lever.COLLISION, True, 5)]
    sim.calls.clear()
    m.tick()  # no change of the signal: no lever call at all
    assert sim.calls == []


def test_lowering_caches_the_state_at_lowering_time(sim):
    m = manager(sim)
    sim.set_lever(["box_0"], Lever.COLLISION, False)  # changed by someone else while HIGH
    m.set_fidelity("box_0", Level.LOW)
    m.set_fidelity("box_0", Level.HIGH)
    assert not sim.get_lever(["box_0"], Lever.COLLISION)[0]  # the cache took the new setting
    m.close()
    assert sim.get_lever(["box_0"], Lever.COLLISION)[0]  # the end restores the state at start


def test_low_shapes_do_not_move_and_restore_keeps_physics_going(sim):
    m = manager(sim)
    m.set_fidelity("box_0", Level.LOW)
    before = sim.get_states(["box_0"])[0]
    sim.step(100)
    assert np.allclose(sim.get_states(["box_0"])[0], before, atol=1e-9)  # held, not falling
    m.close()
    sim.set_states(["box_0"], twists=np.array([[0, 0, 1.0, 0, 0, 0]]))
    sim.step(50)
    assert sim.get_states(["box_0"])[0][0, 2] > before[0, 2] + 0.02  # dynamic again


@pytest.mark.parametrize("path", [("medium", "low", "high"), ("low", "medium", "high"),
                                  ("medium", "low", "medium", "high"), ("low", "high", "low",
                                                                        "high")],
                         ids="-".join)
def test_round_trips_through_the_lower_levels_end_as_at_the_start(sim, path):
    """Only leaving HIGH caches the HIGH state: moving between MEDIUM and LOW must not cache a
    lowered state, or the trees would come back HIGH but frozen."""
    start = lever_snapshot(sim)
    m = manager(sim)
    m.set_fidelity("plunger_1", Level.HIGH, hold=True)  # not lowered by the plan's LOW
    for level in path:
        m.set_fidelity("box_.|plunger_1", level, hold=True)
    assert lever_snapshot(sim) == start  # HIGH again without closing
    assert set(m.mismatches()) == {(names[0], lever.name) for names, lever in INTRICATE}
    before = sim.get_states(["box_0"])[0]
    sim.set_states(["box_0"], twists=np.array([[0, 0, 1.0, 0, 0, 0]]))
    sim.step(50)
    assert sim.get_states(["box_0"])[0][0, 2] > before[0, 2] + 0.02  # dynamic again
    m.close()
    assert lever_snapshot(sim) == sim.original


def test_mismatches_name_every_lever_left_changed(sim):
    m = manager(sim)
    m.set_fidelity("plunger_0", Level.LOW, hold=True)
    m.set_fidelity("box_0", Level.LOW)
    found = set(m.mismatches()) - {(names[0], lever.name) for names, lever in INTRICATE}
    assert {("box_0", "DYNAMICS"), ("box_0", "COLLISION"), ("plunger_0::j0", "ACTUATION"),
            ("plunger_0::tip::prox", "SENSOR"), ("plunger_0::l3", "DYNAMICS"),
            ("plunger_0::gz::sim::systems::JointPositionController", "SCRIPT")} <= found
    assert not any(e.startswith(("box_1", "plunger_1")) for e, _ in found)
    m.close()
    assert m.mismatches() == []
