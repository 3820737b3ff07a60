"""A grid with each run of equal rows and of equal columns kept once.

Some ARC outputs are their input drawn at one cell per stripe or block: every run of
repeated rows and every run of repeated columns shrinks to one line (a picture blown up
unevenly, stripes of several widths). The views (:func:`dedupe_views`):

* ``dedupe``: the input so shrunk (ARC-AGI-1 training tasks 746b3537, eb5a1d5d: stripes,
  nested frames);
* ``dedupe content``: the box of the input's content (cells not of the background) so
  shrunk (90c28cc7: blocks of colour on a background).
"""

from __future__ import annotations

import numpy as np
from jaxtyping import Int8

from jaxarc.solve.selectors import cells_box


def dedupe(grid: Int8[np.ndarray, "H W"]) -> Int8[np.ndarray, "h w"]:
    """``grid`` with each run of equal adjacent rows, then of equal adjacent columns, kept
    once."""
    grid = np.asarray(grid, np.int8)
    rows = np.ones(grid.shape[0], bool)
    rows[1:] = (grid[1:] != grid[:-1]).any(1)
    grid = grid[rows]
    cols = np.ones(grid.shape[1], bool)
    cols[1:] = (grid[:, 1:] != grid[:, :-1]).any(0)
    return np.ascontiguousarray(grid[:, cols])


def dedupe_views(grid: Int8[np.ndarray, "H W"], bg: int) -> dict[str, np.ndarray]:
    """``{name: grid}``: the views of the module docstring (``dedupe content`` only when
    the grid holds content)."""
    views = {"dedupe": dedupe(grid)}
    content = grid != bg
    if content.any():
        r1, c1, r2, c2 = cells_box(content)
        views["dedupe content"] = dedupe(grid[r1 : r2 + 1, c1 : c2 + 1])
    return views


DEDUPE_VIEW_TASKS: dict[str, tuple[str, ...]] = {
    # view -> ARC-AGI-1 training tasks whose first program starts from it
    "dedupe": ("746b3537", "90c28cc7", "eb5a1d5d"),
}
