"""A persistent thread that runs one SERVICE model's share of each tick for the conductor.

The conductor hands a worker a number of steps with :meth:`ServiceWorker.start` and collects it
with :meth:`ServiceWorker.wait`. The hand-off is two plain locks (the cheapest wake-up CPython
has): no executor, future or queue item per tick. The model is only ever called from the worker's
thread between ``start`` and ``wait``, and from the conductor's thread outside them.
"""
from __future__ import annotations

import threading
from collections.abc import Callable


class ServiceWorker:
    """Runs ``work(n)`` in its own thread once per :meth:`start`; :meth:`wait` re-raises what
    ``work`` raised."""

    def __init__(self, name: str, work: Callable[[int], None]):
        self._work = work
        self._go = threading.Lock()
        self._go.acquire()
        self._done = threading.Lock()
        self._done.acquire()
        self._steps = 0
        self._error: BaseException | None = None
        self._closing = False
        self._busy = False
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name=f"conductor-service-{name}")
        self._thread.start()

    def start(self, steps: int) -> None:
        """Run ``work(steps)`` in the worker's thread (the previous run must have been waited
        for)."""
        if self._busy:
            raise RuntimeError("ServiceWorker.start called twice without wait")
        self._busy = True
        self._steps = steps
        self._go.release()

    def wait(self) -> None:
        """Block until the started run is done; raise what it raised."""
        if not self._busy:
            return
        self._done.acquire()
        self._busy = False
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def close(self) -> None:
        """End the thread after the running work, if any (whose error nobody waited for is
        dropped: the conductor raises errors through :meth:`wait`)."""
        if self._busy:
            self._done.acquire()
            self._busy = False
        self._closing = True
        self._go.release()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            self._go.acquire()
            if self._closing:
                return
            try:
                self._work(self._steps)
            except BaseException as e:  # re-raised in the conductor's thread by wait()
                self._error = e
            self._done.release()
