"""The Traxxas-class UGV in process: steering geometry, driving, sensors, the two fields."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sim_fidelity.simulator import geodesy
from sim_fidelity.simulator.actuators import ackermann_drives
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.errors import InvalidOperationError, SdfError, UnknownEntityError
from sim_fidelity.ugv.course import MODEL, ORIGIN, WAYPOINTS, world_path
from sim_fidelity.ugv.vehicle import UgvSim
from sim_fidelity.world_generators.ackermann_course import GRASS_MU, course_world

JOINTS = ["ugv::front_left_steering_joint", "ugv::front_right_steering_joint"]


@pytest.fixture(scope="module")
def design_drive():
    return next(iter(ackermann_drives(MujocoEngine.from_file(world_path("design")).world)
                     .values()))


def test_geodesy_round_trip_and_scale():
    e, n, u = np.array([0.0, 100.0, -30.0]), np.array([0.0, 0.0, 100.0]), np.zeros(3)
    lat, lon, alt = geodesy.enu_to_geodetic(e, n, u, ORIGIN)
    back = np.array(geodesy.geodetic_to_enu(lat, lon, alt, ORIGIN))
    np.testing.assert_allclose(back, [e, n, u], atol=1e-6)
    assert lat[0] == pytest.approx(ORIGIN.latitude) and lon[0] == pytest.approx(ORIGIN.longitude)
    # 100 m north is about 1/1111 degree of latitude; 100 m east is more degrees of longitude
    assert lat[2] - lat[0] == pytest.approx(100 / 111_050, rel=5e-3)
    assert lon[1] - lon[0] == pytest.approx(100 / (111_320 * math.cos(math.radians(41.4))),
                                            rel=5e-3)
    with pytest.raises(ValueError, match="latitude 95"):
        geodesy.enu_to_geodetic(0, 0, 0, type(ORIGIN)("bad", 95.0, 0.0, 0.0))


@pytest.mark.parametrize("steering", [0.35, -0.2, 0.05])
def test_ackermann_linkage_meets_at_one_turning_centre(design_drive, steering):
    d = design_drive
    left, right = d.steering_angles(steering)
    radius = d.wheel_base / math.tan(steering)  # bicycle: + is a left turn
    half = d.kingpin_width / 2
    # both steered wheels' axes pass through the turning centre on the rear axle's line
    assert d.wheel_base / math.tan(left) == pytest.approx(radius - half, rel=1e-9)
    assert d.wheel_base / math.tan(right) == pytest.approx(radius + half, rel=1e-9)
    inner, outer = (left, right) if steering > 0 else (right, left)
    assert abs(inner) > abs(steering) > abs(outer)
    # each wheel spins at its own path's speed round the centre: outer faster than inner
    speeds = d.wheel_speeds(1.0, steering) * d.wheel_radius
    lateral = radius - d.wheel_side * d.wheel_separation / 2
    expected = np.hypot(lateral, np.where(d.wheel_front, d.wheel_base, 0)) / abs(radius)
    np.testing.assert_allclose(speeds, expected, rtol=1e-12)
    assert d.steering_angles(10.0)[0] == pytest.approx(d.steering_angles(d.steering_limit)[0])
    assert d.steering_angles(0.0) == (0.0, 0.0)


def test_steering_joints_follow_the_linkage_and_straight_driving_holds_its_line():
    ugv = UgvSim.from_world("design", seed=0)
    ugv.command(1.0, 0.3)
    ugv.step(1.0)
    np.testing.assert_allclose(ugv.engine.joint_positions(JOINTS),
                               ugv.drive.steering_angles(0.3), atol=0.01)
    ugv.reset()
    start = ugv.pose()
    ugv.command(1.0, 0.0)
    ugv.step(8.0)
    pose, twist = ugv.pose(), ugv.twist()
    assert pose[1] - start[1] == pytest.approx(7.8, abs=0.3)  # north, 1 m/s after a short spin-up
    assert abs(pose[0] - start[0]) < 0.03  # no drift sideways
    assert abs(ugv.rpy()[2] - math.pi / 2) < 0.01
    assert twist[1] == pytest.approx(1.0, rel=0.03)


@pytest.mark.parametrize("steering, speed", [(0.3, 0.8), (-0.4, 1.0)])
def test_circle_radius_is_the_bicycle_models(steering, speed):
    """The rear axle's middle runs round a circle of radius L / tan(steering), within 8 %:
    tyre slip and the steering servo's compliance make the vehicle understeer slightly."""
    ugv = UgvSim.from_world("design", seed=0)
    ugv.command(speed, steering)
    ugv.step(2.0)
    points = []
    for _ in range(250):
        ugv.step(0.02)
        points.append(ugv.pose()[:2])
    p = np.array(points)
    a = np.column_stack([2 * p, np.ones(len(p))])
    cx, cy, c = np.linalg.lstsq(a, (p ** 2).sum(axis=1), rcond=None)[0]
    radius = math.sqrt(c + cx ** 2 + cy ** 2)
    assert radius == pytest.approx(ugv.drive.wheel_base / math.tan(abs(steering)), rel=0.08)
    assert np.sign(ugv.twist()[5]) == np.sign(steering)  # yaw rate: + turns left (REP 103)


def test_gps_and_imu_sample_at_their_rates_with_the_sdf_noise():
    ugv = UgvSim.from_world("design", seed=3)
    assert ugv.gps() is None
    spec = ugv.sensors.by_name[ugv.gps_sensor]
    assert spec.rate == 1.0 and spec.frame_id == "gps_link"
    ugv.step(3.0)
    taken = ugv.sensors.take()
    gps_t = [s.time for sp, s in taken if sp.kind == "navsat"]
    imu_t = np.array([s.time for sp, s in taken if sp.kind == "imu"])
    np.testing.assert_allclose(gps_t, [1.0, 2.0, 3.0], atol=1e-9)  # on the period's grid
    np.testing.assert_allclose(imu_t, 0.02 * np.arange(1, 151), atol=1e-9)
    imu = ugv.imu()
    assert imu.linear_acceleration[2] == pytest.approx(9.8, abs=0.1)  # at rest: +g, proper
    assert imu.rpy[2] == pytest.approx(math.pi / 2, abs=1e-3) and abs(imu.rpy[1]) < 1e-3
    # noise statistics: many samples of the state now, through the same computation
    gps = ugv.sensors.sample(np.array([ugv.sensors.specs.index(spec)] * 2000))
    enu = np.array([geodesy.geodetic_to_enu(g.latitude, g.longitude, g.altitude, ugv.origin)
                    for g in gps])
    truth = ugv.pose()[:3]
    np.testing.assert_allclose(enu.mean(axis=0), truth, atol=0.05)
    np.testing.assert_allclose(enu.std(axis=0), [0.2, 0.2, 0.4], rtol=0.1)


def test_seeded_sensors_repeat_and_a_reset_with_the_seed_restarts_them():
    a, b = UgvSim.from_world("design", seed=7), UgvSim.from_world("design", seed=7)
    for ugv in (a, b):
        ugv.command(1.0, 0.1)
        ugv.step(2.0)
    assert (a.gps().latitude, a.gps().longitude) == (b.gps().latitude, b.gps().longitude)
    first = a.gps().latitude
    a.reset()
    assert a.gps() is None and a.time == 0.0
    a.command(1.0, 0.1)
    a.step(2.0)
    assert a.gps().latitude != first  # the same run, new noise
    a.reset(seed=7)
    a.command(1.0, 0.1)
    a.step(2.0)
    assert a.gps().latitude == first  # reseeded: the first run again


def test_deploy_field_ramp_pitches_and_slows_and_actuation_is_uncalibrated():
    design, deploy = UgvSim.from_world("design"), UgvSim.from_world("deploy")
    assert design.drive.speed_map is None and design.drive.steering_offset == 0.0
    assert deploy.drive.speed_map is not None and deploy.drive.steering_offset != 0.0
    assert deploy.drive.wheel_speeds(1.0, 0.0)[0] < design.drive.wheel_speeds(1.0, 0.0)[0]
    friction = deploy.engine.model.geom_friction[deploy.engine.model.geom("ground_plane::link::"
                                                                            "collision").id]
    assert friction[0] == pytest.approx(GRASS_MU)
    west = np.array([[3.0, WAYPOINTS[1][1], 0.08, 0.0, 0.0, 1.0, 0.0]])  # yaw pi: facing west
    times = {}
    for name, ugv in (("design", design), ("deploy", deploy)):
        ugv.engine.set_states([MODEL], poses=west)
        ugv.step(0.3)
        ugv.command(1.6, -ugv.drive.steering_offset)  # trimmed, as a calibration would
        pitch, t0 = [], None
        while ugv.pose()[0] > -2.0 and ugv.time < 20:
            ugv.step(0.05)
            pitch.append(ugv.imu().rpy[1])
            if t0 is None and ugv.pose()[0] < 1.5:
                t0 = ugv.time
        times[name] = ugv.time - t0
        if name == "deploy":
            assert min(pitch) < -0.3 and max(pitch) > 0.3  # nose up (REP 103), then down
        else:
            assert np.abs(pitch).max() < 0.01
    assert times["deploy"] > 1.3 * times["design"]


def test_deploy_throttle_lowest_step_moves_the_vehicle_and_zero_stops_it():
    """The deployment field's throttle table: any command past the neutral deadband takes at
    least the lowest PWM step, which moves the truck; 0 is neutral. Steps below the command's
    nearest one by the battery's gain."""
    deploy = UgvSim.from_world("deploy")
    motor = [deploy.drive.speed_map(c) for c in (0.0, 0.01, 0.1, 0.3, 1.0, 2.0)]
    assert motor[:2] == [0.0, 0.0] and motor[2] == motor[3] > 0.3
    assert motor[3] < motor[4] < 1.0 < motor[5] < 2.0
    moved = {}
    for command in (0.0, 0.1):
        deploy.reset()
        deploy.step(0.3)  # settle on the grass
        start = deploy.pose()[:2].copy()
        deploy.command(command, -deploy.drive.steering_offset)
        deploy.step(4.0)
        moved[command] = float(np.hypot(*(deploy.pose()[:2] - start)))
    assert moved[0.0] < 0.02 and moved[0.1] > 0.5


def test_worlds_are_generated_deterministically_and_checked_in():
    for field, deploy in (("design", False), ("deploy", True)):
        assert course_world(deploy, seed=0) == world_path(field).read_text()
    assert course_world(True, seed=1) != course_world(True, seed=0)
    assert course_world(False, seed=1) == course_world(False, seed=0)


def test_a_bad_ackermann_plugin_is_refused_naming_it():
    text = world_path("design").read_text().replace(
        "<include>", "<model name='bad'><link name='l'/><plugin filename='gz-sim-ackermann-"
        "steering-system' name='a'><left_joint>nope</left_joint></plugin></model><include>")
    with pytest.raises(SdfError, match="'bad::nope'"):
        MujocoEngine.from_string(text)


def test_imu_reads_its_own_link_after_the_model_recompiles():
    ugv = UgvSim.from_world("design", seed=0)
    ugv.engine.delete("waypoint_0")  # bodies before the vehicle's: their ids shift
    ugv.step(0.5)
    assert ugv.imu().linear_acceleration[2] == pytest.approx(9.8, abs=0.1)
    ugv.command(1.0, 0.0)
    ugv.step(1.0)
    assert ugv.twist()[1] == pytest.approx(1.0, rel=0.05)


def test_imu_pitch_is_a_settable_value_until_released():
    """``<imu>/pitch`` overrides the pitch every read reports (roll and yaw from the state); NaN
    releases it; a bad request changes nothing."""
    ugv = UgvSim.from_world("design", seed=1)
    name = ugv.imu_sensor + "/pitch"
    assert ugv.sensors.settable == [name]
    ugv.step(0.5)
    before = ugv.imu().rpy
    ugv.sensors.take()
    ugv.sensors.set_sensor_values([name], [0.3])
    held = ugv.imu().rpy
    assert held[1] == pytest.approx(0.3) and held[[0, 2]] == pytest.approx(before[[0, 2]])
    ugv.step(0.1)
    taken = [s.rpy[1] for sp, s in ugv.sensors.take() if sp.kind == "imu"]
    assert len(taken) == 5 and taken == pytest.approx([0.3] * 5)
    with pytest.raises(UnknownEntityError, match="settable"):
        ugv.sensors.set_sensor_values([name, ugv.imu_sensor + "/roll"], [math.nan, 0.1])
    with pytest.raises(InvalidOperationError):
        ugv.sensors.set_sensor_values([name], [math.nan, 0.0])
    assert ugv.imu().rpy[1] == pytest.approx(0.3)  # neither request released it
    ugv.sensors.set_sensor_values([name], [math.nan])
    assert abs(ugv.imu().rpy[1]) < 1e-3
