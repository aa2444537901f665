"""``ugv_mission``: the mission software and its performance monitor as a ROS 2 node.

A thin adapter around :class:`~.mission.Mission`: GPS fixes (``sensor_msgs/NavSatFix``, e.g.
``nmea_navsat_driver``'s on the real vehicle) go to the course's ENU plane through the origin
parameters, the IMU's orientation gives the pitch; every 1/``rate`` s the mission's command is
published as ``ackermann_msgs/AckermannDriveStamped``, and the monitor's reward
(``std_msgs/Float64``) and instrumentation (``std_msgs/Float64MultiArray``, labels
``monitor.INSTRUMENTATION``) every 2 s. The mission starts at the first fix; when the monitor
says done (arrival or give-up) the node commands a stop and logs the outcome. Simulation time
(``/clock``) by default; ``wall_clock:=true`` on the vehicle. Parameters:
``node_parameters.UGV_MISSION``.
"""
from __future__ import annotations

import math
import sys
import threading

from ..shutdown import catch_early_signals


class MissionNode:
    """Subscriptions, the control timer and the publishers around one :class:`Mission`."""

    def __init__(self, node, p: dict):
        from ackermann_msgs.msg import AckermannDriveStamped
        from rclpy.clock import Clock, ClockType
        from sensor_msgs.msg import Imu, NavSatFix
        from std_msgs.msg import Float64, Float64MultiArray, MultiArrayDimension

        from ..simulator.geodesy import geodetic_to_enu
        from ..simulator.poses import quat_to_rpy
        from ..simulator.ros.convert import time_msg
        from .course import GeoOrigin
        from .mission import MissionParams
        from .monitor import INSTRUMENTATION

        self.node, self.p = node, p
        self.log = node.get_logger()
        self.clock = Clock(clock_type=ClockType.STEADY_TIME) if p["wall_clock"] \
            else node.get_clock()
        self.origin = GeoOrigin("parameters", p["origin_latitude"], p["origin_longitude"],
                                p["origin_altitude"])
        base = MissionParams(spring=p["spring"], saturation=p["saturation"],
                             pitch_threshold=p["pitch_threshold"],
                             climb_spring=p["climb_spring"],
                             climb_saturation=p["climb_saturation"])
        self.params = base.redesigned() if p["redesign"] else base
        self.lock = threading.Lock()
        self.mission = None
        self.pitch = 0.0
        self._enu, self._rpy, self._time_msg = geodetic_to_enu, quat_to_rpy, time_msg
        self._msgs = (AckermannDriveStamped, Float64, Float64MultiArray)
        n = len(INSTRUMENTATION)
        self._layout = [MultiArrayDimension(label=",".join(INSTRUMENTATION), size=n, stride=n)]
        node.create_subscription(NavSatFix, p["gps_topic"], self._on_fix, 10)
        node.create_subscription(Imu, p["imu_topic"], self._on_imu, 10)
        self.command_pub = node.create_publisher(AckermannDriveStamped, p["command_topic"], 10)
        self.reward_pub = node.create_publisher(Float64, p["reward_topic"], 10)
        self.instrumentation_pub = node.create_publisher(Float64MultiArray,
                                                         p["instrumentation_topic"], 10)
        self.finished = False
        node.create_timer(1.0 / p["rate"], self._tick, clock=self.clock)

    def _now(self) -> float:
        return self.clock.now().nanoseconds * 1e-9

    def _on_fix(self, msg) -> None:
        if msg.status.status < msg.status.STATUS_FIX or not (
                math.isfinite(msg.latitude) and math.isfinite(msg.longitude)):
            return  # no fix
        east, north, _ = self._enu(msg.latitude, msg.longitude, msg.altitude, self.origin)
        now = self._now()
        with self.lock:
            if self.mission is None and not self.finished:
                from .mission import Mission
                self.mission = Mission(now, self.params, seed=self.p["seed"])
                self.mission.on_pitch(self.pitch)
                self.log.info(f"mission started at ({float(east):.2f}, {float(north):.2f}) m"
                              + (" with the pitch check (redesign)" if self.params.redesign
                                 else ""))
            if self.mission is not None:
                self.mission.on_fix(now, float(east), float(north))

    def _on_imu(self, msg) -> None:
        q = msg.orientation
        pitch = float(self._rpy([q.x, q.y, q.z, q.w])[1])
        with self.lock:
            self.pitch = pitch
            if self.mission is not None:
                self.mission.on_pitch(pitch)

    def _tick(self) -> None:
        with self.lock:
            if self.mission is None:
                return
            now = self._now()
            speed, steering, report = self.mission.tick(now)
            done = self.mission.done
        command, reward, array = self._msgs
        msg = command()
        msg.header.stamp = self._time_msg(now)
        msg.header.frame_id = "base_link"
        msg.drive.speed, msg.drive.steering_angle = float(speed), float(steering)
        self.command_pub.publish(msg)
        if report is not None:
            self.reward_pub.publish(reward(data=float(report.reward)))
            out = array(data=[float(v) for v in report.row])
            out.layout.dim = self._layout
            self.instrumentation_pub.publish(out)
        if done:
            self._finish()

    def _finish(self) -> None:
        with self.lock:
            mission, self.mission, self.finished = self.mission, None, True
        monitor = mission.monitor
        outcome = "on time" if monitor.on_time else \
            "late" if monitor.arrived_at is not None else "not arrived (gave up)"
        self.log.info(f"mission done: {outcome}, total reward {monitor.total:+.0f}")


def main(args: list[str] | None = None) -> int:
    """console_script ``ugv_mission``."""
    catch_early_signals()  # before rclpy loads: a launch stopping the node then is clean
    from ..node_parameters import UGV_MISSION
    from ..ros_node import run_node

    def start(node, p: dict, _stack):
        MissionNode(node, p)
        node.get_logger().info(f"ugv_mission: GPS {p['gps_topic']}, IMU {p['imu_topic']}, "
                               f"commands on {p['command_topic']} at {p['rate']:g} Hz")
        return None

    return run_node("ugv_mission", UGV_MISSION, start, args=args)


if __name__ == "__main__":
    sys.exit(main())
