"""The exception hierarchy of the harness.

Every error eegbench raises on purpose derives from `EegbenchError`, in one of two kinds:

- `UserError`: the input is wrong (a bad option, instance file, task spec, run name, missing
  data). The command stops with a message naming the thing at fault; nothing is retried.
- `InfrastructureError`: something the harness depends on failed (a sandbox, a model or
  scoring endpoint, Docker). An instance that meets one ends as `infra_error` and is retried
  on resume; it is never counted as the model's failure.

The `eegbench` command catches `EegbenchError` only: any other exception is a bug in eegbench
and shows its traceback. This module sits at the bottom of the import graph (it imports
nothing), so every package can use it.
"""
from __future__ import annotations


class EegbenchError(Exception):
    """Root of every error eegbench raises on purpose."""


class UserError(EegbenchError):
    """Wrong input: an option, file or setting; the message names the field at fault."""


class InfrastructureError(EegbenchError):
    """A dependency (sandbox, endpoint, Docker) failed; not the evaluated model's fault."""


# --- validation's own user errors (ValueError stays a base: older callers catch that) -------


class MetricConfigError(UserError, ValueError):
    """A metric's params are unusable (the instance is wrong, not the model)."""


class InstanceError(UserError, ValueError):
    """A malformed instance file; the message names the file and the field."""


class ScoringError(UserError, ValueError):
    """An instance whose metrics cannot be scored; the message names case and metric."""
