"""``kernel_manager``: the reality-gap kernel manager as a ROS 2 node (paper 001, III-B, Fig. 2).

Subscribes to the state and action topics of the kernels file's spec (the topics and fields the
bags had; values are read exactly as the bag ingest reads them). Every 1/``rate`` s of
simulation time (``/clock``) it takes the state s and command a of the previous tick and, when
a kernel is active at (s, a), replaces the state the simulation produced since by f_k(s, a):
poses and twists through ``RosSimulator`` (``apply:`` of the spec), sensor values through the
simulator's settable sensors (released again at the first tick without an active kernel, or,
``hold: period``, a tenth of a period before the next tick, so that tick reads the simulation's
own sensors).
Each correction is published as ``sim_fidelity_interfaces/KernelFired`` on ``~/fired``.

f_k predicts one sampling period of the spec ahead, so ``rate`` defaults to the spec's
``sampling.rate_hz``. Parameters: ``node_parameters.KERNEL_MANAGER``.
"""
from __future__ import annotations

import importlib
import sys
import threading
import time

import numpy as np

from .bags import extract
from .kernel_markers import kernel_marker_array, kernel_spheres
from .kernel_set import KernelRunner, KernelSet

RELEASE_BUDGET_S = 2.0  # for releasing the sensor overrides when the node stops
SUBTICKS = 10  # with overrides held for a period: they end one sub-tick before the next tick


def message_class(type_name: str):
    """The rclpy class of ``pkg/msg/Name``."""
    package, _, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.msg"), name)


class KernelManagerNode:
    """The rclpy adapter around a :class:`KernelRunner`."""

    def __init__(self, node, runner: KernelRunner, rate: float):
        from sim_fidelity_interfaces.msg import KernelFired

        self.node, self.runner = node, runner
        spec = runner.kernels.spec
        self.sources = list(spec.state) + list(spec.action)
        self.latest = np.full(len(self.sources), np.nan)  # hold: the latest value of each
        self.lock = threading.Lock()  # the latest values
        self.ticking = threading.Lock()  # one tick, or the release, at a time
        self.stopped = False  # released: no tick writes into the simulator after
        self.previous: tuple[np.ndarray, np.ndarray] | None = None
        self.fired = 0
        by_topic: dict[str, list[int]] = {}
        for i, src in enumerate(self.sources):
            by_topic.setdefault(src.topic, []).append(i)
        for topic, idx in by_topic.items():
            node.create_subscription(message_class(self.sources[idx[0]].type), topic,
                                     self._reader(idx), 10)
        self._fired = node.create_publisher(KernelFired, "~/fired", 10)
        self._markers = KernelMarkers(node, runner.kernels)
        self._subtick = 0
        if runner.expiring:  # ROS time: the timers follow /clock
            node.create_timer(1.0 / (rate * SUBTICKS), self._on_subtick)
        else:
            node.create_timer(1.0 / rate, self._tick)

    def _reader(self, idx: list[int]):
        def read(msg) -> None:
            values = [extract(msg, self.sources[i]) for i in idx]
            with self.lock:
                self.latest[idx] = values
        return read

    def stop(self) -> None:
        """Release the sensor overrides after the tick in flight; no tick writes after this."""
        with self.ticking:
            self.stopped = True
            self.runner.release()

    def _on_subtick(self) -> None:
        """A tick every :data:`SUBTICKS` sub-ticks; on the sub-tick before it, the overrides
        held for one period end (published sensors then carry the simulation's values)."""
        self._subtick = (self._subtick + 1) % SUBTICKS
        if self._subtick == 0:
            self._tick()
        elif self._subtick == SUBTICKS - 1:
            with self.ticking:
                if not self.stopped:
                    self.runner.expire()

    def _tick(self) -> None:
        from sim_fidelity_interfaces.msg import KernelFired

        from ..simulator.ros.convert import time_msg
        self._markers.publish()
        with self.lock:
            current = self.latest.copy()
        if np.isnan(current).any():
            return  # not every topic heard yet
        d = len(self.runner.kernels.spec.state)
        state, action = current[:d], current[d:]
        previous, self.previous = self.previous, (state, action)
        if previous is None:
            return
        with self.ticking:
            if self.stopped:
                return
            hit = self.runner.apply(*previous)
        if hit is None:
            return
        k, after = hit
        self.previous = (after, action)  # the simulation is now in f_k(s, a)
        self.fired += 1
        self._markers.publish(k)
        now = self.node.get_clock().now().nanoseconds * 1e-9
        self._fired.publish(KernelFired(
            stamp=time_msg(now), sim_time=now, kernel=k,
            activation=float(self.runner.kernels.activation(previous[0])[k]),
            state_before=state.tolist(), state_after=after.tolist()))


class KernelMarkers:
    """``~/markers``: the kernels' spheres (:mod:`.kernel_markers`), only while subscribed, at
    most once a second of wall time and at once when a kernel fires (that one highlighted)."""

    def __init__(self, node, kernels: KernelSet):
        from visualization_msgs.msg import MarkerArray

        self.node, self.spheres = node, kernel_spheres(kernels)
        self.pub = node.create_publisher(MarkerArray, "~/markers", 10) if self.spheres else None
        self.fired: int | None = None
        self.last = -np.inf

    def publish(self, fired: int | None = None) -> None:
        if self.pub is None or self.pub.get_subscription_count() == 0:
            return
        now = time.monotonic()
        if fired is None and now - self.last < 1.0:
            return
        from ..simulator.ros.convert import time_msg
        self.fired = fired if fired is not None else self.fired
        self.last = now
        stamp = time_msg(self.node.get_clock().now().nanoseconds * 1e-9)
        self.pub.publish(kernel_marker_array(self.spheres, self.fired, stamp))


def main(args: list[str] | None = None) -> int:
    """console_script ``kernel_manager``: ``--ros-args -p kernels:=kernels.yaml``."""
    from ..node_parameters import KERNEL_MANAGER
    from ..ros_node import run_node
    from ..simulator.errors import SimulatorError, SimulatorTimeoutError
    from ..simulator.ros.classic.backend import connect
    from .errors import RealityGapError

    def start(node, p: dict, stack):
        if not p["kernels"]:
            raise RealityGapError("parameter 'kernels' is empty: give a kernels file")
        kernels = KernelSet.load(p["kernels"])
        rate = p["rate"] or kernels.spec.rate_hz
        sim = stack.enter_context(connect(
            p["backend"], gazebo_namespace=p["gazebo_namespace"],
            server=p["server"], timeout=p["timeout"],
            node_name=f"{node.get_name()}_sim_client", namespace=node.get_namespace()))
        sim.wait_for_server()
        runner = KernelRunner(sim, kernels)
        manager = KernelManagerNode(node, runner, rate)
        log = node.get_logger()
        log.info(f"{len(kernels)} kernels from {p['kernels']}, {rate:g} Hz of sim time, "
                 f"state from {sorted({s.topic for s in manager.sources})}")

        def release() -> int:  # the sensor overrides go before the node does, after any tick
            sim.limit_waits(RELEASE_BUDGET_S)
            try:
                manager.stop()
            except SimulatorTimeoutError as e:  # the simulator is gone: nothing to release
                log.warning(f"could not release the sensor overrides: {e}")
            except SimulatorError as e:
                log.error(f"could not release the sensor overrides: {e}")
                return 3
            return 0
        return release

    return run_node("kernel_manager", KERNEL_MANAGER, start,
                    errors=(RealityGapError, SimulatorError),
                    args=args)


if __name__ == "__main__":
    sys.exit(main())
