"""Grids as coloured terminal text (24-bit ANSI background colours, two spaces per cell).

Colour follows the usual terminal conventions (:func:`colour_enabled`): none when the
``NO_COLOR`` environment variable is set to anything non-empty (https://no-color.org), and
none when the output is not a terminal (a pipe or a file), where plain digits are written.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

import numpy as np

from jaxarc.render.palette import ARC_PALETTE, PADDING_RGB
from jaxarc.render.raster import as_grid, crop_grid

RESET = "\x1b[0m"


def _cell(value: int, show_digits: bool) -> str:
    rgb = PADDING_RGB if value < 0 else ARC_PALETTE[value]
    r, g, b = (int(v) for v in rgb)
    if show_digits and value >= 0:
        # light text on dark colours, dark text on light ones
        fg = "30" if (0.299 * r + 0.587 * g + 0.114 * b) > 140 else "97"
        return f"\x1b[48;2;{r};{g};{b}m\x1b[{fg}m{value:>2}"
    return f"\x1b[48;2;{r};{g};{b}m  "


def to_ansi(grid, *, shape=None, show_digits: bool = False) -> str:
    """``grid`` as lines of ANSI colour blocks (one line per row, each ending in a reset).

    ``-1`` cells use the padding colour; ``shape`` crops to the top-left ``(rows, cols)``;
    ``show_digits`` prints each colour's digit inside its block.
    """
    array = as_grid(grid) if shape is None else crop_grid(grid, shape)
    lines = ["".join(_cell(int(v), show_digits) for v in row) + RESET for row in array]
    return "\n".join(lines)


def to_text(grid, *, shape=None) -> str:
    """``grid`` as plain digits (``.`` for ``-1``), for logs without colour support."""
    array = np.asarray(as_grid(grid) if shape is None else crop_grid(grid, shape))
    return "\n".join("".join("." if v < 0 else str(int(v)) for v in row) for row in array)


def colour_enabled(stream: TextIO | None = sys.stdout) -> bool:
    """Whether to write ANSI colours: not when ``NO_COLOR`` is set (non-empty), and, given a
    ``stream``, only when it is a terminal (``stream=None`` skips the terminal check, for
    text returned rather than written, e.g. Gymnasium's ``render_mode="ansi"``)."""
    if os.environ.get("NO_COLOR", ""):
        return False
    if stream is None:
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def to_terminal(grid, *, shape=None, stream: TextIO | None = sys.stdout) -> str:
    """``grid`` for ``stream``: :func:`to_ansi` colour blocks where
    :func:`colour_enabled`, else :func:`to_text`."""
    if colour_enabled(stream):
        return to_ansi(grid, shape=shape)
    return to_text(grid, shape=shape)
