"""The fidelity_manager node against a Gazebo-classic interface under a namespace, with many static
copies to give back: sim_server serves ``gazebo_msgs`` under ``/gazebo`` without lever services,
the manager (``backend:=classic gazebo_namespace:=/gazebo``) lowers BOX_COUNT boxes of stack_test
by static copies, and on SIGINT restores every one within its budget (the 2.5 s default plus
``restore_per_static_copy`` per lowered tree), exits 0, and leaves each box dynamic again at the
pose it had before the manager started.

One process pair for the module. Every wait polls for its condition with a generous deadline.
"""
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from ros_processes import REPO, Probe, next_domain, start_node, stop, wait_for

pytest.importorskip("gazebo_msgs.srv", reason="interface packages not built")
from gazebo_msgs.srv import GetEntityState, GetModelProperties  # noqa: E402

from sim_fidelity.simulator.errors import SimulatorError  # noqa: E402
from sim_fidelity.simulator.ros.classic.backend import connect  # noqa: E402
from sim_fidelity.simulator.ros.classic.names import checked_namespace, qualified  # noqa: E402
from sim_fidelity_interfaces.msg import FidelitySummary  # noqa: E402

WORLD = REPO / "worlds" / "stack_test.sdf"
CONFIG = REPO / "config" / "stack_test.yaml"
NAMESPACE = "/gazebo"
BOX_COUNT = 20
WAIT_S = 120.0  # 2 x BOX_COUNT recompilations of sim_server's model, on a loaded machine
PER_COPY_S = 5.0  # restore_per_static_copy: a delete and a spawn, under load
IN_FLIGHT = 4  # requests sent before their answers are awaited
RESEND_S = 15.0  # an answer not come by then: the request was lost
POSE_TOLERANCE_M = 0.02  # a box given back dynamic may settle a little on its neighbours


def small_world(path: Path) -> tuple[Path, list[str]]:
    """stack_test.sdf with the robot, the ground and its first BOX_COUNT boxes; their names."""
    tree = ET.parse(WORLD)
    world = tree.getroot().find("world")
    boxes = [m for m in world.findall("model") if m.get("name").startswith("box_")]
    for model in boxes[BOX_COUNT:]:
        world.remove(model)
    tree.write(path)
    return path, [m.get("name") for m in boxes[:BOX_COUNT]]


def ask_all(probe: Probe, kind, service: str, requests: dict) -> dict:
    """``requests`` (name -> request) sent IN_FLIGHT at a time to ``service`` under NAMESPACE;
    the answers. A request unanswered after RESEND_S is sent again: the service's queue of 10
    is shared with the manager's requests, and one that overflows it is lost."""
    client = probe.node.create_client(kind, qualified(service, NAMESPACE))
    try:
        assert client.wait_for_service(timeout_sec=WAIT_S)
        answers = {}
        items = list(requests.items())
        end = time.monotonic() + WAIT_S
        for first in range(0, len(items), IN_FLIGHT):
            batch = dict(items[first:first + IN_FLIGHT])
            while batch:
                assert time.monotonic() < end, f"no answer to {sorted(batch)} from {service}"
                futures = {n: client.call_async(r) for n, r in batch.items()}
                wait_for(lambda fs=futures: all(f.done() for f in fs.values()), RESEND_S)
                for n, f in futures.items():
                    if f.done():
                        answers[n] = f.result()
                        del batch[n]
                    else:
                        client.remove_pending_request(f)
        return answers
    finally:
        probe.node.destroy_client(client)


def static_boxes(probe: Probe, boxes: list[str]) -> list[str] | None:
    """The boxes the model properties call static; None while one is missing (between the
    delete and the spawn of its copy)."""
    answers = ask_all(probe, GetModelProperties, "get_model_properties",
                      {b: GetModelProperties.Request(model_name=b) for b in boxes})
    if not all(a.success for a in answers.values()):
        return None
    return [b for b, a in answers.items() if a.is_static]


def positions(probe: Probe, boxes: list[str]) -> np.ndarray:
    """Each box's world position, (n, 3)."""
    answers = ask_all(probe, GetEntityState, "get_entity_state",
                      {b: GetEntityState.Request(name=b, reference_frame="world") for b in boxes})
    assert all(a.success for a in answers.values())
    return np.array([[a.state.pose.position.x, a.state.pose.position.y, a.state.pose.position.z]
                     for a in (answers[b] for b in boxes)])


@pytest.fixture(scope="module")
def lowered(tmp_path_factory):
    """sim_server under NAMESPACE and the manager with every box lowered by a static copy:
    (probe, manager process, its log, box names, positions before the manager)."""
    tmp = tmp_path_factory.mktemp("classic_restore")
    domain = next_domain()
    world, boxes = small_world(tmp / "stack_20.sdf")
    server = start_node("sim_fidelity.simulator.ros.server",
                        {"world": world, "paused": False, "real_time_factor": 1.0,
                         "interfaces": "gazebo_msgs", "gazebo_namespace": NAMESPACE,
                         "serve_levers": False}, domain, tmp / "server.log")
    probe = Probe(domain)
    manager = None
    try:
        assert static_boxes(probe, boxes) == [], (tmp / "server.log").read_text()
        start = positions(probe, boxes)
        summaries = probe.capture(FidelitySummary, "/fidelity_manager/summary")
        log = tmp / "manager.log"
        manager = start_node("sim_fidelity.fidelity_manager.node",
                             {"config": CONFIG, "preset": "adfi-3", "rate": 20.0,
                              "backend": "classic", "gazebo_namespace": NAMESPACE,
                              "world_file": world, "timeout": 30.0,
                              "restore_per_static_copy": PER_COPY_S}, domain, log)
        assert wait_for(lambda: summaries and summaries[-1].low == BOX_COUNT, WAIT_S), \
            log.read_text()
        assert wait_for(lambda: static_boxes(probe, boxes) == boxes, WAIT_S, period=0.5), \
            log.read_text()
        yield probe, manager, log, boxes, start
    finally:
        if manager is not None:
            stop(manager)
        probe.close()
        stop(server)


def test_sigint_restores_every_static_copy(lowered):
    probe, manager, log, boxes, start = lowered
    assert stop(manager, timeout=BOX_COUNT * PER_COPY_S + 30.0) == 0, log.read_text()
    assert "0 objects differ" in log.read_text()
    assert static_boxes(probe, boxes) == []
    moved = np.linalg.norm(positions(probe, boxes) - start, axis=1)
    assert (moved < POSE_TOLERANCE_M).all(), dict(zip(boxes, moved.round(4)))


@pytest.mark.parametrize("namespace", ["gazebo ns", "/1gazebo", "/gazebo//x", "-"])
def test_bad_gazebo_namespace_is_refused(namespace):
    with pytest.raises(SimulatorError, match="gazebo_namespace .* is not a ROS namespace"):
        connect("classic", gazebo_namespace=namespace)


@pytest.mark.parametrize("namespace", ["", "/", "/gazebo", "robot/gazebo/", "_ns2"])
def test_good_gazebo_namespace_passes(namespace):
    assert checked_namespace(namespace) == namespace
