"""Turn SIGINT and SIGTERM into an exception, so ``with``/``finally`` blocks (manager.close) run."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread when a termination signal arrives; carries the signal."""

    def __init__(self, signum: int):
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


_first: list[tuple[int, float, float]] = []  # the first signal: number, wall and CPU clocks


def _note(signum: int) -> None:
    """Remember the first termination signal and when its handler ran (for :func:`report_exit`)."""
    if not _first:
        _first.append((signum, time.monotonic(), time.process_time()))


def catch_early_signals(signums: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> None:
    """From here on ``signums`` end the process at once, exit 0, without a stack trace: a node's
    entry point calls this first, while its modules (rclpy, MuJoCo: seconds on a loaded machine)
    still load and nothing is started or changed, so a launch stopping the node then gets a clean
    and prompt exit. :func:`raise_on_signals` takes over once the node starts."""
    for s in signums:
        signal.signal(s, _exit_while_loading)


def _exit_while_loading(signum: int, _frame) -> None:
    _note(signum)
    print(f"interrupted by {signal.Signals(signum).name} while loading", file=sys.stderr)
    report_exit()
    os._exit(0)


def report_exit() -> None:
    """When a signal is what ends the process, say on stderr how long after its handler ran the
    process exits: ``exit 0.042 s after SIGINT reached its handler (0.031 s of CPU)``. This is the
    part of a shutdown the process controls; a loaded machine adds its scheduling delays before
    the handler runs and after the exit. The caller exits right after; stdio is flushed."""
    if _first:
        signum, wall, cpu = _first[0]
        print(f"exit {time.monotonic() - wall:.3f} s after {signal.Signals(signum).name} reached "
              f"its handler ({time.process_time() - cpu:.3f} s of CPU)", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()


@contextmanager
def raise_on_signals(signums: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM), *,
                     ignore_after: bool = False) -> Iterator[list[int]]:
    """Within the block the first of ``signums`` raises :class:`Interrupted`; later ones are
    recorded in the yielded list but do not raise, so clean-up (restoring fidelity) is not cut
    short. Previous handlers come back on exit, except with ``ignore_after``: a process that
    ends after the block (a node) then ignores further ones to its end (a terminal's Ctrl-C
    reaches a launched node twice; a late one must not change the exit code). Outside the main
    thread this does nothing.
    """
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handler(signum: int, _frame) -> None:
        received.append(signum)
        _note(signum)
        if len(received) == 1:
            raise Interrupted(signum)

    previous = {s: signal.signal(s, handler) for s in signums}
    try:
        yield received
    finally:
        for s, h in previous.items():
            signal.signal(s, signal.SIG_IGN if ignore_after else h)
