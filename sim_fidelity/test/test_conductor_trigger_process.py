"""The trigger process in detail (paper 003, section 3.3.1), on a small ensemble of Python models:
what each kind of activation binds, what each effect does with its fields, the history it keeps,
and the errors it raises with the trigger and the field they concern."""
from __future__ import annotations

import pytest
from conductor_cases import ensemble

from sim_fidelity.model_conductor.conductor import Conductor
from sim_fidelity.model_conductor.data_sources import DataMessage, action
from sim_fidelity.model_conductor.errors import (
    ConductorConfigError,
    ConductorError,
    ExpressionError,
)
from sim_fidelity.model_conductor.expressions import parse
from sim_fidelity.model_conductor.model import POSE, TWIST
from sim_fidelity.model_conductor.triggers import (
    Activation,
    Activity,
    Effect,
    Trigger,
    TriggerProcess,
)


def history(conductor: Conductor) -> list[Activity]:
    return conductor.handler.history


def test_a_service_call_binds_its_arguments_and_fires_only_its_own_triggers():
    conductor, _ = ensemble("""
        variables: {got: null}
        triggers:
          grasp:
            on: {service: grasp}
            let: {obj: "args.object"}
            do: [{transfer: {entity: $obj, to: hand}}, {set: {got: "args"}}]
        """)
    conductor.call("other", {"object": "ball"})  # no trigger listens to it
    assert history(conductor) == [] and conductor.holder("ball", POSE) == "world"
    conductor.tick()
    conductor.call("grasp", {"object": "ball"})  # running: handled at the end of the tick
    conductor.tick()
    assert history(conductor) == [Activity(0.02, "grasp", True, "", {"obj": "ball"})]
    assert conductor.holder("ball", POSE) == "hand" and conductor.holder("ball", TWIST) == "hand"
    assert conductor.variables["got"] == {"object": "ball"}
    assert conductor.responsibilities.log[-1].time == 0.02
    conductor.stop()


def test_an_action_binds_its_operation_and_arguments_which_default_to_none_given():
    conductor, _ = ensemble("""
        variables: {seen: null}
        triggers:
          wave:
            on: {action: wave}
            let: {op: "operation", n: "len(args)"}
            do: [{set: {seen: "[operation, args]"}}]
        """)
    conductor.deliver([action(0.0, "wave", {"hand": "left"})])
    assert conductor.variables["seen"] == ["wave", {"hand": "left"}]
    # an annotation whose message has no arguments at all (a recorded one, say)
    conductor.deliver([DataMessage(0.0, "/action_sequence", "action", {"operation": "wave"})])
    assert conductor.variables["seen"] == ["wave", {}]
    conductor.deliver([action(0.0, "bow")])
    assert [a.bindings for a in history(conductor)] == [{"op": "wave", "n": 1},
                                                        {"op": "wave", "n": 0}]


def test_an_event_activates_only_with_its_name_from_its_model_and_binds_the_sender():
    conductor, panel = ensemble("""
        variables: {who: null, what: null}
        triggers:
          told:
            on: {event: near, model: panel}
            do: [{set: {who: "event.model", what: "event.object"}}]
        """)
    conductor.start()
    panel.emit("far", {"object": "ball"})
    conductor.model("hand").emit("near", {"object": "ball"})
    conductor.tick()
    assert history(conductor) == []
    panel.emit("near", {"object": "ball"})
    conductor.tick()
    assert [a.trigger for a in history(conductor)] == ["told"]
    assert (conductor.variables["who"], conductor.variables["what"]) == ("panel", "ball")
    conductor.stop()


def test_a_topic_trigger_fires_on_each_rising_edge_of_its_models_output_only():
    conductor, panel = ensemble("""
        variables: {objects: []}
        triggers:
          near:
            on: {topic: panel, value: "output.near"}
            do: [{set: {objects: "objects + [output.object]"}}]
        """)
    panel.shown = {"near": True, "object": "ball"}  # true from the first output on
    for near in (True, True, False, True, True):
        panel.shown["near"] = near
        conductor.tick()
    assert conductor.variables["objects"] == ["ball", "ball"]
    assert [round(a.time, 6) for a in history(conductor)] == [0.01, 0.04]
    conductor.stop()


def test_a_failed_precondition_is_kept_with_its_text_and_the_bindings():
    conductor, _ = ensemble("""
        triggers:
          grasp:
            on: {service: grasp}
            let: {obj: "args.object", who: "holder(obj)"}
            when: ["who == 'hand'"]
            do: [{transfer: {entity: $obj, to: world}}]
        """)
    conductor.tick()
    conductor.call("grasp", {"object": "ball"})
    conductor.tick()
    conductor.stop()
    assert history(conductor) == [Activity(0.02, "grasp", False, "'who == 'hand'' is false",
                                           {"obj": "ball", "who": "world"})]


def test_transfer_of_one_attribute_moves_that_attribute_and_evaluators_take_keywords():
    conductor, _ = ensemble("""
        variables: {pose_by: null, twist_by: null}
        triggers:
          spin:
            on: {service: spin}
            do:
              - transfer: {entity: ball, attribute: twist, to: hand}
              - set: {pose_by: "holder('ball')", twist_by: "holder('ball', attribute='twist')"}
        """)
    conductor.call("spin")
    assert conductor.holder("ball", POSE) == "world" and conductor.holder("ball", TWIST) == "hand"
    assert (conductor.variables["pose_by"], conductor.variables["twist_by"]) == ("world", "hand")


def test_notify_passes_its_data_with_variables_set_earlier_in_the_same_activation():
    conductor, panel = ensemble("""
        variables: {count: 0}
        triggers:
          ping:
            on: {service: ping}
            do:
              - set: {count: "count + 1"}
              - notify: {model: panel, event: ping, data: {n: $count, label: fixed}}
              - notify: {model: panel, event: bare}
        """)
    conductor.call("ping")
    conductor.call("ping")
    assert panel.heard == [("ping", {"n": 1, "label": "fixed"}), ("bare", {}),
                           ("ping", {"n": 2, "label": "fixed"}), ("bare", {})]


def test_call_activates_the_service_trigger_with_the_resolved_arguments():
    conductor, _ = ensemble("""
        variables: {got: null, bare: null}
        triggers:
          go:
            on: {service: go}
            let: {obj: "args.object"}
            do: [{call: {service: fetch, args: {object: $obj, n: 2}}}, {call: {service: poke}}]
          fetch:
            on: {service: fetch}
            do: [{set: {got: "args"}}]
          poke:
            on: {service: poke}
            do: [{set: {bare: "args"}}]
        """)
    conductor.call("go", {"object": "ball"})
    assert conductor.variables["got"] == {"object": "ball", "n": 2}
    assert conductor.variables["bare"] == {}
    assert [a.trigger for a in history(conductor)] == ["go", "fetch", "poke"]


def test_safe_functions_take_positional_and_keyword_arguments():
    conductor, _ = ensemble("""
        variables: {big: null, near: null}
        triggers:
          calc:
            on: {service: calc}
            do: [{set: {big: "max(2, 7, 3)", near: "round(2.345, ndigits=1)"}}]
        """)
    conductor.call("calc")
    assert (conductor.variables["big"], conductor.variables["near"]) == (7, 2.3)


def test_a_config_evaluator_binds_its_parameters_and_refuses_a_wrong_call():
    text = """
        evaluators:
          spread: {params: [a, b], expression: "b - a"}
        variables: {d: null}
        triggers:
          calc:
            on: {service: calc}
            do: [{set: {d: "CALL"}}]
        """
    conductor, _ = ensemble(text.replace("CALL", "spread(2, 7)"))
    conductor.call("calc")
    assert conductor.variables["d"] == 5
    for call in ("spread(2)", "spread(2, b=7)"):
        conductor, _ = ensemble(text.replace("CALL", call))
        with pytest.raises(ExpressionError) as e:
            conductor.call("calc")
        assert str(e.value) == ("trigger 'calc': evaluator 'spread' takes 2 positional "
                                f"argument(s) (a, b) (in '{call}')")


@pytest.mark.parametrize("place", ["on", "let", "when", "set"])
def test_an_expression_error_names_the_trigger(place):
    bad, ok = "1 / zero", "True"
    on = (f"{{topic: panel, value: \"{bad}\"}}" if place == "on" else "{service: go}")
    conductor, _ = ensemble(f"""
        variables: {{zero: 0, x: 0}}
        triggers:
          oops:
            on: {on}
            let: {{v: "{bad if place == 'let' else ok}"}}
            when: ["{bad if place == 'when' else ok}"]
            do: [{{set: {{x: "{bad if place == 'set' else ok}"}}}}]
        """)
    with pytest.raises(ExpressionError) as e:
        conductor.tick() if place == "on" else conductor.call("go")
    assert str(e.value) == ("trigger 'oops': ZeroDivisionError: division by zero "
                            "(in '1 / zero')")


def test_expressions_of_every_place_reach_the_evaluators_with_the_conductor():
    conductor, panel = ensemble("""
        variables: {x: null}
        triggers:
          moved:
            on: {topic: panel, value: "holder('ball') == 'hand'"}
            do: [{set: {x: "holder('ball', 'twist')"}}]
        """)
    conductor.tick()
    assert history(conductor) == []
    conductor.transfer("ball", POSE, "hand")
    conductor.tick()
    assert [a.trigger for a in history(conductor)] == ["moved"] and conductor.variables["x"] \
        == "hand"
    conductor.stop()


@pytest.mark.parametrize("effect, field", [
    ("{transfer: {entity: $nothing, to: hand}}", "entity"),
    ("{transfer: {entity: ball, to: $nothing}}", "to"),
    ("{transfer: {entity: ball, attribute: $nothing, to: hand}}", "attribute"),
    ("{notify: {model: $nothing, event: e}}", "model"),
    ("{notify: {model: panel, event: $nothing}}", "event"),
    ("{notify: {model: panel, event: e, data: {k: $nothing}}}", "data.k"),
    ("{call: {service: other, args: {k: $nothing}}}", "args.k"),
])
def test_an_effect_field_whose_variable_is_none_is_an_error_naming_the_field(effect, field):
    conductor, panel = ensemble(f"""
        variables: {{nothing: null}}
        triggers:
          go:
            on: {{service: go}}
            do: [{effect}]
          other:
            on: {{service: other}}
            do: [{{notify: {{model: panel, event: reached}}}}]
        """)
    with pytest.raises(ConductorError) as e:
        conductor.call("go")
    assert str(e.value) == f"trigger 'go': effect field '{field}': variable 'nothing' is None"
    assert panel.heard == [] and conductor.holder("ball", POSE) == "world"


def test_a_variable_in_a_list_of_effect_data_must_be_defined():
    with pytest.raises(ConductorConfigError, match=r"triggers\.go\.do\[0\]\.notify: refers to "
                                                   r"undefined variable '\$nope'"):
        ensemble("""
            triggers:
              go:
                on: {service: go}
                do: [{notify: {model: panel, event: e, data: {objects: [ball, $nope]}}}]
            """)


def test_triggers_built_in_code_report_undefined_variables_and_unknown_functions():
    """The configuration refuses both before a run; a trigger process built in code finds them
    when the trigger fires."""
    conductor, _ = ensemble("")
    effect = Effect("transfer", {"entity": "$ghost", "to": "hand"})
    conductor.handler = TriggerProcess(
        [Trigger("go", Activation("service", "go"), do=(effect,)),
         Trigger("calc", Activation("service", "calc"), let={"v": parse("nope(1)")})], {})
    with pytest.raises(ConductorError) as e:
        conductor.call("go")
    assert str(e.value) == "trigger 'go': effect field 'entity' names undefined variable 'ghost'"
    with pytest.raises(ExpressionError) as e:
        conductor.call("calc")
    assert str(e.value) == "trigger 'calc': unknown function 'nope' (in 'nope(1)')"
