"""Output size first: the grid a program starts painting on, and the grid its rules read.

A **view** turns one input grid into a ``canvas`` of the output's shape (what the program
lays down first) and a ``source`` of the same shape (the grid its mask rules read), plus
masks of its own. A view fits a task when it gives every demonstration input a canvas of
that demonstration output's shape; only fitting views are tried, before any content rule
(the shape is chosen first, as icecuber's ARC DSL does). The views, chosen by studying the
ARC-AGI-1 training tasks:

* ``input``: the input itself (same shape; 262 of the 400 training tasks);
* the seven turns and mirrors of the input (``rotate cw``, ``transpose``, ...);
* ``crop X``: the box of a content selector (:mod:`jaxarc.solve.selectors`), of the one
  object a pick of :mod:`jaxarc.solve.language.masks` chooses (also: the objects touching a
  colour, the symmetric ones; several copies of one shape count as one), of the most or the
  least frequent colour; ``crop inside X``: a picked object's box one cell in from each
  side (what a frame holds); ``crop cell X``: one cell of a grid cut by whole lines of one
  colour (:func:`~jaxarc.solve.language.panels.grid_cells`), by its content;
* ``scale kh x kw`` / ``tile kh x kw`` / ``sample kh x kw``: every cell blown up to a block,
  the input repeated, every ``kh``-th row and ``kw``-th column kept, with the factors read
  off the first demonstration (``scale n x n (X)``: the factor a count gives,
  :mod:`jaxarc.solve.language.counts`); ``self tile X``: an ``[h, w]`` input laid in the blocks (of
  an ``[h*h, w*w]`` output) of its own cells that a rule chooses;
* ``content scale kh x kw``, ``content tile kh x kw``, ``content self tile X``: the same
  blow-ups of the box of the input's content (its cells not of the background), the
  factors read off the first demonstration's content;
* ``mirror tile kh x kw (...)``: blocks of the input's turns and mirrors, one learned per
  block from the demonstrations (:mod:`jaxarc.solve.language.mirrors`);
* ``fall down`` (``up``, ``left``, ``right``): every non-background cell falls to that side
  of its column or row;
* ``attract``: objects of a mover colour slide toward an anchor colour until they touch,
  the pairs learned from the demonstrations (:mod:`jaxarc.solve.language.motion`);
* ``shift M RULE``: every object of colour ``M`` moves by the offset a rule learned from
  the demonstrations gives it (:mod:`jaxarc.solve.language.shift`);
* ``recolour S by P (KIND)``: every object of colour ``S`` painted in the colour a key
  learned from the demonstrations gives its property ``P`` (size, shape, a legend's colour
  in line with it, ...; :mod:`jaxarc.solve.language.recolour`);
* ``repair colour k``: the cells of colour ``k`` (a colour of every demonstration input and
  no output) filled from the smallest period (rows, columns) the other cells repeat with (a
  pattern with a hole in it);
* ``repair crop colour k`` / ``repair mirror colour k``: the cells of colour ``k`` filled
  from a period or from the grid's mirrors, cut to their box or whole
  (:mod:`jaxarc.solve.language.hidden`); ``crop multi8 most colour c``: the object holding
  the most cells of colour ``c`` (:func:`~jaxarc.solve.language.objects.colour_holding_picks`);
* ``corners``, ``corners folded``: a ``parts`` view of the output-shaped windows at the
  input's corners, and ``window X`` one of them (:mod:`jaxarc.solve.language.corners`);
  ``keyed on pattern``, ``keyed on key``: a one-colour pattern in a small key's colours
  (:mod:`jaxarc.solve.language.keyed`); ``dedupe``, ``dedupe content``: each run of equal
  rows and columns kept once (:mod:`jaxarc.solve.language.dedupe`); ``lookup X``: the
  output of the demonstration whose input has the same key
  (:mod:`jaxarc.solve.language.lookup`);
* ``extend pattern``: the input's pattern carried on (its smallest period, rows and
  columns) into an output whose size a rule of the demonstrations gives
  (:mod:`jaxarc.solve.language.extend`);
* ``paste template`` / ``move template``: the grid's one picture of several colours drawn
  on every marker (:mod:`jaxarc.solve.language.paste`);
* ``symmetric GROUP (RULE)``: every content cell copied to its images under a group of
  turns and mirrors about a centre a rule finds (a symmetric picture completed around a
  centre other than the grid's; :mod:`jaxarc.solve.language.symmetry`);
* ``stamp KIND``: a pattern learned from the demonstrations drawn around every object of
  one appearance (:mod:`jaxarc.solve.language.stamps`);
* ``count ...``: a canvas whose size, or whose drawn cells, a count of the input gives,
  or the input's colours listed (:mod:`jaxarc.solve.language.counts`);
* ``panel cells``, ``panel cells X``: one cell per panel of a grid cut by lines, in the
  panel's colour, maybe turned or mirrored, with masks of the panels by their marks
  (:mod:`jaxarc.solve.language.panel_cells`);
* ``blank``: the background in the input's shape, its masks read from the input (the output
  keeps or redraws only some of the input);
* ``blank h x w``: the background in the outputs' one shape, for outputs that are a colour
  or a count;
* ``parts``: an input cut into equal parts (by separator lines of one colour, or evenly) is
  laid over itself: the canvas is the background in a part's shape, with masks for the
  cells where all, any, exactly one or none of the parts hold content, and each part's own
  colours.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from jaxarc.solve.language.blow_ups import blow_ups, parts_view, ratio, split_parts
from jaxarc.solve.language.colours import COLOUR_RULES, grid_colours
from jaxarc.solve.language.corners import corner_parts, window_views
from jaxarc.solve.language.counts import count_views
from jaxarc.solve.language.dedupe import dedupe_views
from jaxarc.solve.language.extend import extended_grids
from jaxarc.solve.language.hidden import hidden_views, repair_periodic
from jaxarc.solve.language.keyed import keyed_views
from jaxarc.solve.language.lookup import lookup_views
from jaxarc.solve.language.masks import touching_picks
from jaxarc.solve.language.mirrors import mirror_tile_views
from jaxarc.solve.language.motion import attract_grid, attract_pairs
from jaxarc.solve.language.objects import (
    Objects,
    background,
    colour_holding_picks,
    grid_objects,
    multi4_objects,
    object_picks,
)
from jaxarc.solve.language.panel_cells import panel_cell_views
from jaxarc.solve.language.panels import cell_crops
from jaxarc.solve.language.paste import paste_template, paste_views
from jaxarc.solve.language.recolour import describe_keys, recolour_grid, recolour_keys
from jaxarc.solve.language.shift import describe_moves, shift_grid, shift_moves
from jaxarc.solve.language.stamps import stamp_views
from jaxarc.solve.language.symmetry import symmetry_views
from jaxarc.solve.language.view import View, plain_view
from jaxarc.solve.language.view_kinds import (
    CONTENT_CROPS,
    CROP_PICK_TASKS,
    DIHEDRAL,
    VIEW_KINDS,
    VIEW_TASKS,
)
from jaxarc.solve.problem import Problem
from jaxarc.solve.selectors import cells_box, select_boxes


def _crop_picks(grid: np.ndarray, bg: int, objects: Objects) -> Iterator[tuple[str, np.ndarray]]:
    """The picks of :func:`~jaxarc.solve.language.objects.object_picks`, the objects touching
    each colour, and the objects that are their own mirror image."""
    yield from object_picks(objects)
    yield from touching_picks(grid, bg, objects)
    if objects.count == 0:
        return
    mirrored = np.zeros(objects.count, bool)
    for k, (r1, c1, r2, c2) in enumerate(objects.boxes):
        own = np.where(
            objects.labels[r1 : r2 + 1, c1 : c2 + 1] == k, grid[r1 : r2 + 1, c1 : c2 + 1], -1
        )
        mirrored[k] = np.array_equal(own, own[:, ::-1]) or np.array_equal(own, own[::-1])
    yield "symmetric", mirrored
    yield "asymmetric", ~mirrored


def _object_crops(grid: np.ndarray, bg: int) -> Iterator[tuple[str, tuple[int, int, int, int]]]:
    """``(name, box)`` of each pick that chooses one object, or several copies of one
    shape and colour (the first of them: they look alike)."""
    kinds = {**grid_objects(grid, bg), "multi4": multi4_objects(grid, bg)}
    for kind, objects in kinds.items():
        if kind == "multi4":  # only the colour-holding picks
            picks = tuple(colour_holding_picks(grid, objects))
        else:
            picks = tuple(_crop_picks(grid, bg, objects))
            if kind == "multi8":
                picks = (*picks, *colour_holding_picks(grid, objects))
        for pick, chosen in picks:
            found = np.flatnonzero(chosen)
            alike = found.size > 1 and (
                np.unique(objects.shape_ids[found]).size == 1
                and np.unique(objects.colours[found]).size == 1
                and objects.colours[found[0]] >= 0
            )
            if found.size == 1 or alike:
                yield f"{kind} {pick}", tuple(int(v) for v in objects.boxes[found[0]])


def _colour_rank_boxes(
    grid: np.ndarray, bg: int
) -> Iterator[tuple[str, tuple[int, int, int, int]]]:
    """The boxes of the most and the least frequent colour other than the background (the
    grid colour rules ``most frequent content`` / ``least frequent content``)."""
    colours = grid_colours(grid, bg)
    for name, rule in (
        ("most frequent colour", "most frequent content"),
        ("least frequent colour", "least frequent content"),
    ):
        colour = int(colours[COLOUR_RULES.index(rule)])
        if colour >= 0:
            yield name, cells_box(grid == colour)


def _crops(grid: np.ndarray, bg: int) -> dict[str, View]:
    """The crop views: each selector's box, each picked object's box and the inside of it
    (one cell in from each side: the picture a frame holds), the boxes of the most and least
    frequent colours, and panels of a grid cut by lines (:func:`cell_crops`)."""
    views = {}
    for name, box in select_boxes(grid).items():
        if box is not None:
            r1, c1, r2, c2 = box
            views[f"crop {name}"] = plain_view(grid[r1 : r2 + 1, c1 : c2 + 1], bg)
    for name, (r1, c1, r2, c2) in _object_crops(grid, bg):
        views[f"crop {name}"] = plain_view(grid[r1 : r2 + 1, c1 : c2 + 1], bg)
        if r2 - r1 >= 2 and c2 - c1 >= 2:
            views[f"crop inside {name}"] = plain_view(grid[r1 + 1 : r2, c1 + 1 : c2], bg)
    for name, (r1, c1, r2, c2) in (*_colour_rank_boxes(grid, bg), *cell_crops(grid)):
        views[f"crop {name}"] = plain_view(grid[r1 : r2 + 1, c1 : c2 + 1], bg)
    return views


def fall(grid: np.ndarray, bg: int, direction: str) -> np.ndarray:
    """Every non-background cell of ``grid`` falls to the ``direction`` side (``down``,
    ``up``, ``left``, ``right``) of its column or row, keeping its order."""
    turned = {"down": grid, "up": grid[::-1], "right": grid.T, "left": grid.T[::-1]}[direction]
    out = np.full_like(turned, bg)
    for c in range(turned.shape[1]):
        cells = turned[:, c][turned[:, c] != bg]
        if cells.size:
            out[-cells.size :, c] = cells
    return {"down": out, "up": out[::-1], "right": out.T, "left": out[::-1].T}[direction]


def task_views(problem: Problem) -> dict[str, list[View]]:
    """The views that fit ``problem``: ``{name: one View per grid}`` (demonstration
    inputs, then test inputs), in the order of the module docstring; a view that gives a
    grid nothing (a crop whose box is missing) is left out."""
    grids = [*problem.demo_inputs, *problem.test_inputs]
    first_in, first_out = problem.demo_inputs[0].shape, problem.demo_outputs[0].shape
    bg = background(*grids)
    # colours in every demonstration input and no output: what a repair fills in
    hidden = [
        c
        for c in range(10)
        if all((g == c).any() for g in problem.demo_inputs)
        and not any((g == c).any() for g in problem.demo_outputs)
    ]
    pairs = attract_pairs(problem, bg)
    moves = shift_moves(problem, bg)
    recolours = recolour_keys(problem, bg)
    stamped = stamp_views(problem, bg)
    pastes = paste_views(problem, bg)
    counted = count_views(problem, bg)
    extended = extended_grids(problem)
    looked_up = lookup_views(problem, bg)
    mirror_tiled = mirror_tile_views(problem)
    panel_cells = panel_cell_views(problem)
    up, down = ratio(first_out, first_in), ratio(first_in, first_out)
    # the content's box blown up: its ratio to the first output, when the content is smaller
    # than the input
    first_box = cells_box(problem.demo_inputs[0] != bg)
    first_content = None
    if first_box is not None:
        first_content = (first_box[2] - first_box[0] + 1, first_box[3] - first_box[1] + 1)
    content_up = None
    if first_content not in (None, first_in):
        content_up = ratio(first_out, first_content)
    symmetric = symmetry_views(problem, bg)
    per_grid: list[dict[str, View]] = []
    for k, grid in enumerate(grids):
        views = {"input": plain_view(grid, bg)}
        views.update({name: plain_view(fn(grid), bg) for name, fn in DIHEDRAL.items()})
        views.update(_crops(grid, bg))
        if up is not None:
            views.update(blow_ups(grid, bg, up, self_tile=up == first_in))
        if content_up is not None:
            box = cells_box(grid != bg)
            if box is not None:
                content = grid[box[0] : box[2] + 1, box[1] : box[3] + 1]
                blown = blow_ups(content, bg, content_up, self_tile=content_up == first_content)
                views.update({f"content {name}": view for name, view in blown.items()})
        for name, column in mirror_tiled.items():
            views[name] = plain_view(column[k], bg)
        if down is not None:
            views[f"sample {down[0]} x {down[1]}"] = plain_view(grid[:: down[0], :: down[1]], bg)
            for axis in (0, 1):
                if down[1 - axis] == 1:
                    pieces = split_parts(grid, down[axis], axis)
                    if pieces is not None:
                        views["parts"] = parts_view(pieces, bg)
        for axis in (0, 1):  # separator lines: the part is smaller than an even cut
            count = first_in[axis] // max(first_out[axis], 1)
            if first_in[1 - axis] == first_out[1 - axis] and count >= 2 and "parts" not in views:
                pieces = split_parts(grid, count, axis)
                if pieces is not None:
                    views["parts"] = parts_view(pieces, bg)
        for direction in ("down", "up", "left", "right"):
            views[f"fall {direction}"] = plain_view(fall(grid, bg, direction), bg)
        if pairs:
            views["attract"] = plain_view(attract_grid(grid, bg, pairs), bg)
        if moves:
            shifted = shift_grid(grid, bg, moves)
            if shifted is not None:
                views[describe_moves(moves)] = plain_view(shifted, bg)
        if recolours:
            recoloured = recolour_grid(grid, bg, recolours)
            if recoloured is not None:
                views[describe_keys(recolours)] = View(recoloured, grid, {}, bg)
        views.update({n: plain_view(g, bg) for n, g in hidden_views(grid, hidden).items()})
        for name, pieces in corner_parts(problem, grid).items():
            views[name] = parts_view(pieces, bg)
        views.update({n: plain_view(g, bg) for n, g in window_views(problem, grid, bg).items()})
        views.update({n: plain_view(g, bg) for n, g in keyed_views(grid, bg).items()})
        views.update({n: plain_view(g, bg) for n, g in dedupe_views(grid, bg).items()})
        for name, column in looked_up.items():
            views[name] = plain_view(column[k], bg)
        if extended is not None and extended[k] is not None:
            views["extend pattern"] = plain_view(extended[k], bg)
        for name in pastes:
            pasted = paste_template(grid, bg, move=name == "move template")
            if pasted is not None:
                views[name] = plain_view(pasted, bg)
        for name, column in symmetric.items():
            if column[k] is not None:
                views[name] = plain_view(column[k], bg)
        for name, column in stamped.items():
            views[name] = plain_view(column[k], bg)
        for name, column in counted.items():
            if column[k] is not None:
                canvas, masks = column[k]
                views[name] = View(canvas, canvas, masks, bg)
        for name, column in panel_cells.items():
            if column[k] is not None:
                canvas, masks = column[k]
                views[name] = View(canvas, canvas, masks, bg)
        views["blank"] = View(np.full(grid.shape, bg, np.int8), grid, {}, bg)
        out_shapes = {out.shape for out in problem.demo_outputs}
        if len(out_shapes) == 1:
            (h, w) = next(iter(out_shapes))
            views[f"blank {h} x {w}"] = View(
                np.full((h, w), bg, np.int8), np.full((h, w), bg, np.int8), {}, bg
            )
        per_grid.append(views)
    names = [name for name in per_grid[0] if all(name in views for views in per_grid)]
    fitting = {}
    for name in names:
        column = [views[name] for views in per_grid]
        if all(column[k].canvas.shape == out.shape for k, out in enumerate(problem.demo_outputs)):
            fitting[name] = column
    return fitting


__all__ = [
    "CONTENT_CROPS",
    "CROP_PICK_TASKS",
    "DIHEDRAL",
    "VIEW_KINDS",
    "VIEW_TASKS",
    "View",
    "fall",
    "repair_periodic",
    "split_parts",
    "task_views",
]
