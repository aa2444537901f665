"""fallback_interfaces/gazebo_msgs against ROS 2 Humble's gazebo_msgs release, field for field.

The reference (test/data/reference/gazebo_msgs-3.7.0-humble-fields.txt) lists every message and
service of the release with its fields, types, order and constants; the package built here must
hold exactly those types, and Python's generated classes must match each one. A few messages make
a round trip through rclpy's serialization (the compiled type support).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from interface_fields import REPO, check_against, parse_reference, roundtrip

REFERENCE = (Path(__file__).resolve().parent / "data" / "reference"
             / "gazebo_msgs-3.7.0-humble-fields.txt")
FOLDER = REPO / "fallback_interfaces" / "gazebo_msgs"
ENTRIES = sorted(parse_reference(REFERENCE).items())


def test_reference_holds_the_whole_release():
    kinds = [kind for kind, _ in dict(ENTRIES)]
    assert kinds.count("msg") == 13 and kinds.count("srv") == 30
    assert {("srv", "SetLinkProperties"), ("msg", "ModelStates"), ("msg", "ODEPhysics"),
            ("srv", "GetPhysicsProperties")} <= set(dict(ENTRIES))


def test_fallback_files_are_exactly_the_reference_set():
    wanted = {f"{kind}/{name}.{kind}" for kind, name in dict(ENTRIES)}
    present = {str(p.relative_to(FOLDER)) for p in FOLDER.glob("*/*")
               if p.suffix in (".msg", ".srv")}
    assert present == wanted


@pytest.mark.parametrize("kind,name,parts",
                         [pytest.param(k, n, p, id=f"{k}/{n}") for (k, n), p in ENTRIES])
def test_gazebo_msgs_match_humble(kind, name, parts):
    check_against("gazebo_msgs", kind, name, parts)


def test_states_and_link_properties_survive_serialization():
    from gazebo_msgs.msg import ModelStates
    from gazebo_msgs.srv import SetLinkProperties
    from geometry_msgs.msg import Pose, Twist

    from sim_fidelity.simulator.ros.convert import pose_msg

    states = ModelStates(name=["a", "b::c"], pose=[pose_msg(np.array([1, 2, 3, 0, 0, 0, 1.0])),
                                                   Pose()], twist=[Twist(), Twist()])
    assert roundtrip(states).pose[0].position.y == 2.0
    req = SetLinkProperties.Request(link_name="box::link", gravity_mode=False, mass=2.5,
                                    ixx=0.1, iyy=0.2, izz=0.3)
    back = roundtrip(req)
    assert (back.gravity_mode, back.mass, back.izz) == (False, 2.5, 0.3)
