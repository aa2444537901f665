"""``simfid kernels generate`` and ``simfid kernels show``.

:func:`register` adds the ``kernels`` command to the main ``simfid`` parser; rosbags, tqdm and
matplotlib load when a command runs.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from ..flag_types import count, integer, output_file
from ..ranges import at_least


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``kernels generate|show`` to a ``simfid`` sub-command parser."""
    kernels = subparsers.add_parser("kernels", help="reality-gap kernels (paper 001)")
    sub = kernels.add_subparsers(dest="kernels_command", required=True)

    gen = sub.add_parser("generate", help="build kernels from sim and real bags (Algorithm 1)")
    gen.add_argument("--sim", nargs="+", required=True, metavar="BAG", help="simulation bags")
    gen.add_argument("--real", nargs="+", required=True, metavar="BAG", help="real-robot bags")
    gen.add_argument("--spec", required=True, help="state spec YAML")
    gen.add_argument("-o", "--output", type=output_file, required=True,
                     help="kernels file to write (YAML)")
    gen.add_argument("--rollouts", type=count(), help="paired roll-outs (default: the spec's)")
    gen.add_argument("--seed", type=integer(at_least(0)), default=0, help="random seed (default 0)")
    gen.add_argument("--no-progress", action="store_true", help="no progress bars")
    gen.set_defaults(func=run_generate)

    show = sub.add_parser("show", help="print a kernels file; plot centres over tracks")
    show.add_argument("kernels_file", metavar="KERNELS.yaml")
    show.add_argument("--plot", metavar="PNG", type=output_file,
                      help="write a plot of the kernel centres")
    show.add_argument("--over", nargs="+", metavar="BAG", default=[],
                      help="bags whose tracks are drawn under the centres")
    show.add_argument("--axes", help="state components to plot, e.g. x,y (default: first two)")
    show.set_defaults(func=run_show)


def run_generate(args: argparse.Namespace) -> int:
    """Read the bags, generate the kernels and write the kernels file; print the summary."""
    from ..reality_gap.bags import read_histories
    from ..reality_gap.kernel_file import save_kernels
    from ..reality_gap.kernels import generate
    from ..reality_gap.spec import load_spec

    spec = load_spec(args.spec)
    sim = read_histories(args.sim, spec)
    real = read_histories(args.real, spec)
    started = time.perf_counter()
    result = generate(sim, real, spec, rollouts=args.rollouts, seed=args.seed,
                      progress=not args.no_progress and sys.stderr.isatty())
    elapsed = time.perf_counter() - started
    summary = result.summary.to_dict()
    save_kernels(args.output, spec, result.kernels, summary)
    width = max(len(k) for k in summary)
    for key, value in summary.items():
        print(f"{key:<{width}}  {value}")
    print(f"{'seconds':<{width}}  {elapsed:.2f}")
    print(f"wrote {args.output}")
    if result.summary.common_states == 0:
        print("warning: no state is common to sim and real histories; check eps_c and weights",
              file=sys.stderr)
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print a kernels file; with ``--plot``, draw the centres over the ``--over`` bags' tracks."""
    from ..reality_gap.bags import read_histories
    from ..reality_gap.errors import SpecError
    from ..reality_gap.kernel_file import load_kernels

    loaded = load_kernels(args.kernels_file)
    spec = loaded.spec
    names = spec.state_names
    axes = args.axes.split(",") if args.axes else names[:2]
    if any(a not in names for a in axes) or not 1 <= len(axes) <= 2:
        raise SpecError(f"--axes {args.axes}: give one or two of the state components "
                        f"{', '.join(names)} of {args.kernels_file}")
    tracks = read_histories(args.over, spec) if args.over else None
    print(f"kernels file {args.kernels_file}: {len(loaded.kernels)} kernels, "
          f"spec {spec.hash[:19]}")
    for key, value in loaded.summary.items():
        print(f"  {key}: {value}")
    print(f"{'id':>3}  {'support':>7}  {'p_sim':>5}  {'p_phy':>5}  {'nodes':>5}  "
          f"{'samples':>7}  centre ({', '.join(names)})")
    for i, k in enumerate(loaded.kernels):
        centre = ", ".join(f"{v:.3g}" for v in k.centre)
        print(f"{i:>3}  {k.support:>7}  {k.divergence[0]:>5.2f}  {k.divergence[1]:>5.2f}  "
              f"{len(k.members):>5}  {k.samples:>7}  {centre}")
    if args.plot:
        _plot(Path(args.plot), loaded, [names.index(a) for a in axes], axes, tracks)
        print(f"wrote {args.plot}")
    return 0


def _plot(path: Path, loaded, cols: list[int], labels: list[str], tracks) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    centres = np.array([k.centre for k in loaded.kernels]).reshape(-1, len(loaded.spec.state))
    fig, ax = plt.subplots(figsize=(6, 5))
    if len(cols) == 2:
        if tracks is not None:
            for run in np.unique(tracks.run):
                track = tracks.track(run)
                ax.plot(track[:, cols[0]], track[:, cols[1]], ".-", color="0.6", lw=0.6, ms=2)
        ax.scatter(centres[:, cols[0]], centres[:, cols[1]], c="red", s=30, zorder=3,
                   label="kernel centres")
        ax.set_xlabel(labels[0])
        ax.set_ylabel(labels[1])
    else:
        if tracks is not None:
            period = 1.0 / loaded.spec.rate_hz
            for run in np.unique(tracks.run):
                track = tracks.track(run)
                ax.plot(np.arange(len(track)) * period, track[:, cols[0]], "-", color="0.6",
                        lw=0.6)
        for value in centres[:, cols[0]]:
            ax.axhline(value, color="red", lw=0.8, ls="--")
        ax.plot([], [], "r--", label="kernel centres")
        ax.set_xlabel("time in run (s)")
        ax.set_ylabel(labels[0])
    over = " over the recorded tracks" if tracks is not None else ""
    ax.set_title(f"{len(centres)} kernels{over}")
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

