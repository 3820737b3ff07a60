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
from jax import lax
from jaxtyping import Array, Int, PyTree


def materialize(tree: PyTree) -> PyTree:
    """``tree`` unchanged (numeric and boolean leaves), but computed once, not per consumer.

    One variadic identity reduction per leaf shape (each leaf in its own dtype), so XLA emits
    one kernel for all leaves of a shape; concatenating the leaves into one array instead
    compiles to a kernel per leaf plus one for the concatenation.
    """
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    arrays = [jnp.asarray(leaf) for leaf in leaves]
    out = list(arrays)
    for shape in dict.fromkeys(a.shape for a in arrays):
        group = [k for k, a in enumerate(arrays) if a.shape == shape]
        floors = [_lowest(arrays[k].dtype) for k in group]
        stacked = [
            jnp.stack([arrays[k], jnp.full_like(arrays[k], f)])
            for k, f in zip(group, floors, strict=True)
        ]
        reduced = lax.reduce(stacked, floors, _max_each, (0,))
        for k, value in zip(group, reduced, strict=True):
            out[k] = value
    return jax.tree_util.tree_unflatten(treedef, out)


def _max_each(xs: list[Array], ys: list[Array]) -> list[Array]:
    return [lax.max(x, y) for x, y in zip(xs, ys, strict=True)]


def _lowest(dtype) -> Array:
    """The identity of ``max`` for ``dtype`` (False for booleans)."""
    if dtype == jnp.bool_:
        return jnp.asarray(False)
    if jnp.issubdtype(dtype, jnp.floating):
        return jnp.asarray(-jnp.inf, dtype)
    return jnp.asarray(jnp.iinfo(dtype).min, dtype)


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


def materialize_fused(array: Int[Array, "..."]) -> Int[Array, "..."]:
    """:func:`materialize_array` whose computation runs inside the reduction: one kernel.

    ``jnp.max`` over the stacked pair is a reduction that jaxlib 0.10's CPU backend hands to
    YNNPACK, which cannot take producers: XLA then writes the stacked ``[2, ...]`` array in
    one kernel (twice the bytes of ``array``) and YNNPACK reduces it in another, on one
    thread. Written as a select, the same maximum is XLA's own reduction, with the
    computation of ``array`` fused into it. For the point step's grid and selection this
    made the batched step ~15% cheaper; for the bbox/mask step's grid it made it ~1.8x
    slower (its content is a long chain that XLA's reduction loop runs worse than its
    elementwise loop), so those keep :func:`materialize_array` (docs/design-notes.md).
    """
    if array.dtype == jnp.bool_:
        either = lambda x, y: lax.select(x, x, y)  # noqa: E731  (x or y)
        return lax.reduce(jnp.stack([array, jnp.zeros_like(array)]), False, either, (0,))
    floor = jnp.asarray(jnp.iinfo(array.dtype).min, array.dtype)
    larger = lambda x, y: lax.select(lax.ge(x, y), x, y)  # noqa: E731  (max, as a select)
    return lax.reduce(jnp.stack([array, jnp.full_like(array, floor)]), floor, larger, (0,))
