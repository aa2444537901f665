"""The Gazebo-classic flavour (``ClassicRosSimulator``, ``gazebo_msgs``) against a real sim_server
process serving ``interfaces:=gazebo_msgs`` without its lever services, as Gazebo classic would:
entity listing, states from the state topics, set state, spawn and delete, the GRAVITY lever,
pause and play, the static-copy fallback, and how a client finds which interface is served.
Gazebo classic itself does not run here; the server stands in for it with the same names and
types (``simulator/ros/classic/names.py``, checked against gazebo_ros 3.7.0).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from ros_processes import CLIENT_TIMEOUT_S, Probe, next_domain, settles, start_node, stop, wait_for
from sdf_snippets import GROUND, box_model, servo_pendulum, world

from sim_fidelity.simulator import (
    EntityKind,
    InvalidOperationError,
    Lever,
    SimState,
    SimulatorError,
    UnknownEntityError,
    UnsupportedFeatureError,
)

pytest.importorskip("gazebo_msgs.srv", reason="interface packages not built")

from sim_fidelity.simulator.ros.classic.backend import (  # noqa: E402
    connect,
    detect_interface,
    interface_services,
)
from sim_fidelity.simulator.ros.classic.client import ClassicRosSimulator  # noqa: E402
from sim_fidelity.simulator.ros.classic.names import SERVICES, TOPICS, qualified  # noqa: E402

WORLD = world("classic", GROUND, box_model("resting", 0, 0, 0.2),
              box_model("floating", 2, 0, 1.0), box_model("wall", 5, 0, 0.5, static=True),
              servo_pendulum())
NEW_BOX = "<sdf version='1.9'>" + box_model("spawned", 0, 0, 0.5) + "</sdf>"


@pytest.fixture(scope="module")
def world_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("classic") / "classic.sdf"
    path.write_text(WORLD)
    return path


@pytest.fixture(scope="module")
def server(world_file, tmp_path_factory):
    """(domain, process) of a paused sim_server speaking gazebo_msgs only."""
    domain = next_domain()
    proc = start_node("sim_fidelity.simulator.ros.server",
                      {"world": world_file, "paused": True, "real_time_factor": 1.0,
                       "interfaces": "gazebo_msgs", "serve_levers": False}, domain,
                      tmp_path_factory.mktemp("log") / "sim_server.log")
    yield domain, proc
    assert proc.poll() is None, "sim_server died during the tests"
    stop(proc)


@pytest.fixture(scope="module")
def client(server, world_file):
    sim = ClassicRosSimulator(domain_id=server[0], timeout=CLIENT_TIMEOUT_S,
                              world_file=str(world_file))
    sim.wait_for_server(60.0)
    yield sim
    sim.close()


@pytest.fixture
def sim(client):
    """Paused, reset, every lever on."""
    client.set_sim_state(SimState.PAUSED)
    client.reset()
    for lever in (Lever.DYNAMICS, Lever.COLLISION, Lever.GRAVITY):
        client.set_lever(["resting", "floating"], lever, True)
    return client


@pytest.fixture(scope="module")
def probe(server):
    p = Probe(server[0], "classic_probe")
    yield p
    p.close()


def test_the_server_advertises_humbles_names_and_types(probe):
    from gazebo_msgs.msg import ModelStates  # noqa: F401 - the topic types below are imported

    def served():
        return dict(probe.node.get_service_names_and_types())
    wanted = {qualified(n): [e.type] for n, e in SERVICES.items()}
    assert wait_for(lambda: wanted.items() <= served().items(), 60.0), \
        set(wanted.items()) - set(served().items())
    assert "/get_entities" not in served()  # simulation_interfaces is not served

    def topics():
        return {n: tuple(t) for n, t in probe.node.get_topic_names_and_types()}
    wanted_topics = {qualified(n): (e.type,) for n, e in TOPICS.items()}
    assert wait_for(lambda: wanted_topics.items() <= topics().items(), 60.0), \
        set(wanted_topics.items()) - set(topics().items())


def test_entities_from_the_model_list_and_properties(sim):
    assert set(sim.entities(EntityKind.MODEL)) == {"ground", "resting", "floating", "wall", "arm"}
    assert {"resting::link", "arm::post", "arm::rod"} <= set(sim.entities(EntityKind.LINK))
    assert {"arm::hinge", "arm::fix"} <= set(sim.entities(EntityKind.JOINT))
    assert sim.entity_info("wall").static and not sim.entity_info("floating").static
    assert sim.entity_info("arm::rod").parent == "arm"
    with pytest.raises(UnknownEntityError, match="nosuch"):
        sim.entity_info("nosuch")
    lo, hi = sim.bounds(["floating", "arm::post"])  # from the SDF: no bounds service in classic
    np.testing.assert_allclose(hi[0], [0.2, 0.2, 0.2], atol=1e-6)  # a 0.4 m cube
    assert np.isnan(lo[1]).all()


def test_features_say_what_classic_has(sim):
    f = sim.features()
    assert f.levers == {Lever.DYNAMICS, Lever.COLLISION, Lever.GRAVITY}
    assert f.static_fallback and f.spawning and f.deleting and f.free_running
    assert not f.stepping
    with pytest.raises(UnsupportedFeatureError, match="stepping"):
        sim.step(1)
    with pytest.raises(SimulatorError):
        sim.set_lever(["arm::hinge"], Lever.ACTUATION, False)


def test_states_come_from_the_topics_while_playing(sim, probe):
    from gazebo_msgs.msg import LinkStates, ModelStates
    models, links = probe.capture(ModelStates, "/model_states"), probe.capture(LinkStates,
                                                                               "/link_states")
    sim.set_sim_state(SimState.PLAYING)
    assert wait_for(lambda: len(models) > 3 and len(links) > 3, 60.0)
    reads = sim.topic_reads
    assert wait_for(lambda: sim.get_states(["floating", "resting::link"]) is not None
                    and sim.topic_reads > reads, 60.0), "get_states never used the topics"
    z = sim.get_states(["floating"])[0][0, 2]
    sim.set_sim_state(SimState.PAUSED)
    i = list(models[-1].name).index("floating")
    assert wait_for(lambda: any(m.pose[i].position.z == z for m in list(models)), 60.0), \
        "the state read is none of the published ones"
    assert set(models[-1].name) == {"ground", "resting", "floating", "wall", "arm"}
    assert {"arm::rod", "floating::link"} <= set(links[-1].name)  # links scoped as classic does
    # none while paused, as classic: what was sent before the pause arrives first
    assert settles(lambda: (len(models), sim.time)), "states or /clock keep coming while paused"


def test_set_state_then_read_it_back_while_paused(sim):
    reads = sim.topic_reads
    pose = np.array([[1.0, 2.0, 3.0, 0, 0, math.sin(0.3), math.cos(0.3)]])
    twist = np.array([[0.5, 0, 0, 0, 0, 0.2]])
    sim.set_states(["floating"], pose, twist)
    p, t = sim.get_states(["floating"])
    np.testing.assert_allclose(p, pose, atol=1e-9)
    np.testing.assert_allclose(t, twist, atol=1e-9)
    assert sim.topic_reads == reads  # after a write, per-entity get_entity_state
    with pytest.raises(InvalidOperationError):
        sim.set_states(["arm::rod"], poses=pose)  # a link held by a joint: the server refuses
    with pytest.raises(UnknownEntityError):
        sim.get_states(["nosuch"])


def test_spawn_and_delete(sim, probe):
    from gazebo_msgs.srv import GetModelList
    name = sim.spawn("spawned", NEW_BOX, np.array([0, 4, 1, 0, 0, 0, 1.0]))
    try:
        assert name == "spawned" and {"spawned", "spawned::link"} <= set(sim.entities())
        np.testing.assert_allclose(sim.get_states(["spawned"])[0][0, :3], [0, 4, 1], atol=1e-9)
        listed = probe.call(GetModelList, "/get_model_list", GetModelList.Request())
        assert listed.success and "spawned" in listed.model_names
        with pytest.raises(SimulatorError, match="spawned"):
            sim.spawn("spawned", NEW_BOX)
    finally:
        sim.delete(name)
    assert "spawned" not in sim.entities()
    with pytest.raises(UnknownEntityError):
        sim.delete("spawned")
    with pytest.raises(InvalidOperationError):
        sim.delete("resting::link")


def test_gravity_lever_through_link_properties(sim, probe):
    from gazebo_msgs.srv import GetLinkProperties
    sim.set_states(["floating"], np.array([[2, 0, 3.0, 0, 0, 0, 1]]), np.zeros((1, 6)))
    sim.set_lever(["floating"], Lever.GRAVITY, False)
    assert sim.get_lever(["floating", "resting"], Lever.GRAVITY).tolist() == [False, True]
    props = probe.call(GetLinkProperties, "/get_link_properties",
                       GetLinkProperties.Request(link_name="floating::link"))
    assert props.success and not props.gravity_mode and props.mass > 0
    sim.set_sim_state(SimState.PLAYING)
    assert wait_for(lambda: sim.time > 0.2, 60.0)
    sim.set_sim_state(SimState.PAUSED)
    assert sim.get_states(["floating"])[0][0, 2] == pytest.approx(3.0, abs=1e-6)
    sim.set_lever(["floating"], Lever.GRAVITY, True)
    sim.set_sim_state(SimState.PLAYING)
    start = sim.time
    assert wait_for(lambda: sim.time > start + 0.2, 60.0)
    sim.set_sim_state(SimState.PAUSED)
    assert sim.get_states(["floating"])[0][0, 2] < 2.9


def test_pause_play_and_stop(sim):
    assert sim.sim_state() == SimState.PAUSED
    sim.set_sim_state(SimState.PLAYING)
    assert sim.sim_state() == SimState.PLAYING
    assert wait_for(lambda: sim.time > 0.05, 60.0), "time does not run while playing"
    sim.set_sim_state(SimState.PAUSED)
    assert settles(lambda: sim.time), "time runs on while paused"
    sim.set_sim_state(SimState.STOPPED)
    assert sim.sim_state() == SimState.STOPPED and sim.time == 0.0
    with pytest.raises(InvalidOperationError):
        sim.set_sim_state(SimState.LOADING_WORLD)


def test_static_copy_fallback_through_spawn_and_delete(sim):
    sim.set_states(["resting"], np.array([[0, 1, 0.2, 0, 0, 0, 1.0]]))
    sim.set_lever(["resting"], Lever.DYNAMICS, False)
    assert sim.get_lever(["resting"], Lever.DYNAMICS).tolist() == [False]
    assert sim.entity_info("resting").static  # the model now is a static copy of itself
    np.testing.assert_allclose(sim.get_states(["resting"])[0][0, :3], [0, 1, 0.2], atol=1e-9)
    sim.set_lever(["resting"], Lever.COLLISION, False)
    assert sim.get_lever(["resting"], Lever.COLLISION).tolist() == [False]
    sim.set_lever(["resting"], Lever.DYNAMICS, True)
    sim.set_lever(["resting"], Lever.COLLISION, True)
    assert not sim.entity_info("resting").static  # the original is back, where it was
    np.testing.assert_allclose(sim.get_states(["resting"])[0][0, :3], [0, 1, 0.2], atol=1e-9)


def test_detection_finds_classic(server, world_file):
    assert detect_interface(domain_id=server[0], timeout=CLIENT_TIMEOUT_S) == "gazebo_msgs"
    with connect("auto", domain_id=server[0], timeout=CLIENT_TIMEOUT_S,
                 world_file=str(world_file)) as sim:
        assert isinstance(sim, ClassicRosSimulator)
        assert "floating" in sim.entities(EntityKind.MODEL)
    with pytest.raises(SimulatorError, match="backend 'ode'"):
        connect("ode")


def test_both_interfaces_under_a_namespace(world_file, tmp_path):
    """interfaces:=both with gazebo_namespace: detection prefers simulation_interfaces; the
    classic flavour works under the namespace."""
    from sim_fidelity.simulator.ros.client import RosSimulator
    domain = next_domain()
    proc = start_node("sim_fidelity.simulator.ros.server",
                      {"world": world_file, "paused": True, "interfaces": "both",
                       "gazebo_namespace": "/gazebo"}, domain, tmp_path / "both.log")
    try:
        with connect("auto", domain_id=domain, timeout=CLIENT_TIMEOUT_S) as sim:
            assert type(sim) is RosSimulator
            sim.wait_for_server(20.0)
        with ClassicRosSimulator(domain_id=domain, timeout=CLIENT_TIMEOUT_S,
                                 gazebo_namespace="/gazebo") as sim:
            sim.wait_for_server(20.0)
            assert "floating" in sim.entities(EntityKind.MODEL)
            assert sim.step_size == pytest.approx(0.001)
    finally:
        assert stop(proc) == 0


def test_interface_choice_is_checked():
    with pytest.raises(SimulatorError, match="one of simulation_interfaces, gazebo_msgs, both"):
        interface_services("ros1", {}, "")
    with pytest.raises(SimulatorError, match="gazebo_namespace"):
        interface_services("both", {}, "")
    assert interface_services("simulation_interfaces", {"/a": (object, None)}, "") == {
        "/a": (object, None)}


def test_status_messages_become_typed_errors():
    """sim_server's typed messages, and Gazebo classic's own wording (gazebo_ros 3.7.0)."""
    from sim_fidelity.simulator.errors import EntityExistsError, InvalidPoseError, SdfError
    from sim_fidelity.simulator.ros.classic.outcome import error_for, message_for

    gone = error_for("Entity [box] does not exist", "delete_entity", "box")
    assert isinstance(gone, UnknownEntityError) and gone.name == "box"
    assert isinstance(error_for("Entity [box] already exists.", "spawn_entity", "box"),
                      EntityExistsError)
    assert isinstance(error_for("Failed to parse XML string: \n<sdf", "spawn_entity"), SdfError)
    sent = message_for(InvalidPoseError("quaternion is not of unit length"))
    back = error_for(sent, "set_entity_state", "box")
    assert type(back) is InvalidPoseError and "unit length" in str(back)
    plain = error_for("something else went wrong", "get_model_list")
    assert type(plain) is SimulatorError and "get_model_list" in str(plain)
    assert message_for(KeyError("x")).startswith("SimulatorError: ")
