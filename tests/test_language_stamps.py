"""The stamp views and the template paste views: the rules against hand-made grids, and the
training tasks that need them (their first program starts from one, and is right on the
test)."""

from __future__ import annotations

import numpy as np
import pytest
from training_tasks import text_grid as _grid
from training_tasks import text_problem as _problem
from training_tasks import training_and_truth as _training

from jaxarc.solve.language.finder import language_solutions
from jaxarc.solve.language.paste import paste_template, paste_views
from jaxarc.solve.language.stamps import OWN, learn_stamps, stamp_grid, stamp_views
from jaxarc.solve.language.views import VIEW_KINDS, VIEW_TASKS
from jaxarc.solve.problem import Problem

# a cell of colour 2 gets a 3 above it and a 4 to its right, and its shape's pattern (a
# single cell: the colour of its own cell below it) serves the new colour 6 of the test
STAMPED = _problem(
    [
        (["00000", "00200", "00000", "00000"], ["00300", "00240", "00200", "00000"]),
        (["00000", "00000", "02000", "00000"], ["00000", "03000", "02400", "02000"]),
    ],
    [["00000", "00000", "00060", "00000"]],
)


def test_learned_stamps_draw_the_offsets_every_marker_agrees_on() -> None:
    stamps = learn_stamps(STAMPED, 0, "single4")
    assert stamps is not None
    exact = [p for p in stamps.exact.values() if p is not None]
    assert len(exact) == 1
    drawn = dict(zip(map(tuple, exact[0].offsets.tolist()), exact[0].roles.tolist(), strict=True))
    assert drawn == {(-1, 0): 3, (0, 1): 4, (1, 0): 2}
    (shaped,) = stamps.shaped.values()
    drawn = dict(zip(map(tuple, shaped.offsets.tolist()), shaped.roles.tolist(), strict=True))
    assert drawn == {(-1, 0): 3, (0, 1): 4, (1, 0): OWN}  # below: the cell's own colour
    # the test's new colour takes the shape's pattern: its own colour below it
    expected = _grid(["00000", "00030", "00064", "00060"])
    np.testing.assert_array_equal(stamp_grid(STAMPED.test_inputs[0], 0, stamps), expected)
    assert stamp_grid(STAMPED.test_inputs[0], 0, stamps).dtype == np.int8
    assert list(stamp_views(STAMPED, 0)) == ["stamp single4"]  # multi8 stamps alike: left out


def test_a_stamp_matches_a_plain_loop_over_the_markers() -> None:
    """Drawing the learned offsets by hand, marker after marker, gives the same grid."""
    stamps = learn_stamps(STAMPED, 0, "single4")
    grid = _grid(["0000000", "0200000", "0000020", "0000000", "0000000"])
    expected = grid.copy()
    for r, c in np.argwhere(grid == 2):
        for (dr, dc), colour in {(-1, 0): 3, (0, 1): 4, (1, 0): 2}.items():
            if 0 <= r + dr < grid.shape[0] and 0 <= c + dc < grid.shape[1]:
                expected[r + dr, c + dc] = colour
    np.testing.assert_array_equal(stamp_grid(grid, 0, stamps), expected)


def test_a_stamp_is_learned_only_where_every_marker_agrees() -> None:
    """Two demonstrations that disagree on every offset give no stamp."""
    problem = _problem(
        [
            (["000", "020", "000"], ["000", "023", "000"]),
            (["000", "020", "000"], ["000", "320", "000"]),
        ],
        [["000", "020", "000"]],
    )
    assert learn_stamps(problem, 0, "single4") is None
    assert stamp_views(problem, 0) == {}


TEMPLATE = _grid(
    [
        "0120000",
        "0340000",
        "0000000",
        "0000550",
        "0000550",
        "5000000",
    ]
)


def test_the_template_is_pasted_on_same_shape_markers_and_centred_on_single_cells() -> None:
    pasted = paste_template(TEMPLATE, 0)
    expected = TEMPLATE.copy()
    expected[3:5, 4:6] = [[1, 2], [3, 4]]  # the 2 x 2 block takes the template
    np.testing.assert_array_equal(pasted, expected)  # the single 5: no centre (even sides)
    moved = paste_template(TEMPLATE, 0, move=True)
    expected[0:2, 1:3] = 0
    np.testing.assert_array_equal(moved, expected)
    odd = _grid(["01000", "23400", "01000", "00000", "00050", "00000"])
    centred = paste_template(odd, 0)  # the 3 x 3 template's centre on the single 5
    np.testing.assert_array_equal(centred[3:6, 2:5], [[0, 1, 0], [2, 3, 4], [0, 1, 0]])
    assert paste_template(_grid(["0110", "0000", "0050"]), 0) is None  # no template


def test_paste_views_fit_only_where_the_pasted_cells_are_the_outputs() -> None:
    moved = paste_template(TEMPLATE, 0, move=True)
    kept = paste_template(TEMPLATE, 0)
    # the template kept: moving it would clear cells the outputs hold
    problem = Problem("hand-made", (TEMPLATE, TEMPLATE), (kept, kept), (TEMPLATE,))
    assert paste_views(problem, 0) == ("paste template",)
    # the template moved: pasting alone writes only the outputs' colours too (a paint
    # clears the template then)
    problem = Problem("hand-made", (TEMPLATE, TEMPLATE), (moved, moved), (TEMPLATE,))
    assert paste_views(problem, 0) == ("paste template", "move template")
    wrong = moved.copy()
    wrong[3, 4] = 7
    problem = Problem("hand-made", (TEMPLATE, TEMPLATE), (moved, wrong), (TEMPLATE,))
    assert paste_views(problem, 0) == ()


@pytest.mark.long  # every listed task searched whole (make test-long; CI runs it)
@pytest.mark.parametrize("kind", ["stamp", "paste"])
def test_stamp_and_paste_views_solve_their_training_tasks(kind: str) -> None:
    """Each listed task's first program starts from the view and solves the demonstrations
    (the environment replays it), and one of its first two attempts gets the test output
    right."""
    problems, outputs = _training()
    assert len(VIEW_TASKS[kind]) >= 3
    for task_id in VIEW_TASKS[kind]:
        solutions = language_solutions(problems[task_id])
        assert solutions, task_id
        assert solutions[0].program.view.startswith(VIEW_KINDS[kind]), task_id
        right = [
            all(np.array_equal(p, o) for p, o in zip(s.predictions, outputs[task_id], strict=True))
            for s in solutions[:2]
        ]
        assert any(right), task_id
