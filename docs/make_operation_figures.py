"""Draw one before/after picture per grid operation into ``docs/images/operations/``.

Run: ``python docs/make_operation_figures.py``. Each picture is computed by the real
:func:`jaxarc.grid.operations.apply_operation`: the selection is outlined in white on the
"before" panel, the state's selection field on the "after" panel; COPY, CUT and PASTE also show
the clipboard, COPY_INPUT the episode's input.
"""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from PIL import Image, ImageDraw

from jaxarc.grid import operation_ids as ops
from jaxarc.grid.operations import GridState, apply_operation
from jaxarc.render.palette import ARC_PALETTE, PADDING_RGB

OUT_DIR = Path(__file__).resolve().parent / "images" / "operations"
CANVAS = (7, 8)
CELL = 12
GAP = 18
LABEL_HEIGHT = 12
OUTLINE = (255, 255, 255)
TEXT = (40, 40, 40)


def _base_grid() -> np.ndarray:
    grid = np.full(CANVAS, -1, np.int8)
    grid[:6, :7] = 0
    grid[1, 1:4] = 2  # an L of colour 2
    grid[2, 1] = 2
    grid[4:6, 4:6] = 3  # a 2x2 block of colour 3
    grid[0, 5] = 1
    grid[3, 6] = 8
    return grid


def _input_grid() -> np.ndarray:
    grid = np.full(CANVAS, -1, np.int8)
    grid[:4, :5] = 4
    grid[1:3, 1:4] = 6
    return grid


def _mask(cells) -> np.ndarray:
    mask = np.zeros(CANVAS, bool)
    for r, c in cells:
        mask[r, c] = True
    return mask


def _box(r1: int, c1: int, r2: int, c2: int) -> np.ndarray:
    mask = np.zeros(CANVAS, bool)
    mask[r1 : r2 + 1, c1 : c2 + 1] = True
    return mask


def _scene(op: int) -> tuple[GridState, np.ndarray]:
    """The state before ``op`` and the action's selection that shows it best."""
    grid = _base_grid()
    state = GridState.create(jnp.asarray(grid), jnp.array([6, 7]))
    if ops.FILL_0 <= op < ops.FLOOD_0:
        return state, _box(2, 2, 3, 5)
    if ops.FLOOD_0 <= op < ops.MOVE_UP:
        return state, _mask([(1, 2)] if op == ops.FLOOD_0 + 2 else [(3, 3)])
    if ops.MOVE_UP <= op <= ops.MOVE_RIGHT:
        return state, grid == 2
    if ops.ROTATE_CW <= op <= ops.FLIP_TB:
        return state, _box(1, 1, 2, 3)
    if op in (ops.COPY, ops.CUT):
        return state, _box(4, 3, 5, 5)
    if op == ops.PASTE:
        copied = apply_operation(
            state, jnp.int32(ops.COPY), jnp.asarray(grid == 2), state.grid, state.shape
        )
        return copied, _mask([(3, 3)])
    if op == ops.RESIZE:
        return state, _mask([(4, 2)])
    return state, np.zeros(CANVAS, bool)  # CLEAR, COPY_INPUT, SUBMIT need no selection


def _draw_grid(draw: ImageDraw.ImageDraw, grid: np.ndarray, outline: np.ndarray, x0: int, y0: int):
    height, width = grid.shape
    for r in range(height):
        for c in range(width):
            value = int(grid[r, c])
            colour = tuple(int(v) for v in (ARC_PALETTE[value] if value >= 0 else PADDING_RGB))
            x, y = x0 + c * CELL, y0 + r * CELL
            draw.rectangle([x, y, x + CELL - 1, y + CELL - 1], fill=colour, outline=(60, 60, 60))
    for r, c in zip(*np.nonzero(outline), strict=True):
        x, y = x0 + c * CELL, y0 + r * CELL
        edges = [
            (r == 0 or not outline[r - 1, c], (x, y, x + CELL - 1, y)),
            (
                r == height - 1 or not outline[r + 1, c],
                (x, y + CELL - 1, x + CELL - 1, y + CELL - 1),
            ),
            (c == 0 or not outline[r, c - 1], (x, y, x, y + CELL - 1)),
            (
                c == width - 1 or not outline[r, c + 1],
                (x + CELL - 1, y, x + CELL - 1, y + CELL - 1),
            ),
        ]
        for on_border, line in edges:
            if on_border:
                draw.line(line, fill=OUTLINE, width=2)


def draw_operation(op: int) -> Image.Image:
    """The picture of ``op``: labelled panels drawn side by side."""
    before, selection = _scene(op)
    input_grid = _input_grid()
    after = apply_operation(
        before, jnp.int32(op), jnp.asarray(selection), jnp.asarray(input_grid), jnp.array([4, 5])
    )
    empty = np.zeros(CANVAS, bool)
    panels = [("before", np.asarray(before.grid), selection)]
    if op == ops.PASTE:
        panels.append(
            ("clipboard", np.asarray(before.clipboard), np.asarray(before.clipboard_mask))
        )
    if op == ops.COPY_INPUT:
        panels.append(("input", input_grid, empty))
    panels.append(("after", np.asarray(after.grid), np.asarray(after.selection)))
    if op in (ops.COPY, ops.CUT):
        panels.append(("clipboard", np.asarray(after.clipboard), np.asarray(after.clipboard_mask)))

    panel_w, panel_h = CANVAS[1] * CELL, CANVAS[0] * CELL
    image = Image.new(
        "RGB",
        (len(panels) * panel_w + (len(panels) + 1) * GAP, panel_h + LABEL_HEIGHT + 8),
        "white",
    )
    draw = ImageDraw.Draw(image)
    for k, (label, grid, outline) in enumerate(panels):
        x0 = GAP + k * (panel_w + GAP)
        draw.text((x0, 1), label, fill=TEXT)
        _draw_grid(draw, grid, outline, x0, LABEL_HEIGHT + 4)
        if k:
            arrow_y = LABEL_HEIGHT + 4 + panel_h // 2
            draw.line((x0 - GAP + 4, arrow_y, x0 - 4, arrow_y), fill=TEXT, width=1)
    return image.quantize(colors=32)


def figure_path(op: int) -> Path:
    return OUT_DIR / f"{op:02d}_{ops.OPERATION_NAMES[op].lower()}.png"


def main() -> None:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with jax.default_device(jax.devices("cpu")[0]):
        for op in range(ops.NUM_OPERATIONS):
            draw_operation(op).save(figure_path(op), optimize=True)
    total = sum(figure_path(op).stat().st_size for op in range(ops.NUM_OPERATIONS))
    print(f"wrote {ops.NUM_OPERATIONS} figures to {OUT_DIR} ({total / 1024:.1f} KiB in all)")


if __name__ == "__main__":
    main()
