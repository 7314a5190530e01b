"""Artifact validation (BrainBench's file_status_check): path safety, then per-format checks."""
