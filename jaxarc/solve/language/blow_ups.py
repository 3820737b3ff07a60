"""Views that change a grid's shape by whole factors: blown up, repeated, laid in its own
cells, or cut into equal parts laid over each other.

* :func:`blow_ups`: ``scale kh x kw`` (every cell to a block), ``tile kh x kw`` (the grid
  repeated) and ``self tile X`` (an ``[h, w]`` grid laid in the blocks of its own cells
  that a rule chooses);
* :func:`split_parts` and :func:`parts_view`: a grid cut into equal parts (by separator
  lines of one colour, or evenly), the canvas a part's shape, with masks of where all, any,
  one or none of the parts hold content;
* :func:`ratio`: the whole factors between two shapes.
"""

from __future__ import annotations

import numpy as np

from jaxarc.solve.language.view import View, plain_view


def split_parts(grid: np.ndarray, parts: int, axis: int) -> list[np.ndarray] | None:
    """``grid`` cut into ``parts`` equal parts along ``axis`` (0: rows), with separator
    lines of one colour between them when it has them, else evenly; ``None`` when neither
    fits."""
    length = grid.shape[axis]
    size = (length - (parts - 1)) // parts
    if size >= 1 and size * parts + parts - 1 == length:
        lines = [np.take(grid, k * (size + 1) + size, axis) for k in range(parts - 1)]
        if all((line == line.reshape(-1)[0]).all() for line in lines):
            return [
                np.take(grid, range(k * (size + 1), k * (size + 1) + size), axis)
                for k in range(parts)
            ]
    if length % parts == 0:
        size = length // parts
        return [np.take(grid, range(k * size, (k + 1) * size), axis) for k in range(parts)]
    return None


def parts_view(pieces: list[np.ndarray], bg: int) -> View:
    content = np.stack([piece != bg for piece in pieces])
    held = content.sum(0)
    masks = {
        "parts all content": held == len(pieces),
        "parts any content": held > 0,
        "parts one content": held == 1,
        "parts no content": held == 0,
    }
    for k, piece in enumerate(pieces):
        masks[f"part {k} content"] = content[k]
        for c in range(10):
            masks[f"part {k} colour {c}"] = piece == c
    blank = np.full(pieces[0].shape, bg, np.int8)
    return View(blank, np.ascontiguousarray(pieces[0], np.int8), masks, bg)


def self_tilings(grid: np.ndarray, bg: int) -> dict[str, View]:
    """The grid laid in the blocks of its own cells that a rule chooses (the rest
    background): ``h x w`` blocks of ``h x w`` for an ``[h, w]`` grid; the view's mask
    ``empty blocks`` holds the rest (often drawn in another colour)."""
    counts = np.bincount(grid.reshape(-1).astype(np.int64), minlength=10)
    content = [c for c in range(10) if counts[c] and c != bg]
    chosen = {"content": grid != bg, "background": grid == bg}
    chosen["most frequent colour"] = grid == int(counts.argmax())
    if content:
        chosen["least frequent colour"] = grid == min(content, key=lambda c: (counts[c], c))
    for c in content:
        chosen[f"colour {c}"] = grid == c
    tiled = np.tile(grid, grid.shape)
    views = {}
    for name, mask in chosen.items():
        keep = np.kron(mask, np.ones(grid.shape, bool))
        canvas = np.where(keep, tiled, bg).astype(np.int8)
        views[f"self tile {name}"] = View(canvas, canvas, {"empty blocks": ~keep}, bg)
    return views


def blow_ups(grid: np.ndarray, bg: int, up: tuple[int, int], *, self_tile: bool) -> dict[str, View]:
    """``grid`` blown up ``up = (kh, kw)`` times: every cell to a block (``scale``), the
    grid repeated (``tile``) and, with ``self_tile``, laid in its own cells' blocks."""
    views = {
        f"scale {up[0]} x {up[1]}": plain_view(np.kron(grid, np.ones(up, np.int8)), bg),
        f"tile {up[0]} x {up[1]}": plain_view(np.tile(grid, up), bg),
    }
    if self_tile:
        views.update(self_tilings(grid, bg))
    return views


def ratio(big: tuple[int, int], small: tuple[int, int]) -> tuple[int, int] | None:
    if big[0] % small[0] or big[1] % small[1]:
        return None
    ratio = (big[0] // small[0], big[1] // small[1])
    return ratio if ratio != (1, 1) else None


__all__ = ["blow_ups", "parts_view", "ratio", "self_tilings", "split_parts"]
