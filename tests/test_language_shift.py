"""The shift view and the attract view toward each object's own colour: the rules against
hand-made grids, and the training tasks that need them (no program without them)."""

from __future__ import annotations

import numpy as np
import pytest
from training_tasks import text_grid as _grid
from training_tasks import training_problems as _training

from jaxarc.solve.language.finder import language_solutions
from jaxarc.solve.language.motion import ANY, attract, attract_pairs
from jaxarc.solve.language.shift import shift, shift_moves
from jaxarc.solve.language.views import VIEW_KINDS


def _moved(grid: np.ndarray, cells: list[tuple[int, int, int]]) -> np.ndarray:
    """``grid`` cleared of colour 1 and 2 and drawn with ``(row, col, colour)`` cells."""
    out = np.where((grid == 1) | (grid == 2), 0, grid).astype(np.int8)
    for r, c, colour in cells:
        out[r, c] = colour
    return out


GRID = _grid(
    [
        "110000",
        "100000",
        "000000",
        "000040",
        "000000",
        "000000",
    ]
)


def test_shift_rules_give_each_object_its_offset() -> None:
    # box centre of the 1s: (0.5, 0.5); the 4 at (3, 4)
    step = shift(GRID, 0, mover=1, rule="step toward", anchor=4)
    np.testing.assert_array_equal(step, _moved(GRID, [(1, 1, 1), (1, 2, 1), (2, 1, 1)]))
    assert step.dtype == np.int8
    # centre to colour 4: (0.5, 0.5) -> (3, 4) is half a cell off: no offset
    assert shift(GRID, 0, mover=1, rule="centre to", anchor=4) is None
    own = shift(GRID, 0, mover=1, rule="own size down")  # two rows down
    np.testing.assert_array_equal(own, _moved(GRID, [(2, 0, 1), (2, 1, 1), (3, 0, 1)]))
    assert shift(GRID, 0, mover=1, rule="by -1 0") is None  # off the grid
    by = shift(GRID, 0, mover=4, rule="by 1 -2")
    np.testing.assert_array_equal(by[4, 2], 4)
    assert (by == 4).sum() == 1 and (by == 1).sum() == 3


def test_shift_rows_to_an_anchor_moves_each_object() -> None:
    grid = _grid(["2000", "0000", "0033", "2000"])
    moved = shift(grid, 0, mover=2, rule="rows to", anchor=3)
    np.testing.assert_array_equal(moved, _grid(["0000", "0000", "2033", "0000"]))


def test_shift_learns_a_rule_per_mover_colour() -> None:
    assert shift_moves(_training()["1caeab9d"], 0) == [(2, "rows to", 1), (4, "rows to", 1)]
    assert shift_moves(_training()["dc433765"], 0) == [(3, "step toward", 4)]
    # the mover turns into another colour: its moved cells are that colour's in the outputs
    assert shift_moves(_training()["a79310a0"], 0) == [(8, "by 1 0", -1)]


def test_attract_toward_their_own_colour_flies_through_the_others() -> None:
    grid = _grid(
        [
            "1000020",
            "1020020",
            "1000020",
            "1000120",
            "1000020",
            "1000000",
        ]
    )
    moved = attract(grid, 0, mover=ANY, anchor=ANY)
    want = _grid(
        [
            "1000020",
            "1000220",  # the 2 beside its own line
            "1000020",
            "1100020",  # the 1 through the 2 line to its own
            "1000020",
            "1000000",
        ]
    )
    np.testing.assert_array_equal(moved, want)
    assert moved.dtype == np.int8
    lone = _grid(["000", "030", "000"])  # no larger object of its colour: stays
    np.testing.assert_array_equal(attract(lone, 0, mover=ANY, anchor=ANY), lone)


def test_attract_learns_movers_of_any_colour() -> None:
    assert attract_pairs(_training()["d687bc17"], 0) == [(ANY, ANY)]
    assert attract_pairs(_training()["4093f84a"], 0) == [(ANY, 5)]


@pytest.mark.parametrize(
    ("task_id", "kind"),
    [
        ("dc433765", "shift"),
        ("a1570a43", "shift"),
        ("5521c0d9", "shift"),
        ("1a07d186", "attract"),
        ("d687bc17", "attract"),
        ("4093f84a", "attract"),
    ],
)
def test_without_the_view_kind_a_task_loses_its_program(task_id: str, kind: str) -> None:
    problem = _training()[task_id]
    assert language_solutions(problem, 1)
    others = tuple(p for k, prefixes in VIEW_KINDS.items() if k != kind for p in prefixes)
    assert language_solutions(problem, 1, views=others) == []
