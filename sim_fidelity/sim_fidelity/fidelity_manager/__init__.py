"""Task-informed fidelity management (paper 000): objects, trees, helpers, signalers, manager.

Plain Python + numpy; talks to the scene only through a :class:`~sim_fidelity.simulator.Simulator`.
"""
from ..shutdown import Interrupted, raise_on_signals
from .config import HIFI, FidelityConfig, Preset
from .errors import ConfigError
from .levels import Level, parse_level
from .manager import FidelityManager, TickReport
from .objects import BUILTIN_TYPES, ObjectType
from .trees import Tree, TreeSet

__all__ = ["BUILTIN_TYPES", "ConfigError", "FidelityConfig", "FidelityManager", "HIFI",
           "Interrupted", "Level", "ObjectType", "Preset", "TickReport", "Tree", "TreeSet",
           "parse_level", "raise_on_signals"]
