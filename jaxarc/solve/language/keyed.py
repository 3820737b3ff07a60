"""A one-colour pattern coloured by a small key of colours.

Some ARC inputs hold a **pattern** (a large picture in one colour) and a **key** (a small
block of several colours); the output is the pattern in the key's colours, the key blown up
or the pattern shrunk so that each key cell colours one block of the pattern. Where the two
lie (:func:`pattern_and_key`):

* two objects (``multi8``: any colours, 8-connected): the pattern the one of one colour,
  the key the one of several colours;
* else in a grid cut by lines (:func:`~jaxarc.solve.language.panels.grid_cells`): the
  pattern is the largest cell, the key the other cells that hold content, laid out as they
  lie (one ``2 x 2`` cell, or four ``1 x 1`` cells at the corners).

The views (:func:`keyed_views`): ``keyed on pattern`` (the pattern's shape: the key blown
up over it; ARC-AGI-1 training tasks 77fdfe62, 7c008303) and ``keyed on key`` (the key's
shape: the pattern shrunk onto it; 6ecd11f4): the key's colour where the pattern holds
content, else the background.
"""

from __future__ import annotations

import numpy as np
from jaxtyping import Bool, Int8

from jaxarc.solve.language.objects import grid_objects
from jaxarc.solve.language.panels import grid_cells

Found = tuple[np.ndarray, np.ndarray, int]  # pattern, key, background


def _cut_pattern_and_key(grid: np.ndarray) -> Found | None:
    cut = grid_cells(grid)
    if cut is None:
        return None
    _, boxes = cut
    pieces = [grid[r1 : r2 + 1, c1 : c2 + 1] for r1, c1, r2, c2 in boxes]
    cells = np.concatenate([p.reshape(-1) for p in pieces]).astype(np.int64)
    bg = int(np.bincount(cells, minlength=10).argmax())  # the cells' own background
    largest = max(range(len(pieces)), key=lambda k: pieces[k].size)
    pattern = pieces[largest]
    held = [k for k, p in enumerate(pieces) if k != largest and (p != bg).any()]
    if not held:
        return None
    rows = sorted({boxes[k][0] for k in held})
    cols = sorted({boxes[k][1] for k in held})
    if len(held) == 1:
        return pattern, pieces[held[0]], bg
    if len(rows) * len(cols) != len(held) or any(pieces[k].shape != (1, 1) for k in held):
        return None
    key = np.full((len(rows), len(cols)), bg, np.int8)
    for k in held:
        key[rows.index(boxes[k][0]), cols.index(boxes[k][1])] = pieces[k][0, 0]
    return pattern, key, bg


def _object_pattern_and_key(grid: np.ndarray, bg: int) -> Found | None:
    objects = grid_objects(grid, bg)["multi8"]
    if objects.count != 2:
        return None
    one_colour = np.flatnonzero(objects.colours >= 0)
    if one_colour.size != 1:
        return None
    boxes = [objects.boxes[int(one_colour[0])], objects.boxes[1 - int(one_colour[0])]]
    pattern, key = (grid[r1 : r2 + 1, c1 : c2 + 1] for r1, c1, r2, c2 in boxes)
    return pattern, key, bg


def pattern_and_key(grid: Int8[np.ndarray, "H W"], bg: int) -> Found | None:
    """The pattern ``[p, q]``, the key ``[a, b]`` of ``grid`` (see the module docstring)
    and the background they lie on (in a grid cut by lines: the cells' most frequent
    colour), or ``None``."""
    grid = np.asarray(grid, np.int8)
    found = _object_pattern_and_key(grid, bg)
    return found if found is not None else _cut_pattern_and_key(grid)


def _resize(grid: np.ndarray, shape: tuple[int, int]) -> np.ndarray | None:
    """``grid`` blown up or sampled (each block's top-left cell) to ``shape`` by whole
    factors, else ``None``."""
    out = grid
    for axis in (0, 1):
        have, want = out.shape[axis], shape[axis]
        if want % have == 0:
            out = np.repeat(out, want // have, axis)
        elif have % want == 0:
            out = np.take(out, range(0, have, have // want), axis)
        else:
            return None
    return out


def keyed(
    pattern: np.ndarray, key: np.ndarray, bg: int, shape: tuple[int, int]
) -> np.ndarray | None:
    """``shape`` grid: the key's colour where the pattern holds content, else ``bg``;
    ``None`` when either does not resize to ``shape``."""
    drawn: Bool[np.ndarray, "h w"] | None = _resize(pattern != bg, shape)
    colours = _resize(key, shape)
    if drawn is None or colours is None:
        return None
    return np.where(drawn, colours, bg).astype(np.int8)


def keyed_views(grid: Int8[np.ndarray, "H W"], bg: int) -> dict[str, np.ndarray]:
    """``{keyed on pattern, keyed on key: grid}`` where ``grid`` has a pattern and a key
    that resize to each other."""
    found = pattern_and_key(grid, bg)
    if found is None:
        return {}
    pattern, key, bg = found
    views = {}
    for name, shape in (("keyed on pattern", pattern.shape), ("keyed on key", key.shape)):
        out = keyed(pattern, key, bg, shape)
        if out is not None:
            views[name] = out
    return views


KEYED_VIEW_TASKS: dict[str, tuple[str, ...]] = {
    # view -> ARC-AGI-1 training tasks whose first program starts from it
    "keyed": ("6ecd11f4", "77fdfe62", "7c008303"),
}
