"""Bit-packed lines of a canvas: one ``uint32`` word per column (bit ``r`` = row ``r``).

Canvases are at most 32 rows and 32 columns (ARC's are 30x30). Packed lines turn the flood
fill's propagation along a line into a handful of word operations (see
:mod:`jaxarc.grid.flood_fill`).

Columns rather than rows: packing a column combines cells of different rows, which lie a row
apart in memory, so every step of the packing is elementwise across the contiguous columns of
a row and vectorises; packing a row would be a reduction along the minor axis, which XLA:CPU
runs as a scalar loop (several times slower). The bits of eight rows are first gathered in an
``int8`` (64 lanes per vector), then four bytes make a word.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int8, UInt32

WORD_BITS = 32


def check_width(width: int, side: str = "width") -> None:
    """Raise a clear error for canvases too wide (or, ``side="height"``, too high)."""
    if width > WORD_BITS:
        raise ValueError(f"canvas {side} {width} > {WORD_BITS}: lines are packed in uint32 words")


def pack_columns(masks: Bool[Array, "*K H W"]) -> UInt32[Array, "*K W"]:
    """Pack the row axis of ``masks``: bit ``r`` of ``out[..., c]`` is ``masks[..., r, c]``."""
    return _pack_rows_of(lambda r: masks[..., r, :], masks.shape[-2])


def pack_equal_columns(grid: Int8[Array, "H W"], value: Int8[Array, ""]) -> UInt32[Array, " W"]:
    """:func:`pack_columns` of ``grid == value``, comparing row by row (no mask is built)."""
    return _pack_rows_of(lambda r: grid[r] == value, grid.shape[0])


def pack_equal_columns_of(
    grid: Int8[Array, "H W"], other: Int8[Array, "H W"]
) -> UInt32[Array, " W"]:
    """:func:`pack_columns` of ``grid == other`` (cellwise), comparing row by row."""
    return _pack_rows_of(lambda r: grid[r] == other[r], grid.shape[0])


def _pack_rows_of(row_mask, height: int):
    check_width(height, "height")
    words = None
    for first in range(0, height, 8):
        byte = None
        for r in range(first, min(first + 8, height)):
            bit = jnp.int8(np.int8(np.uint8(1 << (r - first))))
            term = jnp.where(row_mask(r), bit, jnp.int8(0))
            byte = term if byte is None else byte | term
        part = jnp.left_shift(byte.astype(jnp.uint8).astype(jnp.uint32), jnp.uint32(first))
        words = part if words is None else words | part
    return words


def unpack_columns(words: UInt32[Array, "*K W"], height: int) -> Bool[Array, "*K H W"]:
    """Inverse of :func:`pack_columns` for a canvas ``height`` rows high."""
    shifts = jnp.arange(height, dtype=jnp.uint32).reshape((1,) * (words.ndim - 1) + (height, 1))
    return (jnp.right_shift(words[..., None, :], shifts) & jnp.uint32(1)) != jnp.uint32(0)


def unpack_columns_flat(words: UInt32[Array, " W"], height: int) -> Int8[Array, " C"]:
    """:func:`unpack_columns` as 0/1 bytes of the flattened ``(height * W)`` canvas.

    One broadcast of the words against the row index, reshaped flat: XLA fuses it into its
    consumer's flat loop as a single computation. (A concatenation of per-row pieces runs as
    fast but compiles to one kernel per row: 30 kernels, ~1.3 s of compile.)
    """
    shifts = jnp.arange(height, dtype=jnp.uint32)[:, None]
    bits = jnp.right_shift(words[None, :], shifts) & jnp.uint32(1)
    return bits.astype(jnp.int8).reshape(height * words.shape[0])


def unpack_stream_flat(words: UInt32[Array, " M"], cells: int) -> Int8[Array, " C"]:
    """A cell stream (bit ``i % 32`` of ``words[i // 32]`` = cell ``i`` of the flat canvas) as
    0/1 bytes of the first ``cells`` cells. Fused into a flat loop over the canvas, the word
    and bit of a cell are a shift and a mask of its index (no division by the width)."""
    shifts = jnp.arange(WORD_BITS, dtype=jnp.uint32)[None, :]
    bits = jnp.right_shift(words[:, None], shifts) & jnp.uint32(1)
    return bits.astype(jnp.int8).reshape(words.shape[0] * WORD_BITS)[:cells]
