"""Observations: what an agent sees of one environment's state.

:func:`observe` builds the observation of a state; with ``episode_context="at_reset"`` the
episode's constants (the test input and the demonstration pairs) are left out and read once
per episode with :func:`episode_context`.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxarc.data.source import AbstractTaskSource, Task
from jaxarc.envs.config import JaxArcConfig
from jaxarc.envs.episode import EpisodePair, in_context_mask
from jaxarc.envs.types import (
    CONTEXT_FIELDS,
    ArcObservation,
    ArcState,
    EpisodeContext,
)


def observation_of(
    state: ArcState, task: Task, pair: EpisodePair, config: JaxArcConfig
) -> ArcObservation:
    """The observation of ``state`` whose episode plays ``pair`` of ``task`` (both already
    looked up: reset and step have them at hand)."""
    # With ``episode_context="at_reset"`` the per-episode constants are left out (None);
    # :func:`episode_context` gives them.
    step_fields = dict(
        grid=state.grid,
        grid_shape=state.grid_shape,
        clipboard=state.clipboard,
        clipboard_mask=state.clipboard_mask,
        allowed_operations=jnp.asarray(config.action.allowed_mask, dtype=jnp.bool_),
        step_count=state.step_count,
    )
    if config.environment.episode_context == "at_reset":
        return ArcObservation(**step_fields)
    context = _context(state, task, pair, config)
    return ArcObservation(**step_fields, **{f: getattr(context, f) for f in CONTEXT_FIELDS})


def _context(
    state: ArcState, task: Task, pair: EpisodePair, config: JaxArcConfig
) -> EpisodeContext:
    # Hidden pairs (padding, and in train mode the episode's own pair, whose output is the
    # target) are blanked, not just masked: the target never appears in the observation.
    shown = in_context_mask(task, state.pair_index, config.environment.episode_mode)
    return EpisodeContext(
        input_grid=pair.input_grid,
        input_shape=pair.input_shape,
        demo_inputs=jnp.where(shown[:, None, None], task.demo_inputs, jnp.int8(-1)),
        demo_outputs=jnp.where(shown[:, None, None], task.demo_outputs, jnp.int8(-1)),
        demo_input_shapes=jnp.where(shown[:, None], task.demo_input_shapes, 0),
        demo_output_shapes=jnp.where(shown[:, None], task.demo_output_shapes, 0),
        demo_mask=shown,
    )


def _episode_task_and_pair(
    state: ArcState, config: JaxArcConfig, source: AbstractTaskSource | None = None
) -> tuple[Task, EpisodePair]:
    source = state.source if source is None else source
    return source.episode_task(state.episode_store, state.task_index), state.pair


def observe(
    state: ArcState, config: JaxArcConfig, source: AbstractTaskSource | None = None
) -> ArcObservation:
    """The observation of one environment's ``state`` (what reset/step return for it)."""
    task, pair = _episode_task_and_pair(state, config, source)
    return observation_of(state, task, pair, config)


def episode_context(
    state: ArcState, config: JaxArcConfig, source: AbstractTaskSource | None = None
) -> EpisodeContext:
    """The constants of one environment's episode: its input grid and demonstration pairs.

    Computed from the state (a gather from the task source), so it is available whatever
    ``config.environment.episode_context`` says; ``vmap`` it for a batch.
    """
    task, pair = _episode_task_and_pair(state, config, source)
    return _context(state, task, pair, config)
