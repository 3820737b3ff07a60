"""A gymnax-compatible ARC environment class over the functional core.

``ArcEnvironment`` subclasses ``gymnax.environments.environment.Environment`` and keeps its
API: ``reset`` and ``step`` (gymnax 1.0's six-tuple with auto-reset and
``info["final_observation"]``). The task source and config are static attributes of the
environment; ``ArcEnvParams`` (reward weights, and for generated sources a task pool) is a
traced pytree passed into every call, so it can be vmapped.

Fast auto-reset. gymnax's generic ``step`` computes ``reset_env`` (state *and*
observation) for every environment at every step and selects both. ``ArcEnvironment.step``
gives the same results (a test compares it with gymnax's generic step) for less: it
computes the reset *state* only (no observation), and under ``vmap`` only the fields a new
episode draws (key, task, pair, grid, similarity) and the start fields the step updates in
place (clipboard, action history: :data:`UPDATED_IN_PLACE`), and only for the environments
that finished (:func:`~jaxarc.grid.lanes.where_flagged`: gathered 128 at a time and
scattered back in place), gymnax's split of the step's key into a step key and a reset key
included (the ARC step draws nothing). The other fields every episode starts with (empty
selection, zero counters: :func:`~jaxarc.envs.functional.episode_start`) are selected by
``done``, elementwise. Then it builds one observation from the resulting state.

Generated sources (``gen/...``). A reset there is a whole task generation (about a
millisecond of CPU per task), and under ``vmap`` an auto-reset cannot be skipped for the
environments that did not finish: every step would generate a task per environment. The
parameters therefore carry a **task pool** (``params.task_pool``: ``N`` tasks made at
``make`` time, ``task_pool=N``, default :data:`DEFAULT_TASK_POOL`); ``reset`` chooses one of
its tasks uniformly (an index, as for a bank), and the state keeps that task as it keeps a
generated one. The params are the caller's (a training loop passes the same ones to every
step), so the pool stays fixed until the caller renews it: ``env.refresh_task_pool(key,
params)`` draws a new pool, ``refresh_task_pool(key, params, count=k)`` renews ``k`` random
slots (cheap enough for every training update), without recompiling; ``task_pool=0``
generates a task per reset (exact but slow). The repr says which. Memory: about 730 bytes
per task for ``gen/easy`` (8x8, 4+1 pairs), 0.75 MB for 1024 tasks. See
docs/environment.md for why this was chosen over optimistic resets, and for the Gymnasium
vector env, which renews its pool by itself.
"""

from __future__ import annotations

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
from gymnax.environments import environment, spaces
from jaxtyping import Array, Bool, PRNGKeyArray

from jaxarc.data.bank import TaskBank
from jaxarc.data.source import AbstractTaskSource, Task
from jaxarc.envs.arguments import check_count
from jaxarc.envs.config import JaxArcConfig, RewardParams
from jaxarc.envs.functional import (
    as_task_source,
    check_canvas,
    episode_context,
    episode_start,
    observe,
    reset_state,
    step_one,
)
from jaxarc.envs.keys import split_key
from jaxarc.envs.structured_actions import AbstractAction
from jaxarc.envs.task_pool import generate_task_pool, refresh_random_slots
from jaxarc.envs.types import ArcObservation, ArcState, EpisodeContext, SourceRef, StepInfo
from jaxarc.grid.lanes import where_flagged
from jaxarc.gymnax.spaces import StructuredActionSpace, observation_space, structured_action

DEFAULT_TASK_POOL = 1024
"""Tasks in a generated source's pool unless ``task_pool=`` says otherwise."""


class ArcEnvParams(eqx.Module):
    """Traced environment parameters (vmappable): reward weights and the task pool.

    ``task_pool`` is ``None`` for banks (and with ``task_pool=0``); for generated sources
    it is a :class:`~jaxarc.data.source.Task` whose leaves have a leading axis ``N``.
    """

    reward: RewardParams = eqx.field(default_factory=RewardParams)
    # gymnax's name for the episode length, read by gymnax-based tools (rejax's evaluation).
    # It mirrors the environment's ``max_episode_steps`` (set with ``jaxarc.make(...,
    # max_episode_steps=N)``); params that disagree with the environment are refused.
    max_steps_in_episode: int = eqx.field(static=True, default=100)
    task_pool: Task | None = None


def _fields(state: ArcState, names: tuple[str, ...]) -> tuple:
    return tuple(getattr(state, name) for name in names)


# Start fields that a step updates in place (one clipboard cell, one history row), so the
# core step never rewrites them whole. Selected by ``done`` they would cost a read and a
# write of every environment's plane at every step (in the optimized HLO, a fusion of the
# one-cell update and the select over ``[B, H, W]``: ~1 of the face's ~8 CPU-ms per step at
# B=4096). They are reset with the drawn fields instead, in the finished lanes only.
UPDATED_IN_PLACE = ("clipboard", "clipboard_mask", "history")

# Start fields that only record the episode: no step reads them (the action history is for
# rendering and replay). A program that never reads them lets XLA drop their updates, the
# step's one-row write included, but only when their reset runs in a chunk loop of its own:
# XLA removes a dead value carried by a loop only if nothing else the loop computes depends
# on it (docs/design-notes.md).
RECORD_ONLY = ("history",)


def _reset_names(start: dict) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(in_lanes, selected)``: the state fields an auto-reset computes in the finished lanes
    only (what a new episode draws: key, task, pair, grid...; and :data:`UPDATED_IN_PLACE`),
    and those it selects by ``done`` for the whole batch (the other start fields, which the
    step rewrites whole or which are scalars, and the reward weights)."""
    selected = (*(name for name in start if name not in UPDATED_IN_PLACE), "reward_params")
    skipped = (*selected, "source_ref")  # (static)
    in_lanes = tuple(name for name in ArcState.__dataclass_fields__ if name not in skipped)
    return in_lanes, selected


class ArcEnvironment(environment.Environment):
    """An ARC environment over one task source (a bank or a generator).

    ``task_pool_size``: tasks in the pool of a generated source (``None``: the default
    :data:`DEFAULT_TASK_POOL`, ``0``: no pool, a generation per reset); ignored for banks.
    """

    def __init__(
        self,
        config: JaxArcConfig,
        task_source: AbstractTaskSource,
        name: str = "ARC",
        reward: RewardParams | None = None,
        task_pool_size: int | None = None,
    ):
        super().__init__()
        self.config = config
        self.default_reward = RewardParams() if reward is None else reward
        self.task_source = as_task_source(task_source)
        check_canvas(config, self.task_source)
        self._source_ref = SourceRef(self.task_source)
        self._name = name
        if task_pool_size is not None:
            task_pool_size = check_count(task_pool_size, "task_pool", minimum=0, owner=repr(name))
        if isinstance(self.task_source, TaskBank):
            task_pool_size = 0
        elif task_pool_size is None:
            task_pool_size = DEFAULT_TASK_POOL
        self.task_pool_size = task_pool_size
        self._default_params: ArcEnvParams | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def default_params(self) -> ArcEnvParams:
        if self._default_params is None:  # (the pool is generated once per environment)
            params = ArcEnvParams(
                reward=self.default_reward,
                max_steps_in_episode=self.config.environment.max_episode_steps,
            )
            with jax.ensure_compile_time_eval():  # concrete even when first read under jit
                self._default_params = self.refresh_task_pool(jax.random.key(0), params)
        return self._default_params

    def refresh_task_pool(
        self, key: PRNGKeyArray, params: ArcEnvParams, count: int | None = None
    ) -> ArcEnvParams:
        """``params`` with new generated tasks in the pool (same shapes, so compiled steps
        are reused): all ``task_pool_size`` of them, or ``count`` slots chosen at random
        (``count`` tasks' generation: cheap enough to call at every training update);
        unchanged when the environment has no pool. Resets choose from the pool of the
        params they are given: a loop that never calls this trains on the same tasks."""
        if self.task_pool_size == 0:
            return params
        if count is None:
            keys = jax.random.split(key, self.task_pool_size)
            pool = generate_task_pool(self.task_source, keys)
        else:
            count = check_count(count, "count", owner="refresh_task_pool")
            pool = refresh_random_slots(params.task_pool, self.task_source, key, count)
        return eqx.tree_at(lambda p: p.task_pool, params, pool, is_leaf=lambda x: x is None)

    @property
    def num_actions(self) -> int:
        """The number of operations (each action pairs one with a selection)."""
        return int(sum(self.config.action.allowed_mask))

    def _check_params(self, params: ArcEnvParams) -> None:
        """Static check: ``params.max_steps_in_episode`` mirrors ``max_episode_steps``."""
        steps = self.config.environment.max_episode_steps
        if params.max_steps_in_episode != steps:
            raise ValueError(
                f"params.max_steps_in_episode={params.max_steps_in_episode} but this "
                f"environment's episodes are max_episode_steps={steps} long; the episode "
                f"length is part of the environment: jaxarc.make(name, max_episode_steps=...)"
            )

    def _fresh_state(
        self,
        key: PRNGKeyArray,
        reward: RewardParams,
        task_source: AbstractTaskSource,
        task_pool: Task | None,
    ) -> ArcState:
        """A new episode's state (no observation); every array it reads is an argument, so
        :func:`~jaxarc.grid.lanes.where_flagged` can run it on the finished lanes only."""
        minus_one = jnp.int32(-1)
        state, _, _ = reset_state(
            key, self.config, self._source_ref, minus_one, minus_one, reward, task_source, task_pool
        )
        return state

    def _reset_fields(
        self,
        names: tuple[str, ...],
        key: PRNGKeyArray,
        reward: RewardParams,
        task_source: AbstractTaskSource,
        task_pool: Task | None,
    ) -> tuple:
        """The fields ``names`` of the :meth:`_fresh_state` an auto-reset with the step's
        ``key`` starts (gymnax's generic step resets with the second half of
        ``jax.random.split(key)``)."""
        _, key_reset = split_key(key)
        return _fields(self._fresh_state(key_reset, reward, task_source, task_pool), names)

    def reset_env(self, key: PRNGKeyArray, params: ArcEnvParams) -> tuple[ArcObservation, ArcState]:
        self._check_params(params)
        state = self._fresh_state(key, params.reward, self.task_source, params.task_pool)
        return observe(state, self.config, self.task_source), state

    def step_env(
        self, key: PRNGKeyArray, state: ArcState, action: AbstractAction, params: ArcEnvParams
    ) -> tuple[ArcObservation, ArcState, Array, Bool[Array, ""], StepInfo]:
        self._check_params(params)
        state = eqx.tree_at(lambda s: s.reward_params, state, params.reward)
        action = structured_action(action, self.config.action.selection_format)
        state, obs, reward, _, info = step_one(state, action, self.config, self.task_source)
        return obs, state, reward, state.terminated, info

    def step(
        self,
        key: PRNGKeyArray,
        state: ArcState,
        action: AbstractAction | dict,
        params: ArcEnvParams | None = None,
    ) -> tuple[ArcObservation, ArcState, Array, Bool[Array, ""], Bool[Array, ""], StepInfo]:
        """gymnax's step with auto-reset: the same outputs as the generic
        ``Environment.step`` (same key split, same reset), without building and selecting
        a second observation.

        ``action`` is a structured action or a dict of its parts, checked before the
        compiled step by the rule for integers and masks (docs/environment.md): values
        given from Python are checked there, traced ones by dtype."""
        action = structured_action(action, self.config.action.selection_format)
        return self._step(key, state, action, params)

    @functools.partial(jax.jit, static_argnames=("self",))
    def _step(
        self,
        key: PRNGKeyArray,
        state: ArcState,
        action: AbstractAction,
        params: ArcEnvParams | None,
    ) -> tuple[ArcObservation, ArcState, Array, Bool[Array, ""], Bool[Array, ""], StepInfo]:
        if params is None:
            params = self.default_params
        # gymnax splits ``key`` into the step's key and the reset's. The ARC step draws
        # nothing, so only the finished environments need the split, for their reset key:
        # it is done in their lanes (:meth:`_reset_fields`), not for the whole batch (on
        # CPU ``jax.random.split`` over B=4096 keys is a ~0.15 ms XLA loop), and
        # ``step_env`` gets ``key``.
        obs_st, state_st, reward, terminated, info = self.step_env(key, state, action, params)
        truncated = self.is_truncated(state_st, params)
        done = terminated | truncated
        # A new episode's drawn fields (key, task, pair, grid, similarity) and the start
        # fields the step updates in place (clipboard, history) are computed only for the
        # environments that finished (under vmap: gathered 128 at a time and scattered
        # back; the history in a loop of its own, :data:`RECORD_ONLY`); the other start
        # fields (empty selection, zero counters) and the reward
        # weights are selected by ``done`` (elementwise over the batch, which XLA fuses with
        # the step's own writes of them: cheaper than a scatter per field and chunk).
        start = episode_start(self.config)
        in_lanes, selected = _reset_names(start)
        drawn = tuple(name for name in in_lanes if name not in RECORD_ONLY)
        reset_drawn = where_flagged(
            done,
            functools.partial(self._reset_fields, drawn),
            _fields(state_st, drawn),
            key,
            params.reward,
            self.task_source,
            params.task_pool,
        )
        # (the record's start values are passed in, not closed over: see where_flagged)
        reset_record = where_flagged(
            done,
            lambda *fresh: fresh,
            _fields(state_st, RECORD_ONLY),
            *(start[name] for name in RECORD_ONLY),
        )
        in_lanes, reset_in_lanes = (*drawn, *RECORD_ONLY), (*reset_drawn, *reset_record)
        fresh = {**start, "reward_params": params.reward}
        reset_selected = jax.tree.map(
            lambda new, old: jnp.where(done, new, old),
            tuple(fresh[name] for name in selected),
            _fields(state_st, selected),
        )
        state = eqx.tree_at(
            lambda s: _fields(s, (*in_lanes, *selected)),
            state_st,
            (*reset_in_lanes, *reset_selected),
        )
        obs = observe(state, self.config, self.task_source)
        info = {
            **info,
            "terminated": terminated,
            "truncated": truncated,
            "final_observation": obs_st,
        }
        return obs, state, reward, terminated, truncated, info

    def episode_context(
        self, state: ArcState, params: ArcEnvParams | None = None
    ) -> EpisodeContext:
        """The episode's constants (input grid, demonstration pairs) of one state; with
        ``episode_context="at_reset"`` they are not in the observations."""
        return episode_context(state, self.config, self.task_source)

    def is_truncated(self, state: ArcState, params: ArcEnvParams) -> Bool[Array, ""]:
        return state.truncated

    def is_terminal(self, state: ArcState, params: ArcEnvParams) -> Bool[Array, ""]:
        return state.terminated | state.truncated

    def action_space(self, params: ArcEnvParams | None = None) -> StructuredActionSpace:
        """The structured actions of the config's ``selection_format``."""
        return StructuredActionSpace(self.config)

    def observation_space(self, params: ArcEnvParams | None = None) -> spaces.Dict:
        """The observation dict. On a generated source the observed tasks are those of the
        task pool in ``params`` (``task_pool_size`` tasks, fixed until
        ``params = env.refresh_task_pool(key, params)``; ``repr(env)`` says so)."""
        return observation_space(self.config, self.task_source.max_demos)

    def __repr__(self) -> str:
        env, action = self.config.environment, self.config.action
        return (
            f"ArcEnvironment({self._name}, format={action.selection_format}, "
            f"mode={env.episode_mode}, canvas={self.config.dataset.canvas_shape}"
            f"{self.task_pool_text()})"
        )

    def task_pool_text(self) -> str:
        """What resets draw from, for a generated source (``""`` for a bank)."""
        if isinstance(self.task_source, TaskBank):
            return ""
        if self.task_pool_size == 0:
            return ", tasks: a new one generated at every reset (task_pool=0)"
        return (
            f", tasks: a fixed pool of {self.task_pool_size} generated tasks, renewed only by "
            "params = env.refresh_task_pool(key, params)"
        )
