import json
from collections import Counter

from runner.benchmark.agentbench import knowledge, specs
from runner.core.paths import PROJECT_ROOT


def test_bank_has_twenty_distinct_four_option_questions():
    assert len(knowledge.QUESTIONS) >= 20
    assert len({q.qid for q in knowledge.QUESTIONS}) == len(knowledge.QUESTIONS)
    for q in knowledge.QUESTIONS:
        texts = [q.correct, *q.distractors]
        assert len(set(texts)) == 4, q.qid
        assert q.text.strip() and all(t.strip() for t in texts), q.qid


def test_shuffle_is_seeded_by_question_id_and_keeps_the_key():
    letters = []
    for q in knowledge.QUESTIONS:
        options, correct = knowledge.shuffled_options(q)
        assert knowledge.shuffled_options(q) == (options, correct)
        assert options[correct] == q.correct
        assert sorted(options) == list(knowledge.LETTERS)
        letters.append(correct)
    # no position bias: each letter is the key equally often (a constant guess scores 0.25)
    assert Counter(letters) == {letter: len(letters) // 4 for letter in knowledge.LETTERS}


def test_committed_t1_spec_is_the_bank():
    path = PROJECT_ROOT / "instances" / "tasks" / f"{specs.T1_ID}.json"
    assert path.read_text() == specs.spec_text(specs.t1_spec()), \
        "stale: run python -m runner.benchmark.agentbench.specs, then eegbench truth"
    assert len(json.loads(path.read_text())["bindings"]) == len(knowledge.QUESTIONS)
