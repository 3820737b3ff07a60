"""Templates pasted onto markers: the grid's one picture of several colours drawn again on
every marker.

Some tasks show one small picture of several colours (the **template**) and markers that
say where it goes: blocks of one colour in the template's shape are painted over with it,
or a single cell is where the template's centre goes. :func:`paste_template` reads, on one
grid:

* the template: the objects of several colours (any non-background colours,
  4-connected); there must be exactly one appearance of them (copies of it count as one);
* the markers: the one-colour objects (``single4``) that are not part of a template and
  have either the template's cells (up to translation: the template is drawn over them)
  or one cell (the template's box centre goes there; its box must have odd sides).

The views ``paste template`` (the template stays) and ``move template`` (the template is
cleared to the background first, when every marker is pasted over) draw it on every
marker. A view is offered only when on every demonstration the drawn cells hold the
output's colours and the pasted grid differs from the input. Training tasks it serves:
321b1fc6, 88a10436, e76a88a6 (``VIEW_TASKS`` of :mod:`~jaxarc.solve.language.views`).
"""

from __future__ import annotations

import numpy as np
from jaxtyping import Int8
from scipy import ndimage

from jaxarc.solve.language.objects import FOUR, grid_objects
from jaxarc.solve.problem import Problem

PASTE_VIEWS = ("paste template", "move template")


def _template(grid: np.ndarray, bg: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The template's box colours ``[h, w]`` (``-1`` off it) and the ``[H, W]`` cells of all
    its copies; ``None`` when the grid has no object of several colours or more than one
    appearance of them."""
    labels, _ = ndimage.label(grid != bg, FOUR)
    looks, cells = {}, np.zeros(grid.shape, bool)
    for k, box in enumerate(ndimage.find_objects(labels), start=1):
        own = labels[box] == k
        if np.unique(grid[box][own]).size < 2:
            continue
        look = np.where(own, grid[box], -1).astype(np.int8)
        looks[(look.shape, look.tobytes())] = look
        cells |= labels == k
    if len(looks) != 1:
        return None
    return next(iter(looks.values())), cells


def paste_template(grid: Int8[np.ndarray, "H W"], bg: int, move: bool = False) -> np.ndarray | None:
    """``grid`` with the template drawn on every marker (see the module docstring); with
    ``move`` the template's own cells are cleared first. ``[H, W]`` int8, or ``None`` when
    the grid has no template or no marker."""
    grid = np.asarray(grid, np.int8)
    found = _template(grid, bg)
    if found is None:
        return None
    look, template_cells = found
    footprint = look >= 0
    h, w = look.shape
    rows, cols = grid.shape
    single = grid_objects(grid, bg)["single4"]
    out = np.where(template_cells, bg, grid).astype(np.int8) if move else grid.copy()
    pasted = 0
    for k in range(single.count):
        cells = single.labels == k
        if (cells & template_cells).any():
            continue
        r1, c1, r2, c2 = (int(v) for v in single.boxes[k])
        own = cells[r1 : r2 + 1, c1 : c2 + 1]
        if own.shape == footprint.shape and np.array_equal(own, footprint):
            top, left = r1, c1
        elif own.size == 1 and h % 2 and w % 2:
            top, left = r1 - h // 2, c1 - w // 2
        else:
            continue
        rr, cc = np.nonzero(footprint)
        rr, cc = rr + top, cc + left
        on = (rr >= 0) & (rr < rows) & (cc >= 0) & (cc < cols)
        out[rr[on], cc[on]] = look[footprint][on]
        pasted += 1
    return out if pasted else None


def paste_views(problem: Problem, bg: int) -> tuple[str, ...]:
    """The views of :data:`PASTE_VIEWS` that fit ``problem`` 's demonstrations (see the
    module docstring)."""
    demos = list(zip(problem.demo_inputs, problem.demo_outputs, strict=True))
    if any(i.shape != o.shape for i, o in demos):
        return ()
    fitting = []
    for name in PASTE_VIEWS:
        for grid, out in demos:
            pasted = paste_template(grid, bg, move=name == "move template")
            if pasted is None:
                break
            written = pasted != grid
            if not written.any() or (pasted[written] != out[written]).any():
                break
        else:
            fitting.append(name)
    return tuple(fitting)
