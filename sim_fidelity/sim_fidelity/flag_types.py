"""argparse types of the ``simfid`` flags: numbers in a stated range, counts, output paths.

Each checks its flag when the command line is parsed, before any work starts; argparse (with
``cli.OneLineParser``) reports a violation in one line naming the flag, the value and what is
allowed, exit code 2. A new flag states its range where it is declared::

    p.add_argument("--duration", type=number(above(0)), default=10.0, help=...)
    p.add_argument("--repeats", type=count(), default=3, help=...)
    p.add_argument("-o", "--output", type=output_file, required=True, help=...)
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

from .ranges import FINITE, Range, at_least


def number(valid: Range = FINITE) -> Callable[[str], float]:
    """An argparse ``type``: a real number (whole numbers too) in ``valid``."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number ({valid}), got {text!r}") from None
        if not valid.contains(value):
            raise argparse.ArgumentTypeError(f"must be {valid}, got {text}")
        return value
    parse.__name__ = "number"  # argparse names the type in its messages
    return parse


def integer(valid: Range = FINITE) -> Callable[[str], int]:
    """An argparse ``type``: a whole number in ``valid``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number ({valid}), "
                                             f"got {text!r}") from None
        if not valid.contains(value):
            raise argparse.ArgumentTypeError(f"must be {valid}, got {text}")
        return value
    parse.__name__ = "integer"
    return parse


def integers(valid: Range = FINITE) -> Callable[[str], tuple[int, ...]]:
    """An argparse ``type``: comma-separated whole numbers, at least one, each in ``valid``."""
    one = integer(valid)

    def parse(text: str) -> tuple[int, ...]:
        values = tuple(one(v) for v in text.split(",") if v.strip())
        if not values:
            raise argparse.ArgumentTypeError(f"needs at least one whole number, got {text!r}")
        return values
    parse.__name__ = "integers"
    return parse


def count() -> Callable[[str], int]:
    """An argparse ``type``: a whole number ``>= 1`` (repeats, roll-outs, steps per tick)."""
    return integer(at_least(1))


def output_file(text: str) -> Path:
    """An argparse ``type``: a file to write, in a folder that exists, not a folder itself."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give the file to write")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: the folder {path.parent} does not exist")
    return path


def output_folder(text: str) -> Path:
    """An argparse ``type``: a folder to write into (made if missing), not an existing file."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file; give a folder")
    return path
