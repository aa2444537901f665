"""What two threads can give on this machine for island threads (issue 16), with nothing in the way.

The island engine's two parts of a world (as `IslandParallelEngine(threads=2)` builds them, after
2 s of stepping) are each stepped N steps by one `mj_step(nstep=N)` call: one after the other, then
in two threads at once (no hand-off, no check: the bindings release the GIL for the whole call),
and the whole world serially from the same state. The ratio of the whole world's time to the two
threads' is the most island threads could reach here; the first ratio says what the second core
adds to independent work. Not a test; timing only.

    .venv/bin/python bench/two_thread_ceiling.py [--world revolute_joint_test] [--steps 5000]
        [--rounds 3]
"""
from __future__ import annotations

import argparse
import copy
import threading
import time
from pathlib import Path

import mujoco

import sim_fidelity
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.parallel import IslandParallelEngine

WORLDS = Path(sim_fidelity.__file__).resolve().parents[1] / "worlds"


def timed(work, *args) -> float:
    """Wall seconds of ``work(*args)``."""
    start = time.perf_counter()
    work(*args)
    return time.perf_counter() - start


def one_after_the_other(pairs, n: int) -> None:
    for m, d in pairs:
        mujoco.mj_step(m, d, nstep=n)


def in_threads(pairs, n: int) -> None:
    ts = [threading.Thread(target=mujoco.mj_step, args=(m, d), kwargs={"nstep": n})
          for m, d in pairs]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", default="revolute_joint_test")
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    path, n = str(WORLDS / f"{args.world}.sdf"), args.steps
    engine = IslandParallelEngine.from_file(path, threads=2)
    engine.step(2000)
    engine.run_deferred()
    whole = MujocoEngine.from_file(path)
    whole.step(2000)

    def parts():
        return [(p.model, copy.copy(p.data)) for p in engine._parts]

    print(f"{args.world}: {len(engine._parts)} parts, {n} steps per call, us per step")
    for r in range(args.rounds):
        serial = timed(one_after_the_other, parts(), n)
        both = timed(in_threads, parts(), n)
        alone = timed(one_after_the_other, [(whole.model, copy.copy(whole.data))], n)
        print(f"  round {r + 1}: parts one after the other {1e6 * serial / n:6.1f}, in two threads "
              f"{1e6 * both / n:6.1f} ({serial / both:.2f}x); whole world {1e6 * alone / n:6.1f}: "
              f"ceiling {alone / both:.2f}x")


if __name__ == "__main__":
    main()
