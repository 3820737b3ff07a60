"""Outputs looked up: the demonstrations as a table from a property of the input to the
output.

Some ARC tasks sort their inputs into a few classes and give each class a fixed output: a
``1 x 1`` colour for the shape the content draws, a fixed ``3 x 3`` picture for the
content's colour, one colour for a symmetric input and another for the rest. A **key** is
a property of one grid under a name that means the same on every grid
(:func:`grid_keys`):

* ``content colours``: the colours other than the background (ARC-AGI-1 training task
  d4469b4b);
* ``content shape``: the grid's shape and which of its cells hold content (27a28665);
* ``left-right symmetric``, ``top-bottom symmetric``: whether the grid is its own mirror
  image (44f52bb0).

The view ``lookup X`` (:func:`lookup_views`) fits a task when the demonstrations with equal
keys ``X`` have equal outputs, some key is shared by two demonstrations (the table has
seen a class twice: evidence, not a list of cases) and every test input's key is one a
demonstration has; its canvas is that demonstration's output.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
from jaxtyping import Int8

from jaxarc.solve.problem import Problem


def grid_keys(grid: Int8[np.ndarray, "H W"], bg: int) -> dict[str, Hashable]:
    """``{name: key}``: the keys of the module docstring, simplest first."""
    grid = np.asarray(grid, np.int8)
    content = grid != bg
    return {
        "content colours": tuple(int(c) for c in np.unique(grid[content])),
        "content shape": (grid.shape, np.packbits(content).tobytes()),
        "left-right symmetric": bool(np.array_equal(grid, grid[:, ::-1])),
        "top-bottom symmetric": bool(np.array_equal(grid, grid[::-1])),
    }


def lookup_views(problem: Problem, bg: int) -> dict[str, list[np.ndarray]]:
    """``{lookup X: one canvas per grid}`` (demonstration inputs, then test inputs) for
    each key ``X`` that fits (see the module docstring)."""
    outputs = [np.asarray(o, np.int8) for o in problem.demo_outputs]
    distinct = {(o.shape, o.tobytes()) for o in outputs}
    if len(distinct) == len(outputs):  # no output seen twice: nothing to look up
        return {}
    demo_keys = [grid_keys(g, bg) for g in problem.demo_inputs]
    test_keys = [grid_keys(g, bg) for g in problem.test_inputs]
    views = {}
    for name in demo_keys[0]:
        table: dict[Hashable, np.ndarray] = {}
        fits = True
        for keys, out in zip(demo_keys, outputs, strict=True):
            seen = table.setdefault(keys[name], out)
            if seen.shape != out.shape or not np.array_equal(seen, out):
                fits = False
                break
        if not fits or len(table) == len(outputs):
            continue
        if any(keys[name] not in table for keys in test_keys):
            continue
        views[f"lookup {name}"] = [table[keys[name]] for keys in [*demo_keys, *test_keys]]
    return views


LOOKUP_VIEW_TASKS: dict[str, tuple[str, ...]] = {
    # view -> ARC-AGI-1 training tasks whose first program starts from it
    "lookup": ("27a28665", "44f52bb0", "d4469b4b"),
}
