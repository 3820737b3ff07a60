"""The regions and paths mask families of the content language: the rules against NumPy
loops on small grids, and the training tasks they solve (no program without them)."""

from __future__ import annotations

import numpy as np
import pytest
from training_tasks import text_grid as _grid
from training_tasks import training_and_truth as _training

from jaxarc.solve.language.finder import language_solutions
from jaxarc.solve.language.masks import FAMILY_NAMES, FAMILY_TASKS
from jaxarc.solve.language.rays import (
    BORDER,
    DIRECTIONS,
    colours_behind,
    first_colour,
    path_masks,
    ray_masks,
)
from jaxarc.solve.language.regions import background_regions, region_masks
from jaxarc.solve.language.views import VIEW_KINDS


def _walk(grid: np.ndarray, r: int, c: int, direction: str, bg: int) -> int:
    """The colour of the first non-background cell from ``(r, c)`` going ``direction``."""
    dr, dc = DIRECTIONS[direction]
    r, c = r + dr, c + dc
    while 0 <= r < grid.shape[0] and 0 <= c < grid.shape[1]:
        if grid[r, c] != bg:
            return int(grid[r, c])
        r, c = r + dr, c + dc
    return BORDER


def test_first_colour_matches_a_walk() -> None:
    rng = np.random.default_rng(0)
    grid = np.where(rng.random((6, 9)) < 0.3, rng.integers(1, 10, (6, 9)), 0).astype(np.int8)
    free = grid == 0
    for direction in DIRECTIONS:
        found = first_colour(grid, free, direction)
        assert found.dtype == np.int8 and found.shape == grid.shape
        for r, c in np.ndindex(*grid.shape):
            want = _walk(grid, r, c, direction, 0) if free[r, c] else -1
            assert found[r, c] == want, (direction, r, c)


def _walk_reaches(grid: np.ndarray, r: int, c: int, direction: str, colour: int, bg: int):
    """Whether a ray from a cell of ``colour`` going ``direction`` reaches ``(r, c)``: any
    such cell behind it, and (``free``) whether one is behind it across background only."""
    dr, dc = DIRECTIONS[direction]
    any_behind, free_behind, clear = False, False, grid[r, c] == bg
    r, c = r - dr, c - dc
    while 0 <= r < grid.shape[0] and 0 <= c < grid.shape[1]:
        if grid[r, c] == colour:
            any_behind = True
            free_behind = free_behind or clear
        clear = clear and grid[r, c] == bg
        r, c = r - dr, c - dc
    return any_behind, free_behind


@pytest.mark.parametrize("bg", [0, 3])
def test_ray_masks_match_a_walk(bg: int) -> None:
    rng = np.random.default_rng(bg)
    grid = np.where(rng.random((5, 8)) < 0.35, rng.integers(0, 10, (5, 8)), bg).astype(np.int8)
    masks = dict(ray_masks(grid, bg))
    for direction in DIRECTIONS:
        behind = colours_behind(grid, direction)
        assert behind.dtype == np.int16 and behind.shape == grid.shape
        for colour in range(10):
            ray = masks[f"ray {direction} from colour {colour}"]
            free = masks[f"free ray {direction} from colour {colour}"]
            assert ray.dtype == free.dtype == np.bool_
            for r, c in np.ndindex(*grid.shape):
                want_any, want_free = _walk_reaches(grid, r, c, direction, colour, bg)
                assert ray[r, c] == want_any, (direction, colour, r, c)
                assert free[r, c] == want_free, (direction, colour, r, c)


def test_paths_stop_at_a_colour_or_reach_the_border() -> None:
    grid = _grid(
        [
            "1000300",
            "0000000",
            "0200000",
            "0000000",
            "0300110",
        ]
    )
    masks = dict(path_masks(grid, 0))
    # 1 at (0, 0) reaches 3 along its row, the 1 at (4, 4) up its column and left
    want = np.zeros(grid.shape, bool)
    want[0, 1:4] = want[1:4, 4] = want[4, 2:4] = True
    assert masks["paths to colour 3 from colour 1"].tolist() == want.tolist()
    assert masks["paths to colour 3 from colour 1"].dtype == bool
    # 2 reaches 3 down its column, one cell between
    want = np.zeros(grid.shape, bool)
    want[3, 1] = True
    assert masks["paths to colour 3 from colour 2"].tolist() == want.tolist()
    # up from the 1s: only column 5 meets nothing before the border
    want = np.zeros(grid.shape, bool)
    want[:4, 5] = True
    assert masks["free ray up to border from colour 1"].tolist() == want.tolist()
    # a line of two 1s continued to the right (through anything), and the steps
    want = np.zeros(grid.shape, bool)
    want[4, 6] = True
    assert masks["extension right from colour 1"].tolist() == want.tolist()
    assert masks["step down from colour 2"][3, 1] and masks["step down from colour 2"].sum() == 1


def test_regions_are_the_background_pieces() -> None:
    grid = _grid(
        [
            "1111000",
            "1001000",
            "1111000",
            "0002220",
            "0002020",
            "0002220",
            "0000000",
        ]
    )
    regions = background_regions(grid, 0)
    assert regions.count == 3 and sorted(regions.sizes.tolist()) == [1, 2, 28]
    masks = dict(region_masks(grid, 0))
    two = np.zeros(grid.shape, bool)
    two[1, 1:3] = True
    one = np.zeros(grid.shape, bool)
    one[4, 4] = True
    assert masks["region smallest"].tolist() == one.tolist()
    assert masks["region off border"].tolist() == (one | two).tolist()
    assert masks["region square"].tolist() == one.tolist()  # the 1 x 2 piece is no square
    assert masks["region rectangular"].tolist() == (one | two).tolist()
    outside = (grid == 0) & ~one & ~two
    assert masks["region largest"].tolist() == outside.tolist()
    assert masks["region beside colour 2"].tolist() == (one | outside).tolist()


UNLEARNED = tuple(p for kind, ps in VIEW_KINDS.items() if kind != "stamp" for p in ps)


@pytest.mark.parametrize("family", ("regions", "paths"))
def test_the_family_solves_its_training_tasks_and_none_without_it(family: str) -> None:
    """Each listed task's simplest program predicts its test outputs; without the family
    no program solves its demonstrations."""
    problems, tests = _training()
    kept = tuple(f for f in FAMILY_NAMES if f != family)
    for task_id in FAMILY_TASKS[family]:
        problem = problems[task_id]
        found = language_solutions(problem, 1)
        assert found, task_id
        for made, want in zip(found[0].predictions, tests[task_id], strict=True):
            assert np.array_equal(made, want), task_id
        # (a stamp view learns the pattern a family draws from the outputs: left out)
        assert language_solutions(problem, 1, families=kept, views=UNLEARNED) == [], task_id
