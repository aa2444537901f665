"""Vectorised rigid-transform helpers. Poses are ``[x, y, z, qx, qy, qz, qw]`` (ROS order).

MuJoCo stores quaternions as ``[w, x, y, z]``; :func:`xyzw_to_wxyz` and :func:`wxyz_to_xyzw`
convert. Every function accepts a single pose ``(7,)`` or a batch ``(n, 7)``.
"""
from __future__ import annotations

import numpy as np

from .errors import InvalidPoseError

IDENTITY = np.array([0.0, 0, 0, 0, 0, 0, 1])


def xyzw_to_wxyz(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    return q[..., [3, 0, 1, 2]]


def wxyz_to_xyzw(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    return q[..., [1, 2, 3, 0]]


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of xyzw quaternions."""
    ax, ay, az, aw = np.moveaxis(np.asarray(a, float), -1, 0)
    bx, by, bz, bw = np.moveaxis(np.asarray(b, float), -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz], axis=-1)


def quat_conj(q: np.ndarray) -> np.ndarray:
    q = np.array(q, dtype=float)
    q[..., :3] *= -1
    return q


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product over the last axis (np.cross without its per-call axis bookkeeping)."""
    ax, ay, az = a[..., 0], a[..., 1], a[..., 2]
    bx, by, bz = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx], axis=-1)


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors ``v`` by xyzw quaternions ``q``."""
    q = np.asarray(q, float)
    v = np.asarray(v, float)
    u, w = q[..., :3], q[..., 3:4]
    t = 2.0 * cross(u, v)
    return v + w * t + cross(u, t)


def compose(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a * b``: pose ``b`` expressed in frame ``a`` mapped to ``a``'s parent frame."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    p = a[..., :3] + quat_rotate(a[..., 3:], b[..., :3])
    return np.concatenate([p, quat_mul(a[..., 3:], b[..., 3:])], axis=-1)


def inverse(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, float)
    qi = quat_conj(a[..., 3:])
    return np.concatenate([-quat_rotate(qi, a[..., :3]), qi], axis=-1)


def rpy_to_quat(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Fixed-axis roll-pitch-yaw (SDF ``<pose>``: rotate about x, then y, then z) to xyzw."""
    cr, sr = np.cos(roll / 2), np.sin(roll / 2)
    cp, sp = np.cos(pitch / 2), np.sin(pitch / 2)
    cy, sy = np.cos(yaw / 2), np.sin(yaw / 2)
    return np.array([sr * cp * cy - cr * sp * sy,
                     cr * sp * cy + sr * cp * sy,
                     cr * cp * sy - sr * sp * cy,
                     cr * cp * cy + sr * sp * sy])


def quat_to_rpy(q: np.ndarray) -> np.ndarray:
    """xyzw quaternion(s) to fixed-axis roll, pitch, yaw."""
    x, y, z, w = np.moveaxis(np.asarray(q, float), -1, 0)
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.stack([roll, pitch, yaw], axis=-1)


def normalized_or_raise(q: np.ndarray, tol: float = 1e-3) -> np.ndarray:
    """Normalise xyzw quaternions; raise InvalidPoseError where not finite or far from unit
    length."""
    q = np.asarray(q, float)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    if not np.all(np.isfinite(q)) or np.any(np.abs(n - 1.0) > tol):
        raise InvalidPoseError("quaternion is not finite or not of unit length")
    return q / n


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
