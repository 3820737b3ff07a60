"""Sharing a run's tasks among the processes of a multi-process run (``jax.distributed``).

Process ``i`` of ``N`` solves the tasks ``k`` (places in the source's order) with
``k % N == i`` (:func:`task_share`); a method's random keys derive from ``k``
(:meth:`~jaxarc.solve.method.SolveMethod.solve`), so each task gets the attempts a
one-process run gives it. :class:`TaskSharing` passes the shares through the run's
key-value store (:func:`jaxarc.agents.run.distributed.key_value_store`):

1. :meth:`TaskSharing.agree`: every process posts what it is about to do (its tasks' digest
   and the method's settings) and checks that it matches process 0's;
2. :meth:`TaskSharing.gather`: every other process posts each task it solved (attempts as
   JSON lists of ``int8`` grids, the method's record) and waits; process 0 takes every task
   in the source's order and gets them all, then tells the others it is done;
3. :meth:`TaskSharing.stop`: a process that fails says why, so the others stop with one line
   instead of waiting for it.

:func:`solve_share` does the three around a method's
:meth:`~jaxarc.solve.method.SolveMethod.solve_all` of this process's share.

Keys: ``jaxarc/solve/plan/<i>``, ``jaxarc/solve/task/<k>``, ``jaxarc/solve/stopped/<i>``,
``jaxarc/solve/end``. With one process nothing is posted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxarc.solve.attempts import TaskAttempts
from jaxarc.solve.method import Progress, SolveMethod
from jaxarc.solve.problem import Problem
from jaxarc.solve.progress_log import problems_digest

PREFIX = "jaxarc/solve"


class ShareError(RuntimeError):
    """A multi-process run whose processes cannot pass their tasks (which process, why)."""


@dataclasses.dataclass(frozen=True)
class TaskShare:
    """Process ``process_index`` of ``process_count``'s tasks: ``indices[j]`` is the place
    in the whole run of ``problems[j]`` (ascending)."""

    process_index: int
    process_count: int
    indices: tuple[int, ...]
    problems: tuple[Problem, ...]


def task_share(problems: Sequence[Problem], process_index: int, process_count: int) -> TaskShare:
    """The tasks ``k`` of ``problems`` with ``k % process_count == process_index``, in order."""
    if process_count < 1 or not 0 <= process_index < process_count:
        raise ValueError(f"process {process_index} of {process_count}: no such process")
    indices = tuple(range(process_index, len(problems), process_count))
    return TaskShare(process_index, process_count, indices, tuple(problems[k] for k in indices))


@dataclasses.dataclass(frozen=True)
class SharingConfig:
    """``wait_s``: how long a process may send nothing before it is taken as lost;
    ``poll_s``: how often a waiting process looks whether the one it waits for stopped."""

    wait_s: float = 3600.0
    poll_s: float = 2.0


def encode_task(task_id: str, attempts: TaskAttempts, record: dict[str, Any]) -> str:
    """One solved task as JSON: its id, attempts (``int8`` grids as lists) and record."""
    grids = [[np.asarray(a).tolist(), np.asarray(b).tolist()] for a, b in attempts]
    return json.dumps({"task_id": task_id, "attempts": grids, "record": record})


def decode_task(text: str) -> tuple[str, TaskAttempts, dict[str, Any]]:
    """The inverse of :func:`encode_task` (grids back as ``int8`` arrays)."""
    body = json.loads(text)
    attempts = [(np.asarray(a, np.int8), np.asarray(b, np.int8)) for a, b in body["attempts"]]
    return body["task_id"], attempts, body["record"]


class TaskSharing:
    """This process's share of ``problems`` and the passing of the shares (see the module
    docstring). ``store``: the run's key-value store (``None`` with one process)."""

    def __init__(
        self,
        problems: Sequence[Problem],
        process_index: int,
        process_count: int,
        store: Any = None,
        config: SharingConfig = SharingConfig(),
    ) -> None:
        if process_count > 1 and store is None:
            raise ValueError("sharing tasks among processes needs the run's key-value store")
        self.problems = list(problems)
        self.share = task_share(self.problems, process_index, process_count)
        self.store, self.config = store, config

    @classmethod
    def of_this_process(cls, problems: Sequence[Problem], config=SharingConfig()) -> TaskSharing:
        """This process's share in the run it joined (all of ``problems`` alone)."""
        import jax

        from jaxarc.agents.run.distributed import key_value_store

        index, count = jax.process_index(), jax.process_count()
        if count == 1:
            return cls(problems, 0, 1, None, config)
        try:
            store = key_value_store()
        except RuntimeError as err:
            raise ShareError(str(err)) from None
        return cls(problems, index, count, store, config)

    @property
    def index(self) -> int:
        return self.share.process_index

    @property
    def count(self) -> int:
        return self.share.process_count

    def _who(self, index: int) -> str:
        return f"process {index} of {self.count}"

    def agree(self, plan: dict[str, Any]) -> None:
        """Post this process's tasks and ``plan`` (the method and its settings, JSON types);
        a :class:`ShareError` when they differ from process 0's."""
        if self.count == 1:
            return
        mine = {"tasks": problems_digest(self.problems), "plan": plan}
        self.store.key_value_set(f"{PREFIX}/plan/{self.index}", json.dumps(mine, sort_keys=True))
        others = range(1, self.count) if self.index == 0 else [0]
        for other in others:
            theirs = json.loads(self._wait(f"{PREFIX}/plan/{other}", other, "its tasks and plan"))
            differs = [what for what in ("tasks", "plan") if theirs[what] != mine[what]]
            if differs:
                one, two = sorted((self.index, other))
                raise ShareError(
                    f"{self._who(two)} has other {' and '.join(differs)} than process {one} "
                    "(--source, --limit, --method and its settings): give every process the "
                    "same flags but --process-id"
                )

    def gather(
        self, attempts: dict[str, TaskAttempts], records: dict[str, dict[str, Any]]
    ) -> tuple[dict[str, TaskAttempts], dict[str, dict[str, Any]]] | None:
        """This process's ``(attempts, records)`` by task id in, every task's out on process
        0 (in the source's order); ``None`` on the others, once process 0 has them all."""
        if self.count == 1:
            return {p.task_id: attempts[p.task_id] for p in self.problems}, {
                p.task_id: records[p.task_id] for p in self.problems
            }
        if self.index != 0:
            for k, problem in zip(self.share.indices, self.share.problems, strict=True):
                text = encode_task(
                    problem.task_id, attempts[problem.task_id], records[problem.task_id]
                )
                self.store.key_value_set(f"{PREFIX}/task/{k}", text)
            self._wait(f"{PREFIX}/end", 0, "the end of the run", forever=True)
            return None
        all_attempts, all_records = {}, {}
        for k, problem in enumerate(self.problems):
            tid = problem.task_id
            if k % self.count == 0:
                all_attempts[tid], all_records[tid] = attempts[tid], records[tid]
                continue
            owner = k % self.count
            sent_id, all_attempts[tid], all_records[tid] = decode_task(
                self._wait(f"{PREFIX}/task/{k}", owner, f"task {k}, {tid}")
            )
            if sent_id != tid:
                raise ShareError(
                    f"{self._who(owner)} sent task {sent_id} as task {k}, which is {tid} on "
                    "process 0: give every process the same --source and --limit"
                )
        self.store.key_value_set(f"{PREFIX}/end", "done")
        return all_attempts, all_records

    def stop(self, reason: str) -> None:
        """Tell the other processes that this one stopped, and why (one line)."""
        if self.count == 1:
            return
        with contextlib.suppress(Exception):  # (the store may be gone with the coordinator)
            self.store.key_value_set(f"{PREFIX}/stopped/{self.index}", reason)

    def _wait(self, key: str, other: int, what: str, forever: bool = False) -> str:
        """``key``'s value once ``other`` posts it; a :class:`ShareError` when ``other``
        stops, or (unless ``forever``) posts nothing for ``config.wait_s``."""
        start = time.monotonic()
        poll_ms = max(1, int(self.config.poll_s * 1000))
        while True:
            try:
                return self.store.blocking_key_value_get(key, poll_ms)
            except Exception as err:  # (jax raises JaxRuntimeError; only a timeout waits on)
                if "DEADLINE_EXCEEDED" not in str(err):
                    line = str(err).strip().splitlines()[0] if str(err).strip() else repr(err)
                    raise ShareError(
                        f"waiting for {what} from {self._who(other)}: {line}"
                    ) from None
            reason = self._stopped(other)
            if reason is not None:
                raise ShareError(f"{self._who(other)} stopped: {reason}")
            if not forever and time.monotonic() - start > self.config.wait_s:
                raise ShareError(
                    f"{self._who(other)} sent nothing for {self.config.wait_s:g} s (waiting "
                    f"for {what}): is it running, with the same --coordinator-address?"
                )

    def _stopped(self, other: int) -> str | None:
        try:
            return self.store.key_value_try_get(f"{PREFIX}/stopped/{other}")
        except Exception:  # (NOT_FOUND: it has not stopped)
            return None


def solve_share(
    method: SolveMethod,
    sharing: TaskSharing,
    plan: dict[str, Any],
    progress: Progress | None = None,
) -> tuple[dict[str, TaskAttempts], dict[str, dict[str, Any]]] | None:
    """Agree on ``plan``, solve this process's share with ``method`` and gather: every
    task's ``(attempts, records)`` on process 0, ``None`` on the others. On any error the
    other processes are told this one stopped."""
    try:
        if sharing.count > 1 and not method.shares_tasks:
            raise ShareError(f"--method {method.name} does not share its tasks among processes")
        sharing.agree(plan)
        share = sharing.share
        attempts, records = method.solve_all(list(share.problems), progress, share.indices)
        return sharing.gather(attempts, records)
    except BaseException as err:
        reason = str(err).strip().splitlines()
        sharing.stop(reason[0] if reason else type(err).__name__)
        raise
