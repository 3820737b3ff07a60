"""What one step does: the grid operation of an action, and the reward it pays.

Both are pure functions of one environment's values, shared by the step
(:func:`~jaxarc.envs.functional.step_one`) and by everything that must agree with it
exactly: replaying an episode's actions on other grids (:mod:`jaxarc.envs.hindsight`) and
re-scoring recorded steps against another target.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, Int8, Int32

from jaxarc.envs.config import JaxArcConfig, RewardParams
from jaxarc.envs.structured_actions import AbstractAction
from jaxarc.grid.box_operations import apply_box_operation, apply_mask_operation
from jaxarc.grid.operation_ids import NUM_OPERATIONS
from jaxarc.grid.operations import GridState
from jaxarc.grid.point_operations import apply_point_operation


def effective_operation(
    operation: Int32[Array, ""], live: Bool[Array, ""], config: JaxArcConfig
) -> Int32[Array, ""]:
    """The operation the step applies: ``operation`` if it is known, allowed by the config
    and the episode is ``live``; else ``-1`` (the no-op)."""
    operation = jnp.asarray(operation, dtype=jnp.int32)
    known = (operation >= 0) & (operation < NUM_OPERATIONS)
    allowed_table = jnp.asarray(config.action.allowed_mask, dtype=jnp.bool_)
    allowed = known & allowed_table[jnp.clip(operation, 0, NUM_OPERATIONS - 1)]
    return jnp.where(allowed & live, operation, jnp.int32(-1))


def apply_action(
    before: GridState,
    operation: Int32[Array, ""],
    action: AbstractAction,
    input_grid: Int8[Array, "H W"],
    input_shape: Int32[Array, "2"],
    config: JaxArcConfig,
) -> GridState:
    """``operation`` (already effective: see :func:`effective_operation`) on the selection of
    the normalized ``action``, in the specialised form of the config's (static) selection
    format; ``input_grid`` is what ``COPY_INPUT`` restores."""
    if config.action.selection_format == "point":
        return apply_point_operation(
            before, operation, action.row, action.col, input_grid, input_shape
        )
    if config.action.selection_format == "bbox":
        return apply_box_operation(
            before, operation, action.r1, action.c1, action.r2, action.c2, input_grid, input_shape
        )
    canvas = config.dataset.canvas_shape
    return apply_mask_operation(
        before, operation, action.to_selection_mask(canvas), input_grid, input_shape
    )


def step_reward(
    params: RewardParams,
    config: JaxArcConfig,
    submitted: Bool[Array, ""],
    success: Bool[Array, ""],
    similarity_gain: Float32[Array, ""],
) -> Float32[Array, ""]:
    """A live step's reward: the step penalty, the submission's bonus or penalty, and in
    train mode with shaping on, ``similarity_weight`` times the similarity gained."""
    submit_reward = jnp.where(success, params.success_bonus, params.failed_submit_penalty)
    reward = params.step_penalty + jnp.where(submitted, submit_reward, jnp.float32(0.0))
    if config.environment.episode_mode == "train" and config.environment.similarity_shaping:
        reward = reward + params.similarity_weight * similarity_gain
    return reward.astype(jnp.float32)
