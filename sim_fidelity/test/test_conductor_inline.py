"""Which SERVICE model the conductor steps in its own thread: the one whose steps cost the most
CPU, so that no thread wake-up lies on the slowest model's path (lock step unchanged)."""
from __future__ import annotations

import threading
import time

import pytest

from sim_fidelity.model_conductor.conductor import Conductor
from sim_fidelity.model_conductor.model import Model


class Busy(Model):
    """Burns ``cost`` CPU seconds a step and records the thread and time of every step."""

    def __init__(self, name: str, cost: float):
        super().__init__(name)
        self.cost = cost
        self.threads: list[int] = []
        self.times: list[float] = []
        self.now = 0.0

    def step(self, dt: float) -> None:
        end = time.thread_time() + self.cost
        while time.thread_time() < end:
            pass
        self.now += dt
        self.threads.append(threading.get_ident())
        self.times.append(self.now)


def test_the_dearest_model_moves_into_the_conductors_thread_in_lock_step():
    conductor = Conductor(step=0.001)
    main, slow = Busy("main", 0.0), Busy("slow", 0.0005)
    conductor.register(main, main=True)
    conductor.register(slow)
    conductor.initialise()
    assert conductor.inline_model is None
    conductor.start()
    assert conductor.inline_model == "main"  # before anything was measured
    for _ in range(120):
        conductor.tick()
    conductor.stop()
    here = threading.get_ident()
    assert conductor.inline_model == "slow"
    # the first 10 ticks: the main model here, the slow one in its worker; then swapped
    assert set(main.threads[:10]) == {here} and here not in slow.threads[:10]
    assert set(slow.threads[10:]) == {here} and here not in main.threads[10:]
    # lock step all along: both models at the conductor's time after every tick
    assert main.times == slow.times
    assert main.times == pytest.approx([0.001 * (k + 1) for k in range(120)], abs=1e-12)


def test_serial_conductor_steps_every_model_in_its_own_thread():
    conductor = Conductor(step=0.001, parallel=False)
    main, slow = Busy("main", 0.0), Busy("slow", 0.0005)
    conductor.register(main, main=True)
    conductor.register(slow)
    for _ in range(20):
        conductor.tick()
    conductor.stop()
    assert set(main.threads) == set(slow.threads) == {threading.get_ident()}
