"""transitions.py behaviours the mutation run of d8aa5fe left untested: angles and masks of any
input dtype, node matching across the wrap (a circle shorter than eps_c, every component
periodic, an angle given outside [-pi, pi)), a machine-independent leader order, and sampling
at the extremes of the random draw."""
from __future__ import annotations

import numpy as np
from reality_gap_cases import model

from sim_fidelity.reality_gap import distance, match_nodes
from sim_fidelity.reality_gap.transitions import (
    _nearest,
    periodic_mask,
    unwrap_near,
    wrap_angle,
    wrap_states,
)

LARGEST_DRAW = 1.0 - 2.0 ** -53  # the largest number Generator.random() returns


def _untemper(y: int) -> int:
    """The MT19937 state word whose tempered output is ``y``."""
    y ^= y >> 18
    y ^= (y << 15) & 0xEFC60000
    x = y
    for _ in range(5):
        x = y ^ ((x << 7) & 0x9D2C5680)
    y = x & 0xFFFFFFFF
    x = y
    for _ in range(3):
        x = y ^ (x >> 11)
    return x & 0xFFFFFFFF


def generator_drawing(*values: float) -> np.random.Generator:
    """A real MT19937 Generator whose next ``random()`` calls return ``values`` (multiples of
    2**-53 in [0, 1)): its 53-bit doubles come from two 32-bit words, 27 and 26 bits of them."""
    words = []
    for v in values:
        k = int(v * 2.0 ** 53)
        words += [(k >> 26) << 5, (k & (2 ** 26 - 1)) << 6]
    key = np.zeros(624, np.uint32)
    key[:len(words)] = [_untemper(w) for w in words]
    bits = np.random.MT19937()
    bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 0}}
    return np.random.Generator(bits)


def test_the_generator_helper_draws_the_values_asked_for():
    np.testing.assert_array_equal(generator_drawing(0.0, 0.5, LARGEST_DRAW).random(3),
                                  [0.0, 0.5, LARGEST_DRAW])


# ---------------------------------------------------------------------- angles and masks
def test_float32_angles_are_wrapped_in_double_precision_into_minus_pi_pi():
    # kills wrap_angle 5, 7 (float32 kept: float32(pi) wraps to -3.1415927 < -pi)
    x = np.array([np.pi, -np.pi, 3.0, 10.0, -7.5], dtype=np.float32)
    out = wrap_angle(x)
    wide = out.astype(float)  # compared in float64: a float32 array would round pi first
    assert np.all(wide >= -np.pi) and np.all(wide < np.pi)
    np.testing.assert_array_equal(out, wrap_angle(x.astype(float)))
    assert out.dtype == np.float64


def test_no_periodic_flags_give_a_false_flag_per_component():
    # kills periodic_mask 1 (np.asarray(None, bool): one 0-d False)
    mask = periodic_mask(None, 3)
    assert mask.shape == (3,) and mask.dtype == bool and not mask.any()


def test_periodic_flags_given_as_zeros_and_ones_mark_components_not_indices():
    # kills periodic_mask 9, 11 (an int mask indexes components 0 and 1: both wrapped)
    mask = periodic_mask([0, 1], 2)
    assert mask.dtype == bool
    np.testing.assert_array_equal(mask, [False, True])
    np.testing.assert_allclose(wrap_states(np.array([[4.0, 4.0]]), [0, 1]),
                               [[4.0, 4.0 - 2 * np.pi]])


def test_integer_states_are_wrapped_to_float_angles():
    # kills wrap_states 3, 5 (an int copy truncates the wrapped angle to -2)
    out = wrap_states(np.array([[4, 1]]), [True, False])
    np.testing.assert_allclose(out, [[4 - 2 * np.pi, 1.0]])


def test_integer_states_are_unwrapped_to_float_angles():
    # kills unwrap_near 3, 5 (an int copy truncates 7 - 2 pi to 0)
    out = unwrap_near(np.array([[7, 7]]), [0.0, 0.0], [True, False])
    np.testing.assert_allclose(out, [[7 - 2 * np.pi, 7.0]])


# ---------------------------------------------------------------------- nearest centres
def test_nearest_without_periods_is_the_plain_l1_nearest():
    # kills _nearest 14, 16, 17 (period None kept, np.zeros(None), points.shape[2])
    idx, dist = _nearest(np.array([[0.0, 0.0], [3.0, 3.0]]), np.array([[0.0, 1.0], [3.0, 2.5]]))
    np.testing.assert_array_equal(idx, [0, 1])
    np.testing.assert_allclose(dist, [1.0, 0.5])


# ---------------------------------------------------------------------- node matching
W_SHORT_CIRCLE = np.array([1.0, 0.1])  # (x, angle): the whole circle is 0.63 < eps_c = 1
PERIODIC_ANGLE = np.array([False, True])


def test_states_close_across_the_wrap_found_one_node_when_the_circle_is_shorter_than_eps():
    # kills _l1 12 (period > 1: the fresh leaders of a block compared the long way round)
    states = np.array([[0.0, -3.0], [0.5, 3.0]])
    assert distance(states[0], states[1], W_SHORT_CIRCLE, PERIODIC_ANGLE) < 1.0  # 0.528
    nodes, ids = match_nodes(states, W_SHORT_CIRCLE, 1.0, periodic=PERIODIC_ANGLE)
    assert len(nodes) == 1 and ids[0] == ids[1]


def test_a_state_joins_the_leader_nearest_across_the_wrap_when_the_circle_is_short():
    # kills _nearest 52 (period > 1: the final assignment compares the long way round)
    # leaders (0, 0) and (1, 3); (0.5, -3) is 0.8 from the first, 0.53 from the second
    states = np.array([[0.0, 0.0], [0.5, -3.0], [1.0, 3.0]])
    nodes, ids = match_nodes(states, W_SHORT_CIRCLE, 1.0, periodic=PERIODIC_ANGLE)
    assert len(nodes) == 2
    assert ids[1] == ids[2] != ids[0]
    np.testing.assert_allclose(nodes.centres[ids[1], 0], 0.75)


def test_an_angle_given_outside_minus_pi_pi_is_matched_by_its_wrapped_value():
    # kills match_nodes 30 (unwrapped: the angle 10 comes out -3.7 from 0, "near")
    states = np.array([[0.0, 0.0], [0.0, 10.0]])
    assert distance(states[0], states[1], np.ones(2), PERIODIC_ANGLE) > 2.5
    nodes, ids = match_nodes(states, np.ones(2), 1.0, periodic=PERIODIC_ANGLE)
    assert len(nodes) == 2 and ids[0] != ids[1]
    np.testing.assert_allclose(nodes.centres[ids[1]], [0.0, 10.0 - 4 * np.pi])


def test_every_component_periodic_a_later_block_joins_a_node_across_the_wrap():
    # kills _nearest_in_window 5, 8 (period None when axis is None), match_nodes 52 (the window
    # along a periodic axis), 90 (period None in the block's comparison with the leaders)
    # 4096 states just above -pi fill the first block; the 4097th, 3.1, is 0.08 from them
    states = np.r_[-3.1 + 1e-5 * np.arange(4096), 3.1][:, None]
    nodes, ids = match_nodes(states, [1.0], 1.0, periodic=[True])
    assert len(nodes) == 1 and np.all(ids == 0)


def test_float32_weights_match_as_distance_counts_them():
    # kills match_nodes 3, 5 (the scale w / eps_c computed in float32: the pair comes out
    # 0.99999996 in scaled units, one node, although c = 0.30000001 >= eps_c)
    w = np.array([0.1], dtype=np.float32)
    states = np.array([[0.0], [3.0000001]])
    assert distance(states[0], states[1], w) >= 0.3
    nodes, ids = match_nodes(states, w, 0.3)
    assert len(nodes) == 2 and ids[0] != ids[1]


def test_leaders_among_ties_along_the_sort_axis_follow_the_other_components():
    # kills match_nodes 59, 61 (the default sort, not stable: with numpy 2.4's AVX2 sort it
    # visits y = 0, 0.6, 1.8, 1.2, 2.4 and founds 2 nodes a column, not 3; where the default
    # sort happens to keep these ties in order the mutants pass). The stable order makes the
    # nodes the same on every machine.
    y = 0.6 * np.arange(5)
    states = np.array([[yy, x] for yy in y for x in (0.0, 5.0)])  # x (widest) is the sort axis
    nodes, ids = match_nodes(states, np.ones(2), 1.0)
    assert len(nodes) == 6
    for x in (0.0, 5.0):
        col = ids[states[:, 1] == x]  # y = 0, 0.6, 1.2, 1.8, 2.4
        assert col[0] == col[1] != col[2] == col[3] != col[4] != col[0]


# ---------------------------------------------------------------------- sampling
def test_sampling_an_empty_float_array_of_nodes_gives_no_edges():
    # kills TransitionModel.sample 3, 5 (np.array([]) is float: not an index without the cast)
    m = model({(0, 0, 1): 1, (1, 0, 0): 1}, n_nodes=2, n_actions=1)
    edges = m.sample(np.array([]), np.random.default_rng(0))
    assert edges.shape == (0,)


def test_sampling_a_terminal_node_is_free_of_floating_point_errors():
    # kills TransitionModel.sample 46 (draw / (top - base): a division by 0 at a terminal node)
    m = model({(0, 0, 1): 1, (0, 1, 2): 1}, n_nodes=3)
    with np.errstate(all="raise"):
        edges = m.sample(np.array([2, 1, 0]), np.random.default_rng(0))
    assert edges[0] == edges[1] == -1 and edges[2] in (0, 1)


# node 0: two edges of P 1/2 (cumulative 0.5, 1.0); node 1: one edge (cumulative 2.0)
HALVES = {(0, 0, 1): 1, (0, 0, 2): 1, (1, 0, 0): 1}


def test_the_largest_draw_takes_the_nodes_last_edge():
    # kills TransitionModel.sample 52, 68 (upper clip None, hi + 1): at node 1, 1 + the largest
    # draw rounds to 2.0, the last cumulative sum, where the search lands past the node's edges
    m = model(HALVES, n_nodes=3, n_actions=1)
    for node, last in ((0, 1), (1, 2)):
        assert m.sample(np.array([node]), generator_drawing(LARGEST_DRAW))[0] == last


def test_a_draw_on_a_cumulative_sum_takes_the_edge_it_opens_as_generator_choice_does():
    # kills TransitionModel.sample 61 (side "left": the draw 0.5 takes the edge that ends there)
    m = model(HALVES, n_nodes=3, n_actions=1)
    lo, hi = m.offsets[0], m.offsets[1]
    for draw in (0.0, 0.25, 0.5, 0.75, LARGEST_DRAW):
        edge = m.sample(np.array([0]), generator_drawing(draw))[0]
        choice = generator_drawing(draw).choice(hi - lo, p=m.P[lo:hi])
        assert edge == lo + choice, draw
    assert m.sample(np.array([0]), generator_drawing(0.5))[0] == 1
