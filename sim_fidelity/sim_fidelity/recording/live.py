"""Record live topics to a bag: rclpy subscriptions hand their raw CDR to :class:`BagWriter`.

The subscriptions are reliable with history KEEP_ALL, so a reliable publisher is held back by
DDS rather than a message dropped when the recorder falls behind. SIGINT or SIGTERM only sets a
flag that the loop checks between callbacks (a message is never half written); then the
recorder stops subscribing: it takes what the subscriptions had already received (drain), then
closes the bag. A second signal during the drain is ignored.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .preset import Preset
from .writer import BagWriter

POLL_S = 0.1  # longest wait for a message before the loop looks at the stop flag
DRAIN_BUDGET_S = 5.0  # for taking what the subscriptions hold when the recording stops


@dataclass
class RecordResult:
    path: Path
    counts: dict[str, int]  # messages written per topic
    seconds: float  # wall time recorded
    drained: int  # messages taken from the subscriptions after the stop signal
    signal: str = ""  # the signal that stopped the recording, if one did


def _message_class(type_name: str):
    import importlib

    package, _, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.msg"), name)


def record(preset: Preset, path: str | Path, *, use_sim_time: bool = False,
           duration: float = 0.0, report: Callable[[str], None] = print) -> RecordResult:
    """Record ``preset``'s topics to a new bag at ``path`` until SIGINT/SIGTERM (or
    ``duration`` seconds of wall time, if > 0). ``report`` hears one line once subscribed, one
    as each topic's first publisher is matched and one as its first message arrives (discovery
    can take seconds on a busy machine)."""
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    stop = threading.Event()
    stopped_by: list[int] = []

    def on_signal(signum: int, _frame) -> None:
        stopped_by.append(signum)
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _record(preset, Path(path), use_sim_time, duration, report, stop, stopped_by)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _record(preset: Preset, path: Path, use_sim_time: bool, duration: float,
            report: Callable[[str], None], stop: threading.Event,
            stopped_by: list[int]) -> RecordResult:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from rclpy.signals import SignalHandlerOptions

    classes = {topic: _message_class(msgtype) for topic, msgtype in preset.topics}
    writer = BagWriter(path, preset.topics, preset.storage)  # refuses an existing bag first
    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    node = executor = None
    drained = 0
    started = time.monotonic()
    try:
        node = rclpy.create_node("simfid_record", context=context, parameter_overrides=[
            Parameter("use_sim_time", value=use_sim_time)])
        clock = node.get_clock()
        qos = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE)

        def writer_of(topic: str):
            def write(cdr: bytes) -> None:
                writer.write_raw(topic, clock.now().nanoseconds, cdr)
                if writer.counts[topic] == 1:
                    report(f"first message on {topic}")
            return write
        subs = {topic: node.create_subscription(cls, topic, writer_of(topic), qos, raw=True)
                for topic, cls in classes.items()}
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        report(f"recording {len(subs)} topics to {path} ({preset.storage}); Ctrl-C stops")
        unmatched = dict(subs)
        while not stop.is_set() and (duration <= 0 or time.monotonic() - started < duration):
            executor.spin_once(timeout_sec=POLL_S)
            for topic in [t for t, sub in unmatched.items() if sub.get_publisher_count()]:
                del unmatched[topic]
                report(f"matched a publisher on {topic}")
        # stop subscribing: take what has arrived, write it, then close
        deadline = time.monotonic() + DRAIN_BUDGET_S
        for topic, sub in subs.items():
            while time.monotonic() < deadline:
                taken = sub.handle.take_message(sub.msg_type, True)
                if taken is None:
                    break
                writer.write_raw(topic, clock.now().nanoseconds, taken[0])
                drained += 1
            node.destroy_subscription(sub)
    finally:
        writer.close()
        if executor is not None:
            executor.shutdown(timeout_sec=1.0)
        if node is not None:
            node.destroy_node()
        context.try_shutdown()
    return RecordResult(path=path, counts=dict(writer.counts),
                        seconds=time.monotonic() - started, drained=drained,
                        signal=signal.Signals(stopped_by[0]).name if stopped_by else "")
