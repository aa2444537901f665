"""Vectorised axis-aligned bounding boxes of oriented boxes, and fast row reductions."""
from __future__ import annotations

import numpy as np

# Rotation matrix of a unit xyzw quaternion as an affine map of its 10 distinct products:
# R.flat = eye(3).flat + (q[_I] * q[_J]) @ _M.
_I = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 3])
_J = np.array([0, 1, 2, 3, 1, 2, 3, 2, 3, 3])


def _rotation_map() -> np.ndarray:
    pair = {(int(a), int(b)): k for k, (a, b) in enumerate(zip(_I, _J))}
    x, y, z, w = range(4)
    terms = {0: [(y, y, -2), (z, z, -2)], 1: [(x, y, 2), (z, w, -2)], 2: [(x, z, 2), (y, w, 2)],
             3: [(x, y, 2), (z, w, 2)], 4: [(x, x, -2), (z, z, -2)], 5: [(y, z, 2), (x, w, -2)],
             6: [(x, z, 2), (y, w, -2)], 7: [(y, z, 2), (x, w, 2)], 8: [(x, x, -2), (y, y, -2)]}
    m = np.zeros((10, 9))
    for k, products in terms.items():
        for a, b, c in products:
            m[pair[(a, b)], k] += c
    return m


_M = _rotation_map()
_EYE = np.eye(3).ravel()


def abs_rotation(q: np.ndarray) -> np.ndarray:
    """Element-wise absolute rotation matrices ``(n, 3, 3)`` of unit xyzw quaternions ``(n, 4)``."""
    qt = q.T
    return np.abs((qt[_I] * qt[_J]).T @ _M + _EYE).reshape(len(q), 3, 3)


def box_aabbs(poses: np.ndarray, half_extents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper corners ``(n, 3)`` of the AABBs of boxes centred at ``poses`` (n, 7)."""
    half = np.einsum("nij,nj->ni", abs_rotation(poses[:, 3:7]), half_extents)
    return poses[:, :3] - half, poses[:, :3] + half


def row_sums(a: np.ndarray) -> np.ndarray:
    """Sum of each row of a 2-D array (True counts 1): a product with ones, several times faster
    than ``sum``/``all``/``any`` over a short last axis."""
    return a @ np.ones(a.shape[1])
