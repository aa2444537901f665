"""The life of a manager node (fidelity_manager, kernel_manager): one place for the rclpy plumbing.

Parameters are declared with descriptions, the node follows simulation time, SIGINT and SIGTERM
become :class:`~sim_fidelity.shutdown.Interrupted` (rclpy's own handlers are off), so the node's
clean-up runs while the simulator is still reachable, and only then is rclpy shut down.
"""
from __future__ import annotations

import os
from typing import Callable

Cleanup = Callable[[], int]  # undo what the node did; returns an exit code (0: all restored)


def run_node(name: str, parameters: dict, start: Callable[[object, dict], Cleanup], *,
             errors: tuple[type[Exception], ...], threads: int = 1,
             args: list[str] | None = None) -> int:
    """Create node ``name`` with ``parameters`` (name: (default, description)), call
    ``start(node, values)``, spin until a signal, then run the clean-up ``start`` returned.

    ``errors`` are the expected failures (bad configuration, simulator gone): logged, exit code 2.
    """
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    import rclpy
    from rcl_interfaces.msg import ParameterDescriptor
    from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from rclpy.signals import SignalHandlerOptions

    from .shutdown import Interrupted, raise_on_signals

    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node(name, parameter_overrides=[Parameter("use_sim_time", value=True)])
    for key, (default, description) in parameters.items():
        node.declare_parameter(key, default, ParameterDescriptor(description=description))
    values = {key: node.get_parameter(key).value for key in parameters}
    log = node.get_logger()
    cleanup: Cleanup | None = None
    executor = MultiThreadedExecutor(num_threads=threads) if threads > 1 else SingleThreadedExecutor()
    code = 0
    with raise_on_signals():
        try:
            cleanup = start(node, values)
            executor.add_node(node)
            executor.spin()
        except Interrupted as e:
            log.info(f"{e}: cleaning up")
        except errors as e:
            log.error(str(e))
            code = 2
        finally:
            if cleanup is not None:
                code = code or cleanup()
            executor.shutdown(timeout_sec=2.0)  # nothing may be waiting in rcl when rclpy goes
            node.destroy_node()
            rclpy.try_shutdown()
    return code
