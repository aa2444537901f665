"""Errors of the recording tools."""
from __future__ import annotations

from ..errors import SimFidelityError


class RecordingError(SimFidelityError):
    """A preset, topic or bag that the recorder cannot use; the message names it."""
