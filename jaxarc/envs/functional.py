"""The pure-functional environment: ``arc_reset`` / ``arc_step`` and their batched forms.

Static/traced split:
* static: the :class:`~jaxarc.envs.config.JaxArcConfig` (hashable; shapes and code paths)
  and the task source, which the state carries through a :class:`SourceRef` compared by
  identity. A bank's arrays are therefore constants of the compiled step, shared by every
  environment of a batch.
* traced: keys, indices, actions, reward weights and every leaf of the state.

The step is branch-free: the operations are those of
:func:`~jaxarc.grid.operations.apply_operation`, whose operation families are parameterised
by per-environment scalars rather than selected by ``lax.switch``. Each action format (the
static ``config.action.selection_format``) takes a specialised form that gives the same
states: point actions :func:`~jaxarc.grid.point_operations.apply_point_operation`, bbox
actions :func:`~jaxarc.grid.box_operations.apply_box_operation` (the rectangle as scalars)
and masks :func:`~jaxarc.grid.box_operations.apply_mask_operation` (the flat-canvas form).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float32, Int32, PRNGKeyArray, UInt32

from jaxarc.data.bank import Task, TaskBank
from jaxarc.data.source import AbstractTaskSource
from jaxarc.envs.config import JaxArcConfig, RewardParams
from jaxarc.envs.episode import (
    EpisodePair,
    episode_pair,
    grid_similarity,
    in_context_mask,
    num_episode_pairs,
    similarity_and_match,
)
from jaxarc.envs.errors import JAXErrorHandler
from jaxarc.envs.integers import check_integers
from jaxarc.envs.structured_actions import AbstractAction, action_class
from jaxarc.envs.types import (
    CONTEXT_FIELDS,
    ArcObservation,
    ArcState,
    EpisodeContext,
    SourceRef,
    StepInfo,
)
from jaxarc.grid.box_operations import apply_box_operation, apply_mask_operation
from jaxarc.grid.operation_ids import NUM_OPERATIONS, SUBMIT
from jaxarc.grid.operations import GridState
from jaxarc.grid.point_operations import apply_point_operation

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


def _observation(
    state: ArcState, task: Task, pair: EpisodePair, config: JaxArcConfig
) -> ArcObservation:
    # With ``episode_context="at_reset"`` the per-episode constants are left out (None);
    # :func:`episode_context` gives them.
    step_fields = dict(
        grid=state.grid,
        grid_shape=state.grid_shape,
        clipboard=state.clipboard,
        clipboard_mask=state.clipboard_mask,
        allowed_operations=jnp.asarray(config.action.allowed_mask, dtype=jnp.bool_),
        step_count=state.step_count,
    )
    if config.environment.episode_context == "at_reset":
        return ArcObservation(**step_fields)
    context = _context(state, task, pair, config)
    return ArcObservation(**step_fields, **{f: getattr(context, f) for f in CONTEXT_FIELDS})


def _context(
    state: ArcState, task: Task, pair: EpisodePair, config: JaxArcConfig
) -> EpisodeContext:
    # Hidden pairs (padding, and in train mode the episode's own pair, whose output is the
    # target) are blanked, not just masked: the target never appears in the observation.
    shown = in_context_mask(task, state.pair_index, config.environment.episode_mode)
    return EpisodeContext(
        input_grid=pair.input_grid,
        input_shape=pair.input_shape,
        demo_inputs=jnp.where(shown[:, None, None], task.demo_inputs, jnp.int8(-1)),
        demo_outputs=jnp.where(shown[:, None, None], task.demo_outputs, jnp.int8(-1)),
        demo_input_shapes=jnp.where(shown[:, None], task.demo_input_shapes, 0),
        demo_output_shapes=jnp.where(shown[:, None], task.demo_output_shapes, 0),
        demo_mask=shown,
    )


def _episode_task_and_pair(
    state: ArcState, config: JaxArcConfig, source: AbstractTaskSource | None = None
) -> tuple[Task, EpisodePair]:
    source = state.source if source is None else source
    task = source.episode_task(state.episode_store, state.task_index)
    return task, episode_pair(task, state.pair_index, config.environment.episode_mode)


def observe(
    state: ArcState, config: JaxArcConfig, source: AbstractTaskSource | None = None
) -> ArcObservation:
    """The observation of one environment's ``state`` (what reset/step return for it)."""
    task, pair = _episode_task_and_pair(state, config, source)
    return _observation(state, task, pair, config)


def episode_context(
    state: ArcState, config: JaxArcConfig, source: AbstractTaskSource | None = None
) -> EpisodeContext:
    """The constants of one environment's episode: its input grid and demonstration pairs.

    Computed from the state (a gather from the task source), so it is available whatever
    ``config.environment.episode_context`` says; ``vmap`` it for a batch.
    """
    task, pair = _episode_task_and_pair(state, config, source)
    return _context(state, task, pair, config)


def _uniform_below(word: UInt32[Array, ""], count: Int32[Array, ""]) -> Int32[Array, ""]:
    """A uniform index in ``0..count - 1`` (0 when ``count < 1``) from one random 32-bit word.

    The word's remainder (bias below ``count / 2**32``). ``jax.random.randint`` makes three
    PRNG calls (a split and two draws) per index, and every threefry call site is about ten
    XLA kernels to compile; reset makes one call in all.
    """
    return (word % jnp.maximum(count, 1).astype(jnp.uint32)).astype(jnp.int32)


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
    return state, _observation(state, task, pair, config)


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
    key, task_key, draw_key = jax.random.split(key, 3)
    # A split-off key's data are uniformly random words (threefry outputs, like those of
    # jax.random.bits): the one PRNG call of reset gives the episode's key, the task
    # source's key and the two draws (a bank's task, the pair).
    draws = jax.random.key_data(draw_key).reshape(-1)
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
        pool_size = jax.tree.leaves(pool)[0].shape[0]
        chosen = _uniform_below(draws[0], jnp.int32(pool_size))
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
    pair = episode_pair(task, pair_index, mode)

    grid = pair.input_grid
    if config.environment.start_from_empty:
        grid = jnp.where(grid >= 0, jnp.int8(0), jnp.int8(-1))
    canvas = config.dataset.canvas_shape
    selection_cls = action_class(config.action.selection_format)
    row_shape, row_dtype = selection_cls.history_row_shape(canvas)
    max_steps = config.environment.max_episode_steps

    state = ArcState(
        key=key,
        task_index=task_index,
        pair_index=pair_index,
        grid=grid,
        grid_shape=pair.input_shape,
        selection=jnp.zeros(canvas, dtype=jnp.bool_),
        clipboard=jnp.full(canvas, -1, dtype=jnp.int8),
        clipboard_mask=jnp.zeros(canvas, dtype=jnp.bool_),
        step_count=jnp.int32(0),
        terminated=jnp.asarray(False),
        truncated=jnp.asarray(False),
        success=jnp.asarray(False),
        similarity=grid_similarity(grid, pair.input_shape, pair.target_grid, pair.target_shape),
        history=jnp.zeros((max_steps, *row_shape), dtype=row_dtype),
        history_length=jnp.int32(0),
        reward_params=reward_params,
        episode_store=source.episode_store(task),
        source_ref=source_ref,
    )
    return state, task, pair


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


def _step_reward(
    params: RewardParams,
    config: JaxArcConfig,
    submitted: Bool[Array, ""],
    success: Bool[Array, ""],
    similarity_gain: Float32[Array, ""],
) -> Float32[Array, ""]:
    submit_reward = jnp.where(success, params.success_bonus, params.failed_submit_penalty)
    reward = params.step_penalty + jnp.where(submitted, submit_reward, jnp.float32(0.0))
    if config.environment.episode_mode == "train" and config.environment.similarity_shaping:
        reward = reward + params.similarity_weight * similarity_gain
    return reward.astype(jnp.float32)


def step_one(
    state: ArcState,
    action: AbstractAction,
    config: JaxArcConfig,
    source: AbstractTaskSource | None = None,
) -> tuple[ArcState, ArcObservation, Float32[Array, ""], Bool[Array, ""], StepInfo]:
    """One environment's step; ``source`` overrides ``state.source`` (see :func:`arc_step`)."""
    mode = config.environment.episode_mode
    canvas = config.dataset.canvas_shape
    if config.environment.validate:
        action = JAXErrorHandler.validate_action(action, config)
        state = JAXErrorHandler.validate_state_consistency(state)
    # the step and the history see the same, in-range action (see structured_actions)
    action = action.normalized(canvas)
    source = state.source if source is None else source
    task = source.episode_task(state.episode_store, state.task_index)
    pair = episode_pair(task, state.pair_index, mode)

    was_done = state.terminated | state.truncated
    operation = jnp.asarray(action.operation, dtype=jnp.int32)
    known = (operation >= 0) & (operation < NUM_OPERATIONS)
    allowed_table = jnp.asarray(config.action.allowed_mask, dtype=jnp.bool_)
    allowed = known & allowed_table[jnp.clip(operation, 0, NUM_OPERATIONS - 1)]
    effective_op = jnp.where(allowed & ~was_done, operation, jnp.int32(-1))

    before = GridState(
        grid=state.grid,
        shape=state.grid_shape,
        selection=state.selection,
        clipboard=state.clipboard,
        clipboard_mask=state.clipboard_mask,
    )
    if config.action.selection_format == "point":  # static: the point-specialised operations
        after = apply_point_operation(
            before, effective_op, action.row, action.col, pair.input_grid, pair.input_shape
        )
    elif config.action.selection_format == "bbox":  # static: the rectangle operations
        after = apply_box_operation(
            before,
            effective_op,
            action.r1,
            action.c1,
            action.r2,
            action.c2,
            pair.input_grid,
            pair.input_shape,
        )
    else:  # mask: the flat-canvas form of the generic operations
        after = apply_mask_operation(
            before,
            effective_op,
            action.to_selection_mask(canvas),
            pair.input_grid,
            pair.input_shape,
        )
    similarity, correct = similarity_and_match(
        after.grid, after.shape, pair.target_grid, pair.target_shape
    )
    submitted = effective_op == SUBMIT
    success = submitted & correct & pair.scored

    live = ~was_done
    step_count = state.step_count + live.astype(jnp.int32)
    terminated = state.terminated | submitted
    truncated = state.truncated | (
        live & ~submitted & (step_count >= config.environment.max_episode_steps)
    )
    reward = jnp.where(
        live,
        _step_reward(
            state.reward_params, config, submitted, success, similarity - state.similarity
        ),
        jnp.float32(0.0),
    )

    row = jnp.clip(state.history_length, 0, state.history.shape[0] - 1)
    history_row = action.to_history().astype(state.history.dtype)
    kept_row = jnp.where(live, history_row, state.history[row])
    history = jax.lax.dynamic_update_index_in_dim(state.history, kept_row, row, axis=0)

    new_state = eqx.tree_at(
        lambda s: (
            s.grid,
            s.grid_shape,
            s.selection,
            s.clipboard,
            s.clipboard_mask,
            s.step_count,
            s.terminated,
            s.truncated,
            s.success,
            s.similarity,
            s.history,
            s.history_length,
        ),
        state,
        (
            after.grid,
            after.shape,
            after.selection,
            after.clipboard,
            after.clipboard_mask,
            step_count,
            terminated,
            truncated,
            state.success | success,
            jnp.where(live, similarity, state.similarity),
            history,
            state.history_length + live.astype(jnp.int32),
        ),
    )
    info = {
        "terminated": terminated,
        "truncated": truncated,
        "success": new_state.success,
        "similarity": new_state.similarity,
    }
    return (
        new_state,
        _observation(new_state, task, pair, config),
        reward,
        terminated | truncated,
        info,
    )


step_one_jit = eqx.filter_jit(step_one)  # the compiled single-environment step


def arc_step(
    state: ArcState, action: AbstractAction, config: JaxArcConfig
) -> tuple[ArcState, ArcObservation, Float32[Array, ""], Bool[Array, ""], StepInfo]:
    """Apply one action: ``(state, observation, reward, done, info)``.

    ``info`` holds ``terminated`` (SUBMIT), ``truncated`` (``max_episode_steps`` reached
    without a submission), ``success`` (a correct submission) and ``similarity``. Stepping a
    finished episode changes nothing and gives reward 0. A disallowed or unknown operation
    is a no-op that still counts as a step (an error when ``config.environment.validate``).
    Compiled with ``equinox.filter_jit``; the task source enters as a traced input.
    """
    return step_one_jit(state, action, config, state.source)


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


def batch_step(
    states: ArcState, actions: AbstractAction, config: JaxArcConfig
) -> tuple[ArcState, ArcObservation, Float32[Array, " B"], Bool[Array, " B"], StepInfo]:
    """:func:`arc_step` over a batch: every leaf of ``states`` and ``actions`` has axis ``B``."""
    return _batch_step(states, actions, config, states.source)


@eqx.filter_jit
def _batch_step(states, actions, config, source):
    return jax.vmap(lambda s, a: step_one(s, a, config, source))(states, actions)
