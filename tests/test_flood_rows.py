"""The bbox/mask flood fill (``jaxarc.grid.flood_rows``) and its byte-word links
(``jaxarc.grid.byte_links``) against plain numpy: BFS regions, neighbour comparisons, bit
transposes, on canvases of every size up to 32x32, in batches above the chunk size."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpy_reference import same_colour_region

from jaxarc.grid.bit_rows import pack_columns, unpack_stream_flat
from jaxarc.grid.byte_links import byte_words, row_link_words, stream_of_rows, transpose_bits
from jaxarc.grid.flood_rows import flood_box_rows, flood_seed_rows
from jaxarc.grid.lanes import CHUNK


def _row_words(bits: np.ndarray) -> np.ndarray:
    """[..., H, W] bools -> [..., H] row words (bit c = column c)."""
    weights = (np.uint64(1) << np.arange(bits.shape[-1], dtype=np.uint64)).astype(np.uint64)
    return (bits.astype(np.uint64) * weights).sum(-1).astype(np.uint32)


def _regions(grid: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    expected = np.zeros(grid.shape, bool)
    for start in zip(*np.nonzero(seeds), strict=True):
        for cell in same_colour_region(grid, (int(start[0]), int(start[1]))):
            expected[cell] = True
    return expected


def _masks(streams, canvas) -> np.ndarray:
    unpack = jax.vmap(lambda s: unpack_stream_flat(s, canvas[0] * canvas[1]))
    return np.asarray(unpack(streams)).reshape(-1, *canvas).astype(bool)


def _snake(height: int, width: int) -> np.ndarray:
    """One long winding corridor of colour 1 in colour 0 walls: a region whose cells are
    hundreds of steps apart (many fill rounds)."""
    grid = np.zeros((height, width), np.int8)
    grid[::2] = 1
    for r in range(1, height, 2):
        grid[r, width - 1 if (r // 2) % 2 == 0 else 0] = 1
    return grid


@pytest.mark.parametrize("canvas", [(1, 1), (5, 7), (7, 5), (13, 30), (30, 30), (32, 32)])
def test_link_words_match_neighbour_comparisons(canvas) -> None:
    height, width = canvas
    rng = np.random.default_rng(height * 33 + width)
    grids = rng.integers(-1, 4, (40, height, width)).astype(np.int8)
    right, below = jax.jit(lambda g: row_link_words(byte_words(g), height, width))(grids)
    want_right = np.zeros_like(grids, bool)
    want_right[:, :, :-1] = grids[:, :, :-1] == grids[:, :, 1:]
    want_below = np.zeros_like(grids, bool)
    want_below[:, :-1] = grids[:, :-1] == grids[:, 1:]
    np.testing.assert_array_equal(np.asarray(right).T, _row_words(want_right))
    np.testing.assert_array_equal(np.asarray(below).T, _row_words(want_below))


def test_bit_transpose_and_stream_round_trip() -> None:
    rng = np.random.default_rng(3)
    bits = rng.random((16, 32, 32)) < 0.4  # [K, rows, columns]
    rows = jnp.asarray(_row_words(bits).T)  # [32, K]
    columns = np.asarray(transpose_bits(rows)).T  # [K, 32]: column words
    np.testing.assert_array_equal(columns, _row_words(np.swapaxes(bits, 1, 2)))
    for height, width in ((30, 30), (7, 9), (32, 32)):
        sub = bits[:, :height, :width]
        stream = stream_of_rows(jnp.asarray(_row_words(sub).T), width).T
        np.testing.assert_array_equal(_masks(stream, (height, width)), sub)


@pytest.mark.parametrize("canvas", [(6, 9), (30, 30), (32, 32)])
def test_seeded_floods_are_the_bfs_regions(canvas) -> None:
    """Masks of seeds (several colours each) in a batch above the chunk size: every seeded
    environment gets the union of its seeds' BFS regions, the others nothing. Grids include
    few-colour noise (big connected regions) and winding corridors (many rounds)."""
    height, width = canvas
    batch = 2 * CHUNK + 37
    rng = np.random.default_rng(height * 7 + width)
    grids = rng.integers(0, 3, (batch, height, width)).astype(np.int8)
    grids[: batch // 4] = rng.integers(0, 2, (batch // 4, height, width))
    grids[batch // 4 : batch // 4 + 8] = _snake(height, width)
    seeds = (rng.random((batch, height, width)) < 0.03) & (rng.random((batch, 1, 1)) < 0.6)
    seeds[batch // 4 : batch // 4 + 8] = False
    seeds[batch // 4 : batch // 4 + 8, 0, 0] = True  # one end of the corridor
    streams = jax.jit(jax.vmap(flood_seed_rows))(jnp.asarray(grids), pack_columns(seeds))
    got = _masks(streams, canvas)
    for b in range(batch):
        np.testing.assert_array_equal(got[b], _regions(grids[b], seeds[b]), f"env {b}")
    assert got[batch // 4].sum() == (grids[batch // 4] == 1).sum()  # the whole corridor


def test_box_floods_are_the_bfs_regions_of_the_rectangle() -> None:
    """Rectangles (some empty, some not flooding) on 30x30 grids with an active area."""
    batch, canvas = CHUNK + 61, (30, 30)
    rng = np.random.default_rng(5)
    grids = np.full((batch, *canvas), -1, np.int8)
    shapes = rng.integers(1, 31, (batch, 2))
    for b, (h, w) in enumerate(shapes):
        grids[b, :h, :w] = rng.integers(0, int(rng.integers(1, 5)), (h, w))
    top, left = rng.integers(0, 30, batch), rng.integers(0, 30, batch)
    # Cut to the active area as the box path cuts it (bottom < top: an empty box).
    bottom = np.minimum(top + rng.integers(-2, 8, batch), shapes[:, 0] - 1)
    right = np.minimum(left + rng.integers(-1, 8, batch), shapes[:, 1] - 1)
    floods = rng.random(batch) < 0.7
    box = np.stack([top, bottom, left, right], axis=1).astype(np.int32)
    streams = jax.jit(jax.vmap(flood_box_rows))(
        jnp.asarray(grids), jnp.asarray(box), jnp.asarray(floods)
    )
    got = _masks(streams, canvas)
    for b in range(batch):
        seeds = np.zeros(canvas, bool)
        if floods[b]:
            seeds[top[b] : bottom[b] + 1, left[b] : right[b] + 1] = True
        np.testing.assert_array_equal(got[b], _regions(grids[b], seeds), f"env {b}")


def test_unbatched_calls_match_batched() -> None:
    rng = np.random.default_rng(8)
    grid = jnp.asarray(rng.integers(0, 3, (30, 30)).astype(np.int8))
    box = jnp.asarray([3, 9, 4, 12], jnp.int32)
    single = flood_box_rows(grid, box, jnp.asarray(True))
    batched = jax.vmap(flood_box_rows)(grid[None], box[None], jnp.asarray([True]))[0]
    np.testing.assert_array_equal(single, batched)
    seeds = pack_columns(jnp.asarray(rng.random((30, 30)) < 0.05))
    np.testing.assert_array_equal(
        flood_seed_rows(grid, seeds), jax.vmap(flood_seed_rows)(grid[None], seeds[None])[0]
    )
