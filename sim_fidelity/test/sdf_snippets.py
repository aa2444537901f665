"""Small SDF scenes shared by the engine, server and manager tests."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from sim_fidelity.world_generators.sdf_text import (  # noqa: F401 (re-exported)
    ball_model,
    box_model,
    ground_plane,
    world,
)

GROUND = ground_plane("ground")


def world_keeping(source: Path, path: Path, prefix: str, keep: list[str]) -> Path:
    """``source`` written to ``path`` without the models named ``prefix...`` other than ``keep``."""
    tree = ET.parse(source)
    world_element = tree.getroot().find("world")
    for model in world_element.findall("model"):
        name = model.get("name")
        if name.startswith(prefix) and name not in keep:
            world_element.remove(model)
    tree.write(path)
    return path


def servo_pendulum(name: str = "arm", target: float = 0.5) -> str:
    """A 1 m pendulum on a fixed post with a joint-position-controller plugin holding ``target``."""
    return f"""
    <model name="{name}">
      <pose>0 3 2 0 0 0</pose>
      <link name="post"><inertial><mass>10</mass></inertial></link>
      <joint name="fix" type="fixed"><parent>world</parent><child>post</child></joint>
      <link name="rod">
        <pose>0 0 -0.5 0 0 0</pose>
        <inertial><mass>1</mass>
          <inertia><ixx>0.083</ixx><iyy>0.083</iyy><izz>0.001</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia>
        </inertial>
        <collision name="c">
          <geometry><cylinder><radius>0.02</radius><length>1</length></cylinder></geometry>
        </collision>
      </link>
      <joint name="hinge" type="revolute">
        <parent>post</parent><child>rod</child>
        <pose>0 0 0.5 0 0 0</pose>
        <axis><xyz>1 0 0</xyz><dynamics><damping>0.05</damping></dynamics></axis>
      </joint>
      <plugin filename="gz-sim-joint-position-controller-system"
              name="gz::sim::systems::JointPositionController">
        <joint_name>hinge</joint_name><p_gain>200</p_gain><d_gain>20</d_gain>
        <initial_position>{target}</initial_position>
      </plugin>
    </model>"""


def gripper_cell(pose: str = "-3 0 0 0 0 0") -> str:
    """A model ``cell`` (link ``base``) nesting a model ``gripper`` (links ``palm`` and
    ``finger`` on a prismatic joint ``slide``): nested names for the scoped-name tests."""
    return f"""
    <model name="cell">
      <pose>{pose}</pose>
      <link name="base"><inertial><mass>1</mass></inertial></link>
      <model name="gripper">
        <link name="palm"><inertial><mass>1</mass></inertial></link>
        <link name="finger"><pose>0 0 0.1 0 0 0</pose><inertial><mass>0.1</mass></inertial></link>
        <joint name="slide" type="prismatic"><parent>palm</parent><child>finger</child>
          <axis><xyz>1 0 0</xyz></axis></joint>
      </model>
    </model>"""
