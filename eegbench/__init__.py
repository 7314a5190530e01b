"""eegbench as an Inspect AI task package: `inspect eval eegbench/codeact --model M`.

Inspect names a task after the top-level package its function lives in, so the tasks live in
this package (`eegbench/codeact`, `eegbench/hybrid`, `eegbench/brainagent`, `eegbench/tools`)
and are registered through the `inspect_ai` entry point in pyproject.toml. Each sample runs one
eegbench instance with eegbench's own loop, controls, sandbox and scorer; only the model calls
go through Inspect. The harness (runner/, validation/) never imports this package.
"""
