"""The flat object table of the trees (``TreeSet``) built in code: its columns, selection by name
pattern, and duplicate names."""
from __future__ import annotations

import pytest

from sim_fidelity.fidelity_manager.errors import TreeExpansionError
from sim_fidelity.fidelity_manager.objects import BUILTIN_TYPES
from sim_fidelity.fidelity_manager.trees import Tree, TreeSet

TYPES = [BUILTIN_TYPES["shape"], BUILTIN_TYPES["joint"]]


def tree(name: str, *objects: tuple[str, str]) -> Tree:
    return Tree(name, "g", "m", "", tuple(objects))


def test_the_table_lists_each_object_with_its_tree_and_type_in_tree_order():
    ts = TreeSet([tree("a", ("box", "shape"), ("hinge", "joint")), tree("b", ("lid", "shape"))],
                 TYPES)
    assert len(ts) == 2 and ts.index == {"a": 0, "b": 1}
    assert ts.entity.tolist() == ["box", "hinge", "lid"]
    assert ts.tree.tolist() == [0, 0, 1] and ts.type.tolist() == [0, 1, 0]


def test_a_selection_that_matches_nothing_is_an_empty_index_into_the_table():
    ts = TreeSet([tree("packets/0", ("p0", "shape")), tree("packets/1", ("p1", "shape"))], TYPES)
    assert ts.names[ts.select(r"packets/\d")].tolist() == ["packets/0", "packets/1"]
    assert ts.names[ts.select(["nothing", "packets/1"])].tolist() == ["packets/1"]
    assert ts.names[ts.select("nothing")].tolist() == []
    empty = TreeSet([], TYPES)
    assert empty.names[empty.select(".*")].tolist() == []


def test_duplicate_names_are_refused_for_the_whole_set():
    with pytest.raises(TreeExpansionError) as e:
        TreeSet([tree("a"), tree("b"), tree("a")], TYPES)
    assert e.value.key == "" and str(e.value) == "duplicate tree names: a"
