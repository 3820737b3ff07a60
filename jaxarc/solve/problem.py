"""A task as the solver sees it: demonstration pairs and test inputs, never test outputs.

:func:`problems_from_bank` builds :class:`Problem` s from a
:class:`~jaxarc.data.bank.TaskBank` and reads no test-output field of the bank, so nothing a
solver computes from a problem can depend on a test output (the no-peeking test checks it
end to end). Grids are ``int8`` NumPy arrays of their true sizes.

:func:`task_content_hash` names a task by what the solver sees of it, not by its id, so a
program prior can record the tasks it was pretrained on and ``jaxarc solve`` can tell which
tasks of another source it has seen (ids collide across sets, and a set may copy a task
under another id).
"""

from __future__ import annotations

import dataclasses
import hashlib
import struct

import numpy as np

from jaxarc.data.bank import TaskBank


class ProblemError(ValueError):
    """A task the solver cannot take (with what and where)."""


MAX_SIDE = 30  # ARC grids are at most 30x30


@dataclasses.dataclass(frozen=True)
class Problem:
    """One task's demonstration pairs and test inputs (true sizes, ``int8``)."""

    task_id: str
    demo_inputs: tuple[np.ndarray, ...]
    demo_outputs: tuple[np.ndarray, ...]
    test_inputs: tuple[np.ndarray, ...]

    def __post_init__(self) -> None:
        if not self.demo_inputs:
            raise ProblemError(f"task {self.task_id!r} has no demonstration pairs")
        if len(self.demo_inputs) != len(self.demo_outputs):
            raise ProblemError(
                f"task {self.task_id!r}: {len(self.demo_inputs)} demonstration inputs but "
                f"{len(self.demo_outputs)} outputs"
            )
        if not self.test_inputs:
            raise ProblemError(f"task {self.task_id!r} has no test inputs")
        grids = [
            *(("train", k, "input", g) for k, g in enumerate(self.demo_inputs)),
            *(("train", k, "output", g) for k, g in enumerate(self.demo_outputs)),
            *(("test", k, "input", g) for k, g in enumerate(self.test_inputs)),
        ]
        for split, k, which, grid in grids:
            rows, cols = grid.shape
            if not (1 <= rows <= MAX_SIDE and 1 <= cols <= MAX_SIDE):
                raise ProblemError(
                    f"task {self.task_id!r}, {split}[{k}].{which}: a {rows}x{cols} grid; ARC "
                    f"grids are 1x1 to {MAX_SIDE}x{MAX_SIDE}"
                )

    @property
    def num_demos(self) -> int:
        return len(self.demo_inputs)

    @property
    def num_tests(self) -> int:
        return len(self.test_inputs)


CONTENT_HASH_CHARS = 16  # hex characters kept of the sha256 digest (64 bits)


def _grid_bytes(grid: np.ndarray) -> bytes:
    """A grid's canonical bytes: rows and columns (one byte each), then its cells as
    ``int8``, row by row."""
    rows, cols = grid.shape
    return bytes((rows, cols)) + np.ascontiguousarray(grid, np.int8).tobytes()


def task_content_hash(problem: Problem) -> str:
    """The hex sha256 (first :data:`CONTENT_HASH_CHARS` characters) of ``problem``'s
    demonstration pairs and test inputs in a canonical byte form.

    The form: the numbers of pairs and of test inputs, then every pair (input grid's bytes,
    output grid's bytes), then every test input's bytes, where a grid's bytes are its rows
    and columns and its ``int8`` cells. Pairs are taken in sorted byte order and so are test
    inputs: a set that lists a task's demonstrations in another order (ARC-AGI-2's copies of
    ARC-AGI-1 tasks do) has the same task. The id and the test outputs are not part of it;
    any changed cell or shape changes it."""
    pairs = sorted(
        _grid_bytes(a) + _grid_bytes(b)
        for a, b in zip(problem.demo_inputs, problem.demo_outputs, strict=True)
    )
    tests = sorted(_grid_bytes(g) for g in problem.test_inputs)
    digest = hashlib.sha256(struct.pack("<II", len(pairs), len(tests)))
    for part in (*pairs, *tests):
        digest.update(part)
    return digest.hexdigest()[:CONTENT_HASH_CHARS]


def _grid(grids: np.ndarray, shapes: np.ndarray, index: tuple[int, int]) -> np.ndarray:
    rows, cols = (int(x) for x in shapes[index])
    return np.ascontiguousarray(grids[index][:rows, :cols]).astype(np.int8)


def problems_from_bank(bank: TaskBank) -> list[Problem]:
    """One :class:`Problem` per task of ``bank``, in order (test outputs are not read)."""
    demo_in = np.asarray(bank.demo_inputs)
    demo_out = np.asarray(bank.demo_outputs)
    demo_in_shapes = np.asarray(bank.demo_input_shapes)
    demo_out_shapes = np.asarray(bank.demo_output_shapes)
    num_demos = np.asarray(bank.num_demos)
    test_in = np.asarray(bank.test_inputs)
    test_in_shapes = np.asarray(bank.test_input_shapes)
    num_tests = np.asarray(bank.num_tests)
    problems = []
    for t, task_id in enumerate(bank.task_ids):
        demos = range(int(num_demos[t]))
        problems.append(
            Problem(
                task_id=task_id,
                demo_inputs=tuple(_grid(demo_in, demo_in_shapes, (t, k)) for k in demos),
                demo_outputs=tuple(_grid(demo_out, demo_out_shapes, (t, k)) for k in demos),
                test_inputs=tuple(
                    _grid(test_in, test_in_shapes, (t, k)) for k in range(int(num_tests[t]))
                ),
            )
        )
    return problems


def known_test_outputs(bank: TaskBank) -> dict[str, list[np.ndarray | None]]:
    """The test outputs of ``bank`` by task id (``None`` where a pair is unscored): for
    scoring a submission after solving, never for solving."""
    outputs = np.asarray(bank.test_outputs)
    shapes = np.asarray(bank.test_output_shapes)
    scored = np.asarray(bank.test_scored)
    num_tests = np.asarray(bank.num_tests)
    return {
        task_id: [
            _grid(outputs, shapes, (t, k)) if scored[t, k] else None
            for k in range(int(num_tests[t]))
        ]
        for t, task_id in enumerate(bank.task_ids)
    }
