"""The root of every error this project raises on purpose.

Each package derives its typed errors from `SimFidelityError` (simulator, fidelity manager,
reality gap, truck, 1-D example, world generators, node parameters), so a caller — the `simfid`
CLI above all — catches one class and prints its message, which names what failed and where.
A typed error may also be the built-in exception it refines (`UnknownEntityError` is a
`KeyError`, `SdfError` a `ValueError`), so that it reads as what it is; callers catch the typed
class, never the built-in one.
"""
from __future__ import annotations


class SimFidelityError(Exception):
    """An error whose message says what failed and where; shown to users in one line."""
