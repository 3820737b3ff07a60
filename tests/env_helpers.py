"""Small builders shared by the environment tests: hand-made tasks and banks, grids cut to
their shape, and batches of episodes played from bbox plans."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxarc.data.bank import TaskBank, TaskIds
from jaxarc.data.source import Task
from jaxarc.envs import BboxAction
from jaxarc.envs.functional import batch_step
from jaxarc.grid import operation_ids as ops


def pad(grid, canvas: tuple[int, int]) -> np.ndarray:
    grid = np.asarray(grid, dtype=np.int8)
    out = np.full(canvas, -1, dtype=np.int8)
    out[: grid.shape[0], : grid.shape[1]] = grid
    return out


def crop(grid, shape) -> np.ndarray:
    """``grid`` (a padded canvas) cut to its ``(rows, cols)``."""
    return np.asarray(grid)[: int(shape[0]), : int(shape[1])]


def play_bbox_plans(states, plans: list[list[tuple[int, ...]]], config):
    """``(states, info)`` after each episode of the batch plays its plan of bbox tuples
    ``(operation, r1, c1, r2, c2)`` (SUBMIT once its plan is done)."""
    submit = (ops.SUBMIT, 0, 0, 0, 0)
    for t in range(max(len(p) for p in plans)):
        rows = np.array([p[t] if t < len(p) else submit for p in plans], dtype=np.int32)
        action = BboxAction(*(jnp.asarray(rows[:, k]) for k in range(5)))
        states, _, _, _, info = batch_step(states, action, config)
    return states, info


def make_task(demos, tests, canvas=(6, 6), max_demos=None) -> Task:
    """A Task from lists of (input, output) grids (nested lists); tests may have output None."""
    max_demos = max_demos or len(demos)
    blank = np.full(canvas, -1, np.int8)
    d_in = [pad(i, canvas) for i, _ in demos] + [blank] * (max_demos - len(demos))
    d_out = [pad(o, canvas) for _, o in demos] + [blank] * (max_demos - len(demos))
    d_in_s = [np.shape(i) for i, _ in demos] + [(0, 0)] * (max_demos - len(demos))
    d_out_s = [np.shape(o) for _, o in demos] + [(0, 0)] * (max_demos - len(demos))
    t_in = [pad(i, canvas) for i, _ in tests]
    t_out = [blank if o is None else pad(o, canvas) for _, o in tests]
    t_out_s = [(0, 0) if o is None else np.shape(o) for _, o in tests]
    return Task(
        demo_inputs=jnp.asarray(np.stack(d_in)),
        demo_outputs=jnp.asarray(np.stack(d_out)),
        demo_input_shapes=jnp.asarray(d_in_s, jnp.int32),
        demo_output_shapes=jnp.asarray(d_out_s, jnp.int32),
        num_demos=jnp.int32(len(demos)),
        test_inputs=jnp.asarray(np.stack(t_in)),
        test_outputs=jnp.asarray(np.stack(t_out)),
        test_input_shapes=jnp.asarray([np.shape(i) for i, _ in tests], jnp.int32),
        test_output_shapes=jnp.asarray(t_out_s, jnp.int32),
        num_tests=jnp.int32(len(tests)),
        test_scored=jnp.asarray([o is not None for _, o in tests]),
    )


def make_bank(tasks: list[Task], ids: list[str] | None = None) -> TaskBank:
    ids = ids or [f"t{k}" for k in range(len(tasks))]
    fields = {f: jnp.stack([getattr(t, f) for t in tasks]) for f in Task.__dataclass_fields__}
    return TaskBank(**fields, task_ids=TaskIds(ids), name="hand-made")


def recolour_task(canvas=(6, 6)) -> Task:
    """Demo pairs: 1 -> 2 recolouring of small grids; one scored test pair."""
    return make_task(
        demos=[
            ([[1, 0], [0, 1]], [[2, 0], [0, 2]]),
            ([[1, 1, 0]], [[2, 2, 0]]),
            ([[0], [1], [1]], [[0], [2], [2]]),
        ],
        tests=[([[1, 0, 1], [0, 1, 0]], [[2, 0, 2], [0, 2, 0]])],
        canvas=canvas,
    )


def random_grids(
    rng: np.random.Generator, batch: int, canvas: tuple[int, int], few_colours: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``[batch]`` grids of random shapes (``-1`` outside the shape) and their shapes."""
    height, width = canvas
    grids = np.full((batch, height, width), -1, np.int8)
    shapes = np.zeros((batch, 2), np.int32)
    for b in range(batch):
        h, w = int(rng.integers(1, height + 1)), int(rng.integers(1, width + 1))
        colours = int(rng.integers(1, 4)) if few_colours else 10
        grids[b, :h, :w] = rng.integers(0, colours, (h, w))
        shapes[b] = (h, w)
    return grids, shapes


def step_parity_bank() -> TaskBank:
    """Two tasks on a 6x6 canvas (a recolour and a small hand-made one) for comparing whole
    environment steps of two code paths."""
    canvas = (6, 6)
    tasks = [
        recolour_task(canvas),
        make_task(
            demos=[([[1, 1, 0], [0, 1, 2]], [[3, 3, 0], [0, 3, 2]])],
            tests=[([[2, 2], [2, 1]], [[2, 2], [2, 3]])],
            canvas=canvas,
            max_demos=3,
        ),
    ]
    return make_bank(tasks)
