"""Paper 001's field test (sections V-VI, Figs. 9-10) end to end; ``simfid example ackermann``.

1. *Design*: the original mission software flies N missions on the design field; *Deploy*: the
   same missions (same starts, same noise seeds) on the deployment field, which stands in for
   the real one. Each mission is logged to a bag through the recording writer with the
   recording preset's topics (``fly.py``).
2. Kernels: the bags read through ``config/reality_gap/ackermann_ugv.yaml`` (GPS fix to the
   course plane, IMU yaw and pitch, the Ackermann command, the monitor's reward), Algorithm 1
   with the spec's 100 paired roll-outs, saved as a kernels file.
3. *Kernels*: the original software on the design field with the kernel manager setting the
   vehicle's pose (x, y, yaw, pitch) through the Simulator protocol.
4. *Redes/K*: the redesigned software (the pitch check) on the kernel-managed design field;
   *Redeploy*: the redesigned software on the deployment field, no kernels.

The Average Total Reward (ATR) after mission n is the sum of the mission totals so far over n.
"""
from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
from tqdm import tqdm

from ..data import data_dir
from ..errors import SimFidelityError
from ..reality_gap.bags import History, read_histories
from ..reality_gap.kernel_file import save_kernels
from ..reality_gap.kernel_set import KernelRunner, KernelSet
from ..reality_gap.kernels import Kernel, Summary, generate
from ..reality_gap.spec import load_spec
from ..world_generators.ackermann_course import Ramp
from .course import WAYPOINTS
from .fly import Flight, Start, fly, starts
from .mission import MissionParams
from .vehicle import UgvSim

SPEC = data_dir("config") / "reality_gap" / "ackermann_ugv.yaml"
PHASES = ("Design", "Deploy", "Kernels", "Redes/K", "Redeploy")
STYLES = ("-", "-", "-", "--", ":")


class PipelineError(SimFidelityError):
    """A pipeline run that cannot start (bad mission count)."""


@dataclass
class Outcome:
    missions: int
    seed: int
    totals: dict[str, np.ndarray]  # phase -> (missions,) total reward per mission
    arrivals: dict[str, np.ndarray]  # phase -> (missions,) arrival time, NaN if none
    tracks: dict[str, list[np.ndarray]]  # Design, Deploy -> true x, y per mission
    summary: Summary
    kernels: list[Kernel]
    kernel_hits: dict[str, int]  # phase -> corrections made by the kernel manager
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def atr(self) -> dict[str, float]:
        return {p: float(t.mean()) for p, t in self.totals.items()}

    def curves(self) -> dict[str, np.ndarray]:
        return {p: np.cumsum(t) / np.arange(1, len(t) + 1) for p, t in self.totals.items()}

    def ordering(self) -> dict[str, bool]:
        """The paper's shape: Deploy < Design; Kernels < Design; Redes/K > Kernels;
        Redeploy > Deploy (Kernels near Deploy is judged in the docs, from the numbers)."""
        a = self.atr
        return {"Deploy < Design": a["Deploy"] < a["Design"],
                "Kernels < Design": a["Kernels"] < a["Design"],
                "Redes/K > Kernels": a["Redes/K"] > a["Kernels"],
                "Redeploy > Deploy": a["Redeploy"] > a["Deploy"]}

    def to_dict(self) -> dict:
        return {"missions": self.missions, "seed": self.seed, "atr": self.atr,
                "ordering": self.ordering(), "kernels": self.summary.to_dict(),
                "kernel_centres": [k.centre.round(3).tolist() for k in self.kernels],
                "kernel_corrections": self.kernel_hits,
                "kernels_acted": any(self.kernel_hits.values()),
                "on_time": {p: int((t > 0).sum()) for p, t in self.totals.items()},
                "mean_arrival_s": {p: None if np.isnan(a).all() else round(float(np.nanmean(a)), 2)
                                   for p, a in self.arrivals.items()},
                "seconds": {k: round(v, 2) for k, v in self.seconds.items()}}


def run_pipeline(missions: int, seed: int = 0, workdir: Path | None = None,
                 progress: bool = False) -> Outcome:
    """All five phases; bags and the kernels file go to ``workdir`` (a temporary one if None)."""
    if missions < 1:
        raise PipelineError(f"ackermann example: missions must be >= 1, got {missions}")
    with tempfile.TemporaryDirectory(prefix="simfid_ackermann_") as tmp:
        return _run(missions, seed, Path(workdir) if workdir else Path(tmp), progress)


def _phase(sim: UgvSim, params: MissionParams, plan: list[Start], desc: str, progress: bool,
           bags: Path | None = None, runner: KernelRunner | None = None) -> list[Flight]:
    if bags is not None:
        bags.mkdir(parents=True, exist_ok=True)
    it: Iterable = tqdm(plan, desc=desc, leave=False) if progress else plan
    return [fly(sim, params, s, None if bags is None else bags / f"mission_{i:04d}", runner)
            for i, s in enumerate(it)]


def _run(missions: int, seed: int, work: Path, progress: bool) -> Outcome:
    spec = load_spec(SPEC)
    plan = starts(missions, seed)
    original, redesign = MissionParams(), MissionParams().redesigned()
    design = UgvSim.from_world("design", seed=seed)
    deploy = UgvSim.from_world("deploy", seed=seed + 1)
    flights, seconds, hits = {}, {}, {}

    def timed(key: str, work_fn: Callable[[], object]):
        t0 = time.perf_counter()
        out = work_fn()
        seconds[key] = time.perf_counter() - t0
        return out

    flights["Design"] = timed("design", lambda: _phase(
        design, original, plan, "Design (+ bags)", progress, work / "design"))
    flights["Deploy"] = timed("deploy", lambda: _phase(
        deploy, original, plan, "Deploy (+ bags)", progress, work / "deploy"))

    def kernels() -> tuple[History, History, object]:
        h_sim = read_histories([f.bag for f in flights["Design"]], spec)
        h_phy = read_histories([f.bag for f in flights["Deploy"]], spec)
        gen = generate(h_sim, h_phy, spec, seed=seed, progress=progress)
        save_kernels(work / "kernels.yaml", spec, gen.kernels, gen.summary.to_dict())
        return gen
    gen = timed("kernel_generation", kernels)
    runner = KernelRunner(design.engine, KernelSet(gen.kernels, spec), sensors=design.sensors)
    for phase, params in (("Kernels", original), ("Redes/K", redesign)):
        flights[phase] = timed(phase.lower().replace("/", "_"), lambda p=params, n=phase: _phase(
            design, p, plan, n, progress, runner=runner))
        hits[phase] = sum(f.kernel_hits for f in flights[phase])
    flights["Redeploy"] = timed("redeploy", lambda: _phase(
        deploy, redesign, plan, "Redeploy", progress))
    seconds["total"] = sum(seconds.values())
    return Outcome(
        missions, seed,
        totals={p: np.array([f.total for f in flights[p]]) for p in PHASES},
        arrivals={p: np.array([np.nan if f.arrived_at is None else f.arrived_at
                               for f in flights[p]]) for p in PHASES},
        tracks={p: [f.track for f in flights[p]] for p in ("Design", "Deploy")},
        summary=gen.summary, kernels=gen.kernels, kernel_hits=hits, seconds=seconds)


def report(o: Outcome) -> str:
    """Transitions, common states, divergences, kernels and the phases' ATR as text."""
    s = o.summary
    per_mission = {k: v / o.missions for k, v in o.seconds.items()
                   if k not in ("kernel_generation", "total")}
    lines = [f"Ackermann waypoint course (paper 001, V-VI): {o.missions} missions per phase, "
             f"seed {o.seed}", "",
             f"transitions  sim {s.transitions_sim}, deployment {s.transitions_phy} "
             "(paper: 951 / 942)",
             f"common states {s.common_states} nodes, holding {s.common_samples_sim} sim and "
             f"{s.common_samples_phy} deployment states (paper: 882 states)",
             f"divergent nodes {s.divergent_nodes} of {s.tested_nodes} tested",
             f"roll-outs    {s.rollouts}, divergences {s.divergences}",
             f"kernels      {s.kernels} (paper: 15); {s.dropped} dropped, {s.immaterial} "
             "immaterial",
             f"kernel corrections: Kernels {o.kernel_hits['Kernels']}, "
             f"Redes/K {o.kernel_hits['Redes/K']}", "", "phase      ATR    on time"]
    lines += [f"{p:<9} {v:+7.2f}  {int((o.totals[p] > 0).sum()):>3}/{o.missions}"
              for p, v in o.atr.items()]
    lines += ["", "ordering     " + ", ".join(f"{k}: {'yes' if v else 'NO'}"
                                              for k, v in o.ordering().items())]
    if not any(o.kernel_hits.values()):
        lines += ["             (no kernel corrections: Kernels and Redes/K ran on the unmodified "
                  "design field, so their relations are run-to-run noise)"]
    lines += ["time         " + ", ".join(f"{k} {v:.1f} s" for k, v in o.seconds.items()),
              "per mission  " + ", ".join(f"{k} {v:.2f} s" for k, v in per_mission.items())]
    return "\n".join(lines)


def plot(o: Outcome, folder: Path) -> list[Path]:
    """Fig. 9a-b (tracks), 9c/10b (ATR graphs), 10a (kernel centres over deployment tracks)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    folder.mkdir(parents=True, exist_ok=True)
    wp = np.array(WAYPOINTS)
    out = []

    def save(fig, name: str) -> None:
        fig.tight_layout()
        fig.savefig(folder / name, dpi=110)
        plt.close(fig)
        out.append(folder / name)

    fig, axes = plt.subplots(1, 2, figsize=(9.0, 5.0), sharey=True)
    for ax, phase, tag in zip(axes, ("Design", "Deploy"), "ab"):
        for i, track in enumerate(o.tracks[phase]):
            ax.plot(track[:, 0], track[:, 1], ".", ms=1.5, alpha=0.5,
                    label=f"missions ({len(o.tracks[phase])})" if i == 0 else None)
        ax.plot(wp[:, 0], wp[:, 1], "k+", ms=14, mew=2, label="waypoints")
        ax.legend(loc="lower left", fontsize=8)
        ax.set(title=f"({tag}) {phase} tracks (cf. Fig. 9{tag})", xlabel="x east (m)",
               aspect="equal")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("y north (m)")
    save(fig, "ackermann_tracks.png")

    curves, n = o.curves(), np.arange(1, o.missions + 1)
    for name, phases, title in (
            ("ackermann_atr_design_deploy.png", PHASES[:2], "design and deployment (cf. 9c)"),
            ("ackermann_atr.png", PHASES, "kernels, redesign, redeployment (cf. 10b)")):
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        for p, style, width in zip(phases, STYLES, np.linspace(3.0, 1.2, len(phases))):
            ax.plot(n, curves[p], style, lw=width, label=f"{p} ({o.atr[p]:+.2f})")
        ax.set(xlabel="missions", ylabel="average total reward", ylim=(-10.5, 10.5),
               title=f"Ackermann course: ATR, {title}")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left", fontsize=8)
        save(fig, name)

    fig, ax = plt.subplots(figsize=(5.5, 6.0))
    for track in o.tracks["Deploy"]:
        ax.plot(track[:, 0], track[:, 1], ".", color="0.6", ms=1.5, alpha=0.5)
    ramp = Ramp()
    half = ramp.top / 2 + ramp.height / math.tan(ramp.slope)  # the footprint's half-length
    ax.add_patch(Rectangle((ramp.centre_x - half, ramp.centre_y - ramp.width / 2), 2 * half,
                           ramp.width, fill=False, ec="tab:brown", lw=1.5,
                           label="ramp (deployment field)"))
    if o.kernels:
        centres = np.array([k.centre for k in o.kernels])
        members = np.vstack([k.members for k in o.kernels])
        ax.plot(members[:, 0], members[:, 1], "s", mfc="none", color="tab:orange", ms=5,
                label=f"kernel region nodes ({len(members)})")
        ax.plot(centres[:, 0], centres[:, 1], "o", color="red", ms=6,
                label=f"kernel centres ({len(o.kernels)})")
    ax.plot(wp[:, 0], wp[:, 1], "k+", ms=14, mew=2, label="waypoints")
    ax.legend(loc="lower left", fontsize=8)
    ax.set(title=f"Kernel centres over the deployment tracks (cf. Fig. 10a)\n"
                 f"{len(o.kernels)} kernels from {o.missions} missions per side",
           xlabel="x east (m)", ylabel="y north (m)", aspect="equal")
    ax.grid(alpha=0.3)
    save(fig, "ackermann_kernels.png")
    return out
