"""Boxes a grid's content selects: the per-grid coordinates of the search's crop candidates.

A fixed-coordinate action is one program for every grid of a task only when the part to act
on sits at the same place in every grid. Many ARC tasks select by content instead: "the
box of the red cells", "the largest object". A **selector** names such a rule; applied to
one grid it gives that grid's box ``(r1, c1, r2, c2)`` (inclusive), or ``None`` where the
rule selects nothing (or is ambiguous: two largest objects). The search turns a selector
into one bbox action per grid, so what it plays is still the environment's own actions.

The selectors were chosen by studying the ARC-AGI-1 training tasks whose output is a
crop of the input (see ``docs/solve.md``):

* ``content``: the cells that are not 0 (the usual background);
* ``colour c``: the cells of colour ``c`` (1-9);
* ``inside colour c``: the box of colour ``c`` without its outer ring (a frame's inside);
* ``largest object`` / ``smallest object``: the 8-connected component of one non-zero
  colour with the most / fewest cells, when exactly one has that count;
* ``largest shape`` / ``smallest shape``: the same for components of any non-zero colours.
"""

from __future__ import annotations

import functools

import numpy as np

Box = tuple[int, int, int, int]  # (r1, c1, r2, c2), inclusive

_NEIGHBOURS = tuple((dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0))


def cells_box(mask: np.ndarray) -> Box | None:
    """The bounding box of the ``True`` cells of ``mask`` (``None`` if there is none)."""
    found = np.argwhere(mask)
    if found.size == 0:
        return None
    (r1, c1), (r2, c2) = found.min(0), found.max(0)
    return int(r1), int(c1), int(r2), int(c2)


def components(grid: np.ndarray, *, one_colour: bool) -> list[np.ndarray]:
    """The 8-connected components of the non-zero cells of ``grid`` as boolean masks; with
    ``one_colour`` a component holds one colour, else any non-zero colours."""
    rows, cols = grid.shape
    label = np.full(grid.shape, -1, np.int32)
    found: list[np.ndarray] = []
    for start in zip(*np.nonzero(grid), strict=True):
        if label[start] >= 0:
            continue
        index = len(found)
        label[start] = index
        stack = [start]
        while stack:
            r, c = stack.pop()
            for dr, dc in _NEIGHBOURS:
                rr, cc = r + dr, c + dc
                if not (0 <= rr < rows and 0 <= cc < cols) or label[rr, cc] >= 0:
                    continue
                if grid[rr, cc] == 0 or (one_colour and grid[rr, cc] != grid[start]):
                    continue
                label[rr, cc] = index
                stack.append((rr, cc))
        found.append(label == index)
    return found


def _extreme(masks: list[np.ndarray], pick) -> Box | None:
    if not masks:
        return None
    sizes = [int(m.sum()) for m in masks]
    chosen = pick(sizes)
    if sizes.count(chosen) != 1:
        return None
    return cells_box(masks[sizes.index(chosen)])


def _inside(box: Box | None) -> Box | None:
    if box is None or box[2] - box[0] < 2 or box[3] - box[1] < 2:
        return None
    return box[0] + 1, box[1] + 1, box[2] - 1, box[3] - 1


SELECTOR_NAMES: tuple[str, ...] = (
    "content",
    *(f"colour {c}" for c in range(1, 10)),
    *(f"inside colour {c}" for c in range(1, 10)),
    "largest object",
    "smallest object",
    "largest shape",
    "smallest shape",
)


def select_boxes(grid: np.ndarray) -> dict[str, Box | None]:
    """Every selector of :data:`SELECTOR_NAMES` applied to ``grid`` (``[H, W]`` colours).

    Kept per grid content: the search asks for the same grids' boxes when it builds its
    candidates, finds a tiling and names its solutions."""
    grid = np.asarray(grid, np.int8)
    return dict(_select_boxes(grid.shape, grid.tobytes()))


@functools.lru_cache(maxsize=1024)
def _select_boxes(shape: tuple[int, int], cells: bytes) -> tuple[tuple[str, Box | None], ...]:
    grid = np.frombuffer(cells, np.int8).reshape(shape)
    boxes: dict[str, Box | None] = {"content": cells_box(grid != 0)}
    for c in range(1, 10):
        boxes[f"colour {c}"] = cells_box(grid == c)
    for c in range(1, 10):
        boxes[f"inside colour {c}"] = _inside(boxes[f"colour {c}"])
    objects = components(grid, one_colour=True)
    shapes = components(grid, one_colour=False)
    boxes["largest object"] = _extreme(objects, max)
    boxes["smallest object"] = _extreme(objects, min)
    boxes["largest shape"] = _extreme(shapes, max)
    boxes["smallest shape"] = _extreme(shapes, min)
    return tuple(boxes.items())
