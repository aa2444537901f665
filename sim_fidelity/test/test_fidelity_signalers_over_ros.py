"""The per-step signalers with a simulator reached over ROS (``RosSimulator``, in this process;
no server is needed: nothing here asks it anything): stillness falls back to ticks and says why,
and the joint-command signaler reads no engine, so its levels follow the commands the manager
node hears on the joint's topic (:meth:`JointCommandSignaler.observe`). The manager node's own
wiring is tested over DDS in test_truck_plungers_observed.py."""
from __future__ import annotations

import numpy as np
import pytest
from ros_processes import next_domain

pytest.importorskip("simulation_interfaces.srv", reason="interface packages not built")
from sim_fidelity.fidelity_manager import Level  # noqa: E402
from sim_fidelity.fidelity_manager.signalers import JointCommandSignaler  # noqa: E402
from sim_fidelity.fidelity_manager.signalers.base import check_params  # noqa: E402
from sim_fidelity.fidelity_manager.signalers.joint_command import (  # noqa: E402
    engine_command_reader,
)
from sim_fidelity.fidelity_manager.signalers.stillness import step_hook_unavailable  # noqa: E402
from sim_fidelity.fidelity_manager.trees import Tree  # noqa: E402
from sim_fidelity.simulator.ros.client import RosSimulator  # noqa: E402

H, L = Level.HIGH, Level.LOW
JOINT = "unloader::plunger_extend"


@pytest.fixture(scope="module")
def ros_sim():
    with RosSimulator(domain_id=next_domain(), timeout=1.0) as sim:
        yield sim


def test_stillness_over_ros_is_counted_at_ticks_and_the_reason_is_given(ros_sim):
    assert step_hook_unavailable(ros_sim, ["packet_0"]) == (
        "the simulator steps out of the manager's sight (over ROS, or no step hooks)")


def test_joint_commands_over_ros_come_from_the_topic_the_node_subscribes(ros_sim):
    assert engine_command_reader(ros_sim, JOINT) is None
    trees = [Tree(f"plungers/{i}", "plungers", "plungers", "", ()) for i in range(3)]
    params = check_params(JointCommandSignaler.PARAMS, {"joint": JOINT, "threshold": 0.01})
    signaler = JointCommandSignaler(trees, params, ros_sim)
    assert signaler.read is None
    assert signaler.topic == "/model/unloader/joint/plunger_extend/cmd_pos"
    empty, current = np.zeros((0, 7)), np.full(3, L, np.int8)
    assert signaler.update(0.0, empty, empty[:, :6], current).tolist() == [L] * 3
    for command, expected in [(0.15, H), (0.01, L), (0.02, H), (0.0, L)]:
        signaler.observe(command)  # what the node's subscription calls
        assert signaler.update(0.0, empty, empty[:, :6], current).tolist() == [expected] * 3
