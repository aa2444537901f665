"""Step hooks: callables an engine runs after every physics step, in the order they were added.

The engine owns one :class:`StepHooks`; whatever acts between steps (the script plugins of
:mod:`.scripts`, an example's drive) adds itself there. This module imports nothing of the
simulator, so neither side imports the other.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

StepHook = Callable[[Any], None]  # called with the engine after each step


class StepHooks:
    """An ordered set of step hooks."""

    def __init__(self) -> None:
        self._hooks: list[StepHook] = []

    def add(self, hook: StepHook) -> None:
        """Run ``hook`` after every step (after the hooks already added); adding twice is a
        no-op."""
        if hook not in self._hooks:
            self._hooks.append(hook)

    def remove(self, hook: StepHook) -> None:
        """Stop running ``hook``; removing one that is not there is a no-op."""
        if hook in self._hooks:
            self._hooks.remove(hook)

    def __contains__(self, hook: object) -> bool:
        return hook in self._hooks

    def __iter__(self) -> Iterator[StepHook]:
        return iter(self._hooks)

    def __len__(self) -> int:
        return len(self._hooks)

    def __bool__(self) -> bool:
        return bool(self._hooks)
