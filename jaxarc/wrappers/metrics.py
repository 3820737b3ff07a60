"""Episode metrics in ``info``: return, length, success and best similarity."""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, Int32, PRNGKeyArray

from jaxarc.wrappers.base import AbstractEnvWrapper

METRIC_KEYS: tuple[str, ...] = (
    "episode_return",
    "episode_length",
    "episode_success",
    "episode_best_similarity",
    "episode_done",
)


class EpisodeMetricsState(eqx.Module):
    """Running totals of the current episode next to the wrapped state."""

    env_state: Any
    episode_return: Float32[Array, ""]
    episode_length: Int32[Array, ""]
    success: Bool[Array, ""]
    best_similarity: Float32[Array, ""]


def _fresh(env_state: Any) -> EpisodeMetricsState:
    return EpisodeMetricsState(
        env_state, jnp.float32(0.0), jnp.int32(0), jnp.asarray(False), jnp.float32(0.0)
    )


class EpisodeMetricsWrapper(AbstractEnvWrapper):
    """Adds :data:`METRIC_KEYS` to ``info`` on every step.

    ``episode_*`` hold the totals of the episode the transition belongs to, this step
    included: at a transition with ``episode_done`` they are the finished episode's return,
    length, success and best similarity (the highest ``info["similarity"]`` after any of its
    steps), then the totals restart. Transitions marked ``info["autoreset"]`` (the reset
    step of :class:`~jaxarc.wrappers.AutoResetWrapper` in next-step mode) count for nothing.
    """

    def reset(self, key: PRNGKeyArray, params: Any = None) -> tuple[Any, EpisodeMetricsState]:
        obs, env_state = self.env.reset(key, params)
        return obs, _fresh(env_state)

    def step(self, key: PRNGKeyArray, state: EpisodeMetricsState, action: Any, params: Any = None):
        obs, env_state, reward, terminated, truncated, info = self.env.step(
            key, state.env_state, action, params
        )
        missing = [k for k in ("success", "similarity") if k not in info]
        if missing:
            raise ValueError(f"EpisodeMetricsWrapper needs info{missing} from the wrapped env")
        counted = ~jnp.asarray(info.get("autoreset", False), dtype=jnp.bool_)
        reward32 = jnp.asarray(reward, dtype=jnp.float32)
        episode_return = state.episode_return + jnp.where(counted, reward32, jnp.float32(0.0))
        episode_length = state.episode_length + counted.astype(jnp.int32)
        similarity = jnp.asarray(info["similarity"], dtype=jnp.float32)
        best = jnp.where(
            counted, jnp.maximum(state.best_similarity, similarity), state.best_similarity
        )
        success = state.success | (counted & jnp.asarray(info["success"], dtype=jnp.bool_))
        done = (terminated | truncated) & counted
        info = {
            **info,
            "episode_return": episode_return,
            "episode_length": episode_length,
            "episode_success": success,
            "episode_best_similarity": best,
            "episode_done": done,
        }
        zero_f, zero_i = jnp.float32(0.0), jnp.int32(0)
        next_state = EpisodeMetricsState(
            env_state,
            jnp.where(done, zero_f, episode_return),
            jnp.where(done, zero_i, episode_length),
            success & ~done,
            jnp.where(done, zero_f, best),
        )
        return obs, next_state, reward, terminated, truncated, info
