"""EEGAgentBench (papers/000_451cf2210c29861d.txt): answer readers, per-instance units and the
run-level metrics of its §6.2-6.4 (accuracy, macro-F1, Cohen's kappa, SzCORE-style Event-F1,
Dice@seizure, FP/24h, over-alarm and miss rates, Overall)."""
