"""SDF loader: each supported element lands in MuJoCo as SDF says, and each failure names
file, line and element. Models compile with raw MuJoCo; no engine involved."""
from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

from sim_fidelity.simulator.errors import SdfError
from sim_fidelity.simulator.poses import compose, quat_rotate, rpy_to_quat, wxyz_to_xyzw
from sim_fidelity.simulator.sdf import (
    FREE_JOINT_SUFFIX,
    VISUAL_GROUP,
    add_models,
    load_world,
    load_world_string,
)

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "test" / "data" / "sdf"
MODELS = DATA / "models"


def world(body: str, version: str = "1.9", **kw):
    text = (f'<?xml version="1.0"?>\n<sdf version="{version}">\n<world name="w">\n{body}\n'
            '</world>\n</sdf>\n')
    return load_world_string(text, base_dir=DATA, **kw)


def compiled(w):
    m = w.spec.compile()
    return m, mujoco.MjData(m)


def body_world(m, d, name):
    mujoco.mj_kinematics(m, d)
    b = m.body(name).id
    return np.concatenate([d.xpos[b], wxyz_to_xyzw(d.xquat[b])])


def same_pose(a, b, tol=1e-6):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.allclose(a[:3], b[:3], atol=tol) and abs(abs(np.dot(a[3:], b[3:])) - 1) < tol


LINK = ('<link name="{name}"><pose>{pose}</pose><collision name="c">'
        '<geometry><sphere><radius>0.1</radius></sphere></geometry></collision></link>')


# --- geometry ------------------------------------------------------------------------------------
def test_geometry_types_and_sizes():
    w = world("""
<model name="g"><static>true</static><link name="l">
  <collision name="box"><geometry><box><size>0.2 0.4 0.6</size></box></geometry></collision>
  <collision name="sphere"><geometry><sphere><radius>0.3</radius></sphere></geometry></collision>
  <collision name="cyl"><geometry><cylinder><radius>0.1</radius>
    <length>0.8</length></cylinder></geometry></collision>
  <collision name="cap"><geometry><capsule><radius>0.05</radius>
    <length>0.5</length></capsule></geometry></collision>
  <collision name="ell"><geometry><ellipsoid><radii>0.1 0.2 0.3</radii></ellipsoid></geometry>
    </collision>
  <collision name="stl"><geometry><mesh><uri>meshes/tetra.stl</uri>
    <scale>2 2 2</scale></mesh></geometry></collision>
  <collision name="ascii"><geometry><mesh><uri>meshes/tetra_ascii.stl</uri>
    <scale>3 3 3</scale></mesh></geometry></collision>
  <collision name="obj"><geometry><mesh><uri>model://test_box/meshes/cube.obj</uri>
    <scale>0.5 1 2</scale></mesh></geometry></collision>
  <collision name="plane"><geometry><plane><normal>0 0 1</normal>
    <size>10 10</size></plane></geometry></collision>
  <visual name="v"><geometry><box><size>1 1 1</size></box></geometry></visual>
  <visual name="dae"><geometry><mesh><uri>meshes/missing.dae</uri></mesh></geometry></visual>
</link></model>""", resource_paths=[MODELS])
    m, d = compiled(w)
    G = mujoco.mjtGeom

    def g(n):
        return m.geom(f"g::l::{n}")
    assert g("box").type == G.mjGEOM_BOX and np.allclose(g("box").size, [0.1, 0.2, 0.3])
    assert g("sphere").type == G.mjGEOM_SPHERE and math.isclose(g("sphere").size[0], 0.3)
    assert g("cyl").type == G.mjGEOM_CYLINDER and np.allclose(g("cyl").size[:2], [0.1, 0.4])
    assert g("cap").type == G.mjGEOM_CAPSULE and np.allclose(g("cap").size[:2], [0.05, 0.25])
    assert g("ell").type == G.mjGEOM_ELLIPSOID and np.allclose(g("ell").size, [0.1, 0.2, 0.3])
    assert g("plane").type == G.mjGEOM_PLANE
    mujoco.mj_kinematics(m, d)
    for name, lo, hi in (("stl", [0, 0, 0], [2, 2, 2]), ("ascii", [0, 0, 0], [3, 3, 3]),
                         ("obj", [-0.25, -0.5, -1], [0.25, 0.5, 1])):
        geom = g(name)
        assert geom.type == G.mjGEOM_MESH
        mid = m.geom_dataid[geom.id]
        start, n = m.mesh_vertadr[mid], m.mesh_vertnum[mid]
        # MuJoCo moves a mesh into its inertial frame: compare where the vertices are in the world
        verts = (m.mesh_vert[start:start + n] @ d.geom_xmat[geom.id].reshape(3, 3).T
                 + d.geom_xpos[geom.id])
        assert np.allclose(verts.min(0), lo, atol=1e-5) and np.allclose(verts.max(0), hi, atol=1e-5)
    v = g("v::visual")
    assert v.contype == 0 and v.conaffinity == 0 and v.group == VISUAL_GROUP
    with pytest.raises(KeyError):  # an unsupported visual mesh is dropped, not fatal
        m.geom("g::l::dae::visual")
    assert w.links["g::l"].collisions == [
        f"g::l::{n}"
        for n in ("box", "sphere", "cyl", "cap", "ell", "stl", "ascii", "obj", "plane")]


def test_plane_normal_and_mesh_uri_made_absolute():
    w = world("""<model name="p"><static>true</static><link name="l">
      <collision name="c"><geometry><plane><normal>1 0 0</normal></plane></geometry></collision>
      <collision name="m"><geometry><mesh><uri>meshes/tetra.stl</uri></mesh></geometry></collision>
    </link></model>""")
    m, d = compiled(w)
    mujoco.mj_kinematics(m, d)
    z_axis = d.geom_xmat[m.geom("p::l::c").id].reshape(3, 3)[:, 2]
    assert np.allclose(z_axis, [1, 0, 0])
    assert str(DATA / "meshes" / "tetra.stl") in w.models["p"].sdf


def test_friction_mu():
    w = world("""<model name="f"><link name="l"><collision name="c">
      <geometry><box><size>1 1 1</size></box></geometry>
      <surface><friction><ode><mu>0.37</mu><mu2>0.2</mu2></ode></friction></surface>
    </collision><collision name="d"><geometry><sphere>
      <radius>1</radius></sphere></geometry></collision>
    </link></model>""")
    m, _ = compiled(w)
    assert math.isclose(m.geom("f::l::c").friction[0], 0.37)
    assert math.isclose(m.geom("f::l::d").friction[0], 1.0)  # SDF default mu


# --- inertial ------------------------------------------------------------------------------------
def test_inertial_full_tensor_and_pose():
    w = world("""<model name="i"><link name="l"><inertial>
      <pose>0.1 0.2 0.3 0.4 -0.2 0.7</pose><mass>2.5</mass>
      <inertia><ixx>0.5</ixx><ixy>0.05</ixy><ixz>-0.02</ixz><iyy>0.4</iyy><iyz>0.03</iyz>
        <izz>0.3</izz></inertia>
    </inertial></link></model>""")
    m, _ = compiled(w)
    b = m.body("i::l")
    assert math.isclose(b.mass[0], 2.5)
    assert np.allclose(b.ipos, [0.1, 0.2, 0.3])
    tensor = np.array([[0.5, 0.05, -0.02], [0.05, 0.4, 0.03], [-0.02, 0.03, 0.3]])
    q = rpy_to_quat(0.4, -0.2, 0.7)
    r = np.stack([quat_rotate(q, e) for e in np.eye(3)], axis=1)
    expected = r @ tensor @ r.T  # in the link frame
    rq = wxyz_to_xyzw(b.iquat)
    rb = np.stack([quat_rotate(rq, e) for e in np.eye(3)], axis=1)
    got = rb @ np.diag(b.inertia) @ rb.T
    assert np.allclose(got, expected, atol=1e-9)


def test_inertial_defaults_mass_one_identity():
    w = world('<model name="i"><link name="l"/></model>')
    m, _ = compiled(w)
    assert math.isclose(m.body("i::l").mass[0], 1.0)
    assert np.allclose(m.body("i::l").inertia, [1, 1, 1])


# --- static, dynamic, gravity ---------------------------------------------------------------------
def test_static_and_dynamic_models():
    w = world(f"""
<model name="s"><static>true</static>
  <pose>1 0 0 0 0 0</pose>{LINK.format(name='a', pose='0 0 1 0 0 0')}
  {LINK.format(name='b', pose='0 0 2 0 0 0')}
  <joint name="j" type="revolute"><parent>a</parent><child>b</child><axis>
    <xyz>1 0 0</xyz></axis></joint></model>
<model name="d">{LINK.format(name='a', pose='0 0 1 0 0 0')}</model>""")
    m, d = compiled(w)
    assert not w.links["s::a"].free and not w.links["s::b"].free
    assert w.models["s"].static and not w.models["d"].static
    assert w.joints["s::j"].mj_joints == []
    assert m.body("s::a").jntnum[0] == 0 and m.body("s::b").jntnum[0] == 0
    assert w.links["d::a"].free
    j = m.joint("d::a" + FREE_JOINT_SUFFIX)
    assert j.type == mujoco.mjtJoint.mjJNT_FREE
    for _ in range(100):
        mujoco.mj_step(m, d)
    assert np.allclose(body_world(m, d, "s::b")[:3], [1, 0, 2])  # static stays
    assert body_world(m, d, "d::a")[2] < 1 - 0.04  # dynamic falls


def test_link_gravity_false_is_gravity_compensated():
    w = world("""<model name="g"><link name="l"><gravity>false</gravity></link></model>
                 <model name="h"><link name="l"/></model>""")
    m, d = compiled(w)
    assert m.body_gravcomp[m.body("g::l").id] == 1 and m.body_gravcomp[m.body("h::l").id] == 0
    for _ in range(200):
        mujoco.mj_step(m, d)
    assert abs(body_world(m, d, "g::l")[2]) < 1e-9
    assert body_world(m, d, "h::l")[2] < -0.1


# --- joints --------------------------------------------------------------------------------------
JOINTS = f"""<model name="r"><joint name="root" type="fixed"><parent>world</parent>
  <child>base</child></joint>
{LINK.format(name='base', pose='0 0 1 0 0 0')}
{LINK.format(name='rev', pose='1 0 1 0 0 0')}{LINK.format(name='cont', pose='2 0 1 0 0 0')}
{LINK.format(name='pri', pose='3 0 1 0 0 0')}{LINK.format(name='ball', pose='4 0 1 0 0 0')}
{LINK.format(name='fix', pose='5 0 1 0 0 0')}{LINK.format(name='uni', pose='6 0 1 0 0 0')}
<joint name="j_rev" type="revolute"><parent>base</parent><child>rev</child>
  <pose>0 0 0.5 0 0 0</pose>
  <axis><xyz>0 1 0</xyz><limit><lower>-0.5</lower><upper>1.5</upper><effort>7</effort>
    <velocity>3</velocity></limit>
  <dynamics><damping>0.3</damping><friction>0.2</friction><spring_reference>0.4</spring_reference>
    <spring_stiffness>12</spring_stiffness></dynamics></axis></joint>
<joint name="j_cont" type="continuous"><parent>base</parent><child>cont</child>
  <axis><xyz>0 0 1</xyz><limit><lower>-0.5</lower><upper>0.5</upper></limit></axis></joint>
<joint name="j_pri" type="prismatic"><parent>base</parent><child>pri</child>
  <axis><xyz>1 0 0</xyz><limit><lower>-0.1</lower><upper>0.2</upper></limit></axis></joint>
<joint name="j_ball" type="ball"><parent>base</parent><child>ball</child>
  <pose>0 0 0.1 0 0 0</pose></joint>
<joint name="j_fix" type="fixed"><parent>base</parent><child>fix</child></joint>
<joint name="j_uni" type="universal"><parent>base</parent><child>uni</child>
  <axis><xyz>1 0 0</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis>
  <axis2><xyz>0 1 0</xyz><dynamics><damping>0.9</damping></dynamics></axis2></joint>
<joint name="j_free_default" type="revolute"><parent>base</parent><child>extra</child><axis>
  <xyz>1 0 0</xyz></axis></joint>
{LINK.format(name='extra', pose='7 0 1 0 0 0')}
</model>"""


def test_joint_types_axes_limits_dynamics():
    w = world(JOINTS)
    m, d = compiled(w)
    J = mujoco.mjtJoint
    rev = m.joint("r::j_rev")
    assert rev.type == J.mjJNT_HINGE and np.allclose(rev.axis, [0, 1, 0])
    assert rev.limited == 1 and np.allclose(rev.range, [-0.5, 1.5])
    assert np.allclose(rev.pos, [0, 0, 0.5])
    assert math.isclose(m.dof_damping[rev.dofadr[0]], 0.3)
    assert math.isclose(m.dof_frictionloss[rev.dofadr[0]], 0.2)
    stiffness = (m.jnt_stiffness[rev.id, 0] if m.jnt_stiffness.ndim > 1
                 else m.jnt_stiffness[rev.id])
    assert math.isclose(stiffness, 12)
    assert math.isclose(m.qpos_spring[rev.qposadr[0]], 0.4)
    assert m.jnt_actfrclimited[rev.id] and np.allclose(m.jnt_actfrcrange[rev.id], [-7, 7])
    rec = w.joints["r::j_rev"]
    assert (rec.type, rec.parent, rec.child, rec.effort, rec.velocity) == \
        ("revolute", "r::base", "r::rev", 7, 3)
    cont = m.joint("r::j_cont")
    assert cont.type == J.mjJNT_HINGE and cont.limited == 0  # continuous ignores limits
    pri = m.joint("r::j_pri")
    assert pri.type == J.mjJNT_SLIDE and np.allclose(pri.range, [-0.1, 0.2]) and pri.limited == 1
    ball = m.joint("r::j_ball")
    assert ball.type == J.mjJNT_BALL and np.allclose(ball.pos, [0, 0, 0.1])
    assert w.joints["r::j_fix"].mj_joints == [] and m.body("r::fix").jntnum[0] == 0
    assert m.body("r::fix").parentid[0] == m.body("r::base").id  # nested: moves with base
    assert w.joints["r::j_uni"].mj_joints == ["r::j_uni::axis", "r::j_uni::axis2"]
    a1, a2 = m.joint("r::j_uni::axis"), m.joint("r::j_uni::axis2")
    assert np.allclose(a1.axis, [1, 0, 0]) and np.allclose(a2.axis, [0, 1, 0])
    assert a1.limited == 1 and a2.limited == 0
    assert math.isclose(m.dof_damping[a2.dofadr[0]], 0.9)
    assert m.joint("r::j_free_default").limited == 0  # SDF default +-1e16: no limit
    assert w.joints["r::root"].parent == "world" and not w.links["r::base"].free
    assert m.body("r::base").parentid[0] == 0 and m.body("r::base").jntnum[0] == 0
    assert m.body("r::rev").parentid[0] == m.body("r::base").id
    assert set(w.models["r"].joints) == {
        f"r::{n}"
        for n in ("root", "j_rev", "j_cont", "j_pri", "j_ball", "j_fix", "j_uni", "j_free_default")}


def test_revolute_to_world_in_dynamic_model_has_no_free_joint():
    w = world(f"""<model name="p">{LINK.format(name='l', pose='0 0 2 0 0 0')}
      <joint name="j" type="revolute"><parent>world</parent><child>l</child><axis>
        <xyz>0 0 1</xyz></axis></joint></model>""")
    m, _ = compiled(w)
    assert not w.links["p::l"].free and m.njnt == 1
    assert m.joint("p::j").type == mujoco.mjtJoint.mjJNT_HINGE


def test_axis_expressed_in_and_joint_pose_in_child_frame():
    # child link yawed 90 deg: a joint-frame axis x is world y; expressed_in __model__ stays world x
    w = world(f"""<model name="a"><pose>0 0 0 0 0 0</pose>
      {LINK.format(name='base', pose='0 0 0 0 0 0')}
      {LINK.format(name='c', pose='1 0 0 0 0 1.5707963267948966')}
      <joint name="fix" type="fixed"><parent>world</parent><child>base</child></joint>
      <joint name="j1" type="revolute"><parent>base</parent><child>c</child>
        <pose>0.5 0 0 0 0 0</pose>
        <axis><xyz>1 0 0</xyz></axis></joint>
    </model>
    <model name="b">
      {LINK.format(name='base', pose='0 0 0 0 0 0')}
      {LINK.format(name='c', pose='1 0 0 0 0 1.5707963267948966')}
      <joint name="fix" type="fixed"><parent>world</parent><child>base</child></joint>
      <joint name="j1" type="revolute"><parent>base</parent><child>c</child>
        <axis><xyz expressed_in="__model__">1 0 0</xyz></axis></joint>
    </model>""")
    m, d = compiled(w)
    mujoco.mj_kinematics(m, d)
    mujoco.mj_comPos(m, d)
    ja, jb = m.joint("a::j1").id, m.joint("b::j1").id
    assert np.allclose(d.xaxis[ja], [0, 1, 0], atol=1e-9)
    assert np.allclose(d.xanchor[ja], [1, 0.5, 0], atol=1e-9)  # joint pose is in the child frame
    assert np.allclose(d.xaxis[jb], [1, 0, 0], atol=1e-9)


def test_sdf_1_6_use_parent_model_frame():
    text = f"""<model name="o"><pose>0 0 0 0 0 0</pose>
      {LINK.format(name='base', pose='0 0 0 0 0 0')}
      {LINK.format(name='c', pose='1 0 0 0 0 1.5707963267948966')}
      <joint name="fix" type="fixed"><parent>world</parent><child>base</child></joint>
      <joint name="jp" type="revolute"><parent>base</parent><child>c</child>
        <axis><xyz>1 0 0</xyz><use_parent_model_frame>true</use_parent_model_frame></axis>
      </joint></model>"""
    m, d = compiled(world(text, version="1.6"))
    mujoco.mj_kinematics(m, d)
    mujoco.mj_comPos(m, d)
    assert np.allclose(d.xaxis[m.joint("o::jp").id], [1, 0, 0], atol=1e-9)


# --- frames --------------------------------------------------------------------------------------
def test_frames_relative_to_degrees_quat_and_nested():
    w = world("""
<model name="top"><pose degrees="true">1 2 0 0 0 90</pose>
  <frame name="f1" attached_to="a"><pose>0 0 1 0 0 0</pose></frame>
  <link name="a"><pose>1 0 0 0 0 0</pose></link>
  <link name="b"><pose relative_to="f1">0 0 1 0 0 0</pose></link>
  <link name="q">
    <pose rotation_format="quat_xyzw">0 0 3 0 0 0.7071067811865476 0.7071067811865476</pose></link>
  <joint name="jb" type="fixed"><parent>a</parent><child>b</child></joint>
  <model name="inner"><pose relative_to="a">0 1 0 0 0 0</pose>
    <link name="x"><pose>0 0 5 0 0 0</pose></link>
    <link name="y"><pose relative_to="x">1 0 0 0 0 0</pose></link>
  </model>
  <joint name="jx" type="revolute"><parent>a</parent><child>inner::x</child><axis>
    <xyz>0 0 1</xyz></axis></joint>
</model>""")
    m, d = compiled(w)
    top = np.array([1, 2, 0, *rpy_to_quat(0, 0, math.pi / 2)])
    assert same_pose(w.models["top"].pose, top)
    assert same_pose(body_world(m, d, "top::a"), compose(top, [1, 0, 0, 0, 0, 0, 1]))
    assert same_pose(body_world(m, d, "top::b"), compose(top, [1, 0, 2, 0, 0, 0, 1]))
    assert same_pose(body_world(m, d, "top::q"),
                     compose(top, [0, 0, 3, *rpy_to_quat(0, 0, math.pi / 2)]))
    inner = compose(top, [1, 1, 0, 0, 0, 0, 1])
    assert same_pose(w.models["top::inner"].pose, inner)
    assert same_pose(body_world(m, d, "top::inner::x"), compose(inner, [0, 0, 5, 0, 0, 0, 1]))
    assert same_pose(body_world(m, d, "top::inner::y"), compose(inner, [1, 0, 5, 0, 0, 0, 1]))
    assert w.models["top"].models == ["top::inner"] and w.models["top::inner"].parent == "top"
    assert w.models["top::inner"].links == ["top::inner::x", "top::inner::y"]
    assert w.joints["top::jx"].child == "top::inner::x"
    assert w.links["top::inner::y"].free and not w.links["top::inner::x"].free
    assert w.models["top"].canonical_link == "top::a"


def test_placement_frame_and_canonical_link_attribute():
    w = world("""<model name="pf" placement_frame="foot" canonical_link="b"><pose>0 0 0 0 0 0</pose>
      <link name="a"><pose>0 0 1 0 0 0</pose></link><link name="b"/>
      <frame name="foot" attached_to="a"><pose>0 0 -0.5 0 0 0</pose></frame></model>""")
    m, d = compiled(w)
    assert np.allclose(body_world(m, d, "pf::a")[:3], [0, 0, 0.5])  # foot placed at the origin
    assert w.models["pf"].canonical_link == "pf::b"


# --- includes ------------------------------------------------------------------------------------
def test_include_model_uri_from_repo_with_overrides():
    w = world("""<include><uri>model://double_pendulum_with_base</uri><name>dp</name>
      <pose degrees="true">1 2 0 0 0 90</pose></include>
      <include><uri>model://double_pendulum_with_base</uri><name>dp_static</name>
        <static>true</static></include>""")
    m, d = compiled(w)
    assert set(w.models) == {"dp", "dp_static"}
    assert w.models["dp"].links == ["dp::base", "dp::upper_link", "dp::lower_link"]
    assert np.allclose(w.models["dp"].pose[:3], [1, 2, 0])
    assert np.allclose(body_world(m, d, "dp::upper_link")[:3], [1, 2, 2.1])
    assert w.models["dp_static"].static and not any(
        w.links[l].free for l in w.models["dp_static"].links)
    assert w.joints["dp::upper_joint"].mj_joints == ["dp::upper_joint"]
    assert w.joints["dp_static::upper_joint"].mj_joints == []


def test_include_via_resource_paths_env_vars_and_relative_file(monkeypatch, tmp_path):
    body = "<include><uri>model://test_box</uri></include>"
    with pytest.raises(SdfError, match="cannot resolve include uri 'model://test_box'"):
        world(body)
    w = world(body, resource_paths=[MODELS])
    assert "test_box" in w.models  # model.config: the highest version <= 1.11 (box.sdf)
    for var in ("SDF_PATH", "GZ_SIM_RESOURCE_PATH"):
        monkeypatch.setenv(var, f"{tmp_path}:{MODELS}")
        assert "test_box" in world(body).models
        monkeypatch.delenv(var)
    w = world("""<include><uri>models/plain_ball</uri><pose>0 0 3 0 0 0</pose></include>
                 <include><uri>file://%s</uri><name>b2</name></include>"""
              % (MODELS / "plain_ball" / "model.sdf"))
    assert set(w.models) == {"plain_ball", "b2"}
    assert np.allclose(w.models["plain_ball"].pose[:3], [0, 0, 3])


def test_included_mesh_resolves_relative_to_its_model_and_plugins_recorded():
    w = world("<include><uri>model://test_box</uri><name>tb</name></include>",
              resource_paths=[MODELS])
    m, d = compiled(w)
    assert m.geom("tb::link::collision").type == mujoco.mjtGeom.mjGEOM_MESH
    assert np.allclose(body_world(m, d, "tb::link")[:3], [0, 0, 0.1])  # the file's own pose
    p = w.plugins["tb::test::BoxPlugin"]
    assert p.filename == "test-box-plugin" and p.parent == "tb" and "<gain>2</gain>" in p.xml


def test_nested_include_with_world_joint_on_scoped_child():
    w = world("""<model name="rig"><include><uri>model://double_pendulum_with_base</uri></include>
      <joint name="anchor" type="fixed"><parent>world</parent>
        <child>double_pendulum_with_base::base</child></joint>
    </model>""")
    m, _ = compiled(w)
    assert w.models["rig"].models == ["rig::double_pendulum_with_base"]
    assert w.joints["rig::anchor"].child == "rig::double_pendulum_with_base::base"
    assert not w.links["rig::double_pendulum_with_base::base"].free
    assert m.nq == 2  # two hinges, no free joint


# --- records -------------------------------------------------------------------------------------
def test_sensors_and_plugins_records():
    w = world("""<plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>
    <model name="s"><link name="l">
      <sensor name="imu" type="imu"><pose>0 0 0.1 0 0 0</pose><update_rate>100</update_rate>
        <always_on>true</always_on><topic>/imu</topic><imu><angular_velocity/></imu>
        <plugin filename="sensor-plugin" name="sp"/></sensor>
      <plugin filename="link-plugin" name="lp"/>
    </link><plugin filename="model-plugin" name="mp"><x>1</x></plugin></model>""")
    s = w.sensors["s::l::imu"]
    assert (s.type, s.parent, s.update_rate, s.always_on, s.topic) == \
        ("imu", "s::l", 100, True, "/imu")
    assert np.allclose(s.pose, [0, 0, 0.1, 0, 0, 0, 1]) and "<angular_velocity/>" in s.xml
    assert set(w.plugins) == {"gz::sim::systems::Physics", "s::l::imu::sp", "s::l::lp", "s::mp"}
    assert w.plugins["gz::sim::systems::Physics"].parent == ""
    assert w.plugins["s::l::imu::sp"].parent == "s::l::imu"
    assert w.plugins["s::mp"].filename == "model-plugin"


def test_model_record_sdf_respawns_the_same_model_anywhere():
    w = world("""<include><uri>model://test_box</uri><name>tb</name>
      <pose>3 0 1 0 0 0.5</pose></include>""",
              resource_paths=[MODELS])
    text = w.models["tb"].sdf
    assert "<include" not in text
    w2 = load_world_string(text, base_dir="/")  # no search paths, no base dir: it stands alone
    m, d = compiled(w2)
    assert same_pose(body_world(m, d, "tb::link"), w.models["tb"].pose)
    m1, d1 = compiled(w)
    assert np.allclose(body_world(m1, d1, "tb::link"), body_world(m, d, "tb::link"))


def test_world_physics_and_model_only_file():
    w = world("""<gravity>0 0 -3.7</gravity><physics name="fast" type="ode" default="true">
      <max_step_size>0.002</max_step_size><real_time_factor>0</real_time_factor>
        <real_time_update_rate>0</real_time_update_rate>
      <ode><solver><type>quick</type><iters>80</iters><sor>1.1</sor>
        <island_threads>4</island_threads>
      <thread_position_correction>true</thread_position_correction></solver></ode></physics>
      <scene><ambient>1 1 1 1</ambient></scene><light name="sun" type="directional"/>""")
    assert w.name == "w" and w.step_size == 0.002 and np.allclose(w.gravity, [0, 0, -3.7])
    assert {k: w.physics[k] for k in ("iters", "sor", "island_threads",
                                      "thread_position_correction", "real_time_factor",
                                      "real_time_update_rate")} == \
        {"iters": 80, "sor": 1.1, "island_threads": 4, "thread_position_correction": True,
         "real_time_factor": 0.0, "real_time_update_rate": 0.0}
    m, _ = compiled(w)
    assert m.opt.timestep == 0.002 and np.allclose(m.opt.gravity, [0, 0, -3.7])
    assert m.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    wm = load_world(REPO / "models" / "double_pendulum_with_base" / "model.sdf")
    assert list(wm.models) == ["double_pendulum_with_base"] and wm.step_size == 0.001
    assert np.allclose(wm.gravity, [0, 0, -9.8])


# --- add_models ----------------------------------------------------------------------------------
def test_add_models_spawns_renames_and_rejects_duplicates():
    w = world(LINK.join(["<model name='a'>", "</model>"]).format(name="l", pose="0 0 1 0 0 0"))
    ball = (MODELS / "plain_ball" / "model.sdf").read_text()
    names = add_models(w, ball, name="b1", pose=np.array([1, 2, 3, 0, 0, 0, 1.0]))
    assert names == ["b1"]
    nested = ("<sdf version='1.9'><model name='outer'><model name='in'><link name='k'/></model>"
              "<link name='o'/></model></sdf>")
    assert add_models(w, nested) == ["outer", "outer::in"]
    m, d = compiled(w)
    assert np.allclose(body_world(m, d, "b1::ball")[:3], [1, 2, 3]) and w.links["b1::ball"].free
    before = (len(w.spec.bodies), dict(w.models))
    with pytest.raises(SdfError, match="duplicate model name 'b1'"):
        add_models(w, ball, name="b1")
    bad = ("<sdf version='1.9'><model name='c'><link name='x'/><link name='y'/>"
           "<joint name='j' type='screw'><parent>x</parent><child>y</child></joint></model></sdf>")
    with pytest.raises(SdfError, match="screw"):
        add_models(w, bad)
    bad_mesh = ("<sdf version='1.9'><model name='c'><link name='x'><collision name='c'><geometry>"
                "<mesh><uri>/nonexistent.stl</uri></mesh></geometry></collision></link></model>"
                "</sdf>")
    with pytest.raises(SdfError, match="cannot find mesh"):
        add_models(w, bad_mesh)
    assert (len(w.spec.bodies), dict(w.models)) == before  # nothing left behind
    compiled(w)


# --- errors --------------------------------------------------------------------------------------
def line_of(text: str, needle: str) -> int:
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


M = '<model name="m">\n<link name="a"/>\n<link name="b"/>\n{}\n</model>'
ERRORS = {
    "malformed": ("<model name='m'>\n<link name='a'>\n</model>", "</model>", "link",
                  "malformed XML"),
    "gearbox": (M.format('<joint name="j" type="gearbox"><parent>a</parent><child>b</child>'
                         '</joint>'),
                'type="gearbox"', "joint", "joint type 'gearbox'"),
    "heightmap": ('<model name="m"><static>true</static><link name="l"><collision name="c">'
                  '<geometry>\n<heightmap><uri>x.png</uri></heightmap>\n</geometry></collision>'
                  '</link></model>',
                  "<heightmap>", "heightmap", "not supported"),
    "polyline": ('<model name="m"><static>true</static><link name="l"><collision name="c">'
                 '<geometry>\n<polyline><height>1</height></polyline>\n</geometry></collision>'
                 '</link></model>',
                 "<polyline>", "polyline", "not supported"),
    "dae": ('<model name="m"><link name="l"><collision name="c"><geometry><mesh>\n'
            '<uri>meshes/tetra.dae</uri>\n</mesh></geometry></collision></link></model>',
            "<uri>", "uri", "cannot find mesh"),
    "dae_exists": ('<model name="m"><link name="l"><collision name="c"><geometry><mesh>\n'
                   '<uri>model://models/test_box/model.config</uri>\n'
                   '</mesh></geometry></collision></link></model>',
                   "<uri>", "uri", "mesh format '.config' is not supported"),
    "loop": (M.format('<joint name="j1" type="revolute"><parent>a</parent><child>b</child>'
                      '<axis><xyz>1 0 0</xyz></axis></joint>\n'
                      '<joint name="j2" type="revolute"><parent>b</parent><child>a</child>'
                      '<axis><xyz>1 0 0</xyz></axis></joint>'),
             'name="j2"', "joint", "kinematic loop"),
    "two_parents": (M.format('<link name="c"/><joint name="j1" type="fixed"><parent>a</parent>'
                             '<child>c</child></joint>\n'
                             '<joint name="j2" type="fixed"><parent>b</parent><child>c</child>'
                             '</joint>'),
                    'name="j2"', "joint", "kinematic loop"),
    "include": ("<include>\n<uri>model://no_such_model</uri>\n</include>", "<uri>", "uri",
                "cannot resolve include uri"),
    "missing_child": (M.format('<joint name="j" type="fixed">\n<parent>a</parent></joint>'),
                      'name="j"', "joint", "missing required element <child>"),
    "bad_number": ('<model name="m"><link name="l"><inertial>\n<mass>heavy</mass>\n'
                   '</inertial></link></model>',
                   "<mass>", "mass", "expected numbers"),
    "bad_pose": ('<model name="m">\n<pose>1 2 3</pose>\n<link name="l"/></model>', "<pose>", "pose",
                 "expected 6 numbers"),
    "unknown_element": ('<model name="m"><link name="l">\n<wobble/>\n</link></model>', "<wobble/>",
                        "wobble", "unknown"),
    "plane_dynamic": ('<model name="m"><link name="l"><collision name="c"><geometry>\n<plane/>\n'
                      '</geometry></collision></link></model>',
                      "<plane/>", "plane", "MuJoCo planes must be in static models"),
    "unknown_frame": ('<model name="m"><link name="l">\n'
                      '<pose relative_to="nowhere">0 0 0 0 0 0</pose>\n</link></model>',
                      "relative_to", "pose", "unknown frame 'nowhere'"),
    "pose_cycle": ('<model name="m"><link name="a">\n<pose relative_to="b">0 0 0 0 0 0</pose>'
                   '</link>'
                   '<link name="b"><pose relative_to="a">0 0 0 0 0 0</pose></link></model>',
                   'relative_to="b"', "pose", "cycle"),
    "duplicate": ('<model name="m"><link name="a"/>\n<frame name="a"/>\n</model>',
                  '<frame name="a"/>', "frame", "duplicate name 'a'"),
    "kinematic": ('<model name="m"><link name="l">\n<kinematic>true</kinematic>\n</link></model>',
                  "<kinematic>", "kinematic", "kinematic links are not supported"),
    "zero_mass": ('<model name="m"><link name="l"><inertial>\n<mass>0</mass>\n'
                  '</inertial></link></model>',
                  "<mass>", "mass", "positive mass"),
    "bad_inertia": ('<model name="m"><link name="l"><inertial><mass>1</mass>\n'
                    '<inertia><ixx>1</ixx><iyy>1</iyy><izz>5</izz></inertia>\n'
                    '</inertial></link></model>',
                    "<inertia>", "inertia", "not physical"),
    "actor": ('<actor name="walker">\n</actor>', "<actor", "actor", "actors"),
    "missing_type": (M.format('<joint name="j">\n<parent>a</parent><child>b</child></joint>'),
                     'name="j"', "joint", "needs a type"),
    "zero_axis": (M.format('<joint name="j" type="revolute"><parent>a</parent><child>b</child>'
                           '<axis>\n<xyz>0 0 0</xyz>\n</axis></joint>'),
                  "<xyz>", "xyz", "zero axis"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_name_file_line_and_element(case, tmp_path):
    body, needle, element, message = ERRORS[case]
    text = (f'<?xml version="1.0"?>\n<sdf version="1.9">\n<world name="w">\n{body}\n'
            '</world>\n</sdf>\n')
    path = tmp_path / f"{case}.sdf"
    path.write_text(text)
    with pytest.raises(SdfError) as info:
        load_world(path, resource_paths=[DATA])
    e = info.value
    assert message in str(e), str(e)
    assert e.file == str(path) and e.element == element, (e.file, e.element)
    assert e.line == line_of(text, needle), (e.line, str(e))
    assert str(e).startswith(f"{path}:{e.line}: <{element}>")


def test_error_inside_included_file_names_that_file(tmp_path):
    (tmp_path / "bad").mkdir()
    bad = tmp_path / "bad" / "model.sdf"
    bad.write_text('<sdf version="1.9">\n<model name="bad">\n<link name="l">\n'
                   '<collision name="c"><geometry><image/></geometry></collision>\n'
                   '</link></model></sdf>')
    with pytest.raises(SdfError) as info:
        world("<include><uri>model://bad</uri></include>", resource_paths=[tmp_path])
    assert info.value.file == str(bad) and info.value.line == 4 and info.value.element == "image"


def test_missing_file_and_missing_version():
    with pytest.raises(SdfError, match="cannot read file"):
        load_world("/nonexistent/world.sdf")
    with pytest.raises(SdfError, match="version"):
        load_world_string("<sdf><world name='w'/></sdf>")


def test_world_scope_frames_and_included_light():
    w = world("""<include><uri>model://sun</uri></include>
      <frame name="spot"><pose>5 0 0 0 0 0</pose></frame>
      <model name="a"><pose relative_to="spot">0 1 0 0 0 0</pose><link name="l"/></model>
      <model name="b"><pose relative_to="a::l">0 0 2 0 0 0</pose><link name="l"/></model>""",
              resource_paths=[MODELS])
    assert set(w.models) == {"a", "b"}  # the light is dropped
    assert np.allclose(w.models["a"].pose[:3], [5, 1, 0])
    assert np.allclose(w.models["b"].pose[:3], [5, 1, 2])


def test_joint_sensor_record_and_static_copy_of_a_dynamic_model():
    w = world(f"""<model name="r">{LINK.format(name='a', pose='0 0 1 0 0 0')}
      {LINK.format(name='b', pose='0 0 2 0 0 0')}
      <joint name="j" type="revolute"><parent>a</parent><child>b</child><axis>
        <xyz>1 0 0</xyz></axis>
        <sensor name="ft" type="force_torque"><pose>0 0 0.1 0 0 0</pose>
          <update_rate>50</update_rate></sensor></joint></model>""")
    s = w.sensors["r::j::ft"]
    assert s.parent == "r::j" and s.type == "force_torque" and np.allclose(s.pose[:3], [0, 0, 0.1])
    static_text = w.models["r"].sdf.replace(
        "<model name=\"r\">", "<model name=\"r_static\">\n<static>true</static>", 1)
    w2 = load_world_string(static_text)
    m, _ = compiled(w2)
    assert w2.models["r_static"].static and m.njnt == 0 and m.nbody == 3
