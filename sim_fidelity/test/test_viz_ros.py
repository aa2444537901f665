"""sim_server's /tf and ~/markers, and its viewer (gui:=true) under a virtual X server.

One real sim_server process (module fixture) on a small world, with its viewer open on an Xvfb
display the test starts: /tf frames, markers (counts, ids, level colours, a lowered box turning
LOW) and a screenshot of the viewer. That nothing is read or built without a subscriber is
checked in process, on the SceneVisualization itself.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest
from ros_processes import REPO, Probe, next_domain, stop, wait_for

from sim_fidelity.fidelity_manager.levels import Level
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.protocol import Lever
from sim_fidelity.viz.colours import LEVEL_RGB8, LEVEL_RGBA

WORLD = """<sdf version="1.9"><world name="w">
  <model name="ground"><static>true</static><link name="l"><collision name="c"><geometry>
    <plane><normal>0 0 1</normal><size>8 8</size></plane></geometry></collision></link></model>
  <model name="box"><pose>-0.4 0 0.25 0 0 0</pose><link name="l">
    <collision name="c"><geometry><box><size>0.5 0.5 0.5</size></box></geometry></collision>
    <visual name="v"><geometry><box><size>0.5 0.5 0.5</size></box></geometry></visual>
  </link></model>
  <model name="ball"><pose>0.6 0 0.2 0 0 0</pose><link name="l">
    <collision name="c"><geometry><sphere><radius>0.2</radius></sphere></geometry></collision>
  </link></model>
</world></sdf>"""
DEADLINE = 120.0  # s: a loaded machine starts a server, a software-GL window and DDS slowly
# The server's own namespace: another test run's sim_server that lands in the same DDS domain
# (eight parallel runs share 230 domains) publishes /tf too but not under this name.
NS = f"/viz_{os.getpid()}"
FRAMES = {"ground", "box", "ball", "box::l"}


def level_of(marker) -> Level:
    """The level whose colour points the way of the marker's (shading scales, hue stays)."""
    rgb = np.array([marker.color.r, marker.color.g, marker.color.b])
    unit = LEVEL_RGBA[:, :3] / np.linalg.norm(LEVEL_RGBA[:, :3], axis=1, keepdims=True)
    return Level(int(np.argmax(unit @ (rgb / np.linalg.norm(rgb)))))


def xvfb() -> tuple[subprocess.Popen, str]:
    """A virtual X server on a display number it picks itself."""
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (tools/bootstrap.sh installs Debian's xvfb)")
    read, write = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "640x480x24",
                             "-nolisten", "tcp"], pass_fds=(write,), stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as f:
        number = f.readline().strip()
    assert number.isdigit(), "Xvfb did not say its display"
    return proc, f":{number}"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("viz")
    world = folder / "w.sdf"
    world.write_text(WORLD)
    display_proc, display = xvfb()
    domain = next_domain()
    log = folder / "sim_server.log"
    params = {"world": world, "paused": "true", "gui": "true", "viz_rate": 20.0,
              "tf_links": "['box::l']"}
    args = [sys.executable, "-m", "sim_fidelity.simulator.ros.server", "--ros-args", "-r",
            f"__ns:={NS}"]
    for k, v in params.items():
        args += ["-p", f"{k}:={v}"]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONUNBUFFERED="1", DISPLAY=display)
    proc = subprocess.Popen(args, env=env, cwd=REPO, stdout=log.open("w"),
                            stderr=subprocess.STDOUT)
    probe = Probe(domain)
    try:
        yield probe, display, log
    finally:
        probe.close()
        stop(proc)
        display_proc.terminate()
        display_proc.wait(10)


def test_tf_has_every_model_and_the_asked_link(server):
    from tf2_msgs.msg import TFMessage
    probe, _, log = server
    got = probe.capture(TFMessage, "/tf")
    # every 1 s: all of this world's frames (/tf is global: other worlds' would not be these)
    full = lambda: [m for m in list(got)  # noqa: E731
                    if {t.child_frame_id for t in m.transforms} == FRAMES]
    assert wait_for(full, DEADLINE), log.read_text()[-2000:]
    frames = {t.child_frame_id: t for t in full()[0].transforms}
    assert {t.header.frame_id for t in frames.values()} == {"world"}
    box = frames["box"].transform.translation
    assert (box.x, box.y, box.z) == pytest.approx((-0.4, 0.0, 0.25), abs=1e-6)


def test_markers_show_each_shape_and_a_lowered_one_turns_low(server):
    from visualization_msgs.msg import Marker, MarkerArray

    from sim_fidelity_interfaces.srv import SetLever
    probe, _, log = server
    got = probe.capture(MarkerArray, f"{NS}/sim_server/markers")
    full = lambda: [a for a in list(got) if len(a.markers) >= 3]  # noqa: E731 (all at first)
    assert wait_for(full, DEADLINE), log.read_text()[-2000:]
    first = {m.id: m for m in full()[0].markers}
    assert len(first) == 3  # the ground (no visual: its collision), the box's visual, the ball
    by_type = sorted(m.type for m in first.values())
    assert by_type == sorted([Marker.CUBE, Marker.CUBE, Marker.SPHERE])
    ball = next(m for m in first.values() if m.type == Marker.SPHERE)
    assert level_of(ball) == Level.HIGH
    assert ball.scale.x == pytest.approx(0.4) and ball.header.frame_id == "world"
    for lever in (Lever.DYNAMICS, Lever.COLLISION):
        res = probe.call(SetLever, f"{NS}/sim_server/set_lever",
                         SetLever.Request(entities=["ball"], lever=int(lever), enabled=False))
        assert res.result.result == 1, res.result.error_message

    def ball_low() -> bool:
        return any(m.id == ball.id and level_of(m) == Level.LOW for a in got for m in a.markers)
    assert wait_for(ball_low, DEADLINE)


def test_viewer_shows_the_scene_in_level_colours(server):
    from PIL import ImageGrab
    _, display, log = server

    def blue_pixels() -> int:
        shot = np.asarray(ImageGrab.grab(xdisplay=display).convert("RGB")).astype(float)
        hue = shot / np.maximum(np.linalg.norm(shot, axis=2, keepdims=True), 1e-9)
        high = LEVEL_RGB8[Level.HIGH] / np.linalg.norm(LEVEL_RGB8[Level.HIGH])
        return int(((hue @ high) > 0.99).sum())  # pixels of the HIGH colour, any shade
    assert wait_for(lambda: blue_pixels() > 200, DEADLINE, period=0.5), log.read_text()[-2000:]


def test_simfid_sim_gui_runs_the_world_in_the_viewer(server, tmp_path):
    _, display, _ = server
    world = tmp_path / "w.sdf"
    world.write_text(WORLD)
    run = subprocess.run([sys.executable, "-m", "sim_fidelity.cli", "sim", str(world), "--gui",
                          "--duration", "0.2"], env=dict(os.environ, DISPLAY=display),
                         capture_output=True, text=True, timeout=DEADLINE)
    assert run.returncode == 0, run.stderr
    assert "sim time         0.200 s" in run.stdout


def test_nothing_is_built_without_a_subscriber(context):
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from visualization_msgs.msg import MarkerArray

    from sim_fidelity.simulator.ros.publishers import PublishGate
    from sim_fidelity.simulator.ros.visualization import SceneVisualization
    node = rclpy.create_node("viz_alone", context=context)
    engine = MujocoEngine.from_string(WORLD)
    viz = SceneVisualization(node, engine, threading.RLock(), PublishGate(node), rate=0.0,
                             tf_links=[])
    try:
        viz.publish()
        assert not viz.marker_changes.started and not viz.tf_changes.started  # nothing built
        got = []
        node.create_subscription(MarkerArray, "/viz_alone/markers", got.append, 10)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        assert wait_for(lambda: viz.markers.get_subscription_count() > 0, DEADLINE)
        viz.publish()
        assert viz.marker_changes.started and not viz.tf_changes.started  # /tf: no subscriber
        assert wait_for(lambda: executor.spin_once(timeout_sec=0.05) or got, DEADLINE)
        assert len(got[0].markers) == 3
        executor.shutdown()
    finally:
        node.destroy_node()
