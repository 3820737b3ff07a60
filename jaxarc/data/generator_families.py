"""Task families for the on-device generators: one random input/output pair per call.

Every family is a pure JAX function ``(uniforms, task_params, canvas) -> GeneratedPair``
written for one pair (``uniforms``: ``[DRAW_PLANES, H, W]`` draws in ``[0, 1)``);
:mod:`jaxarc.data.generators` vmaps it over the pairs of a task.
A task's parameters (:class:`TaskParams`: four distinct non-zero colours and a direction)
are drawn once per task, so every pair of a task follows the same rule and the rule must
be inferred from the demonstration pairs.

Grids live on a static canvas ``(H, W)``; cells outside a pair's ``(rows, cols)`` are
``-1``. Background colour is 0.

Families and their optimal solutions (``SUBMIT`` included in the count). The first four
(``gen/easy``) are solved with **point** actions: one ``FLOOD_c`` on a cell of each region
that changes, then ``SUBMIT``; the others need bbox actions (a rectangle to flip, rotate or
move):

===================  =====================================================  =======
family               rule                                                   actions
===================  =====================================================  =======
``recolour``         two objects of colour ``a`` become colour ``b``        3
``erase``            two objects of colour ``a`` disappear (become 0)       3
``fill_background``  background (split in two by a wall) becomes colour c   3
``fill_holes``       the holes of two hollow rectangles become colour c     3
``rot180``           rotate the whole grid by 180 degrees                   3 (bbox)
``move``             one object moves two cells in the task's direction     3 (bbox)
``flip``             mirror the whole grid (left-right or top-bottom)       2 (bbox)
``rotate``           rotate a square grid 90 degrees (cw or ccw)            2 (bbox)
===================  =====================================================  =======

Every family keeps a distractor that must stay unchanged (a third object, dots, the
frames), so "change every non-background cell" never solves a task.

The difficulty ladder's first rungs (:mod:`jaxarc.data.ladder`) add three one-cell families
(:data:`LADDER_FAMILIES`, no distractor, the grid fills the canvas): ``mark_one`` (the one
coloured cell becomes colour 1), ``recolour_cell_two`` (it becomes the task's colour, 1 or
2) and ``recolour_cell`` (it becomes the task's colour ``b``, any of 1..9).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, Int8, Int32

from jaxarc.data.bank import PAD_VALUE

Canvas = tuple[int, int]


class TaskParams(NamedTuple):
    """Per-task rule parameters shared by all pairs of one task."""

    colours: Int32[Array, " 4"]  # four distinct colours in 1..9
    direction: Int32[Array, ""]  # 0 up, 1 down, 2 left, 3 right (families that move)
    # smallest grid side drawn (0: each family's own minimum); larger canvases than training
    # with ``min_side`` near the canvas give grid sizes a policy has never seen
    min_side: Int32[Array, ""] | int = 0


class GeneratedPair(NamedTuple):
    """One input/output pair on the canvas (``-1`` outside the shapes)."""

    input: Int8[Array, "H W"]
    output: Int8[Array, "H W"]
    input_shape: Int32[Array, " 2"]
    output_shape: Int32[Array, " 2"]
    valid: Bool[Array, ""]  # False when placement failed (the caller retries)


def task_params_from_uniforms(draws: Float32[Array, " 10"], min_side: int = 0) -> TaskParams:
    """Task parameters from 10 uniform draws (one PRNG call per task keeps compiles short)."""
    colours = (jnp.argsort(draws[:9])[:4] + 1).astype(jnp.int32)
    direction = jnp.minimum(jnp.floor(draws[9] * 4), 3).astype(jnp.int32)
    return TaskParams(colours=colours, direction=direction, min_side=jnp.int32(min_side))


DRAW_PLANES = 8  # uniform planes ``[H, W]`` a pair may consume


class Draws:
    """A pair's uniform draws ``[DRAW_PLANES, H, W]``, handed out plane by plane.

    Every threefry call site costs compile time (about a second on CPU), so a task makes one
    ``jax.random.uniform`` call for all its pairs and the families read from it.
    """

    def __init__(self, uniforms: Float32[Array, "K H W"]):
        self._draws = uniforms
        self._next = 0

    def plane(self) -> Float32[Array, "H W"]:
        if self._next >= self._draws.shape[0]:
            raise ValueError(f"a family used more than {self._draws.shape[0]} draw planes")
        plane = self._draws[self._next]
        self._next += 1
        return plane

    def integers(self, low: int | Array, high: int | Array, count: int) -> Int32[Array, " n"]:
        """``count`` integers uniform in ``[low, high]`` (inclusive; bounds may be traced)."""
        u = self.plane().reshape(-1)[:count]
        span = jnp.asarray(high, jnp.int32) - jnp.asarray(low, jnp.int32) + 1
        offset = jnp.minimum(jnp.floor(u * span.astype(jnp.float32)).astype(jnp.int32), span - 1)
        return jnp.asarray(low, jnp.int32) + offset


# ---------------------------------------------------------------- helpers


def _coords(canvas: Canvas) -> tuple[Int32[Array, "H W"], Int32[Array, "H W"]]:
    rows, cols = jnp.meshgrid(
        jnp.arange(canvas[0], dtype=jnp.int32),
        jnp.arange(canvas[1], dtype=jnp.int32),
        indexing="ij",
    )
    return rows, cols


def _inside(canvas: Canvas, shape: Int32[Array, " 2"]) -> Bool[Array, "H W"]:
    rows, cols = _coords(canvas)
    return (rows < shape[0]) & (cols < shape[1])


def _finish(
    grid: Int32[Array, "H W"], canvas: Canvas, shape: Int32[Array, " 2"]
) -> Int8[Array, "H W"]:
    return jnp.where(_inside(canvas, shape), grid, PAD_VALUE).astype(jnp.int8)


def _random_size(draws: Draws, low: int, canvas: Canvas, params: TaskParams) -> Int32[Array, " 2"]:
    """Grid rows and columns uniform in ``[max(low, params.min_side), min(canvas)]``."""
    return draws.integers(jnp.maximum(low, params.min_side), min(canvas), 2)


def _pair(inp, out, shape, valid) -> GeneratedPair:
    return GeneratedPair(inp, out, shape, shape, jnp.asarray(valid, dtype=bool))


def _random_pattern(draws: Draws, palette: Int32[Array, " K"]) -> Int32[Array, "H W"]:
    """Cells are background w.p. 1/2, else a colour drawn from ``palette``."""
    u = draws.plane()
    on = u < 0.5
    index = jnp.minimum(jnp.floor((u - 0.5) * 2 * palette.shape[0]), palette.shape[0] - 1)
    return jnp.where(on, 0, palette[jnp.maximum(index, 0).astype(jnp.int32)]).astype(jnp.int32)


def _asymmetric_pattern(
    draws: Draws, canvas: Canvas, shape: Int32[Array, " 2"], colours: Int32[Array, " 4"]
) -> Int32[Array, "H W"]:
    """A random pattern whose four corners carry four distinct colours (no symmetry)."""
    grid = _random_pattern(draws, colours)
    rows, cols = _coords(canvas)
    last_r, last_c = shape[0] - 1, shape[1] - 1
    grid = jnp.where((rows == 0) & (cols == 0), colours[0], grid)
    grid = jnp.where((rows == 0) & (cols == last_c), colours[1], grid)
    grid = jnp.where((rows == last_r) & (cols == 0), colours[2], grid)
    return jnp.where((rows == last_r) & (cols == last_c), colours[3], grid)


def _window_counts(
    mask: Bool[Array, "H W"], size: Int32[Array, " 2"], margin: int
) -> Int32[Array, "H W"]:
    """For every top-left cell, how many ``mask`` cells lie in the rectangle of ``size``
    grown by ``margin`` on each side (clipped to the canvas), via an integral image (its four
    corners read in one gather: a small program, run for every rectangle a family places)."""
    height, width = mask.shape
    integral = jnp.pad(jnp.cumsum(jnp.cumsum(mask.astype(jnp.int32), 0), 1), ((1, 0), (1, 0)))
    rows = jnp.arange(height, dtype=jnp.int32)[:, None]
    cols = jnp.arange(width, dtype=jnp.int32)[None, :]
    top = jnp.clip(rows - margin, 0, height)
    left = jnp.clip(cols - margin, 0, width)
    bottom = jnp.clip(rows + size[0] + margin, 0, height)
    right = jnp.clip(cols + size[1] + margin, 0, width)
    stride = width + 1  # the integral image's row length
    corners = jnp.stack(
        [bottom * stride + right, top * stride + right, bottom * stride + left, top * stride + left]
    )
    bottom_right, top_right, bottom_left, top_left = jnp.take(
        integral.reshape(-1), corners, mode="clip"
    )
    return bottom_right - top_right - bottom_left + top_left


def place_rectangle(
    uniform: Float32[Array, "H W"],
    canvas: Canvas,
    allowed: Bool[Array, "H W"],
    occupied: Bool[Array, "H W"],
    size: Int32[Array, " 2"],
) -> tuple[Bool[Array, "H W"], Bool[Array, ""]]:
    """A uniformly placed rectangle inside ``allowed`` not touching ``occupied`` (8-neighbourhood).

    ``uniform`` holds one uniform draw per top-left cell. Returns the rectangle's cells and
    whether any placement existed (else the mask is empty).
    """
    rows, cols = _coords(canvas)
    on_canvas = (rows + size[0] <= canvas[0]) & (cols + size[1] <= canvas[1])
    fits = (
        on_canvas
        & (_window_counts(~allowed, size, 0) == 0)
        & (_window_counts(occupied, size, 1) == 0)
    )
    choice = jnp.argmax(jnp.where(fits, uniform, -1.0).reshape(-1))  # uniform among fits
    placed = jnp.any(fits)
    top, left = choice // canvas[1], choice % canvas[1]
    rect = (rows >= top) & (rows < top + size[0]) & (cols >= left) & (cols < left + size[1])
    return rect & placed, placed


def read_cells(
    grid: Int32[Array, "H W"], src_r: Int32[Array, "H W"], src_c: Int32[Array, "H W"]
) -> Int32[Array, "H W"]:
    """Each cell of the result read from ``grid`` at ``(src_r, src_c)``, clipped to the canvas
    (the caller masks what lies outside its grid)."""
    height, width = grid.shape
    return grid[jnp.clip(src_r, 0, height - 1), jnp.clip(src_c, 0, width - 1)]


def shift_by(
    grid: Int32[Array, "H W"], d_row: Int32[Array, ""], d_col: Int32[Array, ""]
) -> Int32[Array, "H W"]:
    """Content moved ``d_row`` cells down and ``d_col`` right (negative: up, left); vacated
    cells become 0."""
    canvas = grid.shape
    rows, cols = _coords(canvas)
    src_r, src_c = rows - d_row, cols - d_col
    inside = (src_r >= 0) & (src_r < canvas[0]) & (src_c >= 0) & (src_c < canvas[1])
    return jnp.where(inside, read_cells(grid, src_r, src_c), 0)


def shift_grid(
    grid: Int32[Array, "H W"], direction: Int32[Array, ""], steps: int
) -> Int32[Array, "H W"]:
    """Content shifted ``steps`` cells (0 up, 1 down, 2 left, 3 right); vacated cells become 0."""
    d_row = jnp.array([-1, 1, 0, 0], dtype=jnp.int32)[direction] * steps
    d_col = jnp.array([0, 0, -1, 1], dtype=jnp.int32)[direction] * steps
    return shift_by(grid, d_row, d_col)


# ---------------------------------------------------------------- families


def rot180_pair(
    uniforms: Float32[Array, "K H W"], params: TaskParams, canvas: Canvas
) -> GeneratedPair:
    """The whole grid rotated 180 degrees (optimal: FLIP_LR + FLIP_TB of the grid, SUBMIT)."""
    draws = Draws(uniforms)
    shape = _random_size(draws, 3, canvas, params)
    grid = _asymmetric_pattern(draws, canvas, shape, params.colours)
    rows, cols = _coords(canvas)
    out = read_cells(grid, shape[0] - 1 - rows, shape[1] - 1 - cols)
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, True)


def flip_pair(
    uniforms: Float32[Array, "K H W"], params: TaskParams, canvas: Canvas
) -> GeneratedPair:
    """Mirrored left-right (even direction) or top-bottom (odd direction)."""
    draws = Draws(uniforms)
    shape = _random_size(draws, 3, canvas, params)
    grid = _asymmetric_pattern(draws, canvas, shape, params.colours)
    rows, cols = _coords(canvas)
    left_right = params.direction % 2 == 0
    src_r = jnp.where(left_right, rows, shape[0] - 1 - rows)
    src_c = jnp.where(left_right, shape[1] - 1 - cols, cols)
    out = read_cells(grid, src_r, src_c)
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, True)


def rotate_pair(
    uniforms: Float32[Array, "K H W"], params: TaskParams, canvas: Canvas
) -> GeneratedPair:
    """A square grid rotated 90 degrees clockwise (even direction) or counter-clockwise."""
    draws = Draws(uniforms)
    side = draws.integers(jnp.maximum(3, params.min_side), min(canvas), 1)[0]
    shape = jnp.stack([side, side])
    grid = _asymmetric_pattern(draws, canvas, shape, params.colours)
    rows, cols = _coords(canvas)
    clockwise = params.direction % 2 == 0
    src_r = jnp.where(clockwise, side - 1 - cols, cols)
    src_c = jnp.where(clockwise, rows, side - 1 - rows)
    out = read_cells(grid, src_r, src_c)
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, True)


def _two_objects_and_distractor(
    draws: Draws, canvas: Canvas, params: TaskParams
) -> tuple[Int32[Array, "H W"], Int32[Array, " 2"], Bool[Array, ""]]:
    """Two separate rectangles of colour ``a`` (1-2 cells a side) and a distractor of colour
    ``d``, none touching another; returns the grid, its shape and whether both ``a`` objects
    were placed."""
    shape = _random_size(draws, 5, canvas, params)
    sizes = draws.integers(1, 2, 6).reshape(3, 2)
    a, d = params.colours[0], params.colours[2]
    allowed = _inside(canvas, shape)
    occupied = jnp.zeros(canvas, dtype=bool)
    grid = jnp.zeros(canvas, dtype=jnp.int32)
    placed_all = jnp.asarray(True)
    for index, colour in enumerate((a, a, d)):
        rect, placed = place_rectangle(draws.plane(), canvas, allowed, occupied, sizes[index])
        occupied = occupied | rect
        grid = jnp.where(rect, colour, grid)
        if index < 2:  # the two recoloured objects are required, the distractor optional
            placed_all = placed_all & placed
    return grid, shape, placed_all


def recolour_pair(
    uniforms: Float32[Array, "K H W"], params: TaskParams, canvas: Canvas
) -> GeneratedPair:
    """Two separate rectangles of colour ``a`` become ``b``; a distractor of colour ``d`` stays.

    Optimal: FLOOD_b on a cell of each ``a`` object, SUBMIT.
    """
    grid, shape, placed = _two_objects_and_distractor(Draws(uniforms), canvas, params)
    out = jnp.where(grid == params.colours[0], params.colours[1], grid)
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, placed)


def erase_pair(
    uniforms: Float32[Array, "K H W"], params: TaskParams, canvas: Canvas
) -> GeneratedPair:
    """Two separate rectangles of colour ``a`` disappear; a distractor of colour ``d`` stays.

    Optimal: FLOOD_0 on a cell of each ``a`` object, SUBMIT.
    """
    grid, shape, placed = _two_objects_and_distractor(Draws(uniforms), canvas, params)
    out = jnp.where(grid == params.colours[0], 0, grid)
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, placed)


def fill_holes_pair(
    uniforms: Float32[Array, "K H W"], params: TaskParams, canvas: Canvas
) -> GeneratedPair:
    """Two hollow rectangles (frames 3 tall, 3-4 wide) of colour ``a``; their holes become
    colour ``c``; the background outside stays 0 and a dot of colour ``d`` stays. The first
    frame touches the top border, so the second always fits (grids are at least 7x7).

    Optimal: FLOOD_c on a cell of each hole, SUBMIT.
    """
    draws = Draws(uniforms)
    shape = _random_size(draws, 7, canvas, params)
    widths = draws.integers(3, 4, 2)
    a, c, d = params.colours[0], params.colours[1], params.colours[2]
    rows, _ = _coords(canvas)
    allowed = _inside(canvas, shape)
    occupied = jnp.zeros(canvas, dtype=bool)
    grid = jnp.zeros(canvas, dtype=jnp.int32)
    holes = jnp.zeros(canvas, dtype=bool)
    placed_all = jnp.asarray(True)
    for index in range(2):
        size = jnp.stack([jnp.int32(3), widths[index]])
        region = allowed & (rows < 3) if index == 0 else allowed
        rect, placed = place_rectangle(draws.plane(), canvas, region, occupied, size)
        hole = rect & _shrunk(rect)
        occupied = occupied | rect
        grid = jnp.where(rect & ~hole, a, grid)
        holes = holes | hole
        placed_all = placed_all & placed
    dot, _ = place_rectangle(draws.plane(), canvas, allowed, occupied, jnp.ones(2, jnp.int32))
    grid = jnp.where(dot, d, grid)
    out = jnp.where(holes, c, grid)
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, placed_all)


def _shrunk(rect: Bool[Array, "H W"]) -> Bool[Array, "H W"]:
    """Cells of ``rect`` whose four neighbours are all in ``rect`` (its interior)."""
    padded = jnp.pad(rect, 1)
    return padded[:-2, 1:-1] & padded[2:, 1:-1] & padded[1:-1, :-2] & padded[1:-1, 2:] & rect


def move_pair(
    uniforms: Float32[Array, "K H W"], params: TaskParams, canvas: Canvas
) -> GeneratedPair:
    """One object moves two cells in the task's direction (optimal: MOVE twice, SUBMIT)."""
    draws = Draws(uniforms)
    shape = _random_size(draws, 5, canvas, params)
    box = draws.integers(1, 3, 2)
    rows, cols = _coords(canvas)
    # the object's box and its position two cells further must both lie inside the grid
    d_row = jnp.array([-2, 2, 0, 0], dtype=jnp.int32)[params.direction]
    d_col = jnp.array([0, 0, -2, 2], dtype=jnp.int32)[params.direction]
    allowed = (
        (rows >= jnp.maximum(-d_row, 0))
        & (cols >= jnp.maximum(-d_col, 0))
        & (rows < shape[0] - jnp.maximum(d_row, 0))
        & (cols < shape[1] - jnp.maximum(d_col, 0))
    )
    rect, placed = place_rectangle(draws.plane(), canvas, allowed, jnp.zeros(canvas, bool), box)
    cells = rect & (draws.plane() < 0.7)
    # keep the object non-empty: its first cell (row-major) is always on
    first = jnp.argmax(rect.reshape(-1))
    cells = cells | ((jnp.arange(rect.size).reshape(canvas) == first) & placed)
    grid = jnp.where(cells, params.colours[0], 0).astype(jnp.int32)
    out = shift_grid(grid, params.direction, 2)
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, placed)


def fill_background_pair(
    uniforms: Float32[Array, "K H W"], params: TaskParams, canvas: Canvas
) -> GeneratedPair:
    """A wall splits the background in two; the background becomes colour ``c``.

    Optimal: FLOOD_c on each side of the wall, SUBMIT. Small interior dots (never touching
    the wall, the border or each other) decorate the grid and stay as they are.
    """
    draws = Draws(uniforms)
    shape = _random_size(draws, 4, canvas, params)
    c, wall_colour, dot_colour = params.colours[1], params.colours[2], params.colours[3]
    rows, cols = _coords(canvas)
    choices = draws.integers(0, 1_000_000, 2)
    vertical = choices[0] % 2 == 0
    span = jnp.where(vertical, shape[1], shape[0])
    wall_at = choices[1] % (span - 2) + 1  # never on the border: both sides keep background
    wall = jnp.where(vertical, cols == wall_at, rows == wall_at) & _inside(canvas, shape)
    grid = jnp.where(wall, wall_colour, 0).astype(jnp.int32)
    interior = (rows >= 1) & (cols >= 1) & (rows < shape[0] - 1) & (cols < shape[1] - 1)
    occupied = wall
    for _ in range(2):
        dot, _ = place_rectangle(draws.plane(), canvas, interior, occupied, jnp.ones(2, jnp.int32))
        occupied = occupied | dot
        grid = jnp.where(dot, dot_colour, grid)
    out = jnp.where(grid == 0, c, grid)
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, True)


def _one_marked_cell(draws: Draws, canvas: Canvas) -> tuple[Bool[Array, "H W"], Int32[Array, " 2"]]:
    """One uniformly placed cell of a grid that fills the canvas, and the grid's shape."""
    shape = jnp.asarray(canvas, dtype=jnp.int32)
    rows, cols = _coords(canvas)
    cell = draws.integers(0, canvas[0] * canvas[1] - 1, 1)[0]
    marked = rows * canvas[1] + cols == cell
    return marked, shape


def mark_one_pair(
    uniforms: Float32[Array, "K H W"], params: TaskParams, canvas: Canvas
) -> GeneratedPair:
    """Ladder rung 1: the one coloured cell (colour 2..9) becomes colour 1; a fixed rule, no
    demonstration needed. The grid fills the canvas (4x4 on the ladder's canvas).

    Optimal: FLOOD_1 (or FILL_1) on the cell, SUBMIT.
    """
    draws = Draws(uniforms)
    colour = draws.integers(2, 9, 1)[0]
    marked, shape = _one_marked_cell(draws, canvas)
    inp = jnp.where(marked, colour, 0)
    out = jnp.where(marked, 1, 0)
    return _pair(_finish(inp, canvas, shape), _finish(out, canvas, shape), shape, True)


def _recolour_cell(
    uniforms: Float32[Array, "K H W"], b: Int32[Array, ""], canvas: Canvas
) -> GeneratedPair:
    """The one coloured cell (any colour in 1..9 but ``b``, drawn per pair) becomes ``b``."""
    draws = Draws(uniforms)
    other = draws.integers(1, 8, 1)[0]  # one of the 8 colours in 1..9 other than b
    colour = other + (other >= b).astype(jnp.int32)
    marked, shape = _one_marked_cell(draws, canvas)
    inp = jnp.where(marked, colour, 0)
    out = jnp.where(marked, b, 0)
    return _pair(_finish(inp, canvas, shape), _finish(out, canvas, shape), shape, True)


def recolour_cell_two_pair(
    uniforms: Float32[Array, "K H W"], params: TaskParams, canvas: Canvas
) -> GeneratedPair:
    """Ladder rung 2: the one coloured cell becomes colour 1 or 2, the task's choice, which
    only the demonstration outputs show. Optimal: FILL_b (or FLOOD_b) on the cell, SUBMIT."""
    return _recolour_cell(uniforms, 1 + params.direction % 2, canvas)


def recolour_cell_pair(
    uniforms: Float32[Array, "K H W"], params: TaskParams, canvas: Canvas
) -> GeneratedPair:
    """Ladder rung 3: the one coloured cell becomes the task's colour ``b`` (any of 1..9),
    which only the demonstration outputs show. Optimal: FILL_b on the cell, SUBMIT."""
    return _recolour_cell(uniforms, params.colours[1], canvas)


PairGenerator = Callable[[Float32[Array, "K H W"], TaskParams, Canvas], GeneratedPair]

FAMILIES: dict[str, PairGenerator] = {
    "recolour": recolour_pair,
    "erase": erase_pair,
    "fill_background": fill_background_pair,
    "fill_holes": fill_holes_pair,
    "rot180": rot180_pair,
    "move": move_pair,
    "flip": flip_pair,
    "rotate": rotate_pair,
}
"""Every family by name (``gen/<name>`` sources)."""

LADDER_FAMILIES: dict[str, PairGenerator] = {
    "mark_one": mark_one_pair,
    "recolour_cell_two": recolour_cell_two_pair,
    "recolour_cell": recolour_cell_pair,
}
"""The one-cell families of the difficulty ladder's first rungs (``jaxarc.data.ladder``); not
sources of their own: ``gen/ladder-1`` to ``gen/ladder-3`` play them on a 4x4 canvas."""

ALL_FAMILIES: dict[str, PairGenerator] = {**FAMILIES, **LADDER_FAMILIES}
"""Every family a :class:`~jaxarc.data.generators.GeneratorSource` can mix."""

MIN_CANVAS_SIDE = 4  # a task's parameters need 11 uniform draws from one ``[H, W]`` plane
FAMILY_MIN_SIDE: dict[str, int] = {
    **dict.fromkeys(FAMILIES, 7),  # the canvas the families were written and tested for
    "recolour": 5,  # two 1-2 cell objects and a distractor fit a 5x5 grid (gen/ladder-4)
    "mark_one": MIN_CANVAS_SIDE,
    "recolour_cell_two": MIN_CANVAS_SIDE,
    "recolour_cell": MIN_CANVAS_SIDE,
}
"""The smallest square canvas side each family is generated (and tested) on."""

EASY_FAMILIES: tuple[str, ...] = ("recolour", "erase", "fill_background", "fill_holes")
"""The four families mixed in ``gen/easy`` (each needs two point edits and a SUBMIT)."""

GEOMETRIC_FAMILIES: tuple[str, ...] = ("rot180", "move", "flip", "rotate")
"""The four families that act on a rectangle (bbox actions: flips, rotations, moves)."""

MEDIUM_FAMILIES: tuple[str, ...] = EASY_FAMILIES + GEOMETRIC_FAMILIES
"""The eight families mixed in ``gen/medium`` (bbox actions, 2-3 actions each)."""
