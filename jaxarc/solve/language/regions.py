"""Background regions: the pieces the content cuts the background into, picked by a property.

A **region** is a 4-connected component of background cells (``[H, W]`` grids, the
background colour ``bg``). The ``regions`` mask family of
:mod:`jaxarc.solve.language.masks` picks unions of regions the way the ``objects`` family
picks objects (:func:`~jaxarc.solve.language.objects.object_picks`: the largest, the smallest,
of size 1, 2 or 3, on the border or off it, of a shape that occurs once, ...), and by what
only a region has:

* ``region beside colour c``: the regions with a cell 4-next to a cell of colour ``c``
  (the background a colour floods);
* ``region rectangular``: the regions that fill their bounding box; ``region square``: the
  rectangular ones whose box is a square (the square holes of a drawing).

The holes (:func:`~jaxarc.solve.language.objects.enclosed`) are the regions off the
border; the regions also tell enclosed pieces apart by size and shape (a closed room from
a room with a door).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from jaxtyping import Bool, Int8
from scipy import ndimage

from jaxarc.solve.language.objects import FOUR, Objects, grid_objects, object_picks

Mask = Bool[np.ndarray, "H W"]


def background_regions(grid: Int8[np.ndarray, "H W"], bg: int) -> Objects:
    """The regions of ``grid`` as :class:`~jaxarc.solve.language.objects.Objects` (one
    colour, 4-connected components of the background cells; their ``colours`` are 1)."""
    cells = (np.asarray(grid) == bg).astype(np.int8)
    return grid_objects(cells, 0)["single4"]


def region_shapes(regions: Objects) -> tuple[Bool[np.ndarray, " K"], Bool[np.ndarray, " K"]]:
    """``(rectangular, square)`` per region: it fills its bounding box; and the box is a
    square."""
    r1, c1, r2, c2 = regions.boxes.T
    height, width = r2 - r1 + 1, c2 - c1 + 1
    rectangular = regions.sizes == height * width
    return rectangular, rectangular & (height == width)


def region_masks(grid: Int8[np.ndarray, "H W"], bg: int) -> Iterator[tuple[str, Mask]]:

    regions = background_regions(grid, bg)
    if regions.count == 0:
        return
    for name, chosen in object_picks(regions):
        yield f"region {name}", regions.union(chosen)
    for c in range(10):
        cells = grid == c
        if c == bg or not cells.any():
            continue
        near = ndimage.binary_dilation(cells, FOUR) & (regions.labels >= 0)
        beside = np.zeros(regions.count, bool)
        beside[np.unique(regions.labels[near])] = True
        yield f"region beside colour {c}", regions.union(beside)
    rectangular, square = region_shapes(regions)
    yield "region rectangular", regions.union(rectangular)
    yield "region square", regions.union(square)


__all__ = ["background_regions", "region_masks", "region_shapes"]
