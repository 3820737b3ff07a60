"""One program step of a mixed vocabulary, and its replay on a task's 30x30 canvas.

A mixed vocabulary (:func:`jaxarc.solve.program_tasks.task_arrays` with the language on)
holds whole-grid actions, rows ``(operation, r1, c1, r2, c2)`` per grid, and the content
language's items (:mod:`jaxarc.solve.language.vocabulary`), up to ``K`` mask actions per
grid. A step of a program plays its row's bbox action with the environment's bbox code,
then its ``K`` mask actions with the environment's mask code
(:func:`jaxarc.envs.transition.apply_action` in each format, on a bbox and a mask config of
the same canvas); a mask action of operation ``-1`` leaves the state as it is. A
whole-grid row has no mask actions and a language item's bbox row is the no-op, so each
item is played by the format it was made in (no bbox action is turned into a mask).

The learner plays :func:`mixed_step` on its canvas; :func:`replay_mixed` replays a learned
program with the same step on the 30x30 canvas for the attempts.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int8, Int32

from jaxarc.envs.config import JaxArcConfig, UnifiedActionConfig, UnifiedDatasetConfig
from jaxarc.envs.structured_actions import BboxAction, MaskAction
from jaxarc.envs.transition import apply_action, effective_operation
from jaxarc.grid.operations import GridState
from jaxarc.solve.problem import MAX_SIDE, Problem
from jaxarc.solve.replay import MAX_STEPS, SLOTS
from jaxarc.solve.search import search_config


def mask_config(side: int) -> JaxArcConfig:
    """The environment config mask actions are applied with: every operation allowed, a
    ``side`` x ``side`` canvas."""
    return JaxArcConfig(
        dataset=UnifiedDatasetConfig(side, side),
        action=UnifiedActionConfig(selection_format="mask"),
    )


def bbox_action(state: GridState, row: Int32[Array, "5"], grid, shape, side: int) -> GridState:
    """The bbox action ``row`` on one grid's state, as the environment steps it."""
    config = search_config(side)
    act = BboxAction(row[0], row[1], row[2], row[3], row[4]).normalized((side, side))
    operation = effective_operation(act.operation, jnp.asarray(True), config)
    return apply_action(state, operation, act, grid, shape, config)


def mask_action(
    state: GridState,
    operation: Int32[Array, ""],
    mask: Bool[Array, "S S"],
    grid,
    shape,
    side: int,
) -> GridState:
    """The mask action ``(operation, mask)`` on one grid's state, as the environment steps
    it; ``operation < 0`` keeps the state."""
    config = mask_config(side)
    act = MaskAction(operation, mask).normalized((side, side))
    effective = effective_operation(act.operation, jnp.asarray(True), config)
    after = apply_action(state, effective, act, grid, shape, config)
    return jax.tree.map(lambda a, b: jnp.where(operation >= 0, a, b), after, state)


def mixed_step(
    state: GridState,
    row: Int32[Array, "5"],
    operations: Int32[Array, " K"],
    masks: Bool[Array, "K S S"],
    grid,
    shape,
    side: int,
) -> GridState:
    """One step of a mixed program on one grid: the bbox ``row``, then the mask actions."""
    state = bbox_action(state, row, grid, shape, side)
    for k in range(operations.shape[0]):
        state = mask_action(state, operations[k], masks[k], grid, shape, side)
    return state


@functools.cache
def _replay():
    def run(
        grids: Int8[Array, "G H W"],
        shapes: Int32[Array, "G 2"],
        rows: Int32[Array, "G T 5"],
        operations: Int32[Array, "G T K"],
        masks: Bool[Array, "G T K H W"],
    ) -> tuple[Int8[Array, "G H W"], Int32[Array, "G 2"]]:
        def one_grid(grid, shape, rows, operations, masks):
            def step(state, item):
                return mixed_step(state, *item, grid, shape, MAX_SIDE), None

            final, _ = jax.lax.scan(step, GridState.create(grid, shape), (rows, operations, masks))
            return final.grid, final.shape

        return jax.vmap(one_grid)(grids, shapes, rows, operations, masks)

    return jax.jit(run)


def replay_mixed(
    problem: Problem,
    rows: Int32[np.ndarray, "T N 5"],
    operations: Int32[np.ndarray, "T N K"],
    masks: Bool[np.ndarray, "T N K 30 30"],
) -> tuple[bool, list[np.ndarray]]:
    """``(solves the demonstrations, test predictions)`` of a mixed program replayed on
    ``problem`` 's grids (demonstration inputs, then test inputs) on the 30x30 canvas: per
    step, each grid's bbox row and mask actions (see the module docstring)."""
    grids = [*problem.demo_inputs, *problem.test_inputs]
    steps, _, width = operations.shape
    if steps > MAX_STEPS:
        raise ValueError(f"a program of {steps} steps; at most {MAX_STEPS}")
    made: list[np.ndarray] = []
    for first in range(0, len(grids), SLOTS):
        group = grids[first : first + SLOTS]
        padded = np.full((SLOTS, MAX_SIDE, MAX_SIDE), -1, np.int8)
        shapes = np.ones((SLOTS, 2), np.int32)
        step_rows = np.full((SLOTS, MAX_STEPS, 5), -1, np.int32)
        step_ops = np.full((SLOTS, MAX_STEPS, width), -1, np.int32)
        step_masks = np.zeros((SLOTS, MAX_STEPS, width, MAX_SIDE, MAX_SIDE), bool)
        for k, grid in enumerate(group):
            padded[k, : grid.shape[0], : grid.shape[1]] = grid
            shapes[k] = grid.shape
            step_rows[k, :steps] = rows[:, first + k]
            step_ops[k, :steps] = operations[:, first + k]
            step_masks[k, :steps] = masks[:, first + k]
        out, out_shapes = _replay()(
            *(jnp.asarray(x) for x in (padded, shapes, step_rows)),
            jnp.asarray(step_ops),
            jnp.asarray(step_masks),
        )
        out, out_shapes = np.asarray(out), np.asarray(out_shapes)
        made += [out[k, : out_shapes[k, 0], : out_shapes[k, 1]].copy() for k in range(len(group))]
    solves = all(np.array_equal(made[k], target) for k, target in enumerate(problem.demo_outputs))
    return solves, made[problem.num_demos :]
