"""The UGV's state spec reads a bag as the recording preset writes it: NavSatFix to the course's
ENU plane through the named origin (pymap3d), IMU pitch and yaw, the Ackermann command."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim_fidelity.data import data_dir
from sim_fidelity.reality_gap.bags import read_history
from sim_fidelity.reality_gap.errors import SpecError
from sim_fidelity.reality_gap.messages import default_message
from sim_fidelity.reality_gap.spec import Spec, load_spec
from sim_fidelity.recording.preset import load_preset
from sim_fidelity.recording.writer import BagWriter
from sim_fidelity.simulator.geodesy import enu_to_geodetic
from sim_fidelity.simulator.poses import rpy_to_quat
from sim_fidelity.ugv.course import ORIGIN
from sim_fidelity.ugv.vehicle import UgvSim

SPEC = data_dir("config") / "reality_gap" / "ackermann_ugv.yaml"


def test_spec_origin_is_the_course_origin_and_preset_has_its_topics() -> None:
    spec = load_spec(SPEC)
    origin = spec.state[0].origin
    assert (origin.latitude, origin.longitude, origin.altitude) == \
        (ORIGIN.latitude, ORIGIN.longitude, ORIGIN.altitude)
    recorded = dict(load_preset("ugv").topics)
    sources = [*spec.state, *spec.action, spec.reward]
    assert all(recorded.get(s.topic) == s.type for s in sources)
    assert {t.entity for t in spec.apply if t.component != "value"} == {"ugv"}
    # the value targets are settable values of the vehicle's own sensors on the design field
    settable = UgvSim.from_world("design").sensors.settable
    values = [t.entity for t in spec.apply if t.component == "value"]
    assert values and set(values) <= set(settable)


def test_navsat_fix_reads_as_course_metres(tmp_path: Path) -> None:
    spec = load_spec(SPEC)
    preset = load_preset("ugv")
    t = np.arange(0.0, 20.0, 0.5)
    east, north = 3.0 * np.cos(t / 5) - 1.0, 12.0 * np.sin(t / 7)  # metres, a curve
    pitch, yaw = 0.2 * np.sin(t / 3), np.unwrap(t / 4) % (2 * np.pi) - np.pi
    lat, lon, alt = enu_to_geodetic(east, north, np.zeros_like(t), ORIGIN)
    with BagWriter(tmp_path / "bag", preset.topics) as bag:
        for k, tk in enumerate(t):
            ns = int(tk * 1e9)
            fix = default_message("sensor_msgs/msg/NavSatFix")
            fix.latitude, fix.longitude, fix.altitude = lat[k], lon[k], alt[k]
            bag.write("/ugv/gps/fix", ns, fix)
            imu = default_message("sensor_msgs/msg/Imu")
            q = imu.orientation
            q.x, q.y, q.z, q.w = (float(v) for v in rpy_to_quat(0.0, pitch[k], yaw[k]))
            bag.write("/ugv/imu", ns, imu)
            cmd = default_message("ackermann_msgs/msg/AckermannDriveStamped")
            cmd.drive.speed, cmd.drive.steering_angle = 1.0, -0.3
            bag.write("/model/ugv/cmd_ackermann", ns, cmd)
    h = read_history(tmp_path / "bag", spec)
    grid = np.arange(0.0, t[-1] + 1e-9, 1 / spec.rate_hz)
    k = np.searchsorted(t, grid[:-1])
    np.testing.assert_allclose(h.s[:, 0], east[k], atol=1e-6)  # x east, m
    np.testing.assert_allclose(h.s[:, 1], north[k], atol=1e-6)  # y north, m
    np.testing.assert_allclose(h.s[:, 3], pitch[k], atol=1e-9)
    np.testing.assert_allclose(h.u, np.tile([1.0, -0.3], (len(k), 1)), atol=1e-6)


def test_write_run_writes_fixes_the_spec_reads_back_as_course_metres(tmp_path: Path) -> None:
    """``write_run`` with the UGV spec: east/north become a NavSatFix's latitude and longitude
    in the named origin's plane, and the ingest reads the run back."""
    from sim_fidelity.reality_gap.record import write_run

    spec = load_spec(SPEC)
    times = np.arange(0.0, 20.0, 1 / spec.rate_hz)
    rng = np.random.default_rng(1)
    states = np.column_stack([rng.uniform(-5, 5, len(times)), rng.uniform(0, 15, len(times)),
                              rng.uniform(-3, 3, len(times)), rng.uniform(-0.4, 0.4, len(times))])
    actions = np.column_stack([rng.uniform(0, 2, len(times)), rng.uniform(-0.5, 0.5, len(times))])
    write_run(tmp_path / "run", spec, times, states, actions, np.full(len(times) - 1, 10.0))
    h = read_history(tmp_path / "run", spec)
    n = len(h.s)
    assert n >= len(times) - 1
    np.testing.assert_allclose(h.s, states[:n], atol=1e-6)
    np.testing.assert_allclose(h.u, actions[:n], atol=1e-6)


def test_the_kernel_manager_reads_a_live_fix_as_the_ingest_does() -> None:
    from sensor_msgs.msg import NavSatFix

    from sim_fidelity.reality_gap.bags import extract

    spec = load_spec(SPEC)
    lat, lon, alt = enu_to_geodetic(3.0, 12.0, 0.0, ORIGIN)
    fix = NavSatFix(latitude=float(lat), longitude=float(lon), altitude=float(alt))
    assert [extract(fix, s) for s in spec.state[:2]] == pytest.approx([3.0, 12.0], abs=1e-6)


def test_geodetic_conversion_errors_name_the_entry() -> None:
    fix = {"name": "x", "topic": "/fix", "type": "sensor_msgs/msg/NavSatFix", "convert": "east"}
    act = {"name": "v", "topic": "/v", "type": "std_msgs/msg/Float64", "field": "data",
           "values": [0.0, 1.0]}
    with pytest.raises(SpecError, match=r"state\[0\]: convert 'east' needs 'origin' naming one "
                                        r"of the spec's origins \['o'\]"):
        Spec.from_dict({"origins": {"o": {"latitude": 1, "longitude": 2, "altitude": 0}},
                        "state": [fix], "action": [act]})
    imu = dict(fix, type="sensor_msgs/msg/Imu", origin="o")
    with pytest.raises(SpecError, match="needs a sensor_msgs/msg/NavSatFix"):
        Spec.from_dict({"origins": {"o": {"latitude": 1, "longitude": 2, "altitude": 0}},
                        "state": [imu], "action": [act]})
    with pytest.raises(SpecError, match="origin 'o': latitude or longitude out of range"):
        Spec.from_dict({"origins": {"o": {"latitude": 91, "longitude": 2, "altitude": 0}},
                        "state": [dict(fix, origin="o")], "action": [act]})


def test_recording_the_course_over_ros_reads_through_the_spec(tmp_path: Path) -> None:
    """sim_server, ugv_mission and ``simfid record --preset ugv --use-sim-time``, each a real
    process: the bag of the whole mission reads through the spec as a drive up the first leg.
    The server starts paused and plays once the recorder has matched a publisher on every topic,
    so the bag begins at the course's start whatever discovery costs on a loaded machine."""
    import os
    import signal
    import subprocess
    import sys

    from ros_processes import REPO, next_domain, start_node, stop, wait_for

    from sim_fidelity.simulator import SimState
    from sim_fidelity.simulator.ros.client import RosSimulator
    from sim_fidelity.ugv.course import world_path

    domain = next_domain()
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    log, server_log, mission_log = (tmp_path / f"{n}.log" for n in ("record", "sim_server",
                                                                     "mission"))

    def logs() -> str:
        return "\n".join(f"--- {f.name}:\n{f.read_text()[-2000:] if f.exists() else ''}"
                         for f in (log, server_log, mission_log))

    recorder = subprocess.Popen([sys.executable, "-m", "sim_fidelity.cli", "record", "--preset",
                                 "ugv", "-o", str(tmp_path / "bag"), "--use-sim-time"],
                                cwd=REPO, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    server = mission = None
    try:
        assert wait_for(lambda: "recording 6 topics" in log.read_text(), 60.0), logs()
        server = start_node("sim_fidelity.simulator.ros.server",
                            {"world": str(world_path("design")), "real_time_factor": 4.0,
                             "paused": True}, domain, server_log)
        mission = start_node("sim_fidelity.ugv.node", {"use_sim_time": True}, domain,
                             mission_log)
        assert wait_for(lambda: log.read_text().count("matched a publisher on") == 6, 120.0), \
            logs()
        with RosSimulator(domain_id=domain, timeout=60.0) as sim:
            sim.set_sim_state(SimState.PLAYING)
        assert wait_for(lambda: "mission done" in mission_log.read_text(), 300.0), logs()
        recorder.send_signal(signal.SIGINT)
        assert recorder.wait(60) == 0, logs()
    finally:
        for proc in (mission, server):
            if proc is not None:
                stop(proc)
        if recorder.poll() is None:
            recorder.kill()
    h = read_history(tmp_path / "bag", load_spec(SPEC))
    assert len(h) >= 3, logs()
    assert h.s2[-1, 1] - h.s[0, 1] > 2.0  # y (north, from the GPS fixes) grows up the first leg
    assert np.all(h.u[:, 0] >= 0) and h.u[:, 0].max() > 0.5  # commanded speeds
