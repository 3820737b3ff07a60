"""A plain-NumPy reference of the 35 grid operations, written for clarity (loops, BFS).

It shares no code with ``jaxarc.grid.operations``; the tests compare the two. A state is a dict
with ``grid``, ``shape``, ``selection``, ``clipboard`` and ``clipboard_mask`` (NumPy arrays).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from jaxarc.grid import operation_ids as ops


def _bounding_box(selection: np.ndarray) -> tuple[int, int, int, int]:
    rows, cols = np.nonzero(selection)
    return int(rows.min()), int(rows.max()), int(cols.min()), int(cols.max())


def same_colour_region(grid: np.ndarray, start: tuple[int, int]) -> set[tuple[int, int]]:
    """Breadth-first search of the 4-connected same-colour region of ``start``."""
    colour = grid[start]
    seen = {start}
    queue = deque([start])
    while queue:
        r, c = queue.popleft()
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            inside = 0 <= nr < grid.shape[0] and 0 <= nc < grid.shape[1]
            if inside and (nr, nc) not in seen and grid[nr, nc] == colour:
                seen.add((nr, nc))
                queue.append((nr, nc))
    return seen


def reference_operation(
    state: dict, operation: int, selection: np.ndarray, input_grid: np.ndarray, input_shape
) -> dict:
    """The state after ``operation``; ``state`` is not modified."""
    grid = state["grid"].copy()
    height, width = (int(v) for v in state["shape"])
    clipboard = state["clipboard"].copy()
    clipboard_mask = state["clipboard_mask"].copy()
    if not 0 <= operation < ops.SUBMIT:
        return {k: np.copy(v) for k, v in state.items()}

    active = np.zeros(grid.shape, bool)
    active[:height, :width] = True
    sel = selection & active
    new_sel = sel.copy()
    has_sel = bool(sel.any())
    op = operation

    if op < ops.FLOOD_0:
        grid[sel] = op
    elif op < ops.MOVE_UP:
        region = set()
        for r, c in zip(*np.nonzero(sel), strict=True):
            region |= same_colour_region(grid[:height, :width], (int(r), int(c)))
        for r, c in region:
            grid[r, c] = op - ops.FLOOD_0
    elif op <= ops.MOVE_RIGHT:
        dr, dc = {
            ops.MOVE_UP: (-1, 0),
            ops.MOVE_DOWN: (1, 0),
            ops.MOVE_LEFT: (0, -1),
            ops.MOVE_RIGHT: (0, 1),
        }[op]
        old = grid.copy()
        grid[sel] = 0
        new_sel = np.zeros_like(sel)
        for r, c in zip(*np.nonzero(sel), strict=True):
            nr, nc = r + dr, c + dc
            if 0 <= nr < height and 0 <= nc < width:
                grid[nr, nc] = old[r, c]
                new_sel[nr, nc] = True
    elif op <= ops.FLIP_TB and has_sel:
        top, bottom, left, right = _bounding_box(sel)
        box = grid[top : bottom + 1, left : right + 1].copy()
        if op == ops.ROTATE_CW:
            box = np.rot90(box, k=-1)
        elif op == ops.ROTATE_CCW:
            box = np.rot90(box, k=1)
        elif op == ops.FLIP_LR:
            box = box[:, ::-1]
        else:
            box = box[::-1, :]
        grid[top : bottom + 1, left : right + 1] = 0
        for i in range(box.shape[0]):
            for j in range(box.shape[1]):
                if top + i < height and left + j < width:
                    grid[top + i, left + j] = box[i, j]
    elif op in (ops.COPY, ops.CUT) and has_sel:
        top, bottom, left, right = _bounding_box(sel)
        clipboard = np.full(grid.shape, -1, np.int8)
        clipboard_mask = np.zeros(grid.shape, bool)
        clipboard[: bottom - top + 1, : right - left + 1] = grid[top : bottom + 1, left : right + 1]
        clipboard_mask[: bottom - top + 1, : right - left + 1] = sel[
            top : bottom + 1, left : right + 1
        ]
        if op == ops.CUT:
            grid[sel] = 0
    elif op == ops.PASTE and has_sel:
        top, _, left, _ = _bounding_box(sel)
        for i, j in zip(*np.nonzero(clipboard_mask), strict=True):
            if top + i < height and left + j < width:
                grid[top + i, left + j] = clipboard[i, j]
    elif op == ops.CLEAR:
        grid[:height, :width] = 0
    elif op == ops.COPY_INPUT:
        height, width = (int(v) for v in input_shape)
        grid = np.full(grid.shape, -1, np.int8)
        grid[:height, :width] = input_grid[:height, :width]
    elif op == ops.RESIZE and selection.any():
        rows, cols = np.nonzero(selection)
        new_h, new_w = int(rows.max()) + 1, int(cols.max()) + 1
        resized = np.full(grid.shape, -1, np.int8)
        resized[:new_h, :new_w] = 0
        keep_h, keep_w = min(height, new_h), min(width, new_w)
        resized[:keep_h, :keep_w] = grid[:keep_h, :keep_w]
        grid, height, width = resized, new_h, new_w

    new_active = np.zeros(grid.shape, bool)
    new_active[:height, :width] = True
    return {
        "grid": grid.astype(np.int8),
        "shape": np.array([height, width], np.int32),
        "selection": new_sel & new_active,
        "clipboard": clipboard.astype(np.int8),
        "clipboard_mask": clipboard_mask,
    }
