"""Recorded-bag playback (JointState + action annotations) and the log bag, on real files."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest
from sdf_snippets import GROUND, ball_model, servo_pendulum, world

from sim_fidelity.model_conductor.config import build_conductor
from sim_fidelity.model_conductor.data_sources import (
    RecordedSource,
    action,
    joint_state,
    write_recording,
)
from sim_fidelity.model_conductor.errors import ConductorError
from sim_fidelity.model_conductor.log import BagLog, read_log

BALL = ball_model("ball", 0, 0, 1)
ENSEMBLE = """
models:
  world: {type: simulator, main: true, parameters: {world: arm.sdf}}
  hand: {type: carrier, parameters: {entities: [ball], velocity: [0, 0, 0.2]}}
  slow: {type: integrator, parameters: {cost: 0.005}}
triggers:
  pick:
    on: {action: move_hand}
    let: {obj: "args.object"}
    do: [{transfer: {entity: $obj, to: hand}}]
  put:
    on: {action: release}
    do: [{transfer: {entity: ball, to: world}}]
"""
DT = 0.01


def recording(tmp_path, storage="mcap"):
    """0.3 s of the hinge ramping to 0.6 rad at 100 Hz; a grasp at 0.1 s, a release at 0.2 s."""
    times = np.round(np.arange(0, 0.3 + 1e-9, DT), 6)
    messages = [joint_state(t, ["hinge"], [2.0 * t]) for t in times]
    messages += [action(0.1, "move_hand", {"object": "ball"}), action(0.2, "release")]
    return write_recording(tmp_path / f"rec_{storage}", messages, storage=storage)


def ensemble(tmp_path):
    (tmp_path / "arm.sdf").write_text(world("arm", GROUND, servo_pendulum("arm", 0.0), BALL))
    path = tmp_path / "ensemble.yaml"
    path.write_text(textwrap.dedent(ENSEMBLE))
    return build_conductor(path)[0]


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_recorded_bag_plays_back_in_time_order(tmp_path, storage):
    source = RecordedSource(recording(tmp_path, storage))
    kinds = [(m.kind, round(m.time, 6)) for m in source.messages]
    assert len(kinds) == 33 and kinds[0] == ("joint_state", 0.0)
    assert [m.data["operation"] for m in source.messages if m.kind == "action"] == [
        "move_hand", "release"]
    assert [m.data["args"] for m in source.messages if m.kind == "action"][0] == {
        "object": "ball"}
    times = [m.time for m in source.messages]
    assert times == sorted(times) and source.end_time == pytest.approx(0.3)


def test_playback_paces_to_a_slow_service_model_and_drives_the_robot(tmp_path):
    conductor = ensemble(tmp_path)
    log_path = tmp_path / "log"
    with BagLog(log_path) as log:
        conductor.add_listener(log)  # after initialisation: the allocation is replayed
        report = conductor.run(source=RecordedSource(recording(tmp_path)))
    slow = conductor.model("slow")
    # every tick waited for the slow model, which saw each sample at its own time: none skipped
    assert report.messages == 33 and slow.integrated == pytest.approx(report.ticks * DT)
    np.testing.assert_allclose(slow.stamps, np.arange(len(slow.stamps)) * DT, atol=1e-9)
    assert {m.name: m.skips for m in report.models}["slow"] == 0
    assert report.time == pytest.approx(0.3 + DT)  # ends with the recording
    # the recorded joint positions drove the world's position controller
    engine = conductor.model("world").sim
    plugin = next(p for p, c in engine.controllers.items() if c.joint == "arm::hinge")
    assert engine.data.ctrl[engine.index.actuator_id[plugin]] == pytest.approx(0.6)
    assert engine.joint_positions(["arm::hinge"])[0] > 0.3  # the servo follows (and lags)

    contents = read_log(log_path)
    assert contents.transfers == conductor.responsibilities.log  # every one, initial included
    moves = [(t.entity, t.attribute, t.to_model, t.cause) for t in contents.transfers
             if t.cause != "config"]
    assert moves == [("ball", "pose", "hand", "pick"), ("ball", "twist", "hand", "pick"),
                     ("ball", "pose", "world", "put"), ("ball", "twist", "world", "put")]
    assert {m: len(v) for m, v in contents.outputs.items()} == {
        "world": report.ticks, "hand": report.ticks, "slow": report.ticks}
    # while the hand held the ball, the world's output lacks it and the hand's has it
    t, poses, values = contents.outputs["hand"][12]
    assert "ball" in poses and values["carrying"] == ["ball"]
    assert "ball" not in contents.outputs["world"][12][1]


def test_missing_or_foreign_recordings_are_clear_errors(tmp_path):
    with pytest.raises(ConductorError, match="does not exist"):
        RecordedSource(tmp_path / "nothing")
    with BagLog(tmp_path / "log") as log:  # a bag without JointState or annotations
        log.on_event(0.0, "m", "e", {})
    with pytest.raises(ConductorError, match="has no JointState or ActionAnnotation topic"):
        RecordedSource(tmp_path / "log")
    with pytest.raises(ConductorError, match="exists already"):
        BagLog(tmp_path / "log")
