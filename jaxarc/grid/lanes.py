"""Work on only the environments of a batch that need it (inside a ``custom_vmap`` rule).

Under ``vmap`` every environment pays for every operation family, even one that only a few
environments use this step (ROTATE/FLIP are 4 of 35 operations). A family's batching rule
can instead gather the environments that use it, ``CHUNK`` at a time, compute them, and
scatter the results over a default computed cheaply for the whole batch: the cost follows
the number of environments that use the family. The chunk count is dynamic (a
``fori_loop``), so a step where nobody uses it costs a prefix sum.
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, Bool, Int32

CHUNK = 512  # environments computed together


def for_flagged_lanes(
    flagged: Bool[Array, " B"],
    compute: Callable[[Int32[Array, " K"]], Array],
    default: Array,
) -> Array:
    """``default`` (``[B, ...]``) with the rows of the ``flagged`` lanes replaced by
    ``compute(lanes)`` (``[len(lanes), ...]``, one row per lane index given).

    ``compute`` must give an unflagged lane its ``default`` row: the last chunk is padded
    with lane 0, whose row is then recomputed (flagged) or rewritten unchanged (unflagged).
    """
    lanes = flagged.shape[0]
    if lanes <= CHUNK:
        return compute(jnp.arange(lanes, dtype=jnp.int32))
    padded = -(-lanes // CHUNK) * CHUNK
    rank = jnp.cumsum(flagged.astype(jnp.int32)) - 1
    slot = jnp.where(flagged, rank, padded)
    order = (
        jnp.zeros((padded,), jnp.int32)
        .at[slot]
        .set(jnp.arange(lanes, dtype=jnp.int32), mode="drop")
    )
    num_chunks = (jnp.sum(flagged, dtype=jnp.int32) + CHUNK - 1) // CHUNK

    def chunk_rows(chunk, out):
        lanes_now = lax.dynamic_slice(order, (chunk * CHUNK,), (CHUNK,))
        return out.at[lanes_now].set(compute(lanes_now))

    return lax.fori_loop(0, num_chunks, chunk_rows, default)
