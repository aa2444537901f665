"""Sweeps on a real local Ray (one instance for the module, bound to loopback): rows of a grid,
resume, a failed run recorded after its one retry, a worker that kept code from before a commit
flagged, and Ctrl-C of a ``simfid sweep`` process (started with SIGINT ignored, as ``&`` in a
script leaves it) keeping every finished row."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sim_fidelity.sweep.functions import get
from sim_fidelity.sweep.runner import ray_session, run_sweep
from sim_fidelity.sweep.table import latest, read_rows

REPO = Path(__file__).resolve().parents[1]
PROBE = get("probe")


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray of two workers for the module; sweeps in it reuse it."""
    with ray_session(workers=2) as workers:
        import ray
        yield ray, workers


def runs(xs, seeds=(0,), **fixed) -> list[dict]:
    return [PROBE.complete({"x": x, "seed": s, **fixed}, "test") for x in xs for s in seeds]


def test_local_ray_is_on_loopback_with_the_network_rule(local_ray):
    ray, workers = local_ray
    assert workers == 2 and ray.util.get_node_ip_address() == "127.0.0.1"

    @ray.remote
    def env():
        return os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE"), bool(os.environ.get("HOME"))

    assert ray.get(env.remote()) == ("LOCALHOST", True)


def test_grid_rows_and_resume(local_ray, tmp_path):
    table = tmp_path / "t.jsonl"
    grid = runs([1, 2, 3], seeds=(0, 1))
    outcome = run_sweep(PROBE, grid, table, progress=False)
    assert (outcome.done, outcome.failed, outcome.skipped, outcome.workers) == (6, 0, 0, 2)
    rows = read_rows(table)
    assert sorted((r["params"]["x"], r["params"]["seed"], r["result"]["y"]) for r in rows) == \
        [(1, 0, 1), (1, 1, 1), (2, 0, 4), (2, 1, 4), (3, 0, 9), (3, 1, 9)]
    row = rows[0]
    assert row["error"] is None and row["workers"] == 2 and row["seconds"] >= 0
    assert len(row["git"]["commit"]) == 40 and row["machine"]["cpus"] == os.cpu_count()
    again = run_sweep(PROBE, grid + runs([4]), table, progress=False)
    assert (again.done, again.skipped) == (1, 6)
    assert len(read_rows(table)) == 7


def test_failed_run_recorded_after_one_retry(local_ray, tmp_path):
    table, always, once = tmp_path / "t.jsonl", tmp_path / "always", tmp_path / "once"
    grid = runs([5], fail="always", marker=str(always)) + runs([6], fail="once", marker=str(once))
    outcome = run_sweep(PROBE, grid, table, progress=False)
    assert (outcome.done, outcome.failed) == (1, 1)
    rows = {r["params"]["x"]: r for r in read_rows(table)}
    assert rows[5]["result"] is None
    assert rows[5]["error"].startswith("ProbeFailure: probe x=5 seed=0: failing as asked")
    assert rows[6]["error"] is None and rows[6]["result"]["y"] == 36
    assert len(always.read_text().split()) == 2 and len(once.read_text().split()) == 2
    rerun = run_sweep(PROBE, grid, table, progress=False)  # the failed run goes again
    assert (rerun.done, rerun.failed, rerun.skipped) == (0, 1, 1)
    assert len(always.read_text().split()) == 4
    assert [r["error"] is None for r in latest(read_rows(table)).values()] == [False, True]


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.1)


def test_ctrl_c_keeps_finished_rows_though_started_ignoring_it(tmp_path):
    spec = tmp_path / "slow.yaml"
    spec.write_text("function: probe\ngrid: {x: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}\n"
                    "params: {seconds: 1.0}\nworkers: 2\n")
    table = tmp_path / "slow.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "sim_fidelity.cli", "sweep", str(spec),
                             "--no-progress"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        wait_for(lambda: table.exists() and table.read_text().count("\n") >= 2, 120,
                 "two finished rows")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "simfid sweep: interrupted" in err
    text = table.read_text()
    assert text.endswith("\n")
    rows = [json.loads(line) for line in text.splitlines()]
    assert 2 <= len(rows) < 10 and all(r["error"] is None for r in rows)
    assert all(r["result"]["y"] == r["params"]["x"] ** 2 for r in rows)


STALE_DRIVER = """
import subprocess, sys
from sim_fidelity.sweep.functions import get
from sim_fidelity.sweep.runner import ray_session, run_sweep
from sim_fidelity.sweep.table import code_commit
probe, (table, repo) = get("probe"), sys.argv[1:]
with ray_session(workers=1):
    run_sweep(probe, [probe.complete({"x": 1}, "x")], table, progress=False)
    subprocess.run(["git", "-C", repo, "commit", "-q", "--allow-empty", "-m", "later"], check=True)
    code_commit.cache_clear()  # the driver now reads the new commit; its one worker keeps the old
    run_sweep(probe, [probe.complete({"x": 2}, "x")], table, progress=False)
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                           *args], check=True, capture_output=True, text=True).stdout.strip()


def test_worker_with_code_from_before_a_commit_is_flagged(tmp_path):
    """The package copied into a git repository of its own; a Ray worker imports it at commit A,
    then the repository moves to B: the driver's next run on that worker is refused."""
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "sim_fidelity", repo / "sim_fidelity",
                    ignore=shutil.ignore_patterns("__pycache__"))
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "A")
    first = git(repo, "rev-parse", "HEAD")
    table = tmp_path / "t.jsonl"
    env = {**os.environ, "PYTHONPATH": str(repo), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    done = subprocess.run([sys.executable, "-c", STALE_DRIVER, str(table), str(repo)], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    second = git(repo, "rev-parse", "HEAD")
    rows = {r["params"]["x"]: r for r in read_rows(table)}
    assert rows[1]["error"] is None and rows[1]["git"] == {"commit": first, "dirty": False}
    assert rows[2]["git"] == {"commit": first, "dirty": False}
    assert rows[2]["error"] == (
        f"StaleCode: the worker ran commit {first[:12]}, the driver is at {second[:12]}: a Ray "
        "worker kept code imported before a commit (restart Ray: 'ray stop', then 'ray start "
        "...' on each machine); the result is kept in the row, not counted")
    assert rows[2]["result"]["y"] == 4
