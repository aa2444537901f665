"""``kernels generate`` and ``kernels show`` end to end on bags of the paper's 1-D example."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim_fidelity.cli import main
from sim_fidelity.reality_gap import load_kernels, load_spec, write_run

SPEC = Path(__file__).resolve().parents[1] / "config" / "reality_gap" / "one_d_track.yaml"
REGION = (4.0, 6.0)  # difficult terrain, only in reality: half speed, terrain sensor on


def mission(x0: float, real: bool) -> tuple[np.ndarray, np.ndarray]:
    """States (x, terrain) at 1 Hz driving at v = 1 towards x = 9."""
    xs = [x0]
    while xs[-1] < 9.0:
        slow = real and REGION[0] <= xs[-1] < REGION[1]
        xs.append(xs[-1] + (0.5 if slow else 1.0))
    x = np.array(xs)
    terrain = (real & (x >= REGION[0]) & (x < REGION[1])).astype(float)
    return np.c_[x, terrain], np.ones((len(x), 1))


@pytest.fixture(scope="module")
def bags(tmp_path_factory):
    root = tmp_path_factory.mktemp("one_d")
    spec = load_spec(SPEC)
    out = {"sim": [], "real": []}
    for side in out:  # each start four times: the evidence the divergence test needs
        for i, x0 in enumerate([0.0, 0.5, 1.0, 1.5, 2.0] * 4):
            states, actions = mission(x0, side == "real")
            path = root / f"{side}_{i}"
            write_run(path, spec, np.arange(len(states)) * 1.0, states, actions,
                      np.zeros(len(states) - 1), storage="mcap" if i % 2 else "sqlite3")
            out[side].append(str(path))
    return out


def test_generate_and_show(bags, tmp_path, capsys):
    out = tmp_path / "kernels.yaml"
    code = main(["kernels", "generate", "--sim", *bags["sim"], "--real", *bags["real"],
                 "--spec", str(SPEC), "-o", str(out), "--rollouts", "60", "--seed", "3"])
    printed = capsys.readouterr().out
    assert code == 0 and "common_states" in printed and f"wrote {out}" in printed
    loaded = load_kernels(out)
    assert loaded.summary["kernels"] == len(loaded.kernels) >= 1
    for k in loaded.kernels:  # each kernel covers states just before the unexpected terrain
        for x, terrain in k.members:
            assert REGION[0] - 1 <= x < REGION[0] and terrain == 0
            next_x, next_terrain = k.transfer @ [x, terrain, 1.0, 1.0]  # at v = 1 m/s
            assert next_terrain == pytest.approx(1.0) and x < next_x <= REGION[0] + 0.5 + 1e-9

    png = tmp_path / "kernels.png"
    code = main(["kernels", "show", str(out), "--plot", str(png), "--over", *bags["real"]])
    printed = capsys.readouterr().out
    assert code == 0 and f"{len(loaded.kernels)} kernels" in printed
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_same_seed_same_file(bags, tmp_path):
    paths = [tmp_path / f"k{i}.yaml" for i in range(2)]
    for path in paths:
        assert main(["kernels", "generate", "--sim", *bags["sim"][:8], "--real",
                     *bags["real"][:8], "--spec", str(SPEC), "-o", str(path), "--seed", "7",
                     "--rollouts", "20"]) == 0
    assert paths[0].read_text() == paths[1].read_text()


def test_a_bad_bag_is_one_line_and_exit_2(bags, tmp_path, capsys):
    code = main(["kernels", "generate", "--sim", bags["sim"][0], "--real",
                 str(tmp_path / "missing"), "--spec", str(SPEC), "-o", str(tmp_path / "k.yaml")])
    assert code == 2  # a bad bag is an error message, not a traceback
    err = capsys.readouterr().err
    assert err.startswith("simfid kernels: error: ") and err.count("\n") == 1
    assert "missing" in err and "cannot open" in err
    assert not (tmp_path / "k.yaml").exists()
