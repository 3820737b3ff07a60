"""Content rules that choose cells: each gives one grid a cell mask by what the grid holds.

A **mask rule** has a name that means the same on every grid of a task ("the holes", "the
largest object", "cells between two cells of colour 2 in a row"); applied to one grid it
gives that grid's ``[H, W]`` boolean mask. A program plays a rule as one environment
``MaskAction`` per grid, each with its own grid's mask, so what runs is still the
environment's own step.

The rules are grouped in **families** (:data:`MASK_FAMILIES`); each family is one NumPy
function of one grid that yields its named masks. They were chosen by studying the
ARC-AGI-1 training tasks; :data:`FAMILY_TASKS` names, for each family, three training tasks
whose demonstrations it helps solve (``tests/test_language.py`` checks them):

* ``colour``: the cells of each colour, all cells, the background, the content, the border;
* ``objects``: unions of objects (see :mod:`jaxarc.solve.language.objects`) picked by a
  property: largest, second largest, smallest, of size 1, 2 or 3, touching the border or
  not, with or without holes, of a shape or size that occurs once or more than once, of the
  colour that occurs in most or fewest objects, touching a colour;
* ``object_boxes``: the bounding boxes of those unions' objects, and the background cells
  inside them; the inside of the box of each colour;
* ``holes``: background cells no path of background cells joins to the border, in all and
  per enclosing colour (cells walled in by that colour alone);
* ``lines``: cells between two cells of one colour in a row, a column or a diagonal, and
  whole rows and columns that hold a colour;
* ``rays``: from every cell of a colour, the cells of one of eight directions up to the
  border (see :mod:`jaxarc.solve.language.rays`);
* ``regions``: the background's 4-connected pieces picked by a property (see
  :mod:`jaxarc.solve.language.regions`);
* ``paths``: rays that end where a rule says: at a cell of another colour, at the border
  with nothing met, after one step, or a line of a colour continued (see
  :mod:`jaxarc.solve.language.rays`);
* ``neighbours``: background cells beside (4 around), around (8) or diagonal to a colour;
* ``mirror``: cells whose mirror image (left-right, top-bottom, both, the transpose) has a
  colour, so that painting them completes a symmetric picture; mirrored in the whole grid
  or in the box of its content (a picture off the grid's centre).

The background is the task's most frequent input colour
(:func:`~jaxarc.solve.language.objects.background`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

import numpy as np
from jaxtyping import Bool, Int8
from scipy import ndimage

from jaxarc.solve.language.bounces import bounce_masks
from jaxarc.solve.language.objects import (
    EIGHT,
    FOUR,
    OBJECT_KINDS,
    Objects,
    grid_objects,
    object_picks,
)
from jaxarc.solve.language.objects import enclosed as enclosed_cells
from jaxarc.solve.language.rays import DIRECTIONS, path_masks, ray_masks, skew, unskew
from jaxarc.solve.language.regions import region_masks

Mask = Bool[np.ndarray, "H W"]
NamedMasks = Iterator[tuple[str, Mask]]

COLOURS = range(10)


def colour_masks(grid: np.ndarray, bg: int) -> NamedMasks:
    yield "all", np.ones(grid.shape, bool)
    yield "background", grid == bg
    yield "content", grid != bg
    border = np.ones(grid.shape, bool)
    border[1:-1, 1:-1] = False
    yield "border", border
    for c in COLOURS:
        yield f"colour {c}", grid == c


def touching_picks(grid: np.ndarray, bg: int, objects: Objects) -> Iterator[tuple[str, np.ndarray]]:
    """``("touching colour c", chosen)`` for each colour ``c`` of ``grid`` but ``bg``: the
    objects with a cell of another colour 8-next to a cell of ``c``."""
    if objects.count == 0:
        return
    for c in COLOURS:
        if c == bg or not (grid == c).any():
            continue
        near = ndimage.binary_dilation(grid == c, EIGHT) & (grid != c) & (objects.labels >= 0)
        touching = np.zeros(objects.count, bool)
        touching[np.unique(objects.labels[near])] = True
        yield f"touching colour {c}", touching


def object_masks(grid: np.ndarray, bg: int) -> NamedMasks:
    for kind, objects in grid_objects(grid, bg).items():
        for name, chosen in object_picks(objects):
            yield f"{kind} {name}", objects.union(chosen)
        for name, chosen in touching_picks(grid, bg, objects):
            yield f"{kind} {name}", objects.union(chosen)


def object_part_masks(grid: np.ndarray, bg: int) -> NamedMasks:
    """The edge and the inside of the objects (one colour, 8-connected): an inside cell
    has all four neighbours in its object."""
    objects = grid_objects(grid, bg)["single8"]
    inside = np.zeros(grid.shape, bool)
    cells = objects.labels >= 0
    padded = np.pad(objects.labels, 1, constant_values=-1)
    same = [
        padded[1 + dr : 1 + dr + grid.shape[0], 1 + dc : 1 + dc + grid.shape[1]] == objects.labels
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
    ]
    inside = cells & np.all(same, axis=0)
    yield "object insides", inside
    yield "object edges", cells & ~inside


def object_box_masks(grid: np.ndarray, bg: int) -> NamedMasks:
    for c in COLOURS:
        found = np.argwhere(grid == c)
        inside = np.zeros(grid.shape, bool)
        if found.size and c != bg:
            (r1, c1), (r2, c2) = found.min(0), found.max(0)
            inside[r1 + 1 : r2, c1 + 1 : c2] = True
        yield f"inside box of colour {c}", inside & (grid != c)
    for kind, objects in grid_objects(grid, bg).items():
        for name, chosen in object_picks(objects):
            boxes = objects.boxes_union(chosen)
            yield f"{kind} {name} boxes", boxes
            yield f"{kind} {name} box background", boxes & (grid == bg)


def hole_masks(grid: np.ndarray, bg: int) -> NamedMasks:
    yield "holes", enclosed_cells(grid == bg)
    for c in COLOURS:
        if c != bg and (grid == c).any():
            yield f"holes in colour {c}", enclosed_cells(grid != c) & (grid == bg)


def _between(cells: np.ndarray) -> np.ndarray:
    """Per row of ``cells`` (boolean), the cells strictly between its first and last set
    cell."""
    index = np.arange(cells.shape[1])
    has = cells.any(1)
    first = np.where(has, cells.argmax(1), cells.shape[1])
    last = np.where(has, cells.shape[1] - 1 - cells[:, ::-1].argmax(1), -1)
    return (index[None] > first[:, None]) & (index[None] < last[:, None])


def _diagonals(cells: np.ndarray, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``fn`` (which works on each row) applied to every diagonal (top-left to
    bottom-right) of ``cells``."""
    return unskew(fn(skew(cells).T).T, cells.shape[1])


def line_masks(grid: np.ndarray, bg: int) -> NamedMasks:
    free = grid == bg
    for c in COLOURS:
        cells = grid == c
        if not cells.any():
            for name in ("row between", "column between", "diagonal between"):
                yield f"{name} colour {c}", cells
            yield f"antidiagonal between colour {c}", cells
            yield f"rows of colour {c}", cells
            yield f"columns of colour {c}", cells
            continue
        yield f"row between colour {c}", _between(cells) & free
        yield f"column between colour {c}", _between(cells.T).T & free
        yield f"diagonal between colour {c}", _diagonals(cells, _between) & free
        yield (
            f"antidiagonal between colour {c}",
            (_diagonals(cells[:, ::-1], _between)[:, ::-1] & free),
        )
        yield f"rows of colour {c}", np.broadcast_to(cells.any(1)[:, None], cells.shape).copy()
        yield f"columns of colour {c}", np.broadcast_to(cells.any(0)[None], cells.shape).copy()


def neighbour_masks(grid: np.ndarray, bg: int) -> NamedMasks:
    free = grid == bg
    for c in COLOURS:
        cells = grid == c
        if not cells.any():
            continue
        beside = ndimage.binary_dilation(cells, FOUR) & free
        around = ndimage.binary_dilation(cells, EIGHT) & free
        yield f"beside colour {c}", beside
        yield f"around colour {c}", around
        yield f"corners of colour {c}", around & ~beside


MIRRORS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "left-right": lambda g: g[:, ::-1],
    "top-bottom": lambda g: g[::-1],
    "half turn": lambda g: g[::-1, ::-1],
    "transpose": lambda g: g.T,
    "antitranspose": lambda g: g[::-1, ::-1].T,
}


def mirror_masks(grid: np.ndarray, bg: int) -> NamedMasks:
    content = np.argwhere(grid != bg)
    (r1, c1), (r2, c2) = (content.min(0), content.max(0)) if content.size else ((0, 0), (0, 0))
    box = grid[r1 : r2 + 1, c1 : c2 + 1]
    for name, mirror in MIRRORS.items():
        image = mirror(grid)
        boxed = mirror(box)
        for c in COLOURS:
            yield (
                f"mirror {name} colour {c}",
                (image == c if image.shape == grid.shape else np.zeros(grid.shape, bool)),
            )
            in_box = np.zeros(grid.shape, bool)
            if boxed.shape == box.shape:
                in_box[r1 : r2 + 1, c1 : c2 + 1] = boxed == c
            yield f"box mirror {name} colour {c}", in_box


@functools.lru_cache(maxsize=65536)
def colour_template(name: str) -> tuple[str | None, int]:
    """``("rays up from colour {c}", 3)`` for ``"rays up from colour 3"``: the rule's
    template over colours and its colour; ``(None, -1)`` for a rule of no one colour."""
    stem, _, last = name.rpartition("colour ")
    if stem and len(last) == 1 and last.isdigit():
        return stem + "colour {c}", int(last)
    return None, -1


def rays_and_bounces(grid: np.ndarray, bg: int) -> NamedMasks:
    """The ``rays`` family: straight rays (:mod:`jaxarc.solve.language.rays`), then
    diagonal rays that turn back at the grid's sides or at the cells they meet
    (:mod:`jaxarc.solve.language.bounces`; one family, so that the learners' kinds of
    rules stay as they were trained)."""
    yield from ray_masks(grid, bg)
    yield from bounce_masks(grid, bg)


MASK_FAMILIES: dict[str, Callable[[np.ndarray], NamedMasks]] = {  # simplest first
    "colour": colour_masks,
    "holes": hole_masks,
    "objects": object_masks,
    "object_parts": object_part_masks,
    "neighbours": neighbour_masks,
    "lines": line_masks,
    "mirror": mirror_masks,
    "object_boxes": object_box_masks,
    "rays": rays_and_bounces,
    "regions": region_masks,
    "paths": path_masks,
}


FAMILY_NAMES: tuple[str, ...] = tuple(MASK_FAMILIES)
FAMILY_TASKS: dict[str, tuple[str, ...]] = {
    # family -> ARC-AGI-1 training tasks whose simplest program paints with one of its rules
    # (tests/test_language.py checks them)
    "colour": ("445eab21", "6f8cd79b", "fcb5c309"),
    "holes": ("00d62c1b", "a5313dff", "d5d6de2d"),
    "objects": ("42a50994", "67385a82", "6e82a1ae"),
    "object_parts": ("4347f46a", "50cb2852", "bb43febb"),
    "neighbours": ("0ca9ddb6", "4258a5f9", "54d9e175"),
    "lines": ("1f876c06", "22168020", "a699fb00"),
    "mirror": ("3c9b0459", "496994bd", "6150a2bd"),
    "object_boxes": ("3aa6fb7a", "60b61512", "6d75e8bb"),
    "rays": ("623ea044", "d037b0a7", "ea786f4a"),
    "regions": ("44d8ac46", "6455b5f5", "83302e8f"),
    "paths": ("5c0a986e", "8d510a79", "d364b489", "d43fd935"),
}


def grid_masks(
    grid: Int8[np.ndarray, "H W"], bg: int, families: tuple[str, ...] = FAMILY_NAMES
) -> dict[str, Mask]:
    """The mask rules of ``families`` applied to ``grid`` on the background colour ``bg``:
    ``{rule name: [H, W] mask}``, in the order of :data:`MASK_FAMILIES` (simplest first)."""
    by_family = family_masks(grid, bg)
    return {
        name: mask
        for family in FAMILY_NAMES
        if family in families
        for name, mask in by_family[family].items()
    }


def family_masks(grid: Int8[np.ndarray, "H W"], bg: int) -> dict[str, dict[str, Mask]]:
    """Every mask rule applied to ``grid``, by family: ``{family: {rule name: mask}}``.
    Each family's colour rules also give ``"... colour any"``: the union over the colours
    other than the background."""
    grid = np.asarray(grid, np.int8)
    return _family_masks(grid.shape, grid.tobytes(), int(bg))


@functools.lru_cache(maxsize=1024)
def _family_masks(shape: tuple[int, int], cells: bytes, bg: int) -> dict[str, dict[str, Mask]]:
    grid = np.frombuffer(cells, np.int8).reshape(shape)
    found: dict[str, dict[str, Mask]] = {}
    for family_name, family in MASK_FAMILIES.items():
        masks = dict(family(grid, bg))
        stems: dict[str, list[Mask]] = {}
        for name, mask in masks.items():
            stem, colour = colour_template(name)
            if stem is not None and colour != bg:
                stems.setdefault(stem, []).append(mask)
        for stem, parts in stems.items():
            masks[stem.format(c="any")] = np.any(parts, axis=0)
        found[family_name] = masks
    return found


__all__ = [
    "DIRECTIONS",
    "FAMILY_NAMES",
    "FAMILY_TASKS",
    "MASK_FAMILIES",
    "OBJECT_KINDS",
    "colour_template",
    "family_masks",
    "grid_masks",
]
