"""Typed errors of the reality-gap tools; every message names the bag, topic and field at fault."""
from __future__ import annotations

from ..errors import SimFidelityError


def _where(bag: str = "", topic: str = "", field: str = "") -> str:
    parts = [f"bag '{bag}'" if bag else "", f"topic '{topic}'" if topic else "",
             f"field '{field}'" if field else ""]
    return ", ".join(p for p in parts if p)


class RealityGapError(SimFidelityError):
    """Base class of the reality-gap errors."""

    def __init__(self, message: str, bag: str = "", topic: str = "", field: str = ""):
        self.bag, self.topic, self.field = bag, topic, field
        where = _where(bag, topic, field)
        super().__init__(f"{where}: {message}" if where else message)


class SpecError(RealityGapError):
    """A state spec (or kernels file) that is malformed or does not fit the message types."""


class BagError(RealityGapError):
    """A bag that cannot provide what the spec asks for (missing topic, wrong type, no data)."""
