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
from urllib.parse import urlsplit, urlunsplit

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


def endpoint_from_env(env: Mapping[str, str]) -> tuple[str, str]:
    """(base_url, api_key) from EEGBENCH_* or, failing that, OPENAI_* variables of `env`
    (the command's Environment.variables); a key may come from the file its _FILE variable
    names."""
    base_url = _first_set(env, BASE_URL_VARS)
    api_key = first_key(env, API_KEY_VARS)
    missing = ([" or ".join(BASE_URL_VARS)] if base_url is None else []) + ([key_sources(API_KEY_VARS)] if api_key is None else [])
    if base_url is None or api_key is None:
        raise UserError("openai model: set " + " and ".join(missing) + " (e.g. EEGBENCH_BASE_URL=https://api.openai.com/v1)")
    variable = next(name for name in BASE_URL_VARS if env.get(name))
    return check_base_url(variable, base_url), api_key


def check_base_url(variable: str, url: str) -> str:
    """An http(s) URL with a host; UserError names the variable (a bad URL would otherwise
    make every instance an infra_error, one by one)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (parses the port: "host:abc" raises here, not mid-run)
    except ValueError as exc:
        problem = str(exc)
    else:
        if parts.scheme in ("http", "https") and parts.hostname:
            return url
        problem = "expected an http:// or https:// URL with a host"
    shown = url if "@" not in url else "...@" + url.rsplit("@", 1)[1]  # never echo credentials
    raise UserError(f"{variable}={shown!r}: {problem}, e.g. https://api.openai.com/v1")


def _first_set(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        if env.get(name):
            return env[name]
    return None


def public_url(url: str) -> str:
    """The base URL without user:password@ or a query string, fit for run.json."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
