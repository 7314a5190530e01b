"""EEGAgentBench ("EEGAgentBench: Benchmarking LLM Agents on Short- and Long-Horizon EEG
Analysis"): answer readers, per-instance units and the run-level metrics of its §6.2-6.4
(accuracy, macro-F1, Cohen's kappa, SzCORE-style Event-F1, Dice@seizure, FP/24h, over-alarm
and miss rates, Overall)."""
