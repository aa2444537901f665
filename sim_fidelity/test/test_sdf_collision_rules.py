"""The SDF loader's collision rules, as Gazebo has them: links of one model collide with each
other only when both say ``self_collide`` (a model's setting is its links' default); links of
different models always may; visuals never collide. Read from the compiled model's exclude list
and checked by contact in a step."""
from __future__ import annotations

import itertools

import mujoco
import numpy as np
import pytest

from sim_fidelity.simulator.errors import SdfError
from sim_fidelity.simulator.sdf import COLLISION_GROUP, VISUAL_GROUP, load_world_string


def _link(name: str, x: float, self_collide: str | None, fixed: bool = False) -> str:
    flag = f"<self_collide>{self_collide}</self_collide>" if self_collide is not None else ""
    return (f'<link name="{name}"><pose>{x} 0 1 0 0 0</pose>{flag}'
            '<inertial><mass>1</mass></inertial>'
            '<collision name="c"><geometry><box><size>0.3 0.3 0.3</size></box></geometry>'
            '</collision><visual name="v"><geometry><box><size>0.3 0.3 0.3</size></box>'
            '</geometry></visual></link>')


def chain(model: str, links: dict[str, str | None], model_flag: str | None = None,
          y: float = 0.0) -> str:
    """Links 0.2 m apart along x (their 0.3 m boxes overlap), each on a prismatic joint to the
    world (siblings: MuJoCo itself never collides a parent with its child)."""
    names = list(links)
    body = "".join(_link(n, 0.2 * i, links[n]) for i, n in enumerate(names))
    joints = "".join(
        f'<joint name="j_{n}" type="prismatic"><parent>world</parent><child>{n}</child>'
        '<axis><xyz>0 0 1</xyz></axis></joint>' for n in names)
    flag = f"<self_collide>{model_flag}</self_collide>" if model_flag is not None else ""
    return f'<model name="{model}"><pose>0 {y} 0 0 0 0</pose>{flag}{body}{joints}</model>'


def compiled(*models: str):
    text = ('<?xml version="1.0"?><sdf version="1.9"><world name="w">' + "".join(models)
            + "</world></sdf>")
    m = load_world_string(text).spec.compile()
    return m, mujoco.MjData(m)


def excluded(m) -> set[frozenset[str]]:
    """Body pairs the compiled model never collides, by (scoped) name."""
    pairs = set()
    for sig in m.exclude_signature:
        a, b = int(sig) >> 16, int(sig) & 0xFFFF
        pairs.add(frozenset((m.body(a).name, m.body(b).name)))
    return pairs


def touching(m, d) -> set[frozenset[str]]:
    """Body pairs in contact after one collision pass."""
    mujoco.mj_forward(m, d)
    return {frozenset((m.body(m.geom_bodyid[c.geom1]).name, m.body(m.geom_bodyid[c.geom2]).name))
            for c in d.contact[:d.ncon]}


def pair(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


@pytest.mark.parametrize("flags, collide", [
    ((None, None), False),  # the default: no self collision
    (("true", None), False),  # one link asking is not enough: both must
    ((None, "true"), False),
    (("true", "false"), False),
    (("true", "true"), True),
    (("1", "true"), True),
], ids=["default", "a-only", "b-only", "a-true-b-false", "both", "both-as-1"])
def test_links_of_one_model_collide_only_when_both_say_self_collide(flags, collide):
    m, d = compiled(chain("r", {"a": flags[0], "b": flags[1]}))
    assert (pair("r::a", "r::b") not in excluded(m)) == collide
    assert (pair("r::a", "r::b") in touching(m, d)) == collide


def test_the_models_self_collide_is_its_links_default():
    m, d = compiled(chain("r", {"a": None, "b": None, "c": "false"}, model_flag="true"))
    assert excluded(m) == {pair("r::a", "r::c"), pair("r::b", "r::c")}
    assert pair("r::a", "r::b") in touching(m, d)
    assert pair("r::b", "r::c") not in touching(m, d)


def test_every_pair_of_a_default_model_is_excluded():
    links = {n: None for n in "abcd"}
    m, _ = compiled(chain("r", links))
    assert excluded(m) == {pair(f"r::{a}", f"r::{b}") for a, b in itertools.combinations(links, 2)}


def test_links_of_different_models_collide():
    m, d = compiled(chain("p", {"a": None}), chain("q", {"a": None}, y=0.25))
    assert excluded(m) == set()
    assert pair("p::a", "q::a") in touching(m, d)


def test_visuals_never_collide():
    m, _ = compiled(chain("r", {"a": "true", "b": "true"}))
    visual = m.geom_group == VISUAL_GROUP
    assert visual.sum() == 2
    assert not m.geom_contype[visual].any() and not m.geom_conaffinity[visual].any()
    assert np.all(m.geom_contype[~visual] == 1) and np.all(m.geom_conaffinity[~visual] == 1)


def test_links_without_collisions_and_links_fixed_to_the_world_need_no_exclude():
    """Two links welded to the world never collide in MuJoCo: no exclude is made for them; a
    link with no collision has nothing to exclude."""
    fixed = ('<model name="f">'
             + _link("a", 0.0, None) + _link("b", 0.2, None)
             + '<link name="bare"><pose>0.1 0 1 0 0 0</pose></link>'
             '<joint name="ja" type="fixed"><parent>world</parent><child>a</child></joint>'
             '<joint name="jb" type="fixed"><parent>world</parent><child>b</child></joint>'
             '<joint name="jbare" type="revolute"><parent>a</parent><child>bare</child>'
             '<axis><xyz>0 0 1</xyz></axis></joint></model>')
    m, _ = compiled(fixed)
    assert excluded(m) == set()


# ---------------------------------------------------------------------- collision geoms
def one_link(collisions: str, static: bool = False) -> str:
    return (f'<model name="m"><static>{str(static).lower()}</static><link name="l">'
            f'<inertial><mass>1</mass></inertial>{collisions}</link></model>')


def collision(body: str, name: str = "c", pose: str = "") -> str:
    pose = f"<pose>{pose}</pose>" if pose else ""
    return f'<collision name="{name}">{pose}<geometry>{body}</geometry></collision>'


BOX = "<box><size>0.2 0.2 0.2</size></box>"


def test_a_collision_sits_at_its_pose_in_the_collision_group():
    m, _ = compiled(one_link(collision(BOX, pose="0.1 0.2 0.3 0 0 1.5708")))
    g = m.geom("m::l::c").id
    np.testing.assert_allclose(m.geom_pos[g], [0.1, 0.2, 0.3], atol=1e-9)
    np.testing.assert_allclose(m.geom_quat[g], [np.cos(0.7854), 0, 0, np.sin(0.7854)], atol=1e-4)
    assert m.geom_group[g] == COLLISION_GROUP and m.geom_contype[g] == 1


def test_a_plane_keeps_its_position_when_its_normal_turns_it():
    m, _ = compiled(one_link(collision("<plane><normal>1 0 0</normal><size>2 2</size></plane>",
                                       pose="0.5 -0.5 0.25 0 0 0"), static=True))
    g = m.geom("m::l::c").id
    np.testing.assert_allclose(m.geom_pos[g], [0.5, -0.5, 0.25], atol=1e-9)
    z_axis = np.zeros(9)
    mujoco.mju_quat2Mat(z_axis, m.geom_quat[g])
    np.testing.assert_allclose(z_axis.reshape(3, 3)[:, 2], [1, 0, 0], atol=1e-9)


@pytest.mark.parametrize("surface, mu", [
    ("", 1.0),
    ("<surface><friction><ode/></friction></surface>", 1.0),
    ("<surface><friction><ode><mu>0.3</mu></ode></friction></surface>", 0.3),
    ("<surface><friction><ode><mu>0</mu></ode></friction></surface>", 0.0),
])
def test_friction_mu_with_mujocos_torsional_and_rolling_defaults(surface, mu):
    body = f'<collision name="c"><geometry>{BOX}</geometry>{surface}</collision>'
    m, _ = compiled(one_link(body))
    np.testing.assert_allclose(m.geom_friction[m.geom("m::l::c").id], [mu, 0.005, 0.0001])


@pytest.mark.parametrize("collisions, message", [
    (collision(BOX) + collision(BOX), "duplicate collision name 'c' in link 'm::l'"),
    (collision(BOX + "<sphere><radius>1</radius></sphere>"),
     "<geometry> must hold exactly one shape, found 2"),
    (collision(""), "<geometry> must hold exactly one shape, found 0"),
    ('<collision name="c"><geometry>' + BOX + '</geometry><surface><friction><ode><mu>-0.1</mu>'
     '</ode></friction></surface></collision>', "friction coefficient mu must be >= 0"),
])
def test_bad_collisions_are_refused_naming_line_and_element(collisions, message):
    with pytest.raises(SdfError) as info:
        compiled(one_link(collisions))
    assert str(info.value).endswith(message) and info.value.line is not None, str(info.value)
    assert info.value.element in ("collision", "geometry", "mu")


def test_extension_elements_inside_geometry_are_not_shapes():
    m, _ = compiled(one_link('<collision name="c"><geometry>' + BOX
                             + '<x:note xmlns:x="urn:example"/></geometry></collision>'))
    assert m.geom_type[m.geom("m::l::c").id] == mujoco.mjtGeom.mjGEOM_BOX


def test_a_link_fixed_to_the_world_and_a_moving_one_of_its_model_are_excluded():
    mixed = ('<model name="f">' + _link("a", 0.0, None) + _link("b", 0.2, None)
             + '<joint name="ja" type="fixed"><parent>world</parent><child>a</child></joint>'
             '<joint name="jb" type="prismatic"><parent>world</parent><child>b</child>'
             '<axis><xyz>0 0 1</xyz></axis></joint></model>')
    m, d = compiled(mixed)
    assert excluded(m) == {pair("f::a", "f::b")}
    assert pair("f::a", "f::b") not in touching(m, d)
