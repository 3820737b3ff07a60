"""Auto-reset keeping the terminal observation, with the two conventions named.

* :attr:`AutoResetMode.SAME_STEP` (gymnax's own): the step that ends an episode returns the
  *next* episode's first observation and state; the terminal observation is in
  ``info["final_observation"]``.
* :attr:`AutoResetMode.NEXT_STEP` (Gymnasium's vector default): the ending step returns the
  terminal observation itself; the following ``step`` ignores its action and returns the
  new episode's first observation with reward 0 and ``terminated = truncated = False``,
  marked by ``info["autoreset"] = True``.

Both rely on the wrapped environment resetting itself inside ``step`` and reporting
``info["final_observation"]``, as every gymnax environment (and ``ArcEnvironment``) does.
"""

from __future__ import annotations

import enum
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, PRNGKeyArray

from jaxarc.wrappers.base import AbstractEnvWrapper


class AutoResetMode(enum.Enum):
    SAME_STEP = "same_step"
    NEXT_STEP = "next_step"


class AutoResetState(eqx.Module):
    """The wrapped state plus, for next-step resets, the pending first observation."""

    env_state: Any
    pending_obs: Any  # next-step mode: the next episode's first observation (None: same-step)
    pending: Bool[Array, ""]  # the previous step ended an episode; this step resets


def _where(condition: Bool[Array, ""], when_true: Any, when_false: Any) -> Any:
    return jax.tree.map(lambda a, b: jnp.where(condition, a, b), when_true, when_false)


class AutoResetWrapper(AbstractEnvWrapper):
    """Auto-reset with a chosen convention (see the module docstring)."""

    mode: AutoResetMode = eqx.field(static=True, default=AutoResetMode.NEXT_STEP)

    def __init__(self, env: Any, mode: AutoResetMode | str = AutoResetMode.NEXT_STEP):
        self.env = env
        self.mode = AutoResetMode(mode)

    def reset(self, key: PRNGKeyArray, params: Any = None) -> tuple[Any, AutoResetState]:
        obs, env_state = self.env.reset(key, params)
        stored = obs if self.mode == AutoResetMode.NEXT_STEP else None
        return obs, AutoResetState(env_state, stored, jnp.asarray(False))

    def step(self, key: PRNGKeyArray, state: AutoResetState, action: Any, params: Any = None):
        obs, env_state, reward, terminated, truncated, info = self.env.step(
            key, state.env_state, action, params
        )
        if "final_observation" not in info:
            raise ValueError(
                "AutoResetWrapper needs an environment whose step auto-resets and reports "
                "info['final_observation'] (gymnax convention)"
            )
        ended = terminated | truncated
        if self.mode == AutoResetMode.SAME_STEP:
            info = {**info, "autoreset": jnp.asarray(False)}
            state = AutoResetState(env_state, None, jnp.asarray(False))
            return obs, state, reward, terminated, truncated, info

        pending = state.pending
        # a pending step returns the stored first observation and leaves the new episode as is
        new_env_state = _where(pending, state.env_state, env_state)
        shown_obs = _where(
            pending, state.pending_obs, _where(ended, info["final_observation"], obs)
        )
        reward = jnp.where(pending, jnp.zeros_like(reward), reward)
        terminated = terminated & ~pending
        truncated = truncated & ~pending
        ended = ended & ~pending
        next_state = AutoResetState(
            env_state=new_env_state,
            pending_obs=_where(ended, obs, state.pending_obs),
            pending=ended,
        )
        info = {**info, "final_observation": shown_obs, "autoreset": pending}
        return shown_obs, next_state, reward, terminated, truncated, info
