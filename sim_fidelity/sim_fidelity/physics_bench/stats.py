"""Statistics of physics step times the way paper 002 reports them (section 4.2).

Per trial: the mean step time and the minimum and maximum of the step time averaged over
*windows* of consecutive steps (the best and worst stretch). A window is as long as the longest
chunk the island engine may defer (its ``max_interval`` steps), in every setting alike: an engine
that runs deferred steps as chunks does one step's physics inside some other call, so a single
call's time is not a step's, but the time of a window that holds whole chunks is its steps'
(paper 002's ``UpdatePhysics`` time, summed over the window). Across the trials of one setting:
the box-plot statistics (minimum, lower quartile, median, upper quartile, maximum) of the per-trial
means and minima. Speed-up of a setting: the control's median over the setting's median, for the
mean and for the minimum. Pure numpy.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..errors import SimFidelityError


class TimingError(SimFidelityError):
    """Step-time data that statistics cannot be taken of."""


@dataclass(frozen=True)
class TrialTimes:
    """One trial: the mean step time, the minimum and maximum of the per-window mean step time
    (seconds), and how many steps were timed."""

    mean: float
    min: float
    max: float
    steps: int


@dataclass(frozen=True)
class BoxStats:
    """Box-plot statistics (seconds) of one quantity across trials."""

    min: float
    q1: float
    median: float
    q3: float
    max: float

    def as_dict(self) -> dict:
        return asdict(self)


def trial_times(step_seconds: np.ndarray, window: int = 1) -> TrialTimes:
    """The per-trial statistics of one series of step times (seconds, one value per timed call,
    each call as many steps as the others); ``window``: calls per window (a last, shorter window
    counts as one too)."""
    s = np.asarray(step_seconds, float).reshape(-1)
    if s.size == 0:
        raise TimingError("a trial has no timed steps")
    if window < 1:
        raise TimingError(f"a window holds at least one call, got {window}")
    if not np.all(np.isfinite(s)) or np.any(s < 0):
        raise TimingError("step times must be finite and non-negative")
    starts = np.arange(0, s.size, window)
    per_window = np.add.reduceat(s, starts) / np.diff(np.r_[starts, s.size])
    return TrialTimes(float(s.mean()), float(per_window.min()), float(per_window.max()),
                      int(s.size))


def box_stats(values: np.ndarray) -> BoxStats:
    """Minimum, quartiles (linear interpolation), median and maximum of ``values``."""
    v = np.asarray(values, float).reshape(-1)
    if v.size == 0:
        raise TimingError("no trials to summarise")
    q = np.percentile(v, [0, 25, 50, 75, 100])
    return BoxStats(*(float(x) for x in q))


def speedup(control: BoxStats, setting: BoxStats) -> float:
    """The control's median over the setting's median (> 1: the setting is faster)."""
    if setting.median <= 0:
        raise TimingError("a median step time of zero has no speed-up")
    return control.median / setting.median


@dataclass(frozen=True)
class SettingSummary:
    """All trials of one setting (a mode and a thread count)."""

    mode: str
    threads: int
    trials: tuple[TrialTimes, ...]
    mean: BoxStats  # of the per-trial means
    best: BoxStats  # of the per-trial minima
    speedup_mean: float
    speedup_min: float

    def as_dict(self) -> dict:
        return {"mode": self.mode, "threads": self.threads,
                "trials": [asdict(t) for t in self.trials],
                "mean": self.mean.as_dict(), "min": self.best.as_dict(),
                "speedup_mean": self.speedup_mean, "speedup_min": self.speedup_min}


def summarise(mode: str, trials: dict[int, list[TrialTimes]],
              control: int) -> list[SettingSummary]:
    """Summaries of every thread count of one ``mode`` with speed-ups against ``control``."""
    if control not in trials:
        raise TimingError(f"the control setting ({control} threads) was not measured")
    boxes = {k: (box_stats([t.mean for t in v]), box_stats([t.min for t in v]))
             for k, v in trials.items()}
    c_mean, c_min = boxes[control]
    return [SettingSummary(mode, k, tuple(trials[k]), m, b, speedup(c_mean, m), speedup(c_min, b))
            for k, (m, b) in sorted(boxes.items())]
