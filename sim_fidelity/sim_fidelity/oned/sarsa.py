"""Tabular SARSA(lambda) redesign of the 1-D example's control software (paper 001, IV).

The learner sees what the original software sees: the distance to the goal (binned finer near
the goal) and the terrain flag; it picks a speed towards the goal, up to three times the
original software's saturation (the field test's redesign raised its saturation where the
terrain was hard). Trained by flying missions
in a (kernel-modified) simulation with the mission reward only; ``greedy()`` is the redesigned
software. Replacing traces, epsilon-greedy exploration, a discount so earlier arrival is worth
more.
"""
from __future__ import annotations

import numpy as np

DISTANCE_EDGES = np.concatenate([np.arange(0.1, 1.0, 0.15), np.arange(1.0, 10.5, 0.5)])
SPEEDS = np.array([0.5, 1.0, 2.0, 4.0, 6.0])  # m/s towards the goal


class Sarsa:
    """A policy ``(state [x, terrain], goal) -> v`` that learns from ``feedback(r, done)``."""

    def __init__(self, rng: np.random.Generator, alpha: float = 0.2, gamma: float = 0.99,
                 lam: float = 0.9, epsilon: float = 0.1):
        self.rng = rng
        self.alpha, self.gamma, self.lam, self.epsilon = alpha, gamma, lam, epsilon
        self.q = np.zeros((len(DISTANCE_EDGES) + 1, 2, len(SPEEDS)))
        self.trace = np.zeros_like(self.q)
        self.learning = True
        self._prev: tuple[int, int, int] | None = None
        self._now: tuple[int, int, int] | None = None

    def _features(self, state: np.ndarray, goal: float) -> tuple[int, int]:
        return int(np.digitize(abs(goal - state[0]), DISTANCE_EDGES)), int(state[1] >= 0.5)

    def __call__(self, state: np.ndarray, goal: float) -> float:
        d, terrain = self._features(state, goal)
        if self.learning and self.rng.random() < self.epsilon:
            a = int(self.rng.integers(len(SPEEDS)))
        else:
            row = self.q[d, terrain]
            a = int(self.rng.choice(np.flatnonzero(row == row.max())))
        self._prev, self._now = self._now, (d, terrain, a)
        return float(np.sign(goal - state[0]) * SPEEDS[a])

    def feedback(self, reward: float, done: bool) -> None:
        """SARSA(lambda) update for (s, a) -> r -> (s', a'); ``done``: s' is terminal."""
        if not self.learning or self._prev is None:
            return
        target = reward + (0.0 if done else self.gamma * self.q[self._now])
        delta = target - self.q[self._prev]
        self.trace *= self.gamma * self.lam
        self.trace[self._prev] = 1.0
        self.q += self.alpha * delta * self.trace
        if done:
            self.trace[:] = 0.0
            self._prev = self._now = None

    def greedy(self) -> "Sarsa":
        """The learned software: no exploration, no learning."""
        self.learning = False
        return self
