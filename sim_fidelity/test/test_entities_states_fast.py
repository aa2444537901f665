"""The batched ``/get_entities_states`` path (``convert.entity_states``: one header shared, leaves
written into each message's own sub-messages; ``ReusedStates``: the last answer's messages
rewritten in place when no response holds them) answers exactly what the per-entity path
(``/get_entity_state``, one ``pose_msg``/``twist_msg``/``time_msg`` per state) answers, field for
field, also as a client reads it back, on a scene in motion (free boxes falling, a servo
pendulum, nested links). Compared as messages (``==`` on rclpy messages compares every field,
floats exactly): serialised bytes are not comparable, CDR padding bytes are left uninitialised.
In this process: a real node and engine, the handlers called as the
service calls them, nothing spun."""
from __future__ import annotations

import numpy as np
import pytest
from sdf_snippets import GROUND, box_model, gripper_cell, servo_pendulum, world

pytest.importorskip("simulation_interfaces.srv", reason="interface packages not built")
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from simulation_interfaces import srv as si  # noqa: E402

from sim_fidelity.simulator.engine import MujocoEngine  # noqa: E402
from sim_fidelity.simulator.ros.convert import entity_states  # noqa: E402
from sim_fidelity.simulator.ros.server import SimServer  # noqa: E402

NESTED = gripper_cell("-3 0 0.5 0 0 0.3")
BOXES = [box_model(f"box_{i}", 0.5 * (i % 6), 0.5 * (i // 6), 0.3 + 0.05 * i, edge=0.2)
         for i in range(24)]
WORLD = world("fast_states", GROUND, *BOXES, servo_pendulum(), NESTED)
MOVING_STEPS = 30


def tumbling(engine: MujocoEngine) -> None:
    """Every box in the air at a random attitude, spinning and flying in a random direction: all
    13 pose and twist components differ from each other somewhere (a swapped field shows)."""
    rng = np.random.default_rng(23)
    names = engine.entities(pattern=r"^box_[^:]*$")
    quats = rng.normal(size=(len(names), 4))
    poses = np.hstack([rng.uniform(-2, 2, (len(names), 2)), rng.uniform(1, 3, (len(names), 1)),
                       quats / np.linalg.norm(quats, axis=1, keepdims=True)])
    engine.set_states(names, poses=poses, twists=rng.uniform(-2, 2, (len(names), 6)))


@pytest.fixture(scope="module")
def handlers(context):
    import rclpy
    node = rclpy.create_node("fast_states", context=context)
    engine = MujocoEngine.from_string(WORLD)
    server = SimServer(node, engine, real_time_factor=0.0, paused=True, publish_rate=0.0,
                       odometry=[])
    tumbling(engine)
    engine.step(MOVING_STEPS)
    served = {s.srv_name: (s.srv_type, s.callback) for s in node.services}
    served["engine"] = engine
    yield served
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


def read_back(res: si.GetEntitiesStates.Response) -> si.GetEntitiesStates.Response:
    """``res`` as a client deserialises it (an independent copy)."""
    return deserialize_message(serialize_message(res), si.GetEntitiesStates.Response)


def test_the_batched_answer_equals_the_per_entity_answers_field_for_field(handlers):
    fast = batched(handlers)
    names = list(fast.entities)
    assert len(names) > 24 and {"box_0", "cell::gripper::finger"} <= set(names)
    slow = one_by_one(handlers, fast)
    leaves = np.array([[s.pose.position.x, s.pose.position.y, s.pose.position.z,
                        s.pose.orientation.x, s.pose.orientation.y, s.pose.orientation.z,
                        s.pose.orientation.w, s.twist.linear.x, s.twist.linear.y,
                        s.twist.linear.z, s.twist.angular.x, s.twist.angular.y,
                        s.twist.angular.z] for s in slow.states])
    pairs = np.abs(leaves[:, :, None] - leaves[:, None, :]).max(axis=0)
    assert (pairs + np.eye(13) > 1e-3).all()  # no two fields alike: a swap would show
    for name, f, s in zip(names, fast.states, slow.states):
        assert f == s, name
        assert (f.header.frame_id, f.header.stamp) == (s.header.frame_id, s.header.stamp), name
    assert fast == slow


def test_what_a_client_reads_back_is_the_per_entity_answer(handlers):
    fast = batched(handlers, r"^box_[^:]*$")
    assert len(fast.entities) == 24
    assert read_back(fast) == one_by_one(handlers, fast)


def test_a_later_answer_rewritten_in_place_equals_the_per_entity_answers(handlers):
    first = batched(handlers)
    kept = list(first.states)
    del first  # sent and dropped: its messages are free for the next answer
    handlers["engine"].step(20)
    second = batched(handlers)
    assert all(a is b for a, b in zip(kept, second.states))  # reused, not rebuilt
    del kept
    assert second == one_by_one(handlers, second)


def test_an_answer_still_held_is_never_changed_by_the_next(handlers):
    held = batched(handlers)
    answered = read_back(held)
    handlers["engine"].step(20)
    later = batched(handlers)
    assert held == answered  # a response in flight keeps what it answered
    assert not any(a is b for a, b in zip(held.states, later.states))
    assert later == one_by_one(handlers, later)
    assert later != answered  # the scene moved in between


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
