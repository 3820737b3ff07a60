"""The compiled calls of the Gymnasium vector env (:mod:`jaxarc.gym.vector`).

One jitted call per step for every environment: the batched step and the autoresets of
the environments at given indices (only those: their indices, padded to a power of two by
:func:`slots`, go into the call). For generated sources, :func:`renew_pool` renews the task
pool (kept by the vector env between calls) just before environments reset from it.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxarc.envs.functional import batch_step, episode_context, observe, reset_state
from jaxarc.envs.task_pool import refresh_drawn_slots

NEXT_STEP = "NextStep"  # gymnasium.vector.AutoresetMode.NEXT_STEP.value


def info_arrays(states) -> dict:
    return {
        "task_index": states.task_index,
        "pair": states.pair_index,
        "success": states.success,
        "similarity": states.similarity,
        "step_count": states.step_count,
    }


def _reset_rows(keys, task_indices, pair_indices, reward_params, pool, config, source_ref):
    """Reset one environment per key: ``(states, observations, episode contexts)``."""

    def one(key, task_index, pair_index):
        state, _, _ = reset_state(
            key, config, source_ref, task_index, pair_index, reward_params, None, pool
        )
        context = None
        if config.environment.episode_context == "at_reset":
            context = episode_context(state, config)
        return state, observe(state, config), context

    return jax.vmap(one)(keys, task_indices, pair_indices)


def _scatter(batch, rows, indices):
    """``batch`` with ``rows[k]`` written at ``indices[k]`` (indices ``>= B`` are dropped)."""
    return jax.tree.map(lambda b, r: b.at[indices].set(r, mode="drop"), batch, rows)


def _reset_at(states, obs, indices, reset_key, reward_params, pool, config, source_ref):
    """Reset the environments at ``indices`` (padded with ``num_envs``) and only those.

    Environment ``i`` resets from ``jax.random.split(reset_key, num_envs)[i]``, so the result
    does not depend on the padding, nor on which other environments reset with it (the
    pool's renewal, :func:`renew_pool`, is done before, by its own call).
    """
    num_envs = states.step_count.shape[0]
    keys = jax.random.split(reset_key, num_envs)[jnp.minimum(indices, num_envs - 1)]
    minus_one = jnp.full(indices.shape, -1, jnp.int32)
    rows, row_obs, context = _reset_rows(
        keys, minus_one, minus_one, reward_params, pool, config, source_ref
    )
    return _scatter(states, rows, indices), _scatter(obs, row_obs, indices), context


@functools.partial(jax.jit, static_argnames=("config", "source_ref", "mode"))
def vector_step(
    states, actions, reset_indices, key, reward_params, pool, *, config, source_ref, mode
):
    """Step every environment; in ``NEXT_STEP`` mode also reset those at ``reset_indices``.

    Compiled once per (config, task source, mode, batch size, number of reset slots).
    """
    key, reset_key = jax.random.split(key)
    static = (config, source_ref)
    stepped, obs, reward, _, info = batch_step(states, actions, config)
    terminated, truncated = info["terminated"], info["truncated"]
    context = None
    if mode == NEXT_STEP and reset_indices is not None:
        pending = jnp.zeros(reward.shape, jnp.bool_).at[reset_indices].set(True, mode="drop")
        stepped, obs, context = _reset_at(
            stepped, obs, reset_indices, reset_key, reward_params, pool, *static
        )
        reward = jnp.where(pending, jnp.float32(0.0), reward)
        terminated = terminated & ~pending
        truncated = truncated & ~pending
    return stepped, obs, reward, terminated, truncated, key, reset_key, context


@functools.partial(jax.jit, static_argnames=("config", "source_ref"))
def vector_reset_at(states, obs, indices, reset_key, reward_params, pool, *, config, source_ref):
    """``SAME_STEP``: reset the environments at ``indices`` after the step ended them."""
    states, obs, context = _reset_at(
        states, obs, indices, reset_key, reward_params, pool, config, source_ref
    )
    return states, obs, context, jax.tree.map(lambda x: x[indices], obs)


@functools.partial(jax.jit, static_argnames=("config", "source_ref"))
def vector_reset(keys, task_indices, pair_indices, reward_params, pool, *, config, source_ref):
    """Reset every environment: ``(states, observations, episode contexts)``."""
    return _reset_rows(keys, task_indices, pair_indices, reward_params, pool, config, source_ref)


@functools.partial(jax.jit, static_argnames=("source_ref", "num_envs", "derive"))
def renew_pool(pool, key, envs, count, *, source_ref, num_envs, derive):
    """The task pool with the slots drawn by the resets of the environments ``envs[:count]``
    made anew (:func:`~jaxarc.envs.task_pool.refresh_drawn_slots`), before those resets.

    Environment ``i`` resets from ``jax.random.split(reset_key, num_envs)[i]`` (a step's
    autoreset: ``reset_key`` is the second half of ``jax.random.split(key)`` when
    ``derive``, as :func:`vector_step` splits it; ``key`` itself otherwise), so the keys
    here are the resets' own. A call of its own: the generator is compiled once per
    ``len(envs)``, not into every shape of the step.
    """
    reset_key = jax.random.split(key)[1] if derive else key
    keys = jax.random.split(reset_key, num_envs)[jnp.minimum(envs, num_envs - 1)]
    return refresh_drawn_slots(pool, source_ref.source, keys, count)


@jax.jit
def merge(mask, states, obs, old_states, old_obs):
    """Per environment: the new ``(states, obs)`` where ``mask``, the old ones elsewhere."""

    def pick(a, b):
        return jnp.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)), a, b)

    return jax.tree.map(pick, (states, obs), (old_states, old_obs))


def slots(indices: np.ndarray, num_envs: int) -> np.ndarray:
    """``indices`` padded with ``num_envs`` to a power of two (at least 8, at most the
    batch): a handful of compiled shapes, and work proportional to the resets."""
    size = min(max(8, 1 << int(np.ceil(np.log2(max(len(indices), 1))))), num_envs)
    padded = np.full(size, num_envs, dtype=np.int32)
    padded[: len(indices)] = indices
    return padded
