"""The point-specialised operations against the generic ``apply_operation`` (and NumPy).

``apply_point_operation`` must give exactly the state the generic path gives for the point's
one-cell selection mask, on every field, along whole random episodes (so the clipboard and
selection it carries over are the ones point actions produce). The environment-level test
plays the same cells as point actions (fast path) and as one-cell bbox actions (generic path)
through ``batch_step``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from env_helpers import random_grids, step_parity_bank
from numpy_reference import same_colour_region

from jaxarc.envs import JaxArcConfig, UnifiedActionConfig, UnifiedDatasetConfig
from jaxarc.envs.episode import similarity_and_match
from jaxarc.envs.functional import batch_reset, batch_step
from jaxarc.envs.structured_actions import BboxAction, PointAction
from jaxarc.grid.bit_rows import pack_columns, unpack_columns, unpack_columns_flat
from jaxarc.grid.flood_fill import CHUNK, flood_point_region
from jaxarc.grid.operations import GridState, apply_operation
from jaxarc.grid.point_operations import apply_point_operation

FIELDS = ("grid", "shape", "selection", "clipboard", "clipboard_mask")
BATCH = 48


def _generic(state, op, row, col, input_grid, input_shape):
    mask = PointAction(op, row, col).to_selection_mask(state.grid.shape)
    return apply_operation(state, op, mask, input_grid, input_shape)


generic_batch = jax.jit(jax.vmap(_generic))
point_batch = jax.jit(jax.vmap(apply_point_operation))


@pytest.mark.parametrize("canvas", [(5, 5), (7, 9), (9, 7), (30, 30), (32, 32)])
def test_point_operations_match_generic_path_over_random_episodes(canvas) -> None:
    height, width = canvas
    rng = np.random.default_rng(height * 100 + width)
    grids, shapes = random_grids(rng, BATCH, canvas, few_colours=True)
    inputs, input_shapes = (jnp.asarray(x) for x in random_grids(rng, BATCH, canvas, False))
    generic = point = jax.vmap(GridState.create)(jnp.asarray(grids), jnp.asarray(shapes))
    for step in range(40):
        # Ops include SUBMIT and unknown ids; points include cells off the grid and canvas.
        op = jnp.asarray(rng.integers(-1, 37, BATCH), jnp.int32)
        row = jnp.asarray(rng.integers(-2, height + 2, BATCH), jnp.int32)
        col = jnp.asarray(rng.integers(-2, width + 2, BATCH), jnp.int32)
        generic = generic_batch(generic, op, row, col, inputs, input_shapes)
        point = point_batch(point, op, row, col, inputs, input_shapes)
        for field in FIELDS:
            expected, got = np.asarray(getattr(generic, field)), np.asarray(getattr(point, field))
            bad = np.nonzero((expected != got).reshape(BATCH, -1).any(axis=1))[0]
            assert bad.size == 0, (
                f"{canvas} step {step} field {field}: envs {bad[:4]} ops {np.asarray(op)[bad[:4]]}"
            )


def test_point_flood_fills_a_snake_completely() -> None:
    """A one-cell-wide snake touching every column: no round or iteration cap cuts it short."""
    size = 30
    grid = np.ones((size, size), np.int8)
    for r in range(0, size, 2):
        grid[r, :] = 0
        grid[r + 1, size - 1 if (r // 2) % 2 == 0 else 0] = 0
    state = GridState.create(jnp.asarray(grid))
    after = jax.jit(apply_point_operation)(
        state, jnp.int32(15), jnp.int32(0), jnp.int32(0), state.grid, state.shape
    )
    expected = np.where(grid == 0, 5, grid)
    np.testing.assert_array_equal(np.asarray(after.grid), expected)


def _numpy_similarity(grid, grid_shape, target, target_shape):
    height, width = grid.shape
    rows, cols = np.arange(height)[:, None], np.arange(width)[None, :]
    in_grid = (rows < grid_shape[0]) & (cols < grid_shape[1])
    in_target = (rows < target_shape[0]) & (cols < target_shape[1])
    matches = int(np.sum(in_grid & in_target & (grid == target)))
    union = int(np.sum(in_grid | in_target))
    similarity = np.float32(matches) / np.float32(max(union, 1))
    equal = bool(np.all(grid_shape == target_shape) and np.all(grid == target))
    return similarity, equal


def test_similarity_and_match_against_numpy() -> None:
    rng = np.random.default_rng(3)
    check = jax.jit(jax.vmap(similarity_and_match))
    for canvas in [(4, 6), (30, 30), (32, 32)]:
        grids, shapes = random_grids(rng, BATCH, canvas, few_colours=True)
        targets, target_shapes = random_grids(rng, BATCH, canvas, few_colours=True)
        targets[:8], target_shapes[:8] = grids[:8], shapes[:8]  # some exact matches
        similarity, equal = check(
            *(jnp.asarray(x) for x in (grids, shapes, targets, target_shapes))
        )
        for b in range(BATCH):
            ref_similarity, ref_equal = _numpy_similarity(
                grids[b], shapes[b], targets[b], target_shapes[b]
            )
            assert np.asarray(similarity)[b] == ref_similarity, (canvas, b)
            assert bool(np.asarray(equal)[b]) == ref_equal, (canvas, b)
        assert np.asarray(equal)[:8].all()


@pytest.mark.parametrize("shape", [(1, 1), (30, 30), (32, 5), (7, 32)])
def test_column_packing_round_trips(shape) -> None:
    rng = np.random.default_rng(sum(shape))
    masks = rng.random((3, *shape)) < 0.5
    words = np.asarray(pack_columns(jnp.asarray(masks)))
    expected = (masks.astype(np.uint64) << np.arange(shape[0], dtype=np.uint64)[:, None]).sum(1)
    np.testing.assert_array_equal(words, expected.astype(np.uint32))
    np.testing.assert_array_equal(np.asarray(unpack_columns(jnp.asarray(words), shape[0])), masks)
    flat = np.asarray(unpack_columns_flat(jnp.asarray(words[0]), shape[0]))
    np.testing.assert_array_equal(flat, masks[0].reshape(-1).astype(np.int8))


def test_flat_unpacking_is_one_broadcast() -> None:
    # A concatenation of per-row pieces compiled to one XLA kernel per row (~1.3 s of compile).
    words = jnp.zeros((30,), jnp.uint32)
    eqns = jax.make_jaxpr(lambda w: unpack_columns_flat(w, 30))(words).jaxpr.eqns
    assert "concatenate" not in {eqn.primitive.name for eqn in eqns}


def _without_history(tree):
    return [
        leaf
        for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]
        if "history" not in jax.tree_util.keystr(path)
    ]


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_point_step_matches_one_cell_bbox_step(mode) -> None:
    """The environment's fast path (point) against its generic path (bbox of one cell)."""
    bank = step_parity_bank()
    dataset = UnifiedDatasetConfig(max_grid_height=6, max_grid_width=6)
    configs = {
        fmt: JaxArcConfig(dataset=dataset, action=UnifiedActionConfig(selection_format=fmt))
        for fmt in ("point", "bbox")
    }
    configs = {
        fmt: cfg.replace(
            environment=cfg.environment.__class__(max_episode_steps=30, episode_mode=mode)
        )
        for fmt, cfg in configs.items()
    }
    keys = jax.random.split(jax.random.key(4), 32)
    point_states, _ = batch_reset(keys, configs["point"], bank)
    bbox_states, _ = batch_reset(keys, configs["bbox"], bank)
    rng = np.random.default_rng(11)
    for step in range(35):
        op = jnp.asarray(rng.integers(0, 35, 32), jnp.int32)
        row, col = (jnp.asarray(rng.integers(-1, 7, 32), jnp.int32) for _ in range(2))
        point_out = batch_step(point_states, PointAction(op, row, col), configs["point"])
        bbox_out = batch_step(bbox_states, BboxAction(op, row, col, row, col), configs["bbox"])
        point_states, bbox_states = point_out[0], bbox_out[0]
        for got, expected in zip(
            _without_history(point_out), _without_history(bbox_out), strict=True
        ):
            if jnp.issubdtype(got.dtype, jax.dtypes.prng_key):
                got, expected = jax.random.key_data(got), jax.random.key_data(expected)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(expected), f"step {step}")


def test_large_batches_flood_only_seeded_environments_correctly() -> None:
    """Batches above ``CHUNK`` take the gathered-chunks path: every seeded env's region is the
    BFS region, and unseeded envs (most of the batch here) get nothing."""
    batch = CHUNK * 2 + 37
    rng = np.random.default_rng(5)
    grids = rng.integers(0, 3, (batch, 12, 12)).astype(np.int8)
    starts = rng.integers(0, 12, (batch, 2))
    floods = rng.random(batch) < 0.6  # more than one chunk of seeded envs
    regions = jax.jit(jax.vmap(flood_point_region))(
        jnp.asarray(grids),
        jnp.asarray(starts[:, 0], jnp.int32),
        jnp.asarray(starts[:, 1], jnp.int32),
        jnp.asarray(floods),
    )
    masks = np.asarray(unpack_columns(regions, 12))
    for b in range(batch):
        expected = np.zeros((12, 12), bool)
        if floods[b]:
            for cell in same_colour_region(grids[b], (int(starts[b, 0]), int(starts[b, 1]))):
                expected[cell] = True
        np.testing.assert_array_equal(masks[b], expected, f"env {b}")
