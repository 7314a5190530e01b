"""The console every command prints to: stderr, so that stdout holds only what a command is asked
for (tables, JSON)."""
from rich.console import Console

console = Console(stderr=True)
