"""The environment actions the search tries on a task: a finite set built from its
demonstrations and its test inputs, never from a test output.

Every candidate is one bbox action ``(operation, r1, c1, r2, c2)`` of the environment per
grid of the task (demonstration inputs, then test inputs), so a sequence of candidates is a
program the environment itself runs on each grid. Most candidates use the same coordinates
on every grid; the crop candidates take each grid's own box from a content rule
(:mod:`jaxarc.solve.selectors`). The set was designed on the ARC-AGI-1 training tasks (see
``docs/solve.md``):

* **crops by content** (first, so that a budget reaches them): for each selector whose box
  exists in every grid and has the shape of every demonstration output, COPY of each
  grid's box and RESIZE to each box's shape (a crop is COPY box, PASTE at (0, 0), RESIZE);
* **whole grid** (the box ``(0, 0, 29, 29)``, cut to each grid's active area): MOVE x4,
  ROTATE x2, FLIP x2, COPY, CUT, CLEAR, COPY_INPUT, FILL with each colour of the outputs;
  rotations and flips of the whole grid (and their pairs: transposes, half turns) are the
  most common whole-grid transforms among the training tasks;
* **RESIZE** to the demonstration outputs' shape when they share one (crops at the top-left
  corner, growth before tiling), and to the transposed input shape when the inputs share a
  shape (after a rotation of a non-square grid);
* **PASTE** at the tile offsets of an output that is a whole multiple of a shared input
  shape (tiling: COPY, RESIZE, PASTE...), and at the top-left corner;
* **COPY of a window** where the first demonstration's output occurs inside its input
  (a crop is COPY window, PASTE at (0, 0), RESIZE);
* **edits at fixed cells**: FLOOD and FILL at every cell that every same-shaped
  demonstration changes to the same colour, and FILL of the box of changed cells when all
  demonstrations change the same box to one colour;
* **FLOOD at (0, 0)** with each colour of the outputs (recolouring the background).

Duplicates are removed; the order is the order above (the search keeps it, so under a
budget the crops and then the whole-grid transforms are tried first).
"""

from __future__ import annotations

import numpy as np
from jaxtyping import Int32

from jaxarc.grid import operation_ids as ops
from jaxarc.solve.problem import Problem
from jaxarc.solve.selectors import SELECTOR_NAMES, Box, select_boxes

WHOLE = (0, 0, 29, 29)  # a box covering any ARC grid: cut to the active area
MAX_CELL_EDITS = 48  # fixed-cell FLOOD/FILL candidates kept (most changed cells first)
MAX_WINDOWS = 8  # COPY windows kept
MAX_CROPS = 4  # crop selectors kept (the first of SELECTOR_NAMES that fit)

WHOLE_GRID_OPERATIONS = (
    ops.ROTATE_CW,
    ops.ROTATE_CCW,
    ops.FLIP_LR,
    ops.FLIP_TB,
    ops.MOVE_UP,
    ops.MOVE_DOWN,
    ops.MOVE_LEFT,
    ops.MOVE_RIGHT,
    ops.COPY,
    ops.CUT,
    ops.CLEAR,
    ops.COPY_INPUT,
)


def _common_shape(grids: tuple[np.ndarray, ...]) -> tuple[int, int] | None:
    shapes = {g.shape for g in grids}
    return next(iter(shapes)) if len(shapes) == 1 else None  # type: ignore[return-value]


def _output_colours(problem: Problem) -> list[int]:
    return sorted({int(c) for g in problem.demo_outputs for c in np.unique(g)})


def _cell_edits(problem: Problem) -> list[tuple[int, int, int, int, int]]:
    """FLOOD/FILL at cells every demonstration changes to one colour; FILL of a shared box."""
    pairs = [(a, b) for a, b in zip(problem.demo_inputs, problem.demo_outputs, strict=True)]
    if any(a.shape != b.shape for a, b in pairs):
        return []
    rows = min(a.shape[0] for a, _ in pairs)
    cols = min(a.shape[1] for a, _ in pairs)
    # colour each demonstration writes at each cell of the common area (-1: unchanged)
    written = np.stack(
        [np.where(a[:rows, :cols] != b[:rows, :cols], b[:rows, :cols], -1) for a, b in pairs]
    )
    agreed = (written >= 0).all(0) & (written == written[:1]).all(0)
    edits: list[tuple[int, int, int, int, int]] = []
    for r, c in zip(*np.nonzero(agreed), strict=True):
        colour = int(written[0, r, c])
        edits.append((ops.FLOOD_0 + colour, int(r), int(c), int(r), int(c)))
        edits.append((ops.FILL_0 + colour, int(r), int(c), int(r), int(c)))
    edits = edits[:MAX_CELL_EDITS]
    boxes = set()
    for a, b in pairs:
        changed = np.argwhere(a != b)
        if changed.size == 0:
            return edits
        (r1, c1), (r2, c2) = changed.min(0), changed.max(0)
        box_colours = np.unique(b[r1 : r2 + 1, c1 : c2 + 1])
        if box_colours.size != 1:
            return edits
        boxes.add((int(box_colours[0]), int(r1), int(c1), int(r2), int(c2)))
    if len(boxes) == 1:
        colour, r1, c1, r2, c2 = boxes.pop()
        edits.append((ops.FILL_0 + colour, r1, c1, r2, c2))
    return edits


def _windows(problem: Problem, out_shape: tuple[int, int]) -> list[tuple[int, int, int, int, int]]:
    """COPY of each window of the first demonstration's input equal to its output."""
    first_in, first_out = problem.demo_inputs[0], problem.demo_outputs[0]
    h, w = out_shape
    rows, cols = first_in.shape
    found = []
    for r in range(rows - h + 1):
        for c in range(cols - w + 1):
            if np.array_equal(first_in[r : r + h, c : c + w], first_out):
                found.append((ops.COPY, r, c, r + h - 1, c + w - 1))
    return found[:MAX_WINDOWS]


def crop_boxes(problem: Problem) -> list[tuple[str, list[Box]]]:
    """``(selector, one box per grid)`` for the selectors whose box exists in every grid of
    ``problem`` (demonstration inputs, then test inputs) and has the shape of each
    demonstration's output; at most :data:`MAX_CROPS`, boxes that repeat an earlier
    selector's left out."""
    grids = (*problem.demo_inputs, *problem.test_inputs)
    selected = [select_boxes(grid) for grid in grids]
    kept: list[tuple[str, list[Box]]] = []
    for name in SELECTOR_NAMES:
        boxes = [found[name] for found in selected]
        if any(box is None for box in boxes):
            continue
        shapes = [(r2 - r1 + 1, c2 - c1 + 1) for r1, c1, r2, c2 in boxes]  # type: ignore[misc]
        if any(shapes[k] != out.shape for k, out in enumerate(problem.demo_outputs)):
            continue
        if any(boxes == other for _, other in kept):
            continue
        kept.append((name, boxes))  # type: ignore[arg-type]
        if len(kept) == MAX_CROPS:
            break
    return kept


def _crop_actions(problem: Problem) -> list[np.ndarray]:
    """Per crop selector, two candidates of ``[N, 5]`` rows: COPY each grid's box and RESIZE
    each grid to its box's shape."""
    tables = []
    for _, boxes in crop_boxes(problem):
        tables.append(np.asarray([(ops.COPY, *box) for box in boxes], np.int32))
        tables.append(
            np.asarray([(ops.RESIZE, 0, 0, r2 - r1, c2 - c1) for r1, c1, r2, c2 in boxes], np.int32)
        )
    return tables


def candidate_actions(problem: Problem) -> Int32[np.ndarray, "C N 5"]:
    """The candidate actions of ``problem``: for each candidate, one row
    ``(operation, r1, c1, r2, c2)`` per grid (``N``: demonstration inputs, then test
    inputs)."""
    grids = problem.num_demos + problem.num_tests
    per_grid = _crop_actions(problem)
    found: list[tuple[int, int, int, int, int]] = [(op, *WHOLE) for op in WHOLE_GRID_OPERATIONS]
    colours = _output_colours(problem)
    found += [(ops.FILL_0 + c, *WHOLE) for c in colours]
    out_shape = _common_shape(problem.demo_outputs)
    in_shape = _common_shape(problem.demo_inputs + problem.test_inputs)
    if out_shape is not None:
        found.append((ops.RESIZE, 0, 0, out_shape[0] - 1, out_shape[1] - 1))
    if in_shape is not None and in_shape[0] != in_shape[1]:
        found.append((ops.RESIZE, 0, 0, in_shape[1] - 1, in_shape[0] - 1))
    found.append((ops.PASTE, 0, 0, 0, 0))
    if out_shape is not None and in_shape is not None:
        (h, w), (big_h, big_w) = in_shape, out_shape
        if big_h % h == 0 and big_w % w == 0 and (big_h, big_w) != (h, w):
            found += [
                (ops.PASTE, i * h, j * w, i * h, j * w)
                for i in range(big_h // h)
                for j in range(big_w // w)
                if (i, j) != (0, 0)
            ]
    if out_shape is not None:
        found += _windows(problem, out_shape)
    found += _cell_edits(problem)
    found += [(ops.FLOOD_0 + c, 0, 0, 0, 0) for c in colours]
    shared = np.asarray(list(dict.fromkeys(found)), dtype=np.int32).reshape(-1, 1, 5)
    table = np.concatenate([*(t[None] for t in per_grid), np.repeat(shared, grids, 1)])
    _, first = np.unique(table.reshape(len(table), -1), axis=0, return_index=True)
    return table[np.sort(first)]
