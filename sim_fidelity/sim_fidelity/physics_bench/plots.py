"""Figures like paper 002's Figs. 6-19: step time against threads as box plots (average and
best case), and the median speed-up against threads."""
from __future__ import annotations

from pathlib import Path

from .stats import SettingSummary


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def step_time_boxes(world: str, summaries: dict[str, list[SettingSummary]], path: Path,
                    note: str = "") -> Path:
    """Two panels (per-trial mean, per-trial minimum) of box plots of step time (ms) against
    thread count, one colour per mode."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=False)
    modes = list(summaries)
    width = 0.8 / max(1, len(modes))
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red"]
    for ax, which, label in ((axes[0], "mean", "average"), (axes[1], "min", "best case")):
        for i, mode in enumerate(modes):
            rows = summaries[mode]
            data = [[(t.mean if which == "mean" else t.min) * 1e3 for t in s.trials] for s in rows]
            pos = [s.threads + (i - (len(modes) - 1) / 2) * width for s in rows]
            bp = ax.boxplot(data, positions=pos, widths=width * 0.9, patch_artist=True,
                            manage_ticks=False)
            for box in bp["boxes"]:
                box.set_facecolor(colours[i % len(colours)])
                box.set_alpha(0.6)
            for med in bp["medians"]:
                med.set_color("red")
            ax.plot([], [], color=colours[i % len(colours)], lw=8, alpha=0.6, label=mode)
        threads = sorted({s.threads for rows in summaries.values() for s in rows})
        ax.set_xticks(threads)
        ax.set_xlabel("threads (0 = serial control)")
        ax.set_ylabel(f"{label} physics step time [ms]")
        ax.set_title(f"{world}: {label} step time per trial")
        ax.grid(alpha=0.3)
        ax.legend(title="mode (red line: median)")
    if note:
        fig.text(0.01, 0.01, note, fontsize=7)
    fig.tight_layout(rect=(0, 0.04 if note else 0, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def speedup_curves(world: str, summaries: dict[str, list[SettingSummary]], path: Path,
                   note: str = "") -> Path:
    """Median speed-up (control / setting) of the average and best-case step time against
    thread count, one line pair per mode."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for mode, rows in summaries.items():
        threads = [s.threads for s in rows]
        ax.plot(threads, [s.speedup_mean for s in rows], "o-", label=f"{mode}: average")
        ax.plot(threads, [s.speedup_min for s in rows], "s--", label=f"{mode}: best case")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xticks(sorted({s.threads for rows in summaries.values() for s in rows}))
    ax.set_xlabel("threads (0 = serial control)")
    ax.set_ylabel("median speed-up over control [x]")
    ax.set_title(f"{world}: speed-up of the physics step")
    ax.grid(alpha=0.3)
    ax.legend()
    if note:
        fig.text(0.01, 0.01, note, fontsize=7)
    fig.tight_layout(rect=(0, 0.05 if note else 0, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
