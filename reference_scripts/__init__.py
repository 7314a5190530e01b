"""One deterministic script per task: run(inputs, params) -> dict of ground-truth targets."""
