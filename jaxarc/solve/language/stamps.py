"""Stamps: a pattern drawn around every object of one look, learned from the demonstrations.

Many tasks draw the same thing around every marker: a single cell gets four coloured
corners, a grey block gets a cell of each colour at its corners, a cross grows its arms,
a cell sends a staircase to the border. A **stamp** is such a pattern: for every object
of one appearance (its cells and colours in its box), the colours the output holds at
fixed offsets from the object's box (inside it too: the marker itself may change).

The view ``stamp KIND`` (:func:`learn_stamps`, :func:`stamp_grid`) reads the patterns off
the demonstrations, for the objects of one kind of :data:`~jaxarc.solve.language.objects.
OBJECT_KINDS` (``single4``: one colour, 4-connected; ``multi8``: any colours,
8-connected):

* the objects of each appearance that at least :data:`MIN_SEEN` demonstrations hold are
  collected; an offset (at most :data:`REACH` cells beyond the box) is the
  stamp's where the output differs from the input around at least one of them, has the
  same colour around every one that has it on the grid, and touches the box through other
  such offsets (8-connected: far cells that agree by chance are left out);
* an appearance seen fewer times (a new colour in a test input) gets the pattern of its
  shape alone, learned the same way from every object of that shape: there a colour is
  either the colour of one cell of the object (the arms of a cross grow in the colour of
  its arm cells) or one fixed colour, whichever holds around every one.

The stamped grid is the input with every object's pattern drawn over it (objects in
reading order). The view fits when, on every demonstration, each stamped cell is the
output's colour and some cell is fixed, and its kind stamps some grid of the task otherwise
than the kinds before it; paints then draw what the stamps leave. Training tasks it serves:
0962bcdd, 3ac3eb23, 6c434453, 8403a5d5, 93b581b8, 95990924, a9f96cdd (``VIEW_TASKS`` of
:mod:`~jaxarc.solve.language.views`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from jaxtyping import Int8
from scipy import ndimage

from jaxarc.solve.language.objects import EIGHT, grid_objects
from jaxarc.solve.problem import Problem

REACH = 30  # how far beyond an object's box its stamp may reach (cells)
STAMP_KINDS = ("single4", "multi8")
MIN_SEEN = 2  # demonstrations that hold an appearance (or shape) a stamp is learned from
OWN = 10  # a role ``OWN + p``: the colour of the object's cell ``p`` (flat index in its box)


@dataclasses.dataclass(frozen=True)
class Pattern:
    """The offsets ``[n, 2]`` from an object's box corner (top-left) a stamp writes and
    what it writes there ``[n]``: a colour 0-9, or ``OWN + p`` for the colour of the
    object's box cell ``p``."""

    offsets: np.ndarray
    roles: np.ndarray


@dataclasses.dataclass(frozen=True)
class Stamps:
    """The patterns of one object ``kind``: by appearance (``exact``: the object's box
    colours, ``-1`` off the object, as bytes with its shape) and by shape alone
    (``shaped``). Every appearance that :data:`MIN_SEEN` demonstrations hold has its
    entry in ``exact`` (``None``: no stamp); only the others fall back on their shape's."""

    kind: str
    exact: dict[tuple, Pattern | None]
    shaped: dict[tuple, Pattern | None]


def _appearances(grid: np.ndarray, bg: int, kind: str) -> list[tuple[tuple, tuple, np.ndarray]]:
    """Each object of ``kind`` in ``grid``: its exact key, its shape key and its box
    ``(r1, c1, r2, c2)`` with its box colours ``[h, w]`` (``-1`` off the object)."""
    objects = grid_objects(grid, bg)[kind]
    found = []
    for k in range(objects.count):
        r1, c1, r2, c2 = (int(v) for v in objects.boxes[k])
        own = objects.labels[r1 : r2 + 1, c1 : c2 + 1] == k
        look = np.where(own, grid[r1 : r2 + 1, c1 : c2 + 1], -1).astype(np.int8)
        exact = (look.shape, look.tobytes())
        shape = (own.shape, own.tobytes())
        found.append((exact, shape, (r1, c1, r2, c2), look))
    return found


def _windows(grid: np.ndarray, box: tuple[int, int, int, int], fill: int) -> np.ndarray:
    """``grid`` around ``box``, :data:`REACH` cells beyond it on each side (``fill`` off
    the grid): ``[h + 2 REACH, w + 2 REACH]``."""
    r1, c1, r2, c2 = box
    padded = np.pad(grid, REACH, constant_values=fill)
    return padded[r1 : r2 + 1 + 2 * REACH, c1 : c2 + 1 + 2 * REACH]


def _pattern(
    outs: np.ndarray, changed: np.ndarray, looks: np.ndarray, roles_of_cells: bool
) -> Pattern | None:
    """The pattern that ``outs [n, H', W']`` (the output around ``n`` objects, ``-1`` off
    the grid) agree on where ``changed [n, H', W']`` holds somewhere; ``looks [n, h*w]``:
    the objects' box colours. With ``roles_of_cells``, a colour may also be one of the
    object's cells'."""
    seen = outs >= 0
    first = np.where(seen, outs, 10).min(0)
    fixed = np.all((outs == first[None]) | ~seen, axis=0) & (first < 10)
    roles = np.where(fixed, first, -1)
    if roles_of_cells:
        for p in range(looks.shape[1] - 1, -1, -1):  # the first cell that holds wins
            colour = looks[:, p][:, None, None]
            if (colour < 0).any():
                continue
            holds = np.all((outs == colour) | ~seen, axis=0)
            roles = np.where(holds, OWN + p, roles)
    keep = changed.any(0) & (roles >= 0)
    box = np.zeros(keep.shape, bool)
    box[REACH:-REACH, REACH:-REACH] = True
    labels, _ = ndimage.label(keep | box, EIGHT)
    keep &= np.isin(labels, np.unique(labels[box]))
    if not keep.any():
        return None
    offsets = np.argwhere(keep) - REACH
    return Pattern(offsets.astype(np.int64), roles[keep].astype(np.int64))


def learn_stamps(problem: Problem, bg: int, kind: str) -> Stamps | None:
    """The stamps of the objects of ``kind`` that the demonstrations show (see the module
    docstring); ``None`` when outputs differ in shape from their inputs or no stamp is
    seen."""
    demos = list(zip(problem.demo_inputs, problem.demo_outputs, strict=True))
    if any(i.shape != o.shape for i, o in demos):
        return None
    by_exact: dict[tuple, list] = {}
    by_shape: dict[tuple, list] = {}
    for d, (grid, out) in enumerate(demos):
        diff = np.asarray(grid != out)
        for exact, shape, box, look in _appearances(grid, bg, kind):
            item = (d, _windows(out, box, -1), _windows(diff, box, False), look.reshape(-1))
            by_exact.setdefault(exact, []).append(item)
            by_shape.setdefault(shape, []).append(item)
    exact_patterns: dict[tuple, Pattern | None] = {}
    shaped_patterns: dict[tuple, Pattern | None] = {}
    for table, found, cells in (
        (by_exact, exact_patterns, False),
        (by_shape, shaped_patterns, True),
    ):
        for key, items in table.items():
            if len({d for d, *_ in items}) < MIN_SEEN:
                continue
            outs = np.stack([item[1] for item in items]).astype(np.int64)
            changed = np.stack([item[2] for item in items])
            looks = np.stack([item[3] for item in items]).astype(np.int64)
            pattern = _pattern(outs, changed, looks, cells)
            found[key] = pattern
    if not any(exact_patterns.values()) and not any(shaped_patterns.values()):
        return None
    return Stamps(kind, exact_patterns, shaped_patterns)


def stamp_grid(grid: Int8[np.ndarray, "H W"], bg: int, stamps: Stamps) -> np.ndarray:
    """``grid`` with the pattern of every object of ``stamps.kind`` drawn over it (its
    appearance's, else its shape's; objects in reading order): ``[H, W]`` int8."""
    grid = np.asarray(grid, np.int8)
    out = grid.copy()
    rows, cols = grid.shape
    for exact, shape, (r1, c1, _, _), look in _appearances(grid, bg, stamps.kind):
        # an appearance the demonstrations hold keeps its own (maybe no) stamp
        pattern = stamps.exact[exact] if exact in stamps.exact else stamps.shaped.get(shape)
        if pattern is None:
            continue
        at = pattern.offsets + np.asarray((r1, c1))
        on = (at[:, 0] >= 0) & (at[:, 0] < rows) & (at[:, 1] >= 0) & (at[:, 1] < cols)
        roles = pattern.roles[on]
        flat = look.reshape(-1)
        colours = np.where(roles >= OWN, flat[np.clip(roles - OWN, 0, flat.size - 1)], roles)
        keep = colours >= 0
        out[at[on][keep, 0], at[on][keep, 1]] = colours[keep]
    return out


def stamp_views(problem: Problem, bg: int) -> dict[str, list[np.ndarray]]:
    """``{"stamp KIND": the stamped grids}`` (demonstration inputs, then test inputs) for
    each kind of :data:`STAMP_KINDS` whose learned stamps write only the outputs' colours on
    every demonstration and fix some cell, and stamp some grid of the task otherwise than
    the kinds before."""
    found = {}
    grids = [*problem.demo_inputs, *problem.test_inputs]
    made: list[list[np.ndarray]] = []
    for kind in STAMP_KINDS:
        stamps = learn_stamps(problem, bg, kind)
        if stamps is None:
            continue
        stamped = [stamp_grid(grid, bg, stamps) for grid in grids]
        if any(
            all(np.array_equal(a, b) for a, b in zip(stamped, other, strict=True)) for other in made
        ):
            continue
        made.append(stamped)
        fixed = 0
        demos = zip(
            problem.demo_inputs, problem.demo_outputs, stamped[: problem.num_demos], strict=True
        )
        for grid, out, drawn in demos:
            written = drawn != grid
            if (drawn[written] != out[written]).any():
                break
            fixed += int(written.sum())
        else:
            if fixed:
                found[f"stamp {kind}"] = stamped
    return found
