"""Errors of the truck-unloading case study."""
from __future__ import annotations

from ..errors import SimFidelityError


class TruckError(SimFidelityError):
    """A truck run, benchmark or controller set-up that cannot be made as asked."""
