"""The bounces of the ``rays`` mask family: diagonal rays that turn back at the grid's
sides (zigzags) or at the cells they meet; checked against step-by-step loops, on small
hand-made grids, and on the ARC-AGI-1 training tasks they are documented to serve."""

from __future__ import annotations

import numpy as np
import pytest
from training_tasks import text_grid as _grid
from training_tasks import training_and_truth as _training

from jaxarc.solve.language.bounces import BOUNCE_TASKS, bounce_masks, zigzag_cells
from jaxarc.solve.language.finder import language_solutions
from jaxarc.solve.language.masks import family_masks


def _zigzag_loop(row: int, col: int, width: int) -> list[int]:
    """A ball's columns from ``row`` up to row 0, stepping sideways and turning at the
    sides, first away from the nearer side."""
    step = 1 if col <= width - 1 - col else -1
    cols = {row: col}
    for r in range(row - 1, -1, -1):
        if width > 1 and not 0 <= col + step < width:
            step = -step
        col = col + step if width > 1 else col
        cols[r] = col
    return [cols[r] for r in range(row + 1)]


def test_zigzags_match_a_step_by_step_loop() -> None:
    for width in range(1, 7):
        for row in range(0, 9):
            for col in range(width):
                assert zigzag_cells(row, col, width).tolist() == _zigzag_loop(row, col, width)


def test_a_zigzag_up_from_a_corner_bounces_between_the_sides() -> None:
    grid = _grid(["000", "000", "000", "000", "100"])
    masks = dict(bounce_masks(grid, 0))
    want = _grid(["100", "010", "001", "010", "000"]) == 1  # the start is not background
    assert masks["zigzag up from colour 1"].tolist() == want.tolist()
    right = _grid(["0000", "0000", "1000"])
    assert (
        dict(bounce_masks(right, 0))["zigzag right from colour 1"].tolist()
        == (_grid(["0010", "0101", "0000"]) == 1).tolist()
    )


def test_a_diagonal_line_continued_turns_back_at_a_wall() -> None:
    grid = _grid(
        [
            "0000000",
            "1000000",
            "0100000",
            "0000000",
            "0000000",
            "2222222",
        ]
    )
    made = dict(bounce_masks(grid, 0))["bounce from colour 1"]
    # down-right from (2, 1) to the wall, which turns it up-right until it leaves the grid;
    # the other end, (1, 0), leaves the grid at once
    assert np.argwhere(made).tolist() == [[1, 6], [2, 5], [3, 2], [3, 4], [4, 3]]


def test_a_colour_of_many_cells_starts_no_rays() -> None:
    grid = np.zeros((6, 6), np.int8)
    grid[0] = 3
    assert dict(bounce_masks(grid, 0)) == {}


def test_bounces_belong_to_the_rays_family() -> None:
    grid = np.zeros((5, 7), np.int8)
    grid[4, 0] = 1
    rays = family_masks(grid, 0)["rays"]
    assert "zigzag up from colour 1" in rays and "ray up from colour 1" in rays
    assert rays["zigzag up from colour 1"].dtype == np.bool_


@pytest.mark.long
@pytest.mark.parametrize("task_id", BOUNCE_TASKS)
def test_bounces_solve_their_training_tasks(task_id: str) -> None:
    """The first program paints with a rule of the family and is right on the test."""
    problems, truth = _training()
    found = language_solutions(problems[task_id], 1)
    assert found and any("zigzag" in p.mask or "bounce" in p.mask for p in found[0].program.paints)
    for made, want in zip(found[0].predictions, truth[task_id], strict=True):
        np.testing.assert_array_equal(made, want)
