"""The execute contract: state across cells, merged output, errors, timeouts, output budget."""
from __future__ import annotations

import tracemalloc

from runner.sandbox.cell import NO_OUTPUT
from runner.sandbox.conformance.context import Check, Context, check, register, run


@check
def state_is_kept_across_cells(ctx: Context) -> None:
    """A variable bound in one cell is there in the next."""
    assert run(ctx.box, "kept = 6 * 7").status == "ok"
    obs = run(ctx.box, "print(kept)")
    assert (obs.status, obs.text) == ("ok", "42\n"), obs


@check
def empty_output_gives_an_explicit_success_message(ctx: Context) -> None:
    """A silent cell says it succeeded, so the model does not wonder."""
    obs = run(ctx.box, "unused = 1")
    assert obs.status == "ok" and obs.text == NO_OUTPUT, obs


@check
def stdout_stderr_and_result_are_merged(ctx: Context) -> None:
    """stdout, stderr and the cell's result come back as one text, in order."""
    obs = run(ctx.box, """
        import sys
        print("to-stdout")
        print("to-stderr", file=sys.stderr)
        3 * 7
    """)
    assert obs.status == "ok", obs
    assert "to-stdout" in obs.text and "to-stderr" in obs.text and obs.text.endswith("21\n"), obs.text


@check
def exception_gives_traceback_and_error_fields(ctx: Context) -> None:
    """An exception gives status error, its name and value, a plain-text traceback."""
    obs = run(ctx.box, "def f():\n    return 1 / 0\nf()")
    assert obs.status == "error", obs
    assert (obs.error_name, obs.error_value) == ("ZeroDivisionError", "division by zero"), obs
    assert "Traceback" in obs.text and "return 1 / 0" in obs.text, obs.text
    assert "\x1b" not in obs.text, obs.text  # ANSI colours stripped
    assert run(ctx.box, "print('after')").text == "after\n"  # the next cell is not dropped


@check
def timeout_interrupts_and_keeps_state(ctx: Context) -> None:
    """A cell past the timeout is interrupted; the kernel and its variables survive."""
    box = ctx.box
    run(box, "survivor = 'still here'")
    obs = run(box, "print('before the loop', flush=True)\nwhile True:\n    pass")
    assert obs.status == "timeout" and not obs.restarted, obs
    assert obs.text.startswith("before the loop\n"), obs.text
    assert "timed out after 3 s" in obs.text and "interrupted" in obs.text, obs.text
    assert box.alive()
    assert run(box, "print(survivor)").text == "still here\n"


@check
def input_fails_at_once(ctx: Context) -> None:
    """input() raises instead of waiting for a stdin nobody serves."""
    obs = run(ctx.box, "answer = input('name? ')")
    assert obs.status == "error" and obs.error_name == "StdinNotImplementedError", obs


def _large_output_check(kind: str, code: str) -> Check:
    def large_output(ctx: Context) -> None:
        tracemalloc.start()
        try:
            obs = run(ctx.slow, code)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert obs.status == "ok", obs.text[:2000]
        assert peak < 20e6, peak  # the controller never held the 50 MB (the kernel caps each message)
        budget = ctx.slow.spec.limits.output_budget_chars
        text = obs.text.replace("'", "")  # the execute_result is the str's repr
        assert text.startswith("HEADxxx") and text.rstrip("\n").endswith("xxxTAIL"), text[:200]
        assert obs.truncated_chars >= 50_000_000 - budget, obs.truncated_chars
        marker = (f"\n[... {obs.truncated_chars} characters of output cut here "
                  "(kept the first 1000 and the last 1000) ...]\n")
        assert marker in obs.text and len(obs.text) == budget + len(marker), obs.text[:3000]

    large_output.__doc__ = f"50 MB of output ({kind}) reaches the observation cut to the budget."
    return register(f"50_mb_of_output_is_truncated_without_holding_it[{kind}]", large_output)


LARGE_OUTPUTS = {
    "one_stream_message": "print('HEAD' + 'x' * 50_000_000 + 'TAIL')",
    "many_stream_messages": "for i in range(500):\n    print(('HEAD' if i == 0 else '') + 'x' * 100_000"
                            " + ('TAIL' if i == 499 else ''), end='')",
    "execute_result": "'HEAD' + 'x' * 50_000_000 + 'TAIL'",
}
for _kind, _code in LARGE_OUTPUTS.items():
    _large_output_check(_kind, _code)
