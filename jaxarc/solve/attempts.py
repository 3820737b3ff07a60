"""Turning what a method found into attempts and words: the two attempts per test input from
a ranked list of whole-task predictions, and a sequence of environment actions in words
(for the report)."""

from __future__ import annotations

import numpy as np

from jaxarc.grid import operation_ids as ops
from jaxarc.grid.operation_ids import OPERATION_NAMES
from jaxarc.solve.candidates import crop_boxes
from jaxarc.solve.problem import Problem

TaskAttempts = list[tuple[np.ndarray, np.ndarray]]  # per test input: (attempt 1, attempt 2)


def describe_sequence(sequence: np.ndarray, problem: Problem | None = None) -> list[str]:
    """``["COPY(largest object)", "PASTE(0,0,0,0)", ...]``: a sequence of bbox actions in
    words. A step is ``[5]`` (one action for every grid) or ``[N, 5]`` (one per grid); a
    step whose boxes differ between grids is named by its crop selector (found again from
    ``problem``), else ``per grid``."""
    steps = np.asarray(sequence, np.int32)
    steps = steps.reshape(-1, 1, 5) if steps.ndim < 3 else steps
    named: dict[tuple, str] = {}
    if problem is not None:
        for name, boxes in crop_boxes(problem):
            named[(ops.COPY, *boxes)] = f"COPY({name})"
            shapes = [(0, 0, r2 - r1, c2 - c1) for r1, c1, r2, c2 in boxes]
            named[(ops.RESIZE, *shapes)] = f"RESIZE(shape of {name})"
    words = []
    for step in steps:
        op = int(step[0, 0])
        if (step == step[:1]).all():
            words.append(f"{OPERATION_NAMES[op]}({','.join(str(int(v)) for v in step[0, 1:])})")
            continue
        key = (op, *(tuple(int(v) for v in row[1:]) for row in step))
        words.append(named.get(key, f"{OPERATION_NAMES[op]}(per grid)"))
    return words


def first_two_distinct(options: list[list[np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per test input, the attempts of the first two options (whole-task predictions) that
    differ; the first twice when all agree."""
    return pick_attempts(options, [False] * len(options))[0]


def pick_attempts(
    options: list[list[np.ndarray]], from_solutions: list[bool]
) -> tuple[TaskAttempts, list[bool]]:
    """:func:`first_two_distinct`, and for each of the two attempts whether its option came
    from a program that solves every demonstration (``from_solutions``: one flag per
    option)."""
    first = options[0]

    def differs(other: list[np.ndarray]) -> bool:
        return any(not np.array_equal(a, b) for a, b in zip(first, other, strict=True))

    second = next((k for k in range(1, len(options)) if differs(options[k])), 0)
    attempts = list(zip(first, options[second], strict=True))
    return attempts, [bool(from_solutions[0]), bool(from_solutions[second])]


def solved_by_solutions(scored_tasks: dict[str, dict], records: dict[str, dict]) -> list[str]:
    """The scored tasks whose every test input has a right attempt that came from a program
    solving every demonstration (``records[task]["attempts_from_solutions"]``; a method
    that does not record it counts none)."""
    solved = []
    for task_id, scored in scored_tasks.items():
        flags = records.get(task_id, {}).get("attempts_from_solutions")
        inputs = scored.get("test_inputs", [])
        if flags is None or not inputs:
            continue
        if all(any(r and f for r, f in zip(i["attempts"], flags, strict=True)) for i in inputs):
            solved.append(task_id)
    return solved
