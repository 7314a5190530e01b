"""Scoring inside a run: the parser (rules, LLM or both), the judges, the artifacts."""
