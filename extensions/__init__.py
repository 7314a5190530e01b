"""The bottom layer every other package may import: the one `Registry` type behind every
extension point (paradigms, sandbox backends, executors, model kinds, metric units, tools,
dataset readers and adapters, BrainAgent's subagents).

It imports nothing of the project, so the toolsets that run inside the sandbox's kernel
(eegtools, braintools) use it too: the paradigms that mount them mount this package beside
them.
"""
