"""Signaler parameters: every kind converts what it should and refuses the rest with a message
that names the parameter and the value; trees a signaler cannot locate; exact boundaries and
the entities each signaler reads."""
from __future__ import annotations

import numpy as np
import pytest

from sim_fidelity.fidelity_manager import ConfigError, FidelityConfig, Level
from sim_fidelity.fidelity_manager.errors import ParamError, UnknownNameError
from sim_fidelity.fidelity_manager.levels import LEVEL_DTYPE
from sim_fidelity.fidelity_manager.signalers.base import Param, check_params
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.world_generators.stack_test import stack_sdf

H, M, L = Level.HIGH, Level.MEDIUM, Level.LOW


@pytest.fixture(scope="module")
def sim():
    return MujocoEngine.from_string(stack_sdf(3, 2, 1))  # box_{0,1,2}_{0,1}_0 and robot


def make(sim, signaler: dict, pattern: str = r"(box_\d_0_0)", **tree):
    config = FidelityConfig.from_dict({
        "signalers": {"s": signaler},
        "trees": {"boxes": {"signaler": "s", "name": "{key}",
                            "objects": [{"type": tree.pop("type", "shape"),
                                         "pattern": pattern}], **tree}},
        "presets": {"on": {}}})
    return config.build_signalers(sim, config.build_trees(sim), "on")["s"]


KIND_CASES = [  # kind, bad value, message
    ("float", "1.0", "expected a number, got '1.0'"),
    ("float", True, "expected a number, got True"),
    ("nonneg", -0.5, "expected a number >= 0, got -0.5"),
    ("int", "3", "expected an integer, got '3'"),
    ("int", True, "expected an integer, got True"),
    ("int", 2.5, "expected an integer, got 2.5"),
    ("vec3", [1, 2], "expected a list of 3 numbers, got [1, 2]"),
    ("vec3", "1 2 3", "expected a list of 3 numbers, got '1 2 3'"),
    ("vec3", [1, 2, -3], "expected a number >= 0, got -3"),
    ("patterns", [], "expected a regex or a non-empty list of regexes, got []"),
    ("patterns", 5, "expected a regex or a non-empty list of regexes, got 5"),
    ("patterns", ["a", 1], "expected a regex or a non-empty list of regexes, got ['a', 1]"),
    ("patterns", "([", "bad regex '(['"),
    ("level_map", {}, "expected a mapping of names to levels, got {}"),
    ("level_map", ["extend"], "expected a mapping of names to levels, got ['extend']"),
    ("level_map", {"go": "fast"}, "bad level 'fast'"),
    ("level", "top", "bad level 'top'"),
    ("schedule", {"time": 1}, "expected a list of {time, level[, trees]}, got {'time': 1}"),
    ("schedule", [{"time": 1}], "entry [0] needs 'time' and 'level', got {'time': 1}"),
    ("schedule", [{"level": "low"}], "entry [0] needs 'time' and 'level', got {'level': 'low'}"),
    ("schedule", ["time level"], "entry [0] needs 'time' and 'level', got 'time level'"),
    ("vec3_or_map", {"([": [1, 1, 1]}, "bad regex '(['"),
]


@pytest.mark.parametrize("kind, value, message", KIND_CASES,
                         ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(KIND_CASES)])
def test_each_kind_refuses_bad_values_naming_the_parameter(kind, value, message):
    with pytest.raises(ParamError) as info:
        check_params({"p": Param(kind)}, {"p": value})
    assert info.value.key == "p" and str(info.value).startswith(message), str(info.value)


def test_kinds_convert_good_values_and_fill_defaults():
    declared = {"f": Param("float"), "n": Param("nonneg", 0.5), "i": Param("int"),
                "v": Param("vec3"), "p": Param("patterns"), "lm": Param("level_map"),
                "lv": Param("level", Level.LOW), "vm": Param("vec3_or_map")}
    out = check_params(declared, {"f": 2, "i": 3, "v": [1, 2, 3], "p": "a.*",
                                  "lm": {"go": "high"}, "vm": {"b.*": [1, 1, 2]}})
    assert out["f"] == 2.0 and isinstance(out["f"], float) and out["n"] == 0.5 and out["i"] == 3
    np.testing.assert_array_equal(out["v"], [1.0, 2.0, 3.0])
    assert out["p"] == ["a.*"] and out["lm"] == {"go": Level.HIGH} and out["lv"] is Level.LOW
    np.testing.assert_array_equal(out["vm"]["b.*"], [1.0, 1.0, 2.0])


def test_unknown_and_missing_parameters():
    declared = {"alpha": Param("float"), "beta": Param("float", 1.0, "the beta")}
    with pytest.raises(ParamError, match=r"^unknown parameter \(known: alpha, beta\)$") as info:
        check_params(declared, {"alpha": 1.0, "gamma": 2})
    assert info.value.key == "gamma"
    with pytest.raises(ParamError, match=r"missing required parameter \(\)") as info:
        check_params(declared, {})
    assert info.value.key == "alpha"


def test_a_schedule_is_ordered_by_time_and_same_time_entries_keep_their_order(sim):
    sched = make(sim, {"type": "schedule", "table": [
        {"time": 2.0, "level": "low"}, {"time": 1.0, "level": "high", "trees": "box_0_0_0"},
        {"time": 1.0, "level": "medium", "trees": "box_0_0_0"}], "initial": "low"})
    empty = (np.zeros((0, 7)), np.zeros((0, 6)))
    at = [sched.update(t, *empty, np.full(3, H, np.int8)).tolist() for t in (0.5, 1.5, 2.5)]
    assert at == [[L, L, L], [M, L, L], [L, L, L]]


def test_trees_without_an_anchor_cannot_be_located(sim):
    """A tree of links of a custom type (not 'shape') has no anchor: a signaler that locates
    trees refuses it, naming the first three such trees."""
    config = FidelityConfig.from_dict({
        "signalers": {"s": {"type": "distance", "references": "robot", "r_high": 1.0,
                            "r_medium": 2.0}},
        "object_types": {"slab": {"kinds": ["link"], "medium": [], "low": ["dynamics"]}},
        "trees": {"boxes": {"signaler": "s", "name": "{key}",
                            "objects": [{"type": "slab", "pattern": r"(box_\d_\d_0)::link"}]}},
        "presets": {"on": {}}})
    trees = config.build_trees(sim)
    with pytest.raises(ConfigError, match=r"signalers\.s: trees without a shape or 'anchor' "
                                          r"cannot be located: box_0_0_0, box_0_1_0, box_1_0_0$"):
        config.build_signalers(sim, trees, "on")


def test_state_entities_are_the_references_then_the_anchors(sim):
    packet = make(sim, {"type": "packet", "robot": "robot", "robot_half_extents": [0.5] * 3,
                        "half_extents": [0.1] * 3})
    distance = make(sim, {"type": "distance", "references": "robot", "r_high": 1.0,
                          "r_medium": 2.0})
    boxes = ["box_0_0_0", "box_1_0_0", "box_2_0_0"]
    assert packet.state_entities() == ["robot"] + boxes
    assert distance.state_entities() == ["robot"] + boxes
    assert make(sim, {"type": "manual"}).state_entities() == []


def test_distance_boundaries_references_and_refusals(sim):
    sig = make(sim, {"type": "distance", "references": "robot", "r_high": 1.0, "r_medium": 2.0,
                     "hysteresis": 0.0})
    poses = np.zeros((4, 7))
    poses[:, 6] = 1
    poses[:, 0] = [10.0, 11.0, 12.0, 12.5]  # robot at x = 10: distances 1, 2, 2.5
    out = sig.update(0.0, poses, np.zeros((4, 6)), np.full(3, L, np.int8))
    assert out.tolist() == [H, M, L] and out.dtype == LEVEL_DTYPE  # a radius itself is inside
    make(sim, {"type": "distance", "references": "robot", "r_high": 1.0, "r_medium": 1.0})
    with pytest.raises(ConfigError, match=r"signalers\.s\.references: 'crane' matches no "
                                          r"model/link entity"):
        make(sim, {"type": "distance", "references": "crane", "r_high": 1.0, "r_medium": 2.0})


def test_unknown_action_lists_the_known_ones(sim):
    sig = make(sim, {"type": "action", "actions": {"reach": "high", "rest": "low"}})
    with pytest.raises(UnknownNameError, match=r"^unknown action 'wave' \(known: reach, rest\)$"):
        sig.announce("wave")


def test_missing_half_extents_name_the_first_three(sim):
    with pytest.raises(ConfigError, match=r"half_extents: no entry matches tree\(s\) box_0_1_0, "
                                          r"box_1_0_0, box_1_1_0$"):
        make(sim, {"type": "packet", "robot": "robot", "robot_half_extents": [0.5] * 3,
                   "half_extents": {"box_0_0_0": [0.1] * 3}}, pattern=r"(box_\d_\d_0)")


def test_manual_action_and_schedule_levels_come_as_the_level_dtype_and_take_regex_lists(sim):
    empty = (np.zeros((0, 7)), np.zeros((0, 6)))
    current = np.full(3, H, np.int8)
    manual = make(sim, {"type": "manual", "initial": "medium"})
    assert manual.update(0.0, *empty, current).dtype == LEVEL_DTYPE
    assert manual.set("low", ["box_0_0_0", "box_2_0_0"]) == 2
    assert manual.update(0.0, *empty, current).tolist() == [L, M, L]
    action = make(sim, {"type": "action"})
    assert action.announce("extend", ["box_1_0_0"]) == 1
    out = action.update(0.0, *empty, current)
    assert out.dtype == LEVEL_DTYPE and out.tolist() == [L, H, L]
    sched = make(sim, {"type": "schedule", "table": [{"time": 0.0, "level": "low"}]})
    assert sched.update(1.0, *empty, current).dtype == LEVEL_DTYPE
