"""Grids and whole task sheets as SVG documents (vector images for docs and notebooks)."""

from __future__ import annotations

from html import escape
from pathlib import Path

import numpy as np

from jaxarc.render.palette import ARC_PALETTE, GRID_LINE_RGB, PADDING_RGB
from jaxarc.render.raster import BACKGROUND_RGB, as_grid, crop_grid
from jaxarc.render.sheet import ARROW, SheetGrid, sheet_title, task_entries
from jaxarc.render.text import TEXT_RGB

SVG_HEADER = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
)


def _hex(rgb) -> str:
    return "#" + "".join(f"{int(v):02x}" for v in rgb)


def _grid_rects(array: np.ndarray, cell_size: int, grid_lines: bool) -> list[str]:
    """One ``<rect>`` per cell with ``data-row``/``data-col``/``data-colour`` attributes."""
    stroke = f' stroke="{_hex(GRID_LINE_RGB)}" stroke-width="1"' if grid_lines else ""
    parts = []
    for (r, c), value in np.ndenumerate(array):
        fill = _hex(PADDING_RGB if value < 0 else ARC_PALETTE[int(value)])
        parts.append(
            f'<rect x="{c * cell_size}" y="{r * cell_size}" width="{cell_size}" '
            f'height="{cell_size}" fill="{fill}"{stroke} '
            f'data-row="{r}" data-col="{c}" data-colour="{int(value)}"/>'
        )
    return parts


def to_svg(grid, cell_size: int = 16, *, shape=None, grid_lines: bool = True) -> str:
    """An SVG document drawing ``grid`` (``-1`` cells in the padding colour).

    One ``<rect>`` per cell, each with ``data-row``/``data-col``/``data-colour`` attributes
    so a cell's colour can be read back; ``shape`` crops to the top-left ``(rows, cols)``.
    """
    array = as_grid(grid) if shape is None else crop_grid(grid, shape)
    rows, cols = array.shape
    header = SVG_HEADER.format(w=cols * cell_size, h=rows * cell_size)
    return "\n".join([header, *_grid_rects(array, cell_size, grid_lines), "</svg>"])


def save_svg(grid, path, cell_size: int = 16, **kwargs) -> None:
    """Write :func:`to_svg` of ``grid`` to ``path``."""
    Path(path).write_text(to_svg(grid, cell_size, **kwargs), encoding="utf-8")


def _text(x: float, y: float, text: str, size: int) -> str:
    return (
        f'<text x="{x:g}" y="{y:g}" font-family="monospace" font-size="{size}" '
        f'fill="{_hex(TEXT_RGB)}">{escape(text)}</text>'
    )


def task_sheet_svg(
    task, task_id: str = "", *, cell_size: int = 16, show_test_outputs: bool = False
) -> str:
    """A whole task as one SVG document, laid out like
    :func:`~jaxarc.render.sheet.render_task_sheet`: one ``input -> output`` row per pair.

    Each grid is a ``<g>`` with ``data-kind`` / ``data-pair`` / ``data-which`` attributes
    and a ``translate`` to its place, holding :func:`to_svg`'s cell rectangles.
    """
    rows = task_entries(task, show_test_outputs)
    font, margin, gap = 12, 8, max(8, cell_size // 2)
    char_w, caption = 0.6 * font, font + 6  # monospace advance; caption line height

    def text_width(text: str) -> float:
        return len(text) * char_w + 4

    def width(entry: SheetGrid | None) -> float:
        return cell_size if entry is None else entry.grid.shape[1] * cell_size

    def height(entry: SheetGrid | None) -> float:
        return cell_size if entry is None else entry.grid.shape[0] * cell_size

    label_w = max(text_width(f"{i.kind} {i.pair}") for i, _ in rows)
    in_w = max(max(width(i), text_width(i.size_label)) for i, _ in rows)
    out_w = max(
        max(width(o), text_width("output ?" if o is None else o.size_label)) for _, o in rows
    )
    arrow_w = text_width(ARROW)
    x_in = margin + label_w + gap
    x_arrow = x_in + in_w + gap
    x_out = x_arrow + arrow_w + gap
    total_w = x_out + out_w + margin

    body: list[str] = []
    y = margin + caption + gap
    body.append(_text(margin, margin + font, sheet_title(task_id, rows), font + 2))
    for index, (entry_in, entry_out) in enumerate(rows):
        if entry_in.kind == "test" and index > 0 and rows[index - 1][0].kind == "demo":
            body.append(
                f'<rect x="{margin}" y="{y:g}" width="{total_w - 2 * margin:g}" height="2" '
                f'fill="{_hex((0x80, 0x80, 0x80))}"/>'
            )
            y += 2 + gap
        row_h = caption + max(height(entry_in), height(entry_out))
        body.append(_text(margin, y + caption + font, f"{entry_in.kind} {entry_in.pair}", font))
        body.append(_text(x_arrow, y + caption + font, ARROW, font + 2))
        for x, entry in ((x_in, entry_in), (x_out, entry_out)):
            if entry is None:
                body.append(_text(x, y + font, "output ?", font))
                body.append(_text(x, y + caption + font, "?", font + 4))
                continue
            body.append(_text(x, y + font, entry.size_label, font))
            body.append(
                f'<g transform="translate({x:g},{y + caption:g})" data-kind="{entry.kind}" '
                f'data-pair="{entry.pair}" data-which="{entry.which}">'
            )
            body.extend(_grid_rects(entry.grid, cell_size, True))
            body.append("</g>")
        y += row_h + gap
    total_h = y - gap + margin
    header = SVG_HEADER.format(w=f"{total_w:g}", h=f"{total_h:g}")
    background = f'<rect width="100%" height="100%" fill="{_hex(BACKGROUND_RGB)}"/>'
    return "\n".join([header, background, *body, "</svg>"])
