"""Reality-gap kernels: ingest and generation time (prints numbers; not a test). Lookup time,
precision and recall: ``simfid bench kernels``.

    .venv/bin/python bench/kernels_bench.py

Histories are synthetic versions of the paper's field test (section V): missions along the
waypoint course (0,0) -> (5,15) -> (-5,15) -> (0,0), state (x, y, pitch) at 0.5 Hz, actions
(speed, steering) binned as in ``config/reality_gap/ackermann_ugv.yaml``; in reality a ramp on
the second leg raises the pitch and halves the speed.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from sim_fidelity.reality_gap import (
    History,
    Spec,
    generate,
    read_history,
    write_run,
)
from sim_fidelity.reality_gap.bench import FIELD_SPEC

WAYPOINTS = np.array([[0.0, 0.0], [5.0, 15.0], [-5.0, 15.0], [0.0, 0.0]])
STEPS = 20  # samples per mission


def bench_spec(rollouts: int = 100) -> Spec:
    return Spec.from_dict({**FIELD_SPEC, "rollouts": {"count": rollouts, "max_steps": 100}})


def missions(n_transitions: int, real: bool, rng: np.random.Generator):
    """(states, actions) of ceil(n / STEPS) missions, arrays (missions, STEPS + 1, .)."""
    legs = np.diff(WAYPOINTS, axis=0)
    lengths = np.linalg.norm(legs, axis=1)
    ends = np.cumsum(lengths)
    n_missions = -(-n_transitions // STEPS)
    start = rng.uniform(0, ends[-1], size=(n_missions, 1))
    speed = 1.0 + rng.uniform(-0.05, 0.05, size=(n_missions, STEPS))
    arc = start.copy()
    arcs = [arc[:, 0]]
    for k in range(STEPS):
        leg = np.searchsorted(ends, arc[:, 0] % ends[-1], side="right")
        slow = real & (leg == 1)
        arc = arc + (2.0 * speed[:, k] * np.where(slow, 0.5, 1.0))[:, None]
        arcs.append(arc[:, 0])
    s = np.stack(arcs, axis=1) % ends[-1]
    leg = np.minimum(np.searchsorted(ends, s, side="right"), 2)
    along = (s - np.concatenate([[0.0], ends[:-1]])[leg]) / lengths[leg]
    xy = WAYPOINTS[leg] + along[..., None] * legs[leg]
    xy += rng.uniform(-0.1, 0.1, size=xy.shape)
    pitch = np.where(real & (leg == 1) & (np.abs(xy[..., 0]) < 2.0), 0.2, 0.0)
    states = np.concatenate([xy, pitch[..., None]], axis=-1)
    heading_change = np.diff(np.arctan2(legs[:, 1], legs[:, 0]), append=0.0)[leg]
    actions = np.stack([np.where(real & (leg == 1), 0.7, 1.2),
                        np.clip(heading_change * (along > 0.9), -0.5, 0.5)], axis=-1)
    return states, actions


def history(n: int, real: bool, spec: Spec, seed: int) -> History:
    states, actions = missions(n, real, np.random.default_rng(seed))
    m, L = states.shape[:2]
    s, s2 = states[:, :-1].reshape(-1, 3)[:n], states[:, 1:].reshape(-1, 3)[:n]
    u = actions[:, :-1].reshape(-1, 2)[:n]
    t = np.tile(np.arange(L - 1) * 2.0, m)[:n]
    run = np.repeat(np.arange(m), L - 1)[:n]
    return History(s, u, spec.discretise(u), np.zeros(n), s2, t, run)


def bench_ingest(spec: Spec) -> None:
    states, actions = missions(1000, True, np.random.default_rng(5))
    states, actions = states.reshape(-1, 3), actions.reshape(-1, 2)
    with tempfile.TemporaryDirectory() as tmp:
        for storage in ("mcap", "sqlite3"):
            path = Path(tmp) / storage
            write_run(path, spec, np.arange(len(states)) * 2.0, states, actions, storage=storage)
            started = time.perf_counter()
            h = read_history(path, spec)
            elapsed = time.perf_counter() - started
            print(f"ingest {len(h):>7} transitions ({storage:<7}, 3 topics)  "
                  f"{elapsed * 1e3:8.1f} ms")


def bench_generate(spec: Spec) -> None:
    print(f"{'transitions/side':>16} {'eps_c':>5} {'nodes':>6} {'branch':>6} {'common':>6} "
          f"{'diverg':>6} {'kernels':>7} {'dropped':>7} {'seconds':>8}")
    for eps in (0.5, 0.1):
        tuned = Spec.from_dict({**spec.raw, "distance": {"eps_c": eps},
                                "kernels": {**spec.raw["kernels"], "sigma": eps}})
        for n in (1_000, 100_000):
            sim, real = history(n, False, tuned, 1), history(n, True, tuned, 2)
            started = time.perf_counter()
            result = generate(sim, real, tuned, seed=0)
            elapsed = time.perf_counter() - started
            s = result.summary
            print(f"{n:>16,} {eps:>5} {s.nodes:>6} {s.branching_phy:>6.2f} {s.common_states:>6} "
                  f"{s.divergences:>6} {s.kernels:>7} {s.dropped:>7} {elapsed:>8.2f}")


def main() -> None:
    spec = bench_spec()
    bench_ingest(spec)
    bench_generate(spec)


if __name__ == "__main__":
    main()
