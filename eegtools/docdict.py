"""Parameter documentation the eegtools tools share, written once and filled into each
tool's docstring where it says `%(name)s` (eegtools.toolspec.fill_doc, when the registry
builds the specs): the schemas a model sees are made from the filled docstrings."""
from __future__ import annotations

DOCDICT: dict[str, str] = {
    "budget_tokens": "budget_tokens : int or None, optional\n    Output budget in tokens (about 4 characters each): a call whose estimated result is\n    larger is refused before computing. None lifts it.",
    "channels": "channels : sequence of str, optional\n    Channel names; omit for all EEG channels.",
    "end_s": "end_s : float, optional\n    End of the time range in seconds (default: recording end).",
    "record": "record : str, os.PathLike or Recording\n    The recording: a file path (EDF, BDF, FIF, SET, VHDR, GDF, or .npy with a JSON sidecar\n    giving \"sfreq\") or a Recording from load_recording.",
    "start_s": "start_s : float, optional\n    Start of the time range in seconds (default: recording start).",
}
