"""The root of every error this project raises on purpose.

Each package derives its own typed errors from `SimFidelityError` (simulator, fidelity manager,
reality gap, truck, world generators), so a caller — the `simfid` CLI above all — catches one
class and prints its message, which names what failed and where.
"""
from __future__ import annotations


class SimFidelityError(Exception):
    """An error whose message says what failed and where; shown to users in one line."""
