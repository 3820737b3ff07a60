"""Output size and content from counts: views whose canvas is as large as a count says.

Some tasks count something in the input and draw the number: a ``1 x n`` row of the
content colour for ``n`` content cells, an ``n x n`` diagonal for ``n`` objects, ``n``
cells of a fixed ``1 x 5`` or ``3 x 3`` grid, the content colours listed by how often they
occur. A **count** is a number read off one grid under a name that means the same on every
grid (:func:`grid_counts`): cells of a colour, colours, objects of a kind, objects a pick
of :func:`~jaxarc.solve.language.objects.object_picks` chooses (all of them or those of one
colour), panels of a grid cut by lines. The **count views** (:func:`count_views`), each
fitted to the demonstrations:

* ``count 1 x n (X)``, ``count n x 1 (X)``, ``count n x n (X)``: the background in the
  shape the first count ``X`` that fits every demonstration output's shape gives (the
  outputs' shapes must differ, else ``blank h x w`` serves); ``count panels``: one cell per
  panel of a grid cut by lines, in the panels' colour. Their masks: ``diagonal``,
  ``antidiagonal``;
* ``scale n x n (X)``: the ``scale`` view with its factor from a count: every cell of the
  input blown up to an ``n x n`` block, ``n`` the first count ``X`` that gives each
  demonstration's factor (``ac0a08a4``, ``b91ae062``: one block side per content cell or
  colour);
* ``count cells (X)``: the outputs' one shape, with the mask ``counted cells``: the first
  ``n`` cells (``n``: the count ``X`` on the grid) of an order learned from the
  demonstrations, whose drawn cells (not background) must grow with ``n``, each holding the
  one before (cells not seen drawn come last, in reading order);
* ``count colours by count``, ``... after the first``, ``count colours by position``: the
  content colours, the most frequent first (all of them, or all but the most frequent), as
  a column or a row; all colours of the grid in the order they lie along the axis they
  spread on (a row when they lie side by side, else a column).

Views are returned as ``(canvas, masks)`` per grid; :func:`~jaxarc.solve.language.views.
task_views` makes them :class:`~jaxarc.solve.language.views.View` s (the source is the
canvas).
"""

from __future__ import annotations

import numpy as np
from jaxtyping import Bool, Int8

from jaxarc.solve.language.objects import grid_objects, object_picks
from jaxarc.solve.language.panels import grid_panels
from jaxarc.solve.problem import MAX_SIDE, Problem

CountView = tuple[Int8[np.ndarray, "h w"], dict[str, Bool[np.ndarray, "h w"]]]
SHAPE_FORMS = {  # form -> the shape a count n gives
    "1 x n": lambda n: (1, n),
    "n x 1": lambda n: (n, 1),
    "n x n": lambda n: (n, n),
}


def grid_counts(grid: Int8[np.ndarray, "H W"], bg: int) -> dict[str, int]:
    """Every count of ``grid`` on the background ``bg``, simplest first: content cells,
    colours, cells of each colour, then per object kind the objects, those of each colour,
    and those each pick chooses (of any colour, then of each colour)."""
    grid = np.asarray(grid, np.int8)
    present = np.bincount(grid.reshape(-1).astype(np.int64), minlength=10)
    counts = {
        "content cells": int((grid != bg).sum()),
        "colours": int((present > 0).sum() - (present[bg] > 0)),
    }
    for c in range(10):
        counts[f"cells of colour {c}"] = int(present[c])
    for kind, objects in grid_objects(grid, bg).items():
        picks = [("objects", np.ones(objects.count, bool)), *object_picks(objects)]
        for pick, chosen in picks:
            counts[f"{kind} {pick}"] = int(chosen.sum())
            for c in range(10):
                counts[f"{kind} {pick} of colour {c}"] = int(
                    (chosen & (objects.colours == c)).sum()
                )
    return counts


def _fitting_count(counts: list[dict[str, int]], wanted: list[int]) -> str | None:
    """The first count name whose value on each demonstration is ``wanted`` (the counts of
    a name that is missing on a grid are 0)."""
    for name in counts[0]:
        if all(c.get(name, 0) == n for c, n in zip(counts, wanted, strict=False)):
            return name
    return None


def _blank(shape: tuple[int, int], bg: int) -> CountView | None:
    if not (1 <= shape[0] <= MAX_SIDE and 1 <= shape[1] <= MAX_SIDE):
        return None
    eye = np.eye(*shape, dtype=bool)
    return np.full(shape, bg, np.int8), {"diagonal": eye, "antidiagonal": eye[:, ::-1].copy()}


def _shape_views(
    problem: Problem, counts: list[dict[str, int]], bg: int
) -> dict[str, list[CountView | None]]:
    """``count 1 x n``, ``n x 1``, ``n x n`` by the first fitting count, and ``count panels``
    (``counts`` per grid hold ``panel rows``, ``panel columns`` and ``panel colour`` where
    a grid has panels, :func:`~jaxarc.solve.language.panels.grid_panels`)."""
    outs = [o.shape for o in problem.demo_outputs]
    views: dict[str, list[CountView | None]] = {}
    if len(set(outs)) == 1:
        return views
    for form, shape_of in SHAPE_FORMS.items():
        wanted = []
        for h, w in outs:
            n = w if form == "1 x n" else h
            if shape_of(n) != (h, w):
                break
            wanted.append(n)
        else:
            name = _fitting_count(counts, wanted)
            if name is not None:
                views[f"count {form} ({name})"] = [
                    _blank(shape_of(c.get(name, 0)), bg) for c in counts
                ]
    views.update(_scaled_views(problem, counts, bg))
    panels = [(c.get("panel rows", 0), c.get("panel columns", 0)) for c in counts]
    if all(p == o for p, o in zip(panels, outs, strict=False)):
        views["count panels"] = [
            _blank(p, c.get("panel colour", bg)) for p, c in zip(panels, counts, strict=True)
        ]
    return views


def _scaled_views(
    problem: Problem, counts: list[dict[str, int]], bg: int
) -> dict[str, list[CountView | None]]:
    """``scale n x n (X)``: every cell blown up to an ``n x n`` block, ``n`` the first
    count ``X`` that gives every demonstration's factor (the outputs ``n`` times their
    inputs along both axes, ``n`` not the same in every demonstration)."""
    factors = []
    for i, o in zip(problem.demo_inputs, problem.demo_outputs, strict=True):
        n = o.shape[0] // i.shape[0]
        if n < 1 or (n * i.shape[0], n * i.shape[1]) != o.shape:
            return {}
        factors.append(n)
    if len(set(factors)) == 1:
        return {}  # one factor: the view ``scale kh x kw`` serves
    name = _fitting_count(counts, factors)
    if name is None:
        return {}
    grids = [*problem.demo_inputs, *problem.test_inputs]
    column: list[CountView | None] = []
    for grid, c in zip(grids, counts, strict=True):
        n = c.get(name, 0)
        fits = n >= 1 and n * max(grid.shape) <= MAX_SIDE
        column.append((np.kron(grid, np.ones((n, n), np.int8)), {}) if fits else None)
    return {f"scale n x n ({name})": column}


def learned_order(drawn: list[Bool[np.ndarray, "h w"]]) -> np.ndarray | None:
    """``[h * w]`` flat cell indices: the cells of the smallest ``drawn`` mask first, then
    those each larger mask adds, then the rest, each group in reading order; ``None`` when
    the masks (sorted by size) do not each hold the one before."""
    ordered = sorted(drawn, key=lambda m: int(m.sum()))
    if any((a & ~b).any() for a, b in zip(ordered, ordered[1:], strict=False)):
        return None
    rank = np.full(ordered[0].size, len(ordered), np.int64)
    for k, mask in enumerate(ordered[::-1]):
        rank[mask.reshape(-1)] = len(ordered) - 1 - k
    return np.argsort(rank, kind="stable")


def _cell_views(
    problem: Problem, counts: list[dict[str, int]], bg: int
) -> dict[str, list[CountView | None]]:
    """``count cells (X)``: see the module docstring."""
    outs = problem.demo_outputs
    if len({o.shape for o in outs}) != 1:
        return {}
    drawn = [o != bg for o in outs]
    wanted = [int(d.sum()) for d in drawn]
    if len(set(wanted)) < 2:  # one number: any count that gives it is a guess
        return {}
    order = learned_order(drawn)
    name = _fitting_count(counts, wanted) if order is not None else None
    if name is None:
        return {}
    shape = outs[0].shape
    column = []
    for c in counts:
        chosen = np.zeros(order.size, bool)
        chosen[order[: c.get(name, 0)]] = True
        column.append((np.full(shape, bg, np.int8), {"counted cells": chosen.reshape(shape)}))
    return {f"count cells ({name})": column}


def colour_lists(grid: Int8[np.ndarray, "H W"], bg: int) -> dict[str, np.ndarray]:
    """``{name: [n] colours}``: the content colours by count (most first, then the lowest
    colour), the same without the first, and every colour of the grid by position along
    the axis its colours spread on (``... by position`` names a row or a column)."""
    grid = np.asarray(grid, np.int8)
    counts = np.bincount(grid.reshape(-1).astype(np.int64), minlength=10)
    content = sorted((c for c in range(10) if counts[c] and c != bg), key=lambda c: (-counts[c], c))
    lists = {"by count": np.asarray(content, np.int8)}
    lists["by count after the first"] = np.asarray(content[1:], np.int8)
    present = [c for c in range(10) if counts[c]]
    rows, cols = np.indices(grid.shape)
    mean_rows = np.asarray([rows[grid == c].mean() for c in present])
    mean_cols = np.asarray([cols[grid == c].mean() for c in present])
    across = np.ptp(mean_cols) >= np.ptp(mean_rows)  # side by side: a row
    key = mean_cols if across else mean_rows
    by_position = np.asarray([present[k] for k in np.argsort(key, kind="stable")], np.int8)
    lists["row by position" if across else "column by position"] = by_position
    return lists


def _list_views(problem: Problem, bg: int) -> dict[str, list[CountView | None]]:
    """``count colours ...``: each colour list laid as a column and as a row, and the
    positional list as it lies."""
    grids = [*problem.demo_inputs, *problem.test_inputs]
    per_grid = [colour_lists(g, bg) for g in grids]
    views: dict[str, list[CountView | None]] = {}
    for order in ("by count", "by count after the first"):
        for lay, shape_of in (("column", lambda n: (n, 1)), ("row", lambda n: (1, n))):
            column = []
            for lists in per_grid:
                colours = lists[order]
                column.append(
                    (colours.reshape(shape_of(colours.size)), {}) if colours.size else None
                )
            views[f"count colours {order} as a {lay}"] = column
    column = []
    for lists in per_grid:
        row = "row by position" in lists
        colours = lists["row by position" if row else "column by position"]
        column.append((colours.reshape((1, -1) if row else (-1, 1)), {}))
    views["count colours by position"] = column
    return views


def count_views(problem: Problem, bg: int) -> dict[str, list[CountView | None]]:
    """The count views of ``problem`` (see the module docstring): ``{name: per grid
    (canvas, masks) or None}`` (demonstration inputs, then test inputs; ``None``: the view
    gives that grid nothing)."""
    grids = [*problem.demo_inputs, *problem.test_inputs]
    views = _list_views(problem, bg)
    outs = {o.shape for o in problem.demo_outputs}
    drawn = {int((o != bg).sum()) for o in problem.demo_outputs}
    if len(outs) == 1 and len(drawn) == 1:
        return views  # neither a shape nor a number of cells to count
    counts = [grid_counts(g, bg) for g in grids]
    for c, grid in zip(counts, grids, strict=True):
        cut = grid_panels(grid)
        if cut is not None:
            c["panel rows"], c["panel columns"], c["panel colour"] = cut
    return {**_shape_views(problem, counts, bg), **_cell_views(problem, counts, bg), **views}
