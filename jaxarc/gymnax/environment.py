"""A gymnax-compatible ARC environment class over the functional core.

``ArcEnvironment`` subclasses ``gymnax.environments.environment.Environment``: ``reset``
and ``step`` (gymnax 1.0's six-tuple with auto-reset and ``info["final_observation"]``)
come from gymnax and call :func:`~jaxarc.envs.functional` underneath. The task source and
config are static attributes of the environment; ``ArcEnvParams`` (reward weights) is a
traced pytree passed into every call, so it can be vmapped.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from gymnax.environments import environment, spaces
from jaxtyping import Array, Bool, PRNGKeyArray

from jaxarc.data.source import AbstractTaskSource
from jaxarc.envs.config import JaxArcConfig, RewardParams
from jaxarc.envs.functional import as_task_source, check_canvas, reset_one_jit, step_one
from jaxarc.envs.structured_actions import AbstractAction
from jaxarc.envs.types import ArcObservation, ArcState, SourceRef, StepInfo
from jaxarc.gymnax.spaces import StructuredActionSpace, observation_space, structured_action


class ArcEnvParams(eqx.Module):
    """Traced environment parameters (vmappable): the reward weights."""

    reward: RewardParams = eqx.field(default_factory=RewardParams)
    max_steps_in_episode: int = eqx.field(static=True, default=100)


class ArcEnvironment(environment.Environment):
    """An ARC environment over one task source (a bank or a generator)."""

    def __init__(
        self,
        config: JaxArcConfig,
        task_source: AbstractTaskSource,
        name: str = "ARC",
        reward: RewardParams | None = None,
    ):
        super().__init__()
        self.config = config
        self.default_reward = RewardParams() if reward is None else reward
        self.task_source = as_task_source(task_source)
        check_canvas(config, self.task_source)
        self._source_ref = SourceRef(self.task_source)
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def default_params(self) -> ArcEnvParams:
        return ArcEnvParams(
            reward=self.default_reward,
            max_steps_in_episode=self.config.environment.max_episode_steps,
        )

    @property
    def num_actions(self) -> int:
        """The number of operations (each action pairs one with a selection)."""
        return int(sum(self.config.action.allowed_mask))

    def reset_env(self, key: PRNGKeyArray, params: ArcEnvParams) -> tuple[ArcObservation, ArcState]:
        minus_one = jnp.int32(-1)
        state, obs = reset_one_jit(
            key, self.config, self._source_ref, minus_one, minus_one, params.reward
        )
        return obs, state

    def step_env(
        self, key: PRNGKeyArray, state: ArcState, action: AbstractAction, params: ArcEnvParams
    ) -> tuple[ArcObservation, ArcState, Array, Bool[Array, ""], StepInfo]:
        state = eqx.tree_at(lambda s: s.reward_params, state, params.reward)
        action = structured_action(action, self.config.action.selection_format)
        state, obs, reward, _, info = step_one(state, action, self.config)
        return obs, state, reward, state.terminated, info

    def is_truncated(self, state: ArcState, params: ArcEnvParams) -> Bool[Array, ""]:
        return state.truncated

    def is_terminal(self, state: ArcState, params: ArcEnvParams) -> Bool[Array, ""]:
        return state.terminated | state.truncated

    def action_space(self, params: ArcEnvParams | None = None) -> StructuredActionSpace:
        return StructuredActionSpace(self.config)

    def observation_space(self, params: ArcEnvParams | None = None) -> spaces.Dict:
        return observation_space(self.config, self.task_source.max_demos)

    def __repr__(self) -> str:
        env, action = self.config.environment, self.config.action
        return (
            f"ArcEnvironment({self._name}, format={action.selection_format}, "
            f"mode={env.episode_mode}, canvas={self.config.dataset.canvas_shape})"
        )


# any use of the gymnax face makes gymnax.make know every name (gymnax is imported already)
import jaxarc.gymnax.registration  # noqa: E402, F401
