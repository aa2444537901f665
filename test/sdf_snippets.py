"""Small SDF scenes shared by the engine, server and manager tests."""
from __future__ import annotations


def box_model(name: str, x: float, y: float, z: float, size: float = 0.4, mass: float = 1.0,
              static: bool = False) -> str:
    i = mass * size * size / 6.0
    return f"""
    <model name="{name}">
      <static>{str(static).lower()}</static>
      <pose>{x} {y} {z} 0 0 0</pose>
      <link name="body">
        <inertial><mass>{mass}</mass>
          <inertia><ixx>{i}</ixx><iyy>{i}</iyy><izz>{i}</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia>
        </inertial>
        <collision name="collision"><geometry><box><size>{size} {size} {size}</size></box></geometry></collision>
        <visual name="visual"><geometry><box><size>{size} {size} {size}</size></box></geometry></visual>
      </link>
    </model>"""


GROUND = """
    <model name="ground">
      <static>true</static>
      <link name="link">
        <collision name="collision"><geometry><plane><normal>0 0 1</normal><size>50 50</size></plane></geometry></collision>
      </link>
    </model>"""


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
        <collision name="c"><geometry><cylinder><radius>0.02</radius><length>1</length></cylinder></geometry></collision>
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


def world(*models: str, name: str = "test", step: float = 0.001) -> str:
    return f"""<?xml version="1.0"?>
<sdf version="1.9">
  <world name="{name}">
    <physics name="1ms" type="ode"><max_step_size>{step}</max_step_size><real_time_factor>1</real_time_factor></physics>
    <gravity>0 0 -9.81</gravity>
    {''.join(models)}
  </world>
</sdf>"""
