"""The model a renderer draws: a copy of the engine's, with its fidelity levels painted on.

The engine's own model is never touched (its colours are no physics, but it is the engine's).
Collision geoms of a link that has visual geoms are hidden (moved to a geom group no one draws),
so each link shows its visuals, or its collisions where it has nothing else. With ``levels`` on,
every movable link and every link at a lowered level takes its level's colour; the rest (static
HIGH scenery: ground, walls) keeps its own.
"""
from __future__ import annotations

import copy

import mujoco
import numpy as np

from ..fidelity_manager.levels import Level
from ..simulator.sdf import COLLISION_GROUP, VISUAL_GROUP
from .colours import LEVEL_RGBA
from .levels import body_levels

HIDDEN_GROUP = 5  # a geom group MuJoCo's default scene options do not draw
HEADLIGHT = (0.25, 0.7)  # ambient and diffuse intensity of the camera's light
DEFAULT_RGBA = (0.5, 0.5, 0.5, 1.0)  # what a geom without an SDF material gets
# Geoms left at the default grey, told apart: ground planes, other static geoms, movable ones.
PLANE_RGBA, STATIC_RGBA, MOVABLE_RGBA = (0.3, 0.32, 0.35, 1), (0.62, 0.62, 0.64, 1), \
    (0.86, 0.80, 0.68, 1)


def shade(ids: np.ndarray) -> np.ndarray:
    """A brightness factor in 0.8..1 per body id, so that touching bodies of one colour show
    their edges."""
    return 0.8 + 0.1 * (ids * 7 % 3)


class SceneLook:
    """A render copy of ``engine.model``; :meth:`update` follows recompiles and lever changes."""

    def __init__(self, engine, levels: bool = False):
        self.engine = engine
        self.levels = levels
        self.model: mujoco.MjModel | None = None
        self._source: mujoco.MjModel | None = None
        self.counts: dict[Level, int] = {}
        self.update()

    def _copy(self) -> None:
        src = self.engine.model
        m = copy.deepcopy(src)
        body = m.geom_bodyid
        has_visual = np.bincount(body[m.geom_group == VISUAL_GROUP], minlength=m.nbody) > 0
        m.geom_group[(m.geom_group == COLLISION_GROUP) & has_visual[body]] = HIDDEN_GROUP
        self.shown = m.geom_group != HIDDEN_GROUP
        self.movable = (m.body_weldid != 0)[body]  # per geom
        grey = np.all(m.geom_rgba == DEFAULT_RGBA, axis=1) & (m.geom_matid < 0)
        plane = m.geom_type == mujoco.mjtGeom.mjGEOM_PLANE
        m.geom_rgba[grey & plane] = PLANE_RGBA
        m.geom_rgba[grey & ~plane & ~self.movable] = STATIC_RGBA
        moving = grey & ~plane & self.movable
        m.geom_rgba[moving] = MOVABLE_RGBA
        m.geom_rgba[moving, :3] *= shade(body[moving])[:, None]
        self._rgba, self._matid = m.geom_rgba.copy(), m.geom_matid.copy()
        m.vis.headlight.ambient[:] = HEADLIGHT[0]  # SDF worlds' own lights are often few
        m.vis.headlight.diffuse[:] = HEADLIGHT[1]
        m.vis.headlight.specular[:] = 0.05  # no glare off the ground under a top view
        self.model, self._source = m, src

    @property
    def stale(self) -> bool:
        """Has the engine recompiled its model since the last update (geom ids changed)?"""
        return self.engine.model is not self._source

    def update(self) -> mujoco.MjModel:
        """The render model for the engine as it is now (a new copy after a recompile)."""
        if self.stale:
            self._copy()
        if self.levels:
            self._paint()
        return self.model

    def _paint(self) -> None:
        m = self.model
        per_body = body_levels(self.engine)
        level = per_body[m.geom_bodyid]
        painted = self.shown & (level >= 0) & (self.movable | (level != Level.HIGH))
        m.geom_rgba[:] = self._rgba
        m.geom_matid[:] = self._matid
        m.geom_rgba[painted] = LEVEL_RGBA[level[painted]]
        m.geom_rgba[painted, :3] *= shade(m.geom_bodyid[painted])[:, None]
        m.geom_matid[painted] = -1
        links = per_body[per_body >= 0]
        self.counts = {lv: int(np.count_nonzero(links == lv)) for lv in Level}
