"""Bit-packed rows: each row of a boolean canvas mask is one ``uint32`` word (bit ``c`` = column).

Canvases are at most 32 columns wide (ARC's are 30). Packed rows turn the flood fill's
propagation along a row into a handful of word operations (see :mod:`jaxarc.envs.flood_fill`).
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Bool, UInt32

WORD_BITS = 32


def check_width(width: int) -> None:
    """Raise a clear error for canvases too wide for one word per row."""
    if width > WORD_BITS:
        raise ValueError(f"canvas width {width} > {WORD_BITS}: rows are packed in uint32 words")


def pack_rows(masks: Bool[Array, "*K H W"]) -> UInt32[Array, "*K H"]:
    """Pack the last axis of ``masks`` into words: bit ``c`` of ``out[..., r]`` is ``[r, c]``."""
    check_width(masks.shape[-1])
    bits = jnp.left_shift(jnp.uint32(1), jnp.arange(masks.shape[-1], dtype=jnp.uint32))
    bits = bits.reshape((1,) * (masks.ndim - 1) + bits.shape)
    return jnp.sum(jnp.where(masks, bits, jnp.uint32(0)), axis=-1, dtype=jnp.uint32)


def unpack_rows(words: UInt32[Array, "*K H"], width: int) -> Bool[Array, "*K H W"]:
    """Inverse of :func:`pack_rows` for a canvas ``width`` columns wide."""
    shifts = jnp.arange(width, dtype=jnp.uint32).reshape((1,) * words.ndim + (width,))
    return (jnp.right_shift(words[..., None], shifts) & jnp.uint32(1)) != jnp.uint32(0)
