"""A variable inside a list of an effect's data (issue 20's nested substitution): substituted
where it is set, and, where it is None when the trigger fires, an error naming the trigger and
the list item's path (the surviving mutants of ``_resolve`` in docs/testing.md)."""
from __future__ import annotations

import pytest
from conductor_cases import ensemble

from sim_fidelity.model_conductor.errors import ConductorError
from sim_fidelity.model_conductor.model import POSE

CONFIG = """
    variables: {{thing: {thing}}}
    triggers:
      go:
        on: {{service: go}}
        do: [{{notify: {{model: panel, event: e, data: {{objects: [ball, [$thing]]}}}}}}]
    """


def test_a_variable_in_a_nested_list_is_substituted():
    conductor, panel = ensemble(CONFIG.format(thing="crate"))
    conductor.call("go")
    assert len(panel.heard) == 1 and panel.heard[0][-1] == {"objects": ["ball", ["crate"]]}, \
        panel.heard


def test_a_none_variable_in_a_nested_list_is_an_error_naming_the_item():
    conductor, panel = ensemble(CONFIG.format(thing="null"))
    with pytest.raises(ConductorError) as e:
        conductor.call("go")
    assert str(e.value) == ("trigger 'go': effect field 'data.objects[1][0]': variable 'thing' "
                            "is None")
    assert panel.heard == [] and conductor.holder("ball", POSE) == "world"
