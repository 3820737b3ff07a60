"""Hindsight tasks: an episode's own actions, replayed on the demonstration inputs, define a
task on which those actions succeed.

An ARC task is its demonstration pairs. Whatever an agent did in an episode (its actions up
to SUBMIT), applied to every demonstration input, gives outputs that form a consistent
task: the *hindsight task* of the episode, whose test target is the grid the agent reached.
On it the episode's actions are a solution. Because the environment is pure, the replay is
the step's own grid operation (:mod:`jaxarc.envs.transition`), so the hindsight task agrees
with the environment exactly, and it runs inside ``jit`` and ``vmap`` like the step.

This is hindsight relabelling (Andrychowicz et al. 2017, "Hindsight experience replay")
with a whole task as the goal. :mod:`jaxarc.agents.grpo.hindsight` uses it to give the GRPO
trainer successful groups on rungs where fresh rollouts almost never succeed;
:class:`jaxarc.wrappers.HindsightTaskWrapper` gives any agent hindsight tasks through the
gymnax and Gymnasium faces.

All functions are written for one episode (``vmap`` over a batch).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, Int8, Int32

from jaxarc.data.source import AbstractTaskSource, Task
from jaxarc.envs.config import JaxArcConfig, RewardParams
from jaxarc.envs.episode import similarity_and_match
from jaxarc.envs.observation import episode_context
from jaxarc.envs.structured_actions import AbstractAction, action_class
from jaxarc.envs.transition import apply_action, effective_operation, step_reward
from jaxarc.envs.types import ArcObservation, ArcState, EpisodeContext
from jaxarc.grid.operation_ids import SUBMIT
from jaxarc.grid.operations import GridState


def replay_actions(
    input_grid: Int8[Array, "H W"],
    input_shape: Int32[Array, "2"],
    actions: AbstractAction,
    taken: Bool[Array, " T"],
    config: JaxArcConfig,
) -> tuple[Int8[Array, "H W"], Int32[Array, "2"]]:
    """The grid (and its shape) after playing ``actions`` (leading axis ``T``) from
    ``input_grid``, as the step plays them: each action normalized, unknown or disallowed
    operations and steps not ``taken`` are no-ops, and the episode stops at SUBMIT."""
    canvas = config.dataset.canvas_shape
    start = GridState(
        grid=input_grid,
        shape=input_shape,
        selection=jnp.zeros(canvas, dtype=jnp.bool_),
        clipboard=jnp.full(canvas, -1, dtype=jnp.int8),
        clipboard_mask=jnp.zeros(canvas, dtype=jnp.bool_),
    )

    def one_step(carry, step):
        grid_state, live = carry
        action, was_taken = step
        action = action.normalized(canvas)
        operation = effective_operation(action.operation, live & was_taken, config)
        after = apply_action(grid_state, operation, action, input_grid, input_shape, config)
        return (after, live & (operation != SUBMIT)), None

    (final, _), _ = jax.lax.scan(one_step, (start, jnp.asarray(True)), (actions, taken))
    return final.grid, final.shape


def hindsight_outputs(
    demo_inputs: Int8[Array, "P H W"],
    demo_input_shapes: Int32[Array, "P 2"],
    demo_mask: Bool[Array, " P"],
    actions: AbstractAction,
    taken: Bool[Array, " T"],
    config: JaxArcConfig,
) -> tuple[Int8[Array, "P H W"], Int32[Array, "P 2"]]:
    """The hindsight task's demonstration outputs: ``actions`` replayed on every shown
    demonstration input (hidden slots stay blank: ``-1`` grids of shape ``(0, 0)``)."""
    outputs, shapes = jax.vmap(lambda g, s: replay_actions(g, s, actions, taken, config))(
        demo_inputs, demo_input_shapes
    )
    outputs = jnp.where(demo_mask[:, None, None], outputs, jnp.int8(-1))
    shapes = jnp.where(demo_mask[:, None], shapes, 0).astype(jnp.int32)
    return outputs, shapes


def hindsight_task(
    context: ArcObservation | EpisodeContext,
    actions: AbstractAction,
    taken: Bool[Array, " T"],
    config: JaxArcConfig,
) -> Task:
    """The hindsight task of an episode as a :class:`~jaxarc.data.bank.Task`: its shown
    demonstration inputs with ``actions`` replayed on them as outputs (moved to the first
    slots, in order; the rest blank), and one test pair, the episode's input and the grid
    ``actions`` make of it. Replaying ``actions`` on the test input and submitting solves it.

    ``context`` is any observation of the episode (or its
    :class:`~jaxarc.envs.types.EpisodeContext`): only its input grid and demonstration
    pairs are read. Play the task like any other: ``arc_reset(key, config, task)`` or
    ``jaxarc.build_environment(TaskBank.from_single_task(task))``.
    """
    outputs, output_shapes = hindsight_outputs(
        context.demo_inputs, context.demo_input_shapes, context.demo_mask, actions, taken, config
    )
    target, target_shape = replay_actions(
        context.input_grid, context.input_shape, actions, taken, config
    )
    order = jnp.argsort(~context.demo_mask, stable=True)  # shown pairs first, in order
    shown = context.demo_mask[order]
    demo_inputs = jnp.where(shown[:, None, None], context.demo_inputs[order], jnp.int8(-1))
    return Task(
        demo_inputs=demo_inputs.astype(jnp.int8),
        demo_outputs=outputs[order],
        demo_input_shapes=jnp.where(shown[:, None], context.demo_input_shapes[order], 0),
        demo_output_shapes=output_shapes[order],
        num_demos=jnp.sum(shown, dtype=jnp.int32),
        test_inputs=context.input_grid[None],
        test_outputs=target[None],
        test_input_shapes=context.input_shape[None],
        test_output_shapes=target_shape[None],
        num_tests=jnp.int32(1),
        test_scored=jnp.ones((1,), dtype=bool),
    )


def episode_hindsight_task(
    state: ArcState, config: JaxArcConfig, source: AbstractTaskSource | None = None
) -> Task:
    """The hindsight task of the episode ``state`` is in (finished or not), from the actions
    it recorded (``state.history``): :func:`hindsight_task` of its context and history.

    Works on any state the core or a face hands out (``arc_step``'s, the Gymnasium env's
    ``env.unwrapped.state``, the gymnax face's before its auto-reset); ``source`` overrides
    ``state.source`` as in :func:`~jaxarc.envs.functional.episode_context`.
    """
    canvas = config.dataset.canvas_shape
    actions = action_class(config.action.selection_format).from_history(state.history, canvas)
    steps = state.history.shape[0]
    taken = jnp.arange(steps, dtype=jnp.int32) < state.history_length
    return hindsight_task(episode_context(state, config, source), actions, taken, config)


def rescore_steps(
    grids: Int8[Array, "T+1 H W"],
    shapes: Int32[Array, "T+1 2"],
    operations: Int32[Array, " T"],
    taken: Bool[Array, " T"],
    target: Int8[Array, "H W"],
    target_shape: Int32[Array, "2"],
    reward_params: RewardParams,
    config: JaxArcConfig,
) -> tuple[Float32[Array, " T"], Bool[Array, ""]]:
    """The rewards an episode's recorded steps earn against another ``target``, and whether
    it succeeds there.

    ``grids[t]`` is the working grid before step ``t`` and ``grids[T]`` the final one;
    ``operations`` are the effective operations (``-1`` for no-ops) and ``taken`` marks the
    steps the episode took. Rewards follow :func:`~jaxarc.envs.transition.step_reward`
    exactly; steps not taken earn 0.
    """
    similarity, equal = jax.vmap(lambda g, s: similarity_and_match(g, s, target, target_shape))(
        grids, shapes
    )
    submitted = taken & (operations == SUBMIT)
    success = submitted & equal[1:]
    gains = similarity[1:] - similarity[:-1]
    rewards = jax.vmap(lambda s, ok, gain: step_reward(reward_params, config, s, ok, gain))(
        submitted, success, gains
    )
    return jnp.where(taken, rewards, jnp.float32(0.0)), jnp.any(success)
