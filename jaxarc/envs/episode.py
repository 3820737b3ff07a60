"""What one episode plays: the input, the target and the in-context pairs of a task.

Pure functions of a :class:`~jaxarc.data.source.Task` and a pair index, used by reset and
step. The episode mode is static: ``"train"`` plays a demonstration pair (its output is the
target, the pair itself is hidden from the in-context examples), ``"eval"`` plays a test
pair (target = the stored test output; all demonstration pairs are shown).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, Bool, Float32, Int8, Int32, PyTree

from jaxarc.data.source import AbstractTaskSource, Task, pair_arrays
from jaxarc.grid.bit_rows import WORD_BITS, pack_equal_columns_of
from jaxarc.grid.fusion_barrier import materialize


class EpisodePair(eqx.Module):
    """The grids an episode is played on."""

    input_grid: Int8[Array, "H W"]
    input_shape: Int32[Array, "2"]
    target_grid: Int8[Array, "H W"]
    target_shape: Int32[Array, "2"]
    scored: Bool[Array, ""]  # False for test pairs without a stored output


def episode_pair(task: Task, pair_index: Int32[Array, ""], mode: str) -> EpisodePair:
    """The input/target of pair ``pair_index`` (a demo pair in train mode, a test pair in eval)."""
    return EpisodePair(*pair_arrays(task, pair_index, test=mode != "train"))


def source_episode_pair(
    source: AbstractTaskSource,
    store: PyTree,
    task_index: Int32[Array, ""],
    pair_index: Int32[Array, ""],
    mode: str,
) -> EpisodePair:
    """:func:`episode_pair` of the episode's task, read from ``source`` without the rest of
    the task (see :meth:`~jaxarc.data.source.AbstractTaskSource.episode_pair_arrays`)."""
    arrays = source.episode_pair_arrays(store, task_index, pair_index, test=mode != "train")
    return EpisodePair(*arrays)


def num_episode_pairs(task: Task, mode: str) -> Int32[Array, ""]:
    """How many pairs an episode of this mode can be played on."""
    return task.num_demos if mode == "train" else task.num_tests


def in_context_mask(task: Task, pair_index: Int32[Array, ""], mode: str) -> Bool[Array, " P"]:
    """Valid demonstration pairs to show; in train mode the episode's own pair is hidden."""
    slots = jnp.arange(task.demo_inputs.shape[0], dtype=jnp.int32)
    valid = slots < task.num_demos
    if mode == "train":
        valid = valid & (slots != pair_index)
    return valid


def area_mask(shape: Int32[Array, "2"], canvas: tuple[int, int]) -> Bool[Array, "H W"]:
    """Cells inside a top-left-anchored ``(rows, cols)`` area of the canvas."""
    rows = jnp.arange(canvas[0], dtype=jnp.int32)[:, None]
    cols = jnp.arange(canvas[1], dtype=jnp.int32)[None, :]
    return (rows < shape[0]) & (cols < shape[1])


def similarity_and_match(
    grid: Int8[Array, "H W"],
    grid_shape: Int32[Array, "2"],
    target: Int8[Array, "H W"],
    target_shape: Int32[Array, "2"],
) -> tuple[Float32[Array, ""], Bool[Array, ""]]:
    """``(grid_similarity, grids_equal)`` from one pass over the two grids.

    The cells where the grids agree are packed into one word per column (elementwise work
    that vectorises; a 900-cell reduction per environment does not), so the counts are a few
    word operations: matches inside both areas are popcounts under a row mask, and the union
    of the areas is ``|A| + |B| - |A n B|``.
    """
    height, width = grid.shape
    canvas = jnp.array([height, width], jnp.int32)
    # [W] words, bit r: grid[r, c] == target[r, c]; packed once for both results.
    same = materialize(pack_equal_columns_of(grid, target))
    grid_area = jnp.clip(grid_shape.astype(jnp.int32), 0, canvas)
    target_area = jnp.clip(target_shape.astype(jnp.int32), 0, canvas)
    both = jnp.minimum(grid_area, target_area)
    rows_mask = jnp.where(
        both[0] >= WORD_BITS,
        jnp.uint32(0xFFFFFFFF),
        jnp.left_shift(jnp.uint32(1), both[0].astype(jnp.uint32)) - jnp.uint32(1),
    )
    per_column = lax.population_count(same & rows_mask).astype(jnp.int32)
    in_columns = jnp.arange(width, dtype=jnp.int32) < both[1]
    matches = jnp.sum(jnp.where(in_columns, per_column, 0))
    union = jnp.prod(grid_area) + jnp.prod(target_area) - jnp.prod(both)
    similarity = (matches.astype(jnp.float32) / jnp.maximum(union, 1).astype(jnp.float32)).astype(
        jnp.float32
    )
    every_cell = jnp.uint32((1 << height) - 1)
    equal = jnp.all(grid_shape == target_shape) & jnp.all(same == every_cell)
    return similarity, equal


def grid_similarity(
    grid: Int8[Array, "H W"],
    grid_shape: Int32[Array, "2"],
    target: Int8[Array, "H W"],
    target_shape: Int32[Array, "2"],
) -> Float32[Array, ""]:
    """Matching cells over the union of both areas: 1 only for the same shape and cells."""
    return similarity_and_match(grid, grid_shape, target, target_shape)[0]


def grids_equal(
    grid: Int8[Array, "H W"],
    grid_shape: Int32[Array, "2"],
    target: Int8[Array, "H W"],
    target_shape: Int32[Array, "2"],
) -> Bool[Array, ""]:
    """Same shape and every cell equal (both grids are -1 outside their shapes)."""
    return similarity_and_match(grid, grid_shape, target, target_shape)[1]
