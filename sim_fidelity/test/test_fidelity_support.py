"""Which trees a simulator can lower (fidelity_manager/support.py), on the real engine: where levers
come by static copies of whole top-level models (as over Gazebo classic), a tree with DYNAMICS or
COLLISION on a link, a joint or a nested model stays HIGH, and one needing a lever the simulator
lacks stays HIGH with every tree of its group; each tree gets one reason naming everything
missing, and the manager's lines say how many trees stay HIGH, which, and why."""
from __future__ import annotations

import pytest
from sdf_snippets import GROUND, box_model, servo_pendulum, world

from sim_fidelity.fidelity_manager import FidelityConfig, FidelityManager, Level
from sim_fidelity.fidelity_manager.support import describe, unsupported_mask, unsupported_trees
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.protocol import Features, Lever

CART = """
    <model name="cart">
      <pose>0 -3 0.5 0 0 0</pose>
      <link name="body"><inertial><mass>1</mass></inertial>
        <collision name="c"><geometry><box><size>0.4 0.4 0.2</size></box></geometry></collision>
      </link>
      <model name="wheel">
        <link name="hub"><inertial><mass>1</mass></inertial>
          <collision name="c"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision>
        </link>
      </model>
    </model>"""
SDF = world("support", GROUND, box_model("box_0", 2, 0, 0.1), box_model("box_1", 4, 0, 0.1),
            servo_pendulum(), CART)
COPY_REASON = ("DYNAMICS and COLLISION come by static copies of whole top-level models, "
               "not of a {}")


class StaticCopyEngine(MujocoEngine):
    """The real engine reporting the features of a simulator that lowers DYNAMICS and COLLISION
    by static copies and has no ACTUATION, SENSOR or SCRIPT lever (Gazebo classic's)."""

    def features(self) -> Features:
        return Features(levers=frozenset({Lever.DYNAMICS, Lever.COLLISION, Lever.GRAVITY}),
                        static_fallback=True)


def config(trees: dict) -> FidelityConfig:
    return FidelityConfig.from_dict({"signalers": {"hand": {"type": "manual"}},
                                     "trees": {k: {"signaler": "hand", **v}
                                               for k, v in trees.items()},
                                     "presets": {"on": {}}, "default_preset": "on"})


TREES = {
    "boxes": {"objects": [{"type": "shape", "pattern": r"(box_\d)"}], "name": "{key}"},
    "rod": {"objects": [{"type": "shape", "pattern": r"arm::rod"}]},
    "wheel": {"objects": [{"type": "shape", "pattern": r"cart::wheel"}]},
    "cart": {"objects": [{"type": "shape", "pattern": r"cart"}]},
    "servo": {"objects": [{"type": "shape", "pattern": r"arm"},
                          {"type": "joint", "pattern": r"arm::hinge"}]},
    "arm_parts": {"objects": [{"type": "shape", "pattern": r"arm::(rod|post)"}],
                  "name": "part_{key}"},
}


def reasons(sim: MujocoEngine, trees: dict = TREES) -> dict[str, list[str]]:
    cfg = config(trees)
    return unsupported_trees(sim, cfg, cfg.build_trees(sim))


def test_static_copies_hold_link_and_nested_model_trees_a_missing_lever_its_group():
    got = reasons(StaticCopyEngine.from_string(SDF))
    assert got == {
        COPY_REASON.format("link"): ["rod", "part_post", "part_rod"],
        COPY_REASON.format("model"): ["wheel"],
        "the simulator has no lever ACTUATION": ["servo"],
    }


def test_one_reason_per_tree_names_every_kind_and_every_missing_lever():
    trees = {"mixed": {"objects": [{"type": "shape", "pattern": r"arm::rod|cart::wheel"},
                                   {"type": "sensor", "pattern": r"nothing"},
                                   {"type": "joint", "pattern": r"arm::hinge"}]}}
    got = reasons(StaticCopyEngine.from_string(SDF), trees)
    assert got == {"the simulator has no lever ACTUATION, SENSOR; " + COPY_REASON.format(
        "link or model"): ["mixed"]}


def test_a_simulator_with_every_lever_and_no_static_copies_lowers_every_tree():
    assert reasons(MujocoEngine.from_string(SDF)) == {}


def test_each_entity_is_asked_for_its_info_once():
    class Counting(StaticCopyEngine):
        asked: list[str] = []

        def entity_info(self, name: str):
            self.asked.append(name)
            return super().entity_info(name)

    sim = Counting.from_string(SDF)
    trees = {"whole": {"objects": [{"type": "shape", "pattern": r"arm::rod"}]},
             "again": {"objects": [{"type": "shape", "pattern": r"arm::rod|box_0"}]}}
    assert reasons(sim, trees) == {COPY_REASON.format("link"): ["whole", "again"]}
    assert sorted(sim.asked) == ["arm::rod", "box_0"]


def test_the_mask_marks_exactly_the_named_trees():
    sim = StaticCopyEngine.from_string(SDF)
    cfg = config(TREES)
    trees = cfg.build_trees(sim)
    mask = unsupported_mask(trees, unsupported_trees(sim, cfg, trees))
    held = {"rod", "wheel", "servo", "part_post", "part_rod"}
    assert mask.tolist() == [n in held for n in trees.names]
    assert not unsupported_mask(trees, {}).any()


@pytest.mark.parametrize("n, shown", [
    (5, "t0, t1, t2, t3, t4"),
    (6, "t0, t1, t2, t3, t4 and 1 more"),
    (12, "t0, t1, t2, t3, t4 and 7 more"),
    (1, "t0"),
])
def test_describe_counts_the_trees_and_names_the_first_five(n, shown):
    lines = describe({"why": [f"t{i}" for i in range(n)], "other": ["x"]})
    assert lines == [f"{n} trees stay HIGH ({shown}): why", "1 trees stay HIGH (x): other"]


def test_the_manager_holds_unsupported_trees_high_and_lowers_the_rest():
    sim = StaticCopyEngine.from_string(SDF)
    with FidelityManager(sim, config(TREES)) as m:
        assert m.set_fidelity(".*", Level.LOW) == ["box_0", "box_1", "cart"]
        table = m.get_fidelity()
        assert all(table[t][0] == Level.HIGH for t in ("rod", "wheel", "servo", "part_rod"))
        assert sim.get_lever(["box_0", "box_1", "cart"], Lever.DYNAMICS).tolist() == [False] * 3
        assert sim.get_lever(["arm", "arm::rod"], Lever.DYNAMICS).all()
    assert sim.levers_at_originals()
