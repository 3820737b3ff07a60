"""A symmetric picture completed around its own centre: every content cell copied to its
images under a group of turns and mirrors about a point that need not be the grid's centre.

Some tasks give one quarter (or a few pieces) of a symmetric picture and ask for the whole:
the pieces mirrored around a small centre block, or turned a quarter at a time around the
middle of a motif. The view ``symmetric GROUP (CENTRE)`` draws, on the input, the images of
every content cell under one group of :data:`GROUPS` about one centre (a cell or the corner
between four cells), so the grid becomes invariant under the group.

The group and how to find the centre are learned once per task from the demonstrations
(:func:`symmetry_views`): a group is tried only when every demonstration output keeps its
input's content and is itself invariant under the group about the middle of its content's
box (a cheap test that rejects almost every task); then the first **centre rule** of
:data:`CENTRE_RULES` that turns every demonstration input into its output exactly is kept:

* ``object``: the middle of the box of the largest one-colour object (8-connected) that is
  invariant under the group by itself (the block the pieces are mirrored around);
* ``best fit``: the centre, over every cell and corner of the grid, whose images agree most
  with the input (content cells whose image holds the same colour), among the centres whose
  images stay in the grid and meet no other colour.

Training tasks it serves (:data:`SYMMETRY_TASKS`, checked in
``tests/test_language_symmetry.py``): ``4938f0c2``, ``4c5c2cf0`` (both mirrors around a centre
block), ``e40b9e2f`` (quarter turns around a motif's middle), ``11852cab`` (all turns and
mirrors of a partly drawn motif).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from jaxtyping import Int8

from jaxarc.solve.language.objects import grid_objects
from jaxarc.solve.problem import Problem

SYMMETRY_TASKS = ("4938f0c2", "4c5c2cf0", "e40b9e2f", "11852cab")

# a map of offsets from the centre, in half cells: (dy, dx) -> (dy', dx')
Offset = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
LEFT_RIGHT: Offset = lambda y, x: (y, -x)  # noqa: E731
TOP_BOTTOM: Offset = lambda y, x: (-y, x)  # noqa: E731
HALF_TURN: Offset = lambda y, x: (-y, -x)  # noqa: E731
TURN_CW: Offset = lambda y, x: (x, -y)  # noqa: E731
TURN_CCW: Offset = lambda y, x: (-x, y)  # noqa: E731
TRANSPOSE: Offset = lambda y, x: (x, y)  # noqa: E731
ANTITRANSPOSE: Offset = lambda y, x: (-x, -y)  # noqa: E731

GROUPS: dict[str, tuple[Offset, ...]] = {  # group -> its maps but the identity, largest first
    "all turns and mirrors": (
        LEFT_RIGHT,
        TOP_BOTTOM,
        HALF_TURN,
        TURN_CW,
        TURN_CCW,
        TRANSPOSE,
        ANTITRANSPOSE,
    ),
    "quarter turns": (TURN_CW, HALF_TURN, TURN_CCW),
    "both mirrors": (LEFT_RIGHT, TOP_BOTTOM, HALF_TURN),
    "half turn": (HALF_TURN,),
    "left-right": (LEFT_RIGHT,),
    "top-bottom": (TOP_BOTTOM,),
}
TURNING = ("quarter turns", "all turns and mirrors")  # groups whose centre rows and columns
# must be both cells or both corners (a quarter turn of a corner about a cell is no cell)
CENTRE_RULES = ("object", "best fit")

Centre = tuple[int, int]  # (2 * row, 2 * column) of the centre: odd values are corners


def _images(cells: np.ndarray, centre: Centre, group: str) -> tuple[np.ndarray, np.ndarray]:
    """The images of ``cells [n, 2]`` (row, column) under each map of ``group`` about
    ``centre``: rows and columns ``[maps, n]``."""
    y = 2 * cells[:, 0] - centre[0]
    x = 2 * cells[:, 1] - centre[1]
    rows, cols = zip(*(fn(y, x) for fn in GROUPS[group]), strict=True)
    return (np.stack(rows) + centre[0]) // 2, (np.stack(cols) + centre[1]) // 2


def symmetrize(
    grid: Int8[np.ndarray, "H W"], bg: int, group: str, centre: Centre
) -> Int8[np.ndarray, "H W"] | None:
    """``grid`` with every content cell's images under ``group`` about ``centre`` drawn in
    its colour; ``None`` when an image leaves the grid or meets another colour."""
    if group in TURNING and (centre[0] - centre[1]) % 2:
        return None
    cells = np.argwhere(grid != bg)
    rows, cols = _images(cells, centre, group)
    h, w = grid.shape
    if rows.min(initial=0) < 0 or cols.min(initial=0) < 0:
        return None
    if rows.max(initial=0) >= h or cols.max(initial=0) >= w:
        return None
    colours = np.broadcast_to(grid[cells[:, 0], cells[:, 1]], rows.shape)
    out = np.array(grid, np.int8)
    out[rows, cols] = colours
    if not (out[rows, cols] == colours).all():  # two colours met on one cell
        return None
    return out


def is_symmetric(grid: Int8[np.ndarray, "H W"], bg: int, group: str) -> bool:
    """Whether ``grid`` 's content is invariant under ``group`` about the middle of its
    content's box (the one centre an invariant picture can have)."""
    cells = np.argwhere(grid != bg)
    if cells.size == 0:
        return False
    centre = tuple(int(v) for v in cells.min(0) + cells.max(0))
    made = symmetrize(grid, bg, group, centre)
    return made is not None and np.array_equal(made, grid)


def _object_centre(grid: np.ndarray, bg: int, group: str) -> Centre | None:
    """The middle of the box of the largest one-colour object (8-connected) that ``group``
    maps onto itself (the first of the largest, colour by colour); ``None``: none does."""
    objects = grid_objects(grid, bg)["single8"]
    best: tuple[int, Centre] | None = None
    for k in range(objects.count):
        size = int(objects.sizes[k])
        if best is not None and size <= best[0]:
            continue
        r1, c1, r2, c2 = (int(v) for v in objects.boxes[k])
        own = np.where(objects.labels == k, grid, bg).astype(np.int8)
        made = symmetrize(own, bg, group, (r1 + r2, c1 + c2))
        if made is not None and np.array_equal(made, own):
            best = (size, (r1 + r2, c1 + c2))
    return None if best is None else best[1]


def _best_fit_centre(grid: np.ndarray, bg: int, group: str) -> Centre | None:
    """The centre whose images stay in the grid, meet no other colour, and land on the
    most content cells of their own colour (a cell's image onto itself not counted)."""
    cells = np.argwhere(grid != bg)
    if cells.size == 0:
        return None
    h, w = grid.shape
    colours = grid[cells[:, 0], cells[:, 1]]
    best: tuple[int, Centre] | None = None
    # an image in the grid needs the centre inside the content's box
    (r1, c1), (r2, c2) = cells.min(0), cells.max(0)
    for cr in range(2 * r1, 2 * r2 + 1):
        for cc in range(2 * c1, 2 * c2 + 1):
            if group in TURNING and (cr - cc) % 2:
                continue
            rows, cols = _images(cells, (cr, cc), group)
            if rows.min() < 0 or cols.min() < 0 or rows.max() >= h or cols.max() >= w:
                continue
            found = grid[rows, cols]
            if ((found != bg) & (found != colours[None])).any():
                continue
            moved = (rows != cells[None, :, 0]) | (cols != cells[None, :, 1])
            score = int(((found == colours[None]) & moved).sum())
            if best is None or score > best[0]:
                best = (score, (cr, cc))
    return None if best is None else best[1]


CENTRES: dict[str, Callable[[np.ndarray, int, str], Centre | None]] = {
    "object": _object_centre,
    "best fit": _best_fit_centre,
}


def _completed(grid: np.ndarray, bg: int, group: str, rule: str) -> np.ndarray | None:
    centre = CENTRES[rule](grid, bg, group)
    return None if centre is None else symmetrize(grid, bg, group, centre)


def _fits_group(problem: Problem, bg: int, group: str) -> bool:
    """Whether every demonstration output keeps its input's content and is invariant under
    ``group`` (the cheap test before any centre is sought)."""
    for grid, out in zip(problem.demo_inputs, problem.demo_outputs, strict=True):
        content = grid != bg
        if not np.array_equal(grid[content], out[content]):
            return False
        if not is_symmetric(out, bg, group):
            return False
    return True


def symmetry_views(problem: Problem, bg: int) -> dict[str, list[np.ndarray | None]]:
    """``{"symmetric GROUP (RULE)": one grid per input}`` (demonstration inputs, then test
    inputs; ``None`` where the rule finds no centre) for each group whose first fitting
    centre rule completes every demonstration input into its output; ``{}`` for most tasks
    (see the module docstring)."""
    pairs = list(zip(problem.demo_inputs, problem.demo_outputs, strict=True))
    if any(i.shape != o.shape for i, o in pairs) or all(np.array_equal(i, o) for i, o in pairs):
        return {}
    views = {}
    for group in GROUPS:
        if not _fits_group(problem, bg, group):
            continue
        for rule in CENTRE_RULES:
            made = [_completed(grid, bg, group, rule) for grid, _ in pairs]
            outputs = problem.demo_outputs
            if all(
                m is not None and np.array_equal(m, o) for m, o in zip(made, outputs, strict=True)
            ):
                tests = [_completed(grid, bg, group, rule) for grid in problem.test_inputs]
                views[f"symmetric {group} ({rule})"] = [*made, *tests]
                break
    return views


__all__ = [
    "CENTRE_RULES",
    "GROUPS",
    "SYMMETRY_TASKS",
    "is_symmetric",
    "symmetrize",
    "symmetry_views",
]
