"""Keep XLA from recomputing small per-environment values inside every grid cell.

XLA fuses cheap producers into their consumers. For a per-environment scalar or row vector that
feeds a ``[H, W]`` computation, that means the whole producer chain (bounding boxes, operation
flags, shapes...) is re-evaluated for every cell, which made the operation step several times
slower on CPU. A reduction is never fused into its consumers, so passing the values through an
identity reduction makes XLA compute them once per environment. ``lax.optimization_barrier``
does not help here: XLA on CPU removes it before fusion.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Int, PyTree


def materialize(tree: PyTree) -> PyTree:
    """``tree`` unchanged (numeric and boolean leaves), but computed once, not per consumer."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    if not leaves:
        return tree
    arrays = [jnp.asarray(leaf) for leaf in leaves]
    flat = jnp.concatenate([a.astype(jnp.int32).reshape(-1) for a in arrays])
    floor = jnp.full_like(flat, jnp.iinfo(jnp.int32).min)
    flat = jnp.max(jnp.stack([flat, floor]), axis=0)  # identity; a reduction XLA won't fuse
    out, start = [], 0
    for a in arrays:
        part = flat[start : start + a.size].reshape(a.shape)
        out.append(part != 0 if a.dtype == jnp.bool_ else part.astype(a.dtype))
        start += a.size
    return jax.tree_util.tree_unflatten(treedef, out)


def materialize_array(array: Int[Array, "..."]) -> Int[Array, "..."]:
    """``array`` unchanged (an integer or boolean array of any size, in its dtype), computed once.

    For a whole grid read by several reductions (similarity, success): without this, XLA
    fuses the grid's computation into each of them and recomputes it per consumer. It also
    fixes the shape of the loop that computes ``array``: XLA:CPU loops over the shape of a
    fusion's result, and a flat ``[H*W]`` result vectorises where ``[H, W]`` with W = 30 does
    not (reshape after this call).
    """
    if array.dtype == jnp.bool_:
        return jnp.any(jnp.stack([array, jnp.zeros_like(array)]), axis=0)
    floor = jnp.full_like(array, jnp.iinfo(array.dtype).min)
    return jnp.max(jnp.stack([array, floor]), axis=0)
