"""The paper's 1-D example (section IV, Figs. 4 and 6) end to end; ``simfid example oned`` runs it.

1. *Design*: the original software (a saturated spring, ``track.spring_policy``) flies
   the missions on the design track; *Deploy*: the same missions on the track with difficult
   regions placed at random (they stand in for the real world). Both log H as bags through the
   real bag path (``write_run``), one bag per mission.
2. Kernels: ``read_histories`` on both bag sets, ``generate`` (Algorithm 1), saved as a kernels
   file.
3. *Kernels*: the original software on the design track with the kernel manager applying the
   kernels in process (``KernelRunner`` on the engine, the terrain flag through the settable
   sensor).
4. *Redes/K*: software redesigned by SARSA trained on the kernel-modified simulation, flown
   there; *Redeploy*: the redesigned software on the deployment track, no kernels.

Every phase flies the same start positions. The Average Total Reward (ATR) after mission n is
the sum of the mission rewards so far over n; the figures plot it against n.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
from tqdm import tqdm

from ..data import data_dir
from ..reality_gap.bags import read_histories
from ..reality_gap.kernel_file import save_kernels
from ..reality_gap.kernel_set import KernelRunner, KernelSet
from ..reality_gap.kernels import Summary, generate
from ..reality_gap.record import write_run
from ..reality_gap.spec import Spec, load_spec
from ..world_generators.one_d_track import random_regions
from .errors import OnedError
from .sarsa import Sarsa
from .track import Policy, Track, run_mission, spring_policy, starts

SPEC = data_dir("config") / "reality_gap" / "one_d_example.yaml"
PHASES = ("Design", "Deploy", "Kernels", "Redes/K", "Redeploy")
# Probes of transfer to commands the deployment data does not hold: the original law with
# another saturation (the data's commands are at most 2 m/s, mostly exactly 2 m/s mid-track)
PROBES = (1.0, 3.0)  # m/s
PROBE_WORLDS = ("Design", "Kernels", "Deploy")
REGIONS = 2  # difficult regions in the deployment world
STYLES = ("-", "-", "-", "--", ":")  # curves that coincide stay visible


@dataclass
class Outcome:
    missions: int
    seed: int
    regions: list[tuple[float, float]]
    totals: dict[str, np.ndarray]  # phase -> (missions,) total reward per mission
    summary: Summary
    kernel_hits: dict[str, int]  # phase -> corrections the kernel manager made
    probes: dict[float, dict[str, float]]  # saturation -> world -> ATR of the probe software
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def atr(self) -> dict[str, float]:
        return {p: float(t.mean()) for p, t in self.totals.items()}

    @property
    def reproduced(self) -> float:
        """Share of the reality gap the kernels reproduce: (Design - Kernels) / (Design -
        Deploy); 1 when the kernel-modified simulation scores as the deployment did."""
        atr = self.atr
        return (atr["Design"] - atr["Kernels"]) / (atr["Design"] - atr["Deploy"])

    def curves(self) -> dict[str, np.ndarray]:
        return {p: np.cumsum(t) / np.arange(1, len(t) + 1) for p, t in self.totals.items()}

    def to_dict(self) -> dict:
        return {"missions": self.missions, "seed": self.seed, "regions": self.regions,
                "atr": self.atr, "gap_reproduced": self.reproduced,
                "kernels": self.summary.to_dict(),
                "kernel_corrections": self.kernel_hits,
                "probes": {f"vel = 5 delta, saturated at {v:g} m/s": atr
                           for v, atr in self.probes.items()},
                "seconds": {k: round(v, 2) for k, v in self.seconds.items()}}


def _fly(track: Track, policy: Policy, x0: np.ndarray, goals: np.ndarray,
         runner: KernelRunner | None = None, bags: Path | None = None, spec: Spec | None = None,
         bar: Callable[[Iterable, str], Iterable] = lambda it, _d: it
         ) -> tuple[np.ndarray, list[Path], int]:
    totals, paths, hits = np.empty(len(x0)), [], 0
    for i in bar(range(len(x0)), ""):
        m = run_mission(track, policy, x0[i], goals[i], runner)
        totals[i], hits = m.total, hits + m.kernel_hits
        if bags is not None:
            paths.append(write_run(bags / f"mission_{i:05d}", spec, m.times, m.states,
                                   m.actions, m.rewards))
    return totals, paths, hits


def run_example(missions: int, seed: int = 0, episodes: int | None = None,
                workdir: Path | None = None, progress: bool = False) -> Outcome:
    """All five phases; bags and the kernels file go to ``workdir`` (a temporary one if None).
    ``episodes``: SARSA training missions (default: ``missions``, at least 500)."""
    if missions < 1:
        raise OnedError(f"1-D example: missions must be >= 1, got {missions}")
    with tempfile.TemporaryDirectory(prefix="simfid_oned_") as tmp:
        return _run(missions, seed, episodes or max(missions, 500),
                    Path(workdir) if workdir else Path(tmp), progress)


def _run(missions: int, seed: int, episodes: int, work: Path, progress: bool) -> Outcome:
    def bar(desc: str):
        return (lambda it, _d: tqdm(it, desc=desc, leave=False)) if progress else \
            (lambda it, _d: it)

    spec = load_spec(SPEC)
    regions = random_regions(REGIONS, np.random.default_rng(seed))
    x0, goals = starts(missions, seed + 1)
    software = spring_policy()
    design, deploy = Track(), Track(regions)
    totals, bags, hits, seconds = {}, {}, {}, {}

    t0 = time.perf_counter()
    for phase, track in (("Design", design), ("Deploy", deploy)):
        totals[phase], bags[phase], _ = _fly(track, software, x0, goals, bags=work / phase,
                                             spec=spec, bar=bar(f"{phase} (+ bags)"))
    seconds["design_deploy_and_bags"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    h_sim, h_phy = read_histories(bags["Design"], spec), read_histories(bags["Deploy"], spec)
    seconds["read_bags"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    gen = generate(h_sim, h_phy, spec, seed=seed, progress=progress)
    save_kernels(work / "kernels.yaml", spec, gen.kernels, gen.summary.to_dict())
    seconds["generate"] = time.perf_counter() - t0
    runner = design.kernel_runner(KernelSet(gen.kernels, spec))

    t0 = time.perf_counter()
    totals["Kernels"], _, hits["Kernels"] = _fly(design, software, x0, goals, runner,
                                                 bar=bar("Kernels"))
    seconds["kernels"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    agent = Sarsa(np.random.default_rng(seed + 2))
    _fly(design, agent, *starts(episodes, seed + 3), runner, bar=bar("SARSA training"))
    agent.greedy()
    seconds["sarsa_training"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    totals["Redes/K"], _, hits["Redes/K"] = _fly(design, agent, x0, goals, runner,
                                                 bar=bar("Redes/K"))
    totals["Redeploy"], _, _ = _fly(deploy, agent, x0, goals, bar=bar("Redeploy"))
    seconds["redesign_runs"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    probes = {}
    for v_max in PROBES:
        probe = spring_policy(v_max=v_max)
        worlds = {"Design": (design, None), "Kernels": (design, runner), "Deploy": (deploy, None)}
        probes[v_max] = {w: float(_fly(track, probe, x0, goals, run, bar=bar(f"probe {w}"))[0]
                                  .mean()) for w, (track, run) in worlds.items()}
    seconds["probes"] = time.perf_counter() - t0
    seconds["total"] = sum(seconds.values())
    return Outcome(missions, seed, regions, {p: totals[p] for p in PHASES}, gen.summary, hits,
                   probes, seconds)


def plot(outcome: Outcome, folder: Path) -> list[Path]:
    """Fig. 4 (Design, Deploy) and Fig. 6 (all phases) style ATR graphs as PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    curves, n = outcome.curves(), np.arange(1, outcome.missions + 1)
    out = []
    for name, phases, title in (
            ("oned_fig4.png", ("Design", "Deploy"), "ATR at design and deployment (cf. Fig. 4)"),
            ("oned_fig6.png", PHASES, "ATR with kernels and redesign (cf. Fig. 6)")):
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        for p, style, width in zip(phases, STYLES, np.linspace(3.0, 1.2, len(phases))):
            ax.plot(n, curves[p], style, lw=width, label=f"{p} ({outcome.atr[p]:+.2f})")
        ax.set(xlabel="missions", ylabel="average total reward", ylim=(-10.5, 10.5),
               title=f"1-D example: {title}")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left", fontsize=8)
        fig.tight_layout()
        fig.savefig(folder / name, dpi=110)
        plt.close(fig)
        out.append(folder / name)
    return out


def spread(outcomes: list[Outcome]) -> dict[str, dict[str, float]]:
    """Mean, standard deviation, min and max over seeds of each phase's ATR and of the share
    of the gap reproduced."""
    values = {p: np.array([o.atr[p] for o in outcomes]) for p in PHASES}
    values["gap reproduced"] = np.array([o.reproduced for o in outcomes])
    for v_max in PROBES:
        for world in PROBE_WORLDS:
            values[f"probe {v_max:g} {world}"] = np.array([o.probes[v_max][world]
                                                          for o in outcomes])
    return {k: {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if len(v) > 1 else 0.0,
                "min": float(v.min()), "max": float(v.max())} for k, v in values.items()}


def report_spread(outcomes: list[Outcome]) -> str:
    """The spread over seeds as text."""
    seeds = ", ".join(str(o.seed) for o in outcomes)
    lines = [f"1-D example over seeds {seeds} ({outcomes[0].missions} missions each; "
             "difficult regions drawn per seed)", "",
             f"{'phase':<19} {'mean':>7} {'sd':>6} {'min':>7} {'max':>7}"]
    for name, v in spread(outcomes).items():
        scale = 100.0 if name == "gap reproduced" else 1.0
        lines.append(f"{name:<19} {scale * v['mean']:>+7.2f} {scale * v['sd']:>6.2f} "
                     f"{scale * v['min']:>+7.2f} {scale * v['max']:>+7.2f}"
                     + (" %" if scale == 100.0 else ""))
    return "\n".join(lines)


def report(o: Outcome) -> str:
    """The phases' Average Total Rewards, the kernels and the time spent, as text."""
    s = o.summary
    lines = [f"1-D example (paper 001, IV): {o.missions} missions, seed {o.seed}, difficult "
             f"regions {o.regions}", "", "phase      ATR"]
    lines += [f"{p:<9} {v:+7.2f}" for p, v in o.atr.items()]
    lines += [f"gap reproduced by the kernels: {100 * o.reproduced:.0f} % "
              "((Design - Kernels) / (Design - Deploy))", "",
              "probe software (commands the deployment data lacks): ATR in " +
              ", ".join(PROBE_WORLDS)]
    lines += [f"  vel = 5 delta, saturated at {v:g} m/s: " +
              ", ".join(f"{w} {atr[w]:+.2f}" for w in PROBE_WORLDS) for v, atr in o.probes.items()]
    lines += ["", f"kernels    {s.kernels} from {s.transitions_sim} sim / {s.transitions_phy} "
              f"deployment transitions ({s.divergences} divergent roll-outs of {s.rollouts}, "
              f"{s.dropped} dropped, {s.immaterial} immaterial)",
              f"kernel corrections: Kernels {o.kernel_hits['Kernels']}, "
              f"Redes/K {o.kernel_hits['Redes/K']}",
              "time       " + ", ".join(f"{k} {v:.1f} s" for k, v in o.seconds.items())]
    return "\n".join(lines)
