"""Two gathers every training program holds, against plain NumPy: the policy's mirrored views
of a grid (``symmetric_views``) and the generators' rectangle-window counts (``_window_counts``,
behind every placed object)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxarc.agents.model.features import symmetric_views
from jaxarc.data.generator_families import _window_counts, place_rectangle

CANVAS = (7, 9)


def test_symmetric_views_mirror_rotate_and_transpose_the_grid_inside_its_area():
    views = jax.jit(symmetric_views)
    rng = np.random.default_rng(0)
    for rows, cols in [(7, 9), (3, 5), (1, 1), (6, 2), (7, 7)]:
        grid = np.full(CANVAS, -1, np.int8)
        area = rng.integers(0, 10, (rows, cols)).astype(np.int8)
        grid[:rows, :cols] = area
        out = np.asarray(views(jnp.asarray(grid), jnp.array([rows, cols], jnp.int32)))
        assert out.shape == (4, *CANVAS) and out.dtype == np.int8
        np.testing.assert_array_equal(out[0, :rows, :cols], area[:, ::-1])
        np.testing.assert_array_equal(out[1, :rows, :cols], area[::-1, :])
        np.testing.assert_array_equal(out[2, :rows, :cols], area[::-1, ::-1])
        if cols <= CANVAS[0] and rows <= CANVAS[1]:  # the transposed area fits the canvas
            np.testing.assert_array_equal(out[3, :cols, :rows], area.T)


def _window_counts_reference(mask: np.ndarray, size: tuple[int, int], margin: int) -> np.ndarray:
    height, width = mask.shape
    counts = np.zeros(mask.shape, np.int32)
    for r in range(height):
        for c in range(width):
            top, left = max(r - margin, 0), max(c - margin, 0)
            bottom = min(r + size[0] + margin, height)
            right = min(c + size[1] + margin, width)
            counts[r, c] = mask[top:bottom, left:right].sum()
    return counts


def test_window_counts_and_placements_match_a_direct_count():
    counts = jax.jit(_window_counts, static_argnums=2)
    place = jax.jit(place_rectangle, static_argnums=1)
    rng = np.random.default_rng(1)
    for trial in range(6):
        mask = rng.random(CANVAS) < 0.2
        size = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        for margin in (0, 1):
            got = counts(jnp.asarray(mask), jnp.array(size, jnp.int32), margin)
            np.testing.assert_array_equal(got, _window_counts_reference(mask, size, margin))
        # a placement lies inside the allowed cells and never touches an occupied one
        allowed = np.zeros(CANVAS, bool)
        allowed[1:, : CANVAS[1] - trial % 3] = True
        uniform = jnp.asarray(rng.random(CANVAS), jnp.float32)
        rect, placed = place(
            uniform, CANVAS, jnp.asarray(allowed), jnp.asarray(mask), jnp.array(size, jnp.int32)
        )
        rect = np.asarray(rect)
        fits = (
            (_window_counts_reference(~allowed, size, 0) == 0)
            & (_window_counts_reference(mask, size, 1) == 0)
            & (np.arange(CANVAS[0])[:, None] + size[0] <= CANVAS[0])
            & (np.arange(CANVAS[1])[None, :] + size[1] <= CANVAS[1])
        )
        assert bool(placed) == bool(fits.any())
        if fits.any():
            top, left = np.argwhere(rect)[0]
            assert fits[top, left] and rect.sum() == size[0] * size[1]
            assert rect[top : top + size[0], left : left + size[1]].all()
        else:
            assert not rect.any()
