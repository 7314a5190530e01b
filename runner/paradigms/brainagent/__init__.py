"""The BrainAgent paradigm (BrainBench appendix D.2): a supervisor, registered subagents, the
braintools toolset in the sandbox's kernel, and tool plans that prove its coverage."""
