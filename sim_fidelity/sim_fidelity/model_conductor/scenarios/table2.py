"""Table 2 of paper 003: every recording replayed through the ensemble and the three baselines,
correct interpretations counted against the ground-truth labels (``simfid example conductor``)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import DEFAULT_FINGER_DRIVE
from .replay import METHODS, ReplayResult, replay

# the paper's Table 2 (correct interpretations; "n/a": not reported)
PAPER = {"ensemble": ("4/5", "5/5", "3/5"), "baseline_1": ("0/5", "n/a", "0/5"),
         "baseline_2": ("2/5", "5/5", "0/5"), "baseline_3": ("0/5", "n/a", "0/5")}
TITLES = {"ensemble": "model ensemble", "baseline_1": "baseline 1 (contact only)",
          "baseline_2": "baseline 2 (rigid binding)", "baseline_3": "baseline 3 (force binding)"}


def replay_all(folder: str | Path, sidecars: Sequence[Mapping[str, Any]],
               methods: Sequence[str] = METHODS, finger_drive: str = DEFAULT_FINGER_DRIVE,
               progress: Callable[[ReplayResult], None] | None = None) -> list[ReplayResult]:
    """Every recording through every method, the fingers driven by ``finger_drive``."""
    results = []
    for sidecar in sidecars:
        for method in methods:
            result = replay(folder, sidecar, method, finger_drive)
            results.append(result)
            if progress is not None:
                progress(result)
    return results


def _count(results: Sequence[ReplayResult]) -> list[int]:
    return [sum(r.correct for r in results), len(results)]


def _mode(results: Sequence[ReplayResult]) -> str:
    """The most common outcome of the wrong interpretations ("-" when none was wrong)."""
    wrong = Counter(r.outcome for r in results if not r.correct)
    return wrong.most_common(1)[0][0] if wrong else "-"


def table(results: Sequence[ReplayResult]) -> dict[str, dict[str, Any]]:
    """Per method: correct/total for successful and failed grasp-and-drop executions and for
    insertions (all, and by label), the failure modes, the replays' real-time factors."""
    out = {}
    for method in dict.fromkeys(r.method for r in results):
        mine = [r for r in results if r.method == method]
        grasp = [r for r in mine if r.kind == "grasp_drop"]
        insert = [r for r in mine if r.kind == "insertion"]
        rtf = [r.real_time_factor for r in mine]
        out[method] = {
            "grasp_successful": _count([r for r in grasp if r.label]),
            "grasp_failed": _count([r for r in grasp if not r.label]),
            "insertion": _count(insert),
            "insertion_connected": _count([r for r in insert if r.label]),
            "insertion_not_connected": _count([r for r in insert if not r.label]),
            "failure_mode_grasp": _mode(grasp), "failure_mode_insertion": _mode(insert),
            "outcomes": dict(Counter(f"{r.kind}:{r.outcome}" for r in mine)),
            "finger_drive": sorted({r.finger_drive for r in mine}),
            "rtf_mean": sum(rtf) / len(rtf) if rtf else 0.0,
            "rtf_min": min(rtf, default=0.0), "rtf_max": max(rtf, default=0.0),
            "paper": dict(zip(("grasp_successful", "grasp_failed", "insertion_successful"),
                              PAPER.get(method, ("", "", "")))),
        }
    return out


def report(rows: Mapping[str, Mapping[str, Any]]) -> str:
    """Table 2 as text (ours, then the paper's figures)."""
    def frac(c: Sequence[int]) -> str:
        return f"{c[0]}/{c[1]}" if c[1] else "-"

    head = (f"{'method':<28} {'grasp ok':>8} {'grasp fail':>10} {'insertion':>9} "
            f"{'(conn/not)':>10}  {'failure mode (grasp; insertion)':<32} {'RTF':>5}   paper")
    drives = sorted({d for row in rows.values() for d in row["finger_drive"]})
    lines = [f"Table 2: correct interpretations out of all executions (fingers driven by "
             f"recorded {', '.join(drives)})", head, "-" * len(head)]
    for method, row in rows.items():
        split = f"{frac(row['insertion_connected'])}|{frac(row['insertion_not_connected'])}"
        mode = f"{row['failure_mode_grasp']}; {row['failure_mode_insertion']}"
        paper = " ".join(row["paper"].values())
        lines.append(f"{TITLES.get(method, method):<28} {frac(row['grasp_successful']):>8} "
                     f"{frac(row['grasp_failed']):>10} {frac(row['insertion']):>9} "
                     f"{split:>10}  {mode:<32} {row['rtf_mean']:>5.2f}   {paper}")
    lines.append("paper: grasp ok, grasp fail, insertion (all five executions successful there)")
    return "\n".join(lines)


def plot(results: Sequence[ReplayResult], folder: str | Path) -> list[Path]:
    """Trajectory plots: the ball's height per grasp-and-drop execution, the DIP's per
    insertion, one line per method; returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for kind, what, name in (("grasp_drop", "ball", "conductor_grasp_trajectories.png"),
                             ("insertion", "DIP", "conductor_insertion_trajectories.png")):
        mine = [r for r in results if r.kind == kind]
        executions = list(dict.fromkeys(r.execution for r in mine))
        if not executions:
            continue
        cols = min(5, len(executions))
        rows = -(-len(executions) // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False,
                                 sharey=True)
        for ax, execution in zip(axes.flat, executions):
            runs = [r for r in mine if r.execution == execution]
            for r in runs:
                ax.plot(r.times, r.positions[:, 2] if len(r.positions) else [],
                        label=f"{TITLES[r.method]}: {r.outcome}", lw=1)
            first = runs[0]
            ax.set_title(f"{execution} ({first.variant}, truth {first.label})", fontsize=8)
            ax.set_xlabel("time [s]")
            ax.set_ylabel(f"{what} height [m]")
            ax.legend(fontsize=5)
        for ax in list(axes.flat)[len(executions):]:
            ax.axis("off")
        fig.tight_layout()
        path = folder / name
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written
