"""Triggers, evaluators and the safe expression language of the conductor, on a real world."""
from __future__ import annotations

import textwrap

import pytest
from sdf_snippets import GROUND, ball_model, box_model, world

from sim_fidelity.model_conductor import evaluators
from sim_fidelity.model_conductor.config import build_conductor
from sim_fidelity.model_conductor.data_sources import ListSource, action
from sim_fidelity.model_conductor.errors import ExpressionError
from sim_fidelity.model_conductor.expressions import parse
from sim_fidelity.model_conductor.model import POSE


def scene(tmp_path, ball_z=0.05, cube_x=2.0) -> str:
    """Ground, a ball, a cube ``cube_x`` away and a static 'gripper' 0.25 m above the ball."""
    sdf = world("table", GROUND, ball_model("ball", 0, 0, ball_z),
                box_model("cube", cube_x, 0, 0.2),
                box_model("gripper", 0.0, 0, 0.3, edge=0.05, static=True))
    (tmp_path / "table.sdf").write_text(sdf)
    return "table.sdf"


class EventRecorder:
    """A conductor listener that keeps every event as (model, event, time, data)."""

    def __init__(self, events: list):
        self.events = events

    def on_output(self, *args):
        pass

    def on_transfer(self, change):
        pass

    def on_event(self, time, model, event, data):
        self.events.append((model, event, time, data))


def write(tmp_path, text: str):
    path = tmp_path / "ensemble.yaml"
    path.write_text(textwrap.dedent(text))
    return path


MODELS = """
models:
  world: {type: simulator, main: true, parameters: {world: table.sdf}}
  hand: {type: carrier, parameters: {entities: [ball, cube], velocity: [0, 0, 0.5]}}
"""


def test_expressions_are_evaluated_without_eval():
    e = parse("a.b + 2 * c[1] if not flag or x in ['p', 'q'] else -1")
    assert e.names == {"a", "c", "flag", "x"}
    scope = {"a": {"b": 1.5}, "c": [0, 4], "flag": True, "x": "q"}
    assert e.evaluate(scope, lambda *_: None) == 9.5
    assert parse("f(1, k=2)").evaluate({}, lambda n, a, k: (n, a, k)) == ("f", [1], {"k": 2})
    for bad in ("__import__('os').system('true')", "(lambda: 1)()", "[x for x in y]",
                "a.__class__", "open"):
        with pytest.raises(ExpressionError):
            expression = parse(bad)
            expression.evaluate({"a": 1, "y": []}, lambda *_: (_ for _ in ()).throw(
                ExpressionError("no functions")))
    with pytest.raises(ExpressionError, match=r"exponent 1000 is larger"):
        parse("2 ** 1000").evaluate({}, lambda *_: None)
    with pytest.raises(ExpressionError, match="undefined name 'nope'"):
        parse("nope + 1").evaluate({}, lambda *_: None)


def test_service_trigger_with_failing_precondition_does_nothing_then_fires(tmp_path):
    scene(tmp_path)
    path = write(tmp_path, MODELS + """
variables: {reach: 0.1, holding: null}
triggers:
  grasp:
    on: {service: grasp}
    let: {obj: "nearest_object('gripper', reach)"}
    when: ["obj != None", "is_free('hand')"]
    do:
      - transfer: {entity: $obj, attribute: pose, to: hand}
      - set: {holding: "obj"}
""")
    conductor, _ = build_conductor(path)
    history = conductor.handler.history
    conductor.tick()
    conductor.call("grasp")
    conductor.tick()
    assert conductor.holder("ball", POSE) == "world" and conductor.variables["holding"] is None
    assert history[-1].fired is False and history[-1].reason == "'obj != None' is false"

    conductor.variables["reach"] = 0.5  # the ball is 0.25 m below the gripper
    conductor.call("grasp")
    conductor.tick()
    assert history[-1].fired and history[-1].bindings == {"obj": "ball"}
    assert conductor.holder("ball", POSE) == "hand" and conductor.variables["holding"] == "ball"
    assert conductor.responsibilities.log[-1].cause == "grasp"

    conductor.call("grasp")  # the hand is no longer free
    conductor.tick()
    assert history[-1].reason == "'is_free('hand')' is false"
    conductor.stop()


def test_nearest_object_binds_the_nearest_entity_within_reach(tmp_path):
    scene(tmp_path)
    conductor, _ = build_conductor(write(tmp_path, MODELS))
    assert evaluators.nearest_object(conductor, "gripper", 0.5) == "ball"
    assert evaluators.nearest_object(conductor, "gripper", 0.1) is None
    assert evaluators.nearest_object(conductor, "gripper", 5.0, pattern="cu") == "cube"
    assert evaluators.nearest_object(conductor, "ball") == "cube"  # never itself
    assert evaluators.distance(conductor, "ball", "gripper") == pytest.approx(0.25, abs=0.01)
    assert evaluators.holder(conductor, "cube") == "world" and evaluators.is_free(conductor,
                                                                                "hand")
    with pytest.raises(ExpressionError, match="no model knows the pose of 'ghost'"):
        evaluators.distance(conductor, "ghost", "ball")


def test_action_annotation_activates_a_transfer_of_its_argument(tmp_path):
    scene(tmp_path)
    path = write(tmp_path, MODELS + """
triggers:
  pick:
    on: {action: move_hand}
    let: {obj: "args.object"}
    when: "holder(obj) == 'world'"
    do: [{transfer: {entity: $obj, to: hand}}]
  put:
    on: {action: release}
    do: [{transfer: {entity: cube, to: world}}]
""")
    conductor, _ = build_conductor(path)
    source = ListSource([action(0.05, "move_hand", {"object": "cube"}),
                         action(0.10, "wave"),
                         action(0.15, "release")])
    conductor.run(source=source)
    moves = [(t.entity, t.attribute, t.to_model, t.cause, round(t.time, 3))
             for t in conductor.responsibilities.log if t.cause != "config"]
    assert moves == [("cube", "pose", "hand", "pick", 0.05), ("cube", "twist", "hand", "pick",
                                                              0.05),
                     ("cube", "pose", "world", "put", 0.15), ("cube", "twist", "world", "put",
                                                              0.15)]


def test_topic_value_and_event_triggers(tmp_path):
    """A monitor's output becomes true once (rising edge) and its event notifies a model."""
    scene(tmp_path, ball_z=1.0, cube_x=0.3)
    path = write(tmp_path, MODELS + """
  monitor: {type: proximity_monitor, parameters: {reference: ball, distance: 0.45}}
variables: {seen: null, ready: 0}
triggers:
  landed:
    on: {topic: monitor, value: "monitor.near"}
    do: [{set: {seen: "monitor.object"}}]
  told:
    on: {event: near, model: monitor}
    do:
      - notify: {model: hand, event: get_ready, data: {object: $event}}
      - set: {ready: "ready + 1"}
""")
    conductor, _ = build_conductor(path)
    events = []

    conductor.add_listener(EventRecorder(events))
    conductor.run(duration=0.6)  # the ball falls from 1 m onto the ground beside the cube
    # emitted, then notified
    assert [(m, e) for m, e, _, _ in events] == [("monitor", "near"), ("hand", "get_ready")]
    fired = [a.trigger for a in conductor.handler.history if a.fired]
    assert fired.count("landed") == 1 and fired.count("told") == 1
    assert conductor.variables["seen"] == "cube" and conductor.variables["ready"] == 1


def test_variables_are_substituted_inside_nested_effect_fields(tmp_path):
    """``$name`` inside a list or mapping of a notify's data is the variable's value (the load
    check follows nested values, so the run must too)."""
    scene(tmp_path, ball_z=1.0, cube_x=0.3)
    path = write(tmp_path, MODELS + """
  monitor: {type: proximity_monitor, parameters: {reference: ball, distance: 0.45}}
variables: {who: null}
triggers:
  landed:
    on: {topic: monitor, value: "monitor.near"}
    do:
      - set: {who: "monitor.object"}
      - notify: {model: hand, event: look, data: {objects: [$who, fixed], at: {name: $who}}}
""")
    conductor, _ = build_conductor(path)

    events = []
    conductor.add_listener(EventRecorder(events))
    conductor.run(duration=0.6)
    told = [data for _, event, _, data in events if event == "look"]
    assert told == [{"objects": ["cube", "fixed"], "at": {"name": "cube"}}]
