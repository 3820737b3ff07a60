"""Given (not learned) pair-level features: does a whole-grid transform explain a pair?

For sixteen whole-grid transforms ``T`` (the eight symmetries of the square: identity, the
two flips, the 180-degree rotation, transpose, anti-transpose, the two 90-degree rotations;
and shifts by one and by two cells in each of the four directions, vacated cells becoming
0), :func:`transform_matches` says how well ``T(a)`` matches ``b``: whether it equals it
exactly (shapes included) and the fraction of ``b``'s cells it gets right. Any ARC agent can
compute these; they are *given* to the policy as features (``PolicyConfig.pair_transforms``),
not learned: what the network learns is which operation to take given them.

The policy uses them twice: on every demonstration pair (``T(demo input)`` vs demo output,
averaged over the shown pairs: which transform the task applies) and on the episode
(``T(episode input)`` vs the working grid: how far the episode has got).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, Int8, Int32

from jaxarc.envs.episode import area_mask

# (name, output shape swapped?) in the order of the feature vector
TRANSFORMS: tuple[str, ...] = (
    "identity",
    "flip_lr",
    "flip_tb",
    "rot180",
    "transpose",
    "anti_transpose",
    "rot_cw",
    "rot_ccw",
    *(f"shift_{d}_{k}" for k in (1, 2) for d in ("up", "down", "left", "right")),
)
NUM_TRANSFORMS = len(TRANSFORMS)
TRANSFORM_FEATURES = 2 * NUM_TRANSFORMS  # exact match and cell-match fraction per transform


def transformed_views(
    grid: Int8[Array, "H W"], shape: Int32[Array, " 2"]
) -> tuple[Int8[Array, "K H W"], Int32[Array, "K 2"]]:
    """``grid`` (active area ``shape``, top-left) under each of :data:`TRANSFORMS`, with the
    resulting shapes; cells outside a result's shape are ``-1``."""
    height, width = grid.shape
    rows = jnp.broadcast_to(jnp.arange(height, dtype=jnp.int32)[:, None], grid.shape)
    cols = jnp.broadcast_to(jnp.arange(width, dtype=jnp.int32)[None, :], grid.shape)
    h, w = shape[0], shape[1]
    sources = [
        (rows, cols),
        (rows, w - 1 - cols),
        (h - 1 - rows, cols),
        (h - 1 - rows, w - 1 - cols),
        (cols, rows),
        (h - 1 - cols, w - 1 - rows),
        (h - 1 - cols, rows),
        (cols, w - 1 - rows),
    ]
    swapped = jnp.stack([w, h])
    shapes = [shape] * 4 + [swapped] * 4
    for steps in (1, 2):
        for d_row, d_col in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            sources.append((rows - d_row * steps, cols - d_col * steps))
            shapes.append(shape)
    views = []
    for (src_r, src_c), out_shape in zip(sources, shapes, strict=True):
        inside_src = (src_r >= 0) & (src_r < h) & (src_c >= 0) & (src_c < w)
        value = grid[jnp.clip(src_r, 0, height - 1), jnp.clip(src_c, 0, width - 1)]
        value = jnp.where(inside_src, value, jnp.int8(0))
        views.append(jnp.where(area_mask(out_shape, grid.shape), value, jnp.int8(-1)))
    return jnp.stack(views), jnp.stack(shapes)


def transform_matches(
    a: Int8[Array, "H W"],
    a_shape: Int32[Array, " 2"],
    b: Int8[Array, "H W"],
    b_shape: Int32[Array, " 2"],
) -> Float32[Array, " 2K"]:
    """Per transform ``T``: ``T(a) == b`` exactly (0/1), then the fraction of ``b``'s cells
    that ``T(a)`` gets right (0 when the shapes differ)."""
    views, shapes = transformed_views(a, a_shape)
    inside = area_mask(b_shape, b.shape)
    cells = jnp.maximum(jnp.sum(inside, dtype=jnp.float32), 1.0)
    same_shape = jnp.all(shapes == b_shape[None], axis=1)
    right = jnp.sum((views == b[None]) & inside[None], axis=(1, 2), dtype=jnp.float32) / cells
    right = jnp.where(same_shape, right, 0.0)
    exact = (same_shape & jnp.all(views == b[None], axis=(1, 2))).astype(jnp.float32)
    return jnp.concatenate([exact, right])


def demo_transform_matches(
    inputs: Int8[Array, "P H W"],
    outputs: Int8[Array, "P H W"],
    input_shapes: Int32[Array, "P 2"],
    output_shapes: Int32[Array, "P 2"],
    mask: Bool[Array, " P"],
) -> Float32[Array, " 2K"]:
    """:func:`transform_matches` of each shown demonstration pair, averaged over the pairs."""
    per_pair = jax.vmap(transform_matches)(inputs, input_shapes, outputs, output_shapes)
    weights = mask.astype(jnp.float32)[:, None]
    return jnp.sum(per_pair * weights, axis=0) / jnp.maximum(jnp.sum(weights), 1.0)
