"""EEGAgentBench task families T1-T6: question bank, semi-synthetic artifact data, dataset
adapters and the task specs / instances they produce."""
