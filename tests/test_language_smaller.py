"""Views for outputs smaller than the input: the hidden block of a repaired pattern, rows
and columns deduped, outputs looked up by a key, the object holding the most cells of a
colour, corner windows laid over each other, a pattern coloured by a key. The rules
against hand-made grids, and the training tasks each serves (a program from the view that
solves the demonstrations and predicts the test outputs)."""

from __future__ import annotations

import numpy as np
import pytest
from training_tasks import text_grid as _grid
from training_tasks import training_and_truth as _training

from jaxarc.solve.language.corners import CORNER_VIEW_TASKS, corner_windows, window_views
from jaxarc.solve.language.dedupe import DEDUPE_VIEW_TASKS, dedupe, dedupe_views
from jaxarc.solve.language.finder import language_solutions
from jaxarc.solve.language.hidden import (
    HIDDEN_VIEW_TASKS,
    MIRROR_REPAIR_TASKS,
    hidden_views,
    repair_periodic,
    repair_symmetric,
)
from jaxarc.solve.language.keyed import KEYED_VIEW_TASKS, keyed, pattern_and_key
from jaxarc.solve.language.lookup import LOOKUP_VIEW_TASKS, grid_keys, lookup_views
from jaxarc.solve.language.objects import (
    COLOUR_HOLDING_TASKS,
    colour_holding_picks,
    grid_objects,
    multi4_objects,
)
from jaxarc.solve.problem import Problem


def test_repair_symmetric_fills_from_the_mirrors_the_known_cells_agree_with() -> None:
    picture = _grid(["1231", "4564", "4564", "1231"])  # left-right and top-bottom mirrors
    holed = picture.copy()
    holed[0:2, 2:4] = 9
    np.testing.assert_array_equal(repair_symmetric(holed, 9), picture)
    assert repair_symmetric(picture, 9) is None  # nothing hidden
    lopsided = _grid(["1234", "5678", "9012", "3456"])
    lopsided[0, 0] = 7  # colour 7 hides one cell; no mirror agrees
    assert repair_symmetric(np.where(lopsided == 7, 9, lopsided), 9) is None
    # the crop view is the hidden block, filled by a period where one fits
    striped = _grid(["121212", "121212", "129912", "129912"])
    views = hidden_views(striped, [9])
    np.testing.assert_array_equal(views["repair crop colour 9"], _grid(["12", "12"]))


def test_dedupe_keeps_each_run_of_equal_rows_and_columns_once() -> None:
    grid = _grid(["0000", "0112", "0112", "0332", "0000"])
    np.testing.assert_array_equal(dedupe(grid), _grid(["000", "012", "032", "000"]))
    views = dedupe_views(grid, 0)
    np.testing.assert_array_equal(views["dedupe content"], _grid(["12", "32"]))


def test_lookup_takes_the_output_of_the_demonstration_with_the_same_key() -> None:
    a, b = _grid(["20", "02"]), _grid(["20", "00"])
    keys = grid_keys(a, 0)
    assert keys["content colours"] == (2,) and keys["left-right symmetric"] is False
    outs = (_grid(["1"]), _grid(["7"]), _grid(["1"]))
    problem = Problem("hand", (a, b, a * 3 // 2), outs, (b,))
    views = lookup_views(problem, 0)
    # content shape: a and 3a/2 share it (the table saw it twice), b -> 7
    assert [int(g[0, 0]) for g in views["lookup content shape"]] == [1, 7, 1, 7]
    assert "lookup content colours" not in views  # colours 2, 2, 3 -> 1, 7: no table


def test_colour_holding_picks_choose_the_object_with_the_most_cells_of_a_colour() -> None:
    grid = _grid(["1100000", "1200222", "0000212", "0000000"])
    objects = grid_objects(grid, 0)["multi8"]
    picks = dict(colour_holding_picks(grid, objects))
    chosen = objects.union(picks["most colour 2"])
    loop = np.zeros(objects.count, int)
    for k in range(objects.count):
        loop[k] = int(((objects.labels == k) & (grid == 2)).sum())
    np.testing.assert_array_equal(chosen, objects.labels == int(loop.argmax()))
    assert loop.max() == 5 and chosen.sum() == 6
    assert multi4_objects(_grid(["10", "01"]), 0).count == 2  # corners stay apart


def test_corner_windows_lay_the_corners_as_they_lie_or_folded() -> None:
    grid = _grid(["12034", "56078", "00000", "91023"])
    pieces = corner_windows(grid, (2, 2), folded=False)
    assert [p.tolist() for p in pieces[:2]] == [[[1, 2], [5, 6]], [[3, 4], [7, 8]]]
    folded = corner_windows(grid, (2, 2), folded=True)
    assert folded[1].tolist() == [[4, 3], [8, 7]]  # the top-right one flipped left-right
    assert folded[2].tolist() == [[9, 1], [0, 0]]  # the bottom-left one flipped top-bottom
    halves = corner_windows(_grid(["1234"]), (1, 2), folded=False)
    assert len(halves) == 2  # as tall as the grid: two windows


def test_window_views_cut_a_corner_of_the_grid_or_of_its_content() -> None:
    wide, tall = _grid(["123123", "456456"]), _grid(["12", "34", "56", "78"])
    halves = (_grid(["123", "456"]), _grid(["12", "34"]))
    problem = Problem("hand", (wide, tall), halves, (_grid(["123456"]),))
    views = window_views(problem, problem.test_inputs[0], 0)  # halved along the longer axis
    assert views["window top-right"].tolist() == [[4, 5, 6]]
    boxed = _grid(["00000", "01230", "04560", "00000"])
    same = Problem("hand", (boxed, boxed), (_grid(["1"]), _grid(["1"])), (boxed,))
    views = window_views(same, boxed, 0)
    assert views["content window bottom-right"].tolist() == [[6]]
    assert views["window top-left"].tolist() == [[0]]


def test_keyed_colours_the_pattern_by_the_key() -> None:
    grid = _grid(["1100000", "1100000", "0011000", "0011000", "0000000", "0000230", "0000450"])
    pattern, key, bg = pattern_and_key(grid, 0)
    assert pattern.shape == (4, 4) and key.tolist() == [[2, 3], [4, 5]] and bg == 0
    np.testing.assert_array_equal(keyed(pattern, key, bg, (2, 2)), _grid(["20", "05"]))
    big = keyed(pattern, key, bg, (4, 4))
    np.testing.assert_array_equal(big, np.kron(_grid(["20", "05"]), np.ones((2, 2), np.int8)))


RULE_TABLES = (
    HIDDEN_VIEW_TASKS,
    DEDUPE_VIEW_TASKS,
    LOOKUP_VIEW_TASKS,
    COLOUR_HOLDING_TASKS,
    CORNER_VIEW_TASKS,
    KEYED_VIEW_TASKS,
)
SERVED = [
    (task_id, prefix)
    for table in RULE_TABLES
    for prefix, task_ids in table.items()
    for task_id in task_ids
]


def test_each_rule_serves_three_training_tasks() -> None:
    for table in RULE_TABLES:
        rules = {k: v for k, v in table.items() if k != "repair mirror"}  # see below
        assert all(len(set(ids)) >= 3 for ids in rules.values()), table


def test_only_the_mirrors_fill_the_hidden_cells_of_five_tasks() -> None:
    problems, _ = _training()
    assert len(MIRROR_REPAIR_TASKS) >= 3
    assert set(HIDDEN_VIEW_TASKS["repair mirror"]) <= set(MIRROR_REPAIR_TASKS)
    for task_id in MIRROR_REPAIR_TASKS:
        problem = problems[task_id]
        for grid, out in zip(problem.demo_inputs, problem.demo_outputs, strict=True):
            hidden = [c for c in range(10) if (grid == c).any() and not (out == c).any()]
            assert all(repair_periodic(grid, c) is None for c in hidden), task_id
            views = hidden_views(grid, hidden)  # the mirrors fill the grid, or its hole
            assert any(v.shape == out.shape and (v == out).all() for v in views.values())


@pytest.mark.long  # every listed task searched whole (make test-long; CI runs it)
@pytest.mark.parametrize(("task_id", "prefix"), SERVED)
def test_the_view_solves_its_training_tasks(task_id: str, prefix: str) -> None:
    problems, outputs = _training()
    problem = problems[task_id]
    found = language_solutions(problem, 1)
    assert found, task_id
    assert prefix in found[0].program.view, (task_id, found[0].program.describe())
    for got, want in zip(found[0].predictions, outputs[task_id], strict=True):
        np.testing.assert_array_equal(got, want)
