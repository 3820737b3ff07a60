"""Grids as SVG documents (vector images for docs and notebooks)."""

from __future__ import annotations

import numpy as np

from jaxarc.render.palette import ARC_PALETTE, GRID_LINE_RGB, PADDING_RGB
from jaxarc.render.raster import as_grid, crop_grid


def _hex(rgb: np.ndarray) -> str:
    return "#" + "".join(f"{int(v):02x}" for v in rgb)


def to_svg(grid, cell_size: int = 16, *, shape=None, grid_lines: bool = True) -> str:
    """An SVG document drawing ``grid`` (``-1`` cells in the padding colour).

    One ``<rect>`` per cell, each with ``data-row``/``data-col``/``data-colour`` attributes
    so a cell's colour can be read back; ``shape`` crops to the top-left ``(rows, cols)``.
    """
    array = as_grid(grid) if shape is None else crop_grid(grid, shape)
    rows, cols = array.shape
    stroke = f' stroke="{_hex(GRID_LINE_RGB)}" stroke-width="1"' if grid_lines else ""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * cell_size}" '
        f'height="{rows * cell_size}" viewBox="0 0 {cols * cell_size} {rows * cell_size}">'
    ]
    for r in range(rows):
        for c in range(cols):
            value = int(array[r, c])
            fill = _hex(PADDING_RGB if value < 0 else ARC_PALETTE[value])
            parts.append(
                f'<rect x="{c * cell_size}" y="{r * cell_size}" width="{cell_size}" '
                f'height="{cell_size}" fill="{fill}"{stroke} '
                f'data-row="{r}" data-col="{c}" data-colour="{value}"/>'
            )
    parts.append("</svg>")
    return "\n".join(parts)


def save_svg(grid, path, cell_size: int = 16, **kwargs) -> None:
    """Write :func:`to_svg` of ``grid`` to ``path``."""
    from pathlib import Path

    Path(path).write_text(to_svg(grid, cell_size, **kwargs), encoding="utf-8")
