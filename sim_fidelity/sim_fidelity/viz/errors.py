"""Errors of the visualisation: what could not be rendered or shown, and why."""
from __future__ import annotations

from ..errors import SimFidelityError


class RenderError(SimFidelityError):
    """An image or clip could not be made (no GL back-end, a bad camera, an unwritable format)."""
