"""Errors of the 1-D example."""
from __future__ import annotations

from ..errors import SimFidelityError


class OnedError(SimFidelityError):
    """A 1-D example run that cannot be made as asked (e.g. fewer than one mission)."""
