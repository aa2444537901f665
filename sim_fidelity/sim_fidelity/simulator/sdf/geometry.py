"""The SDF loader's geometry: ``<collision>`` and ``<visual>`` shapes as MuJoCo geoms and meshes.

Boxes, spheres, cylinders, capsules, ellipsoids, planes (only on what is fixed to the world) and
STL/OBJ meshes (ASCII STL handed over as vertices). Collisions go to ``COLLISION_GROUP``; visuals
to ``VISUAL_GROUP`` without contacts, and a visual that cannot be shown is dropped.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..errors import SdfError
from ..poses import compose, xyzw_to_wxyz
from . import resolve
from .elements import (
    REJECTED_SHAPES,
    SHAPES,
    ParsedPose,
    check_children,
    float_of,
    name_of,
    numbers,
    parse_pose,
    required,
)
from .meshes import ascii_stl
from .records import COLLISION_GROUP, VISUAL_GROUP
from .tree import Link
from .xmltree import Node


class _Skip(Exception):
    """A geometry that makes no geom (``<empty/>``)."""


def add_geom(spec, body, l: Link, node: Node, visual: bool, *,
             pose_in_link: Callable[[ParsedPose], np.ndarray], fixed_to_world: bool,
             resource_paths: tuple, created_assets: list) -> str | None:
    """Add a ``<collision>`` (or ``<visual>``) of link ``l`` to ``body``; returns the geom name,
    or None where nothing was added (an empty shape; a visual that cannot be shown)."""
    import mujoco as mj

    if not visual:
        check_children(node)
    gname = f"{l.scoped}::{name_of(node)}" + ("::visual" if visual else "")
    if spec.geom(gname) is not None:
        raise node.error(f"duplicate {node.tag} name '{node.get('name')}' in link '{l.scoped}'")
    geo = required(node, "geometry")
    shapes = [c for c in geo.children if ":" not in c.tag]
    if len(shapes) != 1:
        raise geo.error(f"<geometry> must hold exactly one shape, found {len(shapes)}")
    shape = shapes[0]
    pose = pose_in_link(parse_pose(node.find("pose")))
    kw: dict = {}
    try:
        kw = _shape(spec, shape, gname, resource_paths, created_assets)
    except _Skip:
        return None
    except SdfError:
        if visual:
            return None  # visuals are cosmetic: drop what we cannot show
        raise
    if kw is None:
        return None
    if "quat_extra" in kw:
        pose = compose(pose, np.concatenate([[0, 0, 0], kw.pop("quat_extra")]))
    kw.update(name=gname, pos=pose[:3], quat=xyzw_to_wxyz(pose[3:]))
    if visual:
        kw.update(contype=0, conaffinity=0, group=VISUAL_GROUP, density=0.0)
    else:
        mu = 1.0
        fr = node.find("surface")
        fr = fr.find("friction") if fr is not None else None
        ode = fr.find("ode") if fr is not None else None
        if ode is not None:
            mu = float_of(ode, "mu", 1.0)
            if mu < 0:
                raise ode.find("mu").error("friction coefficient mu must be >= 0")
        kw.update(group=COLLISION_GROUP, friction=[mu, 0.005, 0.0001])
    if kw["type"] == mj.mjtGeom.mjGEOM_PLANE and not fixed_to_world:
        if visual:
            return None
        raise shape.error(f"a plane in link '{l.scoped}', which can move: MuJoCo planes must "
                          "be in static models or links fixed to the world")
    body.add_geom(**kw)
    return gname

def _shape(spec, shape: Node, gname: str, resource_paths: tuple,
           created_assets: list) -> dict | None:
    """MuJoCo geom keywords of one SDF shape (meshes are added to ``spec`` as assets)."""
    import mujoco as mj

    t = shape.tag
    G = mj.mjtGeom
    if t in REJECTED_SHAPES:
        raise shape.error(f"geometry <{t}> is not supported")
    if t not in SHAPES:
        raise shape.error(f"unknown geometry <{t}>")
    if t == "empty":
        raise _Skip()

    def pos(tag, default=None):
        v = (float_of(shape, tag, default) if default is not None
             else numbers(required(shape, tag), 1)[0])
        if v <= 0:
            raise shape.find(tag).error(f"<{tag}> must be positive, got {v}")
        return v

    if t == "box":
        size_node = required(shape, "size")
        s = np.array(numbers(size_node, 3))
        if np.any(s <= 0):
            raise size_node.error("box sizes must be positive")
        return dict(type=G.mjGEOM_BOX, size=s / 2)
    if t == "sphere":
        return dict(type=G.mjGEOM_SPHERE, size=[pos("radius", 1.0), 0, 0])
    if t == "cylinder":
        return dict(type=G.mjGEOM_CYLINDER, size=[pos("radius", 1.0), pos("length", 1.0) / 2, 0])
    if t == "capsule":
        return dict(type=G.mjGEOM_CAPSULE, size=[pos("radius", 0.5), pos("length", 1.0) / 2, 0])
    if t == "ellipsoid":
        r_node = shape.find("radii")
        r = np.array(numbers(r_node, 3)) if r_node is not None else np.ones(3)
        if np.any(r <= 0):
            raise (r_node or shape).error("ellipsoid radii must be positive")
        return dict(type=G.mjGEOM_ELLIPSOID, size=r)
    if t == "plane":
        n_node = shape.find("normal")
        n = np.array(numbers(n_node, 3)) if n_node is not None else np.array([0, 0, 1.0])
        if np.linalg.norm(n) < 1e-12:
            raise n_node.error("plane normal has zero length")
        n = n / np.linalg.norm(n)
        s_node = shape.find("size")
        s = np.array(numbers(s_node, 2)) if s_node is not None else np.array([1.0, 1.0])
        return dict(type=G.mjGEOM_PLANE, size=[max(s[0] / 2, 0.0), max(s[1] / 2, 0.0), 1.0],
                    quat_extra=_quat_z_to(n))
    # mesh
    if shape.find("submesh") is not None:
        raise shape.find("submesh").error("<submesh> is not supported")
    uri_node = required(shape, "uri")
    path = resolve.resolve_uri(uri_node.text, uri_node.base_dir, resource_paths)
    if path is None or not path.is_file():
        raise uri_node.error(f"cannot find mesh '{uri_node.text}'")
    if path.suffix.lower() not in (".stl", ".obj"):
        raise uri_node.error(f"mesh format '{path.suffix}' is not supported (STL and OBJ are)")
    uri_node.text = str(path)  # so the model's SDF text stands on its own
    scale = (np.array(numbers(shape.find("scale"), 3)) if shape.find("scale") is not None
             else np.ones(3))
    if np.any(scale == 0):
        raise shape.find("scale").error("mesh scale must not be zero")
    verts = ascii_stl(path, uri_node) if path.suffix.lower() == ".stl" else None
    if verts is None:
        mesh = spec.add_mesh(name=gname, file=str(path), scale=scale)
    else:  # MuJoCo reads binary STL only: hand it the vertices of an ASCII one
        mesh = spec.add_mesh(name=gname, scale=scale, uservert=verts.reshape(-1),
                                  userface=np.arange(len(verts), dtype=np.int32))
    created_assets.append(mesh)
    return dict(type=G.mjGEOM_MESH, meshname=gname)


def _quat_z_to(n: np.ndarray) -> np.ndarray:
    """xyzw rotation taking +z onto unit vector ``n``."""
    z = np.array([0.0, 0, 1])
    c = float(np.dot(z, n))
    if c > 1 - 1e-12:
        return np.array([0.0, 0, 0, 1])
    if c < -1 + 1e-12:
        return np.array([1.0, 0, 0, 0])
    axis = np.cross(z, n)
    axis /= np.linalg.norm(axis)
    half = math.acos(c) / 2
    return np.concatenate([axis * math.sin(half), [math.cos(half)]])
