"""A Stable-Baselines3 ``VecEnv`` over the batched vector env (optional: needs SB3).

SB3's ``DummyVecEnv`` steps its environments one by one, each a jitted call and a device
transfer; :class:`ArcSB3VecEnv` steps all of them in one call of
:class:`~jaxarc.gym.vector.ArcGymnasiumVectorEnv` (same-step autoreset, as SB3 expects) and
speaks SB3's ``VecEnv`` API: ``dones``, a list of ``infos`` with ``terminal_observation``
and ``TimeLimit.truncated``. Spaces are flat by default (see :mod:`jaxarc.gym.flat`), so
SB3's and SBX's ``MlpPolicy`` take it as it is::

    from stable_baselines3.common.vec_env import VecMonitor
    from jaxarc.gym.sb3 import ArcSB3VecEnv

    venv = VecMonitor(ArcSB3VecEnv("gen/easy", num_envs=64, max_episode_steps=8))
    PPO("MlpPolicy", venv).learn(100_000)

Install with ``pip install 'jaxarc[sb3]'`` (SB3 pulls PyTorch).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

from jaxarc.envs.arguments import check_count
from jaxarc.gym.backend import require_bare_env
from jaxarc.gym.flat import FlatCodec, flat_options
from jaxarc.gym.vector import INFO_FIELDS, ArcGymnasiumVectorEnv


class ArcSB3VecEnv(VecEnv):
    """``num_envs`` ARC environments as one SB3 ``VecEnv``, stepped by one jitted call.

    Args:
        env_name, num_envs, jax_env, jax_params, **options: as for
            :class:`~jaxarc.gym.vector.ArcGymnasiumVectorEnv`.
        flat, action_format, fields: the flat spaces (default ``flat=True``: ``Discrete``
            actions over the allowed operations, a ``Box`` of ``("grid", "input_grid")``).

    ``infos[i]`` holds ``success``, ``similarity``, ``task_index``, ``pair`` and
    ``step_count`` (after the step; of the finished episode when ``dones[i]``).
    ``seed(s)`` seeds the next ``reset`` (the batch is split from ``s``).
    """

    def __init__(
        self,
        env_name: str = "ARC-AGI-1",
        num_envs: int = 8,
        *,
        flat: bool = True,
        action_format: str | None = None,
        fields: Sequence[str] | None = None,
        **kwargs: Any,
    ):
        num_envs = check_count(num_envs, "num_envs", owner="ArcSB3VecEnv")
        action_format, fields = flat_options(flat, action_format, fields)
        if kwargs.get("jax_env") is not None:
            require_bare_env(kwargs["jax_env"], "ArcSB3VecEnv")
        self.venv = ArcGymnasiumVectorEnv(
            env_name, num_envs, autoreset_mode=AutoresetMode.SAME_STEP, **kwargs
        )
        self.codec = FlatCodec.create(self.venv.config, action_format, fields)
        super().__init__(
            num_envs,
            self.codec.observation_space(self.venv.single_observation_space),
            self.codec.action_space(self.venv.single_action_space),
        )
        self._actions = None

    def reset(self):
        seed = self._seeds[0]
        options = self._options[0] or None
        obs, info = self.venv.reset(seed=seed, options=options)
        self.reset_infos = [_env_info(info, i) for i in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return self.codec.observation(obs, self.num_envs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        actions = self.codec.to_structured(self._actions, self.num_envs)
        obs, reward, terminated, truncated, info = self.venv.step(actions)
        dones = np.logical_or(terminated, truncated)
        infos = []
        for i in range(self.num_envs):
            entry = _env_info(info, i)
            entry["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            if dones[i]:
                entry |= info["final_info"][i]
                entry["terminal_observation"] = self.codec.observation(info["final_obs"][i])
            infos.append(entry)
        return (
            self.codec.observation(obs, self.num_envs),
            np.array(reward, np.float32),  # a copy: SB3 writes into it
            dones,
            infos,
        )

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.venv, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(
        self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs
    ) -> list[Any]:
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]


def _env_info(info: dict, i: int) -> dict[str, Any]:
    return {name: np.asarray(info[name])[i].item() for name in INFO_FIELDS if name in info}
