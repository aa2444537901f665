"""The batched ``/get_entities_states`` path (``convert.entity_states``: one header shared, leaves
written into each message's own sub-messages) answers exactly what the per-entity path
(``/get_entity_state``, one ``pose_msg``/``twist_msg``/``time_msg`` per state) answers, field for
field and byte for byte once serialised, on a scene in motion (free boxes falling, a servo
pendulum, nested links). In this process: a real node and engine, the handlers called as the
service calls them, nothing spun."""
from __future__ import annotations

import numpy as np
import pytest
from sdf_snippets import GROUND, box_model, servo_pendulum, world

pytest.importorskip("simulation_interfaces.srv", reason="interface packages not built")
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from simulation_interfaces import srv as si  # noqa: E402

from sim_fidelity.simulator.engine import MujocoEngine  # noqa: E402
from sim_fidelity.simulator.ros.convert import entity_states  # noqa: E402
from sim_fidelity.simulator.ros.server import SimServer  # noqa: E402

NESTED = """
    <model name="cell">
      <pose>-3 0 0.5 0 0 0.3</pose>
      <link name="base"><inertial><mass>1</mass></inertial></link>
      <model name="gripper">
        <link name="palm"><inertial><mass>1</mass></inertial></link>
        <link name="finger"><pose>0 0 0.1 0 0 0</pose><inertial><mass>0.1</mass></inertial></link>
        <joint name="slide" type="prismatic"><parent>palm</parent><child>finger</child>
          <axis><xyz>1 0 0</xyz></axis></joint>
      </model>
    </model>"""
BOXES = [box_model(f"box_{i}", 0.5 * (i % 6), 0.5 * (i // 6), 0.3 + 0.05 * i, edge=0.2)
         for i in range(24)]
WORLD = world("fast_states", GROUND, *BOXES, servo_pendulum(), NESTED)
MOVING_STEPS = 150  # the boxes fall and tumble, the pendulum swings: every field non-trivial


@pytest.fixture(scope="module")
def handlers(context):
    import rclpy
    node = rclpy.create_node("fast_states", context=context)
    engine = MujocoEngine.from_string(WORLD)
    server = SimServer(node, engine, real_time_factor=0.0, paused=True, publish_rate=0.0,
                       odometry=[])
    engine.step(MOVING_STEPS)
    yield {s.srv_name: (s.srv_type, s.callback) for s in node.services}
    server.stop()
    node.destroy_node()


def call(handlers, service: str, request):
    kind, handler = handlers[service]
    return handler(request, kind.Response())


def batched(handlers, pattern: str = "") -> si.GetEntitiesStates.Response:
    req = si.GetEntitiesStates.Request()
    req.filters.filter = pattern
    return call(handlers, "/get_entities_states", req)


def one_by_one(handlers, like: si.GetEntitiesStates.Response) -> si.GetEntitiesStates.Response:
    """The response the per-entity path builds for the entities of ``like`` (its result too)."""
    names = list(like.entities)
    res = si.GetEntitiesStates.Response(result=like.result)
    res.entities = names
    res.states = [call(handlers, "/get_entity_state", si.GetEntityState.Request(entity=n)).state
                  for n in names]
    return res


def test_the_batched_answer_equals_the_per_entity_answers_field_for_field(handlers):
    fast = batched(handlers)
    names = list(fast.entities)
    assert len(names) > 24 and {"box_0", "cell::gripper::finger"} <= set(names)
    slow = one_by_one(handlers, fast)
    speeds = np.array([[s.twist.linear.z, s.twist.angular.x] for s in slow.states])
    assert np.abs(speeds).max() > 0.01  # the scene moves: twists are not all zero
    for name, f, s in zip(names, fast.states, slow.states):
        assert f == s, name
        assert (f.header.frame_id, f.header.stamp) == (s.header.frame_id, s.header.stamp), name
    assert serialize_message(fast) == serialize_message(slow)


def test_what_a_client_reads_back_is_the_per_entity_answer(handlers):
    fast = batched(handlers, r"^box_[^:]*$")
    assert len(fast.entities) == 24
    read = deserialize_message(serialize_message(fast), si.GetEntitiesStates.Response)
    assert read == one_by_one(handlers, fast)


def test_an_empty_selection_answers_no_states(handlers):
    fast = batched(handlers, r"^no_such_entity$")
    assert list(fast.entities) == [] and list(fast.states) == []


@pytest.mark.parametrize("poses, twists", [(np.zeros((2, 6)), np.zeros((2, 6))),
                                           (np.zeros((2, 7)), np.zeros((3, 6))),
                                           (np.zeros(7), np.zeros(6))])
def test_arrays_of_the_wrong_shape_are_refused_naming_both_shapes(poses, twists):
    with pytest.raises(ValueError, match=rf"{poses.shape}.*{twists.shape}".replace("(", r"\(")
                       .replace(")", r"\)")):
        entity_states(poses, twists, 0.0)
