"""Adding a tool is one registration: a toy tool, defined and registered in this module only,
gets a JSON schema from its signature and docstring (the shared parameter text filled in),
is offered to the model, called through call_tool with its arguments checked, and changes
the schemas' hash while it is there."""
from __future__ import annotations

import mne
import pytest

from eegtools import ToolError, call_tool, schemas, schemas_sha256
from eegtools.budget import DEFAULT_BUDGET_TOKENS
from eegtools.registry import TOOLS, register
from eegtools.tools import RecordLike, get_channel_list


def count_channels(record: RecordLike, *, prefix: str = "", budget_tokens: int | None = DEFAULT_BUDGET_TOKENS) -> dict:
    """How many channels the recording has whose name starts with a prefix.

    Parameters
    ----------
    %(record)s
    prefix : str
        The start of the names to count, case-insensitive (all channels when empty).
    %(budget_tokens)s

    Returns
    -------
    dict
        ``record``, ``prefix``, ``n_channels``.
    """
    listed = get_channel_list(record, budget_tokens=budget_tokens)
    names = [c["name"] for c in listed["channels"] if c["name"].lower().startswith(prefix.lower())]
    return {"record": listed["record"], "prefix": prefix, "n_channels": len(names)}


@pytest.fixture
def toy():
    before = schemas_sha256()
    spec = register(count_channels)
    yield spec
    TOOLS.unregister("count_channels")
    assert schemas_sha256() == before


def resolve(path):
    def record(record_id):
        return path
    return record


def test_a_registered_tool_is_offered_checked_and_called(toy, mmidb):
    offered = schemas()[-1]["function"]
    assert offered["name"] == "count_channels" and offered["description"].startswith("How many channels")
    assert list(offered["parameters"]["properties"]) == ["record", "prefix"]  # budget_tokens is the harness's
    assert "Record id" in offered["parameters"]["properties"]["record"]["description"]  # the shared text
    names = mne.io.read_raw_edf(mmidb, verbose="error").ch_names  # counted independently
    assert call_tool("count_channels", {"prefix": "c"}, resolve(mmidb)) == {
        "record": mmidb.name, "prefix": "c", "n_channels": sum(n.lower().startswith("c") for n in names)}
    assert call_tool("count_channels", {}, resolve(mmidb))["n_channels"] == len(names) == 64
    error = call_tool("count_channels", {"prefix": 3}, resolve(mmidb))["error"]
    assert error["code"] == "bad_argument" and "prefix" in error["message"]
    with pytest.raises(ValueError, match="registered twice"):
        register(count_channels)


def test_an_unknown_tool_is_a_tool_error_listing_the_tools():
    error = call_tool("count_channels", {}, resolve(None))["error"]
    assert error["code"] == "unsupported"
    assert error["message"].startswith("tool 'count_channels' does not exist; tools: get_recording_info, ")
    with pytest.raises(ToolError, match="does not exist"):
        TOOLS.get("count_channels")
