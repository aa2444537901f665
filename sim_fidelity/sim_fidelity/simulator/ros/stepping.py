"""``sim_server``'s time: the stepper thread that plays the engine at a real-time factor, and steps
on request while paused.

Every step holds the engine lock; the thread releases it at least every ``CHUNK_WALL_S`` so
service calls get in between chunks. After each advance of time ``on_advance`` runs, still under
the lock (it publishes ``/clock``, so the clock a client sees never runs behind the state it reads).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from ..engine import MujocoEngine
from ..errors import InvalidOperationError
from ..protocol import SimState

CHUNK_WALL_S = 0.004  # stepping releases the engine to service calls at least this often
JOIN_TIMEOUT_S = 2.0  # longest stop() waits for the thread (one chunk is milliseconds)


class Stepper:
    """Advances ``engine`` while it is PLAYING (on a thread) and by :meth:`step` while not."""

    def __init__(self, engine: MujocoEngine, lock: threading.RLock, *, real_time_factor: float,
                 on_advance: Callable[[], None]):
        self.engine, self.lock, self.rtf = engine, lock, real_time_factor
        self.on_advance = on_advance
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._window = (0, 0.0)  # steps taken and wall seconds spent stepping since the last read
        self._thread = threading.Thread(target=self._run, name="sim_server_stepper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it; idempotent. No step starts after this returns."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(JOIN_TIMEOUT_S)

    def wake(self) -> None:
        """The state changed (played, poses set): look again at once."""
        self._wake.set()

    def step(self, n: int) -> None:
        """Step ``n`` times on request (the caller holds the lock); refused while PLAYING."""
        if self.engine.sim_state() == SimState.PLAYING:
            raise InvalidOperationError("the simulation is playing: pause it before stepping")
        if n < 1:
            raise InvalidOperationError(f"steps must be at least 1, got {n}")
        if self.engine.sim_state() == SimState.STOPPED:
            self.engine.set_sim_state(SimState.PAUSED)
        self._advance(n)

    def take_window(self) -> tuple[int, float]:
        """Steps taken and wall seconds spent stepping since the last call (under the lock)."""
        window, self._window = self._window, (0, 0.0)
        return window

    def _advance(self, n: int) -> float:
        """Step ``n`` times, account for it, run ``on_advance``; the wall seconds it all took."""
        t0 = time.perf_counter()
        self.engine.step(n)
        stepped = time.perf_counter() - t0
        self._window = (self._window[0] + n, self._window[1] + stepped)
        self.on_advance()
        return time.perf_counter() - t0

    def _run(self) -> None:
        chunk = 1
        anchor = None  # (wall, sim) where real-time pacing started
        while not self._stop.is_set():
            if self.engine.sim_state() != SimState.PLAYING:
                anchor = None
                self._wake.wait(0.05)
                self._wake.clear()
                continue
            with self.lock:
                if self._stop.is_set() or self.engine.sim_state() != SimState.PLAYING:
                    continue
                busy = self._advance(chunk)
            chunk = int(np.clip(chunk * CHUNK_WALL_S / max(busy, 1e-6), 1, 1000))
            if self.rtf > 0:
                now = time.perf_counter()
                if anchor is None:
                    anchor = (now, self.engine.time)
                ahead = anchor[0] + (self.engine.time - anchor[1]) / self.rtf - now
                if ahead > 0:
                    self._stop.wait(ahead)
                chunk = max(1, min(chunk, int(CHUNK_WALL_S * self.rtf / self.engine.step_size)))
            else:
                time.sleep(0)  # let service threads take the lock
