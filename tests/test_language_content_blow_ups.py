"""The content blow-up views: the box of the input's content scaled, tiled or laid in its
own cells' blocks; checked on hand-made grids and on the ARC-AGI-1 training tasks they are
documented to serve."""

from __future__ import annotations

import numpy as np
import pytest
from training_tasks import assert_first_program_right, text_grid, text_problem

from jaxarc.solve.language.finder import language_solutions
from jaxarc.solve.language.view_kinds import CONTENT_BLOW_UP_TASKS
from jaxarc.solve.language.views import task_views

# a 2 x 2 picture somewhere on a 4 x 4 grid, blown up twice
SCALED = text_problem(
    [
        (["0000", "0120", "0030", "0000"], ["1122", "1122", "0033", "0033"]),
        (["4500", "0600", "0000", "0000"], ["4455", "4455", "0066", "0066"]),
    ],
    [["0000", "0000", "0078", "0090"]],
)


def test_the_content_box_is_scaled_and_tiled_by_the_first_demonstrations_factor() -> None:
    views = task_views(SCALED)
    np.testing.assert_array_equal(
        views["content scale 2 x 2"][-1].canvas,
        text_grid(["7788", "7788", "9900", "9900"]),
    )
    assert "content tile 2 x 2" in views  # fits the shapes, draws other cells
    assert "scale 2 x 2" not in views  # the whole input is as large as the output
    found = language_solutions(SCALED, 1)
    assert found[0].program.view == "content scale 2 x 2"


def test_the_content_box_is_laid_in_its_own_cells() -> None:
    problem = text_problem(
        [
            (["000", "010", "011"], ["1000", "1100", "1010", "1111"]),
            (["220", "020", "000"], ["2222", "0202", "0022", "0002"]),
        ],
        [["000", "300", "330"]],
    )
    views = task_views(problem)
    np.testing.assert_array_equal(
        views["content self tile content"][-1].canvas,
        text_grid(["3000", "3300", "3030", "3333"]),
    )


def test_no_content_views_when_the_content_fills_the_input() -> None:
    problem = text_problem([(["12", "34"], ["1122", "1122", "3344", "3344"])], [["56", "78"]])
    assert not any(name.startswith("content ") for name in task_views(problem))


@pytest.mark.long  # every listed task searched whole (make test-long; CI runs it)
@pytest.mark.parametrize("task_id", CONTENT_BLOW_UP_TASKS)
def test_content_blow_ups_solve_their_training_tasks(task_id: str) -> None:
    """The search's first program starts from a content blow-up, right on the test."""
    assert_first_program_right(task_id, "content ")
