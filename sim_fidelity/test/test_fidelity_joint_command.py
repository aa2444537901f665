"""The joint-command signaler in process (``signalers/joint_command.py``, paper 000 R4): trees
follow the side of the threshold a joint's position command is on, the topic it listens to over
ROS, and the configuration errors that name the key (the survivors of the mutation run in
docs/testing.md). A real engine with a servo pendulum (``arm::hinge``) and two boxes."""
from __future__ import annotations

import pytest
from sdf_snippets import box_model, servo_pendulum, world

from sim_fidelity.fidelity_manager import FidelityConfig, FidelityManager, Level
from sim_fidelity.fidelity_manager.errors import ConfigError
from sim_fidelity.fidelity_manager.signalers.joint_command import command_topic
from sim_fidelity.simulator.engine import MujocoEngine

H, L = Level.HIGH, Level.LOW
THRESHOLD = 0.3
SERVO = "arm::gz::sim::systems::JointPositionController"


def arm_world() -> MujocoEngine:
    return MujocoEngine.from_string(world("arm_cell", servo_pendulum("arm", 0.0),
                                          box_model("box_0", 3.0, 0.0, 0.2, 0.2),
                                          box_model("box_1", 4.0, 0.0, 0.2, 0.2)))


def config(joint: str) -> FidelityConfig:
    return FidelityConfig.from_dict({
        "signalers": {"arm": {"type": "joint_command", "joint": joint, "threshold": THRESHOLD}},
        "trees": {"boxes": {"signaler": "arm", "name": "{key}",
                            "objects": [{"type": "shape", "pattern": r"(box_\d)"}]}},
        "presets": {"on": {}}, "default_preset": "on"})


def levels(m: FidelityManager) -> set[Level]:
    return {level for level, _ in m.get_fidelity(["box_0", "box_1"]).values()}


def test_the_trees_follow_the_side_of_the_threshold_the_command_is_on():
    """Above the threshold HIGH; at it or below LOW (the parameter's own words: "once it falls
    to the threshold or below"); every crossing counts, in both directions."""
    sim = arm_world()
    with FidelityManager(sim, config("arm::hinge")) as m:
        assert m.signalers["arm"].topic == "/model/arm/joint/hinge/cmd_pos"
        m.tick()
        assert levels(m) == {L}  # commanded 0 from the start
        for command, expected in [(0.5, H), (THRESHOLD, L), (THRESHOLD + 1e-6, H),
                                  (0.0, L), (0.31, H)]:
            sim.set_joint_commands([SERVO], [command])
            m.tick()
            assert levels(m) == {expected}, command


@pytest.mark.parametrize("joint, message", [
    ("hinge", "'hinge' is not scoped (<model>::<joint>)"),
    ("arm::fix", "'arm::fix' has no position-controller plugin in the world"),
], ids=["unscoped", "no-controller"])
def test_a_joint_the_signaler_cannot_watch_is_a_config_error_naming_its_key(joint, message):
    with pytest.raises(ConfigError) as caught:
        FidelityManager(arm_world(), config(joint))
    assert (caught.value.key, caught.value.message) == ("signalers.arm.joint", message)


@pytest.mark.parametrize("joint, topic", [
    ("unloader::plunger_extend", "/model/unloader/joint/plunger_extend/cmd_pos"),
    ("cell::gripper::slide", "/model/cell/joint/gripper/slide/cmd_pos"),
    ("cell::gripper::hand::finger", "/model/cell/joint/gripper/hand/finger/cmd_pos"),
], ids=["top-level", "nested", "twice-nested"])
def test_the_command_topic_is_the_one_sim_server_names_for_the_joint(joint, topic):
    """``/model/<top-level model>/joint/<the rest, :: as />/cmd_pos`` (model_topics.py)."""
    assert command_topic(joint) == topic


def test_the_command_is_read_from_the_joints_own_actuator_after_a_recompile():
    """Deleting a model whose servo comes before the watched one renumbers the actuators: the
    signaler still reads its own joint's command, not its neighbour's (a bug found by the
    mutation work: the actuator's number was kept from the start)."""
    sim = MujocoEngine.from_string(world("three_arms", servo_pendulum("arm_a", 0.0),
                                         servo_pendulum("arm", 0.0), servo_pendulum("arm_c", 0.0),
                                         box_model("box_0", 3.0, 0.0, 0.2, 0.2),
                                         box_model("box_1", 4.0, 0.0, 0.2, 0.2)))
    with FidelityManager(sim, config("arm::hinge")) as m:
        sim.set_joint_commands([SERVO], [0.5])
        m.tick()
        assert levels(m) == {H}
        sim.delete("arm_a")
        m.tick()
        assert levels(m) == {H}  # arm still commanded 0.5 (arm_c, now where arm was, 0)
        sim.set_joint_commands([SERVO, SERVO.replace("arm", "arm_c", 1)], [0.0, 0.9])
        m.tick()
        assert levels(m) == {L}
