"""Flood fill of 4-connected same-colour regions on bit-packed lines.

Each column of the canvas is one ``uint32`` word, bit ``r`` = row ``r`` (see
:mod:`jaxarc.grid.bit_rows`); a column is a *line*. Two link masks describe the graph:
``along[c]`` bit ``r`` is set when cell ``(r, c)`` has the colour of ``(r + 1, c)`` (the next
cell of its line), ``across[c]`` bit ``r`` when it has the colour of ``(r, c + 1)`` (the same
cell of the next line). A region grows from its seeds in rounds; one round

* sweeps over the lines forwards, then backwards (``lax.scan``): each line takes the cells its
  linked neighbour line passes on, then completes every run along the line it touches, towards
  higher bits with one carrying addition (``((links + seeds) ^ links) | seeds``) and towards
  lower bits with a log-step (Kogge-Stone) shift-and-mask fill.

Rounds repeat in a ``lax.while_loop`` until a forward sweep changes no word, so every region
fills completely (no iteration cap) and a call without seeds costs one comparison. Under
``vmap`` a custom batching rule runs the loop once for the whole batch with lines leading
(``[L, batch]``), each line its own array, so a sweep step is elementwise and vectorised across
environments; above ``CHUNK`` environments, only the seeded ones are gathered and filled, so the
cost follows the number of environments that flood, not the batch size.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, Bool, Int8, Int32, UInt32

from jaxarc.grid.bit_rows import (
    WORD_BITS,
    check_width,
    pack_columns,
    pack_equal_columns,
    unpack_columns,
)
from jaxarc.grid.fusion_barrier import materialize, materialize_array

UNROLL = 1  # lines per scan iteration
CHUNK = 512  # environments filled together (see _fill_seeded_lanes)


def _fill_runs(
    filled: UInt32[Array, " B"], along: UInt32[Array, " B"], chains: list[UInt32[Array, " B"]]
) -> UInt32[Array, " B"]:
    """Complete every linked run along the line that ``filled`` touches (one line of each env)."""
    filled = ((along + (filled & along)) ^ along) | filled
    for k, chain in enumerate(chains):
        filled = filled | (chain & jnp.right_shift(filled, jnp.uint32(1 << k)))
    return filled


def _fill_lines_leading(
    seeds: UInt32[Array, "L B"], along: UInt32[Array, "L B"], across: UInt32[Array, "L B"]
) -> UInt32[Array, "L B"]:
    """The flood fill proper, for a batch of environments with lines on the leading axis.

    A round is a forward then a backward ``lax.scan`` over the lines; each line takes the
    filled cells its linked neighbour line passes on, then completes its runs. Every scan step
    is elementwise across the batch (contiguous ``[B]`` lines).
    """
    chains = [along]
    for k in range((WORD_BITS - 1).bit_length() - 1):
        chains.append(chains[-1] & jnp.right_shift(chains[-1], jnp.uint32(1 << k)))
    line_chains = jnp.stack(chains, axis=1)  # [L, levels, B]
    # Link from the previous line in sweep order: the forward sweep uses across[i - 1].
    across_before = jnp.concatenate([jnp.zeros_like(across[:1]), across[:-1]])

    def sweep_step(previous, line):
        filled, link, runs, chain = line
        filled = _fill_runs(filled | (link & previous), runs, list(chain))
        return filled, filled

    def sweep(lines, links, reverse):
        start = jnp.zeros_like(lines[0])
        xs = (lines, links, along, line_chains)
        return lax.scan(sweep_step, start, xs, reverse=reverse, unroll=UNROLL)[1]

    def fill_once(carry):
        # A state the forward sweep leaves unchanged is final: it came out of a backward sweep,
        # which would leave it unchanged too. So a round is forward, then (if that moved
        # anything) backward, and the last round costs one sweep.
        filled_lines, _, first = carry
        lines = sweep(filled_lines, across_before, reverse=False)
        moved = first | jnp.any(lines != filled_lines)
        lines = lax.cond(moved, lambda x: sweep(x, across, reverse=True), lambda x: x, lines)
        return lines, moved, jnp.asarray(False)

    start = (seeds, jnp.any(seeds != 0), jnp.asarray(True))
    filled, _, _ = lax.while_loop(lambda carry: carry[1], fill_once, start)
    return filled


@jax.custom_batching.custom_vmap
def fill_regions(
    seeds: UInt32[Array, " L"], along: UInt32[Array, " L"], across: UInt32[Array, " L"]
) -> UInt32[Array, " L"]:
    """Words of the union of the linked regions containing the seed bits (one environment)."""
    return _fill_lines_leading(seeds[:, None], along[:, None], across[:, None])[:, 0]


@fill_regions.def_vmap
def _fill_regions_batched(axis_size, in_batched, seeds, along, across):
    """Batched rule: move the batch axis last so lines lead, and loop once for the batch."""
    lines_leading = [
        jnp.moveaxis(x, 0, -1) if batched else jnp.broadcast_to(x[:, None], (*x.shape, axis_size))
        for x, batched in zip((seeds, along, across), in_batched, strict=True)
    ]
    return jnp.moveaxis(_fill_seeded_lanes(*lines_leading), -1, 0), True


def _fill_seeded_lanes(
    seeds: UInt32[Array, "L B"], along: UInt32[Array, "L B"], across: UInt32[Array, "L B"]
) -> UInt32[Array, "L B"]:
    """:func:`_fill_lines_leading` on the environments that have seeds only."""

    def fill_lanes(lanes_now):
        return _fill_lines_leading(
            *(jnp.take(x, lanes_now, axis=1) for x in (seeds, along, across))
        )

    return _for_seeded_lanes(jnp.any(seeds != 0, axis=0), fill_lanes, seeds.shape[0])


def _for_seeded_lanes(
    seeded: Bool[Array, " B"], fill_lanes, num_lines: int
) -> UInt32[Array, "L B"]:
    """``fill_lanes(lanes)`` (``[L, len(lanes)]`` words) for the ``seeded`` lanes, zeros elsewhere.

    The seeded lanes are gathered to the front, ``CHUNK`` at a time, and filled chunk by chunk
    (as many chunks as needed, a dynamic count): the cost follows the number of flooding
    environments, not the batch.
    """
    chunk_size = CHUNK
    lanes = seeded.shape[0]
    if lanes <= chunk_size:
        return fill_lanes(jnp.arange(lanes, dtype=jnp.int32))
    # The seeded lanes, in order, then lane 0 as filler (recomputed or empty: same result).
    padded = -(-lanes // chunk_size) * chunk_size
    rank = jnp.cumsum(seeded.astype(jnp.int32)) - 1
    slot = jnp.where(seeded, rank, padded)
    order = (
        jnp.zeros((padded,), jnp.int32)
        .at[slot]
        .set(jnp.arange(lanes, dtype=jnp.int32), mode="drop")
    )
    num_chunks = (jnp.sum(seeded, dtype=jnp.int32) + chunk_size - 1) // chunk_size

    def fill_chunk(index, filled):
        lanes_now = lax.dynamic_slice(order, (index * chunk_size,), (chunk_size,))
        return filled.at[:, lanes_now].set(fill_lanes(lanes_now))

    empty = jnp.zeros((num_lines, lanes), jnp.uint32)
    return lax.fori_loop(0, num_chunks, fill_chunk, empty)


def link_words(grid: Int8[Array, "H W"]) -> tuple[UInt32[Array, " W"], UInt32[Array, " W"]]:
    """``(along, across)`` of ``grid``: same-colour neighbours below / to the right."""
    height, width = grid.shape
    check_width(width)
    below = jnp.concatenate([grid[:-1] == grid[1:], jnp.zeros((1, width), bool)], axis=0)
    right = jnp.concatenate([grid[:, :-1] == grid[:, 1:], jnp.zeros((height, 1), bool)], axis=1)
    return pack_columns(below), pack_columns(right)


def flood_regions(grid: Int8[Array, "H W"], seeds: Bool[Array, "H W"]) -> Bool[Array, "H W"]:
    """The union of the 4-connected same-colour regions of ``grid`` containing each seed.

    Cells of different colours never connect, so seeds of several colours each fill their own
    region. Cells outside the active area hold -1 and never connect to colours 0..9.
    """
    along, across = materialize(link_words(grid))
    return unpack_columns(fill_regions(pack_columns(seeds), along, across), grid.shape[0])


@jax.custom_batching.custom_vmap
def flood_point_region(
    grid: Int8[Array, "H W"], row: Int32[Array, ""], col: Int32[Array, ""], floods: Bool[Array, ""]
) -> UInt32[Array, " W"]:
    """Column words of the 4-connected same-colour region of ``grid`` containing ``(row, col)``.

    All zero unless ``floods`` (and ``(row, col)`` on the canvas). Under ``vmap`` only the
    flooding environments' grids are read (gathered in chunks, see :func:`_for_seeded_lanes`).
    """
    seeds, along, across = _point_links(grid, row, col, floods)
    return _fill_lines_leading(seeds[:, None], along[:, None], across[:, None])[:, 0]


@flood_point_region.def_vmap
def _flood_point_regions_batched(axis_size, in_batched, grid, row, col, floods):
    """Batched rule: gather the flooding environments, pack their planes, fill them."""
    grid, row, col, floods = (
        x if batched else jnp.broadcast_to(x, (axis_size, *x.shape))
        for x, batched in zip((grid, row, col, floods), in_batched, strict=True)
    )
    height, width = grid.shape[1:]
    on_canvas = (row >= 0) & (row < height) & (col >= 0) & (col < width)

    def fill_lanes(lanes_now):
        links = jax.vmap(_point_links)(
            grid[lanes_now], row[lanes_now], col[lanes_now], floods[lanes_now]
        )
        return _fill_lines_leading(*(jnp.moveaxis(x, 0, -1) for x in links))

    filled = _for_seeded_lanes(floods & on_canvas, fill_lanes, width)
    # Transposed once here: fused into the consumer's loop, the strided reads halve throughput.
    return materialize_array(jnp.moveaxis(filled, -1, 0)), True


def _point_links(
    grid: Int8[Array, "H W"], row: Int32[Array, ""], col: Int32[Array, ""], floods: Bool[Array, ""]
) -> tuple[UInt32[Array, " W"], UInt32[Array, " W"], UInt32[Array, " W"]]:
    """``(seeds, along, across)`` of one seed: one packed plane, the cells of the seed's colour,
    whose links are ``plane & (plane >> 1)`` along a column and ``plane[c] & plane[c + 1]``
    across."""
    height, width = grid.shape
    check_width(width)
    value = grid[jnp.clip(row, 0, height - 1), jnp.clip(col, 0, width - 1)]
    plane = materialize(pack_equal_columns(grid, value))  # once, not inside each use below
    along = plane & jnp.right_shift(plane, jnp.uint32(1))
    across = plane & jnp.concatenate([plane[1:], jnp.zeros((1,), jnp.uint32)])
    seed_bit = jnp.left_shift(jnp.uint32(1), jnp.clip(row, 0, WORD_BITS - 1).astype(jnp.uint32))
    on_canvas = (row >= 0) & (row < height) & (col >= 0) & (col < width)
    seed_lines = (jnp.arange(width, dtype=jnp.int32) == col) & floods & on_canvas
    seeds = jnp.where(seed_lines, seed_bit, jnp.uint32(0))
    return seeds, along, across
