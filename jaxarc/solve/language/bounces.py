"""Diagonal rays that bounce: off the grid's sides, or off the cells they meet.

Rules of the ``rays`` mask family of :mod:`jaxarc.solve.language.masks`, NumPy functions
of one grid ``[H, W]`` on its background colour. Its rules choose background cells only:

* ``zigzag up from colour c`` (``down``, ``left``, ``right``): from every cell of a colour
  that has at most :data:`MAX_STARTS` cells, a diagonal ray that advances one row up (down;
  one column left, right) per step and moves sideways one cell per step, turning back at
  the grid's sides, until it leaves the grid at the top (bottom, left, right side). It
  first heads away from the nearer side (to the right or down on a tie): a ball thrown up
  from a corner bounces between the walls (``a3df8b1e``, ``e179c5f4``). Only rays that
  reach the far side and turn are drawn (one that turns nowhere is a plain diagonal ray);
* ``bounce from colour c``: a diagonal line of two or more cells of a colour (at most
  :data:`MAX_STARTS` * 2 cells) continued from each end, turning back at every cell of
  another colour it meets (the side of the step that is blocked turns: a wall below turns
  the ray up, a wall beside it turns it sideways; a corner turns both), until it leaves
  the grid (``508bd3b6``).

:data:`BOUNCE_TASKS` names the training tasks it serves (``tests/test_language_bounces.py``
checks them).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from jaxtyping import Bool, Int8

Mask = Bool[np.ndarray, "H W"]
NamedMasks = Iterator[tuple[str, Mask]]

BOUNCE_TASKS = ("a3df8b1e", "e179c5f4", "508bd3b6")
MAX_STARTS = 4  # a colour of more cells starts no zigzag (rays from every cell of a
# large object say nothing)
DIAGONALS = ((-1, -1), (-1, 1), (1, -1), (1, 1))
TURNS = {  # zigzag direction -> the grid turned so that the ray goes up, and back
    "up": (lambda g: g, lambda g: g),
    "down": (lambda g: g[::-1], lambda g: g[::-1]),
    "left": (lambda g: g.T, lambda g: g.T),
    "right": (lambda g: g.T[::-1], lambda g: g[::-1].T),
}


def zigzag_cells(row: int, col: int, width: int) -> np.ndarray:
    """``[row + 1]`` columns of a zigzag up from ``(row, col)`` in a grid ``width`` wide:
    entry ``r`` is the ray's column on row ``r`` (the start's own on ``row``). The ray
    first heads away from the nearer side (right on a tie)."""
    steps = row - np.arange(row + 1)  # on row r, the ray has taken row - r steps
    if width == 1:
        return np.zeros(row + 1, np.int64)
    period = 2 * (width - 1)
    # a triangle wave over the columns: x moves right, turning at 0 and width - 1
    heading_right = col <= width - 1 - col
    x = col + steps if heading_right else (period - col) + steps
    x %= period
    return np.where(x <= width - 1, x, period - x)


def _zigzags(cells: Mask) -> Mask:
    """The zigzags up from every set cell of ``cells [H, W]`` (start cells included) that
    turn back at a side before they leave the grid (one that turns nowhere is a ray of the
    ``rays`` family)."""
    out = np.zeros(cells.shape, bool)
    width = cells.shape[1]
    for row, col in np.argwhere(cells):
        if width == 1 or row <= max(col, width - 1 - col):  # it leaves before it turns
            continue
        out[np.arange(row + 1), zigzag_cells(int(row), int(col), width)] = True
    return out


def _bounced(grid: np.ndarray, bg: int, colour: int, start: tuple[int, int], step) -> Mask:
    """The cells a ray from ``start`` in direction ``step`` passes, turning back at cells
    of colours other than ``bg`` and ``colour``, until it leaves the grid."""
    h, w = grid.shape
    out = np.zeros(grid.shape, bool)

    def blocked(r: int, c: int) -> bool:
        return 0 <= r < h and 0 <= c < w and grid[r, c] not in (bg, colour)

    (r, c), (dr, dc) = start, step
    seen = set()
    while (r, c, dr, dc) not in seen:
        seen.add((r, c, dr, dc))
        if blocked(r + dr, c + dc):
            turn_rows, turn_cols = blocked(r + dr, c), blocked(r, c + dc)
            if turn_rows == turn_cols:  # a corner met head on, or a lone cell: back
                dr, dc = -dr, -dc
            elif turn_rows:
                dr = -dr
            else:
                dc = -dc
            continue
        r, c = r + dr, c + dc
        if not (0 <= r < h and 0 <= c < w):
            break
        out[r, c] = True
    return out


def _line_ends(cells: Mask) -> Iterator[tuple[tuple[int, int], tuple[int, int]]]:
    """``(end, step)`` for each end of a diagonal line of two or more set cells: the end
    cell and the direction that continues the line past it."""
    h, w = cells.shape
    for dr, dc in DIAGONALS:
        for r, c in np.argwhere(cells):
            back = (r - dr, c - dc)
            ahead = (r + dr, c + dc)
            inside = 0 <= back[0] < h and 0 <= back[1] < w
            if (
                inside
                and cells[back]
                and not (0 <= ahead[0] < h and 0 <= ahead[1] < w and cells[ahead])
            ):
                yield (int(r), int(c)), (dr, dc)


def bounce_masks(grid: Int8[np.ndarray, "H W"], bg: int) -> NamedMasks:
    """The family's masks (see the module docstring), for the colours of ``grid`` small
    enough to start rays."""
    free = grid == bg
    counts = np.bincount(grid.reshape(-1).astype(np.int64), minlength=10)
    for c in range(10):
        if c == bg or not 0 < counts[c] <= 2 * MAX_STARTS:
            continue
        cells = grid == c
        if counts[c] <= MAX_STARTS:
            for direction, (turn, back) in TURNS.items():
                yield f"zigzag {direction} from colour {c}", back(_zigzags(turn(cells))) & free
        bounced = np.zeros(grid.shape, bool)
        for end, step in _line_ends(cells):
            bounced |= _bounced(grid, bg, c, end, step)
        if bounced.any():
            yield f"bounce from colour {c}", bounced & free


__all__ = ["BOUNCE_TASKS", "MAX_STARTS", "bounce_masks", "zigzag_cells"]
