"""Task families whose output has another shape than their input: a crop and a mirror tiling.

Two kinds of ARC-AGI-1 *training* task (see ``docs/data.md``): the output is the one object
of the input cut out (``1cf80156``, ``be94b721``, ...), or the input beside or above its
mirror image (``6d0aefbc``, ``6fa7a44f``, ``8be77c9e``, ``c9e6f938``, ...). In the
environment's actions both are clipboard programs: COPY a box, RESIZE the grid, PASTE,
and for the tiling a flip of the pasted half.

===============  ====================================================  =======
family           rule                                                  actions
===============  ====================================================  =======
``crop``         the output is the input's one object, cut out           4 (bbox)
``mirror_tile``  the input and its mirror, side by side (even              5 (bbox)
                 direction) or stacked (odd direction)
===============  ====================================================  =======

(``SUBMIT`` included; :func:`jaxarc.data.generators.oracle_actions` gives them.) Each family
is a pure function ``(uniforms, task_params, canvas) -> GeneratedPair`` for one pair, like
those of :mod:`jaxarc.data.generator_families`, and is mixed the same way.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float32, Int32

from jaxarc.data.generator_families import (
    Canvas,
    Draws,
    GeneratedPair,
    PairGenerator,
    TaskParams,
    _asymmetric_pattern,
    _coords,
    _finish,
    _random_size,
    read_cells,
    shift_by,
)


def _reshaped_pair(
    grid: Int32[Array, "H W"],
    out: Int32[Array, "H W"],
    shape: Int32[Array, " 2"],
    out_shape: Int32[Array, " 2"],
    canvas: Canvas,
) -> GeneratedPair:
    """An always-valid pair whose output has its own shape (``-1`` outside each shape)."""
    return GeneratedPair(
        _finish(grid, canvas, shape),
        _finish(out, canvas, out_shape),
        shape,
        out_shape,
        jnp.asarray(True),
    )


def crop_pair(
    uniforms: Float32[Array, "K H W"], params: TaskParams, canvas: Canvas
) -> GeneratedPair:
    """One object on a background; the output is the object's box, cut out.

    The object is a random pattern of the task's colours whose four corners are coloured,
    so its box is the box of the input's non-zero cells; it is smaller than the grid in
    both directions. Optimal: COPY the box, RESIZE to its shape, PASTE at (0, 0), SUBMIT.
    """
    draws = Draws(uniforms)
    shape = _random_size(draws, 4, canvas, params)
    size = draws.integers(2, shape - 1, 2)  # (each bound per axis: never the whole grid)
    corner = draws.integers(0, shape - size, 2)
    pattern = _asymmetric_pattern(draws, canvas, size, params.colours)
    rows, cols = _coords(canvas)
    pattern = jnp.where((rows < size[0]) & (cols < size[1]), pattern, 0)
    return _reshaped_pair(shift_by(pattern, *corner), pattern, shape, size, canvas)


def mirror_tile_pair(
    uniforms: Float32[Array, "K H W"], params: TaskParams, canvas: Canvas
) -> GeneratedPair:
    """The input, then its mirror image: to its right, mirrored left-right (even direction),
    or below it, mirrored top-bottom (odd direction); the output is twice as wide or tall.

    The input's four corners carry four colours, so its mirror is never a plain copy. The
    doubled side is drawn from 2 to half the canvas, the other from the family's minimum
    (or ``params.min_side``) to the canvas. Optimal: COPY the grid, RESIZE to the output's
    shape, PASTE at the second half's corner, flip that half, SUBMIT.
    """
    draws = Draws(uniforms)
    beside = params.direction % 2 == 0
    free = _random_size(draws, 2, canvas, params)
    halved = draws.integers(2, jnp.asarray(canvas, jnp.int32) // 2, 2)
    shape = jnp.where(beside, jnp.stack([free[0], halved[1]]), jnp.stack([halved[0], free[1]]))
    out_shape = shape * jnp.where(beside, jnp.array([1, 2]), jnp.array([2, 1]))
    grid = _asymmetric_pattern(draws, canvas, shape, params.colours)
    rows, cols = _coords(canvas)
    # the mirrored half reads the input from the far edge of the output
    src_r = jnp.where(beside | (rows < shape[0]), rows, out_shape[0] - 1 - rows)
    src_c = jnp.where(~beside | (cols < shape[1]), cols, out_shape[1] - 1 - cols)
    out = read_cells(grid, src_r, src_c)
    return _reshaped_pair(grid, out, shape, out_shape, canvas)


SHAPE_FAMILIES: dict[str, PairGenerator] = {
    "crop": crop_pair,
    "mirror_tile": mirror_tile_pair,
}
"""The families whose output has another shape than the input (``gen/<name>`` sources; mixed
in ``gen/reshape``)."""

SHAPE_FAMILY_MIN_SIDE: dict[str, int] = dict.fromkeys(SHAPE_FAMILIES, 7)
"""The smallest square canvas side they are generated (and tested) on."""
