"""ROS node ``fidelity_manager``: the fidelity manager against any simulator serving our services.

Ticks follow simulation time (``/clock``, ``use_sim_time``) at ``rate`` Hz; talks to the simulator
only through :class:`~sim_fidelity.simulator.ros.client.RosSimulator` (Gazebo or sim_server).

Interfaces:
* ``~/set_fidelity`` (SetFidelity): trees (names or regexes), level, MODE_HOLD or MODE_RELEASE;
* ``~/get_fidelity`` (GetFidelity);
* ``~/action`` (std_msgs/String): ``"<action> [<tree regex>]"`` forwarded to every action signaler;
* ``~/summary`` (FidelitySummary) every tick, ``/diagnostics`` once a second.

On shutdown (SIGINT, SIGTERM, exception) every object is restored before the node exits.
"""
from __future__ import annotations

import sys
import threading
import time

PARAMETERS = {  # name: (default, description)
    "config": ("", "fidelity YAML of the scene"),
    "preset": ("", "preset name (hifi, adfi-1, adfi-2, adfi-3, ...); empty = the config's default"),
    "rate": (20.0, "ticks per second of simulation time"),
    "server": ("/sim_server", "node name of the simulator's lever services"),
    "world_file": ("", "the world's SDF, needed only for the static-copy fallback (Gazebo)"),
    "timeout": (10.0, "seconds to wait for a simulator answer"),
}


class FidelityManagerNode:
    """The rclpy adapter around a :class:`FidelityManager`."""

    def __init__(self, node, manager):
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
        from sim_fidelity_interfaces.msg import FidelitySummary
        from sim_fidelity_interfaces.srv import GetFidelity, SetFidelity
        from std_msgs.msg import String

        self.node, self.manager = node, manager
        self.lock = threading.Lock()  # one tick or service call at a time
        self.last_report = None
        self.tick_ms: list[float] = []
        group = MutuallyExclusiveCallbackGroup()
        rate = node.get_parameter("rate").value
        self._summary = node.create_publisher(FidelitySummary, "~/summary", 10)
        self._diag = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        node.create_service(SetFidelity, "~/set_fidelity", self._set_fidelity, callback_group=group)
        node.create_service(GetFidelity, "~/get_fidelity", self._get_fidelity, callback_group=group)
        node.create_subscription(String, "~/action", self._on_action, 10, callback_group=group)
        node.create_timer(1.0 / rate, self._tick, callback_group=group)  # ROS time: follows /clock
        from rclpy.clock import Clock, ClockType
        node.create_timer(1.0, self._publish_diagnostics, callback_group=group,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))

    def _tick(self) -> None:
        from sim_fidelity_interfaces.msg import FidelitySummary

        from ..simulator.ros.convert import time_msg
        with self.lock:
            report = self.manager.tick()
        self.last_report = report
        self.tick_ms = (self.tick_ms + [report.wall * 1e3])[-100:]
        self._summary.publish(FidelitySummary(
            stamp=time_msg(report.time), high=report.counts["high"], medium=report.counts["medium"],
            low=report.counts["low"], changed=len(report.changed),
            manager_time_ms=report.wall * 1e3, sim_time=report.time))

    def _set_fidelity(self, req, res):
        from ..simulator.errors import SimulatorError
        from .levels import Level
        try:
            with self.lock:
                if req.mode == type(req).MODE_RELEASE:
                    res.trees = self.manager.release(list(req.trees))
                    res.message = f"released {len(res.trees)} trees to their signalers"
                else:
                    res.trees = self.manager.set_fidelity(list(req.trees), Level(req.level), hold=True)
                    res.message = f"holding {len(res.trees)} trees at {Level(req.level).name}"
            res.success = True
        except (KeyError, ValueError, SimulatorError) as e:
            res.success, res.message = False, str(e).strip('"')
        return res

    def _get_fidelity(self, req, res):
        try:
            with self.lock:
                table = self.manager.get_fidelity(list(req.trees) or ".*")
        except KeyError as e:
            res.success, res.message = False, str(e).strip('"')
            return res
        res.trees = list(table)
        res.levels = [int(level) for level, _ in table.values()]
        res.held = [held for _, held in table.values()]
        res.success = True
        return res

    def _on_action(self, msg) -> None:
        from .signalers.action import ActionSignaler
        action, _, trees = msg.data.strip().partition(" ")
        signalers = [s for s in self.manager.signalers.values() if isinstance(s, ActionSignaler)]
        for sig in signalers:
            try:
                sig.announce(action, trees.strip() or None)
            except KeyError as e:
                self.node.get_logger().warning(f"action '{msg.data}': {e}")
        if not signalers:
            self.node.get_logger().warning("action announced but the config has no action signaler")

    def _publish_diagnostics(self) -> None:
        from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
        report = self.last_report
        status = DiagnosticStatus(name="fidelity_manager", hardware_id="sim_fidelity")
        if report is None:
            status.level, status.message = DiagnosticStatus.WARN, "no tick yet (is /clock advancing?)"
        else:
            status.level, status.message = DiagnosticStatus.OK, (
                f"{report.counts['high']} high, {report.counts['medium']} medium, "
                f"{report.counts['low']} low")
            mean = sum(self.tick_ms) / len(self.tick_ms)
            status.values = [KeyValue(key="preset", value=self.manager.preset),
                             KeyValue(key="sim_time", value=f"{report.time:.3f}"),
                             KeyValue(key="mean_tick_ms", value=f"{mean:.3f}")]
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self._diag.publish(msg)


def main(args: list[str] | None = None) -> int:
    """console_script ``fidelity_manager``: ``--ros-args -p config:=... -p preset:=adfi-1``."""
    from ..ros_node import run_node
    from ..simulator.errors import SimulatorError
    from ..simulator.ros.client import RosSimulator
    from .errors import ConfigError
    from .manager import FidelityManager

    def start(node, p: dict):
        if not p["config"]:
            raise ConfigError("<parameters>", "config", "parameter 'config' is empty")
        sim = RosSimulator(server=p["server"], timeout=p["timeout"],
                           world_file=p["world_file"] or None)
        try:
            sim.wait_for_server()
            manager = FidelityManager(sim, p["config"], p["preset"] or None)
        except Exception:
            sim.close()
            raise
        FidelityManagerNode(node, manager)
        log = node.get_logger()
        log.info(f"preset '{manager.preset}': {len(manager.trees)} trees from {p['config']}, "
                 f"{p['rate']:g} Hz of sim time")

        def restore() -> int:
            started = time.perf_counter()
            manager.close()
            left = manager.mismatches()
            (log.error if left else log.info)(
                f"restored in {(time.perf_counter() - started) * 1e3:.1f} ms; "
                f"{len(left)} objects differ from their start state")
            sim.close()
            return 3 if left else 0
        return restore

    return run_node("fidelity_manager", PARAMETERS, start, errors=(ConfigError, SimulatorError),
                    threads=2, args=args)


if __name__ == "__main__":
    sys.exit(main())
