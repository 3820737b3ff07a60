"""Hindsight tasks for any agent: an episode that ends may be followed by its own
hindsight task.

The hindsight task of an episode (:mod:`jaxarc.envs.hindsight`) keeps the episode's input and
demonstration inputs and replaces the demonstration outputs by what the episode's actions
make of those inputs, and the target by the grid the episode reached: the episode's actions
solve it. :class:`HindsightTaskWrapper` turns a share of the episodes an agent plays into
such tasks, so that an agent whose own episodes almost never succeed still meets tasks it
can solve, told by the demonstrations what to do: the same observation fields, the same
actions, the environment's own reward. It changes nothing else, so any agent uses it
unchanged (a gymnax loop, purejaxrl, rejax; under the flat wrappers of
:func:`~jaxarc.wrappers.make_flat` with ``hindsight=``).

Its auto-reset is gymnax's generic one (a reset computed for every environment at every
step, selected by ``done``), slower than the face's own fast auto-reset: a training aid,
not the evaluation environment.
"""

from __future__ import annotations

import math
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int8, Int32, PRNGKeyArray

from jaxarc.envs.episode import EpisodePair, similarity_and_match
from jaxarc.envs.functional import episode_context, episode_start, observe
from jaxarc.envs.hindsight import hindsight_outputs
from jaxarc.envs.structured_actions import action_class
from jaxarc.envs.types import ArcObservation, ArcState
from jaxarc.gymnax.environment import ArcEnvironment
from jaxarc.wrappers.base import AbstractEnvWrapper


def check_probability(value: Any, name: str, owner: str) -> float:
    """``value`` as a Python float in ``[0, 1]``: a real scalar (Python, NumPy or a concrete
    JAX 0-d array); a bool, a string, a list, an array with axes or a traced value is a
    ``TypeError``, a number outside ``[0, 1]`` (or NaN) a ``ValueError``."""
    kind_error = TypeError(f"{name} of {owner} must be a number in [0, 1], got {value!r}")
    if isinstance(value, bool | str | bytes | jax.core.Tracer):
        raise kind_error
    if not isinstance(value, int | float):
        if not isinstance(value, np.generic | np.ndarray | jax.Array):
            raise kind_error
        array = np.asarray(value)
        if array.shape != () or array.dtype.kind not in "iuf":
            raise kind_error
        value = array.item()
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ValueError(f"{name} of {owner} must be in [0, 1], got {value!r}")
    return float(value)


class HindsightState(eqx.Module):
    """The wrapped environment's state and the demonstration outputs its episode shows."""

    env_state: ArcState
    demo_outputs: Int8[Array, "P H W"]  # the task's, or the hindsight task's
    demo_output_shapes: Int32[Array, "P 2"]
    hindsight: Bool[Array, ""]  # the episode plays a hindsight task


class HindsightTaskWrapper(AbstractEnvWrapper):
    """With probability ``probability``, an episode that changed the grid is followed by its
    hindsight task (the same input and demonstration inputs; outputs and target from the
    episode's own actions); otherwise, and after a hindsight episode, by a fresh task.

    Wraps an :class:`~jaxarc.gymnax.environment.ArcEnvironment` directly (flat wrappers go
    on top). ``info["hindsight"]`` says whether the episode the returned state plays is a
    hindsight task; rewards, ``success`` and ``similarity`` are measured against the
    episode's own target, the hindsight one included.
    """

    probability: float = eqx.field(static=True)

    def __init__(self, env: Any, probability: float = 0.5):
        if not isinstance(env, ArcEnvironment):
            raise TypeError(
                "HindsightTaskWrapper wraps a jaxarc environment (jaxarc.make(...)[0]) "
                f"directly, got {type(env).__name__}; put other wrappers on top of it"
            )
        if env.config.environment.episode_context != "every_step":
            raise ValueError(
                "HindsightTaskWrapper shows the hindsight demonstrations in every "
                "observation: it needs episode_context='every_step'"
            )
        self.env = env
        self.probability = check_probability(probability, "probability", "HindsightTaskWrapper")

    def reset(self, key: PRNGKeyArray, params: Any = None) -> tuple[ArcObservation, Any]:
        obs, state = self.env.reset(key, params)
        return obs, HindsightState(
            state, obs.demo_outputs, obs.demo_output_shapes, jnp.asarray(False)
        )

    def step(self, key: PRNGKeyArray, state: HindsightState, action: Any, params: Any = None):
        env = self.env
        params = env.default_params if params is None else params
        step_key, reset_key, choice_key = jax.random.split(key, 3)
        obs_st, ended, reward, terminated, info = env.step_env(
            step_key, state.env_state, action, params
        )
        truncated = env.is_truncated(ended, params)
        done = terminated | truncated
        final_obs = _shown(obs_st, state.demo_outputs, state.demo_output_shapes)

        fresh_obs, fresh = env.reset_env(reset_key, params)
        replayed, outputs, output_shapes = self._hindsight_start(ended)
        _, unchanged = similarity_and_match(
            ended.grid, ended.grid_shape, ended.pair.input_grid, ended.pair.input_shape
        )
        chosen = jax.random.uniform(choice_key, dtype=jnp.float32) < self.probability
        use_hindsight = chosen & ~unchanged & ~state.hindsight

        def pick(hindsight_value, fresh_value, current_value):
            start = jnp.where(use_hindsight, hindsight_value, fresh_value)
            return jnp.where(done, start, current_value)

        next_state = jax.tree.map(pick, replayed, fresh, ended)
        demo_outputs = pick(outputs, fresh_obs.demo_outputs, state.demo_outputs)
        demo_shapes = pick(output_shapes, fresh_obs.demo_output_shapes, state.demo_output_shapes)
        hindsight = jnp.where(done, use_hindsight, state.hindsight)
        obs = _shown(observe(next_state, env.config, env.task_source), demo_outputs, demo_shapes)
        info = {
            **info,
            "terminated": terminated,
            "truncated": truncated,
            "final_observation": final_obs,
            "hindsight": hindsight,
        }
        wrapped = HindsightState(next_state, demo_outputs, demo_shapes, hindsight)
        return obs, wrapped, reward, terminated, truncated, info

    def _hindsight_start(self, ended: ArcState):
        """The first state of ``ended``'s hindsight episode and its demonstration outputs."""
        env = self.env
        config = env.config
        canvas = config.dataset.canvas_shape
        actions = action_class(config.action.selection_format).from_history(ended.history, canvas)
        taken = jnp.arange(ended.history.shape[0], dtype=jnp.int32) < ended.history_length
        context = episode_context(ended, config, env.task_source)
        outputs, output_shapes = hindsight_outputs(
            context.demo_inputs,
            context.demo_input_shapes,
            context.demo_mask,
            actions,
            taken,
            config,
        )
        pair = EpisodePair(
            ended.pair.input_grid,
            ended.pair.input_shape,
            ended.grid,  # the grid the episode reached is the hindsight target
            ended.grid_shape,
            jnp.asarray(True),
        )
        similarity, _ = similarity_and_match(
            pair.input_grid, pair.input_shape, pair.target_grid, pair.target_shape
        )
        start = episode_start(config)
        replayed = eqx.tree_at(
            lambda s: (s.grid, s.grid_shape, s.pair, s.similarity, *_start_fields(s, start)),
            ended,
            (pair.input_grid, pair.input_shape, pair, similarity, *start.values()),
        )
        return replayed, outputs, output_shapes


def _start_fields(state: ArcState, start: dict[str, Array]) -> tuple:
    return tuple(getattr(state, name) for name in start)


def _shown(
    obs: ArcObservation, outputs: Int8[Array, "P H W"], shapes: Int32[Array, "P 2"]
) -> ArcObservation:
    """``obs`` showing the episode's demonstration outputs."""
    return eqx.tree_at(lambda o: (o.demo_outputs, o.demo_output_shapes), obs, (outputs, shapes))
