"""Figures of a sweep report: for the truck, paper 000's Fig. 6 (packets unloaded per mode) and
Fig. 7 (unload-rate error against the real-time factor) with 95 % intervals as error bars; for
physics trials, box plots of the per-trial mean step time per setting; for any other function,
each headline metric per group with its interval."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .report import Group


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _label(group: Group, leave: tuple[str, ...] = ()) -> str:
    return ", ".join(f"{k}={v}" for k, v in group.params.items() if k not in leave) or "all"


def _err(stat) -> list[list[float]]:
    return [[stat.mean - stat.ci[0]], [stat.ci[1] - stat.mean]]


def _fixed(report: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in report["fixed"].items())


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path


def truck_figures(report: dict[str, Any], folder: Path) -> list[Path]:
    """Fig. 6 and 7 of paper 000, one panel per scenario, 95 % intervals over seeds."""
    plt = _pyplot()
    groups: list[Group] = report["groups"]
    scenarios = sorted({g.params.get("scenario", "?") for g in groups})
    modes = list(dict.fromkeys(g.params.get("mode", "?") for g in groups))
    workers = sorted({w for g in groups for w in g.workers})
    note = f"{_fixed(report)}; {','.join(map(str, workers))} concurrent workers"
    paths = []
    fig, axes = plt.subplots(1, len(scenarios), figsize=(4.2 * len(scenarios), 4), squeeze=False)
    for ax, sc in zip(axes[0], scenarios):
        for i, mode in enumerate(modes):
            g = next((g for g in groups if g.params.get("scenario", "?") == sc
                      and g.params.get("mode", "?") == mode), None)
            s = g.stats.get("unloaded") if g else None
            if s is None:
                continue
            ax.errorbar([i], [s.mean], yerr=_err(s), fmt="o", capsize=4,
                        label="mean, 95 % CI" if i == 0 else None, color="tab:blue")
            vals = np.array(list(s.values.values()))
            ax.scatter(i + np.linspace(0.12, 0.3, vals.size), vals, s=10, color="tab:gray",
                       label="one seed" if i == 0 else None)
        ax.set_xticks(range(len(modes)), modes, rotation=20)
        ax.set_xlabel("mode")
        ax.set_ylabel("packets unloaded per run")
        ax.set_title(f"Scenario {sc}")
        ax.legend(fontsize=8)
    fig.suptitle(f"Packets unloaded (paper 000, Fig. 6): {note}", fontsize=9)
    paths.append(_save(fig, folder / "sweep_truck_unloaded.png"))

    if report["baseline"]:
        fig, ax = plt.subplots(figsize=(6.5, 4.5))
        for sc, colour in zip(scenarios, ("tab:blue", "tab:orange", "tab:green", "tab:red")):
            for g in groups:
                rate, rtf = g.ratios.get("rate_per_hour"), g.stats.get("rtf")
                if g.params.get("scenario", "?") != sc or rate is None or rtf is None:
                    continue
                err = 100 * (rate.ratio_of_means - 1)
                ax.errorbar([rtf.mean], [err], xerr=_err(rtf),
                            yerr=[[err - 100 * (rate.ci[0] - 1)], [100 * (rate.ci[1] - 1) - err]],
                            fmt="o", capsize=3, color=colour)
                ax.annotate(g.params.get("mode", ""), (rtf.mean, err), textcoords="offset points",
                            xytext=(4, 4), fontsize=7, color=colour)
            ax.plot([], [], "o", color=colour, label=f"scenario {sc}")
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xscale("log")
        ax.set_xlabel("real-time factor (sim s / wall s), mean, 95 % CI")
        ax.set_ylabel(f"unload-rate error vs {report['baseline']} [%], 95 % CI")
        ax.set_title(f"Rate error against speed (paper 000, Fig. 7)\n{note}", fontsize=9)
        ax.legend(fontsize=8)
        paths.append(_save(fig, folder / "sweep_truck_error.png"))
    return paths


def physics_figures(report: dict[str, Any], folder: Path) -> list[Path]:
    """Box plots of the per-trial mean step time, one box per setting."""
    plt = _pyplot()
    groups = [g for g in report["groups"] if "mean" in g.stats]
    fig, ax = plt.subplots(figsize=(max(7.5, 1.2 * len(groups)), 4.5))
    ax.boxplot([1e3 * np.array(list(g.stats["mean"].values.values())) for g in groups])
    ax.set_xticks(range(1, len(groups) + 1), [_label(g) for g in groups], rotation=20,
                  fontsize=7)
    ax.set_xlabel("setting")
    ax.set_ylabel("mean step time per trial [ms]")
    workers = sorted({w for g in groups for w in g.workers})
    ax.plot([], [], color="tab:orange", label="median; box: quartiles; whiskers: 1.5 IQR")
    ax.legend(fontsize=7)
    ax.set_title(f"Physics step time per trial\n({_fixed(report)}; "
                 f"{','.join(map(str, workers))} concurrent workers)", fontsize=9)
    return [_save(fig, folder / "sweep_physics_step_time.png")]


def metric_figures(report: dict[str, Any], folder: Path) -> list[Path]:
    """Each metric of the report per group: the mean with its 95 % interval."""
    plt = _pyplot()
    paths = []
    for m in report["metrics"]:
        groups = [g for g in report["groups"] if m in g.stats]
        fig, ax = plt.subplots(figsize=(max(5, 1.0 * len(groups)), 4))
        for i, g in enumerate(groups):
            ax.errorbar([i], [g.stats[m].mean], yerr=_err(g.stats[m]), fmt="o", capsize=4,
                        color="tab:blue", label="mean, 95 % CI" if i == 0 else None)
        ax.set_xticks(range(len(groups)), [_label(g) for g in groups], rotation=20, fontsize=7)
        ax.set_xlabel("group")
        ax.set_ylabel(m)
        ax.set_title(f"{report['function']}: {m} over {report['replicate']}s", fontsize=9)
        ax.legend(fontsize=8)
        paths.append(_save(fig, folder / f"sweep_{report['function']}_{m.replace('/', '_')}.png"))
    return paths


def plot_report(report: dict[str, Any], folder: Path) -> list[Path]:
    """The figures of ``report`` written into ``folder``; their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if report["function"] == "truck":
        return truck_figures(report, folder)
    if report["function"] == "physics":
        return physics_figures(report, folder)
    return metric_figures(report, folder)
