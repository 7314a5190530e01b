"""The default executor: a thread pool in the controller process (`JOBS=N` threads)."""
from __future__ import annotations

import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from runner.run.executors.base import Executor, Job
from runner.run.records import ResultRecord
from validation.instance import Instance

POLL_S = 0.5  # how often the progress callback runs while instances are going


class ThreadExecutor(Executor):
    """Work and scoring of each instance in one of `jobs` threads of this process."""

    name = "threads"

    def run(self, instances: list[Instance], jobs: int, job: Job, stop: threading.Event) -> None:
        """Submit in order, keep `jobs` running, report each result as it comes."""
        pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="instance")
        try:
            self._drive(pool, list(reversed(instances)), jobs, job)
        except BaseException:  # Ctrl-C, SIGTERM, or a worker's run-stopping error (ModelSetupError)
            stop.set()
            job.abort()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    def _drive(self, pool: ThreadPoolExecutor, queue: list[Instance], jobs: int, job: Job) -> None:
        running: dict[Future[ResultRecord | None], str] = {}
        while queue or running:
            while queue and len(running) < jobs:
                instance = queue.pop()
                running[pool.submit(_work_and_finish, job, instance)] = instance.case_id
            job.progress(len(running), list(reversed(queue[-jobs:])))
            done, _ = wait(list(running), timeout=POLL_S, return_when=FIRST_COMPLETED)
            for future in done:
                running.pop(future)
                job.result(future.result())
        job.progress(0, [])


def _work_and_finish(job: Job, instance: Instance) -> ResultRecord | None:
    attempt = job.work(instance)
    return None if attempt is None else job.finish(attempt)
