"""``simfid``: the command line of sim_fidelity.

Each sub-command is a module of :mod:`sim_fidelity.commands` with ``register(subparsers)``, listed
here; a module that does not import stops ``simfid`` with its traceback (nothing is skipped).
Errors the project raises on purpose (:class:`~sim_fidelity.errors.SimFidelityError`) are printed
in one line with exit code 2, and so is a bad flag (:class:`OneLineParser`; the flags' ranges
are argparse types of :mod:`sim_fidelity.flag_types`); anything else shows its traceback.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time

from .errors import SimFidelityError

# simfid <command> ...: the modules under sim_fidelity.commands, in --help order.
COMMANDS = ("sim", "serve", "fidelity", "kernels", "conduct", "record", "render", "sweep")
# simfid <group> <member> ...: each member is the module commands.<group>_<member>.
GROUPS = {
    "bench": ("benchmarks: every mode side by side in one run", ("truck", "kernels", "physics",
                                                          "stepping", "conductor")),
    "example": ("worked examples of the papers", ("oned", "ackermann", "conductor", "truck")),
}


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage block), exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _command(name: str):
    """The module ``sim_fidelity.commands.<name>``; an import error propagates."""
    return importlib.import_module(f"{__package__}.commands.{name}")


def build_parser() -> argparse.ArgumentParser:
    """The ``simfid`` parser with every sub-command registered."""
    parser = OneLineParser(prog="simfid", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        _command(name).register(sub)
    for group, (help_text, members) in GROUPS.items():
        group_sub = sub.add_parser(group, help=help_text).add_subparsers(
            dest=f"{group}_command", required=True)
        for member in members:
            _command(f"{group}_{member}").register(group_sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one sub-command; returns the exit code (2 for a SimFidelityError or a bad argument)."""
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    try:
        return args.func(args) or 0
    except SimFidelityError as e:
        print(f"simfid {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"simfid {args.command}: interrupted after {time.perf_counter() - started:.1f} s",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
