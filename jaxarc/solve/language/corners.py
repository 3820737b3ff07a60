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
  the grid were folded along its middle lines (e3497940);
* ``window X`` (``X``: ``top-left``, ``top-right``, ``bottom-left``, ``bottom-right``):
  one window as it is (5bd6f4ac; 7b7f7511, where each output is its input halved along
  the longer axis); ``content window X``: the outputs' one shape at a corner of the box of
  the content (2013d3e2: a quarter of a symmetric picture).
"""

from __future__ import annotations

import numpy as np
from jaxtyping import Int8

from jaxarc.solve.problem import Problem
from jaxarc.solve.selectors import cells_box


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


def _halved_longer(shape: tuple[int, ...]) -> tuple[int, int]:
    rows, cols = shape
    return (rows // 2, cols) if rows > cols else (rows, cols // 2)


def _window_shape(problem: Problem, grid: np.ndarray) -> tuple[int, int] | None:
    """The outputs' one shape; else the input halved along its longer axis where every
    demonstration does that; else halved along each axis the first demonstration halves;
    ``None`` when none of these fits."""
    pairs = list(zip(problem.demo_inputs, problem.demo_outputs, strict=True))
    outs = {o.shape for _, o in pairs}
    if len(outs) == 1:
        return next(iter(outs))
    if all(i.shape[0] != i.shape[1] and _halved_longer(i.shape) == o.shape for i, o in pairs):
        return _halved_longer(grid.shape)
    first_in, first_out = pairs[0][0].shape, pairs[0][1].shape
    shape = []
    for axis in (0, 1):
        if first_out[axis] == first_in[axis]:
            shape.append(grid.shape[axis])
        elif first_out[axis] == first_in[axis] // 2:
            shape.append(grid.shape[axis] // 2)
        else:
            return None
    return shape[0], shape[1]


CORNER_NAMES = ("top-left", "top-right", "bottom-left", "bottom-right")


def window_views(problem: Problem, grid: Int8[np.ndarray, "H W"], bg: int) -> dict[str, np.ndarray]:
    """``{window X: grid}``: the window of :func:`_window_shape` at each corner ``X`` of
    ``grid`` and, where the outputs share one shape, ``content window X``: that shape at
    each corner of the box of ``grid`` 's content (cells not of ``bg``)."""
    grid = np.asarray(grid, np.int8)
    sources = {"window": (grid, _window_shape(problem, grid))}
    content = grid != bg
    outs = {o.shape for o in problem.demo_outputs}
    if content.any() and len(outs) == 1:
        r1, c1, r2, c2 = cells_box(content)
        box = grid[r1 : r2 + 1, c1 : c2 + 1]
        sources["content window"] = (box, next(iter(outs)))
    views = {}
    for prefix, (source, shape) in sources.items():
        if shape is None or shape[0] > source.shape[0] or shape[1] > source.shape[1]:
            continue
        if shape == source.shape:
            continue
        (rows, cols), (h, w) = source.shape, shape
        for k, name in enumerate(CORNER_NAMES):
            r1, c1 = (rows - h if k >= 2 else 0), (cols - w if k % 2 else 0)
            views[f"{prefix} {name}"] = np.ascontiguousarray(source[r1 : r1 + h, c1 : c1 + w])
    return views


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
    "window": ("2013d3e2", "5bd6f4ac", "7b7f7511"),
}
