"""Where the camera stands: framed on the scene, a named camera of the world, or given numbers.

``--camera`` takes ``auto`` (the default: the whole scene, ground planes left out, seen from
``azimuth`` and ``elevation``), the name of a camera of the model, or six numbers
``x,y,z,distance,azimuth,elevation``: the point looked at (m), the distance to it (m) and the
view direction (degrees, MuJoCo's free camera).
"""
from __future__ import annotations

import math

import mujoco
import numpy as np

from .errors import RenderError

AZIMUTH, ELEVATION = 135.0, -30.0  # degrees, the default view of ``auto``
MARGIN = 1.1  # the framed sphere's radius is scaled by this


def frame_scene(model: mujoco.MjModel, data: mujoco.MjData, shown: np.ndarray,
                cam: mujoco.MjvCamera) -> None:
    """Point ``cam`` at the sphere around the ``shown`` geoms, planes left out."""
    solid = shown & (model.geom_type != mujoco.mjtGeom.mjGEOM_PLANE)
    solid = solid if solid.any() else shown
    pos, r = data.geom_xpos[solid], model.geom_rbound[solid][:, None]
    lo, hi = (pos - r).min(axis=0), (pos + r).max(axis=0)
    centre, radius = (lo + hi) / 2, max(float(np.linalg.norm(hi - lo)) / 2, 0.05)
    fovy = math.radians(float(model.vis.global_.fovy))
    cam.type = mujoco.mjtCamera.mjCAMERA_FREE
    cam.lookat[:] = centre
    cam.distance = MARGIN * radius / math.sin(fovy / 2)


def make_camera(text: str, model: mujoco.MjModel, data: mujoco.MjData,
                shown: np.ndarray) -> mujoco.MjvCamera:
    """The camera ``text`` asks for (see the module's doc); RenderError for anything else."""
    cam = mujoco.MjvCamera()
    cam.azimuth, cam.elevation = AZIMUTH, ELEVATION
    text = text.strip()
    if text == "auto":
        frame_scene(model, data, shown, cam)
        return cam
    if "," in text:
        try:
            x, y, z, dist, az, el = (float(v) for v in text.split(","))
        except ValueError:
            raise RenderError(f"--camera '{text}': six numbers x,y,z,distance,azimuth,elevation "
                              "expected") from None
        if not all(map(math.isfinite, (x, y, z, dist, az, el))) or dist <= 0:
            raise RenderError(f"--camera '{text}': finite numbers and a distance above 0")
        cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        cam.lookat[:] = (x, y, z)
        cam.distance, cam.azimuth, cam.elevation = dist, az, el
        return cam
    cid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, text)
    if cid < 0:
        names = [model.camera(i).name for i in range(model.ncam)]
        raise RenderError(f"--camera '{text}': no camera of that name in the world (cameras: "
                          f"{', '.join(names) or 'none'}; or auto, or x,y,z,distance,azimuth,"
                          "elevation)")
    cam.type = mujoco.mjtCamera.mjCAMERA_FIXED
    cam.fixedcamid = cid
    return cam
