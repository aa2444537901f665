"""Which fidelity level each link is at, read from the engine's lever flags.

The engine knows levers, not levels: a link whose DYNAMICS and COLLISION levers are both off is
LOW (the shape type's LOW), one with any other body lever off (DYNAMICS alone is the shape
type's MEDIUM; COLLISION or GRAVITY alone) is MEDIUM, one with every body lever on is HIGH.
"""
from __future__ import annotations

import numpy as np

from ..fidelity_manager.levels import LEVEL_DTYPE, Level
from ..simulator.protocol import Lever


def levels_of(dynamics: np.ndarray, collision: np.ndarray, gravity: np.ndarray) -> np.ndarray:
    """Levels from the three body levers' "enabled" arrays (one entry per link)."""
    level = np.full(len(dynamics), Level.HIGH, LEVEL_DTYPE)
    level[~(dynamics & collision & gravity)] = Level.MEDIUM
    level[~dynamics & ~collision] = Level.LOW
    return level


def link_levels(engine, links: list[str]) -> np.ndarray:
    """The level of each of ``links`` (scoped link names of ``engine``) as its levers say."""
    if not links:
        return np.zeros(0, LEVEL_DTYPE)
    return levels_of(*(engine.get_lever(links, lever)
                       for lever in (Lever.DYNAMICS, Lever.COLLISION, Lever.GRAVITY)))


def body_levels(engine) -> np.ndarray:
    """``(nbody,)`` levels of the engine's MuJoCo bodies; -1 for bodies that are no SDF link
    (the world, the engine's own helper bodies)."""
    links = list(engine.world.links)
    out = np.full(engine.model.nbody, -1, LEVEL_DTYPE)
    ids = np.fromiter((engine.index.body_id[n] for n in links), int, len(links))
    out[ids] = link_levels(engine, links)
    return out
