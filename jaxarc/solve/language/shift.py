"""Object shifts: every object of a colour moves by an offset that a rule gives it.

Some tasks move objects by a rule of their own rather than until they touch something: a
shape steps once toward a marker, lines up its rows with another object, centres itself
in a frame of corner cells, climbs by its own height, moves one row down. A **shift** moves
every object (one colour, 8-connected) of a **mover** colour by the offset its rule gives
it; the rules (:data:`SHIFT_RULES`), for an object of box centre ``o`` and an **anchor**
colour whose cells' box has centre ``a``:

* ``step toward colour a``: one cell along each axis toward ``a`` (a diagonal step when
  the centres differ in both);
* ``rows to colour a`` / ``columns to colour a`` / ``centre to colour a``: by the offset that
  puts ``o`` on ``a`` along the rows, the columns or both (the centres' difference must be
  whole cells);
* ``own size up`` (``down``, ``left``, ``right``): by the object's own height (or width);
* ``by dr dc``: one offset for every object (``|dr|, |dc| <= 3``).

The movers are lifted off the grid and drawn again at their new places (over whatever is
there); a shift that would put a mover off the grid gives no grid.

The view ``shift`` (:func:`shift_moves`, :func:`shift_grid`) learns one rule per mover
colour from the demonstrations: the first rule (anchor colours in increasing order) under
which the moved objects' cells are exactly the output's cells of one colour (the mover's
own, or when no output holds it, the one it turns into), the same colour in every
demonstration, and some object moves.
"""

from __future__ import annotations

import numpy as np
from jaxtyping import Int8
from scipy import ndimage

from jaxarc.solve.language.objects import EIGHT
from jaxarc.solve.problem import Problem

Move = tuple[int, str, int]  # (mover colour, rule, anchor colour or -1)
ANCHORED = ("step toward", "rows to", "columns to", "centre to")
OWN_SIZE = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
MAX_OFFSET = 3
SHIFT_RULES: tuple[str, ...] = (
    *ANCHORED,
    *(f"own size {d}" for d in OWN_SIZE),
    *(
        f"by {dr} {dc}"
        for dr in range(-MAX_OFFSET, MAX_OFFSET + 1)
        for dc in range(-MAX_OFFSET, MAX_OFFSET + 1)
        if (dr, dc) != (0, 0)
    ),
)


def _centre2(cells: np.ndarray) -> np.ndarray:
    """Twice the centre of the box of ``[k, 2]`` cells (whole numbers)."""
    return cells.min(0) + cells.max(0)


def _offset(cells: np.ndarray, rule: str, anchor2: np.ndarray | None) -> np.ndarray | None:
    """The ``(dr, dc)`` offset ``rule`` gives an object of ``[k, 2]`` ``cells`` (``anchor2``:
    twice the anchor's box centre); ``None`` when the rule gives it none."""
    if rule in ANCHORED:
        if anchor2 is None:
            return None
        delta = anchor2 - _centre2(cells)
        if rule == "step toward":
            return np.sign(delta)
        keep = {"rows to": (1, 0), "columns to": (0, 1), "centre to": (1, 1)}[rule]
        delta = delta * np.asarray(keep)
        return None if (delta % 2).any() else delta // 2
    if rule.startswith("own size"):
        step = np.asarray(OWN_SIZE[rule.rsplit(" ", 1)[1]])
        return step * (cells.max(0) - cells.min(0) + 1)
    _, dr, dc = rule.split(" ")
    return np.asarray((int(dr), int(dc)))


def shift(
    grid: Int8[np.ndarray, "H W"], bg: int, mover: int, rule: str, anchor: int = -1
) -> np.ndarray | None:
    """``grid`` with every object of colour ``mover`` moved by the offset ``rule`` gives it
    (``anchor``: the anchor colour of the anchored rules, see the module docstring);
    ``[H, W]`` int8, or ``None`` when a mover would leave the grid."""
    grid = np.asarray(grid, np.int8)
    labels, count = ndimage.label(grid == mover, EIGHT)
    anchor_cells = np.argwhere(grid == anchor) if anchor >= 0 else np.zeros((0, 2), int)
    anchor2 = _centre2(anchor_cells) if len(anchor_cells) else None
    out = np.where(labels > 0, bg, grid).astype(np.int8)
    rows, cols = grid.shape
    for k in range(1, count + 1):
        cells = np.argwhere(labels == k)
        offset = _offset(cells, rule, anchor2)
        if offset is None:
            return None
        at = cells + offset
        if (at < 0).any() or (at[:, 0] >= rows).any() or (at[:, 1] >= cols).any():
            return None
        out[at[:, 0], at[:, 1]] = mover
    return out


def _fits(moved: list[np.ndarray | None], problem: Problem, mover: int) -> bool:
    """Whether the moved movers are the cells of one output colour, the same in every
    demonstration (the mover's own when an output holds it), and some mover moved."""
    kept = any((out == mover).any() for out in problem.demo_outputs)
    target = mover if kept else None
    still = 0
    demos = zip(moved, problem.demo_inputs, problem.demo_outputs, strict=True)
    for grid, before, out in demos:
        if grid is None:
            return False
        still += np.array_equal(grid == mover, before == mover)
        cells = grid == mover
        colours = np.unique(out[cells])
        if colours.size != 1 or (target is not None and colours[0] != target):
            return False
        target = colours[0]
        if not np.array_equal(cells, out == target):
            return False
    return still < len(moved)


def shift_moves(problem: Problem, bg: int) -> list[Move]:
    """The ``(mover, rule, anchor)`` moves the demonstrations show, one per mover colour
    (see the module docstring); ``[]`` when outputs differ in shape from their inputs."""
    inputs = problem.demo_inputs
    if any(i.shape != o.shape for i, o in zip(inputs, problem.demo_outputs, strict=True)):
        return []
    colours = [c for c in range(10) if c != bg and all((i == c).any() for i in inputs)]
    moves = []
    for mover in colours:
        tries = [(rule, a) for rule in ANCHORED for a in colours if a != mover]
        tries += [(rule, -1) for rule in SHIFT_RULES if rule not in ANCHORED]
        for rule, anchor in tries:
            moved = [shift(i, bg, mover, rule, anchor) for i in inputs]
            if _fits(moved, problem, mover):
                moves.append((mover, rule, anchor))
                break
    return moves


def shift_grid(grid: Int8[np.ndarray, "H W"], bg: int, moves: list[Move]) -> np.ndarray | None:
    """``grid`` with each move applied, one mover colour after another; ``None`` when one
    of them gives no grid."""
    for mover, rule, anchor in moves:
        grid = shift(grid, bg, mover, rule, anchor)
        if grid is None:
            return None
    return np.asarray(grid, np.int8)


def describe_moves(moves: list[Move]) -> str:
    """The view's name: ``shift 2 rows to colour 1, 4 rows to colour 1``."""
    parts = [
        f"{mover} {rule} colour {anchor}" if anchor >= 0 else f"{mover} {rule}"
        for mover, rule, anchor in moves
    ]
    return "shift " + ", ".join(parts)
