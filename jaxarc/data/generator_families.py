"""Task families for the on-device generators: one random input/output pair per call.

Every family is a pure JAX function ``(key, task_params, grid_size_key...) -> GeneratedPair``
written for one pair; :mod:`jaxarc.data.generators` vmaps it over the pairs of a task.
A task's parameters (:class:`TaskParams`: four distinct non-zero colours and a direction)
are drawn once per task, so every pair of a task follows the same rule and the rule must
be inferred from the demonstration pairs.

Grids live on a static canvas ``(H, W)``; cells outside a pair's ``(rows, cols)`` are
``-1``. Background colour is 0.

Families and their optimal bbox solutions (``SUBMIT`` included in the count):

=================  =======================================================  =======
family             rule                                                     actions
=================  =======================================================  =======
``rot180``         rotate the whole grid by 180 degrees                     3
``recolour``       two objects of colour ``a`` become colour ``b``          3
``move``           one object moves two cells in the task's direction       3
``fill_background``  background (split in two by a wall) becomes colour c  3
``flip``           mirror the whole grid (left-right or top-bottom)         2
``rotate``         rotate a square grid 90 degrees (cw or ccw)              2
=================  =======================================================  =======
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Int8, Int32, PRNGKeyArray

from jaxarc.data.bank import PAD_VALUE

Canvas = tuple[int, int]


class TaskParams(NamedTuple):
    """Per-task rule parameters shared by all pairs of one task."""

    colours: Int32[Array, " 4"]  # four distinct colours in 1..9
    direction: Int32[Array, ""]  # 0 up, 1 down, 2 left, 3 right (families that move)


class GeneratedPair(NamedTuple):
    """One input/output pair on the canvas (``-1`` outside the shapes)."""

    input: Int8[Array, "H W"]
    output: Int8[Array, "H W"]
    input_shape: Int32[Array, " 2"]
    output_shape: Int32[Array, " 2"]
    valid: Bool[Array, ""]  # False when placement failed (the caller retries)


def sample_task_params(key: PRNGKeyArray) -> TaskParams:
    colour_key, direction_key = jax.random.split(key)
    colours = (jax.random.permutation(colour_key, 9)[:4] + 1).astype(jnp.int32)
    direction = jax.random.randint(direction_key, (), 0, 4, dtype=jnp.int32)
    return TaskParams(colours=colours, direction=direction)


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


def _random_size(key: PRNGKeyArray, low: int, high: int) -> Int32[Array, " 2"]:
    return jax.random.randint(key, (2,), low, high + 1, dtype=jnp.int32)


def _pair(inp, out, shape, valid) -> GeneratedPair:
    return GeneratedPair(inp, out, shape, shape, jnp.asarray(valid, dtype=bool))


def _random_pattern(
    key: PRNGKeyArray, canvas: Canvas, palette: Int32[Array, " K"]
) -> Int32[Array, "H W"]:
    """Cells are background w.p. 1/2, else a colour drawn from ``palette``."""
    on_key, colour_key = jax.random.split(key)
    on = jax.random.bernoulli(on_key, 0.5, canvas)
    colour = palette[jax.random.randint(colour_key, canvas, 0, palette.shape[0])]
    return jnp.where(on, colour, 0).astype(jnp.int32)


def _asymmetric_pattern(
    key: PRNGKeyArray, canvas: Canvas, shape: Int32[Array, " 2"], colours: Int32[Array, " 4"]
) -> Int32[Array, "H W"]:
    """A random pattern whose four corners carry four distinct colours (no symmetry)."""
    grid = _random_pattern(key, canvas, colours)
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
    grown by ``margin`` on each side (clipped to the canvas), via an integral image."""
    canvas = mask.shape
    integral = jnp.pad(jnp.cumsum(jnp.cumsum(mask.astype(jnp.int32), 0), 1), ((1, 0), (1, 0)))
    rows, cols = _coords(canvas)
    top = jnp.clip(rows - margin, 0, canvas[0])
    left = jnp.clip(cols - margin, 0, canvas[1])
    bottom = jnp.clip(rows + size[0] + margin, 0, canvas[0])
    right = jnp.clip(cols + size[1] + margin, 0, canvas[1])
    return (
        integral[bottom, right]
        - integral[top, right]
        - integral[bottom, left]
        + integral[top, left]
    )


def place_rectangle(
    key: PRNGKeyArray,
    canvas: Canvas,
    allowed: Bool[Array, "H W"],
    occupied: Bool[Array, "H W"],
    size: Int32[Array, " 2"],
) -> tuple[Bool[Array, "H W"], Bool[Array, ""]]:
    """A uniformly placed rectangle inside ``allowed`` not touching ``occupied`` (8-neighbourhood).

    Returns the rectangle's cells and whether any placement existed (else the mask is empty).
    """
    rows, cols = _coords(canvas)
    on_canvas = (rows + size[0] <= canvas[0]) & (cols + size[1] <= canvas[1])
    fits = (
        on_canvas
        & (_window_counts(~allowed, size, 0) == 0)
        & (_window_counts(occupied, size, 1) == 0)
    )
    choice = jax.random.categorical(key, jnp.where(fits, 0.0, -jnp.inf).reshape(-1))
    placed = jnp.any(fits)
    top, left = choice // canvas[1], choice % canvas[1]
    rect = (rows >= top) & (rows < top + size[0]) & (cols >= left) & (cols < left + size[1])
    return rect & placed, placed


def shift_grid(
    grid: Int32[Array, "H W"], direction: Int32[Array, ""], steps: int
) -> Int32[Array, "H W"]:
    """Content shifted ``steps`` cells (0 up, 1 down, 2 left, 3 right); vacated cells become 0."""
    canvas = grid.shape
    rows, cols = _coords(canvas)
    d_row = jnp.array([-1, 1, 0, 0], dtype=jnp.int32)[direction] * steps
    d_col = jnp.array([0, 0, -1, 1], dtype=jnp.int32)[direction] * steps
    src_r, src_c = rows - d_row, cols - d_col
    inside = (src_r >= 0) & (src_r < canvas[0]) & (src_c >= 0) & (src_c < canvas[1])
    moved = grid[jnp.clip(src_r, 0, canvas[0] - 1), jnp.clip(src_c, 0, canvas[1] - 1)]
    return jnp.where(inside, moved, 0)


# ---------------------------------------------------------------- families


def rot180_pair(key: PRNGKeyArray, params: TaskParams, canvas: Canvas) -> GeneratedPair:
    """The whole grid rotated 180 degrees (optimal: FLIP_LR + FLIP_TB of the grid, SUBMIT)."""
    size_key, pattern_key = jax.random.split(key)
    shape = _random_size(size_key, 3, min(canvas))
    grid = _asymmetric_pattern(pattern_key, canvas, shape, params.colours)
    rows, cols = _coords(canvas)
    src_r = jnp.clip(shape[0] - 1 - rows, 0, canvas[0] - 1)
    src_c = jnp.clip(shape[1] - 1 - cols, 0, canvas[1] - 1)
    out = grid[src_r, src_c]
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, True)


def flip_pair(key: PRNGKeyArray, params: TaskParams, canvas: Canvas) -> GeneratedPair:
    """Mirrored left-right (even direction) or top-bottom (odd direction)."""
    size_key, pattern_key = jax.random.split(key)
    shape = _random_size(size_key, 3, min(canvas))
    grid = _asymmetric_pattern(pattern_key, canvas, shape, params.colours)
    rows, cols = _coords(canvas)
    left_right = params.direction % 2 == 0
    src_r = jnp.where(left_right, rows, shape[0] - 1 - rows)
    src_c = jnp.where(left_right, shape[1] - 1 - cols, cols)
    out = grid[jnp.clip(src_r, 0, canvas[0] - 1), jnp.clip(src_c, 0, canvas[1] - 1)]
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, True)


def rotate_pair(key: PRNGKeyArray, params: TaskParams, canvas: Canvas) -> GeneratedPair:
    """A square grid rotated 90 degrees clockwise (even direction) or counter-clockwise."""
    size_key, pattern_key = jax.random.split(key)
    side = jax.random.randint(size_key, (), 3, min(canvas) + 1, dtype=jnp.int32)
    shape = jnp.stack([side, side])
    grid = _asymmetric_pattern(pattern_key, canvas, shape, params.colours)
    rows, cols = _coords(canvas)
    clockwise = params.direction % 2 == 0
    src_r = jnp.where(clockwise, side - 1 - cols, cols)
    src_c = jnp.where(clockwise, rows, side - 1 - rows)
    out = grid[jnp.clip(src_r, 0, canvas[0] - 1), jnp.clip(src_c, 0, canvas[1] - 1)]
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, True)


def recolour_pair(key: PRNGKeyArray, params: TaskParams, canvas: Canvas) -> GeneratedPair:
    """Two separate rectangles of colour ``a`` become ``b``; a distractor of colour ``d`` stays.

    Optimal: FLOOD_b (or FILL_b) on each ``a`` object, SUBMIT.
    """
    keys = jax.random.split(key, 7)
    shape = _random_size(keys[0], 5, min(canvas))
    a, b, d = params.colours[0], params.colours[1], params.colours[2]
    allowed = _inside(canvas, shape)
    occupied = jnp.zeros(canvas, dtype=bool)
    grid = jnp.zeros(canvas, dtype=jnp.int32)
    placed_all = jnp.asarray(True)
    for index, colour in enumerate((a, a, d)):
        size = jax.random.randint(keys[1 + index], (2,), 1, 3, dtype=jnp.int32)
        rect, placed = place_rectangle(keys[4 + index], canvas, allowed, occupied, size)
        occupied = occupied | rect
        grid = jnp.where(rect, colour, grid)
        if index < 2:  # the two recoloured objects are required, the distractor optional
            placed_all = placed_all & placed
    out = jnp.where(grid == a, b, grid)
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, placed_all)


def move_pair(key: PRNGKeyArray, params: TaskParams, canvas: Canvas) -> GeneratedPair:
    """One object moves two cells in the task's direction (optimal: MOVE twice, SUBMIT)."""
    size_key, shape_key, fill_key, place_key = jax.random.split(key, 4)
    shape = _random_size(size_key, 5, min(canvas))
    box = jax.random.randint(shape_key, (2,), 1, 4, dtype=jnp.int32)
    rows, cols = _coords(canvas)
    # the object's box and its position two cells further must both lie inside the grid
    d_row = jnp.array([-2, 2, 0, 0], dtype=jnp.int32)[params.direction]
    d_col = jnp.array([0, 0, -2, 2], dtype=jnp.int32)[params.direction]
    lead = jnp.stack([jnp.maximum(-d_row, 0), jnp.maximum(-d_col, 0)])
    trail = jnp.stack([jnp.maximum(d_row, 0), jnp.maximum(d_col, 0)])
    allowed = (
        (rows >= lead[0])
        & (cols >= lead[1])
        & (rows < shape[0] - trail[0])
        & (cols < shape[1] - trail[1])
    )
    rect, placed = place_rectangle(place_key, canvas, allowed, jnp.zeros(canvas, bool), box)
    cells = rect & jax.random.bernoulli(fill_key, 0.7, canvas)
    # keep the object non-empty: its first cell (row-major) is always on
    first = jnp.argmax(rect.reshape(-1))
    cells = cells | (jnp.arange(rect.size).reshape(canvas) == first) & placed
    grid = jnp.where(cells, params.colours[0], 0).astype(jnp.int32)
    out = shift_grid(grid, params.direction, 2)
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, placed)


def fill_background_pair(key: PRNGKeyArray, params: TaskParams, canvas: Canvas) -> GeneratedPair:
    """A wall splits the background in two; the background becomes colour ``c``.

    Optimal: FLOOD_c on each side of the wall, SUBMIT. Small interior dots (never touching
    the wall, the border or each other) decorate the grid and stay as they are.
    """
    keys = jax.random.split(key, 6)
    shape = _random_size(keys[0], 4, min(canvas))
    c, wall_colour, dot_colour = params.colours[1], params.colours[2], params.colours[3]
    rows, cols = _coords(canvas)
    vertical = jax.random.bernoulli(keys[1])
    span = jnp.where(vertical, shape[1], shape[0])
    wall_at = jax.random.randint(keys[2], (), 1, 1_000_000, dtype=jnp.int32) % (span - 2) + 1
    wall = jnp.where(vertical, cols == wall_at, rows == wall_at) & _inside(canvas, shape)
    grid = jnp.where(wall, wall_colour, 0).astype(jnp.int32)
    interior = (rows >= 1) & (cols >= 1) & (rows < shape[0] - 1) & (cols < shape[1] - 1)
    occupied = wall
    for index in range(2):
        dot, _ = place_rectangle(
            keys[3 + index], canvas, interior, occupied, jnp.ones(2, jnp.int32)
        )
        occupied = occupied | dot
        grid = jnp.where(dot, dot_colour, grid)
    out = jnp.where(grid == 0, c, grid)
    return _pair(_finish(grid, canvas, shape), _finish(out, canvas, shape), shape, True)


PairGenerator = Callable[[PRNGKeyArray, TaskParams, Canvas], GeneratedPair]

FAMILIES: dict[str, PairGenerator] = {
    "rot180": rot180_pair,
    "recolour": recolour_pair,
    "move": move_pair,
    "fill_background": fill_background_pair,
    "flip": flip_pair,
    "rotate": rotate_pair,
}
"""Every family by name (``gen/<name>`` sources)."""

EASY_FAMILIES: tuple[str, ...] = ("rot180", "recolour", "move", "fill_background")
"""The four families mixed in ``gen/easy`` (each needs two edits and a SUBMIT)."""
