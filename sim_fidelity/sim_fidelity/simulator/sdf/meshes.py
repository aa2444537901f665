"""Mesh files MuJoCo cannot read itself: ASCII STL (MuJoCo reads binary STL and OBJ)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .xmltree import Node


def ascii_stl(path: Path, where: Node) -> np.ndarray | None:
    """Vertices (3 per facet) of an ASCII STL file, or None for a binary one."""
    data = path.read_bytes()
    if not data[:5].lower() == b"solid" or (
            len(data) >= 84 and 84 + 50 * int.from_bytes(data[80:84], "little") == len(data)):
        return None
    verts = []
    try:
        for line in data.decode("ascii", errors="replace").splitlines():
            parts = line.split()
            if parts and parts[0] == "vertex":
                verts.append([float(v) for v in parts[1:4]])
    except ValueError:
        raise where.error(f"ASCII STL '{path}' has a malformed vertex") from None
    if not verts or len(verts) % 3:
        raise where.error(f"ASCII STL '{path}' has no complete facets")
    return np.array(verts, dtype=np.float32)
