"""The corners of a grid laid over each other: parts in the output's shape, one per corner.

Some ARC inputs hold two or four pictures in their corners (quadrants, halves either side of
a line, windows that overlap in the middle), and the output lays them over each other with
some colours in front. A **corner window** is the output's shape cut at one corner of the
input; the windows at different places (two when the output is as tall or as wide as the
input, else four) are the parts of a ``parts`` view
(:func:`~jaxarc.solve.language.views.task_views` gives it the masks where all, any, one or
none of the parts hold content, and each part's colours). The window's shape is the
outputs' one shape when they share it, else the input halved along each axis the first
demonstration halves. The views (:func:`corner_parts`):

* ``corners``: the windows as they lie (ARC-AGI-1 training tasks 75b8110e, a68b268e:
  quadrants, with or without lines between them; bc1d5164: windows that overlap);
* ``corners folded``: each window turned over onto the top-left one (the top-right one
  flipped left-right, the bottom-left one top-bottom, the bottom-right one both), as if
  the grid were folded along its middle lines (e3497940).
"""

from __future__ import annotations

import numpy as np
from jaxtyping import Int8

from jaxarc.solve.problem import Problem


def corner_windows(
    grid: Int8[np.ndarray, "H W"], shape: tuple[int, int], *, folded: bool
) -> list[np.ndarray] | None:
    """The ``shape`` windows at ``grid`` 's corners, top-left first, each window once (two
    corners with the same window count once); ``folded``: each turned over onto the
    top-left one. ``None`` when the grid is smaller than ``shape`` or equals it."""
    (rows, cols), (h, w) = grid.shape, shape
    if h > rows or w > cols or (h, w) == (rows, cols):
        return None
    pieces, seen = [], set()
    for down in (False, True):
        for right in (False, True):
            r1, c1 = (rows - h if down else 0), (cols - w if right else 0)
            if (r1, c1) in seen:
                continue
            seen.add((r1, c1))
            piece = grid[r1 : r1 + h, c1 : c1 + w]
            if folded:
                piece = piece[::-1] if down and r1 else piece
                piece = piece[:, ::-1] if right and c1 else piece
            pieces.append(np.ascontiguousarray(piece, np.int8))
    return pieces


def _window_shape(problem: Problem, grid: np.ndarray) -> tuple[int, int] | None:
    outs = {o.shape for o in problem.demo_outputs}
    if len(outs) == 1:
        return next(iter(outs))
    first_in, first_out = problem.demo_inputs[0].shape, problem.demo_outputs[0].shape
    shape = []
    for axis in (0, 1):
        if first_out[axis] == first_in[axis]:
            shape.append(grid.shape[axis])
        elif first_out[axis] == first_in[axis] // 2:
            shape.append(grid.shape[axis] // 2)
        else:
            return None
    return shape[0], shape[1]


def corner_parts(problem: Problem, grid: Int8[np.ndarray, "H W"]) -> dict[str, list[np.ndarray]]:
    """``{corners, corners folded: the parts of one grid of ``problem``}`` (see the module
    docstring); empty when no window shape fits the grid."""
    shape = _window_shape(problem, grid)
    if shape is None:
        return {}
    views = {}
    for name, folded in (("corners", False), ("corners folded", True)):
        pieces = corner_windows(grid, shape, folded=folded)
        if pieces is not None and len(pieces) >= 2:
            views[name] = pieces
    return views


CORNER_VIEW_TASKS: dict[str, tuple[str, ...]] = {
    # view -> ARC-AGI-1 training tasks whose first program starts from it
    "corners": ("75b8110e", "a68b268e", "bc1d5164", "e3497940"),
}
