"""Responsibility allocation (paper 003, section 3.1): who holds each (entity, attribute) pair.

Exactly one model holds a pair and computes it; every other model that represents the pair follows
the holder's value. The table knows which models represent which pairs, checks every transfer and
keeps the log of changes (the initial allocation included, with ``from_model == ""``).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .errors import ResponsibilityError
from .model import POSE, TWIST

Pair = tuple[str, str]  # (entity, attribute)


@dataclass(frozen=True)
class Transfer:
    """One change of holder, as logged (``sim_fidelity_interfaces/msg/ResponsibilityChange``)."""

    time: float
    entity: str
    attribute: str
    from_model: str  # "" for the initial allocation
    to_model: str
    cause: str  # the trigger, "config" for the initial allocation, or the caller's reason


class Responsibilities:
    """The allocation table of (entity, attribute) -> holding model, with its log."""

    def __init__(self, *, twist_follows_pose: bool = True):
        """``twist_follows_pose``: a transfer of ``pose`` carries ``twist`` along (when the new
        holder represents it)."""
        self.twist_follows_pose = twist_follows_pose
        self._representers: dict[Pair, list[str]] = {}
        self._holder: dict[Pair, str] = {}
        self.log: list[Transfer] = []

    # --- what models can hold ----------------------------------------------------------------
    def declare(self, model: str, represents: Mapping[str, Iterable[str]]) -> None:
        """Record that ``model`` represents these attributes of these entities."""
        for entity, attributes in represents.items():
            for attribute in attributes:
                names = self._representers.setdefault((entity, attribute), [])
                if model not in names:
                    names.append(model)

    def representers(self, entity: str, attribute: str) -> list[str]:
        """Models that represent the pair, in declaration order."""
        return list(self._representers.get((entity, attribute), ()))

    def entities(self) -> list[str]:
        return list(dict.fromkeys(e for e, _ in self._representers))

    # --- who holds what ----------------------------------------------------------------------
    def holder(self, entity: str, attribute: str) -> str | None:
        return self._holder.get((entity, attribute))

    def held_by(self, model: str) -> list[Pair]:
        return [p for p, m in self._holder.items() if m == model]

    def holders(self) -> dict[Pair, str]:
        """A copy of the whole table."""
        return dict(self._holder)

    def followers(self, entity: str, attribute: str) -> list[str]:
        """Models that represent the pair but do not hold it."""
        holder = self._holder.get((entity, attribute))
        return [m for m in self._representers.get((entity, attribute), ()) if m != holder]

    # --- changes -----------------------------------------------------------------------------
    def allocate(self, main: str | None, overrides: Mapping[Pair, str], time: float = 0.0
                 ) -> list[Transfer]:
        """The initial allocation: ``overrides`` (from the config), else the main model where it
        represents the pair, else the first model that does. Logged with cause ``config``."""
        overrides = dict(overrides)
        for (entity, attribute), model in list(overrides.items()):
            self._check(entity, attribute, model)
            if (attribute == POSE and self.twist_follows_pose and (entity, TWIST) not in overrides
                    and model in self._representers.get((entity, TWIST), ())):
                overrides[(entity, TWIST)] = model
        changes = []
        for pair, names in self._representers.items():
            holder = overrides.get(pair) or (main if main in names else names[0])
            self._holder[pair] = holder
            changes.append(Transfer(time, pair[0], pair[1], "", holder, "config"))
        self.log.extend(changes)
        return changes

    def plan(self, entity: str, attribute: str, to_model: str) -> list[Pair]:
        """The pairs a transfer of (entity, attribute) to ``to_model`` moves: the pair itself,
        plus ``twist`` with ``pose`` (see ``twist_follows_pose``); pairs already held by
        ``to_model`` are left out. Raises ResponsibilityError for a transfer that is not
        possible."""
        self._check(entity, attribute, to_model)
        pairs = [(entity, attribute)]
        if (attribute == POSE and self.twist_follows_pose
                and to_model in self._representers.get((entity, TWIST), ())):
            pairs.append((entity, TWIST))
        return [p for p in pairs if self._holder.get(p) != to_model]

    def move(self, entity: str, attribute: str, to_model: str, time: float, cause: str
             ) -> Transfer:
        """Record one change of holder (the conductor has moved the value); returns the log
        entry."""
        self._check(entity, attribute, to_model)
        change = Transfer(time, entity, attribute, self._holder.get((entity, attribute), ""),
                          to_model, cause)
        self._holder[(entity, attribute)] = to_model
        self.log.append(change)
        return change

    def _check(self, entity: str, attribute: str, model: str) -> None:
        names = self._representers.get((entity, attribute))
        if names is None:
            known = sorted({a for e, a in self._representers if e == entity})
            if known:
                raise ResponsibilityError(f"no model represents '{attribute}' of '{entity}' "
                                          f"(its attributes: {', '.join(known)})")
            raise ResponsibilityError(f"no model represents entity '{entity}'")
        if model not in names:
            raise ResponsibilityError(f"model '{model}' cannot hold '{attribute}' of '{entity}': "
                                      f"it does not represent it (models that do: "
                                      f"{', '.join(names)})")
