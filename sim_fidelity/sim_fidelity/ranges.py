"""Stated ranges of numbers a user gives: node parameters, ``simfid`` flags, config values.

A :class:`Range` is declared once, where the number is declared, and checked at start:

* node parameters: ``Param(20.0, "ticks per second", above(0))`` in ``node_parameters.py``;
  :func:`sim_fidelity.ros_node.declare_parameters` checks every node's parameters against it;
* ``simfid`` flags: ``p.add_argument("--duration", type=number(above(0)), ...)`` with the
  argparse types of :mod:`sim_fidelity.flag_types`; a violation is one line, exit code 2;
* anything else: ``problem = RANGE.problem(value)`` is None or the reason, for the caller's own
  error type.

Every number must be finite (NaN and infinity are in no range), and a whole number is accepted
where a real one is expected.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Range:
    """``low`` (exclusive when ``low_open``) <= value <= ``high``; None = unbounded; finite."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False

    def __str__(self) -> str:
        if self.low is not None and self.high is not None:
            return f"in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}]"
        if self.low is not None:
            return f"{'>' if self.low_open else '>='} {self.low:g}"
        if self.high is not None:
            return f"<= {self.high:g}"
        return "finite"

    def contains(self, value: object) -> bool:
        """Is ``value`` a finite number (not a bool) in the range."""
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and (isinstance(value, int) or math.isfinite(value))  # ints: any size
                and (self.low is None or value > self.low
                     or (value == self.low and not self.low_open))
                and (self.high is None or value <= self.high))

    def problem(self, value: object) -> str | None:
        """None when ``value`` is in the range, else what is wrong, e.g. "must be > 0, got -1"."""
        return None if self.contains(value) else f"must be {self}, got {value!r}"


FINITE = Range()


def above(low: float) -> Range:
    """Values ``> low``."""
    return Range(low, low_open=True)


def at_least(low: float) -> Range:
    """Values ``>= low``."""
    return Range(low)


def between(low: float, high: float) -> Range:
    """Values in ``[low, high]``."""
    return Range(low, high)
