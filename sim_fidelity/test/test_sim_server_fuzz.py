"""Fuzzing sim_server's requests (issue 20, point 6, server side): hypothesis strategies build
every service request the server takes, with wild names, numbers (NaN, infinities, 1e300), bad
regular expressions, unknown codes and broken SDF, and run sequences of them through the
handlers on a real node in this process. Every request gets an answer with a result code, a
refusal names what was wrong, no handler error reaches the log as a bug, the engine stays
consistent and sim time never runs backwards without a reset. Then one real process: a
1e9-step request keeps the other services answering and a signal ends the server within a
second."""
from __future__ import annotations

import signal
import threading

import numpy as np
import pytest
from engine_cases import BAD_MODELS, assert_consistent
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ros_processes import (
    WALL_EXIT_S,
    Probe,
    exits_within,
    next_domain,
    seconds_to_exit,
    start_node,
    wait_for,
)

pytest.importorskip("simulation_interfaces.srv", reason="interface packages not built")
from geometry_msgs.msg import Vector3  # noqa: E402
from served_handlers import BOX, WORLD  # noqa: E402
from simulation_interfaces import srv as si  # noqa: E402
from simulation_interfaces.msg import EntityCategory, Result, SimulationState  # noqa: E402

from sim_fidelity.simulator.engine import MujocoEngine  # noqa: E402
from sim_fidelity.simulator.ros.server import SimServer  # noqa: E402
from sim_fidelity_interfaces import srv as ours  # noqa: E402

MAX_STEPS = 500  # the fuzzed server's max_steps_per_request: a request stays short

NAMES = st.sampled_from(["floating", "resting", "wall", "arm", "arm::rod", "arm::hinge",
                         "arm::gz::sim::systems::JointPositionController", "ground", "",
                         "nosuch", "floating::", "::", "fuzzed", "fuzzed_1", "ü", "x" * 300])
WILD = st.one_of(st.floats(-5, 5), st.sampled_from([0.0, np.nan, np.inf, -np.inf, 1e300,
                                                    -1e300, 1e12, 5e-324]))
REGEX = st.sampled_from(["", ".*", "float", "^arm", "(", "[a-", "*", "a{2,1}", "\\"])
UINT8 = st.integers(0, 255)


def mostly(good, wild: st.SearchStrategy) -> st.SearchStrategy:
    """``good`` three times in four, else something from ``wild``: most requests of a
    sequence reach the world, so what they do there is fuzzed too."""
    return st.one_of(st.just(good), st.just(good), st.just(good), wild)


def vector(values) -> Vector3:
    return Vector3(x=float(values[0]), y=float(values[1]), z=float(values[2]))


@st.composite
def pose_fields(draw, msg) -> None:
    """Fill a geometry_msgs Pose with wild numbers (often a valid pose)."""
    if draw(mostly(False, st.just(True))):
        msg.position.x, msg.position.y, msg.position.z = (draw(WILD) for _ in range(3))
        q = msg.orientation
        q.x, q.y, q.z, q.w = (draw(WILD) for _ in range(4))
    else:
        msg.position.z, msg.orientation.w = draw(st.floats(0.1, 3)), 1.0


@st.composite
def filters(draw, req):
    f = req.filters
    f.filter = draw(REGEX)
    f.categories = [EntityCategory(category=c) for c in draw(st.lists(UINT8, max_size=2))]
    f.tags.tags = draw(st.lists(st.sampled_from(["kind:model", "kind:link", "parent:arm", "x"]),
                                max_size=2))
    f.tags.filter_mode = draw(UINT8)
    f.bounds.type = draw(UINT8)
    f.bounds.points = [vector(draw(st.tuples(WILD, WILD, WILD)))
                       for _ in range(draw(st.integers(0, 3)))]
    return req


@st.composite
def entity_state(draw):
    req = si.SetEntityState.Request(entity=draw(NAMES))
    req.state.header.frame_id = draw(mostly("world", st.sampled_from(["", "map"])))
    draw(pose_fields(req.state.pose))
    t = req.state.twist
    if draw(st.booleans()):
        t.linear, t.angular = (vector(draw(st.tuples(WILD, WILD, WILD))) for _ in range(2))
    return req


@st.composite
def spawn(draw):
    req = si.SpawnEntity.Request(name=draw(mostly("fuzzed", st.sampled_from(
                                     ["", "floating", "a b", "x::y", "ü"]))),
                                 allow_renaming=draw(st.booleans()),
                                 entity_namespace=draw(mostly("", st.just("/robot"))))
    source = draw(st.sampled_from(["box", "bad", "bad", "uri", "none"]))
    if source == "box":
        req.resource_string = BOX
    elif source == "bad":
        req.resource_string = BAD_MODELS[draw(st.sampled_from(sorted(BAD_MODELS)))]
    elif source == "uri":
        req.uri = draw(st.sampled_from(["model://nosuch", "file:///nonexistent.sdf",
                                        "/etc/hostname", "http://example.com/m.sdf"]))
    req.initial_pose.header.frame_id = draw(mostly("", st.sampled_from(["world", "odom"])))
    draw(pose_fields(req.initial_pose.pose))
    return req


def numbers(draw, count: int) -> list[float]:
    return [draw(WILD) for _ in range(count)]


@st.composite
def own_request(draw):
    which = draw(st.sampled_from(["set_lever", "get_levers", "list_entities", "get_states",
                                  "set_states", "set_sensor_values"]))
    names = draw(st.lists(NAMES, max_size=3))
    if which == "set_lever":
        return "~/set_lever", ours.SetLever.Request(
            entities=names, lever=draw(st.sampled_from([0, 1, 2, 3, 4, 5, 6, 255])),
            enabled=draw(st.booleans()), owner=draw(st.sampled_from(["", "/gone", "/x/y"])))
    if which == "get_levers":
        return "~/get_levers", ours.GetLevers.Request(entities=names, lever=draw(UINT8) % 8,
                                                      original=draw(st.booleans()))
    if which == "list_entities":
        return "~/list_entities", ours.ListEntities.Request(
            kinds=draw(st.lists(UINT8, max_size=3)), filter=draw(REGEX))
    if which == "get_states":
        return "~/get_states", ours.GetStates.Request(entities=names)
    if which == "set_states":
        n = len(names) + draw(st.integers(-1, 1))
        return "~/set_states", ours.SetStates.Request(
            entities=names, poses=numbers(draw, 7 * max(n, 0)) if draw(st.booleans()) else [],
            twists=numbers(draw, 6 * max(n, 0)) if draw(st.booleans()) else [])
    return "~/set_sensor_values", ours.SetSensorValues.Request(
        names=names, values=numbers(draw, len(names) + draw(st.integers(-1, 1))))


KINDS = ("state", "spawn", "delete", "step", "sim_state", "reset", "entities", "states", "info",
         "entity_state", "bounds", "features", "own", "own", "spawn", "state")


@st.composite
def request(draw, kind: str):
    """One (service name, request) of a ``kind`` of the services sim_server serves (all but
    QUITTING, which ends the server and has its own test in test_sim_server.py)."""
    if kind == "state":
        return "/set_entity_state", draw(entity_state())
    if kind == "spawn":
        return "/spawn_entity", draw(spawn())
    if kind == "delete":
        return "/delete_entity", si.DeleteEntity.Request(entity=draw(NAMES))
    if kind == "step":
        return "/step_simulation", si.StepSimulation.Request(
            steps=draw(st.one_of(st.integers(0, 50), st.sampled_from([MAX_STEPS + 1, 2**64 - 1]))))
    if kind == "sim_state":
        req = si.SetSimulationState.Request()
        req.state.state = draw(UINT8.filter(lambda s: s != SimulationState.STATE_QUITTING))
        return "/set_simulation_state", req
    if kind == "reset":
        return "/reset_simulation", si.ResetSimulation.Request(scope=draw(UINT8))
    if kind == "entities":
        return "/get_entities", draw(filters(si.GetEntities.Request()))
    if kind == "states":
        return "/get_entities_states", draw(filters(si.GetEntitiesStates.Request()))
    if kind == "info":
        return "/get_entity_info", si.GetEntityInfo.Request(entity=draw(NAMES))
    if kind == "entity_state":
        return "/get_entity_state", si.GetEntityState.Request(entity=draw(NAMES))
    if kind == "bounds":
        return "/get_entity_bounds", si.GetEntityBounds.Request(entity=draw(NAMES))
    if kind == "features":
        return "/get_simulator_features", si.GetSimulatorFeatures.Request()
    return draw(own_request())


class Bugs:
    """Stands in for the node's logger in SimServer._guarded: collects what it logs as a bug."""

    def __init__(self, logger):
        self.logger, self.errors = logger, []

    def error(self, line: str) -> None:
        self.errors.append(line)

    def __getattr__(self, name):
        return getattr(self.logger, name)


_servers = iter(range(10**6))


@settings(max_examples=20, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_fuzzed_request_is_answered_and_the_world_stays_whole(context, data):
    """Each example: every kind of request once or twice, in a random order."""
    import rclpy
    node = rclpy.create_node(f"fuzzed_server_{next(_servers)}", context=context)
    bugs = Bugs(node.get_logger())
    node.get_logger = lambda: bugs
    engine = MujocoEngine.from_string(WORLD)
    server = SimServer(node, engine, real_time_factor=0.0, paused=True, publish_rate=0.0,
                       odometry=[], max_steps=MAX_STEPS)
    handlers = {s.srv_name: (s.srv_type, s.callback) for s in node.services}
    try:
        for which in data.draw(st.permutations(KINDS)):
            name, req = data.draw(request(which))
            kind, handler = handlers[name]
            before = engine.time
            res = handler(req, kind.Response())
            assert isinstance(res, kind.Response)
            if hasattr(res, "result") and res.result.result != Result.RESULT_OK:
                assert res.result.error_message, (name, req, res)
            assert not bugs.errors, (name, req, bugs.errors)
            assert_consistent(engine)
            reset = name in ("/reset_simulation", "/set_simulation_state")
            assert engine.time >= before or reset, (name, req)
            assert engine.divergences == 0, (name, req)
    finally:
        server.stop()
        node.destroy_node()


# ---------------------------------------------------------------------- one real process
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_a_billion_steps_leave_the_server_answering_and_a_signal_ends_it(tmp_path, sig):
    world_file = tmp_path / "world.sdf"
    world_file.write_text(WORLD)
    domain = next_domain()
    log = tmp_path / "sim_server.log"
    proc = start_node("sim_fidelity.simulator.ros.server",
                      {"world": world_file, "paused": True, "real_time_factor": 0.0,
                       "max_steps_per_request": 1_000_000_000}, domain, log)
    probe = Probe(domain)
    try:
        assert probe.call(si.GetSimulationState, "/get_simulation_state",
                          si.GetSimulationState.Request(), timeout=60.0).state.state == \
            SimulationState.STATE_PAUSED
        answer: list = []

        def step_forever() -> None:
            try:
                answer.append(probe.call(si.StepSimulation, "/step_simulation",
                                         si.StepSimulation.Request(steps=10**9), timeout=60.0))
            except Exception:  # noqa: BLE001 - the server (then the probe) ends mid-request
                pass  # the signal below ends the server before a billion steps are done

        threading.Thread(target=step_forever, daemon=True).start()

        def sim_time() -> float:
            return probe.call(ours.GetStates, "/sim_server/get_states",
                              ours.GetStates.Request(entities=["floating"]),
                              timeout=30.0).sim_time

        # the step request travels on its own; wait until the server has begun it
        assert wait_for(lambda: sim_time() > 0.0, 60.0, period=0.1), \
            "the billion-step request never started stepping"
        first = sim_time()
        assert wait_for(lambda: sim_time() > first, 60.0, period=0.1), \
            "sim time stopped moving while other services answered"
        assert not answer  # a billion steps are far from done
        proc.send_signal(sig)
        assert exits_within(proc, WALL_EXIT_S), f"still running {WALL_EXIT_S:g} s after {sig!r}"
        assert proc.returncode == 0, log.read_text()
        took = seconds_to_exit(log)
        assert took < 1.0, f"the server exited {took:.3f} s after its signal handler ran"
        assert "Traceback" not in log.read_text()
    finally:
        probe.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
