"""Entity states from MuJoCo's arrays, one compiled loop over the rows (:mod:`..jit`).

Poses are ``[p, quat xyzw]``, twists ``[v, w]`` in the world frame, of the reference body's frame
(:meth:`.engine.MujocoEngine.get_states` applies the entity-frame offsets afterwards). The
formulas are written out in :mod:`.poses`'s order (``quat_rotate``, ``cross``), so the results
are those of the same numpy expressions bit for bit.
"""
from __future__ import annotations

import numpy as np

from ..jit import kernel


@kernel
def free_state(qpos: np.ndarray, qvel: np.ndarray, qidx: np.ndarray, didx: np.ndarray,
               pose: np.ndarray, twist: np.ndarray) -> None:
    """The pose and twist of a free body: ``qpos[qidx]`` (``qidx`` orders it ``[p, quat
    xyzw]``), ``qvel[didx]`` ``[v world, w body]`` with ``w`` rotated to the world frame."""
    for j in range(7):
        pose[j] = qpos[qidx[j]]
    for j in range(3):
        twist[j] = qvel[didx[j]]
    ux, uy, uz, w = pose[3], pose[4], pose[5], pose[6]
    vx, vy, vz = qvel[didx[3]], qvel[didx[4]], qvel[didx[5]]
    tx, ty, tz = 2.0 * (uy * vz - uz * vy), 2.0 * (uz * vx - ux * vz), 2.0 * (ux * vy - uy * vx)
    twist[3] = vx + w * tx + (uy * tz - uz * ty)
    twist[4] = vy + w * ty + (uz * tx - ux * tz)
    twist[5] = vz + w * tz + (ux * ty - uy * tx)


@kernel
def free_states(qpos: np.ndarray, qvel: np.ndarray, qidx: np.ndarray, didx: np.ndarray,
                rows: np.ndarray, poses: np.ndarray, twists: np.ndarray) -> None:
    """:func:`free_state` of the ``k``-th free body into row ``rows[k]``."""
    for k in range(rows.shape[0]):
        free_state(qpos, qvel, qidx[k], didx[k], poses[rows[k]], twists[rows[k]])


@kernel
def body_states(xpos: np.ndarray, xquat: np.ndarray, cvel: np.ndarray, subtree_com: np.ndarray,
                rootid: np.ndarray, bids: np.ndarray, rows: np.ndarray, poses: np.ndarray,
                twists: np.ndarray) -> None:
    """Pose and twist of body ``bids[row]`` into each row of ``rows``, from the kinematics
    (``xpos``, ``xquat`` wxyz) and the com-based velocities (``cvel`` ``[w, v at the root's
    subtree com]``), which must be current."""
    for row in rows:
        b = bids[row]
        c = subtree_com[rootid[b]]
        for j in range(3):
            poses[row, j] = xpos[b, j]
            twists[row, 3 + j] = cvel[b, j]
        poses[row, 3], poses[row, 4], poses[row, 5], poses[row, 6] = (
            xquat[b, 1], xquat[b, 2], xquat[b, 3], xquat[b, 0])
        ax, ay, az = cvel[b, 0], cvel[b, 1], cvel[b, 2]
        bx, by, bz = xpos[b, 0] - c[0], xpos[b, 1] - c[1], xpos[b, 2] - c[2]
        twists[row, 0] = cvel[b, 3] + (ay * bz - az * by)
        twists[row, 1] = cvel[b, 4] + (az * bx - ax * bz)
        twists[row, 2] = cvel[b, 5] + (ax * by - ay * bx)


def load() -> None:
    """Load both loops now (compiled the first time on a machine, a few seconds; then read from
    Numba's cache, about half a second): a server calls this before it answers, so that its
    first state request does not wait for them. Empty arrays of the types the engine passes."""
    poses, twists, rows = np.zeros((0, 7)), np.zeros((0, 6)), np.zeros(0, np.intp)
    free_states(np.zeros(0), np.zeros(0), np.zeros((0, 7), np.intp), np.zeros((0, 6), np.intp),
                rows, poses, twists)
    body_states(np.zeros((0, 3)), np.zeros((0, 4)), np.zeros((0, 6)), np.zeros((0, 3)),
                np.zeros(0, np.int32), rows, rows, poses, twists)
