"""The ``mirror tile`` view: blocks of the input's turns and mirrors, one transform per
block learned from the demonstrations; checked on hand-made grids and on the ARC-AGI-1
training tasks it is documented to serve."""

from __future__ import annotations

import numpy as np
import pytest
from training_tasks import assert_first_program_right, text_grid, text_problem

from jaxarc.solve.language.mirrors import (
    MIRROR_TILE_TASKS,
    TRANSFORMS,
    learn_layout,
    mirror_tile,
)
from jaxarc.solve.language.views import task_views

BESIDE_ITS_MIRROR = text_problem(
    [
        (["12", "30"], ["1221", "3003"]),
        (["40", "05"], ["4004", "0550"]),
    ],
    [["60", "67"]],
)


def test_a_layout_takes_the_first_transform_that_fits_every_demonstration() -> None:
    assert learn_layout(BESIDE_ITS_MIRROR) == (("input", "flip left-right"),)
    made = mirror_tile(text_grid(["60", "67"]), (("input", "flip left-right"),))
    np.testing.assert_array_equal(made, text_grid(["6006", "6776"]))
    assert made.dtype == np.int8
    views = task_views(BESIDE_ITS_MIRROR)
    name = "mirror tile 1 x 2 (input, flip left-right)"
    np.testing.assert_array_equal(views[name][-1].canvas, made)


def test_quarter_turns_fill_the_blocks_of_square_inputs() -> None:
    grid = text_grid(["12", "34"])
    layout = (("input", "rotate cw"), ("rotate ccw", "half turn"))
    problem = text_problem(
        [
            (["12", "34"], ["1231", "3442", "2443", "1321"]),
            (["50", "06"], ["5005", "0660", "0660", "5005"]),
        ],
        [["78", "90"]],
    )
    assert learn_layout(problem) == layout
    made = mirror_tile(grid, layout)
    for (i, j), name in np.ndenumerate(np.asarray(layout, dtype=object)):
        np.testing.assert_array_equal(
            made[2 * i : 2 * i + 2, 2 * j : 2 * j + 2], TRANSFORMS[name](grid)
        )


def test_no_layout_when_a_block_is_no_transform_or_every_block_is_the_input() -> None:
    plain_tile = text_problem([(["12"], ["1212"]), (["30"], ["3030"])], [["45"]])
    assert learn_layout(plain_tile) is None  # the ``tile`` view already
    recoloured = text_problem([(["12"], ["1213"]), (["30"], ["3030"])], [["45"]])
    assert learn_layout(recoloured) is None
    uneven = text_problem([(["12"], ["1221"]), (["30"], ["303003"])], [["45"]])
    assert learn_layout(uneven) is None


@pytest.mark.long  # every listed task searched whole (make test-long; CI runs it)
@pytest.mark.parametrize("task_id", MIRROR_TILE_TASKS)
def test_mirror_tile_solves_its_training_tasks(task_id: str) -> None:
    """The search's first program starts from the view and is right on the test."""
    assert_first_program_right(task_id, "mirror tile")
