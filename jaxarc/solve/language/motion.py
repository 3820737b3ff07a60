"""Object motion: whole objects slide toward an object of another colour until they touch.

Some tasks move objects rather than recolour cells: a shape slides toward a block until it
touches it, single cells fly to the block they line up with, each colour gathers around its
own centre. :func:`attract` moves every object (one colour, 8-connected) of a **mover**
colour toward the cells of an **anchor** colour: in the one of eight directions in which
sliding the object meets an anchor cell first (the fewest steps), until its next step would
overlap a cell that is not background. An object that meets no anchor cell in any direction
stays where it is; objects nearer their anchor move first, so a later one stops against it.

The view ``attract`` (:func:`attract_pairs`, :func:`attract_grid`) learns the pairs from
the demonstrations: each mover colour gets the first anchor colour with which the moved
grid's cells of the mover colour are the output's, in every demonstration, and some object
moves. Every learned pair moves on every grid, one mover colour after another.
"""

from __future__ import annotations

import numpy as np
from jaxtyping import Int8
from scipy import ndimage

from jaxarc.solve.language.masks import DIRECTIONS
from jaxarc.solve.language.objects import EIGHT
from jaxarc.solve.problem import Problem

Pair = tuple[int, int]  # (mover colour, anchor colour)


def _slide(grid: np.ndarray, cells: np.ndarray, step: tuple[int, int], anchor: int) -> int | None:
    """How far the ``[k, 2]`` ``cells`` slide by ``step`` before their next step overlaps
    a non-background cell of ``grid`` (``-1`` marks free cells), if what they meet there
    holds the ``anchor`` colour; ``None`` when they leave the grid first or meet no anchor
    cell."""
    rows, cols = grid.shape
    moved = 0
    while True:
        at = cells + (moved + 1) * np.asarray(step)
        if (at < 0).any() or (at[:, 0] >= rows).any() or (at[:, 1] >= cols).any():
            return None
        met = grid[at[:, 0], at[:, 1]]
        if (met >= 0).any():
            return moved if (met == anchor).any() else None
        moved += 1


def attract(grid: Int8[np.ndarray, "H W"], bg: int, mover: int, anchor: int) -> np.ndarray:
    """``grid`` with every object of colour ``mover`` slid toward colour ``anchor`` (see
    the module docstring); ``[H, W]`` int8."""
    grid = np.asarray(grid, np.int8)
    labels, count = ndimage.label(grid == mover, EIGHT)
    if count == 0 or not (grid == anchor).any():
        return grid.copy()
    state = np.where(grid == bg, -1, grid.astype(np.int64))  # -1: free
    objects = [np.argwhere(labels == k + 1) for k in range(count)]
    moves = []
    for cells in objects:
        state[cells[:, 0], cells[:, 1]] = -1
        best = None
        for step in DIRECTIONS.values():
            far = _slide(state, cells, step, anchor)
            if far is not None and (best is None or far < best[0]):
                best = (far, step)
        state[cells[:, 0], cells[:, 1]] = mover
        moves.append(best)
    moving = [k for k in range(count) if moves[k] is not None]
    for k in sorted(moving, key=lambda k: moves[k][0]):
        cells = objects[k]
        state[cells[:, 0], cells[:, 1]] = -1
        far = _slide(state, cells, moves[k][1], anchor)  # others may have moved in between
        far = 0 if far is None else far
        at = cells + far * np.asarray(moves[k][1])
        state[at[:, 0], at[:, 1]] = mover
    return np.where(state < 0, bg, state).astype(np.int8)


def attract_pairs(problem: Problem, bg: int) -> list[Pair]:
    """The ``(mover, anchor)`` colour pairs the demonstrations show (see the module
    docstring); ``[]`` when outputs differ in shape from their inputs."""
    demos = list(zip(problem.demo_inputs, problem.demo_outputs, strict=True))
    if any(i.shape != o.shape for i, o in demos):
        return []
    colours = [c for c in range(10) if c != bg and all((i == c).any() for i in problem.demo_inputs)]
    pairs = []
    for mover in colours:
        for anchor in colours:
            if anchor == mover:
                continue
            moved = [attract(i, bg, mover, anchor) for i, _ in demos]
            if any(
                not np.array_equal(m, i) for m, (i, _) in zip(moved, demos, strict=True)
            ) and all(
                np.array_equal(m == mover, o == mover)
                for m, (_, o) in zip(moved, demos, strict=True)
            ):
                pairs.append((mover, anchor))
                break
    return pairs


def attract_grid(grid: Int8[np.ndarray, "H W"], bg: int, pairs: list[Pair]) -> np.ndarray:
    """``grid`` with each pair's movers slid toward its anchor, pair after pair."""
    for mover, anchor in pairs:
        grid = attract(grid, bg, mover, anchor)
    return np.asarray(grid, np.int8)
