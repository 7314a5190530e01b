"""EEGAgentBench reference: the dataset's own label for this instance.

T1-T6 ground truth is not computed from the signal but taken from the source dataset (the
question key, the T2 mixing label, Bonn subset, ds004504 group, CHB-MIT seizure times,
Sleep-EDFx hypnogram after edge-wake trimming). The builders in runner/agentbench/ put it in
the binding's params["answer"]; this script checks that every input file the agent gets is
present and non-empty and returns that label as the target `answer`.
"""
import os


def run(inputs, params):
    for path in inputs:
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            raise FileNotFoundError(f"input {path} is missing or empty")
    if "answer" not in params:
        raise KeyError("params has no 'answer' (the dataset label)")
    return {"answer": params["answer"]}
