"""Observations as one flat ``float32`` vector, for MLP policies (and gymnax's wrappers)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from gymnax.environments import spaces
from jaxtyping import Array, Float32, PRNGKeyArray

from jaxarc.envs.arguments import check_names
from jaxarc.envs.types import OBSERVATION_FIELDS
from jaxarc.wrappers.base import AbstractEnvWrapper

DEFAULT_FIELDS: tuple[str, ...] = OBSERVATION_FIELDS  # every observation field


class FlattenObservationWrapper(AbstractEnvWrapper):
    """Concatenate the chosen observation ``fields`` (raveled, cast to ``float32``).

    The observation space becomes a ``Box`` whose per-element bounds come from the wrapped
    ``Dict`` space, so gymnax's own wrappers (e.g. its ``LogWrapper``) and purejaxrl-style
    code can consume it. ``info["final_observation"]`` is flattened the same way.
    """

    fields: tuple[str, ...] = eqx.field(static=True)

    def __init__(self, env: Any, fields: Sequence[str] = DEFAULT_FIELDS):
        self.env = env
        inner = env.observation_space(env.default_params)
        if not isinstance(inner, spaces.Dict):
            raise TypeError(
                f"FlattenObservationWrapper flattens a Dict observation space, got "
                f"{type(inner).__name__} (is the environment already flattened?)"
            )
        fields = check_names(fields, "fields", "FlattenObservationWrapper")
        known = tuple(inner.spaces)
        unknown = [f for f in fields if f not in known]
        if unknown:
            raise ValueError(f"unknown observation field(s) {unknown}; known: {known}")
        self.fields = fields

    def flatten(self, obs: Any) -> Float32[Array, " D"]:
        """One observation (no batch axis) as a flat vector."""
        parts = [jnp.ravel(getattr(obs, f)).astype(jnp.float32) for f in self.fields]
        return jnp.concatenate(parts)

    def reset(self, key: PRNGKeyArray, params: Any = None):
        obs, state = self.env.reset(key, params)
        return self.flatten(obs), state

    def step(self, key: PRNGKeyArray, state: Any, action: Any, params: Any = None):
        obs, state, reward, terminated, truncated, info = self.env.step(key, state, action, params)
        info = {**info}
        if "final_observation" in info:
            info["final_observation"] = self.flatten(info["final_observation"])
        return self.flatten(obs), state, reward, terminated, truncated, info

    def observation_space(self, params: Any = None) -> spaces.Box:
        inner = self.env.observation_space(params).spaces
        lows, highs = [], []
        for f in self.fields:
            box = inner[f]
            size = int(np.prod(box.shape))
            lows.append(np.broadcast_to(np.asarray(box.low, np.float32), box.shape).reshape(size))
            highs.append(np.broadcast_to(np.asarray(box.high, np.float32), box.shape).reshape(size))
        low, high = np.concatenate(lows), np.concatenate(highs)
        return spaces.Box(jnp.asarray(low), jnp.asarray(high), low.shape, jnp.float32)
