"""The five-value step of gymnax 0.x, for training code written against it (purejaxrl, rejax).

gymnax 1.0 (which jaxarc needs) returns ``obs, state, reward, terminated, truncated, info``;
purejaxrl's ``wrappers.py`` and rejax (``evaluate.py``, every algorithm's rollout) unpack
``obs, state, reward, done, info`` and stop with ``ValueError: too many values to unpack``.
:class:`GymnaxV0Wrapper` is the outermost wrapper that gives them that tuple.

It is an equinox module like every jaxarc wrapper: hashable (usable as a static argument),
and ``copy.deepcopy`` safe (rejax deep-copies its config, env included), because attribute
forwarding never recurses on a half-built copy.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, PRNGKeyArray

from jaxarc.envs.arguments import check_flag
from jaxarc.wrappers.base import AbstractEnvWrapper


class GymnaxV0Wrapper(AbstractEnvWrapper):
    """``step`` returns ``obs, state, reward, done, info`` (gymnax 0.x), ``done = terminated |
    truncated``.

    ``info`` keeps the wrapped environment's entries and adds ``terminated``, ``truncated``
    and ``discount`` (``1 - terminated``: a truncated episode may still be bootstrapped).
    ``info["final_observation"]`` (the terminal observation of an auto-reset episode) is
    kept unless ``keep_final_observation=False``, which makes ``info`` as small as gymnax
    0.x's (trajectory buffers that store ``info`` then hold no second observation).
    Works over any gymnax 1.0 environment, not only jaxarc's. Put it last: wrappers written
    for the six-value step (jaxarc's, gymnax 1.0's) go below it, purejaxrl's above it.
    """

    keep_final_observation: bool = eqx.field(static=True, default=True)

    def __init__(self, env: Any, keep_final_observation: bool = True):
        self.env = env
        self.keep_final_observation = check_flag(
            keep_final_observation, "keep_final_observation", "GymnaxV0Wrapper"
        )

    def step(
        self, key: PRNGKeyArray, state: Any, action: Any, params: Any = None
    ) -> tuple[Any, Any, Float32[Array, ""], Bool[Array, ""], dict[str, Any]]:
        obs, state, reward, terminated, truncated, info = self.env.step(key, state, action, params)
        info = dict(info)
        if not self.keep_final_observation:
            info.pop("final_observation", None)
        info["terminated"] = terminated
        info["truncated"] = truncated
        info["discount"] = 1.0 - jnp.asarray(terminated, jnp.float32)
        return obs, state, reward, terminated | truncated, info
