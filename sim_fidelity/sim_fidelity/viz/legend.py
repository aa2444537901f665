"""The key of the level colours, drawn into a rendered image (bottom left)."""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..fidelity_manager.levels import Level
from .colours import LEVEL_RGB8

ORDER = (Level.HIGH, Level.MEDIUM, Level.LOW)


def draw_legend(image: np.ndarray, counts: dict[Level, int] | None = None,
                title: str = "fidelity") -> np.ndarray:
    """``image`` (H, W, 3 uint8) with a legend of the three levels (and their link counts)."""
    pil = Image.fromarray(image)
    draw = ImageDraw.Draw(pil)
    size = max(10, image.shape[0] // 30)
    font = ImageFont.load_default(size=size)
    rows = [title] + [level.name + (f"  {counts.get(level, 0)}" if counts is not None else "")
                      for level in ORDER]
    width = max(draw.textlength(r, font=font) for r in rows) + 2.2 * size
    pad, line = size // 2, int(size * 1.4)
    x0, y1 = pad, image.shape[0] - pad
    y0 = y1 - line * len(rows) - pad
    draw.rectangle((x0, y0, x0 + width + pad, y1), fill=(255, 255, 255), outline=(0, 0, 0))
    draw.text((x0 + pad, y0 + pad), title, fill=(0, 0, 0), font=font)
    for i, level in enumerate(ORDER, start=1):
        y = y0 + pad + i * line
        draw.rectangle((x0 + pad, y, x0 + pad + size, y + size),
                       fill=tuple(int(c) for c in LEVEL_RGB8[level]), outline=(0, 0, 0))
        draw.text((x0 + pad + 1.5 * size, y), rows[i], fill=(0, 0, 0), font=font)
    return np.asarray(pil)
