"""The fidelity levels' colours: three of Okabe and Ito's colour-blind-safe palette, fixed."""
from __future__ import annotations

import numpy as np

from ..fidelity_manager.levels import Level

# Okabe-Ito: blue, orange, reddish purple (told apart under the common colour-vision deficiencies).
LEVEL_HEX: dict[Level, str] = {Level.HIGH: "#0072B2", Level.MEDIUM: "#E69F00",
                               Level.LOW: "#CC79A7"}


def hex_rgb(text: str) -> tuple[int, int, int]:
    """``#RRGGBB`` as three 0-255 integers."""
    return int(text[1:3], 16), int(text[3:5], 16), int(text[5:7], 16)


# (3, 4) RGBA in 0..1, indexed by Level value (LOW = 0, MEDIUM = 1, HIGH = 2).
LEVEL_RGBA = np.array([[*(c / 255 for c in hex_rgb(LEVEL_HEX[level])), 1.0]
                       for level in sorted(Level)], np.float32)
LEVEL_RGB8 = (LEVEL_RGBA[:, :3] * 255).round().astype(np.uint8)
