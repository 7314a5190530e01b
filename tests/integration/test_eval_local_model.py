"""MODEL=local: a real llama.cpp server (SmolLM2-135M) evaluated through the OpenAI client.

SmolLM2 rarely follows the action format; the run must still complete with honest statuses
and recorded token usage, and the server must be gone afterwards."""
from pathlib import Path

STATUSES = {"solution", "forced_solution", "max_rounds", "repeated_failure", "missing_action", "deadline"}


def llama_servers() -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"gguf" in (entry / "cmdline").read_bytes():
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


def test_eval_local_smollm2_completes_with_honest_statuses(eegbench, all_case_ids):
    before = llama_servers()
    cases = ",".join(all_case_ids[:2])
    proc = eegbench("eval", "--model", "local", "--set", cases, "--run", "local",
                    "--max-rounds", "3", "--max-tokens", "96", "--exec-timeout", "20")
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = eegbench.results("local")
    assert len(results) == 2
    for r in results:
        assert r["status"] in STATUSES, r
        assert r["prompt_tokens"] > 0 and r["completion_tokens"] > 0
        assert r["rounds"] >= 1
        turns = eegbench.transcript("local", r["case_id"])["turns"]
        assert all(t["latency_s"] > 0 for t in turns)
        if r["status"] in ("max_rounds", "missing_action", "repeated_failure"):
            assert r["score"] == 0.0
    assert llama_servers() - before == set()
