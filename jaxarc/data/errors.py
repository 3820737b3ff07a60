"""What can go wrong while loading task data, and the summary of skipped tasks.

:class:`TaskFormatError` names the file, the task id, the pair (``"train[2].output"``) and
the problem, so a user can find the bad grid without a debugger. :class:`LoadReport` says
where a bank came from and which tasks were skipped (``skip_invalid=True``) and why.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path


class TaskFormatError(ValueError):
    """A task file or task that is not a valid ARC task.

    Attributes: ``file`` (path or ``None``), ``task_id`` (``None`` where the file could not
    be read far enough to know it), ``pair`` (e.g. ``"test[0].input"``; ``None`` for
    problems of the task as a whole) and ``problem`` (what is wrong, in words).
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | Path | None = None,
        task_id: str | None = None,
        pair: str | None = None,
    ):
        self.problem = problem
        self.file = None if file is None else str(file)
        self.task_id = task_id
        self.pair = pair
        super().__init__(self._message())

    def _message(self) -> str:
        where = [self.file or "<in memory>"]
        if self.task_id is not None:
            where.append(f"task {self.task_id!r}")
        if self.pair is not None:
            where.append(self.pair)
        return f"{', '.join(where)}: {self.problem}"

    def __reduce__(self):  # keep the fields through pickling (multiprocessing, pytest-xdist)
        return (_rebuild_error, (self.problem, self.file, self.task_id, self.pair))


def _rebuild_error(problem, file, task_id, pair) -> TaskFormatError:
    return TaskFormatError(problem, file=file, task_id=task_id, pair=pair)


@dataclasses.dataclass(frozen=True)
class SkippedTask:
    """One task (or whole file, ``task_id=None``) left out of a bank, and why."""

    file: str | None
    task_id: str | None
    pair: str | None
    problem: str

    @classmethod
    def from_error(cls, err: TaskFormatError) -> SkippedTask:
        return cls(file=err.file, task_id=err.task_id, pair=err.pair, problem=err.problem)

    def describe(self) -> str:
        return str(
            TaskFormatError(self.problem, file=self.file, task_id=self.task_id, pair=self.pair)
        )


@dataclasses.dataclass(frozen=True)
class LoadReport:
    """How a bank was loaded: counts, skipped tasks, and whether it came from the cache.

    ``files_parsed`` counts the JSON files decoded by this call (0 on a cache hit).
    """

    source: str
    num_tasks: int
    skipped: tuple[SkippedTask, ...] = ()
    from_cache: bool = False
    files_parsed: int = 0
    cache_path: str | None = None

    @property
    def num_skipped(self) -> int:
        return len(self.skipped)

    def summary(self, limit: int = 10) -> str:
        """A few lines: how many tasks were loaded and skipped, and the first reasons."""
        lines = [f"{self.source}: loaded {self.num_tasks} tasks, skipped {self.num_skipped}"]
        lines += [f"  - {s.describe()}" for s in self.skipped[:limit]]
        if self.num_skipped > limit:
            lines.append(f"  ... and {self.num_skipped - limit} more")
        return "\n".join(lines)

    def skipped_to_json(self) -> str:
        return json.dumps([dataclasses.asdict(s) for s in self.skipped])

    @staticmethod
    def skipped_from_json(text: str) -> tuple[SkippedTask, ...]:
        return tuple(SkippedTask(**entry) for entry in json.loads(text))
