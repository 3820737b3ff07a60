"""The tasks a long solve has finished, kept beside its submission so that a stopped run
resumes where it stopped.

``jaxarc solve --method test-time-rl`` learns task after task for an hour or more and writes
its submission only at the end (nothing half-way). A :class:`ProgressLog` is a JSON-lines
file beside it: a first line that says which run it belongs to (the ``header``: the
problems, the checkpoint, the flags that change a result), then one line per finished task
with its attempts and what the learning did. Each chunk of tasks is appended and synced as
it finishes; a run stopped by anything (a crash, an interrupt, the machine) leaves every
finished task there, and the same command resumes from them. A line cut short by the stop
is dropped. ``jaxarc solve`` removes the log once its submission is written.

A log written by another run (another seed, checkpoint, budget, source...) is never mixed
in: opening it with another header raises :class:`ProgressLogError`, which names what
differs.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from jaxarc.solve.attempts import TaskAttempts
from jaxarc.solve.problem import Problem


class ProgressLogError(ValueError):
    """A progress log that belongs to another run, or cannot be read (with what and where)."""


def problems_digest(problems: Iterable[Problem]) -> str:
    """A SHA-256 of what the solver sees of ``problems`` (ids, demonstrations, test inputs),
    so that a log is resumed only on the same tasks."""
    digest = hashlib.sha256()
    for problem in problems:
        digest.update(problem.task_id.encode() + b"\0")
        grids = (*problem.demo_inputs, *problem.demo_outputs, *problem.test_inputs)
        digest.update(f"{len(problem.demo_inputs)},{len(problem.test_inputs)};".encode())
        for grid in grids:
            digest.update(np.asarray(grid.shape, np.int64).tobytes())
            digest.update(np.ascontiguousarray(grid, np.int8).tobytes())
    return digest.hexdigest()


def directory_digest(path: str | os.PathLike) -> str:
    """A SHA-256 of every file under ``path`` (names and contents), e.g. a checkpoint."""
    root = Path(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(root)).encode() + b"\0")
        digest.update(file.read_bytes())
    return digest.hexdigest()


def _grid(rows: list[list[int]]) -> np.ndarray:
    return np.asarray(rows, np.int8).reshape(len(rows), -1)


class ProgressLog:
    """The finished tasks of one run, appended to ``path`` (JSON lines). Open it with
    :meth:`open`, which also returns the tasks a stopped run had finished."""

    def __init__(self, path: Path, header: Mapping[str, Any]) -> None:
        self.path = path
        self.header = dict(header)

    @classmethod
    def open(
        cls, path: str | os.PathLike, header: Mapping[str, Any]
    ) -> tuple[ProgressLog, dict[str, tuple[TaskAttempts, dict[str, Any]]]]:
        """The log at ``path`` for the run ``header`` describes, and ``{task_id: (attempts,
        info)}`` of the tasks it already holds (none when there is no log yet). Raises
        :class:`ProgressLogError` when the log at ``path`` is another run's."""
        log = cls(Path(path), header)
        if not log.path.exists():
            return log, {}
        try:
            lines = log.path.read_text().split("\n")
            found = json.loads(lines[0])["run"]
        except (OSError, ValueError, KeyError, TypeError, IndexError) as err:
            raise ProgressLogError(
                f"{log.path}: not a progress log of jaxarc solve ({err}); remove it or choose "
                "another --out"
            ) from None
        keys = set(found) | set(log.header)
        differs = sorted(k for k in keys if found.get(k) != log.header.get(k))
        if differs:
            what = ", ".join(f"{k} {found.get(k)!r} (now {log.header.get(k)!r})" for k in differs)
            raise ProgressLogError(
                f"{log.path} holds the finished tasks of another run ({what}); rerun that "
                "command to resume it, or remove the log to start this one"
            )
        done: dict[str, tuple[TaskAttempts, dict[str, Any]]] = {}
        for line in lines[1:]:
            try:
                entry = json.loads(line)
                attempts = [(_grid(a), _grid(b)) for a, b in entry["attempts"]]
                done[entry["task"]] = (attempts, dict(entry["info"]))
            except (ValueError, KeyError, TypeError):
                continue  # (an empty line, or the last one, cut short by the stop)
        return log, done

    def record(
        self, attempts: Mapping[str, TaskAttempts], infos: Mapping[str, Mapping[str, Any]]
    ) -> None:
        """Append the tasks of ``attempts`` (and their ``infos``) and sync them to disk."""
        if not attempts:
            return
        new = not self.path.exists()
        lines = [json.dumps({"run": self.header})] if new else []
        for task_id, made in attempts.items():
            grids = [[a.tolist(), b.tolist()] for a, b in made]
            lines.append(json.dumps({"task": task_id, "attempts": grids, "info": infos[task_id]}))
        if new:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+b") as file:
            if not new and file.tell() > 0:
                file.seek(-1, os.SEEK_END)
                if file.read(1) != b"\n":
                    file.write(b"\n")  # (after a line a stop cut short)
            file.write(("\n".join(lines) + "\n").encode())
            file.flush()
            os.fsync(file.fileno())
