"""One grid as a view sees it: the canvas a program paints on and the grid its rules read.

:class:`View` is what every view of :mod:`jaxarc.solve.language.views` gives each grid of a
task; :func:`plain_view` is the view of a grid painted on as it is.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from jaxtyping import Bool, Int8


@dataclasses.dataclass(frozen=True)
class View:
    """One grid seen by a view: the ``canvas`` a program starts from, the ``source`` its
    mask rules read (same ``[h, w]`` shape), the view's own masks and the task's
    background colour."""

    canvas: Int8[np.ndarray, "h w"]
    source: Int8[np.ndarray, "h w"]
    masks: dict[str, Bool[np.ndarray, "h w"]]
    background: int


def plain_view(grid: np.ndarray, bg: int) -> View:
    """The view of ``grid`` as it is: canvas and source both ``grid`` (``int8``)."""
    grid = np.ascontiguousarray(grid, np.int8)
    return View(grid, grid, {}, bg)


__all__ = ["View", "plain_view"]
