"""sim_server guards the world (issue 20, points 2-4, server side), handlers called in this
process on a real node: levers of a client that leaves the graph are restored and a reset
restores every lever; a long step request is served in chunks while other services answer and
ends on a state change, a reset or the server's stop; a divergence pauses, is reported in the
next reply and on ~/divergence; requests the world cannot take are refused naming the field.
Last, a real server and a real client process killed with SIGKILL: its levers come back."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from ros_processes import SHORT_LEASE, Probe, next_domain, start_node, stop, wait_for

pytest.importorskip("simulation_interfaces.srv", reason="interface packages not built")
from served_handlers import BOX, WORLD, Served, code  # noqa: E402
from simulation_interfaces import srv as si  # noqa: E402
from simulation_interfaces.msg import Result, SimulationState  # noqa: E402

from sim_fidelity.simulator import Lever  # noqa: E402
from sim_fidelity.simulator.ros.lever_guard import LeverGuard  # noqa: E402
from sim_fidelity_interfaces.srv import GetLevers, SetLever  # noqa: E402


@pytest.fixture
def served(context, request):
    s = Served(context, f"guard_{request.node.name.split('[')[0][5:40]}")
    yield s
    s.close()


def set_lever(served, names, lever, enabled, owner=""):
    return served.call("~/set_lever", entities=names, lever=int(lever), enabled=enabled,
                       owner=owner)


def levers(served, names, lever, original=False) -> list[bool]:
    res = served.call("~/get_levers", entities=names, lever=int(lever), original=original)
    assert code(res) == Result.RESULT_OK, res.result.error_message
    return list(res.enabled)


def state(served, target: int):
    req = si.SetSimulationState.Request()
    req.state.state = target
    return served.call("/set_simulation_state", req)


# ---------------------------------------------------------------------- levers
def test_levers_of_a_client_whose_node_leaves_are_restored(served, context):
    import rclpy
    manager = rclpy.create_node("lowering_manager", namespace="/fleet", context=context)
    owner = manager.get_fully_qualified_name()
    assert owner == "/fleet/lowering_manager"
    assert code(set_lever(served, ["floating", "resting"], Lever.COLLISION, False,
                          owner)) == Result.RESULT_OK
    assert code(set_lever(served, ["arm::hinge"], Lever.ACTUATION, False,
                          owner)) == Result.RESULT_OK
    unguarded = set_lever(served, ["wall"], Lever.COLLISION, False)
    assert code(unguarded) == Result.RESULT_OK
    assert wait_for(lambda: owner in served.server._graph(), 60.0)
    served.server.check_owners()
    assert levers(served, ["floating", "resting"], Lever.COLLISION) == [False, False]
    assert served.server.guard.owned(owner) == 3
    manager.destroy_node()
    assert wait_for(lambda: owner not in served.server._graph(), 60.0)
    served.server.check_owners()
    assert levers(served, ["floating", "resting", "wall"], Lever.COLLISION) == [True, True, False]
    assert levers(served, ["arm::hinge"], Lever.ACTUATION) == [True]
    assert served.server.guard.owned(owner) == 0


def test_the_last_changer_owns_a_lever_and_one_switched_back_is_nobodys(served):
    engine = served.engine
    present = {"/a", "/b"}
    logged = []
    guard = LeverGuard(engine, lambda: set(present), logged.append)
    engine.set_lever(["floating"], Lever.GRAVITY, False)
    guard.record("/a", ["floating"], Lever.GRAVITY, False)
    guard.record("/b", ["floating"], Lever.GRAVITY, False)  # b takes it over
    engine.set_lever(["resting"], Lever.GRAVITY, False)
    guard.record("/a", ["resting"], Lever.GRAVITY, False)
    guard.record("/a", ["resting"], Lever.GRAVITY, True)  # a switched it back itself
    guard.check()
    present.clear()
    guard.check()
    assert engine.get_lever(["floating"], Lever.GRAVITY).tolist() == [True]  # b's, restored
    assert logged == ["restored 1 lever(s) that '/b' changed to the world's originals (its node "
                      "left the ROS graph)"]


def test_an_owner_never_seen_is_restored_only_after_the_discovery_grace(served, monkeypatch):
    from sim_fidelity.simulator.ros import lever_guard
    engine = served.engine
    guard = LeverGuard(engine, set, lambda _line: None)
    engine.set_lever(["floating"], Lever.DYNAMICS, False)
    guard.record("/new_client", ["floating"], Lever.DYNAMICS, False)
    guard.check()  # not in the graph yet: discovery may lag its first request
    assert engine.get_lever(["floating"], Lever.DYNAMICS).tolist() == [False]
    monkeypatch.setattr(lever_guard, "DISCOVERY_GRACE_S", 0.0)
    guard.check()
    assert engine.get_lever(["floating"], Lever.DYNAMICS).tolist() == [True]


def test_reset_restores_every_lever_and_the_original_stays_known(served):
    assert code(set_lever(served, ["floating"], Lever.DYNAMICS, False, "/m")) == Result.RESULT_OK
    assert code(set_lever(served, ["arm"], Lever.SCRIPT, False, "/m")) == Result.RESULT_OK
    assert levers(served, ["floating"], Lever.DYNAMICS) == [False]
    assert levers(served, ["floating"], Lever.DYNAMICS, original=True) == [True]
    assert levers(served, ["arm"], Lever.SCRIPT, original=True) == [True]
    assert code(served.call("/reset_simulation")) == Result.RESULT_OK
    assert levers(served, ["floating"], Lever.DYNAMICS) == [True]
    assert levers(served, ["arm"], Lever.SCRIPT) == [True]
    assert served.server.guard.owned("/m") == 0
    assert code(set_lever(served, ["floating"], Lever.GRAVITY, False, "/m")) == Result.RESULT_OK
    assert code(state(served, SimulationState.STATE_STOPPED)) == Result.RESULT_OK
    assert levers(served, ["floating"], Lever.GRAVITY) == [True]  # STOPPED is a reset too
    res = set_lever(served, ["floating", "resting", "floating"], Lever.GRAVITY, False)
    assert code(res) == Result.RESULT_INCORRECT_STATE
    assert list(res.failed_entities) == ["floating"] and "more than once" in \
        res.result.error_message


@pytest.mark.parametrize("reset", ["reset_simulation", "reset_world"])
def test_a_gazebo_msgs_reset_leaves_the_guard_nothing_to_restore(context, reset):
    """Gazebo classic's resets restore the levers, so no owner holds one after them (the guard
    would otherwise restore levers already on when the owner leaves, and log them)."""
    pytest.importorskip("gazebo_msgs.srv", reason="interface packages not built")
    import rclpy

    from sim_fidelity.simulator.engine import MujocoEngine
    from sim_fidelity.simulator.ros.server import SimServer
    node = rclpy.create_node(f"classic_guard_{reset}", context=context)
    engine = MujocoEngine.from_string(WORLD)
    server = SimServer(node, engine, real_time_factor=0.0, paused=True, publish_rate=0.0,
                       odometry=[], interfaces="gazebo_msgs")
    handlers = {s.srv_name.rsplit("/", 1)[-1]: (s.srv_type, s.callback) for s in node.services}
    try:
        kind, handler = handlers["set_lever"]
        req = kind.Request(entities=["floating"], lever=int(Lever.DYNAMICS), enabled=False,
                           owner="/m")
        assert code(handler(req, kind.Response())) == Result.RESULT_OK
        assert server.guard.owned("/m") == 1
        kind, handler = handlers[reset]
        handler(kind.Request(), kind.Response())
        assert engine.get_lever(["floating"], Lever.DYNAMICS).tolist() == [True]
        assert server.guard.owned("/m") == 0
    finally:
        server.stop()
        node.destroy_node()


# ---------------------------------------------------------------------- long requests
def stepping_in_background(served, steps: int) -> tuple[threading.Thread, list]:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(served.call("/step_simulation",
                                                                    steps=steps)))
    thread.start()
    assert wait_for(lambda: served.engine.time > 0.01, 60.0), "the step request never began"
    return thread, out


@pytest.mark.parametrize("how", ["paused", "stopped", "reset", "server stops"])
def test_a_long_step_request_lets_others_in_and_ends_on_request(served, how):
    thread, out = stepping_in_background(served, 50_000_000)
    t0 = served.engine.time
    res = served.call("/get_entity_state", entity="floating")  # answered while it steps
    assert code(res) == Result.RESULT_OK
    assert wait_for(lambda: served.engine.time > t0, 60.0), "time stopped while others were served"
    if how == "paused":
        res = state(served, SimulationState.STATE_PAUSED)
        assert code(res) == Result.RESULT_OK and "cancelled" in res.result.error_message
    elif how == "stopped":
        assert code(state(served, SimulationState.STATE_STOPPED)) == Result.RESULT_OK
    elif how == "reset":
        assert code(served.call("/reset_simulation")) == Result.RESULT_OK
    else:
        served.server.stop()
    thread.join(60.0)
    assert not thread.is_alive(), "the step request did not end"
    why = {"paused": "cancelled by a state change to PAUSED",
           "stopped": "cancelled by a state change to STOPPED", "reset": "cancelled by a reset",
           "server stops": "the server is stopping"}[how]
    assert code(out[0]) == Result.RESULT_OPERATION_FAILED
    assert "stopped after" in out[0].result.error_message and why in out[0].result.error_message
    assert not served.server.stepper.requested


def test_step_requests_beyond_the_maximum_or_at_once_are_refused(served):
    res = served.call("/step_simulation", steps=10**9)
    assert code(res) == Result.RESULT_INCORRECT_STATE
    assert "max_steps_per_request" in res.result.error_message and served.engine.time == 0.0
    thread, out = stepping_in_background(served, 50_000_000)
    res = served.call("/step_simulation", steps=5)
    assert code(res) == Result.RESULT_INCORRECT_STATE and "another step request" in \
        res.result.error_message
    state(served, SimulationState.STATE_PAUSED)
    thread.join(60.0)
    assert code(served.call("/step_simulation", steps=5)) == Result.RESULT_OK


def test_the_simulate_steps_action_reports_progress_and_cancels(served, context):
    import rclpy
    from rclpy.action import ActionClient
    from rclpy.executors import MultiThreadedExecutor
    from simulation_interfaces.action import SimulateSteps
    client_node = rclpy.create_node("simulate_steps_client", context=context)
    executor = MultiThreadedExecutor(num_threads=3, context=context)
    executor.add_node(served.node)
    executor.add_node(client_node)
    client = ActionClient(client_node, SimulateSteps, "/simulate_steps")  # before spinning
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        assert client.wait_for_server(60.0)
        feedback = []
        done = client.send_goal_async(SimulateSteps.Goal(steps=300),
                                      feedback_callback=lambda f: feedback.append(f.feedback))
        assert wait_for(done.done, 60.0)
        result = done.result().get_result_async()
        assert wait_for(result.done, 60.0)
        assert result.result().result.result.result == Result.RESULT_OK
        assert served.engine.time == pytest.approx(0.3)
        assert feedback and feedback[-1].completed_steps == 300
        assert feedback[-1].remaining_steps == 0
        done = client.send_goal_async(SimulateSteps.Goal(steps=50_000_000))
        assert wait_for(done.done, 60.0)
        handle = done.result()
        assert wait_for(lambda: served.engine.time > 0.35, 60.0)
        cancel = handle.cancel_goal_async()
        result = handle.get_result_async()
        assert wait_for(lambda: result.done() and cancel.done(), 60.0)
        message = result.result().result.result
        assert message.result == Result.RESULT_OPERATION_FAILED
        assert "cancelled by the caller" in message.error_message
    finally:
        executor.shutdown(timeout_sec=2.0)
        client_node.destroy_node()


# ---------------------------------------------------------------------- divergence
def test_a_divergence_pauses_is_undone_and_told_once(served, context):
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from std_msgs.msg import String
    engine = served.engine
    assert code(served.call("/step_simulation", steps=10)) == Result.RESULT_OK
    before = engine.get_states(["floating"])[0]
    engine.data.qvel[engine.index.body_free_dof[engine.index.body_id["floating::link"]]] = 1e30
    res = served.call("/step_simulation", steps=5)  # the request that diverged says so
    assert code(res) == Result.RESULT_OPERATION_FAILED and "diverged" in res.result.error_message
    assert res.result.error_message.count("diverged") == 1
    assert engine.time == pytest.approx(0.010) and engine.divergences == 1
    np.testing.assert_allclose(engine.get_states(["floating"])[0], before)
    # playing: the stepper thread meets it, pauses, and the next reply tells it, once
    served.server.start()
    assert code(state(served, SimulationState.STATE_PLAYING)) == Result.RESULT_OK
    assert wait_for(lambda: engine.divergences == 2, 60.0)
    res = served.call("/get_simulation_state")
    assert res.state.state == SimulationState.STATE_PAUSED and code(res) == Result.RESULT_OK
    assert "diverged" in res.result.error_message and "paused" in res.result.error_message
    assert served.call("/get_simulation_state").result.error_message == ""
    assert engine.time == pytest.approx(0.010)  # never backwards
    heard = []
    listener = rclpy.create_node("divergence_listener", context=context)
    listener.create_subscription(String, f"/{served.node.get_name()}/divergence",
                                 lambda m: heard.append(m.data),
                                 served.server.publishers._divergence.qos_profile)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(listener)
    deadline = time.monotonic() + 60.0
    while len(heard) < 2 and time.monotonic() < deadline:  # latched: both reports
        executor.spin_once(timeout_sec=0.1)
    executor.shutdown()
    listener.destroy_node()
    assert len(heard) == 2 and all("diverged" in h for h in heard)


# ---------------------------------------------------------------------- refused before the world
def entity_state(entity: str, position=(0, 0, 1), orientation=(0, 0, 0, 1), linear=(0, 0, 0),
                 angular=(0, 0, 0)):
    req = si.SetEntityState.Request(entity=entity)
    p, q = req.state.pose.position, req.state.pose.orientation
    p.x, p.y, p.z = map(float, position)
    q.x, q.y, q.z, q.w = map(float, orientation)
    v, w = req.state.twist.linear, req.state.twist.angular
    v.x, v.y, v.z = map(float, linear)
    w.x, w.y, w.z = map(float, angular)
    return req


@pytest.mark.parametrize("fields, said", [
    ({"position": (0, 0, 1e300)}, "position is beyond"),
    ({"position": (np.nan, 0, 1)}, "position is not finite"),
    ({"orientation": (0, 0, 0, 0)}, "not a unit quaternion"),
    ({"orientation": (0, 0, 0, np.inf)}, "not a unit quaternion"),
    ({"linear": (1e12, 0, 0)}, "twist linear speed is beyond"),
    ({"angular": (0, np.nan, 0)}, "twist angular is not finite")])
def test_states_beyond_the_limits_are_refused_naming_entity_and_field(served, fields, said):
    before = served.engine.get_states(["floating"])
    res = served.call("/set_entity_state", entity_state("floating", **fields))
    assert code(res) == res.INVALID_POSE
    assert "'floating'" in res.result.error_message and said in res.result.error_message
    for now, then in zip(served.engine.get_states(["floating"]), before):
        np.testing.assert_array_equal(now, then)
    assert code(served.call("/step_simulation", steps=20)) == Result.RESULT_OK
    assert served.engine.divergences == 0


def test_requests_the_server_cannot_take_are_refused_naming_the_field(served):
    spawn = si.SpawnEntity.Request(name="namespaced", resource_string=BOX,
                                   entity_namespace="/robot1")
    res = served.call("/spawn_entity", spawn)
    assert code(res) == res.NAMESPACE_INVALID and "entity_namespace '/robot1'" in \
        res.result.error_message and "namespaced" not in served.engine.entities()
    spawn = si.SpawnEntity.Request(name="far", resource_string=BOX)
    spawn.initial_pose.pose.position.x = 1e9
    res = served.call("/spawn_entity", spawn)
    assert code(res) == res.INVALID_POSE and "spawn pose position" in res.result.error_message
    res = served.call("/reset_simulation", scope=8)
    assert code(res) == Result.RESULT_FEATURE_UNSUPPORTED and "scope 8" in \
        res.result.error_message
    res = served.call("~/set_states", entities=["floating", "floating"],
                      poses=[0, 0, 1, 0, 0, 0, 1.0] * 2)
    assert code(res) == Result.RESULT_INCORRECT_STATE and "more than once" in \
        res.result.error_message
    res = served.call("/get_entities_states", si.GetEntitiesStates.Request())
    assert code(res) == Result.RESULT_OK
    req = si.GetEntitiesStates.Request()
    req.filters.bounds.type = req.filters.bounds.TYPE_BOX
    from geometry_msgs.msg import Vector3
    req.filters.bounds.points = [Vector3(x=0.0, y=0.0, z=0.0), Vector3(x=np.nan, y=1.0, z=1.0)]
    res = served.call("/get_entities_states", req)
    assert code(res) != Result.RESULT_OK and "filters.bounds.points" in res.result.error_message
    assert SetLever.Request().owner == ""  # unguarded unless a client names itself


# ---------------------------------------------------------------------- a real client dies
CLIENT = """
import sys, time
from sim_fidelity.simulator import Lever
from sim_fidelity.simulator.ros.client import RosSimulator
sim = RosSimulator(domain_id=int(sys.argv[1]), node_name="doomed_manager", timeout=30.0)
sim.wait_for_server(60.0)
sim.set_lever(["floating", "resting"], Lever.COLLISION, False)
print("lowered", flush=True)
time.sleep(600)
"""


def test_sim_server_restores_the_levers_of_a_killed_client(tmp_path):
    world_file = tmp_path / "world.sdf"
    world_file.write_text(WORLD)
    domain = next_domain()
    log = tmp_path / "sim_server.log"
    server = start_node("sim_fidelity.simulator.ros.server",
                        {"world": world_file, "paused": True}, domain, log)
    client_log = tmp_path / "client.log"
    client = subprocess.Popen([sys.executable, "-c", CLIENT, str(domain)],
                              stdout=client_log.open("w"), stderr=subprocess.STDOUT,
                              env=dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
                                       **SHORT_LEASE))  # killed below: 5 s until it leaves
    probe = Probe(domain)

    def collision() -> list[bool]:
        return list(probe.call(GetLevers, "/sim_server/get_levers", GetLevers.Request(
            entities=["floating", "resting"], lever=int(Lever.COLLISION))).enabled)
    try:
        assert wait_for(lambda: "lowered" in client_log.read_text(), 90.0), \
            client_log.read_text()
        assert collision() == [False, False]
        time.sleep(1.5)  # the server's guard has seen the client in the graph
        assert collision() == [False, False]
        client.send_signal(signal.SIGKILL)  # no clean-up of its own
        client.wait(60.0)
        assert wait_for(lambda: collision() == [True, True], 60.0, period=0.5), \
            "the killed client's levers were not restored"
        assert "restored 2 lever(s) that '/doomed_manager' changed" in log.read_text()
    finally:
        probe.close()
        if client.poll() is None:
            client.kill()
        stop(server)
