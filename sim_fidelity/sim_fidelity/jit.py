"""One decorator for the few loops compiled to machine code: the per-tick passes over every packet.

A fidelity-manager tick visits ~1000 rows a few times; as numpy expressions that is some forty
calls of a few microseconds each, most of a tick (docs/benchmarks.md, issue 23). The same work as
one loop over the rows, compiled by Numba, costs a few microseconds in all. :data:`kernel` is
``numba.njit`` with the settings every such loop shares:

* ``cache=True``: compiled once per machine (into ``__pycache__`` beside the module, or Numba's
  user cache when that is read-only), loaded in later processes in milliseconds;
* ``nogil=True``: a kernel holds no Python state, so other threads (a ROS executor) run meanwhile;
* no ``fastmath``: IEEE arithmetic in the written order, so a kernel gives bit for bit what the
  same formula gives in numpy.
"""
from __future__ import annotations

import numba

kernel = numba.njit(cache=True, nogil=True)
