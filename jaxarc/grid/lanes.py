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

import jax
import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, Bool, Int32, PyTree

CHUNK = 128  # environments computed together (smaller chunks measured faster than 512)


def where_flagged(flag: Bool[Array, ""], fn: Callable, default: PyTree, *args: Array) -> PyTree:
    """``fn(*args)`` if ``flag`` else ``default`` (pytrees of the same structure), for one
    environment; under ``vmap``, ``fn`` runs only on the flagged environments (in chunks).

    ``args`` are arrays or pytrees of arrays; ``fn`` is vmapped over each chunk (arguments
    that are not batched, such as a task bank, are passed to every lane unchanged). ``fn`` must
    close over static (Python) values only: any array it reads is passed in ``args`` or built
    inside it (under ``jit`` JAX may hoist an array constant into a tracer, which a
    ``custom_vmap`` function cannot close over).
    """

    @jax.custom_batching.custom_vmap
    def apply(flag, default, args):
        return jax.tree.map(lambda a, d: jnp.where(flag, a, d), fn(*args), default)

    @apply.def_vmap
    def _batched(axis_size, in_batched, flag, default, args):
        flag_batched, default_batched, args_batched = in_batched

        def batch(x, batched):
            return x if batched else jnp.broadcast_to(x, (axis_size, *jnp.shape(x)))

        flag = batch(flag, flag_batched)
        default = jax.tree.map(batch, default, default_batched)
        # Arguments shared by every environment (a task bank, reward weights) are passed to
        # ``fn`` as they are, not broadcast to the batch and gathered per chunk.
        arg_axes = jax.tree.map(lambda batched: 0 if batched else None, args_batched)

        def compute(lanes):
            # (padding lanes are out of range: clipped here, their rows dropped later)
            taken = jax.tree.map(
                lambda x, b: x.at[lanes].get(mode="clip") if b else x, args, args_batched
            )
            return jax.vmap(fn, in_axes=arg_axes, axis_size=lanes.shape[0])(*taken)

        out = for_flagged_lanes(flag, compute, default)
        return out, jax.tree.map(lambda _: True, out)

    return apply(flag, default, args)


def for_flagged_lanes(
    flagged: Bool[Array, " B"],
    compute: Callable[[Int32[Array, " K"]], PyTree],
    default: PyTree,
) -> PyTree:
    """``default`` (a pytree of ``[B, ...]`` arrays) with the rows of the ``flagged`` lanes
    replaced by ``compute(lanes)`` (``[len(lanes), ...]``, one row per lane index given).

    The last chunk is padded with the out-of-range lane ``B``: ``compute`` must accept it
    (gather with ``mode="clip"``); its rows are dropped. Only flagged rows are written, by a
    scatter into the loop's carry, so XLA updates the ``[B, ...]`` buffers in place (a loop
    body that also read the carry's rows would cost a copy of every buffer per chunk).
    """
    lanes = flagged.shape[0]
    if lanes <= CHUNK:
        new = compute(jnp.arange(lanes, dtype=jnp.int32))
        return jax.tree.map(
            lambda n, d: jnp.where(flagged.reshape((-1,) + (1,) * (d.ndim - 1)), n, d),
            new,
            default,
        )
    padded = -(-lanes // CHUNK) * CHUNK
    rank = jnp.cumsum(flagged.astype(jnp.int32)) - 1
    slot = jnp.where(flagged, rank, padded)
    order = (
        jnp.full((padded,), lanes, jnp.int32)
        .at[slot]
        .set(jnp.arange(lanes, dtype=jnp.int32), mode="drop")
    )
    num_chunks = (jnp.sum(flagged, dtype=jnp.int32) + CHUNK - 1) // CHUNK

    def chunk_rows(chunk, out):
        lanes_now = lax.dynamic_slice(order, (chunk * CHUNK,), (CHUNK,))
        return jax.tree.map(
            lambda o, n: o.at[lanes_now].set(n, mode="drop", indices_are_sorted=True),
            out,
            compute(lanes_now),
        )

    return lax.fori_loop(0, num_chunks, chunk_rows, default)
