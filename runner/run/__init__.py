"""Running a set of instances: the scheduler, executors, warm pool, and the run directory (records and store)."""
