"""The eegbench controller: command line, run scheduling, paradigms, sandboxes, model clients, run directory."""
from runner.benchmark import numerics

numerics.pin()
