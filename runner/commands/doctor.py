"""`eegbench doctor` (can sandboxes start here, and which limits hold) and `eegbench jit-cache`."""
from __future__ import annotations

import argparse
import os
import shutil
import time

from rich.markup import escape

from runner.commands.output import console
from runner.core.paths import Environment
from runner.core.settings import ResourceLimits
from validation.errors import UserError


def cmd_doctor(args: argparse.Namespace, env: Environment) -> int:
    """What the local backend can do here, as this user: bubblewrap and its namespaces, which
    limits hold and how, the bounded workspace, this user's state directory."""
    from runner.sandbox import cgroups, layout
    from runner.sandbox import workspace as workspaces
    from runner.sandbox.base import SandboxError
    from runner.sandbox.local import LocalBackend

    backend = LocalBackend()
    ok, why = backend.available()
    if not ok:
        raise UserError(f"the local sandbox cannot run here: {why}")
    try:
        layout.ensure_private_dir(workspaces.SCRATCH_ROOT)
    except SandboxError as exc:
        raise UserError(str(exc)) from None
    kind = workspaces.kind(ResourceLimits().workspace_mb)
    shared = backend.shared_process_budget()
    console.print(f"local sandbox: ready ({shutil.which('bwrap')}, uid {os.geteuid()})", soft_wrap=True)
    console.print(f"limits: {cgroups.limits_mechanism()}", soft_wrap=True)
    console.print(f"workspace: {'a loop-mounted ext4 file system' if kind == 'ext4' else 'a tmpfs in the sandbox'}"
                  f"; state and workspaces in {layout.user_dir()}", soft_wrap=True)
    if shared:
        each = f"one at a time ({shared})"
    elif cgroups.hierarchy().version:
        each = "each with its own memory, process and CPU limits"
    else:
        each = "each with its own process budget (its user namespace); memory bounds each process; CPU is not limited"
    console.print(f"concurrent sandboxes: {each}", soft_wrap=True)
    return 0


def cmd_jit_cache(args: argparse.Namespace, env: Environment) -> int:
    """Build a backend's compile cache (runner/sandbox/jit_cache.py) unless a valid one exists."""
    from runner.sandbox import choose_backend, jit_cache

    backend, _ = choose_backend(args.sandbox)
    ok, why = backend.available()
    if not ok:
        raise UserError(f"compile cache: the {backend.name} sandbox cannot run here: {why}")
    began = time.monotonic()
    try:
        directory, built = jit_cache.ensure(env.paths.cache_dir, backend, env.paths.data_root, rebuild=args.rebuild)
    except jit_cache.JitCacheError as exc:
        console.print(f"[red]{escape(str(exc))}")
        return 1
    except OSError as exc:  # the project's .cache is not this user's to write
        raise UserError(f"compile cache: {exc}") from None
    state = f"built in {time.monotonic() - began:.0f} s" if built else "up to date"
    console.print(f"compile cache for {backend.name}: {directory} ({state})", soft_wrap=True)
    return 0
