"""The ``extend pattern`` view: the output's shape from a rule of the demonstrations, its
cells from the input's smallest period; checked against NumPy loops and on the ARC-AGI-1
training tasks it is documented to serve."""

from __future__ import annotations

import numpy as np
import pytest
from training_tasks import training_and_truth as _training

from jaxarc.solve.language.extend import (
    EXTEND_TASKS,
    continue_pattern,
    shape_rule,
    smallest_period,
)
from jaxarc.solve.language.finder import language_solutions
from jaxarc.solve.problem import Problem


def _problem(pairs: list[tuple[tuple[int, int], tuple[int, int]]]) -> Problem:
    grids = [(np.zeros(i, np.int8), np.zeros(o, np.int8)) for i, o in pairs]
    return Problem(
        task_id="shapes",
        demo_inputs=tuple(i for i, _ in grids),
        demo_outputs=tuple(o for _, o in grids),
        test_inputs=(np.zeros((4, 4), np.int8),),
    )


def test_the_shape_rule_is_constant_scaled_or_offset_per_axis() -> None:
    constant_and_half = shape_rule(_problem([((6, 3), (9, 5)), ((4, 7), (6, 5))]))
    assert constant_and_half((8, 2)) == (12, 5)
    assert constant_and_half((5, 2)) is None  # 7.5 rows: not a grid
    offset = shape_rule(_problem([((3, 3), (5, 3)), ((4, 6), (6, 6))]))
    assert offset((7, 2)) == (9, 2)
    assert shape_rule(_problem([((2, 2), (3, 3)), ((3, 3), (7, 7))])) is None


def _loop_period(grid: np.ndarray, axis: int) -> int:
    lines = [tuple(np.take(grid, k, axis)) for k in range(grid.shape[axis])]
    return next(
        p
        for p in range(1, len(lines) + 1)
        if all(lines[k] == lines[k % p] for k in range(len(lines)))
    )


def test_the_smallest_period_and_its_continuation_match_loops() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        tile = rng.integers(0, 3, size=rng.integers(1, 4, size=2), dtype=np.int8)
        grid = np.tile(tile, (3, 2))[: rng.integers(1, 9), : rng.integers(1, 7)]
        pr, pc = smallest_period(grid)
        assert (pr, pc) == (_loop_period(grid, 0), _loop_period(grid, 1))
        made = continue_pattern(grid, (11, 13))
        for r in range(11):
            for c in range(13):
                assert made[r, c] == grid[r % pr, c % pc]
        assert made.dtype == np.int8


@pytest.mark.parametrize("task_id", EXTEND_TASKS)
def test_extend_solves_its_training_tasks(task_id: str) -> None:
    """The view alone (no other view) solves each listed task's demonstrations and its
    test; where no other view does, the search's first program starts from it."""
    problems, truth = _training()
    found = language_solutions(problems[task_id], 1, views=("extend",))
    assert found and found[0].program.view == "extend pattern", task_id
    if task_id != "a416b8f3":  # (``tile 1 x 2`` gives the same grid)
        assert language_solutions(problems[task_id], 1)[0].program.view == "extend pattern"
    for made, want in zip(found[0].predictions, truth[task_id], strict=True):
        np.testing.assert_array_equal(made, want)
