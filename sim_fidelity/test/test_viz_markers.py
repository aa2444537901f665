"""Markers of the kernel manager (kernel spheres, the fired one) and the conductor (holders)."""
from __future__ import annotations

import numpy as np
import pytest
from reality_gap_cases import PUSH, SHIFT, kernel, spec_2d

from sim_fidelity.model_conductor.ros.holder_markers import PALETTE, holder_marker_array
from sim_fidelity.reality_gap.kernel_markers import (
    FIRED_RGBA,
    IDLE_RGBA,
    MIN_SIZE,
    kernel_marker_array,
    kernel_spheres,
)
from sim_fidelity.reality_gap.kernel_set import KernelSet

pytest.importorskip("visualization_msgs.msg", reason="ros-visualization-msgs not installed")
from builtin_interfaces.msg import Time  # noqa: E402
from visualization_msgs.msg import Marker  # noqa: E402


def test_kernel_spheres_sit_at_the_mapped_position_and_the_fired_one_stands_out():
    spec = spec_2d()  # state (x, y): x is robot pose.x, y its pose.yaw (no position)
    ks = KernelSet([kernel([[1.0, 0.3]], SHIFT), kernel([[5.0, -2.0]], PUSH, sigma=0.2)], spec)
    pos, size = kernel_spheres(ks)
    np.testing.assert_allclose(pos, [[1.0, 0, 0], [5.0, 0, 0]])  # yaw is no position
    reach = np.array([0.1, 0.2]) * np.sqrt(-2 * np.log(ks.threshold)) / ks.weights[0]
    np.testing.assert_allclose(size[:, 0], 2 * reach)
    assert (size[:, 1:] == MIN_SIZE).all()
    array = kernel_marker_array((pos, size), 1, Time(sec=3))
    assert [m.id for m in array.markers] == [0, 1]
    assert {m.type for m in array.markers} == {Marker.SPHERE}
    colours = [(m.color.r, m.color.g, m.color.b, m.color.a) for m in array.markers]
    assert colours == [pytest.approx(IDLE_RGBA), pytest.approx(FIRED_RGBA)]


def test_a_spec_without_positions_has_no_kernel_markers():
    import dataclasses
    spec = spec_2d()
    spec = dataclasses.replace(spec, apply=tuple(t for t in spec.apply
                                                 if t.component != "pose.x"))
    assert kernel_spheres(KernelSet([kernel([[0.0, 0.0]], SHIFT)], spec)) is None


def test_holders_are_texts_in_the_objects_frames_in_their_models_colours():
    array = holder_marker_array({"cup": "arm", "ball": "physics"}, ["physics", "arm"],
                                Time(sec=1))
    assert array.markers[0].action == Marker.DELETEALL
    texts = {m.header.frame_id: m for m in array.markers[1:]}
    assert {f: m.text for f, m in texts.items()} == {"cup": "arm", "ball": "physics"}
    cup = texts["cup"]
    assert cup.type == Marker.TEXT_VIEW_FACING and cup.pose.position.z > 0
    assert (cup.color.r, cup.color.g, cup.color.b) == pytest.approx(PALETTE[1])


def test_rviz_and_foxglove_configs_show_the_marker_topics():
    import json
    from pathlib import Path

    import yaml
    config = Path(__file__).resolve().parents[1] / "config"
    rviz = yaml.safe_load((config / "rviz" / "sim_fidelity.rviz").read_text())
    manager = rviz["Visualization Manager"]
    assert manager["Global Options"]["Fixed Frame"] == "world"
    topics = {d["Topic"]["Value"] for d in manager["Displays"] if "Topic" in d}
    wanted = {"/sim_server/markers", "/kernel_manager/markers", "/model_conductor/markers"}
    assert topics == wanted
    fox = json.loads((config / "foxglove" / "sim_fidelity.json").read_text())
    three_d = fox["configById"][fox["layout"]["first"]]
    assert set(three_d["topics"]) == wanted and three_d["followTf"] == "world"


def test_changes_send_what_moved_and_let_slow_drift_add_up():
    from sim_fidelity.simulator.ros.visualization import MOVED, Changes
    changes = Changes(full_period=1e9)
    keys, values = np.arange(3), np.zeros((3, 2))
    assert list(changes.rows(keys, values)) == [0, 1, 2]  # the first time: everything
    values[1, 0] = 0.6 * MOVED
    assert list(changes.rows(keys, values)) == []  # below the threshold
    values[1, 0] = 1.2 * MOVED  # drifted past it since last sent
    values[2, 1] = 5 * MOVED
    assert list(changes.rows(keys, values)) == [1, 2]
    assert list(changes.rows(keys, values)) == []
    assert list(changes.rows(keys, values, full=True)) == [0, 1, 2]
    assert list(changes.rows(np.arange(2), values[:2])) == [0, 1]  # other keys: all again
