"""What a colour hides: a pattern with a hole, filled in, and the hole's own cells.

Some ARC inputs are a pattern (periodic, or its own mirror image) with a block of one colour
laid over part of it, and the output is what that block hides. The colour is learned as the
``repair`` view learns it (a colour of every demonstration input and of no output). Two
ways to fill the hidden cells:

* a period (:func:`repair_periodic`, the ``repair colour k`` view's own rule): the
  smallest period (rows, columns) the other cells repeat with;
* a symmetry (:func:`repair_symmetric`): each mirror of the grid (left-right, top-bottom,
  the half turn, and the two diagonals of a square grid, about the grid's centre or about an
  axis a few cells off it) that the known cells agree with gives a hidden cell the value of
  its mirror cell, until no hidden cell is left.

The views (:func:`hidden_views`), per hidden colour ``k`` (after ``repair colour k``, the
whole grid filled from its period):

* ``repair crop colour k``: the filled grid cut to the box of the colour-``k`` cells (the
  output is the hidden block; ARC-AGI-1 training tasks 9ecd008a, dc0a314f, f9012d9b,
  ff805c23);
* ``repair mirror colour k``: the whole grid filled by its symmetries (a symmetric
  picture with a hole, same size).
"""

from __future__ import annotations

import numpy as np
from jaxtyping import Int8

from jaxarc.solve.selectors import cells_box

MAX_AXIS_OFFSET = 4  # mirror axes up to this many half-cells off the grid's centre
MIN_AGREEING = 0.5  # a mirror is kept when at least this share of the known cells pair up


def _mirrors(rows: int, cols: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each mirror as the ``[H, W]`` row and column index of every cell's image (``-1``:
    off the grid)."""
    r, c = np.indices((rows, cols))
    maps = []
    for shift in range(-MAX_AXIS_OFFSET, MAX_AXIS_OFFSET + 1):
        maps.append((r, cols - 1 + shift - c))  # left-right about a vertical axis
        maps.append((rows - 1 + shift - r, c))  # top-bottom about a horizontal axis
    maps.append((rows - 1 - r, cols - 1 - c))  # the half turn
    if rows == cols:
        maps.append((c, r))  # transpose
        maps.append((cols - 1 - c, rows - 1 - r))  # antitranspose
    out = []
    for mr, mc in maps:
        inside = (mr >= 0) & (mr < rows) & (mc >= 0) & (mc < cols)
        out.append((np.where(inside, mr, -1), np.where(inside, mc, -1)))
    return out


def repair_periodic(grid: np.ndarray, unknown: int) -> np.ndarray | None:
    """``grid`` with its ``unknown`` cells filled from the smallest period (rows, columns)
    that its other cells agree with; ``None`` when no period shorter than the grid does, or
    some cell stays unknown."""
    rows, cols = grid.shape
    known = grid != unknown
    if known.all():
        return None
    for size in range(2, rows + cols + 1):  # smallest period first
        for pr in range(1, min(size, rows + 1)):
            pc = size - pr
            if pc > cols or (pr == rows and pc == cols):
                continue
            classes = (np.arange(rows)[:, None] % pr) * cols + np.arange(cols)[None] % pc
            values = np.full(pr * cols, -1, np.int64)
            flat_classes, flat_values = classes[known], grid[known].astype(np.int64)
            values[flat_classes] = flat_values
            if (values[flat_classes] != flat_values).any() or (values[classes] < 0).any():
                continue
            return values[classes].astype(np.int8)
    return None


def repair_symmetric(grid: Int8[np.ndarray, "H W"], unknown: int) -> np.ndarray | None:
    """``grid`` with its ``unknown`` cells filled from the mirrors its known cells agree
    with (see the module docstring), ``[H, W]`` int8; ``None`` when it has no unknown
    cell, no mirror fits, or some cell stays unknown."""
    grid = np.asarray(grid, np.int8)
    known = grid != unknown
    if known.all() or not known.any():
        return None
    rows, cols = grid.shape
    fitting = []
    for mr, mc in _mirrors(rows, cols):
        inside = mr >= 0
        pairs = inside & known & known[np.maximum(mr, 0), np.maximum(mc, 0)]
        moved = pairs & ((mr != np.indices(grid.shape)[0]) | (mc != np.indices(grid.shape)[1]))
        if moved.sum() < MIN_AGREEING * known.sum():
            continue
        if (grid[pairs] == grid[mr[pairs], mc[pairs]]).all():
            fitting.append((mr, mc))
    if not fitting:
        return None
    out, filled = grid.copy(), known.copy()
    while not filled.all():
        grew = False
        for mr, mc in fitting:
            take = ~filled & (mr >= 0)
            take[take] = filled[mr[take], mc[take]]
            if take.any():
                out[take] = out[mr[take], mc[take]]
                filled |= take
                grew = True
        if not grew:
            return None
    return out


def hidden_views(grid: Int8[np.ndarray, "H W"], hidden: list[int]) -> dict[str, np.ndarray]:
    """``{name: grid}``: ``repair colour k`` (the whole grid filled from its period) for
    each colour ``k`` of ``hidden``, then the views of the module docstring for each that
    ``grid`` holds."""
    periodic = {colour: repair_periodic(grid, colour) for colour in hidden}
    views = {f"repair colour {c}": filled for c, filled in periodic.items() if filled is not None}
    for colour in hidden:
        cells = grid == colour
        if not cells.any():
            continue
        mirrored = repair_symmetric(grid, colour)
        if mirrored is not None:
            views[f"repair mirror colour {colour}"] = mirrored
        filled = periodic[colour] if periodic[colour] is not None else mirrored
        if filled is not None:
            r1, c1, r2, c2 = cells_box(cells)
            box = filled[r1 : r2 + 1, c1 : c2 + 1]
            views[f"repair crop colour {colour}"] = np.ascontiguousarray(box)
    return views


HIDDEN_VIEW_TASKS: dict[str, tuple[str, ...]] = {
    # view -> ARC-AGI-1 training tasks whose first program starts from it
    "repair crop": ("9ecd008a", "dc0a314f", "f9012d9b", "ff805c23"),
    "repair mirror": ("3631a71a", "b8825c91"),
}
MIRROR_REPAIR_TASKS: tuple[str, ...] = (
    # ARC-AGI-1 training tasks whose hidden cells only the mirrors fill (no period does)
    "9ecd008a",
    "dc0a314f",
    "ff805c23",
    "3631a71a",
    "b8825c91",
)
