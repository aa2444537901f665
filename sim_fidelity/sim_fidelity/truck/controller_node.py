"""ROS node ``unloading_controller``: the scripted unloading strategy against a running simulator.

The same :class:`~.controller.UnloadingController` as the in-process benchmark, through
:class:`RosUnloader`, which speaks only ROS (sim_server, or Gazebo bridged to the same names):

* reads ``/clock``, ``/world/<world>/model/<model>/joint_state`` (sensor_msgs/JointState),
  ``/model/<model>/suction/state`` (SuctionState) and ``/model/<model>/unloaded`` (UInt32); packet
  poses through ``get_states`` and packet sizes once through ``/get_entity_bounds``;
* writes ``/model/<model>/joint/<joint>/cmd_pos`` (Float64), ``/model/<model>/suction/cmd`` (Bool)
  and ``/model/<model>/suction/hold`` (Empty); publishes each move's phase on ``~/phase``
  (std_msgs/String);
* for the fidelity manager: before each decision, the settle it will wait (``decision_settle``
  seconds of sim time, std_msgs/Float64) on ``decision_topic``, the manager's ``~/decision``
  (empty: no decision points); with ``announce`` true, ``extend``/``retract`` on
  ``action_topic`` (std_msgs/String), the manager's ``~/action``. Neither is needed for the
  plungers: the manager observes the ``plunger_extend`` command itself.

Ticks every control period of simulation time. On shutdown suction is switched off and the joints
are held where they are. Parameters: ``node_parameters.UNLOADING_CONTROLLER``.

    ros2 run sim_fidelity unloading_controller --ros-args -p world:=truck_B
"""
from __future__ import annotations

import re
import threading
from contextlib import ExitStack
from typing import Callable

import numpy as np

from ..world_generators.unloader import BELT_REAR
from .controller import CONTROL_PERIOD, MAX_SPEED, UnloadingController

SHUTDOWN_WAIT_S = 1.0  # for a simulator call of the tick in flight when the node stops


class RosUnloader:
    """:class:`~.controller.UnloaderIO` over ROS topics and the simulator's services."""

    def __init__(self, node, sim, model: str, world: str, packet_pattern: str):
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Bool, Empty, Float64, UInt32

        from sim_fidelity_interfaces.msg import SuctionState

        from ..simulator.errors import UnknownEntityError
        from ..simulator.protocol import EntityKind
        self.sim, self.model = sim, model
        self.packets = sorted(e for e in sim.entities(EntityKind.MODEL)
                              if re.fullmatch(packet_pattern, e))
        if not self.packets:
            raise UnknownEntityError(packet_pattern, "no model matches the packet pattern")
        lo, hi = sim.bounds(self.packets)
        self.packet_half = (hi - lo) / 2
        self._row = {p: i for i, p in enumerate(self.packets)}
        self._lock = threading.Lock()
        self._joints: dict[str, float] = {}
        self._held = np.zeros(0, int)
        self._unloaded = 0
        self._poses: tuple[float, np.ndarray] | None = None  # (sim time, all packet poses)
        self._float, self._bool, self._empty = Float64, Bool, Empty
        self._cmd = {j: node.create_publisher(Float64, f"/model/{model}/joint/{j}/cmd_pos", 10)
                     for j in MAX_SPEED}
        self._suction = node.create_publisher(Bool, f"/model/{model}/suction/cmd", 10)
        self._hold = node.create_publisher(Empty, f"/model/{model}/suction/hold", 10)
        node.create_subscription(JointState, f"/world/{world}/model/{model}/joint_state",
                                 self._on_joints, 10)
        node.create_subscription(SuctionState, f"/model/{model}/suction/state", self._on_suction,
                                 10)
        node.create_subscription(UInt32, f"/model/{model}/unloaded", self._on_unloaded, 10)

    # --- subscriptions ---------------------------------------------------------------------------
    def _on_joints(self, msg) -> None:
        with self._lock:
            self._joints.update(zip(msg.name, msg.position))

    def _on_suction(self, msg) -> None:
        rows = [self._row[n] for n in msg.held if n in self._row]
        with self._lock:
            self._held = np.array(rows, int)

    def _on_unloaded(self, msg) -> None:
        self._unloaded = int(msg.data)

    @property
    def ready(self) -> bool:
        """Joint states of every commanded joint have arrived."""
        with self._lock:
            return all(j in self._joints for j in MAX_SPEED)

    # --- UnloaderIO ------------------------------------------------------------------------------
    @property
    def time(self) -> float:
        return self.sim.time

    @property
    def unloaded(self) -> int:
        return self._unloaded

    def positions(self, joints: list[str]) -> np.ndarray:
        with self._lock:
            return np.array([self._joints[j] for j in joints])

    def command(self, targets: dict[str, float]) -> None:
        for joint, value in targets.items():
            self._cmd[joint].publish(self._float(data=float(value)))

    def suction_on(self, on: bool) -> None:
        self._suction.publish(self._bool(data=bool(on)))

    def suction_hold(self) -> None:
        self._hold.publish(self._empty())

    def held_packets(self) -> np.ndarray:
        with self._lock:
            return self._held.copy()

    def _all_poses(self) -> np.ndarray:
        t = self.sim.time
        if self._poses is None or self._poses[0] != t:
            self._poses = (t, self.sim.get_states(self.packets)[0])
        return self._poses[1]

    @property
    def in_truck(self) -> np.ndarray:
        """Packets ahead of the rear of the robot's belt (those behind it were unloaded)."""
        return self._all_poses()[:, 0] > self.model_x() + BELT_REAR

    def packet_poses(self, rows: np.ndarray) -> np.ndarray:
        return self._all_poses()[rows]

    def model_x(self) -> float:
        return float(self.sim.get_states([self.model])[0][0, 0])


def start(node, values: dict, stack: ExitStack) -> Callable[[], int]:
    """Connect to the simulator, then tick the controller every control period of sim time."""
    from std_msgs.msg import Float64, String

    from ..ros_node import ParameterError
    from ..simulator.errors import SimulatorError
    from ..simulator.ros.classic.backend import connect
    if not values["world"]:
        raise ParameterError(node.get_name(), "world",
                             "is empty: give the world's name (e.g. truck_B)")
    log = node.get_logger()
    log.info(f"connecting to the simulator (backend {values['backend']}, "
             f"timeout {values['timeout']:g} s)")
    sim = stack.enter_context(connect(
        values["backend"], gazebo_namespace=values["gazebo_namespace"],
        timeout=values["timeout"], node_name=f"{node.get_name()}_sim_client",
        namespace=node.get_namespace()))
    sim.wait_for_server()
    log.info(f"simulator found ({type(sim).__name__}); listing the packets")
    robot = RosUnloader(node, sim, values["model"], values["world"], values["packets"])
    announce = decide = None
    if values["announce"]:
        actions = node.create_publisher(String, values["action_topic"], 10)
        announce = lambda a: actions.publish(String(data=a))  # noqa: E731
    if values["decision_topic"]:
        decisions = node.create_publisher(Float64, values["decision_topic"], 10)
        decide = lambda settle: decisions.publish(Float64(data=settle))  # noqa: E731
    phases = node.create_publisher(String, "~/phase", 10)
    state: dict[str, UnloadingController | int | bool] = {"phases": 0}
    log.info(f"{len(robot.packets)} packets in '{values['world']}'; waiting for joint states")

    def tick() -> None:
        try:
            step()
        except SimulatorError:
            if not state.get("stopping"):
                raise  # else the simulator went first: nothing to tell

    def step() -> None:
        controller = state.get("controller")
        if controller is None:
            if not robot.ready:
                return
            controller = state["controller"] = UnloadingController(
                robot, announce, values["seed"], decide, values["decision_settle"])
        controller.tick()
        for _, phase in controller.stats.phases[state["phases"]:]:
            phases.publish(String(data=phase))
        state["phases"] = len(controller.stats.phases)

    node.create_timer(CONTROL_PERIOD, tick)  # ROS time: follows /clock

    def cleanup() -> int:
        state["stopping"] = True
        sim.limit_waits(SHUTDOWN_WAIT_S)  # the simulator may be gone already
        robot.suction_on(False)
        if robot.ready:
            robot.command(dict(zip(MAX_SPEED, robot.positions(list(MAX_SPEED)))))
        return 0

    return cleanup


def main(args: list[str] | None = None) -> int:
    """console_script ``unloading_controller``."""
    from ..node_parameters import UNLOADING_CONTROLLER
    from ..ros_node import run_node
    from ..simulator.errors import SimulatorError
    return run_node("unloading_controller", UNLOADING_CONTROLLER, start,
                    errors=(SimulatorError,), args=args)


if __name__ == "__main__":
    import sys
    sys.exit(main())
