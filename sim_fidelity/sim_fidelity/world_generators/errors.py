"""Errors of the world generators."""
from __future__ import annotations

from ..errors import SimFidelityError


class WorldGenerationError(SimFidelityError):
    """A world that cannot be generated from the given parameters; names the generator."""
