"""The ARC-AGI-1 training tasks the language tests check rules on, loaded once per test
process, and small grids written as text."""

from __future__ import annotations

import functools

import numpy as np

from jaxarc.data import load_bank
from jaxarc.solve.language.finder import language_solutions
from jaxarc.solve.problem import Problem, known_test_outputs, problems_from_bank


@functools.cache
def training_and_truth() -> tuple[dict[str, Problem], dict[str, list[np.ndarray]]]:
    """The training tasks by id, and their test outputs by id (for scoring only)."""
    bank = load_bank("arc-agi-1/training")
    return {p.task_id: p for p in problems_from_bank(bank)}, known_test_outputs(bank)


def training_problems() -> dict[str, Problem]:
    """The training tasks by id."""
    return training_and_truth()[0]


def text_grid(rows: list[str]) -> np.ndarray:
    """``["012", "340"]`` as an ``int8`` grid ``[2, 3]``."""
    return np.asarray([[int(ch) for ch in row] for row in rows], np.int8)


def text_problem(pairs: list[tuple[list[str], list[str]]], tests: list[list[str]]) -> Problem:
    """A hand-made task: demonstration ``(input, output)`` pairs and test inputs, each grid
    written as text (:func:`text_grid`)."""
    return Problem(
        "hand-made",
        tuple(text_grid(i) for i, _ in pairs),
        tuple(text_grid(o) for _, o in pairs),
        tuple(text_grid(t) for t in tests),
    )


def assert_first_program_right(task_id: str, view_prefix: str, max_programs: int = 1) -> None:
    """The search's first program on training task ``task_id`` starts from a view whose
    name starts with ``view_prefix`` and predicts every test output."""
    problems, truth = training_and_truth()
    found = language_solutions(problems[task_id], max_programs)
    assert found and found[0].program.view.startswith(view_prefix), (task_id, found[:1])
    for made, want in zip(found[0].predictions, truth[task_id], strict=True):
        np.testing.assert_array_equal(made, want)
