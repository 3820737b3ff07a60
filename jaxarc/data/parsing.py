"""Validate ARC JSON tasks into NumPy grids, with errors that say what and where.

A task is ``{"train": [{"input": grid, "output": grid}, ...], "test": [...]}``; a grid is a
non-empty rectangular list of rows of integers 0-9 no larger than the canvas. Test pairs may
lack ``"output"`` (challenge files without solutions): such pairs are *unscored*.
Everything here is host-side NumPy; stacking into device arrays is :mod:`jaxarc.data.stacking`.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from jaxarc.data.errors import TaskFormatError

NUM_COLOURS = 10


@dataclasses.dataclass(frozen=True)
class ParsedTask:
    """One validated task: ``int8`` grids of their true sizes (no padding)."""

    task_id: str
    demos: tuple[tuple[np.ndarray, np.ndarray], ...]
    tests: tuple[tuple[np.ndarray, np.ndarray | None], ...]  # output None: unscored


class _DuplicateKeyError(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        dupes = sorted({k for k, _ in pairs if k in seen or seen.add(k)})
        raise _DuplicateKeyError(", ".join(map(repr, dupes[:5])))
    return obj


def decode_json(data: bytes, *, file: str | Path | None) -> object:
    """``json.loads`` with a :class:`TaskFormatError` naming the file, line and column.

    A key given twice in one object (e.g. a task id in a challenges file) is an error
    rather than silently keeping the last value.
    """
    try:
        return json.loads(data, object_pairs_hook=_unique_keys)
    except _DuplicateKeyError as err:
        raise TaskFormatError(
            f"invalid JSON: duplicate key {err} in one object", file=file
        ) from None
    except UnicodeDecodeError as err:
        raise TaskFormatError(f"invalid JSON: not UTF-8 text ({err.reason})", file=file) from None
    except json.JSONDecodeError as err:
        problem = f"invalid JSON: {err.msg} at line {err.lineno}, column {err.colno}"
        raise TaskFormatError(problem, file=file) from None
    except RecursionError:
        raise TaskFormatError("invalid JSON: nested too deeply", file=file) from None
    except ValueError as err:  # e.g. an integer of more than 4300 digits
        raise TaskFormatError(f"invalid JSON: {str(err)[:160]}", file=file) from None


def short(value: object, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters; safe for any value (huge ints, deep lists)."""
    if type(value) is int and value.bit_length() > 128:
        return f"<an integer of {value.bit_length()} bits>"
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        text = f"<a {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_single_task(obj: object) -> bool:
    """Whether a decoded JSON object is one task (rather than a dict of id -> task)."""
    return isinstance(obj, Mapping) and ("train" in obj or "test" in obj)


def _first_bad_cell(raw: list, predicate) -> tuple[int, int, object]:
    for r, row in enumerate(raw):
        for c, value in enumerate(row):
            if predicate(value):
                return r, c, value
    raise AssertionError("unreachable: no offending cell")  # pragma: no cover


def parse_grid(
    raw: object,
    canvas_shape: tuple[int, int],
    *,
    file: str | Path | None = None,
    task_id: str | None = None,
    pair: str | None = None,
) -> np.ndarray:
    """Validate one grid (list of rows) into an ``int8`` array of shape ``(rows, cols)``."""

    def fail(problem: str) -> TaskFormatError:
        return TaskFormatError(problem, file=file, task_id=task_id, pair=pair)

    if not isinstance(raw, list):
        raise fail(f"a grid must be a list of rows, got {type(raw).__name__}")
    if not raw:
        raise fail("empty grid (no rows)")
    for r, row in enumerate(raw):
        if not isinstance(row, list):
            raise fail(f"row {r} must be a list of integers, got {type(row).__name__}")
    widths = list(map(len, raw))
    width = widths[0]
    if width == 0:
        raise fail("empty grid (row 0 has no cells)")
    if widths.count(width) != len(widths):
        r = next(i for i, w in enumerate(widths) if w != width)
        raise fail(f"ragged rows: row {r} has {widths[r]} cells but row 0 has {width}")
    # ``type(v) is int``: bools and floats (even 3.0) are not cells
    cell_types = set(map(type, itertools.chain.from_iterable(raw)))
    if cell_types != {int}:
        r, c, value = _first_bad_cell(raw, lambda v: type(v) is not int)
        raise fail(
            f"non-integer cell {short(value)} ({type(value).__name__}) at row {r}, column {c}"
        )
    try:
        grid = np.array(raw, dtype=np.int64)
        in_range = bool(grid.min() >= 0 and grid.max() < NUM_COLOURS)
    except OverflowError:
        in_range = False
    if not in_range:
        r, c, value = _first_bad_cell(raw, lambda v: not 0 <= v < NUM_COLOURS)
        raise fail(f"colour {short(value)} outside 0-9 at row {r}, column {c}")
    rows, cols = len(raw), width
    if rows > canvas_shape[0] or cols > canvas_shape[1]:
        raise fail(
            f"grid of {rows}x{cols} is larger than the canvas "
            f"{canvas_shape[0]}x{canvas_shape[1]} (use a larger canvas)"
        )
    return grid.astype(np.int8)


def _parse_pairs(
    raw_task: Mapping,
    section: str,
    canvas_shape: tuple[int, int],
    *,
    file: str | Path | None,
    task_id: str,
    output_required: bool,
) -> list[tuple[np.ndarray, np.ndarray | None]]:
    if section not in raw_task:
        raise TaskFormatError(f"missing {section!r}", file=file, task_id=task_id)
    pairs = raw_task[section]
    if not isinstance(pairs, list):
        problem = f"{section!r} must be a list of pairs, got {type(pairs).__name__}"
        raise TaskFormatError(problem, file=file, task_id=task_id, pair=section)
    if not pairs:
        raise TaskFormatError(f"{section!r} has no pairs", file=file, task_id=task_id)
    parsed = []
    for k, pair in enumerate(pairs):
        where = f"{section}[{k}]"
        if not isinstance(pair, Mapping):
            problem = f"a pair must be an object with 'input'/'output', got {type(pair).__name__}"
            raise TaskFormatError(problem, file=file, task_id=task_id, pair=where)
        grids = []
        for key in ("input", "output"):
            if key not in pair:
                if key == "output" and not output_required:
                    grids.append(None)
                    continue
                raise TaskFormatError(f"missing {key!r}", file=file, task_id=task_id, pair=where)
            grids.append(
                parse_grid(
                    pair[key], canvas_shape, file=file, task_id=task_id, pair=f"{where}.{key}"
                )
            )
        parsed.append((grids[0], grids[1]))
    return parsed


def parse_task(
    raw_task: object,
    canvas_shape: tuple[int, int],
    *,
    task_id: str,
    file: str | Path | None = None,
) -> ParsedTask:
    """Validate one decoded JSON task; raises :class:`TaskFormatError` on the first problem."""
    if not isinstance(raw_task, Mapping):
        problem = f"a task must be an object with 'train' and 'test', got {type(raw_task).__name__}"
        raise TaskFormatError(problem, file=file, task_id=task_id)
    common = dict(file=file, task_id=task_id)
    demos = _parse_pairs(raw_task, "train", canvas_shape, output_required=True, **common)
    tests = _parse_pairs(raw_task, "test", canvas_shape, output_required=False, **common)
    return ParsedTask(task_id=task_id, demos=tuple(demos), tests=tuple(tests))  # type: ignore[arg-type]


def attach_solutions(
    raw_tasks: Mapping[str, object],
    solutions: object,
    *,
    file: str | Path | None,
    skip_invalid: bool = False,
) -> tuple[dict[str, object], list[TaskFormatError]]:
    """Fill test outputs from a Kaggle solutions object ``{task_id: [grid per test]}``.

    Returns the tasks with outputs and the per-task problems (a task whose solutions are not
    a list of one grid per test pair); those raise unless ``skip_invalid``, when the task is
    left out and its error returned for the load report.
    """
    if not isinstance(solutions, Mapping):
        raise TaskFormatError("a solutions file must be a dict of task id -> outputs", file=file)
    unknown = sorted(set(solutions) - set(raw_tasks))
    if unknown:
        problem = f"solutions for tasks not in the challenges: {', '.join(unknown[:5])}"
        raise TaskFormatError(problem, file=file)
    merged: dict[str, object] = {}
    problems: list[TaskFormatError] = []
    for task_id, raw_task in raw_tasks.items():
        if task_id not in solutions:
            raise TaskFormatError("no solutions for this task", file=file, task_id=task_id)
        outputs = solutions[task_id]
        tests = raw_task.get("test") if isinstance(raw_task, Mapping) else None
        problem = None
        if not isinstance(outputs, list):
            problem = (
                "the solutions must be a list of output grids (one per test pair), "
                f"got {type(outputs).__name__} {short(outputs)}"
            )
        elif isinstance(tests, list) and len(outputs) != len(tests):
            problem = f"{len(outputs)} solution grids for {len(tests)} test pairs"
        if problem is not None:
            err = TaskFormatError(problem, file=file, task_id=task_id)
            if not skip_invalid:
                raise err
            problems.append(err)
            continue
        if not isinstance(tests, list):
            merged[task_id] = raw_task  # parse_task reports the malformed challenge
            continue
        filled = [
            {**pair, "output": out} if isinstance(pair, Mapping) else pair
            for pair, out in zip(tests, outputs, strict=True)
        ]
        merged[task_id] = {**raw_task, "test": filled}
    return merged, problems
