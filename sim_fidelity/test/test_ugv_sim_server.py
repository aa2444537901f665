"""The UGV over ROS: ``sim_server`` (a real process) on the design field publishes the GPS, IMU
and odometry topics of ``ugv/course.py`` and drives on AckermannDriveStamped and Twist."""
from __future__ import annotations

import math

import numpy as np
import pytest
from ros_processes import Probe, next_domain, start_node, stop, wait_for

from sim_fidelity.simulator import geodesy
from sim_fidelity.ugv.course import (
    COMMAND_TOPIC,
    GPS_TOPIC,
    IMU_TOPIC,
    ODOM_TOPIC,
    ORIGIN,
    TWIST_TOPIC,
    world_path,
)


def _seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """sim_server on the design field, as fast as it goes, and a probe listening from the start."""
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Imu, NavSatFix
    domain = next_domain()
    log = tmp_path_factory.mktemp("logs") / "sim_server.log"
    probe = Probe(domain)
    topics = {"gps": probe.capture(NavSatFix, GPS_TOPIC), "imu": probe.capture(Imu, IMU_TOPIC),
              "odom": probe.capture(Odometry, ODOM_TOPIC)}
    proc = start_node("sim_fidelity.simulator.ros.server",
                      {"world": str(world_path("design")), "real_time_factor": 8.0,
                       "publish_rate": 50.0}, domain, log)
    try:
        yield probe, topics, proc, log, domain
    finally:
        probe.close()
        stop(proc)


def test_gps_fixes_at_one_hertz_with_the_sdf_noise(served):
    from sensor_msgs.msg import NavSatFix, NavSatStatus
    probe, topics, proc, log, _ = served
    gps = topics["gps"]
    assert wait_for(lambda: len(gps) >= 60, 120.0), (len(gps), log.read_text())  # 8 s if idle
    fixes = list(gps)[:60]
    stamps = np.array([_seconds(f.header.stamp) for f in fixes])
    # every sample once, on the 1 Hz grid of sim time (the first may predate discovery)
    np.testing.assert_allclose(np.diff(stamps), 1.0, atol=1e-6)
    np.testing.assert_allclose(stamps, np.round(stamps), atol=1e-6)
    assert {f.header.frame_id for f in fixes} == {"gps_link"}
    assert {f.status.status for f in fixes} == {NavSatStatus.STATUS_FIX}
    assert {f.position_covariance_type for f in fixes} == {
        NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN}
    np.testing.assert_allclose(np.array(fixes[0].position_covariance).reshape(3, 3),
                               np.diag([0.04, 0.04, 0.16]))
    enu = np.array(geodesy.geodetic_to_enu([f.latitude for f in fixes],
                                           [f.longitude for f in fixes],
                                           [f.altitude for f in fixes], ORIGIN)).T
    # the vehicle rests at the first waypoint; the noise is 0.2 m across, 0.4 m up
    horizontal = enu[:, :2].reshape(-1)
    assert abs(horizontal.mean()) < 0.08
    assert horizontal.std() == pytest.approx(0.2, rel=0.25)
    assert enu[:, 2].mean() == pytest.approx(0.0725, abs=0.2)
    assert enu[:, 2].std() == pytest.approx(0.4, rel=0.35)


def test_imu_has_enu_orientation_body_rates_and_its_rate(served):
    probe, topics, proc, log, _ = served
    imu = topics["imu"]
    assert wait_for(lambda: len(imu) >= 200, 60.0), log.read_text()
    msgs = list(imu)[-200:]
    stamps = np.array([_seconds(m.header.stamp) for m in msgs])
    steps = np.diff(stamps)
    assert np.all(steps > 0)
    np.testing.assert_allclose(steps / 0.02, np.round(steps / 0.02), atol=1e-4)  # 50 Hz grid
    assert np.median(steps) == pytest.approx(0.02, abs=1e-6)
    assert {m.header.frame_id for m in msgs} == {"imu_link"}
    q = msgs[-1].orientation  # facing north: yaw pi/2 about z in ENU
    assert (q.z, q.w) == (pytest.approx(math.sqrt(0.5), abs=1e-3),
                          pytest.approx(math.sqrt(0.5), abs=1e-3))
    acc = np.array([[m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z]
                    for m in msgs])
    np.testing.assert_allclose(acc.mean(axis=0), [0, 0, 9.8], atol=0.02)
    np.testing.assert_allclose(acc.std(axis=0), 0.02, rtol=0.3)
    assert msgs[0].linear_acceleration_covariance[0] == pytest.approx(0.02 ** 2)


def test_ackermann_command_drives_and_odometry_follows(served):
    from ackermann_msgs.msg import AckermannDriveStamped
    from geometry_msgs.msg import Twist
    probe, topics, proc, log, _ = served
    odom = topics["odom"]
    assert wait_for(lambda: len(odom) > 0, 60.0), log.read_text()
    last = odom[-1]
    assert (last.header.frame_id, last.child_frame_id) == ("odom", "base_link")
    command = AckermannDriveStamped()
    command.drive.speed, command.drive.steering_angle = 0.8, 0.0
    publisher = probe.publisher(AckermannDriveStamped, COMMAND_TOPIC)

    def moving(speed: float, yaw_rate: float | None = None) -> bool:
        t = odom[-1].twist.twist
        return (abs(t.linear.x - speed) < 0.05 and abs(t.linear.y) < 0.05
                and (yaw_rate is None or abs(t.angular.z - yaw_rate) < 0.15))

    def sent_until(msg, pub, condition) -> bool:
        return wait_for(lambda: pub.publish(msg) or wait_for(condition, 0.5), 60.0, period=0.0)

    assert sent_until(command, publisher, lambda: moving(0.8)), log.read_text()
    # Gazebo's Twist command: the same bicycle model (yaw rate = v tan(delta) / L)
    twist = Twist()
    twist.linear.x, twist.angular.z = 0.5, 0.5 * math.tan(0.3) / 0.292
    assert sent_until(twist, probe.publisher(Twist, TWIST_TOPIC),
                      lambda: moving(0.5, twist.angular.z)), log.read_text()
    assert proc.poll() is None


def test_imu_pitch_is_set_and_released_over_ros(served):
    """``~/set_sensor_values`` takes the IMU's ``<sensor>/pitch``: the published orientation
    carries it (roll and yaw from the state) until NaN releases it; a request naming an unknown
    value changes nothing."""
    pytest.importorskip("sim_fidelity_interfaces.srv", reason="interface packages not built")
    from sim_fidelity.simulator.errors import UnknownEntityError
    from sim_fidelity.simulator.poses import quat_to_rpy
    from sim_fidelity.simulator.ros.client import RosSimulator
    probe, topics, proc, log, domain = served
    imu, name = topics["imu"], "ugv::base_link::imu/pitch"
    sim = RosSimulator(domain_id=domain, timeout=30.0)

    def reads(pitch: float) -> bool:  # messages published from now on report ``pitch``
        def latest() -> np.ndarray | None:
            q = imu[-1].orientation if imu else None
            return None if q is None else quat_to_rpy(np.array([q.x, q.y, q.z, q.w]))
        imu.clear()
        return wait_for(lambda: len(imu) >= 5 and abs(latest()[1] - pitch) < 1e-3
                        and abs(latest()[2] - math.pi / 2) < 1e-2, 60.0)
    try:
        sim.wait_for_server(60.0)
        sim.set_sensor_values([name], [0.25])
        assert reads(0.25), log.read_text()
        with pytest.raises(UnknownEntityError):
            sim.set_sensor_values([name, "ugv::base_link::imu/roll"], [0.0, 0.1])
        assert reads(0.25)  # the rejected request released nothing
        sim.set_sensor_values([name], [math.nan])
        assert reads(0.0)
    finally:
        sim.close()
