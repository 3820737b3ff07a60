"""The count views and the attract view of the content language: the rules against NumPy
loops on small grids, and the training tasks that need them (no program without them)."""

from __future__ import annotations

import numpy as np
import pytest
from training_tasks import text_grid as _grid
from training_tasks import training_problems as _training

from jaxarc.solve.language.counts import colour_lists, grid_counts, learned_order
from jaxarc.solve.language.finder import language_solutions
from jaxarc.solve.language.motion import attract, attract_pairs
from jaxarc.solve.language.views import VIEW_KINDS, task_views
from jaxarc.solve.problem import Problem


def test_grid_counts_match_loops() -> None:
    grid = _grid(["1100302", "1100000", "0000202", "3300000"])
    counts = grid_counts(grid, 0)
    assert counts["content cells"] == int((grid != 0).sum()) == 10
    assert counts["colours"] == 3
    for c in range(10):
        assert counts[f"cells of colour {c}"] == sum(int(v == c) for v in grid.reshape(-1))
    # 4-connected, one colour: the 1 block, the 3 at (0, 4), the 3 pair, three single 2s
    assert counts["single4 objects"] == 6
    assert counts["single4 objects of colour 2"] == 3
    assert counts["single4 size 1 of colour 2"] == 3
    assert counts["single4 largest"] == 1 and counts["single4 size 2 of colour 3"] == 1
    assert all(isinstance(v, int) for v in counts.values())


def test_a_learned_order_follows_the_growing_drawings() -> None:
    one, two, four = (np.zeros((2, 3), bool) for _ in range(3))
    one[1, 2] = True
    two[1, 2] = two[0, 0] = True
    four[1, 2] = four[0, 0] = four[0, 2] = four[1, 0] = True
    order = learned_order([four, one, two])
    assert order.dtype == np.int64
    # (1, 2) first, then (0, 0), then (0, 2) and (1, 0) in reading order, then the rest
    assert order.tolist() == [5, 0, 2, 3, 1, 4]
    assert learned_order([one, ~one]) is None  # the larger does not hold the smaller


def test_colour_lists_by_count_and_by_position() -> None:
    grid = _grid(["0122", "0122", "0132"])
    lists = colour_lists(grid, 0)
    assert lists["by count"].tolist() == [2, 1, 3] and lists["by count"].dtype == np.int8
    assert lists["by count after the first"].tolist() == [1, 3]
    assert lists["row by position"].tolist() == [0, 1, 3, 2]  # by mean column
    assert colour_lists(grid.T, 0)["column by position"].tolist() == [0, 1, 3, 2]


def test_attract_slides_objects_until_they_touch() -> None:
    grid = _grid(
        [
            "0000010",
            "0100000",
            "0000000",
            "0002200",
            "0002200",
            "0000001",
            "0000000",
        ]
    )
    moved = attract(grid, 0, mover=1, anchor=2)
    want = _grid(
        [
            "0000010",  # meets no anchor cell in any direction: stays
            "0000000",
            "0010000",  # down-right from (1, 1): stops at the block's corner
            "0002200",
            "0002210",  # up-left from (5, 6): stops beside the block
            "0000000",
            "0000000",
        ]
    )
    np.testing.assert_array_equal(moved, want)
    assert moved.dtype == np.int8
    np.testing.assert_array_equal(attract(grid, 0, mover=1, anchor=7), grid)  # no anchor


def test_attract_learns_each_mover_colour_its_anchor() -> None:
    problem = _training()["ae3edfdc"]
    assert sorted(attract_pairs(problem, 0)) == [(3, 2), (7, 1)]


@pytest.mark.parametrize(("task_id", "kind"), [("05f2a901", "attract"), ("d0f5fe59", "count")])
def test_without_the_view_kind_a_task_loses_its_program(task_id: str, kind: str) -> None:
    problem = _training()[task_id]
    assert language_solutions(problem, 1)
    others = tuple(p for k, prefixes in VIEW_KINDS.items() if k != kind for p in prefixes)
    assert language_solutions(problem, 1, views=others) == []


def test_count_views_give_each_grid_its_own_size() -> None:
    problem = _training()["d631b094"]
    column = task_views(problem)["count 1 x n (content cells)"]
    grids = [*problem.demo_inputs, *problem.test_inputs]
    assert [v.canvas.shape for v in column] == [(1, int((g != 0).sum())) for g in grids]
    assert all(v.canvas.dtype == np.int8 and (v.canvas == 0).all() for v in column)


def test_a_count_gives_the_scale_factor_of_each_grid() -> None:
    """Outputs blown up by the number of colours (2, then 3): the view ``scale n x n
    (colours)`` blows each grid, the test input too, up by its own count."""

    def grid(colours: list[int]) -> np.ndarray:
        made = np.zeros((3, 3), np.int8)
        made.reshape(-1)[: len(colours)] = colours
        return made

    inputs = [grid([1, 2]), grid([3, 3, 4, 5]), grid([6, 7, 8, 9])]
    outputs = [
        np.kron(g, np.ones((n, n), np.int8)) for g, n in zip(inputs[:2], (2, 3), strict=True)
    ]
    problem = Problem("scale", tuple(inputs[:2]), tuple(outputs), (inputs[2],))
    column = task_views(problem)["scale n x n (colours)"]
    np.testing.assert_array_equal(column[2].canvas, np.kron(inputs[2], np.ones((4, 4), np.int8)))
    found = language_solutions(problem, 1)
    assert found and found[0].program.view == "scale n x n (colours)"
