"""The scorer: eegbench's own score of the instance, read from the run directory.

The solver's instance was scored by eegbench's scorer as it finished (score.json); this reads
it back as Inspect's score: value = the score 0..100, answer = the report's start, explanation
= one line per validation unit, metadata = each unit's score, weight, predicted and expected
value, the parse method and any violations. A sample that an Inspect limit (`--time-limit`)
ended before its instance finished scores 0, as an instance ending without a report does.
Inspect's metrics are the mean and its standard error over the samples.
"""
from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from eegbench.run import InspectRun
from eegbench.solver import ENTRY_KEY
from runner.report.inspect_log import SCORER, sample_scores
from runner.run.records import entry_key

UNFINISHED = ("the sample ended (an Inspect limit or a cancellation) before eegbench's instance finished: "
              "no report, scored 0 as produced; the run directory holds no result for it, so a resume runs it again")


@scorer(metrics=[mean(), stderr()], name=SCORER)
def instance_score(run: InspectRun) -> Scorer:
    """The score eegbench gave the sample's instance."""

    async def score(state: TaskState, target: Target) -> Score:
        key = state.store.get(ENTRY_KEY) or entry_key(str(state.sample_id), state.epoch)
        scheduler = run.scheduler
        record = scheduler.store.finished().get(key) if scheduler is not None else None
        if scheduler is None or record is None:  # an Inspect limit or a cancellation ended the sample first
            return Score(value=0.0, answer="", explanation=UNFINISHED, metadata={"status": "unfinished"})
        store = scheduler.store
        scores = sample_scores(record, store.read_score(key), store.read_report(key))
        if scores is None:  # infra_error: the solver raised, so the scorer is not reached
            raise RuntimeError(f"{key}: no score for an infra_error entry")
        return scores[SCORER]

    return score
