"""braintools: the capability-oriented EEG toolset of the BrainAgent paradigm.

Reusable operations, never a task's solution: data inspection, signal preparation,
segmentation, features, sleep, neurocognitive (ERP), physiology, statistics and artifacts.
Tools live in the sandbox's kernel and keep their objects in `STATE` (shared_state): they
take and return ids (`rec1`, `sig3`, `ep2`, `evt1`, `lab1`, `res7`, `art1`), never whole
signals. The controller calls them through `serve` (one call per execution); in a plain
Python session `call("filter_signal", {"source": "sig1", "l_freq": 1})` does the same.

    import braintools
    braintools.call("load_recording", {"path": "/input/eegmmidb/S001R02.edf"})
    braintools.STATE.summary()

`TOOLS` maps each name to its spec (group, description, JSON schema); `schemas(groups)`
gives the function-calling schemas of some groups, `schemas_sha256()` their hash.
"""
from braintools import tools as _tools  # noqa: F401  (registers every tool)
from braintools.errors import ERROR_CODES, ToolError
from braintools.protocol import RESULT_MARKER, SUMMARY_MARKER, serve, summary
from braintools.registry import COMMON_GROUPS, TOOLS, call, schemas, schemas_sha256, specs
from braintools.state import STATE

__all__ = [
    "COMMON_GROUPS", "ERROR_CODES", "RESULT_MARKER", "STATE", "SUMMARY_MARKER", "TOOLS", "ToolError",
    "call", "schemas", "schemas_sha256", "serve", "specs", "summary",
]
