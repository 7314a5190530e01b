"""`make bench`: what the harness costs, measured (ratios in one run, never asserted)."""
