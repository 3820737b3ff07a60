"""Flood fill of 4-connected same-colour regions on bit-packed rows.

Each row is one ``uint32`` word (see :mod:`jaxarc.envs.bit_rows`). Two link masks describe the
graph: ``right_links[r]`` bit ``c`` is set when cell ``(r, c)`` has the colour of ``(r, c + 1)``,
``down_links[r]`` bit ``c`` when it has the colour of ``(r + 1, c)``. A region grows from its
seeds in rounds; one round

* sweeps down the rows, then up: each row takes the cells its linked neighbour row passes on,
  then completes every horizontal run it touches, towards higher columns with one carrying
  addition (``((links + seeds) ^ links) | seeds``) and towards lower columns with a log-step
  (Kogge-Stone) shift-and-mask fill.

Rounds repeat in a ``lax.while_loop`` until no word changes, so every region fills completely
(no iteration cap) and a call without seeds costs one comparison. Under ``vmap`` a custom
batching rule runs the loop once for the whole batch with rows leading (``[H, batch]``), each
row its own array, so a sweep is one fused loop vectorised across environments.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, Bool, Int8, UInt32

from jaxarc.envs.bit_rows import WORD_BITS, check_width, pack_rows, unpack_rows

UNROLL = 1  # rows per scan iteration


def _fill_run_rows(
    filled: UInt32[Array, " B"], right_links: UInt32[Array, " B"], chains: list[UInt32[Array, " B"]]
) -> UInt32[Array, " B"]:
    """Complete every linked horizontal run that ``filled`` touches (one row of each env)."""
    filled = ((right_links + (filled & right_links)) ^ right_links) | filled
    for k, chain in enumerate(chains):
        filled = filled | (chain & jnp.right_shift(filled, jnp.uint32(1 << k)))
    return filled


def _fill_rows_leading(
    seeds: UInt32[Array, "H B"], right_links: UInt32[Array, "H B"], down_links: UInt32[Array, "H B"]
) -> UInt32[Array, "H B"]:
    """The flood fill proper, for a batch of environments with rows on the leading axis.

    A round is a downward then an upward ``lax.scan`` over the rows; each row takes the filled
    cells its linked neighbour row passes on, then completes its horizontal runs. Every scan
    step is elementwise across the batch (contiguous ``[B]`` rows).
    """
    chains = [right_links]
    for k in range((WORD_BITS - 1).bit_length() - 1):
        chains.append(chains[-1] & jnp.right_shift(chains[-1], jnp.uint32(1 << k)))
    row_chains = jnp.stack(chains, axis=1)  # [H, levels, B]
    # Link from the previous row in sweep order: down sweep uses down_links[r - 1].
    zero_row = jnp.zeros_like(down_links[:1])
    links_from_above = jnp.concatenate([zero_row, down_links[:-1]])

    def step_down(previous, row):
        filled, link, right, chain = row
        filled = _fill_run_rows(filled | (link & previous), right, list(chain))
        return filled, filled

    def step_up(carry, row):
        previous, changed = carry
        before, filled, link, right, chain = row
        filled = _fill_run_rows(filled | (link & previous), right, list(chain))
        return (filled, changed | (filled != before)), filled

    def fill_once(carry):
        filled_rows, _ = carry
        start = jnp.zeros_like(filled_rows[0])
        _, rows = lax.scan(
            step_down,
            start,
            (filled_rows, links_from_above, right_links, row_chains),
            unroll=UNROLL,
        )
        (_, changed), rows = lax.scan(
            step_up,
            (start, jnp.zeros(start.shape, bool)),
            (filled_rows, rows, down_links, right_links, row_chains),
            reverse=True,
            unroll=UNROLL,
        )
        return rows, jnp.any(changed)

    filled, _ = lax.while_loop(lambda carry: carry[1], fill_once, (seeds, jnp.any(seeds != 0)))
    return filled


@jax.custom_batching.custom_vmap
def fill_regions(
    seeds: UInt32[Array, " H"], right_links: UInt32[Array, " H"], down_links: UInt32[Array, " H"]
) -> UInt32[Array, " H"]:
    """Words of the union of the linked regions containing the seed bits (one environment)."""
    return _fill_rows_leading(seeds[:, None], right_links[:, None], down_links[:, None])[:, 0]


@fill_regions.def_vmap
def _fill_regions_batched(axis_size, in_batched, seeds, right_links, down_links):
    """Batched rule: move the batch axis last so rows lead, and loop once for the batch."""
    rows_leading = [
        jnp.moveaxis(x, 0, -1) if batched else jnp.broadcast_to(x[:, None], (*x.shape, axis_size))
        for x, batched in zip((seeds, right_links, down_links), in_batched, strict=True)
    ]
    return jnp.moveaxis(_fill_rows_leading(*rows_leading), -1, 0), True


def link_words(grid: Int8[Array, "H W"]) -> tuple[UInt32[Array, " H"], UInt32[Array, " H"]]:
    """``(right_links, down_links)`` of ``grid``: same-colour neighbours to the right / below."""
    height, width = grid.shape
    check_width(width)
    right = jnp.concatenate([grid[:, :-1] == grid[:, 1:], jnp.zeros((height, 1), bool)], axis=1)
    down = jnp.concatenate([grid[:-1] == grid[1:], jnp.zeros((1, width), bool)], axis=0)
    links = pack_rows(jnp.stack([right, down]))
    return links[0], links[1]


def flood_regions(grid: Int8[Array, "H W"], seeds: Bool[Array, "H W"]) -> Bool[Array, "H W"]:
    """The union of the 4-connected same-colour regions of ``grid`` containing each seed.

    Cells of different colours never connect, so seeds of several colours each fill their own
    region. Cells outside the active area hold -1 and never connect to colours 0..9.
    """
    right_links, down_links = link_words(grid)
    return unpack_rows(fill_regions(pack_rows(seeds), right_links, down_links), grid.shape[1])
