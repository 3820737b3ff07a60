"""The bbox- and mask-specialised operations against the generic ``apply_operation``.

``apply_box_operation`` and ``apply_mask_operation`` must give exactly the state the generic
path gives for the same selection mask, on every field, along whole random episodes (so the
clipboard and selection they carry over are the ones their own actions produce). The
environment-level tests step the same random episodes through ``batch_step`` with the fast
paths and with the generic path (``apply_operation`` monkeypatched in, every format).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from env_helpers import random_grids, step_parity_bank

from jaxarc.envs import JaxArcConfig, UnifiedActionConfig, UnifiedDatasetConfig
from jaxarc.envs.functional import batch_reset, batch_step
from jaxarc.envs.structured_actions import BboxAction
from jaxarc.grid.box_operations import apply_box_operation, apply_mask_operation
from jaxarc.grid.lanes import CHUNK
from jaxarc.grid.operations import GridState, apply_operation

FIELDS = ("grid", "shape", "selection", "clipboard", "clipboard_mask")
BATCH = 48


def _generic_box(state, op, r1, c1, r2, c2, input_grid, input_shape):
    mask = BboxAction(op, r1, c1, r2, c2).to_selection_mask(state.grid.shape)
    return apply_operation(state, op, mask, input_grid, input_shape)


generic_box = jax.jit(jax.vmap(_generic_box))
fast_box = jax.jit(jax.vmap(apply_box_operation))
generic_mask = jax.jit(jax.vmap(apply_operation))
fast_mask = jax.jit(jax.vmap(apply_mask_operation))


def _random_masks(rng: np.random.Generator, canvas: tuple[int, int]) -> np.ndarray:
    """Masks of every kind: empty, sparse, dense, one cell, rectangles (moved boxes)."""
    height, width = canvas
    density = rng.choice([0.0, 0.05, 0.3, 0.9], BATCH)[:, None, None]
    masks = rng.random((BATCH, height, width)) < density
    rects = rng.random(BATCH) < 0.3
    for b in np.nonzero(rects)[0]:
        r1, r2 = np.sort(rng.integers(0, height, 2))
        c1, c2 = np.sort(rng.integers(0, width, 2))
        masks[b] = False
        masks[b, r1 : r2 + 1, c1 : c2 + 1] = True
    return masks


def _compare(expected, got, label, op):
    for field in FIELDS:
        want, have = np.asarray(getattr(expected, field)), np.asarray(getattr(got, field))
        bad = np.nonzero((want != have).reshape(BATCH, -1).any(axis=1))[0]
        assert bad.size == 0, f"{label} field {field}: envs {bad[:4]} ops {np.asarray(op)[bad[:4]]}"


@pytest.mark.parametrize("canvas", [(5, 5), (9, 7), (30, 30), (32, 32)])
def test_box_operations_match_generic_path_over_random_episodes(canvas) -> None:
    height, width = canvas
    rng = np.random.default_rng(height * 100 + width)
    grids, shapes = random_grids(rng, BATCH, canvas, few_colours=True)
    inputs, input_shapes = (jnp.asarray(x) for x in random_grids(rng, BATCH, canvas, False))
    generic = fast = jax.vmap(GridState.create)(jnp.asarray(grids), jnp.asarray(shapes))
    for step in range(40):
        # Ops include SUBMIT and unknown ids; corners in any order, off the grid and canvas.
        op = jnp.asarray(rng.integers(-1, 37, BATCH), jnp.int32)
        corners = [
            jnp.asarray(rng.integers(-2, size + 2, BATCH), jnp.int32)
            for size in (height, width, height, width)
        ]
        generic = generic_box(generic, op, *corners, inputs, input_shapes)
        fast = fast_box(fast, op, *corners, inputs, input_shapes)
        _compare(generic, fast, f"{canvas} step {step}", op)


@pytest.mark.parametrize("canvas", [(7, 9), (30, 30), (32, 32)])
def test_mask_operations_match_generic_path_over_random_episodes(canvas) -> None:
    height, width = canvas
    rng = np.random.default_rng(height * 100 + width + 1)
    grids, shapes = random_grids(rng, BATCH, canvas, few_colours=True)
    inputs, input_shapes = (jnp.asarray(x) for x in random_grids(rng, BATCH, canvas, False))
    generic = fast = jax.vmap(GridState.create)(jnp.asarray(grids), jnp.asarray(shapes))
    for step in range(40):
        op = jnp.asarray(rng.integers(-1, 37, BATCH), jnp.int32)
        masks = jnp.asarray(_random_masks(rng, canvas))
        generic = generic_mask(generic, op, masks, inputs, input_shapes)
        fast = fast_mask(fast, op, masks, inputs, input_shapes)
        _compare(generic, fast, f"{canvas} step {step}", op)


@pytest.mark.parametrize("fmt", ["bbox", "mask"])
@pytest.mark.parametrize("canvas", [(30, 30), (9, 7)])
def test_large_batches_take_the_chunked_lanes_and_match_generic(fmt, canvas) -> None:
    """Above ``CHUNK`` environments the flips/rotations, the clipboard, the flood and (on a
    square canvas) the coordinate-map window run only on the environments that use them, in
    several chunks (most environments here use them): still the generic path's states, on a
    square canvas and on one whose window is square-padded."""
    batch = 3 * CHUNK + 5
    rng = np.random.default_rng(21)
    grids = rng.integers(0, 3, (batch, *canvas)).astype(np.int8)
    limits = np.array(canvas) + 1
    shapes = rng.integers(np.array(canvas) // 3, limits, (batch, 2)).astype(np.int32)
    inputs = jnp.asarray(rng.integers(0, 10, (batch, *canvas)).astype(np.int8))
    input_shapes = jnp.asarray(rng.integers(1, limits, (batch, 2)).astype(np.int32))
    generic = fast = jax.vmap(GridState.create)(jnp.asarray(grids), jnp.asarray(shapes))
    family = np.array([13, 24, 25, 26, 27, 28, 29, 30, 20, 23])  # flood, map family, moves
    for step in range(8):
        op = jnp.asarray(rng.choice(family, batch), jnp.int32)
        if fmt == "bbox":
            corners = [
                jnp.asarray(rng.integers(-1, max(canvas) + 1, batch), jnp.int32) for _ in range(4)
            ]
            generic = generic_box(generic, op, *corners, inputs, input_shapes)
            fast = fast_box(fast, op, *corners, inputs, input_shapes)
        else:
            masks = jnp.asarray(rng.random((batch, *canvas)) < 0.1)
            generic = generic_mask(generic, op, masks, inputs, input_shapes)
            fast = fast_mask(fast, op, masks, inputs, input_shapes)
        for field in FIELDS:
            want, have = np.asarray(getattr(generic, field)), np.asarray(getattr(fast, field))
            bad = np.nonzero((want != have).reshape(batch, -1).any(axis=1))[0]
            assert bad.size == 0, f"step {step} {field}: envs {bad[:4]}"


def _leaves(tree):
    leaves = []
    for leaf in jax.tree.leaves(tree):
        if jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            leaf = jax.random.key_data(leaf)
        leaves.append(np.asarray(leaf))
    return leaves


def _generic_step_one(monkeypatch):
    """``apply_action`` with the bbox/mask fast paths replaced by the generic operations."""
    import jaxarc.envs.transition as transition

    def box_generic(state, op, r1, c1, r2, c2, input_grid, input_shape):
        return _generic_box(state, op, r1, c1, r2, c2, input_grid, input_shape)

    monkeypatch.setattr(transition, "apply_box_operation", box_generic)
    monkeypatch.setattr(transition, "apply_mask_operation", apply_operation)


@pytest.mark.parametrize("fmt", ["bbox", "mask"])
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_fast_step_matches_generic_step(fmt, mode, monkeypatch) -> None:
    """Whole environment steps (states, observations, rewards, dones, infos) with the fast path
    and with the generic path, on the same random episodes."""
    from jaxarc.envs.structured_actions import MaskAction

    bank = step_parity_bank()
    config = JaxArcConfig(
        dataset=UnifiedDatasetConfig(max_grid_height=6, max_grid_width=6),
        action=UnifiedActionConfig(selection_format=fmt),
    )
    config = config.replace(
        environment=config.environment.__class__(max_episode_steps=30, episode_mode=mode)
    )
    keys = jax.random.split(jax.random.key(4), 32)
    rng = np.random.default_rng(12)
    actions = []
    for _ in range(35):
        op = rng.integers(0, 35, 32)
        if fmt == "bbox":
            actions.append(BboxAction(op, *(rng.integers(-1, 7, 32) for _ in range(4))))
        else:
            actions.append(MaskAction(op, rng.random((32, 6, 6)) < rng.random((32, 1, 1))))

    def play():
        states, _ = batch_reset(keys, config, bank)
        outputs = []
        for action in actions:
            out = batch_step(states, action, config)
            states = out[0]
            outputs.append(_leaves(out))
        return outputs

    fast = play()
    jax.clear_caches()
    _generic_step_one(monkeypatch)
    generic = play()
    jax.clear_caches()
    for step, (got, expected) in enumerate(zip(fast, generic, strict=True)):
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_array_equal(a, b, f"step {step}")
