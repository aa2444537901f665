"""Three rules of the reality gap that only a purpose-built case tells apart (the surviving
mutants of docs/testing.md): a region's prior is the simulation's response inside that region,
a kernel's divergence is the mean of its normalised step-probability pairs even when the two
probabilities sum to less than one, and a runner gives its sensor overrides back as NaN numbers,
one per sensor, as every simulator's set_sensor_values takes them."""
from __future__ import annotations

import numpy as np
import pytest
from reality_gap_cases import TO, engine_with_value, history, kernel, line_histories, spec, spec_2d

from sim_fidelity.reality_gap import KernelRunner, KernelSet, generate
from sim_fidelity.simulator.sensor_values import SensorValues
from sim_fidelity.world_generators.one_d_track import TERRAIN

SIM_GAIN_INSIDE, SIM_GAIN_OUTSIDE = 2.0, 1.0  # the simulation's response to u, by place


def reality_driven_at_half_in_the_region(x: float, u: float,
                                         real: bool) -> tuple[float, float]:
    """The simulation moves x' = x + 2u in [4, 6] and x' = x + u elsewhere; reality moves as the
    simulation outside [4, 6] and x' = 0.9 x + 0.7 inside, where it was only ever driven with
    u = 0.5: its data say nothing about the response to the command there."""
    inside = 4.0 <= x <= 6.0
    if real and inside:
        return 0.9 * x + 0.7, 0.5
    gain = SIM_GAIN_INSIDE if inside else SIM_GAIN_OUTSIDE
    return np.clip(x + gain * u, 0, 10), u


def test_a_command_reality_never_varied_takes_the_simulations_response_in_the_region():
    sim, real = line_histories(60, 3, reality_driven_at_half_in_the_region)
    spec_ = spec_2d(distance={"eps_c": 0.1}, rollouts={"count": 400, "max_steps": 20})
    kernels = generate(sim, real, spec_, seed=0).kernels
    # a node is 0.1 wide: kernels at the region's edges also hold reality's data from outside,
    # driven with every command
    inner = [k for k in kernels if np.all(np.abs(k.members[:, 0] - 5.0) < 0.85)]
    assert len(inner) >= 3, [k.centre for k in kernels]
    for k in inner:  # transfer rows: outputs x, y; columns: x, y, u, 1
        assert k.transfer[0, 2] == pytest.approx(SIM_GAIN_INSIDE, abs=0.15), k.transfer
        x = k.centre[0]  # the command reality used: its own step
        predicted = k.transfer @ np.array([x, 0.0, 0.5, 1.0])
        assert predicted[0] == pytest.approx(0.9 * x + 0.7, abs=0.1), (x, k.transfer)


def test_a_divergence_of_two_unlikely_steps_is_normalised_by_their_sum():
    """From the start the simulation steps to one of four places (1/4 each), reality to one of
    two others (1/2 each): every divergence is the pair (1/4, 1/2), which sums to 3/4, and
    normalised is (1/3, 2/3)."""
    start = [0.0, 0.0]
    sim_ends = [[1.0, 0.0], [-1.0, 0.0], [0.0, -1.0], [1.0, -1.0]]
    real_ends = [[0.0, 1.0], [-1.0, 1.0]]
    sim = history(*[[start, sim_ends[i % 4], sim_ends[i % 4]] for i in range(40)])
    real = history(*[[start, real_ends[i % 2], real_ends[i % 2]] for i in range(40)])
    result = generate(sim, real, spec_2d(), seed=0)
    assert result.summary.divergences > 0
    (k,) = result.kernels
    np.testing.assert_allclose(k.divergence, (1 / 3, 2 / 3))


class RecordedValues(SensorValues):
    """The engine's sensor-value table, keeping every batch of values it is given."""

    def __init__(self, engine) -> None:
        super().__init__(engine)
        self.given: list[np.ndarray] = []

    def set_sensor_values(self, names, values) -> None:
        self.given.append(np.asarray(values))
        super().set_sensor_values(names, values)


def test_a_release_gives_back_one_nan_number_per_sensor():
    engine = engine_with_value()
    table = RecordedValues(engine)
    runner = KernelRunner(engine, KernelSet([kernel([[0.0, 0.0]], TO)],
                                            spec("pose.z", "value")), sensors=table)
    assert runner.apply(np.zeros(2), np.zeros(1)) is not None
    assert table.value(TERRAIN) == pytest.approx(0.3)
    runner.release()
    released = table.given[-1]
    assert released.shape == (1,) and released.dtype.kind == "f", released
    assert np.isnan(released).all() and table.value(TERRAIN) == 0.25
