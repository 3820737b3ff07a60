"""Rays: from every cell of a colour, the cells of one direction, and where they stop.

Two mask families of :mod:`jaxarc.solve.language.masks` live here, both NumPy functions of
one grid ``[H, W]`` on its background colour:

* ``rays``: from every cell of a colour, the cells of one of eight directions up to the
  border (``ray up from colour c``), or until the first non-background cell (``free ray
  down-left from colour c``);
* ``paths``: rays that end where a rule says, drawn on background cells only (each is a
  part of a free ray):

  - ``paths to colour a from colour c``: the background cells between a cell of ``c`` and
    the first cell after them, in a row or a column, that has colour ``a`` (``diagonal
    paths ...``: along a diagonal): cells that reach toward another colour and touch it;
  - ``free ray up to border from colour c``: a free ray that meets nothing before the
    border;
  - ``step up from colour c`` (down, left, right): the one background cell next to a cell
    of ``c`` on that side;
  - ``extension up-left from colour c`` (eight directions): a line of two or more cells of
    ``c`` continued to the border, through anything (a pair of cells of ``c`` one step
    apart in that direction starts it).

The paths read, for every background cell and direction, the colour of the first
non-background cell in that direction (:func:`first_colour`), eight passes over the grid
for all colours at once.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from jaxtyping import Bool, Int8

Mask = Bool[np.ndarray, "H W"]
NamedMasks = Iterator[tuple[str, Mask]]

COLOURS = range(10)
BORDER = 10  # first_colour's value where a direction meets no cell before the border
DIRECTIONS = {
    "up": (-1, 0),
    "down": (1, 0),
    "left": (0, -1),
    "right": (0, 1),
    "up-left": (-1, -1),
    "up-right": (-1, 1),
    "down-left": (1, -1),
    "down-right": (1, 1),
}
OPPOSITE = {
    "up": "down",
    "down": "up",
    "left": "right",
    "right": "left",
    "up-left": "down-right",
    "down-right": "up-left",
    "up-right": "down-left",
    "down-left": "up-right",
}
STEPS = ("up", "down", "left", "right")


def skew(cells: np.ndarray, fill=False) -> np.ndarray:
    """``[H, W + H - 1]``: row ``r`` shifted right by ``H - 1 - r``, so that each diagonal
    (top-left to bottom-right) of ``cells`` is one column (the rest ``fill``)."""
    rows, cols = cells.shape
    skewed = np.full((rows, cols + rows - 1), fill, cells.dtype)
    r, c = np.indices(cells.shape)
    skewed[r, c - r + rows - 1] = cells
    return skewed


def unskew(skewed: np.ndarray, cols: int) -> np.ndarray:
    rows = skewed.shape[0]
    r, c = np.indices((rows, cols))
    return skewed[r, c - r + rows - 1]


def _down(cells: np.ndarray, through: np.ndarray | None) -> np.ndarray:
    """The cells below a set cell of their column (the start excluded); with ``through``,
    only across ``through`` cells (the ray stops at the first other cell)."""
    if through is None:
        below = np.zeros_like(cells)
        below[1:] = np.logical_or.accumulate(cells, axis=0)[:-1]
        return below
    out = np.zeros_like(cells)
    carry = np.zeros(cells.shape[1], bool)
    for r in range(1, cells.shape[0]):
        carry = (carry | cells[r - 1]) & through[r]
        out[r] = carry
    return out


def ray(cells: np.ndarray, direction: str, through: np.ndarray | None = None) -> np.ndarray:
    """The cells reached from a set cell of ``cells`` going ``direction`` (a key of
    :data:`DIRECTIONS`), the start excluded; with ``through``, only across ``through`` cells."""
    vertical, _, horizontal = direction.partition("-")
    if not horizontal and vertical in ("left", "right"):
        turned = ray(cells.T, "down" if vertical == "right" else "up", _t(through))
        return turned.T
    if vertical == "up":
        flipped = ray(cells[::-1], direction.replace("up", "down"), _flip(through))
        return flipped[::-1]
    if horizontal == "left":
        mirrored = ray(cells[:, ::-1], "down-right", _mirror(through))
        return mirrored[:, ::-1]
    if horizontal == "right":  # down-right: down the columns of the skewed grid
        skewed_through = None if through is None else skew(through)
        return unskew(_down(skew(cells), skewed_through), cells.shape[1])
    return _down(cells, through)


def _t(x):
    return None if x is None else x.T


def _flip(x):
    return None if x is None else x[::-1]


def _mirror(x):
    return None if x is None else x[:, ::-1]


def colours_behind(grid: Int8[np.ndarray, "H W"], direction: str) -> np.ndarray:
    """``[H, W]`` ``int16``: bit ``c`` set where a cell of colour ``c`` lies behind the
    cell (a ray going ``direction`` from it reaches the cell): :func:`ray` for every colour
    at once."""
    vertical, _, horizontal = direction.partition("-")
    if not horizontal and vertical in ("left", "right"):
        return colours_behind(grid.T, "down" if vertical == "right" else "up").T
    if vertical == "up":
        return colours_behind(grid[::-1], direction.replace("up", "down"))[::-1]
    if horizontal == "left":
        return colours_behind(grid[:, ::-1], "down-right")[:, ::-1]
    bits = np.left_shift(np.int16(1), grid.astype(np.int16))
    if horizontal == "right":  # down the columns of the skewed grid
        return unskew(_bits_down(skew(bits, 0)), grid.shape[1])
    return _bits_down(bits)


def _bits_down(bits: np.ndarray) -> np.ndarray:
    below = np.zeros_like(bits)
    below[1:] = np.bitwise_or.accumulate(bits, axis=0)[:-1]
    return below


def ray_masks(grid: np.ndarray, bg: int) -> NamedMasks:
    free = grid == bg
    behind = {d: colours_behind(grid, d) for d in DIRECTIONS}
    # a free ray of a colour other than the background reaches the free cells whose first
    # other cell, looking back, has that colour
    back = {d: first_colour(grid, free, OPPOSITE[d]) for d in DIRECTIONS}
    for c in COLOURS:
        cells = grid == c
        for direction in DIRECTIONS:
            if not cells.any():
                yield f"ray {direction} from colour {c}", cells
                yield f"free ray {direction} from colour {c}", cells
                continue
            yield f"ray {direction} from colour {c}", (behind[direction] >> c) & 1 == 1
            if c == bg:
                yield f"free ray {direction} from colour {c}", ray(cells, direction, free)
            else:
                yield f"free ray {direction} from colour {c}", back[direction] == c


def _look_down(grid: np.ndarray, free: np.ndarray) -> np.ndarray:
    found = np.full(grid.shape, -1, np.int8)
    ahead = np.full(grid.shape[1], BORDER, np.int8)
    for r in range(grid.shape[0] - 1, -1, -1):
        found[r] = np.where(free[r], ahead, -1)
        ahead = np.where(free[r], ahead, grid[r])
    return found


def first_colour(
    grid: Int8[np.ndarray, "H W"], free: Bool[np.ndarray, "H W"], direction: str
) -> Int8[np.ndarray, "H W"]:
    """``[H, W]``: for each ``free`` cell, the colour of the first other cell going
    ``direction`` (a key of :data:`DIRECTIONS`), :data:`BORDER` where there is none;
    ``-1`` on the other cells."""
    vertical, _, horizontal = direction.partition("-")
    if not horizontal and vertical in ("left", "right"):
        turned = first_colour(grid.T, free.T, "down" if vertical == "right" else "up")
        return turned.T
    if vertical == "up":
        return first_colour(grid[::-1], free[::-1], direction.replace("up", "down"))[::-1]
    if horizontal == "left":
        return first_colour(grid[:, ::-1], free[:, ::-1], "down-right")[:, ::-1]
    if horizontal == "right":  # down the columns of the skewed grid; off the grid: the border
        skewed = _look_down(skew(grid, BORDER), skew(free))
        return unskew(skewed, grid.shape[1])
    return _look_down(grid, free)


def _shift(cells: np.ndarray, direction: str) -> np.ndarray:
    """``cells`` moved one step ``direction`` (what leaves the grid is lost)."""
    dr, dc = DIRECTIONS[direction]
    rows, cols = cells.shape
    moved = np.zeros_like(cells)
    moved[max(dr, 0) : rows + min(dr, 0), max(dc, 0) : cols + min(dc, 0)] = cells[
        max(-dr, 0) : rows + min(-dr, 0), max(-dc, 0) : cols + min(-dc, 0)
    ]
    return moved


def path_masks(grid: np.ndarray, bg: int) -> NamedMasks:
    grid = np.asarray(grid, np.int8)
    free = grid == bg
    present = [c for c in COLOURS if c != bg and (grid == c).any()]
    ahead = {d: first_colour(grid, free, d) for d in DIRECTIONS}  # what each cell meets
    for c in present:
        cells = grid == c
        orthogonal: dict[int, np.ndarray] = {a: np.zeros_like(cells) for a in present}
        diagonal: dict[int, np.ndarray] = {a: np.zeros_like(cells) for a in present}
        for d in DIRECTIONS:
            from_c = ahead[OPPOSITE[d]] == c  # the free cells a ray from c going d reaches
            yield f"free ray {d} to border from colour {c}", from_c & (ahead[d] == BORDER)
            for a in present:
                (diagonal if "-" in d else orthogonal)[a] |= from_c & (ahead[d] == a)
            yield f"extension {d} from colour {c}", ray(cells & _shift(cells, d), d) & ~cells
        for d in STEPS:
            yield f"step {d} from colour {c}", _shift(cells, d) & free
        for a in present:
            yield f"paths to colour {a} from colour {c}", orthogonal[a]
            yield f"diagonal paths to colour {a} from colour {c}", diagonal[a]


__all__ = [
    "BORDER",
    "DIRECTIONS",
    "colours_behind",
    "first_colour",
    "path_masks",
    "ray",
    "ray_masks",
]
