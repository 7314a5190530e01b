"""The command line's verbs beyond dispatch (runner/cli.py parses and routes): eval, logs, instances, score, and the docs' generated tables."""
