"""Link words of a chunk of canvases from their bytes, four cells per ``uint32`` (SWAR).

The flood fill of the bbox and mask paths (:mod:`jaxarc.grid.flood_rows`) needs, for each
flooding environment, which cells have the colour of their right neighbour and of the cell
below, as *row words* (one ``uint32`` per row, bit ``c`` = column ``c``). Comparing the
``int8`` grid cell by cell and packing bits is a scalar loop on XLA:CPU (rows of 30 bytes
do not vectorise). Here the flat canvas is read as ``uint32`` words of four cells, with the
environments on the minor axis (``[N, K]``), and every step is a word operation across the
``K`` environments:

* the canvas shifted by ``s`` cells is a funnel shift of two words (``s = 1``: the right
  neighbour; ``s = W``: the cell below);
* equal bytes of two words are zero bytes of their XOR, found without carries
  (``((t & 0x7F..) + 0x7F..) | t``), and their four flags gathered into a nibble by one
  multiplication (``0x01020408`` moves byte ``k``'s low bit to bit ``24 + k``, no carries);
* eight nibbles make a word of the cell stream (bit ``i`` = cell ``i``), and row ``r`` is
  bits ``W r .. W r + W - 1`` of the stream: one funnel shift of two stream words.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax
from jaxtyping import Array, Int8, UInt32

_U = jnp.uint32


def byte_words(grids: Int8[Array, "K H W"]) -> UInt32[Array, "N K"]:
    """The flat canvases as words of four cells (byte ``k`` of word ``n`` = cell ``4n + k``),
    environments minor; padded with ``-1`` cells to a whole word."""
    count, height, width = grids.shape
    cells = height * width
    words = -(-cells // 4)
    flat = grids.reshape(count, cells)
    if 4 * words > cells:
        pad = jnp.full((count, 4 * words - cells), -1, flat.dtype)
        flat = jnp.concatenate([flat, pad], axis=1)
    return lax.bitcast_convert_type(flat.reshape(count, words, 4), _U).T


def _ahead(words: UInt32[Array, "N K"], count: int) -> UInt32[Array, "N K"]:
    """``words[n + count]`` (zero words past the end)."""
    if count == 0:
        return words
    return jnp.concatenate([words[count:], jnp.zeros_like(words[:count])])


def shifted_cells(words: UInt32[Array, "N K"], cells: int) -> UInt32[Array, "N K"]:
    """The word stream whose byte ``k`` of word ``n`` is cell ``4n + k + cells`` (zero bytes
    past the end)."""
    whole, part = divmod(cells, 4)
    low = _ahead(words, whole)
    if part == 0:
        return low
    return (low >> _U(8 * part)) | (_ahead(words, whole + 1) << _U(32 - 8 * part))


def equal_nibbles(a: UInt32[Array, "N K"], b: UInt32[Array, "N K"]) -> UInt32[Array, "N K"]:
    """Bit ``k`` (``k < 4``) set where byte ``k`` of ``a`` equals byte ``k`` of ``b``."""
    diff = a ^ b
    nonzero = (((diff & _U(0x7F7F7F7F)) + _U(0x7F7F7F7F)) | diff) & _U(0x80808080)
    equal = (~nonzero & _U(0x80808080)) >> _U(7)  # 1 in each equal byte
    return (equal * _U(0x01020408)) >> _U(24)


def _stream(nibbles: UInt32[Array, "N K"]) -> UInt32[Array, "M K"]:
    """Eight nibbles per word: bit ``i`` of the stream is nibble ``i // 4``'s bit ``i % 4``."""
    count, lanes = nibbles.shape
    words = -(-count // 8)
    if 8 * words > count:
        nibbles = jnp.concatenate([nibbles, jnp.zeros((8 * words - count, lanes), _U)])
    parts = nibbles.reshape(words, 8, lanes)
    out = parts[:, 0]
    for k in range(1, 8):
        out = out | (parts[:, k] << _U(4 * k))
    return out


def _rows_of_stream(stream: UInt32[Array, "M K"], height: int, width: int) -> UInt32[Array, "H K"]:
    """Row words: row ``r`` is bits ``width * r ..`` of the stream (two stream words)."""
    stream = jnp.concatenate([stream, jnp.zeros_like(stream[:1])])
    starts = np.arange(height) * width
    first, offset = starts // 32, starts % 32
    low = stream[first] >> jnp.asarray(offset, _U)[:, None]
    high = stream[first + 1] << jnp.asarray((32 - offset) % 32, _U)[:, None]
    high = jnp.where(jnp.asarray(offset == 0)[:, None], _U(0), high)
    return (low | high) & _U((1 << width) - 1)


def stream_of_rows(rows: UInt32[Array, "H K"], width: int) -> UInt32[Array, "M K"]:
    """The cell stream of row words (inverse of :func:`_rows_of_stream`): bit ``i % 32`` of
    word ``i // 32`` is cell ``i`` of the flat ``H * width`` canvas; ``M = ceil(H * W / 32)``.
    Stream word ``m`` ORs the (at most three, as ``width >= 11`` or fewer rows) shifted rows
    that overlap it, read with constant indices (one elementwise pass, not ``M`` pieces)."""
    height = rows.shape[0]
    count = -(-height * width // 32)
    rows = jnp.concatenate([rows, jnp.zeros_like(rows[:1])])  # row ``height``: nothing
    word = None
    for part in range(-(-32 // width) + 1):  # rows overlapping a 32-bit span
        first = np.arange(count) * 32 // width + part
        shift = first * width - 32 * np.arange(count)  # where the row starts in the word
        source = np.minimum(first, height)
        left = jnp.asarray(np.clip(shift, 0, 32) % 32, _U)[:, None]
        right = jnp.asarray(np.clip(-shift, 0, 32) % 32, _U)[:, None]
        valid = jnp.asarray((shift < 32) & (shift > -width) & (first < height))[:, None]
        piece = (rows[source] << left) >> right
        piece = jnp.where(valid, piece, _U(0))
        word = piece if word is None else word | piece
    return word


def row_link_words(
    words: UInt32[Array, "N K"], height: int, width: int
) -> tuple[UInt32[Array, "H K"], UInt32[Array, "H K"]]:
    """``(right, below)`` row words of the canvases in ``words`` (:func:`byte_words`): bit ``c``
    of ``right[r]`` is set when cell ``(r, c)`` has the colour of ``(r, c + 1)``, of
    ``below[r]`` when it has the colour of ``(r + 1, c)``."""

    def links(cells):  # cell i equals cell i + cells
        return _rows_of_stream(
            _stream(equal_nibbles(words, shifted_cells(words, cells))), height, width
        )

    right = links(1) & _U((1 << (width - 1)) - 1)  # the last column has no right neighbour
    below = links(width)
    below = jnp.concatenate([below[:-1], jnp.zeros_like(below[:1])])  # nor the last row below
    return right, below


def transpose_bits(words: UInt32[Array, "32 K"]) -> UInt32[Array, "32 K"]:
    """The 32x32 bit matrix of each environment transposed: bit ``j`` of ``out[i]`` is bit
    ``i`` of ``words[j]`` (five rounds of masked block swaps)."""
    lanes = words.shape[1]
    for step, mask in ((16, 0x0000FFFF), (8, 0x00FF00FF), (4, 0x0F0F0F0F), (2, 0x33333333)) + (
        (1, 0x55555555),
    ):
        pairs = words.reshape(32 // (2 * step), 2, step, lanes)
        low, high = pairs[:, 0], pairs[:, 1]
        swap = ((low >> _U(step)) ^ high) & _U(mask)
        words = jnp.stack([low ^ (swap << _U(step)), high ^ swap], axis=1).reshape(32, lanes)
    return words
