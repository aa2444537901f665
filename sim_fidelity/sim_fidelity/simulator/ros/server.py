"""``sim_server``: the embedded MuJoCo engine as a ROS 2 node speaking ``simulation_interfaces``.

Serves the same service names and types as Gazebo's ``ros_gz_sim`` server, so a client cannot tell
the two apart (``standard_services.py``), plus our own (``own_services.py``: fidelity levers,
batch state, settable sensor values). Time runs in ``stepping.py``; ``/clock``, ``~/performance``,
odometry, sensor values and the model topics go out through ``publishers.py``. Every handler
and every reading holds the one engine lock; errors become result codes through ``results.py``.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from ..engine import MujocoEngine
from ..errors import SdfError, SimulatorError
from ..protocol import SimState
from ..sensor_values import SensorValues
from .classic.backend import interface_services
from .model_topics import ModelTopics
from .own_services import OwnServices
from .publishers import Publishers
from .results import ok, result_for
from .standard_services import StandardServices
from .stepping import Stepper


class SimServer:
    """Owns the engine lock and composes the stepper, publishers and services of one node.

    :meth:`stop` ends stepping and publishing for good; call it before the node or its context
    goes (it is idempotent and returns within a couple of seconds at worst).
    """

    def __init__(self, node: Node, engine: MujocoEngine, *, real_time_factor: float,
                 paused: bool, publish_rate: float, odometry: list[str],
                 serve_levers: bool = True, interfaces: str = "simulation_interfaces",
                 gazebo_namespace: str = ""):
        self.node, self.engine = node, engine
        self.lock = threading.RLock()
        engine.set_sim_state(SimState.PAUSED if paused else SimState.PLAYING)
        sensor_values = SensorValues(engine)
        self.model_topics = ModelTopics(node, engine, self.lock)
        self.stepper = Stepper(engine, self.lock, real_time_factor=real_time_factor,
                               on_advance=self._on_advance)
        self.publishers = Publishers(node, engine, self.lock, self.stepper, sensor_values,
                                     self.model_topics, publish_rate=publish_rate,
                                     odometry=odometry)
        standard = StandardServices(node, engine, self.stepper, self.publishers,
                                    self.model_topics, stop=self.stop)
        own = OwnServices(engine, self.stepper, self.publishers, sensor_values)
        served = interface_services(interfaces, standard.services(), gazebo_namespace, node,
                                    engine, self.lock, self.stepper, self.publishers,
                                    self.model_topics)
        group = ReentrantCallbackGroup()
        self._services = [node.create_service(kind, name, self._guarded(handler),
                                              callback_group=group)
                          for name, (kind, handler) in {**served,
                                                        **own.services(serve_levers)}.items()]

    def start(self) -> None:
        self.publishers.publish_clock()
        self.stepper.start()

    def stop(self) -> None:
        """Stop publishing, then stepping (joined); idempotent."""
        self.publishers.close()
        self.stepper.stop()

    def _on_advance(self) -> None:
        self.publishers.publish_clock()

    def _guarded(self, handler: Callable[[Any, Any], None]) -> Callable[[Any, Any], Any]:
        """Run a handler under the engine lock; its errors become the response's result.

        The result is OK unless the handler sets another or raises; a service must answer,
        never die. Errors that are not the protocol's typed ones are logged as bugs.
        """
        def call(request, response):
            with self.lock:
                try:
                    if hasattr(response, "result"):
                        response.result = ok()
                    handler(request, response)
                except Exception as e:  # noqa: BLE001 - every error becomes an answer
                    if not isinstance(e, SimulatorError):
                        self.node.get_logger().error(
                            f"{handler.__name__}: {type(e).__name__}: {e}")
                    response.result = result_for(e, type(response))
                return response
        call.__name__ = handler.__name__
        return call


# ---------------------------------------------------------------------- node entry points
def run(parameters: dict | None = None, args: list[str] | None = None) -> int:
    """Start the node (``parameters`` override the command line's) and spin until a signal;
    parameters: ``node_parameters.SIM_SERVER``, declared by :mod:`sim_fidelity.ros_node`."""
    from ...node_parameters import SIM_SERVER
    from ...ros_node import run_node

    def start(node, values: dict, _stack):
        if not values["world"]:
            raise SdfError("parameter 'world' is empty: give the SDF world to load")
        engine = MujocoEngine.from_file(values["world"], sleep=values["sleep"],
                                        sleep_tolerance=values["sleep_tolerance"] or None,
                                        step_size=values["step_size"] or None,
                                        solver_iterations=values["solver_iterations"] or None)
        server = SimServer(node, engine, real_time_factor=values["real_time_factor"],
                           paused=values["paused"], publish_rate=values["publish_rate"],
                           odometry=[p for p in values["odometry"] if p],
                           serve_levers=values["serve_levers"], interfaces=values["interfaces"],
                           gazebo_namespace=values["gazebo_namespace"])
        node.get_logger().info(
            f"world '{engine.world.name}' from {values['world']}: "
            f"{len(engine.entities())} entities, "
            f"step {engine.step_size * 1e3:g} ms, rtf {values['real_time_factor']:g}, "
            f"{'paused' if values['paused'] else 'playing'}")
        server.start()

        def stop() -> int:  # the stepper stops publishing before the context goes
            server.stop()
            return 0
        return stop

    return run_node("sim_server", SIM_SERVER, start, errors=(SimulatorError, FileNotFoundError),
                    threads=4, args=args, overrides=parameters, use_sim_time=False)


def main(args: list[str] | None = None) -> int:
    """console_script ``sim_server``: parameters come as ``--ros-args -p world:=...``."""
    return run(args=args)


if __name__ == "__main__":
    import sys
    sys.exit(main())
