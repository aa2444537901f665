"""sim_server's standard service handlers called in this process, for what a client relies on
beyond the result-code table of test_sim_server_handlers.py: the exact refusals (and the state a
refused request leaves), a running step request cancelled by a state change or a reset, the
QUITTING request, spawn sources and names, features and bounds. The node is real (rclpy, its
own context and domain) but nothing is spun: each handler runs as the service runs it (under the
lock, errors to codes). Written against the surviving mutants of standard_services.py
(docs/testing.md)."""
from __future__ import annotations

import os
import threading

import mujoco
import numpy as np
import pytest
from ros_processes import wait_for
from sdf_snippets import GROUND, box_model, gripper_cell, servo_pendulum, world

pytest.importorskip("simulation_interfaces.srv", reason="interface packages not built")
from simulation_interfaces import srv as si  # noqa: E402
from simulation_interfaces.msg import (  # noqa: E402
    Bounds,
    EntityCategory,
    Result,
    SimulationState,
    SimulatorFeatures,
)

from sim_fidelity.simulator.engine import MujocoEngine  # noqa: E402
from sim_fidelity.simulator.protocol import Lever  # noqa: E402
from sim_fidelity.simulator.ros.server import SimServer  # noqa: E402
from sim_fidelity.simulator.ros.standard_services import StandardServices  # noqa: E402
from sim_fidelity.simulator.sdf import resolve  # noqa: E402
from sim_fidelity.simulator.sdf.loader import load_world_string  # noqa: E402
from sim_fidelity_interfaces.srv import SetLever  # noqa: E402

NESTED = gripper_cell("-3 0 0 0 0 0")
WORLD = world("standard", GROUND, box_model("crate", 2, 0, 1.0, edge=(0.2, 0.4, 0.6)),
              servo_pendulum(), NESTED)
BOX = "<sdf version='1.9'>" + box_model("spawned", 0, 0, 0) + "</sdf>"
BIG = 10 ** 9  # steps no request here finishes: it ends only when cancelled
DEADLINE_S = 30.0  # for a thread of this process to act
State = SimulationState


class Served:
    """A SimServer on ``engine`` (not started); ``call(name, **fields)`` runs a handler."""

    def __init__(self, context, name: str, engine: MujocoEngine, **server_args):
        import rclpy
        self.node = rclpy.create_node(name, context=context)
        self.engine = engine
        self.server = SimServer(self.node, engine, real_time_factor=0.0, paused=True,
                                publish_rate=0.0, odometry=[], **server_args)
        self.handlers = {s.srv_name: (s.srv_type, s.callback) for s in self.node.services}

    def call(self, service: str, request=None, **fields):
        kind, handler = self.handlers[service]
        return handler(request or kind.Request(**fields), kind.Response())

    def set_state(self, state: int):
        req = si.SetSimulationState.Request()
        req.state.state = state
        return self.call("/set_simulation_state", req)

    def close(self) -> None:
        self.server.stop()
        self.node.destroy_node()


def _name(request) -> str:
    return "std_" + request.node.name.split("[")[0][5:40]


@pytest.fixture
def served(context, request):
    s = Served(context, _name(request), MujocoEngine.from_string(WORLD), max_steps=BIG)
    yield s
    s.close()


def code(response) -> int:
    return response.result.result


class StepInBackground:
    """A StepSimulation request of BIG steps on a thread, begun once ``start`` returns."""

    def __init__(self, served: Served):
        self.served, self.response = served, None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.response = self.served.call("/step_simulation", steps=BIG)

    def start(self) -> StepInBackground:
        self.thread.start()
        assert wait_for(lambda: self.served.server.stepper.requested, DEADLINE_S), \
            "the step request never began"
        return self

    def answer(self):
        self.thread.join(DEADLINE_S)
        assert not self.thread.is_alive(), "the step request did not end when it was cancelled"
        return self.response


# ---------------------------------------------------------------------- state changes
def test_pausing_cancels_a_running_step_request_and_stays_paused(served):
    step = StepInBackground(served).start()
    res = served.set_state(State.STATE_PAUSED)
    assert code(res) == Result.RESULT_OK
    assert res.result.error_message == "a running step request was cancelled"
    answer = step.answer()
    assert code(answer) == Result.RESULT_OPERATION_FAILED
    assert answer.result.error_message.endswith(
        f" of {BIG} steps: cancelled by a state change to PAUSED"), answer.result.error_message
    assert served.call("/get_simulation_state").state.state == State.STATE_PAUSED
    assert not served.server.stepper.requested
    # nothing is running now: PAUSED again is where the client is already
    assert code(served.set_state(State.STATE_PAUSED)) == si.SetSimulationState.Response \
        .ALREADY_IN_TARGET_STATE


def test_stopping_cancels_a_running_step_request_and_resets(served):
    step = StepInBackground(served).start()
    res = served.set_state(State.STATE_STOPPED)
    assert code(res) == Result.RESULT_OK and res.result.error_message == ""
    assert step.answer().result.error_message.endswith(
        "cancelled by a state change to STOPPED")
    assert served.call("/get_simulation_state").state.state == State.STATE_STOPPED
    assert served.engine.time == 0.0


def test_a_reset_cancels_a_running_step_request(served):
    step = StepInBackground(served).start()
    assert code(served.call("/reset_simulation")) == Result.RESULT_OK
    assert step.answer().result.error_message.endswith(f" of {BIG} steps: cancelled by a reset")
    assert served.engine.time == 0.0


def test_a_second_step_request_while_one_runs_is_refused(served):
    step = StepInBackground(served).start()
    res = served.call("/step_simulation", steps=1)
    assert code(res) == Result.RESULT_INCORRECT_STATE
    assert res.result.error_message == ("another step request is running: wait for it or cancel "
                                        "it (set the state to PAUSED)")
    served.set_state(State.STATE_PAUSED)
    step.answer()


def test_steps_beyond_the_request_bound_are_refused(context, request):
    s = Served(context, _name(request), MujocoEngine.from_string(WORLD), max_steps=50)
    try:
        res = s.call("/step_simulation", steps=51)
        assert code(res) == Result.RESULT_INCORRECT_STATE and s.engine.time == 0.0
        assert res.result.error_message == ("steps: 51 is more than the 50 one request may take "
                                            "(parameter max_steps_per_request)")
        assert code(s.call("/step_simulation", steps=50)) == Result.RESULT_OK
        assert s.engine.time == pytest.approx(0.05)
    finally:
        s.close()


def test_an_unknown_target_state_is_refused_with_the_states_to_use(served):
    res = served.set_state(State.STATE_LOADING_WORLD)
    assert code(res) == si.SetSimulationState.Response.INCORRECT_TRANSITION
    assert res.result.error_message == (f"cannot switch to state {State.STATE_LOADING_WORLD}: "
                                        "use PLAYING, PAUSED, STOPPED or QUITTING")
    assert served.call("/get_simulation_state").state.state == State.STATE_PAUSED


def _lever_off(served, owner: str) -> None:
    req = SetLever.Request(entities=["crate"], lever=int(Lever.GRAVITY), enabled=False,
                           owner=owner)
    assert code(served.call("~/set_lever", req)) == Result.RESULT_OK


def test_only_stopped_forgets_who_changed_levers(served):
    """PLAYING and PAUSED keep a lever's owner (its levers still go back when it leaves);
    STOPPED resets every lever, so nobody owns one any more."""
    guard = served.server.guard
    _lever_off(served, "/client")
    assert code(served.set_state(State.STATE_PLAYING)) == Result.RESULT_OK
    assert code(served.set_state(State.STATE_PAUSED)) == Result.RESULT_OK
    assert guard.owned("/client") == 1
    assert not served.engine.get_lever(["crate"], Lever.GRAVITY)[0]
    assert code(served.set_state(State.STATE_STOPPED)) == Result.RESULT_OK
    assert guard.owned("/client") == 0
    assert served.engine.get_lever(["crate"], Lever.GRAVITY)[0]


def test_quitting_answers_then_stops_the_server_and_its_context(request, monkeypatch):
    import rclpy
    ctx = rclpy.Context()  # its own: QUITTING shuts it down; nothing is spun, so the run's domain
    rclpy.init(context=ctx, domain_id=int(os.environ["ROS_DOMAIN_ID"]))
    quitter = []  # the thread that ends the node: a daemon, so it never holds the process up
    original = StandardServices._quit

    def recorded(self) -> None:
        quitter.append(threading.current_thread().daemon)
        original(self)
    monkeypatch.setattr(StandardServices, "_quit", recorded)
    s = Served(ctx, _name(request), MujocoEngine.from_string(WORLD))
    try:
        res = s.set_state(State.STATE_QUITTING)
        assert code(res) == Result.RESULT_OK and res.result.error_message == ""
        assert wait_for(lambda: not ctx.ok(), DEADLINE_S), "QUITTING never shut the context down"
        assert quitter == [True]
        res = s.call("/step_simulation", steps=1)  # the stepper was stopped before
        assert res.result.error_message.endswith("stopped after 0 of 1 steps: the server is "
                                                 "stopping")
    finally:
        s.close()
        ctx.try_shutdown()


# ---------------------------------------------------------------------- reset scopes
@pytest.mark.parametrize("scope, bits", [(8, 0x8), (2 | 16, 0x10), (254, 0xF8)])
def test_a_reset_scope_with_unknown_bits_is_refused_and_changes_nothing(served, scope, bits):
    assert code(served.call("/spawn_entity", name="extra", resource_string=BOX)) == \
        Result.RESULT_OK
    served.call("/step_simulation", steps=10)
    res = served.call("/reset_simulation", scope=scope)
    assert code(res) == Result.RESULT_FEATURE_UNSUPPORTED
    assert res.result.error_message == (
        f"scope {scope}: bits {bits:#x} name no scope; use SCOPE_DEFAULT (0), SCOPE_TIME (1), "
        "SCOPE_STATE (2), SCOPE_SPAWNED (4), a sum of these, or SCOPE_ALL (255)")
    assert served.engine.time == pytest.approx(0.01) and "extra" in served.engine.entities()


# ---------------------------------------------------------------------- spawn
def spawn(served, **fields):
    return served.call("/spawn_entity", **fields)


def test_a_spawn_into_a_namespace_is_refused_with_the_reason(served):
    res = spawn(served, name="boxed", resource_string=BOX, entity_namespace="robots")
    assert code(res) == si.SpawnEntity.Response.NAMESPACE_INVALID
    assert res.result.error_message == (
        "entity_namespace 'robots' is not supported: sim_server gives spawned models no ROS "
        "namespace of their own (their topics follow the model name); leave entity_namespace "
        "empty")
    assert "boxed" not in served.engine.entities()


def test_a_bare_model_and_an_sdf_mentioning_robot_spawn(served):
    bare = box_model("bare", 0, 5, 0)  # no <sdf> around it, as in a world file
    assert code(spawn(served, name="", resource_string=bare)) == Result.RESULT_OK
    converted = ("<?xml version='1.0'?>\n<!-- converted from <robot name='r'> -->\n"
                 "<sdf version='1.9'>" + box_model("converted", 0, 6, 0) + "</sdf>")
    res = spawn(served, name="", resource_string=converted)
    assert code(res) == Result.RESULT_OK, res.result.error_message
    assert {"bare", "converted"} <= set(served.engine.entities())


@pytest.mark.parametrize("at, urdf", [(1994, True), (1995, False)])
def test_urdf_is_recognised_in_the_first_2000_characters(served, at, urdf):
    text = " " * at + "<robot name='r'><link name='a'/></robot>"
    res = spawn(served, name="u", resource_string=text)
    expected = si.SpawnEntity.Response.UNSUPPORTED_FORMAT if urdf else \
        si.SpawnEntity.Response.RESOURCE_PARSE_ERROR
    assert code(res) == expected, res.result.error_message


@pytest.mark.parametrize("at, refused", [(1996, False), (1997, True)])
def test_an_sdf_tag_after_the_first_2000_characters_does_not_save_a_urdf(served, at, refused):
    text = "<robot name='r'>" + " " * (at - 16) + "<sdf version='1.9'/></robot>"
    res = spawn(served, name="u", resource_string=text)
    assert (code(res) == si.SpawnEntity.Response.UNSUPPORTED_FORMAT) == refused, \
        res.result.error_message


def test_a_parse_error_names_the_string_or_the_file(served, tmp_path):
    broken = "<sdf version='1.9'><model name='x'><link"
    res = spawn(served, name="b", resource_string=broken)
    assert code(res) == si.SpawnEntity.Response.RESOURCE_PARSE_ERROR
    assert res.result.error_message.startswith("<string>:"), res.result.error_message
    path = tmp_path / "broken.sdf"
    path.write_text(broken)
    res = spawn(served, name="b", uri=str(path))
    assert code(res) == si.SpawnEntity.Response.RESOURCE_PARSE_ERROR
    assert res.result.error_message.startswith(f"{path}:"), res.result.error_message


@pytest.mark.parametrize("xyzw", [(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0)])
def test_a_half_turn_spawn_orientation_is_kept(served, xyzw):
    req = si.SpawnEntity.Request(name="turned", resource_string=BOX)
    o = req.initial_pose.pose.orientation
    o.x, o.y, o.z, o.w = map(float, xyzw)
    assert code(served.call("/spawn_entity", req)) == Result.RESULT_OK
    q = served.engine.get_states(["turned"])[0][0, 3:]
    np.testing.assert_allclose(np.abs(q), xyzw, atol=1e-9)


def test_an_all_zero_orientation_is_identity(served):
    req = si.SpawnEntity.Request(name="plain", resource_string=BOX)
    req.initial_pose.pose.orientation.w = 0.0  # the message's default is w = 1
    assert code(served.call("/spawn_entity", req)) == Result.RESULT_OK
    np.testing.assert_allclose(served.engine.get_states(["plain"])[0][0, 3:], [0, 0, 0, 1],
                               atol=1e-12)


def test_a_scoped_name_is_invalid_not_taken(served):
    for scoped in ("crate::link", "arm::hinge"):  # a link and a joint, not models
        res = spawn(served, name=scoped, resource_string=BOX)
        assert code(res) == si.SpawnEntity.Response.NAME_INVALID, (scoped, res.result)
        assert res.result.error_message.endswith(f"'{scoped}' is not a valid entity name")


# ---------------------------------------------------------------------- spawn from files
def test_a_relative_path_is_found_from_the_working_directory(served, tmp_path, monkeypatch):
    (tmp_path / "crates").mkdir()
    (tmp_path / "crates" / "crate.sdf").write_text(BOX)
    monkeypatch.chdir(tmp_path)
    res = spawn(served, name="relative", uri="crates/crate.sdf")
    assert code(res) == Result.RESULT_OK, res.result.error_message
    assert "relative" in served.engine.entities()


def _served_with_resources(context, request, resources) -> Served:
    engine = MujocoEngine(load_world_string(WORLD, resource_paths=[str(resources)]))
    return Served(context, _name(request), engine)


def test_model_uris_search_the_worlds_resource_paths(context, request, tmp_path):
    (tmp_path / "pallet").mkdir()
    (tmp_path / "pallet" / "model.sdf").write_text(BOX)
    (tmp_path / "hollow").mkdir()
    s = _served_with_resources(context, request, tmp_path)
    try:
        res = spawn(s, name="pallet", uri="model://pallet")
        assert code(res) == Result.RESULT_OK, res.result.error_message
        res = spawn(s, name="gone", uri="model://no_such_model")
        assert code(res) == si.SpawnEntity.Response.NO_RESOURCE
        dirs = resolve.search_dirs([str(tmp_path)])
        assert tmp_path in dirs
        assert res.result.error_message == f"model://no_such_model: not found in {dirs}"
        res = spawn(s, name="hollow", uri="model://hollow")
        assert code(res) == si.SpawnEntity.Response.NO_RESOURCE
        assert res.result.error_message == (
            f"model://hollow: {tmp_path / 'hollow'} has neither a model.config naming an SDF "
            "file nor a model.sdf")
    finally:
        s.close()


# ---------------------------------------------------------------------- info, filters, bounds
def test_a_model_is_a_robot_when_a_nested_model_has_a_moving_joint(served):
    for name in ("cell", "cell::gripper"):
        res = served.call("/get_entity_info", entity=name)
        assert res.info.category.category == EntityCategory.CATEGORY_ROBOT, name
    res = served.call("/get_entity_info", entity="crate")
    assert res.info.category.category == EntityCategory.CATEGORY_DYNAMIC_OBJECT


def test_non_finite_bound_points_are_refused(served):
    from geometry_msgs.msg import Vector3
    req = si.GetEntities.Request()
    req.filters.bounds.type = Bounds.TYPE_BOX
    req.filters.bounds.points = [Vector3(x=0.0, y=0.0, z=0.0), Vector3(x=float("inf"))]
    res = served.call("/get_entities", req)
    assert code(res) == Result.RESULT_INCORRECT_STATE
    assert res.result.error_message == ("filters.bounds.points must be finite, got "
                                        "[[0.0, 0.0, 0.0], [inf, 0.0, 0.0]]")


def test_entity_bounds_are_the_collision_box_in_the_entitys_frame(served):
    for name in ("crate", "crate::link"):
        res = served.call("/get_entity_bounds", entity=name)
        assert code(res) == Result.RESULT_OK and res.bounds.type == Bounds.TYPE_BOX
        points = [[p.x, p.y, p.z] for p in res.bounds.points]
        np.testing.assert_allclose(points, [[-0.1, -0.2, -0.3], [0.1, 0.2, 0.3]], atol=1e-9)
    res = served.call("/get_entity_bounds", entity="arm::post")  # a link without collisions
    assert code(res) == Result.RESULT_OK
    assert res.bounds.type == Bounds.TYPE_EMPTY and len(res.bounds.points) == 0
    res = served.call("/get_entity_bounds", entity="arm::hinge")
    assert code(res) == Result.RESULT_INCORRECT_STATE and "only models and links" in \
        res.result.error_message


def test_simulator_features_say_what_is_served(served):
    res = served.call("/get_simulator_features")
    f = SimulatorFeatures
    assert sorted(res.features.features) == sorted([
        f.SPAWNING, f.DELETING, f.SPAWNING_RESOURCE_STRING, f.ENTITY_CATEGORIES, f.ENTITY_TAGS,
        f.ENTITY_STATE_GETTING, f.ENTITY_STATE_SETTING, f.ENTITY_INFO_GETTING,
        f.SIMULATION_RESET, f.SIMULATION_RESET_TIME, f.SIMULATION_RESET_STATE,
        f.SIMULATION_RESET_SPAWNED, f.SIMULATION_STATE_GETTING, f.SIMULATION_STATE_SETTING,
        f.SIMULATION_STATE_PAUSE, f.STEP_SIMULATION_SINGLE, f.STEP_SIMULATION_MULTIPLE,
        f.ENTITY_BOUNDS, f.ENTITY_BOUNDS_BOX])
    assert list(res.features.spawn_formats) == ["sdf"]
    assert res.features.custom_info == (
        f"sim_fidelity embedded mujoco {mujoco.__version__}; step_size=0.001; fidelity levers "
        f"(dynamics,collision,gravity,actuation,sensor,script) at "
        f"/{served.node.get_name()}/set_lever")
