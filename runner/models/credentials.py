"""Where an endpoint's URL and key come from, and which of them may leave this machine.

A key is read from its variable (EEGBENCH_API_KEY, OPENAI_API_KEY, EEGBENCH_<ROLE>_API_KEY)
or, when that is unset, from the file its `<NAME>_FILE` variable names (as Docker and
Kubernetes secrets are mounted). A key never travels: a worker on another machine receives
only the URLs and key-file paths (`shareable`) and reads the key from its own environment,
so no key enters a Ray cluster's object store, a worker spec, run.json or a log.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from validation.errors import UserError

BASE_URL_VARS = ("EEGBENCH_BASE_URL", "OPENAI_BASE_URL")
API_KEY_VARS = ("EEGBENCH_API_KEY", "OPENAI_API_KEY")
FILE_SUFFIX = "_FILE"


def read_key(env: Mapping[str, str], name: str) -> str | None:
    """The key in variable `name`, else in the file `<name>_FILE` names; None when neither
    is set. UserError names the variable and the file when the file cannot be read or is empty."""
    if env.get(name):
        return env[name]
    path = env.get(name + FILE_SUFFIX)
    if not path:
        return None
    try:
        key = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{name}{FILE_SUFFIX}={path}: cannot read the key file ({exc.__class__.__name__}: "
                        f"{getattr(exc, 'strerror', None) or exc})") from None
    if not key:
        raise UserError(f"{name}{FILE_SUFFIX}={path}: the key file is empty")
    return key


def first_key(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    """The first of `names` that holds a key (directly or through its file), else None."""
    for name in names:
        key = read_key(env, name)
        if key:
            return key
    return None


def key_sources(names: tuple[str, ...]) -> str:
    """How to give a key, for an error message: "A (or A_FILE) or B (or B_FILE)"."""
    return " or ".join(f"{n} (or {n}{FILE_SUFFIX})" for n in names)


def shareable(env: Mapping[str, str]) -> dict[str, str]:
    """The endpoint variables a worker on another machine may receive: every URL and key-file
    path eegbench reads (EEGBENCH_*/OPENAI_*), never a key."""
    return {name: value for name, value in env.items()
            if name.startswith(("EEGBENCH_", "OPENAI_")) and value
            and (name.endswith("_BASE_URL") or name.endswith("_API_KEY" + FILE_SUFFIX))}
