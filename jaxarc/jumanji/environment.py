"""The Jumanji face: ``ArcJumanjiEnv``, a ``jumanji.Environment`` over the functional core.

``reset(key) -> (state, timestep)`` and ``step(state, action) -> (state, timestep)`` call
:func:`~jaxarc.envs.functional.reset_one` / :func:`~jaxarc.envs.functional.step_one` and
wrap their results in Jumanji's ``TimeStep``:

* ``step_type`` FIRST after reset, LAST when the episode ends (a submission or
  ``max_episode_steps`` reached), MID otherwise;
* ``discount`` 0 on a submission (termination), 1 otherwise, truncation included (Jumanji's
  convention: ``JumanjiToGymWrapper`` reads ``terminated = ~discount``);
* ``extras``: ``terminated``, ``truncated``, ``success`` and ``similarity``.

Actions are one int32 vector (Jumanji's wrappers and ``JumanjiToGymWrapper`` expect arrays,
see :mod:`jaxarc.jumanji.specs`); the state is :class:`~jaxarc.envs.types.ArcState`, whose
``key`` Jumanji's ``AutoResetWrapper`` splits to reset. The config and the task source are
static attributes; the step is branch-free, so ``jax.vmap`` and Jumanji's ``VmapWrapper``
apply as they are.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import jax.numpy as jnp
from jaxtyping import Array, Int32, PRNGKeyArray
from jumanji import specs
from jumanji.env import Environment
from jumanji.types import StepType, TimeStep

from jaxarc.data.source import AbstractTaskSource
from jaxarc.envs.config import JaxArcConfig, RewardParams
from jaxarc.envs.functional import as_task_source, check_canvas, reset_one, step_one
from jaxarc.envs.types import ArcObservation, ArcState, SourceRef
from jaxarc.jumanji.specs import action_from_vector, action_spec, observation_spec
from jaxarc.render import render_rgb


class ArcJumanjiEnv(Environment):
    """An ARC environment over one task source, with Jumanji's API.

    Build one from a registered name with :func:`jaxarc.jumanji.make`, or from a config and
    any task source (a ``TaskBank``, one ``Task``, a generator) directly.
    """

    def __init__(
        self,
        config: JaxArcConfig,
        task_source: AbstractTaskSource,
        reward: RewardParams | None = None,
        name: str = "ARC",
    ):
        self.config = config
        self.task_source = as_task_source(task_source)
        check_canvas(config, self.task_source)
        self.reward = RewardParams() if reward is None else reward
        self.name = name
        self._source_ref = SourceRef(self.task_source)
        super().__init__()  # builds (and checks) the four specs

    def __repr__(self) -> str:
        env, action = self.config.environment, self.config.action
        return (
            f"ArcJumanjiEnv({self.name}, format={action.selection_format}, "
            f"mode={env.episode_mode}, canvas={self.config.dataset.canvas_shape})"
        )

    def reset(self, key: PRNGKeyArray) -> tuple[ArcState, TimeStep[ArcObservation]]:
        minus_one = jnp.int32(-1)
        state, obs = reset_one(
            key, self.config, self._source_ref, minus_one, minus_one, self.reward
        )
        timestep = TimeStep(
            step_type=StepType.FIRST,
            reward=jnp.float32(0.0),
            discount=jnp.float32(1.0),
            observation=obs,
            extras=_extras(state),
        )
        return state, timestep

    def step(
        self, state: ArcState, action: Int32[Array, " n"]
    ) -> tuple[ArcState, TimeStep[ArcObservation]]:
        structured = action_from_vector(action, self.config)
        state, obs, reward, done, _ = step_one(state, structured, self.config)
        timestep = TimeStep(
            step_type=jnp.where(done, StepType.LAST, StepType.MID),
            reward=reward,
            discount=jnp.where(state.terminated, jnp.float32(0.0), jnp.float32(1.0)),
            observation=obs,
            extras=_extras(state),
        )
        return state, timestep

    @cached_property
    def observation_spec(self) -> specs.Spec[ArcObservation]:
        return observation_spec(self.config, self.task_source.max_demos)

    @cached_property
    def action_spec(self) -> specs.MultiDiscreteArray:
        return action_spec(self.config)

    @cached_property
    def reward_spec(self) -> specs.Array:
        return specs.Array(shape=(), dtype=jnp.float32, name="reward")

    @cached_property
    def discount_spec(self) -> specs.BoundedArray:
        return specs.BoundedArray(
            shape=(), dtype=jnp.float32, minimum=0.0, maximum=1.0, name="discount"
        )

    def render(self, state: ArcState) -> Any:
        """The state's working grid as an RGB image (``uint8``, 16 pixels a cell; host only)."""
        return render_rgb(state.grid, shape=state.grid_shape)


def _extras(state: ArcState) -> dict[str, Array]:
    return {
        "terminated": state.terminated,
        "truncated": state.truncated,
        "success": state.success,
        "similarity": state.similarity,
    }
