"""The ARC Prize submission: its format, a validator, an atomic writer and pass@2 by task.

A submission is ``{task_id: [{"attempt_1": grid, "attempt_2": grid}, ...]}`` with one entry
per test input of the task, in order; a grid is a non-empty rectangular list of rows of
integers 0-9, at most 30x30. A task counts as solved when every one of its test inputs has
an attempt equal to its output (pass@2 by task, the ARC Prize rule). A score can leave tasks
out (those a program prior was pretrained on): they stay in the submission, unscored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from jaxarc.solve.problem import MAX_SIDE

ATTEMPTS = ("attempt_1", "attempt_2")


class SubmissionError(ValueError):
    """A submission that breaks the ARC Prize format (with what and where)."""


def _check_grid(grid: object, where: str) -> None:
    if not isinstance(grid, list) or not grid:
        raise SubmissionError(f"{where}: a grid must be a non-empty list of rows")
    if not all(isinstance(row, list) and row for row in grid):
        raise SubmissionError(f"{where}: every row must be a non-empty list of cells")
    width = len(grid[0])
    if any(len(row) != width for row in grid):
        raise SubmissionError(f"{where}: ragged rows")
    if len(grid) > MAX_SIDE or width > MAX_SIDE:
        raise SubmissionError(f"{where}: a {len(grid)}x{width} grid; at most {MAX_SIDE}x{MAX_SIDE}")
    for r, row in enumerate(grid):
        for c, cell in enumerate(row):
            if type(cell) is not int or not 0 <= cell <= 9:
                raise SubmissionError(f"{where}: cell ({r}, {c}) is {cell!r}, not a colour 0-9")


def validate_submission(submission: object, test_counts: Mapping[str, int]) -> None:
    """Raise :class:`SubmissionError` unless ``submission`` is in the ARC Prize format and
    holds exactly the tasks of ``test_counts`` (task id -> number of test inputs), each with
    one entry per test input holding both attempts."""
    if not isinstance(submission, Mapping):
        raise SubmissionError(f"a submission is a dict of task id -> entries, not {submission!r}")
    missing = sorted(set(test_counts) - set(submission))
    extra = sorted(set(submission) - set(test_counts))
    if missing:
        raise SubmissionError(f"tasks missing from the submission: {', '.join(missing[:5])}")
    if extra:
        raise SubmissionError(f"tasks not in the source: {', '.join(extra[:5])}")
    for task_id, entries in submission.items():
        if not isinstance(entries, list) or len(entries) != test_counts[task_id]:
            raise SubmissionError(
                f"task {task_id!r}: needs a list of {test_counts[task_id]} entries (one per "
                "test input)"
            )
        for k, entry in enumerate(entries):
            if not isinstance(entry, Mapping) or set(entry) != set(ATTEMPTS):
                raise SubmissionError(
                    f"task {task_id!r}, test {k}: an entry holds exactly 'attempt_1' and "
                    "'attempt_2'"
                )
            for name in ATTEMPTS:
                _check_grid(entry[name], f"task {task_id!r}, test {k}, {name}")


def grid_list(grid: np.ndarray) -> list[list[int]]:
    """A grid as the submission writes it (lists of Python ints)."""
    return [[int(c) for c in row] for row in np.asarray(grid)]


def entries(attempts: list[tuple[np.ndarray, np.ndarray]]) -> list[dict[str, Any]]:
    """A task's submission entries from ``(attempt_1, attempt_2)`` per test input."""
    return [{"attempt_1": grid_list(a), "attempt_2": grid_list(b)} for a, b in attempts]


def score_submission(
    submission: Mapping[str, list],
    outputs: Mapping[str, list[np.ndarray | None]],
    leave_out: Collection[str] = (),
) -> dict[str, Any]:
    """pass@2 by task of ``submission`` against the known test ``outputs`` (task id -> one
    grid or ``None`` per test input). Tasks with an unknown output are not scored, nor are
    the tasks named in ``leave_out``."""
    left_out = frozenset(leave_out)
    per_task = {}
    for task_id, task_outputs in outputs.items():
        if task_id in left_out or any(out is None for out in task_outputs):
            continue
        hits = [
            [np.array_equal(np.asarray(entry[name]), out) for name in ATTEMPTS]
            for entry, out in zip(submission[task_id], task_outputs, strict=True)
        ]
        per_task[task_id] = {
            "solved": all(any(h) for h in hits),
            "test_inputs": [{"attempts": h, "solved": any(h)} for h in hits],
        }
    solved = sum(t["solved"] for t in per_task.values())
    pairs = [p for t in per_task.values() for p in t["test_inputs"]]
    return {
        "scored_tasks": len(per_task),
        "solved_tasks": solved,
        "solve_rate": solved / len(per_task) if per_task else None,
        "scored_pairs": len(pairs),
        "solved_pairs": sum(p["solved"] for p in pairs),
        "tasks": per_task,
    }


def write_json_atomic(path: str | os.PathLike, obj: object) -> None:
    """Write ``obj`` as JSON through a temporary file and a rename: on any error the old
    file (or no file) stays, never half a file."""
    from jaxarc.agents.run.checkpoint import write_text_atomic

    write_text_atomic(Path(path), json.dumps(obj))
