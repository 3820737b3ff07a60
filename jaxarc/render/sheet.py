"""Task sheets as ARC displays them: one row per pair, ``input -> output``, labelled and sized.

Each row reads ``demo k | input HxW -> output HxW`` (then ``test k``, whose output is drawn
only with ``show_test_outputs`` and a scored pair, else a ``?``), inputs aligned in one
column and outputs in the next, under a title line with the task id. :func:`task_entries`
lists what a sheet shows; :func:`render_task_sheet` draws it as pixels and
:func:`~jaxarc.render.svg.task_sheet_svg` as one SVG document.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from jaxarc.render.raster import BACKGROUND_RGB, crop_grid, render_rgb
from jaxarc.render.text import label_strip, stack

SEPARATOR_RGB = np.array([0x80, 0x80, 0x80], dtype=np.uint8)
SHEET_MARGIN = 6
ARROW = "->"

GridKey = tuple[str, int, str]
"""``("demo" | "test", pair index, "input" | "output")``: one grid of a sheet."""


class SheetGrid(NamedTuple):
    """One grid of a sheet: its key parts and the grid cropped to its size."""

    kind: str  # "demo" | "test"
    pair: int
    which: str  # "input" | "output"
    grid: np.ndarray  # int8 [h, w], cropped

    @property
    def size_label(self) -> str:
        height, width = self.grid.shape
        return f"{self.which} {height}x{width}"


def task_entries(task, show_test_outputs: bool = False) -> list[tuple[SheetGrid, SheetGrid | None]]:
    """The rows of a sheet: ``(input, output or None)`` per demo pair, then per test pair.

    ``task`` is one :class:`jaxarc.data.Task` (padded arrays and shapes); a test output is
    ``None`` unless ``show_test_outputs`` and the pair is scored.
    """
    demo_in = np.asarray(task.demo_inputs)
    if demo_in.ndim != 3:
        raise ValueError(
            f"a task sheet takes one task (demo_inputs [P, H, W]), got {demo_in.shape}; "
            "take one from a TaskBank with bank.task(i) or bank.task_by_id(task_id)"
        )

    def grid(kind, k, which, grids, shapes) -> SheetGrid:
        return SheetGrid(kind, k, which, crop_grid(grids[k], np.asarray(shapes[k])))

    rows: list[tuple[SheetGrid, SheetGrid | None]] = []
    for k in range(int(np.asarray(task.num_demos))):
        rows.append(
            (
                grid("demo", k, "input", task.demo_inputs, task.demo_input_shapes),
                grid("demo", k, "output", task.demo_outputs, task.demo_output_shapes),
            )
        )
    scored = np.asarray(task.test_scored)
    for k in range(int(np.asarray(task.num_tests))):
        shown = show_test_outputs and bool(scored[k])
        output = grid("test", k, "output", task.test_outputs, task.test_output_shapes)
        rows.append(
            (
                grid("test", k, "input", task.test_inputs, task.test_input_shapes),
                output if shown else None,
            )
        )
    if not rows:
        raise ValueError("the task has no demonstration pair and no test input to draw")
    return rows


def sheet_title(task_id: str, rows: list) -> str:
    num_demos = sum(entry[0].kind == "demo" for entry in rows)
    title = f"task {task_id}  " if task_id else "task  "
    return title + f"({num_demos} demo pairs, {len(rows) - num_demos} test)"


def _block(label: str, image: np.ndarray, width: int, font_size: int):
    """A caption above a grid image, ``width`` wide; also the image's (top, left)."""
    canvas, offsets = stack([label_strip(label, width, font_size), image], 0, 2)
    return canvas, offsets[1]


def render_task_sheet(
    task,
    task_id: str = "",
    *,
    cell_size: int = 12,
    show_test_outputs: bool = False,
    font_size: int = 12,
    return_layout: bool = False,
):
    """A task as one ``uint8 [h, w, 3]`` image, one ``input -> output`` row per pair.

    With ``return_layout`` also returns ``{(kind, pair, "input"|"output"): (top, left)}``,
    the pixel position of every grid drawn.
    """
    rows = task_entries(task, show_test_outputs)

    def image(entry: SheetGrid | None) -> np.ndarray:
        if entry is None or entry.grid.size == 0:
            return np.zeros((cell_size, cell_size, 3), np.uint8)
        return render_rgb(entry.grid, cell_size)

    images = [(image(i), None if o is None else image(o)) for i, o in rows]
    in_width = max(a.shape[1] for a, _ in images)
    out_width = max([b.shape[1] for _, b in images if b is not None] + [4 * cell_size])
    label_width = max(label_strip(f"{i.kind} {i.pair}", 0, font_size).shape[1] for i, _ in rows)

    row_images, row_keys = [], []
    for (entry_in, entry_out), (img_in, img_out) in zip(rows, images, strict=True):
        block_in, at_in = _block(entry_in.size_label, img_in, in_width, font_size)
        out_label = "output ?" if entry_out is None else entry_out.size_label
        shown_out = img_out if img_out is not None else label_strip("?", cell_size, font_size + 4)
        block_out, at_out = _block(out_label, shown_out, out_width, font_size)
        parts = [
            label_strip(f"{entry_in.kind} {entry_in.pair}", label_width, font_size),
            block_in,
            label_strip(ARROW, 0, font_size + 2),
            block_out,
        ]
        row, offsets = stack(parts, 1, max(6, cell_size // 2), BACKGROUND_RGB)
        keys = [((entry_in.kind, entry_in.pair, "input"), offsets[1], at_in)]
        if entry_out is not None:
            keys.append(((entry_out.kind, entry_out.pair, "output"), offsets[3], at_out))
        row_images.append(row)
        row_keys.append(keys)
    first_test = next((i for i, (e, _) in enumerate(rows) if e.kind == "test"), None)
    if first_test:  # a thin rule between the demonstrations and the tests
        rule = np.empty((2, max(r.shape[1] for r in row_images), 3), np.uint8)
        rule[:] = SEPARATOR_RGB
        row_images.insert(first_test, rule)
        row_keys.insert(first_test, [])
    body, row_offsets = stack(row_images, 0, max(8, cell_size), BACKGROUND_RGB)

    title = label_strip(sheet_title(task_id, rows), body.shape[1], font_size + 2)
    sheet, (_, body_offset) = stack([title, body], 0, 6)
    framed = np.empty(
        (sheet.shape[0] + 2 * SHEET_MARGIN, sheet.shape[1] + 2 * SHEET_MARGIN, 3), np.uint8
    )
    framed[:] = BACKGROUND_RGB
    framed[SHEET_MARGIN:-SHEET_MARGIN, SHEET_MARGIN:-SHEET_MARGIN] = sheet
    if not return_layout:
        return framed
    layout: dict[GridKey, tuple[int, int]] = {}
    for keys, (row_top, _) in zip(row_keys, row_offsets, strict=True):
        for key, (_, part_left), (top, left) in keys:
            layout[key] = (
                SHEET_MARGIN + body_offset[0] + row_top + top,
                SHEET_MARGIN + body_offset[1] + part_left + left,
            )
    return framed, layout
