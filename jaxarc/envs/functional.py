"""The pure-functional environment: ``arc_reset`` / ``arc_step`` and their batched forms.

Static/traced split:
* static: the :class:`~jaxarc.envs.config.JaxArcConfig` (hashable; shapes and code paths)
  and the task source, which the state carries through a :class:`SourceRef` compared by
  identity. A bank's arrays are therefore constants of the compiled step, shared by every
  environment of a batch.
* traced: keys, indices, actions, reward weights and every leaf of the state.

The step is branch-free: the operations are those of
:func:`~jaxarc.grid.operations.apply_operation`, whose operation families are parameterised
by per-environment scalars rather than selected by ``lax.switch``. Each action format (the
static ``config.action.selection_format``) takes a specialised form that gives the same
states: point actions :func:`~jaxarc.grid.point_operations.apply_point_operation`, bbox
actions :func:`~jaxarc.grid.box_operations.apply_box_operation` (the rectangle as scalars)
and masks :func:`~jaxarc.grid.box_operations.apply_mask_operation` (the flat-canvas form).

This module is the public core the faces and the trainer call. It holds the step; the
reset (:mod:`jaxarc.envs.reset`) and the observation (:mod:`jaxarc.envs.observation`) live
in their own modules and are re-exported here.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32

from jaxarc.data.source import AbstractTaskSource
from jaxarc.envs.config import JaxArcConfig
from jaxarc.envs.episode import similarity_and_match
from jaxarc.envs.errors import JAXErrorHandler
from jaxarc.envs.observation import episode_context, observation_of, observe
from jaxarc.envs.reset import (
    arc_reset,
    as_task_source,
    batch_reset,
    check_canvas,
    episode_start,
    reset_one,
    reset_one_jit,
    reset_state,
)
from jaxarc.envs.structured_actions import AbstractAction
from jaxarc.envs.transition import apply_action, effective_operation, step_reward
from jaxarc.envs.types import (
    ArcObservation,
    ArcState,
    StepInfo,
)
from jaxarc.grid.operation_ids import SUBMIT
from jaxarc.grid.operations import GridState


def step_one(
    state: ArcState,
    action: AbstractAction,
    config: JaxArcConfig,
    source: AbstractTaskSource | None = None,
) -> tuple[ArcState, ArcObservation, Float32[Array, ""], Bool[Array, ""], StepInfo]:
    """One environment's step; ``source`` overrides ``state.source`` (see :func:`arc_step`),
    from which only the observation's demonstration pairs are read (the played pair is
    ``state.pair``)."""
    canvas = config.dataset.canvas_shape
    if config.environment.validate:
        action = JAXErrorHandler.validate_action(action, config)
        state = JAXErrorHandler.validate_state_consistency(state)
    # the step and the history see the same, in-range action (see structured_actions)
    action = action.normalized(canvas)
    source = state.source if source is None else source
    task = source.episode_task(state.episode_store, state.task_index)  # (the observation's)
    pair = state.pair  # (read from the source at reset; the step reads no task data)

    was_done = state.terminated | state.truncated
    effective_op = effective_operation(action.operation, ~was_done, config)
    before = GridState(
        grid=state.grid,
        shape=state.grid_shape,
        selection=state.selection,
        clipboard=state.clipboard,
        clipboard_mask=state.clipboard_mask,
    )
    after = apply_action(before, effective_op, action, pair.input_grid, pair.input_shape, config)
    similarity, correct = similarity_and_match(
        after.grid, after.shape, pair.target_grid, pair.target_shape
    )
    submitted = effective_op == SUBMIT
    success = submitted & correct & pair.scored

    live = ~was_done
    step_count = state.step_count + live.astype(jnp.int32)
    terminated = state.terminated | submitted
    truncated = state.truncated | (
        live & ~submitted & (step_count >= config.environment.max_episode_steps)
    )
    reward = jnp.where(
        live,
        step_reward(state.reward_params, config, submitted, success, similarity - state.similarity),
        jnp.float32(0.0),
    )

    row = jnp.clip(state.history_length, 0, state.history.shape[0] - 1)
    history_row = action.to_history().astype(state.history.dtype)
    kept_row = jnp.where(live, history_row, state.history[row])
    history = jax.lax.dynamic_update_index_in_dim(state.history, kept_row, row, axis=0)

    new_state = eqx.tree_at(
        lambda s: (
            s.grid,
            s.grid_shape,
            s.selection,
            s.clipboard,
            s.clipboard_mask,
            s.step_count,
            s.terminated,
            s.truncated,
            s.success,
            s.similarity,
            s.history,
            s.history_length,
        ),
        state,
        (
            after.grid,
            after.shape,
            after.selection,
            after.clipboard,
            after.clipboard_mask,
            step_count,
            terminated,
            truncated,
            state.success | success,
            jnp.where(live, similarity, state.similarity),
            history,
            state.history_length + live.astype(jnp.int32),
        ),
    )
    info = {
        "terminated": terminated,
        "truncated": truncated,
        "success": new_state.success,
        "similarity": new_state.similarity,
    }
    return (
        new_state,
        observation_of(new_state, task, pair, config),
        reward,
        terminated | truncated,
        info,
    )


step_one_jit = eqx.filter_jit(step_one)  # the compiled single-environment step


def arc_step(
    state: ArcState, action: AbstractAction, config: JaxArcConfig
) -> tuple[ArcState, ArcObservation, Float32[Array, ""], Bool[Array, ""], StepInfo]:
    """Apply one action: ``(state, observation, reward, done, info)``.

    ``info`` holds ``terminated`` (SUBMIT), ``truncated`` (``max_episode_steps`` reached
    without a submission), ``success`` (a correct submission) and ``similarity``. Stepping a
    finished episode changes nothing and gives reward 0. A disallowed or unknown operation
    is a no-op that still counts as a step (an error when ``config.environment.validate``).
    Compiled with ``equinox.filter_jit``; the task source enters as a traced input.
    """
    return step_one_jit(state, action, config, state.source)


def batch_step(
    states: ArcState, actions: AbstractAction, config: JaxArcConfig
) -> tuple[ArcState, ArcObservation, Float32[Array, " B"], Bool[Array, " B"], StepInfo]:
    """:func:`arc_step` over a batch: every leaf of ``states`` and ``actions`` has axis ``B``."""
    return _batch_step(states, actions, config, states.source)


@eqx.filter_jit
def _batch_step(states, actions, config, source):
    return jax.vmap(lambda s, a: step_one(s, a, config, source))(states, actions)


__all__ = [
    "arc_reset",
    "arc_step",
    "as_task_source",
    "batch_reset",
    "batch_step",
    "check_canvas",
    "episode_context",
    "episode_start",
    "observe",
    "reset_one",
    "reset_one_jit",
    "reset_state",
    "step_one",
    "step_one_jit",
]
