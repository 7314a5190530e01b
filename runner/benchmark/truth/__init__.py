"""Ground truth: task spec + reference script + recordings -> instance files.

A task spec (`instances/tasks/<task_id>.json`) holds an instruction template, the metrics and
a list of bindings (input files + parameters). For every binding the task's reference script
(`run(inputs, params) -> dict`) computes the targets; the instance file written to
`instances/<subset_slug>/<task_id>-<case>.json` carries them as each metric's
`params.ground_truth`, plus the sha256 of the script and of every input and the versions of
the libraries the script depends on, so `check` can prove the committed files are what the
scripts make today.

Scripts always run in spawned worker processes with BLAS/OpenMP pinned to one thread (set
before numpy is first imported there), so results do not depend on the caller's process.

`generate` caches each script result under <project>/.cache/truth/, keyed by everything the
result may depend on (input sha256s, script sha256, parameters, library versions): a rerun only
runs the scripts of bindings that changed. The cache lives in the project, not in the data
root, because the data root is what sandboxes read and the entries are ground truth. `check`
never reads the cache: it proves the scripts still give the committed files.
Both also keep instances/manifests/<subset_slug>.json (counts and instance-set hash per
subset) in step with the instance files.

The package's parts: specs.py (task specs), instance.py (one binding), pool.py (the worker
pool), cache.py (the result cache), generate.py (generate, check, kept shares, manifests).
"""
from __future__ import annotations

from runner.benchmark.truth.cache import (
    CACHE_DIR,
    CACHE_FORMAT,
    cache_key,
    default_cache_dir,
    read_cache,
    write_cache,
)
from runner.benchmark.truth.generate import (
    KEPT_FILE,
    Built,
    Rendered,
    Skipped,
    TaskKept,
    build_many,
    check,
    expected_manifests,
    generate,
    kept_path,
    kept_text,
    manifest_path,
    read_kept,
    render,
    write_task_folders,
)
from runner.benchmark.truth.instance import (
    MODULE_DISTRIBUTIONS,
    RESULT_DEPENDENCIES,
    assemble_instance,
    build_instance,
    provenance,
    run_binding,
    run_script,
    script_versions,
)
from runner.benchmark.truth.pool import (
    THREAD_VARS,
    default_jobs,
    pin_threads,
    run_pinned,
)
from runner.benchmark.truth.specs import (
    MANIFESTS_DIR,
    SUBSET_PREFIXES,
    SUBSET_SLUGS,
    TASKS_DIR,
    Binding,
    BindingRejected,
    BlindValidation,
    TaskMetric,
    TaskSpec,
    TruthError,
    instance_path,
    load_task,
    load_tasks,
)
from validation.instance import ALL_SUBSETS, SUBSETS

__all__ = [
    "ALL_SUBSETS", "assemble_instance", "Binding", "BindingRejected", "BlindValidation",
    "build_instance", "build_many", "Built", "CACHE_DIR", "CACHE_FORMAT", "cache_key", "check",
    "default_cache_dir", "default_jobs", "expected_manifests", "generate", "instance_path",
    "KEPT_FILE", "kept_path", "kept_text", "load_task", "load_tasks", "manifest_path",
    "MANIFESTS_DIR", "MODULE_DISTRIBUTIONS", "pin_threads", "provenance", "read_cache", "read_kept",
    "render", "Rendered", "RESULT_DEPENDENCIES", "run_binding", "run_pinned", "run_script",
    "script_versions", "Skipped", "SUBSET_PREFIXES", "SUBSET_SLUGS", "SUBSETS", "TaskKept",
    "TaskMetric", "TASKS_DIR", "TaskSpec", "THREAD_VARS", "TruthError", "write_cache",
    "write_task_folders",
]
