"""``ugv_mission`` in a real process against ``sim_server`` (a real process) on the design field:
it reads the GPS and IMU topics, drives the vehicle with AckermannDriveStamped commands and
reports reward and instrumentation every 2 s of sim time; SIGINT stops it cleanly."""
from __future__ import annotations

import numpy as np
import pytest
from ros_processes import Probe, next_domain, start_node, stop, wait_for

from sim_fidelity.ugv.course import COMMAND_TOPIC, ODOM_TOPIC, world_path
from sim_fidelity.ugv.monitor import INSTRUMENTATION


def _seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def _northward(odom: list) -> float:
    """How far north the odometry received so far has moved the vehicle (m)."""
    north = [m.pose.pose.position.y for m in list(odom)]
    return max(north) - min(north) if north else 0.0


def test_mission_node_drives_the_vehicle_through_sim_server(tmp_path) -> None:
    from ackermann_msgs.msg import AckermannDriveStamped
    from nav_msgs.msg import Odometry
    from std_msgs.msg import Float64, Float64MultiArray

    domain = next_domain()
    probe = Probe(domain)
    commands = probe.capture(AckermannDriveStamped, COMMAND_TOPIC)
    odom = probe.capture(Odometry, ODOM_TOPIC)
    rewards = probe.capture(Float64, "/ugv_mission/reward")
    rows = probe.capture(Float64MultiArray, "/ugv_mission/instrumentation")
    server = start_node("sim_fidelity.simulator.ros.server",
                        {"world": str(world_path("design")), "real_time_factor": 4.0},
                        domain, tmp_path / "sim_server.log")
    mission = start_node("sim_fidelity.ugv.node", {"use_sim_time": True, "seed": 3}, domain,
                         tmp_path / "ugv_mission.log")
    try:
        logs = lambda: (tmp_path / "ugv_mission.log").read_text()  # noqa: E731
        assert wait_for(lambda: len(rows) >= 5, 120.0), logs()  # 10 s of sim time
        assert "mission started" in logs()
        moving = [c for c in list(commands) if c.drive.speed > 0.5]
        assert moving, "no command to drive"
        stamps = np.array([_seconds(c.header.stamp) for c in list(commands)])
        # 10 Hz of sim time: the timer wakes on /clock, so a loaded machine jitters each stamp
        # (a median interval of 0.12 s was seen under a load of 40); the rate
        # over the run is what the node controls
        assert (np.diff(stamps) > 0).all(), stamps
        assert (len(stamps) - 1) / (stamps[-1] - stamps[0]) == pytest.approx(10.0, rel=0.2)
        # odometry from sim_server: the probe's subscription may match it late on a loaded
        # machine (DDS discovery), so wait for the drive rather than count on the first 10 s
        assert wait_for(lambda: _northward(odom) > 3.0, 60.0), \
            f"the vehicle did not drive up the first leg ({len(odom)} odometry messages)"
        first = list(rows)[0]
        assert first.layout.dim[0].label == ",".join(INSTRUMENTATION)
        times = np.array([r.data[0] for r in list(rows)[:5]])
        # 0.5 Hz of sim time on a fixed schedule: a row comes with the first control tick at or
        # after its due time, which a loaded machine delays (a late /clock), without the delays
        # adding up (seen: intervals 1.974, 2.002, 2.0, 2.212 s)
        np.testing.assert_array_equal(np.round(np.diff(times) / 2.0), 1.0)
        assert (times[-1] - times[0]) / 4 == pytest.approx(2.0, abs=0.1), times
        assert wait_for(lambda: len(rewards) >= 4, 60.0), f"{len(rewards)} rewards"
        assert all(r.data == 0.0 for r in list(rewards)[:4])
        assert stop(mission) == 0, logs()
    finally:
        stop(mission)
        stop(server)
        probe.close()
