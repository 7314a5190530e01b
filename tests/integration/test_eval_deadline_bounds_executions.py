"""The instance deadline bounds the execution under way: a 10-s deadline with a 150-s
execution timeout stops a sleeping cell at the deadline, not 150 s later."""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration


def test_a_cell_running_past_the_deadline_is_stopped_at_the_deadline(eegbench, tmp_path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps({"replies": ["<execute>\nimport time\ntime.sleep(120)\n</execute>",
                                              "<solution>{}</solution>"]}))
    done = eegbench("eval", "--model", f"script:{script}", "--set", "fa_hjorth-01", "--run", "deadline",
                    "--deadline", "10", "--exec-timeout", "150", "--grace", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    (result,) = eegbench.results("deadline")
    assert result["status"] == "deadline" and result["duration_s"] < 40
    observation = eegbench.transcript("deadline", "fa_hjorth-01")["turns"][0]["observation"]
    assert observation["status"] == "timeout" and observation["duration_s"] < 15
