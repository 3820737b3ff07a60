"""A found action sequence, replayed by the environment on a task's own 30x30 canvas.

The search runs on a smaller canvas for speed; every sequence it returns is replayed here
with :func:`jaxarc.envs.hindsight.replay_actions` (the step's own code) on every
demonstration input and test input of the task, padded to the ARC canvas. A sequence is
kept only if it still turns every demonstration input into its output, and the test
predictions are the grids it makes of the test inputs.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int8, Int32

from jaxarc.envs.config import (
    EnvironmentConfig,
    JaxArcConfig,
    UnifiedActionConfig,
    UnifiedDatasetConfig,
)
from jaxarc.envs.hindsight import replay_actions
from jaxarc.envs.structured_actions import BboxAction
from jaxarc.solve.problem import MAX_SIDE, Problem

MAX_STEPS = 32  # sequences are padded to this many steps (one compiled replay); a 3x3
# tiling takes up to 28
SLOTS = 16  # grids per call (a task with more is replayed in several calls)


def replay_config() -> JaxArcConfig:
    """The environment the replay plays: bbox actions, every operation, the ARC canvas."""
    return JaxArcConfig(
        environment=EnvironmentConfig(max_episode_steps=MAX_STEPS, episode_mode="eval"),
        dataset=UnifiedDatasetConfig(MAX_SIDE, MAX_SIDE),
        action=UnifiedActionConfig(selection_format="bbox"),
    )


@functools.cache
def _replay_program():
    config = replay_config()

    def run(
        grids: Int8[Array, "G H W"],
        shapes: Int32[Array, "G 2"],
        actions: Int32[Array, "G T 5"],
        taken: Bool[Array, " T"],
    ) -> tuple[Int8[Array, "G H W"], Int32[Array, "G 2"]]:
        def one_grid(grid, shape, rows: Int32[Array, "T 5"]):
            sequence = BboxAction(*(rows[:, k] for k in range(5)))
            return replay_actions(grid, shape, sequence, taken, config)

        return jax.vmap(one_grid)(grids, shapes, actions)

    return jax.jit(run)


def replay_on_task(problem: Problem, sequence: np.ndarray) -> tuple[bool, list[np.ndarray]]:
    """``(solves the demonstrations, test predictions)`` of the action ``sequence``
    replayed by the environment on ``problem``: rows ``(operation, r1, c1, r2, c2)``,
    ``[T, 5]`` (one action a step for every grid) or ``[T, N, 5]`` (a step's action per
    grid: demonstration inputs, then test inputs)."""
    grids = [*problem.demo_inputs, *problem.test_inputs]
    sequence = np.asarray(sequence, np.int32)
    sequence = sequence.reshape(-1, 1, 5) if sequence.ndim < 3 else sequence  # [T, 1 or N, 5]
    if len(sequence) > MAX_STEPS:
        raise ValueError(f"a sequence of {len(sequence)} actions; at most {MAX_STEPS}")
    per_grid = np.broadcast_to(sequence, (len(sequence), len(grids), 5)).transpose(1, 0, 2)
    actions = np.full((len(grids), MAX_STEPS, 5), -1, np.int32)
    actions[:, : len(sequence)] = per_grid
    taken = np.arange(MAX_STEPS) < len(sequence)
    made: list[np.ndarray] = []
    for first in range(0, len(grids), SLOTS):  # SLOTS grids per call
        group = grids[first : first + SLOTS]
        padded = np.full((SLOTS, MAX_SIDE, MAX_SIDE), -1, np.int8)
        shapes = np.ones((SLOTS, 2), np.int32)
        rows = np.full((SLOTS, MAX_STEPS, 5), -1, np.int32)
        rows[: len(group)] = actions[first : first + SLOTS]
        for k, grid in enumerate(group):
            padded[k, : grid.shape[0], : grid.shape[1]] = grid
            shapes[k] = grid.shape
        out, out_shapes = _replay_program()(
            jnp.asarray(padded), jnp.asarray(shapes), jnp.asarray(rows), jnp.asarray(taken)
        )
        out, out_shapes = np.asarray(out), np.asarray(out_shapes)
        made += [out[k, : out_shapes[k, 0], : out_shapes[k, 1]].copy() for k in range(len(group))]
    solves = all(np.array_equal(made[k], target) for k, target in enumerate(problem.demo_outputs))
    return solves, made[problem.num_demos :]
