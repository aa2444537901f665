"""ROS node ``fidelity_manager``: the fidelity manager against any simulator serving our services.

Ticks follow simulation time (``/clock``, ``use_sim_time``) at ``rate`` Hz; talks to the simulator
only through the client its ``backend`` parameter chooses (``simulator/ros/classic/backend.py``:
RosSimulator for sim_server and gz-sim, ClassicRosSimulator for Gazebo classic, ``auto`` finds it).

Interfaces:
* ``~/set_fidelity`` (SetFidelity): trees (names or regexes), level, MODE_HOLD or MODE_RELEASE;
* ``~/get_fidelity`` (GetFidelity);
* ``~/action`` (std_msgs/String): ``"<action> [<tree regex>]"`` forwarded to every action signaler;
* ``~/decision`` (std_msgs/Float64): a decision point of the application, which decides after the
  given settle (seconds of sim time): :meth:`~.manager.FidelityManager.decision_point` at once
  (a tick with every refresh rule applied, e.g. all packets HIGH, until the settle has passed);
* the command topic of every joint-command signaler (``/model/<model>/joint/<joint>/cmd_pos``,
  std_msgs/Float64): what the robot is told, observed (requirement R4);
* ``~/summary`` (FidelitySummary) every tick, ``/diagnostics`` once a second.

The start state is the world's original lever state, asked of the simulator; leftovers of a
manager that died are written back first (logged). On shutdown (SIGINT, SIGTERM, exception) the
restore waits for a tick in flight, no tick starts after it, and every object is restored, read
back and counted, within ``restore_budget`` seconds in all (2.5 s: launch sends SIGTERM after
5 s; a loaded machine may need more), plus ``restore_per_static_copy`` per tree where the
simulator lowers by static copies (Gazebo; the launch files then wait 120 s): when a launch
stops, the simulator may be gone already; then the node says in one line which trees it could
not restore and exits 0 (nothing is left to restore into; sim_server restores the levers of a
client that left). A
simulator that still answers after the budget ran out (slow static copies of Gazebo classic) is
not gone: the trees not restored are named and the exit code is 3. When no
tick came for ``timeout`` seconds the node says once why: the simulator left the graph, or its
time does not advance.
Trees the simulator cannot lower (a lever it has not, e.g. Gazebo classic's missing ACTUATION,
SENSOR, SCRIPT; DYNAMICS or COLLISION on a link where levers come by static copies) stay HIGH,
whole: one line per reason names them at start (``support.py``); the others are managed.
The packet signaler's per-step stillness rule needs every physics step, which a simulator behind
ROS does not show: the node counts stillness at its ticks instead and says so in one line at start.
Parameters: ``node_parameters.FIDELITY_MANAGER``; the preset is checked against the config's
presets before the simulator is contacted.
"""
from __future__ import annotations

import sys
import threading
import time

from ..errors import SimFidelityError

NAMES_SHOWN = 5  # trees named in the could-not-restore line
LEAVING_S = 1.0  # for a server that withdraws its services one by one as it shuts down
ASK_SIMULATOR_S = 1.0  # for the simulation state, when no tick came for a while


class FidelityManagerNode:
    """The rclpy adapter around a :class:`FidelityManager`."""

    def __init__(self, node, manager, rate: float, sim, silence: float):
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
        from std_msgs.msg import Float64, String

        from sim_fidelity_interfaces.msg import FidelitySummary
        from sim_fidelity_interfaces.srv import GetFidelity, SetFidelity

        self.node, self.manager, self.sim = node, manager, sim
        self.silence = silence  # seconds without a tick before the node says why
        self.last_tick = time.monotonic()
        self.silent = False  # the no-tick line was said; said again only after ticks resumed
        self.lock = threading.Lock()  # one tick or service call at a time
        self.stopping = False  # set by restore(): a tick's simulator error is then expected
        self.last_report = None
        self.tick_ms: list[float] = []
        group = MutuallyExclusiveCallbackGroup()
        self._summary = node.create_publisher(FidelitySummary, "~/summary", 10)
        self._diag = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        node.create_service(SetFidelity, "~/set_fidelity", self._set_fidelity, callback_group=group)
        node.create_service(GetFidelity, "~/get_fidelity", self._get_fidelity, callback_group=group)
        node.create_subscription(String, "~/action", self._on_action, 10, callback_group=group)
        node.create_subscription(Float64, "~/decision", self._on_decision, 10,
                                 callback_group=group)
        self._observe_commands(group)
        node.create_timer(1.0 / rate, self._tick, callback_group=group)  # ROS time: follows /clock
        from rclpy.clock import Clock, ClockType
        node.create_timer(1.0, self._publish_diagnostics, callback_group=group,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))

    def _tick(self) -> None:
        from sim_fidelity_interfaces.msg import FidelitySummary

        from ..simulator.errors import SimulatorError
        from ..simulator.ros.convert import time_msg
        with self.lock:
            if self.manager.closed:  # restored: no more ticks
                return
            try:
                report = self.manager.tick()
            except SimulatorError:
                if self.stopping:  # the simulator went first; restore() tells what is left
                    return
                raise
        self.last_report = report
        self.last_tick = time.monotonic()
        if self.silent:
            self.silent = False
            self.node.get_logger().info("ticking again")
        self.tick_ms = (self.tick_ms + [report.wall * 1e3])[-100:]
        self._summary.publish(FidelitySummary(
            stamp=time_msg(report.time), high=report.counts["high"], medium=report.counts["medium"],
            low=report.counts["low"], changed=len(report.changed),
            manager_time_ms=report.wall * 1e3, sim_time=report.time))

    def _set_fidelity(self, req, res):
        from .levels import parse_level
        try:
            with self.lock:
                if req.mode == type(req).MODE_RELEASE:
                    res.trees = self.manager.release(list(req.trees))
                    res.message = f"released {len(res.trees)} trees to their signalers"
                else:
                    level = parse_level(req.level)
                    res.trees = self.manager.set_fidelity(list(req.trees), level, hold=True)
                    res.message = f"holding {len(res.trees)} trees at {level.name}"
            res.success = True
        except SimFidelityError as e:
            res.success, res.message = False, str(e).strip('"')
        return res

    def _get_fidelity(self, req, res):
        try:
            with self.lock:
                table = self.manager.get_fidelity(list(req.trees) or ".*")
        except SimFidelityError as e:
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
            except SimFidelityError as e:
                self.node.get_logger().warning(f"action '{msg.data}': {e}")
        if not signalers:
            self.node.get_logger().warning("action announced but the config has no action signaler")

    def _observe_commands(self, group) -> None:
        """Subscribe every joint-command signaler that cannot read its command in process to the
        joint's command topic."""
        from std_msgs.msg import Float64

        from .signalers.joint_command import JointCommandSignaler
        for sig in self.manager.signalers.values():
            if isinstance(sig, JointCommandSignaler) and sig.read is None:
                self.node.create_subscription(Float64, sig.topic,
                                              lambda msg, s=sig: s.observe(msg.data), 10,
                                              callback_group=group)

    def _on_decision(self, msg) -> None:
        from ..simulator.errors import SimulatorError
        from .errors import SettleError
        with self.lock:
            if self.manager.closed:
                return
            try:
                report = self.manager.decision_point(msg.data)
            except SettleError as e:  # a bad settle: say so, keep running
                self.node.get_logger().warning(str(e))
                return
            except SimulatorError:
                if self.stopping:
                    return
                raise
        self.last_report = report

    def _say_why_silent(self) -> None:
        """One line when no tick came for ``silence`` seconds: the simulator gone or paused."""
        quiet = time.monotonic() - self.last_tick
        if self.silent or quiet < self.silence or self.stopping:
            return
        from ..simulator.errors import SimulatorError
        from ..simulator.protocol import SimState
        self.silent = True
        try:
            state = self.sim.call("get_simulation_state", timeout=ASK_SIMULATOR_S).state.state
        except SimulatorError as e:
            self.node.get_logger().error(
                f"no tick for {quiet:.0f} s: the simulator does not answer ({e}); waiting for "
                "it to come back, or stop this node")
            return
        self.node.get_logger().warning(
            f"no tick for {quiet:.0f} s: the simulator answers ({SimState(state).name}) but its "
            "time does not advance (paused, or /clock not published)")

    def _publish_diagnostics(self) -> None:
        from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
        self._say_why_silent()
        report = self.last_report
        status = DiagnosticStatus(name="fidelity_manager", hardware_id="sim_fidelity")
        if report is None:
            status.level = DiagnosticStatus.WARN
            status.message = "no tick yet (is /clock advancing?)"
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


def left_the_graph(sim) -> bool:
    """Whether none of the simulator's services is in the graph within LEAVING_S: a server
    stopped with this node (a launch stops all at once) withdraws them one by one, so the one a
    restore call missed may be gone while others are still listed."""
    end = time.monotonic() + LEAVING_S
    while sim.server_present():
        if time.monotonic() >= end:
            return False
        time.sleep(0.05)
    return True


def restore_budget(sim, base: float, per_static_copy: float, trees: int) -> float:
    """Seconds for the restore: ``base``, plus ``per_static_copy`` for each of the ``trees``
    when the simulator lowers by static copies (a delete and a spawn to give each back; the tick
    in flight, which the restore waits for, may be swapping any of them)."""
    if not per_static_copy or not sim.features().static_fallback:
        return base
    return base + per_static_copy * trees


def restore(adapter: FidelityManagerNode, sim, log, budget: float,
            per_static_copy: float = 0.0) -> int:
    """Return every object to its start state within ``budget`` seconds (plus ``per_static_copy``
    per tree where the simulator lowers by static copies) and say how it went, in one line: 0
    when all were restored or the simulator is gone (nothing left to restore into), 3 when the
    simulator answers but refuses or objects still differ from their start state."""
    from ..simulator.errors import SimulatorError, SimulatorTimeoutError
    from .levels import Level

    manager = adapter.manager
    adapter.stopping = True
    sim.limit_waits(restore_budget(sim, budget, per_static_copy, len(manager.trees)))
    started = time.perf_counter()
    with adapter.lock:  # after the tick in flight, if any
        lowered = manager.trees.names[manager.levels != Level.HIGH].tolist()
        try:
            manager.close()
            left = manager.mismatches()
        except SimulatorError as e:
            # out of time is not gone: a simulator still in the graph counts what is left
            gone = isinstance(e, SimulatorTimeoutError) and left_the_graph(sim)
            if gone and not lowered:
                log.info(f"simulator gone; every tree was HIGH, nothing to restore ({e})")
                return 0
            shown = ", ".join(lowered[:NAMES_SHOWN]) + (
                f" and {len(lowered) - NAMES_SHOWN} more" if len(lowered) > NAMES_SHOWN else "")
            (log.warning if gone else log.error)(
                f"could not restore {len(lowered)} trees below HIGH ({shown}): {e}")
            return 0 if gone else 3
    (log.error if left else log.info)(
        f"restored in {(time.perf_counter() - started) * 1e3:.1f} ms; "
        f"{len(left)} objects differ from their start state")
    return 3 if left else 0


def main(args: list[str] | None = None) -> int:
    """console_script ``fidelity_manager``: ``--ros-args -p config:=... -p preset:=adfi-1``."""
    from ..node_parameters import FIDELITY_MANAGER
    from ..ros_node import run_node
    from ..simulator.errors import SimulatorError
    from ..simulator.ros.classic.backend import connect
    from .config import FidelityConfig
    from .errors import ConfigError
    from .manager import FidelityManager
    from .support import describe

    def start(node, p: dict, stack):
        if not p["config"]:
            raise ConfigError("<parameters>", "config", "parameter 'config' is empty")
        config = FidelityConfig.load(p["config"])
        config.preset(p["preset"] or None)  # an unknown preset fails here, naming the known ones
        sim = stack.enter_context(connect(
            p["backend"], gazebo_namespace=p["gazebo_namespace"],
            server=p["server"], timeout=p["timeout"],
            world_file=p["world_file"] or None, node_name=f"{node.get_name()}_sim_client",
            namespace=node.get_namespace()))
        sim.wait_for_server()
        manager = FidelityManager(sim, config, p["preset"] or None)
        adapter = FidelityManagerNode(node, manager, p["rate"], sim, p["timeout"])
        log = node.get_logger()
        if manager.helpers is not None and manager.helpers.reverted:
            log.warning(f"{manager.helpers.reverted} objects were not in the world's original "
                        "lever state (left by a manager that stopped without restoring): "
                        "written back")
        log.info(f"preset '{manager.preset}': {len(manager.trees)} trees from {p['config']}, "
                 f"{p['rate']:g} Hz of sim time")
        for line in describe(manager.unsupported):
            log.warning(line)
        for name, sig in manager.signalers.items():
            if getattr(sig, "fallback", ""):
                log.info(f"signaler '{name}': stillness counted in ticks, not physics steps: "
                         f"{sig.fallback}")
        return lambda: restore(adapter, sim, log, p["restore_budget"],
                               p["restore_per_static_copy"])

    return run_node("fidelity_manager", FIDELITY_MANAGER, start,
                    errors=(ConfigError, SimulatorError), threads=2, args=args)


if __name__ == "__main__":
    sys.exit(main())
