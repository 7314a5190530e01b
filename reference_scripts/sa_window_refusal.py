"""Reference for sa_window_refusal: REM minutes in an epoch range, or a refusal.

The request is invalid when the subject is not in the file or the epoch range (1-based,
inclusive) runs past the subject's last epoch; the script reports which, never raising.
"""
import pandas as pd

EPOCH_MIN = 0.5
REM = 3


def run(inputs: list[str], params: dict) -> dict:
    table = pd.read_csv(inputs[0])
    rows = table[table["subject"] == params["subject"]].sort_values("epoch")
    if rows.empty:
        return {"status": "invalid_request", "reason": "unknown_subject", "rem_min": None}
    first, last = params["first_epoch"], params["last_epoch"]
    if first < 1 or last > int(rows["epoch"].max()) or first > last:
        return {"status": "invalid_request", "reason": "epoch_out_of_range", "rem_min": None}
    window = rows[(rows["epoch"] >= first) & (rows["epoch"] <= last)]
    rem_min = float((window["reference"] == REM).sum() * EPOCH_MIN)
    return {"status": "ok", "reason": "none", "rem_min": rem_min}
