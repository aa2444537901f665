"""fallback_interfaces/tf2_msgs against the reference field list, field for field.

The reference (test/data/reference/tf2_msgs-fields.txt) lists the two messages of tf2_msgs; the
fallback must hold exactly those files, and whichever tf2_msgs Python imports (ours, or a ROS 2
install's) must match them. A TFMessage makes a round trip through rclpy's serialization.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from interface_fields import REPO, check_against, parse_reference, roundtrip

REFERENCE = Path(__file__).resolve().parent / "data" / "reference" / "tf2_msgs-fields.txt"
FOLDER = REPO / "fallback_interfaces" / "tf2_msgs"
ENTRIES = sorted(parse_reference(REFERENCE).items())


def test_fallback_files_are_exactly_the_reference_set():
    assert {f"{kind}/{name}.{kind}" for kind, name in dict(ENTRIES)} == {
        str(p.relative_to(FOLDER)) for p in FOLDER.glob("*/*") if p.suffix == ".msg"}


@pytest.mark.parametrize("kind,name,parts",
                         [pytest.param(k, n, p, id=f"{k}/{n}") for (k, n), p in ENTRIES])
def test_tf2_msgs_match_the_reference(kind, name, parts):
    check_against("tf2_msgs", kind, name, parts)


def test_a_tf_message_survives_serialization():
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    t = TransformStamped(child_frame_id="box::link")
    t.header.frame_id, t.transform.translation.z, t.transform.rotation.w = "world", 0.25, 1.0
    back = roundtrip(TFMessage(transforms=[t, TransformStamped(child_frame_id="ball")]))
    assert [x.child_frame_id for x in back.transforms] == ["box::link", "ball"]
