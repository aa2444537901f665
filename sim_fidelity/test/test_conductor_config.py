"""The ensemble YAML: what a good file builds, and the file/key/reason of every bad one."""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from sdf_snippets import GROUND, box_model, world

from sim_fidelity.model_conductor import evaluators
from sim_fidelity.model_conductor.config import (
    build_conductor,
    load_config,
    parse_config_text,
)
from sim_fidelity.model_conductor.demo_models import Carrier
from sim_fidelity.model_conductor.errors import ConductorConfigError
from sim_fidelity.model_conductor.model import POSE, TWIST, Stepping

GOOD = """
conductor: {step: 0.02}
models:
  world: {type: simulator, main: true, parameters: {world: w.sdf}}
  hand: {type: carrier, stepping: clock, period: 0.04, parameters: {entities: [box]}}
responsibilities: {box: {pose: hand}}
variables: {reach: 0.2}
evaluators:
  near: {params: [a, b], expression: "distance(a, b) < reach"}
triggers:
  t:
    on: {service: go}
    when: "near('box', 'box')"
    do: [{transfer: {entity: box, to: world}}]
"""


def write(tmp_path, text: str):
    (tmp_path / "w.sdf").write_text(world("w", GROUND, box_model("box", 0, 0, 1.0)))
    path = tmp_path / "e.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_a_good_config_builds_the_ensemble(tmp_path):
    conductor, config = build_conductor(write(tmp_path, GOOD))
    assert conductor.step_size == 0.02 and config.named["near"].params == ("a", "b")
    hand = conductor.model("hand")
    assert isinstance(hand, Carrier) and hand.stepping == Stepping.CLOCK and hand.period == 0.04
    assert conductor.holder("box", POSE) == conductor.holder("box", TWIST) == "hand"
    conductor.call("go")  # a named evaluator with parameters, evaluated through the built-in
    assert conductor.holder("box", POSE) == "world"


BAD = [
    ("models: {}", "models", "an ensemble needs models"),
    ("models: {a: {type: integrator}}", "models", "exactly one model must be main: true; none"),
    ("colours: 1\n" + GOOD, "colours", "unknown key"),
    (GOOD.replace("type: carrier", "type: teleporter"), "models.hand.type",
     "unknown model type 'teleporter'"),
    (GOOD.replace("type: carrier", "type: 'no_such_pkg.mod:Thing'"), "models.hand.type",
     "cannot be loaded"),
    (GOOD.replace("stepping: clock", "stepping: sometimes"), "models.hand.stepping",
     "'sometimes' is not a stepping mode"),
    (GOOD.replace("main: true,", "main: true, stepping: free,"), "models.world.stepping",
     "the main model times the others"),
    (GOOD.replace("step: 0.02", "step: -1"), "conductor.step", "must be a positive number"),
    (GOOD.replace("{pose: hand}", "{pose: arm}"), "responsibilities.box.pose",
     "unknown model 'arm'"),
    (GOOD.replace("to: world", "to: elsewhere"), "triggers.t.do[0].transfer.to",
     "unknown model 'elsewhere'"),
    (GOOD.replace("near('box', 'box')", "far('box')"), "triggers.t.when[0]",
     "undefined evaluator 'far'"),
    (GOOD.replace("near('box', 'box')", "distance('box', hand_pose) < 1"), "triggers.t.when[0]",
     "undefined variable 'hand_pose'"),
    (GOOD.replace("distance(a, b) < reach", "distance(a, b) < radius"), "evaluators.near",
     "undefined variable 'radius'"),
    (GOOD.replace("entity: box", "entity: $thing"), "triggers.t.do[0].transfer",
     "undefined variable '$thing'"),
    (GOOD.replace("on: {service: go}", "on: {topic: nobody, value: 'x'}"), "triggers.t.on.topic",
     "unknown model 'nobody'"),
    (GOOD.replace("on: {service: go}", "on: {sometime: go}"), "triggers.t.on",
     "needs exactly one of topic, service, action, event"),
    (GOOD.replace("when: \"near('box', 'box')\"", "when: \"import os\""), "triggers.t.when[0]",
     "is not an expression"),
    (GOOD.replace("do: [{transfer: {entity: box, to: world}}]",
                  "do: [{transfer: {entity: box, to: world}},"
                  " {transfer: {entity: box, to: hand}}]"),
     "triggers.t.do[1].transfer", "pose of box is transferred twice in one activation"),
    (GOOD.replace("do: [{transfer: {entity: box, to: world}}]",
                  "do: [{set: {undeclared: '1'}}]"), "triggers.t.do[0].set.undeclared",
     "sets an undeclared variable"),
    (GOOD.replace("do: [{transfer: {entity: box, to: world}}]", "do: [{call: {service: again}}]")
     + "  u:\n    on: {service: again}\n    do: [{call: {service: go}}]\n",
     "triggers.t.do", "calls form a cycle: t -> u -> t"),
    (GOOD.replace("do: [{transfer: {entity: box, to: world}}]", "do: [{call: {service: nope}}]"),
     "triggers.t.do[0].call.service", "no trigger is activated by service 'nope'"),
]


@pytest.mark.parametrize("text,key,reason", BAD, ids=[b[1] + ":" + b[2][:20] for b in BAD])
def test_bad_configs_name_file_key_and_reason(tmp_path, text, key, reason):
    path = write(tmp_path, text)
    with pytest.raises(ConductorConfigError) as info:
        build_conductor(path)
    assert info.value.file == str(path) and info.value.key == key
    assert reason in info.value.message


def test_bad_configs_found_at_build_and_initialisation(tmp_path):
    path = write(tmp_path, GOOD.replace("{box: {pose: hand}}", "{crate: {pose: hand}}"))
    with pytest.raises(ConductorConfigError, match="responsibilities: no model represents entity "
                                                   "'crate'"):
        build_conductor(path)
    path = write(tmp_path, GOOD.replace("world: w.sdf", "world: missing.sdf"))
    with pytest.raises(ConductorConfigError, match=r"models.world: model 'world': world file"):
        build_conductor(path)
    with pytest.raises(ConductorConfigError, match="no such file"):
        load_config(tmp_path / "absent.yaml")
    (tmp_path / "broken.yaml").write_text("models: [unclosed")
    with pytest.raises(ConductorConfigError, match="not valid YAML"):
        load_config(tmp_path / "broken.yaml")


def test_evaluator_plug_in_through_the_entry_point_group(tmp_path, monkeypatch):
    """A distribution on sys.path that declares an evaluator in ``sim_fidelity.evaluators``."""
    (tmp_path / "simfid_demo_evaluators.py").write_text(
        "def always_seven(ctx, *args):\n    return 7\n")
    dist = tmp_path / "simfid_demo_evaluators-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: simfid-demo-evaluators\n"
                                   "Version: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[sim_fidelity.evaluators]\nseven = simfid_demo_evaluators:always_seven\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "seven" in evaluators.known()
    path = write(tmp_path, GOOD.replace("near('box', 'box')", "seven() == 7"))
    conductor, _ = build_conductor(path)
    conductor.call("go")
    assert conductor.holder("box", POSE) == "world"
    assert conductor.handler.history[-1].fired


def test_the_example_of_docs_conductor_md_is_a_valid_config():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "conductor.md").read_text()
    example = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    config = parse_config_text(example, "docs/conductor.md")
    assert [t.name for t in config.triggers] == ["grasp", "drop"]
    assert config.responsibilities == {("cube", "pose"): "hand"}


def test_the_scene_section_places_objects_at_start(tmp_path):
    text = GOOD.replace("responsibilities: {box: {pose: hand}}",
                        "scene: {box: {type: crate, pose: [1, 2, 3, 0, 0, 1.0]}}")
    conductor, config = build_conductor(write(tmp_path, text))
    assert config.scene["box"].type == "crate"
    pose = conductor.model("world").value("box", POSE)
    np.testing.assert_allclose(pose[:3], [1, 2, 3], atol=1e-12)
    np.testing.assert_allclose(pose[3:], [0, 0, np.sin(0.5), np.cos(0.5)], atol=1e-12)
    path = write(tmp_path, GOOD + "scene: {table: {pose: [0, 0, 0]}}\n")
    with pytest.raises(ConductorConfigError, match="scene: scene object 'table' has a pose but "
                                                   "no model represents its pose"):
        build_conductor(path)
    for bad in ("[1, 2]", "[1, 2, 3, 0, 0, 0, 0]", "[a, b, c]"):
        path = write(tmp_path, GOOD + f"scene: {{box: {{pose: {bad}}}}}\n")
        with pytest.raises(ConductorConfigError) as info:
            build_conductor(path)
        assert info.value.key == "scene.box.pose"
