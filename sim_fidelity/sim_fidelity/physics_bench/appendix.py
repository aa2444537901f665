"""Paper 002's Appendix checks on the embedded engine: a box starting inside the ground recovers
without gaining energy (Fig. 20), and an impact on the ground is inelastic (Fig. 21).

ODE corrects penetration with an ERP term in the velocity equation, which adds energy (the box
is launched); the report's fix solves position and velocity separately. MuJoCo has no such split:
its soft contacts correct penetration through a reference acceleration ``-b v - k r`` of a
spring-damper (``solref``: time constant, damping ratio; default ``(0.02, 1)``, critically
damped). From a deep start the spring drives the box out faster and faster; the damper would then
have to *pull* to slow it down, which a contact cannot, so the box leaves the ground at the
spring-damper's peak speed. Each check runs three contacts: MuJoCo's default, an overdamped one
(damping ratio 3: a slower push-out whose peak speed stays small) and an underdamped one (0.1,
what an ERP-like correction that ignores velocity does).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..simulator.engine import MujocoEngine
from ..world_generators.sdf_text import box_model, ground_plane, world

EDGE = 0.4  # box edge [m]
MASS = 1.0  # [kg]
G = 9.8
CONTACTS = {"default solref (0.02, 1): critically damped": (0.02, 1.0),
            "solref (0.02, 3): overdamped": (0.02, 3.0),
            "solref (0.02, 0.1): underdamped, ERP-like": (0.02, 0.1)}


@dataclass(frozen=True)
class Trajectory:
    """Height and vertical velocity of the box's centre, every step."""

    label: str
    t: np.ndarray
    z: np.ndarray
    vz: np.ndarray

    def rebound(self) -> float:
        """Highest the centre rises above its resting height after first touching the ground."""
        first = int(np.argmax(self.z < EDGE / 2 + 0.001))
        return float(self.z[first:].max() - EDGE / 2)

    def energy(self) -> np.ndarray:
        """Mechanical energy per unit mass relative to resting on the ground [J/kg]."""
        return 0.5 * self.vz ** 2 + G * (self.z - EDGE / 2)


def run_box(start_z: float, solref: tuple[float, float], label: str,
            duration: float = 2.0) -> Trajectory:
    """A box released at rest with its centre at ``start_z`` above a ground plane."""
    engine = MujocoEngine.from_string(world("appendix", ground_plane(),
                                            box_model("box", 0.0, 0.0, start_z, EDGE, MASS)))
    engine.model.geom_solref[:] = solref
    n = int(round(duration / engine.step_size))
    t, z, vz = np.empty(n + 1), np.empty(n + 1), np.empty(n + 1)
    pose, twist = engine.get_states(["box"])
    t[0], z[0], vz[0] = 0.0, pose[0, 2], twist[0, 2]
    for i in range(1, n + 1):
        engine.step(1)
        pose, twist = engine.get_states(["box"])
        t[i], z[i], vz[i] = engine.time, pose[0, 2], twist[0, 2]
    return Trajectory(label, t, z, vz)


def penetration(depth: float, duration: float = 2.0) -> list[Trajectory]:
    """The box starting ``depth`` metres inside the ground, under each contact setting."""
    return [run_box(EDGE / 2 - depth, ref, label, duration) for label, ref in CONTACTS.items()]


def impact(height: float = 0.5, duration: float = 1.5) -> list[Trajectory]:
    """The box dropped from ``height`` metres (bottom face above the ground)."""
    return [run_box(EDGE / 2 + height, ref, label, duration) for label, ref in CONTACTS.items()]


def write_figures(folder: Path) -> dict[str, list[Trajectory]]:
    """The three figures (1 cm and 1 m inside the ground, impact) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    checks = {"penetration_1cm": ("box starting 1 cm inside the ground", penetration(0.01)),
              "penetration_1m": ("box starting 1 m inside the ground", penetration(1.0)),
              "impact": ("box dropped from 0.5 m onto the ground", impact())}
    for name, (title, runs) in checks.items():
        plot(title, runs, folder / f"appendix_{name}.png")
    return {name: runs for name, (_, runs) in checks.items()}


def plot(title: str, runs: list[Trajectory], path: Path) -> Path:
    """Height and vertical velocity against time, one line per contact setting (Figs. 20, 21)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax_z, ax_v) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for r in runs:
        ax_z.plot(r.t, r.z, label=r.label)
        ax_v.plot(r.t, r.vz, label=r.label)
    ax_z.axhline(EDGE / 2, color="grey", lw=0.8, ls=":", label="resting height")
    if max(r.z.max() for r in runs) > 5.0:  # a launched box: log scales beyond +-1
        ax_z.set_yscale("symlog", linthresh=1.0)
        ax_v.set_yscale("symlog", linthresh=1.0)
    ax_z.set_ylabel("box centre height z [m]")
    ax_v.set_ylabel("vertical velocity [m/s]")
    ax_v.set_xlabel("time [s]")
    ax_z.set_title(title)
    for ax in (ax_z, ax_v):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
