"""Grids cut into panels by whole rows and columns of one colour.

Some ARC inputs are a grid of panels: whole rows and columns of one colour (the separator)
cut the grid into cells. :func:`grid_cells` finds the cut and the panels' boxes; the crop
views take one panel by its content (:func:`cell_crops`), and the count view ``count
panels`` draws one cell per panel (:func:`grid_panels`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from jaxtyping import Int8

Box = tuple[int, int, int, int]  # r1, c1, r2, c2 (inclusive)


def _runs(lines: np.ndarray) -> list[tuple[int, int]]:
    """The ``[start, stop)`` runs of ``False`` in ``lines`` (the segments between
    separators)."""
    runs, start = [], None
    for k, separator in enumerate([*lines.tolist(), True]):
        if not separator and start is None:
            start = k
        elif separator and start is not None:
            runs.append((start, k))
            start = None
    return runs


def grid_cells(grid: Int8[np.ndarray, "H W"]) -> tuple[int, list[Box]] | None:
    """``grid`` cut by whole rows and columns of one colour (the colour with the most such
    lines) into cells: ``(that colour, the cells' boxes (r1, c1, r2, c2))``, row by row;
    ``None`` when no colour cuts it into two cells or more."""
    best = None
    for c in np.unique(grid):
        rows, cols = (grid == c).all(1), (grid == c).all(0)
        lines = int(rows.sum() + cols.sum())
        if lines and (best is None or lines > best[0]):
            best = (lines, int(c), rows, cols)
    if best is None:
        return None
    _, colour, rows, cols = best
    boxes = [(r1, c1, r2 - 1, c2 - 1) for r1, r2 in _runs(rows) for c1, c2 in _runs(cols)]
    return (colour, boxes) if len(boxes) >= 2 else None


def grid_panels(grid: Int8[np.ndarray, "H W"]) -> tuple[int, int, int] | None:
    """The rows and columns of panels of ``grid`` cut by lines (:func:`grid_cells`), and
    the panels' most frequent colour."""
    cut = grid_cells(grid)
    if cut is None:
        return None
    separator, boxes = cut
    cells = grid[grid != separator].astype(np.int64)
    colour = int(np.bincount(cells, minlength=10).argmax())
    return len({b[0] for b in boxes}), len({b[1] for b in boxes}), colour


def cell_crops(grid: Int8[np.ndarray, "H W"]) -> Iterator[tuple[str, Box]]:
    """The cell of :func:`grid_cells` with the most and the fewest content cells (not of
    the cells' most frequent colour), and the one holding the most of their least frequent
    colour (each when it is one cell)."""
    cut = grid_cells(grid)
    if cut is None:
        return
    separator, boxes = cut
    pieces = [grid[r1 : r2 + 1, c1 : c2 + 1] for r1, c1, r2, c2 in boxes]
    cells = np.concatenate([p.reshape(-1) for p in pieces]).astype(np.int64)
    counts = np.bincount(cells, minlength=10)
    local = int(counts.argmax())  # the cells' own background (grids differ in it)
    content = np.asarray([int(((p != local) & (p != separator)).sum()) for p in pieces])
    rare = [c for c in range(10) if counts[c] and c not in (local, separator)]
    picks = [
        ("most content", content == content.max()),
        ("least content", content == content.min()),
    ]
    if rare:
        colour = min(rare, key=lambda c: (counts[c], c))
        held = np.asarray([int((p == colour).sum()) for p in pieces])
        picks.append(("least frequent colour", held == held.max()))
    for name, chosen in picks:
        if chosen.sum() == 1:
            yield f"cell {name}", boxes[int(np.flatnonzero(chosen)[0])]
