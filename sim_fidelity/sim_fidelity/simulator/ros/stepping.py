"""``sim_server``'s time: the stepper thread that plays the engine at a real-time factor, and steps
on request while paused.

Every step holds the engine lock; both the thread and a step request release it at least every
``CHUNK_WALL_S`` so service calls get in between chunks. After each advance of time
``on_advance`` runs, still under the lock (it publishes ``/clock``, so the clock a client sees
never runs behind the state it reads). A step request (``StepSimulation``, the ``SimulateSteps``
action) takes at most ``max_steps`` steps and ends early, answered with the steps it did, when
the server stops, the simulation state changes, a reset or a state change cancels it
(:meth:`Stepper.cancel_request`) or its caller does. A divergence (the engine undid it) pauses
the simulation and goes to ``on_diverged``.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from ..engine import MujocoEngine
from ..errors import InvalidOperationError, SimulationDivergedError, SimulatorError
from ..protocol import SimState

CHUNK_WALL_S = 0.004  # stepping releases the engine to service calls at least this often
JOIN_TIMEOUT_S = 2.0  # longest stop() waits for the thread (one chunk is milliseconds)
MAX_CHUNK = 1000  # steps in one chunk at most


class StepsCancelled(SimulatorError):
    """A step request ended before all its steps; the message says after how many and why."""


class Stepper:
    """Advances ``engine`` while it is PLAYING (on a thread) and by :meth:`step` while not."""

    def __init__(self, engine: MujocoEngine, lock: threading.RLock, *, real_time_factor: float,
                 on_advance: Callable[[], None],
                 on_diverged: Callable[[SimulationDivergedError], None],
                 max_steps: int):
        self.engine, self.lock, self.rtf = engine, lock, real_time_factor
        self.on_advance, self.on_diverged, self.max_steps = on_advance, on_diverged, max_steps
        self._request: str | None = None  # why the running step request must end ("" = go on)
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

    @property
    def requested(self) -> bool:
        """A step request is running."""
        return self._request is not None

    def cancel_request(self, why: str) -> bool:
        """End the running step request at its next chunk (``why`` goes into its answer);
        False when none runs."""
        with self.lock:
            if self._request is None:
                return False
            self._request = self._request or why
            return True

    def step(self, n: int, cancelled: Callable[[], bool] = lambda: False,
             progress: Callable[[int], None] = lambda done: None) -> None:
        """Step ``n`` times on request, refused while PLAYING; the caller must not hold the
        lock: it is taken per chunk. ``cancelled()`` (the caller's own cancel) is asked and
        ``progress(done)`` told after every chunk. Raises StepsCancelled when it ends early."""
        with self.lock:
            if self.engine.sim_state() == SimState.PLAYING:
                raise InvalidOperationError("the simulation is playing: pause it before stepping")
            if n < 1:
                raise InvalidOperationError(f"steps must be at least 1, got {n}")
            if n > self.max_steps:
                raise InvalidOperationError(f"steps: {n} is more than the {self.max_steps} one "
                                            "request may take (parameter max_steps_per_request)")
            if self._request is not None:
                raise InvalidOperationError("another step request is running: wait for it or "
                                            "cancel it (set the state to PAUSED)")
            if self.engine.sim_state() == SimState.STOPPED:
                self.engine.set_sim_state(SimState.PAUSED)
            self._request = ""
        try:
            self._serve(n, cancelled, progress)
        finally:
            with self.lock:
                self._request = None

    def _serve(self, n: int, cancelled: Callable[[], bool],
               progress: Callable[[int], None]) -> None:
        done, chunk = 0, 1
        while done < n:
            with self.lock:
                why = self._request or self._ended(cancelled)
                if why:
                    raise StepsCancelled(f"stopped after {done} of {n} steps: {why}")
                k = min(chunk, n - done)
                busy = self._advance(k)
            done += k
            progress(done)
            chunk = int(np.clip(chunk * CHUNK_WALL_S / max(busy, 1e-6), 1, MAX_CHUNK))
            time.sleep(0)  # let service threads take the lock

    def _ended(self, cancelled: Callable[[], bool]) -> str:
        if self._stop.is_set():
            return "the server is stopping"
        state = self.engine.sim_state()
        if state != SimState.PAUSED:
            return f"the simulation is {state.name} now"
        return "cancelled by the caller" if cancelled() else ""

    def take_window(self) -> tuple[int, float]:
        """Steps taken and wall seconds spent stepping since the last call (under the lock)."""
        window, self._window = self._window, (0, 0.0)
        return window

    def _advance(self, n: int) -> float:
        """Step ``n`` times, account for it, run ``on_advance``; the wall seconds it all took."""
        t0 = time.perf_counter()
        try:
            self.engine.step(n)
        except SimulationDivergedError as e:  # undone by the engine: pause, report
            self.engine.set_sim_state(SimState.PAUSED)
            self.on_diverged(e)
            raise
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
                try:
                    busy = self._advance(chunk)
                except SimulationDivergedError:  # reported by _advance; paused now
                    continue
            chunk = int(np.clip(chunk * CHUNK_WALL_S / max(busy, 1e-6), 1, MAX_CHUNK))
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
