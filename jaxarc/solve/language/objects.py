"""The objects of one grid: connected components with the properties content rules select by.

An ARC grid is read as a background (its most frequent colour) and **objects**: connected
components of non-background cells, either of one colour (``single``) or of any
non-background colours (``multi``), under 4- or 8-connectivity. Every rule of
:mod:`jaxarc.solve.language.masks` that speaks of objects reads them from here, so the
components of a grid are labelled once (:func:`grid_objects` keeps them per grid content).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator

import numpy as np
from jaxtyping import Bool, Int8, Int32
from scipy import ndimage

FOUR = ndimage.generate_binary_structure(2, 1)
EIGHT = ndimage.generate_binary_structure(2, 2)


def background(*grids: Int8[np.ndarray, "H W"]) -> int:
    """The most frequent colour of ``grids`` together (the lowest on a tie): a task's
    background is read off all its input grids at once, so that it is one colour for the
    whole task."""
    cells = np.concatenate([np.asarray(g).reshape(-1) for g in grids]).astype(np.int64)
    return int(np.bincount(cells, minlength=10).argmax())


@dataclasses.dataclass(frozen=True)
class Objects:
    """The components of one kind in one grid.

    ``labels``: ``[H, W]`` component index per cell, ``-1`` off every component;
    ``sizes``, ``colours`` (``-1`` for a component of several colours), ``touches_border``,
    ``has_hole`` (the component encloses background cells), ``shape_ids`` (components with
    the same cells up to translation share an id): one entry per component.
    """

    labels: Int32[np.ndarray, "H W"]
    sizes: Int32[np.ndarray, " K"]
    colours: Int32[np.ndarray, " K"]
    touches_border: Bool[np.ndarray, " K"]
    has_hole: Bool[np.ndarray, " K"]
    shape_ids: Int32[np.ndarray, " K"]
    boxes: Int32[np.ndarray, "K 4"]

    @property
    def count(self) -> int:
        return len(self.sizes)

    def union(self, chosen: Bool[np.ndarray, " K"]) -> Bool[np.ndarray, "H W"]:
        """The cells of the chosen components."""
        if self.count == 0:
            return np.zeros(self.labels.shape, bool)
        return np.concatenate([chosen, [False]])[self.labels]

    def boxes_union(self, chosen: Bool[np.ndarray, " K"]) -> Bool[np.ndarray, "H W"]:
        """The cells of the chosen components' bounding boxes."""
        mask = np.zeros(self.labels.shape, bool)
        for r1, c1, r2, c2 in self.boxes[chosen]:
            mask[r1 : r2 + 1, c1 : c2 + 1] = True
        return mask


def enclosed(passable: Bool[np.ndarray, "H W"]) -> Bool[np.ndarray, "H W"]:
    """The ``passable`` cells that no 4-connected path of passable cells joins to the
    border."""
    labels, count = ndimage.label(passable, FOUR)
    if count == 0:
        return np.zeros(passable.shape, bool)
    edge = np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]])
    outside = np.zeros(count + 1, bool)
    outside[edge] = True
    outside[0] = True
    return ~outside[labels]


def _components(grid: np.ndarray, bg: int, *, single: bool, eight: bool) -> Objects:
    structure = EIGHT if eight else FOUR
    foreground = grid != bg
    labels = np.full(grid.shape, -1, np.int32)
    count = 0
    if single:
        for colour in np.unique(grid[foreground]):
            lab, k = ndimage.label(grid == colour, structure)
            labels = np.where(lab > 0, lab - 1 + count, labels)
            count += k
    else:
        lab, count = ndimage.label(foreground, structure)
        labels = lab.astype(np.int32) - 1
    flat = labels.reshape(-1)
    on = flat >= 0
    sizes = np.bincount(flat[on], minlength=count).astype(np.int32)
    colours = np.full(count, -1, np.int32)
    boxes = np.zeros((count, 4), np.int32)
    touches = np.zeros(count, bool)
    holes = np.zeros(count, bool)
    shape_keys: dict[bytes, int] = {}
    shape_ids = np.zeros(count, np.int32)
    rows, cols = grid.shape
    for k, slices in enumerate(ndimage.find_objects(labels + 1, max_label=count)):
        if slices is None:
            continue
        r, c = slices
        cells = labels[r, c] == k
        values = np.unique(grid[r, c][cells])
        colours[k] = int(values[0]) if values.size == 1 else -1
        boxes[k] = (r.start, c.start, r.stop - 1, c.stop - 1)
        touches[k] = r.start == 0 or c.start == 0 or r.stop == rows or c.stop == cols
        # a component encloses a cell only if it spans 3 x 3 and has 4 cells or more
        if cells.shape[0] >= 3 and cells.shape[1] >= 3 and sizes[k] >= 4:
            holes[k] = bool(enclosed(~np.pad(cells, 1)).any())
        key = np.asarray(cells.shape, np.int32).tobytes() + np.packbits(cells).tobytes()
        shape_ids[k] = shape_keys.setdefault(key, len(shape_keys))
    return Objects(labels, sizes, colours, touches, holes, shape_ids, boxes)


OBJECT_KINDS: tuple[str, ...] = ("single4", "single8", "multi8")


def multi4_objects(grid: Int8[np.ndarray, "H W"], bg: int) -> Objects:
    """The grid's components of any non-background colours under 4-connectivity (blocks
    that touch only at a corner stay apart; the colour-holding crops read them)."""
    return _components(np.asarray(grid, np.int8), int(bg), single=False, eight=False)


def grid_objects(grid: Int8[np.ndarray, "H W"], bg: int) -> dict[str, Objects]:
    """The grid's objects of each kind of :data:`OBJECT_KINDS` (one colour and
    4-connected, one colour and 8-connected, any colours and 8-connected) on the
    background colour ``bg``."""
    grid = np.asarray(grid, np.int8)
    return _grid_objects(grid.shape, grid.tobytes(), int(bg))


@functools.lru_cache(maxsize=2048)
def _grid_objects(shape: tuple[int, int], cells: bytes, bg: int) -> dict[str, Objects]:
    grid = np.frombuffer(cells, np.int8).reshape(shape)
    return {
        "single4": _components(grid, bg, single=True, eight=False),
        "single8": _components(grid, bg, single=True, eight=True),
        "multi8": _components(grid, bg, single=False, eight=True),
    }


def object_picks(objects: Objects) -> Iterator[tuple[str, np.ndarray]]:
    """``(property, chosen components)`` for every property a rule picks objects by."""
    if objects.count == 0:
        return
    sizes = objects.sizes
    yield "largest", sizes == sizes.max()
    yield "smallest", sizes == sizes.min()
    for size in (1, 2, 3):
        yield f"size {size}", sizes == size
    yield "size > 1", sizes > 1
    yield "on border", objects.touches_border
    yield "off border", ~objects.touches_border
    yield "with hole", objects.has_hole
    yield "without hole", ~objects.has_hole
    shape_counts = np.bincount(objects.shape_ids)[objects.shape_ids]
    yield "unique shape", shape_counts == 1
    yield "repeated shape", shape_counts > 1
    colour_counts = np.bincount(np.maximum(objects.colours, 0), minlength=10)
    coloured = objects.colours >= 0
    if coloured.any():
        per_object = colour_counts[np.maximum(objects.colours, 0)]
        yield "most common colour", coloured & (per_object == per_object[coloured].max())
        yield "rarest colour", coloured & (per_object == per_object[coloured].min())
    size_counts = np.bincount(sizes)[sizes]
    yield "unique size", size_counts == 1
    distinct = np.unique(sizes)
    if distinct.size >= 2:
        yield "second largest", sizes == distinct[-2]


def colour_holding_picks(
    grid: Int8[np.ndarray, "H W"], objects: Objects
) -> Iterator[tuple[str, np.ndarray]]:
    """``(most colour c, chosen components)`` for each colour ``c`` the components hold:
    the component(s) holding the most cells of colour ``c`` (of several colours: the
    crop views take the object with the most red cells; ARC-AGI-1 training tasks
    8efcae92, ae4f1146, e50d258f)."""
    grid = np.asarray(grid, np.int8)
    if objects.count == 0:
        return
    on = objects.labels >= 0
    labels, values = objects.labels[on], grid[on].astype(np.int64)
    held = np.zeros((objects.count, 10), np.int64)
    np.add.at(held, (labels, values), 1)
    for c in range(10):
        if held[:, c].any():
            yield f"most colour {c}", held[:, c] == held[:, c].max()


COLOUR_HOLDING_TASKS: dict[str, tuple[str, ...]] = {
    # crop pick -> ARC-AGI-1 training tasks whose first program crops the object it picks
    "most colour": ("8efcae92", "ae4f1146", "e50d258f"),
}
