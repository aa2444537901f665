"""Tree expansion: names from one or several capture groups (an unmatched optional group counts
as empty), anchors from a template or the first shape, groups kept, duplicates refused."""
from __future__ import annotations

import pytest

from sim_fidelity.fidelity_manager import ConfigError, FidelityConfig
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.world_generators.stack_test import stack_sdf


@pytest.fixture(scope="module")
def sim():
    return MujocoEngine.from_string(stack_sdf(3, 3, 1))  # box_{0,1,2}_{0,1,2}_0 and robot


def trees(sim, **groups):
    config = FidelityConfig.from_dict({
        "signalers": {"m": {"type": "manual"}},
        "trees": {name: {"signaler": "m", **spec} for name, spec in groups.items()},
        "presets": {"on": {}}})
    return {t.name: t for t in config.build_trees(sim).trees}


def test_several_capture_groups_join_with_a_slash_and_unmatched_groups_are_empty(sim):
    found = trees(sim, rows={"objects": [{"type": "shape",
                                          "pattern": r"(box_\d)_(?:(1)|0)_0"}]})
    assert sorted(found) == ["rows/box_0/", "rows/box_0/1", "rows/box_1/", "rows/box_1/1",
                             "rows/box_2/", "rows/box_2/1"]
    tree = found["rows/box_1/1"]
    assert tree.group == "rows" and tree.signaler == "m"
    assert tree.objects == (("box_1_1_0", "shape"),) and tree.anchor == "box_1_1_0"


def test_an_anchor_template_wins_over_the_first_shape(sim):
    found = trees(sim, boxes={"objects": [{"type": "shape", "pattern": r"(box_\d_0)_0"}],
                              "name": "{key}", "anchor": "{key}_0::link"})
    assert found["box_2_0"].anchor == "box_2_0_0::link"


def test_a_tree_without_shapes_has_an_empty_anchor(sim):
    config = FidelityConfig.from_dict({
        "signalers": {"m": {"type": "manual"}},
        "object_types": {"slab": {"kinds": ["link"], "medium": [], "low": ["dynamics"]}},
        "trees": {"slabs": {"signaler": "m", "name": "{key}",
                            "objects": [{"type": "slab", "pattern": r"(box_0_\d_0)::link"}]}},
        "presets": {"on": {}}})
    found = config.build_trees(sim).trees
    assert [(t.name, t.anchor) for t in found] == [("box_0_0_0", ""), ("box_0_1_0", ""),
                                                   ("box_0_2_0", "")]


def test_duplicate_tree_names_list_the_first_five(sim):
    spec = {"objects": [{"type": "shape", "pattern": r"(box_\d_\d_0)"}], "name": "{key}"}
    with pytest.raises(ConfigError, match=r"trees: duplicate tree names: box_0_0_0, box_0_1_0, "
                                          r"box_0_2_0, box_1_0_0, box_1_1_0$"):
        trees(sim, a=spec, b=spec)


def test_an_unkeyed_group_is_one_tree_whose_key_is_empty(sim):
    found = trees(sim, scene={"objects": [{"type": "shape", "pattern": r"box_0_\d_0"}],
                              "anchor": "robot{key}"})
    assert list(found) == ["scene"]
    assert found["scene"].anchor == "robot" and len(found["scene"].objects) == 3


def test_only_the_repeated_names_are_listed_as_duplicates(sim):
    with pytest.raises(ConfigError, match=r"trees: duplicate tree names: box_0_0_0$"):
        trees(sim, a={"objects": [{"type": "shape", "pattern": r"(box_\d_\d_0)"}], "name": "{key}"},
              b={"objects": [{"type": "shape", "pattern": r"(box_0_0_0)"}], "name": "{key}"})
