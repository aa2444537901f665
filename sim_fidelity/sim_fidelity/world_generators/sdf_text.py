"""SDF text building blocks shared by the world generators and the tests."""
from __future__ import annotations


def box_model(name: str, x: float, y: float, z: float, edge: float | tuple = 0.4,
              mass: float = 1.0, static: bool = False, yaw: float = 0.0) -> str:
    """A one-link box model (solid cuboid inertia) centred at ``(x, y, z)``."""
    sx, sy, sz = (edge, edge, edge) if isinstance(edge, (int, float)) else edge
    ixx, iyy, izz = (mass * (b * b + c * c) / 12.0 for b, c in ((sy, sz), (sx, sz), (sx, sy)))
    size = f"{sx:.6g} {sy:.6g} {sz:.6g}"
    return f"""
    <model name="{name}">
      <static>{str(static).lower()}</static>
      <pose>{x:.6g} {y:.6g} {z:.6g} 0 0 {yaw:.6g}</pose>
      <link name="link">
        <inertial><mass>{mass:.6g}</mass>
          <inertia><ixx>{ixx:.6g}</ixx><iyy>{iyy:.6g}</iyy><izz>{izz:.6g}</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia>
        </inertial>
        <collision name="collision"><geometry><box><size>{size}</size></box></geometry></collision>
        <visual name="visual"><geometry><box><size>{size}</size></box></geometry></visual>
      </link>
    </model>"""


def ball_model(name: str, x: float, y: float, z: float, radius: float = 0.05,
               mass: float = 0.2) -> str:
    """A one-link solid sphere model centred at ``(x, y, z)``."""
    i = 0.4 * mass * radius * radius
    return f"""
    <model name="{name}">
      <pose>{x:.6g} {y:.6g} {z:.6g} 0 0 0</pose>
      <link name="link">
        <inertial><mass>{mass:.6g}</mass>
          <inertia><ixx>{i:.6g}</ixx><iyy>{i:.6g}</iyy><izz>{i:.6g}</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia>
        </inertial>
        <collision name="collision"><geometry><sphere><radius>{radius:.6g}</radius></sphere>\
</geometry></collision>
      </link>
    </model>"""


def ground_plane(name: str = "ground_plane") -> str:
    return f"""
    <model name="{name}">
      <static>true</static>
      <link name="link">
        <collision name="collision"><geometry><plane><normal>0 0 1</normal>\
<size>100 100</size></plane></geometry></collision>
      </link>
    </model>"""


def physics_1ms_block(step_size: float = 0.001, island_threads: int | None = None) -> str:
    """The ``<physics>`` element (ODE, real-time factor 1, paper 002's "1ms" profile) and the
    ``<gravity>`` after it, indented for a ``<world>``; ``island_threads`` adds the quick solver
    with that many island threads."""
    rate = round(1.0 / step_size)
    solver = ("" if island_threads is None else
              "\n      <ode><solver><type>quick</type><iters>50</iters><sor>1.3</sor>"
              f"<island_threads>{island_threads}</island_threads></solver></ode>")
    return f"""    <physics name="1ms" type="ode">
      <max_step_size>{step_size}</max_step_size>
      <real_time_factor>1</real_time_factor>
      <real_time_update_rate>{rate}</real_time_update_rate>{solver}
    </physics>
    <gravity>0 0 -9.8</gravity>
"""


def world(name: str, *models: str, step: float = 0.001, comment: str = "") -> str:
    """A whole ``<sdf><world>`` document with the given models, ODE-style physics block."""
    note = f"<!-- {comment} -->\n" if comment else ""
    return f"""<?xml version="1.0"?>
{note}<sdf version="1.9">
  <world name="{name}">
    <physics name="default" type="ode"><max_step_size>{step:g}</max_step_size>\
<real_time_factor>1</real_time_factor></physics>
    <gravity>0 0 -9.81</gravity>{''.join(models)}
  </world>
</sdf>
"""
