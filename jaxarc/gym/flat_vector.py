"""The vector env with flat spaces: ``gymnasium.make_vec(id, num_envs=N, flat=True)``.

gymnax's own ``GymnaxToVectorGymWrapper`` cannot take jaxarc's flat gymnax env (it assigns
``env.reset``/``env.step`` on a copy, and jaxarc's wrappers are frozen equinox modules):
this is the tested alternative. It is :class:`~jaxarc.gym.vector.ArcGymnasiumVectorEnv`
(one jitted call per step for all environments, its autoreset modes and reset options)
with the spaces of :class:`~jaxarc.gym.flat.FlatCodec` at its boundary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector.utils import batch_space

from jaxarc.envs.arguments import check_flag
from jaxarc.gym.flat import FlatCodec, flat_options
from jaxarc.gym.vector import ArcGymnasiumVectorEnv


class FlatArcGymnasiumVectorEnv(ArcGymnasiumVectorEnv):
    """:class:`ArcGymnasiumVectorEnv` with flat actions and/or observations.

    ``action_format`` (``"discrete"``, ``"multi_discrete"``, ``"dict"``) and ``fields``
    as for :class:`~jaxarc.gym.env.ArcGymnasiumEnv`; ``flat=True`` picks ``"discrete"`` and
    ``("grid", "input_grid")``. ``info["final_obs"]`` (same-step autoreset) is flat too.
    """

    def __init__(
        self,
        env_name: str = "ARC-AGI-1",
        num_envs: int = 1,
        render_mode: str | None = None,
        *,
        flat: bool = True,
        action_format: str | None = None,
        fields: Sequence[str] | None = None,
        **kwargs: Any,
    ):
        action_format, fields = flat_options(flat, action_format, fields)
        super().__init__(env_name, num_envs, render_mode, **kwargs)
        self.codec = FlatCodec.create(self.config, action_format, fields)
        self.single_observation_space = self.codec.observation_space(self.single_observation_space)
        self.single_action_space = self.codec.action_space(self.single_action_space)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def reset(self, *, seed=None, options=None):
        obs, info = super().reset(seed=seed, options=options)
        return self.codec.observation(obs, self.num_envs), info

    def step(self, actions):
        structured = self.codec.to_structured(actions, self.num_envs)
        obs, reward, terminated, truncated, info = super().step(structured)
        if "final_obs" in info:
            info["final_obs"] = np.array(
                [None if o is None else self.codec.observation(o) for o in info["final_obs"]],
                dtype=object,
            )
        return self.codec.observation(obs, self.num_envs), reward, terminated, truncated, info


def make_gymnasium_vector_env(
    env_name: str = "ARC-AGI-1",
    num_envs: int = 1,
    render_mode: str | None = None,
    *,
    flat: bool = False,
    action_format: str | None = None,
    fields: Sequence[str] | None = None,
    **kwargs: Any,
) -> ArcGymnasiumVectorEnv:
    """The vector entry point of the registered ids: flat spaces when asked for."""
    flat = check_flag(flat, "flat")
    if not flat and action_format in (None, "dict") and fields is None:
        return ArcGymnasiumVectorEnv(env_name, num_envs, render_mode, **kwargs)
    return FlatArcGymnasiumVectorEnv(
        env_name,
        num_envs,
        render_mode,
        flat=flat,
        action_format=action_format,
        fields=fields,
        **kwargs,
    )
