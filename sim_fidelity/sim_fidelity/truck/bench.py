"""``simfid bench truck``: the truck-unloading benchmark of paper 000 (Sec. 5, Fig. 4, 6, 7).

Every mode runs the same scenario with the same seeds (repeat ``r`` uses controller seed
``first_seed + r``), one after the other in this process: ``hifi`` (manager off), ``hifi-sleep``
(manager off, MuJoCo's sleeping islands on), ``adfi-1/2/3`` (the presets of ``config/truck.yaml``).
``--still steps,ticks`` runs every manager mode once per stillness clock of the packet signaler
(labels ``adfi-1/steps``, ``adfi-1/ticks``), side by side; ``--medium all,near`` likewise once per
rule 3 of the packet signaler (``adfi-3/all``, ``adfi-3/near``). The controller signals a decision
point before each decision and waits :data:`~.controller.DECISION_SETTLE` in every mode (HiFi too,
so the modes differ by the manager only); the manager refreshes then. Reported per mode: the
real-time factor (sim time / wall time), packets unloaded and the unload rate (packets/hour) with
their spread over repeats, the absolute percent error of the mean rate against ``hifi``, the
manager's time per tick and as a share of the physics step time, HIGH and MEDIUM packets per
tick, the packets lowered from HIGH per sim second, the speed-up against ``hifi-sleep``, and the
targets of issue 23 met or not (the table's last lines). Beside the wall-clock figures, the same
ratios on this thread's CPU time (``cpu x h-sleep``: sim time per CPU second against hifi-sleep's;
``mgr %cpu``: the tick's CPU time against the steps'), which a loaded machine disturbs less.

    simfid bench truck --scenario B --modes hifi,hifi-sleep,adfi-1,adfi-2,adfi-3 --duration 60 \\
        --repeats 3 [--still steps,ticks] [--medium all,near] [--first-seed 0] [--json] \\
        [--plots docs/img]
"""
from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from ..data import data_dir
from ..fidelity_manager import FidelityConfig, FidelityManager, Level
from .controller import CONTROL_PERIOD, DECISION_SETTLE, UnloadingController
from .errors import TruckError
from .robot import load_truck

MODES = ("hifi", "hifi-sleep", "adfi-1", "adfi-2", "adfi-3", "adfi-3-sleep")  # "-sleep": MuJoCo's
# sleeping islands on as well
CONFIG = data_dir("config") / "truck.yaml"
SAMPLE_PERIOD = 1.0  # s of sim time between instantaneous-RTF samples
TICK_PERIOD = 0.04  # s of sim time between manager ticks (a multiple of the control period)
PICK_PHASES = ("extend", "lift", "withdraw", "lower", "release", "retract")
STILL_CLOCKS = ("steps", "ticks")  # the packet signaler's still_clock
MEDIUM_RULES = ("all", "near")  # the packet signaler's rule 3 (medium)
HIGH, MEDIUM = int(Level.HIGH), int(Level.MEDIUM)


def truck_config(still: str | None = None, medium: str | None = None) -> FidelityConfig:
    """``config/truck.yaml``, its packet signalers' ``still_clock`` set to ``still`` and
    ``medium`` to ``medium`` where given."""
    config = FidelityConfig.load(CONFIG)
    for spec in config.signalers.values():
        if spec["type"] == "packet":
            for key, value in (("still_clock", still), ("medium", medium)):
                if value is not None:
                    spec[key] = value
    return config


class ManagerMeter:
    """Wall time in the manager, and per tick the packets HIGH, MEDIUM and those lowered from
    HIGH."""

    def __init__(self, manager: FidelityManager):
        self.manager = manager
        packets = manager.signalers.get("packets")
        self.rows = (np.array([manager.trees.index[t.name] for t in packets.trees], np.intp)
                     if packets is not None else np.zeros(0, np.intp))
        self.wall, self.ticks, self.high, self.medium, self.lowered = 0.0, 0, 0, 0, 0
        self.hook = getattr(packets, "steps", None)  # the per-step stillness hook, if it runs
        self.still_clock = getattr(packets, "still_clock", "")

    def tick(self):
        """One manager tick, measured."""
        return self._measure(self.manager.tick)

    def decision_point(self, settle: float):
        """The manager's decision point, measured (the controller's ``decide``)."""
        return self._measure(lambda: self.manager.decision_point(settle))

    def _measure(self, call):
        before = self.manager.levels[self.rows] == HIGH
        report = call()
        levels = self.manager.levels[self.rows]
        after = levels == HIGH
        self.wall += report.wall
        self.ticks += 1
        self.high += int(after.sum())
        self.medium += int((levels == MEDIUM).sum())
        self.lowered += int((before & ~after).sum())
        return report


def run_once(scenario: str, mode: str, seed: int, duration: float, progress=None,
             tick_period: float = TICK_PERIOD, still: str | None = None,
             medium: str | None = None) -> dict[str, Any]:
    """One run of ``duration`` sim seconds, the manager ticked every ``tick_period`` (a multiple of
    the control period), stillness counted on the ``still`` clock and rule 3 of the packet
    signaler ``medium`` (None: the config's); returns its measurements."""
    preset, sleep = mode.removesuffix("-sleep"), mode.endswith("-sleep")
    sim, robot = load_truck(scenario, sleep=sleep)
    manager = FidelityManager(sim, truck_config(still, medium), preset)
    meter = ManagerMeter(manager)
    controller = UnloadingController(robot, seed=seed, decide=meter.decision_point,
                                     settle=DECISION_SETTLE)
    steps = max(1, int(round(CONTROL_PERIOD / sim.step_size)))
    tick_every = max(1, int(round(tick_period / CONTROL_PERIOD)))
    step_wall = step_cpu = tick_cpu = 0.0  # CPU: this thread's time (MuJoCo steps in it)
    periods = 0
    samples: list[dict[str, float]] = []
    window = (sim.time, 0.0, 0)
    report = None
    with manager:
        start, start_cpu = time.perf_counter(), time.thread_time()
        reached = sim.time  # sim time before the last step (a divergence resets the clock)
        while sim.time < duration - 1e-9 and not sim.divergences:  # after a reset: stop
            controller.tick()
            reached = sim.time
            t0, c0 = time.perf_counter(), time.thread_time()
            sim.step(steps)
            step_wall += time.perf_counter() - t0
            step_cpu += time.thread_time() - c0
            periods += 1
            if periods % tick_every == 0:
                c0 = time.thread_time()
                report = meter.tick()
                tick_cpu += time.thread_time() - c0
            if sim.time - window[0] >= SAMPLE_PERIOD - 1e-9 and report is not None:
                wall = time.perf_counter() - start
                samples.append({"time": round(sim.time, 4),
                                "rtf": (sim.time - window[0]) / max(wall - window[1], 1e-9),
                                "high": report.counts["high"], "unloaded": robot.unloaded})
                if progress is not None:
                    progress.update(sim.time - window[0])
                window = (sim.time, wall, 0)
        wall, cpu = time.perf_counter() - start, time.thread_time() - start_cpu
        if not sim.divergences:
            reached = sim.time
    hook_wall = meter.hook.wall if meter.hook is not None else 0.0
    manager_wall, ticks, physics_steps = meter.wall + hook_wall, meter.ticks, periods * steps
    return {"mode": mode, "seed": seed, "sim_time": reached, "wall": wall,
            "rtf": reached / wall, "unloaded": robot.unloaded,
            "unload_times": [round(t, 3) for t in robot.conveyor.unload_times],
            "rate_per_hour": 3600.0 * robot.unloaded / reached,
            "packets": len(robot.packets),
            "unloaded_pct": 100.0 * robot.unloaded / len(robot.packets),
            "picks": controller.stats.picks, "sweeps": controller.stats.sweeps,
            "still_clock": meter.still_clock,
            "step_wall": step_wall - hook_wall, "manager_wall": manager_wall, "ticks": ticks,
            "manager_us_per_tick": 1e6 * manager_wall / max(ticks, 1),
            "manager_overhead_pct": 100.0 * manager_wall / max(step_wall - hook_wall, 1e-12),
            "cpu": cpu, "rtf_cpu": reached / max(cpu, 1e-12),
            "manager_cpu_pct": 100.0 * tick_cpu / max(step_cpu, 1e-12),
            "hook_us_per_step": 1e6 * hook_wall / max(physics_steps, 1),
            "high_per_tick": meter.high / max(ticks, 1),
            "medium_per_tick": meter.medium / max(ticks, 1),
            "lowered_per_s": meter.lowered / max(reached, 1e-9),
            "unstable_resets": int(sim.data.warning[int(mujoco.mjtWarning.mjWARN_BADQACC)].number),
            "samples": samples,
            "phases": [[round(t, 3), p] for t, p in controller.stats.phases]}


def _mean(runs: list[dict[str, Any]], key: str) -> float:
    return float(np.mean([r[key] for r in runs]))


def summarise(runs: list[dict[str, Any]], modes: list[str]) -> dict[str, dict[str, float]]:
    """Mean and spread per mode; the rate error is against hifi's mean rate (when hifi ran)."""
    out: dict[str, dict[str, float]] = {}
    for mode in modes:
        mine = [r for r in runs if r["mode"] == mode]
        rate = np.array([r["rate_per_hour"] for r in mine])
        rtf = np.array([r["rtf"] for r in mine])
        rtf_cpu = np.array([r.get("rtf_cpu", np.nan) for r in mine])
        unloaded = np.array([r["unloaded"] for r in mine], float)
        out[mode] = {"rtf_mean": float(rtf.mean()), "rtf_std": float(rtf.std()),
                     "rtf_cpu_mean": float(rtf_cpu.mean()),
                     "manager_cpu_pct": float(np.mean([r.get("manager_cpu_pct", np.nan)
                                                       for r in mine])),
                     "unloaded_mean": float(unloaded.mean()), "unloaded_std": float(unloaded.std()),
                     "unloaded_pct_mean": _mean(mine, "unloaded_pct"),
                     "rate_mean": float(rate.mean()), "rate_std": float(rate.std()),
                     "manager_us_per_tick": _mean(mine, "manager_us_per_tick"),
                     "manager_overhead_pct": _mean(mine, "manager_overhead_pct"),
                     "hook_us_per_step": _mean(mine, "hook_us_per_step"),
                     "high_per_tick": _mean(mine, "high_per_tick"),
                     "medium_per_tick": _mean(mine, "medium_per_tick"),
                     "lowered_per_s": _mean(mine, "lowered_per_s")}
    if "hifi-sleep" in out:
        for s in out.values():
            s["speedup_vs_hifi_sleep"] = s["rtf_mean"] / out["hifi-sleep"]["rtf_mean"]
            s["cpu_speedup_vs_hifi_sleep"] = (s["rtf_cpu_mean"]
                                              / out["hifi-sleep"]["rtf_cpu_mean"])
    if "hifi" in out:
        base = out["hifi"]
        for s in out.values():
            s["speedup_vs_hifi"] = s["rtf_mean"] / base["rtf_mean"]
            s["rate_error_pct"] = (
                100.0 * abs(s["rate_mean"] - base["rate_mean"]) / base["rate_mean"]
                if base["rate_mean"] > 0 else float("nan"))
    return out


def table(summary: dict[str, dict[str, float]]) -> str:
    head = (f"{'mode':17} {'RTF':>12} {'x hifi':>7} {'x h-sleep':>9} {'unloaded':>13} "
            f"{'% load':>6} {'rate [1/h]':>15} {'err %':>6} {'mgr us/tick':>11} {'mgr %step':>9} "
            f"{'hook us/step':>12} {'HIGH/tick':>9} {'MED/tick':>8} {'lowered/s':>9} "
            f"{'cpu x h-sleep':>13} {'mgr %cpu':>8}")
    lines = [head]
    for mode, s in summary.items():
        lines.append(f"{mode:17} {s['rtf_mean']:6.3f}+-{s['rtf_std']:<5.3f}"
                     f"{s.get('speedup_vs_hifi', float('nan')):7.2f} "
                     f"{s.get('speedup_vs_hifi_sleep', float('nan')):9.2f} "
                     f"{s['unloaded_mean']:6.1f}+-{s['unloaded_std']:<5.1f}"
                     f"{s['unloaded_pct_mean']:6.1f} "
                     f"{s['rate_mean']:8.0f}+-{s['rate_std']:<6.0f}"
                     f"{s.get('rate_error_pct', float('nan')):6.1f} "
                     f"{s['manager_us_per_tick']:11.0f} {s['manager_overhead_pct']:9.2f} "
                     f"{s['hook_us_per_step']:12.1f} {s['high_per_tick']:9.1f} "
                     f"{s['medium_per_tick']:8.1f} {s['lowered_per_s']:9.1f} "
                     f"{s.get('cpu_speedup_vs_hifi_sleep', float('nan')):13.2f} "
                     f"{s['manager_cpu_pct']:8.2f}")
    return "\n".join(lines)


def issue23_targets(summary: dict[str, dict[str, float]],
                    runs: list[dict[str, Any]]) -> list[str]:
    """Issue 23's speed targets, each met or missed, for the modes of this run that it names
    (labels ``adfi-3-sleep``, ``adfi-3-sleep/near``, ...): adfi-3-sleep at least 4x hifi-sleep,
    adfi-3 at least level with hifi-sleep, the manager under 2 % of the step time with sleep on,
    and the packets unloaded within the range of the hifi seeds."""
    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    lines = []
    base = summary.get("hifi-sleep")
    for label, s in summary.items():
        mode = label.split("/")[0]
        if base is not None and mode in ("adfi-3-sleep", "adfi-3"):
            need = 4.0 if mode == "adfi-3-sleep" else 1.0
            x = s["speedup_vs_hifi_sleep"]
            lines.append(f"{label} >= {need:g}x hifi-sleep: {x:.2f}x ({verdict(x >= need)})")
        if mode.startswith("adfi") and mode.endswith("-sleep"):
            pct = s["manager_overhead_pct"]
            lines.append(f"{label} manager < 2 % of step time: {pct:.2f} % ({verdict(pct < 2)})")
    hifi = [r["unloaded"] for r in runs if r["mode"] == "hifi"]
    if hifi:
        lo, hi = min(hifi), max(hifi)
        for label, s in summary.items():
            if label.split("/")[0] in ("adfi-3", "adfi-3-sleep"):
                u = s["unloaded_mean"]
                lines.append(f"{label} unloaded {u:.1f} within hifi's seeds [{lo}, {hi}]: "
                             f"{verdict(lo <= u <= hi)}"
                             + (" (one hifi seed: no spread)" if len(hifi) < 2 else ""))
    return lines


def plots(result: dict[str, Any], out_dir: Path) -> list[Path]:
    """Fig. 4 (instantaneous RTF with phases), Fig. 6 (unloaded per repeat), Fig. 7 (error vs
    RTF)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    sc, runs, summary = result["scenario"], result["runs"], result["summary"]
    modes = list(summary)
    paths = []

    fig, ax = plt.subplots(figsize=(9, 4))
    first = {m: next(r for r in runs if r["mode"] == m) for m in modes}
    ref = first[modes[0]]
    phases = ref["phases"] + [[ref["sim_time"], "end"]]
    for (t0, p), (t1, _) in zip(phases, phases[1:]):
        if p in PICK_PHASES:
            ax.axvspan(t0, t1, color="tab:orange", alpha=0.12, lw=0)
        elif p in ("sweep", "convey"):
            ax.axvspan(t0, t1, color="tab:green", alpha=0.12, lw=0)
    for m, r in first.items():
        ax.plot([s["time"] for s in r["samples"]], [s["rtf"] for s in r["samples"]], label=m)
    ax.set_xlabel("simulation time [s]")
    ax.set_ylabel("real-time factor [sim s / wall s]")
    ax.set_yscale("log")
    ax.set_title(f"Scenario {sc}: instantaneous RTF (seed {ref['seed']}; orange: pick, "
                 f"green: sweep, phases of {ref['mode']})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(out_dir / f"truck_{sc}_rtf.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for i, m in enumerate(modes):
        vals = [r["unloaded"] for r in runs if r["mode"] == m]
        ax.scatter(np.full(len(vals), i) + np.linspace(-0.15, 0.15, len(vals)), vals, label=m)
    ax.set_xticks(range(len(modes)), modes)
    ax.set_xlabel("mode (one dot per repeat)")
    ax.set_ylabel(f"packets unloaded in {result['duration']:g} s [packets]")
    ax.set_title(f"Scenario {sc}: unloaded packets per repeat")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(out_dir / f"truck_{sc}_unloaded.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for m, s in summary.items():
        err = s.get("rate_error_pct", float("nan"))
        ax.scatter(s["rtf_mean"], err, label=m)
        ax.annotate(m, (s["rtf_mean"], err), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel("mean real-time factor [sim s / wall s]")
    ax.set_ylabel("|unload-rate error| vs hifi [%]")
    hifi_rate = summary.get("hifi", {}).get("rate_mean", float("nan"))
    ax.set_title(f"Scenario {sc}: unload-rate error against speed (hifi rate {hifi_rate:.0f} "
                 "packets/h)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(out_dir / f"truck_{sc}_error.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths


def run(args: argparse.Namespace) -> int:
    """Every mode on the same seeds through the sweep function ``truck`` (:func:`run_once`), in
    this process; print the table (or JSON) and the plots written."""
    from tqdm import tqdm

    from ..sweep.functions import call

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise TruckError(f"--modes: unknown mode(s) {', '.join(unknown)} "
                         f"(known: {', '.join(MODES)})")
    stills = _choices(args.still, STILL_CLOCKS, "--still", "clock")
    mediums = _choices(getattr(args, "medium", ""), MEDIUM_RULES, "--medium", "rule")
    # (label, mode, still clock, rule 3): manager modes once per clock and rule asked for, hifi
    # modes once; a label names the options given more than one value
    variants = [(c, r) for c in (stills or [None]) for r in (mediums or [None])]
    plan = []
    for m in modes:
        for c, r in variants[:1] if m.startswith("hifi") else variants:
            parts = [m] + ([c] if len(stills) > 1 and not m.startswith("hifi") else []) + (
                [r] if len(mediums) > 1 and not m.startswith("hifi") else [])
            plan.append(("/".join(parts), m, c, r))
    seeds = list(range(args.first_seed, args.first_seed + args.repeats))
    runs = []
    with tqdm(total=len(plan) * len(seeds) * args.duration, unit="sim s", file=sys.stderr,
              disable=args.no_progress, bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} sim s "
              "[{elapsed}<{remaining}]") as bar:
        for seed in seeds:  # modes side by side on each seed, so load drifts hit them alike
            for label, mode, still, medium in plan:
                bar.set_description(f"{args.scenario} {label} seed {seed}")
                run_ = call("truck", {"scenario": args.scenario, "mode": mode, "seed": seed,
                                      "duration": args.duration, "tick_period": args.tick_period,
                                      "still": still, "medium": medium}, progress=bar)
                runs.append({**run_, "mode": label})
    labels = [label for label, *_ in plan]
    summary = summarise(runs, labels)
    result = {"scenario": args.scenario, "duration": args.duration, "repeats": args.repeats,
              "tick_period": args.tick_period, "still": stills, "medium": mediums,
              "seeds": seeds, "modes": labels, "summary": summary, "runs": runs,
              "machine": {"platform": platform.platform(), "python": platform.python_version(),
                          "processor": platform.processor()},
              "date": datetime.datetime.now().isoformat(timespec="seconds"),
              "command": " ".join(["simfid", "bench", "truck"] + sys.argv[3:])}
    result["issue23_targets"] = issue23_targets(summary, runs)
    if args.plots:
        result["plots"] = [str(p) for p in plots(result, Path(args.plots))]
    if args.json:
        print(json.dumps(result))
    else:
        print(f"scenario {args.scenario}: {args.duration:g} s sim x {args.repeats} repeats (seeds "
              f"{seeds}), MuJoCo step {1e3 * 0.002:g} ms")
        print(table(summary))
        for line in result["issue23_targets"]:
            print(line)
        for p in result.get("plots", []):
            print(f"plot {p}")
    return 0


def _choices(text: str | None, known: tuple[str, ...], flag: str, what: str) -> list[str]:
    """The comma-separated values of ``flag``; TruckError naming the unknown ones."""
    values = [v.strip() for v in (text or "").split(",") if v.strip()]
    wrong = [v for v in values if v not in known]
    if wrong:
        raise TruckError(f"{flag}: unknown {what}(s) {', '.join(wrong)} "
                         f"(known: {', '.join(known)})")
    return values
