"""The tool core both toolsets share (eegtools.toolspec): one spec type, one argument check,
and shared parameter documentation filled into docstrings."""
from __future__ import annotations

import inspect

import pytest

import braintools
import eegtools.registry
from braintools.docdict import DOCDICT as BRAINTOOLS_DOCS
from eegtools.docdict import DOCDICT as EEGTOOLS_DOCS
from eegtools.errors import ToolError
from eegtools.schema import parameter_docs
from eegtools.toolspec import ToolSpec, check_arguments, fill_doc


def test_both_toolsets_build_the_same_spec_type():
    assert all(type(spec) is ToolSpec for spec in eegtools.registry.TOOLS.items())
    assert all(type(spec) is ToolSpec and spec.group for spec in braintools.specs())
    assert not any(spec.group for spec in eegtools.registry.TOOLS.items())


def test_a_placeholder_is_replaced_by_its_entry_at_the_placeholders_indent():
    def tool(source, scale=1.0):
        """Scale a signal.

        Parameters
        ----------
        %(source)s
        scale : float, optional
            The factor.
        """
    filled = fill_doc(tool, {"source": "source : str\n    Id of a signal.\n    Any length."})
    assert filled is tool
    assert inspect.cleandoc(tool.__doc__).splitlines()[4:7] == ["source : str", "    Id of a signal.", "    Any length."]
    docs = parameter_docs(tool)
    assert docs["source"].type == "str" and docs["scale"].type == "float, optional"


def test_an_unknown_placeholder_names_the_function_and_the_entry():
    def tool(source):
        """Nothing.

        Parameters
        ----------
        %(sourse)s
        """
    with pytest.raises(KeyError, match="tool: no shared parameter documentation 'sourse'"):
        fill_doc(tool, {"source": "source : str\n    Id."})


@pytest.mark.parametrize("specs, docdict", [(lambda: list(eegtools.registry.TOOLS.items()), EEGTOOLS_DOCS),
                                            (braintools.specs, BRAINTOOLS_DOCS)], ids=["eegtools", "braintools"])
def test_every_toolset_docstring_is_filled_and_every_shared_entry_is_used(specs, docdict):
    used = set()
    for spec in specs():
        assert "%(" not in (spec.func.__doc__ or ""), spec.name
        words = " ".join(spec.func.__doc__.split())
        used |= {key for key, entry in docdict.items() if " ".join(entry.split("\n", 1)[1].split()) in words}
    assert used == set(docdict)


def test_arguments_are_checked_against_the_spec_and_nulls_dropped():
    spec = eegtools.registry.TOOLS.get("compute_band_power")
    assert check_arguments(spec, {"bands": ["alpha"], "channels": None}) == {"bands": ["alpha"]}
    for bad, code in (([], "bad_argument"), ({"bands": "alpha"}, "bad_argument"), ({"nope": 1}, "bad_argument")):
        with pytest.raises(ToolError) as caught:
            check_arguments(spec, bad)
        assert caught.value.code == code, bad
