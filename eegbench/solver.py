"""The solver: one eegbench instance per sample, run by eegbench (eegbench/run.py).

The sample's messages become the transcript's, one for one (system prompt, instance message,
replies and observations), and its output the final report, so `inspect view` shows what the
model saw and wrote; Inspect's model events hold each call as made.
"""
from __future__ import annotations

from inspect_ai.model import ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from eegbench.run import InspectRun
from runner.report.inspect_log import sample_metadata, transcript_messages

ENTRY_KEY = "eegbench_entry"  # the sample's store: the run entry the scorer reads


@solver
def run_instance(run: InspectRun) -> Solver:
    """Run the sample's instance (its id is the case id) at the sample's epoch."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = str(get_model())
        record = await run.run(str(state.sample_id), state.epoch, model)
        store = run.store
        transcript = store.read_transcript(record.key)
        state.messages = transcript_messages(transcript, f"inspect:{model}")
        state.output = ModelOutput.from_content(model, store.read_report(record.key))
        state.metadata.update(sample_metadata(record, transcript), eegbench_run=store.run_id)
        state.store.set(ENTRY_KEY, record.key)
        state.completed = True
        return state

    return solve
