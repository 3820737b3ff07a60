"""Tilings: outputs made of copies of a source (the input, or a box its content selects),
each copy turned or mirrored, written as environment actions and solved tile by tile.

Among the ARC-AGI-1 training tasks, 12 have outputs that are an ``R x C`` grid of tiles, each
tile one of the eight symmetries of the input (the input itself, mirrored, turned, or
transposed; see ``docs/solve.md``), and 3 more tile a crop of the input: the box of its
non-zero cells, once mirrored, or twice side by side. In environment actions such an
output takes COPY of the source, RESIZE to ``R x C`` tiles, and per tile a PASTE and up to
two actions on the tile's box: 3 to 28 actions, deeper than a breadth-first search over all
candidates reaches.

The tiles are independent (each PASTE writes the untouched source from the clipboard into
its own box), so the search decomposes: for each source in turn (the whole input first,
then the crop selectors of :mod:`jaxarc.solve.selectors`) and each tile, it finds the first
symmetry that matches that tile in every demonstration output. The program is then built
per grid (each grid's own source box and tile size) and, like every search solution,
replayed by the environment, which keeps it only if it turns every demonstration input
into its output.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence

import numpy as np
from jaxtyping import Int32

from jaxarc.grid import operation_ids as ops
from jaxarc.solve.problem import MAX_SIDE, Problem
from jaxarc.solve.selectors import SELECTOR_NAMES, Box, select_boxes

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
_SYMMETRY_MAPS = tuple((name, mapped, square) for name, mapped, _, square in SYMMETRIES)


@dataclasses.dataclass(frozen=True)
class Tiling:
    """How a task's outputs tile its source: ``source`` is ``"input"`` (the whole grid) or a
    crop selector (:mod:`jaxarc.solve.selectors`); ``boxes`` the source's box in each grid
    (demonstration inputs, then test inputs); ``symmetries`` the name of each tile's
    symmetry, row by row."""

    source: str
    boxes: tuple[Box, ...]
    symmetries: tuple[tuple[str, ...], ...]


def common_factors(
    sources: list[np.ndarray] | tuple[np.ndarray, ...], outputs: tuple[np.ndarray, ...]
) -> tuple[int, int] | None:
    """``(rows, cols)`` when every output is ``rows x cols`` times its source's shape (the
    same factors for every pair, ``(1, 1)`` included), else ``None``."""
    counts = set()
    for source, out in zip(sources, outputs, strict=False):  # (the demonstrations' sources)
        (h, w), (big_h, big_w) = source.shape, out.shape
        if big_h % h or big_w % w:
            return None
        counts.add((big_h // h, big_w // w))
    return counts.pop() if len(counts) == 1 else None


def _tile_counts(
    sources: list[np.ndarray], outputs: tuple[np.ndarray, ...]
) -> tuple[int, int] | None:
    counts = common_factors(sources, outputs)
    return counts if counts is not None and max(counts) <= MAX_TILES else None


def block_transforms(
    sources: list[np.ndarray] | tuple[np.ndarray, ...],
    outputs: tuple[np.ndarray, ...],
    rows: int,
    cols: int,
    transforms: Sequence[tuple[str, Callable[[np.ndarray], np.ndarray], bool]],
) -> tuple[tuple[str, ...], ...] | None:
    """The name of the first of ``transforms`` (name, map, whether it needs square
    sources) that gives block ``(i, j)`` of every output from its source, per block row by
    row (``rows x cols`` blocks of the source's shape); ``None`` when some block has none.
    ``sources``: the demonstrations' first, then the test inputs' (a transform that needs
    square sources is tried only when they all are); ``outputs``: the demonstrations'."""
    square = all(g.shape[0] == g.shape[1] for g in sources)
    usable = [
        (name, mapped) for name, mapped, needs_square in transforms if square or not needs_square
    ]
    images = [{name: mapped(g) for name, mapped in usable} for g in sources[: len(outputs)]]
    found = []
    for i in range(rows):
        row = []
        for j in range(cols):
            name = next(
                (
                    name
                    for name, _ in usable
                    if all(
                        np.array_equal(
                            made[name],
                            out[
                                i * g.shape[0] : (i + 1) * g.shape[0],
                                j * g.shape[1] : (j + 1) * g.shape[1],
                            ],
                        )
                        for g, out, made in zip(sources, outputs, images, strict=False)
                    )
                ),
                None,
            )
            if name is None:
                return None
            row.append(name)
        found.append(tuple(row))
    return tuple(found)


def _tiled_sources(
    problem: Problem,
) -> Iterator[tuple[str, list[Box], list[np.ndarray], int, int]]:
    """``(source, each grid's box, each grid's crop, R, C)`` for every source (the whole
    input, then each crop selector whose box exists in every grid and repeats no earlier
    source's) whose ``R x C`` tiles have every demonstration output's shape (at most
    :data:`MAX_TILES` a side; the whole input not ``1 x 1``; every grid's tiling within the
    ARC canvas), in that order."""
    grids = (*problem.demo_inputs, *problem.test_inputs)
    selected = [select_boxes(g) for g in grids]
    options: list[tuple[str, list[Box | None]]] = [
        ("input", [(0, 0, g.shape[0] - 1, g.shape[1] - 1) for g in grids])
    ]
    options += [(name, [found[name] for found in selected]) for name in SELECTOR_NAMES]
    seen: list[list[Box | None]] = []
    for source, boxes in options:
        if any(box is None for box in boxes) or boxes in seen:
            continue
        seen.append(boxes)
        crops = [
            g[r1 : r2 + 1, c1 : c2 + 1] for g, (r1, c1, r2, c2) in zip(grids, boxes, strict=True)
        ]  # type: ignore[misc]
        counts = _tile_counts(crops, problem.demo_outputs)
        if counts is None or (source == "input" and counts == (1, 1)):
            continue
        rows, cols = counts
        if any(c.shape[0] * rows > MAX_SIDE or c.shape[1] * cols > MAX_SIDE for c in crops):
            continue
        yield source, boxes, crops, rows, cols


def find_tiling(problem: Problem) -> Tiling | None:
    """The first source (the whole input, then each crop selector) whose ``R x C`` tiles of
    symmetries make every demonstration output (at most :data:`MAX_TILES` a side; not the
    source itself unchanged; the test inputs' tilings fit the ARC canvas); else ``None``."""
    for source, boxes, crops, rows, cols in _tiled_sources(problem):
        symmetries = block_transforms(crops, problem.demo_outputs, rows, cols, _SYMMETRY_MAPS)
        if symmetries is None or symmetries == (("identity",),):
            continue
        return Tiling(source, tuple(boxes), symmetries)  # type: ignore[arg-type]
    return None


def _tile_steps(tiling: Tiling) -> list[tuple[int, int, int]]:
    """``(operation, i, j)`` of each action after COPY and RESIZE, in order: per tile
    ``(i, j)`` a PASTE (not for the whole input's first tile, which is the input itself)
    and the actions of its symmetry."""
    actions_of = {name: actions for name, _, actions, _ in SYMMETRIES}
    steps = []
    for i, row in enumerate(tiling.symmetries):
        for j, symmetry in enumerate(row):
            if (i, j) != (0, 0) or tiling.source != "input":
                steps.append((ops.PASTE, i, j))
            steps += [(op, i, j) for op in actions_of[symmetry]]
    return steps


def describe_tiling(tiling: Tiling) -> list[str]:
    """The steps of :func:`tiling_program` in words, one per action:
    ``["COPY(input)", "RESIZE(2x2 tiles)", "PASTE(tile 0,1)", "FLIP_LR(tile 0,1)", ...]``."""
    rows, cols = len(tiling.symmetries), len(tiling.symmetries[0])
    return [f"COPY({tiling.source})", f"RESIZE({rows}x{cols} tiles)"] + [
        f"{ops.OPERATION_NAMES[op]}(tile {i},{j})" for op, i, j in _tile_steps(tiling)
    ]


def tiling_program(tiling: Tiling) -> np.ndarray:
    """The tiling's environment actions, ``[T, N, 5]`` (per step one row per grid:
    demonstration inputs, then test inputs): each grid copies its source box, is resized to
    the tiles, and gets each tile pasted at its corner and turned in its box."""
    rows, cols = len(tiling.symmetries), len(tiling.symmetries[0])
    tile_steps = _tile_steps(tiling)
    per_grid = []
    for r1, c1, r2, c2 in tiling.boxes:
        h, w = r2 - r1 + 1, c2 - c1 + 1
        steps = [(ops.COPY, r1, c1, r2, c2), (ops.RESIZE, 0, 0, rows * h - 1, cols * w - 1)]
        for op, i, j in tile_steps:
            top, left = i * h, j * w
            box = (
                (top, left, top, left)
                if op == ops.PASTE
                else (top, left, top + h - 1, left + w - 1)
            )
            steps.append((op, *box))
        per_grid.append(steps)
    return np.asarray(per_grid, np.int32).transpose(1, 0, 2)


MAX_LAYOUT_SOURCES = 3  # sources whose tile layout a learner's vocabulary holds


def _layout_sources(problem: Problem) -> list[tuple[list[Box], int, int]]:
    """``(each grid's source box, R, C)`` of the first :data:`MAX_LAYOUT_SOURCES` sources
    of :func:`_tiled_sources` that the outputs tile more than once (not ``1 x 1``)."""
    found = [(b, r, c) for _, b, _, r, c in _tiled_sources(problem) if (r, c) != (1, 1)]
    return found[:MAX_LAYOUT_SOURCES]


def tile_layout_actions(problem: Problem) -> Int32[np.ndarray, "K N 5"]:
    """The actions that build a tiling, one by one, as candidates for a learner that
    composes them itself. For each source whose tiles every demonstration output is (the
    whole input, then a box a crop selector picks in each grid: :func:`_layout_sources`),
    ``R x C`` tiles of it: RESIZE to ``R x C`` tiles, COPY of the source's box (for the
    input, the first tile's box, before or after the RESIZE: a COPY that need not come
    first, where the whole grid's COPY must), and per tile ``(i, j)`` a PASTE at its corner
    and FLIP_LR, FLIP_TB (and, when every source is square, ROTATE_CW and ROTATE_CCW) of
    its box. Each row holds one action per grid (demonstration inputs, then test inputs),
    at that grid's own tile size; ``[0, N, 5]`` when the outputs tile no source."""
    grids = (*problem.demo_inputs, *problem.test_inputs)
    table: list[list[tuple[int, int, int, int, int]]] = []
    for boxes, rows, cols in _layout_sources(problem):
        shapes = [(r2 - r1 + 1, c2 - c1 + 1) for r1, c1, r2, c2 in boxes]
        turns = (ops.ROTATE_CW, ops.ROTATE_CCW) if all(h == w for h, w in shapes) else ()
        table.append([(ops.RESIZE, 0, 0, rows * h - 1, cols * w - 1) for h, w in shapes])
        table.append([(ops.COPY, *box) for box in boxes])
        for i in range(rows):
            for j in range(cols):
                table.append([(ops.PASTE, i * h, j * w, i * h, j * w) for h, w in shapes])
                for op in (ops.FLIP_LR, ops.FLIP_TB, *turns):
                    table.append(
                        [(op, i * h, j * w, (i + 1) * h - 1, (j + 1) * w - 1) for h, w in shapes]
                    )
    return np.asarray(table, np.int32).reshape(len(table), len(grids), 5)
