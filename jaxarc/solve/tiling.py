"""Tilings: outputs made of copies of the input, each copy turned or mirrored, written as
environment actions and solved tile by tile.

Among the ARC-AGI-1 training tasks, 12 have outputs that are an ``R x C`` grid of tiles, each
tile one of the eight symmetries of the input (the input itself, mirrored, turned, or
transposed; see ``docs/solve.md``). In environment actions such an output takes COPY of the
input, RESIZE to ``R x C`` tiles, and per tile a PASTE and up to two actions on the tile's
box: 4 to 26 actions, deeper than a breadth-first search over all candidates reaches.

The tiles are independent (each PASTE writes the untouched input from the clipboard into
its own box), so the search decomposes: for each tile it finds the first symmetry that
matches that tile in every demonstration output. The program is then built per grid (each
grid's own tile size) and, like every search solution, replayed by the environment, which
keeps it only if it turns every demonstration input into its output.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from jaxarc.grid import operation_ids as ops
from jaxarc.solve.problem import MAX_SIDE, Problem

MAX_TILES = 3  # tiles per side

# the symmetries, in the order tried (fewest actions first): name, NumPy map, actions on the
# tile's box, whether the tile must be square (the actions turn a box)
SYMMETRIES: tuple[tuple[str, Callable[[np.ndarray], np.ndarray], tuple[int, ...], bool], ...] = (
    ("identity", lambda g: g, (), False),
    ("mirror left-right", np.fliplr, (ops.FLIP_LR,), False),
    ("mirror top-bottom", np.flipud, (ops.FLIP_TB,), False),
    ("turn clockwise", lambda g: np.rot90(g, -1), (ops.ROTATE_CW,), True),
    ("turn anticlockwise", lambda g: np.rot90(g, 1), (ops.ROTATE_CCW,), True),
    ("half turn", lambda g: np.rot90(g, 2), (ops.FLIP_LR, ops.FLIP_TB), False),
    ("transpose", lambda g: g.T, (ops.ROTATE_CW, ops.FLIP_LR), True),
    ("anti-transpose", lambda g: np.rot90(g, 2).T, (ops.ROTATE_CW, ops.FLIP_TB), True),
)


def tile_counts(problem: Problem) -> tuple[int, int] | None:
    """``(R, C)`` when every demonstration output is ``R x C`` copies of its input's shape
    (not ``1 x 1``, at most :data:`MAX_TILES` a side, and the test inputs' tilings fit the
    ARC canvas); else ``None``."""
    counts = set()
    for grid, out in zip(problem.demo_inputs, problem.demo_outputs, strict=True):
        (h, w), (big_h, big_w) = grid.shape, out.shape
        if big_h % h or big_w % w:
            return None
        counts.add((big_h // h, big_w // w))
    if len(counts) != 1:
        return None
    rows, cols = counts.pop()
    if (rows, cols) == (1, 1) or max(rows, cols) > MAX_TILES:
        return None
    if any(
        g.shape[0] * rows > MAX_SIDE or g.shape[1] * cols > MAX_SIDE for g in problem.test_inputs
    ):
        return None
    return rows, cols


def tile_symmetries(problem: Problem) -> list[list[str]] | None:
    """Per tile (row-major), the name of the first symmetry of :data:`SYMMETRIES` that makes
    every demonstration input into that tile of its output; ``None`` if a tile has none."""
    counts = tile_counts(problem)
    if counts is None:
        return None
    rows, cols = counts
    square = all(g.shape[0] == g.shape[1] for g in (*problem.demo_inputs, *problem.test_inputs))
    found = []
    for i in range(rows):
        row = []
        for j in range(cols):
            name = next(
                (
                    name
                    for name, mapped, _, needs_square in SYMMETRIES
                    if (square or not needs_square)
                    and all(
                        np.array_equal(
                            mapped(grid),
                            out[
                                i * grid.shape[0] : (i + 1) * grid.shape[0],
                                j * grid.shape[1] : (j + 1) * grid.shape[1],
                            ],
                        )
                        for grid, out in zip(problem.demo_inputs, problem.demo_outputs, strict=True)
                    )
                ),
                None,
            )
            if name is None:
                return None
            row.append(name)
        found.append(row)
    return found


def describe_tiling(symmetries: list[list[str]]) -> list[str]:
    """The steps of :func:`tiling_program` in words, one per action:
    ``["COPY(input)", "RESIZE(2x2 tiles)", "PASTE(tile 0,1)", "FLIP_LR(tile 0,1)", ...]``."""
    actions_of = {name: actions for name, _, actions, _ in SYMMETRIES}
    rows, cols = len(symmetries), len(symmetries[0])
    words = ["COPY(input)", f"RESIZE({rows}x{cols} tiles)"]
    for i in range(rows):
        for j in range(cols):
            if (i, j) != (0, 0):
                words.append(f"PASTE(tile {i},{j})")
            words += [
                f"{ops.OPERATION_NAMES[op]}(tile {i},{j})" for op in actions_of[symmetries[i][j]]
            ]
    return words


def tiling_program(problem: Problem) -> np.ndarray | None:
    """The tiling's environment actions, ``[T, N, 5]`` (per step one row per grid:
    demonstration inputs, then test inputs), or ``None`` when the task is no such tiling."""
    symmetries = tile_symmetries(problem)
    if symmetries is None:
        return None
    actions_of = {name: actions for name, _, actions, _ in SYMMETRIES}
    grids = (*problem.demo_inputs, *problem.test_inputs)
    rows, cols = len(symmetries), len(symmetries[0])
    per_grid = []
    for grid in grids:
        h, w = grid.shape
        steps = [(ops.COPY, 0, 0, h - 1, w - 1), (ops.RESIZE, 0, 0, rows * h - 1, cols * w - 1)]
        for i in range(rows):
            for j in range(cols):
                top, left = i * h, j * w
                if (i, j) != (0, 0):
                    steps.append((ops.PASTE, top, left, top, left))
                box = (top, left, top + h - 1, left + w - 1)
                steps += [(op, *box) for op in actions_of[symmetries[i][j]]]
        per_grid.append(steps)
    return np.asarray(per_grid, np.int32).transpose(1, 0, 2)
