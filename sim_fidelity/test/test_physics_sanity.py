"""Physics sanity of loaded SDF against analytic results, with raw MuJoCo stepping.

Tolerances (and why):
* free fall before contact: |z - (z0 - g t^2/2)| < 1e-3 m over 1 s at a 0.1 ms step; at the
  default 1 ms step the semi-implicit integrator is exactly z0 - g dt^2 n(n+1)/2 (bias g t dt/2);
* pendulum, small angle: period within 1% of 2 pi sqrt(I_pivot / (m g d)) (physical pendulum);
* a 0.4 m box resting on the ground moves less than 1 mm (and 1 mrad) over 2 s;
* an undamped double pendulum over 5 s at 1 ms: with RK4 the energy is conserved to 1e-5 of its
  kinetic scale (the loaded model has no hidden dissipation); with the loader's implicitfast the
  error stays under 2.5% and is first order (halves with the step);
* with joint damping the energy only goes down.
"""
from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

from sim_fidelity.simulator.sdf import load_world, load_world_string
from sim_fidelity.world_generators import drop_test
from sim_fidelity.world_generators.errors import WorldGenerationError

REPO = Path(__file__).resolve().parents[1]
G = 9.8
GROUND = """<model name="ground"><static>true</static><link name="l"><collision name="c">
  <geometry><plane><normal>0 0 1</normal><size>50 50</size></plane></geometry>
  <surface><friction><ode><mu>100</mu><mu2>50</mu2></ode></friction></surface></collision></link></model>"""


def world(body: str, step: float = 0.001):
    return load_world_string(f"""<sdf version="1.9"><world name="w">
      <physics name="p" type="ode"><max_step_size>{step}</max_step_size></physics>
      <gravity>0 0 -{G}</gravity>{body}</world></sdf>""")


def run(w, seconds: float, every=None):
    m = w.spec.compile()
    d = mujoco.MjData(m)
    n = round(seconds / m.opt.timestep)
    for i in range(n):
        mujoco.mj_step(m, d)
        if every is not None:
            every(m, d, i + 1)
    return m, d


# --- free fall -----------------------------------------------------------------------------------
SPHERE = """<model name="ball"><pose>0 0 {z0} 0 0 0</pose><link name="l"><inertial><mass>0.5</mass>
  <inertia><ixx>0.002</ixx><iyy>0.002</iyy><izz>0.002</izz></inertia></inertial>
  <collision name="c"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision>
</link></model>"""


def test_free_fall_matches_analytic_before_contact():
    z0 = 10.0
    errs = []

    def check(m, d, i):
        if i % 500 == 0:
            t = i * m.opt.timestep
            errs.append(abs(d.qpos[2] - (z0 - 0.5 * G * t * t)))
            assert d.ncon == 0
    run(world(GROUND + SPHERE.format(z0=z0), step=0.0001), 1.0, check)
    assert len(errs) == 20 and max(errs) < 1e-3, max(errs)


def test_free_fall_default_step_is_semi_implicit_euler():
    z0, dt = 10.0, 0.001
    m, d = run(world(GROUND + SPHERE.format(z0=z0), step=dt), 1.0)
    n = 1000
    assert d.qpos[2] == pytest.approx(z0 - G * dt * dt * n * (n + 1) / 2, abs=1e-9)
    assert d.qpos[:2] == pytest.approx([0, 0], abs=1e-12)
    assert d.qvel[2] == pytest.approx(-G, rel=1e-9)


# --- pendulum period ------------------------------------------------------------------------------
PENDULUM = """<model name="pend"><link name="bob"><pose>0 0 3 0 0 {yaw}</pose>
  <inertial><pose>0 0 -{d} 0 0 0</pose><mass>{m}</mass>
    <inertia><ixx>{i}</ixx><iyy>{i}</iyy><izz>{iz}</izz></inertia></inertial>
  <collision name="c"><pose>0 0 -{d} 0 0 0</pose>
    <geometry><sphere><radius>0.05</radius></sphere></geometry></collision></link>
  <joint name="hinge" type="revolute"><parent>world</parent><child>bob</child>
    <axis><xyz expressed_in="__model__">{axis}</xyz></axis></joint></model>"""


@pytest.mark.parametrize("d_com, mass, i_com, axis, yaw", [
    (1.0, 1.0, 1e-4, "1 0 0", 0.0),  # point-ish mass on a 1 m arm
    (0.5, 1.0, 0.0858333, "0 1 0", 0.7),  # the pendulum rod (physical pendulum), yawed link
])
def test_small_angle_pendulum_period(d_com, mass, i_com, axis, yaw):
    w = world(PENDULUM.format(d=d_com, m=mass, i=i_com, iz=min(i_com, 0.005), axis=axis, yaw=yaw))
    m = w.spec.compile()
    dd = mujoco.MjData(m)
    dd.qpos[0] = 0.05
    crossings, prev = [], dd.qpos[0]
    for _ in range(8000):
        mujoco.mj_step(m, dd)
        q = dd.qpos[0]
        if prev > 0 >= q:  # downward zero crossing, interpolated
            crossings.append(dd.time - m.opt.timestep * q / (q - prev))
        prev = q
    period = np.mean(np.diff(crossings))
    expected = 2 * math.pi * math.sqrt((i_com + mass * d_com ** 2) / (mass * G * d_com))
    assert len(crossings) >= 3
    assert period == pytest.approx(expected, rel=0.01), (period, expected)


# --- resting contact ----------------------------------------------------------------------------
def test_box_rests_on_ground():
    box = """<model name="box"><pose>0.3 -0.2 0.2 0 0 0.4</pose>
      <link name="l"><inertial><mass>5</mass>
      <inertia><ixx>0.1333</ixx><iyy>0.1333</iyy><izz>0.1333</izz></inertia></inertial>
      <collision name="c"><geometry><box><size>0.4 0.4 0.4</size></box></geometry></collision>
      </link></model>"""
    w = world(GROUND + box)
    m = w.spec.compile()
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    p0, q0 = d.qpos[:3].copy(), d.qpos[3:7].copy()
    worst = [0.0, 0.0]
    for _ in range(2000):
        mujoco.mj_step(m, d)
        worst[0] = max(worst[0], np.linalg.norm(d.qpos[:3] - p0))
        worst[1] = max(worst[1], 2 * math.acos(min(1.0, abs(float(np.dot(d.qpos[3:7], q0))))))
    assert d.ncon >= 4
    assert worst[0] < 1e-3 and worst[1] < 1e-3, worst


# --- energy ---------------------------------------------------------------------------------------
RIG = """<model name="rig"><include><uri>model://double_pendulum_with_base</uri></include>
  <joint name="anchor" type="fixed"><parent>world</parent>
    <child>double_pendulum_with_base::base</child></joint></model>"""


def energies(w, integrator=None, step=None, seconds=5.0):
    w.spec.option.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    if integrator is not None:
        w.spec.option.integrator = integrator
    if step is not None:
        w.spec.option.timestep = step
    m = w.spec.compile()
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    n = round(seconds / m.opt.timestep)
    e, k = np.empty(n + 1), np.empty(n + 1)
    e[0], k[0] = d.energy.sum(), d.energy[1]
    for i in range(n):
        mujoco.mj_step(m, d)
        e[i + 1], k[i + 1] = d.energy.sum(), d.energy[1]
    assert d.ncon == 0
    return e, k


def test_double_pendulum_conserves_energy():
    e, k = energies(world(RIG), mujoco.mjtIntegrator.mjINT_RK4)
    scale = k.max()  # ~17.6 J: the pendulum's whole swing energy (the base's potential is constant)
    assert scale > 10
    assert np.abs(e - e[0]).max() < 1e-5 * scale

    e1, k1 = energies(world(RIG))  # the loader's own integrator (implicitfast), 1 ms
    e2, _ = energies(world(RIG), step=0.0005)
    err1, err2 = np.abs(e1 - e1[0]).max() / k1.max(), np.abs(e2 - e2[0]).max() / k1.max()
    assert err1 < 0.025, err1
    assert 0.35 < err2 / err1 < 0.65, (err1, err2)  # first order in the step: not a modelling error


def test_joint_damping_dissipates_energy():
    text = (REPO / "models" / "double_pendulum_with_base" / "model.sdf").read_text()
    damped = text.replace("<xyz>1 0 0</xyz>",
                          "<xyz>1 0 0</xyz><dynamics><damping>0.2</damping></dynamics>")
    body = damped.split("<sdf version=\"1.7\">", 1)[1].rsplit("</sdf>", 1)[0]
    w = load_world_string(f"""<sdf version="1.7"><world name="w"><model name="rig">{body}
      <joint name="anchor" type="fixed"><parent>world</parent>
        <child>double_pendulum_with_base::base</child></joint>
      </model></world></sdf>""")
    e, k = energies(w, mujoco.mjtIntegrator.mjINT_RK4, seconds=3.0)
    assert np.all(np.diff(e) <= 1e-9)
    assert e[0] - e[-1] > 0.2 * k.max()


# --- the shipped worlds ---------------------------------------------------------------------------
def test_revolute_joint_test_world():
    w = load_world(REPO / "worlds" / "revolute_joint_test.sdf")
    pendulums = [n for n, r in w.models.items() if r.links and n.startswith("double_pendulum_")]
    assert len(pendulums) == 8 and len(set(pendulums)) == 8
    revolute = [j for j in w.joints.values() if j.type == "revolute"]
    assert len(revolute) == 16 and all(len(j.mj_joints) == 1 for j in revolute)
    for n in pendulums:
        p = w.models[n].pose
        assert math.hypot(p[0], p[1]) == pytest.approx(2.1, abs=1e-6)
        # +y of each model points away from the centre
        yaw = math.atan2(2 * (p[6] * p[5] + p[3] * p[4]), 1 - 2 * (p[4] ** 2 + p[5] ** 2))
        y_axis = np.array([-math.sin(yaw), math.cos(yaw)])
        assert np.dot(y_axis, p[:2] / 2.1) == pytest.approx(1.0, abs=1e-6)
    assert w.step_size == 0.001
    m, d = run(w, 0.5)
    assert np.all(np.isfinite(d.qpos))
    bases = [d.xpos[m.body(f"{n}::base").id] for n in pendulums]
    assert all(abs(b[2]) < 1e-3 for b in bases)  # the heavy bases stay on the ground


def test_drop_test_generator_deterministic_and_non_overlapping():
    a, b = drop_test.generate(30, seed=7), drop_test.generate(30, seed=7)
    assert a == b and drop_test.generate(30, seed=8) != a
    assert (REPO / "worlds" / "drop_test.sdf").read_text() == drop_test.generate(100, 0)
    w = load_world(REPO / "worlds" / "drop_test.sdf")
    spheres = [n for n in w.models if n.startswith("sphere_")]
    assert len(spheres) == 100
    m = w.spec.compile()
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    pos = np.array([d.xpos[m.body(f"{n}::link").id] for n in spheres])
    rad = np.array([m.geom(f"{n}::link::collision").size[0] for n in spheres])
    gap = np.linalg.norm(pos[:, None] - pos[None], axis=-1) - (rad[:, None] + rad[None])
    np.fill_diagonal(gap, np.inf)
    assert gap.min() > 0 and np.all(pos[:, 2] - rad > 0) and d.ncon == 0
    masses = np.array([m.body(f"{n}::link").mass[0] for n in spheres])
    assert len(set(rad.round(6))) > 50 and len(set(masses.round(6))) > 50  # random, not constant
    with pytest.raises(WorldGenerationError, match="could not place"):
        drop_test.sample_spheres(50, 0, half_width=0.3, height=(0.5, 0.8), max_tries=2000)
