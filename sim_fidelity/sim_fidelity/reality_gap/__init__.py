"""Reality-gap kernels (paper 001): bag ingest, transition models, kernel generation and the
kernel manager core. No ROS graph needed: bags are read with ``rosbags``."""
from .bags import History, read_histories, read_history
from .errors import BagError, RealityGapError, SpecError
from .kernel_file import KernelFile, load_kernels, save_kernels
from .kernel_set import KernelRunner, KernelSet
from .kernels import Generation, Kernel, Summary, generate
from .record import write_run
from .spec import Spec, load_spec
from .transitions import Nodes, TransitionModel, common_states, distance, match_nodes

__all__ = ["History", "read_histories", "read_history", "BagError", "RealityGapError",
           "SpecError", "KernelFile", "load_kernels", "save_kernels", "KernelRunner", "KernelSet",
           "Generation", "Kernel", "Summary", "generate", "write_run", "Spec", "load_spec",
           "Nodes", "TransitionModel", "common_states", "distance", "match_nodes"]
