"""The ``panel cells`` view: a grid cut by lines shrunk to one cell per panel, in the
panel's colour, with masks of the panels by their marks; checked on hand-made grids and on
the ARC-AGI-1 training tasks it is documented to serve."""

from __future__ import annotations

import numpy as np
import pytest
from training_tasks import assert_first_program_right, text_grid, text_problem

from jaxarc.solve.language.finder import language_solutions
from jaxarc.solve.language.panel_cells import (
    PANEL_CELL_TASKS,
    panel_cell_views,
    panel_grid,
    panel_masks,
)
from jaxarc.solve.language.views import task_views

# panels of 2 x 2 cut by lines of 5: each panel one colour, one with a stray cell
PANELS = [
    "11522",
    "10522",
    "55555",
    "33544",
    "33544",
]


def test_a_panel_grid_holds_each_panels_colour_and_marks() -> None:
    colours, marks = panel_grid(text_grid(PANELS))
    np.testing.assert_array_equal(colours, text_grid(["12", "34"]))
    # marks: cells of neither the separator nor the panels' most frequent colour (2, the
    # lowest of the tied 2, 3, 4)
    np.testing.assert_array_equal(marks, [[4, 0], [4, 4]])
    assert panel_grid(text_grid(["123", "456"])) is None  # no lines: no panels


def test_the_view_fits_turned_copies_and_gives_mark_masks() -> None:
    problem = text_problem(
        [(PANELS, ["21", "43"]), (["66577", "66577", "55555", "88599", "88599"], ["76", "98"])],
        [["11522", "11522", "55555", "00566", "00566"]],
    )
    views = panel_cell_views(problem)
    assert "panel cells flip left-right" in views
    canvas, masks = views["panel cells"][-1]
    np.testing.assert_array_equal(canvas, text_grid(["12", "06"]))
    assert set(masks) >= {"panel marks 0", "panel most marks", "panel some marks"}
    fitting = task_views(problem)
    assert {"panel cells", "panel cells flip left-right"} <= set(fitting)
    found = language_solutions(problem, 1, views=("panel cells",))
    np.testing.assert_array_equal(found[0].predictions[0], text_grid(["21", "60"]))


def test_panels_with_two_marks_are_found_by_their_mask() -> None:
    marks = np.asarray([[0, 2], [1, 2]])
    colours, counted = panel_grid(text_grid(["00800", "00866", "88888", "06860", "00860"]))
    np.testing.assert_array_equal(counted, marks)
    np.testing.assert_array_equal(colours, np.zeros((2, 2), np.int8))
    masks = panel_masks(counted)
    np.testing.assert_array_equal(masks["panel marks 2"], marks == 2)
    np.testing.assert_array_equal(masks["panel fewest marks"], marks == 0)


@pytest.mark.long  # every listed task searched whole (make test-long; CI runs it)
@pytest.mark.parametrize("task_id", PANEL_CELL_TASKS)
def test_panel_cells_solve_their_training_tasks(task_id: str) -> None:
    """The search's first program starts from the view and is right on the test."""
    assert_first_program_right(task_id, "panel cells")
