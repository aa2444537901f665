"""Headless OpenGL for MuJoCo and an off-screen renderer on it.

The back-end is chosen here rather than through ``MUJOCO_GL``, which MuJoCo reads once, when it
is first imported (before any ``simfid`` command could set it): ``MUJOCO_GL=egl`` or ``osmesa``
picks one; otherwise EGL (Mesa's software rasteriser when there is no GPU: Debian's ``libegl1``
and ``libgl1-mesa-dri``) is tried, then OSMesa (``libosmesa6``). When neither starts, the error
names the libraries each needs.
"""
from __future__ import annotations

import ctypes.util
import importlib
import os

import mujoco
import numpy as np

from .errors import RenderError

BACKENDS = ("egl", "osmesa")
LIBRARIES = {"egl": ("EGL", "libEGL.so.1 (Debian: libegl1, with libgl1-mesa-dri for software "
                            "rendering)"),
             "osmesa": ("OSMesa", "libOSMesa.so (Debian: libosmesa6)")}


def _context(backend: str, width: int, height: int):
    """A current GL context of ``backend``; RenderError naming the missing library otherwise."""
    lib, what = LIBRARIES[backend]
    if ctypes.util.find_library(lib) is None:
        raise RenderError(f"off-screen rendering with {backend}: {what} is not installed")
    try:
        ctx = importlib.import_module(f"mujoco.{backend}").GLContext(width, height)
        ctx.make_current()
    except Exception as e:  # PyOpenGL and the drivers raise anything from ImportError on
        raise RenderError(f"off-screen rendering with {backend} failed to start ({e}); it "
                          f"needs {what}") from None
    return ctx


def gl_context(width: int, height: int):
    """A current off-screen GL context from ``MUJOCO_GL`` or the first back-end that starts."""
    wanted = os.environ.get("MUJOCO_GL", "").strip().lower()
    if wanted in BACKENDS:
        return _context(wanted, width, height)
    problems = []
    for backend in BACKENDS:
        try:
            return _context(backend, width, height)
        except RenderError as e:
            problems.append(str(e))
    raise RenderError("no headless OpenGL back-end: " + "; ".join(problems))


class OffscreenRenderer:
    """Renders a model's scene into RGB arrays, ``height`` x ``width``, without a display."""

    def __init__(self, model: mujoco.MjModel, width: int, height: int, max_geom: int = 20000):
        if width < 16 or height < 16:
            raise RenderError(f"image size {width}x{height}: at least 16x16 pixels")
        model.vis.global_.offwidth = max(int(model.vis.global_.offwidth), width)
        model.vis.global_.offheight = max(int(model.vis.global_.offheight), height)
        self.width, self.height = width, height
        self._gl = gl_context(width, height)
        self.model = model
        self.scene = mujoco.MjvScene(model, maxgeom=max(max_geom, 2 * model.ngeom + 100))
        self.option = mujoco.MjvOption()
        self._context = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_150)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._context)
        self._rect = mujoco.MjrRect(0, 0, width, height)
        self._pixels = np.empty((height, width, 3), np.uint8)

    def render(self, data: mujoco.MjData, camera: mujoco.MjvCamera) -> np.ndarray:
        """The scene of ``data`` seen by ``camera``: a fresh ``(height, width, 3)`` uint8 array."""
        self._gl.make_current()
        mujoco.mjv_updateScene(self.model, data, self.option, None, camera,
                               mujoco.mjtCatBit.mjCAT_ALL, self.scene)
        mujoco.mjr_render(self._rect, self.scene, self._context)
        mujoco.mjr_readPixels(self._pixels, None, self._rect, self._context)
        return np.flipud(self._pixels).copy()

    def close(self) -> None:
        """Free the GL resources."""
        if self._gl is not None:
            self._context.free()
            self._gl.free()
            self._gl = None
