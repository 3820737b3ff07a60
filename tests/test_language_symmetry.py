"""The symmetric views of the content language: a picture completed under a group of turns
and mirrors about a centre a rule finds; checked against NumPy loops, on small hand-made
tasks, and on the ARC-AGI-1 training tasks they are documented to serve."""

from __future__ import annotations

import numpy as np
import pytest
from training_tasks import assert_first_program_right
from training_tasks import text_grid as _grid
from training_tasks import text_problem as _problem

from jaxarc.solve.language.symmetry import (
    GROUPS,
    SYMMETRY_TASKS,
    is_symmetric,
    symmetrize,
    symmetry_views,
)
from jaxarc.solve.language.views import task_views

LOOP_MAPS = {  # group -> the maps of a cell (r, c) about a centre (cr, cc), as loops read
    "left-right": lambda r, c, cr, cc: [(r, 2 * cc - c)],
    "top-bottom": lambda r, c, cr, cc: [(2 * cr - r, c)],
    "half turn": lambda r, c, cr, cc: [(2 * cr - r, 2 * cc - c)],
    "both mirrors": lambda r, c, cr, cc: [
        (r, 2 * cc - c),
        (2 * cr - r, c),
        (2 * cr - r, 2 * cc - c),
    ],
}


def test_symmetrize_matches_loops_about_cells_and_corners() -> None:
    rng = np.random.default_rng(0)
    for _ in range(40):
        grid = np.zeros((9, 9), np.int8)
        cells = rng.integers(2, 7, size=(3, 2))
        grid[cells[:, 0], cells[:, 1]] = rng.integers(1, 4, size=3)
        centre = tuple(int(v) for v in rng.integers(7, 10, size=2))  # doubled: cell or corner
        for group, maps in LOOP_MAPS.items():
            want = grid.copy()
            fits = True
            for r, c in np.argwhere(grid != 0):
                for rr, cc in maps(r, c, centre[0] / 2, centre[1] / 2):
                    rr, cc = int(rr), int(cc)
                    if not (0 <= rr < 9 and 0 <= cc < 9) or want[rr, cc] not in (0, grid[r, c]):
                        fits = False
                    else:
                        want[rr, cc] = grid[r, c]
            made = symmetrize(grid, 0, group, centre)
            if fits:
                assert made is not None and made.tolist() == want.tolist(), group
                assert is_symmetric(made, 0, group)


def test_quarter_turns_about_a_cell_turn_a_cell_into_a_ring_of_four() -> None:
    grid = _grid(["00000", "00000", "00100", "00000", "20000"])
    made = symmetrize(grid, 0, "quarter turns", (4, 4))
    assert made.tolist() == _grid(["20002", "00000", "00100", "00000", "20002"]).tolist()
    assert symmetrize(grid, 0, "quarter turns", (4, 3)) is None  # a corner row, a cell column
    assert not is_symmetric(grid, 0, "quarter turns")
    assert set(GROUPS) >= set(LOOP_MAPS)


def test_pieces_mirrored_around_a_centre_block_off_the_grids_centre() -> None:
    # the 3-block is the centre; the 2-piece is mirrored into the other three quarters
    problem = _problem(
        [
            (
                ["2000000", "0330000", "0330000", "0000000", "0000000"],
                ["2002000", "0330000", "0330000", "2002000", "0000000"],
            ),
            (
                ["0000000", "0000000", "0220000", "0003300", "0003300", "0000000"],
                ["0000000", "0000000", "0220022", "0003300", "0003300", "0220022"],
            ),
        ],
        [["0000000", "0200000", "0033000", "0033000", "0000000"]],
    )
    views = symmetry_views(problem, 0)
    assert list(views) == ["symmetric both mirrors (object)"]
    (made,) = views["symmetric both mirrors (object)"][2:]
    assert made.tolist() == _grid(["0000000", "0200200", "0033000", "0033000", "0200200"]).tolist()
    assert "symmetric both mirrors (object)" in task_views(problem)


def test_a_task_whose_outputs_are_not_symmetric_has_no_symmetric_view() -> None:
    problem = _problem([(["100", "000"], ["110", "000"])], [["010", "000"]])
    assert symmetry_views(problem, 0) == {}


@pytest.mark.long
@pytest.mark.parametrize("task_id", SYMMETRY_TASKS)
def test_symmetric_views_solve_their_training_tasks(task_id: str) -> None:
    """The first program starts from a symmetric view and is right on the test."""
    assert_first_program_right(task_id, "symmetric", 2)
