"""The 1-D example end to end (``simfid example oned``) on a small mission count: the paper's
ordering of the Average Total Rewards, through real bags, real kernels and real physics."""
import json

import numpy as np
import pytest

from sim_fidelity.cli import main
from sim_fidelity.oned.track import (
    ACCURACY,
    CONTROL_PERIOD,
    DEADLINE,
    LATE,
    Track,
    run_mission,
    spring_policy,
)
from sim_fidelity.reality_gap import load_kernels


def test_mission_rewards_follow_the_monitor():
    """+10 for on-time accurate arrival, 0 for any tick before the deadline, -10 for any tick
    after it (paper IV); the software is Fig. 3's vel = 5 * delta, saturated."""
    software = spring_policy()
    assert software(np.array([1.0, 0.0]), 1.3) == pytest.approx(1.5)  # 5 * 0.3 m
    assert software(np.array([1.0, 0.0]), 9.0) == 2.0  # saturated
    on_time = run_mission(Track(), software, 9.9, 1.0)  # 8.9 m, no difficult terrain
    assert on_time.total == 10.0
    assert on_time.rewards[:-1].tolist() == [0.0] * (len(on_time.rewards) - 1)
    assert abs(on_time.states[-1, 0] - 1.0) < ACCURACY and on_time.times[-1] <= DEADLINE
    assert not on_time.states[:, 1].any()
    late = run_mission(Track([(2.0, 7.0)]), software, 8.0, 1.0)  # 5 m of mud on the way
    assert abs(late.states[-1, 0] - 1.0) < ACCURACY and late.times[-1] > DEADLINE
    ticks_late = int(round((late.times[-1] - DEADLINE) / CONTROL_PERIOD))
    assert late.total == LATE * ticks_late and ticks_late > 10  # -10 per tick after it
    inside = (late.states[:, 0] >= 2.0) & (late.states[:, 0] <= 7.0)
    assert np.array_equal(late.states[:, 1] == 1.0, inside)  # the flag reads the regions


def test_example_shape_on_200_missions(tmp_path, capsys):
    assert main(["example", "oned", "--missions", "200", "--episodes", "400", "--seed", "0",
                 "--plots", str(tmp_path / "plots"), "--bags", str(tmp_path / "work"),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    atr = out["atr"]
    assert atr["Deploy"] < atr["Design"] - 2  # the deployment misses deadlines
    assert atr["Deploy"] < atr["Kernels"] < atr["Design"]  # kernels bring reality in ...
    assert atr["Kernels"] - atr["Deploy"] < atr["Design"] - atr["Kernels"]  # ... most of it
    assert out["gap_reproduced"] == pytest.approx(
        (atr["Design"] - atr["Kernels"]) / (atr["Design"] - atr["Deploy"]))
    assert atr["Redeploy"] > atr["Deploy"] + 2  # the redesign transfers to the deployment
    assert out["kernel_corrections"]["Kernels"] > 0
    # H went through real bags, one per mission and phase, and the kernels file is loadable
    assert len(list((tmp_path / "work" / "Design").iterdir())) == 200
    kernels = load_kernels(tmp_path / "work" / "kernels.yaml")
    assert len(kernels.kernels) == out["kernels"]["kernels"] > 0
    for png in out["plots"]:
        assert png.endswith(".png")
        assert (tmp_path / "plots").joinpath(png.split("/")[-1]).stat().st_size > 10_000
