"""Flood fill of 4-connected same-colour regions on bit-packed rows.

Each row of the canvas is one ``uint32`` word (bit ``c`` = column ``c``; canvases up to 32
columns wide). Two link masks describe the graph: ``right_links[r]`` bit ``c`` is set when cell
``(r, c)`` has the same colour as ``(r, c + 1)``, ``down_links[r]`` bit ``c`` when ``(r, c)`` has
the same colour as ``(r + 1, c)``. A region grows from its seeds in rounds; one round

* fills every horizontal run reached so far in one go: towards higher columns with one carrying
  addition (``((links + seeds) ^ links) | seeds``), towards lower columns with a log-step
  (Kogge-Stone) shift-and-mask fill;
* then fills every vertical run the same log-step way, down and up the rows.

Rounds repeat in a ``lax.while_loop`` until no word changes, so any region fills completely (no
iteration cap), and a call without seeds costs one comparison. Work per round is
``O(H log W + H log H)`` word operations, independent of the region's size.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, Bool, Int8, UInt32

MAX_PACKED_WIDTH = 32


def pack_rows(mask: Bool[Array, "H W"]) -> UInt32[Array, " H"]:
    """Pack each row of a boolean mask into a ``uint32`` word (bit ``c`` = column ``c``)."""
    width = mask.shape[-1]
    if width > MAX_PACKED_WIDTH:
        raise ValueError(f"bit-packed rows hold at most {MAX_PACKED_WIDTH} columns, got {width}")
    bits = jnp.left_shift(jnp.uint32(1), jnp.arange(width, dtype=jnp.uint32))
    return jnp.sum(jnp.where(mask, bits, jnp.uint32(0)), axis=-1, dtype=jnp.uint32)


def unpack_rows(words: UInt32[Array, " H"], width: int) -> Bool[Array, "H W"]:
    """Inverse of :func:`pack_rows` for a canvas ``width`` columns wide."""
    shifts = jnp.arange(width, dtype=jnp.uint32)
    return (jnp.right_shift(words[:, None], shifts[None, :]) & jnp.uint32(1)) != jnp.uint32(0)


def _doubling_shifts(length: int) -> tuple[int, ...]:
    """Shifts 1, 2, 4, ... whose sum reaches ``length - 1`` (a log-step fill's schedule)."""
    return tuple(1 << k for k in range(max(1, (length - 1).bit_length())))


def _shift_rows_down(words: UInt32[Array, " H"], distance: int) -> UInt32[Array, " H"]:
    """``out[r] = words[r - distance]``, zeros shifted in at the top."""
    if distance >= words.shape[0]:
        return jnp.zeros_like(words)
    return jnp.concatenate([jnp.zeros((distance,), words.dtype), words[:-distance]])


def _shift_rows_up(words: UInt32[Array, " H"], distance: int) -> UInt32[Array, " H"]:
    """``out[r] = words[r + distance]``, zeros shifted in at the bottom."""
    if distance >= words.shape[0]:
        return jnp.zeros_like(words)
    return jnp.concatenate([words[distance:], jnp.zeros((distance,), words.dtype)])


def _chains_within_rows(right_links: UInt32[Array, " H"], width: int) -> list[UInt32[Array, " H"]]:
    """For each doubling shift ``d``: bit ``c`` set when cells ``c .. c + d`` are all linked."""
    chains = [right_links]
    for shift in _doubling_shifts(width)[:-1]:
        chains.append(chains[-1] & jnp.right_shift(chains[-1], jnp.uint32(shift)))
    return chains


def _chains_across_rows(down_links: UInt32[Array, " H"]) -> list[UInt32[Array, " H"]]:
    """For each doubling shift ``d``: row ``r`` bit ``c`` set when rows ``r .. r + d`` link."""
    chains = [down_links]
    for shift in _doubling_shifts(down_links.shape[0])[:-1]:
        chains.append(chains[-1] & _shift_rows_up(chains[-1], shift))
    return chains


def _fill_round(
    filled: UInt32[Array, " H"],
    right_links: UInt32[Array, " H"],
    row_chains: list[UInt32[Array, " H"]],
    column_chains: list[UInt32[Array, " H"]],
    width: int,
) -> UInt32[Array, " H"]:
    """One round: complete every reached horizontal run, then every reached vertical run."""
    # Towards higher columns: the carry of (links + seeds) runs to the end of each linked run.
    filled = ((right_links + (filled & right_links)) ^ right_links) | filled
    # Towards lower columns: log-step shifts through chains of links.
    for shift, chain in zip(_doubling_shifts(width), row_chains, strict=True):
        filled = filled | (chain & jnp.right_shift(filled, jnp.uint32(shift)))
    height = filled.shape[0]
    for shift, chain in zip(_doubling_shifts(height), column_chains, strict=True):
        filled = filled | _shift_rows_down(chain & filled, shift)
    for shift, chain in zip(_doubling_shifts(height), column_chains, strict=True):
        filled = filled | (chain & _shift_rows_up(filled, shift))
    return filled


def flood_regions(grid: Int8[Array, "H W"], seeds: Bool[Array, "H W"]) -> Bool[Array, "H W"]:
    """The union of the 4-connected same-colour regions of ``grid`` containing each seed.

    Cells of different colours never connect, so seeds of several colours each fill their own
    region. Cells outside the active area hold -1 and never connect to colours 0..9.
    """
    height, width = grid.shape
    if width > MAX_PACKED_WIDTH:
        raise ValueError(
            f"flood fill packs rows into uint32 words: canvas width {width} > {MAX_PACKED_WIDTH}"
        )
    no_link_column = jnp.zeros((height, 1), dtype=bool)
    no_link_row = jnp.zeros((1, width), dtype=bool)
    right_links = pack_rows(jnp.concatenate([grid[:, :-1] == grid[:, 1:], no_link_column], axis=1))
    down_links = pack_rows(jnp.concatenate([grid[:-1] == grid[1:], no_link_row], axis=0))
    row_chains = _chains_within_rows(right_links, width)
    column_chains = _chains_across_rows(down_links)

    def keep_filling(carry: tuple[UInt32[Array, " H"], Bool[Array, ""]]) -> Bool[Array, ""]:
        return carry[1]

    def fill_once(
        carry: tuple[UInt32[Array, " H"], Bool[Array, ""]],
    ) -> tuple[UInt32[Array, " H"], Bool[Array, ""]]:
        filled, _ = carry
        grown = _fill_round(filled, right_links, row_chains, column_chains, width)
        return grown, jnp.any(grown != filled)

    seed_words = pack_rows(seeds)
    filled, _ = lax.while_loop(keep_filling, fill_once, (seed_words, jnp.any(seed_words != 0)))
    return unpack_rows(filled, width)
