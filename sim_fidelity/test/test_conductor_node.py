"""The ``model_conductor`` node in one process driving ``sim_server`` in another, with a model in a
``model_node`` of its own: start with an initial scene, transfers by service triggers and by
recorded action annotations, stop, topics, and the log bag read back. Real processes, real DDS,
real MuJoCo, real bags."""
from __future__ import annotations

import signal
import textwrap

import numpy as np
import pytest
from conductor_ros import start_conductor, start_model_node
from ros_processes import Probe, next_domain, start_node, stop, wait_for
from sdf_snippets import GROUND, box_model, world

from sim_fidelity.model_conductor.data_sources import action, joint_state, write_recording
from sim_fidelity.model_conductor.log import read_log
from sim_fidelity.simulator.ros.convert import pose_msg

TIMEOUT = 60.0
G = 9.81
ENSEMBLE = """
    conductor: {step: 0.01, realtime: true}
    models:
      world: {type: ros_simulator, main: true, parameters: {entities: "^(ball|crate)$"}}
      hand: {type: remote, parameters: {entities: [ball], velocity: [0.5, 0.0, 0.0]}}
    triggers:
      grasp: {on: {service: grasp}, do: [{transfer: {entity: ball, attribute: pose, to: hand}}]}
      drop: {on: {service: drop}, do: [{transfer: {entity: ball, attribute: pose, to: world}}]}
      never: {on: {service: never}, when: ["1 > 2"], do: [{transfer: {entity: ball, to: hand}}]}
      pick:
        on: {action: move_hand}
        let: {obj: "args.object"}
        do: [{transfer: {entity: $obj, attribute: pose, to: hand}}]
      put: {on: {action: release}, do: [{transfer: {entity: ball, attribute: pose, to: world}}]}
"""


@pytest.fixture
def ensemble(ensemble_processes):
    """The module's ensemble, with any run a test left behind (a test that failed half-way)
    stopped afterwards, so that the next test finds the conductor idle."""
    from sim_fidelity_interfaces.srv import StopEnsemble

    yield ensemble_processes
    probe = ensemble_processes[0]
    probe.call(StopEnsemble, "/model_conductor/stop", StopEnsemble.Request(), TIMEOUT)


@pytest.fixture(scope="module")
def ensemble_processes(tmp_path_factory):
    """sim_server (paused, a ball and a crate over the ground), the hand's model_node and the
    conductor node, in one DDS domain; yields (probe, folder, domain)."""
    folder = tmp_path_factory.mktemp("conductor_node")
    (folder / "world.sdf").write_text(world("drop", GROUND, box_model("ball", 0, 0, 3, 0.1),
                                            box_model("crate", 2, 0, 0.2, 0.4)))
    (folder / "ensemble.yaml").write_text(textwrap.dedent(ENSEMBLE))
    domain = next_domain()
    procs = {"sim_server": start_node("sim_fidelity.simulator.ros.server",
                                      {"world": folder / "world.sdf", "paused": True}, domain,
                                      folder / "sim_server.log"),
             "hand": start_model_node("hand", "carrier", domain, folder / "hand.log"),
             "conductor": start_conductor(folder / "ensemble.yaml", domain,
                                          folder / "conductor.log", timeout=TIMEOUT)}
    probe = Probe(domain)
    try:
        yield probe, folder, domain
    finally:
        probe.close()
        codes = {name: stop(proc, signal.SIGINT) for name, proc in procs.items()}
        assert codes == dict.fromkeys(procs, 0), {
            name: (folder / f"{name}.log").read_text() for name in procs}


def ball_pose(probe) -> np.ndarray:
    from simulation_interfaces.srv import GetEntityState
    res = probe.call(GetEntityState, "/get_entity_state", GetEntityState.Request(entity="ball"))
    p = res.state.pose.position
    return np.array([p.x, p.y, p.z])


def trigger(probe, name: str):
    from sim_fidelity_interfaces.srv import ActivateTrigger
    return probe.call(ActivateTrigger, "/model_conductor/trigger",
                      ActivateTrigger.Request(trigger=name), TIMEOUT)


def test_the_conductor_node_drives_sim_server_and_hands_the_ball_over(ensemble):
    """The scene's ball starts where the start request puts it and falls in sim_server; while the
    hand (a model_node) holds its pose sim_server moves it kinematically along the hand's line at
    constant height; dropped, it falls again. Every transfer is published and logged."""
    from sim_fidelity_interfaces.msg import ModelOutput, ResponsibilityChange
    from sim_fidelity_interfaces.srv import StartEnsemble, StopEnsemble

    probe, folder, _ = ensemble
    changes = probe.capture(ResponsibilityChange, "/model_conductor/responsibility")
    outputs = probe.capture(ModelOutput, "/model_conductor/output/hand")
    req = StartEnsemble.Request(objects=["ball"], poses=[pose_msg([0, 0, 50.0, 0, 0, 0, 1])],
                                source=StartEnsemble.Request.SOURCE_NONE,
                                log=str(folder / "handover_log"))
    res = probe.call(StartEnsemble, "/model_conductor/start", req, TIMEOUT)
    assert res.success, res.message
    assert list(res.models) == ["world", "hand"] and len(set(res.model_ids)) == 2
    again = probe.call(StartEnsemble, "/model_conductor/start", req, TIMEOUT)
    assert not again.success and "a run is under way" in again.message

    assert wait_for(lambda: ball_pose(probe)[2] < 49.5, TIMEOUT)  # falling from z = 50
    seen = len(outputs)
    grasp = trigger(probe, "grasp")
    assert grasp.success and grasp.fired, grasp.message
    # the hand's first two outputs holding the ball: the transfer has taken effect in sim_server
    assert wait_for(lambda: sum("ball" in m.entities for m in outputs[seen:]) >= 2, TIMEOUT), \
        "the hand never published the ball's pose after the grasp"
    held = ball_pose(probe)
    assert wait_for(lambda: ball_pose(probe)[0] > held[0] + 0.1, TIMEOUT)
    carried = ball_pose(probe)
    assert carried[2] == pytest.approx(held[2], abs=1e-9)  # kinematic: no fall while held
    assert carried[1] == pytest.approx(0.0, abs=1e-9)
    never = trigger(probe, "never")
    assert never.success and not never.fired and "1 > 2" in never.message
    unknown = trigger(probe, "fly")
    assert not unknown.success and "service triggers: drop, grasp, never" in unknown.message
    drop = trigger(probe, "drop")
    assert drop.success and drop.fired, drop.message
    assert wait_for(lambda: ball_pose(probe)[2] < carried[2] - 0.2, TIMEOUT), \
        f"dropped at {carried}, the ball stayed at {ball_pose(probe)}"  # falls again

    stopped = probe.call(StopEnsemble, "/model_conductor/stop", StopEnsemble.Request(), TIMEOUT)
    assert stopped.success and "stop called" in stopped.message, stopped.message
    assert stopped.steps > 0 and stopped.sim_time == pytest.approx(0.01 * stopped.steps)
    log = read_log(stopped.log)
    moves = [(t.entity, t.attribute, t.from_model, t.to_model, t.cause)
             for t in log.transfers if t.cause != "config"]
    assert moves == [("ball", "pose", "world", "hand", "grasp"),
                     ("ball", "twist", "world", "hand", "grasp"),
                     ("ball", "pose", "hand", "world", "drop"),
                     ("ball", "twist", "hand", "world", "drop")]
    assert stopped.transfers == len(log.transfers)
    assert {t.to_model for t in log.transfers if t.cause == "config"} == {"world"}
    grasped_at = next(t.time for t in log.transfers if t.cause == "grasp")
    carried_log = [(t, poses["ball"]) for t, poses, _ in log.outputs["hand"] if "ball" in poses]
    assert carried_log and carried_log[0][0] >= grasped_at
    wait_for(lambda: len(changes) >= len(log.transfers), 60.0)
    assert [(c.entity, c.attribute, c.cause) for c in changes if c.cause != "config"] == [
        m[:2] + (m[4],) for m in moves]
    assert any(list(m.entities) == ["ball"] for m in outputs)


def test_a_recorded_bag_drives_the_run_to_its_end(ensemble):
    """Played back from a bag, the action annotations move the ball to the hand and back at their
    recorded times, and the run ends by itself when the recording does."""
    from std_msgs.msg import Bool

    from sim_fidelity_interfaces.srv import StartEnsemble, StopEnsemble

    probe, folder, _ = ensemble
    running = probe.capture(Bool, "/model_conductor/running")  # the latest value arrives
    assert wait_for(lambda: probe.node.count_publishers("/model_conductor/running") > 0, TIMEOUT)
    times = np.round(np.arange(0, 0.3 + 1e-9, 0.01), 6)
    bag = write_recording(folder / "recording", [
        *(joint_state(t, ["wrist"], [t]) for t in times),
        action(0.1, "move_hand", {"object": "ball"}), action(0.2, "release")])
    req = StartEnsemble.Request(types=["box"], source=StartEnsemble.Request.SOURCE_BAG,
                                bag=str(bag))
    bad = probe.call(StartEnsemble, "/model_conductor/start", req, TIMEOUT)
    assert not bad.success and "1 types for 0 objects" in bad.message
    req.types = []
    req.log = str(folder / "playback_log")
    res = probe.call(StartEnsemble, "/model_conductor/start", req, TIMEOUT)
    assert res.success, res.message
    assert wait_for(lambda: running and not running[-1].data, TIMEOUT)  # ended by itself
    stopped = probe.call(StopEnsemble, "/model_conductor/stop", StopEnsemble.Request(), TIMEOUT)
    assert stopped.success and "data or the duration ended" in stopped.message, stopped.message
    assert stopped.sim_time == pytest.approx(0.3, abs=0.011)
    moves = [(round(t.time, 3), t.attribute, t.to_model, t.cause)
             for t in read_log(stopped.log).transfers if t.cause != "config"]
    assert moves == [(0.1, "pose", "hand", "pick"), (0.1, "twist", "hand", "pick"),
                     (0.2, "pose", "world", "put"), (0.2, "twist", "world", "put")]


def test_live_action_annotations_hand_the_ball_over(ensemble):
    """Live data: action annotations published on /action_sequence while the ensemble runs in real
    time activate the action triggers; stop ends the run."""
    from sim_fidelity_interfaces.msg import ActionAnnotation, ResponsibilityChange
    from sim_fidelity_interfaces.srv import StartEnsemble, StopEnsemble

    probe, folder, _ = ensemble
    changes = probe.capture(ResponsibilityChange, "/model_conductor/responsibility")
    actions = probe.publisher(ActionAnnotation, "/action_sequence")
    req = StartEnsemble.Request(source=StartEnsemble.Request.SOURCE_LIVE,
                                log=str(folder / "live_log"))
    res = probe.call(StartEnsemble, "/model_conductor/start", req, TIMEOUT)
    assert res.success, res.message
    assert wait_for(lambda: probe.node.count_subscribers("/action_sequence") > 0, TIMEOUT)
    assert wait_for(lambda: actions.get_subscription_count() > 0, TIMEOUT)

    def moved(cause: str) -> bool:
        return any(c.cause == cause for c in changes)

    actions.publish(ActionAnnotation(operation="move_hand", arg_names=["object"],
                                     arg_values=["ball"]))
    assert wait_for(lambda: moved("pick"), TIMEOUT)
    actions.publish(ActionAnnotation(operation="release"))
    assert wait_for(lambda: moved("put"), TIMEOUT)
    stopped = probe.call(StopEnsemble, "/model_conductor/stop", StopEnsemble.Request(), TIMEOUT)
    assert stopped.success and "stop called" in stopped.message, stopped.message
    moves = [(t.attribute, t.to_model, t.cause) for t in read_log(stopped.log).transfers
             if t.cause != "config"]
    assert moves == [("pose", "hand", "pick"), ("twist", "hand", "pick"),
                     ("pose", "world", "put"), ("twist", "world", "put")]


def test_a_bad_ensemble_config_stops_the_node_with_file_key_and_reason(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("models:\n  world: {type: ros_simulator, main: true}\n"
                      "triggers:\n"
                      "  t: {on: {service: s}, do: [{transfer: {entity: b, to: arm}}]}\n")
    log = tmp_path / "conductor.log"
    proc = start_conductor(config, next_domain(), log)
    assert proc.wait(30) == 2
    text = log.read_text()
    assert f"{config}: triggers.t.do[0].transfer.to:" in text and "arm" in text, text
    assert "Traceback" not in text


def test_sigint_during_a_run_stops_the_models_and_closes_the_log(ensemble):
    """A conductor started with autostart (live data) that gets SIGINT mid-run exits 0 and leaves
    a complete, readable log bag."""
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from std_msgs.msg import Bool

    from sim_fidelity_interfaces.msg import ModelOutput

    probe, folder, domain = ensemble
    running: list = []
    probe.node.create_subscription(  # latched: the value published before the probe matched
        Bool, "/second_conductor/running", running.append,
        QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    log = folder / "interrupted_log"
    proc = start_conductor(folder / "ensemble.yaml", domain,
                           folder / "second_conductor.log", name="second_conductor",
                           autostart=True, log=str(log), timeout=TIMEOUT)
    outputs = probe.capture(ModelOutput, "/second_conductor/output/world")
    try:
        assert wait_for(lambda: any(m.data for m in running), TIMEOUT)
        assert wait_for(lambda: outputs, TIMEOUT)  # ticking
    finally:
        code = stop(proc, signal.SIGINT)
    text = (folder / "second_conductor.log").read_text()
    assert code == 0 and "Traceback" not in text, text
    contents = read_log(log)
    assert {(t.entity, t.to_model) for t in contents.transfers} >= {("ball", "world")}
    assert contents.outputs["world"] and contents.outputs["hand"]


def test_a_model_node_that_dies_mid_run_ends_the_run_with_its_name(tmp_path):
    """When a remote model's node goes away, its step gets no answer: the run ends, the log is
    closed, ~/running turns false and ~/stop says which model failed; the conductor keeps serving
    and exits cleanly."""
    from sim_fidelity_interfaces.msg import ModelOutput
    from sim_fidelity_interfaces.srv import StartEnsemble, StopEnsemble

    config = tmp_path / "ensemble.yaml"
    config.write_text(textwrap.dedent("""
        models:
          main: {type: integrator, main: true}
          hand: {type: remote, parameters: {entities: [ball]}}
    """))
    domain = next_domain()
    hand = start_model_node("hand", "carrier", domain, tmp_path / "hand.log")
    conductor = start_conductor(config, domain, tmp_path / "conductor.log", timeout=2.0)
    probe = Probe(domain)
    try:
        req = StartEnsemble.Request(source=StartEnsemble.Request.SOURCE_NONE,
                                    log=str(tmp_path / "log"))
        outputs = probe.capture(ModelOutput, "/model_conductor/output/hand")
        res = probe.call(StartEnsemble, "/model_conductor/start", req, TIMEOUT)
        assert res.success, res.message
        # killed once it has stepped: a kill before the run's first step fails its start instead
        assert wait_for(lambda: outputs, TIMEOUT), "the hand never published an output"
        hand.kill()
        hand.wait(60)
        assert wait_for(lambda: (tmp_path / "log" / "metadata.yaml").exists(), TIMEOUT)
        stopped = probe.call(StopEnsemble, "/model_conductor/stop", StopEnsemble.Request(),
                             TIMEOUT)
        assert not stopped.success and "failed" in stopped.message, stopped.message
        assert "model 'hand'" in stopped.message and "/hand/step" in stopped.message, \
            stopped.message
        assert read_log(stopped.log).outputs["hand"]
    finally:
        probe.close()
        code = stop(conductor, signal.SIGINT)
    text = (tmp_path / "conductor.log").read_text()
    assert code == 0 and "Traceback" not in text, text
