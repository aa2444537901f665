"""The interface packages (sim_fidelity_interfaces/, fallback_interfaces/) as Python sees them
after bootstrap.

simulation_interfaces is checked against the field list of the Kilted release kept in
test/data/reference/ (every type, field, order, type, default and constant); our own packages
against the definitions written down here. A few messages make a round trip through rclpy's
CDR serialization, which exercises the compiled type support and not just the Python classes.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from interface_fields import (
    REPO,
    check_against,
    parse_definition,
    parse_line,
    parse_reference,
    roundtrip,
)

REFERENCE = (Path(__file__).resolve().parent / "data" / "reference"
             / "simulation_interfaces-1.6.1-kilted-fields.txt")


# ----------------------------------------------------------------------------------------
# simulation_interfaces against the reference release

def reference_entries():
    if not REFERENCE.is_file():
        return []
    return sorted(parse_reference(REFERENCE).items())


def test_reference_lists_every_kind():
    entries = dict(reference_entries())
    kinds = {kind for kind, _ in entries}
    assert kinds == {"msg", "srv", "action"}
    assert len(entries) >= 38


def test_vendored_files_are_exactly_the_reference_set():
    """fallback_interfaces/simulation_interfaces has one file per reference type and no others."""
    ext = {"msg": "msg", "srv": "srv", "action": "action"}
    wanted = {f"{kind}/{name}.{ext[kind]}" for kind, name in dict(reference_entries())}
    folder = REPO / "fallback_interfaces" / "simulation_interfaces"
    present = {
        str(p.relative_to(folder)) for p in folder.glob("*/*")
        if p.suffix in (".msg", ".srv", ".action")
    }
    assert present == wanted


@pytest.mark.parametrize(
    "kind,name,parts",
    [pytest.param(k, n, p, id=f"{k}/{n}") for (k, n), p in reference_entries()],
)
def test_simulation_interfaces_match_reference(kind, name, parts):
    check_against("simulation_interfaces", kind, name, parts)


def test_result_codes_used_by_the_project():
    """The Result values docs/platform_notes.md states, independent of the reference file."""
    from simulation_interfaces.msg import Result

    assert (Result.RESULT_FEATURE_UNSUPPORTED, Result.RESULT_OK, Result.RESULT_NOT_FOUND,
            Result.RESULT_INCORRECT_STATE, Result.RESULT_OPERATION_FAILED) == (0, 1, 2, 3, 4)


# ----------------------------------------------------------------------------------------
# ackermann_msgs and sim_fidelity_interfaces against their definitions

OWN = {
    ("ackermann_msgs", "msg", "AckermannDrive"): """
        float32 steering_angle
        float32 steering_angle_velocity
        float32 speed
        float32 acceleration
        float32 jerk""",
    ("ackermann_msgs", "msg", "AckermannDriveStamped"): """
        std_msgs/Header header
        AckermannDrive drive""",
    ("sim_fidelity_interfaces", "srv", "SetLever"): """
        uint8 LEVER_DYNAMICS=0
        uint8 LEVER_COLLISION=1
        uint8 LEVER_GRAVITY=2
        uint8 LEVER_ACTUATION=3
        uint8 LEVER_SENSOR=4
        uint8 LEVER_SCRIPT=5
        string[] entities
        uint8 lever
        bool enabled
        string owner
        ---
        simulation_interfaces/Result result
        string[] failed_entities""",
    ("sim_fidelity_interfaces", "srv", "GetLevers"): """
        string[] entities
        uint8 lever
        bool original
        ---
        simulation_interfaces/Result result
        uint8[] supported_levers
        bool[] enabled""",
    ("sim_fidelity_interfaces", "msg", "Performance"): """
        builtin_interfaces/Time stamp
        float64 sim_time
        uint64 steps
        float64 real_time_factor
        float64 step_time_ms
        float64 window_s""",
    ("sim_fidelity_interfaces", "srv", "SetFidelity"): """
        uint8 LEVEL_LOW=0
        uint8 LEVEL_MEDIUM=1
        uint8 LEVEL_HIGH=2
        uint8 MODE_HOLD=0
        uint8 MODE_RELEASE=1
        string[] trees
        uint8 level
        uint8 mode
        ---
        bool success
        string message
        string[] trees""",
    ("sim_fidelity_interfaces", "srv", "GetFidelity"): """
        string[] trees
        ---
        bool success
        string message
        string[] trees
        uint8[] levels
        bool[] held""",
    ("sim_fidelity_interfaces", "msg", "FidelitySummary"): """
        builtin_interfaces/Time stamp
        uint32 high
        uint32 medium
        uint32 low
        uint32 changed
        float64 manager_time_ms
        float64 sim_time""",
    ("sim_fidelity_interfaces", "msg", "KernelFired"): """
        builtin_interfaces/Time stamp
        float64 sim_time
        int32 kernel
        float64 activation
        float64[] state_before
        float64[] state_after""",
    # model conductor (paper 003): log messages, the model interface, the conductor's services
    ("sim_fidelity_interfaces", "msg", "ActionAnnotation"): """
        builtin_interfaces/Time stamp
        string operation
        string[] arg_names
        string[] arg_values""",
    ("sim_fidelity_interfaces", "msg", "AttributeValues"): """
        string[] entities
        string[] attributes
        string values_json""",
    ("sim_fidelity_interfaces", "msg", "ModelOutput"): """
        builtin_interfaces/Time stamp
        string model
        uint32 model_id
        string[] entities
        geometry_msgs/Pose[] poses
        geometry_msgs/Twist[] twists
        string values_json""",
    ("sim_fidelity_interfaces", "msg", "ModelEvent"): """
        builtin_interfaces/Time stamp
        string model
        string event
        string data_json""",
    ("sim_fidelity_interfaces", "msg", "ResponsibilityChange"): """
        builtin_interfaces/Time stamp
        string entity
        string attribute
        string from_model
        string to_model
        string cause""",
    ("sim_fidelity_interfaces", "srv", "RegisterModel"): """
        uint32 model_id
        string name
        string stepping
        float64 period
        ---
        bool success
        string message
        string kind
        string[] entities
        string[] attributes""",
    ("sim_fidelity_interfaces", "srv", "GetModelParameters"): """
        ---
        bool success
        string message
        string[] names
        string[] kinds
        string[] of
        bool[] optional""",
    ("sim_fidelity_interfaces", "srv", "InitialiseModel"): """
        string parameters_json
        ---
        bool success
        string message""",
    ("sim_fidelity_interfaces", "srv", "ModelLifecycle"): """
        uint8 START=1
        uint8 STOP=2
        uint8 command
        ---
        bool success
        string message""",
    ("sim_fidelity_interfaces", "srv", "StepModel"): """
        float64 dt
        builtin_interfaces/Time stamp
        AttributeValues follow
        string reads_json
        string inputs_json
        ---
        bool success
        string message
        AttributeValues values
        ModelOutput output
        ModelEvent[] events""",
    ("sim_fidelity_interfaces", "srv", "GetModelState"): """
        ---
        bool success
        string message
        AttributeValues values
        ModelOutput output""",
    ("sim_fidelity_interfaces", "srv", "SetResponsibility"): """
        uint8 TAKE=1
        uint8 RELEASE=2
        uint8 action
        string entity
        string attribute
        string value_json
        ---
        bool success
        string message""",
    ("sim_fidelity_interfaces", "srv", "NotifyModel"): """
        ModelEvent event
        ---
        bool success
        string message""",
    ("sim_fidelity_interfaces", "srv", "StartEnsemble"): """
        uint8 SOURCE_NONE=0
        uint8 SOURCE_LIVE=1
        uint8 SOURCE_BAG=2
        string[] objects
        string[] types
        geometry_msgs/Pose[] poses
        uint8 source
        string bag
        float64 duration
        string log
        ---
        bool success
        string message
        string[] models
        uint32[] model_ids""",
    ("sim_fidelity_interfaces", "srv", "StopEnsemble"): """
        ---
        bool success
        string message
        float64 sim_time
        uint64 steps
        uint32 transfers
        string log""",
    ("sim_fidelity_interfaces", "srv", "ActivateTrigger"): """
        string trigger
        string[] arg_names
        string[] arg_values
        ---
        bool success
        string message
        bool fired""",
}


@pytest.mark.parametrize("pkg,kind,name", [pytest.param(*k, id="/".join(k)) for k in OWN])
def test_own_interfaces(pkg, kind, name):
    check_against(pkg, kind, name, parse_definition(OWN[(pkg, kind, name)]))


def test_parser_rejects_garbage():
    """The checker itself must not silently accept a line it does not understand."""
    with pytest.raises(ValueError):
        parse_line("this is not a field")


# ----------------------------------------------------------------------------------------
# Round trips through rclpy serialization (compiled C type support)

def test_roundtrip_entities_states():
    from geometry_msgs.msg import Point, Pose, Quaternion
    from simulation_interfaces.msg import EntityState, Result
    from simulation_interfaces.srv import GetEntitiesStates

    states = []
    for i in range(3):
        s = EntityState()
        s.header.frame_id = "world"
        s.header.stamp.sec = 7
        s.pose = Pose(position=Point(x=float(i), y=-1.5, z=0.25), orientation=Quaternion(w=1.0))
        s.twist.angular.z = 0.5 * i
        states.append(s)
    resp = GetEntitiesStates.Response(
        result=Result(result=Result.RESULT_OK, error_message=""),
        entities=["box_0", "box_1", "robot"], states=states)
    back = roundtrip(resp)
    assert back.states[2].pose.position.x == 2.0
    assert back.entities[-1] == "robot"


def test_roundtrip_spawn_and_step():
    from simulation_interfaces.action import SimulateSteps
    from simulation_interfaces.srv import SpawnEntity, StepSimulation

    req = SpawnEntity.Request(name="crate", allow_renaming=True, uri="model://crate",
                              entity_namespace="/crate")
    req.initial_pose.pose.position.z = 1.0
    roundtrip(req)
    assert roundtrip(StepSimulation.Request()).steps == 1
    roundtrip(SimulateSteps.Feedback(completed_steps=3, remaining_steps=7))


def test_roundtrip_own_types():
    from ackermann_msgs.msg import AckermannDriveStamped

    from sim_fidelity_interfaces.msg import KernelFired
    from sim_fidelity_interfaces.srv import GetLevers, SetLever

    cmd = AckermannDriveStamped()
    cmd.header.frame_id = "base_link"
    cmd.drive.speed = 1.5
    cmd.drive.steering_angle = -0.25
    assert roundtrip(cmd).drive.speed == pytest.approx(1.5)

    roundtrip(SetLever.Request(entities=["wall_*", "box_3"], lever=SetLever.Request.LEVER_GRAVITY,
                               enabled=False))
    resp = GetLevers.Response(supported_levers=[0, 1, 2], enabled=[True, False])
    resp.result.result = 1
    back = roundtrip(resp)
    assert list(back.supported_levers) == [0, 1, 2] and list(back.enabled) == [True, False]

    fired = KernelFired(sim_time=12.5, kernel=4, activation=0.8,
                        state_before=[0.0, 1.0, 2.0], state_after=[0.1, 1.1, 2.1])
    back = roundtrip(fired)
    assert list(back.state_after) == pytest.approx([0.1, 1.1, 2.1])


def test_roundtrip_model_step():
    """A model step's answer nests the conductor's messages (values, output, events)."""
    from geometry_msgs.msg import Pose

    from sim_fidelity_interfaces.msg import AttributeValues, ModelEvent, ModelOutput
    from sim_fidelity_interfaces.srv import StepModel

    res = StepModel.Response(
        success=True, values=AttributeValues(entities=["cup"], attributes=["temperature"],
                                             values_json="[71.5]"),
        output=ModelOutput(model="cup", model_id=3, entities=["cup"], poses=[Pose()]),
        events=[ModelEvent(model="cup", event="cooled", data_json="{}")])
    back = roundtrip(res)
    assert back.output.model_id == 3 and back.events[0].event == "cooled"
