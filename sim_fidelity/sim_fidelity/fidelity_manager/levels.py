"""Fidelity levels.

Values equal the ``LEVEL_*`` constants of ``sim_fidelity_interfaces/srv/SetFidelity``.
"""
from __future__ import annotations

import enum

import numpy as np

from .errors import LevelError


class Level(enum.IntEnum):
    """Ordered fidelity levels: HIGH > MEDIUM > LOW."""

    LOW = 0
    MEDIUM = 1
    HIGH = 2


LEVEL_DTYPE = np.int8  # dtype of the per-tree level arrays


def parse_level(value: object) -> Level:
    """A Level from a Level, an int (0-2) or a case-insensitive name; LevelError otherwise."""
    if isinstance(value, Level):
        return value
    if isinstance(value, str):
        try:
            return Level[value.strip().upper()]
        except KeyError:
            pass
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        try:
            return Level(int(value))
        except ValueError:
            pass
    names = ", ".join(level.name.lower() for level in Level)
    raise LevelError(f"bad level {value!r}: expected one of {names} (or 0-2)")
