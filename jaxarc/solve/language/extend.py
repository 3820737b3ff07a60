"""A pattern continued to a larger output: the output's size from a rule the demonstrations
share, its cells from the input's own period.

Some tasks hand over the start of a repeating pattern and ask for more of it: a column of
motifs carried on to a taller grid, a strip of stripes widened. The view ``extend``:

* predicts each output's shape from its input's by one rule every demonstration obeys,
  per axis (:func:`shape_rule`): the same size in every output, the input's size times a
  whole or fractional factor, or the input's size plus a constant;
* finds the input's smallest period, rows and columns (:func:`smallest_period`: the
  shortest ``(pr, pc)`` with ``grid[r, c] == grid[r % pr, c % pc]`` everywhere; the grid
  itself when nothing shorter repeats);
* fills the predicted shape with the pattern carried on from the top-left corner
  (:func:`continue_pattern`).

Colours the output changes are left to the paints after the view (a colour map). Only
outputs at least as large as their inputs are continued (a smaller one is a window of the
input, :mod:`jaxarc.solve.language.corners`). Training tasks it serves: ``017c7c7b``
(continued, then recoloured), ``963e52fc`` (continued), ``a416b8f3`` (the input side by
side with itself, as the view ``tile 1 x 2`` also gives it).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np
from jaxtyping import Int8

from jaxarc.solve.problem import Problem

ShapeRule = Callable[[tuple[int, int]], tuple[int, int] | None]
EXTEND_TASKS = ("017c7c7b", "963e52fc", "a416b8f3")


def _axis_rule(sizes_in: list[int], sizes_out: list[int]) -> Callable[[int], int | None] | None:
    """One axis's rule (see the module docstring), the first that every pair obeys."""
    if len(set(sizes_out)) == 1:
        constant = sizes_out[0]
        return lambda _size: constant
    factor = Fraction(sizes_out[0], sizes_in[0])
    if all(Fraction(o, i) == factor for i, o in zip(sizes_in, sizes_out, strict=True)):

        def scaled(size: int) -> int | None:
            value = size * factor
            return int(value) if value.denominator == 1 else None

        return scaled
    offset = sizes_out[0] - sizes_in[0]
    if all(o - i == offset for i, o in zip(sizes_in, sizes_out, strict=True)):
        return lambda size: size + offset
    return None


def shape_rule(problem: Problem) -> ShapeRule | None:
    """The rule that gives every demonstration output's shape from its input's, per axis
    (``None`` when an axis has none); the rule gives ``None`` for an input it can't size."""
    rules = [
        _axis_rule(
            [g.shape[axis] for g in problem.demo_inputs],
            [g.shape[axis] for g in problem.demo_outputs],
        )
        for axis in (0, 1)
    ]
    if rules[0] is None or rules[1] is None:
        return None
    rows_rule, cols_rule = rules

    def rule(shape: tuple[int, int]) -> tuple[int, int] | None:
        rows, cols = rows_rule(shape[0]), cols_rule(shape[1])
        if rows is None or cols is None or not (1 <= rows <= 30 and 1 <= cols <= 30):
            return None
        return rows, cols

    return rule


def _axis_period(grid: np.ndarray) -> int:
    """The smallest ``p`` with ``grid[r] == grid[r % p]`` for every row ``r``."""
    rows = grid.shape[0]
    for period in range(1, rows + 1):
        if all(np.array_equal(grid[r], grid[r - period]) for r in range(period, rows)):
            return period
    return rows


def smallest_period(grid: Int8[np.ndarray, "H W"]) -> tuple[int, int]:
    """``(pr, pc)``: the input's smallest period along its rows and along its columns
    (each the whole side when nothing shorter repeats)."""
    return _axis_period(grid), _axis_period(grid.T)


def continue_pattern(
    grid: Int8[np.ndarray, "H W"], shape: tuple[int, int]
) -> Int8[np.ndarray, "h w"]:
    """``grid`` 's pattern carried on into ``shape``: cell ``(r, c)`` is
    ``grid[r % pr, c % pc]`` (:func:`smallest_period`)."""
    pr, pc = smallest_period(grid)
    rows = np.arange(shape[0]) % pr
    cols = np.arange(shape[1]) % pc
    return np.ascontiguousarray(grid[rows[:, None], cols[None]], np.int8)


def extended_grids(problem: Problem) -> list[np.ndarray | None] | None:
    """The pattern of each grid (demonstration inputs, then test inputs) continued to its
    predicted output shape; ``None`` when the outputs keep their inputs' shapes, some output
    is smaller than its input along an axis, or no shape rule fits (a grid the rule can't
    size gets ``None``)."""
    pairs = list(zip(problem.demo_inputs, problem.demo_outputs, strict=True))
    if all(i.shape == o.shape for i, o in pairs):
        return None
    if any(o.shape[0] < i.shape[0] or o.shape[1] < i.shape[1] for i, o in pairs):
        return None
    rule = shape_rule(problem)
    if rule is None:
        return None
    grids = [*problem.demo_inputs, *problem.test_inputs]
    shapes = [rule(grid.shape) for grid in grids]
    return [
        None if shape is None else continue_pattern(grid, shape)
        for grid, shape in zip(grids, shapes, strict=True)
    ]


__all__ = [
    "EXTEND_TASKS",
    "continue_pattern",
    "extended_grids",
    "shape_rule",
    "smallest_period",
]
