"""A run's summary: counts, mean scores, statuses, tokens and time, overall and per subset,
and per epoch when the run has more than one. Every results line counts: with epochs, an
instance counts once per epoch it ran."""
from __future__ import annotations

import math
from collections import Counter

from runner.run.records import GroupSummary, ResultRecord, RunSummary


def summarize(run_id: str, records: list[ResultRecord]) -> RunSummary:
    """Group "all" first, then one per subset in order of first appearance; `epochs` by
    epoch, only when there is more than one (a single-epoch run's summary is unchanged)."""
    groups: dict[str, list[ResultRecord]] = {"all": records}
    for record in records:
        groups.setdefault(record.bench_subset, []).append(record)
    epochs = _by_epoch(records)
    return RunSummary(
        run_id=run_id,
        results=len(records),
        groups={name: _group(rows) for name, rows in groups.items()},
        with_unscored_units=sum(bool(r.unscored) for r in records),
        violations=sum(r.violations for r in records),
        epochs={epoch: _group(rows) for epoch, rows in epochs.items()} if len(epochs) > 1 else {},
    )


def _by_epoch(records: list[ResultRecord]) -> dict[int, list[ResultRecord]]:
    epochs: dict[int, list[ResultRecord]] = {}
    for record in sorted(records, key=lambda r: r.epoch):
        epochs.setdefault(record.epoch, []).append(record)
    return epochs


def _group(records: list[ResultRecord]) -> GroupSummary:
    scores = [r.score for r in records if r.score is not None]
    return GroupSummary(
        instances=len(records),
        scored=len(scores),
        mean_score=round(math.fsum(scores) / len(scores), 6) if scores else None,
        statuses=dict(sorted(Counter(r.status for r in records).items())),
        prompt_tokens=sum(r.prompt_tokens for r in records),
        completion_tokens=sum(r.completion_tokens for r in records),
        reasoning_tokens=sum(r.reasoning_tokens for r in records),
        duration_s=round(math.fsum(r.duration_s for r in records), 3),
    )
