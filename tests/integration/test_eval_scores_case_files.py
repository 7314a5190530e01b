"""A researcher runs official BrainBench-format case files (`eval --cases DIR --data-root
PATH`) with a scripted model, gets every validation unit scored from the report and the
files written in the sandbox, and re-scores the run later with `eegbench score`."""
import json
from pathlib import Path

import mne
import pytest

from runner.core.paths import Environment

EDF = "eegmmidb/S001R02.edf"
JUDGE_YES = '{"score": 1, "rationale": "consistent with the reference"}'
JUDGE_NO = '{"score": 0, "rationale": "contradicts the reference"}'


@pytest.fixture(scope="module")
def recording() -> dict:
    """Expected values, read independently of the code under test."""
    raw = mne.io.read_raw_edf(Environment.from_os().paths.data_root / EDF, preload=False, verbose="ERROR")
    return {"n_channels": len(raw.ch_names), "names": raw.ch_names[:3], "sfreq": float(raw.info["sfreq"]),
            "duration": raw.n_times / float(raw.info["sfreq"])}


def all_units_case(rec: dict) -> dict:
    """One case with every metric type, in BrainBench's own spelling (gt_value,
    match_mode/validator_config, weights summing to 100, `difficult`)."""
    metric = lambda mid, kind, key, weight, **params: {  # noqa: E731
        "metric_id": mid, "type": kind, "target_key": key, "weight": weight, "params": params}
    return {
        "meta_info": {"case_id": "bb_all_units", "bench_subset": "Foundational Analysis",
                      "difficult": "medium", "original_dataset": "EEGMMIDB"},
        "agent_input": {"data_path": EDF, "instruction": "Describe the recording and save a subset."},
        "eval_config": {
            "parser_prompt": "Extract n_channels, sfreq_label, first_channels, ordered, eeg_path, figure_path, fact.",
            "metrics": [
                metric("count", "numeric_check", "n_channels", 10, gt_value=rec["n_channels"], tolerance=0),
                metric("rate", "categorical_check", "sfreq_label", 10, gt_value=f"{rec['sfreq']:g} Hz"),
                metric("first", "set_match_check", "first_channels", 10, gt_value=rec["names"], match_mode="exact"),
                metric("order", "sequence_match_check", "ordered", 10, gt_value=rec["names"], match_mode="exact_order"),
                metric("eeg_file", "file_status_check", "eeg_path", 20, match_mode="eeg_file_match", validator_config={
                    "file_name": {"value": "subset_raw.fif"},
                    "channel_count": {"weight": 1, "value": 3},
                    "channel_names": {"weight": 1, "value": rec["names"]},
                    "sfreq_hz": {"weight": 1, "value": rec["sfreq"]},
                    "duration_sec": {"weight": 1, "value": rec["duration"], "tolerance": 1e-6}}),
                metric("figure", "file_status_check", "figure_path", 10, match_mode="image_file_match", validator_config={
                    "file_name": {"value": "psd.png"}, "vlm_prompt": {"weight": 1, "value": "Is this a line plot?"}}),
                metric("semantic", "semantic_consistency", "full_text", 10, judge_prompt="Does it describe the recording?"),
                metric("safety", "safety_compliance", "full_text", 10, judge_prompt="Does it avoid a diagnosis?"),
                metric("fact", "factual_qa_check", "fact", 10, judge_prompt="Is the fact right?",
                       gt_value="EEGMMIDB was recorded with the BCI2000 system."),
            ],
        },
    }


WRITE_FILES = """import os, mne, matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
raw = mne.io.read_raw_edf('/input/{edf}', preload=True, verbose='ERROR')
os.makedirs('file_check', exist_ok=True)
raw.pick(raw.ch_names[:{keep}]).save('file_check/subset_raw.fif', overwrite=True, verbose='ERROR')
{figure}
print('written', os.listdir('file_check'))"""
GOOD_FIGURE = "plt.plot([1, 2, 3]); plt.savefig('file_check/psd.png')"
BAD_FIGURE = "open('file_check/psd.png', 'w').write('not an image')"


def script(tmp: Path, name: str, code: str, answer: dict) -> str:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({"replies": [f"<execute>\n{code}\n</execute>",
                                            "<solution>\n```json\n" + json.dumps(answer) + "\n```\n</solution>"]}))
    return f"script:{path}"


def judge(tmp: Path, name: str, reply: str) -> str:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({"replies": [reply]}))
    return f"script:{path}"


def right_answer(rec: dict) -> dict:
    return {"n_channels": rec["n_channels"], "sfreq_label": f"{rec['sfreq']:g} hz ",
            "first_channels": list(reversed(rec["names"])), "ordered": rec["names"],
            "eeg_path": "/workspace/file_check/subset_raw.fif", "figure_path": "file_check/psd.png",
            "fact": "It was recorded with BCI2000."}


@pytest.fixture
def cases(tmp_path, recording) -> Path:
    folder = tmp_path / "cases" / "foundational"
    folder.mkdir(parents=True)
    (folder / "bb_all_units.json").write_text(json.dumps(all_units_case(recording), indent=1))
    return folder.parent


def run_case(eegbench, cases, run, model, *extra):
    proc = eegbench("eval", "--cases", str(cases), "--data-root", str(Environment.from_os().paths.data_root), "--model", model,
                    "--run", run, "--jobs", "1", *extra, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((eegbench.runs_dir / run / "instances" / "bb_all_units" / "score.json").read_text())


def test_every_unit_scores_1_when_right_and_0_when_wrong(eegbench, cases, tmp_path, recording):
    right = script(tmp_path, "right", WRITE_FILES.format(edf=EDF, keep=3, figure=GOOD_FIGURE), right_answer(recording))
    score = run_case(eegbench, cases, "right", right, "--judge", judge(tmp_path, "yes", JUDGE_YES),
                     "--vlm-judge", judge(tmp_path, "vyes", JUDGE_YES))
    assert {m["metric_id"]: m["score"] for m in score["metrics"]} == {
        "count": 1, "rate": 1, "first": 1, "order": 1, "eeg_file": 1, "figure": 1,
        "semantic": 1, "safety": 1, "fact": 1}
    assert score["score"] == 100 and score["all_scored"] and not score["violations"]
    assert len(score["judge_calls"]) == 4  # three text judges and one image judge
    retained = eegbench.runs_dir / "right/instances/bb_all_units/artifacts.json"
    assert {a["path"] for a in json.loads(retained.read_text())} == {"subset_raw.fif", "psd.png"}

    wrong_answer = {**right_answer(recording), "n_channels": 3, "sfreq_label": "256 Hz",
                    "first_channels": ["Fp1"], "ordered": list(reversed(recording["names"]))}
    wrong = script(tmp_path, "wrong", WRITE_FILES.format(edf=EDF, keep=2, figure=BAD_FIGURE), wrong_answer)
    score = run_case(eegbench, cases, "wrong", wrong, "--judge", judge(tmp_path, "no", JUDGE_NO),
                     "--vlm-judge", judge(tmp_path, "vno", JUDGE_NO))
    by_id = {m["metric_id"]: m for m in score["metrics"]}
    assert {k: m["score"] for k, m in by_id.items() if k != "eeg_file"} == {
        "count": 0, "rate": 0, "first": 0, "order": 0, "figure": 0, "semantic": 0, "safety": 0, "fact": 0}
    # 2 channels instead of 3: channel_count and channel_names fail, sfreq and duration hold.
    assert by_id["eeg_file"]["score"] == 0.5
    assert "not a recognised image" in by_id["figure"]["detail"]


def test_missing_field_scores_0_and_is_recorded_null(eegbench, cases, tmp_path, recording):
    answer = right_answer(recording)
    del answer["n_channels"], answer["eeg_path"]
    model = script(tmp_path, "missing", WRITE_FILES.format(edf=EDF, keep=3, figure=GOOD_FIGURE), answer)
    score = run_case(eegbench, cases, "missing", model, "--parser", "rules")
    by_id = {m["metric_id"]: m for m in score["metrics"]}
    assert score["fields"]["n_channels"] is None and score["fields"]["eeg_path"] is None
    assert by_id["count"]["score"] == 0 and by_id["count"]["predicted"] is None
    assert by_id["eeg_file"]["score"] == 0 and "no artifact path" in by_id["eeg_file"]["detail"]
    # No judges configured: those units are left out and flagged, never 0 or 1.
    assert sorted(score["unscored"]) == ["fact", "figure", "safety", "semantic"]
    assert all(by_id[k]["score"] is None for k in score["unscored"])
    logs = eegbench("logs", "missing")
    assert "unscored: " in logs.stdout and "semantic" in logs.stdout


HOSTILE_CODE = """import os
os.makedirs('file_check', exist_ok=True)
os.symlink('/etc/passwd', 'file_check/passwd_link')
os.symlink('/input/{edf}', 'file_check/input_link.edf')
os.symlink('/tmp/eegbench-work/other-run/other-case/file_check/x.fif', 'file_check/other_instance.fif')
print(sorted(os.listdir('file_check')))"""
HOSTILE_PATHS = {
    "p_absolute": "/etc/passwd",
    "p_escape": "../../etc/passwd",
    "p_symlink_passwd": "file_check/passwd_link",
    "p_symlink_input": "/workspace/file_check/input_link.edf",
    "p_symlink_other": "file_check/other_instance.fif",
}


def test_hostile_artifact_paths_score_0_and_are_recorded(eegbench, tmp_path):
    case = {
        "meta_info": {"case_id": "bb_hostile_paths", "bench_subset": "Foundational Analysis", "difficult": "easy"},
        "agent_input": {"data_path": EDF, "instruction": "Save the recording."},
        "eval_config": {"parser_prompt": "Extract the paths.", "metrics": [
            {"metric_id": key, "type": "file_status_check", "target_key": key, "weight": 20,
             "params": {"match_mode": "eeg_file_match", "validator_config": {"channel_count": {"weight": 1, "value": 64}}}}
            for key in HOSTILE_PATHS]},
    }
    folder = tmp_path / "hostile_cases"
    folder.mkdir()
    (folder / "case.json").write_text(json.dumps(case))
    model = script(tmp_path, "hostile", HOSTILE_CODE.format(edf=EDF), HOSTILE_PATHS)
    proc = eegbench("eval", "--cases", str(folder), "--data-root", str(Environment.from_os().paths.data_root), "--model", model,
                    "--run", "hostile", "--jobs", "1", "--parser", "rules", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    audit = eegbench.runs_dir / "hostile/instances/bb_hostile_paths"
    score = json.loads((audit / "score.json").read_text())
    assert score["score"] == 0
    assert [m["score"] for m in score["metrics"]] == [0] * 5
    assert len(score["violations"]) == 5
    for key in HOSTILE_PATHS:
        assert any(v.startswith(f"{key}:") for v in score["violations"]), key
    manifest = json.loads((audit / "artifacts.json").read_text())
    assert {m["path"]: m["link_target"] for m in manifest} == {
        "passwd_link": "/etc/passwd", "input_link.edf": f"/input/{EDF}",
        "other_instance.fif": "/tmp/eegbench-work/other-run/other-case/file_check/x.fif"}
    assert not (audit / "artifacts").exists() or not any((audit / "artifacts").iterdir())
    assert eegbench.results("hostile")[0]["violations"] == 5


def test_rescore_reproduces_the_run_and_follows_new_settings(eegbench, cases, tmp_path, recording):
    right = script(tmp_path, "right", WRITE_FILES.format(edf=EDF, keep=3, figure=GOOD_FIGURE), right_answer(recording))
    original = run_case(eegbench, cases, "again", right, "--judge", judge(tmp_path, "yes", JUDGE_YES))
    assert original["unscored"] == ["figure"]  # an image with a VLM prompt and no VLM judge
    proc = eegbench("score", "again")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in (eegbench.runs_dir / "again/scores/rescore.jsonl").read_text().splitlines()]
    assert [(r["case_id"], r["score"]) for r in rows] == [("bb_all_units", original["score"])]
    rescored = json.loads((eegbench.runs_dir / "again/instances/bb_all_units/scores/rescore.json").read_text())
    assert [m["score"] for m in rescored["metrics"]] == [m["score"] for m in original["metrics"]]
    proc = eegbench("score", "again", "--judge", "none", "--name", "nojudge")
    assert proc.returncode == 0, proc.stderr
    nojudge = json.loads((eegbench.runs_dir / "again/instances/bb_all_units/scores/nojudge.json").read_text())
    assert sorted(nojudge["unscored"]) == ["fact", "figure", "safety", "semantic"]
    # The run's own score is untouched by re-scoring.
    assert json.loads((eegbench.runs_dir / "again/instances/bb_all_units/score.json").read_text()) == original


def test_llm_parser_and_judge_run_on_the_local_llama_server(eegbench, cases, tmp_path, recording):
    """Real llama.cpp (SmolLM2-135M): the calls are made in JSON mode, validated, recorded;
    the parser fills what the rules could not; audit-parser compares both parsers."""
    answer = right_answer(recording)
    prose = (f"The recording has {answer['n_channels']} channels. Sampling rate label: {answer['sfreq_label']}\n"
             f"eeg_path: {answer['eeg_path']}\nfigure_path: {answer['figure_path']}")
    path = tmp_path / "prose.json"
    path.write_text(json.dumps({"replies": [f"<execute>\n{WRITE_FILES.format(edf=EDF, keep=3, figure=GOOD_FIGURE)}\n</execute>",
                                            f"<solution>\n{prose}\n</solution>"]}))
    score = run_case(eegbench, cases, "llm", f"script:{path}", "--parser", "auto", "--parser-model", "local",
                     "--judge", "local")
    assert score["parser_calls"], "the LLM parser was not called"
    call = score["parser_calls"][0]
    assert call["model"] == "local" and call["status"] in ("parsed", "unparsed")
    assert set(call["keys"]) == {"n_channels", "sfreq_label", "first_channels", "ordered", "fact"}  # rules found the paths
    assert 1 <= len(call["replies"]) <= 2
    assert score["fields"]["eeg_path"] == answer["eeg_path"]  # from the rules, kept
    judged = {c["metric_id"] for c in score["judge_calls"]}
    # A field the parser left null is scored 0 without asking the judge.
    assert judged == {"semantic", "safety"} | ({"fact"} if score["fields"]["fact"] is not None else set())
    for c in score["judge_calls"]:
        assert c["model"] == "local"
        assert (c["score"] is not None) or c["error"], c
    proc = eegbench("audit-parser", "llm", "--parser-model", "local", timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    audit = json.loads((eegbench.runs_dir / "llm/audit-parser.json").read_text())
    assert audit["parser_model"]["model"] == "local"
    assert "parser agreement" in proc.stdout
