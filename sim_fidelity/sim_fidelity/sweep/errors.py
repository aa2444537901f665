"""The sweep package's error."""
from __future__ import annotations

from ..errors import SimFidelityError


class SweepError(SimFidelityError):
    """A sweep that cannot run or be reported: bad spec, unknown function, unreadable table,
    Ray missing; the message names the file, key or row."""
