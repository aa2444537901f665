"""``sim_server``: the embedded MuJoCo engine as a ROS 2 node speaking ``simulation_interfaces``.

Serves the same service names and types as Gazebo's ``ros_gz_sim`` server, so a client cannot tell
the two apart (``standard_services.py``), plus our own (``own_services.py``: fidelity levers,
batch state, settable sensor values). Time runs in ``stepping.py``; ``/clock``, ``~/performance``,
odometry, sensor values and the model topics go out through ``publishers.py``. Every handler
and every reading holds the one engine lock; errors become result codes through ``results.py``.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, NoReturn

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from ...node_parameters import SIM_SERVER
from .. import state_kernels
from ..engine import MujocoEngine
from ..errors import SdfError, SimulationDivergedError, SimulatorError
from ..protocol import SimState
from ..sensor_values import SensorValues
from .classic.backend import interface_services
from .lever_guard import CHECK_PERIOD_S, LeverGuard
from .model_topics import ModelTopics
from .own_services import OwnServices
from .publishers import Publishers
from .results import ok, result_for
from .standard_services import StandardServices
from .stepping import Stepper
from .visualization import SceneVisualization

FEEDBACK_PERIOD_S = 0.1  # SimulateSteps feedback at most this often
UNLOCKED = {"step_simulation"}  # handlers that take the engine lock per chunk themselves


class SimServer:
    """Owns the engine lock and composes the stepper, publishers and services of one node.

    :meth:`stop` ends stepping and publishing for good; call it before the node or its context
    goes (it is idempotent and returns within a couple of seconds at worst).

    It also guards the world: levers a client left changed go back to the originals when its
    node leaves the graph (``lever_guard.py``); a divergence of the physics (undone by the
    engine) pauses the simulation, goes out on ``~/divergence`` and into the next reply.
    """

    def __init__(self, node: Node, engine: MujocoEngine, *, real_time_factor: float,
                 paused: bool, publish_rate: float, odometry: list[str],
                 max_steps: int = SIM_SERVER["max_steps_per_request"].default,
                 serve_levers: bool = True, interfaces: str = "simulation_interfaces",
                 gazebo_namespace: str = "", viz_rate: float = 0.0,
                 tf_links: tuple[str, ...] = ()):
        self.node, self.engine = node, engine
        self.lock = threading.RLock()
        engine.set_sim_state(SimState.PAUSED if paused else SimState.PLAYING)
        self.model_topics = ModelTopics(node, engine, self.lock)
        sensor_values = SensorValues(engine, vehicle=lambda: self.model_topics.sensors)
        self.stepper = Stepper(engine, self.lock, real_time_factor=real_time_factor,
                               on_advance=self._on_advance, on_diverged=self._on_diverged,
                               max_steps=max_steps)
        self._untold: tuple[str, str] | None = None  # a divergence no reply reported yet:
        # (the engine's error, the report)
        self.publishers = Publishers(node, engine, self.lock, self.stepper, sensor_values,
                                     self.model_topics, publish_rate=publish_rate,
                                     odometry=odometry)
        self.visualization = SceneVisualization(node, engine, self.lock, self.publishers.gate,
                                                rate=viz_rate, tf_links=list(tf_links))
        self.guard = LeverGuard(engine, self._graph, node.get_logger().info)
        standard = StandardServices(node, engine, self.stepper, self.publishers,
                                    self.model_topics, stop=self.stop,
                                    levers_reset=self.guard.forget)
        own = OwnServices(engine, self.stepper, self.publishers, sensor_values, self.guard)
        served = interface_services(interfaces, standard.services(), gazebo_namespace, node,
                                    engine, self.lock, self.stepper, self.publishers,
                                    self.model_topics, self.guard.forget)
        group = ReentrantCallbackGroup()
        self._services = [node.create_service(kind, name, self._guarded(handler),
                                              callback_group=group)
                          for name, (kind, handler) in {**served,
                                                        **own.services(serve_levers)}.items()]

        node.create_timer(CHECK_PERIOD_S, self.check_owners, callback_group=group)
        from rclpy.action import ActionServer, CancelResponse  # here: a node that a signal
        from simulation_interfaces.action import SimulateSteps  # stops while it loads skips it
        self._action = ActionServer(node, SimulateSteps, "/simulate_steps",
                                    execute_callback=self._simulate_steps, callback_group=group,
                                    cancel_callback=lambda _goal: CancelResponse.ACCEPT)

    def start(self) -> None:
        self.publishers.publish_clock()
        self.stepper.start()

    def stop(self) -> None:
        """Stop publishing, then stepping (joined); idempotent."""
        self.publishers.close()
        self.stepper.stop()

    def _on_advance(self) -> None:
        self.publishers.publish_clock()

    def _on_diverged(self, error: SimulationDivergedError) -> None:
        """The engine undid a divergence (under the lock; the stepper paused the simulation)."""
        report = f"{error}; the simulation is paused"
        self.node.get_logger().warning(report)
        self.publishers.publish_divergence(report)
        self._untold = (str(error), report)

    def _graph(self) -> set[str]:
        """Fully qualified names of the nodes in the ROS graph."""
        return {f"{ns.rstrip('/')}/{name}"
                for name, ns in self.node.get_node_names_and_namespaces()}

    def check_owners(self) -> None:
        """Restore the levers of lever owners whose node left the graph (the timer's callback;
        an error is logged, never raised into the executor)."""
        with self.lock:
            try:
                self.guard.check()
            except Exception as e:  # noqa: BLE001 - the guard must not take the node down
                self.node.get_logger().error(f"lever guard: {type(e).__name__}: {e}")

    def _simulate_steps(self, goal) -> Any:
        """The SimulateSteps action: steps in chunks with feedback; cancel ends it. Returns
        its result."""
        from simulation_interfaces.action import SimulateSteps
        n, out = int(goal.request.steps), SimulateSteps.Result()
        last = [0.0]

        def progress(done: int) -> None:
            now = time.monotonic()
            if now - last[0] >= FEEDBACK_PERIOD_S or done == n:
                last[0] = now
                goal.publish_feedback(SimulateSteps.Feedback(completed_steps=done,
                                                             remaining_steps=n - done))
        try:
            self.stepper.step(n, cancelled=lambda: goal.is_cancel_requested, progress=progress)
            out.result = ok()
            goal.succeed()
        except Exception as e:  # noqa: BLE001 - every error becomes the goal's result
            out.result = result_for(e, SimulateSteps.Result)
            goal.canceled() if goal.is_cancel_requested else goal.abort()
        return out

    def _guarded(self, handler: Callable[[Any, Any], None]) -> Callable[[Any, Any], Any]:
        """Run a handler under the engine lock; its errors become the response's result.

        The result is OK unless the handler sets another or raises; a service must answer,
        never die. Errors that are not the protocol's typed ones are logged as bugs.
        """
        lock = (contextlib.nullcontext() if handler.__name__ in UNLOCKED  # locks per chunk
                else self.lock)

        def call(request, response):
            with lock:
                try:
                    if hasattr(response, "result"):
                        response.result = ok()
                    handler(request, response)
                except Exception as e:  # noqa: BLE001 - every error becomes an answer
                    if not isinstance(e, SimulatorError):
                        self.node.get_logger().error(
                            f"{handler.__name__}: {type(e).__name__}: {e}")
                    response.result = result_for(e, type(response))
            with self.lock:
                self._tell_divergence(response)
            return response
        call.__name__ = handler.__name__
        return call


    def _tell_divergence(self, response: Any) -> None:
        """Put a divergence no reply has reported yet into this one's result message."""
        if self._untold and hasattr(response, "result"):
            error, report = self._untold
            told = response.result.error_message
            if error not in told:  # the request that diverged answers with the error itself
                response.result.error_message = (f"{told}; " if told else "") + report
            self._untold = None


# ---------------------------------------------------------------------- node entry points
def run(parameters: dict | None = None, args: list[str] | None = None) -> int:
    """Start the node (``parameters`` override the command line's) and spin until a signal;
    parameters: ``node_parameters.SIM_SERVER``, declared by :mod:`sim_fidelity.ros_node`."""
    from ...ros_node import run_node

    def start(node, values: dict, _stack):
        if not values["world"]:
            raise SdfError("parameter 'world' is empty: give the SDF world to load")
        engine = MujocoEngine.from_file(values["world"], sleep=values["sleep"],
                                        sleep_tolerance=values["sleep_tolerance"] or None,
                                        step_size=values["step_size"] or None,
                                        solver_iterations=values["solver_iterations"] or None)
        state_kernels.load()
        server = SimServer(node, engine, real_time_factor=values["real_time_factor"],
                           paused=values["paused"], publish_rate=values["publish_rate"],
                           odometry=[p for p in values["odometry"] if p],
                           max_steps=values["max_steps_per_request"],
                           serve_levers=values["serve_levers"], interfaces=values["interfaces"],
                           gazebo_namespace=values["gazebo_namespace"],
                           viz_rate=values["viz_rate"], tf_links=values["tf_links"])
        node.get_logger().info(
            f"world '{engine.world.name}' from {values['world']}: "
            f"{len(engine.entities())} entities, "
            f"step {engine.step_size * 1e3:g} ms, rtf {values['real_time_factor']:g}, "
            f"{'paused' if values['paused'] else 'playing'}")
        server.start()
        viewer = open_viewer(server) if values["gui"] else None

        def stop() -> int:  # the stepper stops publishing before the context goes
            if viewer is not None:  # the process ends right after: no wait for the window
                viewer.close(wait=0.5)
            server.stop()
            return 0
        return stop

    return run_node("sim_server", SIM_SERVER, start, errors=(SimulatorError, FileNotFoundError),
                    threads=4, args=args, overrides=parameters, use_sim_time=False)


def open_viewer(server: SimServer):
    """MuJoCo's viewer on the server's engine; space plays and pauses the simulation."""
    from ...viz.viewer import LiveViewer

    def pause(playing: bool) -> None:
        with server.lock:
            server.engine.set_sim_state(SimState.PAUSED if playing else SimState.PLAYING)
        server.stepper.wake()
    return LiveViewer(server.engine, server.lock, pause, server.node.get_logger().error).start()


def main(args: list[str] | None = None) -> NoReturn:
    """console_script ``sim_server``: parameters come as ``--ros-args -p world:=...``.

    The process ends as soon as the node's clean-up is done: the DDS participant goes with the
    context, then the interpreter's own teardown is skipped. That teardown (the middleware's
    destructors) took 0.3-0.6 s here, which a signal's "ended within a second" cannot afford
    on a loaded machine; nothing of ours runs in it. The last line says how long after the
    signal's handler ran the process exits (what the tests hold to a second).
    """
    from ...shutdown import report_exit

    code = run(args=args)
    rclpy = sys.modules.get("rclpy")  # not loaded when a signal came first
    if rclpy is not None:
        with contextlib.suppress(Exception):  # gone already
            rclpy.get_default_context().destroy()
    report_exit()
    os._exit(code)


if __name__ == "__main__":
    main()
