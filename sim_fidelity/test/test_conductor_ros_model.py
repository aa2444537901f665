"""Models in nodes of their own (model_node) driven by a conductor through RemoteModel proxies:
real processes, real DDS."""
from __future__ import annotations

import signal

import numpy as np
import pytest
from conductor_ros import start_model_node
from ros_processes import Probe, next_domain, stop, wait_for

from sim_fidelity.model_conductor.conductor import Conductor
from sim_fidelity.model_conductor.demo_models import Integrator
from sim_fidelity.model_conductor.errors import ModelError
from sim_fidelity.model_conductor.model import POSE, TWIST, ModelKind, Stepping
from sim_fidelity.model_conductor.ros.remote_model import RemoteModel

TIMEOUT = 60.0


def test_remote_models_keep_lock_step_by_service_and_count_clock_skips(tmp_path):
    """A service-stepped remote model integrates exactly the main model's time, step by step,
    and publishes its output under the id the conductor gave it; a slow clock-stepped remote
    model misses ticks, and every tick is either stepped or counted as skipped."""
    from sim_fidelity_interfaces.msg import ModelOutput

    domain = next_domain()
    nodes = [start_model_node("slow", "integrator", domain, tmp_path / "slow.log",
                              arguments="{cost: 0.005}"),
             start_model_node("ticker", "integrator", domain, tmp_path / "ticker.log")]
    probe = Probe(domain)
    outputs = probe.capture(ModelOutput, "/slow/output")
    slow = RemoteModel("slow", timeout=TIMEOUT, domain_id=domain)
    ticker = RemoteModel("ticker", stepping=Stepping.CLOCK, timeout=TIMEOUT, domain_id=domain)
    try:
        conductor = Conductor(step=0.01)
        conductor.register(Integrator("main"), main=True)
        conductor.register(slow)
        conductor.register(ticker, parameters={"cost": 0.1})  # resolved and sent to its node
        conductor.initialise()
        assert slow.kind is ModelKind.SIMULATION and slow.represents() == {}
        assert wait_for(lambda: probe.node.count_publishers("/slow/output") > 0, TIMEOUT)
        report = conductor.run(duration=0.3)
        wait_for(lambda: len(outputs) >= 10, 60.0)
    finally:
        probe.close()
        codes = [stop(p, signal.SIGINT) for p in nodes]
    by_name = {m.name: m for m in report.models}
    assert report.ticks == 30
    assert by_name["slow"].steps == 30 and by_name["slow"].skips == 0
    assert slow.output()["integrated"] == pytest.approx(0.3, abs=1e-12)
    assert outputs and {m.model_id for m in outputs} == {slow.id}
    assert {m.model for m in outputs} == {"slow"}
    # 0.1 s of work per clock step against ticks a few ms apart: most ticks are missed
    assert by_name["ticker"].skips > 0
    assert by_name["ticker"].steps + by_name["ticker"].skips == 30
    assert ticker.output()["integrated"] == pytest.approx(0.01 * by_name["ticker"].steps)
    assert codes == [0, 0], [(tmp_path / f).read_text() for f in ("slow.log", "ticker.log")]


def test_a_remote_model_takes_follows_reports_events_and_errors(tmp_path):
    """Every part of the model interface over ROS: take and release, followed values sent with
    the step, values and output answered, an event reaching the conductor; a model call that fails
    is a ModelError naming the model and the reason, and the node keeps serving."""
    domain = next_domain()
    nodes = [start_model_node("hand", "carrier", domain, tmp_path / "hand.log"),
             start_model_node("monitor", "proximity_monitor", domain, tmp_path / "monitor.log",
                              arguments="{reference: gripper, distance: 0.1}")]
    hand = RemoteModel("hand", timeout=TIMEOUT, domain_id=domain)
    monitor = RemoteModel("monitor", timeout=TIMEOUT, domain_id=domain)
    events = []
    hand.id, monitor.id = 7, 8
    monitor.emit = lambda event, data: events.append((event, dict(data)))
    try:
        assert {"entities", "velocity"} <= set(hand.requires())
        with pytest.raises(ModelError, match=r"model 'hand': initialise: ValueError"):
            hand.initialise({"entities": ["ball"], "velocity": "fast"})
        hand.initialise({"entities": ["ball"], "velocity": [0.5, 0.0, 0.0]})
        assert hand.represents() == {"ball": frozenset({POSE, TWIST})}
        hand.start()
        start = np.array([1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0])
        hand.follow("ball", POSE, start)  # a follower takes the holder's value with its step
        hand.step(0.01)
        np.testing.assert_array_equal(hand.value("ball", POSE), start)
        assert hand.output()["carrying"] == []
        hand.take("ball", POSE, start)
        for _ in range(10):
            hand.step(0.01)
        held = hand.value("ball", POSE)
        np.testing.assert_allclose(held[:3], start[:3] + [0.05, 0.0, 0.0], atol=1e-12)
        np.testing.assert_allclose(hand.output()["poses"]["ball"], held, atol=0)
        hand.release("ball", POSE)
        hand.step(0.01)
        np.testing.assert_array_equal(hand.value("ball", POSE), held)  # no longer moved
        with pytest.raises(KeyError):
            hand.value("cup", POSE)

        assert monitor.kind is ModelKind.OBSERVER
        monitor.initialise({})
        monitor.start()
        monitor.read("hand", {"poses": {"ball": held, "gripper": held + [0.05, 0, 0, 0, 0, 0, 0]}})
        monitor.step(0.01)  # reads travel with the step; the event comes back with its answer
        assert events == [("near", {"object": "ball"})]
        assert monitor.output() == {"near": True, "object": "ball"}
        monitor.on_event("grasped", {"object": "ball"})
    finally:
        try:
            hand.stop()
            monitor.stop()
        finally:
            codes = [stop(node, signal.SIGINT) for node in nodes]
    assert codes == [0, 0], (tmp_path / "hand.log").read_text()
    assert "initialise: ValueError" in (tmp_path / "hand.log").read_text()


def test_model_node_with_an_unknown_model_type_exits_with_one_line(tmp_path):
    log = tmp_path / "bad.log"
    proc = start_model_node("bad", "no_such_model", next_domain(), log)
    assert proc.wait(30) == 2
    text = log.read_text()
    assert "<parameters>: model: unknown model type 'no_such_model'" in text, text
    assert "Traceback" not in text
