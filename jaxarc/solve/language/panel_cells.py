"""One cell per panel: a grid cut by lines shrunk to the grid of its panels.

Some inputs are a grid of panels cut by whole rows and columns of one colour
(:func:`~jaxarc.solve.language.panels.grid_cells`), and the output has one cell per panel:
the panel's own colour (a panel filled with one colour, noise and all), the same grid
mirrored, or a colour drawn where a panel holds some number of marks. The view ``panel
cells`` (:func:`panel_cell_views`):

* fits when every demonstration input is cut into panels of ``r`` rows and ``c`` columns
  and its output is ``r x c`` (or, for the turned copies, what the turn makes of it);
* its canvas holds each panel's most frequent colour (the panel's colour);
* its masks (:func:`panel_masks`) pick panels by how many marks they hold: a mark is a
  cell of neither the separator nor the colour most frequent over all panels (their
  common background): ``panel marks n`` (exactly ``n``), ``panel most marks``, ``panel
  fewest marks``, ``panel some marks``;
* ``panel cells X`` is the same canvas turned or mirrored by ``X`` of
  :data:`~jaxarc.solve.language.view_kinds.DIHEDRAL` (tried only when the outputs' shapes
  allow it).

Training tasks it serves: :data:`PANEL_CELL_TASKS`.
"""

from __future__ import annotations

import numpy as np
from jaxtyping import Bool, Int8

from jaxarc.solve.language.panels import grid_cells
from jaxarc.solve.language.view_kinds import DIHEDRAL
from jaxarc.solve.problem import Problem

PANEL_CELL_TASKS = (
    "6773b310",  # a panel with two marks becomes a cell of colour 1
    "780d0b14",  # each noisy panel's colour
    "9f236235",  # each panel's colour, mirrored left to right
)
MAX_MARKS = 4  # ``panel marks n`` masks for n up to this

PanelView = tuple[Int8[np.ndarray, "r c"], dict[str, Bool[np.ndarray, "r c"]]]


def panel_grid(
    grid: Int8[np.ndarray, "H W"],
) -> tuple[Int8[np.ndarray, "r c"], np.ndarray] | None:
    """``grid`` 's panels (:func:`~jaxarc.solve.language.panels.grid_cells`) as the
    ``[r, c]`` grid of their colours (each panel's most frequent colour) and the ``[r, c]``
    count of their marks (see the module docstring); ``None`` when it has no panels or
    they are not ``r x c`` in rows and columns."""
    cut = grid_cells(grid)
    if cut is None:
        return None
    separator, boxes = cut
    row_starts = sorted({b[0] for b in boxes})
    col_starts = sorted({b[1] for b in boxes})
    if len(boxes) != len(row_starts) * len(col_starts):
        return None
    pieces = [
        grid[r1 : r2 + 1, c1 : c2 + 1].reshape(-1).astype(np.int64) for r1, c1, r2, c2 in boxes
    ]
    common = int(np.bincount(np.concatenate(pieces), minlength=10).argmax())
    colours = np.asarray([np.bincount(p, minlength=10).argmax() for p in pieces], np.int8)
    marks = np.asarray([int(((p != separator) & (p != common)).sum()) for p in pieces])
    shape = (len(row_starts), len(col_starts))
    return colours.reshape(shape), marks.reshape(shape)


def panel_masks(marks: np.ndarray) -> dict[str, Bool[np.ndarray, "r c"]]:
    """The view's masks of an ``[r, c]`` count of marks per panel."""
    masks = {f"panel marks {n}": marks == n for n in range(MAX_MARKS + 1)}
    masks["panel most marks"] = marks == marks.max()
    masks["panel fewest marks"] = marks == marks.min()
    masks["panel some marks"] = marks > 0
    return masks


def _turned(grid: np.ndarray, name: str) -> np.ndarray:
    return np.ascontiguousarray(grid if name == "" else DIHEDRAL[name](grid))


def panel_cell_views(problem: Problem) -> dict[str, list[PanelView | None]]:
    """``{"panel cells[ X]": (canvas, masks) per grid}`` (demonstration inputs, then test
    inputs; ``None`` for a grid without panels) for the identity and each turn or mirror
    ``X`` whose canvases have every demonstration output's shape; empty when a
    demonstration input has no panels or no canvas fits."""
    outs = problem.demo_outputs
    if any(o.shape[0] > 15 or o.shape[1] > 15 for o in outs):  # panels are at least 1 x 1
        return {}
    found = []
    for grid, out in zip(problem.demo_inputs, outs, strict=True):
        panels = panel_grid(grid)
        if panels is None or sorted(panels[0].shape) != sorted(out.shape):
            return {}
        found.append(panels)
    found += [panel_grid(grid) for grid in problem.test_inputs]
    views = {}
    for name in ("", *DIHEDRAL):
        shapes = [_turned(colours, name).shape for colours, _ in found[: problem.num_demos]]
        if any(shape != out.shape for shape, out in zip(shapes, outs, strict=True)):
            continue
        column: list[PanelView | None] = []
        for panels in found:
            if panels is None:
                column.append(None)
                continue
            colours, marks = panels
            masks = {k: _turned(m, name) for k, m in panel_masks(marks).items()}
            column.append((_turned(colours, name), masks))
        views[f"panel cells {name}".strip()] = column
    return views


__all__ = ["MAX_MARKS", "PANEL_CELL_TASKS", "panel_cell_views", "panel_grid", "panel_masks"]
