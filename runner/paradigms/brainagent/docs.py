"""The braintools toolset as a Markdown table, made from the registry (runner/commands/docs.py writes it
into docs/brainagent.md)."""
from __future__ import annotations

from braintools import specs
from runner.paradigms.brainagent.agents import all_agents


def toolset_table() -> str:
    """One row per tool: group, the subagents that get it, name, parameters, first line of its description."""
    agents = all_agents()
    rows = ["| group | subagents | tool | parameters | what it does |", "|---|---|---|---|---|"]
    for spec in specs():
        users = ", ".join(a.name.removesuffix("Agent") for a in agents if spec.group in a.groups)
        required = set(spec.parameters.get("required", []))
        params = ", ".join(f"**{p}**" if p in required else p for p in spec.parameters["properties"])
        summary = spec.description.strip().splitlines()[0].replace("|", "\\|")
        rows.append(f"| {spec.group} | {users} | `{spec.name}` | {params} | {summary} |")
    return "\n".join(rows)
