"""Outputs built of the input's turns and mirrors: a grid of blocks, each one of them.

Many tasks make a larger picture by laying copies of the input side by side, each turned
or mirrored its own way: the input beside its left-right mirror, over its upside-down
copy, four mirrors meeting at the centre, the four quarter turns around a corner. The view
``mirror tile kh x kw``:

* fits when every demonstration output is ``kh x kw`` times its input's shape (the same
  factors on every demonstration);
* learns, for each of the ``kh x kw`` blocks, the first transform of :data:`TRANSFORMS`
  (the input itself, then its mirrors, then its turns) that gives that block on every
  demonstration (:func:`learn_layout`); a transform that changes a grid's shape (a
  quarter turn, a transpose) is tried only on square inputs;
* lays each grid's transforms in their blocks (:func:`mirror_tile`).

A layout of the input alone in every block is the ``tile`` view already, and is left out.
Training tasks it serves: :data:`MIRROR_TILE_TASKS`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from jaxtyping import Int8

from jaxarc.solve.language.view_kinds import DIHEDRAL
from jaxarc.solve.problem import Problem
from jaxarc.solve.tiling import block_transforms, common_factors

Transform = Callable[[np.ndarray], np.ndarray]
# the input itself, its mirrors, then its turns: the first that fits a block is kept
TRANSFORMS: dict[str, Transform] = {
    "input": lambda g: g,
    **{
        name: DIHEDRAL[name]
        for name in (
            "flip left-right",
            "flip top-bottom",
            "half turn",
            "transpose",
            "antitranspose",
            "rotate cw",
            "rotate ccw",
        )
    },
}
SHAPE_KEEPING = ("input", "flip left-right", "flip top-bottom", "half turn")
MIRROR_TILE_TASKS = (
    "3af2c5a8",  # the input and its three mirrors, 2 x 2
    "46442a0e",  # the four quarter turns, 2 x 2
    "4c4377d9",  # upside down over the input
    "62c24649",
    "67e8384a",
    "6d0aefbc",  # the input beside its left-right mirror
    "6fa7a44f",  # the input over its upside-down copy
    "7fe24cdd",
    "8be77c9e",
    "8d5021e8",  # 3 x 2 blocks of mirrors
    "c9e6f938",
)

Layout = tuple[tuple[str, ...], ...]  # [kh][kw] transform names


def _factors(problem: Problem) -> tuple[int, int] | None:
    """``(kh, kw)`` when every demonstration output is ``kh x kw`` times its input's shape
    (not ``1 x 1``), else ``None``."""
    factors = common_factors(problem.demo_inputs, problem.demo_outputs)
    return None if factors in (None, (1, 1)) else factors


def learn_layout(problem: Problem) -> Layout | None:
    """The transform of each block (see the module docstring): ``[kh][kw]`` names of
    :data:`TRANSFORMS`; ``None`` when the outputs are no such blocks on some demonstration,
    or when every block is the input itself."""
    factors = _factors(problem)
    if factors is None:
        return None
    kh, kw = factors
    grids = (*problem.demo_inputs, *problem.test_inputs)
    transforms = [(name, fn, name not in SHAPE_KEEPING) for name, fn in TRANSFORMS.items()]
    layout = block_transforms(grids, problem.demo_outputs, kh, kw, transforms)
    if layout is None or all(name == "input" for row in layout for name in row):
        return None
    return layout


def mirror_tile(grid: Int8[np.ndarray, "h w"], layout: Layout) -> Int8[np.ndarray, "H W"]:
    """``grid`` 's transforms laid in their blocks: ``[kh * h, kw * w]`` for a ``[kh][kw]``
    ``layout``."""
    rows = [np.concatenate([TRANSFORMS[name](grid) for name in row], axis=1) for row in layout]
    return np.ascontiguousarray(np.concatenate(rows, axis=0), np.int8)


def describe_layout(layout: Layout) -> str:
    """The view's name: ``mirror tile kh x kw`` and its blocks, row by row."""
    blocks = "; ".join(", ".join(row) for row in layout)
    return f"mirror tile {len(layout)} x {len(layout[0])} ({blocks})"


def mirror_tile_views(problem: Problem) -> dict[str, list[np.ndarray]]:
    """``{name: the tiled grids}`` (demonstration inputs, then test inputs) of the learned
    layout (:func:`learn_layout`); empty when none fits."""
    layout = learn_layout(problem)
    if layout is None:
        return {}
    grids = [*problem.demo_inputs, *problem.test_inputs]
    return {describe_layout(layout): [mirror_tile(grid, layout) for grid in grids]}


__all__ = [
    "MIRROR_TILE_TASKS",
    "TRANSFORMS",
    "describe_layout",
    "learn_layout",
    "mirror_tile",
    "mirror_tile_views",
]
