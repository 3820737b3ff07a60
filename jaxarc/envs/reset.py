"""Resetting environments: a task and a pair for a new episode, as one state.

:func:`reset_one` is the single-environment reset (traceable, for ``vmap`` at the edges);
:func:`arc_reset` and :func:`batch_reset` are its compiled single and batched forms. Task
and pair indices are checked on the host before compiling (:func:`check_canvas`, the
indices' ranges); inside compiled code a negative index samples uniformly.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Int32, PRNGKeyArray, UInt32

from jaxarc.data.bank import TaskBank
from jaxarc.data.source import AbstractTaskSource, Task
from jaxarc.envs.config import JaxArcConfig, RewardParams
from jaxarc.envs.episode import (
    EpisodePair,
    grid_similarity,
    num_episode_pairs,
    source_episode_pair,
)
from jaxarc.envs.integers import check_integers
from jaxarc.envs.keys import split_key
from jaxarc.envs.observation import observation_of
from jaxarc.envs.structured_actions import action_class
from jaxarc.envs.types import (
    ArcObservation,
    ArcState,
    SourceRef,
)

_SINGLE_TASK_BANKS: dict[int, tuple[Task, TaskBank]] = {}


def as_task_source(task_data: Task | AbstractTaskSource) -> AbstractTaskSource:
    """A task source for ``task_data``: banks and generators as they are, a Task wrapped.

    A single :class:`Task` becomes a one-task bank; the wrapper is remembered per Task
    object so that repeated resets with the same Task reuse one compiled function.
    """
    if isinstance(task_data, AbstractTaskSource):
        source = task_data
    elif isinstance(task_data, Task):
        cached = _SINGLE_TASK_BANKS.get(id(task_data))
        if cached is None or cached[0] is not task_data:
            if len(_SINGLE_TASK_BANKS) > 64:
                _SINGLE_TASK_BANKS.clear()
            cached = (task_data, TaskBank.from_single_task(task_data))
            _SINGLE_TASK_BANKS[id(task_data)] = cached
        source = cached[1]
    else:
        raise TypeError(
            "task_data must be a TaskBank, a Task or another AbstractTaskSource, "
            f"got {type(task_data).__name__}"
        )
    if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(source)):
        raise TypeError(
            "the task source was passed as a traced argument of jit/vmap; it must be static: "
            "close over it instead, e.g. jax.jit(lambda key: arc_reset(key, config, bank))"
        )
    return source


def _check_indices(
    config: JaxArcConfig, source: AbstractTaskSource, task_index: object, pair_index: object
) -> None:
    """Range checks of concrete (host) task/pair indices; traced ones are checked in-graph
    when ``config.environment.validate`` is on."""
    for name, value in (("task_index", task_index), ("pair_index", pair_index)):
        if value is not None:
            check_integers(value, name)
    if not isinstance(source, TaskBank):
        return
    concrete = [x is None or not isinstance(x, jax.core.Tracer) for x in (task_index, pair_index)]
    if not all(concrete):
        return
    tasks = np.atleast_1d(np.asarray(-1 if task_index is None else task_index))
    bad = tasks[(tasks < -1) | (tasks >= source.num_tasks)]
    if bad.size:
        raise ValueError(
            f"task_index {int(bad[0])} is outside the bank {source.name!r} "
            f"(0..{source.num_tasks - 1}, or -1 to sample)"
        )
    if pair_index is None:
        return
    pairs = np.broadcast_to(np.atleast_1d(np.asarray(pair_index)), tasks.shape)
    mode = config.environment.episode_mode
    counts = np.asarray(source.num_demos if mode == "train" else source.num_tests)
    for task, pair in zip(tasks, pairs, strict=True):
        limit = counts[task] if task >= 0 else counts.min()
        if pair < -1 or pair >= limit:
            where = f"task {source.task_ids[int(task)]!r}" if task >= 0 else "some tasks"
            raise ValueError(
                f"pair_index {int(pair)} is outside the {mode} pairs of {where} "
                f"(0..{int(limit) - 1}, or -1 to sample)"
            )


def check_canvas(config: JaxArcConfig, source: AbstractTaskSource) -> None:
    """Raise ``ValueError`` unless the source's canvas is the config's canvas shape."""
    if tuple(source.canvas_shape) != config.dataset.canvas_shape:
        raise ValueError(
            f"the task source's canvas is {tuple(source.canvas_shape)} but the config asks for "
            f"{config.dataset.canvas_shape} (UnifiedDatasetConfig max_grid_height/max_grid_width)"
        )


def _uniform_below(word: UInt32[Array, ""], count: Int32[Array, ""]) -> Int32[Array, ""]:
    """A uniform index in ``0..count - 1`` (0 when ``count < 1``) from one random 32-bit word.

    The word's remainder (bias below ``count / 2**32``). ``jax.random.randint`` makes three
    PRNG calls (a split and two draws) per index, and every threefry call site is about ten
    XLA kernels to compile; reset makes one call in all.
    """
    return (word % jnp.maximum(count, 1).astype(jnp.uint32)).astype(jnp.int32)


def reset_draws(
    key: PRNGKeyArray,
) -> tuple[PRNGKeyArray, PRNGKeyArray, UInt32[Array, " n"]]:
    """``(episode key, task key, draws)``: what a reset takes from its key.

    A split-off key's data are uniformly random words (threefry outputs, like those of
    ``jax.random.bits``): the one PRNG call of reset gives the episode's key, the task
    source's key (a generator's task) and two draws (a bank's or a pool's task, the pair).
    """
    key, task_key, draw_key = split_key(key, 3)  # (jax.random.split's keys, no CPU loop)
    return key, task_key, jax.random.key_data(draw_key).reshape(-1)


def pool_slot(draws: UInt32[Array, " n"], pool: Task) -> Int32[Array, ""]:
    """The pool slot a reset with these ``draws`` plays (uniform over the pool's tasks)."""
    return _uniform_below(draws[0], jnp.int32(jax.tree.leaves(pool)[0].shape[0]))


def reset_one(
    key: PRNGKeyArray,
    config: JaxArcConfig,
    source_ref: SourceRef,
    task_index: Int32[Array, ""],
    pair_index: Int32[Array, ""],
    reward_params: RewardParams,
    source: AbstractTaskSource | None = None,
) -> tuple[ArcState, ArcObservation]:
    """One environment's reset, not compiled (the building block of every face).

    Indices ``-1`` sample; ``source`` overrides ``source_ref.source`` (see below).
    """
    # ``source`` is the same object as ``source_ref.source`` passed as an argument, so that
    # its arrays enter a jitted caller as inputs rather than as embedded constants.
    state, task, pair = reset_state(
        key, config, source_ref, task_index, pair_index, reward_params, source
    )
    return state, observation_of(state, task, pair, config)


def reset_state(
    key: PRNGKeyArray,
    config: JaxArcConfig,
    source_ref: SourceRef,
    task_index: Int32[Array, ""],
    pair_index: Int32[Array, ""],
    reward_params: RewardParams,
    source: AbstractTaskSource | None = None,
    pool: Task | None = None,
) -> tuple[ArcState, Task, EpisodePair]:
    """A new episode's state, its task and pair, without building the observation.

    ``pool`` (a :class:`Task` with a leading axis ``N``, for generated sources) replaces the
    generation of a task by the choice of one of the pool's tasks (uniform, from the same
    random word a bank uses): the episode's state then keeps that task, as it would keep a
    freshly generated one.
    """
    source = source_ref.source if source is None else source
    mode = config.environment.episode_mode
    task_index = jnp.asarray(-1 if task_index is None else task_index, dtype=jnp.int32)
    pair_index = jnp.asarray(-1 if pair_index is None else pair_index, dtype=jnp.int32)
    key, task_key, draws = reset_draws(key)
    # The index rule (docs/environment.md): -1 samples; any other index must be in range.
    # Validation on: anything else is an error. Validation off: an index past the end plays
    # the last task/pair, and one below -1 samples like -1.
    validate = config.environment.validate
    if validate:
        task_index = eqx.error_if(
            task_index, task_index < -1, "task_index below -1 (only -1 samples a task)"
        )
        pair_index = eqx.error_if(
            pair_index, pair_index < -1, "pair_index below -1 (only -1 samples a pair)"
        )
    if isinstance(source, TaskBank):  # (the bank's own sample_task draws with randint)
        if validate:
            task_index = eqx.error_if(
                task_index, task_index >= source.num_tasks, "task_index beyond the task bank"
            )
        sampled_task = _uniform_below(draws[0], jnp.int32(source.num_tasks))
        last_task = jnp.int32(source.num_tasks - 1)
        task_index = jnp.where(task_index >= 0, jnp.minimum(task_index, last_task), sampled_task)
        task = source.task(task_index)
    elif pool is not None:
        chosen = pool_slot(draws, pool)
        task = jax.tree.map(lambda x: x[chosen], pool)
        task_index = jnp.int32(-1)
    else:
        task, task_index = source.sample_task(task_key, task_index)
    num_pairs = num_episode_pairs(task, mode)
    if validate:  # concrete indices are also checked before tracing
        pair_index = eqx.error_if(
            pair_index, pair_index >= num_pairs, f"pair_index beyond the task's {mode} pairs"
        )
    sampled_pair = _uniform_below(draws[1], num_pairs)
    last_pair = jnp.maximum(num_pairs - 1, 0)
    pair_index = jnp.where(pair_index >= 0, jnp.minimum(pair_index, last_pair), sampled_pair)
    pair_index = pair_index.astype(jnp.int32)
    # (read from the source: a bank reads the pair alone, not through the whole task)
    pair = source_episode_pair(source, source.episode_store(task), task_index, pair_index, mode)

    grid = pair.input_grid
    if config.environment.start_from_empty:
        grid = jnp.where(grid >= 0, jnp.int8(0), jnp.int8(-1))
    state = ArcState(
        key=key,
        task_index=task_index,
        pair_index=pair_index,
        grid=grid,
        grid_shape=pair.input_shape,
        similarity=grid_similarity(grid, pair.input_shape, pair.target_grid, pair.target_shape),
        pair=pair,
        reward_params=reward_params,
        episode_store=source.episode_store(task),
        source_ref=source_ref,
        **episode_start(config),
    )
    return state, task, pair


def episode_start(config: JaxArcConfig) -> dict[str, Array]:
    """The state fields every episode starts with, whatever its key and task (by name):
    an empty selection and clipboard, zero counters and an empty action history."""
    canvas = config.dataset.canvas_shape
    selection_cls = action_class(config.action.selection_format)
    row_shape, row_dtype = selection_cls.history_row_shape(canvas)
    max_steps = config.environment.max_episode_steps
    return dict(
        selection=jnp.zeros(canvas, dtype=jnp.bool_),
        clipboard=jnp.full(canvas, -1, dtype=jnp.int8),
        clipboard_mask=jnp.zeros(canvas, dtype=jnp.bool_),
        step_count=jnp.int32(0),
        terminated=jnp.asarray(False),
        truncated=jnp.asarray(False),
        success=jnp.asarray(False),
        history=jnp.zeros((max_steps, *row_shape), dtype=row_dtype),
        history_length=jnp.int32(0),
    )


# Compiled single-environment forms; pass ``source`` to make the bank a traced input.
reset_one_jit = eqx.filter_jit(reset_one)


def arc_reset(
    key: PRNGKeyArray,
    config: JaxArcConfig,
    task_data: Task | AbstractTaskSource,
    task_index: int | Int32[Array, ""] | None = None,
    pair_index: int | Int32[Array, ""] | None = None,
    reward_params: RewardParams | None = None,
) -> tuple[ArcState, ArcObservation]:
    """Start an episode: ``(state, observation)``.

    Args:
        key: PRNG key.
        config: static configuration.
        task_data: a :class:`TaskBank`, one :class:`Task` or any task source (generator).
        task_index: the bank index to play; ``None``/``-1`` samples a task uniformly.
        pair_index: the pair to play (a demo pair in train mode, a test pair in eval mode);
            ``None``/``-1`` samples one.
        reward_params: reward weights (traced); ``None`` uses :class:`RewardParams` defaults.
    """
    source = as_task_source(task_data)
    check_canvas(config, source)
    _check_indices(config, source, task_index, pair_index)
    params = RewardParams() if reward_params is None else reward_params
    return reset_one_jit(key, config, SourceRef(source), task_index, pair_index, params, source)


def batch_reset(
    keys: PRNGKeyArray,
    config: JaxArcConfig,
    task_data: Task | AbstractTaskSource,
    task_indices: Int32[Array, " B"] | None = None,
    pair_indices: Int32[Array, " B"] | None = None,
    reward_params: RewardParams | None = None,
) -> tuple[ArcState, ArcObservation]:
    """:func:`arc_reset` for a batch of keys ``[B]``; indices ``None`` sample per environment.

    ``reward_params`` leaves are scalars shared by the batch or ``[B]`` arrays (one per
    environment).
    """
    source = as_task_source(task_data)
    check_canvas(config, source)
    _check_indices(config, source, task_indices, pair_indices)
    params = RewardParams() if reward_params is None else reward_params
    return _batch_reset(keys, config, SourceRef(source), task_indices, pair_indices, params, source)


@eqx.filter_jit
def _batch_reset(keys, config, source_ref, task_indices, pair_indices, params, source):
    batch = keys.shape[0]

    def per_env(indices):
        if indices is None:
            return jnp.full((batch,), -1, jnp.int32)
        return jnp.broadcast_to(jnp.asarray(indices, jnp.int32), (batch,))

    params = jax.tree.map(lambda x: jnp.broadcast_to(x, (batch,)), params)
    reset = lambda k, t, p, r: reset_one(k, config, source_ref, t, p, r, source)
    return jax.vmap(reset)(keys, per_env(task_indices), per_env(pair_indices), params)
