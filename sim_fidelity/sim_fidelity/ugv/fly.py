"""One mission of the course flown in process on :class:`~.vehicle.UgvSim`, logged to a bag
through the recording writer with the recording preset's topics and types, as the vehicle's
``simfid record --preset ugv`` (or ``ros2 bag record``) would log it.

The control loop is the node's (10 Hz): the newest GPS fix (1 Hz) and IMU sample go to the
:class:`~.mission.Mission`, its command to the vehicle. With a kernel runner, every sampling
period of the spec (2 s) the kernel manager takes the state and command one period earlier, as
its node holds them (the latest GPS fix in the spec's plane, IMU yaw and pitch, the command in
force) and, when a kernel is active there, sets the vehicle's pose to f_k(s, a) through the
Simulator protocol (``KernelRunner`` on the engine) and, where the spec says so (``hold:
period``), holds the IMU's pitch at the kernel's for the period: the mission reads it until the
manager's next look, which releases it first and so reads the simulation's own IMU.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..reality_gap.kernel_set import KernelRunner
from ..reality_gap.messages import default_message
from ..recording.preset import load_preset
from ..recording.writer import BagWriter
from ..simulator.geodesy import geodetic_to_enu
from ..simulator.poses import quat_conj, quat_rotate, rpy_to_quat
from .course import COMMAND_TOPIC, GPS_TOPIC, IMU_TOPIC, MODEL, ODOM_TOPIC
from .mission import CONTROL_RATE, Mission, MissionParams
from .vehicle import UgvSim

PERIOD = 1.0 / CONTROL_RATE
REWARD_TOPIC = "/ugv_mission/reward"
INSTRUMENTATION_TOPIC = "/ugv_mission/instrumentation"
TAIL = 2.0  # s logged after the mission is done (stopped), as a recording runs on past it


@dataclass(frozen=True)
class Start:
    """Where a mission starts: the vehicle at rest at (x, y) heading ``yaw``; the seed of the
    mission software's noise."""

    x: float
    y: float
    yaw: float
    seed: int


@dataclass
class Flight:
    """What one mission did."""

    track: np.ndarray  # (n, 2) true x, y at every control tick
    total: float  # the monitor's total reward
    arrived_at: float | None  # s from the start
    kernel_hits: int  # corrections by the kernel manager
    bag: Path | None


def starts(n: int, seed: int) -> list[Start]:
    """``n`` starts around the first waypoint: x, y ~ U(-0.5, 0.5) m, heading north
    +- U(0.3) rad (the vehicle is set down by hand facing the second leg)."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(-0.5, 0.5, (n, 2))
    yaw = math.pi / 2 + rng.uniform(-0.3, 0.3, n)
    return [Start(float(a), float(b), float(c), int(s)) for (a, b), c, s in
            zip(xy, yaw, rng.integers(0, 2**31, n))]


@lru_cache(maxsize=1)
def _topics() -> tuple[tuple[str, str], ...]:
    return load_preset("ugv").topics


def place(sim: UgvSim, start: Start) -> None:
    """Reset the world and set the vehicle down at ``start``, at rest."""
    sim.reset()
    pose = sim.pose().copy()
    pose[:2] = start.x, start.y
    pose[3:] = rpy_to_quat(0.0, 0.0, start.yaw)
    sim.engine.set_states([MODEL], pose[None], np.zeros((1, 6)))


def fly(sim: UgvSim, params: MissionParams, start: Start, bag: Path | None = None,
        runner: KernelRunner | None = None) -> Flight:
    """Fly one mission from ``start`` until the monitor says done; log it to ``bag``."""
    place(sim, start)
    t0 = sim.time
    mission = Mission(0.0, params, seed=start.seed)
    writer = BagWriter(bag, _topics()) if bag is not None else None
    every = 0 if runner is None else int(round(CONTROL_RATE / runner.kernels.spec.rate_hz))
    track, fix_time, imu_time, hits, held = [], None, None, 0, None
    done_at = math.inf
    try:
        for k in range(10**6):
            t = sim.time - t0
            ns = int(round(t * 1e9))
            look = runner is not None and k % every == 0
            if look:  # overrides held for the period (the IMU's pitch) end before the look
                runner.expire()
            fix, imu = sim.gps(), sim.imu()
            if fix is not None and fix.time != fix_time:
                fix_time = fix.time
                east, north, _ = geodetic_to_enu(fix.latitude, fix.longitude, fix.altitude,
                                                 sim.origin)
                mission.on_fix(t, float(east), float(north))
                if writer:
                    writer.write(GPS_TOPIC, ns, _navsat(fix, ns))
            if imu is not None:
                rpy = imu.rpy
                mission.on_pitch(float(rpy[1]))
                if writer and imu.time != imu_time:
                    writer.write(IMU_TOPIC, ns, _imu(imu, ns))
                imu_time = imu.time
            if look:
                state = _kernel_state(mission, imu)
                if held is not None and state is not None:
                    hit = runner.apply(*held)
                    if hit is not None:
                        hits += 1
                        state = hit[1]
                held = None if state is None else (state, np.array(mission.navigator.command))
            speed, steering, report = mission.tick(t)
            pose = sim.pose()
            track.append(pose[:2].copy())
            if writer:
                writer.write(COMMAND_TOPIC, ns, _command(speed, steering, ns))
                writer.write(ODOM_TOPIC, ns, _odometry(pose, sim.twist(), ns))
                if report is not None:
                    reward = default_message("std_msgs/msg/Float64")
                    reward.data = float(report.reward)
                    writer.write(REWARD_TOPIC, ns, reward)
                    writer.write(INSTRUMENTATION_TOPIC, ns, _instrumentation(report.row))
            if mission.done and t >= done_at + TAIL:
                break
            if mission.done and done_at == math.inf:
                done_at = t
            sim.command(speed, steering)
            sim.step(PERIOD)
    finally:
        if writer:
            writer.close()
        if runner is not None:
            runner.release()
    monitor = mission.monitor
    return Flight(np.array(track), monitor.total,
                  None if monitor.arrived_at is None else monitor.arrived_at - monitor.start,
                  hits, bag)


def _kernel_state(mission: Mission, imu) -> np.ndarray | None:
    """[x, y, yaw, pitch] as the kernel manager holds them: the latest fix, the IMU's angles."""
    if mission.fix is None or imu is None:
        return None
    rpy = imu.rpy
    return np.array([mission.fix[0], mission.fix[1], rpy[2], rpy[1]])


def _stamp(msg, ns: int) -> None:
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(ns, 1_000_000_000)


def _navsat(fix, ns: int):
    msg = default_message("sensor_msgs/msg/NavSatFix")
    _stamp(msg, ns)
    msg.header.frame_id = "gps_link"
    msg.latitude, msg.longitude, msg.altitude = fix.latitude, fix.longitude, fix.altitude
    msg.position_covariance[[0, 4, 8]] = fix.covariance
    msg.position_covariance_type = 2  # diagonal known
    msg.status.service = 1  # GPS
    return msg


def _imu(sample, ns: int):
    msg = default_message("sensor_msgs/msg/Imu")
    _stamp(msg, ns)
    msg.header.frame_id = "imu_link"
    q, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
    q.x, q.y, q.z, q.w = (float(v) for v in sample.orientation)
    w.x, w.y, w.z = (float(v) for v in sample.angular_velocity)
    a.x, a.y, a.z = (float(v) for v in sample.linear_acceleration)
    return msg


def _command(speed: float, steering: float, ns: int):
    msg = default_message("ackermann_msgs/msg/AckermannDriveStamped")
    _stamp(msg, ns)
    msg.header.frame_id = "base_link"
    msg.drive.speed, msg.drive.steering_angle = float(speed), float(steering)
    return msg


def _odometry(pose: np.ndarray, twist: np.ndarray, ns: int):
    msg = default_message("nav_msgs/msg/Odometry")
    _stamp(msg, ns)
    msg.header.frame_id, msg.child_frame_id = "odom", "base_link"  # the world frame: odom
    p, q = msg.pose.pose.position, msg.pose.pose.orientation
    p.x, p.y, p.z = (float(v) for v in pose[:3])
    q.x, q.y, q.z, q.w = (float(v) for v in pose[3:])
    inverse = quat_conj(pose[3:])  # the twist in base_link, as sim_server's odometry has it
    v, w = msg.twist.twist.linear, msg.twist.twist.angular
    v.x, v.y, v.z = (float(x) for x in quat_rotate(inverse, twist[:3]))
    w.x, w.y, w.z = (float(x) for x in quat_rotate(inverse, twist[3:]))
    return msg


def _instrumentation(row: tuple[float, ...]):
    from .monitor import INSTRUMENTATION

    msg = default_message("std_msgs/msg/Float64MultiArray")
    dim = default_message("std_msgs/msg/MultiArrayDimension")
    dim.label, dim.size, dim.stride = ",".join(INSTRUMENTATION), len(row), len(row)
    msg.layout.dim = [dim]
    msg.data = np.asarray(row, dtype=np.float64)
    return msg
