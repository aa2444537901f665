"""Fidelity configuration: loading, presets, and errors that name the file and the key path."""
from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest
import yaml

from sim_fidelity.fidelity_manager import ConfigError, FidelityConfig, FidelityManager, Level
from sim_fidelity.fidelity_manager.errors import LevelError
from sim_fidelity.fidelity_manager.levels import parse_level
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.world_generators.stack_test import stack_sdf

GOOD = {
    "signalers": {"packets": {"type": "packet", "robot": "robot",
                              "robot_half_extents": [.2, .2, .2], "half_extents": [.1, .1, .1]}},
    "trees": {"boxes": {"signaler": "packets", "name": "{key}",
                        "objects": [{"type": "shape", "pattern": r"(box_\d+_\d+_\d+)"}]}},
}


def write(tmp_path, data) -> str:
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return str(path)


def variant(change) -> dict:
    data = yaml.safe_load(yaml.safe_dump(GOOD))
    change(data)
    return data


@pytest.fixture(scope="module")
def sim():
    return MujocoEngine.from_string(stack_sdf(2, 2, 1))


def test_levels_match_the_service_constants_and_parse():
    assert (Level.LOW, Level.MEDIUM, Level.HIGH) == (0, 1, 2)
    assert Level.HIGH > Level.MEDIUM > Level.LOW
    assert parse_level("Medium") is Level.MEDIUM and parse_level(2) is Level.HIGH
    for bad in ("highest", 3, True, None):
        with pytest.raises(LevelError, match="bad level"):
            parse_level(bad)


def test_good_config_and_builtin_presets(tmp_path):
    config = FidelityConfig.load(write(tmp_path, GOOD))
    assert config.default_preset == "hifi" and not config.preset("hifi").enabled
    assert config.signaler_params("packets", "adfi-1")["inflation"] == 1.0
    assert config.signaler_params("packets", "adfi-3")["inflation"] == 0.01
    assert config.signaler_params("packets", "adfi-2")["still_steps"] == 2  # default filled in


def test_repository_stack_config_loads():
    config = FidelityConfig.load("config/stack_test.yaml")
    assert config.default_preset == "adfi-2"
    assert config.signaler_params("packets", None)["refresh_interval"] == 2.0


CASES = [
    (lambda d: d.update(extra=1), "extra", "unknown key"),
    (lambda d: d.pop("trees"), "trees", "missing"),
    (lambda d: d["signalers"]["packets"].update(type="telepathy"), "signalers.packets.type",
     "unknown signaler type 'telepathy'"),
    (lambda d: d["signalers"]["packets"].pop("robot"), "signalers.packets.robot",
     "missing required"),
    (lambda d: d["signalers"]["packets"].update(inflation="big"), "signalers.packets.inflation",
     "expected a number"),
    (lambda d: d["signalers"]["packets"].update(half_extents=[1, 2]),
     "signalers.packets.half_extents", "list of 3"),
    (lambda d: d["signalers"]["packets"].update(speed=1), "signalers.packets.speed",
     "unknown parameter"),
    (lambda d: d["trees"]["boxes"].update(signaler="nope"), "trees.boxes.signaler",
     "no signaler 'nope'"),
    (lambda d: d["trees"]["boxes"]["objects"][0].update(type="blob"), "trees.boxes.objects[0].type",
     "unknown object type"),
    (lambda d: d["trees"]["boxes"]["objects"][0].update(pattern="(box"),
     "trees.boxes.objects[0].pattern", "bad regex"),
    (lambda d: d["trees"]["boxes"].update(name="{nope}"), "trees.boxes.name", "bad template"),
    (lambda d: d.update(object_types={"crate": {"kinds": ["model"], "low": ["warp"]}}),
     "object_types.crate.low", "unknown lever"),
    (lambda d: d.update(object_types={"crate": {"kinds": ["cloud"]}}), "object_types.crate.kinds",
     "not a valid EntityKind"),
    (lambda d: d.update(presets={"fast": {"signalers": {"packets": {"inflation": -1}}}}),
     "presets.fast.signalers.packets.inflation", ">= 0"),
    (lambda d: d.update(presets={"fast": {"enabled": "yes"}}), "presets.fast.enabled",
     "true or false"),
    (lambda d: d.update(default_preset="turbo"), "default_preset", "unknown preset 'turbo'"),
    (lambda d: d["signalers"].update(plan={"type": "action", "actions": {"extend": "max"}}),
     "signalers.plan.actions", "bad level 'max'"),
]


@pytest.mark.parametrize("change, key, message", CASES, ids=[c[1] for c in CASES])
def test_load_errors_name_file_and_key(tmp_path, change, key, message):
    path = write(tmp_path, variant(change))
    with pytest.raises(ConfigError) as info:
        FidelityConfig.load(path)
    assert info.value.file == path and info.value.key == key
    assert message in str(info.value) and path in str(info.value)


def test_unreadable_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        FidelityConfig.load(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        FidelityConfig.load(write(tmp_path, "trees: [unclosed"))


BUILD_CASES = [
    (lambda d: d["trees"]["boxes"]["objects"][0].update(pattern=r"(crate_\d+)"),
     "trees.boxes.objects[0].pattern", "matches no entity"),
    (lambda d: d["signalers"]["packets"].update(robot="rover"), "signalers.packets.robot",
     "'rover' matches no model/link"),
    (lambda d: d["signalers"]["packets"].update(half_extents={"box_0_.*": [.1, .1, .1]}),
     "signalers.packets.half_extents", "no entry matches tree(s) box_1_0_0"),
    (lambda d: d["trees"]["boxes"]["objects"].append({"type": "shape", "pattern": "robot"}),
     "trees.boxes.objects[1].pattern", "mixes patterns with and without capture groups; every "
                                       "pattern of a group needs one to assign trees"),
]


@pytest.mark.parametrize("change, key, message", BUILD_CASES, ids=[c[1] for c in BUILD_CASES])
def test_build_errors_name_file_and_key(tmp_path, sim, change, key, message):
    path = write(tmp_path, variant(change))
    with pytest.raises(ConfigError) as info:
        FidelityManager(sim, path, "adfi-1")
    assert info.value.file == path and info.value.key == key and message in str(info.value)


def test_duplicate_tree_names_are_rejected(tmp_path, sim):
    data = variant(lambda d: d["trees"].update(more=dict(d["trees"]["boxes"])))
    with pytest.raises(ConfigError, match="duplicate tree names: box_0_0_0") as info:
        FidelityManager(sim, write(tmp_path, data), "adfi-1")
    assert info.value.key == "trees"


def test_one_tree_per_capture_key_and_grouping_without_captures(tmp_path, sim):
    data = textwrap.dedent(r"""
        signalers: {m: {type: manual}}
        trees:
          rows: {signaler: m, objects: [{type: shape, pattern: '(box_\d+)_\d+_0'}]}
          all: {signaler: m, objects: [{type: shape, pattern: 'robot'}]}
        default_preset: adfi-1
    """)
    manager = FidelityManager(sim, write(tmp_path, data))
    assert sorted(manager.get_fidelity()) == ["all", "rows/box_0", "rows/box_1"]
    row = manager.trees.trees[manager.trees.index["rows/box_0"]]
    assert [e for e, _ in row.objects] == ["box_0_0_0", "box_0_1_0"] and row.anchor == "box_0_0_0"


@pytest.mark.parametrize("value, level", [(Level.MEDIUM, Level.MEDIUM), ("low", Level.LOW),
                                          (" High ", Level.HIGH), ("MEDIUM", Level.MEDIUM),
                                          (0, Level.LOW), (2, Level.HIGH),
                                          (np.int8(1), Level.MEDIUM)])
def test_parse_level_accepts_levels_names_and_numbers(value, level):
    assert parse_level(value) is level


@pytest.mark.parametrize("value", ["highest", "", 3, -1, True, 1.0, None])
def test_parse_level_names_the_bad_value_and_the_choices(value):
    with pytest.raises(LevelError, match=re.escape(f"bad level {value!r}: expected one of low, "
                                                   "medium, high (or 0-2)")):
        parse_level(value)
