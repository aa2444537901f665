"""sim_server's service handlers called in this process: the result code of every error path,
entity info, reset scopes. The node is real (rclpy, its own context and domain) but nothing is
spun: each handler runs as the service would run it (under the lock, errors to codes).
test_sim_server.py drives the same server over DDS from another process."""
from __future__ import annotations

import numpy as np
import pytest
from sdf_snippets import GROUND, servo_pendulum, world

pytest.importorskip("simulation_interfaces.srv", reason="interface packages not built")
from served_handlers import BOX, Served, code  # noqa: E402
from simulation_interfaces import srv as si  # noqa: E402
from simulation_interfaces.msg import (  # noqa: E402
    Bounds,
    EntityCategory,
    Result,
    SimulationState,
    TagsFilter,
)

from sim_fidelity.simulator import (  # noqa: E402
    InvalidOperationError,
    InvalidPoseError,
    Lever,
    SdfError,
    SimulatorError,
    UnknownEntityError,
    UnsupportedFeatureError,
    UnsupportedLeverError,
)
from sim_fidelity.simulator.engine import MujocoEngine  # noqa: E402
from sim_fidelity.simulator.ros import results  # noqa: E402
from sim_fidelity.simulator.ros.server import SimServer  # noqa: E402

RESET = si.ResetSimulation.Request


@pytest.fixture
def served(context, request):
    s = Served(context, f"sim_server_{request.node.name.split('[')[0][5:40]}")
    yield s
    s.close()


# ---------------------------------------------------------------------- error paths to codes
@pytest.mark.parametrize("frame", ["map", "odom", "world2"])
def test_a_non_world_frame_is_an_invalid_pose(served, frame):
    req = si.SetEntityState.Request(entity="floating")
    req.state.header.frame_id = frame
    req.state.pose.orientation.w = 1.0
    res = served.call("/set_entity_state", req)
    assert code(res) == res.INVALID_POSE and f"frame '{frame}'" in res.result.error_message
    spawn = si.SpawnEntity.Request(name="framed", resource_string=BOX)
    spawn.initial_pose.header.frame_id = frame
    res = served.call("/spawn_entity", spawn)
    assert code(res) == res.INVALID_POSE and "framed" not in served.engine.entities()


@pytest.mark.parametrize("frame", ["", "world"])
def test_the_world_frame_by_name_or_empty_is_accepted(served, frame):
    req = si.SetEntityState.Request(entity="floating")
    req.state.header.frame_id = frame
    req.state.pose.position.z, req.state.pose.orientation.w = 3.0, 1.0
    assert code(served.call("/set_entity_state", req)) == Result.RESULT_OK
    assert served.engine.get_states(["floating"])[0][0, 2] == pytest.approx(3.0)


@pytest.mark.parametrize("steps", [0, -1])
def test_fewer_than_one_step_is_refused(served, steps):
    res = served.call("/step_simulation", steps=steps)
    assert code(res) == Result.RESULT_INCORRECT_STATE
    assert f"steps must be at least 1, got {steps}" in res.result.error_message
    assert served.engine.time == 0.0
    res = served.call("/step_simulation", steps=3)
    assert code(res) == Result.RESULT_OK and served.engine.time == pytest.approx(0.003)


def test_stepping_while_playing_is_refused(served):
    req = si.SetSimulationState.Request()
    req.state.state = SimulationState.STATE_PLAYING
    assert code(served.call("/set_simulation_state", req)) == Result.RESULT_OK
    res = served.call("/step_simulation", steps=1)
    assert code(res) == Result.RESULT_INCORRECT_STATE and "playing" in res.result.error_message


def test_simulation_state_codes(served):
    req = si.SetSimulationState.Request()
    req.state.state = SimulationState.STATE_PAUSED
    res = served.call("/set_simulation_state", req)
    assert code(res) == res.ALREADY_IN_TARGET_STATE and "already PAUSED" in \
        res.result.error_message
    req.state.state = SimulationState.STATE_LOADING_WORLD
    res = served.call("/set_simulation_state", req)
    assert code(res) == res.INCORRECT_TRANSITION and "cannot switch" in res.result.error_message
    served.call("/step_simulation", steps=5)
    req.state.state = SimulationState.STATE_STOPPED
    assert code(served.call("/set_simulation_state", req)) == Result.RESULT_OK
    assert served.engine.time == 0.0
    state = served.call("/get_simulation_state").state.state
    assert state == SimulationState.STATE_STOPPED
    assert code(served.call("/step_simulation", steps=1)) == Result.RESULT_OK  # STOPPED -> PAUSED
    assert served.call("/get_simulation_state").state.state == SimulationState.STATE_PAUSED


def test_spawn_codes_and_names(served):
    def spawn(**fields):
        return served.call("/spawn_entity", **fields)
    assert code(spawn(name="box", resource_string=BOX)) == Result.RESULT_OK
    res = spawn(name="box", resource_string=BOX)
    assert code(res) == res.NAME_NOT_UNIQUE and "'box'" in res.result.error_message
    assert spawn(name="box", resource_string=BOX, allow_renaming=True).entity_name == "box_1"
    assert spawn(name="box", resource_string=BOX, allow_renaming=True).entity_name == "box_2"
    for bad in ("1box", "a box", "box/x"):
        res = spawn(name=bad, resource_string=BOX)
        assert code(res) == res.NAME_INVALID and f"'{bad}'" in res.result.error_message
    res = spawn(name="u", resource_string="<robot name='r'><link name='a'/></robot>")
    assert code(res) == res.UNSUPPORTED_FORMAT
    assert res.result.error_message == "URDF is not supported: spawn SDF"
    res = spawn(name="none", resource_string="  ")
    assert code(res) == res.NO_RESOURCE
    assert res.result.error_message.endswith(": neither uri nor resource_string given")
    res = spawn(name="gone", uri="model://no_such_model_here")
    assert code(res) == res.NO_RESOURCE and "no_such_model_here" in res.result.error_message
    res = spawn(name="broken", resource_string="<sdf version='1.9'><model name='x'><link")
    assert code(res) == res.RESOURCE_PARSE_ERROR
    # no orientation given (all zero): identity, not an invalid quaternion
    res = spawn(name="plain", resource_string=BOX)
    np.testing.assert_allclose(served.engine.get_states(["plain"])[0][0, 3:], [0, 0, 0, 1])
    assert code(spawn(name="", resource_string=BOX)) == Result.RESULT_OK  # the SDF's name
    assert "spawned" in served.engine.entities()
    assert code(served.call("/delete_entity", entity="box_1")) == Result.RESULT_OK
    assert code(served.call("/delete_entity", entity="box_1")) == Result.RESULT_NOT_FOUND


def test_an_unexpected_error_is_operation_failed_and_logged(served, monkeypatch):
    def broken(names, *args):
        raise KeyError("a bug")
    monkeypatch.setattr(served.engine, "get_states", broken)
    res = served.call("/get_entity_state", entity="floating")
    assert code(res) == Result.RESULT_OPERATION_FAILED and "a bug" in res.result.error_message


# ---------------------------------------------------------------------- entity info and filters
@pytest.mark.parametrize("entity, category, description, tags", [
    ("floating", EntityCategory.CATEGORY_DYNAMIC_OBJECT, "model", ["kind:model"]),
    ("floating::link", EntityCategory.CATEGORY_DYNAMIC_OBJECT, "link",
     ["kind:link", "parent:floating"]),
    ("wall", EntityCategory.CATEGORY_STATIC_OBJECT, "model", ["kind:model"]),
    ("arm", EntityCategory.CATEGORY_ROBOT, "model", ["kind:model"]),  # has a moving joint
    ("arm::hinge", EntityCategory.CATEGORY_DYNAMIC_OBJECT, "joint revolute",
     ["kind:joint", "parent:arm"]),
])
def test_get_entity_info(served, entity, category, description, tags):
    res = served.call("/get_entity_info", entity=entity)
    assert code(res) == Result.RESULT_OK
    assert (res.info.category.category, res.info.description, list(res.info.tags)) == (
        category, description, tags)


def test_get_entity_info_of_an_unknown_entity(served):
    res = served.call("/get_entity_info", entity="nosuch")
    assert code(res) == Result.RESULT_NOT_FOUND and "nosuch" in res.result.error_message


def test_filters_by_tags_and_sphere_bounds(served):
    req = si.GetEntities.Request()
    req.filters.tags.tags = ["kind:link", "parent:floating"]
    req.filters.tags.filter_mode = TagsFilter.FILTER_MODE_ALL
    assert list(served.call("/get_entities", req).entities) == ["floating::link"]
    req.filters.tags.filter_mode = TagsFilter.FILTER_MODE_ANY
    found = set(served.call("/get_entities", req).entities)
    assert "floating::link" in found and "resting::link" in found and "resting" not in found
    from geometry_msgs.msg import Vector3
    req = si.GetEntities.Request()
    req.filters.bounds.type = Bounds.TYPE_SPHERE
    req.filters.bounds.points = [Vector3(x=2.0, y=0.0, z=1.0), Vector3(x=0.5, y=0.0, z=0.0)]
    assert set(served.call("/get_entities", req).entities) == {"floating", "floating::link"}
    req.filters.bounds.type = Bounds.TYPE_CONVEX_HULL
    res = served.call("/get_entities", req)
    assert code(res) == Result.RESULT_FEATURE_UNSUPPORTED and "TYPE_BOX" in \
        res.result.error_message
    res = served.call("/get_entities_states", req)
    assert code(res) == Result.RESULT_FEATURE_UNSUPPORTED


def test_entities_states_and_their_frame(served):
    req = si.GetEntitiesStates.Request()
    req.filters.filter = "^(resting|floating)$"
    res = served.call("/get_entities_states", req)
    assert sorted(res.entities) == ["floating", "resting"]
    by_name = dict(zip(res.entities, res.states))
    assert by_name["floating"].pose.position.x == pytest.approx(2.0)
    assert all(s.header.frame_id == "world" for s in res.states)


# ---------------------------------------------------------------------- reset scopes
def _moved_and_spawned(served) -> None:
    assert code(served.call("/spawn_entity", name="extra", resource_string=BOX)) == Result.RESULT_OK
    served.call("/step_simulation", steps=200)  # "floating" falls


@pytest.mark.parametrize("scope, spawned_kept, time_and_state_reset", [
    (RESET.SCOPE_SPAWNED, False, False),
    (RESET.SCOPE_TIME, True, True),
    (RESET.SCOPE_STATE, True, True),
    (RESET.SCOPE_TIME | RESET.SCOPE_SPAWNED, False, True),
    (RESET.SCOPE_DEFAULT, False, True),
    (RESET.SCOPE_ALL, False, True),
], ids=["spawned", "time", "state", "time+spawned", "default", "all"])
def test_reset_scopes(served, scope, spawned_kept, time_and_state_reset):
    _moved_and_spawned(served)
    t, z = served.engine.time, served.engine.get_states(["floating"])[0][0, 2]
    assert code(served.call("/reset_simulation", scope=scope)) == Result.RESULT_OK
    assert ("extra" in served.engine.entities()) == spawned_kept
    if time_and_state_reset:
        assert served.engine.time == 0.0
        assert served.engine.get_states(["floating"])[0][0, 2] == pytest.approx(1.0)
    else:
        assert served.engine.time == t
        assert served.engine.get_states(["floating"])[0][0, 2] == pytest.approx(z)


# ---------------------------------------------------------------------- the client's side
def _response(kind, result_code: int, message: str = ""):
    res = kind.Response()
    res.result.result, res.result.error_message = result_code, message
    return res


def test_raise_for_gives_back_the_typed_error():
    results.raise_for(_response(si.GetEntityState, Result.RESULT_OK), "get")  # no error
    with pytest.raises(UnknownEntityError) as info:
        results.raise_for(_response(si.GetEntityState, Result.RESULT_NOT_FOUND, "gone"),
                          "get_entity_state", unknown=lambda: "box_9")
    assert info.value.name == "box_9" and "get_entity_state: gone" in str(info.value)
    with pytest.raises(UnsupportedLeverError) as lever_info:
        results.raise_for(_response(si.GetEntityState, Result.RESULT_FEATURE_UNSUPPORTED, "no"),
                          "set_lever", lever=Lever.GRAVITY)
    assert lever_info.value.lever == Lever.GRAVITY and "set_lever: no" in str(lever_info.value)
    with pytest.raises(UnsupportedFeatureError) as plain:
        results.raise_for(_response(si.GetEntityState, Result.RESULT_FEATURE_UNSUPPORTED, "no"),
                          "get")
    assert not isinstance(plain.value, UnsupportedLeverError)
    spawn = si.SpawnEntity
    with pytest.raises(SdfError) as sdf:
        results.raise_for(_response(spawn, spawn.Response.RESOURCE_PARSE_ERROR, "line 3: bad"),
                          "w.sdf")
    assert sdf.value.file == "w.sdf" and "line 3: bad" in str(sdf.value)
    with pytest.raises(InvalidPoseError, match="spawn_entity: tilted"):
        results.raise_for(_response(spawn, spawn.Response.INVALID_POSE, "tilted"), "spawn_entity")
    with pytest.raises(InvalidOperationError, match="step: result code 3"):
        results.raise_for(_response(si.StepSimulation, Result.RESULT_INCORRECT_STATE), "step")
    with pytest.raises(SimulatorError, match="odd: result code 250") as odd:
        results.raise_for(_response(si.StepSimulation, 250), "odd")
    assert type(odd.value) is SimulatorError


def test_result_for_carries_code_and_message():
    res = results.result_for(InvalidPoseError("tilted"), si.SetEntityState.Response)
    assert (res.result, res.error_message) == (si.SetEntityState.Response.INVALID_POSE, "tilted")
    assert results.ok().result == Result.RESULT_OK and results.ok().error_message == ""


# ---------------------------------------------------------------------- states, spawn sources
def test_get_entity_state_answers_pose_twist_time_and_frame(served):
    served.call("/step_simulation", steps=100)
    res = served.call("/get_entity_state", entity="floating")
    pose, twist = served.engine.get_states(["floating"])
    state = res.state
    assert code(res) == Result.RESULT_OK and state.header.frame_id == "world"
    assert state.header.stamp.sec + 1e-9 * state.header.stamp.nanosec == pytest.approx(0.1)
    assert [state.pose.position.x, state.pose.position.y, state.pose.position.z] == \
        pytest.approx(pose[0, :3])
    assert state.twist.linear.z == pytest.approx(twist[0, 2]) and twist[0, 2] < -0.5  # falling


def test_set_entity_state_sets_the_twist_too(served):
    req = si.SetEntityState.Request(entity="floating")
    req.state.pose.position.z, req.state.pose.orientation.w = 2.0, 1.0
    req.state.twist.linear.x, req.state.twist.angular.z = 0.5, 1.5
    assert code(served.call("/set_entity_state", req)) == Result.RESULT_OK
    np.testing.assert_allclose(served.engine.get_states(["floating"])[1], [[0.5, 0, 0, 0, 0, 1.5]],
                               atol=1e-9)


def test_spawn_from_a_file_uri_at_a_turned_pose(served, tmp_path):
    model = tmp_path / "crate.sdf"
    model.write_text(BOX)
    req = si.SpawnEntity.Request(name="crate", uri=str(model))
    req.initial_pose.pose.position.x = 7.0
    req.initial_pose.pose.orientation.z = req.initial_pose.pose.orientation.w = 0.5 ** 0.5
    assert code(served.call("/spawn_entity", req)) == Result.RESULT_OK
    np.testing.assert_allclose(served.engine.get_states(["crate"])[0][0],
                               [7, 0, 0, 0, 0, 0.5 ** 0.5, 0.5 ** 0.5], atol=1e-9)
    # a resource string wins over a uri given beside it
    res = served.call("/spawn_entity", name="both", resource_string=BOX, uri="model://nowhere")
    assert code(res) == Result.RESULT_OK, res.result.error_message


def test_a_deleted_spawn_is_not_deleted_again_by_a_reset(served):
    assert code(served.call("/spawn_entity", name="extra", resource_string=BOX)) == Result.RESULT_OK
    assert code(served.call("/delete_entity", entity="extra")) == Result.RESULT_OK
    res = served.call("/reset_simulation", scope=RESET.SCOPE_SPAWNED)
    assert code(res) == Result.RESULT_OK, res.result.error_message


def test_a_model_whose_joints_are_all_fixed_is_no_robot(context):
    bolted = ('<model name="bolted"><link name="a"><pose>0 -3 1 0 0 0</pose></link>'
              '<link name="b"><pose>0 -3 1.2 0 0 0</pose></link>'
              '<joint name="j" type="fixed"><parent>a</parent><child>b</child></joint></model>')
    import rclpy
    node = rclpy.create_node("sim_server_bolted", context=context)
    engine = MujocoEngine.from_string(world("w", GROUND, bolted, servo_pendulum()))
    server = SimServer(node, engine, real_time_factor=0.0, paused=True, publish_rate=0.0,
                       odometry=[])
    try:
        handler = {s.srv_name: s for s in node.services}["/get_entity_info"]
        info = handler.callback(si.GetEntityInfo.Request(entity="bolted"),
                                si.GetEntityInfo.Response()).info
        assert info.category.category == EntityCategory.CATEGORY_DYNAMIC_OBJECT
        info = handler.callback(si.GetEntityInfo.Request(entity="arm"),
                                si.GetEntityInfo.Response()).info
        assert info.category.category == EntityCategory.CATEGORY_ROBOT
    finally:
        server.stop()
        node.destroy_node()


def test_filters_by_category_box_and_bad_regex(served):
    from geometry_msgs.msg import Vector3
    req = si.GetEntities.Request()
    req.filters.categories = [EntityCategory(category=EntityCategory.CATEGORY_STATIC_OBJECT)]
    assert set(served.call("/get_entities", req).entities) == {"ground", "ground::link", "wall",
                                                               "wall::link"}
    req = si.GetEntities.Request()
    req.filters.bounds.type = Bounds.TYPE_BOX  # corners in any order; faces count as inside
    req.filters.bounds.points = [Vector3(x=3.0, y=1.0, z=1.0), Vector3(x=2.0, y=-1.0, z=0.0)]
    assert set(served.call("/get_entities", req).entities) == {"floating", "floating::link"}
    req.filters.bounds.points = [Vector3(x=3.0, y=1.0, z=0.99), Vector3(x=2.0, y=-1.0, z=0.0)]
    assert served.call("/get_entities", req).entities == []
    req.filters.bounds.type = Bounds.TYPE_SPHERE  # the radius is the second point's x
    req.filters.bounds.points = [Vector3(x=2.0, y=0.0, z=0.0), Vector3(x=1.0, y=5.0, z=5.0)]
    assert set(served.call("/get_entities", req).entities) == {"floating", "floating::link"}
    req.filters.bounds.points = [Vector3(x=2.0, y=0.0, z=0.0), Vector3(x=0.99, y=5.0, z=5.0)]
    assert served.call("/get_entities", req).entities == []
    req.filters.bounds.points = req.filters.bounds.points[:1]
    res = served.call("/get_entities", req)
    assert res.result.error_message == ("only TYPE_BOX (2 corner points) and TYPE_SPHERE (centre, "
                                        "radius in x) bounds are supported")
    req = si.GetEntities.Request()
    req.filters.filter = "([bad"
    res = served.call("/get_entities", req)
    assert res.result.error_message.startswith("filter '([bad' is not a regular expression: ")
