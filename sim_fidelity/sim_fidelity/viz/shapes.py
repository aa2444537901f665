"""The scene's shapes as boxes, spheres and cylinders with world poses: what a marker display
draws (RViz, Foxglove). Capsules become cylinders of their full length, meshes and anything else
their geom's bounding box, planes thin squares (20 m when infinite)."""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from ..simulator import poses
from .scene_look import SceneLook

CUBE, SPHERE, CYLINDER = 0, 1, 2  # shape kinds
PLANE_SIZE = 10.0  # half side (m) drawn for an infinite plane
G = mujoco.mjtGeom
BOX, SPHERE_G, ELLIPSOID, CYLINDER_G, CAPSULE, PLANE = (int(t) for t in (
    G.mjGEOM_BOX, G.mjGEOM_SPHERE, G.mjGEOM_ELLIPSOID, G.mjGEOM_CYLINDER, G.mjGEOM_CAPSULE,
    G.mjGEOM_PLANE))


@dataclass
class Shapes:
    """One row per shown geom: its id, kind, world pose ``x y z qx qy qz qw``, full extents (m)
    and RGBA (the level colours when the look paints levels)."""

    geom: np.ndarray
    kind: np.ndarray
    pose: np.ndarray
    scale: np.ndarray
    rgba: np.ndarray


def scene_shapes(look: SceneLook, data: mujoco.MjData) -> Shapes:
    """The shown geoms of ``look``'s model in the state ``data`` (kinematics current)."""
    m = look.model
    g = np.flatnonzero(look.shown)
    typ, size = m.geom_type[g], m.geom_size[g]
    kind = np.full(len(g), CUBE)
    kind[np.isin(typ, (SPHERE_G, ELLIPSOID))] = SPHERE
    kind[np.isin(typ, (CYLINDER_G, CAPSULE))] = CYLINDER
    aabb = m.geom_aabb[g]  # centre and half extents in the geom frame
    scale = 2 * aabb[:, 3:]
    centre = aabb[:, :3].copy()
    exact = np.isin(typ, (BOX, ELLIPSOID))
    scale[exact], centre[exact] = 2 * size[exact], 0.0
    sphere = typ == SPHERE_G
    scale[sphere], centre[sphere] = 2 * size[sphere, :1], 0.0
    cyl = np.isin(typ, (CYLINDER_G, CAPSULE))
    capsule = (typ == CAPSULE).astype(float)
    scale[cyl] = np.stack([2 * size[cyl, 0], 2 * size[cyl, 0],
                           2 * size[cyl, 1] + 2 * capsule[cyl] * size[cyl, 0]], axis=1)
    centre[cyl] = 0.0
    plane = typ == PLANE
    half = np.where(size[plane, :2] > 0, size[plane, :2], PLANE_SIZE)
    scale[plane] = np.concatenate([2 * half, np.full((half.shape[0], 1), 1e-3)], axis=1)
    centre[plane] = 0.0
    body = m.geom_bodyid[g]
    frame = np.concatenate([data.xpos[body], poses.wxyz_to_xyzw(data.xquat[body])], axis=1)
    local = np.concatenate([m.geom_pos[g], poses.wxyz_to_xyzw(m.geom_quat[g])], axis=1)
    pose = poses.compose(frame, local)
    pose[:, :3] += poses.quat_rotate(pose[:, 3:], centre)
    return Shapes(g, kind, pose, scale, m.geom_rgba[g].copy())
