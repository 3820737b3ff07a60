"""Structured actions: selection masks against NumPy, history rows, batching."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxarc.envs import BboxAction, MaskAction, PointAction

CANVAS = (7, 9)
coord = st.integers(-2, 10)


@settings(max_examples=40, deadline=None)
@given(op=st.integers(0, 34), row=coord, col=coord)
def test_point_mask_matches_numpy(op, row, col):
    mask = np.asarray(PointAction(op, row, col).to_selection_mask(CANVAS))
    expected = np.zeros(CANVAS, bool)
    if 0 <= row < CANVAS[0] and 0 <= col < CANVAS[1]:
        expected[row, col] = True
    np.testing.assert_array_equal(mask, expected)
    assert bool(PointAction(op, row, col).in_bounds(CANVAS)) == expected.any()


@settings(max_examples=40, deadline=None)
@given(r1=coord, c1=coord, r2=coord, c2=coord)
def test_bbox_mask_matches_numpy_for_corners_in_any_order(r1, c1, r2, c2):
    mask = np.asarray(BboxAction(0, r1, c1, r2, c2).to_selection_mask(CANVAS))
    expected = np.zeros(CANVAS, bool)
    for r in range(min(r1, r2), max(r1, r2) + 1):
        for c in range(min(c1, c2), max(c1, c2) + 1):
            if 0 <= r < CANVAS[0] and 0 <= c < CANVAS[1]:
                expected[r, c] = True
    np.testing.assert_array_equal(mask, expected)


def test_history_rows_round_trip_for_every_format():
    rng = np.random.default_rng(0)
    selection = rng.random(CANVAS) < 0.5
    for action in (
        PointAction(13, 4, 8),
        BboxAction(26, 6, 0, 1, 5),
        MaskAction(30, selection),
    ):
        row = action.to_history()
        shape, dtype = type(action).history_row_shape(CANVAS)
        assert row.shape == shape and row.dtype == dtype
        back = type(action).from_history(row, CANVAS)
        np.testing.assert_array_equal(
            back.to_selection_mask(CANVAS), action.to_selection_mask(CANVAS)
        )
        assert int(back.operation) == int(action.operation)
    # the mask history is bit-packed: 1 byte op + ceil(63 / 8) bytes
    assert MaskAction.history_row_shape(CANVAS)[0] == (1 + 8,)


def test_actions_are_batched_pytrees_under_vmap():
    batch = PointAction(jnp.arange(4), jnp.arange(4), jnp.array([0, 1, 2, 8]))
    masks = jax.vmap(lambda a: a.to_selection_mask(CANVAS))(batch)
    assert masks.shape == (4, *CANVAS)
    assert [int(m.sum()) for m in masks] == [1, 1, 1, 1]
    assert bool(masks[3, 3, 8])
    assert jax.tree.leaves(batch)[0].dtype == jnp.int32


def test_mask_action_with_wrong_canvas_is_a_clear_error():
    import pytest

    with pytest.raises(ValueError, match="canvas"):
        MaskAction(0, np.zeros((3, 3), bool)).to_selection_mask(CANVAS)
