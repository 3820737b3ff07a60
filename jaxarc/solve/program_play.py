"""Programs played on a task's demonstrations with the environment's own step code: the
grids a program makes, and what each step of a group of programs earns.

A step plays each program's vocabulary row (:mod:`jaxarc.solve.program_tasks`): its bbox
action, then its mask actions (:mod:`jaxarc.solve.mixed_replay`), on every demonstration
input at once (``vmap`` over programs and pairs). :func:`program_returns` is the reward of
the program learner (:mod:`jaxarc.solve.program_rl`) and of the program network
(:mod:`jaxarc.solve.program_network`); :func:`program_grids` gives what one program made,
for relabelling it as a task of its own (hindsight).

Static and traced: the canvas side and the task's paddings are static; the task's arrays
and the programs are traced.
"""

from __future__ import annotations

from typing import Protocol

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, Int8, Int32

from jaxarc.grid.operations import GridState
from jaxarc.solve.mixed_replay import bbox_action, mask_action
from jaxarc.solve.program_tasks import TaskArrays


class RewardSettings(Protocol):
    """What the reward reads of the learner's settings
    (:class:`~jaxarc.solve.program_rl.ProgramRLConfig`)."""

    @property
    def success_bonus(self) -> float: ...

    @property
    def action_cost(self) -> float: ...


def _program_step(task: TaskArrays, side: int):
    """One step of a group of programs on every demonstration: ``(states, column [G]) ->
    states``, each program's item played with the environment's own step code (its bbox
    row, then its mask actions)."""

    def one_grid(state: GridState, row: Int32[Array, "5"], grid, shape) -> GridState:
        return bbox_action(state, row, grid, shape, side)

    def one_mask(state: GridState, operation, mask, grid, shape) -> GridState:
        return mask_action(state, operation, mask, grid, shape, side)

    def apply(states: GridState, rows: Int32[Array, "D 5"]) -> GridState:
        return jax.vmap(one_grid)(states, rows, task.inputs, task.shapes)

    def apply_masks(states: GridState, operations, masks) -> GridState:
        return jax.vmap(one_mask)(states, operations, masks, task.inputs, task.shapes)

    def step(states: GridState, column: Int32[Array, " G"]) -> GridState:
        """Skipped when every program has stopped (the learner runs unbatched, so the
        branch is really not taken), and each of the ``K`` mask actions skipped when no
        program's row has one there."""
        states = jax.lax.cond(
            jnp.any(column != 0),
            lambda s: jax.vmap(apply)(s, task.table[column]),
            lambda s: s,
            states,
        )

        def mask_step(k: Int32[Array, ""], states: GridState) -> GridState:
            operations = task.mask_ops[column, :, k]  # [G, D]
            return jax.lax.cond(
                jnp.any(operations >= 0),
                lambda s: jax.vmap(apply_masks)(s, operations, task.masks[column, :, k]),
                lambda s: s,
                states,
            )

        if task.mask_ops.shape[-1]:  # static: none without the language
            states = jax.lax.fori_loop(0, task.mask_ops.shape[-1], mask_step, states)
        return states

    return step


def _group_states(task: TaskArrays, count: int) -> GridState:
    root = jax.vmap(GridState.create)(task.inputs, task.shapes)
    return jax.tree.map(lambda x: jnp.broadcast_to(x, (count, *x.shape)), root)


def program_grids(
    task: TaskArrays, program: Int32[Array, " T"], side: int
) -> tuple[Int8[Array, "D H W"], Int32[Array, "D 2"]]:
    """The grids ``program`` makes of every demonstration input (``-1`` outside a grid)
    and their shapes."""
    step = _program_step(task, side)
    final = jax.lax.fori_loop(
        0, program.shape[0], lambda t, s: step(s, program[t][None]), _group_states(task, 1)
    )
    return final.grid[0], final.shape[0]


def program_returns(
    task: TaskArrays, programs: Int32[Array, "G T"], config: RewardSettings, side: int
):
    """Play ``programs`` on every demonstration: per program and step what the program
    earns from that step on (the score's gain to the end, the bonus, the cost of the actions
    left) ``[G, T]``, the whole reward ``[G]``, and, had it stopped after ``t = 0 .. T``
    actions, what it would have earned and whether it would solve every demonstration
    ``[G, T+1]`` (the last column: the whole program)."""
    root = jax.vmap(GridState.create)(task.inputs, task.shapes)
    pairs = jnp.maximum(jnp.sum(task.demo), 1).astype(jnp.float32)
    play = _program_step(task, side)

    def score(states: GridState) -> tuple[Float32[Array, ""], Bool[Array, ""]]:
        """The mean over demonstrations of (solved + share of matching cells) / 2, and
        whether every demonstration is solved."""
        equal = states.grid == task.targets
        union = (states.grid >= 0) | (task.targets >= 0)
        cells = jnp.maximum(jnp.sum(union, axis=(1, 2)), 1).astype(jnp.float32)
        share = jnp.sum(equal & union, axis=(1, 2)).astype(jnp.float32) / cells
        matched = jnp.all(equal, axis=(1, 2))
        pair_score = (matched.astype(jnp.float32) + share) / 2
        mean = jnp.sum(jnp.where(task.demo, pair_score, 0.0)) / pairs
        return mean, jnp.all(matched | ~task.demo)

    def step(states: GridState, column: Int32[Array, " G"]):
        states = play(states, column)
        return states, jax.vmap(score)(states)

    group = _group_states(task, programs.shape[0])
    _, (scores, solved) = jax.lax.scan(step, group, programs.T)  # [T, G] each
    first_score, first_solved = score(root)
    num = programs.shape[0]
    scores = jnp.concatenate([jnp.full((1, num), first_score), scores]).T  # [G, T+1]
    solved = jnp.concatenate([jnp.full((1, num), first_solved), solved]).T  # [G, T+1]
    acting = (programs != 0).astype(jnp.float32)
    costs_left = jnp.cumsum(acting[:, ::-1], axis=1)[:, ::-1] * config.action_cost
    bonus = config.success_bonus * solved[:, -1].astype(jnp.float32)
    to_go = scores[:, -1:] - scores[:, :-1] + bonus[:, None] - costs_left
    reward = scores[:, -1] + bonus - config.action_cost * acting.sum(1)
    # what each program would have earned had it stopped after t actions, t = 0 .. T
    spent = jnp.concatenate([jnp.zeros((num, 1)), jnp.cumsum(acting, axis=1)], axis=1)
    prefix_reward = (
        scores + config.success_bonus * solved.astype(jnp.float32) - config.action_cost * spent
    )
    return to_go, reward, prefix_reward, solved


__all__ = ["program_grids", "program_returns"]
