"""Hand-made features of grids and demonstration pairs for the policy (one environment).

Colours one-hot with padding, mirrored views, counts and centroids, per-pair colour
transitions, symmetry scores and centroid shifts, and per-colour roles derived from the
transitions. Everything here is fixed arithmetic (no parameters).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Float32, Int8, Int32

from jaxarc.envs.episode import area_mask
from jaxarc.grid import operation_ids as ops

NUM_COLOURS = ops.NUM_COLORS
NUM_ROLES = 4
NUM_SYMMETRIES = 4


def one_hot_padded(grid: Int8[Array, "*b H W"]) -> Float32[Array, "*b 11 H W"]:
    """One-hot over ``-1`` (padding) and the ten colours, channel axis before ``H W``."""
    hot = jax.nn.one_hot(grid.astype(jnp.int32) + 1, 11, dtype=jnp.float32)
    return jnp.moveaxis(hot, -1, -3)


def symmetric_views(grid: Int8[Array, "H W"], shape: Int32[Array, " 2"]) -> Int8[Array, "4 H W"]:
    """``grid`` mirrored left-right, top-bottom, rotated 180 and transposed, in its area.

    One gather from the flattened grid for all four views (a small program to compile: it
    sits in every policy forward pass, several times over in a training update).
    """
    height, width = grid.shape
    rows = jnp.arange(height, dtype=jnp.int32)[:, None]
    cols = jnp.arange(width, dtype=jnp.int32)[None, :]
    mirror_r = jnp.clip(shape[0] - 1 - rows, 0, height - 1)
    mirror_c = jnp.clip(shape[1] - 1 - cols, 0, width - 1)
    transposed_r, transposed_c = jnp.clip(cols, 0, height - 1), jnp.clip(rows, 0, width - 1)
    sources = jnp.stack(  # [4, H, W] flat indices into the grid (all in bounds)
        [
            rows * width + mirror_c,
            mirror_r * width + cols,
            mirror_r * width + mirror_c,
            transposed_r * width + transposed_c,
        ]
    )
    return jnp.take(grid.reshape(-1), sources, mode="clip")


def count(mask: Bool[Array, "..."]) -> Float32[Array, ""]:
    return jnp.sum(mask, dtype=jnp.float32)


def centroid(grid: Int8[Array, "H W"]) -> Float32[Array, " 2"]:
    on = (grid > 0).astype(jnp.float32)
    rows = jnp.arange(grid.shape[0], dtype=jnp.float32)[:, None]
    cols = jnp.arange(grid.shape[1], dtype=jnp.float32)[None, :]
    total = jnp.maximum(jnp.sum(on), 1.0)
    return jnp.stack([jnp.sum(on * rows) / total, jnp.sum(on * cols) / total])


def masked_mean(values: Float[Array, "P ..."], mask: Bool[Array, " P"]) -> Float[Array, "..."]:
    weights = mask.astype(jnp.float32).reshape((-1,) + (1,) * (values.ndim - 1))
    return jnp.sum(values * weights, axis=0) / jnp.maximum(jnp.sum(weights), 1.0)


def pair_statistics(
    inp: Int8[Array, "H W"], out: Int8[Array, "H W"], in_shape, out_shape
) -> tuple[Float32[Array, "10 10"], Float32[Array, " 4"], Float32[Array, " 2"]]:
    """Colour transitions (fractions of cells), symmetry scores and centroid shift of a pair."""
    both = (inp >= 0) & (out >= 0)
    hot_in = jax.nn.one_hot(jnp.where(both, inp, -1).astype(jnp.int32), NUM_COLOURS)
    hot_out = jax.nn.one_hot(jnp.where(both, out, -1).astype(jnp.int32), NUM_COLOURS)
    cells = jnp.maximum(count(both), 1.0)
    transitions = jnp.einsum("hwi,hwj->ij", hot_in, hot_out) / cells
    inside_out = area_mask(out_shape, out.shape)
    views = symmetric_views(inp, in_shape)
    same_shape = jnp.all(in_shape == out_shape)
    matches = jnp.sum((views == out[None]) & inside_out[None], axis=(1, 2)).astype(jnp.float32)
    symmetry = jnp.where(same_shape, matches / jnp.maximum(count(inside_out), 1.0), 0.0)
    shift = (centroid(out) - centroid(inp)) / jnp.float32(max(inp.shape))
    return transitions, symmetry, shift


def colour_roles(transitions: Float32[Array, "10 10"]) -> Float32[Array, "10 4"]:
    """Per colour: share of its cells that change, share of changes into it, presence in/out."""
    off_diagonal = transitions * (1.0 - jnp.eye(NUM_COLOURS, dtype=jnp.float32))
    in_mass = jnp.sum(transitions, axis=1)
    out_mass = jnp.sum(transitions, axis=0)
    changed_from = jnp.sum(off_diagonal, axis=1) / jnp.maximum(in_mass, 1e-6)
    changed_into = jnp.sum(off_diagonal, axis=0) / jnp.maximum(jnp.sum(off_diagonal), 1e-6)
    return jnp.stack([changed_from, changed_into, in_mass, out_mass], axis=1)
