"""Sweep functions over entry points whose own result is not a plain dict: the 1-D example, the
Ackermann course, kernel generation on a planted gap; and ``probe``, a trivial function for
checking a sweep set-up (a cluster, the table, retries)."""
from __future__ import annotations

import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from .errors import SweepError


def oned(seed: int, missions: int = 1000, episodes: int | None = None) -> dict[str, Any]:
    """Paper 001's 1-D example, every phase, for one seed (``simfid example oned``)."""
    from ..oned.example import run_example

    return run_example(missions, seed, episodes).to_dict()


def ackermann(seed: int, missions: int = 50) -> dict[str, Any]:
    """Paper 001's Ackermann course, every phase, for one seed (kernel centres left out)."""
    from ..ugv.pipeline import run_pipeline

    result = run_pipeline(missions, seed).to_dict()
    result.pop("kernel_centres")
    return result


def kernels(seed: int, dims: int = 1, shape: str = "slow", noise: float = 0.03,
            transitions: int = 20_000) -> dict[str, Any]:
    """Bags of one planted gap written, kernels generated and scored (``simfid bench kernels``)."""
    from ..reality_gap.planted import Case, run_case

    with tempfile.TemporaryDirectory(prefix="simfid_sweep_kernels_") as tmp:
        return run_case(Case(dims, shape, noise, transitions, seed), Path(tmp)).to_dict()


class ProbeFailure(SweepError):
    """The failure ``probe`` was asked for."""


def probe(x: float, seed: int = 0, seconds: float = 0.0, fail: str = "never",
          marker: str = "") -> dict[str, Any]:
    """``x`` squared after sleeping ``seconds``; each attempt appends a line to ``marker`` (if
    given). ``fail``: ``always`` raises, ``once`` raises on the first attempt (no marker yet)."""
    first = not (marker and Path(marker).exists())
    if marker:
        with open(marker, "a") as f:
            f.write(f"{os.getpid()}\n")
    time.sleep(seconds)
    if fail == "always" or (fail == "once" and first):
        raise ProbeFailure(f"probe x={x} seed={seed}: failing as asked (fail={fail})")
    return {"y": x * x, "host": socket.gethostname(), "pid": os.getpid()}
