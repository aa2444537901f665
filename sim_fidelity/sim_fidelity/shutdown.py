"""Turn SIGINT and SIGTERM into an exception, so ``with``/``finally`` blocks (manager.close) run."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread when a termination signal arrives; carries the signal."""

    def __init__(self, signum: int):
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


_early: list[int] = []  # signals recorded by catch_early_signals


def catch_early_signals(signums: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> None:
    """Record ``signums`` from here on instead of dying of them: a node's entry point calls this
    first, before its modules (rclpy, MuJoCo: about a second) load, so that a launch stopping the
    node while it starts gets a clean exit; :func:`early_signal` tells whether one came."""
    for s in signums:
        signal.signal(s, lambda signum, _frame: _early.append(signum))


def early_signal() -> int | None:
    """The first signal :func:`catch_early_signals` recorded, or None."""
    return _early[0] if _early else None


@contextmanager
def raise_on_signals(signums: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM), *,
                     ignore_after: bool = False) -> Iterator[list[int]]:
    """Within the block the first of ``signums`` raises :class:`Interrupted`; later ones are
    recorded in the yielded list but do not raise, so clean-up (restoring fidelity) is not cut
    short. Previous handlers come back on exit, except with ``ignore_after`` once a signal came:
    a process stopping on it (a node) then ignores further ones to its end (a terminal's Ctrl-C
    reaches a launched node twice). Outside the main thread this does nothing.
    """
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handler(signum: int, _frame) -> None:
        received.append(signum)
        if len(received) == 1:
            raise Interrupted(signum)

    previous = {s: signal.signal(s, handler) for s in signums}
    try:
        yield received
    finally:
        for s, h in previous.items():
            signal.signal(s, signal.SIG_IGN if received and ignore_after else h)
