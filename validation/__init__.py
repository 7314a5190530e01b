"""Validation: instance files, report parsing, validation units, scoring and baselines."""
