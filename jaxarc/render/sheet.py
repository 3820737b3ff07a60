"""Task sheets: every demonstration pair and test input of one task side by side, labelled."""

from __future__ import annotations

import numpy as np

from jaxarc.render.raster import BACKGROUND_RGB, render_rgb
from jaxarc.render.text import label_strip, stack

SEPARATOR_RGB = np.array([0x80, 0x80, 0x80], dtype=np.uint8)
SHEET_MARGIN = 6

GridKey = tuple[str, int, str]
"""``("demo" | "test", pair index, "input" | "output")``: one grid of a sheet."""


def _column(
    title: str, grids: list[np.ndarray], cell_size: int, font_size: int
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """One labelled column of rendered grids; also each grid's (top, left) in the column."""
    width = max(img.shape[1] for img in grids)
    canvas, offsets = stack([label_strip(title, width, font_size), *grids], 0, cell_size // 2 + 2)
    return canvas, offsets[1:]


def render_task_sheet(
    task,
    task_id: str = "",
    *,
    cell_size: int = 12,
    show_test_outputs: bool = False,
    font_size: int = 12,
    return_layout: bool = False,
):
    """A task as one ``uint8 [h, w, 3]`` image.

    Columns ``demo 0 .. demo P-1`` (input above output), then ``test 0 .. test Q-1`` (input,
    and its output when ``show_test_outputs`` and the pair is scored), under a title line
    with ``task_id``. ``task`` is one :class:`jaxarc.data.Task` (padded arrays and shapes).
    With ``return_layout`` also returns ``{(kind, pair, "input"|"output"): (top, left)}``,
    the pixel position of every grid drawn.
    """
    demo_in = np.asarray(task.demo_inputs)
    if demo_in.ndim != 3:
        raise ValueError(
            f"render_task_sheet takes one task (demo_inputs [P, H, W]), got {demo_in.shape}; "
            "take one from a TaskBank with bank.task(i) or bank.task_by_id(task_id)"
        )
    entries: list[tuple[str, int, list[tuple[str, np.ndarray, np.ndarray]]]] = []
    for k in range(int(np.asarray(task.num_demos))):
        entries.append(
            (
                "demo",
                k,
                [
                    ("input", task.demo_inputs[k], task.demo_input_shapes[k]),
                    ("output", task.demo_outputs[k], task.demo_output_shapes[k]),
                ],
            )
        )
    scored = np.asarray(task.test_scored)
    for k in range(int(np.asarray(task.num_tests))):
        grids = [("input", task.test_inputs[k], task.test_input_shapes[k])]
        if show_test_outputs and scored[k]:
            grids.append(("output", task.test_outputs[k], task.test_output_shapes[k]))
        entries.append(("test", k, grids))
    if not entries:
        raise ValueError("the task has no demonstration pair and no test input to draw")

    columns, column_keys = [], []
    for kind, k, grids in entries:
        images = [render_rgb(g, cell_size, shape=s) for _, g, s in grids]
        images = [i if i.size else np.zeros((cell_size, cell_size, 3), np.uint8) for i in images]
        canvas, offsets = _column(f"{kind} {k}", images, cell_size, font_size)
        columns.append(canvas)
        column_keys.append(
            [((kind, k, which), off) for (which, _, _), off in zip(grids, offsets, strict=True)]
        )
    first_test = next((i for i, (kind, _, _) in enumerate(entries) if kind == "test"), None)
    if first_test:  # a thin rule between the demonstrations and the tests
        rule = np.empty((max(c.shape[0] for c in columns), 2, 3), np.uint8)
        rule[:] = SEPARATOR_RGB
        columns.insert(first_test, rule)
        column_keys.insert(first_test, [])
    body, column_offsets = stack(columns, 1, max(8, cell_size), BACKGROUND_RGB)

    num_demos = sum(kind == "demo" for kind, _, _ in entries)
    title = f"task {task_id}  " if task_id else "task  "
    title += f"({num_demos} demo pairs, {len(entries) - num_demos} test)"
    sheet, (_, body_offset) = stack([label_strip(title, body.shape[1], font_size + 2), body], 0, 6)
    framed = np.empty(
        (sheet.shape[0] + 2 * SHEET_MARGIN, sheet.shape[1] + 2 * SHEET_MARGIN, 3), np.uint8
    )
    framed[:] = BACKGROUND_RGB
    framed[SHEET_MARGIN:-SHEET_MARGIN, SHEET_MARGIN:-SHEET_MARGIN] = sheet
    if not return_layout:
        return framed
    layout: dict[GridKey, tuple[int, int]] = {}
    for keys, (col_top, col_left) in zip(column_keys, column_offsets, strict=True):
        for key, (top, left) in keys:
            layout[key] = (
                SHEET_MARGIN + body_offset[0] + col_top + top,
                SHEET_MARGIN + body_offset[1] + col_left + left,
            )
    return framed, layout
