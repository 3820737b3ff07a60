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
moves. Every learned pair moves on every grid, one mover colour after another. The
direction an object takes is chosen as if the other movers were not there.

Without such a pair, one pair of :data:`ANY`: movers of any colour fly to the largest
objects of their own colour (through every other cell; objects of a colour with no larger
object stay and block nothing), or every object not of one anchor colour slides toward
it; it is kept when every output's content lies on the moved grid's content (a paint then
clears or recolours what stayed).
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


ANY = -1  # as a mover: every object not of the anchor colour; as an anchor: the mover's own


def _movers(
    grid: np.ndarray, bg: int, mover: int, anchor: int
) -> tuple[list, np.ndarray, np.ndarray]:
    """The mover objects (``[k, 2]`` cells each, one colour, 8-connected), the ``[H, W]``
    code of the cells they may stop against (``10 + c`` on the anchor cells of colour
    ``c``, the colour elsewhere, ``-1`` on background and mover cells) and the ``[H, W]``
    loose cells, that block nothing (toward their own colour: all but the anchors; a
    mover flies through the anchors of other colours too)."""
    state = np.where(grid == bg, -1, grid.astype(np.int64))
    if anchor != ANY:
        state = np.where(grid == anchor, 10 + anchor, state)
    colours = [mover] if mover != ANY else [c for c in range(10) if c not in (bg, anchor)]
    objects = []
    for colour in colours:
        labels, count = ndimage.label(grid == colour, EIGHT)
        found = [np.argwhere(labels == k + 1) for k in range(count)]
        if anchor == ANY and found:  # the largest objects of the colour are its anchors
            largest = max(len(cells) for cells in found)
            for cells in found:
                if len(cells) == largest and len(found) > 1:
                    state[cells[:, 0], cells[:, 1]] = 10 + colour
            found = [cells for cells in found if len(cells) < largest]
        objects += found
    for cells in objects:
        state[cells[:, 0], cells[:, 1]] = -1
    if anchor == ANY:  # only anchors block: what is not drawn toward its colour is loose
        loose = (state >= 0) & (state < 10)
        return objects, np.where(loose, -1, state), loose
    return objects, state, np.zeros(grid.shape, bool)


def _run(state: np.ndarray, cells: np.ndarray, step: np.ndarray) -> int:
    """How far ``[k, 2]`` ``cells`` slide by ``step`` before their next step leaves the
    grid or overlaps a cell of ``state`` (``-1``: free)."""
    rows, cols = state.shape
    moved = 0
    while True:
        at = cells + (moved + 1) * step
        if (at < 0).any() or (at[:, 0] >= rows).any() or (at[:, 1] >= cols).any():
            return moved
        if (state[at[:, 0], at[:, 1]] >= 0).any():
            return moved
        moved += 1


def attract(grid: Int8[np.ndarray, "H W"], bg: int, mover: int, anchor: int) -> np.ndarray:
    """``grid`` with every object of colour ``mover`` slid toward colour ``anchor`` (see
    the module docstring; :data:`ANY` as ``mover``: every object of another colour than
    ``anchor``; as ``anchor``: each colour's largest objects draw its smaller ones);
    ``[H, W]`` int8."""
    grid = np.asarray(grid, np.int8)
    objects, fixed, loose = _movers(grid, bg, mover, anchor)
    if not objects or not (fixed >= 10).any():
        return grid.copy()
    moves = []
    for cells in objects:  # the direction: the other movers do not block it
        colour = int(grid[cells[0, 0], cells[0, 1]])
        target = 10 + (colour if anchor == ANY else anchor)
        own = fixed if anchor != ANY else np.where(fixed == target, target, -1)
        best = None
        for step in DIRECTIONS.values():
            far = _slide(own, cells, step, target)
            if far is not None and (best is None or far < best[0]):
                best = (far, np.asarray(step))
        moves.append((best, colour))
    state = fixed.copy()
    for (best, colour), cells in zip(moves, objects, strict=True):
        if best is None:  # the objects that stay block the others (unless loose)
            state[cells[:, 0], cells[:, 1]] = -1 if anchor == ANY else colour
            loose[cells[:, 0], cells[:, 1]] = anchor == ANY
    moving = [k for k in range(len(objects)) if moves[k][0] is not None]
    for k in sorted(moving, key=lambda k: moves[k][0][0]):
        (_, step), colour = moves[k]
        own = state  # toward its own colour, only that colour blocks
        if anchor == ANY:
            own = np.where((state == colour) | (state == 10 + colour), state, -1)
        at = objects[k] + _run(own, objects[k], step) * step
        state[at[:, 0], at[:, 1]] = colour
    state = np.where((state < 0) & loose, grid, state)
    return np.where(state < 0, bg, state % 10).astype(np.int8)


def _fits(problem: Problem, bg: int, mover: int, anchor: int) -> bool:
    """The demonstration inputs with ``mover`` slid toward ``anchor`` (:func:`attract`):
    some object moved, and each moved grid holds its output's cells of the mover colour
    (:data:`ANY`: every output's content lies on the moved grid's content). The grids are
    moved one at a time, and the first that misses ends the check."""
    changed = False
    for grid, out in zip(problem.demo_inputs, problem.demo_outputs, strict=True):
        moved = attract(grid, bg, mover, anchor)
        if mover == ANY:
            holds = ((out != bg) <= (moved != bg)).all()
        else:
            holds = np.array_equal(moved == mover, out == mover)
        if not holds:
            return False
        changed = changed or not np.array_equal(moved, grid)
    return changed


def _may_move(problem: Problem, mover: int) -> bool:
    """Whether every output holds as many cells of colour ``mover`` as its input, and some
    output holds them elsewhere: what a fit of a pair with that mover needs."""
    pairs = list(zip(problem.demo_inputs, problem.demo_outputs, strict=True))
    if any((i == mover).sum() != (o == mover).sum() for i, o in pairs):
        return False
    return not all(np.array_equal(i == mover, o == mover) for i, o in pairs)


def attract_pairs(problem: Problem, bg: int) -> list[Pair]:
    """The ``(mover, anchor)`` colour pairs the demonstrations show (see the module
    docstring); ``[]`` when outputs differ in shape from their inputs. Without a pair of
    colours, one pair of :data:`ANY` movers: toward their own colour, or toward one
    anchor colour."""
    if any(
        i.shape != o.shape for i, o in zip(problem.demo_inputs, problem.demo_outputs, strict=True)
    ):
        return []
    colours = [c for c in range(10) if c != bg and all((i == c).any() for i in problem.demo_inputs)]
    pairs = []
    for mover in colours:
        # sliding keeps a mover's cells (objects never overlap), and a fit moves some
        if not _may_move(problem, mover):
            continue
        for anchor in colours:
            if anchor == mover:
                continue
            if _fits(problem, bg, mover, anchor):
                pairs.append((mover, anchor))
                break
    if pairs:
        return pairs
    for anchor in (ANY, *colours):
        if _fits(problem, bg, ANY, anchor):
            return [(ANY, anchor)]
    return []


def attract_grid(grid: Int8[np.ndarray, "H W"], bg: int, pairs: list[Pair]) -> np.ndarray:
    """``grid`` with each pair's movers slid toward its anchor, pair after pair."""
    for mover, anchor in pairs:
        grid = attract(grid, bg, mover, anchor)
    return np.asarray(grid, np.int8)
