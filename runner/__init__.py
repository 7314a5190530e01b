"""The eegbench controller: command line, run scheduling, paradigms, sandboxes, model clients, run directory."""
